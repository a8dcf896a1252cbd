#!/usr/bin/env bash
# Slurm: the facts `rtrack run` records inside an allocation (SLURM_* set by hand), merge and the
# readers over several databases (two simulated nodes of one job), and a real one-node cluster
# (Debian's slurmctld, slurmd, munge; the SPANK plugin in plugstack.conf) running jobs that name
# no rtrack.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"

# --- 1. the facts of a Slurm allocation, without the plugin -----------------------------------
# every variable of the table, as sbatch/srun set them (values made up, each distinct)
slurm_env=(SLURM_JOB_ID=4711 SLURM_ARRAY_JOB_ID=4700 SLURM_ARRAY_TASK_ID=11 SLURM_STEP_ID=3
    SLURM_JOB_USER=alice SLURM_JOB_PARTITION=gpu SLURMD_NODENAME=node07 SLURM_JOB_NUM_NODES=2
    SLURM_NTASKS=4 SLURM_CPUS_PER_TASK=2 SLURM_CPUS_ON_NODE=4 SLURM_MEM_PER_NODE=2048
    SLURM_GPUS_ON_NODE=2 "SLURM_JOB_GPUS=0,3" SLURM_JOB_START_TIME=1700000000
    SLURM_JOB_END_TIME=1700003600)
env "${slurm_env[@]}" "$RTRACK" run --quiet --db facts.db --interval 0.1 -- true
check "facts: run exits 0" "$?" 0
check "facts: every SLURM_* fact stored as set" "$(q facts.db "SELECT slurm_job_id, \
slurm_array_job_id, slurm_array_task_id, slurm_step_id, slurm_job_user, slurm_job_partition, \
slurm_nodename, slurm_job_num_nodes, slurm_ntasks, slurm_cpus_per_task, slurm_cpus_on_node, \
slurm_mem_per_node_mib, slurm_gpus_on_node, slurm_job_gpus, slurm_time_limit_s FROM runs")" \
    "4711|4700|11|3|alice|gpu|node07|2|4|2|4|2048|2|0,3|3600.0"
# outside Slurm: nothing of it
env -u SLURM_JOB_ID -u SLURMD_NODENAME -u SLURM_STEP_ID "$RTRACK" run --quiet --db none.db \
    --interval 0.1 -- true
check "facts: none outside an allocation" "$(q none.db "SELECT count(*) FROM runs WHERE \
coalesce(slurm_job_id, slurm_nodename, slurm_step_id, slurm_ntasks) IS NULL")" 1
# a count that is not a whole number is not known
SLURM_NTASKS=two SLURM_JOB_NUM_NODES=-1 "$RTRACK" run --quiet --db bad.db --interval 0.1 -- true
check "facts: a count that is no whole number is unknown" \
    "$(q bad.db "SELECT coalesce(slurm_ntasks, 'null') || coalesce(slurm_job_num_nodes, 'null') FROM runs")" \
    "nullnull"

# RTRACK_READY_FD (the plugin's signal): one byte once the baseline is stored, not the job's
RTRACK_READY_FD=3 "$RTRACK" run --quiet --db ready.db --interval 0.1 -- \
    sh -c 'sleep 0.3; ls /proc/$$/fd >job.fds' 3>ready.out
check "RTRACK_READY_FD: one byte once the baseline is stored" "$(cat ready.out)" 1
check "RTRACK_READY_FD: not passed on to the job" "$(grep -cx 3 job.fds)" 0
RTRACK_READY_FD=1 "$RTRACK" run --quiet --db ready.db --interval 0.1 -- true >stdout.out
check "RTRACK_READY_FD: stdin, stdout and stderr are never it" "$(wc -c <stdout.out)" 0

# --- 2. merge, and the readers over several databases: two simulated nodes of job 77 ----------
# node a runs two steps at once (a1, a2: one database), node b one step (b.db); the kernel's CPU
# times, the start and end and the memory of every sample are then set to figures chosen here,
# so every total below is worked out by hand from them
node_env() { env SLURM_JOB_ID=77 SLURMD_NODENAME="$1" SLURM_STEP_ID="$2" SLURM_CPUS_ON_NODE=2 \
    SLURM_MEM_PER_NODE=1024 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=2 "${@:3}"; }
node_env a 0 "$RTRACK" run --quiet --db a.db --interval 0.2 --tag step=a1 -- sleep 1.5 &
a1=$!
node_env a 1 "$RTRACK" run --quiet --db a.db --interval 0.2 --tag step=a2 -- sleep 1.5 &
a2=$!
node_env b 0 "$RTRACK" run --quiet --db b.db --interval 0.2 -- sleep 1.5
wait_exit "$a1" 20
wait_exit "$a2" 20
"$RTRACK" run --quiet --db b.db --interval 0.1 -- true # another job's run, not job 77's
set_run() { # DB TAG-OR-NODE UTIME STIME START END PSS_KIB
    q "$1" "UPDATE runs SET job_utime_s = $3, job_stime_s = $4, started_at = $5, ended_at = $6
        WHERE id = $2; UPDATE samples SET proc_pss_kib = $7 WHERE run_id = $2"
}
a1id=$(q a.db "SELECT run_id FROM run_tags WHERE value = 'a1'")
a2id=$(q a.db "SELECT run_id FROM run_tags WHERE value = 'a2'")
set_run a.db "$a1id" 3 1 1000 1010 524288  # 4 s CPU, 512 MiB
set_run a.db "$a2id" 0.5 0.5 1002 1006 131072 # 1 s CPU, 128 MiB, at the same time as a1
set_run b.db 1 5 1 1000.5 1009 262144     # 6 s CPU, 256 MiB
# (the samples keep their real times: a1 and a2 ran at once, so node a's peak is 512 + 128)

# what each input holds per run (by UUID), deep rows included
per_uuid() { q "$1" "SELECT r.uuid, (SELECT count(*) FROM samples WHERE run_id = r.id),
    (SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id
     WHERE s.run_id = r.id), (SELECT count(*) FROM cpu_core_samples c JOIN samples s
     ON s.id = c.sample_id WHERE s.run_id = r.id), (SELECT count(*) FROM disk_samples d
     JOIN samples s ON s.id = d.sample_id JOIN disks k ON k.id = d.disk_id AND k.run_id = r.id
     WHERE s.run_id = r.id), (SELECT group_concat(key || '=' || value) FROM run_tags
     WHERE run_id = r.id), r.job_utime_s, r.slurm_nodename FROM runs r ORDER BY r.uuid"; }
{ per_uuid a.db; per_uuid b.db; } | sort >want.txt
"$RTRACK" merge all.db a.db b.db >merge1.out
check "merge: exit 0" "$?" 0
check "merge: says what it added" "$(cat merge1.out)" "a.db: 2 runs added, 0 already in all.db
b.db: 2 runs added, 0 already in all.db"
per_uuid all.db | sort >got.txt
check_cmd "merge: every run with all its rows, each under its own run (by UUID)" \
    diff -u want.txt got.txt
check "merge: no dangling reference" "$(q all.db 'PRAGMA foreign_key_check')" ""
counts() { q all.db "SELECT (SELECT count(*) FROM runs) || ' ' || (SELECT count(*) FROM samples)
    || ' ' || (SELECT count(*) FROM process_samples) || ' ' || (SELECT count(*) FROM processes)"; }
before=$(counts)
"$RTRACK" merge all.db b.db a.db >merge2.out
check "merge twice: nothing added" "$(cat merge2.out)" "b.db: 0 runs added, 2 already in all.db
a.db: 0 runs added, 2 already in all.db"
check "merge twice: the same rows" "$(counts)" "$before"
"$RTRACK" merge --quiet --slurm-job 77 job.db a.db b.db
check "merge --slurm-job: only the job's runs" "$(q job.db "SELECT count(*) || ' ' ||
    count(DISTINCT slurm_job_id) || ' ' || min(slurm_job_id) FROM runs")" "3 1 77"
"$RTRACK" merge all.db all.db >/dev/null 2>self.err
check "merge: the output as an input is refused" "$?:$(grep -c 'is the output itself' self.err)" "1:1"
"$RTRACK" merge all.db 2>/dev/null
check "merge: no input is a usage error" "$?" 2
echo "not a database" >junk.db
"$RTRACK" merge all.db junk.db a.db >junk.out 2>junk.err
check "merge: an input that is no rtrack database is said, the others merged" \
    "$?:$(grep -c "'junk.db' is not an rtrack database" junk.err):$(cat junk.out)" \
    "1:1:a.db: 0 runs added, 2 already in all.db"

# the readers: several --db, a glob, --slurm-job; the private merge is removed afterwards
mkdir tmp
export TMPDIR=$T/tmp
check "runs: two databases as one" "$("$RTRACK" runs --db a.db --db b.db --format csv | tail -n +2 | wc -l)" 4
check "runs: a glob" "$("$RTRACK" runs --db '[ab].db' --format csv | tail -n +2 | wc -l)" 4
check "runs --slurm-job: the job's runs" \
    "$("$RTRACK" runs --db '[ab].db' --slurm-job 77 --format csv | tail -n +2 | wc -l)" 3
"$RTRACK" export --db a.db --db b.db --slurm-job 77 --run 1 --format jsonl >/dev/null
check "export: several databases" "$?" 0
"$RTRACK" runs --db 'zz*.db' 2>/dev/null
check "a glob that matches nothing: exit 2" "$?" 2
"$RTRACK" summary --db a.db --slurm-job 4242 2>/dev/null
check "summary: a job with no run: exit 2" "$?" 2
check "the private merges are removed" "$(ls tmp)" ""

"$RTRACK" summary --db a.db --db b.db --slurm-job 77 --format json >job.json
check "summary --slurm-job: exit 0" "$?" 0
# by hand: node a CPU 4 + 1 = 5 s, b 6 s; the job's wall 1000 -> 1010 = 10 s; 2 CPUs allocated
# on each node: a 5 / (2 x 10) = 25 %, b 6 / 20 = 30 %, the job 11 / (4 x 10) = 27.5 %; memory
# peaks a 512 + 128 = 640 MiB (two steps at once), b 256; allocated 1024 each: a 62.5 %, b 25 %,
# the job (640 + 256) / 2048 = 43.75 % (43.8); next time per node: ceil(0.5) = ceil(0.6) = 1 CPU,
# memory a 640 x 1.2 = 768 -> 1024, b 307.2 -> 512; --mem the larger: 1G; 2 tasks on 2 nodes:
# 1 per node; --time 10 x 1.5 = 15 s -> 1 minute
check "summary --slurm-job: per node and the job, by hand" "$(python3 - job.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
out = []
for n in j["nodes"]:
    out.append("%s %s %s %s %s %s %s %s %s" % (n["node"], n["steps"], n["runs"], n["cpu_s"],
               n["cpu_eff_pct"], n["memory_peak_mib"], n["memory_eff_pct"],
               n["recommended"]["cpus"], n["recommended"]["memory_mib"]))
t = j["job"]
out.append("job %s %s %s %s %s %s %s %s %s" % (t["nodes"], t["wall_s"], t["cpu_s"], t["alloc_cpus"],
           t["cpu_eff_pct"], t["memory_peak_mib"], t["memory_peak_max_node_mib"],
           t["memory_eff_pct"], t["alloc_memory_mib"]))
out.append(t["sbatch"])
print("\n".join(out))
PY
)" "a 0,1 2 5 25 640 62.5 1 1024
b 0 1 6 30 256 25 1 512
job 2 10 11 4 27.5 896 640 43.8 2048
--nodes=2 --ntasks-per-node=1 --cpus-per-task=1 --mem=1G --time=0:01:00"
"$RTRACK" summary --db a.db --db b.db --slurm-job 77 >job.txt
check "summary --slurm-job: the text has a row per node, the total and sbatch" \
    "$(grep -c -E '^  (a|b|job total) ' job.txt) $(grep -c -- '^next time: sbatch --nodes=2' job.txt)" "3 1"

# the report of the job: its nodes' table first, with the figures worked out by hand above (wall:
# a 1000 -> 1010 = 10 s, b 1000.5 -> 1009 = 8.5 s, the job 10 s; CPU a 5 s, b 6 s, the job 11 s; cores allocated 2, 2, 4; CPU efficiency 25, 30, 27.5 %;
# peaks 640, 256, 896 MiB; allocated 1024, 1024, 2048 MiB; memory efficiency 62.5, 25, 43.75 %),
# and the same sbatch options
"$RTRACK" report --db a.db --db b.db --slurm-job 77 -o job.html
check "report --slurm-job: exit 0" "$?" 0
# job_table FILE: the cells of the slurm-nodes table, a line per row (head, body, foot), then the
# sbatch options
job_table() { python3 - "$1" <<'PY'
import sys
from html.parser import HTMLParser
class P(HTMLParser):
    def __init__(self):
        super().__init__()
        self.depth, self.rows, self.row, self.cell, self.code = 0, [], None, None, None
    def handle_starttag(self, tag, attrs):
        cls = (dict(attrs).get("class") or "").split()
        if tag == "table" and (self.depth or "slurm-nodes" in cls):
            self.depth += 1
        elif self.depth and tag == "tr":
            self.row = []
        elif self.depth and tag in ("td", "th") and self.row is not None:
            self.cell = ""
        elif tag == "code" and "sbatch" in cls:
            self.code = ""
    def handle_endtag(self, tag):
        if tag == "table" and self.depth:
            self.depth -= 1
        elif tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.rows.append(" | ".join(self.row))
            self.row = None
        elif tag == "code" and self.code is not None:
            self.rows.append(self.code)
            self.code = None
    def handle_data(self, d):
        if self.cell is not None:
            self.cell += d
        if self.code is not None:
            self.code += d
p = P()
p.feed(open(sys.argv[1]).read())
print("\n".join(p.rows))
PY
}
want_table="node | steps | wall | CPU time | cores allocated | CPU efficiency | peak memory | allocated memory | memory efficiency
a | 0,1 | 10.0 s | 5.00 s | 2 | 25.0 % | 640.0 MiB | 1.00 GiB | 62.5 %
b | 0 | 8.50 s | 6.00 s | 2 | 30.0 % | 256.0 MiB | 1.00 GiB | 25.0 %
job total | - | 10.0 s | 11.0 s | 4 | 27.5 % | 896.0 MiB | 2.00 GiB | 43.8 %
sbatch --nodes=2 --ntasks-per-node=1 --cpus-per-task=1 --mem=1G --time=0:01:00"
check "report --slurm-job: the nodes' table and sbatch, by hand" "$(job_table job.html)" "$want_table"
"$RTRACK" report --db a.db --db b.db -o nojob.html
check "report without --slurm-job: no job table" "$(job_table nojob.html)" ""
if command -v chromium >/dev/null 2>&1; then
    # as a browser reads it: the DOM headless chromium builds from the page
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --dump-dom "file://$T/job.html" >job.dom 2>chromium.err
    check "report --slurm-job: the same table in the browser's DOM" "$(job_table job.dom)" "$want_table"
else
    skip "headless chromium is not on PATH: the report's DOM not checked"
fi

# --- 3. a real Slurm: Debian's slurmctld and slurmd, one node (this machine), munge ----------
# The SPANK plugin in plugstack.conf records every step; the jobs name no rtrack.
unset TMPDIR
# (the plugin of the build the suites run from, which may drive a binary built elsewhere: the
# release binary, tests/CMakeLists.txt)
PLUGIN=${RT_SPANK_PLUGIN:-$(dirname "$RTRACK")/spank_rtrack.so}
SPIN=$RT_HELPERS/rt_spin
# the cluster: slurm_start, slurm_stop, plugstack, job_wait, job_exit (shared with the bench)
. "$HERE/../helpers/slurm_cluster.sh"
trap 'slurm_stop; rt_exit' EXIT
# cpu_of FILE: the seconds of every "XmY.YYYs" `times` wrote, added up
cpu_of() { grep -oE '[0-9]+m[0-9.]+s' "$1" | awk -F'[ms]' '{ t += $1 * 60 + $2 } END { printf "%.3f", t }'; }

if [ "$(id -u)" != 0 ]; then
    skip_req root "a Slurm cluster needs root here"
elif ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    skip_req slurm "Slurm is not installed (slurmctld slurmd slurm-client munge: scripts/bootstrap.sh)"
elif [ ! -f "$PLUGIN" ]; then
    skip_req slurm "the SPANK plugin was not built (libslurm-dev: <slurm/spank.h>)"
elif ! slurm_start; then
    fail "the one-node cluster did not come up: $(tail -n 3 sl/slurmctld.log sl/slurmd.log sl/slurmctld.out sl/slurmd.out 2>&1)"
else
    pass "a one-node Slurm cluster is up"
    node=$(hostname -s)

    # a 2-task job: its batch step and one srun step, each task spinning, the batch step
    # holding 100 MiB; `times` says what CPU time each part took, as the kernel counted it. The
    # recorder is slow to start here (0.5 s): the tasks must wait for its baseline
    printf '#!/bin/sh\nsleep 0.5\nexec %s "$@"\n' "$RTRACK" >slow-rtrack
    chmod +x slow-rtrack
    plugstack "db=$T/sdb/%j.%n.db" "rtrack=$T/slow-rtrack"
    cat >job.sh <<JOB
#!/bin/bash
srun -n2 bash -c 'date +%s.%N >>tasks.start; $SPIN 2; times' >tasks.times
python3 -c 'import time; b = b"x" * (100 << 20); time.sleep(1.2)'
times >batch.times
JOB
    jid=$(sbatch --parsable -n2 --mem=200 -o job.out -D "$T" job.sh)
    check_cmd "sbatch: the 2-task job ran" job_wait "$jid"
    check "the job's exit code" "$(job_exit "$jid")" "0:0"
    db="sdb/$jid.$node.db"
    check "the recorders said nothing (their stderr: slog/)" "$(cat slog/"$jid".*.log)" ""
    check_cmd "the plugin recorded it into its own database per job and node" test -s "$db"
    check "a run per step, each with Slurm's facts and the allocation" "$(q "$db" "SELECT
        group_concat(x, ' ') FROM (SELECT mode || ',' || status || ',' || slurm_job_id || ',' ||
        slurm_step_id || ',' || slurm_nodename || ',' || slurm_job_user || ',' ||
        slurm_job_partition || ',' || slurm_ntasks || ',' || slurm_job_num_nodes || ',' ||
        slurm_mem_per_node_mib || ',' || slurm_cpus_on_node AS x FROM runs ORDER BY id)")" \
        "record,finished,$jid,batch,$node,root,debug,2,1,200,$(nproc) record,finished,$jid,0,$node,root,debug,2,1,200,$(nproc)"
    # the tasks start once the recorder has its baseline: all their CPU time is counted
    check "the step's baseline came before its tasks started" "$(q "$db" "SELECT ts FROM samples
        WHERE seq = 0 AND run_id = (SELECT id FROM runs WHERE slurm_step_id = '0')" |
        awk -v f=tasks.start 'BEGIN { getline t < f; m = t; while ((getline t < f) > 0) if (t < m) m = t }
            { print ($1 <= m ? "before" : "after (" $1 " > " m ")") }')" before
    "$RTRACK" summary --db "sdb/*.db" --slurm-job "$jid" --format json >sjob.json
    check "summary --slurm-job: exit 0" "$?" 0
    own=$(echo "$(cpu_of tasks.times) + $(cpu_of batch.times)" | bc)
    ncpus=$(scontrol show job "$jid" | sed -n 's/.*NumCPUs=\([0-9]*\).*/\1/p')
    read -r got eff wall alloc peak amem meff < <(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["job"]
print(j["cpu_s"], j["cpu_eff_pct"], j["wall_s"], j["alloc_cpus"], j["memory_peak_mib"],
      j["alloc_memory_mib"], j["memory_eff_pct"])' sjob.json)
    # the job's own CPU time: both tasks' and the batch shell's (the srun client, python)
    check_range "CPU time against the job's own (times: $own s)" "$got" \
        "$(echo "$own * 0.95 - 0.05" | bc)" "$(echo "$own * 1.05 + 0.1" | bc)"
    check "the CPUs allocated, as Slurm says (NumCPUs)" "$alloc" "$ncpus"
    want=$(echo "scale=4; 100 * $own / ($ncpus * $wall)" | bc)
    check_range "CPU efficiency against the job's own CPU time ($want %)" "$eff" \
        "$(echo "$want * 0.95 - 0.5" | bc)" "$(echo "$want * 1.05 + 0.5" | bc)"
    check "the memory allocated is --mem" "$amem" 200
    # 100 MiB of bytes, the interpreter's own few MiB on top
    check_range "the memory peak holds the 100 MiB" "$peak" 100 160
    want=$(echo "scale=4; 100 * $peak / 200" | bc)
    check_range "memory efficiency: peak / --mem ($want %)" "$meff" \
        "$(echo "$want - 0.06" | bc)" "$(echo "$want + 0.06" | bc)"

    plugstack "db=$T/sdb/%j.%n.db"
    # without the plugin's help: `srun rtrack run` records the step's facts from its environment
    : >sl/plugstack.conf
    sid=$(sbatch --parsable -n1 --mem=100 -o /dev/null -D "$T" --wrap "srun $RTRACK run --quiet --db srun.db -- true")
    check_cmd "sbatch --wrap 'srun rtrack run': the job ran" job_wait "$sid"
    check "srun rtrack run: the step's facts" "$(q srun.db "SELECT mode || ',' || slurm_job_id || ',' ||
        slurm_step_id || ',' || slurm_nodename || ',' || slurm_mem_per_node_mib || ',' ||
        slurm_ntasks || ',' || slurm_job_partition FROM runs")" "run,$sid,0,$node,100,1,debug"
    plugstack "db=$T/sdb/%j.%n.db"
    # a job array: each task a job of its own, recorded with the array's ids
    aid=$(sbatch --parsable --array=1-2 -n1 --mem=100 -o /dev/null --wrap "$SPIN 0.3")
    check_cmd "sbatch: the job array ran" job_wait "$aid"
    check "the array's tasks recorded with the array's ids" "$(for f in sdb/*.db; do
        q "$f" "SELECT slurm_array_job_id || ':' || slurm_array_task_id || ':' || slurm_step_id FROM runs
            WHERE slurm_array_job_id IS NOT NULL"; done | sort | tr '\n' ' ')" "$aid:1:batch $aid:2:batch "
    check "summary --slurm-job ARRAY: a row per task" "$("$RTRACK" summary --db "sdb/*.db" \
        --slurm-job "$aid" --format json | python3 -c 'import json, sys
print(" ".join(sorted(n["array_task_id"] for n in json.load(sys.stdin)["nodes"])))')" "1 2"

    # min_s: a step shorter than it is not recorded (and does not wait for a recorder)
    plugstack "db=$T/sdb/%j.%n.db" min_s=3
    mid=$(sbatch --parsable -n1 --mem=100 -o /dev/null --wrap "sleep 0.2")
    job_wait "$mid"
    check "min_s: a shorter step is not recorded, the job is fine" \
        "$(find sdb -name "$mid.*" | wc -l) $(job_exit "$mid")" "0 0:0"
    plugstack "db=$T/sdb/%j.%n.db"

    # another user's job: the recorder runs as that user, its database is the user's
    if id nobody >/dev/null 2>&1; then
        chmod 755 "$T"
        mkdir -m 1777 udb
        # the job and its recorder run as nobody: copies of rt_spin and rtrack nobody can reach
        # (a checkout in a directory only root may enter, as mktemp -d makes them, stops exec)
        mkdir -m 755 ubin && cp "$RTRACK" "$SPIN" ubin/ && chmod 755 ubin/*
        RTRACK="$T/ubin/rtrack" plugstack "db=$T/udb/%u/%j.%n.db"
        uid=$(sbatch --parsable --uid=nobody --gid="$(id -gn nobody)" -n1 --mem=100 -o /dev/null \
            -D / --wrap "$T/ubin/rt_spin 0.5")
        check_cmd "a job of user nobody ran" job_wait "$uid"
        udbf="udb/nobody/$uid.$node.db"
        check "nobody's job: recorded as nobody, into nobody's file" \
            "$(stat -c %U "$udbf" 2>&1) $(q "$udbf" "SELECT slurm_job_user || ',' || status || ',' ||
                (SELECT count(*) > 2 FROM samples) FROM runs")" "nobody nobody,finished,1"

        # --- a job of user nobody trying each trick on the plugin (issue 31 items 8, 9, 10, 15).
        # nobody's job: sbatch --uid=nobody, its script in a place nobody may read
        mkdir -m 1777 pub
        nob() { sbatch --parsable --uid=nobody --gid="$(id -gn nobody)" -n1 --mem=100 -o /dev/null -D / "$@"; }
        logged() { grep -c -- "$1" sl/slurmd.log; }
        # %n from the job's environment, and as=root: root made files and directories where the
        # job said (SLURMD_NODENAME=n/../../../x); the node's name is slurmstepd's own now
        RTRACK="$T/ubin/rtrack" plugstack "db=$T/udb/root-%u/%j.%n.db" as=root "log=$T/pub/%n.%j.log"
        hid=$(nob --export=ALL,SLURMD_NODENAME=n/../../../x --wrap "$T/ubin/rt_spin 0.3")
        check_cmd "%n trick: the job ran" job_wait "$hid"
        check "%n trick: nothing made where the job's SLURMD_NODENAME led" \
            "$(ls -d "$T"/x* "$T"/udb/root-nobody/"$hid".n "$T"/pub/n 2>/dev/null)" ""
        check "%n trick: recorded under the node's own name, as root" \
            "$(stat -c %U "udb/root-nobody/$hid.$node.db" 2>&1) $(q "udb/root-nobody/$hid.$node.db" "SELECT slurm_nodename FROM runs")" \
            "root $node"
        # the log (as=root) through a link the job planted for its next step: root created the
        # link's target (and appended to it)
        cat >pub/linker.sh <<JOB
#!/bin/sh
ln -s "$T/root-made.txt" "$T/pub/$node.\$SLURM_JOB_ID.log.0"
exec srun -n1 true
JOB
        chmod 755 pub/linker.sh
        # (%s: the batch step's log is .batch, the srun step's .0: the link is for the latter)
        RTRACK="$T/ubin/rtrack" plugstack "db=$T/udb/root-%u/%j.%n.db" as=root "log=$T/pub/%n.%j.log.%s"
        lid=$(nob "$T/pub/linker.sh")
        check_cmd "log link trick: the job ran" job_wait "$lid"
        check "log link trick: the job's exit code" "$(job_exit "$lid")" "0:0"
        check "log link trick: root made nothing through the link" "$(ls "$T/root-made.txt" 2>/dev/null)" ""
        check "log link trick: the step is not recorded, said in slurmd's log" \
            "$(logged "\[$lid.0\] rtrack: error: job $lid step 0: the log '$node.$lid.log.0' is a symbolic link; refusing it; not recorded")" 1
        # the default /tmp/rtrack-%u made first by another user (0777, a 0666 database planted at
        # the job's id): the job recorded into it and its owner read the command lines
        mkdir -m 755 pre
        RTRACK="$T/ubin/rtrack" plugstack "db=$T/pre/rtrack-%u/%j.%n.db"
        pid1=$(nob --hold --wrap "$T/ubin/rt_spin 0.3 # secret-arg")
        mkdir -m 777 pre/rtrack-nobody
        "$RTRACK" run --quiet --db "pre/rtrack-nobody/$pid1.$node.db" -- true
        chmod 666 "pre/rtrack-nobody/$pid1.$node.db"
        chown -R 4242 pre/rtrack-nobody
        scontrol release "$pid1"
        check_cmd "planted directory: the job ran" job_wait "$pid1"
        check "planted directory: the job's exit code" "$(job_exit "$pid1")" "0:0"
        check "planted directory: nothing recorded into the planted database" \
            "$(q "pre/rtrack-nobody/$pid1.$node.db" "SELECT count(*) FROM runs")" 1
        check "planted directory: refused, said in slurmd's log" \
            "$(logged "\[$pid1.batch\] rtrack: error: job $pid1 step batch: directory '$T/pre/rtrack-nobody/' is another user's; refusing")" 1
        # ... and a database planted in the user's own directory by nobody else can be: the
        # recorder's own directory (0700) holds the recorder's own files only
        chown -R nobody pre/rtrack-nobody
        chmod 700 pre/rtrack-nobody
        pid2=$(nob --hold --wrap "$T/ubin/rt_spin 0.3")
        "$RTRACK" run --quiet --db "pre/rtrack-nobody/$pid2.$node.db" -- true # root's, 0666
        chmod 666 "pre/rtrack-nobody/$pid2.$node.db"
        scontrol release "$pid2"
        check_cmd "a database of root's in the user's directory: the job ran" job_wait "$pid2"
        check "a database of root's in the user's directory: not written" \
            "$(q "pre/rtrack-nobody/$pid2.$node.db" "SELECT count(*) FROM runs")" 1
        # start_wait and the other numbers range-checked: -1, 1e12, inf, nan held a step's start
        # until its recorder was ready, for ever if it never was; abc said "the default stays"
        # and set 0. The recorder here never says it is ready.
        printf '#!/bin/sh\nwhile :; do sleep 1; done\n' >ubin/never-ready
        chmod 755 ubin/never-ready
        plugstack "db=$T/sdb/%j.%n.db" "rtrack=$T/ubin/never-ready" start_wait=-1 start_wait=1e12 \
            start_wait=inf start_wait=nan start_wait=abc stop_wait=-5 interval=0 min_s=nan upload=maybe as=admin
        wid=$(sbatch --parsable -n1 --mem=100 -o /dev/null --wrap true)
        check_cmd "start_wait=-1 etc.: the step starts (within the default 2 s wait)" job_wait "$wid"
        check "start_wait=-1 etc.: the job's exit code" "$(job_exit "$wid")" "0:0"
        for a in start_wait=-1 start_wait=1e12 start_wait=inf start_wait=nan start_wait=abc stop_wait=-5 interval=0 min_s=nan; do
            check "plugstack.conf '$a': refused, the default stays" "$(logged "\[$wid.batch\] rtrack: error: '$a' in plugstack.conf is not a number of seconds from")" 1
        done
        check "plugstack.conf 'upload=maybe', 'as=admin': refused" \
            "$(logged "\[$wid.batch\] rtrack: error: 'upload=maybe' in plugstack.conf: expected 1 or 0") $(logged "\[$wid.batch\] rtrack: error: 'as=admin' in plugstack.conf: expected root or user")" "1 1"
        check "start_wait=abc: the default 2 s waited, not 0" \
            "$(logged "\[$wid.batch\] rtrack: job $wid step batch: no baseline from the recorder within 2 s")" 1

        # the step's end signalled a pid its user had freed: nobody's job ends its own recorder
        # and waits; root's process then gets the pid (ns_last_pid); the step's end must not
        # signal it
        RTRACK="$T/ubin/rtrack" plugstack "db=$T/udb/%u/%j.%n.db"
        cat >pub/killer.sh <<JOB
#!/bin/sh
for i in \$(seq 200); do
    r=\$(pgrep -u nobody -f "rtrack record .*--external-run-id \$SLURM_JOB_ID.batch")
    [ -n "\$r" ] && break
    sleep 0.05
done
kill -KILL \$r
echo \$r >"$T/pub/recorder.\$SLURM_JOB_ID"
for i in \$(seq 600); do [ -e "$T/pub/go.\$SLURM_JOB_ID" ] && break; sleep 0.05; done
JOB
        chmod 755 pub/killer.sh
        kid=$(nob pub/killer.sh)
        victim=
        if wait_file "pub/recorder.$kid" 30; then
            rpid=$(cat "pub/recorder.$kid")
            for _ in $(seq 100); do [ -d "/proc/$rpid" ] || break; sleep 0.05; done
            for _ in $(seq 50); do
                [ -d "/proc/$rpid" ] && break # a zombie not reaped yet: its pid not free
                echo $((rpid - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || break
                sleep 300 &
                v=$!
                if [ "$v" = "$rpid" ]; then victim=$v; break; fi
                kill -KILL "$v"
                wait "$v" 2>/dev/null
            done
        fi
        touch "pub/go.$kid"
        check_cmd "pid reuse: the job ran" job_wait "$kid"
        if [ -n "$victim" ]; then
            check "pid reuse: root's process that took the recorder's pid was not signalled" \
                "$(kill -0 "$victim" 2>/dev/null && echo alive || echo killed)" alive
            kill -KILL "$victim" 2>/dev/null
        else
            skip "pid reuse: the recorder's pid could not be given to another process here (ns_last_pid)"
        fi
    else
        skip "no user nobody: the recorder as the job's user not checked"
    fi

    # the plugin failing: the job's exit code and output stay the job's own
    for bad in "rtrack=$T/no-such-rtrack" "db=/proc/no-such-dir/%j.db"; do
        plugstack "db=$T/sdb/%j.%n.db" "$bad"
        fid=$(sbatch --parsable -n1 -o "fail.out" -D "$T" --wrap 'echo out-line; echo err-line >&2; exit 3')
        job_wait "$fid"
        check "plugin failing ($bad): the job's exit code" "$(job_exit "$fid")" "3:0"
        check "plugin failing ($bad): the job's output" "$(cat fail.out)" "out-line
err-line"
        check "plugin failing ($bad): nothing recorded" "$(find sdb -name "$fid.*" | wc -l)" 0
        check "plugin failing ($bad): logged by slurmd" \
            "$(grep -c "\[$fid.batch\] rtrack: error: job $fid step batch: .*not recorded" sl/slurmd.log)" 1
    done
    slurm_stop
fi

finish
