#!/usr/bin/env bash
# tests/layout/test_check_rooms.sh - check_rooms.sh passes on src/ and catches what is planted in
# tests/layout/planted/: getenv in a collector, SQL in an exporter, dlopen in the summary (each
# also mentioned in a comment, which must not count); the same calls in the rooms that own
# them (cli/env.c, store/) are not reported. And a table of sql/ named in a reader's SQL string
# (export, cli, upload, summary; adjacent literals joined, any case, quoted): reported, not
# where the store names it, nor a view, a comment or a URL; a room off the list is not held.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../cli/lib.sh" "${1:-true}"
SRC=$HERE/../../src

out=$(bash "$HERE/check_rooms.sh" "$SRC" 2>&1)
check "src/: every getenv, sqlite3_ and dlopen call in its room, no table in a reader's SQL" "$?:$out" \
    "0:check_rooms: every getenv, sqlite3_ and dlopen call is in its room, and no reader's SQL names a table"

SQL=$HERE/../../sql
out=$(bash "$HERE/check_rooms.sh" "$HERE/planted" "$SQL" 2>&1)
check "planted: exit 1" "$?" 1
check "planted: the collector's getenv, once (not the comment)" \
    "$(grep -c '^collect/reads_env.c:' <<<"$out"):$(grep -o '^collect/reads_env.c:[0-9]*' <<<"$out")" \
    "1:collect/reads_env.c:8"
check "planted: the exporter's SQLite calls and include" \
    "$(grep -o '^export/runs_sql.c:[0-9]*' <<<"$out" | tr '\n' ' ')" \
    "export/runs_sql.c:2 export/runs_sql.c:4 export/runs_sql.c:5 export/runs_sql.c:7 export/runs_sql.c:8 "
check "planted: the summary's dlopen, not the comment" \
    "$(grep -o '^summary/loads_lib.c:[0-9]*' <<<"$out" | tr '\n' ' ')" "summary/loads_lib.c:8 "
check "planted: cli/env.c and store/ may" "$(grep -c '^\(cli/env\.c\|store\)/' <<<"$out")" 0
check "planted: the tables named in the readers' SQL strings, nothing else" \
    "$(sed -n '/^check_rooms: SQL naming a table/,$p' <<<"$out" | grep -o '^[a-z]*/[a-z_]*\.c:[0-9]*' | tr '\n' ' ')" \
    "cli/writes_table.c:6 export/reads_table.c:5 summary/reads_samples.c:5 upload/clears.c:5 "
check "planted: the literals joined as C joins them" \
    "$(grep -c '^export/reads_table.c:5: SELECT min(seq) FROM samples WHERE run_id = ?1$' <<<"$out")" 1
# a room is held to it by its name on the list
sed 's/^SQL_ROOMS=.*/SQL_ROOMS="export cli upload"/' "$HERE/check_rooms.sh" >without_summary.sh
out=$(bash without_summary.sh "$HERE/planted" "$SQL" 2>&1)
check "planted, summary off the list: its SQL not reported" "$(grep -c '^summary/reads_samples.c' <<<"$out")" 0
out=$(bash "$HERE/check_rooms.sh" "$HERE/planted" "$T/no-sql" 2>&1)
check "no sql/ to find the tables in: exit 2" "$?" 2
finish
