#!/usr/bin/env python3
"""upload_rows.py - the values of uploaded rows against the database's raw columns
(tests/cli/test_upload.sh, tests/cli/test_upload_faults.sh).

usage: upload_rows.py DB RUN ROWS.csv

ROWS.csv: the rows of a run's S3 objects, gunzipped, in order, with one header line (the
objects' own). Each row is compared with numbers the sqlite3 CLI (SQLITE, default sqlite3)
derives from the tables' raw columns by a query of its own, not from the views rtrack exports
and uploads from, nor from the per-sample values the collectors computed where a raw counter
exists:
  cpu      system_utime, system_stime = the deltas of /proc/stat's user+nice and system ticks
           over clk_tck, system_cpu_usage = both over the CLOCK_MONOTONIC delta (at most the
           machine's cores, as every rate), processes
  memory   the /proc/meminfo columns in MiB; used = MemTotal - MemAvailable
  disk     read/write bytes = per disk, the sector counters' delta x 512 (clamped at 0)
  space    the mounts' statvfs sizes summed, in GB
  network  per interface but lo, the byte counters' delta (clamped at 0)
  process  the run's pid, the tree's processes in the sample but the root, and the sums of the
           per-process rows (CPU seconds, PSS, I/O bytes), the CPU over the monotonic delta
  gpu      the per-GPU rows (busy % summed, in GPUs; memory used in MiB; GPUs busy) and the
           tree's per-process GPU rows likewise; 0 without GPU rows (as the reference prints)
  time     the sample's wall clock
Floats are compared within half a unit of the column's last printed decimal (the reference
rounds them); integers exactly. Prints one line per group: "GROUP ok N" (N: rows where a
measured value of the group is not zero: a pid or a count of processes is not one) or
"GROUP row K (seq S) COLUMN: got X, expected Y". Exit status 0.
"""
import csv
import io
import os
import subprocess
import sys

RAW_SQL = """
WITH w AS (
  SELECT s.*, r.clk_tck AS hz, r.pid AS run_pid,
         lag(s.id) OVER o AS prev_id, lag(s.mono) OVER o AS prev_mono,
         lag(s.cpu_user + s.cpu_nice) OVER o AS prev_un, lag(s.cpu_system) OVER o AS prev_sys
  FROM samples s JOIN runs r ON r.id = s.run_id
  WHERE s.run_id = {run}
  WINDOW o AS (ORDER BY s.seq)),
p AS (
  -- children: the tree's live processes other than its root (docs/schema.md, proc_children):
  -- a zombie (state Z or X: exited, not reaped yet) has a row but is not counted
  SELECT ps.sample_id,
         sum(coalesce(ps.state, '') NOT IN ('Z', 'X'))
           - max(pr.pid = s.proc_root_pid AND coalesce(ps.state, '') NOT IN ('Z', 'X'))
           AS children,
         coalesce(sum(ps.cpu_utime_s), 0) AS ut,
         coalesce(sum(ps.cpu_stime_s), 0) AS st, coalesce(sum(ps.pss_kib), 0) AS pss,
         coalesce(sum(ps.read_bytes), 0) AS rd, coalesce(sum(ps.write_bytes), 0) AS wr
  FROM process_samples ps JOIN processes pr ON pr.id = ps.process_id
  JOIN samples s ON s.id = ps.sample_id
  GROUP BY ps.sample_id)
SELECT w.seq AS seq,
  w.ts AS timestamp,
  w.processes AS system_processes,
  max(0, w.cpu_user + w.cpu_nice - w.prev_un) * 1.0 / w.hz AS system_utime,
  max(0, w.cpu_system - w.prev_sys) * 1.0 / w.hz AS system_stime,
  -- busy cores, at most the machine's (its cpuN lines): 10 ms ticks over a short final window
  min((max(0, w.cpu_user + w.cpu_nice - w.prev_un) + max(0, w.cpu_system - w.prev_sys)) * 1.0
      / w.hz / (w.mono - w.prev_mono),
      (SELECT count(*) FROM cpu_core_samples WHERE sample_id = w.id)) AS system_cpu_usage,
  w.mem_free_kib / 1024.0 AS system_memory_free_mib,
  (w.mem_total_kib - w.mem_available_kib) / 1024.0 AS system_memory_used_mib,
  w.mem_buffers_kib / 1024.0 AS system_memory_buffers_mib,
  (w.mem_cached_kib + w.mem_sreclaimable_kib) / 1024.0 AS system_memory_cached_mib,
  w.mem_active_kib / 1024.0 AS system_memory_active_mib,
  w.mem_inactive_kib / 1024.0 AS system_memory_inactive_mib,
  (SELECT coalesce(sum(max(0, d.sectors_read - b.sectors_read)), 0) * 512
     FROM disk_samples d JOIN disk_samples b ON b.disk_id = d.disk_id AND b.sample_id = w.prev_id
     WHERE d.sample_id = w.id) AS system_disk_read_bytes,
  (SELECT coalesce(sum(max(0, d.sectors_written - b.sectors_written)), 0) * 512
     FROM disk_samples d JOIN disk_samples b ON b.disk_id = d.disk_id AND b.sample_id = w.prev_id
     WHERE d.sample_id = w.id) AS system_disk_write_bytes,
  (SELECT sum(total_bytes) FROM mount_samples WHERE sample_id = w.id) / 1e9
      AS system_disk_space_total_gb,
  (SELECT sum(used_bytes) FROM mount_samples WHERE sample_id = w.id) / 1e9
      AS system_disk_space_used_gb,
  (SELECT sum(available_bytes) FROM mount_samples WHERE sample_id = w.id) / 1e9
      AS system_disk_space_free_gb,
  (SELECT coalesce(sum(max(0, n.rx_bytes_total - b.rx_bytes_total)), 0)
     FROM nic_samples n JOIN nics i ON i.id = n.nic_id AND i.name <> 'lo'
     JOIN nic_samples b ON b.nic_id = n.nic_id AND b.sample_id = w.prev_id
     WHERE n.sample_id = w.id) AS system_net_recv_bytes,
  (SELECT coalesce(sum(max(0, n.tx_bytes_total - b.tx_bytes_total)), 0)
     FROM nic_samples n JOIN nics i ON i.id = n.nic_id AND i.name <> 'lo'
     JOIN nic_samples b ON b.nic_id = n.nic_id AND b.sample_id = w.prev_id
     WHERE n.sample_id = w.id) AS system_net_sent_bytes,
  coalesce((SELECT sum(util_pct) FROM gpu_samples WHERE sample_id = w.id), 0) / 100.0
      AS system_gpu_usage,
  coalesce((SELECT sum(vram_used_bytes) FROM gpu_samples WHERE sample_id = w.id), 0) / 1048576.0
      AS system_gpu_vram_mib,
  (SELECT count(*) FROM gpu_samples WHERE sample_id = w.id AND util_pct > 0)
      AS system_gpu_utilized,
  w.run_pid AS process_pid,
  p.children AS process_children,
  p.ut AS process_utime,
  p.st AS process_stime,
  min((p.ut + p.st) / (w.mono - w.prev_mono),
      (SELECT count(*) FROM cpu_core_samples WHERE sample_id = w.id)) AS process_cpu_usage,
  p.pss / 1024.0 AS process_memory_mib,
  p.rd AS process_disk_read_bytes,
  p.wr AS process_disk_write_bytes,
  coalesce((SELECT sum(util_pct) FROM gpu_process_samples WHERE sample_id = w.id), 0) / 100.0
      AS process_gpu_usage,
  coalesce((SELECT sum(vram_used_bytes) FROM gpu_process_samples WHERE sample_id = w.id), 0)
      / 1048576.0 AS process_gpu_vram_mib,
  (SELECT count(DISTINCT gpu_id) FROM gpu_process_samples WHERE sample_id = w.id)
      AS process_gpu_utilized
FROM w LEFT JOIN p ON p.sample_id = w.id
WHERE w.kind <> 'baseline'
ORDER BY w.seq
"""

# column -> decimals printed (None: an integer)
DECIMALS = {
    "timestamp": 3, "system_processes": None, "system_utime": 6, "system_stime": 6,
    "system_cpu_usage": 4, "system_memory_free_mib": 4, "system_memory_used_mib": 4,
    "system_memory_buffers_mib": 4, "system_memory_cached_mib": 4,
    "system_memory_active_mib": 4, "system_memory_inactive_mib": 4,
    "system_disk_read_bytes": None, "system_disk_write_bytes": None,
    "system_disk_space_total_gb": 2, "system_disk_space_used_gb": 2,
    "system_disk_space_free_gb": 2, "system_net_recv_bytes": None,
    "system_net_sent_bytes": None, "system_gpu_usage": 4, "system_gpu_vram_mib": 4,
    "system_gpu_utilized": None, "process_pid": None, "process_children": None,
    "process_utime": 6, "process_stime": 6, "process_cpu_usage": 4, "process_memory_mib": 4,
    "process_disk_read_bytes": None, "process_disk_write_bytes": None,
    "process_gpu_usage": 4, "process_gpu_vram_mib": 4, "process_gpu_utilized": None,
}

NOT_MEASURED = {"system_processes", "process_pid", "process_children"}

GROUPS = [
    ("cpu", ["system_processes", "system_utime", "system_stime", "system_cpu_usage"]),
    ("memory", ["system_memory_free_mib", "system_memory_used_mib", "system_memory_buffers_mib",
                "system_memory_cached_mib", "system_memory_active_mib",
                "system_memory_inactive_mib"]),
    ("disk", ["system_disk_read_bytes", "system_disk_write_bytes"]),
    ("space", ["system_disk_space_total_gb", "system_disk_space_used_gb",
               "system_disk_space_free_gb"]),
    ("network", ["system_net_recv_bytes", "system_net_sent_bytes"]),
    ("process", ["process_pid", "process_children", "process_utime", "process_stime",
                 "process_cpu_usage", "process_memory_mib", "process_disk_read_bytes",
                 "process_disk_write_bytes"]),
    ("gpu", ["system_gpu_usage", "system_gpu_vram_mib", "system_gpu_utilized",
             "process_gpu_usage", "process_gpu_vram_mib", "process_gpu_utilized"]),
    ("time", ["timestamp"]),
]


def mismatch(col, got, want):
    """None when the printed value got is want as the reference prints it, else why not."""
    dp = DECIMALS[col]
    if dp is None:
        # the reference prints no children as "" (None)
        w = "" if col == "process_children" and int(want) == 0 else str(int(want))
        return None if got == w else "got %r, expected %r" % (got, w)
    try:
        g = float(got)
    except ValueError:
        return "got %r, expected %.*f" % (got, dp + 2, want)
    tol = 0.5 * 10 ** -dp * (1 + 1e-9) + 1e-9 * abs(want)
    return None if abs(g - want) <= tol else "got %s, expected %.*f" % (got, dp + 2, want)


def main():
    db, run, rows_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    sqlite = os.environ.get("SQLITE", "sqlite3")
    out = subprocess.run([sqlite, "-batch", "-csv", "-header", db, RAW_SQL.format(run=run)],
                         check=True, capture_output=True, text=True).stdout
    want = list(csv.DictReader(io.StringIO(out)))
    with open(rows_path, newline="") as f:
        got = list(csv.DictReader(f))
    if len(got) != len(want):
        for name, _ in GROUPS:
            print("%s %d rows uploaded, %d samples in the database" % (name, len(got), len(want)))
        return
    for name, cols in GROUPS:
        why = None
        nonzero = 0
        for k, (g, w) in enumerate(zip(got, want)):
            for col in cols:
                if w[col] == "":
                    why = "row %d %s: no value in the database" % (k + 1, col)
                else:
                    m = mismatch(col, g[col], float(w[col]))
                    if m:
                        why = "row %d (seq %s) %s: %s" % (k + 1, w["seq"], col, m)
                if why:
                    break
            if why:
                break
            nonzero += any(float(w[c]) != 0 for c in cols if c not in NOT_MEASURED)
        print("%s %s" % (name, why if why else "ok %d" % nonzero))


if __name__ == "__main__":
    main()
