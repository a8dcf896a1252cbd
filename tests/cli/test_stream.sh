#!/usr/bin/env bash
# Streaming to Sentinel while recording (SENTINEL_API_TOKEN set), against the local SigV4 S3
# (tests/s3/with-s3.sh) and the mock API (tests/helpers/sentinel_mock.py): batches during the
# run, the finish with the job's exit code, the API down at start, kill -9 mid-stream and
# `rtrack upload` completing the run, a hung API bounded at exit, no network at all without the
# token, and a GPU run registered with its GPUs.
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${S3_ENDPOINT:-}" ]; then
    exec bash "$HERE/../s3/with-s3.sh" bash "$0" "$@"
fi
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"

TOKEN=tok-$RANDOM-stream-secret
export MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$S3_TEST_SECRET
: >"$T/api.log"
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
mock=$!
trap 'kill $mock 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
API=http://127.0.0.1:$(head -n 1 mock.port)
export RTRACK_S3_ENDPOINT=$S3_ENDPOINT RTRACK_UPLOAD_INLINE_MAX=0
export RTRACK_CLOUD_DISCOVERY=0 # covered by test_upload.sh and unit_cloud
PREFIX=sentinel/org-test

s3get() {
    curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_TEST_KEY:$S3_TEST_SECRET" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$S3_BUCKET/$1"
}
requests() { mock_requests "$T/api.log" "$1"; } # PATH-REGEX
last_finish() { # the newest finish body
    python3 -c 'import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1]) if re.fullmatch("/runs/[^/]+/finish", json.loads(l)["path"])]
print(r[-1]["body"])' "$T/api.log"
}
union_equals_export() { # DB REMOTE-RUN: the uploaded batches, in order, are the exported rows
    local n i
    n=$(q "$1" "SELECT count(*) FROM upload_batches")
    : >union.csv
    for ((i = 0; i < n; i++)); do
        s3get "$PREFIX/$2/$(printf %06d $i).csv.gz" | gunzip -c | tail -n +2 >>union.csv
    done
    "$RTRACK" export --db "$1" | tail -n +2 | diff - union.csv >/dev/null
}

# --- no token: no network connection at all -------------------------------------------------------
if command -v strace >/dev/null; then
    SENTINEL_API_TOKEN= SENTINEL_API_URL=$API strace -f -qq -e trace=connect -o trace.txt \
        "$RTRACK" run --quiet --db none.db -- sleep 0.2
    check "no token: no inet connection (strace)" "$(grep -c 'AF_INET' trace.txt)" 0
else
    skip "no token: strace not installed"
fi
check "no token: nothing registered" "$(q none.db "SELECT count(*) FROM uploads")" 0

# --- streaming during the run (credentials that expire within 300 s: refreshed before each batch)
echo '{"ttl": 60}' >"$T/api.log.ctl"
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" run --quiet --db st.db --interval 0.1 \
    --upload-interval 1 -- sh -c 'sleep 3.2; exit 3' 2>st.err
check "stream: the job's exit code" "$?" 3
check "stream: no warning" "$(wc -l <st.err)" 0
echo '{}' >"$T/api.log.ctl"
check "stream: registered once" "$(requests /runs)" 1
check "stream: short-lived credentials refreshed before the batches" \
    "$(requests '/runs/run-1/refresh-credentials' | awk -v b="$(q st.db "SELECT count(*) FROM upload_batches")" '{ print ($1 >= b) }')" 1
# (3.2 s at a 1 s upload interval: 3 or 4; 2 when a slow machine or a sanitizer build delays
# the registration by a second)
check_range "stream: batches during the run and at the end" "$(q st.db "SELECT count(*) FROM upload_batches")" 2 6
check "stream: finished as failed with exit code 3, every batch" "$(last_finish | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())
print(b["run_status"], b["exit_code"], b["data_source"], len(b["data_uris"]))')" \
    "failed 3 s3 $(q st.db "SELECT count(*) FROM upload_batches")"
check "stream: finished in the database" "$(q st.db "SELECT finished_at IS NOT NULL FROM uploads")" 1
check_cmd "stream: the batches are exactly the exported rows" union_equals_export st.db run-1
check "stream: the first batch went out while the job ran" \
    "$(q st.db "SELECT (SELECT min(uploaded_at) FROM upload_batches) < ended_at FROM runs")" 1
check "stream: the token is nowhere in the database" "$(cat st.db* | grep -c -a "$TOKEN")" 0

# --- the API down at start: recording goes on; rtrack upload sends it later ---------------------------
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=http://127.0.0.1:1 "$RTRACK" run --quiet --db down.db \
    --interval 0.1 --upload-interval 1 -- sleep 1.5 2>down.err
check "api down: the job's exit code" "$?" 0
check "api down: one warning for the streak" "$(grep -c 'streaming paused' down.err)" 1
check "api down: samples recorded" "$(q down.db "SELECT count(*) > 10 FROM samples")" 1
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" upload --db down.db 2>up.err
check "api down: rtrack upload later: exit 0" "$?" 0
check_cmd "api down: then every row is on S3" union_equals_export down.db run-2

# --- kill -9 of the recorder mid-stream; rtrack upload completes the run ------------------------------
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" record --quiet --db k9.db --interval 0.1 \
    --upload-interval 1 2>k9.err &
rec=$!
for _ in $(seq 60); do
    [ "$(q k9.db "SELECT count(*) FROM upload_batches" 2>/dev/null)" -ge 1 ] 2>/dev/null && break
    sleep 0.1
done
sleep 0.3
kill -9 $rec
wait $rec 2>/dev/null
sent=$(q k9.db "SELECT count(*) FROM upload_batches")
check_range "kill -9: batches sent before the kill" "$sent" 1 10
check "kill -9: not finished" "$(q k9.db "SELECT finished_at IS NULL FROM uploads")" 1
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" upload --db k9.db 2>k9up.err
check "kill -9: rtrack upload right away refuses a run that may still be recording" "$?,$(grep -c 'still being recorded' k9up.err)" "0,1"
sleep 2.5
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" upload --db k9.db 2>k9up.err
check "kill -9: later, rtrack upload finishes the abandoned run" "$?" 0
check "kill -9: registered once, no batch sent twice" \
    "$(requests /runs),$(q k9.db "SELECT count(*) = count(DISTINCT first_seq) FROM upload_batches")" "3,1"
check_cmd "kill -9: the union of the batches is the exported run" union_equals_export k9.db run-3
check "kill -9: finished as failed (the recorder died)" \
    "$(last_finish | python3 -c 'import json, sys; print(json.loads(sys.stdin.read())["run_status"])')" failed

# --- a hung API at the end: the exit is bounded ------------------------------------------------------
echo '{"faults": {"finish": {"count": 1, "sleep": 20}}}' >"$T/api.log.ctl.tmp"
mv "$T/api.log.ctl.tmp" "$T/api.log.ctl"
start=$(date +%s.%N)
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_UPLOAD_WAIT=2 "$RTRACK" run --quiet \
    --db hung.db --interval 0.1 -- sleep 0.5 2>hung.err
rc=$?
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
check "hung api: the job's exit code" "$rc" 0
check_range "hung api: rtrack ends within the wait (2 s) and the job" "$wall" 0.5 5
check "hung api: says the upload is left for rtrack upload" "$(grep -c "did not end within 2 s" hung.err)" 1
echo '{}' >"$T/api.log.ctl"

# --- a GPU run is registered with its GPUs ------------------------------------------------------------
# the registration waits until the recorder has committed the GPUs' facts (a driver whose init
# takes 1.5 s, then the first sample that reads them), as the Rust reference registers after
# reading them; before, it went at once and Sentinel got host_gpu_count null
last_register() { # KEY: that key of the newest POST /runs body
    python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["path"] == "/runs"]
print(json.loads(r[-1]["body"]).get(sys.argv[2]))' "$T/api.log" "$1"
}
if [ -n "${RT_FAKE_NVML:-}" ]; then
    start=$(date +%s.%N)
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_NVML_LIBRARY=$RT_FAKE_NVML \
        FAKE_NVML_GPUS=2 FAKE_NVML_INIT_MS=1500 "$RTRACK" run --quiet --db gpu.db --interval 0.2 \
        --upload-interval 1 -- sleep 2.5 2>gpu.err
    check "gpu: the job's exit code" "$?" 0
    check "gpu: registered with its GPUs: count, model, memory (as the database has them)" \
        "$(last_register host_gpu_count)|$(last_register host_gpu_model)|$(last_register host_gpu_memory_mib)" \
        "$(q gpu.db "SELECT host_gpu_count, host_gpu_model, host_gpu_memory_mib FROM host_gpus")"
    check "gpu: the database has the 2 GPUs" "$(q gpu.db "SELECT host_gpu_count FROM host_gpus")" 2
    check "gpu: finished" "$(q gpu.db "SELECT finished_at IS NOT NULL FROM uploads")" 1
    # a job that ends before the driver answers: registered at its end, without GPUs, in time
    start=$(date +%s.%N)
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_NVML_LIBRARY=$RT_FAKE_NVML \
        FAKE_NVML_GPUS=2 FAKE_NVML_INIT_MS=3000 "$RTRACK" run --quiet --db gpu2.db --interval 0.2 \
        -- sleep 0.3 2>gpu2.err
    rc=$?
    wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
    check "gpu, short job: the job's exit code" "$rc" 0
    check_range "gpu, short job: not held up by the wait for the GPUs (s)" "$wall" 0.3 6
    check "gpu, short job: registered and finished" \
        "$(q gpu2.db "SELECT remote_run_id IS NOT NULL, finished_at IS NOT NULL FROM uploads")" "1|1"
else
    skip "RT_FAKE_NVML not set: no GPU run to stream"
fi

finish
