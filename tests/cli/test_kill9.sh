#!/usr/bin/env bash
# Crash safety: rtrack killed with SIGKILL at random moments never corrupts the database, never
# loses committed samples, commits at least about once a second, leaves every killed run
# exportable, never takes the job down with it, and the database stays usable.
#
# 100 kills: 40 `record`s into one shared database at 0-0.5 s after their start (some before the
# run row or the baseline exist), 10 `record`s into a fresh database at 0-0.1 s (while it is
# created), 50 `run`s at 0-0.5 s (the job survives each and finishes). After each kill: the
# database opens, integrity_check is ok, the samples counted just before the kill are all there,
# seq has no holes, the run stays 'running', and `rtrack export` of it works. One summary line:
#   kill9: survived S/100, samples lost L
# RT_SEED=N repeats a sequence of kill moments (the seed is printed).
. "$(dirname "$0")/lib.sh" "$1"

SEED=${RT_SEED:-$$}
RANDOM=$SEED
echo "# seed $SEED"
# Builtins only between a start and its kill (process creation is slow on a small loaded VM,
# and every kill needs a few): the time, a random delay, and a sleep on a FIFO nothing writes to
mkfifo idle.fifo
exec 9<>idle.fifo
# nap_rnd MS: sleep 0 to MS milliseconds, at random
nap_rnd() {
    local r=$((RANDOM % ($1 + 1))) ms
    printf -v ms '%03d' $((r % 1000))
    read -r -t "$((r / 1000)).$ms" -u 9
}

TRIED=0 SURVIVED=0 LOST=0
NORUN=0 NOSAMPLE=0 # kills that came before the run row / before the baseline sample
# after_kill LABEL DB PREV_MAX_RUN BEFORE T_KILL: every check after one kill, printed with LABEL
# on failure. PREV_MAX_RUN is the newest run before this rtrack started, BEFORE the samples of
# newer runs counted just before the kill. Sets KILLED_RUN (0 when no run row was written).
after_kill() {
    local label=$1 db=$2 prev=$3 before=$4 t_kill=$5 ok=1 out ic info lines rows
    local run after seq_ok state recent
    TRIED=$((TRIED + 1))
    KILLED_RUN=0
    # a fresh database killed before its schema was written holds no run yet
    if [ ! -e "$db" ] || { [ "$prev" = 0 ] && [ "$(q "$db" "SELECT count(*) FROM sqlite_schema WHERE name = 'samples'" 2>&1)" != 1 ]; }; then
        [ -e "$db" ] && ic=$(q "$db" "PRAGMA integrity_check" 2>&1) && [ "$ic" != ok ] &&
            { ok=0; echo "# $label: integrity_check of the unfinished database: $ic"; }
        NORUN=$((NORUN + 1))
        [ "$ok" = 1 ] && SURVIVED=$((SURVIVED + 1))
        return 0
    fi
    # one sqlite3 call: integrity, then the killed run (the newest after PREV), the samples of
    # runs after PREV (none lost), seq from 0 without holes, the run still 'running' without an
    # end, the last committed sample at most about a second old (2.5 s on a loaded machine)
    out=$(q "$db" "PRAGMA integrity_check;
        SELECT r.id, (SELECT count(*) FROM samples WHERE run_id > $prev),
               count(s.id) = 0 OR (min(s.seq) = 0 AND max(s.seq) + 1 = count(s.id)),
               r.status || ',' || ifnull(r.end_reason, '-') || ',' || (r.ended_at IS NULL),
               count(s.id) = 0 OR $t_kill - max(s.ts) <= 2.5, count(s.id)
        FROM (SELECT ifnull(max(id), 0) AS id FROM runs WHERE id > $prev) m
        LEFT JOIN runs r ON r.id = m.id LEFT JOIN samples s ON s.run_id = r.id" 2>&1)
    ic=$(echo "$out" | head -n 1)
    info=$(echo "$out" | sed -n 2p)
    [ "$ic" = ok ] || { ok=0; echo "# $label: integrity_check: $out"; }
    IFS='|' read -r run after seq_ok state recent n <<<"$info"
    if [ "${after:-x}" -ge "${before:-0}" ] 2>/dev/null; then :; else
        ok=0
        echo "# $label: $before samples before the kill, '$after' after"
        [ "$after" -lt "$before" ] 2>/dev/null && LOST=$((LOST + before - after))
    fi
    if [ -z "$run" ]; then
        NORUN=$((NORUN + 1))
    else
        KILLED_RUN=$run
        [ "$seq_ok" = 1 ] || { ok=0; echo "# $label: seq has holes: $info"; }
        [ "$state" = "running,-,1" ] || { ok=0; echo "# $label: runs row: $info"; }
        [ "$recent" = 1 ] || { ok=0; echo "# $label: last committed sample more than 2.5 s before the kill: $info"; }
        [ "$n" = 0 ] && NOSAMPLE=$((NOSAMPLE + 1))
        # export works and has one row per sample after the baseline, under its header
        if "$RTRACK" export --db "$db" --run "$run" >k.csv 2>k.err; then
            mapfile -t <k.csv
            lines=${#MAPFILE[@]}
            rows=$((n > 0 ? n - 1 : 0))
            [ "$lines" = $((rows + 1)) ] || { ok=0; echo "# $label: export gave $lines lines for $n samples"; }
        else
            ok=0
            echo "# $label: export of run $run failed: $(cat k.err)"
        fi
    fi
    [ "$ok" = 1 ] && SURVIVED=$((SURVIVED + 1))
    return 0
}
maxrun() { q "$1" "SELECT ifnull(max(id), 0) FROM runs" 2>/dev/null || echo 0; }
newcount() { q "$1" "SELECT count(*) FROM samples WHERE run_id > $2" 2>/dev/null || echo 0; }

# --- 40 recorders into one database, killed at 0-0.5 s
DB=k.db
"$RTRACK" run --quiet --db $DB -- true # the database exists from the start: every kill can be checked
prev=$(maxrun $DB)
for i in $(seq 40); do
    "$RTRACK" record --quiet --interval 0.05 --db $DB &
    rec=$!
    nap_rnd 500
    before=$(newcount $DB "$prev")
    t_kill=${EPOCHREALTIME/,/.}
    kill -KILL $rec
    wait $rec 2>/dev/null
    after_kill "record kill $i" $DB "$prev" "$before" "$t_kill"
    [ "$KILLED_RUN" -gt 0 ] && prev=$KILLED_RUN
done
check "kill -9 of record x40: integrity_check still ok" "$(q $DB "PRAGMA integrity_check")" ok

# --- 10 recorders killed while they create a fresh database (0-0.1 s); the file is then usable
fresh_bad=0
for i in $(seq 10); do
    "$RTRACK" record --quiet --interval 0.05 --db "fresh$i.db" &
    rec=$!
    nap_rnd 100
    t_kill=${EPOCHREALTIME/,/.}
    kill -KILL $rec
    wait $rec 2>/dev/null
    after_kill "fresh database kill $i" "fresh$i.db" 0 0 "$t_kill"
    "$RTRACK" run --quiet --db "fresh$i.db" -- true 2>fresh.err
    rc=$?
    [ "$rc" = 0 ] && [ "$(q "fresh$i.db" "PRAGMA integrity_check; SELECT status FROM runs ORDER BY id DESC LIMIT 1" | tr '\n' ,)" = "ok,finished," ] ||
        { fresh_bad=$((fresh_bad + 1)); echo "# fresh database kill $i: a new run afterwards: exit $rc: $(cat fresh.err)"; }
done
check "kill -9 while creating the database x10: a new run into it works every time" "$fresh_bad" 0

# --- 50 runs killed at 0-0.5 s: the job is not killed with rtrack; it finishes on its own
RDB=r.db
"$RTRACK" run --quiet --db $RDB -- true
alive_bad=0
prev=$(maxrun $RDB)
for i in $(seq 50); do
    "$RTRACK" run --quiet --interval 0.05 --db $RDB -- sh -c 'echo $$ >"started.$0"; sleep 1.2; echo $$ >"done.$0"' "$i" &
    rt=$!
    nap_rnd 500
    before=$(newcount $RDB "$prev")
    t_kill=${EPOCHREALTIME/,/.}
    kill -KILL $rt
    wait $rt 2>/dev/null
    # a job that had started is still running right after the kill
    if [ -s "started.$i" ]; then
        read -r job <"started.$i"
        kill -0 "$job" 2>/dev/null || { alive_bad=$((alive_bad + 1)); echo "# run kill $i: the job died with rtrack"; }
    fi
    after_kill "run kill $i" $RDB "$prev" "$before" "$t_kill"
    [ "$KILLED_RUN" -gt 0 ] && prev=$KILLED_RUN
done
# every job that started finishes (the last ones within 1.2 s)
for _ in $(seq 60); do
    [ "$(ls started.* 2>/dev/null | wc -l)" = "$(ls done.* 2>/dev/null | wc -l)" ] && break
    sleep 0.1
done
started=$(ls started.* 2>/dev/null | wc -l)
finished=0
for f in started.*; do
    [ -e "$f" ] && [ "$(cat "done.${f#started.}" 2>/dev/null)" = "$(cat "$f")" ] && finished=$((finished + 1))
done
check "kill -9 of run x50: every started job was alive right after the kill" "$alive_bad" 0
check "kill -9 of run x50: every started job finished ($finished of $started)" "$finished" "$started"
check_range "kill -9 of run x50: most kills came after the job started" "$started" 25 50
check "kill -9 of run x50: integrity_check still ok" "$(q $RDB "PRAGMA integrity_check")" ok

check "kill -9 x$TRIED: every kill survived (database ok, no committed sample lost, exportable)" "$SURVIVED" "$TRIED"
check "kill -9 x$TRIED: committed samples lost" "$LOST" 0
echo "# kills before the run row: $NORUN, before the baseline sample: $NOSAMPLE"
echo "kill9: survived $SURVIVED/$TRIED, samples lost $LOST"

# --- a longer recording killed after 3.5 s lost at most about the last second
prev=$(maxrun $DB)
"$RTRACK" record --quiet --interval 0.05 --db $DB &
rec=$!
sleep 3.5
t_kill=${EPOCHREALTIME/,/.}
kill -KILL $rec
wait $rec 2>/dev/null
check_range "kill -9 after 3.5 s: age of the last committed sample (s)" \
    "$(q $DB "SELECT $t_kill - max(ts) FROM samples WHERE run_id > $prev")" 0 2
check_range "kill -9 after 3.5 s: committed samples at 0.05 s" "$(q $DB "SELECT count(*) FROM samples WHERE run_id > $prev")" 20 75
check "kill -9 after 3.5 s: integrity_check" "$(q $DB "PRAGMA integrity_check")" ok

# --- the database is still usable: a new run appends and finishes
prev=$(maxrun $DB)
"$RTRACK" run --quiet --db $DB -- true
check "after crashes: a new run succeeds" "$?" 0
check "after crashes: it is the next run, finished" "$(q $DB "SELECT id || ',' || status FROM runs ORDER BY id DESC LIMIT 1")" "$((prev + 1)),finished"
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
