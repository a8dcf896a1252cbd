-- The views `rtrack export`, `summary`, `report` and `upload` (and whatever reads the
-- database) use. They only select, rename, scale and combine what the collectors computed at
-- record time (DESIGN.md principle 1); rounding and number text are the exporter's formatting.
-- Each derived value is defined once, here, and read from here by every reader: the per-second
-- rates (sample_metrics_base, nic_sample_rates, disk_sample_rates) and the Python reference's
-- columns (sample_metrics, and sample_metrics_base without its GPU columns). The baseline has no
-- interval, so the interval layouts start at seq 1, like the Python reference (which discards
-- its first diff).
--
-- A view over one table (sample_metrics_base) costs nothing when a query runs: SQLite flattens
-- it into the query that reads it. A query joining two views of `samples` reads every sample
-- twice, so a reader takes what it needs from one of them (sample_metrics has the Python columns
-- and the rates together). Preparing a statement does cost per view level: SQLite works out a
-- view's columns, and those of each view under it, in every connection that uses it, so the
-- one summary and report read for runs without GPU rows stands directly on the tables.
--
-- Views hold no data: this file is applied after every schema upgrade, in the same
-- transaction, dropping and recreating each view, so it always matches the tables.
--
-- The JSON Lines (the Rust reference's sample objects) are no view: src/export/jsonl.c defines
-- each field once, as SQL over these tables and views, and writes the lines in C. The
-- rust_sample view that built them in SQL until schema version 8 is dropped here.
DROP VIEW IF EXISTS rust_sample;
DROP VIEW IF EXISTS python_combined;
DROP VIEW IF EXISTS python_process;
DROP VIEW IF EXISTS python_system;
DROP VIEW IF EXISTS sample_metrics;
DROP VIEW IF EXISTS sample_metrics_base;
DROP VIEW IF EXISTS disk_sample_rates;
DROP VIEW IF EXISTS nic_sample_rates;
DROP VIEW IF EXISTS sample_rates;
DROP VIEW IF EXISTS run_sample_counts;
DROP VIEW IF EXISTS run_status;
DROP VIEW IF EXISTS gpu_process_totals;
DROP VIEW IF EXISTS gpu_totals;
DROP VIEW IF EXISTS host_gpus;

-- Per-sample GPU totals over every GPU (no rows for a sample without GPU values).
-- Neither of these two views is an aggregate (GROUP BY sample_id): SQLite 3.40 materializes an
-- aggregate view joined to `samples` over every row of its table each time a statement runs, so
-- a reader's memory grew with the run and the live output's line for one sample read every GPU
-- row recorded so far. Here a sample's row is its first GPU row (by the primary key) and each
-- total a subquery over that sample's rows: SQLite flattens the view into the query that reads
-- it and answers both by the primary key, (sample_id, ...), for the samples it reads and no
-- others. Without GPU rows the join finds nothing at once (tests/unit/test_gpu_totals.c).
CREATE VIEW gpu_totals AS
SELECT g.sample_id,
       (SELECT sum(x.util_pct) FROM gpu_samples x WHERE x.sample_id = g.sample_id) / 100.0
           AS gpu_usage,
       (SELECT sum(x.vram_used_bytes) FROM gpu_samples x WHERE x.sample_id = g.sample_id)
           / 1048576.0 AS gpu_vram_mib,
       (SELECT sum(x.util_pct > 0) FROM gpu_samples x WHERE x.sample_id = g.sample_id)
           AS gpu_utilized
FROM gpu_samples g
WHERE g.gpu_id = (SELECT min(x.gpu_id) FROM gpu_samples x WHERE x.sample_id = g.sample_id);

-- Per-sample GPU use of the tracked tree: SM/gfx busy summed over its processes and GPUs (in
-- GPUs), device memory, and the number of GPUs it has a process on (what both references
-- count as "utilized"). A process listed by the driver twice (compute and graphics) is one row.
-- The same form as gpu_totals: a sample's first row, the totals over its rows.
CREATE VIEW gpu_process_totals AS
SELECT g.sample_id,
       (SELECT sum(x.util_pct) FROM gpu_process_samples x WHERE x.sample_id = g.sample_id)
           / 100.0 AS gpu_usage,
       (SELECT sum(x.vram_used_bytes) FROM gpu_process_samples x
        WHERE x.sample_id = g.sample_id) / 1048576.0 AS gpu_vram_mib,
       (SELECT count(DISTINCT x.gpu_id) FROM gpu_process_samples x
        WHERE x.sample_id = g.sample_id) AS gpu_utilized
FROM gpu_process_samples g
WHERE (g.process_id, g.gpu_id) = (SELECT x.process_id, x.gpu_id FROM gpu_process_samples x
                                  WHERE x.sample_id = g.sample_id
                                  ORDER BY x.process_id, x.gpu_id LIMIT 1);

-- Host GPU facts of a run (Sentinel's host_gpu_model, host_gpu_count, host_gpu_memory_mib).
CREATE VIEW host_gpus AS
SELECT g.run_id,
       (SELECT g2.name FROM gpus g2 WHERE g2.run_id = g.run_id ORDER BY g2.idx LIMIT 1)
           AS host_gpu_model,
       count(*) AS host_gpu_count,
       sum(g.vram_total_bytes) / 1048576 AS host_gpu_memory_mib
FROM gpus g
GROUP BY g.run_id;

-- The samples of a run after the baseline: what summary counts and export writes as rows. The
-- baseline is a run's sample 0; counting all of the run's rows through the (run_id, seq) index
-- and looking up that one row keeps this fast on a run of a million samples.
-- A run's status as every reader tells it (runs, summary, report, upload): the stored one, or,
-- for a run still marked running whose newest sample is older than three intervals and two
-- seconds, 'interrupted': its recorder is gone (killed; the machine went down) and nobody will
-- write its end.
CREATE VIEW run_status AS
SELECT r.id AS run_id,
       CASE WHEN r.status <> 'running' THEN r.status
            WHEN coalesce((SELECT max(ts) FROM samples WHERE run_id = r.id), r.started_at)
                 < (julianday('now') - 2440587.5) * 86400.0 - 3 * r.requested_interval_s - 2
                THEN 'interrupted'
            ELSE 'running' END AS status
FROM runs r;

CREATE VIEW run_sample_counts AS
SELECT r.id AS run_id,
       (SELECT count(*) FROM samples WHERE run_id = r.id)
       - EXISTS (SELECT 1 FROM samples WHERE run_id = r.id AND seq = 0 AND kind = 'baseline')
           AS samples
FROM runs r;

-- The same per network interface and per disk, over the interval of their sample.
CREATE VIEW nic_sample_rates AS
SELECT ns.*,
       ns.rx_bytes / s.interval_s AS rx_bytes_per_s,
       ns.tx_bytes / s.interval_s AS tx_bytes_per_s
FROM nic_samples ns JOIN samples s ON s.id = ns.sample_id;

CREATE VIEW disk_sample_rates AS
SELECT ds.*,
       ds.read_bytes / s.interval_s AS read_bytes_per_s,
       ds.write_bytes / s.interval_s AS write_bytes_per_s
FROM disk_samples ds JOIN samples s ON s.id = ds.sample_id;

-- Per sample after the baseline: the Python reference's columns (resource-tracker 0.5.0,
-- procfs backend) of the system and of the process tree, unrounded, then the rates summary and
-- report show, all but the six GPU columns. sample_metrics below adds those; this view is for a
-- reader that needs none of them (summary and report of runs without GPU rows): SQLite builds
-- the GPU views' joins and subqueries into every statement over sample_metrics, even one that
-- selects no GPU column, and that is half of such a statement's preparation (the end-of-run
-- line's, docs/performance.md). Same names and values as sample_metrics's columns. The
-- per-second rates of a sample's interval are defined here (sample_rates below has them for
-- every sample, the baseline's NULL): this view reads `samples` itself, as a second view level
-- under it would double what preparing a statement over it costs (schema 12,
-- docs/performance.md).
CREATE VIEW sample_metrics_base AS
SELECT s.run_id, s.seq, s.id AS sample_id,
       s.ts AS timestamp,
       s.mono AS mono,
       s.interval_s AS interval_s,
       s.processes AS system_processes,
       s.cpu_utime_s AS system_utime,
       s.cpu_stime_s AS system_stime,
       s.cpu_usage AS system_cpu_usage,
       s.mem_free_kib / 1024.0 AS system_memory_free_mib,
       s.mem_used_kib / 1024.0 AS system_memory_used_mib,
       s.mem_buffers_kib / 1024.0 AS system_memory_buffers_mib,
       (s.mem_cached_kib + coalesce(s.mem_sreclaimable_kib, 0)) / 1024.0
           AS system_memory_cached_mib,
       s.mem_active_kib / 1024.0 AS system_memory_active_mib,
       s.mem_inactive_kib / 1024.0 AS system_memory_inactive_mib,
       s.disk_read_bytes AS system_disk_read_bytes,
       s.disk_write_bytes AS system_disk_write_bytes,
       s.disk_space_total_bytes / 1e9 AS system_disk_space_total_gb,
       s.disk_space_used_bytes / 1e9 AS system_disk_space_used_gb,
       s.disk_space_free_bytes / 1e9 AS system_disk_space_free_gb,
       s.net_rx_bytes AS system_net_recv_bytes,
       s.net_tx_bytes AS system_net_sent_bytes,
       s.proc_root_pid AS process_pid,
       s.proc_children AS process_children,
       s.proc_utime_s AS process_utime,
       s.proc_stime_s AS process_stime,
       s.proc_cpu_usage AS process_cpu_usage,
       -- cores the tree waited for, runnable with no CPU free (schedstat): usage + this = demand
       s.proc_cpu_wait_s / s.interval_s AS process_cpu_wait_cores,
       s.proc_pss_kib / 1024.0 AS process_memory_mib,
       s.proc_read_bytes AS process_disk_read_bytes,
       s.proc_write_bytes AS process_disk_write_bytes,
       s.disk_read_bytes / s.interval_s AS system_disk_read_bytes_per_s,
       s.disk_write_bytes / s.interval_s AS system_disk_write_bytes_per_s,
       (s.disk_read_bytes + s.disk_write_bytes) / s.interval_s
           AS system_disk_io_bytes_per_s,
       s.net_rx_bytes / s.interval_s AS system_net_recv_bytes_per_s,
       s.net_tx_bytes / s.interval_s AS system_net_sent_bytes_per_s,
       s.proc_read_bytes / s.interval_s AS process_disk_read_bytes_per_s,
       s.proc_write_bytes / s.interval_s AS process_disk_write_bytes_per_s,
       (s.proc_read_bytes + s.proc_write_bytes) / s.interval_s
           AS process_disk_io_bytes_per_s,
       -- the CPU charged to rtrack's cgroup, in cores
       s.cgroup_cpu_s / s.interval_s AS cgroup_cores
FROM samples s
WHERE s.kind <> 'baseline';

-- The columns of sample_metrics_base, in the Python reference's order, with the system GPU
-- columns after the system network ones and the tree's after its disk ones: the Python layouts
-- below select from it; summary and report read it (or sample_metrics_base, without GPU rows).
-- The base view's columns are named without `b.` (the GPU views' are sample_id and gpu_*): every
-- connection parses this view, and the 39 qualifiers cost a recording's start 90 000
-- instructions (bench/run_instr.sh).
CREATE VIEW sample_metrics AS
SELECT run_id, seq, b.sample_id,
       timestamp,
       mono,
       interval_s,
       system_processes,
       system_utime,
       system_stime,
       system_cpu_usage,
       system_memory_free_mib,
       system_memory_used_mib,
       system_memory_buffers_mib,
       system_memory_cached_mib,
       system_memory_active_mib,
       system_memory_inactive_mib,
       system_disk_read_bytes,
       system_disk_write_bytes,
       system_disk_space_total_gb,
       system_disk_space_used_gb,
       system_disk_space_free_gb,
       system_net_recv_bytes,
       system_net_sent_bytes,
       g.gpu_usage AS system_gpu_usage,
       g.gpu_vram_mib AS system_gpu_vram_mib,
       g.gpu_utilized AS system_gpu_utilized,
       process_pid,
       process_children,
       process_utime,
       process_stime,
       process_cpu_usage,
       process_cpu_wait_cores,
       process_memory_mib,
       process_disk_read_bytes,
       process_disk_write_bytes,
       -- without GPU rows in the sample Python prints no GPU values; with them, 0 for a tree
       -- that has no process on a GPU
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_usage, 0.0) END AS process_gpu_usage,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_vram_mib, 0.0) END
           AS process_gpu_vram_mib,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_utilized, 0) END
           AS process_gpu_utilized,
       system_disk_read_bytes_per_s,
       system_disk_write_bytes_per_s,
       system_disk_io_bytes_per_s,
       system_net_recv_bytes_per_s,
       system_net_sent_bytes_per_s,
       process_disk_read_bytes_per_s,
       process_disk_write_bytes_per_s,
       process_disk_io_bytes_per_s,
       cgroup_cores
FROM sample_metrics_base b
LEFT JOIN gpu_totals g ON g.sample_id = b.sample_id
LEFT JOIN gpu_process_totals pg ON pg.sample_id = b.sample_id;

-- Every column of a sample, then its per-interval counts per second of its interval (NULL for
-- the baseline, which has no interval), as sample_metrics_base defines them: for SQL of one's
-- own that wants a sample's raw columns beside its rates. rtrack's readers do not read it.
CREATE VIEW sample_rates AS
SELECT s.*,
       m.system_disk_read_bytes_per_s AS disk_read_bytes_per_s,
       m.system_disk_write_bytes_per_s AS disk_write_bytes_per_s,
       m.system_disk_io_bytes_per_s AS disk_io_bytes_per_s,
       m.system_net_recv_bytes_per_s AS net_rx_bytes_per_s,
       m.system_net_sent_bytes_per_s AS net_tx_bytes_per_s,
       m.process_disk_read_bytes_per_s AS proc_read_bytes_per_s,
       m.process_disk_write_bytes_per_s AS proc_write_bytes_per_s,
       m.process_disk_io_bytes_per_s AS proc_io_bytes_per_s,
       m.cgroup_cores AS cgroup_cores
FROM samples s
LEFT JOIN sample_metrics_base m ON m.sample_id = s.id;

-- The Python SystemTracker row, 21 columns.
CREATE VIEW python_system AS
SELECT run_id, seq, sample_id,
       timestamp,
       system_processes AS processes,
       system_utime AS utime,
       system_stime AS stime,
       system_cpu_usage AS cpu_usage,
       system_memory_free_mib AS memory_free_mib,
       system_memory_used_mib AS memory_used_mib,
       system_memory_buffers_mib AS memory_buffers_mib,
       system_memory_cached_mib AS memory_cached_mib,
       system_memory_active_mib AS memory_active_mib,
       system_memory_inactive_mib AS memory_inactive_mib,
       system_disk_read_bytes AS disk_read_bytes,
       system_disk_write_bytes AS disk_write_bytes,
       system_disk_space_total_gb AS disk_space_total_gb,
       system_disk_space_used_gb AS disk_space_used_gb,
       system_disk_space_free_gb AS disk_space_free_gb,
       system_net_recv_bytes AS net_recv_bytes,
       system_net_sent_bytes AS net_sent_bytes,
       system_gpu_usage AS gpu_usage,
       system_gpu_vram_mib AS gpu_vram_mib,
       system_gpu_utilized AS gpu_utilized
FROM sample_metrics;

-- The Python ProcessTracker row, 12 columns (all NULL for a system-only recording).
CREATE VIEW python_process AS
SELECT run_id, seq, sample_id,
       timestamp,
       process_pid AS pid,
       process_children AS children,
       process_utime AS utime,
       process_stime AS stime,
       process_cpu_usage AS cpu_usage,
       -- unknown memory (a tree of zombies) is Python's 0
       CASE WHEN process_pid IS NOT NULL THEN coalesce(process_memory_mib, 0.0) END AS memory_mib,
       process_disk_read_bytes AS disk_read_bytes,
       process_disk_write_bytes AS disk_write_bytes,
       process_gpu_usage AS gpu_usage,
       process_gpu_vram_mib AS gpu_vram_mib,
       process_gpu_utilized AS gpu_utilized
FROM sample_metrics;

-- Python's get_combined_metrics() / the Sentinel S3 batch layout, 32 columns: the system
-- tracker's timestamp, then system_*, then process_* (the process timestamp is dropped).
CREATE VIEW python_combined AS
SELECT run_id, seq, sample_id,
       timestamp,
       system_processes,
       system_utime,
       system_stime,
       system_cpu_usage,
       system_memory_free_mib,
       system_memory_used_mib,
       system_memory_buffers_mib,
       system_memory_cached_mib,
       system_memory_active_mib,
       system_memory_inactive_mib,
       system_disk_read_bytes,
       system_disk_write_bytes,
       system_disk_space_total_gb,
       system_disk_space_used_gb,
       system_disk_space_free_gb,
       system_net_recv_bytes,
       system_net_sent_bytes,
       system_gpu_usage,
       system_gpu_vram_mib,
       system_gpu_utilized,
       process_pid,
       process_children,
       process_utime,
       process_stime,
       process_cpu_usage,
       CASE WHEN process_pid IS NOT NULL THEN coalesce(process_memory_mib, 0.0) END
           AS process_memory_mib,
       process_disk_read_bytes,
       process_disk_write_bytes,
       process_gpu_usage,
       process_gpu_vram_mib,
       process_gpu_utilized
FROM sample_metrics;
