-- rtrack database schema, version 1 (PRAGMA user_version = 1).
--
-- Conventions (docs/schema.md has the full reference):
--   * identity once, measurements per sample: runs, disks, nics, mounts, gpus, processes hold what
--     does not change; *_samples tables hold one row per sample and object;
--   * raw kernel counters keep the kernel's name and are cumulative since boot (cpu_user,
--     sectors_read, rx_bytes_total, utime ...); per-interval values computed at record time say
--     so in their name (cpu_utime_s, read_bytes, rx_bytes ...) and are NULL in the baseline sample;
--   * memory from /proc is in KiB (suffix _kib), byte counts in bytes, times in seconds;
--   * unknown is NULL, never 0.
-- Later versions are reached by sql/migrations/NNNN_*.sql, applied in order.

CREATE TABLE runs (
    id                INTEGER PRIMARY KEY,
    uuid              TEXT NOT NULL UNIQUE,
    mode              TEXT NOT NULL CHECK (mode IN ('run', 'record')),
    command           TEXT,           -- JSON array of the job's argv (run mode)
    pid               INTEGER,        -- tracked root pid: the job (run) or --pid (record)
    job_name          TEXT,
    project_name      TEXT,
    stage_name        TEXT,
    task_name         TEXT,
    team              TEXT,
    env               TEXT,
    language          TEXT,
    orchestrator      TEXT,
    executor          TEXT,
    external_run_id   TEXT,
    container_image   TEXT,
    interval_s        REAL NOT NULL,
    started_at        REAL NOT NULL,  -- epoch seconds
    ended_at          REAL,
    status            TEXT NOT NULL DEFAULT 'running'
                      CHECK (status IN ('running', 'finished', 'failed')),
    exit_code         INTEGER,        -- what rtrack exited with (job code, 128+N, 126, 127)
    exit_signal       INTEGER,        -- signal that killed the job, if any
    end_reason        TEXT,           -- exited, signaled, spawn-failed, interrupted, duration, tree-gone
    host_hostname     TEXT,
    host_machine_id   TEXT,
    host_vcpus        INTEGER,
    host_cpu_model    TEXT,
    host_memory_kib   INTEGER,
    host_kernel       TEXT,
    host_os           TEXT,
    host_boot_time    REAL,           -- epoch seconds (btime of /proc/stat)
    clk_tck           INTEGER NOT NULL,
    page_size         INTEGER NOT NULL,
    rtrack_version    TEXT NOT NULL
) STRICT;

CREATE TABLE run_tags (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL,
    key       TEXT NOT NULL,
    value     TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) STRICT, WITHOUT ROWID;

CREATE TABLE samples (
    id                 INTEGER PRIMARY KEY,
    run_id             INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,   -- 0 = baseline
    kind               TEXT NOT NULL CHECK (kind IN ('baseline', 'periodic', 'final')),
    ts                 REAL NOT NULL,      -- wall clock at the start of the sample, epoch seconds
    mono               REAL NOT NULL,      -- CLOCK_MONOTONIC seconds
    interval_s         REAL,               -- actual seconds since the previous sample

    -- system CPU: the aggregate line of /proc/stat, cumulative ticks (clk_tck per second)
    cpu_user           INTEGER,
    cpu_nice           INTEGER,
    cpu_system         INTEGER,
    cpu_idle           INTEGER,
    cpu_iowait         INTEGER,
    cpu_irq            INTEGER,
    cpu_softirq        INTEGER,
    cpu_steal          INTEGER,
    cpu_guest          INTEGER,
    cpu_guest_nice     INTEGER,
    cpu_utime_s        REAL,     -- Python: delta (user+nice)/clk_tck, CPU-seconds in the interval
    cpu_stime_s        REAL,     -- Python: delta system/clk_tck
    cpu_usage          REAL,     -- Python: (utime+stime delta)/interval, busy cores
    cpu_busy_cores     REAL,     -- Rust: share of non-idle ticks (incl. irq, softirq, steal) x cores
    ncores             INTEGER,
    processes          INTEGER,  -- numeric entries of /proc
    procs_running      INTEGER,
    procs_blocked      INTEGER,
    forks_total        INTEGER,  -- 'processes' line of /proc/stat
    ctxt_total         INTEGER,

    -- the cgroup rtrack runs in (its job's, its container's): CPU charged to it
    cgroup_usage_us        INTEGER,  -- cumulative microseconds (cpu.stat usage_usec, cpuacct.usage)
    cgroup_cpu_s           REAL,     -- CPU-seconds in the interval
    cgroup_limit_cores     REAL,     -- CFS quota / period of the tightest ancestor; NULL = none

    -- memory: /proc/meminfo, KiB
    mem_total_kib          INTEGER,
    mem_free_kib           INTEGER,
    mem_available_kib      INTEGER,  -- NULL on kernels without MemAvailable
    mem_used_kib           INTEGER,  -- MemTotal - MemAvailable (old kernels: - free - buffers - cached - sreclaimable)
    mem_buffers_kib        INTEGER,
    mem_cached_kib         INTEGER,  -- Cached (without SReclaimable)
    mem_sreclaimable_kib   INTEGER,
    mem_shmem_kib          INTEGER,
    mem_active_kib         INTEGER,
    mem_inactive_kib       INTEGER,
    swap_total_kib         INTEGER,
    swap_free_kib          INTEGER,

    -- disks, mounts, network: aggregates of the per-object rows
    disk_read_bytes        INTEGER,  -- whole disks present in both samples, 512-byte sectors
    disk_write_bytes       INTEGER,
    disk_space_total_bytes INTEGER,  -- counted mounts: f_blocks * f_frsize
    disk_space_used_bytes  INTEGER,  -- (f_blocks - f_bavail) * f_frsize
    disk_space_free_bytes  INTEGER,  -- f_bavail * f_frsize
    net_rx_bytes           INTEGER,  -- interfaces present in both samples except lo
    net_tx_bytes           INTEGER,

    -- pressure stall information: cumulative microseconds, and per-interval % of time stalled
    psi_cpu_some_us        INTEGER,
    psi_cpu_full_us        INTEGER,
    psi_memory_some_us     INTEGER,
    psi_memory_full_us     INTEGER,
    psi_io_some_us         INTEGER,
    psi_io_full_us         INTEGER,
    psi_cpu_some_pct       REAL,
    psi_cpu_full_pct       REAL,
    psi_memory_some_pct    REAL,
    psi_memory_full_pct    REAL,
    psi_io_some_pct        REAL,
    psi_io_full_pct        REAL,

    -- tracked process tree (NULL columns when no tree is tracked)
    proc_root_pid          INTEGER,
    proc_count             INTEGER,  -- live processes of the tree, root included
    proc_children          INTEGER,  -- live descendants of the root
    proc_utime_s           REAL,     -- utime+cutime with the exited-children correction
    proc_stime_s           REAL,
    proc_cpu_usage         REAL,     -- busy cores
    proc_pss_kib           INTEGER,
    proc_rss_kib           INTEGER,
    proc_read_bytes        INTEGER,  -- storage-layer bytes (/proc/PID/io), per interval
    proc_write_bytes       INTEGER,
    proc_utime_total       INTEGER,  -- sum over the tree of utime+cutime ticks (raw)
    proc_stime_total       INTEGER,
    UNIQUE (run_id, seq)
) STRICT;

CREATE TABLE cpu_core_samples (
    sample_id   INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    core        INTEGER NOT NULL,
    user        INTEGER,
    nice        INTEGER,
    system      INTEGER,
    idle        INTEGER,
    iowait      INTEGER,
    irq         INTEGER,
    softirq     INTEGER,
    steal       INTEGER,
    guest       INTEGER,
    guest_nice  INTEGER,
    busy_pct    REAL,      -- non-idle share of the interval, 0..100
    PRIMARY KEY (sample_id, core)
) STRICT, WITHOUT ROWID;

CREATE TABLE disks (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,
    major           INTEGER,
    minor           INTEGER,
    model           TEXT,
    vendor          TEXT,
    serial          TEXT,
    type            TEXT CHECK (type IN ('nvme', 'ssd', 'hdd')),
    capacity_bytes  INTEGER,
    hw_sector_size  INTEGER,   -- informational: diskstats always counts 512-byte sectors
    UNIQUE (run_id, name)
) STRICT;

CREATE TABLE disk_samples (
    sample_id        INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    disk_id          INTEGER NOT NULL REFERENCES disks (id) ON DELETE CASCADE,
    reads            INTEGER,
    reads_merged     INTEGER,
    sectors_read     INTEGER,
    read_ms          INTEGER,
    writes           INTEGER,
    writes_merged    INTEGER,
    sectors_written  INTEGER,
    write_ms         INTEGER,
    in_flight        INTEGER,
    io_ms            INTEGER,
    weighted_io_ms   INTEGER,
    read_bytes       INTEGER,  -- per interval
    write_bytes      INTEGER,
    PRIMARY KEY (sample_id, disk_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE mounts (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    mount_point  TEXT NOT NULL,   -- decoded (\040 -> space)
    fstype       TEXT NOT NULL,
    source       TEXT NOT NULL,
    disk         TEXT,            -- whole disk holding the filesystem, when it is a block device
    UNIQUE (run_id, mount_point, fstype, source)
) STRICT;

CREATE TABLE mount_samples (
    sample_id        INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    mount_id         INTEGER NOT NULL REFERENCES mounts (id) ON DELETE CASCADE,
    total_bytes      INTEGER,  -- f_blocks * f_frsize
    used_bytes       INTEGER,  -- (f_blocks - f_bavail) * f_frsize
    available_bytes  INTEGER,  -- f_bavail * f_frsize
    free_bytes       INTEGER,  -- f_bfree * f_frsize
    PRIMARY KEY (sample_id, mount_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE nics (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    mac         TEXT,
    driver      TEXT,
    mtu         INTEGER,
    speed_mbps  INTEGER,
    UNIQUE (run_id, name)
) STRICT;

CREATE TABLE nic_samples (
    sample_id         INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    nic_id            INTEGER NOT NULL REFERENCES nics (id) ON DELETE CASCADE,
    rx_bytes_total    INTEGER,
    rx_packets_total  INTEGER,
    rx_errors_total   INTEGER,
    rx_dropped_total  INTEGER,
    tx_bytes_total    INTEGER,
    tx_packets_total  INTEGER,
    tx_errors_total   INTEGER,
    tx_dropped_total  INTEGER,
    rx_bytes          INTEGER,  -- per interval
    tx_bytes          INTEGER,
    operstate         TEXT,
    PRIMARY KEY (sample_id, nic_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE gpus (
    id               INTEGER PRIMARY KEY,
    run_id           INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,
    vendor           TEXT NOT NULL CHECK (vendor IN ('nvidia', 'amd')),
    uuid             TEXT,
    name             TEXT,
    pci_bus_id       TEXT,
    driver_version   TEXT,
    vram_total_bytes INTEGER,
    core_count       INTEGER,
    UNIQUE (run_id, idx)
) STRICT;

CREATE TABLE gpu_samples (
    sample_id         INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    gpu_id            INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    util_pct          REAL,
    mem_util_pct      REAL,
    vram_used_bytes   INTEGER,
    vram_total_bytes  INTEGER,
    temperature_c     REAL,
    power_w           REAL,
    clock_graphics_mhz INTEGER,
    clock_sm_mhz      INTEGER,
    clock_mem_mhz     INTEGER,
    PRIMARY KEY (sample_id, gpu_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE processes (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    pid          INTEGER NOT NULL,
    starttime    INTEGER NOT NULL,  -- ticks after boot: (pid, starttime) names a process uniquely
    ppid         INTEGER,           -- parent when first seen
    name         TEXT,              -- comm
    cmdline      TEXT,              -- JSON array of argv, NULL for kernel threads / unreadable
    first_seq    INTEGER NOT NULL,  -- sample in which it was first seen
    UNIQUE (run_id, pid, starttime)
) STRICT;

CREATE TABLE process_samples (
    sample_id          INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    process_id         INTEGER NOT NULL REFERENCES processes (id) ON DELETE CASCADE,
    ppid               INTEGER,
    state              TEXT,
    threads            INTEGER,
    utime              INTEGER,  -- ticks, cumulative (the process's own)
    stime              INTEGER,
    cutime             INTEGER,  -- ticks of reaped children
    cstime             INTEGER,
    rss_kib            INTEGER,
    pss_kib            INTEGER,  -- NULL when smaps_rollup is unreadable
    read_bytes_total   INTEGER,  -- /proc/PID/io, NULL when unreadable
    write_bytes_total  INTEGER,
    -- per interval: this process plus what its children reaped in the interval brought in
    -- beyond what rtrack had already counted for them, so the rows of a sample add up to the
    -- tree's proc_* totals; NULL when first seen (unless born in the interval)
    cpu_utime_s        REAL,
    cpu_stime_s        REAL,
    read_bytes         INTEGER,
    write_bytes        INTEGER,
    PRIMARY KEY (sample_id, process_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX process_samples_by_process ON process_samples (process_id);
