#!/usr/bin/env bash
# rtrack record: stops by itself after --duration, on SIGINT/SIGTERM/SIGHUP/SIGQUIT (with a
# final sample, exit 0), or when the --pid tree is gone; system-only recording leaves the
# process columns NULL.
. "$(dirname "$0")/lib.sh" "$1"

elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }
# runs/samples of the single run in DB
runcol() { q "$DB" "SELECT $1 FROM runs"; }
s() { q "$DB" "SELECT $1 FROM samples ${2:-}"; }
kinds() { q "$DB" "SELECT group_concat(kind, ',') FROM (SELECT kind FROM samples ORDER BY seq)"; }
# --- --duration: ends by itself, baseline + periodic + final, end_reason duration
DB=dur.db
t0=$(now)
"$RTRACK" record --db $DB --duration 1.5 --interval 0.5 2>dur.err
rc=$?
check "duration: exit 0" "$rc" 0
check_range "duration: wall time (s)" "$(elapsed "$t0")" 1.4 5
check "duration: runs row" "$(runcol "mode || ',' || status || ',' || end_reason || ',' || (command IS NULL) || ',' || (pid IS NULL) || ',' || (exit_code IS NULL)")" "record,finished,duration,1,1,1"
check_range "duration: ended_at - started_at (s)" "$(runcol "ended_at - started_at")" 1.45 3
check_range "duration: baseline to final (s)" "$(s "max(mono) - min(mono)")" 1.45 2.5
check_range "duration: number of samples" "$(s "count(*)")" 3 4
check "duration: first baseline, last final, periodic between" \
    "$(kinds | sed -E 's/^baseline(,periodic)*,final$/ok/')" ok
check "duration: note on stderr" "$(grep -c "^rtrack: run 1: recorded $(s "count(*)") samples over [0-9.]* s in $DB (duration)$" dur.err)" 1
check "duration: system-only: proc_* columns NULL" \
    "$(s "count(*)" "WHERE proc_root_pid IS NOT NULL OR proc_count IS NOT NULL OR proc_cpu_usage IS NOT NULL OR proc_rss_kib IS NOT NULL OR proc_utime_s IS NOT NULL")" 0
check "duration: system-only: no process rows" "$(q $DB "SELECT count(*) FROM processes") $(q $DB "SELECT count(*) FROM process_samples")" "0 0"
check "duration: system columns recorded" "$(s "count(*)" "WHERE seq > 0 AND (cpu_usage IS NULL OR mem_total_kib IS NULL OR processes IS NULL)")" 0
DB=durenv.db
RTRACK_DURATION=0.3 "$RTRACK" record --quiet --db $DB --interval 0.1 2>&1
check "RTRACK_DURATION=0.3: ends by duration" "$?:$(runcol end_reason)" "0:duration"
check_range "RTRACK_DURATION=0.3: ended_at - started_at (s)" "$(runcol "ended_at - started_at")" 0.25 2
printf '[tracker]\nduration_secs = 0.4\ninterval_secs = 0.1\n' >dur.toml
DB=durtoml.db
"$RTRACK" record --quiet --db $DB --config dur.toml
check "TOML duration_secs: ends by duration" "$?:$(runcol end_reason):$(runcol requested_interval_s)" "0:duration:0.1"

# --- stop signals: exit 0, end_reason interrupted, a final sample taken at once
for sig in INT TERM HUP QUIT; do
    DB=sig$sig.db
    "$RTRACK" record --db $DB --interval 10 2>"sig$sig.err" &
    rec=$!
    if ! wait_samples $DB 1; then
        fail "SIG$sig: record did not start"
        kill -KILL $rec
        continue
    fi
    sleep 0.2
    t0=$(now)
    kill -s $sig $rec
    wait_exit $rec
    check "SIG$sig: record exits 0" "$RC" 0
    check_range "SIG$sig: stops at once even with --interval 10 (s)" "$(elapsed "$t0")" 0 3
    check "SIG$sig: end_reason interrupted, finished" "$(runcol "end_reason || ',' || status")" "interrupted,finished"
    check "SIG$sig: baseline then final" "$(kinds)" "baseline,final"
    check "SIG$sig: note on stderr" "$(grep -c "(interrupted)$" "sig$sig.err")" 1
done
# a longer interrupted recording keeps its periodic samples
DB=intlong.db
"$RTRACK" record --quiet --db $DB --interval 0.2 &
rec=$!
wait_samples $DB 4
kill -s INT $rec
wait_exit $rec
check "SIGINT after periodic samples: exit 0" "$RC" 0
check "SIGINT after periodic samples: kinds" "$(kinds | sed -E 's/^baseline(,periodic)+,final$/ok/')" ok
check "SIGINT after periodic samples: seq contiguous" "$(s "max(seq) + 1 = count(*)")" 1

# --- --pid: follows that process, stops when it is gone (tree-gone)
DB=pid.db
sleep 2 &
P=$!
t0=$(now)
"$RTRACK" record --quiet --db $DB --interval 0.2 --pid $P &
rec=$!
wait_exit $rec 15
t=$(elapsed "$t0")
check "--pid: exit 0 when the process is gone" "$RC" 0
check_range "--pid: stops within a few seconds of the process (s)" "$t" 1.5 5
check "--pid: end_reason tree-gone" "$(runcol "end_reason || ',' || status")" "tree-gone,finished"
check "--pid: runs.pid" "$(runcol pid)" "$P"
check "--pid: proc_root_pid in every sample" "$(s "count(*)" "WHERE proc_root_pid IS NOT $P")" 0
check "--pid: the process is live in the periodic samples" "$(s "min(proc_count)" "WHERE kind = 'periodic'")" 1
# the sample that found the process gone is not stored: the one before it is the final one
check "--pid: last sample final, with the process live" "$(s "kind || ',' || proc_count" "ORDER BY seq DESC LIMIT 1")" "final,1"
check "--pid: one final sample" "$(s "count(*)" "WHERE kind = 'final'")" 1
check "--pid: processes row" "$(q $DB "SELECT name || '|' || cmdline FROM processes WHERE pid = $P")" 'sleep|["sleep","2"]'
wait $P 2>/dev/null

# --pid keeps following a descendant it has seen after the root exits (the orphan is
# re-parented to init): the root starts a child once recording runs, then exits
DB=pidtree.db
sh -c 'while [ ! -e go ]; do sleep 0.05; done; sleep 2.5 & sleep 0.6' &
P=$!
"$RTRACK" record --quiet --db $DB --interval 0.2 --pid $P &
rec=$!
wait_samples $DB 1
t0=$(now)
touch go
wait_exit $rec 15
t=$(elapsed "$t0")
check "--pid tree: exit 0" "$RC" 0
check "--pid tree: end_reason tree-gone" "$(runcol end_reason)" tree-gone
check_range "--pid tree: lasts as long as the grandchild (s)" "$t" 2.2 6
check "--pid tree: grandchild recorded" "$(q $DB "SELECT count(*) FROM processes WHERE cmdline = '[\"sleep\",\"2.5\"]'")" 1
wait $P 2>/dev/null

# --pid with --duration: whichever comes first
DB=piddur.db
sleep 20 &
P=$!
"$RTRACK" record --quiet --db $DB --interval 0.1 --pid $P --duration 0.5
check "--pid + --duration: duration wins for a long process" "$?:$(runcol end_reason)" "0:duration"
kill $P; wait $P 2>/dev/null

finish
