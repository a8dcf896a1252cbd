#!/usr/bin/env bash
# rtrack upload against real servers on 127.0.0.1: a local S3 that verifies SigV4
# (tests/s3/with-s3.sh) and a mock Sentinel API (tests/helpers/sentinel_mock.py) that checks
# the contract and records every request. Asserts the request bodies (POST /runs key by key
# against the flags given, this host's /proc and /etc, the fake GPUs and the mock cloud), that
# the uploaded objects gunzip to exactly the exported rows and that their values are the
# database's raw counters (tests/helpers/upload_rows.py), the inline route, resuming after
# failures, and that the token never reaches the database or the output.
HERE=$(cd "$(dirname "$0")" && pwd)
if [ -z "${S3_ENDPOINT:-}" ]; then
    exec bash "$HERE/../s3/with-s3.sh" bash "$0" "$@"
fi
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"

# keep: every command's stdout and stderr (out, err) gathered in all.out, keeping its status: the
# token must be in none of them, not only in the last one's
keep() {
    local rc=$?
    cat out err >>all.out 2>/dev/null
    return $rc
}
TOKEN=tok-$RANDOM-secret-token
export MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$S3_TEST_SECRET
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
mock=$!
trap 'kill $mock $imds 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
export SENTINEL_API_URL=http://127.0.0.1:$(head -n 1 mock.port)
export RTRACK_S3_ENDPOINT=$S3_ENDPOINT
# cloud discovery: this "machine" is an AWS instance (tests/helpers/imds_mock.py), no other
# vendor answers
python3 "$HERE/../helpers/imds_mock.py" aws >imds.port &
imds=$!
for _ in $(seq 100); do [ -s imds.port ] && break; sleep 0.05; done
for v in GCP AZURE HETZNER UPCLOUD VULTR ALICLOUD OVH; do export RTRACK_IMDS_$v=http://127.0.0.1:1; done
export RTRACK_IMDS_AWS=http://127.0.0.1:$(head -n 1 imds.port)
export RTRACK_UPLOAD_INLINE_MAX=0 # S3 objects even for these short runs; the tiny run below sets it
: >"$T/api.log"
PREFIX=sentinel/org-test

s3get() { # KEY: the object's bytes through a signed GET
    curl -sf --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_TEST_KEY:$S3_TEST_SECRET" \
        -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$S3_BUCKET/$1"
}
requests() { mock_requests "$T/api.log" "$1"; } # "METHOD PATH-REGEX": how many the mock saw
body() { # N: the body of the mock's N-th request matching PATH-REGEX $2 (1-based), as JSON
    python3 -c 'import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1]) if re.fullmatch(sys.argv[3], json.loads(l)["path"])]
print(r[int(sys.argv[2]) - 1]["body"])' "$T/api.log" "$1" "$2"
}

# start_body N ARGV-JSON META-JSON CLOUD-JSON GPU-JSON: "ok" when the body of the mock's N-th
# POST /runs is exactly what the test expects from what it knows itself: the metadata it passed
# (META-JSON, every key, tags as "k=v" in order), the command (ARGV-JSON) as a JSON-encoded
# string, the host as this machine's /etc/machine-id, hostname, /proc/cpuinfo (processor
# lines, the first model name) and MemTotal in MiB, host_ip, host_server_allocation and
# host_storage_gb null, the GPUs (GPU-JSON: model, count, MiB) and the cloud (CLOUD-JSON, the
# five cloud_* values); else what differs
start_body() {
    body "$1" /runs | python3 -c '
import json, os, sys
argv, meta, cloud, gpu = (json.loads(a) for a in sys.argv[1:5])
b = json.loads(sys.stdin.read())
def first(*paths):
    for p in paths:
        if os.path.exists(p):
            return open(p).read().strip()
cpuinfo = open("/proc/cpuinfo").read().splitlines()
models = [l.split(":", 1)[1].strip() for l in cpuinfo if l.startswith("model name")]
mem_kib = next(int(l.split()[1]) for l in open("/proc/meminfo") if l.startswith("MemTotal:"))
want = dict(meta)
want.update({
    "command": json.dumps(argv, separators=(",", ":"), ensure_ascii=False),
    "host_id": first("/etc/machine-id", "/var/lib/dbus/machine-id"),
    "host_hostname": first("/proc/sys/kernel/hostname"),
    "host_ip": None, "host_server_allocation": None, "host_storage_gb": None,
    "host_vcpus": sum(1 for l in cpuinfo if l.split(":")[0].strip() == "processor"),
    "host_cpu_model": models[0] if models else None,
    "host_memory_mib": mem_kib // 1024,
    "host_gpu_model": gpu[0], "host_gpu_count": gpu[1], "host_gpu_memory_mib": gpu[2],
})
for k, v in zip(["vendor_id", "account_id", "region_id", "zone_id", "instance_type"], cloud):
    want["cloud_" + k] = v
diff = ["%s: %r, want %r" % (k, b.get(k, "(absent)"), want.get(k, "(absent)"))
        for k in sorted(set(b) | set(want))
        if k not in b or k not in want or b[k] != want[k] or type(b[k]) != type(want[k])]
# the command is a string holding the argv as JSON, not the array itself
if not isinstance(b.get("command"), str) or json.loads(b["command"]) != argv:
    diff.append("command %r is not the argv %r JSON-encoded" % (b.get("command"), argv))
print("; ".join(diff) if diff else "ok")' "$2" "$3" "$4" "$5"
}
# key N: the Idempotency-Key header of the mock's N-th POST /runs
key() {
    python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1]) if json.loads(l)["path"] == "/runs"]
print(r[int(sys.argv[2]) - 1]["headers"].get("idempotency-key"))' "$T/api.log" "$1"
}
# this "machine" has two GPUs: tests/fake_nvml, whose device i is "NVIDIA Fake GPU i" with
# 80 GiB, 20+10*i % busy and (i+1) GiB used (no process of the tree on them)
FAKE_NVML=${RT_FAKE_NVML:?RT_FAKE_NVML names the fake libnvidia-ml.so.1 (ctest sets it)}
AWS_CLOUD='["aws", "123456789012", "eu-west-1", "eu-west-1b", "m5.large"]' # imds_mock.py aws
NO_CLOUD='[null, null, null, null, null]'

# --- a run of ~30 samples, with every metadata flag, tagged, with a tree; its cloud asked while
# recording -------------------------------------------------------------------------------------
JOB='i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done; sleep 1'
META='{"job_name": "upjob", "project_name": "proj-\u00e9", "stage_name": "stage 2",
       "task_name": "task-z", "team": "team-t", "env": "staging", "language": "sh",
       "orchestrator": "slurm", "executor": "local", "external_run_id": "ext-42",
       "container_image": "registry.example/img:1.2", "tags": ["team=ml", "k=v"]}'
RTRACK_NVML_LIBRARY=$FAKE_NVML FAKE_NVML_GPUS=2 "$RTRACK" run --quiet --db up.db \
    --interval 0.05 --job-name upjob --project-name "proj-é" --stage-name "stage 2" \
    --task-name task-z --team team-t --env staging --language sh --orchestrator slurm \
    --executor local --external-run-id ext-42 --container-image registry.example/img:1.2 \
    --tag team=ml --tag k=v --cloud-discovery -- sh -c "$JOB"
rows=$("$RTRACK" export --db up.db | tail -n +2 | wc -l)
check_range "run: samples to upload" "$rows" 15 60
check "run: the cloud stored with the run (--cloud-discovery)" \
    "$(q up.db "SELECT cloud_vendor_id, cloud_account_id, cloud_region_id, cloud_zone_id, cloud_instance_type FROM runs")" \
    "aws|123456789012|eu-west-1|eu-west-1b|m5.large"

# no token: nothing happens
SENTINEL_API_TOKEN= "$RTRACK" upload --db up.db >out 2>err; keep
check "no token: exit 2" "$?" 2
check "no token: says so" "$(grep -c 'SENTINEL_API_TOKEN is not set' err)" 1
check "no token: no request" "$(wc -l <"$T/api.log")" 0

# dry run: what would be sent, no network
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --dry-run >out 2>err; keep
check "dry run: exit 0" "$?" 0
check "dry run: says how many samples" "$(cat out)" "run 1: $rows samples to upload"
check "dry run: no request" "$(wc -l <"$T/api.log")" 0

# --- the upload: batches of 10 samples ----------------------------------------------------------
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_BATCH_ROWS=10 "$RTRACK" upload --db up.db >out 2>err; keep
check "upload: exit 0" "$?" 0
nb=$(( (rows + 9) / 10 ))
check "upload: one POST /runs" "$(requests 'POST /runs')" 1
check "upload: one finish" "$(requests 'POST /runs/[^/]+/finish')" 1
check "upload: the note" "$(grep -c "run 1 -> sentinel run run-1: $rows samples in $nb batches" err)" 1
check "start body: every key and value, from the flags, this host, the fake GPUs and the cloud" \
    "$(start_body 1 "$(python3 -c 'import json, sys; print(json.dumps(["sh", "-c", sys.argv[1]]))' "$JOB")" \
        "$META" "$AWS_CLOUD" '["NVIDIA Fake GPU 0", 2, 163840]')" ok
check "start body: no pid, typed as the contract's (host_vcpus an int, tags strings)" "$(body 1 /runs | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())
print("pid" in b, "run_id" in b, type(b["host_vcpus"]).__name__, type(b["host_memory_mib"]).__name__, [type(t).__name__ for t in b["tags"]])')" \
    "False False int int ['str', 'str']"
check "start: the Idempotency-Key is the run's uuid" "$(key 1)" "$(q up.db "SELECT uuid FROM runs WHERE id = 1")"
check "finish body: the S3 route with every batch in order" "$(body 1 '/runs/[^/]+/finish' | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())
print(sorted(b), b["run_status"], b["exit_code"], b["data_source"], len(b["data_uris"]), b["data_uris"][0])')" \
    "['data_source', 'data_uris', 'exit_code', 'finished_at', 'run_status'] finished 0 s3 $nb s3://$S3_BUCKET/$PREFIX/run-1/000000.csv.gz"
# the objects: gzip CSV, each with the header; together exactly the exported rows
: >got.csv
for ((i = 0; i < nb; i++)); do
    s3get "$PREFIX/run-1/$(printf %06d $i).csv.gz" >b$i.gz
    gunzip -c b$i.gz >b$i.csv || fail "object $i is not gzip"
    head -n 1 b$i.csv >>headers
    tail -n +2 b$i.csv >>got.csv
done
"$RTRACK" export --db up.db >want.csv
check "objects: every batch starts with the export's header" "$(sort -u headers)" "$(head -n 1 want.csv)"
check_cmd "objects: their rows are exactly the exported rows, in order, once" \
    diff <(tail -n +2 want.csv) got.csv
# ... and their values are the database's raw counters, by a query of the test's own
# (tests/helpers/upload_rows.py: deltas of /proc/stat ticks, sector and byte counters, meminfo,
# statvfs sums, the per-process rows), not the export views both of the above come from
{ head -n 1 b0.csv; cat got.csv; } >objects.csv
SQLITE=$SQLITE python3 "$HERE/../helpers/upload_rows.py" up.db 1 objects.csv >values
sed 's/^/    /' values
for g in cpu memory disk space network process gpu time; do
    check "objects: the $g values of every row are the raw columns'" \
        "$(awk -v g="$g" '$1 == g { $1 = ""; sub(/^ /, ""); print ($1 == "ok" ? "ok" : $0) }' values)" ok
done
# not a comparison of zeros: the job's CPU, memory, the file systems and the GPUs show in some
# rows (the network stays on lo here, and the disks may be idle: test_s3's parity rows have both)
for g in cpu memory space process gpu; do
    check_range "objects: rows with $g values that are not 0" \
        "$(awk -v g="$g" '$1 == g && $2 == "ok" { print $3 }' values)" 1 "$rows"
done
# the GPU columns as the fake's specification makes them: devices 0 and 1 are 20 % and 30 %
# busy (0.5 GPUs), use 1 GiB and 2 GiB (3072 MiB), both busy; a row whose sample has no GPU
# reading (the baseline's interval, a reading late) has 0
check "objects: the fake GPUs' numbers in every row that has GPU data, and in most rows" \
    "$(python3 -c '
import csv, sys
rows = list(csv.DictReader(open("objects.csv")))
cols = ("system_gpu_usage", "system_gpu_vram_mib", "system_gpu_utilized")
got = [tuple(float(r[c]) for c in cols) for r in rows]
gpu = sum(1 for g in got if g == (0.5, 3072.0, 2))
none = sum(1 for g in got if g == (0, 0, 0))
print(gpu + none == len(got), gpu >= len(got) / 2)')" "True True"
check "objects: Content-Type application/gzip" \
    "$(curl -sfI --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_TEST_KEY:$S3_TEST_SECRET" -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$S3_ENDPOINT/$S3_BUCKET/$PREFIX/run-1/000000.csv.gz" | tr -d '\r' | grep -i '^content-type:' | cut -d' ' -f2)" \
    "application/gzip"
check "database: progress recorded" \
    "$(q up.db "SELECT remote_run_id, finished_at IS NOT NULL, (SELECT count(*) FROM upload_batches), (SELECT sum(rows) FROM upload_batches) FROM uploads")" \
    "run-1|1|$nb|$rows"

# again: nothing to do, no request
n0=$(wc -l <"$T/api.log")
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db >out 2>err; keep
check "again: exit 0" "$?" 0
check "again: says so" "$(grep -c 'uploaded before; nothing to do' err)" 1
check "again: no request" "$(wc -l <"$T/api.log")" "$n0"

# --- a tiny run goes inline with /finish ---------------------------------------------------------
# no GPU (the fake with none: a GPU of this machine's own does not show either)
RTRACK_NVML_LIBRARY=$FAKE_NVML FAKE_NVML_GPUS=0 "$RTRACK" run --quiet --db tiny.db --interval 5 -- sleep 0.2
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_INLINE_MAX=65536 "$RTRACK" upload --db tiny.db >out 2>err; keep
check "inline: exit 0" "$?" 0
"$RTRACK" export --db tiny.db >tiny.csv
check "inline: data_csv is the exported CSV, raw" "$(body 2 '/runs/[^/]+/finish' | python3 -c '
import json, sys
b = json.loads(sys.stdin.read())
print(b["data_source"], b["data_csv"] == open("tiny.csv").read())')" "inline True"
check "inline: says so, with the CSV's size" "$(sed 's/sentinel run [^:]*:/sentinel run R:/' err)" \
    "rtrack: upload: run 1 -> sentinel run R: 1 sample, $(wc -c <tiny.csv) bytes of CSV inline with finish (no S3 object)"
# recorded without --cloud-discovery nor streaming: the cloud was not asked, and the upload
# does not ask it either (an upload measures nothing), although the metadata service answers
check "no cloud recorded: none stored" "$(q tiny.db "SELECT count(*) FROM runs WHERE cloud_vendor_id IS NULL")" 1
check "no cloud recorded: the start body's cloud_* are null, so are host_gpu_*, no metadata key" \
    "$(start_body 2 '["sleep", "0.2"]' '{}' "$NO_CLOUD" '[null, null, null]')" ok
check "no cloud recorded: the Idempotency-Key is that run's uuid" "$(key 2)" "$(q tiny.db "SELECT uuid FROM runs")"

# --- resuming: S3 unreachable after registering, then the finish failing once ---------------------
"$RTRACK" run --quiet --db res.db --interval 0.05 -- sleep 1
rrows=$("$RTRACK" export --db res.db | tail -n +2 | wc -l)
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_BATCH_ROWS=8 RTRACK_S3_ENDPOINT=http://127.0.0.1:1 \
    "$RTRACK" upload --db res.db >out 2>err; keep
check "s3 down: exit 1" "$?" 1
check "s3 down: says what failed and that it resumes" \
    "$(grep -c "cannot reach s3 endpoint http://127.0.0.1:1.*'rtrack upload' again resumes" err)" 1
check "s3 down: registered, nothing uploaded" \
    "$(q res.db "SELECT remote_run_id, last_seq, finished_at IS NULL, (SELECT count(*) FROM upload_batches) FROM uploads")" \
    "run-3|0|1|0"
echo '{"faults": {"finish": {"count": 1, "status": 500}}}' >"$T/api.log.ctl.tmp"
mv "$T/api.log.ctl.tmp" "$T/api.log.ctl"
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_BATCH_ROWS=8 "$RTRACK" upload --db res.db >out 2>err; keep
check "finish fails: exit 1" "$?" 1
check "finish fails: the API's answer" "$(grep -c 'sentinel answered HTTP 500' err)" 1
check "finish fails: resumed the registered run (refresh, no second POST /runs)" \
    "$(requests 'POST /runs'),$(requests 'POST /runs/run-3/refresh-credentials')" "3,1"
nb3=$(q res.db "SELECT count(*) FROM upload_batches WHERE run_id = 1")
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_BATCH_ROWS=8 "$RTRACK" upload --db res.db >out 2>err; keep
check "resume: exit 0" "$?" 0
check "resume: no batch uploaded twice" "$(q res.db "SELECT count(*) FROM upload_batches")" "$nb3"
check "resume: finished with every batch" "$(body 4 '/runs/[^/]+/finish' | python3 -c '
import json, sys; print(len(json.loads(sys.stdin.read())["data_uris"]))')" "$nb3"
: >res-got.csv
for ((i = 0; i < nb3; i++)); do
    s3get "$PREFIX/run-3/$(printf %06d $i).csv.gz" | gunzip -c | tail -n +2 >>res-got.csv
done
check_cmd "resume: the union of the batches is the exported run, no duplicate, no gap" \
    diff <("$RTRACK" export --db res.db | tail -n +2) res-got.csv
check "resume: $rrows rows" "$(wc -l <res-got.csv)" "$rrows"

# --- the token never leaves the environment -------------------------------------------------------
check "secret: not in any database" "$(cat up.db* tiny.db* res.db* | grep -c -a "$TOKEN")" 0
check "secret: not in any output so far" "$(grep -c "$TOKEN" all.out)" 0
check "secret: sent as the bearer token" "$(grep -c "Bearer $TOKEN" "$T/api.log" | awk '{ print ($1 > 0) }')" 1

# --- a run with nothing after its baseline (a command not found) is not registered ----------------
"$RTRACK" run --quiet --db up.db -- no-such-command-here 2>/dev/null
check "empty run: recorded as failed, 127" "$(q up.db "SELECT status, exit_code FROM runs WHERE id = 2")" "failed|127"
n_runs=$(requests 'POST /runs')
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --all --dry-run >out 2>err; keep
check "empty run: dry run says it would be skipped" "$?,$(grep -c 'run 2 skipped: it has no samples after its baseline' err),$(wc -l <out)" "0,1,0"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --all >out 2>err; keep
check "empty run: --all skips it, exit 0" "$?,$(grep -c 'run 2 skipped: it has no samples after its baseline' err)" "0,1"
check "empty run: not registered" "$(requests 'POST /runs')" "$n_runs"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --run 2 >out 2>err; keep
check "empty run: --run skips it too, exit 0" "$?,$(grep -c 'run 2 skipped' err),$(requests 'POST /runs')" "0,1,$n_runs"

# --- streamed: the cloud asked while recording, stored, and sent with the registration -------------
n_runs=$(requests 'POST /runs')
# without a GPU: a streamed run is registered before its first sample has stored the GPUs, so
# its host_gpu_* are null even on a GPU host (unlike the Rust reference's, which reads the GPUs
# first): a gap of its own, not checked here
RTRACK_NVML_LIBRARY=$FAKE_NVML FAKE_NVML_GPUS=0 SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_WAIT=20 \
    "$RTRACK" run --quiet --db st.db --interval 0.1 --job-name streamed -- sleep 0.5 >out 2>err; keep
check "streamed: exit 0, registered once" "$?,$(requests 'POST /runs')" "0,$((n_runs + 1))"
check "streamed: the cloud in the database" "$(q st.db "SELECT cloud_vendor_id, cloud_instance_type FROM runs")" \
    "aws|m5.large"
check "streamed: the registration carried it, with every other key and value" \
    "$(start_body $((n_runs + 1)) '["sleep", "0.5"]' '{"job_name": "streamed"}' "$AWS_CLOUD" \
        '[null, null, null]')" ok
check "streamed: the Idempotency-Key is the run's uuid" "$(key $((n_runs + 1)))" "$(q st.db "SELECT uuid FROM runs")"
RTRACK_CLOUD_DISCOVERY=0 SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_WAIT=20 "$RTRACK" run --quiet \
    --db st0.db --interval 0.1 -- sleep 0.3 >out 2>err; keep
check "streamed, RTRACK_CLOUD_DISCOVERY=0: not asked" "$?,$(q st0.db "SELECT count(*) FROM runs WHERE cloud_vendor_id IS NULL")" "0,1"

# --- several databases (--db again, or a glob): --all uploads from each in turn, its progress kept
# in each; a run id or "latest" names a run of one database, so without --all several are refused
"$RTRACK" record --quiet --db many-a.db --interval 0.1 --duration 0.3 -n many-a &&
    "$RTRACK" record --quiet --db many-b.db --interval 0.1 --duration 0.3 -n many-b
n_runs=$(requests 'POST /runs')
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db 'many-*.db' --all >out 2>err; keep
check "several databases, --all: exit 0, a run registered from each" \
    "$?,$(($(requests 'POST /runs') - n_runs))" "0,2"
check "several databases: each named before its runs, in order" \
    "$(grep -o "^rtrack: upload: database '[^']*'" err | tr '\n' ' ')" \
    "rtrack: upload: database 'many-a.db' rtrack: upload: database 'many-b.db' "
check "several databases: each finished in its own database" \
    "$(q many-a.db "SELECT count(*) FROM uploads WHERE finished_at IS NOT NULL"),$(q many-b.db "SELECT count(*) FROM uploads WHERE finished_at IS NOT NULL")" \
    "1,1"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db many-a.db --db many-b.db --all >out 2>err; keep
check "several databases, again: exit 0, nothing sent twice" \
    "$?,$(($(requests 'POST /runs') - n_runs)),$(grep -c "^rtrack: upload: nothing to upload in 'many-[ab].db'$" err)" "0,2,2"
# the repro of issue 31 item 13, as typed: --db twice and --all uploaded the second only, silently
"$RTRACK" record --quiet --db many-c.db --interval 0.1 --duration 0.3 -n many-c &&
    "$RTRACK" record --quiet --db many-d.db --interval 0.1 --duration 0.3 -n many-d
n_runs=$(requests 'POST /runs')
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db many-c.db --db many-d.db --all >out 2>err; keep
check "upload --db c --db d --all: a run registered from each, each finished in its own" \
    "$?,$(($(requests 'POST /runs') - n_runs)),$(q many-c.db "SELECT count(*) FROM uploads WHERE finished_at IS NOT NULL"),$(q many-d.db "SELECT count(*) FROM uploads WHERE finished_at IS NOT NULL")" \
    "0,2,1,1"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db many-a.db --db many-b.db >out 2>err; keep
check "several databases, the latest run: exit 2, says why" \
    "$?,$(grep -c "^rtrack: upload: the latest run names a run of one database, and --db gave 2 (with --all, each is uploaded in turn)$" err)" \
    "2,1"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db 'many-*.db' --run 1 --dry-run >out 2>err; keep
check "several databases, --run: exit 2" "$?,$(grep -c "^rtrack: upload: --run names a run of one database" err)" "2,1"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db 'none-*.db' --all >out 2>err; keep
check "a glob that matches nothing: exit 2" "$?,$(grep -c "no database matches 'none-\*.db'" err)" "2,1"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db 'many-a*.db' --dry-run >out 2>err; keep
check "a glob of one database: its latest run" \
    "$?,$(wc -c <out),$(grep -c "^rtrack: upload: run 1 was uploaded before; nothing to do$" err)" "0,0,1"

# --- bad input --------------------------------------------------------------------------------------
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --run 9 >out 2>err; keep
check "unknown run: exit 2" "$?" 2
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db missing.db >out 2>err; keep
check "missing database: exit 2, not created" "$?,$(ls missing.db 2>/dev/null | wc -l)" "2,0"
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" upload --db up.db --run 1 --all >out 2>err; keep
check "--run with --all: exit 2" "$?" 2

check "secret: not in the output of any command of this suite ($(grep -c '' all.out) lines)" \
    "$(grep -c "$TOKEN" all.out)" 0
finish
