#!/usr/bin/env bash
# Crash safety: rtrack killed with SIGKILL at random moments never corrupts the database, never
# loses committed samples, commits at least about once a second, and the database stays usable.
. "$(dirname "$0")/lib.sh" "$1"

DB=k.db
now() { date +%s.%N; }
# wait_run_samples RUN [SECS]: wait until run RUN has a sample
wait_run_samples() {
    local i
    for ((i = 0; i < ${2:-10} * 20; i++)); do
        [ "$(q $DB "SELECT count(*) FROM samples WHERE run_id = $1" 2>/dev/null)" -gt 0 ] 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}

# --- 20 recorders killed at random moments, all into one database
integrity_bad=0 lost=0 empty=0 stale=0 holes=0 state_bad=0 started_bad=0
for i in $(seq 20); do
    "$RTRACK" record --quiet --interval 0.05 --db $DB &
    rec=$!
    if ! wait_run_samples "$i"; then
        started_bad=$((started_bad + 1))
        echo "iteration $i: recorder did not start"
    fi
    sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.2 + 1.3 * r / 32767 }')"
    before=$(q $DB "SELECT count(*) FROM samples WHERE run_id = $i")
    t_kill=$(now)
    kill -KILL $rec
    wait $rec 2>/dev/null
    ic=$(q $DB "PRAGMA integrity_check")
    after=$(q $DB "SELECT count(*) FROM samples WHERE run_id = $i")
    last=$(q $DB "SELECT max(ts) FROM samples WHERE run_id = $i")
    [ "$ic" = ok ] || { integrity_bad=$((integrity_bad + 1)); echo "iteration $i: integrity_check: $ic"; }
    [ "${after:-0}" -ge "${before:-0}" ] || { lost=$((lost + 1)); echo "iteration $i: $before samples before the kill, $after after"; }
    [ "${after:-0}" -gt 0 ] || { empty=$((empty + 1)); echo "iteration $i: no samples"; }
    # committed at least about once a second (generous: 2.5 s on a loaded machine)
    awk -v l="${last:-0}" -v k="$t_kill" 'BEGIN { exit !(k - l <= 2.5) }' ||
        { stale=$((stale + 1)); echo "iteration $i: last committed sample $(awk -v l="${last:-0}" -v k="$t_kill" 'BEGIN { print k - l }') s before the kill"; }
    [ "$(q $DB "SELECT max(seq) + 1 = count(*) AND min(seq) = 0 FROM samples WHERE run_id = $i")" = 1 ] ||
        { holes=$((holes + 1)); echo "iteration $i: seq has holes"; }
    [ "$(q $DB "SELECT status || ',' || ifnull(end_reason, '-') || ',' || (ended_at IS NULL) FROM runs WHERE id = $i")" = "running,-,1" ] ||
        { state_bad=$((state_bad + 1)); echo "iteration $i: runs row: $(q $DB "SELECT status, end_reason, ended_at FROM runs WHERE id = $i")"; }
done
check "kill -9 x20: every recorder started" "$started_bad" 0
check "kill -9 x20: integrity_check ok after every kill" "$integrity_bad" 0
check "kill -9 x20: sample count never decreases across a kill" "$lost" 0
check "kill -9 x20: every killed run kept samples" "$empty" 0
check "kill -9 x20: last committed sample within 2.5 s of the kill" "$stale" 0
check "kill -9 x20: seq contiguous in every killed run" "$holes" 0
check "kill -9 x20: killed runs stay 'running' with no end" "$state_bad" 0
check "kill -9 x20: 20 runs in the database" "$(q $DB "SELECT count(*) FROM runs")" 20
check_range "kill -9 x20: samples in all (at least the baselines)" "$(q $DB "SELECT count(*) FROM samples")" 20 700

# --- a longer recording killed after 3.5 s lost at most about the last second
"$RTRACK" record --quiet --interval 0.05 --db $DB &
rec=$!
wait_run_samples 21
sleep 3.5
t_kill=$(now)
kill -KILL $rec
wait $rec 2>/dev/null
check_range "kill -9 after 3.5 s: age of the last committed sample (s)" \
    "$(q $DB "SELECT $t_kill - max(ts) FROM samples WHERE run_id = 21")" 0 2
check_range "kill -9 after 3.5 s: committed samples at 0.05 s" "$(q $DB "SELECT count(*) FROM samples WHERE run_id = 21")" 20 75
check "kill -9 after 3.5 s: integrity_check" "$(q $DB "PRAGMA integrity_check")" ok

# --- the database is still usable: a new run appends and finishes
"$RTRACK" run --quiet --db $DB -- true
check "after crashes: a new run succeeds" "$?" 0
check "after crashes: it is run 22, finished" "$(q $DB "SELECT id || ',' || status FROM runs ORDER BY id DESC LIMIT 1")" "22,finished"
check "after crashes: integrity_check" "$(q $DB "PRAGMA integrity_check")" ok

# --- rtrack run killed with -9: the job is not killed with it. It is re-parented (to init or
# the nearest subreaper) and keeps running; the test then kills it itself.
"$RTRACK" run --quiet --interval 0.1 --db run.db -- sleep 30 &
rt=$!
for ((i = 0; i < 200; i++)); do
    job=$(q run.db "SELECT pid FROM runs" 2>/dev/null)
    [ -n "$job" ] && break
    sleep 0.05
done
if [ -z "$job" ]; then
    fail "run killed: job did not start"
    kill -KILL $rt
else
    sleep 0.5
    check "run killed: the job is rtrack's child" "$(awk '{ print $4 }' /proc/$job/stat)" "$rt"
    kill -KILL $rt
    wait $rt 2>/dev/null
    sleep 0.3
    check "run killed: the job keeps running after rtrack's death" \
        "$(kill -0 "$job" 2>/dev/null && awk '{ print $2 }' /proc/$job/stat)" "(sleep)"
    ppid=$(awk '{ print $4 }' /proc/$job/stat 2>/dev/null)
    check "run killed: the job was re-parented" "$([ -n "$ppid" ] && [ "$ppid" != "$rt" ] && echo yes)" yes
    kill "$job" 2>/dev/null
    check "run killed: integrity_check" "$(q run.db "PRAGMA integrity_check")" ok
    check "run killed: samples kept" "$(q run.db "SELECT count(*) > 0 FROM samples")" 1
    check "run killed: run row stays 'running'" "$(q run.db "SELECT status FROM runs")" running
fi

finish
