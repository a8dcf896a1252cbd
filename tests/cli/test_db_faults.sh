#!/usr/bin/env bash
# The database misbehaving while rtrack records into it: the file deleted mid-run, another
# writer holding the write lock for longer than the busy timeout (2 s), recorders writing at
# once (and creating the file at once), and export and summary reading while a recorder
# writes. In each case the job is not affected and rtrack exits with its code; what was
# committed stays readable.
. "$(dirname "$0")/lib.sh" "$1"

# wait_run_samples DB RUN N [SECS]: wait until run RUN of DB has at least N samples

# --- the database file is deleted while `run` records into it: rtrack notices at the next write
# (SQLite in WAL mode would otherwise go on committing into the unlinked file), warns once,
# keeps the job running and exits with its code; it does not create the file again
"$RTRACK" run --interval 0.1 --db del.db -- sh -c '
    sleep 1.2; rm del.db; sleep 1.5; echo done >del.done; exit 5' >del.out 2>del.err
check "db deleted: rtrack exits with the job's code" "$?" 5
check "db deleted: the job ran to its end" "$(cat del.done 2>/dev/null)" "done"
check "db deleted: one warning, and it says the file was deleted" \
    "$(grep -c 'warning' del.err):$(grep -c "^rtrack: warning: recording failed: .*'del.db'.*deleted" del.err)" "1:1"
check "db deleted: nothing on stdout" "$(wc -c <del.out)" 0
check "db deleted: the database is not re-created" "$([ -e del.db ] && echo exists || echo absent)" absent
# the -wal and -shm SQLite leaves beside the deleted name do not harm the next database there
"$RTRACK" run --quiet --db del.db -- true
check "db deleted: a new run at the same path works" "$?" 0
check "db deleted: ... into a fresh database (one run, intact)" \
    "$(q del.db "SELECT count(*) FROM runs"):$(q del.db "PRAGMA integrity_check")" "1:ok"

# `record`: the same, and its exit status says that recording failed
"$RTRACK" record --interval 0.1 --duration 2.5 --db del2.db 2>del2.err &
rec=$!
wait_run_samples del2.db 1 1 10
sleep 0.8
rm del2.db
wait $rec
check "db deleted under record: exit 1 (recording failed)" "$?" 1
check "db deleted under record: one warning saying so" \
    "$(grep -c 'warning' del2.err):$(grep -c 'deleted' del2.err)" "1:1"

# --- another writer holds the database's write lock for 5 s (longer than the 2 s busy timeout)
"$RTRACK" run --quiet --db lock.db -- true
# (the job ends 2 s after the lock is released)
"$RTRACK" run --interval 0.1 --db lock.db -- sh -c '
    while [ ! -e unlock.t ]; do sleep 0.1; done; sleep 2; echo done >lock.done; exit 4' >lock.out 2>lock.err &
rt=$!
if wait_run_samples lock.db 2 10; then
    # (python's own busy timeout lets it wait for rtrack's current batch to be committed)
    python3 - lock.db <<'EOF'
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], timeout=20, isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
open("lock.t", "w").write("%.6f\n" % time.time())
time.sleep(5)
c.execute("ROLLBACK")
open("unlock.t", "w").write("%.6f\n" % time.time())
EOF
    check "locked: the job kept running while the lock was held" "$(kill -0 $rt 2>/dev/null && echo running)" running
    wait $rt
    check "locked: rtrack exits with the job's code" "$?" 4
    check "locked: the job ran to its end" "$(cat lock.done 2>/dev/null)" "done"
    check "locked: one warning, saying the database is locked" \
        "$(grep -c 'warning' lock.err):$(grep -c '^rtrack: warning: recording failed: .*locked' lock.err)" "1:1"
    lock_t=$(cat lock.t) unlock_t=$(cat unlock.t)
    check_range "locked: samples from before the lock kept" "$(q lock.db "SELECT count(*) FROM samples WHERE run_id = 2 AND ts < $lock_t")" 10 200
    # recording recovered: samples on the 0.1 s grid again in the 2 s after the lock went
    check_range "locked: samples from after the lock recorded" "$(q lock.db "SELECT count(*) FROM samples WHERE run_id = 2 AND ts > $unlock_t")" 8 25
    check "locked: the last sample is the final one" "$(q lock.db "SELECT kind FROM samples WHERE run_id = 2 ORDER BY seq DESC LIMIT 1")" final
    check "locked: the run was ended properly" \
        "$(q lock.db "SELECT status || ',' || end_reason || ',' || exit_code FROM runs WHERE id = 2")" "failed,exited,4"
    check "locked: integrity_check" "$(q lock.db "PRAGMA integrity_check")" ok
    noted=$(sed -n "s/^rtrack: run 2 .* \([0-9][0-9]*\) samples*\( .*\)*$/\1/p" lock.err)
    check "locked: the end-of-run note counts the samples the database holds" "$noted" "$(q lock.db "SELECT count(*) FROM samples WHERE run_id = 2")"
else
    fail "locked: rtrack did not start recording"
    kill -KILL $rt 2>/dev/null
fi

# --- two recorders into one database at once: both complete, at their own pace
"$RTRACK" run --interval 0.1 --db two.db -- sh -c 'sleep 4; exit 1' 2>two1.err &
r1=$!
"$RTRACK" run --interval 0.1 --db two.db -- sh -c 'sleep 4; exit 2' 2>two2.err &
r2=$!
wait $r1
rc1=$?
wait $r2
check "two recorders: each exits with its job's code" "$rc1:$?" "1:2"
check "two recorders: no warnings" "$(cat two1.err two2.err | grep -c warning)" 0
check "two recorders: two runs, each ended with its code" \
    "$(q two.db "SELECT group_concat(status || ',' || exit_code, ' ') FROM (SELECT * FROM runs ORDER BY exit_code)")" "failed,1 failed,2"
check "two recorders: every run's samples complete (seq 0..n-1, final last)" \
    "$(q two.db "SELECT count(*) FROM runs r WHERE (SELECT max(seq) + 1 = count(*) AND min(seq) = 0 FROM samples WHERE run_id = r.id) AND (SELECT kind FROM samples WHERE run_id = r.id ORDER BY seq DESC LIMIT 1) = 'final'")" 2
# each keeps sampling: a recorder holding the write lock for a one-second batch would leave the
# other about one sample a second (40 are due in 4 s at 0.1 s)
for r in 1 2; do
    check_range "two recorders: run $r samples" "$(q two.db "SELECT count(*) FROM samples WHERE run_id = $r")" 20 45
done
check "two recorders: each run's process rows belong to it" \
    "$(q two.db "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id JOIN processes p ON p.id = ps.process_id WHERE p.run_id <> s.run_id")" 0
check "two recorders: integrity_check" "$(q two.db "PRAGMA integrity_check")" ok

# three recorders creating the same new database at once, 30 times: all use it (none takes
# another's half-made file for a foreign database; that race hit about 1 try in 15 before the
# fix, so this check catches it most of the time, not always)
create_bad=0
for i in $(seq 30); do
    "$RTRACK" run --quiet --db "new$i.db" -- true 2>new1.err &
    r1=$!
    "$RTRACK" run --quiet --db "new$i.db" -- true 2>new2.err &
    r2=$!
    "$RTRACK" run --quiet --db "new$i.db" -- true 2>new3.err
    rc3=$?
    wait $r1
    rc1=$?
    wait $r2
    rc2=$?
    [ "$rc1:$rc2:$rc3:$(q "new$i.db" "SELECT count(*) FROM runs WHERE status = 'finished'")" = 0:0:0:3 ] ||
        { create_bad=$((create_bad + 1)); echo "# new database $i: exit $rc1, $rc2, $rc3: $(cat new1.err new2.err new3.err)"; }
done
check "three recorders creating one new database x30: all record into it" "$create_bad" 0

# --- export and summary while a recorder writes: they show the committed samples
"$RTRACK" record --quiet --interval 0.1 --duration 20 --db live.db &
rec=$!
wait_run_samples live.db 1 2 10
# run_facts JSON: samples, in_progress (1/0) and status of a summary document
run_facts() { q :memory: "SELECT json_extract(j, '\$.run.samples') || ' ' || json_extract(j, '\$.run.in_progress') || ' ' || json_extract(j, '\$.run.status') FROM (SELECT readfile('$1') AS j)"; }
export_bad=0 summary_bad=0
for _ in $(seq 6); do
    sleep 0.3
    c1=$(q live.db "SELECT count(*) FROM samples")
    "$RTRACK" export --db live.db >live.csv 2>live.err || { export_bad=$((export_bad + 1)); cat live.err; }
    "$RTRACK" summary --db live.db --format json >live.json 2>>live.err || { summary_bad=$((summary_bad + 1)); cat live.err; }
    c2=$(q live.db "SELECT count(*) FROM samples")
    rows=$(($(wc -l <live.csv) - 1))
    # the export's rows are the samples after the baseline, committed before it read them
    [ "$rows" -ge $((c1 - 1)) ] && [ "$rows" -le $((c2 - 1)) ] ||
        { export_bad=$((export_bad + 1)); echo "# export: $rows rows, samples committed: $c1 before, $c2 after"; }
    s=$(run_facts live.json)
    read -r n ip st <<<"$s"
    # (the summary's samples are the intervals: the samples after the baseline)
    [ "${n:-0}" -ge $((c1 - 1)) ] && [ "${n:-0}" -le $((c2 - 1)) ] && [ "$ip:$st" = 1:running ] ||
        { summary_bad=$((summary_bad + 1)); echo "# summary: '$s', samples committed: $c1 before, $c2 after"; }
done
kill -INT $rec
wait_exit $rec 5
check "recording stopped by SIGINT: exit 0" "$RC" 0
check "export during recording: 6 exports, each of the committed samples" "$export_bad" 0
check "summary during recording: 6 summaries, each in progress, of the committed samples" "$summary_bad" 0
"$RTRACK" summary --db live.db --format json >end.json
check "summary after recording: finished, all samples" \
    "$(run_facts end.json)" "$(q live.db "SELECT count(*) - 1 FROM samples") 0 finished"

finish
