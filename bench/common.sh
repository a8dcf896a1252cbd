# shellcheck shell=bash
# bench/common.sh - helpers shared by the bench/*.sh scripts (sourced, not run).
#
# Provides: bench_init BINARY (resolves the rtrack binary, cleans the environment, makes a
# scratch directory $BENCH_TMP that is removed on exit), clock and /proc readers (now_us,
# sleep_until_us, cpu_read, mem_kib), the 5-process tree (start_tree, stop_tree), machine_info,
# and $PY (the Python interpreter: stdlib only).

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
    # BENCH_OUT may be relative to the caller's directory: made absolute before the cd below
    if [[ -n ${BENCH_OUT:-} ]]; then
        mkdir -p "$BENCH_OUT" || die "cannot create $BENCH_OUT"
        BENCH_OUT=$(cd "$BENCH_OUT" && pwd)
    fi
    local v
    for v in $(compgen -e); do
        case $v in RTRACK_* | TRACKER_*) unset "$v" ;; esac
    done
    BENCH_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-bench.XXXXXX")
    trap 'bench_cleanup' EXIT
    trap 'exit 130' INT TERM
    cd "$BENCH_TMP" || exit 1
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
# now_us prints it; now_us_v VAR stores it in VAR without forking.
now_us() {
    local t=$EPOCHREALTIME
    echo $((10#${t%.*} * 1000000 + 10#${t#*.}))
}
now_us_v() {
    local t=$EPOCHREALTIME
    printf -v "$1" '%d' $((10#${t%.*} * 1000000 + 10#${t#*.}))
}

# Sleep until the wall clock reaches TARGET_US.
sleep_until_us() {
    local d=$(($1 - $(now_us)))
    ((d > 0)) && sleep "$(printf '%d.%06d' $((d / 1000000)) $((d % 1000000)))"
    return 0
}

# us_to_s US: microseconds as decimal seconds.
us_to_s() { printf '%d.%06d' $(($1 / 1000000)) $(($1 % 1000000)); }

# cpu_read PID VAR: stores "NS TICKS" in VAR, without forking (so reads at a window edge take
# microseconds): nanoseconds on CPU (field 1 of /proc/PID/task/*/schedstat, summed over the
# threads: precise, updated at every context switch) and utime+stime clock ticks (fields 14 and
# 15 of /proc/PID/stat: a cross-check, 1/CLK_TCK resolution). rtrack runs its GPU backends on a
# worker thread, which exits at once on a machine without a GPU; sadc is single threaded.
cpu_read() {
    local ns=0 t tns rest line
    for t in /proc/"$1"/task/[0-9]*; do
        read -r tns rest <"$t"/schedstat 2>/dev/null && ns=$((ns + tns))
    done
    read -r line </proc/"$1"/stat || return 1
    line=${line##*) } # fields from 3 (state) on; comm may contain spaces
    local -a f
    read -r -a f <<<"$line"
    printf -v "$2" '%s %s' "$ns" $((f[11] + f[12]))
}

# cpu_busy_read VAR: stores "BUSY TOTAL", clock ticks of all CPUs since boot from the first
# line of /proc/stat (busy: user nice system irq softirq steal; total adds idle and iowait).
cpu_busy_read() {
    local u n s i w q sq st rest
    read -r _ u n s i w q sq st rest </proc/stat
    printf -v "$1" '%s %s' $((u + n + s + q + sq + st)) $((u + n + s + i + w + q + sq + st))
}

# wait_quiet: the figures are only meaningful on an otherwise idle machine. Waits until the
# CPUs are less than BENCH_MAX_BUSY percent busy (default 25; 100 disables the wait) over 2 s,
# for at most BENCH_QUIET_WAIT seconds (default 300), then goes on with a warning.
wait_quiet() {
    local max=${BENCH_MAX_BUSY:-25} limit=${BENCH_QUIET_WAIT:-300} a b busy waited=0
    ((max >= 100)) && return 0
    while :; do
        cpu_busy_read a
        sleep 2
        cpu_busy_read b
        read -r -a a <<<"$a"
        read -r -a b <<<"$b"
        busy=$(((b[0] - a[0]) * 100 / (b[1] - a[1] > 0 ? b[1] - a[1] : 1)))
        ((busy < max)) && return 0
        if ((waited == 0)); then note "machine busy ($busy% of all CPUs); waiting for it to calm down"; fi
        waited=$((waited + 2))
        if ((waited >= limit)); then
            note "warning: still $busy% busy after ${limit}s; measuring anyway (figures will be noisy)"
            return 0
        fi
    done
}

# mem_kib PID: "VmHWM VmRSS RssAnon RssFile" in KiB from /proc/PID/status: peak resident set
# size, current resident set size, and its anonymous (heap, stacks) and file-backed (binary,
# shared libraries) parts.
mem_kib() {
    awk '/^VmHWM:/ {h=$2} /^VmRSS:/ {r=$2} /^RssAnon:/ {a=$2} /^RssFile:/ {f=$2}
         END {print h, r, a, f}' /proc/"$1"/status
}

# start_tree: a 5-process tree (sh + 4 sleeps) in its own process group; sets TREE_PID.
start_tree() {
    setsid sh -c 'sleep 100000 & sleep 100000 & sleep 100000 & sleep 100000 & wait' \
        </dev/null >/dev/null 2>&1 &
    TREE_PID=$!
    BENCH_PGIDS+=("$TREE_PID")
    local n
    for _ in $(seq 50); do # wait until the 4 children exist
        n=$( (grep -l "^PPid:[[:space:]]*$TREE_PID\$" /proc/[0-9]*/status 2>/dev/null || true) | wc -l)
        if ((n >= 4)); then
            # setsid did not fork (a background child of a script is no group leader): the
            # pid of sh is the group id, so the whole tree can be signalled at once
            local pgid
            pgid=$(cut -d' ' -f3 <<<"$(sed 's/.*) //' /proc/"$TREE_PID"/stat)")
            [[ $pgid == "$TREE_PID" ]] || die "tree pid $TREE_PID is not its group leader ($pgid)"
            return 0
        fi
        sleep 0.02
    done
    die "process tree did not start"
}

stop_tree() {
    kill -TERM -- "-$TREE_PID" 2>/dev/null || true
    wait "$TREE_PID" 2>/dev/null || true
    local keep=() p
    for p in "${BENCH_PGIDS[@]}"; do [[ $p == "$TREE_PID" ]] || keep+=("$p"); done
    BENCH_PGIDS=("${keep[@]}")
}

# fs_of DIR: the device and file system type DIR is on ("/dev/vda ext4"), for the reports.
fs_of() {
    local fs
    fs=$(findmnt -n -o SOURCE,FSTYPE -T "$1" 2>/dev/null || df -P "$1" | awk 'NR==2 {print $1}')
    echo "${fs//  / }"
}

# machine_info: one line per fact, for the reports.
machine_info() {
    echo "- rtrack: $RTRACK ($("$RTRACK" --version 2>&1 | head -1))"
    echo "- CPUs: $(nproc), $(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -1)"
    local procs=(/proc/[0-9]*)
    echo "- kernel: $(uname -r); processes: ${#procs[@]}; load: $(cut -d' ' -f1-3 /proc/loadavg)"
}
