#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/syscalls.sh - system calls per sample of the sampling loop, by name.
#
# usage: bench/syscalls.sh [RT_HOTLOOP_BINARY]   (default: $RT_HOTLOOP, else build/rt_hotloop)
#
# Runs rt_hotloop (bench/hotloop.c: every collector and the store, back to back, one commit per
# sample) under `strace -c` twice per configuration, with N and 2N samples, and divides the
# difference of the counts by the difference of the samples taken (rt_hotloop takes N/10 more
# as warm-up, so 1.1 N): what start-up and exit cost cancels out, what is left is the
# steady state of one sample. Only rtrack's own thread is traced (no -f: the tree's processes
# are not). Configurations: the system alone (-t 0) and a 5-process tree (sh + 4 sleeps, -t 5),
# both without the store (-d '': the collectors' calls), and the tree with the store (-d DB:
# the WAL writes and the locks of a commit per sample). clock_gettime is left out: rt_hotloop
# times each collector with CPU-time clocks, which are system calls (the vDSO has no CPU-time
# clocks), while the recorder reads its two clocks per sample through the vDSO.
# strace makes every call slower but does not change which calls are made.
#
# Environment knobs: SAMPLES (N, default 200), BENCH_OUT (directory to keep strace's tables).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
HOTLOOP=${1:-${RT_HOTLOOP:-$BENCH_ROOT/build/rt_hotloop}}
[[ -x $HOTLOOP ]] || die "rt_hotloop '$HOTLOOP' not found; build it or pass its path"
HOTLOOP=$(cd "$(dirname "$HOTLOOP")" && pwd)/$(basename "$HOTLOOP")
bench_init "$(dirname "$HOTLOOP")/rtrack"
command -v strace >/dev/null || die "strace is needed"
N=${SAMPLES:-200}
[[ $N =~ ^[1-9][0-9]*$ ]] || die "SAMPLES must be a positive integer"

# counts CONFIG SAMPLES OUT: strace -c's table of one run, as "name calls" lines in OUT.
# CONFIG is "TREE:STORE" (STORE 1: into a database, 0: no store).
counts() {
    local t=${1%:*} store=${1#*:} table=$BENCH_TMP/strace-${1/:/-}-n$2.txt db=""
    ((store)) && db=hotloop.db
    strace -c -o "$table" "$HOTLOOP" -n "$2" -t "$t" -d "$db" >/dev/null 2>&1 ||
        die "rt_hotloop -n $2 -t $t -d '$db' failed under strace"
    [[ -z ${BENCH_OUT:-} ]] || cp "$table" "$BENCH_OUT/"
    # strace -c rows: % time, seconds, usecs/call, calls, [errors,] syscall; then a total row
    awk '$1 ~ /^[0-9.]+$/ && NF >= 5 && $NF != "total" && $NF != "clock_gettime" {
        print $NF, $4 }' "$table" >"$3"
}

# samples rt_hotloop takes for -n K: K and K/10 (at least 1) of warm-up
taken() { echo $(($1 + ($1 / 10 > 0 ? $1 / 10 : 1))); }
M=$(($(taken $((2 * N))) - $(taken "$N")))
declare -A PER
CONFIGS=(0:0 5:0 5:1)
for c in "${CONFIGS[@]}"; do
    note "config $c (tree:store): $N and $((2 * N)) samples under strace"
    counts "$c" "$N" "$BENCH_TMP/a$c"
    counts "$c" $((2 * N)) "$BENCH_TMP/b$c"
    while read -r name calls; do
        PER[$c,$name]=$calls
    done < <(
        awk -v n="$M" 'NR == FNR { a[$1] = $2; next } { d = ($2 - a[$1]) / n;
            if (d >= 0.005) printf "%s %.2f\n", $1, d }' "$BENCH_TMP/a$c" "$BENCH_TMP/b$c"
    )
done

names=$(for k in "${!PER[@]}"; do echo "${k#*,}"; done | sort -u)
echo "## System calls per sample (rt_hotloop under strace -c)"
echo
echo "- rt_hotloop: $HOTLOOP"
machine_info
echo "- $N and $((2 * N)) samples back to back; per sample = difference of the calls / $M, the difference of the samples taken (warm-up included); clock_gettime left out"
echo
echo "| system call | system only, no store | 5-process tree, no store | 5-process tree, stored (a commit per sample) |"
echo "|---|---|---|---|"
declare -A TOT
for name in $names; do
    row="| \`$name\`"
    for c in "${CONFIGS[@]}"; do
        v=${PER[$c,$name]:-0}
        row+=" | $v"
        TOT[$c]=$(awk -v x="${TOT[$c]:-0}" -v y="$v" 'BEGIN { printf "%.2f", x + y }')
    done
    echo "$row |"
done
echo "| **all** | **${TOT[0:0]}** | **${TOT[5:0]}** | **${TOT[5:1]}** |"
