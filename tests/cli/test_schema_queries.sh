#!/usr/bin/env bash
# The example SQL of docs/schema.md runs on a real recording. Every statement of the page's
# ```sql blocks (each after its "-- what it shows" comment line) is run with the sqlite3 CLI
# against a database rtrack just recorded: it must succeed without a message and return rows,
# and the three the page promises answer correctly: peak PSS per process (the mapping workers
# on top), CPU per minute (the job's CPU seconds), runs of one job (both runs of 'train'). The
# sqlite3 one-liners of the README and the man page's EXAMPLES run too.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
DOCS=$HERE/../../docs
if ! command -v "$SQLITE" >/dev/null; then
    skip "the sqlite3 CLI is not installed: the documented queries cannot run"
    finish
fi

# --- a real recording: a system-only run, then two runs of job 'train' ------------------------
# the tree: two workers mapping a 16 MiB file (PSS about 8 MiB each), two CPU burners
head -c 16777216 /dev/zero >map.bin
"$RTRACK" record --quiet --duration 0.5 --interval 0.1
check "record: run 1" "$?" 0
for i in 2 3; do
    "$RTRACK" run --quiet --interval 0.1 --job-name train -- sh -c \
        "'$RT_HELPERS/rt_mapper' map.bin 2 1.2 & '$RT_HELPERS/rt_spin' 1 2; wait"
    check "run $i (job train)" "$?" 0
done
check "three runs" "$(q rtrack.db 'SELECT count(*) FROM runs')" 3

# --- docs/schema.md ----------------------------------------------------------------------------
# "name<US>sql" per statement (US = \x1f; the statement's lines joined by \x1e)
awk '/^```sql/ { on = 1; name = ""; stmt = ""; next }
     /^```/ { on = 0; next }
     !on { next }
     /^-- / && stmt == "" { name = substr($0, 4); next }
     { stmt = stmt (stmt == "" ? "" : "\x1e") $0 }
     /; *$/ { printf "%s\x1f%s\n", name, stmt; stmt = ""; name = "" }' "$DOCS/schema.md" >queries.txt
check_range "docs/schema.md: example statements" "$(wc -l <queries.txt)" 5 50
for want in "peak PSS per process" "CPU per minute" "runs of one job"; do
    grep -qi "^[^$'\x1f']*$want" queries.txt && pass "docs/schema.md has '$want'" ||
        fail "docs/schema.md has no query '$want'"
done
# query NAME SQL : run it; rows on stdout (| separated), or fail
n=0
while IFS=$'\x1f' read -r name sql; do
    n=$((n + 1))
    sql=$(tr '\036' '\n' <<<"$sql")
    out=$("$SQLITE" -bail -batch -noheader rtrack.db "$sql" 2>err.txt)
    rc=$?
    check "schema.md query $n ($name): runs without error" "$rc:$(cat err.txt)" "0:"
    rows=$(grep -c . <<<"$out")
    if [ "$rows" -eq 0 ] && [[ $sql == *disk_samples* ]] && [ "$(q rtrack.db 'SELECT count(*) FROM disks')" = 0 ]; then
        skip "schema.md query $n ($name): no disk on this machine, no rows"
    else
        check_range "schema.md query $n ($name): returns rows" "$rows" 1 100000
    fi
    case $name in
    *"peak PSS per process"*)
        # the mapping workers (rt_mapper) have the highest PSS: 8 MiB each once both map the
        # 16 MiB file, up to 16 MiB while only one has
        top=$(head -1 <<<"$out")
        check "peak PSS per process: a mapping worker first" "$(cut -d'|' -f2 <<<"$top")" rt_mapper
        check_range "peak PSS per process: its peak (MiB)" "$(cut -d'|' -f3 <<<"$top")" 6 20
        check "peak PSS per process: the latest run's" \
            "$(grep -c '|rt_mapper|' <<<"$out"):$(grep -c '|rt_spin|' <<<"$out")" "3:3" ;;
    *"CPU per minute"*)
        # the burners spin 2 x 1 s of wall time and the 2 mapping workers run 1.2 s: at most 4
        # processes busy, and at most the machine's CPUs, over the run's wall time (on a busy
        # machine the job lasts longer and gets less of each)
        check "CPU per minute: one minute" "$(cut -d'|' -f1 <<<"$out" | tr '\n' ' ')" "0 "
        check_range "CPU per minute: the job's CPU seconds" "$(cut -d'|' -f2 <<<"$out")" 0.2 \
            "$(q rtrack.db "SELECT round(min(4, (SELECT max(ncores) FROM samples WHERE run_id = 3)) * (ended_at - started_at) + 0.1, 2) FROM runs WHERE id = 3")"
        jobcpu=$(q rtrack.db "SELECT round(sum(proc_utime_s + proc_stime_s), 1) FROM samples WHERE run_id = 3")
        check "CPU per minute: adds up to the run's CPU" "$(cut -d'|' -f2 <<<"$out")" "$jobcpu" ;;
    *"runs of one job"*)
        check "runs of one job: both runs of train, newest first" \
            "$(cut -d'|' -f1,4,5 <<<"$out" | tr '\n' ' ')" "3|0|finished 2|0|finished " ;;
    esac
done <queries.txt

# --- the README's and the man page's sqlite3 one-liners ------------------------------------------
# sqlite3 rtrack.db "..." (possibly over several lines) in README.md; .EX examples in rtrack.1
{
    awk '/sqlite3 rtrack\.db "/ { on = 1; s = $0; sub(/.*sqlite3 rtrack\.db "/, "", s) }
         on && !/sqlite3 rtrack\.db "/ { s = s " " $0 }
         on && (s ~ /"/) { sub(/".*/, "", s); print s; on = 0 }' "$HERE/../../README.md"
    sed 's/\\-/-/g' "$DOCS/rtrack.1" |
        awk '/sqlite3 rtrack\.db "/ { on = 1; s = $0; sub(/.*sqlite3 rtrack\.db "/, "", s) }
             on && !/sqlite3 rtrack\.db "/ { s = s " " $0 }
             on && (s ~ /"/) { sub(/".*/, "", s); print s; on = 0 }'
} >oneliners.txt
check_range "README and man page: sqlite3 examples" "$(wc -l <oneliners.txt)" 1 20
while IFS= read -r sql; do
    out=$("$SQLITE" -bail -batch rtrack.db "$sql" 2>err.txt)
    check "one-liner '${sql:0:60}…': runs without error" "$?:$(cat err.txt)" "0:"
    check_range "one-liner '${sql:0:60}…': returns rows" "$(grep -c . <<<"$out")" 1 100000
done <oneliners.txt
finish
