/* pass.c - one pass over the picked runs' samples (internal.h): each metric's values for the
 * statistics, the totals, the tree's memory peak, its CPU demand, the sparklines and the
 * Python reference's stats(), read from the view sample_metrics (python_combined's columns,
 * so the figures are the exported ones, unrounded, and the per-second rates, both defined
 * there once).
 *
 * The pass is cut into stretches of a run's samples, PART_SEQS rows of the (run_id, seq) index
 * each, read by a statement each in that order. The main thread takes them from the front; the
 * process rows' thread (top.c), once its own pass is done, takes them from the back on its own
 * connection (the two passes run on the two CPUs a summary of a long run has to share). Each
 * stretch adds up on its own; they are merged in order afterwards, so the result does not
 * depend on which thread read what. A run of fewer samples is one stretch, added up as one
 * pass. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

#define PART_SEQS 16384

/* The columns of sample_metrics (sql/views.sql) the pass reads: COL_ names each, col_names
 * spells it for the SELECT. P_ the process tree, S_ the system; _S per second. */
enum col {
    COL_RUN,
    COL_SAMPLE,
    COL_TS,
    COL_P_PID,
    COL_P_CPU,
    COL_P_WAIT,
    COL_P_MEM,
    COL_P_READ,
    COL_P_WRITE,
    COL_P_READ_S,
    COL_P_WRITE_S,
    COL_P_IO_S,
    COL_P_GPU,
    COL_P_VRAM,
    COL_P_GPUS,
    COL_S_CPU,
    COL_S_MEM,
    COL_S_READ,
    COL_S_WRITE,
    COL_S_RECV,
    COL_S_SENT,
    COL_S_READ_S,
    COL_S_WRITE_S,
    COL_S_IO_S,
    COL_S_RECV_S,
    COL_S_SENT_S,
    COL_S_GPU,
    COL_S_VRAM,
    COL_S_GPUS,
    COL_S_SPACE,
    COL_DT,
    COL_N,
    NONE = -1
};

static const char *const col_names[COL_N] = {
    [COL_RUN] = "run_id",
    [COL_SAMPLE] = "sample_id",
    [COL_TS] = "timestamp",
    [COL_P_PID] = "process_pid",
    [COL_P_CPU] = "process_cpu_usage",
    [COL_P_WAIT] = "process_cpu_wait_cores",
    [COL_P_MEM] = "process_memory_mib",
    [COL_P_READ] = "process_disk_read_bytes",
    [COL_P_WRITE] = "process_disk_write_bytes",
    [COL_P_READ_S] = "process_disk_read_bytes_per_s",
    [COL_P_WRITE_S] = "process_disk_write_bytes_per_s",
    [COL_P_IO_S] = "process_disk_io_bytes_per_s",
    [COL_P_GPU] = "process_gpu_usage",
    [COL_P_VRAM] = "process_gpu_vram_mib",
    [COL_P_GPUS] = "process_gpu_utilized",
    [COL_S_CPU] = "system_cpu_usage",
    [COL_S_MEM] = "system_memory_used_mib",
    [COL_S_READ] = "system_disk_read_bytes",
    [COL_S_WRITE] = "system_disk_write_bytes",
    [COL_S_RECV] = "system_net_recv_bytes",
    [COL_S_SENT] = "system_net_sent_bytes",
    [COL_S_READ_S] = "system_disk_read_bytes_per_s",
    [COL_S_WRITE_S] = "system_disk_write_bytes_per_s",
    [COL_S_IO_S] = "system_disk_io_bytes_per_s",
    [COL_S_RECV_S] = "system_net_recv_bytes_per_s",
    [COL_S_SENT_S] = "system_net_sent_bytes_per_s",
    [COL_S_GPU] = "system_gpu_usage",
    [COL_S_VRAM] = "system_gpu_vram_mib",
    [COL_S_GPUS] = "system_gpu_utilized",
    [COL_S_SPACE] = "system_disk_space_used_gb",
    [COL_DT] = "interval_s",
};

/* What feeds each side's metrics, totals and sparklines (CPU, memory, disk I/O, GPU); NONE
 * where the side has no such value (the tree's network). */
static const int metric_col[2][RT_M_N] = {
    [SIDE_PROC] = {[RT_M_CPU] = COL_P_CPU,
                   [RT_M_MEM] = COL_P_MEM,
                   [RT_M_DREAD] = COL_P_READ_S,
                   [RT_M_DWRITE] = COL_P_WRITE_S,
                   [RT_M_NRECV] = NONE,
                   [RT_M_NSENT] = NONE,
                   [RT_M_GPU] = COL_P_GPU,
                   [RT_M_VRAM] = COL_P_VRAM,
                   [RT_M_GPUS] = COL_P_GPUS},
    [SIDE_SYS] = {[RT_M_CPU] = COL_S_CPU,
                  [RT_M_MEM] = COL_S_MEM,
                  [RT_M_DREAD] = COL_S_READ_S,
                  [RT_M_DWRITE] = COL_S_WRITE_S,
                  [RT_M_NRECV] = COL_S_RECV_S,
                  [RT_M_NSENT] = COL_S_SENT_S,
                  [RT_M_GPU] = COL_S_GPU,
                  [RT_M_VRAM] = COL_S_VRAM,
                  [RT_M_GPUS] = COL_S_GPUS},
};
static const int total_col[2][RT_T_N] = {
    [SIDE_PROC] = {COL_P_READ, COL_P_WRITE, NONE, NONE},
    [SIDE_SYS] = {COL_S_READ, COL_S_WRITE, COL_S_RECV, COL_S_SENT},
};
static const int spark_col[2][4] = {
    [SIDE_PROC] = {COL_P_CPU, COL_P_MEM, COL_P_IO_S, COL_P_GPU},
    [SIDE_SYS] = {COL_S_CPU, COL_S_MEM, COL_S_IO_S, COL_S_GPU},
};
/* stats()' columns, in RT_PY_ order */
static const int py_col[RT_PY_N] = {COL_P_CPU, COL_P_MEM, COL_P_GPU, COL_P_VRAM, COL_P_GPUS};

static int is_gpu_col(int col)
{
    return col == COL_P_GPU || col == COL_P_VRAM || col == COL_P_GPUS || col == COL_S_GPU ||
           col == COL_S_VRAM || col == COL_S_GPUS;
}

/* The metrics that are rates over the sample's interval (the others are levels: memory, GPU
 * busy, VRAM) */
static int is_rate(int m)
{
    return m == RT_M_CPU || m == RT_M_DREAD || m == RT_M_DWRITE || m == RT_M_NRECV ||
           m == RT_M_NSENT;
}

/* One run's stats() sums (the Python reference's), aggregated over the runs by py_run_close */
struct py_run {
    double sum[RT_PY_N], max[RT_PY_N], space_max, recv, sent;
    double t0, t1;   /* first and last sample */
    double interval; /* the run's nominal interval: stats() adds one to max - min */
    size_t n;
};

struct part_series {
    size_t n; /* values kept, at series[row0 .. row0 + n) */
    double sum, max;
};

struct part {
    int64_t run, lo, hi; /* its run and its seqs */
    size_t row0, nrows;  /* its first row in the pass, its rows (counted beforehand) */
    int run_first;       /* it starts with its run's first sample after the baseline */
    double nominal;      /* the run's requested interval */
    int rc, by_other;    /* read: 0 or -1; by the process rows' thread */
    /* what it added up */
    struct part_series s[2][RT_M_N];
    double totals[2][RT_T_N];
    int has_tot[2][RT_T_N];
    int has_tree;
    int64_t peak_sample, peak_run;
    double peak_ts, peak_mib;
    double dem_run, dem_wait; /* seconds the tree ran and waited, in samples with both */
    double tree_cpu_s;
    int has_tree_cpu;
    struct py_run py;
    double spark[4][RT_SPARK_N];
    int spark_has[4][RT_SPARK_N];
};

struct pass {
    struct part *p;
    size_t n, cap;
    size_t rows; /* every stretch's rows */
    int sel[COL_N], nsel;
    char *sql;              /* a stretch's statement */
    struct pass_sums *sums; /* the series the values go into (allocated for `rows`) */
    /* the stretches not taken yet are p[front .. back); `ready` once they are planned */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t front, back, done;
    int ready;
};

struct pass *pass_new(void)
{
    struct pass *ps = xcalloc(1, sizeof(*ps));
    pthread_mutex_init(&ps->mu, NULL);
    pthread_cond_init(&ps->cv, NULL);
    return ps;
}

void pass_free(struct pass *ps, struct pass_sums *sums)
{
    if (ps) {
        pthread_mutex_destroy(&ps->mu);
        pthread_cond_destroy(&ps->cv);
        free(ps->p);
        free(ps->sql);
        free(ps);
    }
    for (int side = 0; sums && side < 2; side++)
        for (int m = 0; m < RT_M_N; m++)
            free(sums->s[side][m].v);
}

/* Whether any of the picked runs' samples has GPU rows: without, the GPU columns of
 * sample_metrics are NULL in every row (its gpu_totals and gpu_process_totals have no row to
 * join), and the pass neither selects nor joins them. */
static int runs_have_gpus(struct sctx *c)
{
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_RUNS_HAVE_GPUS, 1, 1);
    if (!r)
        return -1;
    int rc = rt_store_rows_next(r), gpus = rc == 1 && rt_store_rows_i(r, 0) != 0;
    rt_store_rows_close(r);
    return rc == 1 ? gpus : summary_db_fail(c);
}

/* The statement of a stretch of the pass: one run's samples after the baseline with seq in
 * ?2..?3, in order, the columns of sel[0..n), the GPU columns only where the runs have GPU rows
 * (the others are NULL, as the view gives). Without GPU rows it reads sample_metrics_base, the
 * same columns but the GPU ones: SQLite prepares it without sample_metrics's GPU joins, half of
 * the statement's preparation. The end-of-run line's figures (figures_only: the cores, the
 * memory peak) need no GPU column: it reads sample_metrics_base without asking whether the runs
 * have GPU rows (25 to 47 us of the line without GPUs, 250 with two, docs/performance.md). */
static int pass_sql(struct sctx *c, struct pass *ps)
{
    int gpus = c->o->figures_only ? 0 : runs_have_gpus(c);
    if (gpus < 0)
        return -1;
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT ");
    ps->nsel = 0;
    for (int i = 0; i < COL_N; i++) {
        if (!gpus && is_gpu_col(i))
            continue;
        rt_buf_puts(&sql, ps->nsel ? ", " : "");
        rt_buf_puts(&sql, col_names[i]);
        ps->sel[ps->nsel++] = i;
    }
    rt_buf_puts(&sql, gpus ? " FROM sample_metrics" : " FROM sample_metrics_base");
    rt_buf_puts(&sql, " WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq");
    ps->sql = sql.p;
    return 0;
}

static void py_run_add(struct py_run *r, const double *v)
{
    for (int k = 0; k < RT_PY_N; k++) {
        double x = isnan(v[py_col[k]]) ? 0 : v[py_col[k]];
        r->sum[k] += x;
        if (r->n == 0 || x > r->max[k])
            r->max[k] = x;
    }
    if (!isnan(v[COL_S_SPACE]) && v[COL_S_SPACE] > r->space_max)
        r->space_max = v[COL_S_SPACE];
    r->recv += isnan(v[COL_S_RECV]) ? 0 : v[COL_S_RECV];
    r->sent += isnan(v[COL_S_SENT]) ? 0 : v[COL_S_SENT];
    if (r->n == 0)
        r->t0 = v[COL_TS];
    r->t1 = v[COL_TS];
    r->n++;
}

/* A stretch's stats() sums into its run's. */
static void py_run_merge(struct py_run *r, const struct py_run *p)
{
    if (p->n == 0)
        return;
    for (int k = 0; k < RT_PY_N; k++) {
        r->sum[k] += p->sum[k];
        if (r->n == 0 || p->max[k] > r->max[k])
            r->max[k] = p->max[k];
    }
    r->space_max = fmax(r->space_max, p->space_max);
    r->recv += p->recv;
    r->sent += p->sent;
    if (r->n == 0)
        r->t0 = p->t0;
    r->t1 = p->t1;
    r->n += p->n;
}

/* The run's stats() into the job's aggregate (mean of means, max of maxes), r emptied for the
 * next run. */
static void py_run_close(struct pass_sums *s, struct py_run *r)
{
    if (r->n == 0)
        return;
    struct rt_summary_py *py = &s->py;
    for (int k = 0; k < RT_PY_N; k++) {
        py->mean[k] += r->sum[k] / (double)r->n;
        py->max[k] = s->py_runs && py->max[k] > r->max[k] ? py->max[k] : r->max[k];
    }
    py->space_max = fmax(py->space_max, r->space_max);
    py->recv = fmax(py->recv, r->recv);
    py->sent = fmax(py->sent, r->sent);
    py->duration += r->t1 - r->t0 + r->interval;
    s->py_runs++;
    memset(r, 0, sizeof(*r));
}

/* The sparkline stretch of row `index` of `rows` */
static size_t spark_bucket(size_t rows, size_t index)
{
    size_t nb = rows < RT_SPARK_N ? rows : RT_SPARK_N;
    size_t bucket = rows ? index * nb / rows : 0;
    return bucket >= RT_SPARK_N ? RT_SPARK_N - 1 : bucket;
}

/* The tree's peak and demand from one sample */
static void add_tree(struct part *p, const double *v)
{
    if (!isnan(v[COL_P_MEM]) && (!p->peak_sample || v[COL_P_MEM] > p->peak_mib)) {
        p->peak_sample = (int64_t)v[COL_SAMPLE];
        p->peak_run = (int64_t)v[COL_RUN];
        p->peak_ts = v[COL_TS];
        p->peak_mib = v[COL_P_MEM];
    }
    if (!isnan(v[COL_P_CPU]) && !isnan(v[COL_DT])) {
        p->tree_cpu_s += v[COL_P_CPU] * v[COL_DT];
        p->has_tree_cpu = 1;
    }
    if (!isnan(v[COL_P_WAIT]) && !isnan(v[COL_P_CPU]) && !isnan(v[COL_DT])) {
        p->dem_run += v[COL_P_CPU] * v[COL_DT];
        p->dem_wait += v[COL_P_WAIT] * v[COL_DT];
    }
}

/* One sample, row `k` of stretch p, into p: both sides' values (into the pass's series, at the
 * stretch's place), totals, the peak, the demand, the sparklines and the run's stats().
 * `p->nominal`: the run's requested interval. A sample over less than half of it (the final one,
 * taken when the job ended just after a periodic sample) leaves its rates out of the statistics:
 * over a few milliseconds the kernel's 10 ms CPU ticks make a rate noise (one tick over 4 ms is
 * 2.5 cores), which a max or a p95 would report as the job's. Its seconds and bytes still count
 * in the totals, its levels in theirs. */
static void add_row(struct pass *ps, struct part *p, const double *v, size_t k)
{
    /* (the run's first sample stays: for a run of one sample, a rate of a few milliseconds is
     * all there is of it) */
    int first = p->run_first && k == 0;
    int short_dt = !first && !isnan(p->nominal) && !isnan(v[COL_DT]) && v[COL_DT] < p->nominal / 2;
    int tree = !isnan(v[COL_P_PID]);
    if (tree)
        p->has_tree = 1;
    add_tree(p, v);
    for (int side = 0; side < 2; side++) {
        for (int m = 0; m < RT_M_N; m++) {
            double x = metric_col[side][m] == NONE ? RT_NAN : v[metric_col[side][m]];
            if (isnan(x) || (short_dt && is_rate(m)))
                continue;
            struct part_series *t = &p->s[side][m];
            if (t->n == 0 || x > t->max)
                t->max = x;
            t->sum += x;
            ps->sums->s[side][m].v[p->row0 + t->n++] = (float)x;
        }
        for (int t = 0; t < RT_T_N; t++)
            if (total_col[side][t] != NONE && !isnan(v[total_col[side][t]])) {
                p->totals[side][t] += v[total_col[side][t]];
                p->has_tot[side][t] = 1;
            }
    }
    /* the sparklines show the tree (the system for a system-only recording) */
    size_t bucket = spark_bucket(ps->rows, p->row0 + k);
    for (int j = 0; j < 4; j++) {
        if (short_dt && (j == RT_SPARK_CPU || j == RT_SPARK_IO)) /* rates */
            continue;
        double x = v[spark_col[tree ? SIDE_PROC : SIDE_SYS][j]];
        if (!isnan(x) && (!p->spark_has[j][bucket] || x > p->spark[j][bucket])) {
            p->spark[j][bucket] = x;
            p->spark_has[j][bucket] = 1;
        }
    }
    py_run_add(&p->py, v);
}

/* One run's stretches: where each ends (seqs may have gaps, of any size), its rows counted.
 * `next` and `count` are the statements that find an end and count a last stretch, opened on
 * the first run longer than a stretch. */
static int plan_run(struct sctx *c, struct pass *ps, int64_t run, int64_t lo, int64_t hi,
                    int64_t rows, int baseline, double nominal, struct rt_store_rows **next,
                    struct rt_store_rows **count)
{
    if (rows > PART_SEQS && !*next) {
        *next = summary_query(c, RT_Q_SUMMARY_STRETCH_END, 1, 0);
        *count = *next ? summary_query(c, RT_Q_SUMMARY_STRETCH_COUNT, 1, 0) : NULL;
        if (!*next || !*count)
            return -1;
    }
    for (int64_t a = lo, first = 1;;) {
        int got = 1;
        int64_t b = hi, n = rows;
        if (rows > PART_SEQS) {
            rt_store_rows_reset(*next);
            rt_store_rows_bind_i(*next, 1, run);
            rt_store_rows_bind_i(*next, 2, a);
            rt_store_rows_bind_i(*next, 3, PART_SEQS - 1);
            got = rt_store_rows_next(*next);
            b = got == 1 ? rt_store_rows_i(*next, 0) : hi;
            n = PART_SEQS;
            if (got == 0) {
                rt_store_rows_reset(*count);
                rt_store_rows_bind_i(*count, 1, run);
                rt_store_rows_bind_i(*count, 2, a);
                rt_store_rows_bind_i(*count, 3, b);
                got = rt_store_rows_next(*count);
                n = got == 1 ? rt_store_rows_i(*count, 0) : 0;
            }
        }
        if (got != 1)
            return summary_db_fail(c);
        n -= baseline && a <= 0 && b >= 0;
        if (n > 0) {
            struct part *p = RT_PUSH(ps->p, ps->n, ps->cap);
            memset(p, 0, sizeof(*p));
            *p = (struct part){.run = run,
                               .lo = a,
                               .hi = b,
                               .row0 = ps->rows,
                               .nrows = (size_t)n,
                               .run_first = (int)first,
                               .nominal = nominal};
            first = 0;
            ps->rows += (size_t)n;
        }
        if (b >= hi)
            return 0;
        a = b + 1;
    }
}

/* The stretches of every picked run (the baseline, seq 0, left out of their rows as
 * run_sample_counts leaves it out) and each series allocated for all rows. */
static int plan(struct sctx *c, struct pass *ps, struct pass_sums *sums)
{
    if (pass_sql(c, ps) != 0)
        return -1;
    struct rt_store_rows *runs = summary_query(c, RT_Q_SUMMARY_PLAN, 6, 1), *next = NULL,
                         *count = NULL;
    if (!runs)
        return -1;
    rt_store_rows_bind_i(runs, 2, PART_SEQS + 1);
    int rc = 0, step, seen = 0;
    while (rc == 0 && (step = rt_store_rows_next(runs)) == 1) {
        seen++;
        int64_t lo = rt_store_rows_i(runs, 1);
        if (lo == RT_NA)
            continue; /* a run without samples */
        rc = plan_run(c, ps, rt_store_rows_i(runs, 0), lo, rt_store_rows_i(runs, 2),
                      rt_store_rows_i(runs, 5), rt_store_rows_i(runs, 3) != 0,
                      rt_store_rows_f(runs, 4), &next, &count);
    }
    if (rc == 0 && step < 0)
        rc = summary_db_fail(c);
    rt_store_rows_close(runs);
    rt_store_rows_close(next);
    rt_store_rows_close(count);
    if (rc != 0)
        return -1;
    if (!seen && c->run_unchecked) {
        snprintf(c->err, c->errlen, "no run %lld in the database", (long long)c->o->run_id);
        return summary_bad_request(c);
    }
    sums->rows = ps->rows;
    ps->sums = sums;
    for (int side = 0; side < 2; side++)
        for (int m = 0; m < RT_M_N; m++)
            if (metric_col[side][m] != NONE && ps->rows) {
                /* never touched where a column has no values: no memory spent on it */
                struct series *s = &sums->s[side][m];
                s->v = xmalloc(ps->rows * sizeof(float));
                s->cap = ps->rows;
            }
    return 0;
}

int pass_plan(struct sctx *c, struct pass *ps, struct pass_sums *sums)
{
    int rc = plan(c, ps, sums);
    pass_ready(ps);
    return rc;
}

/* Read stretch p on `store` (its statement in *st, compiled on first use). */
static int read_part(struct rt_store *store, struct rt_store_rows **st, struct pass *ps,
                     struct part *p)
{
    if (!*st && !(*st = rt_store_rows_open(store, ps->sql)))
        return -1;
    struct rt_store_rows *r = *st;
    rt_store_rows_reset(r);
    rt_store_rows_bind_i(r, 1, p->run);
    rt_store_rows_bind_i(r, 2, p->lo);
    rt_store_rows_bind_i(r, 3, p->hi);
    double v[COL_N], got[COL_N];
    for (int i = 0; i < COL_N; i++)
        v[i] = RT_NAN; /* the columns not selected */
    size_t k = 0;
    int rc = 0;
    /* (rows beyond the count: none can be, the stretch's seqs were written before the count) */
    while (k < p->nrows && (rc = rt_store_rows_next(r)) == 1) {
        rt_store_rows_fv(r, ps->nsel, got);
        for (int i = 0; i < ps->nsel; i++)
            v[ps->sel[i]] = got[i];
        add_row(ps, p, v, k++);
    }
    return k < p->nrows && rc < 0 ? -1 : 0;
}

/* Take the next stretch not taken yet, from the front (the main thread) or the back; NULL when
 * none is left. */
static struct part *take_part(struct pass *ps, int from_back)
{
    struct part *p = NULL;
    pthread_mutex_lock(&ps->mu);
    while (!ps->ready)
        pthread_cond_wait(&ps->cv, &ps->mu);
    if (ps->front < ps->back)
        p = &ps->p[from_back ? --ps->back : ps->front++];
    pthread_mutex_unlock(&ps->mu);
    return p;
}

static void part_done(struct pass *ps, struct part *p, int rc)
{
    pthread_mutex_lock(&ps->mu);
    p->rc = rc;
    ps->done++;
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

void pass_read(struct rt_store *store, struct pass *ps, int from_back)
{
    struct rt_store_rows *st = NULL;
    struct part *p;
    while ((p = take_part(ps, from_back))) {
        p->by_other = from_back;
        part_done(ps, p, read_part(store, &st, ps, p));
    }
    rt_store_rows_close(st);
}

void pass_ready(struct pass *ps)
{
    pthread_mutex_lock(&ps->mu);
    if (!ps->ready) {
        ps->ready = 1;
        ps->back = ps->n;
    }
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

/* Stretch p's sums into the pass's, in order: each series' values moved down behind the previous
 * stretches' (a stretch keeps fewer values than rows where a value is NULL). */
static void merge_part(struct pass_sums *s, const struct part *p)
{
    for (int side = 0; side < 2; side++) {
        for (int m = 0; m < RT_M_N; m++) {
            const struct part_series *t = &p->s[side][m];
            struct series *d = &s->s[side][m];
            if (t->n == 0)
                continue;
            if (d->n != p->row0)
                memmove(d->v + d->n, d->v + p->row0, t->n * sizeof(float));
            if (d->n == 0 || t->max > d->max)
                d->max = t->max;
            d->sum += t->sum;
            d->n += t->n;
        }
        for (int t = 0; t < RT_T_N; t++) {
            s->totals[side][t] += p->totals[side][t];
            s->has_tot[side][t] |= p->has_tot[side][t];
        }
    }
    s->has_tree |= p->has_tree;
    if (p->peak_sample && (!s->peak_sample || p->peak_mib > s->peak_mib)) {
        s->peak_sample = p->peak_sample;
        s->peak_run = p->peak_run;
        s->peak_ts = p->peak_ts;
        s->peak_mib = p->peak_mib;
    }
    s->dem_run += p->dem_run;
    s->dem_wait += p->dem_wait;
    s->tree_cpu_s += p->tree_cpu_s;
    s->has_tree_cpu |= p->has_tree_cpu;
    for (int j = 0; j < 4; j++)
        for (int b = 0; b < RT_SPARK_N; b++)
            if (p->spark_has[j][b] && (!s->spark_has[j][b] || p->spark[j][b] > s->spark[j][b])) {
                s->spark[j][b] = p->spark[j][b];
                s->spark_has[j][b] = 1;
            }
}

int pass_finish(struct sctx *c, struct pass *ps, struct pass_sums *sums)
{
    pthread_mutex_lock(&ps->mu);
    while (ps->done < ps->n)
        pthread_cond_wait(&ps->cv, &ps->mu);
    pthread_mutex_unlock(&ps->mu);
    struct py_run run;
    memset(&run, 0, sizeof(run));
    struct rt_store_rows *st = NULL;
    for (size_t i = 0; i < ps->n; i++) {
        struct part *p = &ps->p[i];
        if (p->rc != 0 && p->by_other) {
            /* the other connection failed (busy, out of memory): read it again on this one */
            memset(p->s, 0, sizeof(*p) - offsetof(struct part, s));
            p->rc = read_part(c->store, &st, ps, p);
        }
        if (p->rc != 0) {
            rt_store_rows_close(st);
            return summary_db_fail(c);
        }
        if (p->run_first) {
            py_run_close(sums, &run);
            run.interval = p->nominal;
        }
        merge_part(sums, p);
        py_run_merge(&run, &p->py);
    }
    rt_store_rows_close(st);
    py_run_close(sums, &run);
    if (ps->rows == 0) {
        if (c->o->job)
            snprintf(c->err, c->errlen, "no run of job '%s' has two samples yet", c->o->job);
        else
            snprintf(c->err, c->errlen,
                     "run %lld has fewer than two samples: nothing to summarize yet",
                     (long long)c->o->run_id);
        return summary_bad_request(c);
    }
    for (int k = 0; k < RT_PY_N; k++)
        sums->py.mean[k] /= sums->py_runs;
    sums->py.duration /= sums->py_runs;
    return 0;
}
