#!/usr/bin/env bash
# Secrets: streaming sessions (`rtrack run` with SENTINEL_API_TOKEN) and `rtrack upload` against
# the mock Sentinel API and the local SigV4 S3 (tests/s3/with-s3.sh), with a recognisable random
# API token, S3 access key, secret key and session token, through a proxy that records every
# request to S3 (so the SigV4 signatures rtrack sent are known too). Success and the failure
# paths: a 403 from the API whose answer quotes the token, a 500 on finish whose answer quotes
# the S3 credentials, a wrong S3 secret (S3 rejects the signature), refused connections. Then
# every file the sessions left (databases, -wal/-shm snapshots taken while recording, live
# output, stdout, stderr) is searched for each secret and signature: zero hits.
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${S3_ENDPOINT:-}" ]; then
    rnd=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
    export S3_TEST_KEY=AKIDSECRET${rnd^^} S3_TEST_SECRET=SECRETS3KEY-$rnd
    exec bash "$HERE/../s3/with-s3.sh" bash "$0" "$@"
fi
MOCK=$HERE/../helpers/sentinel_mock.py
FAULTS=$HERE/../helpers/net_faults.py
. "$HERE/lib.sh" "$1"

rnd=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
TOKEN=SECRETTOKEN-$rnd
SESSION=SECRETSESSION-$rnd
WRONG=SECRETWRONGS3-$rnd
mkdir run logs
# the servers' own logs hold the secrets by design: kept in logs/, which is not searched
start_mock() { # NAME S3-SECRET : a mock API; prints its URL
    MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$2 MOCK_S3_TOKEN=$SESSION \
        python3 "$MOCK" "$T/logs/$1.log" "$TOKEN" >"logs/$1.port" &
    echo "$!" >"logs/$1.pid"
    for _ in $(seq 100); do [ -s "logs/$1.port" ] && break; sleep 0.05; done
    echo "http://127.0.0.1:$(head -n 1 "logs/$1.port")"
}
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$T"' EXIT
API_good=$(start_mock good "$S3_TEST_SECRET")
PIDS+=("$(cat logs/good.pid)")
API_wrong=$(start_mock wrong "$WRONG")
PIDS+=("$(cat logs/wrong.pid)")
python3 "$FAULTS" proxy logs/proxy.port "${S3_ENDPOINT#http://}" "$T/logs/s3-requests.bin" &
PIDS+=($!)
for _ in $(seq 100); do [ -s logs/proxy.port ] && break; sleep 0.05; done
RTRACK_S3_ENDPOINT=http://127.0.0.1:$(cat logs/proxy.port)
export RTRACK_S3_ENDPOINT
export RTRACK_CLOUD_DISCOVERY=0 RTRACK_UPLOAD_INLINE_MAX=0 RTRACK_HTTP_TIMEOUT_S=5 RTRACK_UPLOAD_WAIT=8
ctl() { mock_ctl "$T/logs/$1.log" "$2"; } # NAME JSON: the mock NAME's control file
cd run || exit 1
# JOB DB : a job that copies the database, its -wal and -shm while rtrack records (and streams)
job() { echo "sleep 2.3; cat $1 $1-wal $1-shm >$1.while-recording 2>/dev/null; exit 3"; }

# --- 1. a streamed run that succeeds, with live output to a file and to stdout --------------------
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API_good "$RTRACK" run --db ok.db --interval 0.1 \
    --upload-interval 1 --output ok.live.jsonl -- sh -c "$(job ok.db)" >ok.out 2>ok.err
check "success: the job's exit code" "$?" 3
check "success: batches on S3, run finished" \
    "$(q ok.db "SELECT count(*) > 1 FROM upload_batches"):$(q ok.db "SELECT finished_at IS NOT NULL FROM uploads")" "1:1"
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API_good "$RTRACK" run --db ok2.db --interval 0.1 \
    --upload-interval 1 --output - --format csv -- sh -c "$(job ok2.db)" >ok2.out 2>ok2.err
check "success, live CSV on stdout: the job's exit code" "$?" 3
check "success, live CSV on stdout: the samples are there" "$(grep -c '^[0-9]' ok2.out | awk '{ print ($1 > 5) }')" 1
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API_good "$RTRACK" upload --db ok.db >ok-again.out 2>ok-again.err
check "success: upload again: nothing to do, exit 0" "$?" 0

# stream_then_upload NAME API: a streaming run into NAME.db (its job exits 3), then `rtrack
# upload` of it; their output in NAME.out/.err and NAME-up.out/.err (scanned for secrets at the
# end), their exit codes in run_rc and up_rc
stream_then_upload() {
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$2 "$RTRACK" run --db "$1.db" --interval 0.1 \
        --upload-interval 1 -- sh -c "$(job "$1.db")" >"$1.out" 2>"$1.err"
    run_rc=$?
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$2 "$RTRACK" upload --db "$1.db" >"$1-up.out" 2>"$1-up.err"
    up_rc=$?
}

# --- 2. the API refuses with 403, its answer quoting the token --------------------------------------
ctl good "{\"faults\": {\"any\": {\"count\": -1, \"status\": 403, \"body\": {\"detail\": \"token $TOKEN is not valid here\"}}}}"
stream_then_upload f403 "$API_good"
check "403: the job's exit code" "$run_rc" 3
check "403: the warning says the API answered 403" "$(grep -c 'sentinel answered HTTP 403' f403.err | awk '{ print ($1 >= 1) }')" 1
check "403: rtrack upload exits 1 with the status" "$up_rc:$(grep -c 'sentinel answered HTTP 403' f403-up.err)" "1:1"
ctl good '{}'

# --- 3. the finish fails with 500, its answer quoting the S3 credentials it handed out --------------
ctl good "{\"faults\": {\"finish\": {\"count\": -1, \"status\": 500, \"body\": {\"detail\": \"no: $S3_TEST_KEY $S3_TEST_SECRET $SESSION\"}}}}"
stream_then_upload f500 "$API_good"
check "500 on finish: the job's exit code" "$run_rc" 3
check "500 on finish: the warning says so" "$(grep -c 'sentinel answered HTTP 500' f500.err)" 1
check "500 on finish: rtrack upload exits 1 with the status" "$up_rc:$(grep -c 'sentinel answered HTTP 500' f500-up.err)" "1:1"
ctl good '{}'

# --- 4. a wrong S3 secret: S3 rejects the signature -----------------------------------------------
stream_then_upload sig "$API_wrong"
check "bad signature: the job's exit code" "$run_rc" 3
check "bad signature: the warning names S3's error" "$(grep -c 'SignatureDoesNotMatch' sig.err | awk '{ print ($1 >= 1) }')" 1
check "bad signature: rtrack upload exits 1 naming S3's error" "$up_rc:$(grep -c 's3 answered HTTP 403 (SignatureDoesNotMatch)' sig-up.err)" "1:1"

# --- 5. refused connections: the API, then S3 -------------------------------------------------------
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=http://127.0.0.1:1 "$RTRACK" run --db refused.db \
    --interval 0.1 --upload-interval 1 -- sh -c "$(job refused.db)" >refused.out 2>refused.err
check "refused api: the job's exit code" "$?" 3
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API_good RTRACK_S3_ENDPOINT=http://127.0.0.1:1 \
    "$RTRACK" upload --db refused.db >refused-up.out 2>refused-up.err
check "refused s3: rtrack upload exits 1 saying it cannot reach s3" "$?:$(grep -c 'cannot reach s3 endpoint http://127.0.0.1:1' refused-up.err)" "1:1"

# --- afterwards every run goes through with working servers -------------------------------------------
for db in f403 f500 sig refused; do
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API_good "$RTRACK" upload --db $db.db >$db-final.out 2>$db-final.err
    check "$db: a later rtrack upload sends it: exit 0, finished" \
        "$?:$(q $db.db "SELECT finished_at IS NOT NULL FROM uploads ORDER BY rowid DESC LIMIT 1")" "0:1"
done

# --- the search --------------------------------------------------------------------------------------
# every SigV4 signature rtrack sent to S3 (through the proxy), good and bad
grep -aoE 'Signature=[0-9a-f]{64}' "$T/logs/s3-requests.bin" | cut -d= -f2 | sort -u >"$T/logs/signatures"
nsig=$(wc -l <"$T/logs/signatures")
check_range "the proxy saw signed S3 requests" "$nsig" 5 100000
check "the proxy saw the session token sent to S3" "$(grep -ac "x-amz-security-token: $SESSION" "$T/logs/s3-requests.bin" | awk '{ print ($1 > 0) }')" 1
check "the mock saw the token as the bearer token" "$(grep -c "Bearer $TOKEN" "$T/logs/good.log" | awk '{ print ($1 > 0) }')" 1
nfiles=$(find . -type f | wc -l)
check_range "files searched (databases, snapshots while recording, live output, stdout, stderr)" "$nfiles" 40 1000
check "snapshots of -wal and -shm taken while recording" "$(ls ./*.while-recording | wc -l)" 6
# search NAME STRING : no file holds STRING; prints the hits
search() {
    local hits
    hits=$(grep -rlaF -- "$2" . | tr '\n' ' ')
    check "no $1 in any file${hits:+ (found in: $hits)}" "${hits:-none}" none
}
search "API token" "$TOKEN"
search "S3 access key" "$S3_TEST_KEY"
search "S3 secret key" "$S3_TEST_SECRET"
search "wrong S3 secret key" "$WRONG"
search "S3 session token" "$SESSION"
sighits=0
while read -r sig; do
    n=$(grep -rlaF -- "$sig" . | wc -l)
    sighits=$((sighits + n))
done <"$T/logs/signatures"
check "no SigV4 signature ($nsig sent) in any file" "$sighits" 0
# and in the database text itself, column by column (a file search would miss nothing, but this
# says where): the secrets never enter a table
dbhits=0
for db in ./*.db; do
    for s in "$TOKEN" "$S3_TEST_KEY" "$S3_TEST_SECRET" "$SESSION" "$WRONG"; do
        n=$(sqlite3 "$db" .dump | grep -cF -- "$s")
        dbhits=$((dbhits + n))
    done
done
check "no secret in any database dump" "$dbhits" 0
echo "secrets: searched $nfiles files for 5 secrets and $nsig signatures: $((sighits + dbhits)) hits"
finish
