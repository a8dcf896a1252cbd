#!/usr/bin/env bash
# The main job on a short demo workload: build rtrack, run a few seconds of multi-process
# CPU, memory and disk work under `rtrack run`, recording into ./rtrack.db, then show what was
# recorded: its summary, then the database itself. Installs only what building rtrack and the
# demo need (scripts/test.sh installs the tests' packages). Usage: bash scripts/demo.sh
export RTRACK_BOOTSTRAP=demo
. "$(dirname "${BASH_SOURCE[0]}")/bootstrap.sh"
RTRACK=$BUILD/rtrack

# two CPU burners, a process holding a 256 MiB buffer, and a 128 MiB write + read back
"$RTRACK" run --db rtrack.db --interval 0.5 --job-name demo --tag kind=demo -- sh -c '
    timeout 3 sh -c "while :; do :; done" &
    timeout 3 sh -c "while :; do :; done" &
    dd if=/dev/zero of=/dev/null bs=256M count=6 2>/dev/null &
    dd if=/dev/zero of=rtrack-demo.tmp bs=1M count=128 conv=fsync 2>/dev/null
    dd if=rtrack-demo.tmp of=/dev/null bs=1M iflag=direct 2>/dev/null
    rm -f rtrack-demo.tmp
    wait'

RUN=$(sqlite3 rtrack.db "SELECT max(id) FROM runs")
echo
echo "What it used (rtrack summary --run $RUN):"
echo
"$RTRACK" summary --db rtrack.db --run "$RUN"
echo
echo "Recorded in rtrack.db, run $RUN:"
sqlite3 -box rtrack.db "
    SELECT id AS run, job_name, json_extract(command, '\$[0]') AS command, exit_code, status,
           round(ended_at - started_at, 2) AS seconds, host_vcpus AS vcpus,
           (SELECT count(*) FROM samples WHERE run_id = runs.id) AS samples,
           (SELECT count(*) FROM processes WHERE run_id = runs.id) AS processes_seen
    FROM runs WHERE id = $RUN"
sqlite3 -box rtrack.db "
    SELECT seq, kind, round(ts - (SELECT started_at FROM runs WHERE id = $RUN), 2) AS t_s,
           round(cpu_usage, 2) AS system_cores, round(proc_cpu_usage, 2) AS job_cores,
           proc_count AS job_procs, round(proc_pss_kib / 1024.0, 1) AS job_pss_mib,
           round(proc_write_bytes / 1048576.0, 1) AS job_write_mib,
           round(proc_read_bytes / 1048576.0, 1) AS job_read_mib,
           round(mem_used_kib / 1024.0) AS system_used_mib
    FROM samples WHERE run_id = $RUN ORDER BY seq"
sqlite3 -box rtrack.db "
    SELECT p.pid, p.name, round(sum(ps.cpu_utime_s + ps.cpu_stime_s), 2) AS cpu_s,
           round(max(ps.pss_kib) / 1024.0, 1) AS peak_pss_mib,
           round(sum(ps.write_bytes) / 1048576.0, 1) AS write_mib
    FROM processes p JOIN process_samples ps ON ps.process_id = p.id
    WHERE p.run_id = $RUN GROUP BY p.id ORDER BY cpu_s DESC LIMIT 8"
echo
echo "The same run as the Python resource-tracker's CSV (rtrack export, first rows):"
"$RTRACK" export --db rtrack.db --run "$RUN" | head -3 | cut -c1-160
echo
# where the binary is, and the one line that puts it on PATH for the README's tour
echo "rtrack is built: $RTRACK (and resource-tracker beside it: the same binary under"
echo "the Rust resource-tracker's name, taking its command line). To put both on PATH in this shell:"
printf '    export PATH=%q:$PATH\n' "$BUILD"
echo "or install them with the man page and the shell completions: cmake --install $BUILD"
