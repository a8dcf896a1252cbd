#!/usr/bin/env bash
# One run, one registration in Sentinel. Against the mock API (tests/helpers/sentinel_mock.py,
# which logs every request and every run it makes, and can answer after the client gave up or
# lose its answer) and the local SigV4 S3 (tests/s3/with-s3.sh):
# - two `rtrack upload --all` at once register each run once (the second leaves a run the
#   first holds: one uploader per run, a claim in the database);
# - a POST /runs whose answer was lost (dropped, or late past the client's time limit, or its
#   sender killed) is never posted again by itself: the registration is in doubt, `rtrack
#   upload` says so and how to clear it, and clearing it posts once more with the same
#   Idempotency-Key (the run's UUID), which an API that honours it answers with the same run;
# - a slow API while streaming gets one POST /runs, not one per upload interval;
# - a claim held by a live process is respected, one whose holder died or ran out is taken over;
# - a refused POST (HTTP 500) leaves no doubt: the next upload registers the run.
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${S3_ENDPOINT:-}" ]; then
    exec bash "$HERE/../s3/with-s3.sh" bash "$0" "$@"
fi
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"

TOKEN=tok-$RANDOM-once-token
MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$S3_TEST_SECRET python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
mock=$!
BG=()
trap 'kill $mock "${BG[@]}" 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
export SENTINEL_API_URL=http://127.0.0.1:$(head -n 1 mock.port) SENTINEL_API_TOKEN=$TOKEN
export RTRACK_S3_ENDPOINT=$S3_ENDPOINT RTRACK_CLOUD_DISCOVERY=0 RTRACK_UPLOAD_INLINE_MAX=0
export RTRACK_UPLOAD_BATCH_ROWS=8 RTRACK_HTTP_TIMEOUT_S=10
: >"$T/api.log"
: >"$T/api.log.runs"

ctl() { mock_ctl "$T/api.log" "$1"; }
posts() { grep -c '"path": "/runs"' "$T/api.log"; } # POST /runs the mock was sent
made() { wc -l <"$T/api.log.runs" | tr -d ' '; }     # runs the mock made
finishes() { grep -c '"path": "/runs/[^"]*/finish"' "$T/api.log"; }
record() { SENTINEL_API_TOKEN= "$RTRACK" run --quiet --db "$1" --interval 0.05 -- sleep 0.6; }
wait_posts() { # N: until the mock has seen N POST /runs (at most 10 s)
    for _ in $(seq 200); do [ "$(posts)" -ge "$1" ] && return 0; sleep 0.05; done
    return 1
}

# --- two `rtrack upload --all` at once --------------------------------------------------------------
for _ in 1 2 3; do record c.db; done
# a slow POST /runs (2 s, inside the client's limit): the first uploader holds run 1 while the
# second arrives
ctl '{"faults": {"start": {"count": -1, "sleep": 2}}}'
"$RTRACK" upload --db c.db --all >a.out 2>a.err &
a=$!
BG+=($a)
wait_posts 1 || fail "the first upload did not post"
"$RTRACK" upload --db c.db --all >b.out 2>b.err &
b=$!
BG+=($b)
wait $a
rc_a=$?
wait $b
rc_b=$?
ctl '{}'
sed 's/^/    a: /' a.err
sed 's/^/    b: /' b.err
check "two at once: both exit 0" "$rc_a,$rc_b" "0,0"
check "two at once: one POST /runs per run, one run made per run" "$(posts),$(made)" "3,3"
check "two at once: one finish per run" "$(finishes)" 3
check "two at once: no database error" "$(cat a.err b.err | grep -c 'UNIQUE\|cannot use the database')" 0
check "two at once: the second left the run the first was registering, saying who has it" \
    "$(grep -c "run 1 skipped: another rtrack (pid $a on $(uname -n)) is uploading it; it is not sent twice" b.err)" 1
check "two at once: every run registered once and finished, no claim left" \
    "$(q c.db "SELECT count(*), count(DISTINCT remote_run_id), sum(finished_at IS NOT NULL), count(owner_pid) FROM uploads")" \
    "3|3|3|0"
check "two at once: no object uploaded twice" \
    "$(q c.db "SELECT count(*) = count(DISTINCT run_id || '/' || first_seq) FROM upload_batches")" 1

# --- the answer to POST /runs is lost: never posted again blindly -----------------------------------
record lost.db
n0=$(posts)
ctl '{"faults": {"start": {"lose": true}}}'
"$RTRACK" upload --db lost.db >out 2>err
rc=$?
sed 's/^/    /' err
check "lost answer: exit 1" "$rc" 1
check "lost answer: the mock made the run, rtrack does not know its id" \
    "$(($(posts) - n0)),$(made),$(q lost.db "SELECT remote_run_id IS NULL FROM uploads")" "1,4,1"
check "lost answer: says what happened and that it is not registered again" \
    "$(grep -c "^rtrack: upload: run 1: sentinel api $SENTINEL_API_URL gave no complete answer to POST /runs: .*; sentinel may have registered the run all the same: it is not registered again by itself; if sentinel has no such run, clear the doubt with sqlite3 lost.db 'DELETE FROM uploads WHERE run_id = 1 AND remote_run_id IS NULL' and upload again$" err):$(wc -l <err)" "1:1"
check "lost answer: the doubt is in the database" \
    "$(q lost.db "SELECT api_url = '$SENTINEL_API_URL', register_sent_at IS NOT NULL, register_error LIKE '%gave no complete answer%', owner_pid IS NULL FROM uploads")" "1|1|1|1"
for how in "--run 1" "--all"; do
    "$RTRACK" upload --db lost.db $how >out 2>err
    rc=$?
    check "lost answer, upload $how again: exit 1, no POST /runs" "$rc,$(($(posts) - n0))" "1,1"
    check "lost answer, upload $how again: says the registration is in doubt, and why" \
        "$(grep -c "^rtrack: upload: run 1: its registration is in doubt: POST /runs to $SENTINEL_API_URL at [0-9-]*T[0-9:]*Z got no usable answer (sentinel api $SENTINEL_API_URL gave no complete answer to POST /runs: .*), so sentinel may hold the run already; it is not registered again by itself; if sentinel has no such run, clear the doubt with sqlite3 lost.db 'DELETE FROM uploads WHERE run_id = 1 AND remote_run_id IS NULL' and upload again$" err)" 1
done
sed 's/^/    /' err
# the user clears it with the command rtrack printed; this API honours Idempotency-Key, so the
# second POST gets the run the first one made
clear_cmd=$(sed -n 's/.*clear the doubt with \(sqlite3 .*\) and upload again$/\1/p' err)
check_cmd "lost answer: the printed command clears the doubt" eval "$clear_cmd"
ctl '{"idempotency": true}'
"$RTRACK" upload --db lost.db >out 2>err
rc=$?
ctl '{}'
check "lost answer, cleared: exit 0, one more POST /runs" "$rc,$(($(posts) - n0))" "0,2"
uuid=$(q lost.db "SELECT uuid FROM runs")
check "lost answer: both POSTs carried the run's UUID as Idempotency-Key" "$(python3 -c '
import json, sys
keys = [json.loads(l)["headers"].get("idempotency-key") for l in open(sys.argv[1]) if json.loads(l)["path"] == "/runs"]
print(keys[-2:] == [sys.argv[2]] * 2)' "$T/api.log" "$uuid")" True
check "lost answer: with the key honoured, the second POST got the same run (no duplicate)" \
    "$(made),$(tail -n 1 "$T/api.log.runs"),$(q lost.db "SELECT remote_run_id, finished_at IS NOT NULL FROM uploads")" \
    "4,run-4 $uuid,run-4|1"

# --- a slow API while streaming: one POST /runs, not one per interval ----------------------------------
# the answer comes after rtrack gave up (1 s): the mock makes a run for every POST it gets
n0=$(posts)
m0=$(made)
ctl '{"faults": {"start": {"count": -1, "sleep": 1.5}}}'
RTRACK_HTTP_TIMEOUT_S=1 RTRACK_UPLOAD_WAIT=3 "$RTRACK" run --quiet --db slow.db --interval 0.1 \
    --upload-interval 1 -- sh -c 'sleep 4; exit 3' 2>slow.err
rc=$?
sleep 1.6 # the mock's last answer, written to nobody
ctl '{}'
sed 's/^/    /' slow.err
check "slow api, streaming: the job's exit code" "$rc" 3
check "slow api, streaming: one POST /runs in 4 s of 1 s intervals" "$(($(posts) - n0)),$(($(made) - m0))" "1,1"
check "slow api, streaming: one warning, saying the run may be registered and streaming stopped" \
    "$(grep -c "^rtrack: warning: sentinel: streaming stopped: sentinel api $SENTINEL_API_URL did not answer POST /runs within 1 s; sentinel may have registered the run all the same: it is not registered again by itself; recording goes on, and 'rtrack upload' says how to clear the doubt$" slow.err),$(grep -c warning slow.err)" 1,1
"$RTRACK" upload --db slow.db >out 2>err
check "slow api: rtrack upload afterwards: exit 1, in doubt, no POST" \
    "$?,$(grep -c 'its registration is in doubt' err),$(($(posts) - n0))" "1,1,1"

# --- the uploader is killed while POST /runs is on its way ----------------------------------------------
record k9.db
n0=$(posts)
ctl '{"faults": {"start": {"sleep": 5}}}'
"$RTRACK" upload --db k9.db >out 2>err &
up=$!
BG+=($up)
wait_posts $((n0 + 1)) || fail "kill -9: the upload did not post"
kill -9 $up
wait $up 2>/dev/null
ctl '{}'
check "kill -9 during POST /runs: the database knows it went out, and who was sending it" \
    "$(q k9.db "SELECT remote_run_id IS NULL, register_sent_at IS NOT NULL, register_error IS NULL, owner_pid FROM uploads")" "1|1|1|$up"
"$RTRACK" upload --db k9.db >out 2>err
rc=$?
sed 's/^/    /' err
check "kill -9 during POST /runs: the next upload takes the dead one's claim, and does not post" \
    "$rc,$(($(posts) - n0)),$(grep -c 'its registration is in doubt: .*(the rtrack that sent it stopped before its answer was stored)' err)" "1,1,1"

# --- claims: a live holder is respected, a dead or lapsed one is taken over ----------------------------
record cl.db
n0=$(posts)
sleep 30 &
live=$!
BG+=($live)
sh -c 'exit 0' &
dead=$!
wait $dead
host=$(uname -n)
now=$(date +%s)
hold() { # HOST PID UNTIL: an uploads row for run 1, not registered, held so
    q cl.db "DELETE FROM uploads; INSERT INTO uploads (run_id, api_url, owner_host, owner_pid, owner_until) VALUES (1, 'x', '$1', $2, $3)"
}
hold "$host" $live $((now + 600))
"$RTRACK" upload --db cl.db >out 2>err
check "claim held by a live process: skipped with a note, exit 0, nothing sent" \
    "$?,$(grep -c "run 1 skipped: another rtrack (pid $live on $host) is uploading it" err),$(($(posts) - n0))" "0,1,0"
hold "$host" $live $((now - 1))
"$RTRACK" upload --db cl.db >out 2>err
check "claim whose time ran out: taken over, the run registered and finished" \
    "$?,$(($(posts) - n0)),$(q cl.db "SELECT remote_run_id IS NOT NULL, finished_at IS NOT NULL, owner_pid IS NULL FROM uploads")" "0,1,1|1|1"
record cl2.db
hold2() { q cl2.db "INSERT INTO uploads (run_id, api_url, owner_host, owner_pid, owner_until) VALUES (1, 'x', '$1', $2, $3)"; }
hold2 "$host" $dead $((now + 600))
"$RTRACK" upload --db cl2.db >out 2>err
check "claim of a process that is gone (this host): taken over" \
    "$?,$(($(posts) - n0)),$(q cl2.db "SELECT finished_at IS NOT NULL FROM uploads")" "0,2,1"
record cl3.db
q cl3.db "INSERT INTO uploads (run_id, api_url, owner_host, owner_pid, owner_until) VALUES (1, 'x', 'another-host.invalid', $dead, $((now + 600)))"
"$RTRACK" upload --db cl3.db >out 2>err
check "claim of a process on another host, in time: respected (it cannot be asked)" \
    "$?,$(grep -c "skipped: another rtrack (pid $dead on another-host.invalid)" err),$(($(posts) - n0))" "0,1,2"
kill $live 2>/dev/null

# --- a refused POST /runs leaves no doubt ----------------------------------------------------------------
record r500.db
n0=$(posts)
ctl '{"faults": {"start": {"status": 500}}}'
"$RTRACK" upload --db r500.db >out 2>err
check "http 500 on POST /runs: exit 1, no doubt recorded, no row left" \
    "$?,$(grep -c 'in doubt\|may have registered' err),$(q r500.db "SELECT count(*) FROM uploads")" "1,0,0"
"$RTRACK" upload --db r500.db >out 2>err
check "http 500 on POST /runs: the next upload registers the run" "$?,$(($(posts) - n0))" "0,2"
ctl '{"faults": {"start": {"status": 504}}}'
record r504.db
"$RTRACK" upload --db r504.db >out 2>err
check "http 504 (a gateway: the API behind may have done it): in doubt" \
    "$?,$(grep -c 'may have registered the run all the same' err)" "1,1"
ctl '{}'

check "the token is in no database and no output" "$(cat ./*.db* ./*.err ./*.out 2>/dev/null | grep -c -a "$TOKEN")" 0
finish
