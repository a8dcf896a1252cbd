#!/usr/bin/env bash
# A run whose recorder is gone (kill -9 of rtrack) is 'interrupted' for every reader (runs,
# summary, upload: the view run_status) once no sample came for three intervals and two
# seconds; a run still being recorded stays 'running'. The database row keeps 'running': nobody
# wrote the run's end.
. "$(dirname "$0")/lib.sh" "$1"

status_of() { # DB RUN: what `runs --format jsonl` and `summary --format json` say
    printf '%s,%s,%s' \
        "$("$RTRACK" runs --db "$1" --format jsonl | python3 -c 'import json, sys; print([json.loads(l)["status"] for l in sys.stdin][int(sys.argv[1]) - 1])' "$2")" \
        "$("$RTRACK" summary --db "$1" --run "$2" --format json | python3 -c 'import json, sys; r = json.load(sys.stdin)["run"]; print(r["status"], r["in_progress"])')" \
        "$("$RTRACK" runs --db "$1" | awk -v id="$2" '$1 == id' | grep -o -w -e interrupted -e running -e finished | head -1)"
}

# a recording in progress (record, 0.1 s) is running while it records
"$RTRACK" record --quiet --db i.db --interval 0.1 &
rec=$!
wait_samples i.db 3 || fail "live: no samples within 10 s"
check "live: running for every reader" "$(status_of i.db 1)" "running,running True,running"
# the recorder killed: the run stays running in the database; after 3 x 0.1 + 2 s without a
# sample it is interrupted for every reader
kill -KILL $rec
wait $rec 2>/dev/null

check "killed: the row still says running" "$(q i.db "SELECT status FROM runs WHERE id = 1")" running
sleep 2.6
check "killed: interrupted for every reader after 2.3 s without a sample" "$(status_of i.db 1)" \
    "interrupted,interrupted False,interrupted"
# a second recording into the same file, in progress, is not taken for the first one's fate
n1=$(q i.db "SELECT count(*) FROM samples")
"$RTRACK" record --quiet --db i.db --interval 0.1 &
rec=$!
wait_samples i.db $((n1 + 3)) || fail "second recording: no samples within 10 s"
check "second recording: running; the first still interrupted" "$(status_of i.db 2):$(status_of i.db 1)" \
    "running,running True,running:interrupted,interrupted False,interrupted"
kill -INT $rec
wait_exit $rec 10
check "second recording: stopped with SIGINT: exit 0" "$RC" 0
check "second recording: finished" "$(status_of i.db 2)" "finished,finished False,finished"
finish
