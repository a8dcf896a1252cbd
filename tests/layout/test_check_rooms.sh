#!/usr/bin/env bash
# tests/layout/test_check_rooms.sh - check_rooms.sh passes on src/ and catches what is planted in
# tests/layout/planted/: getenv in a collector, SQL in an exporter, dlopen in the summary (each
# also mentioned in a comment, which must not count); the same calls in the rooms that own
# them (cli/env.c, store/) are not reported.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../cli/lib.sh" "${1:-true}"
SRC=$HERE/../../src

out=$(bash "$HERE/check_rooms.sh" "$SRC" 2>&1)
check "src/: every getenv, sqlite3_ and dlopen call in its room" "$?:$out" \
    "0:check_rooms: every getenv, sqlite3_ and dlopen call is in its room"

out=$(bash "$HERE/check_rooms.sh" "$HERE/planted" 2>&1)
check "planted: exit 1" "$?" 1
check "planted: the collector's getenv, once (not the comment)" \
    "$(grep -c '^collect/reads_env.c:' <<<"$out"):$(grep -o '^collect/reads_env.c:[0-9]*' <<<"$out")" \
    "1:collect/reads_env.c:8"
check "planted: the exporter's SQLite calls and include" \
    "$(grep -o '^export/runs_sql.c:[0-9]*' <<<"$out" | tr '\n' ' ')" \
    "export/runs_sql.c:2 export/runs_sql.c:4 export/runs_sql.c:5 export/runs_sql.c:7 export/runs_sql.c:8 "
check "planted: the summary's dlopen, not the comment" \
    "$(grep -o '^summary/loads_lib.c:[0-9]*' <<<"$out" | tr '\n' ' ')" "summary/loads_lib.c:8 "
check "planted: cli/env.c and store/ may" "$(grep -c '^\(cli\|store\)/' <<<"$out")" 0
finish
