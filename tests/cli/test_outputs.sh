#!/usr/bin/env bash
# Output files: nothing overwritten that was not asked for, nothing written silently wrong.
# - export -o, report -o and the live -o of run and record naming the database, its -wal, -shm
#   or -journal (the same file, a hard link, a link to it, another spelling of the path, a name
#   not created yet) are refused with exit 2 before anything is opened or started, the database
#   byte-identical;
# - a regular file is replaced through an unguessable temporary file (links planted at the old
#   predictable names are not followed); a device, a FIFO, /dev/stdout are written as they are,
#   never replaced, and their write errors reported (/dev/full: exit 1 naming the path); a
#   symbolic link is followed when its owner is the caller or root, refused otherwise, refused
#   when it points nowhere; a directory is refused;
# - new output files are 0600 whatever the umask; a replaced file keeps its mode and owner;
# - every write to stdout is checked (runs, summary, upload --dry-run, every help, --version,
#   export, report: a message and exit 1; usage errors stay 2), and an export that cannot read
#   the rest of the database says after which row its output ends.
# The device checks use device nodes made here (as root), else /dev/null and /dev/full, which
# are restored if a regression replaced them.
. "$(dirname "$0")/lib.sh" "$1"
ROOT=0
[ "$(id -u)" = 0 ] && ROOT=1

"$RTRACK" run --quiet --db x.db -- true
"$RTRACK" run --quiet --db x.db -- true
"$RTRACK" export --db x.db >exp.csv
check "setup: two runs, the latest exported" "$(wc -l <exp.csv)" 2
cp x.db x.orig

# refused CHECK-NAME EXPECTED-MESSAGE-PART COMMAND... : exit 2, the message, x.db untouched
refused() {
    local name=$1 msg=$2
    shift 2
    "$@" >out.txt 2>err.txt
    local rc=$?
    check "$name: exit 2" "$rc" 2
    if grep -q -- "$msg" err.txt; then pass "$name: says so"; else fail "$name: stderr: $(cat err.txt)"; fi
    if cmp -s x.db x.orig; then pass "$name: the database is untouched"; else fail "$name: x.db changed"; cp x.orig x.db; fi
}

# --- 1. the database (or its -wal, -shm, -journal) as an output -----------------------------------
refused "export -o the database" "the output 'x.db' is the database 'x.db'; refusing" \
    "$RTRACK" export --db x.db -o x.db
for s in wal shm journal; do
    before=$(ls -l --time-style=+%s.%N x.db* | md5sum)
    refused "export -o x.db-$s" "is the .* of the database 'x.db'" "$RTRACK" export --db x.db -o "x.db-$s"
    check "export -o x.db-$s: the database's files as they were" "$(ls -l --time-style=+%s.%N x.db* | md5sum)" "$before"
done
refused "export -o the database by its absolute path" "is the database" \
    "$RTRACK" export --db x.db -o "$PWD/x.db"
mkdir sub
refused "export -o the database through sub/.." "is the database" \
    "$RTRACK" export --db x.db -o sub/../x.db
ln x.db hard.db
refused "export -o a hard link of the database" "the output 'hard.db' is the database" \
    "$RTRACK" export --db x.db -o hard.db
ln -s x.db own.link
refused "export -o a link to the database" "is the database" "$RTRACK" export --db x.db -o own.link
ln -s x.db-wal wal.link # points nowhere now; opening the database may create x.db-wal
refused "export -o a link to the -wal not there yet" "write-ahead log" \
    "$RTRACK" export --db x.db -o wal.link
ln -s x.db db.link
refused "--db a link: -o the target's -wal" "write-ahead log" "$RTRACK" export --db db.link -o x.db-wal
refused "report -o the database" "the output 'x.db' is the database" \
    "$RTRACK" report --db x.db -o x.db
refused "export to stdout appending to the database" "stdout is the database" \
    sh -c '"$0" export --db x.db >>x.db' "$RTRACK"
refused "export -o /dev/stdout appending to the database" "'/dev/stdout' is the database" \
    sh -c '"$0" export --db x.db -o /dev/stdout >>x.db' "$RTRACK"
refused "run -o the database" "run: the output 'x.db' is the database" \
    "$RTRACK" run --db x.db -o x.db -- touch started
check "run -o the database: the job did not start" "$(ls started 2>/dev/null)" ""
refused "run -o x.db-wal" "write-ahead log" "$RTRACK" run --db x.db -o x.db-wal -- touch started
check "run -o x.db-wal: the job did not start" "$(ls started 2>/dev/null)" ""
refused "TRACKER_OUTPUT=the database" "is the database" \
    env TRACKER_OUTPUT=x.db "$RTRACK" run --db x.db -- touch started
refused "record -o x.db-shm" "record: the output 'x.db-shm' is the shared-memory file" \
    "$RTRACK" record --db x.db -o x.db-shm --duration 1
"$RTRACK" run --db new.db -o "$PWD/new.db" -- touch started 2>err.txt
check "run -o a new database's own path: exit 2" "$?" 2
check "run -o a new database's own path: nothing created, no job" "$(ls new.db started 2>/dev/null)" ""
"$RTRACK" export --db x.db -o y.csv
check "export -o another file still works" "$?" 0
cmp -s y.csv exp.csv && pass "export -o y.csv: the export" || fail "export -o y.csv: differs"

# --- 3. the temporary file cannot be predicted ---------------------------------------------------
echo "victim" >victim
last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo $$)
for i in $(seq 1 400); do ln -s victim "planted.csv.tmp-$((last + i))"; done
"$RTRACK" export --db x.db -o planted.csv
check "planted links at planted.csv.tmp-PID: export exit 0" "$?" 0
check "planted links: the file they point to is untouched" "$(cat victim)" victim
cmp -s planted.csv exp.csv && pass "planted links: the export is in place" || fail "planted: differs"
check "no temporary file left behind" "$(ls | grep -c '\.tmp-' )" 400
rm -f planted.csv.tmp-*
"$RTRACK" export --db x.db -o nodir/x.csv 2>err.txt
check "a missing directory: exit 1" "$?" 1
check "a missing directory: says which" "$(grep -c "directory 'nodir' does not exist" err.txt)" 1

# --- 4. what the path names: devices, FIFOs, /dev/stdout, links, directories ---------------------
NULLDEV=/dev/null FULLDEV=/dev/full
if [ $ROOT = 1 ] && mknod null.dev c 1 3 2>/dev/null && mknod full.dev c 1 7 2>/dev/null &&
    echo x >null.dev 2>/dev/null; then
    NULLDEV=$PWD/null.dev FULLDEV=$PWD/full.dev
fi
# restore_dev NAME MAJOR MINOR : a regression must not leave the machine without /dev/null
restore_dev() {
    if [ ! -c "$1" ] && [ $ROOT = 1 ]; then rm -f "$1" && mknod -m 666 "$1" c "$2" "$3"; fi
}
"$RTRACK" export --db x.db -o "$NULLDEV" 2>err.txt
rc=$?
[ -c "$NULLDEV" ] && pass "export -o $NULLDEV: still a character device" ||
    fail "export -o $NULLDEV replaced the device"
restore_dev /dev/null 1 3
check "export -o $NULLDEV: exit 0" "$rc" 0
"$RTRACK" export --db x.db -o "$FULLDEV" 2>err.txt
rc=$?
[ -c "$FULLDEV" ] && pass "export -o $FULLDEV: still a character device" ||
    fail "export -o $FULLDEV replaced the device"
restore_dev /dev/full 1 7
check "export -o $FULLDEV: exit 1" "$rc" 1
check "export -o $FULLDEV: names it" "$(grep -c "cannot write '$FULLDEV': no space left on device" err.txt)" 1
"$RTRACK" report --db x.db -o "$FULLDEV" 2>err.txt
check "report -o $FULLDEV: exit 1" "$?" 1
check "report -o $FULLDEV: names it" "$(grep -c "cannot write '$FULLDEV'" err.txt)" 1
restore_dev /dev/full 1 7

"$RTRACK" export --db x.db -o /dev/stdout >got.csv
check "export -o /dev/stdout: exit 0" "$?" 0
[ -L /dev/stdout ] && pass "/dev/stdout is still a link" || {
    fail "/dev/stdout was replaced"
    [ $ROOT = 1 ] && rm -f /dev/stdout && ln -s /proc/self/fd/1 /dev/stdout
}
cmp -s got.csv exp.csv && pass "export -o /dev/stdout: the export on stdout" || fail "/dev/stdout: differs"
echo first >app.csv
"$RTRACK" export --db x.db -o /dev/stdout >>app.csv
check "export -o /dev/stdout >>file: appended" "$(head -1 app.csv) $(wc -l <app.csv)" "first 3"
check "export -o /dev/fd/1" "$("$RTRACK" export --db x.db -o /dev/fd/1 | wc -l)" 2
check "export -o /proc/self/fd/1" "$("$RTRACK" export --db x.db -o /proc/self/fd/1 | wc -l)" 2
"$RTRACK" export --db x.db -o /dev/stdout >&- 2>err.txt
check "export -o /dev/stdout, stdout closed: exit 1" "$?" 1
check "export -o /dev/stdout, stdout closed: says so" "$(grep -c 'descriptor 1 is not open' err.txt)" 1

mkfifo pipe
timeout 60 cat pipe >fifo.csv & # a regression that replaces the FIFO must not hang the suite
"$RTRACK" export --db x.db -o pipe
check "export -o a FIFO: exit 0" "$?" 0
wait
[ -p pipe ] && pass "export -o a FIFO: still a FIFO" || fail "export -o a FIFO: replaced"
cmp -s fifo.csv exp.csv && pass "export -o a FIFO: the reader got the export" || fail "FIFO: differs"
timeout 60 cat pipe >fifo.jsonl &
"$RTRACK" run --db live.db -o pipe -- true
check "run -o a FIFO: exit 0" "$?" 0
wait
[ -p pipe ] && pass "run -o a FIFO: still a FIFO" || fail "run -o a FIFO: replaced"
check "run -o a FIFO: the reader got the samples" "$(grep -c timestamp fifo.jsonl)" "$(q live.db "SELECT count(*) FROM samples WHERE run_id = 1 AND seq > 0")"

echo old >target.csv
chmod 640 target.csv
ln -s target.csv link.csv
"$RTRACK" export --db x.db -o link.csv
check "export -o own link: exit 0" "$?" 0
[ -L link.csv ] && pass "export -o own link: still a link" || fail "export -o own link: replaced the link"
cmp -s target.csv exp.csv && pass "export -o own link: the target written" || fail "own link: target"
check "export -o own link: the target's mode kept" "$(stat -c %a target.csv)" 640
echo old >target.jsonl
ln -s target.jsonl link.jsonl
"$RTRACK" run --db live.db -o link.jsonl -- true
[ -L link.jsonl ] && pass "run -o own link: still a link" || fail "run -o own link: replaced"
check "run -o own link: the target has the samples" "$(grep -c timestamp target.jsonl)" "$(q live.db "SELECT count(*) FROM samples WHERE run_id = 2 AND seq > 0")"
ln -s nowhere.csv dangling.csv
"$RTRACK" export --db x.db -o dangling.csv 2>err.txt
check "export -o a link to nothing: exit 1" "$?" 1
check "export -o a link to nothing: nothing created" "$(ls nowhere.csv 2>/dev/null)" ""
check "export -o a link to nothing: says so" "$(grep -c 'which does not exist' err.txt)" 1
"$RTRACK" run --db live.db -o dangling.csv -- touch started 2>err.txt
check "run -o a link to nothing: the job did not start" "$(ls started nowhere.csv 2>/dev/null)" ""
if [ $ROOT = 1 ] && id nobody >/dev/null 2>&1; then
    echo precious >precious.txt
    ln -s precious.txt theirs.csv
    chown -h nobody theirs.csv
    "$RTRACK" export --db x.db -o theirs.csv 2>err.txt
    check "export -o another user's link: exit 1" "$?" 1
    check "another user's link: says so" "$(grep -c 'owned by another user' err.txt)" 1
    check "another user's link: its target untouched" "$(cat precious.txt)" precious
    "$RTRACK" run --db live.db -o theirs.csv -- touch started 2>/dev/null
    check "run -o another user's link: target untouched, no job" "$(cat precious.txt; ls started 2>/dev/null)" precious
else
    skip_req root "links owned by another user: needs root and a user 'nobody'"
fi
mkdir adir
"$RTRACK" export --db x.db -o adir 2>err.txt
check "export -o a directory: exit 1" "$?" 1
check "export -o a directory: says so" "$(grep -c "cannot write 'adir': it is a directory" err.txt)" 1

# --- 5. modes and owners ------------------------------------------------------------------------
(
    umask 000
    "$RTRACK" export --db x.db -o new.csv
    "$RTRACK" report --db x.db -o new.html
    "$RTRACK" run --db live.db -o new.jsonl -- true
    "$RTRACK" record --db live.db -o new2.jsonl --duration 0.3
)
check "umask 000: new export, report, run and record outputs are 0600" \
    "$(stat -c %a new.csv new.html new.jsonl new2.jsonl | tr '\n' ' ')" "600 600 600 600 "
echo old >shared.csv
chmod 644 shared.csv
"$RTRACK" export --db x.db -o shared.csv
check "a replaced 0644 file stays 0644" "$(stat -c %a shared.csv)" 644
echo old >shared.jsonl
chmod 640 shared.jsonl
"$RTRACK" run --db live.db -o shared.jsonl -- true
check "a live output over a 0640 file: stays 0640" "$(stat -c %a shared.jsonl)" 640
if [ $ROOT = 1 ] && id nobody >/dev/null 2>&1; then
    grp=$(id -gn nobody)
    for f in their.csv their.html their.jsonl; do
        echo secret >$f
        chmod 600 $f
        chown nobody:"$grp" $f
    done
    "$RTRACK" export --db x.db -o their.csv
    "$RTRACK" report --db x.db -o their.html
    "$RTRACK" run --db live.db -o their.jsonl -- true
    check "root replacing another user's 0600 files: mode and owner kept" \
        "$(stat -c '%a %U %G' their.csv their.html their.jsonl | tr '\n' ' ')" \
        "600 nobody $grp 600 nobody $grp 600 nobody $grp "
    cmp -s their.csv exp.csv && pass "another user's file: written" || fail "their.csv differs"
else
    skip_req root "owners kept: needs root and a user 'nobody'"
fi

# --- 14. every write to stdout is checked --------------------------------------------------------
"$RTRACK" run --quiet --db x.db -- true # a third run: export's and upload's latest
cp x.db x.orig
for c in "runs --db x.db" "runs --db x.db --format csv" "runs --db x.db --format jsonl" \
    "summary --db x.db" "summary --db x.db --format json" "summary --db x.db --format markdown" \
    "upload --db x.db --dry-run" "export --db x.db" "export --db x.db -o -" \
    "report --db x.db -o -" "help" "--help" "--version" "help export" "run --help" \
    "record --help" "export --help" "runs --help" "summary --help" "report --help" \
    "upload --help" "export -h"; do
    # shellcheck disable=SC2086 # the words of $c are the arguments
    "$RTRACK" $c >/dev/full 2>err.txt
    rc=$?
    check "rtrack $c >/dev/full: exit 1" "$rc" 1
    check "rtrack $c >/dev/full: says so once" \
        "$(grep -c 'cannot write to stdout: no space left on device' err.txt)" 1
done
"$RTRACK" runs --bogus >/dev/full 2>/dev/null
check "a usage error to /dev/full stays exit 2" "$?" 2
"$RTRACK" run --quiet --db x.db -- sh -c 'exit 3' >/dev/full
check "run's exit status stays the job's with stdout at /dev/full" "$?" 3

# an export whose last pages cannot be read says where its output ends
if q x.db "SELECT 1 FROM dbstat LIMIT 1" >/dev/null 2>&1; then
    "$RTRACK" run --quiet --db big.db --interval 0.002 -- sleep 1
    q big.db "PRAGMA journal_mode=DELETE" >/dev/null
    total=$(q big.db "SELECT count(*) FROM samples WHERE run_id = 1 AND seq > 0")
    # (its JSON Lines are written by two threads: stdout checked there too)
    "$RTRACK" export --db big.db --format jsonl >/dev/full 2>err.txt
    check "jsonl export of $total rows >/dev/full: exit 1, said once" \
        "$?/$(grep -c 'cannot write to stdout: no space left on device' err.txt)" 1/1
    page=$(q big.db "SELECT max(pageno) FROM dbstat WHERE name = 'samples'")
    psize=$(q big.db "PRAGMA page_size")
    head -c "$psize" /dev/urandom | dd of=big.db bs="$psize" seek=$((page - 1)) conv=notrunc status=none
    "$RTRACK" export --db big.db >part.csv 2>err.txt
    check "export of a corrupt late page: exit 1" "$?" 1
    rows=$(($(wc -l <part.csv) - 1))
    [ "$rows" -gt 0 ] && [ "$rows" -lt "$total" ] && pass "corrupt page: $rows of $total rows" ||
        fail "corrupt page: $rows of $total rows"
    check "corrupt page: says after which row stdout ends" \
        "$(grep -c "cannot read the database after $rows rows (the last is sample [0-9]* of run 1): .*; the output on stdout ends there, incomplete" err.txt)" 1
    "$RTRACK" export --db big.db -o part2.csv 2>err.txt
    check "corrupt page, -o FILE: exit 1, nothing written" "$?/$(ls part2.csv 2>/dev/null)" "1/"
    check "corrupt page, -o FILE: says so" "$(grep -c "'part2.csv' was not written" err.txt)" 1
    # JSON Lines of a run this long are read on two threads (src/export/export.c): the same
    "$RTRACK" export --db big.db --format jsonl >part.jsonl 2>err.txt
    check "jsonl export of a corrupt late page: exit 1" "$?" 1
    rows=$(wc -l <part.jsonl)
    [ "$rows" -gt 0 ] && [ "$rows" -lt "$total" ] && pass "jsonl, corrupt page: $rows of $total rows" ||
        fail "jsonl, corrupt page: $rows of $total rows"
    check "jsonl, corrupt page: every line whole, in order, once" "$(python3 -c '
import json, sys
ts = [json.loads(l)["timestamp"] for l in open(sys.argv[1])]
print("ok" if all(a < b for a, b in zip(ts, ts[1:])) else "out of order")' part.jsonl)" ok
    check "jsonl, corrupt page: says after which row stdout ends" \
        "$(grep -c "cannot read the database after $rows rows (the last is sample [0-9]* of run 1): .*; the output on stdout ends there, incomplete" err.txt)" 1
    # `runs` over a runs table whose last page cannot be read: an error and exit 1, not a
    # shorter list that looks whole
    "$RTRACK" run --quiet --db many.db -- true
    q many.db "PRAGMA journal_mode=DELETE" >/dev/null
    q many.db "WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 400)
        INSERT INTO runs (uuid, mode, command, requested_interval_s, started_at, status, clk_tck,
                          page_size, rtrack_version)
        SELECT 'u' || i, mode, command, requested_interval_s, started_at + i, status, clk_tck,
               page_size, rtrack_version FROM runs, k WHERE runs.id = 1"
    page=$(q many.db "SELECT max(pageno) FROM dbstat WHERE name = 'runs'")
    psize=$(q many.db "PRAGMA page_size")
    head -c "$psize" /dev/urandom | dd of=many.db bs="$psize" seek=$((page - 1)) conv=notrunc status=none
    for fmt in table csv jsonl; do
        "$RTRACK" runs --db many.db --format $fmt >runs.$fmt 2>err.txt
        check "runs --format $fmt of a corrupt runs page: exit 1, says so" \
            "$?/$(grep -c "cannot read database 'many.db'" err.txt)" 1/1
    done
else
    skip "corrupt page: the sqlite3 CLI has no dbstat"
fi

finish
