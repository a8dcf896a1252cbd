# bench/common.sh - helpers shared by the bench/*.sh scripts (sourced, not run).
#
# Provides: bench_init BINARY (resolves the rtrack binary, cleans the environment, makes a
# scratch directory $BENCH_TMP that is removed on exit), now_us, sleep_until_us, cpu_of PID,
# hwm_kib PID, and $PY (the Python interpreter: stdlib only).

export LC_ALL=C # EPOCHREALTIME and printf use '.' as decimal separator
PY=${PY:-/usr/bin/python3}
BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH_ROOT=$(cd "$BENCH_DIR/.." && pwd)

die() {
    echo "${0##*/}: $*" >&2
    exit 1
}
note() { echo "${0##*/}: $*" >&2; }

# bench_init [BINARY]: the binary is the first argument, else $RTRACK, else build/rtrack of
# this checkout. Everything rtrack would pick up from the caller's environment or working
# directory (RTRACK_* / TRACKER_* variables, ./rtrack.toml) is kept away from it: the
# variables are unset and commands run inside the scratch directory.
bench_init() {
    RTRACK=${1:-${RTRACK:-$BENCH_ROOT/build/rtrack}}
    [[ $RTRACK == */* ]] || RTRACK=$(command -v "$RTRACK") || die "rtrack binary not found"
    RTRACK=$(cd "$(dirname "$RTRACK")" && pwd)/$(basename "$RTRACK")
    [[ -x $RTRACK ]] || die "rtrack binary '$RTRACK' not found; build it or pass its path"
    [[ -x $PY ]] || die "python3 not found at $PY (set PY=...)"
    local v
    for v in $(compgen -e); do
        case $v in RTRACK_* | TRACKER_*) unset "$v" ;; esac
    done
    BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-bench.XXXXXX")
    trap 'bench_cleanup' EXIT
    trap 'exit 130' INT TERM
    cd "$BENCH_TMP"
}

# Background processes registered here are killed (by pid) on exit.
BENCH_PIDS=()
BENCH_PGIDS=()
bench_cleanup() {
    local p
    for p in "${BENCH_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${BENCH_PGIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [[ -n ${BENCH_TMP:-} && ${BENCH_KEEP:-0} != 1 ]] && rm -rf "$BENCH_TMP"
    [[ ${BENCH_KEEP:-0} == 1 ]] && note "scratch files kept in $BENCH_TMP"
    return 0
}

# Wall clock in microseconds (CLOCK_REALTIME, the clock of rtrack's samples.ts).
now_us() {
    local t=$EPOCHREALTIME
    echo $((10#${t%.*} * 1000000 + 10#${t#*.}))
}

# Sleep until the wall clock reaches TARGET_US.
sleep_until_us() {
    local d=$(($1 - $(now_us)))
    ((d > 0)) && sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"
    return 0
}

# us_to_s US: microseconds as decimal seconds.
us_to_s() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# cpu_of PID: "NS TICKS": nanoseconds on CPU (first field of /proc/PID/schedstat: precise,
# updated at every context switch) and utime+stime clock ticks (fields 14 and 15 of
# /proc/PID/stat: a cross-check, 1/CLK_TCK resolution). Both tools measured are single threaded.
cpu_of() {
    local ns rest stat
    read -r ns rest </proc/"$1"/schedstat || return 1
    stat=$(</proc/"$1"/stat) || return 1
    stat=${stat##*) } # fields from 3 (state) on; comm may contain spaces
    local -a f
    read -r -a f <<<"$stat"
    echo "$ns $((f[11] + f[12]))"
}

# hwm_kib PID: peak resident set size (VmHWM) in KiB; rss_kib PID: current (VmRSS).
hwm_kib() { awk '/^VmHWM:/ {print $2}' /proc/"$1"/status; }
rss_kib() { awk '/^VmRSS:/ {print $2}' /proc/"$1"/status; }

# start_tree: a 5-process tree (sh + 4 sleeps) in its own process group; sets TREE_PID.
start_tree() {
    setsid sh -c 'sleep 100000 & sleep 100000 & sleep 100000 & sleep 100000 & wait' \
        </dev/null >/dev/null 2>&1 &
    TREE_PID=$!
    BENCH_PGIDS+=("$TREE_PID")
    local i n
    for i in $(seq 50); do # wait until the 4 children exist
        n=$(grep -l "^PPid:[[:space:]]*$TREE_PID\$" /proc/[0-9]*/status 2>/dev/null | wc -l)
        ((n >= 4)) && return 0
        sleep 0.02
    done
    die "process tree did not start"
}

stop_tree() {
    kill -TERM -- "-$TREE_PID" 2>/dev/null || true
    wait "$TREE_PID" 2>/dev/null || true
    BENCH_PGIDS=()
}

# machine_info: one line per fact, for the reports.
machine_info() {
    echo "- rtrack: $RTRACK ($("$RTRACK" --version 2>&1 | head -1))"
    echo "- CPUs: $(nproc), $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
    echo "- kernel: $(uname -r); processes: $(ls /proc | grep -c '^[0-9]'); load: $(cut -d' ' -f1-3 /proc/loadavg)"
}
