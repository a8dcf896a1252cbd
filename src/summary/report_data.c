/* report_data.c - what the report draws, read into plain arrays (report_data.h): the store's
 * named queries (sql/queries/report.sql) and one statement over the view sample_metrics whose
 * columns depend on whether the run has GPU rows. */
#include "report_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

static int db_fail(struct rt_store *s, const char *what, char *err, size_t errlen)
{
    snprintf(err, errlen, "report: cannot read %s: %s", what, rt_store_error(s));
    return -1;
}

/* Seconds since the first sample of the run (the monotonic clock, so a wall-clock step cannot
 * fold the time axis), then the charted values: the Python columns and the per-second rates of
 * sample_metrics, in the order of enum report_col; the sample's id after them. */
static const char *const chart_cols[C_N] = {
    "mono - ?2",
    [C_PCPU] = "process_cpu_usage",
    [C_SCPU] = "system_cpu_usage",
    [C_PMEM] = "process_memory_mib",
    [C_SMEM] = "system_memory_used_mib",
    [C_PREAD] = "process_disk_read_bytes_per_s",
    [C_PWRITE] = "process_disk_write_bytes_per_s",
    [C_SREAD] = "system_disk_read_bytes_per_s",
    [C_SWRITE] = "system_disk_write_bytes_per_s",
    [C_RX] = "system_net_recv_bytes_per_s",
    [C_TX] = "system_net_sent_bytes_per_s",
    [C_SPACE] = "system_disk_space_used_gb",
    [C_PGPU] = "process_gpu_usage",
    [C_SGPU] = "system_gpu_usage",
    [C_PVRAM] = "process_gpu_vram_mib",
    [C_SVRAM] = "system_gpu_vram_mib",
};

/* The samples after the baseline, the clock of the first and last of them and of the baseline
 * (the origin), whether the run has GPU rows. */
static int load_range(struct rt_store *s, int64_t run_id, struct report_points *pts, double *first,
                      double *last, double *origin, char *err, size_t errlen)
{
    struct rt_store_rows *r = rt_store_query(s, RT_Q_REPORT_RANGE);
    if (!r)
        return db_fail(s, "the samples", err, errlen);
    rt_store_rows_bind_i(r, 1, run_id);
    if (rt_store_rows_next(r) != 1) {
        rt_store_rows_close(r);
        return db_fail(s, "the samples", err, errlen);
    }
    pts->samples = rt_store_rows_i(r, 0) == RT_NA ? 0 : rt_store_rows_i(r, 0);
    *first = rt_store_rows_f(r, 1);
    *last = rt_store_rows_f(r, 2);
    *origin = rt_store_rows_f(r, 3);
    rt_store_rows_close(r);
    /* whether the run has GPU rows (a database without GPUs answers at once) */
    if (!(r = rt_store_query(s, RT_Q_SUMMARY_RUNS_HAVE_GPUS)))
        return db_fail(s, "the samples", err, errlen);
    char ids[32];
    snprintf(ids, sizeof(ids), "[%lld]", (long long)run_id);
    rt_store_rows_bind_t(r, 1, ids);
    int rc = rt_store_rows_next(r);
    pts->gpu = rc == 1 && rt_store_rows_i(r, 0) != 0;
    rt_store_rows_close(r);
    return rc == 1 ? 0 : db_fail(s, "the samples", err, errlen);
}

/* One sample's values into its bucket's point: each series keeps the bucket's largest value; a
 * sample without a value (NULL: unknown, such as the memory of the final sample, taken of a
 * tree already reaped) takes no part in its bucket's maximum. */
static void add_to_point(struct report_points *pts, int i, const double *v, int ncols, int64_t sid)
{
    pts->x[i] = v[0];
    if (!pts->has[C_PMEM][i])
        pts->sid[i] = sid;
    for (int c = 1; c < ncols; c++) {
        if (isnan(v[c])) /* NULL: unknown */
            continue;
        if (!pts->has[c][i] || v[c] > pts->v[c][i]) {
            pts->v[c][i] = v[c];
            if (c == C_PMEM)
                pts->sid[i] = sid;
        }
        pts->has[c][i] = 1;
    }
}

/* Downsampling: a run longer than RT_REPORT_MAX_POINTS samples is cut into that many buckets
 * of equal time, and each bucket becomes one point at the time of its last sample holding,
 * per series, the bucket's largest value. The maximum rather than the mean, because what a
 * reader looks for in a resource chart is the peak (the memory high-water mark, a burst of
 * I/O) and an average would flatten exactly that; a run of any length gives at most
 * RT_REPORT_MAX_POINTS points per series (fewer than a chart's 798 pixel columns), so the page
 * stays small (a few hundred KB of charts with their hover titles). Shorter runs are drawn
 * sample by sample. A bucket can only be empty when the recording has a gap (fewer points
 * then). */
int report_load_points(struct rt_store *s, int64_t run_id, struct report_points *pts, char *err,
                       size_t errlen)
{
    memset(pts, 0, sizeof(*pts));
    double first, last, origin;
    if (load_range(s, run_id, pts, &first, &last, &origin, err, errlen) != 0)
        return -1;
    int64_t n = pts->samples;
    if (n <= 0)
        return 0;
    int buckets = n > RT_REPORT_MAX_POINTS ? RT_REPORT_MAX_POINTS : (int)n;
    double width = n > RT_REPORT_MAX_POINTS ? (last - first) / buckets : 0;
    pts->bucket_s = width;
    /* without GPU rows the GPU columns (the last ones) are NULL: neither selected nor joined
     * (sample_metrics_base is sample_metrics without them and its GPU joins) */
    int ncols = pts->gpu ? C_N : C_PGPU;
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT ");
    for (int c = 0; c < ncols; c++) {
        rt_buf_puts(&sql, c ? ", " : "");
        rt_buf_puts(&sql, chart_cols[c]);
    }
    rt_buf_puts(&sql, pts->gpu ? ", sample_id FROM sample_metrics"
                               : ", sample_id FROM sample_metrics_base");
    rt_buf_puts(&sql, " WHERE run_id = ?1 ORDER BY seq");
    struct rt_store_rows *r = rt_store_rows_open(s, sql.p);
    rt_buf_free(&sql);
    if (!r)
        return db_fail(s, "the samples", err, errlen);
    double v[C_N];
    rt_store_rows_bind_i(r, 1, run_id);
    rt_store_rows_bind_f(r, 2, origin);
    int cur = -1, rc;
    int64_t row = 0;
    while ((rc = rt_store_rows_next(r)) == 1) {
        rt_store_rows_fv(r, ncols, v);
        v[C_SPACE] *= 1e9; /* the Python column's decimal GB, drawn in bytes as the rest */
        int b;
        if (width > 0) {
            double f = (v[0] - (first - origin)) / width;
            b = f >= buckets ? buckets - 1 : f < 0 ? 0 : (int)f;
        } else {
            b = row < buckets ? (int)row : buckets - 1;
        }
        row++;
        if (b < cur) /* the clock went back: keep filling the current bucket */
            b = cur;
        if (b != cur) {
            cur = b;
            pts->n++;
        }
        add_to_point(pts, pts->n - 1, v, ncols, rt_store_rows_i(r, ncols));
    }
    rt_store_rows_close(r);
    if (rc != 0)
        return db_fail(s, "the samples", err, errlen);
    pts->span = pts->n ? pts->x[pts->n - 1] : 0;
    for (int c = 1; c < C_N; c++)
        for (int i = 0; i < pts->n; i++)
            pts->nhas[c] += pts->has[c][i];
    return 0;
}

/* --- the processes' memory, stacked ------------------------------------------------------ */

struct sample_point {
    int64_t sid; /* a sample's id */
    int i;       /* the point it is drawn as */
};

static int by_sid(const void *a, const void *b)
{
    int64_t x = ((const struct sample_point *)a)->sid, y = ((const struct sample_point *)b)->sid;
    return (x > y) - (x < y);
}

/* The five largest at the samples the points come from (at most RT_REPORT_MAX_POINTS, by the
 * primary key of process_samples, bound as a JSON array): what the chart can show. */
static int stack_top(struct rt_store *s, const char *sids, int64_t id[REPORT_STACK],
                     struct report_stack *st, char *err, size_t errlen)
{
    struct rt_store_rows *r = rt_store_query(s, RT_Q_REPORT_STACK_TOP);
    if (!r)
        return db_fail(s, "the processes", err, errlen);
    rt_store_rows_bind_t(r, 1, sids);
    int np = 0, rc = 0;
    while (np < REPORT_STACK && (rc = rt_store_rows_next(r)) == 1) {
        id[np] = rt_store_rows_i(r, 0);
        const char *name = rt_store_rows_t(r, 2);
        snprintf(st->label[np], sizeof(st->label[np]), "%s (%lld)", name ? name : "?",
                 (long long)rt_store_rows_i(r, 1));
        np++;
    }
    rt_store_rows_close(r);
    return rc < 0 ? db_fail(s, "the processes", err, errlen) : np;
}

/* The five's PSS at each point, in MiB. */
static int stack_rows(struct rt_store *s, const struct report_points *pts, const char *sids,
                      const int64_t id[REPORT_STACK], int np, struct report_stack *st, char *err,
                      size_t errlen)
{
    /* the points by sample id, to find a row's point */
    struct sample_point *by = xmalloc(sizeof(*by) * (size_t)(pts->n ? pts->n : 1));
    int nby = 0;
    for (int i = 0; i < pts->n; i++)
        if (pts->has[C_PMEM][i])
            by[nby++] = (struct sample_point){pts->sid[i], i};
    qsort(by, (size_t)nby, sizeof(*by), by_sid);
    struct rt_store_rows *r = rt_store_query(s, RT_Q_REPORT_STACK_ROWS);
    int rc = -1;
    if (r) {
        rt_store_rows_bind_t(r, 1, sids);
        for (int k = 0; k < REPORT_STACK; k++)
            rt_store_rows_bind_i(r, k + 2, k < np ? id[k] : id[0]);
        while ((rc = rt_store_rows_next(r)) == 1) {
            int64_t sid = rt_store_rows_i(r, 0), pid = rt_store_rows_i(r, 1);
            struct sample_point key = {sid, 0};
            const struct sample_point *at = bsearch(&key, by, (size_t)nby, sizeof(*by), by_sid);
            for (int k = 0; at && k < np; k++)
                if (id[k] == pid)
                    st->val[k][at->i] = rt_store_rows_f(r, 2) / 1024.0;
        }
        rt_store_rows_close(r);
    }
    free(by);
    return rc != 0 ? db_fail(s, "the processes", err, errlen) : 0;
}

int report_load_stack(struct rt_store *s, const struct report_points *pts, struct report_stack *st,
                      char *err, size_t errlen)
{
    memset(st, 0, sizeof(*st));
    if (pts->nhas[C_PMEM] == 0)
        return 0;
    struct rt_buf sids = {0};
    rt_buf_puts(&sids, "[");
    for (int i = 0, k = 0; i < pts->n; i++)
        if (pts->has[C_PMEM][i]) {
            char one[32];
            snprintf(one, sizeof(one), "%s%lld", k++ ? "," : "", (long long)pts->sid[i]);
            rt_buf_puts(&sids, one);
        }
    rt_buf_puts(&sids, "]");
    int64_t id[REPORT_STACK];
    int np = stack_top(s, sids.p, id, st, err, errlen);
    int rc = np <= 0 ? np : stack_rows(s, pts, sids.p, id, np, st, err, errlen);
    rt_buf_free(&sids);
    if (np <= 0 || rc != 0)
        return np < 0 || rc != 0 ? -1 : 0;
    /* the rest of the tree: what the five leave of the tree's PSS */
    snprintf(st->label[np], sizeof(st->label[np]), "others");
    for (int i = 0; i < pts->n; i++) {
        if (!pts->has[C_PMEM][i])
            continue;
        double sum = 0;
        for (int k = 0; k < np; k++)
            sum += st->val[k][i];
        st->val[np][i] = fmax(pts->v[C_PMEM][i] - sum, 0);
    }
    st->nl = np + 1;
    return 0;
}

/* --- the processes on GPUs --------------------------------------------------------------- */

int report_load_gpu_procs(struct rt_store *s, int64_t run_id, struct report_gpu_proc **rows, int *n,
                          char *err, size_t errlen)
{
    *rows = NULL;
    *n = 0;
    struct rt_store_rows *r = rt_store_query(s, RT_Q_REPORT_GPU_PROCESSES);
    if (!r)
        return db_fail(s, "the GPU processes", err, errlen);
    rt_store_rows_bind_i(r, 1, run_id);
    size_t cap = 0, len = 0;
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        const char *name = rt_store_rows_t(r, 1);
        *RT_PUSH(*rows, len, cap) = (struct report_gpu_proc){
            rt_store_rows_i(r, 0),       rt_store_rows_i(r, 2), rt_store_rows_i(r, 6),
            name ? xstrdup(name) : NULL, rt_store_rows_f(r, 3), rt_store_rows_f(r, 4),
            rt_store_rows_f(r, 5)};
    }
    rt_store_rows_close(r);
    *n = (int)len;
    return rc != 0 ? db_fail(s, "the GPU processes", err, errlen) : 0;
}

void report_gpu_procs_free(struct report_gpu_proc *rows, int n)
{
    for (int i = 0; i < n; i++)
        free(rows[i].name);
    free(rows);
}
