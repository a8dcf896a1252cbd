/* write.c - recording into the database: the run's row, its samples, the run's end.
 *
 * Samples are batched so a commit happens at least once a second (the sampler decides when).
 * Statements are prepared once and reused. Identity rows (disks, nics, mounts, processes) are
 * upserted once per run and their ids cached. */
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
    store_err(s, "cannot write to database '%s': the file was deleted or renamed while recording",
              s->path);
    return 1;
}

/* --- statements ------------------------------------------------------------------------------ */

/* The samples columns and where each comes from, in one place: the INSERT is generated from
 * this table, so a column cannot be bound to the wrong field. */
struct col {
    const char *name;
    char type; /* i: int64 (RT_NA = NULL), n: int, f: double (NAN = NULL) */
    size_t off;
};
#define CI(n, f)                                                                                   \
    {                                                                                              \
        n, 'i', offsetof(struct rt_sample, f)                                                      \
    }
#define CF(n, f)                                                                                   \
    {                                                                                              \
        n, 'f', offsetof(struct rt_sample, f)                                                      \
    }
#define CN(n, f)                                                                                   \
    {                                                                                              \
        n, 'n', offsetof(struct rt_sample, f)                                                      \
    }
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
    CI("proc_pss_kib", proc_pss_kib),
    CI("proc_rss_kib", proc_rss_kib),
    CI("proc_read_bytes", proc_read_bytes),
    CI("proc_write_bytes", proc_write_bytes),
    CI("proc_utime_total", proc_utime_total),
    CI("proc_stime_total", proc_stime_total),
};

static const char *const fixed_sql[ST_COUNT] = {
    [ST_DATA_VERSION] = "PRAGMA data_version",
    [ST_CORE] = "INSERT INTO cpu_core_samples (sample_id, core, user, nice, system, idle, iowait, "
                "irq, softirq, steal, guest, guest_nice, busy_pct) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_DISK] = "INSERT INTO disks (run_id, name, major, minor, model, vendor, serial, type, "
                "capacity_bytes, hw_sector_size) VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT (run_id, name) DO UPDATE SET name = excluded.name RETURNING id",
    [ST_DISK_SAMPLE] = "INSERT INTO disk_samples (sample_id, disk_id, reads, reads_merged, "
                       "sectors_read, read_ms, writes, writes_merged, sectors_written, write_ms, "
                       "in_flight, io_ms, weighted_io_ms, read_bytes, write_bytes) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MOUNT] = "INSERT INTO mounts (run_id, mount_point, fstype, source, disk) VALUES "
                 "(?,?,?,?,?) ON CONFLICT (run_id, mount_point, fstype, source) DO UPDATE SET "
                 "disk = excluded.disk RETURNING id",
    [ST_MOUNT_SAMPLE] = "INSERT INTO mount_samples (sample_id, mount_id, total_bytes, "
                        "used_bytes, available_bytes, free_bytes) VALUES (?,?,?,?,?,?)",
    [ST_NIC] = "INSERT INTO nics (run_id, name, mac, driver, mtu, speed_mbps) VALUES "
               "(?,?,?,?,?,?) ON CONFLICT (run_id, name) DO UPDATE SET name = excluded.name "
               "RETURNING id",
    [ST_NIC_SAMPLE] = "INSERT INTO nic_samples (sample_id, nic_id, rx_bytes_total, "
                      "rx_packets_total, rx_errors_total, rx_dropped_total, tx_bytes_total, "
                      "tx_packets_total, tx_errors_total, tx_dropped_total, rx_bytes, tx_bytes, "
                      "operstate) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_PROCESS] = "INSERT INTO processes (run_id, pid, starttime, ppid, name, cmdline, "
                   "first_seq) VALUES (?,?,?,?,?,?,?) ON CONFLICT (run_id, pid, starttime) DO "
                   "UPDATE SET name = excluded.name, cmdline = coalesce(excluded.cmdline, "
                   "cmdline) RETURNING id",
    [ST_PROCESS_SAMPLE] = "INSERT INTO process_samples (sample_id, process_id, ppid, state, "
                          "threads, utime, stime, cutime, cstime, rss_kib, pss_kib, "
                          "read_bytes_total, write_bytes_total, cpu_utime_s, cpu_stime_s, "
                          "read_bytes, write_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GPU] = "INSERT INTO gpus (run_id, idx, vendor, uuid, name, pci_bus_id, driver_version, "
               "vram_total_bytes, core_count) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, "
               "idx) DO UPDATE SET idx = excluded.idx RETURNING id",
    [ST_GPU_SAMPLE] = "INSERT INTO gpu_samples (sample_id, gpu_id, util_pct, mem_util_pct, "
                      "vram_used_bytes, vram_total_bytes, temperature_c, power_w, "
                      "clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz) VALUES "
                      "(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GPU_PROCESS_SAMPLE] = "INSERT INTO gpu_process_samples (sample_id, process_id, gpu_id, "
                              "vram_used_bytes, gtt_bytes, util_pct, mem_util_pct) VALUES "
                              "(?,?,?,?,?,?,?)",
};

static int prepare_all(struct rt_store *s)
{
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "INSERT INTO samples (run_id, kind, proc_root_pid");
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++) {
        rt_buf_puts(&sql, ", ");
        rt_buf_puts(&sql, sample_cols[i].name);
    }
    rt_buf_puts(&sql, ") VALUES (?, ?, ?");
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++)
        rt_buf_puts(&sql, ", ?");
    rt_buf_puts(&sql, ")");
    int rc = 0;
    for (int i = 0; i < ST_COUNT && rc == 0; i++) {
        if (s->st[i])
            continue;
        const char *q = i == ST_SAMPLE ? sql.p : fixed_sql[i];
        if (sqlite3_prepare_v3(s->db, q, -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK)
            rc = store_db_err(s, "cannot prepare statements for database");
    }
    rt_buf_free(&sql);
    return rc;
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
 * built from the database by SQLite's JSON functions is valid too. */
void store_bind_t(sqlite3_stmt *st, int i, const char *v)
{
    if (!v) {
        sqlite3_bind_null(st, i);
        return;
    }
    size_t n = strlen(v);
    if (rt_utf8_check(v, n) == n) {
        sqlite3_bind_text(st, i, v, (int)n, SQLITE_STATIC);
        return;
    }
    char *fixed = rt_utf8_repair(v, n);
    sqlite3_bind_text(st, i, fixed, -1, SQLITE_TRANSIENT);
    free(fixed);
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

int rt_store_begin_run(struct rt_store *s, const struct rt_run_desc *r, int64_t *run_id)
{
    if (prepare_all(s) != 0)
        return -1;
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "INSERT INTO runs (uuid, mode, command, pid, interval_s, started_at, "
                      "host_hostname, host_machine_id, host_vcpus, host_cpu_model, "
                      "host_memory_kib, host_kernel, host_os, host_boot_time, clk_tck, "
                      "page_size, rtrack_version");
    for (int i = 0; i < RT_META_N; i++) {
        rt_buf_puts(&sql, ", ");
        rt_buf_puts(&sql, rt_meta_columns[i]);
    }
    rt_buf_puts(&sql, ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?");
    for (int i = 0; i < RT_META_N; i++)
        rt_buf_puts(&sql, ",?");
    rt_buf_puts(&sql, ")");

    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (store_exec(s, "BEGIN IMMEDIATE") != 0) {
        store_db_err(s, "cannot write database");
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
    for (int i = 0; i < RT_META_N; i++)
        store_bind_t(st, k++, r->meta[i]);
    if (sqlite3_step(st) != SQLITE_DONE) {
        store_db_err(s, "cannot write database");
        goto rollback;
    }
    s->run_id = sqlite3_last_insert_rowid(s->db);
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
}

/* roll back, keeping the message of what failed (ROLLBACK's own result would replace it) */
static void rollback_keep_err(struct rt_store *s)
{
    char keep[sizeof(s->err)];
    memcpy(keep, s->err, sizeof(keep));
    rollback(s);
    memcpy(s->err, keep, sizeof(keep));
}

/* (A deleted file is found at the commit: rt_store_commit checks, once per transaction.) */
static int begin_tx(struct rt_store *s)
{
    if (s->in_tx)
        return 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot write to database");
    s->in_tx = 1;
    return 0;
}

int rt_store_set_run_pid(struct rt_store *s, pid_t pid)
{
    /* in the transaction the baseline sample goes into: one commit for both */
    if (begin_tx(s) != 0)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "UPDATE runs SET pid = ? WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return store_db_err(s, "cannot write database");
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    return rc;
}

int rt_store_end_run(struct rt_store *s, const struct rt_run_end *e)
{
    sqlite3_stmt *st;
    if (file_gone(s))
        return -1;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, "
                           "exit_signal = ?, end_reason = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot write database");
    store_bind_f(st, 1, e->ended_at);
    store_bind_t(st, 2, e->status);
    store_bind_i(st, 3, e->exit_code);
    store_bind_i(st, 4, e->exit_signal);
    store_bind_t(st, 5, e->end_reason);
    sqlite3_bind_int64(st, 6, s->run_id);
    int rc = store_step(s, st, NULL);
    sqlite3_finalize(st);
    if (rc == 0 && s->in_tx)
        rc = rt_store_commit(s); /* with the final sample, added before */
    else if (rc != 0 && s->in_tx)
        rollback_keep_err(s);
    return rc;
}

/* --- samples ------------------------------------------------------------------------------------
 */

static uint64_t ptr_key(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

/* GPUs and the tree's processes on them. A GPU's idx is its position in the sample: the
 * backends list every device in the same order every time. Runs after the processes of the
 * sample are in `procs_next`. */
static int insert_gpus(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    sqlite3_stmt *st;
    int64_t gid[64]; /* more GPUs than any host has (16 today) */
    int n = smp->ngpus < 64 ? smp->ngpus : 64;
    for (int i = 0; i < n; i++) {
        const struct rt_gpu_sample *g = &smp->gpus[i];
        const struct rt_gpu_ident *id = g->ident;
        if (!rt_map_get(&s->ids, ptr_key(id), &gid[i])) {
            st = s->st[ST_GPU];
            sqlite3_bind_int64(st, 1, s->run_id);
            sqlite3_bind_int64(st, 2, i);
            store_bind_t(st, 3, id->vendor);
            store_bind_t(st, 4, id->uuid);
            store_bind_t(st, 5, id->name);
            store_bind_t(st, 6, id->pci_bus_id);
            store_bind_t(st, 7, id->driver_version);
            store_bind_i(st, 8, id->vram_total_bytes);
            store_bind_i(st, 9, id->core_count);
            if (store_step(s, st, &gid[i]) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), gid[i]);
        }
        st = s->st[ST_GPU_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, gid[i]);
        store_bind_f(st, 3, g->util_pct);
        store_bind_f(st, 4, g->mem_util_pct);
        store_bind_i(st, 5, g->vram_used_bytes);
        store_bind_i(st, 6, g->vram_total_bytes);
        store_bind_f(st, 7, g->temperature_c);
        store_bind_f(st, 8, g->power_w);
        store_bind_i(st, 9, g->clock_graphics_mhz);
        store_bind_i(st, 10, g->clock_sm_mhz);
        store_bind_i(st, 11, g->clock_mem_mhz);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }
    st = s->st[ST_GPU_PROCESS_SAMPLE];
    for (int i = 0; i < smp->ngpu_procs; i++) {
        const struct rt_gpu_proc *p = &smp->gpu_procs[i];
        int64_t pid_row;
        if (p->dev < 0 || p->dev >= n ||
            !rt_map_get(&s->procs_next, rt_proc_key(p->pid, p->starttime), &pid_row))
            continue;
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, pid_row);
        sqlite3_bind_int64(st, 3, gid[p->dev]);
        store_bind_i(st, 4, p->vram_bytes);
        store_bind_i(st, 5, p->gtt_bytes);
        store_bind_f(st, 6, p->util_pct);
        store_bind_f(st, 7, p->mem_util_pct);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }
    return 0;
}

static int insert_sample(struct rt_store *s, const struct rt_sample *smp)
{
    static const char *const kinds[] = {"baseline", "periodic", "final"};
    sqlite3_stmt *st = s->st[ST_SAMPLE];
    sqlite3_bind_int64(st, 1, s->run_id);
    store_bind_t(st, 2, kinds[smp->kind]);
    store_bind_i(st, 3, smp->has_tree ? smp->root_pid : RT_NA);
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++) {
        const char *p = (const char *)smp + sample_cols[i].off;
        if (sample_cols[i].type == 'i')
            store_bind_i(st, (int)i + 4, *(const int64_t *)p);
        else if (sample_cols[i].type == 'n')
            sqlite3_bind_int(st, (int)i + 4, *(const int *)p);
        else
            store_bind_f(st, (int)i + 4, *(const double *)p);
    }
    if (store_step(s, st, NULL) != 0)
        return -1;
    int64_t sid = sqlite3_last_insert_rowid(s->db);
    s->last_sample_id = sid;

    st = s->st[ST_CORE];
    for (int i = 0; i < smp->ncores; i++) {
        const struct rt_core_sample *c = &smp->cores[i];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, c->core);
        for (int f = 0; f < RT_CPU_NFIELDS; f++)
            store_bind_i(st, 3 + f, c->t.v[f]);
        store_bind_f(st, 13, c->busy_pct);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->ndisks; i++) {
        const struct rt_disk_sample *d = &smp->disks[i];
        const struct rt_disk_ident *id = d->ident;
        /* a disk that has never done any I/O since boot (idle loop devices) is not stored */
        int64_t any = 0;
        for (int f = 0; f < RT_DS_NFIELDS; f++)
            any |= d->f[f];
        if (!any)
            continue;
        int64_t did;
        if (!rt_map_get(&s->ids, ptr_key(id), &did)) {
            st = s->st[ST_DISK];
            sqlite3_bind_int64(st, 1, s->run_id);
            store_bind_t(st, 2, id->name);
            store_bind_i(st, 3, id->major);
            store_bind_i(st, 4, id->minor);
            store_bind_t(st, 5, id->model);
            store_bind_t(st, 6, id->vendor);
            store_bind_t(st, 7, id->serial);
            store_bind_t(st, 8, id->type);
            store_bind_i(st, 9, id->capacity_bytes);
            store_bind_i(st, 10, id->hw_sector_size);
            if (store_step(s, st, &did) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), did);
        }
        st = s->st[ST_DISK_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, did);
        for (int f = 0; f < RT_DS_NFIELDS; f++)
            store_bind_i(st, 3 + f, d->f[f]);
        store_bind_i(st, 14, d->read_bytes);
        store_bind_i(st, 15, d->write_bytes);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->nmounts; i++) {
        const struct rt_mount_sample *m = &smp->mounts[i];
        const struct rt_mount_ident *id = m->ident;
        int64_t mid;
        if (!rt_map_get(&s->ids, ptr_key(id), &mid)) {
            st = s->st[ST_MOUNT];
            sqlite3_bind_int64(st, 1, s->run_id);
            store_bind_t(st, 2, id->mount_point);
            store_bind_t(st, 3, id->fstype);
            store_bind_t(st, 4, id->source);
            store_bind_t(st, 5, id->disk);
            if (store_step(s, st, &mid) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), mid);
        }
        st = s->st[ST_MOUNT_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, mid);
        store_bind_i(st, 3, m->total_bytes);
        store_bind_i(st, 4, m->used_bytes);
        store_bind_i(st, 5, m->available_bytes);
        store_bind_i(st, 6, m->free_bytes);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->nnics; i++) {
        const struct rt_nic_sample *n = &smp->nics[i];
        const struct rt_nic_ident *id = n->ident;
        int64_t nid;
        if (!rt_map_get(&s->ids, ptr_key(id), &nid)) {
            st = s->st[ST_NIC];
            sqlite3_bind_int64(st, 1, s->run_id);
            store_bind_t(st, 2, id->name);
            store_bind_t(st, 3, id->mac);
            store_bind_t(st, 4, id->driver);
            store_bind_i(st, 5, id->mtu);
            store_bind_i(st, 6, id->speed_mbps);
            if (store_step(s, st, &nid) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), nid);
        }
        st = s->st[ST_NIC_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, nid);
        for (int f = 0; f < RT_NIC_NFIELDS; f++)
            store_bind_i(st, 3 + f, n->f[f]);
        store_bind_i(st, 11, n->rx_bytes);
        store_bind_i(st, 12, n->tx_bytes);
        store_bind_t(st, 13, n->operstate[0] ? n->operstate : NULL);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }

    /* Only the processes of the previous sample are cached, so a job that forks a million
     * short-lived processes does not grow the recorder: a process that comes back after a gap
     * finds its row again through the upsert. */
    rt_map_clear(&s->procs_next);
    for (int i = 0; i < smp->nprocs; i++) {
        const struct rt_proc_sample *p = &smp->procs[i];
        int64_t pid_row;
        uint64_t key = rt_proc_key(p->pid, p->starttime);
        /* a renamed process (exec after the fork) updates its row's name and command line */
        if (!rt_map_get(&s->procs, key, &pid_row) || p->renamed) {
            st = s->st[ST_PROCESS];
            sqlite3_bind_int64(st, 1, s->run_id);
            sqlite3_bind_int64(st, 2, p->pid);
            sqlite3_bind_int64(st, 3, p->starttime);
            sqlite3_bind_int64(st, 4, p->ppid);
            store_bind_t(st, 5, p->comm);
            store_bind_t(st, 6, p->cmdline_json);
            sqlite3_bind_int64(st, 7, smp->seq);
            if (store_step(s, st, &pid_row) != 0)
                return -1;
        }
        rt_map_put(&s->procs_next, key, pid_row);
        st = s->st[ST_PROCESS_SAMPLE];
        char state[2] = {p->state, '\0'};
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, pid_row);
        sqlite3_bind_int64(st, 3, p->ppid);
        store_bind_t(st, 4, state);
        store_bind_i(st, 5, p->threads);
        store_bind_i(st, 6, p->utime);
        store_bind_i(st, 7, p->stime);
        store_bind_i(st, 8, p->cutime);
        store_bind_i(st, 9, p->cstime);
        store_bind_i(st, 10, p->rss_kib);
        store_bind_i(st, 11, p->pss_kib);
        store_bind_i(st, 12, p->read_total);
        store_bind_i(st, 13, p->write_total);
        store_bind_f(st, 14, p->cpu_utime_s);
        store_bind_f(st, 15, p->cpu_stime_s);
        store_bind_i(st, 16, p->read_bytes);
        store_bind_i(st, 17, p->write_bytes);
        if (store_step(s, st, NULL) != 0)
            return -1;
    }
    if (insert_gpus(s, smp, sid) != 0)
        return -1;
    struct rt_map t = s->procs;
    s->procs = s->procs_next;
    s->procs_next = t;
    return 0;
}

int rt_store_others_wrote(struct rt_store *s)
{
    /* asked once per transaction: the statement is kept, not parsed again each time */
    sqlite3_stmt *st = s->st[ST_DATA_VERSION];
    if (!st && (prepare_all(s) != 0 || !(st = s->st[ST_DATA_VERSION])))
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
    return 0;
}

int64_t rt_store_last_sample_id(const struct rt_store *s)
{
    return s->last_sample_id;
}
