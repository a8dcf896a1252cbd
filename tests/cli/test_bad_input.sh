#!/usr/bin/env bash
# Bad input: usage errors exit 2 with a message and create no database; databases rtrack must
# not touch (missing directory, not SQLite, another application's, a newer schema) are refused
# before the job starts (run: 125, record: 1) and left byte-identical.
. "$(dirname "$0")/lib.sh" "$1"

# usage_error NAME ARGS... : rtrack ARGS must exit 2 with a message on stderr, nothing on
# stdout, no database file (default or bad.db) and without running the job (touch ran.marker)
usage_error() {
    local name=$1; shift
    "$RTRACK" "$@" >ue.out 2>ue.err
    local rc=$?
    check "usage: $name: exit 2" "$rc" 2
    check "usage: $name: one 'rtrack: ' message on stderr" "$(grep -c '^rtrack: ' ue.err)" 1
    check "usage: $name: nothing on stdout" "$(wc -c <ue.out)" 0
    check "usage: $name: no database created, job not run" \
        "$(ls rtrack.db bad.db bad.db-wal bad.db-journal ran.marker 2>/dev/null | wc -l)" 0
}

# --- invalid values and options
usage_error "--interval 0" run --db bad.db --interval 0 -- touch ran.marker
usage_error "--interval -1" run --db bad.db --interval -1 -- touch ran.marker
usage_error "--interval abc" run --db bad.db --interval abc -- touch ran.marker
usage_error "--interval 0.0005 (below 0.001)" run --db bad.db --interval 0.0005 -- touch ran.marker
usage_error "--interval 86401 (above a day)" run --db bad.db --interval 86401 -- touch ran.marker
usage_error "--interval nan" run --db bad.db --interval nan -- touch ran.marker
usage_error "--interval '1s'" run --db bad.db --interval 1s -- touch ran.marker
usage_error "--interval without a value" run --db bad.db --interval
usage_error "unknown option" run --db bad.db --frobnicate -- touch ran.marker
usage_error "unknown short option" run --db bad.db -Z -- touch ran.marker
usage_error "run with no command" run --db bad.db
usage_error "run with only --" run --db bad.db --
usage_error "empty --db" run --db '' -- touch ran.marker
usage_error "record: --pid of no process" record --db bad.db --pid 2147483646
usage_error "record: --pid abc" record --db bad.db --pid abc
usage_error "record: --pid 0" record --db bad.db --pid 0
usage_error "record: --duration 0" record --db bad.db --duration 0
usage_error "record: a stray argument" record --db bad.db touch ran.marker
usage_error "record: --tag without '='" record --db bad.db --tag novalue
usage_error "unknown subcommand" frobnicate --db bad.db
"$RTRACK" >ue.out 2>ue.err
check "usage: no subcommand: exit 2, usage on stderr, nothing on stdout" \
    "$?:$(head -1 ue.err):$(wc -c <ue.out)" "2:usage: rtrack <command> [options]:0"
grep -q "did you mean 'run'" <("$RTRACK" rnu 2>&1)
check "usage: a misspelt subcommand gets a suggestion" "$?" 0
RTRACK_INTERVAL=0 "$RTRACK" run --db bad.db -- touch ran.marker 2>ue.err
check "usage: RTRACK_INTERVAL=0 in the environment: exit 2" "$?" 2
check "usage: RTRACK_INTERVAL=0: names the variable" "$(grep -c RTRACK_INTERVAL ue.err)" 1
check "usage: RTRACK_INTERVAL=0: nothing created or run" "$(ls bad.db ran.marker 2>/dev/null | wc -l)" 0
# a variable that upload and streaming share is read one way by both (src/cli/env.c): run and
# record refuse it as upload does (they ignored it before)
for cmd in run record; do
    args=(--db bad.db); [ $cmd = run ] && args+=(-- touch ran.marker) || args+=(--duration 0.1)
    RTRACK_UPLOAD_INLINE_MAX=abc "$RTRACK" $cmd "${args[@]}" >ue.out 2>ue.err
    check "usage: $cmd: RTRACK_UPLOAD_INLINE_MAX=abc: exit 2, named, nothing created or run" \
        "$?:$(cat ue.err):$(ls bad.db ran.marker 2>/dev/null | wc -l)" \
        "2:rtrack: $cmd: invalid RTRACK_UPLOAD_INLINE_MAX 'abc': expected bytes, 0 or more:0"
done

# --- --help and --version succeed, print on stdout, create nothing
out=$("$RTRACK" run --help 2>/dev/null)
check "run --help: exit 0 and usage on stdout" "$?:$(echo "$out" | head -1)" "0:usage: rtrack run [options] [--] CMD [ARGS...]"
out=$("$RTRACK" record --help 2>/dev/null)
check "record --help: exit 0 and usage on stdout" "$?:$(echo "$out" | head -1)" "0:usage: rtrack record [options]"
"$RTRACK" --version | grep -qE '^rtrack [0-9]+\.[0-9]+'
check "--version: prints the version" "$?" 0
check "--help/--version: no database created" "$(ls rtrack.db 2>/dev/null | wc -l)" 0

# --- databases rtrack must refuse: nothing written, job not started
# refuse NAME FILE : run and record on FILE must fail before touching it
refuse() {
    local name=$1 db=$2 before after
    before=$( [ -f "$db" ] && sha256sum <"$db")
    "$RTRACK" run --db "$db" -- touch ran.marker >/dev/null 2>refuse.err
    check "refuse $name: run exits 125" "$?" 125
    check "refuse $name: job not started" "$([ -e ran.marker ] && echo ran || echo not-run)" not-run
    check "refuse $name: one error line naming the file" "$(grep -c "^rtrack: .*$db" refuse.err):$(wc -l <refuse.err)" "1:1"
    "$RTRACK" record --db "$db" --duration 0.2 --interval 0.1 >/dev/null 2>refuse2.err
    check "refuse $name: record exits 1" "$?" 1
    check "refuse $name: record says why" "$(grep -c "^rtrack: .*$db" refuse2.err)" 1
    after=$( [ -f "$db" ] && sha256sum <"$db")
    check "refuse $name: file unchanged" "$after" "$before"
    check "refuse $name: no -wal/-shm/-journal left" "$(ls "$db-wal" "$db-shm" "$db-journal" 2>/dev/null | wc -l)" 0
}
refuse "missing directory" nodir/x.db
check "refuse missing directory: directory not created" "$([ -e nodir ] && echo created || echo absent)" absent
grep -q "does not exist" refuse.err
check "refuse missing directory: message says it does not exist" "$?" 0
head -c 8192 /dev/urandom >noise.db
refuse "random bytes" noise.db
printf 'SQLite format 2?  no, just some text pretending to be a database file\n%.0s' $(seq 100) >text.db
refuse "a text file" text.db
grep -q "not a SQLite file" refuse.err
check "refuse a text file: message says not SQLite" "$?" 0
sqlite3 other.db "CREATE TABLE t (x); INSERT INTO t VALUES (42);"
refuse "another application's SQLite db" other.db
grep -q "not an rtrack database" refuse.err
check "refuse another application's db: message says so" "$?" 0
check "refuse another application's db: its data is intact" "$(q other.db "SELECT x FROM t")" 42
sqlite3 otherwal.db "PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (7);" >/dev/null
refuse "another application's WAL db" otherwal.db
sqlite3 appid.db "PRAGMA application_id = 1234;"
refuse "a SQLite db with a foreign application_id" appid.db
"$RTRACK" run --quiet --db newer.db -- true
SCHEMA=$(q newer.db "PRAGMA user_version")  # the version this rtrack writes
check_range "a new database gets a schema version" "$SCHEMA" 1 98
sqlite3 newer.db "PRAGMA user_version = 99"
refuse "a newer schema version" newer.db
grep -q "newer rtrack" refuse.err
check "refuse newer schema: message says written by a newer rtrack" "$?" 0
check "refuse newer schema: still holds exactly its one run" "$(q newer.db "SELECT count(*) FROM runs")" 1
mkdir dir.db
refuse "a directory" dir.db

# --- acceptable databases: an empty file becomes an rtrack db; an rtrack db gets a second run
: >empty.db
"$RTRACK" run --quiet --db empty.db -- true
check "empty file: run succeeds" "$?" 0
check "empty file: now an rtrack db (application_id, user_version, 1 run)" \
    "$(q empty.db "PRAGMA application_id"):$(q empty.db "PRAGMA user_version"):$(q empty.db "SELECT count(*) FROM runs")" \
    "$((0x7274726b)):$SCHEMA:1"
"$RTRACK" run --quiet --db empty.db -- true
check "existing rtrack db: runs appended" "$(q empty.db "SELECT group_concat(id, ',') FROM (SELECT id FROM runs ORDER BY id)")" "1,2"

finish
