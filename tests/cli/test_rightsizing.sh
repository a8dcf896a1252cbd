#!/usr/bin/env bash
# What the recommendation is built on (issue 16): no sample of a live tree with an empty memory
# reading, no row of a tree that is gone.
. "$(dirname "$0")/lib.sh" "$1"
# summary's text wraps a long line at 100 columns, continuing it 13 blanks in: one line again
summary_text() { "$RTRACK" summary "$@" | awk '/^             [^ ]/ { sub(/^ +/, ""); l = l " " $0; next }
    { if (NR > 1) print l; l = $0 } END { print l }'; }

# --- a process that execs keeps its memory reading in the sample right after the exec: the
# smaps_rollup kept open pins the old address space and fails (ESRCH) after an exec; it is
# opened again within the same sample. 'sh -c "sleep 1.2; exec sleep 2"' at 0.5 s: the exec
# falls between the samples at 1.0 and 1.5 s.
DB=exec.db
"$RTRACK" run --quiet --db $DB --interval 0.5 -- sh -c 'sleep 1.2; exec sleep 2'
check "exec: exit 0" "$?" 0
check_range "exec: periodic samples" "$(q $DB "SELECT count(*) FROM samples WHERE kind = 'periodic'")" 5 8
check "exec: no periodic sample with the tree's memory 0 or unknown" \
    "$(q $DB "SELECT count(*) FROM samples WHERE kind = 'periodic' AND coalesce(proc_pss_kib, 0) = 0")" 0
check "exec: no live process row without its memory" \
    "$(q $DB "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id
              WHERE s.kind = 'periodic' AND ps.state NOT IN ('Z', 'X') AND coalesce(ps.pss_kib, 0) = 0")" 0
# the exec is seen: the job's process now runs sleep 2
check "exec: the job's process after the exec" \
    "$(q $DB "SELECT name || ' ' || cmdline FROM processes WHERE pid = (SELECT pid FROM runs)")" \
    'sleep ["sleep","2"]'
# --- record --pid of a tree that exits: the sample that finds it gone is not stored (its zeros
# would read as a tree that used nothing): no trailing all-zero row, means unchanged by it. A
# process holding 100 MiB (written, so resident) for 2 s, sampled every 0.25 s. (It leaves with
# os._exit: Python's own exit frees the 100 MiB first, and a sample on a loaded machine can
# land in that moment, a true but unhelpful reading.)
DB=pidgone.db
python3 -c 'import os, time; b = bytearray(100 << 20); open("held", "w").write("1"); time.sleep(2); os._exit(0)' &
P=$!
wait_file held 10 || fail "pid gone: the process did not start"
"$RTRACK" record --quiet --db $DB --interval 0.25 --pid $P
check "pid gone: exit 0" "$?" 0
check "pid gone: end_reason" "$(q $DB "SELECT end_reason FROM runs")" tree-gone
check "pid gone: last sample is final and sees the process" \
    "$(q $DB "SELECT kind || ',' || proc_count FROM samples ORDER BY seq DESC LIMIT 1")" "final,1"
"$RTRACK" export --db $DB --format csv --table process -o p.csv
check "pid gone: csv rows = samples after the baseline" "$(($(wc -l <p.csv) - 1))" \
    "$(q $DB "SELECT count(*) - 1 FROM samples")"
# memory_mib is column 7 of the Python ProcessTracker layout: every row holds the 100 MiB
check_range "pid gone: least memory_mib of any csv row" \
    "$(awk -F, 'NR > 1 { print $7 }' p.csv | sort -g | head -1)" 99 130
"$RTRACK" summary --db $DB --format json >pidgone.json
check_range "pid gone: summary mean memory (MiB)" \
    "$(python3 -c 'import json; print(json.load(open("pidgone.json"))["process"]["memory_mib"]["mean"])')" 99 130
# --- run's final sample is taken while the job is a zombie: its memory is unknown (NULL), not 0
# (which dragged the mean down); the Python CSV layout prints its 0 there still. The job holds
# 100 MiB from its first moment (python's own start-up is ~10 MiB) for 3 s at 0.25 s: most
# samples hold it even where python takes a second to start (under ASan on a loaded runner).
DB=zombie.db
"$RTRACK" run --quiet --db $DB --interval 0.25 -- \
    python3 -c 'import os, time; b = bytearray(100 << 20); time.sleep(3); os._exit(0)'
check "zombie final: exit 0" "$?" 0
check "zombie final: the final sample's tree memory is unknown" \
    "$(q $DB "SELECT coalesce(proc_pss_kib, 'null') || ',' || coalesce(proc_rss_kib, 'null') FROM samples WHERE kind = 'final'")" "null,null"
check "zombie final: its I/O and CPU are kept" \
    "$(q $DB "SELECT proc_cpu_usage IS NOT NULL AND proc_read_bytes IS NOT NULL FROM samples WHERE kind = 'final'")" 1
"$RTRACK" export --db $DB --format csv --table process -o z.csv
check "zombie final: the Python layout prints 0.0 for it" "$(tail -1 z.csv | cut -d, -f7)" 0.0
"$RTRACK" summary --db $DB --format json >z.json
# the periodic samples after the first hold the 100 MiB; the first may catch python starting
check_range "zombie final: summary p50 memory (MiB)" \
    "$(python3 -c 'import json; print(json.load(open("z.json"))["process"]["memory_mib"]["p50"])')" 99 130
# the mean is the periodic samples' (a loaded machine can catch python starting in the first),
# with no 0 from the final sample (before: the final's 0 was averaged in)
check "zombie final: summary mean memory = the periodic samples' mean (MiB)" \
    "$(python3 -c 'import json; print("%.4f" % json.load(open("z.json"))["process"]["memory_mib"]["mean"])')" \
    "$(q $DB "SELECT printf('%.4f', avg(proc_pss_kib / 1024.0)) FROM samples WHERE kind = 'periodic'")"
# --- peaks between samples: the kernel's high-water mark (getrusage of the reaped job) is the
# floor of the peak and of the memory recommendation. 700 MiB written and held for 0.2 s, at
# --interval 2: no sample sees it (the baseline comes before, the final one after the exit).
# The truth: /usr/bin/time -v's "Maximum resident set size" of the same program.
HOLD='import time; b = bytearray(700 << 20); time.sleep(0.2)'
DB=peak.db
"$RTRACK" run --quiet --db $DB --interval 2 -- python3 -c "$HOLD"
check "peak: exit 0" "$?" 0
"$RTRACK" summary --db $DB --format json >peak.json
get() { python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"j": j}))' "$@"; }
kern=$(get peak.json 'j["kernel"]["maxrss_mib"]')
check_range "peak: kernel high-water mark (MiB)" "$kern" 690 800
if [ -x /usr/bin/time ]; then
    truth=$(/usr/bin/time -f %M python3 -c "$HOLD" 2>&1 >/dev/null | tail -1)
    check_range "peak: within 3 % of /usr/bin/time's maximum RSS ($truth KiB)" \
        "$(awk -v k="$kern" -v t="$truth" 'BEGIN { print k * 1024 / t }')" 0.97 1.03
else
    skip "peak: /usr/bin/time is not installed (apt-get install time)"
fi
check "peak: the memory figure is built on the kernel's" "$(get peak.json 'j["recommendation"]["memory_basis"]["source"]')" kernel
check_range "peak: peak_mib" "$(get peak.json 'j["recommendation"]["memory_basis"]["peak_mib"]')" 690 800
# round_memory(peak x 1.2): 828..960 MiB -> 1024
check "peak: recommendation (peak x 1.2 rounded up)" "$(get peak.json 'j["recommendation"]["memory_mib"]')" 1024
# the share of the host's memory is of the same peak (the kernel's here), not of the samples'
check_range "peak: efficiency.memory_pct x the host's memory = the peak (MiB)" \
    "$(get peak.json 'j["efficiency"]["memory_pct"] / 100 * j["host"]["memory_mib"] if "host" in j else "no host"')" 680 810
check "peak: the Python reference's recommendation stays on the sampled peak" \
    "$(get peak.json 'j["python_recommendation"]["memory_basis"]["source"]')" sampled
summary_text --db $DB >peak.txt
check "peak: summary text shows the arithmetic" \
    "$(grep -c '^memory  *peak 7[0-9][0-9]\.[0-9][0-9] MiB (kernel) x 1.2 -> 1024 MiB$' peak.txt)" 1
check "peak: the header's peak memory is the kernel's (no sample saw the 700 MiB)" \
    "$(grep -c "^peak memory  7[0-9][0-9]\.[0-9] MiB (the most one process held, by the kernel's count: more than any sample saw)" peak.txt)" 1
check "peak: summary text shows the kernel's figures" "$(grep -c '^kernel  *the largest process held 7[0-9][0-9]\.[0-9] MiB at its peak' peak.txt)" 1
check "peak: summary's kernel CPU time is the stored getrusage figures (user, sys)" \
    "$(get peak.json '"%.6f,%.6f" % (j["kernel"]["user_s"], j["kernel"]["sys_s"])')" \
    "$(q $DB "SELECT printf('%.6f,%.6f', job_utime_s, job_stime_s) FROM runs")"

# --- a job shorter than one interval: its only sample after the baseline is the final one (a
# zombie); the peak is the kernel's
DB=short.db
"$RTRACK" run --quiet --db $DB --interval 1 -- python3 -c 'import time; b = bytearray(200 << 20); time.sleep(0.1)'
check "short: exit 0" "$?" 0
"$RTRACK" summary --db $DB --format json >short.json
check_range "short: peak (MiB)" "$(get short.json 'j["recommendation"]["memory_basis"]["peak_mib"]')" 190 300
check "short: recommendation" "$(get short.json 'j["recommendation"]["memory_mib"]')" 256

# --- record mode has no kernel figures (the tree is not rtrack's child)
check "record: no kernel figures" "$(get pidgone.json 'j["kernel"]' 2>/dev/null)" None
# --- a run that did not end well gets its recommendation with a caveat
caveat() { get "$1" 'j["recommendation"]["caveat"] and j["recommendation"]["caveat"]["kind"]'; }
DB=failed.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- sh -c 'sleep 0.5; exit 3'
check "failed: exit 3" "$?" 3
"$RTRACK" summary --db $DB --format json >failed.json
check "failed: caveat kind" "$(caveat failed.json)" failed
check "failed: caveat text" "$(summary_text --db $DB | grep -c '^caveat  *based on a run that failed (exit 3) after 0\.[5-9][0-9] s: it may not have done all its work$')" 1
check "finished: no caveat" "$(caveat peak.json)" None

DB=killed.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- sh -c 'echo $$ >job.pid; sleep 5' &
rt=$!
wait_file job.pid 10 && sleep 0.5 && kill -KILL "$(cat job.pid)"
wait_exit $rt 10
check "killed: rtrack dies of the job's SIGKILL" "$RC" 137
"$RTRACK" summary --db $DB --format json >killed.json
check "killed: caveat kind (no OOM kill on the host meanwhile)" "$(caveat killed.json)" signal
check "killed: caveat text" "$(get killed.json 'j["recommendation"]["caveat"]["text"]' | grep -c '^based on a run killed by SIGKILL after ')" 1

# an OOM kill: the job moves itself into a memory cgroup of 64 MiB (made here, as root) and
# allocates 200 MiB; the kernel's OOM killer kills it
if [ "$(id -u)" != 0 ]; then
    skip_req root "oom: needs root to make a memory cgroup"
else
    CG=""
    if [ -d /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/rtrack-test-$$" 2>/dev/null; then
        CG=/sys/fs/cgroup/memory/rtrack-test-$$
        echo $((64 << 20)) >"$CG/memory.limit_in_bytes"
        [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo $((64 << 20)) >"$CG/memory.memsw.limit_in_bytes"
    elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null &&
        mkdir "/sys/fs/cgroup/rtrack-test-$$" 2>/dev/null; then
        CG=/sys/fs/cgroup/rtrack-test-$$
        echo $((64 << 20)) >"$CG/memory.max"
        [ -e "$CG/memory.swap.max" ] && echo 0 >"$CG/memory.swap.max"
    fi
    if [ -z "$CG" ]; then
        skip "oom: no memory cgroup can be made here (neither v1 memory nor v2 with the memory controller)"
    else
        DB=oom.db
        # shellcheck disable=SC2016 # $$ and $CGP are the job shell's
        CGP=$CG "$RTRACK" run --quiet --db $DB --interval 0.2 -- \
            sh -c 'echo $$ >"$CGP/cgroup.procs"; sleep 0.3; exec python3 -c "b = bytearray(200 << 20)"'
        check "oom: rtrack dies of the job's SIGKILL" "$?" 137
        rmdir "$CG" 2>/dev/null
        check "oom: stored: signal 9, at least one OOM kill on the host" \
            "$(q $DB "SELECT exit_signal || ',' || (host_oom_kills >= 1) FROM runs")" "9,1"
        "$RTRACK" summary --db $DB --format json >oom.json
        check "oom: caveat kind" "$(caveat oom.json)" oom
        # the time to the kill is the machine's (0.4 s here, over 1 s on a loaded runner); the
        # request is the memory recommendation, a whole 128 MiB above the 64 MiB limit's peak
        OOMTXT=$(summary_text --db $DB | grep '^caveat ')
        check "oom: caveat text" "$(printf '%s\n' "$OOMTXT" | grep -cE '^caveat +based on a run killed by the OOM killer after [0-9]+\.[0-9][0-9] s: memory is a lower bound; ask for more than (128|256) MiB$')" 1
        echo "oom: the caveat said: $OOMTXT"
        check_range "oom: the kernel's peak is about the cgroup's limit (64 MiB, plus file pages) (MiB)" "$(get oom.json 'j["kernel"]["maxrss_mib"]')" 40 80
    fi
fi
# --- contention: a CPU-bound job of 2 processes while as many spinners as the machine has CPUs
# run beside it (outside the tree): the job gets about 2 x n / (n + 2) cores and waits for the
# rest; usage alone would say round(that) cores (1 on 2 or 4 vCPUs), its demand is 2
SPIN=$RT_HELPERS/rt_spin
NCPU=$(nproc)
"$SPIN" 5 "$NCPU" &
outside=$!
sleep 0.3
DB=starved.db
"$RTRACK" run --quiet --db $DB --interval 0.5 -- "$SPIN" 4 2
check "starved: exit 0" "$?" 0
wait $outside
"$RTRACK" summary --db $DB --format json >starved.json
demand=$(get starved.json 'j["cpu_demand"]["demand_cores"]')
# (the spinners' last moments before they are reaped are not sampled: a little under 2 on a
# loaded machine)
check_range "starved: demand (usage + waiting) is the job's 2 cores" "$demand" 1.5 2.3
check "starved: recommendation 2 vCPUs" "$(get starved.json 'j["recommendation"]["cpu"]')" 2
# the spinners outside the job are other work: the host was shared, and it was their CPU (about
# n x n / (n + 2) cores; other suites beside this one only add to it)
check "starved: shared, naming the CPU" \
    "$(get starved.json '(j["allocation"], j["allocation_basis"]["resource"], j["allocation_basis"]["others_cores"] >= 0.5)')" \
    "('shared', 'cpu', True)"
# one figure per quantity (issue 36: "mean cores 1.97" beside "it used 1.87 cores"): the usage
# the demand is built on is the mean cores, CPU time / wall time, in JSON, text and report
check "starved: the demand's usage is the mean cores" \
    "$(get starved.json '(round(j["cpu_demand"]["usage_cores"], 9) == round(j["cpu_time"]["mean_cores"], 9), round(j["cpu_time"]["mean_cores"], 9) == round(j["cpu_time"]["total_s"] / j["cpu_time"]["wall_s"], 9), round(j["cpu_demand"]["demand_cores"], 9) == round(j["cpu_demand"]["usage_cores"] + j["cpu_demand"]["wait_cores"], 9))')" \
    "(True, True, True)"
mean=$(get starved.json '"%.2f" % j["cpu_time"]["mean_cores"]')
check "starved: the text's cores line and CPU line say the same mean" \
    "$(summary_text --db $DB | grep -o -e "^cores  *$mean mean" -e "it used $mean cores" | wc -l)" 2
# the kernel's CPU time of the reaped job checks the sampled sum (10 ms ticks per sample)
close=$(python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(abs(a - b) <= 0.05 * b + 0.05)' \
    "$(q $DB "SELECT sum(proc_utime_s + proc_stime_s) FROM samples")" \
    "$(q $DB "SELECT job_utime_s + job_stime_s FROM runs")")
check "starved: the sampled CPU seconds = the kernel's (wait4) within 5 % + 0.05 s" "$close" True
if [ "$NCPU" -le 4 ]; then
    # waiting 2 / (n + 2) of the time it wanted a CPU: a third or more
    check "starved: named in JSON" "$(get starved.json 'j["cpu_demand"]["starved"]')" True
    check "starved: the recommendation is built on demand" "$(get starved.json 'j["recommendation"]["cpu_basis"]["source"]')" demand
    check "starved: usage alone says 1 (the Python reference's)" "$(get starved.json 'j["python_recommendation"]["cpu"]')" 1
    check "starved: named in the text" \
        "$(summary_text --db $DB | grep -c '^CPU  *starved: the job waited for a CPU [0-9.]* % of the time it wanted one; it used [0-9.]* cores and would have used ~[0-9.]*$')" 1
else
    skip "starved: $NCPU CPUs: the job's share of the machine is too large to starve it clearly"
fi
# --- contention, threads (issue 32): the same with one process of 2 x n spinning threads beside
# n spinners: 3n threads share n CPUs, the job wants 2n cores and gets about 2n/3. rtrack reads
# a many-threaded process's threads only as far as its CPU clock says they ran (src/collect/
# proc_threads.c). The truth is the kernel's, read by the test from the threads' own schedstat
# files once they stopped (rt_spin's hold: blocked, their wait no longer grows), while the job
# still lives; rtrack's count of the job's wait must be it to the nanosecond. The summary's
# waiting per core used is the threads' wait over their run, within what its CPU side can miss:
# ticks of 1/CLK_TCK (2 over the run) and the spread of the samples' intervals (each sample's
# rate is its figures over its own interval).
NTHR=$((2 * NCPU))
"$SPIN" 30 "$NCPU" &
outside=$!
sleep 0.3
DB=starved_threads.db
"$RTRACK" run --quiet --db $DB --interval 0.5 -- "$SPIN" 4 0 "$NTHR" spun.txt hold &
rt=$!
wait_file spun.txt 60 || fail "starved threads: the job did not stop spinning"
JOB=$(cut -d' ' -f4 spun.txt)
# the truth: the sums of its threads' files, once two readings 0.2 s apart agree
prev="" truth=""
for _ in $(seq 50); do
    truth=$(cat /proc/"$JOB"/task/*/schedstat | awk '{ r += $1; w += $2 } END { print r, w }')
    [ "$truth" = "$prev" ] && break
    prev=$truth
    sleep 0.2
done
[ "$truth" = "$prev" ] || fail "starved threads: the job's threads did not settle"
t_read=$(now)
read -r t_run t_wait <<<"$truth"
for _ in $(seq 100); do # a periodic sample after that reading
    [ "$(q $DB "SELECT count(*) FROM samples WHERE kind = 'periodic' AND ts > $t_read")" -ge 1 ] && break
    sleep 0.1
done
kill -TERM "$JOB"
wait_exit $rt 30
check "starved threads: exit 0" "$RC" 0
# the outside spinners are rt_spin's children: killing rt_spin alone left them spinning for the
# rest of their 30 s, starving the cases after this one (when's python started seconds late)
# shellcheck disable=SC2046 # one pid a word
kill $(cat /proc/"$outside"/task/*/children 2>/dev/null) "$outside" 2>/dev/null
wait $outside 2>/dev/null
after="SELECT min(seq) FROM samples WHERE kind = 'periodic' AND ts > $t_read"
check "starved threads: rtrack's count of the job's wait = its threads' schedstat (ns)" \
    "$(q $DB "SELECT ps.sched_wait_ns FROM process_samples ps JOIN samples s ON s.id = ps.sample_id
              JOIN processes p ON p.id = ps.process_id WHERE p.pid = $JOB AND s.seq = ($after)")" "$t_wait"
check "starved threads: its waits of each interval add up to it (from the job's start)" \
    "$(q $DB "SELECT round(sum(ps.cpu_wait_s) * 1e9 - $t_wait) FROM process_samples ps
              JOIN samples s ON s.id = ps.sample_id JOIN processes p ON p.id = ps.process_id
              WHERE p.pid = $JOB AND s.seq <= ($after)")" 0.0
"$RTRACK" summary --db $DB --format json >starved_threads.json
check "starved threads: named in JSON" "$(get starved_threads.json 'j["cpu_demand"]["starved"]')" True
spread=$(q $DB "SELECT (max(interval_s) - min(interval_s)) / min(interval_s) FROM samples
                WHERE kind = 'periodic' AND seq < ($after)")
check_range "starved threads: summary's wait per core used = the threads' wait / run" \
    "$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["cpu_demand"]
r, w = float(sys.argv[2]), float(sys.argv[3]); print(d["wait_cores"] / d["usage_cores"] / (w / r))' \
        starved_threads.json "$t_run" "$t_wait")" \
    "$(python3 -c 'import sys; print(1 - 2 / float(sys.argv[1]) / (float(sys.argv[2]) / 1e9) - float(sys.argv[3]))' "$(getconf CLK_TCK)" "$t_run" "$spread")" \
    "$(python3 -c 'import sys; print(1 + 2 / float(sys.argv[1]) / (float(sys.argv[2]) / 1e9) + float(sys.argv[3]))' "$(getconf CLK_TCK)" "$t_run" "$spread")"
# --- when the peak happened and who held it: 100 MiB for 1.2 s, then 200 MiB for 1.2 s (two
# python processes one after the other under one shell), at 0.3 s
DB=when.db
HOLD2='import sys, time; b = bytearray(int(sys.argv[1]) << 20); time.sleep(1.2)'
"$RTRACK" run --quiet --db $DB --interval 0.3 -- sh -c "python3 -c '$HOLD2' 100; python3 -c '$HOLD2' 200"
check "when: exit 0" "$?" 0
"$RTRACK" summary --db $DB --format json >when.json
check_range "when: the peak (MiB)" "$(get when.json 'j["memory_peak"]["mib"]')" 200 230
# the second python starts after the first's 1.2 s (and two interpreter start-ups)
check_range "when: at (s after the start)" "$(get when.json 'j["memory_peak"]["at_s"]')" 1.2 4.5
check "when: held by the second python" \
    "$(get when.json '(j["memory_peak"]["processes"][0]["name"], j["memory_peak"]["processes"][0]["pss_mib"] >= 200)')" \
    "('python3', True)"
check "when: the processes add up to the peak" \
    "$(get when.json 'round(sum(p["pss_mib"] for p in j["memory_peak"]["processes"]) + j["memory_peak"]["others"]["pss_mib"] - j["memory_peak"]["mib"], 6)')" 0.0
check "when: the text says it" \
    "$(summary_text --db $DB | grep -c -e '^peak memory  \(2[0-9][0-9]\.[0-9] MiB (the most one process held, by the kernel.s count: more than any sample saw); the job.s processes together peaked at \)\{0,1\}2[0-9][0-9]\.[0-9] MiB at +[1-3]\.[0-9][0-9] s\( (the job.s processes together, sampled)\)\{0,1\}$' -e '^at the peak  python3 ([0-9]*) 2[0-9][0-9]\.[0-9] MiB, sh ([0-9]*) [0-9.]* MiB$')" 2
# --- the report says the same: the caveat, the starvation, the memory arithmetic, the peak's time
"$RTRACK" report --db starved.db -o starved.html && "$RTRACK" report --db failed.db -o failed.html
check "report: the caveat of a failed run" \
    "$(grep -c '<p class="caveat">based on a run that failed (exit 3) after' failed.html)" 1
check "report: the starvation's usage is the mean cores" "$(grep -c "it used $mean cores" starved.html)" 1
check "report: the starvation" "$(grep -c '<p class="muted how">CPU: starved: the job waited for a CPU [0-9]* % of the time it wanted one' starved.html)" 1
check "report: the memory arithmetic" "$(grep -c '<p class="muted how">memory: peak [0-9.]* MiB (\(kernel\|sampled\)) x 1.2 -&gt; [0-9]* MiB' starved.html)" 1
check "report: when the sampled peak was, and who held it" "$(grep -c '<p class="muted how">peak memory sampled: [0-9.]* MiB at +[0-9.]* s, held by rt_spin ([0-9]*) [0-9.]* MiB, rt_spin' starved.html)" 1

# --- no impossible values: a final sample a few ms after a periodic one counted 10 ms ticks over
# that window (3.5 cores on 2 vCPUs); rates are bounded by the machine. 12 short runs of two
# spinners at 0.05 s put their final windows anywhere in 0-50 ms (here before the bound, some
# always said more than 2.1 cores on 2 vCPUs); then every sample of every run of this suite.
DB=bound.db
for _ in $(seq 1 12); do
    "$RTRACK" run --quiet --db $DB --interval 0.05 -- "$SPIN" 0.12 2 || fail "bound: a run failed"
done
for db in *.db; do
    check "no sample of $db above the machine's cores x 1.05 (tree, system)" \
        "$(q "$db" "SELECT coalesce(sum(proc_cpu_usage > ncores * 1.05), 0) || ',' || coalesce(sum(cpu_usage > ncores * 1.05), 0) FROM samples")" "0,0"
done

# =================================================================================================
# --- allocation (issue 16, "Allocation"): what the job was allocated is stored with the run, and
# summary reports efficiency against it as Slurm's seff does. Expected values are worked out
# here from the stored facts by the documented rule (docs/usage.md): CPUs the tightest of
# Slurm's, the cgroup's quota and the cpuset where it is below the host (Slurm's first on a tie);
# memory the tightest of Slurm's and the cgroup's limit where it is below the host's memory;
# cpu_alloc_pct = the kernel's CPU time / (CPUs x wall); memory_alloc_pct = peak / memory.
# =================================================================================================
# one core busy for 1 s, 300 MiB written and held
SPIN=$'import time\nb = bytearray(300 << 20)\nt = time.time()\nwhile time.time() - t < 1.0: pass'
DB=alloc.db
env -u SLURM_JOB_ID -u SLURM_MEM_PER_CPU SLURM_CPUS_ON_NODE=2 SLURM_MEM_PER_NODE=1024 \
    CUDA_VISIBLE_DEVICES=0,1 "$RTRACK" run --quiet --db $DB --interval 0.25 -- python3 -c "$SPIN"
check "alloc: exit 0" "$?" 0
check "alloc: Slurm's and CUDA's facts stored" \
    "$(q $DB "SELECT slurm_cpus_on_node || '|' || slurm_mem_per_node_mib || '|' || quote(slurm_mem_per_cpu_mib) || '|' || quote(slurm_job_id) || '|' || cuda_visible_devices || '|' || alloc_gpus FROM runs")" \
    "2|1024|NULL|NULL|0,1|2"
"$RTRACK" summary --db $DB --format json >alloc.json
# what summary must say, from the stored facts and the rule above
alloc_want() {
    python3 - "$1" "$2" "$3" "$4" <<'EOF'
import json, sqlite3, sys
db, js, slurm_cpus, slurm_mem = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
quota, cpuset, vcpus, cgmem, hostkib, cpu_s, wall = sqlite3.connect(db).execute(
    "SELECT cgroup_cpu_quota_cores, cgroup_cpuset_cpus, host_vcpus, cgroup_memory_limit_bytes, "
    "host_memory_kib, job_utime_s + job_stime_s, ended_at - started_at FROM runs").fetchone()
cpus = [(float(slurm_cpus), "slurm")] if slurm_cpus != "-" else []
cpus += [(quota, "cgroup")] if quota else []
cpus += [(cpuset, "cpuset")] if cpuset and cpuset < vcpus else []
mem = [(float(slurm_mem), "slurm")] if slurm_mem != "-" else []
mem += [(cgmem / 1048576, "cgroup")] if cgmem and cgmem / 1048576 < hostkib / 1024 else []
c, cf = min(cpus, key=lambda x: x[0])  # min keeps the first of equals: Slurm's
m, mf = min(mem, key=lambda x: x[0])
j = json.load(open(js))
a, e = j["allocated"], j["efficiency"]
peak = j["recommendation"]["memory_basis"]["peak_mib"]
print(a["cpus"] == c, a["cpus_from"] == cf, a["memory_mib"] == m, a["memory_from"] == mf,
      abs(e["cpu_alloc_pct"] - round(cpu_s / (c * wall) * 100, 2)) < 0.011,
      abs(e["memory_alloc_pct"] - round(peak / m * 100, 2)) < 0.011)
# for the text line (its figures written as include/rtrack/base/fmt.h says: 3 significant
# digits, MiB from 1024 up as GiB), and the checks from first principles: cores busy, MiB at
# the peak
sig3 = lambda v: ("%.2f" if abs(v) < 9.995 else "%.1f" if abs(v) < 99.95 else "%.0f") % v
mib = lambda v: (("%.2f GiB" if v < 10240 else "%.1f GiB") % (v / 1024) if v >= 1024
                 else ("%.2f MiB" if v < 10 else "%.1f MiB") % v)
vcpus = lambda v: ("%.0f" % v if v == int(v) else "%.2f" % v) + (" vCPU" if v == 1 else " vCPUs")
print("%s|%s|%s|%s|%s|%s|%.3f|%.1f" % (vcpus(c), cf, mib(m), mf, sig3(e["cpu_alloc_pct"]),
      sig3(e["memory_alloc_pct"]), e["cpu_alloc_pct"] * c / 100, e["memory_alloc_pct"] * m / 100))
EOF
}
alloc_want $DB alloc.json 2 1024 >alloc.want
check "alloc: allocated cpus, from, memory, from; cpu_alloc_pct = kernel CPU s / (cpus x wall); memory_alloc_pct = peak / memory" \
    "$(head -1 alloc.want)" "True True True True True True"
IFS='|' read -r c cf m mf cpct mpct busy peakm <<<"$(tail -1 alloc.want)"
check "alloc: GPUs and no Slurm job id" "$(get alloc.json '(j["allocated"]["gpus"], j["allocated"]["slurm_job_id"])')" "(2, None)"
# the job kept one core busy for most of its wall time (python's start and the 300 MiB before);
# the exact figure is checked above against the kernel's CPU time, this only says "one spinner":
# on a loaded 2-vCPU machine the spinner's share fell to 0.398 of a core (seen under ctest -j2)
check_range "alloc: cpu_alloc_pct x cpus = the cores the job kept busy" "$busy" 0.15 1.05
check_range "alloc: memory_alloc_pct x memory = the peak (300 MiB held), MiB" "$peakm" 300 400
summary_text --db $DB >alloc.txt
check "alloc: the text line" \
    "$(grep -cFx "allocated    $c ($cf), $m memory ($mf), 2 GPUs, used of it: CPU $cpct %, memory $mpct %" alloc.txt)" 1
# CUDA_VISIBLE_DEVICES set empty: no GPU (0); unset: unknown (NULL)
env -u CUDA_VISIBLE_DEVICES "$RTRACK" run --quiet --db gpus.db -- true
CUDA_VISIBLE_DEVICES='' "$RTRACK" run --quiet --db gpus.db -- true
check "alloc: GPUs of CUDA_VISIBLE_DEVICES unset, empty" \
    "$(q gpus.db "SELECT group_concat(quote(cuda_visible_devices) || ':' || quote(alloc_gpus), ' ') FROM (SELECT * FROM runs ORDER BY id)")" \
    "NULL:NULL '':0"

# --- the cgroup's limits and peak: rtrack started as the only process of a cgroup made here (as
# root; cgroup v1's memory and cpu hierarchies): 512 MiB, a quota of 50000 / 100000 = 0.5 cores.
# The job is two processes holding 150 MiB each for 0.3 s at --interval 2: no sample sees them
# (the baseline comes before, the final one after), the kernel's high-water mark is one process's
# (~160 MiB), only the cgroup's peak holds both (300 MiB and more).
if [ "$(id -u)" != 0 ]; then
    skip_req root "alloc cgroup: needs root to make a cgroup"
else
    MEMCG=/sys/fs/cgroup/memory/rtrack-alloc-$$
    CPUCG=/sys/fs/cgroup/cpu/rtrack-alloc-$$
    if [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ] && [ -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ] &&
        mkdir "$MEMCG" 2>/dev/null && mkdir "$CPUCG" 2>/dev/null; then
        echo $((512 << 20)) >"$MEMCG/memory.limit_in_bytes"
        echo 100000 >"$CPUCG/cpu.cfs_period_us"
        echo 50000 >"$CPUCG/cpu.cfs_quota_us"
        HOLD2='import os, time; pid = os.fork(); b = bytearray(150 << 20); time.sleep(0.3); os.waitpid(pid, 0) if pid else os._exit(0)'
        DB=cg.db
        # shellcheck disable=SC2016 # $$, $0 and $1 are the inner shell's
        env -u SLURM_CPUS_ON_NODE -u SLURM_MEM_PER_NODE -u SLURM_MEM_PER_CPU MEMCG="$MEMCG" CPUCG="$CPUCG" \
            sh -c 'echo $$ >"$MEMCG/cgroup.procs" && echo $$ >"$CPUCG/cgroup.procs" &&
                   exec "$0" run --quiet --db cg.db --interval 2 -- python3 -c "$1"' "$RTRACK" "$HOLD2"
        check "alloc cgroup: exit 0" "$?" 0
        rmdir "$MEMCG" "$CPUCG" 2>/dev/null
        check "alloc cgroup: the quota (cores) and memory limit (bytes) stored" \
            "$(q $DB "SELECT cgroup_cpu_quota_cores || '|' || cgroup_memory_limit_bytes FROM runs")" "0.5|536870912"
        # the cgroup holds both processes' 150 MiB (and rtrack's own few MiB), never more than
        # its limit
        check_range "alloc cgroup: the cgroup's peak (MiB)" \
            "$(q $DB "SELECT cgroup_memory_peak_bytes / 1048576.0 FROM runs")" 300 512
        check_range "alloc cgroup: the kernel's high-water mark is one process's (MiB)" \
            "$(q $DB "SELECT job_maxrss_kib / 1024.0 FROM runs")" 150 250
        "$RTRACK" summary --db $DB --format json >cg.json
        alloc_want $DB cg.json - - >cg.want
        check "alloc cgroup: allocated and efficiency against 0.5 cores and 512 MiB" "$(head -1 cg.want)" "True True True True True True"
        check "alloc cgroup: allocated" "$(get cg.json '(j["allocated"]["cpus"], j["allocated"]["cpus_from"], j["allocated"]["memory_mib"], j["allocated"]["memory_from"])')" \
            "(0.5, 'cgroup', 512, 'cgroup')"
        # the cgroup's peak counts every process of the job (and the page cache it causes):
        # shown as the kernel's figure, not the memory recommendation's basis (docs/usage.md)
        check_range "alloc cgroup: summary shows the cgroup's peak (MiB - the stored peak)" \
            "$(awk -v a="$(get cg.json 'j["kernel"]["cgroup_peak_mib"]')" \
                -v b="$(q $DB "SELECT cgroup_memory_peak_bytes / 1048576.0 FROM runs")" 'BEGIN { print a - b }')" -0.0051 0.0051
        # the basis is the larger of the sampled peak and the kernel's high-water mark, never the
        # cgroup's peak; under the 0.5-core quota python's start can take past the sample at 2 s,
        # which then sees both processes (seen: sampled 260.8 MiB, kernel 163.3, cgroup 309.9)
        check "alloc cgroup: the memory figure is the larger of sampled and kernel, not the cgroup's" \
            "$(get cg.json '(lambda b, s, k: (b["source"], round(b["peak_mib"], 2)) == (("sampled", round(s, 2)) if s >= k else ("kernel", round(k, 2))))(j["recommendation"]["memory_basis"], (j["memory_peak"] or {}).get("mib") or 0, j["kernel"]["maxrss_mib"])')" True
        check "alloc cgroup: the text says the cgroup's peak" \
            "$(summary_text --db $DB | grep -c "^cgroup  *the job's cgroup peaked at [0-9.]* [MG]iB (page cache included)$")" 1
    else
        rmdir "$MEMCG" 2>/dev/null
        skip "alloc cgroup: no cgroup v1 memory and cpu cgroup can be made here"
    fi
fi
finish
