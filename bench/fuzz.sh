#!/usr/bin/env bash
# bench/fuzz.sh - the long fuzzing run: each libFuzzer harness of tests/fuzz in turn, for
# FUZZ_SECONDS each, at nice 19, starting from its committed seed corpus; then a markdown table
# of executions, executions per second, coverage and crashes per harness.
#
# Usage: bench/fuzz.sh [HARNESS...]        (default: every harness; names as in tests/fuzz,
#                                           without the fuzz_ prefix)
# Environment:
#   FUZZ_SECONDS  seconds per harness (default 150)
#   FUZZ_BUILD    the clang build with RTRACK_FUZZ=ON (default build-fuzz; configured and built
#                 here when it has no harnesses yet, with JOBS parallel jobs, default 2)
#   FUZZ_OUT      where logs, new inputs and crash reproducers go (default $FUZZ_BUILD/fuzz-long;
#                 emptied first)
#   FUZZ_ARGS     more libFuzzer flags
# Exit status: 0, or 1 when a harness crashed or reported (its reproducer is in
# $FUZZ_OUT/crashes/NAME/; run it with `$FUZZ_BUILD/tests/fuzz/fuzz_NAME FILE`).
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_EACH=${FUZZ_SECONDS:-150}
BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
OUT=${FUZZ_OUT:-$BUILD/fuzz-long}
ALL=$(sed -n '/^set(RT_FUZZ_HARNESSES/,/)/p' "$ROOT/tests/fuzz/CMakeLists.txt" |
    sed -e 's/set(RT_FUZZ_HARNESSES//' -e 's/)//' | tr -s ' \n' ' ')
NAMES=${*:-$ALL}

if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'
    exit 0
fi

if [ ! -x "$BUILD/tests/fuzz/fuzz_toml" ]; then
    echo "fuzz.sh: building the fuzz configuration in $BUILD" >&2
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_C_COMPILER=clang -DRTRACK_FUZZ=ON \
        -DRTRACK_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j"${JOBS:-2}" >/dev/null

rm -rf "$OUT"
mkdir -p "$OUT"
commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$ROOT" status --porcelain -- src include tests/fuzz 2>/dev/null)" ] ||
    commit="$commit + uncommitted changes"

rows=""
failed=0
total_execs=0
for n in $NAMES; do
    bin=$BUILD/tests/fuzz/fuzz_$n
    [ -x "$bin" ] || {
        echo "fuzz.sh: no harness fuzz_$n in $BUILD/tests/fuzz" >&2
        exit 2
    }
    mkdir -p "$OUT/work/$n" "$OUT/crashes/$n"
    dict=()
    [ -f "$ROOT/tests/fuzz/dict/$n.dict" ] && dict=(-dict="$ROOT/tests/fuzz/dict/$n.dict")
    echo "fuzz.sh: fuzz_$n for ${SECONDS_EACH}s" >&2
    set +e
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of flags
    nice -n 19 "$bin" -max_total_time="$SECONDS_EACH" -timeout=20 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$OUT/crashes/$n/" "${dict[@]}" ${FUZZ_ARGS:-} \
        "$OUT/work/$n" "$ROOT/tests/fuzz/corpus/$n" >"$OUT/$n.log" 2>&1
    rc=$?
    set -e
    log=$OUT/$n.log
    final() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
    execs=$(final number_of_executed_units)
    rate=$(final average_exec_per_sec)
    rss=$(final peak_rss_mb)
    last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
    seeds=$(find "$ROOT/tests/fuzz/corpus/$n" -type f | wc -l)
    if [ "$rc" -eq 0 ]; then
        result="none"
    else
        failed=1
        what=$(grep -m1 -E 'runtime error|ERROR: |^fuzz_|^pyfmt:' "$log" |
            sed -e "s#$ROOT/##g" -e 's/==[0-9]*==//' | cut -c1-90)
        file=$(sed -n 's/.*Test unit written to \(.*\)/\1/p' "$log" | tail -1)
        result="**crash** (exit $rc): ${what:-see $log} - ${file:-no reproducer}"
    fi
    total_execs=$((total_execs + ${execs:-0}))
    rows+="| fuzz_$n | $SECONDS_EACH | ${execs:-?} | ${rate:-?} | ${cov:-?} | ${ft:-?} | $seeds → ${corp:-?} | ${rss:-?} | $result |"$'\n'
done

cat <<EOF
## Long fuzzing run

Commit $commit, $(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)
at the end; each harness alone at nice 19, ${SECONDS_EACH} s, from its seed corpus
(\`bench/fuzz.sh\`).

| harness | s | execs | exec/s | cov | ft | corpus (seeds → end) | peak RSS MiB | crashes |
|---|---|---|---|---|---|---|---|---|
$rows
Total: $total_execs executions. cov: coverage points (edges) reached, ft: libFuzzer features;
logs, new inputs and reproducers in \`${OUT#"$ROOT"/}\`.
EOF
exit "$failed"
