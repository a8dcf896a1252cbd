/* export.c - rows of the export views, formatted as the references print them. */
#include "rtrack/export/export.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/export/pyfmt.h"
#include "rtrack/base/util.h"

/* How the Python reference prints each column (resource-tracker 0.5.0, helpers.render_csv_row
 * over the rounding of tracker.py; shared/parity/README.md has the rules with examples). */
enum colfmt {
    CF_INT,      /* int; NULL -> "" */
    CF_F2,       /* round(x, 2) */
    CF_F3,       /* round(x, 3) */
    CF_F4,       /* round(x, 4) */
    CF_CLAMP6,   /* round(max(0, x), 6): the int 0 when that is <= 0 */
    CF_RATE4,    /* max(0, x): the int 0 when x <= 0, else round(x, 4) (0.0 stays a float) */
    CF_CHILDREN, /* int, "" when 0 (Python's None for "no children") */
    CF_GPU_F4,   /* without GPU data the int 0 (what Python prints without nvidia-smi) */
    CF_GPU_INT,
};

struct colrule {
    const char *name; /* without the system_/process_ prefix */
    enum colfmt fmt;
};

static const struct colrule rules[] = {
    {"timestamp", CF_F3},           {"processes", CF_INT},          {"pid", CF_INT},
    {"children", CF_CHILDREN},      {"utime", CF_CLAMP6},           {"stime", CF_CLAMP6},
    {"cpu_usage", CF_RATE4},        {"memory_free_mib", CF_F4},     {"memory_used_mib", CF_F4},
    {"memory_buffers_mib", CF_F4},  {"memory_cached_mib", CF_F4},   {"memory_active_mib", CF_F4},
    {"memory_inactive_mib", CF_F4}, {"memory_mib", CF_F4},          {"disk_read_bytes", CF_INT},
    {"disk_write_bytes", CF_INT},   {"disk_space_total_gb", CF_F2}, {"disk_space_used_gb", CF_F2},
    {"disk_space_free_gb", CF_F2},  {"net_recv_bytes", CF_INT},     {"net_sent_bytes", CF_INT},
    {"gpu_usage", CF_GPU_F4},       {"gpu_vram_mib", CF_GPU_F4},    {"gpu_utilized", CF_GPU_INT},
};

/* Views start with run_id, seq, sample_id; the exported columns follow. */
#define VIEW_KEYS 3

struct rt_exporter {
    sqlite3 *db;
    sqlite3_stmt *st;
    struct rt_export_query q;
    int ncols;
    enum colfmt *fmt;
    int *is_process; /* column belongs to the process tracker */
    int pid_col;     /* index of the (process_)pid column, -1 if none */
    struct rt_buf line;
};

static const char *const views[] = {"python_combined", "python_system", "python_process"};

static int find_rule(const char *name, enum colfmt *out)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(rules); i++)
        if (strcmp(rules[i].name, name) == 0) {
            *out = rules[i].fmt;
            return 0;
        }
    return -1;
}

struct rt_exporter *rt_exporter_open(sqlite3 *db, const struct rt_export_query *q, char *err,
                                     size_t errlen)
{
    struct rt_exporter *x = xcalloc(1, sizeof(*x));
    x->db = db;
    x->q = *q;
    x->pid_col = -1;
    char sql[512];
    if (q->format == RT_FMT_JSONL)
        snprintf(sql, sizeof(sql), "SELECT run_id, seq, sample_id, json FROM rust_sample WHERE ");
    else
        snprintf(sql, sizeof(sql), "SELECT * FROM %s WHERE ", views[q->table]);
    size_t l = strlen(sql);
    if (q->sample_id > 0)
        snprintf(sql + l, sizeof(sql) - l, "sample_id = ?4");
    else
        snprintf(sql + l, sizeof(sql) - l,
                 "run_id = ?1 AND (?2 IS NULL OR timestamp >= ?2) AND "
                 "(?3 IS NULL OR timestamp <= ?3) AND (?5 IS NULL OR seq >= ?5) AND "
                 "(?6 IS NULL OR seq <= ?6) ORDER BY seq");
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &x->st, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "cannot read the export views: %s", sqlite3_errmsg(db));
        rt_exporter_close(x);
        return NULL;
    }
    x->ncols = sqlite3_column_count(x->st) - VIEW_KEYS;
    x->fmt = xcalloc((size_t)x->ncols, sizeof(*x->fmt));
    x->is_process = xcalloc((size_t)x->ncols, sizeof(*x->is_process));
    for (int i = 0; q->format == RT_FMT_CSV && i < x->ncols; i++) {
        const char *name = sqlite3_column_name(x->st, i + VIEW_KEYS);
        const char *base = name;
        if (strncmp(name, "system_", 7) == 0)
            base = name + 7;
        else if (strncmp(name, "process_", 8) == 0) {
            base = name + 8;
            x->is_process[i] = 1;
        } else if (q->table == RT_TABLE_PROCESS && strcmp(name, "timestamp") != 0) {
            x->is_process[i] = 1;
        }
        if (strcmp(base, "pid") == 0)
            x->pid_col = i;
        if (find_rule(base, &x->fmt[i]) != 0) {
            snprintf(err, errlen, "export view column '%s' has no formatting rule", name);
            rt_exporter_close(x);
            return NULL;
        }
    }
    if (q->sample_id <= 0) {
        sqlite3_bind_int64(x->st, 1, q->run_id);
        if (!isnan(q->since))
            sqlite3_bind_double(x->st, 2, q->since);
        if (!isnan(q->until))
            sqlite3_bind_double(x->st, 3, q->until);
        if (q->seq_from > 0)
            sqlite3_bind_int64(x->st, 5, q->seq_from);
        if (q->seq_to > 0)
            sqlite3_bind_int64(x->st, 6, q->seq_to);
    }
    return x;
}

int rt_exporter_header(struct rt_exporter *x, FILE *out)
{
    if (x->q.format != RT_FMT_CSV)
        return 0;
    x->line.len = 0;
    for (int i = 0; i < x->ncols; i++) {
        rt_buf_puts(&x->line, i ? ",\"" : "\"");
        rt_buf_puts(&x->line, sqlite3_column_name(x->st, i + VIEW_KEYS));
        rt_buf_puts(&x->line, "\"");
    }
    rt_buf_puts(&x->line, "\n");
    return fwrite(x->line.p, 1, x->line.len, out) == x->line.len ? 0 : -1;
}

/* repr(round(v, nd)); returns the sign of the rounded value */
static int put_round(struct rt_buf *b, double v, int nd)
{
    char num[RT_PYFLOAT_MAX];
    size_t n;
    int sign = rt_py_round_repr(v, nd, num, &n);
    rt_buf_append(b, num, n);
    return sign;
}

static void put_int(struct rt_buf *b, int64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", (long long)v);
    rt_buf_append(b, num, (size_t)n);
}

/* One CSV field of the current row. */
static void put_field(struct rt_exporter *x, int i, int no_process)
{
    sqlite3_stmt *st = x->st;
    int c = i + VIEW_KEYS;
    int null = sqlite3_column_type(st, c) == SQLITE_NULL;
    struct rt_buf *b = &x->line;
    if (x->is_process[i] && no_process) {
        rt_buf_puts(b, "\"\""); /* no tree tracked: the process tracker has no row */
        return;
    }
    switch (x->fmt[i]) {
    case CF_GPU_F4:
    case CF_GPU_INT:
        if (null) {
            rt_buf_puts(b, "0");
            return;
        }
        if (x->fmt[i] == CF_GPU_INT)
            put_int(b, sqlite3_column_int64(st, c));
        else
            put_round(b, sqlite3_column_double(st, c), 4);
        return;
    default:
        break;
    }
    if (null) {
        rt_buf_puts(b, "\"\"");
        return;
    }
    double v = sqlite3_column_double(st, c);
    switch (x->fmt[i]) {
    case CF_INT:
        put_int(b, sqlite3_column_int64(st, c));
        break;
    case CF_CHILDREN:
        if (sqlite3_column_int64(st, c) == 0)
            rt_buf_puts(b, "\"\"");
        else
            put_int(b, sqlite3_column_int64(st, c));
        break;
    case CF_F2:
        put_round(b, v, 2);
        break;
    case CF_F3:
        put_round(b, v, 3);
        break;
    case CF_F4:
        put_round(b, v, 4);
        break;
    case CF_CLAMP6: {
        size_t len0 = b->len;
        if (put_round(b, v > 0 ? v : 0, 6) <= 0) {
            b->len = len0;
            rt_buf_puts(b, "0");
        }
        break;
    }
    case CF_RATE4:
        if (v <= 0)
            rt_buf_puts(b, "0");
        else
            put_round(b, v, 4);
        break;
    default:
        break;
    }
}

static int write_row(struct rt_exporter *x, FILE *out)
{
    struct rt_buf *b = &x->line;
    b->len = 0;
    if (x->q.format == RT_FMT_JSONL) {
        const char *j = (const char *)sqlite3_column_text(x->st, VIEW_KEYS);
        rt_buf_puts(b, j ? j : "null");
    } else {
        int no_process =
            x->pid_col >= 0 && sqlite3_column_type(x->st, x->pid_col + VIEW_KEYS) == SQLITE_NULL;
        for (int i = 0; i < x->ncols; i++) {
            if (i)
                rt_buf_puts(b, ",");
            put_field(x, i, no_process);
        }
    }
    rt_buf_puts(b, "\n");
    return fwrite(b->p, 1, b->len, out) == b->len ? 0 : -1;
}

int64_t rt_exporter_rows(struct rt_exporter *x, FILE *out, char *err, size_t errlen)
{
    int64_t n = 0;
    int rc;
    while ((rc = sqlite3_step(x->st)) == SQLITE_ROW) {
        if (write_row(x, out) != 0) {
            snprintf(err, errlen, "cannot write the output");
            sqlite3_reset(x->st);
            return -1;
        }
        n++;
    }
    sqlite3_reset(x->st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "cannot read the database: %s", sqlite3_errmsg(x->db));
        return -1;
    }
    return n;
}

int rt_exporter_sample(struct rt_exporter *x, int64_t sample_id, FILE *out)
{
    sqlite3_bind_int64(x->st, 4, sample_id);
    int rc = 0;
    if (sqlite3_step(x->st) == SQLITE_ROW)
        rc = write_row(x, out);
    sqlite3_reset(x->st);
    return rc;
}

void rt_exporter_close(struct rt_exporter *x)
{
    if (!x)
        return;
    sqlite3_finalize(x->st);
    free(x->fmt);
    free(x->is_process);
    rt_buf_free(&x->line);
    free(x);
}
