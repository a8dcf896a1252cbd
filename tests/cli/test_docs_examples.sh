#!/usr/bin/env bash
# The examples of docs/usage.md and the README stay true.
#
# docs/usage.md: every line starting with "$ " inside a ``` block is run, in document order, in
# one temporary directory, with the rtrack under test first on PATH (the examples build on each
# other: run 1 is the first `rtrack run`). Each must exit 0, or N when the line ends with
# "# exit status N". The output shown under it (up to the next "$ " line or the block's end) is
# the real output of one run on one machine: times, sizes and ids differ from run to run, so
# the first line is compared with digits and runs of blanks folded ("2.71 s" = "13.40 s"); a
# block shown without output must print nothing. Lines that set SENTINEL_API_TOKEN run as the
# page says: against the mock Sentinel API (tests/helpers/sentinel_mock.py, SENTINEL_API_URL),
# with a test token for the "…", in a directory of their own whose rtrack.db holds one recording
# of the compress job; the mock must have seen that run registered and finished once, inline.
# RT_DOCS_SHOW=1 prints each command's real output, for updating the page.
#
# README.md: every option in the tour's `rtrack ...` lines is one that `rtrack CMD --help` lists;
# the quick start is two commands and ends with the line that puts the binary on PATH; an
# example uses the name resource-tracker, with options that name takes.
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK=$HERE/../helpers/sentinel_mock.py
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

# the Sentinel examples' place: the mock API and a database of its own with one recording of the
# compress job (several samples at 0.25 s: "N samples" in the message)
TOKEN=tok-$RANDOM-docs
mkdir sentinel
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
wait_file mock.port 10 || fail "the mock Sentinel API did not start"
API=http://127.0.0.1:$(head -n 1 mock.port)
(cd sentinel && RTRACK_CLOUD_DISCOVERY=0 "$RTRACK" run --quiet --interval 0.25 --job-name compress -- \
    sh -c 'head -c 16M /dev/urandom | gzip -1 > data.gz; sleep 1')
check "sentinel examples: their database holds one run, of several samples" \
    "$(q sentinel/rtrack.db "SELECT count(*) || ',' || (SELECT count(*) > 4 FROM samples) FROM runs")" "1,1"

examples "$DOCS/usage.md" >examples.txt
check_range "docs/usage.md has examples" "$(wc -l <examples.txt)" 10 200
i=0
n_sentinel=0
while IFS=$'\x1f' read -r cmd rc first n; do
    i=$((i + 1))
    if [[ $cmd == *SENTINEL_API_TOKEN=* ]]; then
        n_sentinel=$((n_sentinel + 1))
        (cd sentinel && SENTINEL_API_URL=$API bash -c "${cmd//…/$TOKEN}") </dev/null >out.$i 2>&1
    else
        bash -c "$cmd" </dev/null >out.$i 2>&1
    fi
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
check "usage.md: the SENTINEL_API_TOKEN examples" "$n_sentinel" 2
# what the mock saw: the run registered once and finished once, inline, with the test token
check "usage.md: the Sentinel examples reached the mock: one run registered, finished once inline" \
    "$(python3 -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
fin = [json.loads(x["body"]) for x in r if x["path"].endswith("/finish")]
print(sum(x["method"] + " " + x["path"] == "POST /runs" for x in r), len(fin),
      [f["data_source"] for f in fin], all(x["headers"].get("authorization") == "Bearer " + sys.argv[2] for x in r))' \
        "$T/api.log" "$TOKEN")" "1 1 ['inline'] True"
check "usage.md: the token is in no output" "$(cat out.* | grep -c -- "$TOKEN")" 0

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

# --- README: the quick start, and rtrack's second name ------------------------------------------
# the quick start is two commands (the demo, the tests), and it ends with the one line that puts
# the binary it built on PATH for the tour (demo.sh says the same at its end)
quick=$(awk '/^## Quick start/ { on = 1; next } on && /^##/ { exit } on' "$README")
check "README: the quick start's commands" \
    "$(awk '/^```sh/ { on = 1; next } /^```/ { on = 0 } on && /^[a-z]/ { print $1, $2 }' <<<"$quick" | tr '\n' ';')" \
    "bash scripts/demo.sh;bash scripts/test.sh;"
check "README: the quick start ends with the line that puts build/ on PATH" \
    "$(awk 'NF { last = $0 } END { print last }' <<<"$quick" | grep -o 'export PATH=\$PWD/build:\$PATH')" \
    'export PATH=$PWD/build:$PATH'
check "demo.sh: ends by saying where the binary is and how to put it on PATH" \
    "$(tail -5 "$HERE/../../scripts/demo.sh" | grep -c 'export PATH=')" 1
# an example under the name resource-tracker, whose options that name takes
ln -s "$RTRACK" resource-tracker
rt_lines=$(awk '/^```sh/ { on = 1; next } /^```/ { on = 0 } on && /^resource-tracker / { print }' "$README")
check_range "README: resource-tracker examples" "$(grep -c . <<<"$rt_lines")" 1 5
rt_help=$(./resource-tracker --help 2>&1)
while read -r _ rest; do
    for o in $(sed 's/ -- .*//; s/#.*//' <<<"$rest" | grep -oE -- '(^| )--?[a-zA-Z][a-z0-9-]*' | tr -d ' '); do
        grep -qE -- "(^|[ ,])$o([ ,=]|$)" <<<"$rt_help" && pass "README: resource-tracker $o" ||
            fail "README: 'resource-tracker' has no option $o"
    done
done <<<"$rt_lines"
finish
