#!/usr/bin/env bash
# The examples of docs/usage.md and the README stay true.
#
# docs/usage.md: every line starting with "$ " inside a ``` block is run, in document order, in
# one temporary directory, with the rtrack under test first on PATH (the examples build on each
# other: run 1 is the first `rtrack run`). Each must exit 0, or N when the line ends with
# "# exit status N". The output shown under it (up to the next "$ " line or the block's end) is
# the real output of one run on one machine: times, sizes and ids differ from run to run, so
# the first line is compared with digits and runs of blanks folded ("2.71 s" = "13.40 s"); a
# block shown without output must print nothing. Lines that need a server (they set
# SENTINEL_API_TOKEN) are not run. RT_DOCS_SHOW=1 prints each command's real output, for
# updating the page.
#
# README.md: every option in the tour's `rtrack ...` lines is one that `rtrack CMD --help` lists.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
DOCS=$HERE/../../docs
README=$HERE/../../README.md
PATH=$(dirname "$RTRACK"):$PATH
export PATH
command -v rtrack >/dev/null && [ "$(command -v rtrack)" -ef "$RTRACK" ] &&
    pass "rtrack on PATH is the one under test" || fail "rtrack on PATH is the one under test"

# examples FILE : "command<US>expected exit<US>first output line<US>number of output lines" per
# example (US = \x1f)
examples() {
    awk 'function flush() { if (cmd != "") printf "%s\x1f%s\x1f%s\x1f%d\n", cmd, rc, first, n; cmd = "" }
         /^```/ { flush(); inblock = !inblock; next }
         !inblock { next }
         /^\$ / { flush(); cmd = substr($0, 3); rc = 0; first = ""; n = 0
                  if (match(cmd, /# exit status [0-9]+ *$/)) { rc = substr(cmd, RSTART + 14) + 0 }
                  next }
         cmd != "" { if (n == 0) first = $0; n++ }
         END { flush() }' "$1"
}
# fold : digits to '#', blanks to one space, trailing blanks dropped
fold() { sed -E 's/[0-9]+/#/g; s/[[:space:]]+/ /g; s/ $//'; }

examples "$DOCS/usage.md" >examples.txt
check_range "docs/usage.md has examples" "$(wc -l <examples.txt)" 10 200
i=0
while IFS=$'\x1f' read -r cmd rc first n; do
    i=$((i + 1))
    if [[ $cmd == *SENTINEL_API_TOKEN=* ]]; then
        skip "usage.md example $i needs a Sentinel server: $cmd"
        continue
    fi
    bash -c "$cmd" </dev/null >out.$i 2>&1
    got=$?
    if [ -n "${RT_DOCS_SHOW:-}" ]; then
        printf '$ %s\n' "$cmd"
        cat out.$i
    fi
    check "usage.md: '$cmd': exit status" "$got" "$rc"
    if [ "$n" -eq 0 ]; then
        check "usage.md: '$cmd': prints nothing" "$(wc -c <out.$i)" 0
    else
        check "usage.md: '$cmd': first line" "$(head -1 out.$i | fold)" "$(fold <<<"$first")"
    fi
done <examples.txt
# the commands of the help section are shown whole: their output is exact
for c in "rtrack help runs"; do
    want=$(awk -v c="\$ $c" '$0 == c { on = 1; next } on && (/^\$ / || /^```/) { exit } on' "$DOCS/usage.md")
    check "usage.md: '$c' is shown whole" "$(bash -c "$c" 2>&1)" "$want"
done

# --- README: the options of the tour exist ------------------------------------------------------
# (VAR=value before the command is dropped)
tour=$(awk '/^```sh/ { on = 1; next } /^```/ { on = 0 }
            on { while (sub(/^[A-Z_]+=[^ ]* /, "")) ; if (/^rtrack [a-z]/) print }' "$README")
check_range "README: tour lines" "$(wc -l <<<"$tour")" 5 20
while read -r _ cmd rest; do
    if [ "$cmd" = help ]; then
        topic=$(sed 's/ *#.*//' <<<"$rest")
        "$RTRACK" help $topic >/dev/null 2>&1 && pass "README: rtrack help $topic" ||
            fail "README: 'rtrack help $topic' fails"
        continue
    fi
    opts=$(sed 's/ -- .*//; s/#.*//' <<<"$rest" | grep -oE -- '(^| )--?[a-zA-Z][a-z0-9-]*' | tr -d ' ')
    help=$("$RTRACK" "$cmd" --help 2>&1) || { fail "README: 'rtrack $cmd' is a command"; continue; }
    for o in $opts; do
        grep -qE -- "(^|[ ,])$o([ ,=]|$)" <<<"$help" && pass "README: rtrack $cmd $o" ||
            fail "README: 'rtrack $cmd' has no option $o"
    done
done <<<"$tour"
finish
