-- The views `rtrack export` (and whatever reads the database) use. They only select, rename,
-- scale and combine what the collectors computed at record time (DESIGN.md principle 1);
-- rounding and number text are the exporter's formatting. The baseline sample has no
-- interval, so the interval layouts start at seq 1, like the Python reference (which discards
-- its first diff).
--
-- Views hold no data: this file is applied after every schema upgrade, in the same
-- transaction, dropping and recreating each view, so it always matches the tables.
DROP VIEW IF EXISTS rust_sample;
DROP VIEW IF EXISTS python_combined;
DROP VIEW IF EXISTS python_process;
DROP VIEW IF EXISTS python_system;
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

-- The Python SystemTracker row (resource-tracker 0.5.0, procfs backend), 21 columns.
CREATE VIEW python_system AS
SELECT s.run_id, s.seq, s.id AS sample_id,
       s.ts AS timestamp,
       s.processes AS processes,
       s.cpu_utime_s AS utime,
       s.cpu_stime_s AS stime,
       s.cpu_usage AS cpu_usage,
       s.mem_free_kib / 1024.0 AS memory_free_mib,
       s.mem_used_kib / 1024.0 AS memory_used_mib,
       s.mem_buffers_kib / 1024.0 AS memory_buffers_mib,
       (s.mem_cached_kib + coalesce(s.mem_sreclaimable_kib, 0)) / 1024.0 AS memory_cached_mib,
       s.mem_active_kib / 1024.0 AS memory_active_mib,
       s.mem_inactive_kib / 1024.0 AS memory_inactive_mib,
       s.disk_read_bytes AS disk_read_bytes,
       s.disk_write_bytes AS disk_write_bytes,
       s.disk_space_total_bytes / 1e9 AS disk_space_total_gb,
       s.disk_space_used_bytes / 1e9 AS disk_space_used_gb,
       s.disk_space_free_bytes / 1e9 AS disk_space_free_gb,
       s.net_rx_bytes AS net_recv_bytes,
       s.net_tx_bytes AS net_sent_bytes,
       g.gpu_usage AS gpu_usage,
       g.gpu_vram_mib AS gpu_vram_mib,
       g.gpu_utilized AS gpu_utilized
FROM samples s
LEFT JOIN gpu_totals g ON g.sample_id = s.id
WHERE s.kind <> 'baseline';

-- The Python ProcessTracker row, 12 columns (all NULL for a system-only recording).
CREATE VIEW python_process AS
SELECT s.run_id, s.seq, s.id AS sample_id,
       s.ts AS timestamp,
       s.proc_root_pid AS pid,
       s.proc_children AS children,
       s.proc_utime_s AS utime,
       s.proc_stime_s AS stime,
       s.proc_cpu_usage AS cpu_usage,
       s.proc_pss_kib / 1024.0 AS memory_mib,
       s.proc_read_bytes AS disk_read_bytes,
       s.proc_write_bytes AS disk_write_bytes,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_usage, 0.0) END AS gpu_usage,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_vram_mib, 0.0) END AS gpu_vram_mib,
       CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_utilized, 0) END AS gpu_utilized
FROM samples s
LEFT JOIN gpu_totals g ON g.sample_id = s.id
LEFT JOIN gpu_process_totals pg ON pg.sample_id = s.id
WHERE s.kind <> 'baseline';

-- Python's get_combined_metrics() / the Sentinel S3 batch layout, 32 columns: the system
-- tracker's timestamp, then system_*, then process_* (the process timestamp is dropped).
CREATE VIEW python_combined AS
SELECT y.run_id, y.seq, y.sample_id,
       y.timestamp AS timestamp,
       y.processes AS system_processes,
       y.utime AS system_utime,
       y.stime AS system_stime,
       y.cpu_usage AS system_cpu_usage,
       y.memory_free_mib AS system_memory_free_mib,
       y.memory_used_mib AS system_memory_used_mib,
       y.memory_buffers_mib AS system_memory_buffers_mib,
       y.memory_cached_mib AS system_memory_cached_mib,
       y.memory_active_mib AS system_memory_active_mib,
       y.memory_inactive_mib AS system_memory_inactive_mib,
       y.disk_read_bytes AS system_disk_read_bytes,
       y.disk_write_bytes AS system_disk_write_bytes,
       y.disk_space_total_gb AS system_disk_space_total_gb,
       y.disk_space_used_gb AS system_disk_space_used_gb,
       y.disk_space_free_gb AS system_disk_space_free_gb,
       y.net_recv_bytes AS system_net_recv_bytes,
       y.net_sent_bytes AS system_net_sent_bytes,
       y.gpu_usage AS system_gpu_usage,
       y.gpu_vram_mib AS system_gpu_vram_mib,
       y.gpu_utilized AS system_gpu_utilized,
       p.pid AS process_pid,
       p.children AS process_children,
       p.utime AS process_utime,
       p.stime AS process_stime,
       p.cpu_usage AS process_cpu_usage,
       p.memory_mib AS process_memory_mib,
       p.disk_read_bytes AS process_disk_read_bytes,
       p.disk_write_bytes AS process_disk_write_bytes,
       p.gpu_usage AS process_gpu_usage,
       p.gpu_vram_mib AS process_gpu_vram_mib,
       p.gpu_utilized AS process_gpu_utilized
FROM python_system y
JOIN python_process p ON p.sample_id = y.sample_id;

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
        'cgroup_utilization_pct', min(s.cgroup_cpu_s / s.interval_s,
                                      coalesce(min(s.cgroup_limit_cores, s.ncores), s.ncores)),
        'cgroup_cores', s.cgroup_cpu_s / s.interval_s,
        'cgroup_limit_cores', s.cgroup_limit_cores,
        'process_cores_used', s.proc_cpu_usage,
        'process_child_count', s.proc_children,
        'process_utime_secs', s.proc_utime_s,
        'process_stime_secs', s.proc_stime_s,
        'process_pss_mib', s.proc_pss_kib / 1024,
        'process_rss_mib', s.proc_rss_kib / 1024,
        'process_pss_kib', s.proc_pss_kib,
        'process_rss_kib', s.proc_rss_kib,
        'process_disk_read_bytes', s.proc_read_bytes,
        'process_disk_write_bytes', s.proc_write_bytes,
        'process_gpu_usage', CASE WHEN s.proc_root_pid IS NOT NULL AND gt.sample_id IS NOT NULL
                                  THEN coalesce(pg.gpu_usage, 0.0) END,
        'process_gpu_vram_mib', CASE WHEN s.proc_root_pid IS NOT NULL AND gt.sample_id IS NOT NULL
                                     THEN coalesce(pg.gpu_vram_mib, 0.0) END,
        'process_gpu_utilized', CASE WHEN s.proc_root_pid IS NOT NULL AND gt.sample_id IS NOT NULL
                                     THEN coalesce(pg.gpu_utilized, 0) END),
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
            'rx_bytes_per_sec', ns.rx_bytes / s.interval_s,
            'tx_bytes_per_sec', ns.tx_bytes / s.interval_s,
            'rx_bytes_total', ns.rx_bytes_total,
            'tx_bytes_total', ns.tx_bytes_total,
            'rx_bytes', ns.rx_bytes,
            'tx_bytes', ns.tx_bytes) AS j
        FROM nic_samples ns JOIN nics n ON n.id = ns.nic_id
        WHERE ns.sample_id = s.id ORDER BY n.name))),
    'disk', json((SELECT json_group_array(json(j)) FROM (
        SELECT json_object(
            'device', d.name,
            'model', d.model,
            'vendor', d.vendor,
            'serial', d.serial,
            'device_type', d.type,
            'capacity_bytes', d.capacity_bytes,
            'read_bytes_per_sec', ds.read_bytes / s.interval_s,
            'write_bytes_per_sec', ds.write_bytes / s.interval_s,
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
        FROM disk_samples ds JOIN disks d ON d.id = ds.disk_id
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
FROM samples s JOIN runs r ON r.id = s.run_id
LEFT JOIN gpu_totals gt ON gt.sample_id = s.id
LEFT JOIN gpu_process_totals pg ON pg.sample_id = s.id
WHERE s.kind <> 'baseline';
