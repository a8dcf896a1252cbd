/* jsonl.c - JSON Lines: one object per sample in the Rust reference's schema
 * (resource-tracker-rs 0.1.14 §2): its field names, nesting and types (its *_mib memory fields
 * are truncated integers), plus rtrack's own fields beside them (float timestamp, interval,
 * pressure, the process tree, exact KiB values). Nothing of the reference is renamed.
 *
 * The tables below are the only definition of the fields: each is a key and the SQL that
 * selects its value from the stored rows (and from the views of sql/views.sql where a value is
 * defined there, the GPU use of the tree from sample_metrics). The SELECTs are generated from
 * them, one pass per table in (run_id, seq) order (the samples, their cores, interfaces,
 * disks, mounts, GPUs, processes), and merged here by seq; every value is written by the
 * store's rt_store_rows_json(), the bytes SQLite's json_object() gives. This replaced the
 * rust_sample view, which built the same text in SQL with json_object()/json_group_array()
 * and correlated subqueries per sample and parsed it again with json(): ten times slower
 * (docs/performance.md), and the view was a large part of every connection's schema parse.
 * tests/unit/test_jsonl_identity.c and tests/cli/test_jsonl_identity.sh hold these lines to
 * the view's bytes. Export and live output both come here; rtrack as resource-tracker writes the
 * Rust tool's own lines (export_jsonl_rust: its memory fields only, no actual_interval_ms on the
 * first line). */
#include "jsonl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

enum jkind {
    J_VAL, /* "key": value of the SQL expression */
    J_OBJ, /* "key": { the fields up to J_END } */
    J_END,
    J_ARR, /* "key": [ the rows of group `group` that belong to this row ] */
};

struct jfield {
    enum jkind kind;
    const char *key;
    const char *expr; /* or NULL: the named piece `text` (sql/queries/export.sql) */
    int group;
    enum rt_query_text text;
    unsigned rust; /* RUST_*: how the Rust tool's own lines differ (rtrack as resource-tracker) */
};

/* A field the Rust tool does not write: rtrack's exact KiB beside its *_mib (0.1.14 renamed its
 * own _kib fields to _mib, and a consumer checking for the old names would find these) */
#define RUST_NONE 1u
/* A field the Rust tool leaves out of its first line (no previous sample to measure from) */
#define RUST_NOT_FIRST 2u

#define V(k, e)                                                                                    \
    {                                                                                              \
        J_VAL, k, e, 0, 0, 0                                                                       \
    }
/* a value of rtrack's own, or one the Rust tool's first line leaves out: RUST_* */
#define VR(k, e, r)                                                                                \
    {                                                                                              \
        J_VAL, k, e, 0, 0, r                                                                       \
    }
/* a value whose SQL reads a table of its own: a named piece of sql/queries/export.sql */
#define VT(k, t)                                                                                   \
    {                                                                                              \
        J_VAL, k, NULL, 0, t, 0                                                                    \
    }
#define OBJ(k)                                                                                     \
    {                                                                                              \
        J_OBJ, k, NULL, 0, 0, 0                                                                    \
    }
#define END                                                                                        \
    {                                                                                              \
        J_END, NULL, NULL, 0, 0, 0                                                                 \
    }
#define ARR(k, g)                                                                                  \
    {                                                                                              \
        J_ARR, k, NULL, g, 0, 0                                                                    \
    }

enum { G_SAMPLE, G_CORES, G_NICS, G_DISKS, G_MOUNTS, G_GPUS, G_PROCS, G_COUNT };

static const struct jfield sample_fields[] = {
    V("timestamp_secs", "CAST(s.ts AS INTEGER)"),
    V("timestamp", "s.ts"),
    VR("actual_interval_ms", "CAST(s.interval_s * 1000 AS INTEGER)", RUST_NOT_FIRST),
    V("interval_s", "s.interval_s"),
    V("job_name", "r.job_name"),
    V("tracked_pid", "s.proc_root_pid"),
    OBJ("cpu"),
    V("utilization_pct", "s.cpu_busy_cores"),
    ARR("per_core_pct", G_CORES),
    V("utime_secs", "s.cpu_utime_s"),
    V("stime_secs", "s.cpu_stime_s"),
    V("usage_cores", "s.cpu_usage"),
    V("process_count", "s.processes"),
    V("procs_running", "s.procs_running"),
    V("procs_blocked", "s.procs_blocked"),
    V("cgroup_usage_secs", "s.cgroup_cpu_s"),
    /* a float always (the cap may be the integer core count): 2.0, as the reference, not 2 */
    V("cgroup_utilization_pct",
      "min(m.cgroup_cores, CAST(coalesce(min(s.cgroup_limit_cores, s.ncores), s.ncores) AS REAL))"),
    V("cgroup_cores", "m.cgroup_cores"),
    V("cgroup_limit_cores", "s.cgroup_limit_cores"),
    V("process_cores_used", "s.proc_cpu_usage"),
    V("process_child_count", "s.proc_children"),
    V("process_utime_secs", "s.proc_utime_s"),
    V("process_stime_secs", "s.proc_stime_s"),
    V("process_cpu_wait_secs", "s.proc_cpu_wait_s"),
    /* the reference's integers: its 0 where the tree's memory is unknown (a zombie job) */
    V("process_pss_mib",
      "CASE WHEN s.proc_root_pid IS NOT NULL THEN coalesce(s.proc_pss_kib, 0) / 1024 END"),
    V("process_rss_mib",
      "CASE WHEN s.proc_root_pid IS NOT NULL THEN coalesce(s.proc_rss_kib, 0) / 1024 END"),
    V("process_pss_kib", "s.proc_pss_kib"),
    V("process_rss_kib", "s.proc_rss_kib"),
    V("process_disk_read_bytes", "s.proc_read_bytes"),
    V("process_disk_write_bytes", "s.proc_write_bytes"),
    V("process_gpu_usage", "CASE WHEN s.proc_root_pid IS NOT NULL THEN m.process_gpu_usage END"),
    V("process_gpu_vram_mib",
      "CASE WHEN s.proc_root_pid IS NOT NULL THEN m.process_gpu_vram_mib END"),
    V("process_gpu_utilized",
      "CASE WHEN s.proc_root_pid IS NOT NULL THEN m.process_gpu_utilized END"),
    END,
    OBJ("memory"),
    V("total_mib", "s.mem_total_kib / 1024"),
    V("free_mib", "s.mem_free_kib / 1024"),
    V("available_mib", "(s.mem_total_kib - s.mem_used_kib) / 1024"),
    V("used_mib", "s.mem_used_kib / 1024"),
    V("used_pct", "CASE WHEN s.mem_total_kib / 1024 > 0 "
                  "THEN (s.mem_used_kib / 1024) * 100.0 / (s.mem_total_kib / 1024) ELSE 0.0 END"),
    V("buffers_mib", "s.mem_buffers_kib / 1024"),
    V("cached_mib", "s.mem_cached_kib / 1024 + coalesce(s.mem_sreclaimable_kib, 0) / 1024"),
    V("active_mib", "s.mem_active_kib / 1024"),
    V("inactive_mib", "s.mem_inactive_kib / 1024"),
    V("swap_total_mib", "s.swap_total_kib / 1024"),
    V("swap_used_mib", "max(s.swap_total_kib / 1024 - s.swap_free_kib / 1024, 0)"),
    V("swap_used_pct", "CASE WHEN s.swap_total_kib / 1024 > 0 "
                       "THEN max(s.swap_total_kib / 1024 - s.swap_free_kib / 1024, 0) * 100.0 "
                       "/ (s.swap_total_kib / 1024) ELSE 0.0 END"),
    VR("total_kib", "s.mem_total_kib", RUST_NONE),
    VR("used_kib", "s.mem_used_kib", RUST_NONE),
    VR("available_kib", "s.mem_available_kib", RUST_NONE),
    VR("shmem_kib", "s.mem_shmem_kib", RUST_NONE),
    END,
    OBJ("pressure"),
    OBJ("cpu"),
    V("some_pct", "s.psi_cpu_some_pct"),
    V("full_pct", "s.psi_cpu_full_pct"),
    V("some_total_us", "s.psi_cpu_some_us"),
    V("full_total_us", "s.psi_cpu_full_us"),
    END,
    OBJ("memory"),
    V("some_pct", "s.psi_memory_some_pct"),
    V("full_pct", "s.psi_memory_full_pct"),
    V("some_total_us", "s.psi_memory_some_us"),
    V("full_total_us", "s.psi_memory_full_us"),
    END,
    OBJ("io"),
    V("some_pct", "s.psi_io_some_pct"),
    V("full_pct", "s.psi_io_full_pct"),
    V("some_total_us", "s.psi_io_some_us"),
    V("full_total_us", "s.psi_io_full_us"),
    END,
    END,
    ARR("network", G_NICS),
    ARR("disk", G_DISKS),
    ARR("gpu", G_GPUS),
    ARR("processes", G_PROCS),
    V("resource-tracker-version", "r.rtrack_version"),
    V("rtrack_version", "r.rtrack_version"),
};

/* an array of bare values, not of objects */
static const struct jfield core_fields[] = {V(NULL, "c.busy_pct")};

static const struct jfield nic_fields[] = {
    V("interface", "n.name"),
    V("mac_address", "n.mac"),
    V("driver", "n.driver"),
    V("operstate", "ns.operstate"),
    V("speed_mbps", "n.speed_mbps"),
    V("mtu", "n.mtu"),
    V("rx_bytes_per_sec", "ns.rx_bytes_per_s"),
    V("tx_bytes_per_sec", "ns.tx_bytes_per_s"),
    V("rx_bytes_total", "ns.rx_bytes_total"),
    V("tx_bytes_total", "ns.tx_bytes_total"),
    V("rx_bytes", "ns.rx_bytes"),
    V("tx_bytes", "ns.tx_bytes"),
};

static const struct jfield disk_fields[] = {
    V("device", "d.name"),
    V("model", "d.model"),
    V("vendor", "d.vendor"),
    V("serial", "d.serial"),
    V("device_type", "d.type"),
    V("capacity_bytes", "d.capacity_bytes"),
    V("read_bytes_per_sec", "ds.read_bytes_per_s"),
    V("write_bytes_per_sec", "ds.write_bytes_per_s"),
    V("read_bytes_total", "ds.sectors_read * 512"),
    V("write_bytes_total", "ds.sectors_written * 512"),
    V("read_bytes", "ds.read_bytes"),
    V("write_bytes", "ds.write_bytes"),
    ARR("mounts", G_MOUNTS),
};

static const struct jfield mount_fields[] = {
    V("mount_point", "m.mount_point"),
    V("filesystem", "m.fstype"),
    V("total_bytes", "ms.total_bytes"),
    V("used_bytes", "ms.total_bytes - ms.free_bytes"),
    V("available_bytes", "ms.available_bytes"),
    V("used_pct", "CASE WHEN ms.total_bytes > 0 "
                  "THEN (ms.total_bytes - ms.free_bytes) * 100.0 / ms.total_bytes ELSE 0.0 END"),
};

static const struct jfield gpu_fields[] = {
    V("uuid", "gp.uuid"),
    V("name", "gp.name"),
    V("device_type", "'GPU'"),
    V("host_id", "CASE gp.vendor WHEN 'nvidia' THEN CAST(gp.idx AS TEXT) ELSE gp.pci_bus_id END"),
    OBJ("detail"),
    V("vendor", "gp.vendor"),
    V("driver_version", "gp.driver_version"),
    V("pci_bus_id", "gp.pci_bus_id"),
    END,
    V("utilization_pct", "gs.util_pct"),
    V("memory_utilization_pct", "gs.mem_util_pct"),
    V("vram_total_bytes", "coalesce(gs.vram_total_bytes, gp.vram_total_bytes)"),
    V("vram_used_bytes", "gs.vram_used_bytes"),
    V("vram_used_pct", "gs.vram_used_bytes * 100.0 "
                       "/ nullif(coalesce(gs.vram_total_bytes, gp.vram_total_bytes), 0)"),
    V("temperature_celsius", "CAST(round(gs.temperature_c) AS INTEGER)"),
    V("power_watts", "gs.power_w"),
    V("frequency_mhz", "gs.clock_graphics_mhz"),
    V("sm_clock_mhz", "gs.clock_sm_mhz"),
    V("memory_clock_mhz", "gs.clock_mem_mhz"),
    V("core_count", "gp.core_count"),
};

static const struct jfield proc_fields[] = {
    V("pid", "p.pid"),
    V("ppid", "ps.ppid"),
    V("name", "p.name"),
    V("state", "ps.state"),
    V("threads", "ps.threads"),
    V("cpu_utime_secs", "ps.cpu_utime_s"),
    V("cpu_stime_secs", "ps.cpu_stime_s"),
    V("cpu_wait_secs", "ps.cpu_wait_s"),
    V("pss_kib", "ps.pss_kib"),
    V("rss_kib", "ps.rss_kib"),
    V("disk_read_bytes", "ps.read_bytes"),
    V("disk_write_bytes", "ps.write_bytes"),
    VT("gpu_vram_bytes", RT_QT_EXPORT_JSONL_PROC_GPU_VRAM),
    VT("gpu_util_pct", RT_QT_EXPORT_JSONL_PROC_GPU_UTIL),
};

/* One pass over a table: FROM (a named piece of sql/queries/export.sql: the sample as `s`, the
 * samples after the baseline), the rows
 * of a sample in their order, and a key that ties a row to its parent's row besides the sample
 * (a mount to its disk: the disk's key is its name, the mount's the name of its disk). */
struct jgroup {
    const struct jfield *fields;
    size_t nfields;
    enum rt_query_text from;
    enum rt_query_text where; /* more conditions (a named piece), or NO_WHERE */
    const char *order;        /* after s.seq, or NULL */
    const char *key;          /* SQL of the row's key, or NULL */
    int in_parent; /* a row belongs to the parent row with the same key (a mount to its disk) */
};

#define FIELDS(f) f, RT_ARRAY_LEN(f)
#define NO_WHERE  RT_QT_N

static const struct jgroup groups[G_COUNT] = {
    [G_SAMPLE] = {FIELDS(sample_fields), RT_QT_EXPORT_JSONL_SAMPLE_FROM, NO_WHERE, NULL, NULL, 0},
    [G_CORES] = {FIELDS(core_fields), RT_QT_EXPORT_JSONL_CORES_FROM, NO_WHERE, "c.core", NULL, 0},
    [G_NICS] = {FIELDS(nic_fields), RT_QT_EXPORT_JSONL_NICS_FROM, NO_WHERE, "n.name", NULL, 0},
    /* loop and RAM disks are not disks to the Rust reference */
    [G_DISKS] = {FIELDS(disk_fields), RT_QT_EXPORT_JSONL_DISKS_FROM, RT_QT_EXPORT_JSONL_DISKS_WHERE,
                 "d.name", "d.name", 0},
    /* a filesystem mounted at several places is listed once per disk, at its first mount */
    [G_MOUNTS] = {FIELDS(mount_fields), RT_QT_EXPORT_JSONL_MOUNTS_FROM,
                  RT_QT_EXPORT_JSONL_MOUNTS_WHERE, "m.disk, m.id", "m.disk", 1},
    [G_GPUS] = {FIELDS(gpu_fields), RT_QT_EXPORT_JSONL_GPUS_FROM, NO_WHERE, "gp.idx", NULL, 0},
    [G_PROCS] = {FIELDS(proc_fields), RT_QT_EXPORT_JSONL_PROCS_FROM, NO_WHERE, "p.pid", NULL, 0},
};

/* Every pass's columns: the sample's seq, the key (NULL without one), then the values. */
#define COL_SEQ    0
#define COL_KEY    1
#define COL_VALUES 2

struct pass {
    struct rt_store_rows *rows;
    int started; /* the first row was asked for since the last reset */
    int valid;   /* rows holds a current row */
    int64_t seq;
};

struct prefix {
    char *s;
    size_t n;
};

struct rt_jsonl {
    struct rt_store *store;
    struct pass pass[G_COUNT];
    struct prefix *prefix[G_COUNT]; /* per field of groups[] */
    int failed;                     /* a pass could not be read */
    int64_t seq;
    int rust;      /* the Rust tool's lines (export_jsonl_rust) */
    int64_t lines; /* written through this handle: the first is the Rust tool's first */
};

static void pass_sql(struct rt_buf *sql, const struct jgroup *g, const char *filter)
{
    sql->len = 0;
    rt_buf_puts(sql, "SELECT s.seq, ");
    rt_buf_puts(sql, g->key ? g->key : "NULL");
    for (size_t i = 0; i < g->nfields; i++)
        if (g->fields[i].kind == J_VAL) {
            rt_buf_puts(sql, ", ");
            rt_buf_puts(sql, g->fields[i].expr ? g->fields[i].expr
                                               : rt_store_query_text(g->fields[i].text));
        }
    rt_buf_puts(sql, " FROM ");
    rt_buf_puts(sql, rt_store_query_text(g->from));
    rt_buf_puts(sql, " WHERE s.kind <> 'baseline' AND ");
    rt_buf_puts(sql, filter);
    if (g->where != NO_WHERE) {
        rt_buf_puts(sql, " AND ");
        rt_buf_puts(sql, rt_store_query_text(g->where));
    }
    rt_buf_puts(sql, " ORDER BY s.seq");
    if (g->order) {
        rt_buf_puts(sql, ", ");
        rt_buf_puts(sql, g->order);
    }
}

static void make_prefixes(struct rt_jsonl *j);

struct rt_jsonl *export_jsonl_open(struct rt_store *store, const char *filter, int kept)
{
    struct rt_jsonl *j = xcalloc(1, sizeof(*j));
    j->store = store;
    make_prefixes(j);
    struct rt_buf sql = {0};
    for (int g = 0; g < G_COUNT; g++) {
        pass_sql(&sql, &groups[g], filter);
        j->pass[g].rows =
            kept ? rt_store_rows_open_kept(store, sql.p) : rt_store_rows_open(store, sql.p);
        if (!j->pass[g].rows) {
            rt_buf_free(&sql);
            export_jsonl_close(j);
            return NULL;
        }
    }
    rt_buf_free(&sql);
    return j;
}

void export_jsonl_rust(struct rt_jsonl *j)
{
    j->rust = 1;
}

void export_jsonl_bind_i(struct rt_jsonl *j, int i, int64_t v)
{
    for (int g = 0; g < G_COUNT; g++)
        rt_store_rows_bind_i(j->pass[g].rows, i, v);
}

void export_jsonl_bind_f(struct rt_jsonl *j, int i, double v)
{
    for (int g = 0; g < G_COUNT; g++)
        rt_store_rows_bind_f(j->pass[g].rows, i, v);
}

static void pass_step(struct rt_jsonl *j, struct pass *p)
{
    int rc = rt_store_rows_next(p->rows);
    p->started = 1;
    p->valid = rc == 1;
    if (rc < 0)
        j->failed = 1;
    if (p->valid)
        p->seq = rt_store_rows_i(p->rows, COL_SEQ);
}

static void put_row(struct rt_jsonl *j, int g, struct rt_buf *b);

/* The rows of pass g that belong to the current sample (and to the parent's key): the rows
 * before them (of samples or parents not written) are passed over. */
static void put_array(struct rt_jsonl *j, int g, const char *parent_key, struct rt_buf *b)
{
    struct pass *p = &j->pass[g];
    if (!p->started)
        pass_step(j, p);
    rt_buf_append(b, "[", 1);
    int n = 0;
    for (; p->valid; pass_step(j, p)) {
        if (p->seq > j->seq)
            break;
        if (p->seq < j->seq)
            continue;
        if (parent_key) {
            const char *k = rt_store_rows_t(p->rows, COL_KEY);
            int cmp = k ? strcmp(k, parent_key) : -1;
            if (cmp > 0)
                break;
            if (cmp < 0)
                continue;
        }
        if (n++)
            rt_buf_append(b, ",", 1);
        put_row(j, g, b);
    }
    rt_buf_append(b, "]", 1);
}

static void put_row(struct rt_jsonl *j, int g, struct rt_buf *b)
{
    const struct jgroup *G = &groups[g];
    struct rt_store_rows *r = j->pass[g].rows;
    if (G->nfields == 1 && !G->fields[0].key) {
        rt_store_rows_json(r, COL_VALUES, b);
        return;
    }
    const struct prefix *pre = j->prefix[g];
    rt_buf_append(b, "{", 1);
    int col = COL_VALUES;
    char *key = NULL;
    for (size_t i = 0; i < G->nfields; i++) {
        const struct jfield *f = &G->fields[i];
        /* (never an object's first field: the next one's comma stays right) */
        if (j->rust && ((f->rust & RUST_NONE) || ((f->rust & RUST_NOT_FIRST) && j->lines == 0))) {
            col++;
            continue;
        }
        rt_buf_append(b, pre[i].s, pre[i].n);
        switch (f->kind) {
        case J_VAL:
            rt_store_rows_json(r, col++, b);
            break;
        case J_OBJ:
        case J_END:
            break;
        case J_ARR:
            if (groups[f->group].in_parent && !key) {
                /* the parent's key, kept while the child pass is read */
                const char *k = rt_store_rows_t(r, COL_KEY);
                key = xstrdup(k ? k : "");
            }
            put_array(j, f->group, groups[f->group].in_parent ? key : NULL, b);
            break;
        }
    }
    rt_buf_append(b, "}", 1);
    free(key);
}

/* What comes before each field's value, worked out once: the comma (none for the first
 * field of an object), the quoted key and the colon; "{" or "}" for a nested object. */
static void make_prefixes(struct rt_jsonl *j)
{
    for (int g = 0; g < G_COUNT; g++) {
        const struct jgroup *G = &groups[g];
        j->prefix[g] = xcalloc(G->nfields, sizeof(struct prefix));
        int first = 1;
        for (size_t i = 0; i < G->nfields; i++) {
            const struct jfield *f = &G->fields[i];
            char *t;
            if (f->kind == J_END) {
                t = xstrdup("}");
                first = 0;
            } else {
                t = xasprintf("%s\"%s\":%s", first ? "" : ",", f->key ? f->key : "",
                              f->kind == J_OBJ ? "{" : "");
                first = f->kind == J_OBJ;
            }
            j->prefix[g][i].s = t;
            j->prefix[g][i].n = strlen(t);
        }
    }
}

int export_jsonl_next(struct rt_jsonl *j, struct rt_buf *line, int64_t *seq)
{
    struct pass *p = &j->pass[G_SAMPLE];
    pass_step(j, p);
    if (!p->valid)
        return j->failed ? -1 : 0;
    j->seq = *seq = p->seq;
    line->len = 0;
    rt_buf_reserve(line, 4096);
    line->p[0] = '\0';
    put_row(j, G_SAMPLE, line);
    j->lines++;
    return j->failed ? -1 : 1;
}

void export_jsonl_reset(struct rt_jsonl *j)
{
    for (int g = 0; g < G_COUNT; g++) {
        rt_store_rows_reset(j->pass[g].rows);
        j->pass[g].started = j->pass[g].valid = 0;
    }
    j->failed = 0;
}

void export_jsonl_close(struct rt_jsonl *j)
{
    if (!j)
        return;
    for (int g = 0; g < G_COUNT; g++) {
        rt_store_rows_close(j->pass[g].rows);
        for (size_t i = 0; j->prefix[g] && i < groups[g].nfields; i++)
            free(j->prefix[g][i].s);
        free(j->prefix[g]);
    }
    free(j);
}
