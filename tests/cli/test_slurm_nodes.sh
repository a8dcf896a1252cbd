#!/usr/bin/env bash
# Slurm as sites run it: two nodes (two slurmd, each in namespaces of its own), proctrack/cgroup,
# task/cgroup and jobacct_gather/cgroup, slurmdbd over MariaDB, the SPANK plugin in
# plugstack.conf, and jobs that name no rtrack (tests/helpers/slurm_nodes.sh). Each job kind is
# read back with `summary --slurm-job` and judged against Slurm's own accounting (sacct, the
# figures seff prints): a two-node job of known CPU time and memory per task, a job array, a
# step killed by its cgroup's OOM killer, a job cancelled by scancel, a job past its time limit;
# then the plugin failing (rtrack missing, a database path that cannot be made, the recorder
# killed) must leave the jobs' exit codes and output alone. One cluster for the whole suite.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"

PLUGIN=${RT_SPANK_PLUGIN:-$(dirname "$RTRACK")/spank_rtrack.so}
TASK=$RT_HELPERS/rt_task
. "$HERE/../helpers/slurm_cluster.sh"
. "$HERE/../helpers/slurm_nodes.sh"
trap 'nodes_stop; rt_exit' EXIT

if [ "$(id -u)" != 0 ]; then
    skip_all root "a Slurm cluster of two nodes needs root (namespaces, cgroups)"
elif ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    skip_all slurm "Slurm is not installed (slurmctld slurmd slurm-client munge: scripts/bootstrap.sh)"
elif [ ! -f "$PLUGIN" ]; then
    skip_all slurm "the SPANK plugin was not built (libslurm-dev: <slurm/spank.h>)"
elif ! nodes_can_run; then
    case $NODES_WHY in
        *"cgroup v1"*) skip_all - "$NODES_WHY" ;;
        *) skip_all slurm "$NODES_WHY" ;;
    esac
fi
# the recorder and the tasks run as root here (the jobs' user): every part of $T is reachable
t0=$(now)
if ! nodes_start; then
    fail "the two-node cluster did not come up within 30 s: $(tail -n 3 sn/slurmctld.log \
        sn/slurmd-n1.log sn/slurmd-n2.log sn/slurmdbd.log sn/*.out 2>&1 | tr '\n' ' ')"
    finish
fi
pass "the two-node cluster is up: n1 and n2 idle, sacct answering ($(awk -v a="$t0" \
    -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s)"
plugstack "db=$T/sdb/%j.%n.db"

# --- helpers ------------------------------------------------------------------------------------
# jwait ID SECS: until the job (every task of an array) has left the queue
jwait() {
    local i
    for ((i = 0; i < $2 * 5; i++)); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 0.2
    done
    return 1
}
# acct ID: sacct's lines of the job (or array task ID_N) and its steps, '|'-separated (JobID,
# State, TotalCPU, Elapsed, AllocCPUS, MaxRSS, Start, End), once slurmdbd has the job's end and
# its steps' (the controller sends them after the job; a step's MaxRSS and TotalCPU with it).
# Every job here has a step 0 (an srun).
acct() {
    local i st
    for ((i = 0; i < 100; i++)); do
        sacct -n -P -j "$1" -o JobID,State,TotalCPU,Elapsed,AllocCPUS,MaxRSS,Start,End >"acct.$1" 2>/dev/null
        st=$(awk -F'|' -v id="$1" '$1 == id || $1 ~ /^[0-9]+$/ && NR == 1 { print $2; exit }' "acct.$1")
        case $st in "" | PENDING | RUNNING | REQUEUED | COMPLETING) ;; *)
            # (every step ended, and step 0's statistics in: they come with its end)
            [ "$(awk -F'|' '$1 ~ /\./ && $8 == "Unknown"' "acct.$1")" = "" ] &&
                [ -n "$(awk -F'|' '$1 ~ /\.0$/ && $6 != "" { print $6 }' "acct.$1")" ] && break ;;
        esac
        sleep 0.2
    done
    cat "acct.$1"
}
# secs [[DD-]HH:]MM:SS[.mmm]: seconds
secs() { awk -F'[-:]' '{ s = 0; for (i = 1; i <= NF; i++) s = s * (i == NF - 3 && NF == 4 ? 24 : 60) + $i; print s }' <<<"$1"; }
# kib 123K / 12M / 1.5G: KiB
kib() { awk '{ v = $1 + 0; u = substr($1, length($1)); print (u == "M" ? v * 1024 : u == "G" ? v * 1048576 : v) }' <<<"$1"; }
# epoch 2026-12-05T12:55:15: seconds since the epoch
epoch() { date -d "$1" +%s; }
# sjson ID EXPR: a Python expression over summary --slurm-job ID's JSON (j), printed
sjson() {
    "$RTRACK" summary --db "sdb/*.db" --slurm-job "$1" --format json >"sum.$1.json" 2>"sum.$1.err"
    python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "sum.$1.json" "$2"
}
# judge LABEL ID: rtrack's job against sacct's: CPU time within 5 % + 0.2 s of the job's
# TotalCPU; the largest process's peak (PSS) within 10 % of the largest MaxRSS of its steps
# (each task's RSS, as jobacct_gather/cgroup polls it); the wall time within 1 s of the job's
# time in sacct, from its Start to the last End of it and its steps (a cancelled job's steps
# end after the job does: SIGTERM, then KillWait), once sacct's whole-second timestamps are
# allowed for (each truncated: +-1 s); CPUs allocated equal to AllocCPUS. The figures go to
# judge.txt (the table in docs/cluster.md).
# With CAP_KIB (the OOM-killed step: its cgroup's limit), the peak's upper bound is the larger of
# MaxRSS + 10 % and CAP_KIB: the task's last climb to the limit, slowed by the kernel's reclaim
# there, lasts a fraction of a second before the OOM kill; rtrack's samples (0.2 s) may see part
# of it, sacct's polls (1 s) mostly do not.
judge() {
    local label=$1 id=$2 cap=${3:-0} a cpu alloc maxrss start end span r rcpu rwall ralloc rpeak rmem
    a=$(acct "$id")
    IFS='|' read -r _ _ cpu _ alloc _ start _ <<<"$(head -1 <<<"$a")"
    cpu=$(secs "$cpu")
    maxrss=$(awk -F'|' 'NR > 1 { print $6 }' <<<"$a" | while read -r m; do kib "${m:-0}"; done |
        sort -n | tail -1)
    end=$(awk -F'|' '$8 != "Unknown" { print $8 }' <<<"$a" | sort | tail -1)
    span=$(($(epoch "$end") - $(epoch "$start")))
    r=$(sjson "$id" '"%s %s %s %s %s" % (j["job"]["cpu_s"], j["job"]["wall_s"], j["job"]["alloc_cpus"],
        max(n["largest_process_peak_mib"] or 0 for n in j["nodes"]), j["job"]["memory_peak_mib"])')
    read -r rcpu rwall ralloc rpeak rmem <<<"$r"
    check_range "$label: CPU time against sacct's TotalCPU ($cpu s)" "$rcpu" \
        "$(awk -v c="$cpu" 'BEGIN { print c * 0.95 - 0.2 }')" "$(awk -v c="$cpu" 'BEGIN { print c * 1.05 + 0.2 }')"
    check_range "$label: the largest process's peak against the largest MaxRSS ($maxrss KiB)" \
        "$(awk -v p="$rpeak" 'BEGIN { print p * 1024 }')" \
        "$(awk -v m="$maxrss" 'BEGIN { print m * 0.9 }')" "$(awk -v m="$maxrss" -v c="$cap" 'BEGIN { print (m * 1.1 > c ? m * 1.1 : c) }')"
    check_range "$label: wall time against sacct's ($span s, whole seconds)" "$rwall" "$((span - 2))" "$((span + 2))"
    check "$label: CPUs allocated, as sacct's AllocCPUS" "$ralloc" "$alloc"
    printf '%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s\n' "$label" "$id" "$cpu" "$rcpu" "$maxrss" "$rpeak" \
        "$span" "$rwall" "$alloc" "$ralloc" "$rmem" >>judge.txt
}
# qdb DB SQL: q on a database the plugin made (never one made here by asking: the sqlite3 shell
# would create an empty file, which no recorder then takes and every reader of sdb/*.db refuses)
qdb() { [ -s "$1" ] && q "$1" "$2" 2>/dev/null; }
# dbs_of ID: the job's database files, one a line
dbs_of() { (cd sdb && ls "$1".*.db 2>/dev/null); }
# runs_of ID: node:step of every run of the job in its files, sorted
runs_of() {
    local f
    for f in sdb/"$1".*.db; do
        qdb "$f" "SELECT slurm_nodename || ':' || slurm_step_id FROM runs WHERE slurm_job_id = '$1'"
    done | sort | tr '\n' ' '
}

# --- 1. a two-node job of known CPU time and memory per task ------------------------------------
# 2 nodes x 2 tasks, each task 200 MiB and 1.5 s of its own CPU time, holding its memory 2 s
jid=$(sbatch --parsable -N2 --ntasks-per-node=2 --mem=600 -o main.out -D "$T" \
    --wrap "srun $TASK 1.5 200 2")
check_cmd "two nodes: the job ran" jwait "$jid" 60
check "two nodes: its exit code" "$(job_exit "$jid")" "0:0"
check "two nodes: a database per node" "$(dbs_of "$jid" | tr '\n' ' ')" "$jid.n1.db $jid.n2.db "
check "two nodes: a run per node and step (the batch step on n1)" "$(runs_of "$jid")" \
    "n1:0 n1:batch n2:0 "
check "two nodes: each run's cgroup is its node's step's" "$(for f in sdb/"$jid".*.db; do
    qdb "$f" "SELECT slurm_nodename || '=' || cgroup_path FROM runs WHERE slurm_step_id = '0'"; done |
    tr '\n' ' ')" "n1=/slurm_n1/uid_0/job_$jid/step_0 n2=/slurm_n2/uid_0/job_$jid/step_0 "
check "two nodes: per node the rows, steps, CPUs and memory allocated (and where from)" \
    "$(sjson "$jid" '" ".join("%s:%s:%s:%s:%s:%s:%s" % (n["node"], n["steps"], n["alloc_cpus"],
        n["alloc_cpus_from"], n["alloc_memory_mib"], n["alloc_memory_from"], n["cpu_from"])
        for n in j["nodes"])')" \
    "n1:batch,0:2:cgroup cpuset:600:cgroup memory limit:cgroup n2:0:2:cgroup cpuset:600:cgroup memory limit:cgroup"
# the known truth: 4 tasks x 1.5 s of CPU; each node's two tasks held 2 x 200 MiB at once
read -r cpu n1cpu n2cpu peak1 peak2 proc1 cg1 < <(sjson "$jid" '"%s %s %s %s %s %s %s" % (j["job"]["cpu_s"],
    j["nodes"][0]["cpu_s"], j["nodes"][1]["cpu_s"], j["nodes"][0]["memory_peak_mib"],
    j["nodes"][1]["memory_peak_mib"], j["nodes"][0]["largest_process_peak_mib"],
    j["nodes"][0]["cgroup_memory_peak_mib"])')
check_range "two nodes: the job's CPU time is its 4 tasks' 1.5 s" "$cpu" 6 6.6
check_range "two nodes: n1's CPU time (2 tasks, the batch shell)" "$n1cpu" 3 3.4
check_range "two nodes: n2's CPU time (2 tasks)" "$n2cpu" 3 3.3
check_range "two nodes: n1's memory peak holds its 2 x 200 MiB" "$peak1" 400 440
check_range "two nodes: n2's memory peak holds its 2 x 200 MiB" "$peak2" 400 440
check_range "two nodes: the largest process is a task's 200 MiB" "$proc1" 200 210
check_range "two nodes: the step cgroup's own peak (page cache, slurmstepd included)" "$cg1" 400 480
check "two nodes: the job's total, by the nodes" "$(sjson "$jid" '"%s %s %s" % (j["job"]["nodes"],
    j["job"]["alloc_cpus"], j["job"]["alloc_memory_mib"])')" "2 4 1200"
check "two nodes: no caveat" "$(sjson "$jid" 'len(j["caveats"])')" 0
"$RTRACK" summary --db "sdb/*.db" --slurm-job "$jid" >main.txt
check "two nodes: the text says where each figure came from" \
    "$(grep -cE '^  (CPU time: cgroup \(n1, n2\)|cores allocated: cgroup cpuset \(n1, n2\)|memory allocated: cgroup memory limit \(n1, n2\)|memory peak: pss \(n1, n2\))$' main.txt)" 4
judge "two nodes" "$jid"

# --- 5. a job past its time limit (1 minute: Slurm looks every 30 s), submitted now: its wait of
# 60 to 90 s runs beside the jobs below (1 CPU of a node's 2, and asleep: 0.5 s of CPU time)
tid=$(sbatch --parsable -N1 -n1 --time=1 --mem=100 -o timeout.out -D "$T" --wrap "srun $TASK 0.5 20 300")

# --- 2. a job array: each task a job of its own, on whichever node is free --------------------
aid=$(sbatch --parsable --array=1-2 -n1 --mem=200 -o /dev/null -D "$T" --wrap "srun $TASK 0.8 64 1")
check_cmd "array: the tasks ran" jwait "$aid" 60
check "array: a row per task, with the array's ids" "$(sjson "$aid" '" ".join(sorted("%s:%s" %
    (n["array_job_id"], n["array_task_id"]) for n in j["nodes"]))')" "$aid:1 $aid:2"
for t in 1 2; do
    tj=$(sacct -n -X -P -j "${aid}_$t" -o JobIDRaw | head -1)
    check "array task $t: a run per step of its job ($tj)" "$(runs_of "$tj" | sed 's/n[12]:/N:/g')" \
        "N:0 N:batch "
    check "array task $t: summary --slurm-job ${aid}_$t is its job" \
        "$(sjson "${aid}_$t" '" ".join(n["job_id"] + ":" + n["array_task_id"] for n in j["nodes"])')" "$tj:$t"
    judge "array task $t" "${aid}_$t"
done

# --- 3. a step killed by its cgroup's OOM killer -----------------------------------------------
# (80 MiB held 2 s, then 60 MiB more: the limit of 100 MiB is crossed after a peak both tools
# sample)
oid=$(sbatch --parsable -N1 -n1 --mem=100 -o oom.out -D "$T" \
    --wrap "srun $TASK 0 80 2 60; echo after the step")
check_cmd "OOM: the job ran" jwait "$oid" 60
check "OOM: sacct says the step ran out of memory" "$(acct "$oid" | grep -c "^$oid\.0|OUT_OF_MEMORY|")" 1
check "OOM: the step's run says how its task died (SIGKILL, 1 OOM kill)" "$(for f in sdb/"$oid".*.db; do
    qdb "$f" "SELECT exit_signal || ':' || cgroup_oom_kills FROM runs WHERE slurm_step_id = '0'"; done)" \
    "9:1"
check "OOM: the caveat" "$(sjson "$oid" '" ".join(c["kind"] + ":" + c["step"] for c in j["caveats"])')" "oom:0"
"$RTRACK" summary --db "sdb/*.db" --slurm-job "$oid" >oom.txt
check "OOM: the text says it" "$(grep -c 'step 0 on n[12]: 1 process killed by the OOM killer at its cgroup.s memory limit of 100.0 MiB' oom.txt)" 1
judge "OOM-killed step" "$oid" $((100 * 1024))

# --- 4. a job cancelled by scancel mid-run -----------------------------------------------------
cid=$(sbatch --parsable -N2 --ntasks-per-node=1 --mem=100 -o cancel.out -D "$T" \
    --wrap "srun $TASK 60 20 0")
# cancelled once both nodes' step 0 has 3 s of samples (the job's work under way, and seen by sacct's
# polls of 1 s: JobAcctGatherFrequency=task=1)
for ((i = 0; i < 150; i++)); do
    [ "$(for f in sdb/"$cid".n1.db sdb/"$cid".n2.db; do qdb "$f" "SELECT count(*) > 15 FROM samples s
        JOIN runs r ON r.id = s.run_id WHERE r.slurm_step_id = '0'" 2>/dev/null; done | tr -d '\n')" = 11 ] && break
    sleep 0.2
done
scancel "$cid"
check_cmd "cancel: the job left the queue" jwait "$cid" 60
check "cancel: sacct says CANCELLED" "$(acct "$cid" | head -1 | cut -d'|' -f2 | cut -d' ' -f1)" CANCELLED
check "cancel: every run says so (Slurm's state, SIGTERM)" "$(for f in sdb/"$cid".*.db; do
    qdb "$f" "SELECT slurm_nodename || ':' || slurm_step_id || ':' || slurm_job_state || ':' || exit_signal FROM runs"; done |
    sort | tr '\n' ' ')" "n1:0:CANCELLED:15 n1:batch:CANCELLED:15 n2:0:CANCELLED:15 "
check "cancel: the caveat, once" "$(sjson "$cid" '" ".join(c["kind"] for c in j["caveats"])')" "cancelled"
judge "cancelled (scancel)" "$cid"

# the timeout job's step 0 recording before plugstack.conf changes (its steps read it as they
# start)
for ((i = 0; i < 150; i++)); do
    [ "$(for f in sdb/"$tid".n1.db sdb/"$tid".n2.db; do
        qdb "$f" "SELECT count(*) FROM runs WHERE slurm_step_id = '0'"; done)" = 1 ] && break
    sleep 0.2
done

# --- 6. the plugin failing: the jobs' exit codes and output are their own ------------------------
fail_job() { # LABEL SECS: a two-node job writing a line per node and task, exiting 3
    sbatch --parsable -N2 --ntasks-per-node=1 --mem=100 -o "fail.$1.out" -D "$T" \
        --wrap "srun -l sh -c 'echo out-\$SLURM_NODEID; echo err-\$SLURM_NODEID >&2; sleep $2'; exit 3"
}
want_out="0: out-0
0: err-0
1: out-1
1: err-1"
for bad in "rtrack=$T/no-such-rtrack" "db=/proc/no-such-dir/%j.db"; do
    plugstack "db=$T/sdb/%j.%n.db" "$bad"
    fid=$(fail_job "${bad%%=*}" 0.5)
    jwait "$fid" 60
    check "plugin failing ($bad): the job's exit code" "$(job_exit "$fid")" "3:0"
    check "plugin failing ($bad): the job's output" "$(sort "fail.${bad%%=*}.out")" "$(sort <<<"$want_out")"
    check "plugin failing ($bad): nothing recorded" "$(dbs_of "$fid" | wc -l)" 0
    check "plugin failing ($bad): said in both nodes' slurmd logs" "$(grep -l "\[$fid.0\] rtrack: error: job $fid step 0: .*not recorded" sn/slurmd-n1.log sn/slurmd-n2.log | wc -l)" 2
done
plugstack "db=$T/sdb/%j.%n.db"
# the recorders killed while the steps run (once recording: both nodes' step 0 has samples)
kid=$(fail_job killed 4)
for ((i = 0; i < 150; i++)); do
    pids=$(pgrep -f -- "--external-run-id $kid\.0( |$)")
    [ "$(echo "$pids" | grep -c .)" = 2 ] && [ "$(for f in sdb/"$kid".n1.db sdb/"$kid".n2.db; do
        qdb "$f" "SELECT count(*) > 2 FROM samples s JOIN runs r ON r.id = s.run_id
            WHERE r.slurm_step_id = '0'" 2>/dev/null; done | tr -d '\n')" = 11 ] && break
    sleep 0.1
done
check "recorder killed: both nodes' recorders of step 0 found" "$(echo "$pids" | grep -c .)" 2
for p in $pids; do kill -KILL "$p"; done
jwait "$kid" 60
check "recorder killed: the job's exit code" "$(job_exit "$kid")" "3:0"
check "recorder killed: the job's output" "$(sort fail.killed.out)" "$(sort <<<"$want_out")"

# the timeout job, now
check_cmd "timeout: the job left the queue (past its 1 minute)" jwait "$tid" 150
check "timeout: sacct says TIMEOUT" "$(acct "$tid" | head -1 | cut -d'|' -f2)" TIMEOUT
check "timeout: the runs say so (Slurm's state)" "$(for f in sdb/"$tid".*.db; do
    qdb "$f" "SELECT slurm_step_id || ':' || slurm_job_state FROM runs"; done | sort | tr '\n' ' ')" \
    "0:TIMEOUT batch:TIMEOUT "
check "timeout: the caveat" "$(sjson "$tid" '" ".join(c["kind"] for c in j["caveats"])')" "timeout"
judge "past its time limit" "$tid"

# --- 7. the table of both tools' figures (docs/cluster.md), and nothing left behind --------------
{
    echo "| job | id | sacct TotalCPU | rtrack CPU | sacct MaxRSS (largest task) | rtrack largest process | sacct Start to last End | rtrack wall | AllocCPUS | rtrack CPUs |"
    echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    awk -F'|' '{ printf "| %s | %s | %.3f s | %.2f s | %.1f MiB | %.1f MiB | %d s | %.2f s | %d | %d |\n",
        $1, $2, $3, $4, $5 / 1024, $6, $7, $8, $9, $10 }' judge.txt
} | tee "${RT_SLURM_TABLE:-/dev/null}"
nodes_stop
check "nothing left: no daemon, recorder, namespace, link or cgroup ($NODES_LEFT)" "$NODES_LEFT" ""
check "nothing left: no process of the suite's cluster" "$(pgrep -f -- "$T/" | wc -l)" 0
finish
