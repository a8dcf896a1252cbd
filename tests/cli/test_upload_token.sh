#!/usr/bin/env bash
# The Sentinel token, and the S3 credentials Sentinel hands out, only where they must go:
# - a plain http:// API URL that is not the loopback interface is refused before anything is
#   sent (`rtrack upload`: exit 2; streaming: a warning, the job untouched), with a listener on
#   this machine's own non-loopback address proving that no connection was made; http:// to
#   localhost and 127.0.0.1 still works;
# - a run_id or upload_uri_prefix that carries the token (whole or its beginning) is not used:
#   it would be stored, printed in the summary line and put in S3 keys;
# - an S3 error code that is the access key or the beginning of the session token (a server
#   echoing what it got) is not printed, by `rtrack upload` nor in streaming warnings;
# - an API error answer quoting the token's beginning is not quoted.
# The mock API (tests/helpers/sentinel_mock.py) and a one-answer S3 stub; no real S3 needed.
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"

rnd=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
TOKEN=TOKENSECRET${rnd}abcdefgh
S3KEY=AKIDSECRET${rnd^^}
S3SESSION=SESSIONSECRET${rnd}zzzzzzzzzz
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$T"' EXIT
mkdir logs run
MOCK_S3_KEY=$S3KEY MOCK_S3_SECRET=SECRETKEY$rnd MOCK_S3_TOKEN=$S3SESSION \
    python3 "$MOCK" "$T/logs/api.log" "$TOKEN" >logs/mock.port &
PIDS+=($!)
for _ in $(seq 100); do [ -s logs/mock.port ] && break; sleep 0.05; done
PORT=$(head -n 1 logs/mock.port)
API=http://127.0.0.1:$PORT
ctl() { mock_ctl "$T/logs/api.log" "$1"; }

# S3 that answers every request 403 with CODE as S3's error code (S3 echoes what it was sent);
# its URL in S3 (run in this shell, not in $(...): its pid is kept, its stdout not waited for)
s3stub() { # PORTFILE CODE
    python3 - "$1" "$2" >/dev/null <<'EOF' &
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # answers Expect: 100-continue at once
    def log_message(self, *a): pass
    def do_PUT(self):
        n = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(n)
        body = ("<Error><Code>%s</Code><Message>no</Message></Error>" % sys.argv[2]).encode()
        self.send_response(403)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
    do_HEAD = do_PUT
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.replace(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
EOF
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$1" ] && break; sleep 0.05; done
    S3=http://127.0.0.1:$(cat "$1")
}
cd run || exit 1
export SENTINEL_API_TOKEN=$TOKEN RTRACK_CLOUD_DISCOVERY=0 \
    RTRACK_HTTP_TIMEOUT_S=3 RTRACK_UPLOAD_WAIT=6
record() { SENTINEL_API_TOKEN= "$RTRACK" run --quiet --db "$1" --interval 0.05 -- sleep 0.5; }

# --- plain http to another machine: refused, nothing sent -----------------------------------------
addr=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
if [ -n "$addr" ]; then
    # a listener on this machine's own address: what a server elsewhere would get
    python3 -c '
import os, socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(8)
open(sys.argv[2] + ".tmp", "w").write(str(s.getsockname()[1])); os.replace(sys.argv[2] + ".tmp", sys.argv[2])
while True:
    c, _ = s.accept()
    open(sys.argv[3], "a").write("connection\n")
    c.close()' "$addr" ../logs/plain.port ../logs/plain.log >/dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s ../logs/plain.port ] && break; sleep 0.05; done
    PLAIN=http://$addr:$(cat ../logs/plain.port)
    : >../logs/plain.log
    record plain.db
    SENTINEL_API_URL=$PLAIN/api "$RTRACK" upload --db plain.db >plain.out 2>plain.err
    check "plain http to $addr: exit 2" "$?" 2
    check "plain http: says why, and what is allowed" "$(cat plain.err)" \
        "rtrack: upload: cannot use sentinel api '$PLAIN/api': plain http would send the api token unencrypted; use https:// (plain http only to 127.0.0.0/8, ::1 or localhost)"
    SENTINEL_API_URL="http://user:pw@$addr:$(cat ../logs/plain.port)" "$RTRACK" upload --db plain.db >plain2.out 2>plain2.err
    check "plain http with user:password@: exit 2, the password not shown" "$?,$(grep -c 'pw' plain2.err)" "2,0"
    SENTINEL_API_URL=$PLAIN "$RTRACK" run --quiet --db plain-st.db --interval 0.1 --upload-interval 1 \
        -- sh -c 'sleep 1; exit 4' 2>plain-st.err
    check "plain http, streaming: the job's exit code" "$?" 4
    check "plain http, streaming: one warning, saying why, before the job's end" \
        "$(grep -c "^rtrack: warning: sentinel: not streaming: cannot use sentinel api '$PLAIN': plain http would send the api token unencrypted; use https:// (plain http only to 127.0.0.0/8, ::1 or localhost); recording goes on$" plain-st.err),$(grep -c warning plain-st.err)" 1,1
    check "plain http: no connection was made" "$(wc -l <../logs/plain.log)" 0
else
    skip "plain http to another machine: this machine has no non-loopback IPv4 address"
fi
# the loopback interface is this machine: allowed
record lo.db
SENTINEL_API_URL=http://localhost:$PORT "$RTRACK" upload --db lo.db >lo.out 2>lo.err
check "http://localhost: allowed" "$?,$(q lo.db "SELECT finished_at IS NOT NULL FROM uploads")" "0,1"

# --- the token in Sentinel's run_id or upload_uri_prefix ---------------------------------------------
n=0
for what in run_id:"\"$TOKEN\"" run_id:"\"${TOKEN:0:12}-x\"" org:"\"$TOKEN\""; do
    key=${what%%:*} n=$((n + 1))
    field=$([ "$key" = org ] && echo upload_uri_prefix || echo run_id)
    record "id$n.db"
    ctl "{\"$key\": ${what#*:}}"
    SENTINEL_API_URL=$API "$RTRACK" upload --db "id$n.db" >"id$n.out" 2>"id$n.err"
    rc=$?
    ctl '{}'
    check "a secret in the $field ($n): not used, exit 1, in doubt" \
        "$rc,$(grep -c "sentinel's answer to POST /runs carries the api token or an s3 credential in its $field; not used; sentinel may have registered the run all the same" "id$n.err")" "1,1"
    check "a secret in the $field ($n): not stored" "$(q "id$n.db" "SELECT count(*) FROM uploads WHERE remote_run_id IS NOT NULL")" 0
done

# --- S3 error codes that are a credential ------------------------------------------------------------
for echo in "$S3KEY" "${S3SESSION:0:20}"; do
    s3stub "../logs/s3-$echo.port" "$echo"
    record "s3-$echo.db"
    SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$S3 RTRACK_UPLOAD_INLINE_MAX=0 \
        "$RTRACK" upload --db "s3-$echo.db" >"s3-$echo.out" 2>"s3-$echo.err"
    check "s3 error code echoing a credential: exit 1, the status said, the code not" \
        "$?,$(grep -c "^rtrack: upload: run 1: s3 answered HTTP 403 for s3://" "s3-$echo.err")" "1,1"
done
# while streaming (an object's three tries take 4 s: the end waits long enough to see them)
SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=$S3 RTRACK_UPLOAD_INLINE_MAX=0 RTRACK_UPLOAD_WAIT=12 \
    "$RTRACK" run --quiet --db s3st.db --interval 0.1 --upload-interval 1 -- sh -c 'sleep 1.5; exit 2' \
    2>s3st.err
check "s3 error code echoing a credential, streaming: the job's code, S3's status in the warnings" \
    "$?,$(grep -c 's3 answered HTTP 403 for s3://' s3st.err)" "2,2"

# --- an API error answer quoting the token's beginning -------------------------------------------------
record f500.db
ctl "{\"faults\": {\"any\": {\"count\": -1, \"status\": 500, \"body\": \"bad token ${TOKEN:0:10}\"}}}"
SENTINEL_API_URL=$API "$RTRACK" upload --db f500.db >f500.out 2>f500.err
check "an answer quoting the token's beginning: exit 1, the status said" \
    "$?,$(grep -c 'sentinel answered HTTP 500 for POST /runs' f500.err)" "1,1"
ctl '{}'

# --- the search: every file rtrack left, every stretch of 8 bytes of each secret -----------------------
hits=""
for s in "$TOKEN" "$S3KEY" "$S3SESSION"; do
    for ((i = 0; i + 8 <= ${#s}; i += 4)); do
        h=$(grep -rlaF -- "${s:$i:8}" . | tr '\n' ' ')
        [ -n "$h" ] && hits="$hits ${s:$i:8}@[$h]"
    done
done
check "no 8 bytes of the token or an S3 credential in any database, output or error${hits:+ (found:$hits)}" "${hits:-none}" none
finish
