-- The views `rtrack export`, `summary`, `report` and `upload` (and whatever reads the
-- database) use. They only select, rename, scale and combine what the collectors computed at
-- record time (DESIGN.md principle 1); rounding and number text are the exporter's formatting.
-- Each derived value is defined once, here, and read from here by every reader: the per-second
-- rates (sample_rates, nic_sample_rates, disk_sample_rates) and the Python reference's columns
-- (sample_metrics). The baseline sample has no interval, so the interval layouts start at seq 1,
-- like the Python reference (which discards its first diff).
--
-- A view over one table (sample_rates) costs nothing: SQLite flattens it into the query that
-- reads it. A query joining two views of `samples` reads every sample twice, so a reader takes
-- what it needs from one of them (sample_metrics has the Python columns and the rates together).
--
-- Views hold no data: this file is applied after every schema upgrade, in the same
-- transaction, dropping and recreating each view, so it always matches the tables.
DROP VIEW IF EXISTS rust_sample;
DROP VIEW IF EXISTS python_combined;
DROP VIEW IF EXISTS python_process;
DROP VIEW IF EXISTS python_system;
DROP VIEW IF EXISTS sample_metrics;
DROP VIEW IF EXISTS disk_sample_rates;
DROP VIEW IF EXISTS nic_sample_rates;
DROP VIEW IF EXISTS sample_rates;
DROP VIEW IF EXISTS run_sample_counts;
DROP VIEW IF EXISTS gpu_process_totals;
DROP VIEW IF EXISTS gpu_totals;
DROP VIEW IF EXISTS host_gpus;

-- Per-sample GPU totals over every GPU (no rows for a sample without GPU values).
CREATE VIEW gpu_totals AS
SELECT sample_id,
       sum(util_pct) / 100.0 AS gpu_usage,
       sum(vram_used_bytes) / 1048576.0 AS gpu_vram_mib,
       sum(util_pct > 0) AS gpu_utilized
FROM gpu_samples
GROUP BY sample_id;

-- Per-sample GPU use of the tracked tree: SM/gfx busy summed over its processes and GPUs (in
-- GPUs), device memory, and the number of GPUs it has a process on (what both references
-- count as "utilized"). A process listed by the driver twice (compute and graphics) is one row.
CREATE VIEW gpu_process_totals AS
SELECT sample_id,
       sum(util_pct) / 100.0 AS gpu_usage,
       sum(vram_used_bytes) / 1048576.0 AS gpu_vram_mib,
       count(DISTINCT gpu_id) AS gpu_utilized
FROM gpu_process_samples
GROUP BY sample_id;

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
CREATE VIEW run_sample_counts AS
SELECT r.id AS run_id,
       (SELECT count(*) FROM samples WHERE run_id = r.id)
       - EXISTS (SELECT 1 FROM samples WHERE run_id = r.id AND seq = 0 AND kind = 'baseline')
           AS samples
FROM runs r;

-- Every column of a sample, then its per-interval counts per second of its interval (NULL for
-- the baseline, which has no interval).
CREATE VIEW sample_rates AS
SELECT s.*,
       s.disk_read_bytes / s.interval_s AS disk_read_bytes_per_s,
       s.disk_write_bytes / s.interval_s AS disk_write_bytes_per_s,
       (s.disk_read_bytes + s.disk_write_bytes) / s.interval_s AS disk_io_bytes_per_s,
       s.net_rx_bytes / s.interval_s AS net_rx_bytes_per_s,
       s.net_tx_bytes / s.interval_s AS net_tx_bytes_per_s,
       s.proc_read_bytes / s.interval_s AS proc_read_bytes_per_s,
       s.proc_write_bytes / s.interval_s AS proc_write_bytes_per_s,
       (s.proc_read_bytes + s.proc_write_bytes) / s.interval_s AS proc_io_bytes_per_s,
       s.cgroup_cpu_s / s.interval_s AS cgroup_cores
FROM samples s;

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
-- report show. The Python layouts below select from it; summary and report read it.
CREATE VIEW sample_metrics AS
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
       g.gpu_usage AS system_gpu_usage,
       g.gpu_vram_mib AS system_gpu_vram_mib,
       g.gpu_utilized AS system_gpu_utilized,
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
       -- without GPU rows in the sample Python prints no GPU values; with them, 0 for a tree
       -- that has no process on a GPU
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_usage, 0.0) END AS process_gpu_usage,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_vram_mib, 0.0) END
           AS process_gpu_vram_mib,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_utilized, 0) END
           AS process_gpu_utilized,
       s.disk_read_bytes_per_s AS system_disk_read_bytes_per_s,
       s.disk_write_bytes_per_s AS system_disk_write_bytes_per_s,
       s.disk_io_bytes_per_s AS system_disk_io_bytes_per_s,
       s.net_rx_bytes_per_s AS system_net_recv_bytes_per_s,
       s.net_tx_bytes_per_s AS system_net_sent_bytes_per_s,
       s.proc_read_bytes_per_s AS process_disk_read_bytes_per_s,
       s.proc_write_bytes_per_s AS process_disk_write_bytes_per_s,
       s.proc_io_bytes_per_s AS process_disk_io_bytes_per_s
FROM sample_rates s
LEFT JOIN gpu_totals g ON g.sample_id = s.id
LEFT JOIN gpu_process_totals pg ON pg.sample_id = s.id
WHERE s.kind <> 'baseline';

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

-- One JSON object per sample in the Rust reference's schema (resource-tracker-rs 0.1.14 §2):
-- its field names, nesting and types (its *_mib memory fields are truncated integers), plus
-- rtrack's own fields beside them (float timestamp, interval, pressure, the process tree,
-- exact KiB values). Nothing of the reference is renamed.
CREATE VIEW rust_sample AS
SELECT s.run_id, s.seq, s.id AS sample_id, s.ts AS timestamp,
json_object(
    'timestamp_secs', CAST(s.ts AS INTEGER),
    'timestamp', s.ts,
    'actual_interval_ms', CAST(s.interval_s * 1000 AS INTEGER),
    'interval_s', s.interval_s,
    'job_name', r.job_name,
    'tracked_pid', s.proc_root_pid,
    'cpu', json_object(
        'utilization_pct', s.cpu_busy_cores,
        'per_core_pct', json((SELECT json_group_array(c.busy_pct) FROM
            (SELECT busy_pct FROM cpu_core_samples WHERE sample_id = s.id ORDER BY core) c)),
        'utime_secs', s.cpu_utime_s,
        'stime_secs', s.cpu_stime_s,
        'usage_cores', s.cpu_usage,
        'process_count', s.processes,
        'procs_running', s.procs_running,
        'procs_blocked', s.procs_blocked,
        'cgroup_usage_secs', s.cgroup_cpu_s,
        'cgroup_utilization_pct', min(s.cgroup_cores,
                                      coalesce(min(s.cgroup_limit_cores, s.ncores), s.ncores)),
        'cgroup_cores', s.cgroup_cores,
        'cgroup_limit_cores', s.cgroup_limit_cores,
        'process_cores_used', s.proc_cpu_usage,
        'process_child_count', s.proc_children,
        'process_utime_secs', s.proc_utime_s,
        'process_stime_secs', s.proc_stime_s,
        -- the reference's integer fields: its 0 where the memory is unknown (a tree of zombies)
        'process_pss_mib', CASE WHEN s.proc_root_pid IS NOT NULL
                                THEN coalesce(s.proc_pss_kib, 0) / 1024 END,
        'process_rss_mib', CASE WHEN s.proc_root_pid IS NOT NULL
                                THEN coalesce(s.proc_rss_kib, 0) / 1024 END,
        'process_pss_kib', s.proc_pss_kib,
        'process_rss_kib', s.proc_rss_kib,
        'process_disk_read_bytes', s.proc_read_bytes,
        'process_disk_write_bytes', s.proc_write_bytes,
        'process_gpu_usage', CASE WHEN s.proc_root_pid IS NOT NULL THEN m.process_gpu_usage END,
        'process_gpu_vram_mib', CASE WHEN s.proc_root_pid IS NOT NULL
                                     THEN m.process_gpu_vram_mib END,
        'process_gpu_utilized', CASE WHEN s.proc_root_pid IS NOT NULL
                                     THEN m.process_gpu_utilized END),
    'memory', json_object(
        'total_mib', s.mem_total_kib / 1024,
        'free_mib', s.mem_free_kib / 1024,
        'available_mib', (s.mem_total_kib - s.mem_used_kib) / 1024,
        'used_mib', s.mem_used_kib / 1024,
        'used_pct', CASE WHEN s.mem_total_kib / 1024 > 0
                         THEN (s.mem_used_kib / 1024) * 100.0 / (s.mem_total_kib / 1024)
                         ELSE 0.0 END,
        'buffers_mib', s.mem_buffers_kib / 1024,
        'cached_mib', s.mem_cached_kib / 1024 + coalesce(s.mem_sreclaimable_kib, 0) / 1024,
        'active_mib', s.mem_active_kib / 1024,
        'inactive_mib', s.mem_inactive_kib / 1024,
        'swap_total_mib', s.swap_total_kib / 1024,
        'swap_used_mib', max(s.swap_total_kib / 1024 - s.swap_free_kib / 1024, 0),
        'swap_used_pct', CASE WHEN s.swap_total_kib / 1024 > 0
                              THEN max(s.swap_total_kib / 1024 - s.swap_free_kib / 1024, 0)
                                   * 100.0 / (s.swap_total_kib / 1024)
                              ELSE 0.0 END,
        'total_kib', s.mem_total_kib,
        'used_kib', s.mem_used_kib,
        'available_kib', s.mem_available_kib,
        'shmem_kib', s.mem_shmem_kib),
    'pressure', json_object(
        'cpu', json_object('some_pct', s.psi_cpu_some_pct, 'full_pct', s.psi_cpu_full_pct,
                           'some_total_us', s.psi_cpu_some_us, 'full_total_us', s.psi_cpu_full_us),
        'memory', json_object('some_pct', s.psi_memory_some_pct,
                              'full_pct', s.psi_memory_full_pct,
                              'some_total_us', s.psi_memory_some_us,
                              'full_total_us', s.psi_memory_full_us),
        'io', json_object('some_pct', s.psi_io_some_pct, 'full_pct', s.psi_io_full_pct,
                          'some_total_us', s.psi_io_some_us, 'full_total_us', s.psi_io_full_us)),
    'network', json((SELECT json_group_array(json(j)) FROM (
        SELECT json_object(
            'interface', n.name,
            'mac_address', n.mac,
            'driver', n.driver,
            'operstate', ns.operstate,
            'speed_mbps', n.speed_mbps,
            'mtu', n.mtu,
            'rx_bytes_per_sec', ns.rx_bytes_per_s,
            'tx_bytes_per_sec', ns.tx_bytes_per_s,
            'rx_bytes_total', ns.rx_bytes_total,
            'tx_bytes_total', ns.tx_bytes_total,
            'rx_bytes', ns.rx_bytes,
            'tx_bytes', ns.tx_bytes) AS j
        FROM nic_sample_rates ns JOIN nics n ON n.id = ns.nic_id
        WHERE ns.sample_id = s.id ORDER BY n.name))),
    'disk', json((SELECT json_group_array(json(j)) FROM (
        SELECT json_object(
            'device', d.name,
            'model', d.model,
            'vendor', d.vendor,
            'serial', d.serial,
            'device_type', d.type,
            'capacity_bytes', d.capacity_bytes,
            'read_bytes_per_sec', ds.read_bytes_per_s,
            'write_bytes_per_sec', ds.write_bytes_per_s,
            'read_bytes_total', ds.sectors_read * 512,
            'write_bytes_total', ds.sectors_written * 512,
            'read_bytes', ds.read_bytes,
            'write_bytes', ds.write_bytes,
            'mounts', json((SELECT json_group_array(json(mj)) FROM (
                SELECT json_object(
                    'mount_point', m.mount_point,
                    'filesystem', m.fstype,
                    'total_bytes', ms.total_bytes,
                    'used_bytes', ms.total_bytes - ms.free_bytes,
                    'available_bytes', ms.available_bytes,
                    'used_pct', CASE WHEN ms.total_bytes > 0
                                     THEN (ms.total_bytes - ms.free_bytes) * 100.0 / ms.total_bytes
                                     ELSE 0.0 END) AS mj
                FROM mount_samples ms JOIN mounts m ON m.id = ms.mount_id
                WHERE ms.sample_id = s.id AND m.disk = d.name
                  AND m.id = (SELECT min(m2.id) FROM mounts m2 JOIN mount_samples ms2
                              ON ms2.mount_id = m2.id AND ms2.sample_id = s.id
                              WHERE m2.source = m.source AND m2.disk = d.name)
                ORDER BY m.id)))) AS j
        FROM disk_sample_rates ds JOIN disks d ON d.id = ds.disk_id
        WHERE ds.sample_id = s.id AND d.name NOT LIKE 'loop%' AND d.name NOT LIKE 'ram%'
        ORDER BY d.name))),
    'gpu', json((SELECT json_group_array(json(j)) FROM (
        SELECT json_object(
            'uuid', gp.uuid,
            'name', gp.name,
            'device_type', 'GPU',
            'host_id', CASE gp.vendor WHEN 'nvidia' THEN CAST(gp.idx AS TEXT) ELSE gp.pci_bus_id END,
            'detail', json_object('vendor', gp.vendor, 'driver_version', gp.driver_version,
                                  'pci_bus_id', gp.pci_bus_id),
            'utilization_pct', gs.util_pct,
            'memory_utilization_pct', gs.mem_util_pct,
            'vram_total_bytes', coalesce(gs.vram_total_bytes, gp.vram_total_bytes),
            'vram_used_bytes', gs.vram_used_bytes,
            'vram_used_pct', gs.vram_used_bytes * 100.0
                             / nullif(coalesce(gs.vram_total_bytes, gp.vram_total_bytes), 0),
            'temperature_celsius', CAST(round(gs.temperature_c) AS INTEGER),
            'power_watts', gs.power_w,
            'frequency_mhz', gs.clock_graphics_mhz,
            'sm_clock_mhz', gs.clock_sm_mhz,
            'memory_clock_mhz', gs.clock_mem_mhz,
            'core_count', gp.core_count) AS j
        FROM gpu_samples gs JOIN gpus gp ON gp.id = gs.gpu_id
        WHERE gs.sample_id = s.id ORDER BY gp.idx))),
    'processes', json((SELECT json_group_array(json(j)) FROM (
        SELECT json_object(
            'pid', p.pid,
            'ppid', ps.ppid,
            'name', p.name,
            'state', ps.state,
            'threads', ps.threads,
            'cpu_utime_secs', ps.cpu_utime_s,
            'cpu_stime_secs', ps.cpu_stime_s,
            'pss_kib', ps.pss_kib,
            'rss_kib', ps.rss_kib,
            'disk_read_bytes', ps.read_bytes,
            'disk_write_bytes', ps.write_bytes,
            'gpu_vram_bytes', (SELECT sum(x.vram_used_bytes) FROM gpu_process_samples x
                               WHERE x.sample_id = s.id AND x.process_id = p.id),
            'gpu_util_pct', (SELECT sum(x.util_pct) FROM gpu_process_samples x
                             WHERE x.sample_id = s.id AND x.process_id = p.id)) AS j
        FROM process_samples ps JOIN processes p ON p.id = ps.process_id
        WHERE ps.sample_id = s.id ORDER BY p.pid))),
    'resource-tracker-version', r.rtrack_version,
    'rtrack_version', r.rtrack_version
) AS json
FROM sample_rates s JOIN runs r ON r.id = s.run_id
JOIN sample_metrics m ON m.sample_id = s.id
WHERE s.kind <> 'baseline';
