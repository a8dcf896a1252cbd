#!/usr/bin/env bash
# Upload faults beyond test_upload.sh and test_stream.sh: a TLS endpoint whose certificate is not
# trusted (self-signed, made here with the openssl CLI), a host name that does not resolve
# (.invalid), and a server that trickles one byte a second, each for the Sentinel API and for
# S3, after the fact (`rtrack upload`: exit 1) and while streaming (`rtrack run`: the job's exit
# code). Each is bounded in time (RTRACK_HTTP_TIMEOUT_S, RTRACK_UPLOAD_WAIT), says what failed
# and where, and loses nothing: a later `rtrack upload` with working servers puts every sample
# on S3 (objects and rows counted on the S3 server's disk, their values checked against the
# database's raw counters by tests/helpers/upload_rows.py).
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${S3_ENDPOINT:-}" ]; then
    exec bash "$HERE/../s3/with-s3.sh" bash "$0" "$@"
fi
MOCK=$HERE/../helpers/sentinel_mock.py
FAULTS=$HERE/../helpers/net_faults.py
. "$HERE/lib.sh" "$1"

TOKEN=tok-$RANDOM-faults
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$T"' EXIT
wait_port() { for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.05; done; cat "$1"; }
MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$S3_TEST_SECRET python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
PIDS+=($!)
wait_port mock.port >/dev/null
API=http://127.0.0.1:$(head -n 1 mock.port)
openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 1 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
check "openssl made a self-signed certificate" "$(openssl x509 -in cert.pem -noout -subject 2>/dev/null | grep -c 127.0.0.1)" 1
python3 "$FAULTS" tls tls.port cert.pem key.pem "$T/tls.log" &
PIDS+=($!)
TLS=https://127.0.0.1:$(wait_port tls.port)
python3 "$FAULTS" trickle trickle.port "$T/trickle.log" &
PIDS+=($!)
TRICKLE=http://127.0.0.1:$(wait_port trickle.port)
: >tls.log
: >trickle.log
export SENTINEL_API_TOKEN=$TOKEN RTRACK_CLOUD_DISCOVERY=0 RTRACK_UPLOAD_INLINE_MAX=0
export RTRACK_HTTP_TIMEOUT_S=3 RTRACK_UPLOAD_BATCH_ROWS=8 RTRACK_S3_ENDPOINT=$S3_ENDPOINT
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# the runs to send: recorded without a token
# the job keeps a CPU busy a moment (a shell loop: dozens of 10 ms ticks however idle the host)
# so that the CPU columns compared below are not all zeros, then sleeps
BUSY='i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'
SENTINEL_API_TOKEN='' "$RTRACK" run --quiet --db f.db --interval 0.05 -- sh -c "$BUSY; sleep 1"
ROWS=$("$RTRACK" export --db f.db | tail -n +2 | wc -l)
check_range "a recorded run to send" "$ROWS" 10 40

# up NAME WANT-RC MAX-S MESSAGE-REGEX [ENV...] : rtrack upload with ENV; exit WANT-RC within
# MAX-S seconds, one line on stderr matching MESSAGE-REGEX
up() {
    local name=$1 want=$2 max=$3 re=$4 t0 rc
    shift 4
    t0=$(now)
    env "$@" "$RTRACK" upload --db f.db >up.out 2>up.err
    rc=$?
    local wall
    wall=$(since "$t0")
    check "$name: rtrack upload exits $want" "$rc" "$want"
    check_range "$name: bounded in time (s)" "$wall" 0 "$max"
    check "$name: one line saying what failed and where" "$(grep -cE "$re" up.err):$(wc -l <up.err)" "1:1"
    sed 's/^/    /' up.err
}

# --- the API: TLS, DNS, trickle ---------------------------------------------------------------------
up "api tls" 1 8 "^rtrack: upload: run 1: cannot reach sentinel api $TLS: .*(SSL|certificate)" \
    SENTINEL_API_URL=$TLS
check "api tls: the handshake failed, no request was sent" \
    "$(grep -c '^request' tls.log):$(grep -c 'failed' tls.log | awk '{ print ($1 > 0) }')" "0:1"
up "api dns" 1 15 "^rtrack: upload: run 1: cannot reach sentinel api https://sentinel.invalid: .*resolve" \
    SENTINEL_API_URL=https://sentinel.invalid
up "api trickle" 1 8 "^rtrack: upload: run 1: sentinel api $TRICKLE did not answer POST /runs within 3 s" \
    SENTINEL_API_URL=$TRICKLE
check "api trickle: the server had the connection" "$(grep -c connection trickle.log | awk '{ print ($1 > 0) }')" 1
check "api faults: nothing registered, the samples all there" \
    "$(q f.db "SELECT count(*) FROM uploads WHERE remote_run_id IS NOT NULL"):$("$RTRACK" export --db f.db | tail -n +2 | wc -l)" "0:$ROWS"
# the trickle's 200 never arrived whole: that API may have the run, and is not asked again (the
# working API below is another one: it registers the run)
check "api trickle: the registration there is in doubt" \
    "$(q f.db "SELECT api_url, register_sent_at IS NOT NULL, register_error LIKE '%did not answer%' FROM uploads")" "$TRICKLE|1|1"

# --- S3: TLS, DNS, trickle (the API works: the run is registered, no object gets through) -----------
# 3 tries of each object (again after 1 s and 3 s)
up "s3 tls" 1 20 "^rtrack: upload: run 1: cannot reach s3 endpoint $TLS: .*(SSL|certificate)" \
    SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$TLS
up "s3 dns" 1 40 "^rtrack: upload: run 1: cannot reach s3 endpoint http://s3.invalid:9000: .*resolve" \
    SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=http://s3.invalid:9000
: >trickle.log
up "s3 trickle" 1 25 "^rtrack: upload: run 1: s3 endpoint $TRICKLE did not answer within 3 s for s3://test-bucket/" \
    SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$TRICKLE
check "s3 trickle: tried 3 times" "$(grep -c connection trickle.log)" 3
check "s3 faults: registered once, no object recorded as sent, not finished" \
    "$(q f.db "SELECT count(*), sum(last_seq), sum(finished_at IS NULL) FROM uploads"):$(q f.db "SELECT count(*) FROM upload_batches")" "1|0|1:0"

# --- while streaming: the job's exit code, bounded, the warning says what failed -----------------------
# stream NAME DB WAIT ENV... : rtrack run streaming with ENV and RTRACK_UPLOAD_WAIT=WAIT; the
# job exits 5 after a moment's work and 1 s
stream() {
    local name=$1 db=$2 wait=$3 t0 rc wall
    shift 3
    t0=$(now)
    env RTRACK_UPLOAD_WAIT="$wait" "$@" "$RTRACK" run --quiet --db "$db" --interval 0.05 \
        --upload-interval 1 -- sh -c "$BUSY; sleep 1; exit 5" 2>"$db.err"
    rc=$?
    wall=$(since "$t0")
    check "stream $name: the job's exit code" "$rc" 5
    check_range "stream $name: bounded: the job, then at most the wait (s)" "$wall" 1 $((wait + 6))
    check "stream $name: warned, the job not affected" "$(grep -c '^rtrack: warning: sentinel: ' "$db.err" | awk '{ print ($1 >= 1) }')" 1
    sed 's/^/    /' "$db.err"
}
stream "api tls" st-tls.db 4 SENTINEL_API_URL=$TLS
check "stream api tls: the warning names TLS" "$(grep -cE "cannot reach sentinel api $TLS: .*(SSL|certificate)" st-tls.db.err | awk '{ print ($1 >= 1) }')" 1
stream "api dns" st-dns.db 4 SENTINEL_API_URL=https://sentinel.invalid
check "stream api dns: the warning says it cannot resolve" "$(grep -c "cannot reach sentinel api https://sentinel.invalid: .*resolve" st-dns.db.err | awk '{ print ($1 >= 1) }')" 1
stream "api trickle" st-trickle.db 4 SENTINEL_API_URL=$TRICKLE
check "stream api trickle: the warning says the API did not answer" "$(grep -c "sentinel api $TRICKLE did not answer POST /runs within 3 s" st-trickle.db.err | awk '{ print ($1 >= 1) }')" 1
# an object is tried 3 times (3 s each, 1 s and 3 s apart): a wait of 16 s sees the reason
stream "s3 trickle" st-s3trickle.db 16 SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$TRICKLE
check "stream s3 trickle: the warning says S3 did not answer" "$(grep -c "s3 endpoint $TRICKLE did not answer within 3 s" st-s3trickle.db.err | awk '{ print ($1 >= 1) }')" 1
stream "s3 tls" st-s3tls.db 8 SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$TLS
check "stream s3 tls: the warning names TLS" "$(grep -cE "cannot reach s3 endpoint $TLS: .*(SSL|certificate)" st-s3tls.db.err | awk '{ print ($1 >= 1) }')" 1
# a wait of 2 s ends while the streamer's thread is between its TLS tries: rtrack leaves the thread
# and must end without exit()'s handlers, which pull libcrypto from under it (OPENSSL_cleanup: a
# segmentation fault, 139 instead of the job's 5, whenever the process's exit took a moment, as
# ASan's leak check does in CI); tests/helpers/rt_slow_exit.so makes exit take 5 s more after
# those handlers, so the old code crashed every time
stream "s3 tls, thread left" st-s3left.db 2 SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$TLS \
    LD_PRELOAD="$RT_HELPERS/rt_slow_exit.so" RT_SLOW_EXIT_S=5 \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
check "stream s3 tls, thread left: the wait ran out" "$(grep -c "the upload did not end within 2 s" st-s3left.db.err)" 1

# --- nothing lost: with working servers every run goes, every sample lands on S3 once ------------------
# on_s3 DB : "objects rows" of the run's objects on the S3 server's disk
on_s3() {
    local rid dir f n=0 rows=0
    rid=$(q "$1" "SELECT remote_run_id FROM uploads")
    dir=$S3_DATA_DIR/test-bucket/sentinel/org-test/$rid
    for f in "$dir"/*.csv.gz._S3rver_object; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        rows=$((rows + $(gunzip -c "$f" | tail -n +2 | wc -l)))
    done
    echo "$n $rows"
}
for db in f.db st-tls.db st-dns.db st-trickle.db st-s3trickle.db st-s3tls.db st-s3left.db; do
    SENTINEL_API_URL=$API "$RTRACK" upload --db "$db" >final.out 2>final.err
    rc=$?
    want_rows=$("$RTRACK" export --db "$db" | tail -n +2 | wc -l)
    check "$db: a later rtrack upload: exit 0, finished" \
        "$rc:$(q "$db" "SELECT finished_at IS NOT NULL FROM uploads")" "0:1"
    check "$db: S3 holds every batch the database lists and every exported row" \
        "$(on_s3 "$db")" "$(q "$db" "SELECT count(*) || ' ' || coalesce(sum(rows), 0) FROM upload_batches")"
    check "$db: the rows on S3 are the run's $want_rows exported rows" "$(on_s3 "$db" | cut -d' ' -f2)" "$want_rows"
    # and their values are the database's raw counters (tests/helpers/upload_rows.py: its own
    # query of the tables, not the export views the objects were made from)
    dir=$S3_DATA_DIR/test-bucket/sentinel/org-test/$(q "$db" "SELECT remote_run_id FROM uploads")
    first=1
    for f in "$dir"/*.csv.gz._S3rver_object; do # 000000, 000001, ...: in order
        if [ "$first" = 1 ]; then gunzip -c "$f"; else gunzip -c "$f" | tail -n +2; fi
        first=0
    done >"$db.objects.csv"
    SQLITE=$SQLITE python3 "$HERE/../helpers/upload_rows.py" "$db" "$(q "$db" "SELECT run_id FROM uploads")" \
        "$db.objects.csv" >"$db.values"
    check "$db: the values of every row on S3 are the raw columns' (cpu, memory, disk, space, network, process, gpu, time)" \
        "$(awk '$2 != "ok"' "$db.values")" ""
    check "$db: not a comparison of zeros: cpu and memory each have rows that are not 0" \
        "$(awk '($1 == "cpu" || $1 == "memory") && $2 == "ok" && $3 > 0 { n++ } END { print n + 0 }' "$db.values")" 2
done
finish
