#!/usr/bin/env bash
# tests/s3/with-s3.sh CMD [ARGS...] - run CMD against a local S3 that verifies SigV4 and the
# payload hash (s3-server.js says what it checks).
#
# Installs the pinned server (npm ci) when node_modules is missing or older than the lockfile,
# starts it on a port the kernel picks with the bucket test-bucket, exports
#   S3_ENDPOINT    http://127.0.0.1:PORT (path-style)
#   S3_BUCKET      test-bucket
#   S3_TEST_KEY    AKIDTEST (or the caller's S3_TEST_KEY, e.g. a recognisable random one)
#   S3_TEST_SECRET testsecret (or the caller's S3_TEST_SECRET)
#   S3_DATA_DIR    where the server keeps objects: $S3_DATA_DIR/BUCKET/KEY._S3rver_object
# runs CMD, stops the server, and exits with CMD's status. Set S3_VERBOSE=1 to get the
# server's request log on stderr at the end.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

die() {
    echo "with-s3: $*" >&2
    exit 1
}

[ $# -ge 1 ] || die "usage: with-s3.sh CMD [ARGS...]"
command -v node >/dev/null 2>&1 || die "node is not installed (the test S3 server needs Node.js >= 20)"
command -v npm >/dev/null 2>&1 || die "npm is not installed (needed once to install the test S3 server)"
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) ||
    die "cannot run node"
[ "$node_major" -ge 20 ] 2>/dev/null ||
    die "node $(node --version) is too old: @20minutes/s3rver 4.0.4 needs Node.js >= 20"

# npm ci deletes node_modules first: one installer at a time, the others wait and then find
# it fresh (the lock is on the lockfile itself, so no lock file is left in the tree).
marker=$here/node_modules/.package-lock.json
if [ ! -e "$marker" ] || [ "$here/package-lock.json" -nt "$marker" ]; then
    exec 9<"$here/package-lock.json"
    command -v flock >/dev/null 2>&1 && flock 9
    if [ ! -e "$marker" ] || [ "$here/package-lock.json" -nt "$marker" ]; then
        echo "with-s3: installing the test S3 server (npm ci)" >&2
        (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2) ||
            die "npm ci failed in $here"
        touch "$marker"
    fi
    exec 9<&-
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-s3.XXXXXX") || die "cannot create a temporary directory"
pid=""
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    [ -n "${S3_VERBOSE:-}" ] && cat "$tmp/log" >&2
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$tmp/data"
t0=$(date +%s%N)
S3_TEST_KEY=${S3_TEST_KEY:-AKIDTEST}
S3_TEST_SECRET=${S3_TEST_SECRET:-testsecret}
S3_TEST_KEY=$S3_TEST_KEY S3_TEST_SECRET=$S3_TEST_SECRET S3_BUCKETS=test-bucket \
    node "$here/s3-server.js" "$tmp/data" 0 "$tmp/port" >"$tmp/log" 2>&1 &
pid=$!
# Usually ready in about half a second; a cold first start can take a few.
for _ in $(seq 1 300); do
    [ -s "$tmp/port" ] && break
    if ! kill -0 "$pid" 2>/dev/null; then
        cat "$tmp/log" >&2
        pid=""
        die "the test S3 server exited during startup"
    fi
    sleep 0.05
done
[ -s "$tmp/port" ] || { cat "$tmp/log" >&2; die "the test S3 server did not start within 15 s"; }
t1=$(date +%s%N)
port=$(cat "$tmp/port")
echo "with-s3: s3 server on 127.0.0.1:$port, ready in $(((t1 - t0) / 1000000)) ms" >&2

export S3_ENDPOINT="http://127.0.0.1:$port"
export S3_BUCKET=test-bucket
export S3_TEST_KEY S3_TEST_SECRET
export S3_DATA_DIR="$tmp/data"

"$@"
status=$?
exit "$status"
