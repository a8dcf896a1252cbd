#!/usr/bin/env bash
# bench/start_costs.sh - three costs of `rtrack run`'s start, each measured alone with
# rt_start_costs (bench/start_costs.c, compiled here against the system's SQLite):
#   - the end-of-run line's pass over sample_metrics_base (the statement src/summary/summary.c
#     pass_sql() writes for a run without GPU rows): the schema's parse, its first preparation in
#     a connection (the views' columns worked out) and a second one, medians of 200 new
#     connections, on each DB given (an older file beside a newer one shows what the views'
#     definitions cost);
#   - the schema's fingerprint (src/store/open.c, at every open of a database): its statement
#     over sqlite_schema prepared and run, in the file's order as rtrack reads it and sorted by
#     type and name as it did before, medians of 200 new connections, on each DB given;
#   - the host's CPU facts: the whole of /proc/cpuinfo, one 1 KiB read of it (the first CPU's
#     block, as src/collect/host.c reads it), and /sys/devices/system/cpu/online, the least of 2000 reads each.
#
# usage: bench/start_costs.sh [DB ...]   (a database rtrack wrote; none: the file reads only)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-start-costs.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cc -O2 -o "$TMP/rt_start_costs" "$HERE/start_costs.c" -lsqlite3

cols="run_id, sample_id, timestamp, process_pid, process_cpu_usage, process_cpu_wait_cores,
process_memory_mib, process_disk_read_bytes, process_disk_write_bytes,
process_disk_read_bytes_per_s, process_disk_write_bytes_per_s, process_disk_io_bytes_per_s,
system_cpu_usage, system_memory_used_mib, system_disk_read_bytes, system_disk_write_bytes,
system_net_recv_bytes, system_net_sent_bytes, system_disk_read_bytes_per_s,
system_disk_write_bytes_per_s, system_disk_io_bytes_per_s, system_net_recv_bytes_per_s,
system_net_sent_bytes_per_s, system_disk_space_used_gb, interval_s"
sql="SELECT $cols FROM sample_metrics_base WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq"
for db in "$@"; do
    printf '%s (schema %s): ' "$db" "$(sqlite3 -readonly "$db" 'PRAGMA user_version' 2>/dev/null ||
        python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA user_version").fetchone()[0])' "$db")"
    "$TMP/rt_start_costs" prepare "$db" "$sql"
    fp="SELECT type, name, tbl_name, coalesce(sql, '') FROM main.sqlite_schema"
    printf '  fingerprint, file order: '
    "$TMP/rt_start_costs" query "$db" "$fp"
    printf '  fingerprint, sorted: '
    "$TMP/rt_start_costs" query "$db" "$fp ORDER BY type, name"
done
"$TMP/rt_start_costs" read /proc/cpuinfo
"$TMP/rt_start_costs" read /proc/cpuinfo 1024
"$TMP/rt_start_costs" read /sys/devices/system/cpu/online
echo "CPUs online: $(nproc --all 2>/dev/null || nproc)"
