#!/usr/bin/env bash
# bench/upload.sh - what uploading to Sentinel costs: bytes per 1 000 samples, CPU per batch,
# and whether streaming adds CPU per sample between batches.
#
#   bench/upload.sh [RTRACK]            (default build/rtrack; runs itself under tests/s3/with-s3.sh)
#   SECS=30 INTERVAL=0.1 UPLOAD_INTERVAL=10 REPS=3
#
# Per repetition: two `rtrack record` side by side for SECS at INTERVAL, (n) without a token,
# (s) streaming to the mock Sentinel API (tests/helpers/sentinel_mock.py) and the local S3
# every UPLOAD_INTERVAL seconds; CPU time of each main thread (the sampler) over the whole
# recording divided by its samples, and of (s)'s other threads (the streaming thread) in all. Then a 25 s recording at 0.02 s uploaded
# after the fact in batches of 250 samples: CPU per batch, gzip bytes per 1 000 samples.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
RTRACK=$(readlink -f "${1:-$ROOT/build/rtrack}")
if [ -z "${S3_ENDPOINT:-}" ]; then
    exec bash "$ROOT/tests/s3/with-s3.sh" bash "$0" "$RTRACK"
fi
SECS=${SECS:-30}
INTERVAL=${INTERVAL:-0.1}
UPLOAD_INTERVAL=${UPLOAD_INTERVAL:-10}
REPS=${REPS:-3}
T=$(mktemp -d)
trap 'kill $mock 2>/dev/null; rm -rf "$T"' EXIT
cd "$T"
export MOCK_S3_KEY=$S3_TEST_KEY MOCK_S3_SECRET=$S3_TEST_SECRET RTRACK_S3_ENDPOINT=$S3_ENDPOINT
export RTRACK_UPLOAD_INLINE_MAX=0
: >api.log
python3 "$ROOT/tests/helpers/sentinel_mock.py" "$T/api.log" tok >port &
mock=$!
for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
API=http://127.0.0.1:$(head -n 1 port)

cpu_ns() { # PID: "MAIN OTHERS": CPU ns of its main thread and of its other threads
    local t main=0 others=0 v rest
    for t in /proc/"$1"/task/[0-9]*; do
        read -r v rest <"$t/schedstat" || continue
        if [ "${t##*/}" = "$1" ]; then main=$v; else others=$((others + v)); fi
    done
    echo "$main $others"
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "| rep | samples n / s | main thread µs per sample n | main thread µs per sample s | s − n | streaming thread ms in all | batches streamed |"
echo "|---|---|---|---|---|---|---|"
for rep in $(seq "$REPS"); do
    rm -f n.db* s.db*
    "$RTRACK" record --quiet --db n.db --interval "$INTERVAL" &
    n=$!
    SENTINEL_API_TOKEN=tok SENTINEL_API_URL=$API "$RTRACK" record --quiet --db s.db \
        --interval "$INTERVAL" --upload-interval "$UPLOAD_INTERVAL" &
    s=$!
    sleep "$SECS"
    read -r cn _ <<<"$(cpu_ns $n)"
    read -r cs co <<<"$(cpu_ns $s)"
    kill -INT $n $s
    wait $n $s || true
    sn=$(sqlite3 n.db "SELECT count(*) FROM samples")
    ss=$(sqlite3 s.db "SELECT count(*) FROM samples")
    nb=$(sqlite3 s.db "SELECT count(*) FROM upload_batches")
    awk -v r="$rep" -v a="$cn" -v b="$cs" -v o="$co" -v na="$sn" -v nb2="$ss" -v k="$nb" 'BEGIN {
        x = a / na / 1000; y = b / nb2 / 1000
        printf "| %d | %d / %d | %.0f | %.0f | %+.0f | %.1f | %d |\n", r, na, nb2, x, y, y - x, o / 1e6, k }'
    cp n.db last-n.db
done

echo
echo "After the fact: rtrack upload of a ${UP_SECS:-25} s recording at 0.02 s in batches of 250 samples"
"$RTRACK" record --quiet --db up.db --interval 0.02 --duration "${UP_SECS:-25}"
rows=$("$RTRACK" export --db up.db | tail -n +2 | wc -l)
/usr/bin/time -o time.txt -f '%e %U %S' env SENTINEL_API_TOKEN=tok SENTINEL_API_URL=$API \
    RTRACK_UPLOAD_BATCH_ROWS=250 "$RTRACK" upload --db up.db 2>/dev/null
read -r wall usr sys <time.txt
read -r nb bytes <<<"$(sqlite3 -separator ' ' up.db "SELECT count(*), sum(bytes) FROM upload_batches")"
csv=$("$RTRACK" export --db up.db | wc -c)
awk -v rows="$rows" -v nb="$nb" -v bytes="$bytes" -v csv="$csv" -v w="$wall" -v u="$usr" -v s="$sys" 'BEGIN {
    printf "- %d samples in %d objects: %.0f gzip bytes per 1 000 samples (%.0f bytes of CSV per 1 000; %.1fx smaller)\n", rows, nb, bytes / rows * 1000, csv / rows * 1000, csv / bytes
    printf "- wall %.2f s, CPU %.2f s in all: %.1f ms of CPU per batch of 250 (CSV, gzip, SHA-256, SigV4, PUT, progress commit; register and finish included)\n", w, u + s, (u + s) / nb * 1000 }'
