#!/usr/bin/env bash
# Several databases read as one (--db again, a glob, --slurm-job) and `rtrack merge`, probed as
# a hostile and a careless user would (issue 31): an output aimed at any input, not only at the
# private merged copy; a run still recording merged again later; names SQLite keeps for its own
# files; a corrupt input; read-only inputs; the merged copy left behind by a reader stopped by a
# signal.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"

mkdir tmp
export TMPDIR=$T/tmp # the readers' private merged copy goes here, and must be gone from it
"$RTRACK" run --quiet --db a.db --interval 0.1 -- sleep 0.3
"$RTRACK" run --quiet --db b.db --interval 0.1 -- sleep 0.3
SLURM_JOB_ID=77 "$RTRACK" run --quiet --db b.db --interval 0.1 -- true
sum() { sha256sum "$1" | cut -c1-64; }

# --- 1. an output aimed at an input (item 1; `>>` item 18) -------------------------------------
# each case: the command as a user types it, with A.db and B.db fresh copies; both must stay
# byte-identical, the command refused (exit 2) before anything is written
out_case() { # NAME EXPECTED-MESSAGE-PART COMMAND...
    local name=$1 msg=$2 rc
    shift 2
    cp a.db A.db
    cp b.db B.db
    rm -f A.db-wal B.db-wal
    local sa sb
    sa=$(sum A.db) sb=$(sum B.db)
    "$@" 2>case.err
    rc=$?
    check "$name: refused (exit 2)" "$rc" 2
    check "$name: A.db and B.db untouched" "$(sum A.db) $(sum B.db)" "$sa $sb"
    check "$name: says so" "$(grep -c -- "$msg" case.err)" 1
    check "$name: no private copy left" "$(ls -A tmp)" ""
}
out_case "export -o the first of two" "the output 'A.db' is the database 'A.db'" \
    "$RTRACK" export --db A.db --db B.db -o A.db
out_case "report -o the second of two" "the output 'B.db' is the database 'B.db'" \
    "$RTRACK" report --db A.db --db B.db -o B.db
out_case "export -o an input's -wal" "is the write-ahead log of the database 'B.db'" \
    "$RTRACK" export --db A.db --db B.db -o B.db-wal
out_case "export -o through a glob" "the output 'A.db' is the database 'A.db'" \
    "$RTRACK" export --db '[AB].db' -o A.db
out_case "export --slurm-job -o its input" "the output 'B.db' is the database 'B.db'" \
    "$RTRACK" export --db B.db --slurm-job 77 -o B.db
out_case "report --slurm-job -o an input" "the output 'A.db' is the database 'A.db'" \
    "$RTRACK" report --db A.db --db B.db --slurm-job 77 -o A.db
out_case "export >> an input" "stdout is the database 'B.db'" \
    sh -c '"$0" export --db A.db --db B.db >>B.db' "$RTRACK"
out_case "runs >> the database" "stdout is the database 'A.db'" \
    sh -c '"$0" runs --db A.db >>A.db' "$RTRACK"
out_case "summary >> the database" "stdout is the database 'A.db'" \
    sh -c '"$0" summary --db A.db >>A.db' "$RTRACK"
out_case "runs >> one of several" "stdout is the database 'B.db'" \
    sh -c '"$0" runs --db A.db --db B.db >>B.db' "$RTRACK"
out_case "summary --slurm-job >> an input" "stdout is the database 'B.db'" \
    sh -c '"$0" summary --db A.db --db B.db --slurm-job 77 >>B.db' "$RTRACK"
# the control: an output elsewhere is written
"$RTRACK" export --db a.db --db b.db -o both.csv
check "export of two into another file: exit 0" "$?" 0
check "export of two into another file: a header and rows" "$(wc -l <both.csv | awk '{ print ($1 > 1) }')" 1

# --- 2. a database under a name SQLite keeps for its own files (item 5) --------------------------
# x.db-wal is x.db's write-ahead log to SQLite: a database made there was deleted the next time
# x.db was opened
"$RTRACK" merge x.db-wal a.db >/dev/null 2>wal.err
check "merge into x.db-wal: refused (exit 2)" "$?" 2
check "merge into x.db-wal: says why" "$(grep -c "SQLite takes that name for the write-ahead log of the database 'x.db'" wal.err)" 1
"$RTRACK" run --quiet --db x.db -- true
check "merge into x.db-wal: nothing there to lose" "$(ls x.db-wal 2>/dev/null; "$RTRACK" runs --db x.db --format csv | tail -n +2 | wc -l)" 1
for name in y.db-shm y.db-journal; do
    "$RTRACK" run --quiet --db "$name" -- touch ran.marker 2>/dev/null
    check "run --db $name: refused before the job (exit 125)" "$?:$(ls ran.marker 2>/dev/null)" "125:"
    check "run --db $name: nothing made" "$(ls "$name" 2>/dev/null)" ""
done
"$RTRACK" record --quiet --db z.db-wal --duration 0.2 2>/dev/null
check "record --db z.db-wal: refused (exit 1)" "$?:$(ls z.db-wal 2>/dev/null)" "1:"
# the control: a name that only looks alike is a name
"$RTRACK" run --quiet --db my-wal.db -- true
check "run --db my-wal.db: recorded" "$?" 0

# --- 3. a corrupt page in an input (item 6) ----------------------------------------------------------
# a process_samples leaf whose cell count was hit reads as a page of one row: merged "fine" with
# the rest of its rows (exit 0), where export of the same file reports the corruption; into an
# empty output the error of a page that cannot be read blamed the output
if q a.db "SELECT 1 FROM dbstat LIMIT 1" >/dev/null 2>&1; then
    "$RTRACK" run --quiet --db big.db --interval 0.002 -- sleep 1
    q big.db "PRAGMA journal_mode=DELETE" >/dev/null
    page=$(q big.db "SELECT pageno FROM dbstat WHERE name = 'process_samples' AND pagetype = 'leaf'
        ORDER BY pageno LIMIT 1 OFFSET (SELECT count(*) / 2 FROM dbstat WHERE name = 'process_samples'
        AND pagetype = 'leaf')")
    psize=$(q big.db "PRAGMA page_size")
    printf '\000\001' | dd of=big.db bs=1 seek=$(((page - 1) * psize + 3)) conv=notrunc status=none
    cp a.db into.db
    before=$(sum into.db)
    "$RTRACK" merge into.db big.db >/dev/null 2>corrupt.err
    check "merge of a corrupt input: exit 1" "$?" 1
    check "merge of a corrupt input: names it, says it is corrupt" \
        "$(grep -c "cannot merge 'big.db': the database is corrupt (.*page $page.*); nothing of it was merged" corrupt.err)" 1
    check "merge of a corrupt input: the output unchanged" "$(sum into.db)" "$before"
    "$RTRACK" merge new.db big.db >/dev/null 2>corrupt2.err
    check "merge of a corrupt input into a new output: exit 1, the input named" \
        "$?:$(grep -c "cannot merge 'big.db'" corrupt2.err):$(grep -c "new.db" corrupt2.err)" "1:1:0"
    check "merge of a corrupt input into a new output: no run of it" "$(q new.db 'SELECT count(*) FROM runs')" 0
    "$RTRACK" export --db big.db --db a.db --run 2 >/dev/null 2>corrupt3.err
    check "export of a corrupt input with another: refused, the input named" \
        "$?:$(grep -c "cannot merge 'big.db': the database is corrupt" corrupt3.err)" "2:1"
    check "export of a corrupt input with another: no private copy left" "$(ls -A tmp)" ""
else
    skip "this sqlite3 has no dbstat: the corrupt page is not made"
fi

# --- 4. merging a run that is still recording (item 4) ----------------------------------------------
# the periodic `rtrack merge cluster.db /var/tmp/rtrack/*/*.db` of docs/cluster.md: a run merged
# while it records was copied with its samples so far, and every later merge skipped it as
# "already in": frozen, read as interrupted, for good
"$RTRACK" run --quiet --db live.db --interval 0.1 -- sh -c 'while [ ! -e go ]; do sleep 0.05; done' &
live=$!
wait_samples live.db 3 30 || fail "the live run did not record 3 samples"
"$RTRACK" merge cl.db live.db >m1.out
check "merge while recording: the run added" "$(cat m1.out)" "live.db: 1 runs added, 0 already in cl.db"
check "merge while recording: copied unfinished" "$(q cl.db "SELECT status, ended_at IS NULL FROM runs")" "running|1"
id_before=$(q cl.db "SELECT id FROM runs")
touch go
wait_exit "$live" 30
check "the live run ended" "$RC" 0
"$RTRACK" merge cl.db live.db >m2.out
check "merge after it ended: brought up to date" "$(cat m2.out)" \
    "live.db: 0 runs added, 1 brought up to date, 0 already in cl.db"
rows() { q "$1" "SELECT r.status || ',' || r.end_reason || ',' || r.exit_code || ',' ||
    (SELECT count(*) FROM samples WHERE run_id = r.id) || ',' ||
    (SELECT max(seq) FROM samples WHERE run_id = r.id) || ',' ||
    (SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id WHERE s.run_id = r.id) || ',' ||
    (SELECT count(*) FROM cpu_core_samples c JOIN samples s ON s.id = c.sample_id WHERE s.run_id = r.id) || ',' ||
    (SELECT count(*) FROM processes WHERE run_id = r.id) FROM runs r"; }
check "merge after it ended: every row of the finished run, as the input has it" "$(rows cl.db)" "$(rows live.db)"
check "merge after it ended: the run keeps its id in the output" "$(q cl.db "SELECT id FROM runs")" "$id_before"
check "merge after it ended: no dangling reference" "$(q cl.db 'PRAGMA foreign_key_check')" ""
check "merge after it ended: the summary says finished" \
    "$("$RTRACK" summary --db cl.db --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["run"]["status"])')" finished
"$RTRACK" merge cl.db live.db >m3.out
check "merge once more: nothing to do" "$(cat m3.out)" "live.db: 0 runs added, 1 already in cl.db"
check "merge once more: the same rows" "$(rows cl.db)" "$(rows live.db)"

# --- 5. a reader of several databases stopped by a signal (item 16) ----------------------------------
# its private merged copy (51 MB seen) stayed in TMPDIR after SIGPIPE from `| head`, Ctrl-C,
# SIGTERM, SIGHUP
"$RTRACK" run --quiet --db many.db --interval 0.01 -- sh -c 'while [ ! -e enough ]; do sleep 0.05; done' &
many=$!
wait_samples many.db 60 60 || fail "many.db: 60 samples not recorded"
touch enough
wait_exit "$many" 30
"$RTRACK" export --db many.db --db a.db --run 1 --format jsonl | head -c 100 >/dev/null
check "export of two | head: the exit of head, no private copy left" "$(ls -A tmp)" ""
rm -rf "${TMPDIR:?}"/*
"$RTRACK" runs --db many.db --db a.db | head -n 1 >/dev/null
check "runs of two | head: no private copy left" "$(ls -A tmp)" ""
# stopped while it writes into a pipe nobody reads (JSON Lines of 60 samples: more than a pipe
# holds), the signals at their default (a background job of a script starts with SIGINT ignored)
mkfifo full
exec 3<>full
for sig in INT TERM HUP PIPE ALRM USR1; do
    rm -rf "${TMPDIR:?}"/*
    env --default-signal "$RTRACK" export --db many.db --db a.db --run 1 --format jsonl >full 2>/dev/null &
    pid=$!
    for _ in $(seq 200); do [ -n "$(ls -A tmp)" ] && break; sleep 0.05; done
    kill -"$sig" "$pid"
    wait_exit "$pid" 20
    check "export of two, SIG$sig: it died of the signal" "$RC" "$((128 + $(kill -l "$sig")))"
    check "export of two, SIG$sig: no private copy left" "$(ls -A tmp)" ""
done
exec 3>&-

finish
