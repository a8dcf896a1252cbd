#!/usr/bin/env bash
# tests/mutation.sh - do the tests catch the bugs they claim to? Each mutant of tests/mutants.txt
# (a one-line bug: a file, an exact text in it, its replacement, the ctest names that must catch
# it) is applied to a copy of the tree, one at a time; the copy is rebuilt and the named tests
# run; the mutant is reverted. A mutant is
#   killed     a named test failed, within MUT_TIMEOUT seconds
#   SURVIVED   every named test passed
#   TIMEOUT    a named test was stopped by the timeout: it did not fail by itself, which is as
#              bad as surviving (the signal-forwarding bug once hid like this)
#   NO-BUILD   the mutated tree does not compile (fix the mutant: it should be a plausible bug)
#   STALE      the text is not in the file exactly once (the code moved: update the mutant)
#
# usage: bash tests/mutation.sh [NAME...]     (default: every mutant in tests/mutants.txt)
# Environment: MUT_WORK (a directory to keep the copy and its build in, reused when it is given;
#   default a temporary one, removed at the end), MUT_TIMEOUT (seconds per test, default 120),
#   MUT_JOBS (build and ctest jobs, default nproc), MUT_LIST (default tests/mutants.txt).
# Exit status: 0 when every mutant run was killed, 1 otherwise, 2 on bad usage or a baseline
# (the unmutated copy) whose named tests do not all pass.
#
# Each mutant is one block of "key: value" lines, blocks separated by blank lines, # comments:
#   name:  a short unique name
#   file:  path in the repository
#   from:  the exact text to replace (one line's worth; leading blanks of the value are kept
#          after the first space following the colon)
#   to:    what replaces it
#   tests: ctest names, blank-separated (whole names: unit_collect cli_test_export)
#   why:   what bug it stands for (free text, printed)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUT_LIST:-$ROOT/tests/mutants.txt}
TIMEOUT=${MUT_TIMEOUT:-120}
JOBS=${MUT_JOBS:-$(nproc)}

die() {
    echo "mutation: $*" >&2
    exit 2
}
[ -r "$LIST" ] || die "cannot read the mutant list '$LIST'"
command -v python3 >/dev/null || die "python3 is needed to apply the mutants"

# --- the list: names[i], files[i], froms[i], tos[i], testss[i] ------------------------------------
names=() files=() froms=() tos=() testss=()
parse() {
    local line key val n=-1 ln=0
    while IFS= read -r line || [ -n "$line" ]; do
        ln=$((ln + 1))
        case $line in '#'* | '') continue ;; esac
        key=${line%%:*}
        val=${line#*:}
        val=${val# }
        case $key in
        name)
            n=$((n + 1))
            names[n]=$val files[n]="" froms[n]="" tos[n]="" testss[n]=""
            ;;
        file) files[n]=$val ;;
        from) froms[n]=$val ;;
        to) tos[n]=$val ;;
        tests) testss[n]=$val ;;
        why) ;;
        *) die "$LIST:$ln: unknown key '$key' (name, file, from, to, tests, why)" ;;
        esac
        [ "$n" -ge 0 ] || die "$LIST:$ln: a mutant starts with 'name:'"
    done <"$LIST"
    local i
    for i in "${!names[@]}"; do
        if [ -z "${files[i]}" ] || [ -z "${froms[i]}" ] || [ -z "${testss[i]}" ]; then
            die "mutant '${names[i]}': file, from and tests are required"
        fi
    done
}
parse
[ "${#names[@]}" -gt 0 ] || die "no mutants in $LIST"

# the mutants to run: all, or those named on the command line
sel=()
if [ $# -eq 0 ]; then
    sel=("${!names[@]}")
else
    for want in "$@"; do
        found=""
        for i in "${!names[@]}"; do [ "${names[i]}" = "$want" ] && found=$i; done
        [ -n "$found" ] || die "no mutant named '$want' in $LIST"
        sel+=("$found")
    done
fi

# --- a copy of the tree (what git would commit, plus untracked files not ignored), built once ----
if [ -n "${MUT_WORK:-}" ]; then
    WORK=$MUT_WORK
    mkdir -p "$WORK" || die "cannot create $WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-mut.XXXXXX") || die "cannot create a work directory"
    trap 'rm -rf "$WORK"' EXIT
fi
SRC=$WORK/src
BUILD=$WORK/build
mkdir -p "$SRC" "$BUILD"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xpf - -C "$SRC") || die "cannot copy the tree into $SRC"
# the test S3 server's packages, when the checkout has them (saves an npm ci per run)
[ -d "$ROOT/tests/s3/node_modules" ] && [ ! -e "$SRC/tests/s3/node_modules" ] &&
    ln -s "$ROOT/tests/s3/node_modules" "$SRC/tests/s3/node_modules"

t0=$(date +%s)
echo "mutation: building the copy in $BUILD" >&2
cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$WORK/configure.log" 2>&1 ||
    { tail -20 "$WORK/configure.log" >&2; die "configure failed (log: $WORK/configure.log)"; }
cmake --build "$BUILD" -j"$JOBS" >"$WORK/build.log" 2>&1 ||
    { tail -20 "$WORK/build.log" >&2; die "the unmutated copy does not build"; }

# run_tests "NAMES": 0 all passed, 1 one failed, 3 one timed out; the log in $WORK/ctest.log
run_tests() {
    local re
    re="^($(echo "$1" | tr -s ' ' '|'))\$"
    (cd "$BUILD" && ctest -R "$re" --timeout "$TIMEOUT" -j"$JOBS" --output-on-failure \
        >"$WORK/ctest.log" 2>&1)
    local rc=$?
    local ran
    ran=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#' "$WORK/ctest.log")
    [ "$ran" -eq "$(echo "$1" | wc -w)" ] || { echo "mutation: '$1' names $ran ctest tests" >&2; return 2; }
    grep -q '\*\*\*Timeout' "$WORK/ctest.log" && return 3
    [ $rc -eq 0 ] && return 0
    return 1
}

# baseline: every named test passes on the unmutated copy
all_tests=$(for i in "${sel[@]}"; do echo "${testss[i]}"; done | tr ' ' '\n' | sort -u | tr '\n' ' ')
echo "mutation: baseline: $all_tests" >&2
run_tests "$all_tests"
case $? in
0) ;;
2) die "a test named in the list does not exist (ctest -N in $BUILD lists them)" ;;
*)
    grep -E 'Failed|Timeout|Not Run' "$WORK/ctest.log" >&2
    die "the unmutated copy fails its tests: kills would mean nothing (log: $WORK/ctest.log)"
    ;;
esac

# --- each mutant --------------------------------------------------------------------------------
apply() { # FILE FROM TO: replace the text, which must occur exactly once
    python3 - "$1" "$2" "$3" <<'EOF'
import sys
path, old, new = sys.argv[1:4]
text = open(path, encoding="utf-8").read()
n = text.count(old)
if n != 1:
    sys.exit(10 + min(n, 9))
open(path, "w", encoding="utf-8").write(text.replace(old, new))
EOF
}

killed=0 bad=0
printf '%-28s %-9s %6s  %s\n' MUTANT RESULT SECONDS "FAILED TESTS (of those named)"
for i in "${sel[@]}"; do
    f=$SRC/${files[i]}
    cp -p "$f" "$WORK/orig" || die "no file ${files[i]}"
    ts=$(date +%s.%N)
    failed="" result=""
    if ! apply "$f" "${froms[i]}" "${tos[i]}"; then
        result=STALE
    elif ! cmake --build "$BUILD" -j"$JOBS" >"$WORK/build.log" 2>&1; then
        result=NO-BUILD
    else
        run_tests "${testss[i]}"
        case $? in
        0) result=SURVIVED ;;
        1) result=killed ;;
        3) result=TIMEOUT ;;
        *) result=ERROR ;;
        esac
        failed=$(grep -oE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: [^ ]+ [.]*\*\*\*(Failed|Timeout|Exception)' \
            "$WORK/ctest.log" | awk '{ print $4 }' | sort | tr '\n' ' ')
    fi
    secs=$(awk -v a="$ts" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
    cp -p "$WORK/orig" "$f"
    touch "$f" # rebuilt with the next mutant
    [ "$result" = killed ] && killed=$((killed + 1)) || bad=$((bad + 1))
    printf '%-28s %-9s %6s  %s\n' "${names[i]}" "$result" "$secs" "$failed"
done
cmake --build "$BUILD" -j"$JOBS" >"$WORK/build.log" 2>&1 # leave the kept copy unmutated
echo "mutation: ${#sel[@]} mutants: $killed killed, $bad not; $(($(date +%s) - t0)) s in all" \
    "(build included)"
[ "$bad" -eq 0 ]
