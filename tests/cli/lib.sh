# tests/cli/lib.sh - sourced by every shell suite: `bash tests/cli/test_X.sh path/to/rtrack`.
# shellcheck shell=bash
#
# Each suite runs in a fresh temporary directory $T (removed on exit) as the leader of a process
# group of its own: lib.sh re-executes the suite ($0, with the one argument lib.sh was given)
# under setsid when it is not one (under ctest).
# Every process left in that group is killed when the suite exits (lib.sh's EXIT trap), and, by
# a watchdog, within a second after the suite is gone however it ended (killed, or with an EXIT
# trap of its own): a job that a failed check left running (an rtrack that did not forward a
# signal, its orphaned job) never outlives the suite. (`timeout` and `setsid` give their command
# a group of its own: a suite that uses them kills what they started itself.) Every wait on a
# process is bounded: wait_exit PID SECS, wait_file FILE SECS, wait_samples DB N SECS.
#
# Checks: pass, fail, check, check_cmd, check_range. The last line says
# "N checks, F failed, S skipped", and the exit status (ctest: SKIP_RETURN_CODE 77) is
#   0   every check passed, and at least one ran
#   1   a check failed, or no check ran and nothing was skipped
#   77  the suite cannot run here at all (skip_all), or every part of it skipped: ctest reports
#       it as skipped ("Not Run"), never as passed
# A part that cannot run prints SKIP with the reason and is counted (skip REASON).
#
# Required parts: a skip for want of a capability that RTRACK_TEST_REQUIRE names (words or
# commas; "all" names every one; .ci/run sets "all") is a failure, so CI fails when a part that
# must run there did not (skip_req CAP REASON for a part, skip_all CAP REASON for a suite):
#   root      running as root: the root-only suites (test_pid_faults, test_read_only,
#             test_recording_failure, test_disk_full) and root-only parts of others
#   tmpfs     mounting a tmpfs or a bind mount (root in a container that forbids mount lacks it)
#   chromium  headless chromium on PATH (test_report.sh renders the report's charts)
#   slurm     Debian's Slurm and munge, and the SPANK plugin built (test_slurm.sh's cluster)
#   portable  the release tarballs of scripts/release.sh and qemu-user for the arm64 binary
#             (test_portable.sh)
# Every other skip is optional, for what legitimately depends on the machine: fish or zsh not
# installed, no non-loopback address, a machine too loaded for absolute CPU ranges, a hard
# RLIMIT_CORE of 0, ... (skip_all - REASON skips a suite optionally). Never skipped at all: the
# test S3 server's Node.js (tests/s3/with-s3.sh fails without it) and the SENTINEL_API_TOKEN
# examples of docs/usage.md (run against tests/helpers/sentinel_mock.py).
set -u

# rt_ps: every process as "PID STATE PPID PGRP" in the array RT_PS (no fork: /proc read here)
rt_ps() {
    local f s
    RT_PS=()
    for f in /proc/[0-9]*/stat; do
        read -r s 2>/dev/null <"$f" || continue
        s=${s##*) }
        s=${s%% "${s#* * * }"}
        f=${f#/proc/}
        RT_PS+=("${f%/stat} $s")
    done
}
rt_ps
for RT_PGID in "${RT_PS[@]}"; do [ "${RT_PGID%% *}" = $$ ] && break; done
RT_PGID=${RT_PGID##* }
if [ "$RT_PGID" != $$ ] && [ -z "${RT_LIB_SETSID:-}" ] && [ -f "$0" ] && command -v setsid >/dev/null; then
    export RT_LIB_SETSID=1
    exec setsid bash "$0" "$@" # (not a group leader: setsid does not fork, the pid stays)
fi
unset RT_LIB_SETSID
# (without a group of its own, nothing is killed by group: never the caller's)
[ "$RT_PGID" = $$ ] || RT_PGID=

RTRACK=$(readlink -f "${1:?usage: $0 RTRACK_BINARY}")
RT_HELPERS=${RT_HELPERS:-$(dirname "$RTRACK")/tests}
SQLITE=${SQLITE:-sqlite3}
T=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-cli.XXXXXX")
cd "$T" || exit 1
# keep the caller's environment from leaking into the tests: every RTRACK_* and TRACKER_*
# setting (both names reach every run/record option), and the Sentinel token
for v in $(compgen -e); do
    case $v in RTRACK_TEST_*) ;; RTRACK_* | TRACKER_*) unset "$v" ;; esac
done
unset SENTINEL_API_TOKEN
FAILS=0
CHECKS=0
SKIPS=0

# rt_kill_group: SIGKILL every process left in the suite's group (but this shell and the
# suite's), until none is (2 s at most)
rt_kill_group() {
    local i p n pid st pp pg
    [ -n "$RT_PGID" ] || return 0
    for ((i = 0; i < 40; i++)); do
        rt_ps
        n=0
        for p in "${RT_PS[@]}"; do
            read -r pid st pp pg <<<"$p"
            if [ "$pg" = "$RT_PGID" ] && [ "$st" != Z ] && [ "$pid" != $$ ] && [ "$pid" != "$BASHPID" ]; then
                kill -KILL "$pid" 2>/dev/null
                n=$((n + 1))
            fi
        done
        [ "$n" -gt 0 ] || return 0
        sleep 0.05
    done
}
# rt_descendants PID: PID's children, grandchildren, ... (pids, one a line)
rt_descendants() {
    local p pid st pp pg
    local -a todo=("$1")
    rt_ps
    while [ ${#todo[@]} -gt 0 ]; do
        for p in "${RT_PS[@]}"; do
            read -r pid st pp pg <<<"$p"
            [ "$pp" = "${todo[0]}" ] && [ "$st" != Z ] && echo "$pid" && todo+=("$pid")
        done
        todo=("${todo[@]:1}")
    done
    : "$pg"
}
# on exit: what is left of the group (its job notices: to /dev/null), then the directory
rt_exit() {
    rt_kill_group 2>/dev/null
    rm -rf "$T"
}
trap rt_exit EXIT
# the watchdog: in the group, not a child of the suite (ctest kills the suite's children), with
# none of its descriptors (ctest waits for the output pipe to close)
if [ -n "$RT_PGID" ]; then
    (
        (
            cd / || exit
            # (the suite's pid is its group's: not given to another process while the group lives)
            while read -r st 2>/dev/null <"/proc/$RT_PGID/stat" && [[ ${st##*) } != Z* ]]; do
                sleep 0.5
            done
            rt_kill_group
        ) </dev/null >/dev/null 2>&1 &
    )
fi

pass() { CHECKS=$((CHECKS + 1)); printf 'ok   %s\n' "$1"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); printf 'FAIL %s\n' "$1"; }
# skip REASON: an optional part that cannot run here
skip() { SKIPS=$((SKIPS + 1)); printf 'SKIP %s\n' "$1"; }
# rt_required CAP: whether RTRACK_TEST_REQUIRE names CAP (or all); 2 for an unknown CAP
rt_required() {
    local w req=${RTRACK_TEST_REQUIRE:-}
    case $1 in
        root | tmpfs | chromium | slurm | portable) ;;
        *) return 2 ;;
    esac
    for w in ${req//,/ }; do
        if [ "$w" = all ] || [ "$w" = "$1" ]; then return 0; fi
    done
    return 1
}
# skip_req CAP REASON: a part that cannot run here for want of CAP: a failure when CAP is required
skip_req() {
    rt_required "$1"
    case $? in
        0) fail "$2 (required here: RTRACK_TEST_REQUIRE='${RTRACK_TEST_REQUIRE:-}' names $1)" ;;
        1) skip "$2 [$1]" ;;
        *) fail "lib.sh: unknown capability '$1' (root, tmpfs, chromium, slurm, portable) for: $2" ;;
    esac
}
# skip_all CAP REASON: the whole suite cannot run here (CAP '-': optionally); exits 77, or 1
# when CAP is required
skip_all() {
    if [ "$1" = - ]; then skip "$2"; else skip_req "$1" "$2"; fi
    finish
}

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
    [ -s "$1" ]
}
# wait_samples DB N [SECS]: wait until DB holds at least N samples
wait_samples() {
    wait_run_samples "$1" "" "$2" "${3:-10}"
}
# wait_run_samples DB RUN N [SECS]: wait until run RUN of DB holds at least N samples (RUN
# empty: every run)
wait_run_samples() {
    local i where=""
    [ -n "$2" ] && where=" WHERE run_id = $2"
    for ((i = 0; i < ${4:-10} * 20; i++)); do
        [ "$(q "$1" "SELECT count(*) FROM samples$where" 2>/dev/null)" -ge "$3" ] 2>/dev/null &&
            return 0
        sleep 0.05
    done
    return 1
}
# now: the wall clock, in seconds with nanoseconds
now() { date +%s.%N; }

# The HTTP mocks of tests/helpers (sentinel_mock.py, ...) log one JSON object per request
# ({"method", "path", "headers", "body"}) and read a control file beside their log.
# mock_ctl LOG JSON: the control file of the mock that logs to LOG, written atomically
mock_ctl() { printf '%s' "$2" >"$1.ctl.tmp" && mv "$1.ctl.tmp" "$1.ctl"; }
# mock_requests LOG REGEX [TOKEN]: how many requests match REGEX (against "METHOD PATH" when
# REGEX holds a blank, else the path); with TOKEN also how many of them carried it as Bearer
mock_requests() {
    python3 -c 'import json, re, sys
r = [json.loads(l) for l in open(sys.argv[1])]
key = (lambda x: x["method"] + " " + x["path"]) if " " in sys.argv[2] else (lambda x: x["path"])
r = [x for x in r if re.fullmatch(sys.argv[2], key(x))]
if len(sys.argv) > 3:
    print(len(r), sum(1 for x in r if x["headers"].get("authorization") == "Bearer " + sys.argv[3]))
else:
    print(len(r))' "$@"
}
# wait_exit PID [SECS]: wait for the background PID (default 10 s) and set RC to its exit status,
# or, when it does not end in time, to 'timeout' after killing it and every process under it
# (its job: a check that then fails leaves nothing running)
# shellcheck disable=SC2034 # RC is the caller's
wait_exit() {
    local i n=$((${2:-10} * 20)) p
    for ((i = 0; i < n; i++)); do
        kill -0 "$1" 2>/dev/null || break
        sleep 0.05
    done
    if kill -0 "$1" 2>/dev/null; then
        kill -STOP "$1" 2>/dev/null
        for p in $(rt_descendants "$1"); do kill -KILL "$p" 2>/dev/null; done
        kill -KILL "$1" 2>/dev/null
        wait "$1" 2>/dev/null
        printf '# pid %s did not end within %s s: killed it and what it started\n' "$1" "${2:-10}"
        RC=timeout
    else
        wait "$1"
        RC=$?
    fi
}
# finish: the summary line, and the exit status (see the top)
finish() {
    printf '%d checks, %d failed, %d skipped\n' "$CHECKS" "$FAILS" "$SKIPS"
    [ "$FAILS" -eq 0 ] || exit 1
    if [ "$CHECKS" -eq 0 ]; then
        [ "$SKIPS" -eq 0 ] || exit 77
        printf 'FAIL no check ran\n'
        exit 1
    fi
    exit 0
}
