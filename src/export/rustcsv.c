/* rustcsv.c - the Rust resource-tracker's CSV (0.1.14, src/output/csv.rs;
 * ../shared/reference/resource-tracker-rs.md §3): 32 columns, system_* then process_*, no
 * quoting, its number formats (integers, %.3f, %.4f, %.6f), an empty field for a value it
 * has not (the process columns without a tracked tree). The values are the samples' own and
 * the views' (sample_metrics), the same the JSON Lines hold: CPU use is the share of busy
 * ticks in cores (its cpu.utilization_pct), memory whole MiB (truncated, as its *_mib), disk
 * bytes in the kernel's 512-byte sectors (docs/parity.md). */
#include "rustcsv.h"

#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

enum rfmt {
    RF_INT,  /* integer; NULL: empty */
    RF_F3,   /* %.3f */
    RF_F4,   /* %.4f; NULL: empty */
    RF_F6,   /* %.6f */
    RF_GPU4, /* %.4f; NULL (no GPU): 0.0000 */
    RF_GPU0, /* integer; NULL (no GPU): 0 */
};

static const struct {
    const char *name;
    const char *expr;
    enum rfmt fmt;
} cols[] = {
    {"timestamp", "CAST(m.timestamp AS INTEGER)", RF_INT},
    {"system_processes", "m.system_processes", RF_INT},
    {"system_utime", "m.system_utime", RF_F3},
    {"system_stime", "m.system_stime", RF_F3},
    {"system_cpu_usage", "s.cpu_busy_cores", RF_F4},
    {"system_memory_free_mib", "s.mem_free_kib / 1024", RF_INT},
    {"system_memory_used_mib", "s.mem_used_kib / 1024", RF_INT},
    {"system_memory_buffers_mib", "s.mem_buffers_kib / 1024", RF_INT},
    {"system_memory_cached_mib",
     "s.mem_cached_kib / 1024 + coalesce(s.mem_sreclaimable_kib, 0) / 1024", RF_INT},
    {"system_memory_active_mib", "s.mem_active_kib / 1024", RF_INT},
    {"system_memory_inactive_mib", "s.mem_inactive_kib / 1024", RF_INT},
    {"system_disk_read_bytes", "m.system_disk_read_bytes", RF_INT},
    {"system_disk_write_bytes", "m.system_disk_write_bytes", RF_INT},
    {"system_disk_space_total_gb", "m.system_disk_space_total_gb", RF_F6},
    {"system_disk_space_used_gb", "m.system_disk_space_used_gb", RF_F6},
    {"system_disk_space_free_gb", "m.system_disk_space_free_gb", RF_F6},
    {"system_net_recv_bytes", "m.system_net_recv_bytes", RF_INT},
    {"system_net_sent_bytes", "m.system_net_sent_bytes", RF_INT},
    {"system_gpu_usage", "m.system_gpu_usage", RF_GPU4},
    {"system_gpu_vram_mib", "m.system_gpu_vram_mib", RF_GPU4},
    {"system_gpu_utilized", "m.system_gpu_utilized", RF_GPU0},
    {"process_pid", "m.process_pid", RF_INT},
    {"process_children", "m.process_children", RF_INT},
    {"process_utime", "m.process_utime", RF_F4},
    {"process_stime", "m.process_stime", RF_F4},
    {"process_cpu_usage", "m.process_cpu_usage", RF_F4},
    /* its integer PSS MiB: 0 where the tree's memory is unknown (a zombie job) */
    {"process_memory_mib",
     "CASE WHEN m.process_pid IS NOT NULL THEN coalesce(s.proc_pss_kib, 0) / 1024 END", RF_INT},
    {"process_disk_read_bytes", "m.process_disk_read_bytes", RF_INT},
    {"process_disk_write_bytes", "m.process_disk_write_bytes", RF_INT},
    {"process_gpu_usage", "m.process_gpu_usage", RF_F4},
    {"process_gpu_vram_mib", "m.process_gpu_vram_mib", RF_F4},
    {"process_gpu_utilized", "m.process_gpu_utilized", RF_INT},
};

struct rt_rustcsv {
    struct rt_store *store;
    struct rt_store_rows *rows;
    struct rt_buf line;
};

struct rt_rustcsv *rt_rustcsv_open(struct rt_store *store, char *err, size_t errlen)
{
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT ");
    for (size_t i = 0; i < RT_ARRAY_LEN(cols); i++) {
        rt_buf_puts(&sql, i ? ", " : "");
        rt_buf_puts(&sql, cols[i].expr);
    }
    rt_buf_puts(&sql, " FROM ");
    rt_buf_puts(&sql, rt_store_query_text(RT_QT_EXPORT_RUSTCSV_FROM));
    rt_buf_puts(&sql, " WHERE m.sample_id = ?1");
    struct rt_rustcsv *x = xcalloc(1, sizeof(*x));
    x->store = store;
    /* kept: the live output runs it again for every sample */
    x->rows = rt_store_rows_open_kept(store, sql.p);
    rt_buf_free(&sql);
    if (!x->rows) {
        snprintf(err, errlen, "cannot read the samples: %s", rt_store_error(store));
        rt_rustcsv_close(x);
        return NULL;
    }
    return x;
}

int rt_rustcsv_header(FILE *out)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(cols); i++)
        if (fputs(i ? "," : "", out) < 0 || fputs(cols[i].name, out) < 0)
            return -1;
    return fputc('\n', out) == EOF ? -1 : 0;
}

static void put_field(struct rt_buf *b, struct rt_store_rows *r, int c, enum rfmt f)
{
    char num[64];
    int n = 0;
    int null = rt_store_rows_type(r, c) == RT_STORE_NULL;
    if (null && f == RF_GPU4)
        n = snprintf(num, sizeof(num), "0.0000");
    else if (null && f == RF_GPU0)
        n = snprintf(num, sizeof(num), "0");
    else if (null)
        return; /* the Rust tool's None: an empty field */
    else if (f == RF_INT || f == RF_GPU0)
        n = snprintf(num, sizeof(num), "%lld", (long long)rt_store_rows_i(r, c));
    else
        n = snprintf(num, sizeof(num),
                     f == RF_F3   ? "%.3f"
                     : f == RF_F6 ? "%.6f"
                                  : "%.4f",
                     rt_store_rows_f(r, c));
    rt_buf_append(b, num, (size_t)n);
}

int rt_rustcsv_sample(struct rt_rustcsv *x, int64_t sample_id, FILE *out)
{
    rt_store_rows_bind_i(x->rows, 1, sample_id);
    int rc = 0;
    if (rt_store_rows_next(x->rows) == 1) {
        x->line.len = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(cols); i++) {
            if (i)
                rt_buf_append(&x->line, ",", 1);
            put_field(&x->line, x->rows, (int)i, cols[i].fmt);
        }
        rt_buf_append(&x->line, "\n", 1);
        rc = fwrite(x->line.p, 1, x->line.len, out) == x->line.len ? 0 : -1;
    }
    rt_store_rows_reset(x->rows);
    return rc;
}

void rt_rustcsv_close(struct rt_rustcsv *x)
{
    if (!x)
        return;
    rt_store_rows_close(x->rows);
    rt_buf_free(&x->line);
    free(x);
}
