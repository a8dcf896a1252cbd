#!/usr/bin/env bash
# Build rtrack and run its tests, three ways (.ci/run runs this with no arguments, requiring all):
#   normal  $BUILD (build/)            gcc, warnings as errors: the whole ctest suite; and the
#           $PORTABLE_BUILD            release tarballs (scripts/release.sh: Zig, glibc 2.17,
#           (build-portable/)          x86_64 and arm64), whose x86_64 binary the CLI suites
#                                      run (the unit tests link build/'s libraries), and
#                                      test_portable.sh checks, with the arm64 one under qemu
#   asan    $ASAN_BUILD (build-asan/)  gcc, Debug, AddressSanitizer + UndefinedBehaviorSanitizer:
#                                      the whole ctest suite again but the tests labelled
#                                      "once" (tests/CMakeLists.txt); any report fails its test
#   fuzz    $FUZZ_BUILD (build-fuzz/)  clang + libFuzzer: each harness of tests/fuzz replays its
#                                      seed corpus, then fuzzes for $RTRACK_FUZZ_SECONDS (5) s
# An empty suite fails. A shell suite that cannot run here (not root, say) is reported skipped by
# ctest; one that skips a part CI requires fails when RTRACK_TEST_REQUIRE names it (.ci/run: all;
# tests/cli/lib.sh). Every stage runs; the script fails when any of them failed. Tests run
# $RTRACK_TEST_JOBS (default: one per CPU) at a time: most shell suites wait on sleeping jobs,
# and every suite is written to hold under that load.
# Usage: bash scripts/test.sh [normal] [asan] [fuzz]      (default: all three)
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STAGES=${*:-normal asan fuzz}
JOBS=${RTRACK_TEST_JOBS:-$(nproc)}

stage_normal() {
    BUILD=${BUILD:-$ROOT/build}
    local portable=${PORTABLE_BUILD:-$ROOT/build-portable}
    # the release binary is tested here rather than in a stage of its own: the CLI suites run
    # it (RTRACK_CLI_BINARY), with a sqlite3 shell of its SQLite for the byte-exact oracles
    . "$ROOT/scripts/bootstrap.sh" -DRTRACK_WERROR=ON -DRTRACK_CLI_BINARY="$portable/x86_64/rtrack" \
        -DRTRACK_CLI_SQL="$portable/x86_64/rt_sql" -DRTRACK_PORTABLE_DIR="$portable"
    bash "$ROOT/scripts/release.sh" "$portable"
    cmake --build "$portable/x86_64" --target rt_sql >/dev/null
    cd "$BUILD"
    ctest --output-on-failure --no-tests=error -j"$JOBS"
}

stage_asan() {
    BUILD=${ASAN_BUILD:-$ROOT/build-asan}
    . "$ROOT/scripts/bootstrap.sh" -DRTRACK_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
    cd "$BUILD"
    # LeakSanitizer needs to stop the process with ptrace, which some containers forbid: there
    # it reports a fatal error for any program, and leak checking is left off (with a note).
    local leaks=1
    if ASAN_OPTIONS=detect_leaks=1 ./rtrack --version 2>&1 >/dev/null |
        grep -q "LeakSanitizer has encountered a fatal error"; then
        echo "test.sh: LeakSanitizer cannot run here; the asan stage runs without leak checks" >&2
        leaks=0
    fi
    ASAN_OPTIONS="halt_on_error=1:detect_leaks=$leaks:abort_on_error=0" \
        UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
        ctest --output-on-failure --no-tests=error -j"$JOBS" -LE once
}

stage_fuzz() {
    BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
    . "$ROOT/scripts/bootstrap.sh" -DCMAKE_C_COMPILER=clang -DRTRACK_FUZZ=ON \
        -DRTRACK_BUILD_TESTS=OFF -DRTRACK_FUZZ_SECONDS="${RTRACK_FUZZ_SECONDS:-5}"
    cd "$BUILD"
    ctest --output-on-failure --no-tests=error -j"$JOBS" -L fuzz
}

failed=""
for s in $STAGES; do
    case $s in
    normal | asan | fuzz) ;;
    *)
        echo "test.sh: unknown stage '$s' (normal, asan, fuzz)" >&2
        exit 2
        ;;
    esac
    echo "test.sh: stage $s" >&2
    # a subshell per stage: bootstrap.sh sets BUILD and the directory; `set -e` holds inside
    set +e
    (
        set -e
        "stage_$s"
    )
    rc=$?
    set -e
    [ "$rc" -eq 0 ] || failed="$failed $s"
done
if [ -n "$failed" ]; then
    echo "test.sh: FAILED:$failed" >&2
    exit 1
fi
echo "test.sh: passed: $STAGES" >&2
