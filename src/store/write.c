/* write.c - recording into the database: the run's row, its samples, the run's end.
 *
 * Samples are batched so a commit happens at least once a second (the sampler decides when).
 * Statements are prepared when first used and reused. Identity rows (disks, nics, mounts,
 * processes) are upserted once per run and their ids cached. */
#include <math.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "internal.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"
#include "rtrack/version.h"

/* The database file was deleted (or renamed) while open. In WAL mode SQLite would go on
 * committing into the unlinked file and its -wal, so every later sample would be lost without
 * a word; instead each write fails, as on a full disk (one stat() per transaction). */
static int file_gone(struct rt_store *s)
{
    int moved = 0;
    if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || !moved)
        return 0;
    s->gone = 1;
    store_err(s, "cannot write to database '%s': the file was deleted or renamed while recording",
              s->path);
    return 1;
}

/* --- statements ------------------------------------------------------------------------------ */

/* Every table a sample writes is described once, here: its columns, each with where its value
 * comes from (a field of the struct a row is written from: the sample, a core, a disk's
 * identity, ...). The INSERT statements are generated from these tables and the values bound
 * from them, so a column cannot be bound to the wrong field; the macros check at compile time
 * that each field has the C type its column binds. */
struct col {
    const char *name;
    /* i: int64 (RT_NA = NULL), n: int, f: double (NAN = NULL), s: char * (NULL = NULL),
     * a: char array, z: char array (empty = NULL), c: one char, as a one-letter text */
    char type;
    size_t off;
};
/* offsetof(T, f), provided &T.f has type `ptr` (a compile error otherwise) */
#define COL_AT(T, f, ptr) (offsetof(T, f) + 0 * sizeof(_Generic(&((T *)0)->f, ptr : 1)))
#define COL_I(T, n, f)                                                                             \
    {                                                                                              \
        n, 'i', COL_AT(T, f, int64_t *)                                                            \
    }
#define COL_N(T, n, f)                                                                             \
    {                                                                                              \
        n, 'n', COL_AT(T, f, int *)                                                                \
    }
#define COL_F(T, n, f)                                                                             \
    {                                                                                              \
        n, 'f', COL_AT(T, f, double *)                                                             \
    }
#define COL_S(T, n, f)                                                                             \
    {                                                                                              \
        n, 's',                                                                                    \
            offsetof(T, f) + 0 * sizeof(_Generic(&((T *)0)->f, char ** : 1, const char ** : 1))    \
    }
#define COL_A(T, n, f)                                                                             \
    {                                                                                              \
        n, 'a', COL_AT(T, f, char(*)[sizeof(((T *)0)->f)])                                         \
    }
#define COL_Z(T, n, f)                                                                             \
    {                                                                                              \
        n, 'z', COL_AT(T, f, char(*)[sizeof(((T *)0)->f)])                                         \
    }
#define COL_C(T, n, f)                                                                             \
    {                                                                                              \
        n, 'c', COL_AT(T, f, char *)                                                               \
    }
#define CI(n, f) COL_I(struct rt_sample, n, f)
#define CF(n, f) COL_F(struct rt_sample, n, f)
#define CN(n, f) COL_N(struct rt_sample, n, f)
static const struct col sample_cols[] = {
    CI("seq", seq),
    CF("ts", ts),
    CF("mono", mono),
    CF("interval_s", dt),
    CI("cpu_user", cpu.v[RT_CPU_USER]),
    CI("cpu_nice", cpu.v[RT_CPU_NICE]),
    CI("cpu_system", cpu.v[RT_CPU_SYSTEM]),
    CI("cpu_idle", cpu.v[RT_CPU_IDLE]),
    CI("cpu_iowait", cpu.v[RT_CPU_IOWAIT]),
    CI("cpu_irq", cpu.v[RT_CPU_IRQ]),
    CI("cpu_softirq", cpu.v[RT_CPU_SOFTIRQ]),
    CI("cpu_steal", cpu.v[RT_CPU_STEAL]),
    CI("cpu_guest", cpu.v[RT_CPU_GUEST]),
    CI("cpu_guest_nice", cpu.v[RT_CPU_GUEST_NICE]),
    CF("cpu_utime_s", cpu_utime_s),
    CF("cpu_stime_s", cpu_stime_s),
    CF("cpu_usage", cpu_usage),
    CF("cpu_busy_cores", cpu_busy_cores),
    CN("ncores", ncores),
    CI("processes", processes),
    CI("procs_running", procs_running),
    CI("procs_blocked", procs_blocked),
    CI("forks_total", forks_total),
    CI("ctxt_total", ctxt_total),
    CI("cgroup_usage_us", cgroup_usage_us),
    CF("cgroup_cpu_s", cgroup_cpu_s),
    CF("cgroup_limit_cores", cgroup_limit_cores),
    CI("mem_total_kib", mem_total),
    CI("mem_free_kib", mem_free),
    CI("mem_available_kib", mem_available),
    CI("mem_used_kib", mem_used),
    CI("mem_buffers_kib", mem_buffers),
    CI("mem_cached_kib", mem_cached),
    CI("mem_sreclaimable_kib", mem_sreclaimable),
    CI("mem_shmem_kib", mem_shmem),
    CI("mem_active_kib", mem_active),
    CI("mem_inactive_kib", mem_inactive),
    CI("swap_total_kib", swap_total),
    CI("swap_free_kib", swap_free),
    CI("disk_read_bytes", disk_read_bytes),
    CI("disk_write_bytes", disk_write_bytes),
    CI("disk_space_total_bytes", space_total),
    CI("disk_space_used_bytes", space_used),
    CI("disk_space_free_bytes", space_free),
    CI("net_rx_bytes", net_rx_bytes),
    CI("net_tx_bytes", net_tx_bytes),
    CI("psi_cpu_some_us", psi_us[RT_PSI_CPU][RT_PSI_SOME]),
    CI("psi_cpu_full_us", psi_us[RT_PSI_CPU][RT_PSI_FULL]),
    CI("psi_memory_some_us", psi_us[RT_PSI_MEMORY][RT_PSI_SOME]),
    CI("psi_memory_full_us", psi_us[RT_PSI_MEMORY][RT_PSI_FULL]),
    CI("psi_io_some_us", psi_us[RT_PSI_IO][RT_PSI_SOME]),
    CI("psi_io_full_us", psi_us[RT_PSI_IO][RT_PSI_FULL]),
    CF("psi_cpu_some_pct", psi_pct[RT_PSI_CPU][RT_PSI_SOME]),
    CF("psi_cpu_full_pct", psi_pct[RT_PSI_CPU][RT_PSI_FULL]),
    CF("psi_memory_some_pct", psi_pct[RT_PSI_MEMORY][RT_PSI_SOME]),
    CF("psi_memory_full_pct", psi_pct[RT_PSI_MEMORY][RT_PSI_FULL]),
    CF("psi_io_some_pct", psi_pct[RT_PSI_IO][RT_PSI_SOME]),
    CF("psi_io_full_pct", psi_pct[RT_PSI_IO][RT_PSI_FULL]),
    CI("proc_count", proc_count),
    CI("proc_children", proc_children),
    CF("proc_utime_s", proc_utime_s),
    CF("proc_stime_s", proc_stime_s),
    CF("proc_cpu_usage", proc_cpu_usage),
    CF("proc_cpu_wait_s", proc_cpu_wait_s),
    CI("proc_pss_kib", proc_pss_kib),
    CI("proc_rss_kib", proc_rss_kib),
    CI("proc_read_bytes", proc_read_bytes),
    CI("proc_write_bytes", proc_write_bytes),
    CI("proc_utime_total", proc_utime_total),
    CI("proc_stime_total", proc_stime_total),
};

#define CORE(t, n, f) COL_##t(struct rt_core_sample, n, f)
static const struct col core_cols[] = {
    CORE(N, "core", core),
    CORE(I, "user", t.v[RT_CPU_USER]),
    CORE(I, "nice", t.v[RT_CPU_NICE]),
    CORE(I, "system", t.v[RT_CPU_SYSTEM]),
    CORE(I, "idle", t.v[RT_CPU_IDLE]),
    CORE(I, "iowait", t.v[RT_CPU_IOWAIT]),
    CORE(I, "irq", t.v[RT_CPU_IRQ]),
    CORE(I, "softirq", t.v[RT_CPU_SOFTIRQ]),
    CORE(I, "steal", t.v[RT_CPU_STEAL]),
    CORE(I, "guest", t.v[RT_CPU_GUEST]),
    CORE(I, "guest_nice", t.v[RT_CPU_GUEST_NICE]),
    CORE(F, "busy_pct", busy_pct),
};

#define DISK(t, n, f) COL_##t(struct rt_disk_ident, n, f)
static const struct col disk_cols[] = {
    DISK(S, "name", name),
    DISK(I, "major", major),
    DISK(I, "minor", minor),
    DISK(S, "model", model),
    DISK(S, "vendor", vendor),
    DISK(S, "serial", serial),
    DISK(S, "type", type),
    DISK(I, "capacity_bytes", capacity_bytes),
    DISK(I, "hw_sector_size", hw_sector_size),
};

#define DISK_SAMPLE(t, n, f) COL_##t(struct rt_disk_sample, n, f)
static const struct col disk_sample_cols[] = {
    DISK_SAMPLE(I, "reads", f[RT_DS_READS]),
    DISK_SAMPLE(I, "reads_merged", f[RT_DS_READS_MERGED]),
    DISK_SAMPLE(I, "sectors_read", f[RT_DS_SECTORS_READ]),
    DISK_SAMPLE(I, "read_ms", f[RT_DS_READ_MS]),
    DISK_SAMPLE(I, "writes", f[RT_DS_WRITES]),
    DISK_SAMPLE(I, "writes_merged", f[RT_DS_WRITES_MERGED]),
    DISK_SAMPLE(I, "sectors_written", f[RT_DS_SECTORS_WRITTEN]),
    DISK_SAMPLE(I, "write_ms", f[RT_DS_WRITE_MS]),
    DISK_SAMPLE(I, "in_flight", f[RT_DS_IN_FLIGHT]),
    DISK_SAMPLE(I, "io_ms", f[RT_DS_IO_MS]),
    DISK_SAMPLE(I, "weighted_io_ms", f[RT_DS_WEIGHTED_IO_MS]),
    DISK_SAMPLE(I, "read_bytes", read_bytes),
    DISK_SAMPLE(I, "write_bytes", write_bytes),
};

#define MOUNT(t, n, f) COL_##t(struct rt_mount_ident, n, f)
static const struct col mount_cols[] = {
    MOUNT(S, "mount_point", mount_point),
    MOUNT(S, "fstype", fstype),
    MOUNT(S, "source", source),
    MOUNT(S, "disk", disk),
};

#define MOUNT_SAMPLE(t, n, f) COL_##t(struct rt_mount_sample, n, f)
static const struct col mount_sample_cols[] = {
    MOUNT_SAMPLE(I, "total_bytes", total_bytes),
    MOUNT_SAMPLE(I, "used_bytes", used_bytes),
    MOUNT_SAMPLE(I, "available_bytes", available_bytes),
    MOUNT_SAMPLE(I, "free_bytes", free_bytes),
};

#define NIC(t, n, f) COL_##t(struct rt_nic_ident, n, f)
static const struct col nic_cols[] = {
    NIC(S, "name", name),
    NIC(S, "mac", mac),
    NIC(S, "driver", driver),
    NIC(I, "mtu", mtu),
    NIC(I, "speed_mbps", speed_mbps),
};

#define NIC_SAMPLE(t, n, f) COL_##t(struct rt_nic_sample, n, f)
static const struct col nic_sample_cols[] = {
    NIC_SAMPLE(I, "rx_bytes_total", f[RT_NIC_RX_BYTES]),
    NIC_SAMPLE(I, "rx_packets_total", f[RT_NIC_RX_PACKETS]),
    NIC_SAMPLE(I, "rx_errors_total", f[RT_NIC_RX_ERRS]),
    NIC_SAMPLE(I, "rx_dropped_total", f[RT_NIC_RX_DROP]),
    NIC_SAMPLE(I, "tx_bytes_total", f[RT_NIC_TX_BYTES]),
    NIC_SAMPLE(I, "tx_packets_total", f[RT_NIC_TX_PACKETS]),
    NIC_SAMPLE(I, "tx_errors_total", f[RT_NIC_TX_ERRS]),
    NIC_SAMPLE(I, "tx_dropped_total", f[RT_NIC_TX_DROP]),
    NIC_SAMPLE(I, "rx_bytes", rx_bytes),
    NIC_SAMPLE(I, "tx_bytes", tx_bytes),
    NIC_SAMPLE(Z, "operstate", operstate),
};

/* a process's identity row: first_seq, the sample that first saw it, leads (not in the struct) */
#define PROCESS(t, n, f) COL_##t(struct rt_proc_sample, n, f)
static const struct col process_cols[] = {
    PROCESS(N, "pid", pid),
    PROCESS(I, "starttime", starttime),
    PROCESS(N, "ppid", ppid),
    PROCESS(A, "name", comm),
    /* read when first seen or renamed, NULL otherwise: the upsert keeps the stored one then */
    PROCESS(S, "cmdline", cmdline_json),
};

static const struct col process_sample_cols[] = {
    PROCESS(N, "ppid", ppid),
    PROCESS(C, "state", state),
    PROCESS(I, "threads", threads),
    PROCESS(I, "utime", utime),
    PROCESS(I, "stime", stime),
    PROCESS(I, "cutime", cutime),
    PROCESS(I, "cstime", cstime),
    PROCESS(I, "rss_kib", rss_kib),
    PROCESS(I, "pss_kib", pss_kib),
    PROCESS(I, "read_bytes_total", read_total),
    PROCESS(I, "write_bytes_total", write_total),
    PROCESS(F, "cpu_utime_s", cpu_utime_s),
    PROCESS(F, "cpu_stime_s", cpu_stime_s),
    PROCESS(I, "sched_wait_ns", sched_wait_ns),
    PROCESS(F, "cpu_wait_s", cpu_wait_s),
    PROCESS(I, "read_bytes", read_bytes),
    PROCESS(I, "write_bytes", write_bytes),
};

/* a GPU's identity row: idx, its position in the sample, leads (not in the struct) */
#define GPU(t, n, f) COL_##t(struct rt_gpu_ident, n, f)
static const struct col gpu_cols[] = {
    GPU(S, "vendor", vendor),
    GPU(S, "uuid", uuid),
    GPU(S, "name", name),
    GPU(S, "pci_bus_id", pci_bus_id),
    GPU(S, "driver_version", driver_version),
    GPU(I, "vram_total_bytes", vram_total_bytes),
    GPU(I, "core_count", core_count),
};

#define GPU_SAMPLE(t, n, f) COL_##t(struct rt_gpu_sample, n, f)
static const struct col gpu_sample_cols[] = {
    GPU_SAMPLE(F, "util_pct", util_pct),
    GPU_SAMPLE(F, "mem_util_pct", mem_util_pct),
    GPU_SAMPLE(I, "vram_used_bytes", vram_used_bytes),
    GPU_SAMPLE(I, "vram_total_bytes", vram_total_bytes),
    GPU_SAMPLE(F, "temperature_c", temperature_c),
    GPU_SAMPLE(F, "power_w", power_w),
    GPU_SAMPLE(I, "clock_graphics_mhz", clock_graphics_mhz),
    GPU_SAMPLE(I, "clock_sm_mhz", clock_sm_mhz),
    GPU_SAMPLE(I, "clock_mem_mhz", clock_mem_mhz),
};

#define GPU_PROCESS(t, n, f) COL_##t(struct rt_gpu_proc, n, f)
static const struct col gpu_process_cols[] = {
    GPU_PROCESS(I, "vram_used_bytes", vram_bytes),
    GPU_PROCESS(I, "gtt_bytes", gtt_bytes),
    GPU_PROCESS(F, "util_pct", util_pct),
    GPU_PROCESS(F, "mem_util_pct", mem_util_pct),
};

/* What the samples say of how the kernel let them be read (sample.h; migration 13): the same
 * all run long, so kept on the run, written when a sample says something new. */
#define RUN_FACT(n, f) COL_S(struct rt_sample, n, f)
static const struct col run_fact_cols[] = {
    RUN_FACT("proc_memory_source", proc_memory_source),
    RUN_FACT("cpu_wait_source", cpu_wait_source),
    RUN_FACT("cpu_wait_missing", cpu_wait_missing),
    RUN_FACT("psi_missing", psi_missing),
};
_Static_assert(RT_ARRAY_LEN(run_fact_cols) == RT_ARRAY_LEN(((struct rt_store *)0)->run_facts),
               "one remembered value per run fact");

/* One table a sample writes: the ids that lead each row (the run's, the sample's, the rows it
 * refers to; the caller binds them, in this order), then the columns. `tail` follows the VALUES
 * list: an identity row's upsert, which returns the row's id, found or new. */
struct table {
    const char *name;
    const char *lead[3]; /* NULL after the last */
    const struct col *cols;
    size_t ncols;
    const char *tail;
};
#define TABLE(name, cols, tail, ...)                                                               \
    {                                                                                              \
        name, {__VA_ARGS__}, cols, RT_ARRAY_LEN(cols), tail                                        \
    }
#define UPSERT(key, set) " ON CONFLICT (" key ") DO UPDATE SET " set " RETURNING id"
static const struct table tables[ST_COUNT] = {
    [ST_SAMPLE] = TABLE("samples", sample_cols, "", "run_id", "kind", "proc_root_pid"),
    [ST_CORE] = TABLE("cpu_core_samples", core_cols, "", "sample_id"),
    [ST_DISK] = TABLE("disks", disk_cols, UPSERT("run_id, name", "name = excluded.name"), "run_id"),
    [ST_DISK_SAMPLE] = TABLE("disk_samples", disk_sample_cols, "", "sample_id", "disk_id"),
    [ST_MOUNT] =
        TABLE("mounts", mount_cols,
              UPSERT("run_id, mount_point, fstype, source", "disk = excluded.disk"), "run_id"),
    [ST_MOUNT_SAMPLE] = TABLE("mount_samples", mount_sample_cols, "", "sample_id", "mount_id"),
    [ST_NIC] = TABLE("nics", nic_cols, UPSERT("run_id, name", "name = excluded.name"), "run_id"),
    [ST_NIC_SAMPLE] = TABLE("nic_samples", nic_sample_cols, "", "sample_id", "nic_id"),
    [ST_PROCESS] = TABLE("processes", process_cols,
                         UPSERT("run_id, pid, starttime",
                                "name = excluded.name, cmdline = coalesce(excluded.cmdline, "
                                "cmdline)"),
                         "run_id", "first_seq"),
    [ST_PROCESS_SAMPLE] =
        TABLE("process_samples", process_sample_cols, "", "sample_id", "process_id"),
    [ST_GPU] =
        TABLE("gpus", gpu_cols, UPSERT("run_id, idx", "idx = excluded.idx"), "run_id", "idx"),
    [ST_GPU_SAMPLE] = TABLE("gpu_samples", gpu_sample_cols, "", "sample_id", "gpu_id"),
    [ST_GPU_PROCESS_SAMPLE] =
        TABLE("gpu_process_samples", gpu_process_cols, "", "sample_id", "process_id", "gpu_id"),
};

/* INSERT INTO name (lead..., cols...) VALUES (?, ...) tail */
static void table_sql(struct rt_buf *sql, const struct table *t)
{
    size_t n = 0;
    sql->len = 0;
    rt_buf_puts(sql, "INSERT INTO ");
    rt_buf_puts(sql, t->name);
    rt_buf_puts(sql, " (");
    for (size_t i = 0; i < RT_ARRAY_LEN(t->lead) && t->lead[i]; i++) {
        rt_buf_puts(sql, n++ ? ", " : "");
        rt_buf_puts(sql, t->lead[i]);
    }
    for (size_t i = 0; i < t->ncols; i++) {
        rt_buf_puts(sql, n++ ? ", " : "");
        rt_buf_puts(sql, t->cols[i].name);
    }
    rt_buf_puts(sql, ") VALUES (");
    for (size_t i = 0; i < n; i++)
        rt_buf_puts(sql, i ? ", ?" : "?");
    rt_buf_puts(sql, ")");
    rt_buf_puts(sql, t->tail);
}

/* UPDATE runs SET fact = ?, ... WHERE id = ? */
static void run_facts_sql(struct rt_buf *sql)
{
    rt_buf_puts(sql, "UPDATE runs SET ");
    for (size_t i = 0; i < RT_ARRAY_LEN(run_fact_cols); i++) {
        rt_buf_puts(sql, i ? ", " : "");
        rt_buf_puts(sql, run_fact_cols[i].name);
        rt_buf_puts(sql, " = ?");
    }
    rt_buf_puts(sql, " WHERE id = ?");
}

/* Statement i, compiled when first used and kept: a run on a host without GPUs never compiles
 * the GPU tables' statements. NULL (the reason in s) when it cannot be compiled. */
static sqlite3_stmt *table_stmt(struct rt_store *s, int i)
{
    if (s->st[i])
        return s->st[i];
    struct rt_buf sql = {0};
    if (i == ST_DATA_VERSION)
        rt_buf_puts(&sql, "PRAGMA data_version");
    else if (i == ST_RUN_FACTS)
        run_facts_sql(&sql);
    else
        table_sql(&sql, &tables[i]);
    if (sqlite3_prepare_v3(s->db, sql.p, -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
        SQLITE_OK) {
        sqlite3_finalize(s->st[i]);
        s->st[i] = NULL;
        store_db_err(s, "cannot prepare statements for database");
    }
    rt_buf_free(&sql);
    return s->st[i];
}

void store_bind_i(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == RT_NA)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

void store_bind_f(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

/* Text from outside rtrack (argv, process names, mount points, device models) may hold any
 * bytes; what is stored is valid UTF-8 (ill-formed bytes become U+FFFD), so every JSON document
 * built from the database by SQLite's JSON functions is valid too. Valid text is bound without
 * a copy: it must stay as it is until the statement has run. */
static void bind_text_n(sqlite3_stmt *st, int i, const char *v, size_t n)
{
    if (rt_utf8_check(v, n) == n) {
        sqlite3_bind_text(st, i, v, (int)n, SQLITE_STATIC);
        return;
    }
    char *fixed = rt_utf8_repair(v, n);
    sqlite3_bind_text(st, i, fixed, -1, SQLITE_TRANSIENT);
    free(fixed);
}

void store_bind_t(sqlite3_stmt *st, int i, const char *v)
{
    if (!v)
        sqlite3_bind_null(st, i);
    else
        bind_text_n(st, i, v, strlen(v));
}

/* Step a statement that returns nothing (or one id row with RETURNING). */
int store_step(struct rt_store *s, sqlite3_stmt *st, int64_t *id)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && id) {
        *id = sqlite3_column_int64(st, 0);
        rc = sqlite3_step(st);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return store_db_err(s, "cannot write to database");
    return 0;
}

/* --- runs --------------------------------------------------------------------------------------
 */

static void uuid_v4(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        /* no entropy source: time and pid still make a collision unlikely within one db */
        double t = rt_clock_s(0);
        memcpy(b, &t, sizeof(t));
        pid_t p = getpid();
        memcpy(b + 8, &p, sizeof(p));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* The run's Slurm facts (migration 0009), within begin_run's transaction; nothing to write
 * outside Slurm. 0, or -1 with the reason in s. */
static int write_slurm(struct rt_store *s, const struct rt_slurm *sl)
{
    if (!sl->array_job_id && !sl->array_task_id && !sl->step_id && !sl->user && !sl->partition &&
        !sl->nodename && !sl->job_gpus && sl->num_nodes == RT_NA && sl->ntasks == RT_NA &&
        sl->cpus_per_task == RT_NA && sl->gpus_on_node == RT_NA && isnan(sl->time_limit_s))
        return 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET slurm_array_job_id = ?, slurm_array_task_id = ?, "
                           "slurm_step_id = ?, slurm_job_user = ?, slurm_job_partition = ?, "
                           "slurm_nodename = ?, slurm_job_gpus = ?, slurm_job_num_nodes = ?, "
                           "slurm_ntasks = ?, slurm_cpus_per_task = ?, slurm_gpus_on_node = ?, "
                           "slurm_time_limit_s = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot write database");
    int k = 1;
    store_bind_t(st, k++, sl->array_job_id);
    store_bind_t(st, k++, sl->array_task_id);
    store_bind_t(st, k++, sl->step_id);
    store_bind_t(st, k++, sl->user);
    store_bind_t(st, k++, sl->partition);
    store_bind_t(st, k++, sl->nodename);
    store_bind_t(st, k++, sl->job_gpus);
    store_bind_i(st, k++, sl->num_nodes);
    store_bind_i(st, k++, sl->ntasks);
    store_bind_i(st, k++, sl->cpus_per_task);
    store_bind_i(st, k++, sl->gpus_on_node);
    store_bind_f(st, k++, sl->time_limit_s);
    sqlite3_bind_int64(st, k++, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    return rc;
}

int rt_store_begin_run(struct rt_store *s, const struct rt_run_desc *r, int64_t *run_id)
{
    struct rt_buf sql = {0};
    rt_buf_puts(&sql,
                "INSERT INTO runs (uuid, mode, command, pid, requested_interval_s, started_at, "
                "host_hostname, host_machine_id, host_vcpus, host_cpu_model, "
                "host_memory_kib, host_kernel, host_os, host_boot_time, clk_tck, "
                "page_size, rtrack_version, cgroup_cpu_quota_cores, cgroup_cpuset_cpus, "
                "cgroup_memory_limit_bytes, slurm_job_id, slurm_cpus_on_node, "
                "slurm_mem_per_node_mib, slurm_mem_per_cpu_mib, cuda_visible_devices, alloc_gpus, "
                "cgroup_path");
    for (int i = 0; i < RT_META_N; i++) {
        rt_buf_puts(&sql, ", ");
        rt_buf_puts(&sql, rt_meta_columns[i]);
    }
    rt_buf_puts(&sql, ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?");
    for (int i = 0; i < RT_META_N; i++)
        rt_buf_puts(&sql, ",?");
    rt_buf_puts(&sql, ")");

    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (store_exec(s, "BEGIN IMMEDIATE") != 0) {
        /* (busy: another recorder writes its run into the file, it stays) */
        int busy = (sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_BUSY;
        store_db_err(s, "cannot write database");
        if (!busy)
            s->discard = store_created_unused(s);
        goto out;
    }
    if (sqlite3_prepare_v2(s->db, sql.p, -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, "cannot write database");
        goto rollback;
    }
    char uuid[37];
    uuid_v4(uuid);
    const struct rt_host_info *h = r->host;
    int k = 1;
    store_bind_t(st, k++, uuid);
    store_bind_t(st, k++, r->mode);
    store_bind_t(st, k++, r->command_json);
    store_bind_i(st, k++, r->pid > 0 ? r->pid : RT_NA);
    store_bind_f(st, k++, r->interval);
    store_bind_f(st, k++, r->started_at);
    store_bind_t(st, k++, h->hostname);
    store_bind_t(st, k++, h->machine_id);
    store_bind_i(st, k++, h->vcpus);
    store_bind_t(st, k++, h->cpu_model);
    store_bind_i(st, k++, h->memory_kib);
    store_bind_t(st, k++, h->kernel);
    store_bind_t(st, k++, h->os);
    store_bind_f(st, k++, h->boot_time);
    store_bind_i(st, k++, r->clk_tck);
    store_bind_i(st, k++, r->page_size);
    store_bind_t(st, k++, RTRACK_VERSION);
    struct rt_alloc none = rt_alloc_none();
    const struct rt_alloc *a = r->alloc ? r->alloc : &none;
    store_bind_f(st, k++, a->cgroup_cpu_cores);
    store_bind_i(st, k++, a->cgroup_cpuset_cpus);
    store_bind_i(st, k++, a->cgroup_memory_bytes);
    store_bind_t(st, k++, a->slurm_job_id);
    store_bind_i(st, k++, a->slurm_cpus_on_node);
    store_bind_i(st, k++, a->slurm_mem_per_node_mib);
    store_bind_i(st, k++, a->slurm_mem_per_cpu_mib);
    store_bind_t(st, k++, a->cuda_visible_devices);
    store_bind_i(st, k++, a->gpus);
    store_bind_t(st, k++, a->cgroup_path);
    for (int i = 0; i < RT_META_N; i++)
        store_bind_t(st, k++, r->meta[i]);
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, "cannot write database");
        goto rollback;
    }
    s->run_id = sqlite3_last_insert_rowid(s->db);
    if (write_slurm(s, &a->slurm) != 0)
        goto rollback;
    /* identities are rows of one run: a connection that records another run after this one
     * (tests, a long-lived writer) must not find the last run's ids by an address reused */
    rt_map_clear(&s->ids);
    rt_map_clear(&s->procs);
    memset(s->run_facts, 0, sizeof(s->run_facts));
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO run_tags (run_id, position, key, value) "
                           "VALUES (?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, "cannot write database");
        goto rollback;
    }
    for (size_t i = 0; i < r->ntags; i++) {
        sqlite3_bind_int64(st, 1, s->run_id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        store_bind_t(st, 3, r->tags[i].key);
        store_bind_t(st, 4, r->tags[i].value);
        if (store_step(s, st, NULL) != 0)
            goto rollback;
    }
    if (store_exec(s, "COMMIT") != 0) {
        store_db_err(s, "cannot write database");
        goto rollback;
    }
    *run_id = s->run_id;
    rc = 0;
    goto out;
rollback:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    /* a database made for this run that cannot take it (a full disk) is not left behind */
    s->discard = store_created_unused(s);
out:
    sqlite3_finalize(st);
    rt_buf_free(&sql);
    return rc;
}

static void rollback(struct rt_store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_tx = 0;
    /* identity rows of the rolled-back transaction are gone; upserts find the others again */
    rt_map_clear(&s->ids);
    rt_map_clear(&s->procs);
    /* and the facts it wrote: the next sample writes them again */
    memset(s->run_facts, 0, sizeof(s->run_facts));
}

/* roll back, keeping the message of what failed (ROLLBACK's own result would replace it) */
static void rollback_keep_err(struct rt_store *s)
{
    char keep[sizeof(s->err)];
    memcpy(keep, s->err, sizeof(keep));
    rollback(s);
    memcpy(s->err, keep, sizeof(keep));
}

static int update_pid(struct rt_store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "UPDATE runs SET pid = ? WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return store_db_err(s, "cannot write database");
    sqlite3_bind_int64(st, 1, s->unsaved_pid);
    sqlite3_bind_int64(st, 2, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    return rc;
}

/* (A deleted file is found at the commit: rt_store_commit checks, once per transaction.) */
static int begin_tx(struct rt_store *s)
{
    if (s->in_tx)
        return 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot write to database");
    s->in_tx = 1;
    /* the job's pid went into a transaction that was rolled back: it goes into this one */
    if (s->unsaved_pid > 0 && update_pid(s) != 0) {
        rollback_keep_err(s);
        return -1;
    }
    return 0;
}

int rt_store_prepare_samples(struct rt_store *s)
{
    /* (a GPU's statements: at the first sample that has one) */
    for (int i = ST_SAMPLE; i <= ST_PROCESS_SAMPLE; i++)
        if (!table_stmt(s, i))
            return -1;
    /* (and the run's facts: a tracked tree's baseline writes them) */
    return table_stmt(s, ST_DATA_VERSION) && table_stmt(s, ST_RUN_FACTS) ? 0 : -1;
}

int rt_store_set_run_pid(struct rt_store *s, pid_t pid)
{
    /* in the transaction the baseline sample goes into: one commit for both; until it is
     * committed, each transaction begun writes it again (a failed one is rolled back) */
    int had_tx = s->in_tx;
    s->unsaved_pid = pid;
    if (begin_tx(s) != 0)
        return -1;
    return had_tx ? update_pid(s) : 0;
}

int rt_store_retryable(const struct rt_store *s)
{
    return !s->gone;
}

int rt_store_set_run_cloud(struct rt_store *s, int64_t run, const struct rt_cloud *c)
{
    if (file_gone(s))
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET cloud_vendor_id = ?, cloud_account_id = ?, "
                           "cloud_region_id = ?, cloud_zone_id = ?, cloud_instance_type = ? "
                           "WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot write database");
    store_bind_t(st, 1, c->vendor_id);
    store_bind_t(st, 2, c->account_id);
    store_bind_t(st, 3, c->region_id);
    store_bind_t(st, 4, c->zone_id);
    store_bind_t(st, 5, c->instance_type);
    sqlite3_bind_int64(st, 6, run);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    return rc;
}

int rt_store_end_run(struct rt_store *s, const struct rt_run_end *e)
{
    sqlite3_stmt *st;
    if (file_gone(s)) {
        if (s->in_tx)
            rollback_keep_err(s);
        return -1;
    }
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, "
                           "exit_signal = ?, end_reason = ?, job_maxrss_kib = ?, "
                           "job_utime_s = ?, job_stime_s = ?, host_oom_kills = ?, "
                           "cgroup_memory_peak_bytes = ?, cgroup_oom_kills = ?, "
                           "slurm_job_state = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, "cannot write database");
        if (s->in_tx)
            rollback_keep_err(s);
        return -1;
    }
    store_bind_f(st, 1, e->ended_at);
    store_bind_t(st, 2, e->status);
    store_bind_i(st, 3, e->exit_code);
    store_bind_i(st, 4, e->exit_signal);
    store_bind_t(st, 5, e->end_reason);
    store_bind_i(st, 6, e->maxrss_kib);
    store_bind_f(st, 7, e->utime_s);
    store_bind_f(st, 8, e->stime_s);
    store_bind_i(st, 9, e->oom_kills);
    store_bind_i(st, 10, e->cgroup_peak_bytes);
    store_bind_i(st, 11, e->cgroup_oom_kills);
    store_bind_t(st, 12, e->slurm_job_state);
    sqlite3_bind_int64(st, 13, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    if (rc == 0 && s->in_tx)
        rc = rt_store_commit(s); /* with the final sample, added before */
    else if (rc != 0 && s->in_tx)
        rollback_keep_err(s);
    return rc;
}

int rt_store_last_is_final(struct rt_store *s)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE samples SET kind = 'final' WHERE run_id = ?1 AND "
                           "kind = 'periodic' AND seq = (SELECT max(seq) FROM samples "
                           "WHERE run_id = ?1)",
                           -1, &st, NULL) != SQLITE_OK) {
        store_db_err(s, "cannot write database");
        if (s->in_tx)
            rollback_keep_err(s);
        return -1;
    }
    sqlite3_bind_int64(st, 1, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    if (rc != 0 && s->in_tx)
        rollback_keep_err(s);
    return rc;
}

/* --- samples ------------------------------------------------------------------------------------
 */

/* Bind one row: its leading ids (lead NULL: the caller binds them), then each column from the
 * struct at `row`, which must stay as it is until the statement has run (text is bound without
 * a copy). */
static void bind_row(sqlite3_stmt *st, const struct table *t, const int64_t *lead, const void *row)
{
    int k = 1;
    for (size_t i = 0; i < RT_ARRAY_LEN(t->lead) && t->lead[i]; i++, k++)
        if (lead)
            sqlite3_bind_int64(st, k, lead[i]);
    for (size_t i = 0; i < t->ncols; i++, k++) {
        const char *p = (const char *)row + t->cols[i].off;
        switch (t->cols[i].type) {
        case 'i':
            store_bind_i(st, k, *(const int64_t *)p);
            break;
        case 'n':
            sqlite3_bind_int(st, k, *(const int *)p);
            break;
        case 'f':
            store_bind_f(st, k, *(const double *)p);
            break;
        case 's':
            store_bind_t(st, k, *(const char *const *)p);
            break;
        case 'a':
            store_bind_t(st, k, p);
            break;
        case 'z':
            store_bind_t(st, k, *p ? p : NULL);
            break;
        case 'c':
            bind_text_n(st, k, p, *p ? 1 : 0);
            break;
        }
    }
}

/* Write one row of table `stmt`; `id` (or NULL) gets the id an upsert returns. */
static int insert_row(struct rt_store *s, int stmt, const int64_t *lead, const void *row,
                      int64_t *id)
{
    sqlite3_stmt *st = table_stmt(s, stmt);
    if (!st)
        return -1;
    bind_row(st, &tables[stmt], lead, row);
    return store_step(s, st, id);
}

static uint64_t ptr_key(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* The row id of an identity (disk, mount, nic, GPU) in this run: upserted when first met (and
 * again after a rolled-back transaction), then cached by its address (an identity lives as long
 * as its collector). */
static int ident_id(struct rt_store *s, int stmt, const int64_t *lead, const void *ident,
                    int64_t *id)
{
    if (rt_map_get(&s->ids, ptr_key(ident), id))
        return 0;
    if (insert_row(s, stmt, lead, ident, id) != 0)
        return -1;
    rt_map_put(&s->ids, ptr_key(ident), *id);
    return 0;
}

/* The samples row; its id is what every other row of the sample refers to. */
static int insert_sample_row(struct rt_store *s, const struct rt_sample *smp, int64_t *sid)
{
    static const char *const kinds[] = {"baseline", "periodic", "final"};
    sqlite3_stmt *st = table_stmt(s, ST_SAMPLE);
    if (!st)
        return -1;
    bind_row(st, &tables[ST_SAMPLE], NULL, smp);
    /* its leads: run_id, kind (by name), proc_root_pid (only with a tree) */
    sqlite3_bind_int64(st, 1, s->run_id);
    store_bind_t(st, 2, kinds[smp->kind]);
    store_bind_i(st, 3, smp->has_tree ? smp->root_pid : RT_NA);
    if (store_step(s, st, NULL) != 0)
        return -1;
    *sid = s->last_sample_id = sqlite3_last_insert_rowid(s->db);
    return 0;
}

static int insert_cores(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    for (int i = 0; i < smp->ncores; i++)
        if (insert_row(s, ST_CORE, &sid, &smp->cores[i], NULL) != 0)
            return -1;
    return 0;
}

static int insert_disks(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    for (int i = 0; i < smp->ndisks; i++) {
        const struct rt_disk_sample *d = &smp->disks[i];
        /* a disk that has never done any I/O since boot (idle loop devices) is not stored */
        int64_t any = 0;
        for (int f = 0; f < RT_DS_NFIELDS; f++)
            any |= d->f[f];
        if (!any)
            continue;
        int64_t did;
        if (ident_id(s, ST_DISK, &s->run_id, d->ident, &did) != 0 ||
            insert_row(s, ST_DISK_SAMPLE, (const int64_t[]){sid, did}, d, NULL) != 0)
            return -1;
    }
    return 0;
}

static int insert_mounts(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    for (int i = 0; i < smp->nmounts; i++) {
        const struct rt_mount_sample *m = &smp->mounts[i];
        int64_t mid;
        if (ident_id(s, ST_MOUNT, &s->run_id, m->ident, &mid) != 0 ||
            insert_row(s, ST_MOUNT_SAMPLE, (const int64_t[]){sid, mid}, m, NULL) != 0)
            return -1;
    }
    return 0;
}

static int insert_nics(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    for (int i = 0; i < smp->nnics; i++) {
        const struct rt_nic_sample *n = &smp->nics[i];
        int64_t nid;
        if (ident_id(s, ST_NIC, &s->run_id, n->ident, &nid) != 0 ||
            insert_row(s, ST_NIC_SAMPLE, (const int64_t[]){sid, nid}, n, NULL) != 0)
            return -1;
    }
    return 0;
}

/* The tree's processes. Only the processes of the previous sample are cached, so a job that
 * forks a million short-lived processes does not grow the recorder: a process that comes back
 * after a gap finds its row again through the upsert. The rows of this sample's processes are
 * left in `procs_next` (the GPU processes refer to them). */
static int insert_processes(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    rt_map_clear(&s->procs_next);
    for (int i = 0; i < smp->nprocs; i++) {
        const struct rt_proc_sample *p = &smp->procs[i];
        int64_t row;
        uint64_t key = rt_proc_key(p->pid, p->starttime);
        /* a renamed process (exec after the fork) updates its row's name and command line */
        if ((!rt_map_get(&s->procs, key, &row) || p->renamed) &&
            insert_row(s, ST_PROCESS, (const int64_t[]){s->run_id, smp->seq}, p, &row) != 0)
            return -1;
        rt_map_put(&s->procs_next, key, row);
        if (insert_row(s, ST_PROCESS_SAMPLE, (const int64_t[]){sid, row}, p, NULL) != 0)
            return -1;
    }
    return 0;
}

/* GPUs and the tree's processes on them. A GPU's idx is its position in the sample: the
 * backends list every device in the same order every time. */
static int insert_gpus(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    int64_t gid[64]; /* more GPUs than any host has (16 today) */
    int n = smp->ngpus < 64 ? smp->ngpus : 64;
    for (int i = 0; i < n; i++) {
        const struct rt_gpu_sample *g = &smp->gpus[i];
        if (ident_id(s, ST_GPU, (const int64_t[]){s->run_id, i}, g->ident, &gid[i]) != 0 ||
            insert_row(s, ST_GPU_SAMPLE, (const int64_t[]){sid, gid[i]}, g, NULL) != 0)
            return -1;
    }
    for (int i = 0; i < smp->ngpu_procs; i++) {
        const struct rt_gpu_proc *p = &smp->gpu_procs[i];
        int64_t row;
        if (p->dev < 0 || p->dev >= n ||
            !rt_map_get(&s->procs_next, rt_proc_key(p->pid, p->starttime), &row))
            continue;
        if (insert_row(s, ST_GPU_PROCESS_SAMPLE, (const int64_t[]){sid, row, gid[p->dev]}, p,
                       NULL) != 0)
            return -1;
    }
    return 0;
}

static int same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The run's facts as this sample says them, when they differ from what this run last wrote. A
 * collector's facts only grow (unknown to known, a reason to a source), so a sample never
 * takes back what an earlier one said. */
static int write_run_facts(struct rt_store *s, const struct rt_sample *smp)
{
    const char *v[RT_ARRAY_LEN(run_fact_cols)];
    int same = 1;
    for (size_t i = 0; i < RT_ARRAY_LEN(run_fact_cols); i++) {
        v[i] = *(const char *const *)(const void *)((const char *)smp + run_fact_cols[i].off);
        same &= same_text(v[i], s->run_facts[i]);
    }
    if (same)
        return 0;
    sqlite3_stmt *st = table_stmt(s, ST_RUN_FACTS);
    if (!st)
        return -1;
    int k = 1;
    for (size_t i = 0; i < RT_ARRAY_LEN(run_fact_cols); i++)
        store_bind_t(st, k++, v[i]);
    sqlite3_bind_int64(st, k, s->run_id);
    if (store_step(s, st, NULL) != 0)
        return -1;
    memcpy(s->run_facts, v, sizeof(v));
    return 0;
}

/* One sample, table group by table group: the samples row first (the others refer to it), the
 * processes before the GPUs (whose processes refer to theirs); the run's facts it brings. */
static int insert_sample(struct rt_store *s, const struct rt_sample *smp)
{
    int64_t sid;
    if (insert_sample_row(s, smp, &sid) != 0 || write_run_facts(s, smp) != 0 ||
        insert_cores(s, smp, sid) != 0 || insert_disks(s, smp, sid) != 0 ||
        insert_mounts(s, smp, sid) != 0 || insert_nics(s, smp, sid) != 0 ||
        insert_processes(s, smp, sid) != 0 || insert_gpus(s, smp, sid) != 0)
        return -1;
    struct rt_map t = s->procs;
    s->procs = s->procs_next;
    s->procs_next = t;
    return 0;
}

int rt_store_others_wrote(struct rt_store *s)
{
    /* asked once per transaction: the statement is kept, not parsed again each time */
    sqlite3_stmt *st = table_stmt(s, ST_DATA_VERSION);
    if (!st)
        return 0;
    int ok = sqlite3_step(st) == SQLITE_ROW;
    int64_t v = ok ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (!ok)
        return 0;
    int changed = s->have_data_version && v != s->data_version;
    s->data_version = v;
    s->have_data_version = 1;
    return changed;
}

int rt_store_add_sample(struct rt_store *s, const struct rt_sample *smp)
{
    if (begin_tx(s) != 0)
        return -1;
    if (insert_sample(s, smp) != 0) {
        rollback_keep_err(s);
        return -1;
    }
    return 0;
}

int rt_store_commit(struct rt_store *s)
{
    if (!s->in_tx)
        return 0;
    int gone = file_gone(s);
    if (gone || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        if (!gone)
            store_db_err(s, "cannot write to database");
        rollback_keep_err(s);
        return -1;
    }
    s->in_tx = 0;
    s->unsaved_pid = 0;
    return 0;
}

int64_t rt_store_last_sample_id(const struct rt_store *s)
{
    return s->last_sample_id;
}
