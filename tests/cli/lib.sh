# tests/cli/lib.sh - sourced by every shell suite: `bash tests/cli/test_X.sh path/to/rtrack`.
# shellcheck shell=bash
# Each suite runs in a fresh temporary directory (removed on exit) and counts failures; the
# exit status is the number of failed checks (0 = pass), 77 is never used (no silent skips:
# a check that cannot run prints SKIP with the reason).
set -u
RTRACK=$(readlink -f "${1:?usage: $0 RTRACK_BINARY}")
RT_HELPERS=${RT_HELPERS:-$(dirname "$RTRACK")/tests}
SQLITE=${SQLITE:-sqlite3}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
# keep the caller's environment from leaking into the tests
unset RTRACK_DB RTRACK_INTERVAL RTRACK_CONFIG RTRACK_DURATION TRACKER_QUIET TRACKER_TAGS \
      TRACKER_JOB_NAME TRACKER_PROJECT_NAME TRACKER_STAGE_NAME TRACKER_TASK_NAME TRACKER_TEAM \
      TRACKER_ENV TRACKER_LANGUAGE TRACKER_ORCHESTRATOR TRACKER_EXECUTOR \
      TRACKER_EXTERNAL_RUN_ID TRACKER_CONTAINER_IMAGE SENTINEL_API_TOKEN
FAILS=0
CHECKS=0

pass() { CHECKS=$((CHECKS + 1)); printf 'ok   %s\n' "$1"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$1"; }
skip() { printf 'SKIP %s\n' "$1"; }

# check NAME ACTUAL EXPECTED
check() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi
}
# check_cmd NAME COMMAND... : passes when the command succeeds
check_cmd() {
    local name=$1; shift
    if "$@"; then pass "$name"; else fail "$name: '$*' failed"; fi
}
# check_range NAME VALUE LOW HIGH (floats)
check_range() {
    if awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; then
        pass "$1 ($2 in [$3, $4])"
    else
        fail "$1: $2 not in [$3, $4]"
    fi
}
# q DB SQL : one value
q() { "$SQLITE" -batch -noheader "$1" "$2"; }

# wait_file FILE [SECS]: wait until FILE exists and is not empty (default 10 s); 1 if it never is
wait_file() {
    local i n=$((${2:-10} * 20))
    for ((i = 0; i < n; i++)); do
        [ -s "$1" ] && return 0
        sleep 0.05
    done
    return 1
}
# wait_exit PID [SECS]: wait for the background PID (default 10 s) and set RC to its exit status,
# or to 'timeout' after killing it when it does not end in time
# shellcheck disable=SC2034 # RC is the caller's
wait_exit() {
    local i n=$((${2:-10} * 20))
    for ((i = 0; i < n; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        RC=timeout
    else
        wait "$1"
        RC=$?
    fi
}
finish() {
    printf '%d checks, %d failed\n' "$CHECKS" "$FAILS"
    exit "$FAILS"
}
