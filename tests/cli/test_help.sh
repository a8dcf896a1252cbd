#!/usr/bin/env bash
# Help and version: `rtrack --help`, `rtrack help [CMD]`, `rtrack CMD --help` (the same text, on
# stdout, exit 0, at most 80 columns), every option of a command's help is one the command
# accepts and carries its environment variable and default as docs/usage.md's table says,
# `rtrack --version` (first line `rtrack X.Y.Z`, then the commit, SQLite and the backends), and
# the suggestion for a misspelt command or option (exit 2).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
USAGE_MD=$HERE/../../docs/usage.md
# the command table (src/cli/commands.c) as `rtrack --help` lists it: what the loops below go
# through; the list itself is checked against the commands rtrack must have
table_commands() { "$RTRACK" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'; }
COMMANDS=$(table_commands | tr '\n' ' ')

# --- rtrack --help / -h / help ---------------------------------------------------------------
"$RTRACK" --help >top.out 2>top.err
check "--help: exit 0, nothing on stderr" "$?:$(wc -c <top.err)" "0:0"
check "--help: usage first" "$(head -1 top.out)" "usage: rtrack <command> [options]"
listed=$(awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' top.out | tr '\n' ' ')
check "--help lists every command, in order" "$listed" "run record export runs summary report upload merge "
for w in "rtrack help <command>" "rtrack <command> --help" "--version"; do
    grep -qF -- "$w" top.out && pass "--help mentions '$w'" || fail "--help mentions '$w'"
done
check "-h is --help" "$("$RTRACK" -h | cmp -s - top.out && echo same)" same
check "help is --help" "$("$RTRACK" help | cmp -s - top.out && echo same)" same
check "help help is --help" "$("$RTRACK" help help | cmp -s - top.out && echo same)" same
check "help --help is --help" "$("$RTRACK" help --help | cmp -s - top.out && echo same)" same
check "--help: at most 80 columns" "$(awk 'length($0) > 80' top.out)" ""

# --- per command: help CMD = CMD --help = CMD -h --------------------------------------------------
# entries FILE : one line per option of a help text, wrapped lines joined: "--long<TAB>text"
entries() {
    awk '/^  (-[A-Za-z0-9], )?--[a-z]/ || /^      --[a-z]/ {
            if (e != "") print e
            match($0, /--[a-z0-9-]+/); e = substr($0, RSTART, RLENGTH) "\t" $0; next }
         /^                           / && e != "" { sub(/^ +/, " "); e = e $0; next }
         { if (e != "") print e; e = "" }
         END { if (e != "") print e }' "$1"
}
for cmd in $COMMANDS; do
    "$RTRACK" "$cmd" --help >h.out 2>h.err
    check "$cmd --help: exit 0, nothing on stderr" "$?:$(wc -c <h.err)" "0:0"
    check "$cmd --help: usage first" "$(head -1 h.out | grep -c "^usage: rtrack $cmd\b")" 1
    check "help $cmd: the same text" "$("$RTRACK" help "$cmd" 2>&1 | cmp -s - h.out && echo same)" same
    check "$cmd -h: the same text" "$("$RTRACK" "$cmd" -h 2>&1 | cmp -s - h.out && echo same)" same
    check "$cmd --help: at most 80 columns" "$(awk 'length($0) > 80' h.out)" ""
    check "$cmd --help: an options section" "$(grep -c '^options:$' h.out)" 1
    entries h.out >"entries.$cmd"
    check "$cmd --help: --help is listed" "$(grep -c '^--help	' "entries.$cmd")" 1
    # the option lines are the command's table (`rtrack help --options CMD`, which the
    # completions' tests hold the completion files to), in its order
    check "$cmd --help: the options of its table, in order" "$(cut -f1 "entries.$cmd" | tr '\n' ' ')" \
        "$("$RTRACK" help --options "$cmd" | cut -f1 | tr '\n' ' ')"
    # --db everywhere (but merge, which names its files as arguments): RTRACK_DB, rtrack.db
    db=$(grep '^--db	' "entries.$cmd")
    [ "$cmd" = merge ] && db="(default rtrack.db) [env RTRACK_DB]"
    [[ $db == *"(default rtrack.db)"*"[env RTRACK_DB]"* ]] && pass "$cmd --db: default and env" ||
        fail "$cmd --db: default and env: '$db'"
    # every option the help lists is one the command knows (no 'unknown option'); a value-taking
    # one is given without its value, so nothing runs (record --quiet etc. stop at once)
    for opt in $(cut -f1 "entries.$cmd"); do
        [ "$opt" = --help ] && continue
        RTRACK_DURATION=0.05 SENTINEL_API_TOKEN= timeout 20 "$RTRACK" "$cmd" "$opt" \
            </dev/null >/dev/null 2>opt.err
        grep -q "unknown option" opt.err && fail "$cmd: '$opt' of the help is unknown: $(cat opt.err)" ||
            pass "$cmd: '$opt' is accepted"
    done
    rm -f rtrack.db rtrack.db-wal rtrack.db-shm
done
check "rtrack help CMD creates no database" "$(ls ./*.db 2>/dev/null | wc -l)" 0
ln -s "$RTRACK" resource-tracker
./resource-tracker --help >rt.out
entries rt.out >entries.rt
check "resource-tracker --help: the options of its table, in order" "$(cut -f1 entries.rt | tr '\n' ' ')" \
    "$("$RTRACK" help --options resource-tracker | cut -f1 | tr '\n' ' ')"
"$RTRACK" help --options nosuch >o.out 2>o.err
check "help --options of no command: exit 2, nothing on stdout" "$?:$(wc -c <o.out)" "2:0"

# --- run and record: the environment variable and default of each option, as docs/usage.md ---
# the "## Options" table: | `-i, --interval SECS` — ... | `RTRACK_INTERVAL` | config | default |
awk '/^## Options/ { on = 1; next } on && /^## / { on = 0 } on && /^\| `/' "$USAGE_MD" |
    sed 's/\\|/\//g' >table.md  # json\|csv: an escaped | inside a cell
check_range "docs/usage.md: the options table has rows" "$(wc -l <table.md)" 20 40
while IFS='|' read -r _ opt env _ default _; do
    long=$(grep -oE -- '--[a-z0-9-]+' <<<"$opt" | head -1)
    envvar=$(grep -oE '\b(RTRACK|TRACKER|SENTINEL)_[A-Z_]+' <<<"$env" | head -1)
    default=$(sed 's/^ *//; s/ *$//' <<<"$default")
    for cmd in run record; do
        entry=$(grep -P "^\Q$long\E\t" "entries.$cmd" | cut -f2)
        if [ -z "$entry" ]; then
            # (record) rows are record only, (run) rows run only
            [[ $opt == *"(record)"* && $cmd == run ]] && continue
            [[ $opt == *"(run)"* && $cmd == record ]] && continue
            fail "$cmd --help lists $long (docs/usage.md has it)"
            continue
        fi
        if [ -n "$envvar" ]; then
            [[ $entry == *"[env $envvar]"* ]] && pass "$cmd $long: [env $envvar]" ||
                fail "$cmd $long: [env $envvar] missing in '$entry'"
        else
            [[ $entry != *"[env "* ]] && pass "$cmd $long: no environment variable" ||
                fail "$cmd $long: the docs name no variable, the help does: '$entry'"
        fi
        # a value-taking option with a documented default says its default
        if [ -n "$default" ] && [[ $opt == *"$long "[A-Z]* || $opt == *"$long json"* ]]; then
            [[ $entry == *default* ]] && pass "$cmd $long: says its default" ||
                fail "$cmd $long: no default in '$entry' (docs: $default)"
        fi
    done
done <table.md
# and the other way: every [env X] of the help is in the docs' table
for cmd in run record; do
    for v in $(grep -oE '\[env [A-Z_]+\]' "entries.$cmd" | tr -d '[]' | awk '{ print $2 }' | sort -u); do
        grep -q "\`$v\`" table.md && pass "$cmd: $v is in docs/usage.md" ||
            fail "$cmd: $v of the help is not in docs/usage.md's options table"
    done
done

# --- --version -------------------------------------------------------------------------------------
"$RTRACK" --version >v.out 2>v.err
check "--version: exit 0, nothing on stderr" "$?:$(wc -c <v.err)" "0:0"
check "--version: first line is 'rtrack X.Y.Z'" "$(head -1 v.out | grep -cE '^rtrack [0-9]+\.[0-9]+\.[0-9]+$')" 1
project=$(sed -n 's/^project(rtrack VERSION \([0-9.]*\).*/\1/p' "$HERE/../../CMakeLists.txt")
check "--version: the project's version" "$(head -1 v.out)" "rtrack $project"
check "--version: the commit" "$(grep -cE '^commit: ([0-9a-f]{7,40}|unknown)$' v.out)" 1
check "--version: SQLite's version" "$(grep -cE '^sqlite: 3\.[0-9]+\.[0-9]+' v.out)" 1
check "--version: the NVML backend" "$(grep -c '^nvml: built in (loaded with dlopen at run time); ' v.out)" 1
check "--version: the AMD backend" "$(grep -cE '^amd: built in \(sysfs and DRM fdinfo\); [0-9]+ AMD GPUs? found$' v.out)" 1
check "--version: the upload backend" \
    "$(grep -cE '^upload: built in \(Sentinel API and S3\); libcurl [0-9.]+.*, libcrypto [0-9].*, zlib [0-9.]+' v.out)" 1
check "-V is --version" "$("$RTRACK" -V | cmp -s - v.out && echo same)" same
check "version is --version" "$("$RTRACK" version | cmp -s - v.out && echo same)" same
if command -v sqlite3 >/dev/null && ldd "$RTRACK" 2>/dev/null | grep -q libsqlite3; then
    # the CLI and rtrack use the same shared library on a distribution's build
    lib=$(sqlite3 :memory: 'SELECT sqlite_version()')
    check "--version: the SQLite library rtrack runs with" "$(sed -n 's/^sqlite: \([0-9.]*\).*/\1/p' v.out)" "$lib"
fi
if [ -n "${RT_FAKE_NVML:-}" ] && [ -f "$RT_FAKE_NVML" ]; then
    out=$(RTRACK_NVML_LIBRARY=$RT_FAKE_NVML "$RTRACK" --version | grep '^nvml: ')
    check "--version: NVML found (RTRACK_NVML_LIBRARY)" "$out" \
        "nvml: built in (loaded with dlopen at run time); library found: $(readlink -f "$RT_FAKE_NVML")"
else
    skip "RT_FAKE_NVML not set: the NVML library found is not checked"
fi
RTRACK_NVML_LIBRARY=$T/no-such-lib.so "$RTRACK" --version >vn.out 2>vn.err
check "--version: a missing RTRACK_NVML_LIBRARY still exits 0" "$?" 0
check "--version: says the library cannot be loaded" \
    "$(grep -c "^nvml: .*cannot load '$T/no-such-lib.so' (RTRACK_NVML_LIBRARY)" vn.out)" 1
check "--version creates no database" "$(ls ./*.db 2>/dev/null | wc -l)" 0

# --- misspelt commands and options: a suggestion, exit 2, nothing on stdout ---------------------
# suggest NAME EXPECTED ARGS... : `rtrack ARGS` exits 2 with one stderr line containing EXPECTED
suggest() {
    local name=$1 want=$2; shift 2
    "$RTRACK" "$@" >s.out 2>s.err
    local rc=$?
    check "$name: exit 2, nothing on stdout, one line on stderr" "$rc:$(wc -c <s.out):$(wc -l <s.err)" "2:0:1"
    grep -qF -- "$want" s.err && pass "$name: says \"$want\"" || fail "$name: '$(cat s.err)' lacks \"$want\""
}
suggest "exprot" "rtrack: unknown command 'exprot'; did you mean 'export'?" exprot
suggest "sumary" "did you mean 'summary'?" sumary --db x.db
suggest "sum (a prefix)" "did you mean 'summary'?" sum
suggest "re (two commands begin so)" "did you mean 'record' or 'report'?" re
suggest "rus (two as near)" "did you mean 'run' or 'runs'?" rus
suggest "uplaod" "did you mean 'upload'?" uplaod
suggest "nothing near" "rtrack: unknown command 'frobnicate' (see 'rtrack --help')" frobnicate
suggest "help exprot" "did you mean 'export'?" help exprot
suggest "--versoin" "rtrack: unknown option '--versoin'; did you mean '--version'?" --versoin
suggest "--hlep" "did you mean '--help'?" --hlep
suggest "an option before the command" "unknown option '--db' (options go after the command" --db x.db runs
# a program where a command goes: the '--' that makes it `rtrack run`'s shorthand
suggest "a program with arguments" \
    "rtrack: unknown command 'python3'; to run it under rtrack, put '--' before it: rtrack -- python3 train.py" \
    python3 train.py
suggest "a program on PATH" "rtrack: unknown command 'ls'; to run it under rtrack, put '--' before it: rtrack -- ls" ls
printf 'true\n' >job.sh
suggest "a file" "rtrack: unknown command './job.sh'; to run it under rtrack, put '--' before it: rtrack -- ./job.sh" ./job.sh
suggest "arguments quoted as a shell takes them" "put '--' before it: rtrack -- sh -c 'touch ran.marker'" \
    sh -c 'touch ran.marker'
check "the program was not run" "$([ -e ran.marker ] && echo ran || echo no)" no
suggest "run's options before a program" \
    "rtrack: unknown command 'python3' after run's options; to run it under rtrack, put '--' before it: rtrack --db x.db -- python3 train.py" \
    --db x.db python3 train.py
suggest "short options and flags before a program" "put '--' before it: rtrack -i 0.5 -q --job-name=b -- make -j2" \
    -i 0.5 -q --job-name=b make -j2
suggest "a misspelt command after options" "unknown command 'sumary'; did you mean 'summary'?" --db x.db sumary
suggest "a misspelt command with arguments" "unknown command 'exprot'; did you mean 'export'?" exprot --run 1
"$RTRACK" >none.out 2>none.err
check "no command: exit 2, the usage on stderr" "$?:$(head -1 none.err):$(wc -c <none.out)" \
    "2:usage: rtrack <command> [options]:0"
check "misspellings create no database" "$(ls ./*.db 2>/dev/null | wc -l)" 0
finish
