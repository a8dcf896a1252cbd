#!/usr/bin/env bash
# rtrack run: the sample schedule (baseline, periodic every --interval, an immediate final
# sample), the sample bookkeeping columns, and the process rows of the tracked tree.
. "$(dirname "$0")/lib.sh" "$1"

# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# one run per database below, so run_id is always 1
s() { q "$DB" "SELECT $1 FROM samples WHERE run_id = 1 ${2:-}"; }
# the kinds of all samples in seq order, comma-separated
kinds() { q "$DB" "SELECT group_concat(kind, ',') FROM (SELECT kind FROM samples WHERE run_id = 1 ORDER BY seq)"; }

# --- the final sample is taken when the job exits, not at the next tick
DB=prompt.db
t0=$(now)
"$RTRACK" run --quiet --db $DB --interval 10 -- sleep 0.3
rc=$?
wall=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { print b - a }')
check "prompt final: exit 0" "$rc" 0
check_range "prompt final: --interval 10 with a 0.3 s job returns quickly (s)" "$wall" 0.25 5
check "prompt final: exactly baseline + final" "$(kinds)" "baseline,final"
check_range "prompt final: final.ts - baseline.ts (s)" \
    "$(q $DB "SELECT max(ts) - min(ts) FROM samples")" 0.2 3
check_range "prompt final: final.interval_s (s)" "$(s interval_s "AND kind = 'final'")" 0.2 3

# --- a 2.5 s job at --interval 0.5: baseline, periodic samples on the 0.5 s grid, final
DB=grid.db
"$RTRACK" run --quiet --db $DB --interval 0.5 -- sleep 2.5 &
rt=$!
wait $rt
check "grid: exit 0" "$?" 0
n=$(s "count(*)")
kinds=$(kinds)
check "grid: first sample is the baseline" "${kinds%%,*}" baseline
check "grid: last sample is the final one" "${kinds##*,}" final
check "grid: one baseline, one final" "$(s "sum(kind = 'baseline') || ',' || sum(kind = 'final')")" "1,1"
check "grid: every other sample is periodic" "$(s "count(*)" "AND seq > 0 AND seq < $((n - 1)) AND kind <> 'periodic'")" 0
np=$(s "count(*)" "AND kind = 'periodic'")
check_range "grid: periodic samples for a 2.5 s job" "$np" 4 5
# how many ticks the measured duration allows: floor(D / 0.5) - 1 .. floor(D / 0.5)
dur=$(s "max(mono) - min(mono)")
check_range "grid: baseline to final (s)" "$dur" 2.4 4
ticks=$(awk -v d="$dur" 'BEGIN { printf "%d", d / 0.5 }')
check_range "grid: periodic count matches the measured duration ($dur s)" "$np" $((ticks - 1)) "$ticks"
check "grid: seq is 0..n-1 without gaps" "$(s "min(seq) || ',' || max(seq) || ',' || count(DISTINCT seq)")" "0,$((n - 1)),$n"
check "grid: seq follows time" \
    "$(q $DB "SELECT count(*) FROM samples a JOIN samples b ON b.seq = a.seq + 1 WHERE b.mono <= a.mono OR b.ts <= a.ts")" 0
check_range "grid: median periodic interval_s" "$(s interval_s "AND kind = 'periodic'" | median)" 0.4 0.7
check "grid: interval_s = mono - previous mono" \
    "$(q $DB "SELECT count(*) FROM samples a JOIN samples b ON b.seq = a.seq + 1 WHERE abs(b.interval_s - (b.mono - a.mono)) > 1e-3")" 0
# periodic samples sit on the baseline + k * interval grid (not drifting by the sampling cost)
lateness=$(q $DB "SELECT (p.mono - b.mono) - 0.5 * round((p.mono - b.mono) / 0.5) FROM samples p, samples b WHERE b.seq = 0 AND p.kind = 'periodic'" | median)
check_range "grid: median offset of periodic samples from the grid (s)" "$lateness" -0.01 0.1
check "grid: runs.requested_interval_s" "$(q $DB "SELECT requested_interval_s FROM runs")" 0.5
# per-interval values are NULL in the baseline and present afterwards
check "grid: baseline has NULL interval_s, cpu_usage, proc_cpu_usage" \
    "$(s "(interval_s IS NULL) || (cpu_usage IS NULL) || (proc_cpu_usage IS NULL)" "AND seq = 0")" 111
check "grid: later samples have interval_s, cpu_usage, proc_cpu_usage" \
    "$(s "count(*)" "AND seq > 0 AND (interval_s IS NULL OR cpu_usage IS NULL OR proc_cpu_usage IS NULL)")" 0
# the tracked root: runs.pid, proc_root_pid and the processes row agree, argv stored as JSON
pid=$(q $DB "SELECT pid FROM runs")
check "grid: proc_root_pid = runs.pid in every sample" "$(s "count(*)" "AND proc_root_pid IS NOT $pid")" 0
check "grid: processes row of the job" \
    "$(q $DB "SELECT name || '|' || cmdline || '|' || first_seq || '|' || ppid FROM processes WHERE pid = $pid")" \
    "sleep|[\"sleep\",\"2.5\"]|0|$rt"
check "grid: the job is live in the baseline" "$(s proc_count "AND seq = 0")" 1
check "grid: one process_samples row per sample for the job" \
    "$(q $DB "SELECT count(*) FROM process_samples ps JOIN processes p ON p.id = ps.process_id WHERE p.pid = $pid")" "$n"
# system columns are real values
check "grid: mem_total_kib is MemTotal" "$(s "DISTINCT mem_total_kib")" "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)"
check "grid: processes counted" "$(s "count(*)" "AND (processes IS NULL OR processes < 2)")" 0
ncpu=$(grep -c '^cpu[0-9]' /proc/stat)
check "grid: one cpu_core_samples row per core and sample" \
    "$(q $DB "SELECT count(*) FROM cpu_core_samples")" $((ncpu * n))
check "grid: samples.ncores = cores in /proc/stat" "$(s "count(*)" "AND ncores IS NOT $ncpu")" 0
check "grid: runs.host_vcpus" "$(q $DB "SELECT host_vcpus FROM runs")" "$(getconf _NPROCESSORS_ONLN)"

# --- fractional interval 0.05 s
DB=frac.db
"$RTRACK" run --quiet --db $DB --interval 0.05 -- sleep 1
check "0.05 s: exit 0" "$?" 0
check "0.05 s: runs.requested_interval_s" "$(q $DB "SELECT requested_interval_s FROM runs")" 0.05
check_range "0.05 s: samples for a 1 s job" "$(s "count(*)")" 10 23
check_range "0.05 s: median periodic interval_s" "$(s interval_s "AND kind = 'periodic'" | median)" 0.04 0.1

# --- a process tree: children recorded with their parent and argv, counted in proc_*
DB=tree.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- sh -c 'sleep 1.2 & sleep 1.2 & wait'
check "tree: exit 0" "$?" 0
root=$(q $DB "SELECT pid FROM runs")
check "tree: two child rows with the root as parent" \
    "$(q $DB "SELECT count(*) FROM processes WHERE ppid = $root AND name = 'sleep' AND cmdline = '[\"sleep\",\"1.2\"]'")" 2
check "tree: max proc_count" "$(s "max(proc_count)")" 3
check "tree: max proc_children" "$(s "max(proc_children)")" 2

# --- an orphaned grandchild (daemonised) stays in the tree: rtrack is the subreaper
DB=orphan.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- sh -c '(exec sleep 3 &); sleep 1' &
rt=$!
wait $rt
check "orphan: exit 0" "$?" 0
orphan=$(q $DB "SELECT pid FROM processes WHERE cmdline = '[\"sleep\",\"3\"]'")
# a sample taken before the subshell exited sees the subshell as the parent; once orphaned, the
# sleep is rtrack's (the subreaper's) child, as the last sample it is in says
check "orphan: recorded with rtrack as its parent" \
    "$(q $DB "SELECT ps.ppid FROM process_samples ps JOIN processes p ON p.id = ps.process_id
              JOIN samples s ON s.id = ps.sample_id WHERE p.pid = ${orphan:-0} ORDER BY s.seq DESC LIMIT 1")" "$rt"
# while the job lived: the periodic samples that found both the shell and its `sleep 1` alive
# (the last tick may come while they exit, and that sample then rightly counts fewer)
check "orphan: counted while the job lived" \
    "$(s "min(proc_count)" "AND kind = 'periodic' AND (SELECT count(*) FROM process_samples ps
          JOIN processes p ON p.id = ps.process_id WHERE ps.sample_id = samples.id
          AND ps.state <> 'Z' AND (p.pid = (SELECT pid FROM runs WHERE id = 1)
                                   OR p.cmdline = '[\"sleep\",\"1\"]')) = 2")" 3
[ -n "$orphan" ] && kill "$orphan" 2>/dev/null

# --- a child forked by a non-main thread is in the tree (found through that thread's children
# file; the Python reference reads the main thread's only)
DB=thread.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- python3 -c '
import subprocess, threading
t = threading.Thread(target=lambda: subprocess.run(["sleep", "1.1"]))
t.start(); t.join()'
check "thread child: exit 0" "$?" 0
root=$(q $DB "SELECT pid FROM runs")
check "thread child: the sleep forked by a thread is recorded as the job's child" \
    "$(q $DB "SELECT count(*) FROM processes WHERE ppid = $root AND cmdline = '[\"sleep\",\"1.1\"]'")" 1
check_range "thread child: seen in several samples" \
    "$(q $DB "SELECT count(*) FROM process_samples ps JOIN processes p ON p.id = ps.process_id WHERE p.cmdline = '[\"sleep\",\"1.1\"]'")" 3 20

# --- the same tree through children files and through the full /proc scan (the fallback)
tree_job='sh -c "sleep 1.5 & (sleep 1.4 & wait) & wait"'
for mode in walk full; do
    if [ $mode = full ]; then export RTRACK_PROC_SCAN=full; else unset RTRACK_PROC_SCAN; fi
    "$RTRACK" run --quiet --db scan_$mode.db --interval 0.25 -- sh -c "$tree_job"
    check "scan $mode: exit 0" "$?" 0
    # distinct programs: a fork caught before its exec (a sh that becomes a sleep) may add a row
    # in one run and not the other
    eval "${mode}_tree=\"\$(q scan_$mode.db \"SELECT group_concat(p, ' ') FROM (SELECT DISTINCT name || ':' || cmdline AS p FROM processes ORDER BY p)\")\""
    eval "${mode}_max=\$(q scan_$mode.db \"SELECT max(proc_count) FROM samples\")"
done
unset RTRACK_PROC_SCAN
check "scan: both modes record the same processes" "$walk_tree" "$full_tree"
check "scan: children files: 5 processes at most (sh, sh, sleep, subshell, sleep)" "$walk_max" 5
check "scan: full scan: the same" "$full_max" 5

# --- a process that execs another program is recorded under its new name and command line
# (a child seen between its fork and its exec, or a job that execs, as here)
DB=exec.db
"$RTRACK" run --quiet --db $DB --interval 0.2 -- sh -c 'sleep 0.5; exec sleep 0.9'
check "exec: exit 0" "$?" 0
check "exec: the root's row has the program it exec'd" \
    "$(q $DB "SELECT name || ' ' || cmdline FROM processes WHERE pid = (SELECT pid FROM runs)")" \
    'sleep ["sleep","0.9"]'
check "exec: one row for it, not two" "$(q $DB "SELECT count(*) FROM processes WHERE pid = (SELECT pid FROM runs)")" 1

# --- a mount that appears and goes away while recording is seen (mountinfo is re-read when
# poll() reports a change, not every sample)
if [ "$(id -u)" -eq 0 ]; then
    DB=mnt.db
    mp=$(mktemp -d "$PWD/mnt.XXXXXX")
    "$RTRACK" record --quiet --db $DB --interval 0.2 --duration 3 &
    rec=$!
    sleep 0.8
    mount -t tmpfs -o size=7m rtrack-test "$mp"
    sleep 1
    umount "$mp"
    wait $rec
    check "mount: recorder exit 0" "$?" 0
    seen=$(q $DB "SELECT count(*) FROM mount_samples ms JOIN mounts m ON m.id = ms.mount_id WHERE m.mount_point = '$mp'")
    check_range "mount: the tmpfs is in the samples taken while it was mounted" "$seen" 3 7
    check "mount: its size" "$(q $DB "SELECT DISTINCT total_bytes FROM mount_samples ms JOIN mounts m ON m.id = ms.mount_id WHERE m.mount_point = '$mp'")" $((7 * 1024 * 1024))
    check "mount: not in the last sample (unmounted)" \
        "$(q $DB "SELECT count(*) FROM mount_samples ms JOIN mounts m ON m.id = ms.mount_id WHERE m.mount_point = '$mp' AND ms.sample_id = (SELECT max(id) FROM samples)")" 0
    rmdir "$mp"
else
    skip_req root "mount: needs root to mount a tmpfs"
fi

finish
