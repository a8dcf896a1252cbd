/* summary.c - what a run used and what to ask for next time (summary.h has the JSON schema).
 *
 * One pass over the run's samples (the view sample_metrics: python_combined's columns, so the
 * figures are the exported ones, unrounded, and the per-second rates, both defined there once)
 * collects each metric's values; mean and max come from the pass, p50/p95 from a selection
 * (nearest rank: the value at position ceil(p * n) of the sorted values), so a million samples
 * need no sort. A long run's pass is read in stretches shared by two threads and summed stretch
 * by stretch in order (struct pass, below). The Python reference's stats() and
 * recommend_resources() are computed the way it computes them, with its bugs fixed (memory
 * MiB divided by 1024, an allocation that is never "dedicated", a 512 GiB memory threshold). */
#include "rtrack/summary/summary.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/keeper.h"
#include "jout.h"

enum { M_CPU, M_MEM, M_DREAD, M_DWRITE, M_NRECV, M_NSENT, M_GPU, M_VRAM, M_GPUS, M_N };

static const char *const metric_names[M_N] = {
    "cpu_cores",
    "memory_mib",
    "disk_read_bytes_per_s",
    "disk_write_bytes_per_s",
    "net_recv_bytes_per_s",
    "net_sent_bytes_per_s",
    "gpu_usage",
    "gpu_vram_mib",
    "gpus_used",
};

/* Values are kept as floats (7 significant digits, half the memory of doubles: 4 MB per
 * metric for a million samples) for the percentile selection; sum and max stay exact. */
struct series {
    float *v;
    size_t n, cap;
    double sum, max;
};

#define SPARK_N 40

struct stat4 {
    int ok;
    double mean, p50, p95, max;
};

/* One side (process or system) of the run. */
struct side {
    struct series s[M_N];
    struct stat4 st[M_N];
    double totals[4]; /* disk read, disk write, net recv, net sent: bytes over the run */
    int has_tot[4];
};

/* k-th smallest (0-based) of v[0..n), reordering v (Hoare's selection). */
static float select_k(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The value at rank ceil(p * n), back as the shortest decimal of its float (0.1, not
 * 0.10000000149). */
static double nearest_rank(struct series *s, double p)
{
    size_t r = (size_t)ceil(p * (double)s->n);
    if (r < 1)
        r = 1;
    char t[32];
    snprintf(t, sizeof(t), "%.7g", (double)select_k(s->v, s->n, r - 1));
    return strtod(t, NULL);
}

static void finish_side(struct side *sd)
{
    for (int m = 0; m < M_N; m++) {
        struct series *s = &sd->s[m];
        struct stat4 *t = &sd->st[m];
        if (s->n == 0)
            continue;
        t->ok = 1;
        t->mean = s->sum / (double)s->n;
        t->max = s->max;
        t->p50 = fmin(nearest_rank(s, 0.50), t->max);
        t->p95 = fmin(nearest_rank(s, 0.95), t->max);
    }
}

static void free_side(struct side *sd)
{
    for (int m = 0; m < M_N; m++)
        free(sd->s[m].v);
}

/* --- JSON output: numbers as Python's repr, strings through rt_buf_json_string ------------- */

void j_num(struct rt_buf *b, double x)
{
    if (isnan(x) || isinf(x)) {
        rt_buf_puts(b, "null");
        return;
    }
    char t[RT_PYFLOAT_MAX];
    if (x == floor(x) && fabs(x) < 9e15)
        snprintf(t, sizeof(t), "%.0f", x);
    else
        rt_py_repr(x, t);
    rt_buf_puts(b, t);
}

void j_key(struct rt_buf *b, int *first, const char *k)
{
    if (!*first)
        rt_buf_puts(b, ", ");
    *first = 0;
    rt_buf_json_string(b, k, strlen(k));
    rt_buf_puts(b, ": ");
}

void j_str(struct rt_buf *b, const char *s)
{
    if (s)
        rt_buf_json_string(b, s, strlen(s));
    else
        rt_buf_puts(b, "null");
}

/* A column of the current row as JSON: text quoted, numbers as they are, NULL as null. */
static void j_col(struct rt_buf *b, struct rt_store_rows *r, int i)
{
    switch (rt_store_rows_type(r, i)) {
    case RT_STORE_NULL:
        rt_buf_puts(b, "null");
        break;
    case RT_STORE_INTEGER: {
        char t[24];
        snprintf(t, sizeof(t), "%lld", (long long)rt_store_rows_i(r, i));
        rt_buf_puts(b, t);
        break;
    }
    case RT_STORE_REAL:
        j_num(b, rt_store_rows_f(r, i));
        break;
    default:
        j_str(b, rt_store_rows_t(r, i));
    }
}

/* --- the Python reference's rules ---------------------------------------------------------- */

static double round2(double x)
{
    return rt_py_round(x, 2);
}

/* Python's round(x): ties to even. */
static double round_even(double x)
{
    return rt_py_round(x, 0);
}

long rt_round_memory(double mib)
{
    static const long steps[] = {128, 256, 512, 1024, 2048};
    for (size_t i = 0; i < RT_ARRAY_LEN(steps); i++)
        if (mib <= steps[i])
            return steps[i];
    return (long)ceil(mib / 1024.0) * 1024;
}

/* --- the summary ----------------------------------------------------------------------------- */

/* The Python reference's stats() of one run (aggregate_stats() then combines the runs of a job:
 * mean of means, max of maxes): process CPU, memory, GPU usage, VRAM and GPUs used (NULL counts
 * as the 0 Python prints without a GPU), the disk space peak, the network sums, the time span. */
#define PY_N 5
struct py_run {
    double sum[PY_N], max[PY_N], space_max, recv, sent;
    double t0, t1;   /* first and last sample */
    double interval; /* the run's nominal interval: stats() adds one to max - min */
    size_t n;
};

struct ctx {
    struct rt_store *store;
    const struct rt_summary_opts *o;
    char ids[64]; /* the subquery naming the runs */
    int nruns;
    int run_unchecked; /* o->run_id is not known to exist (pick_one_run) */
    int64_t last_run;
    int has_tree;
    struct side proc, sys;
    /* python stats over the runs, aggregated like aggregate_stats */
    double py_mean[PY_N], py_max[PY_N], py_space_max, py_recv, py_sent, py_duration;
    int py_runs;
    double host_vcpus, host_mem_mib, host_gpus, host_vram_mib;
    /* what the kernel kept of the runs' jobs (run mode, reaped): the largest resident set one
     * of their processes reached, MiB, and their user and system CPU seconds; NAN without */
    double k_maxrss_mib, k_user_s, k_sys_s;
    /* CPU demand: over the samples with a wait figure, the tree's cores used and cores it
     * waited for (runnable, no CPU free) */
    double dem_run, dem_wait;
    size_t dem_n;
    /* the sample with the tree's highest sampled memory (the first, on a tie): its id, its run,
     * when and how much */
    int64_t peak_sample, peak_run;
    double peak_ts, peak_mib;
    /* the peak memory charge of the runs' own cgroups (runs.cgroup_memory_peak_bytes), MiB */
    double cg_peak_mib;
    /* what the (newest) run was allocated (alloc_facts), and the CPU time over the allocated
     * cores x wall of every run that has both (NAN: not every run has) */
    struct alloc {
        int known;
        double cpus, memory_mib, gpus;
        const char *cpus_from, *memory_from;
        char slurm_job_id[64];
        int has_job_id;
    } alloc;
    double alloc_cpu_s, alloc_core_s;
    /* how the (newest) run ended, for the recommendation's caveat */
    int64_t exit_code, exit_signal, oom_kills;
    double duration_s;
    /* sparklines: the maximum of each of SPARK_N stretches of the run, per series */
    size_t rows;
    double spark[4][SPARK_N];
    int spark_has[4][SPARK_N];
    /* the host's CPU pressure (PSI "some", % of each stretch's time), stretched as the sparklines
     */
    double psi[SPARK_N];
    int psi_has[SPARK_N];
    char *err;
    size_t errlen;
    int *bad;
};

/* A problem with what was asked for (exit code 2), with its message already in c->err. */
static int bad_request(struct ctx *c)
{
    *c->bad = 1;
    return -1;
}

static int db_fail(struct ctx *c)
{
    snprintf(c->err, c->errlen, "cannot read the database: %s", rt_store_error(c->store));
    return -1;
}

static struct rt_store_rows *prep(struct ctx *c, const char *sql)
{
    struct rt_store_rows *r = rt_store_rows_open(c->store, sql);
    if (!r)
        db_fail(c);
    return r;
}

/* Run a statement that returns no rows. */
static int run_sql(struct ctx *c, const char *sql)
{
    struct rt_store_rows *r = prep(c, sql);
    if (!r)
        return -1;
    int rc = rt_store_rows_next(r);
    rt_store_rows_close(r);
    return rc < 0 ? db_fail(c) : 0;
}

/* The runs to summarize, one or every run of a job (--job), go into a temporary table that
 * every query below reads (`run_id IN (SELECT id FROM temp.summary_runs)`). */
static int pick_runs(struct ctx *c)
{
    snprintf(c->ids, sizeof(c->ids), "SELECT id FROM temp.summary_runs");
    if (run_sql(c, "CREATE TEMP TABLE IF NOT EXISTS summary_runs (id INTEGER PRIMARY KEY)") != 0 ||
        run_sql(c, "DELETE FROM temp.summary_runs") != 0)
        return -1;
    struct rt_store_rows *r = prep(c, c->o->job ? "INSERT INTO temp.summary_runs SELECT id FROM "
                                                  "runs WHERE job_name = ?1"
                                                : "INSERT INTO temp.summary_runs SELECT id FROM "
                                                  "runs WHERE id = ?2");
    if (!r)
        return -1;
    if (c->o->job)
        rt_store_rows_bind_t(r, 1, c->o->job);
    else
        rt_store_rows_bind_i(r, 2, c->o->run_id);
    rt_store_rows_next(r);
    rt_store_rows_close(r);
    if (!(r = prep(c, "SELECT count(*), max(id) FROM temp.summary_runs")))
        return -1;
    if (rt_store_rows_next(r) == 1) {
        c->nruns = (int)rt_store_rows_i(r, 0);
        c->last_run = rt_store_rows_i(r, 1);
    }
    rt_store_rows_close(r);
    if (c->nruns == 0) {
        if (c->o->job)
            snprintf(c->err, c->errlen, "no runs of job '%s' in the database", c->o->job);
        else
            snprintf(c->err, c->errlen, "no run %lld in the database", (long long)c->o->run_id);
        return bad_request(c);
    }
    return 0;
}

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

enum { SIDE_PROC, SIDE_SYS };

/* What feeds each side's metrics, totals (disk read, disk write, net recv, net sent: bytes over
 * the run) and sparklines (CPU, memory, disk I/O, GPU); NONE where the side has no such value
 * (the tree's network). */
static const int metric_col[2][M_N] = {
    [SIDE_PROC] = {[M_CPU] = COL_P_CPU,
                   [M_MEM] = COL_P_MEM,
                   [M_DREAD] = COL_P_READ_S,
                   [M_DWRITE] = COL_P_WRITE_S,
                   [M_NRECV] = NONE,
                   [M_NSENT] = NONE,
                   [M_GPU] = COL_P_GPU,
                   [M_VRAM] = COL_P_VRAM,
                   [M_GPUS] = COL_P_GPUS},
    [SIDE_SYS] = {[M_CPU] = COL_S_CPU,
                  [M_MEM] = COL_S_MEM,
                  [M_DREAD] = COL_S_READ_S,
                  [M_DWRITE] = COL_S_WRITE_S,
                  [M_NRECV] = COL_S_RECV_S,
                  [M_NSENT] = COL_S_SENT_S,
                  [M_GPU] = COL_S_GPU,
                  [M_VRAM] = COL_S_VRAM,
                  [M_GPUS] = COL_S_GPUS},
};
static const int total_col[2][4] = {
    [SIDE_PROC] = {COL_P_READ, COL_P_WRITE, NONE, NONE},
    [SIDE_SYS] = {COL_S_READ, COL_S_WRITE, COL_S_RECV, COL_S_SENT},
};
static const int spark_col[2][4] = {
    [SIDE_PROC] = {COL_P_CPU, COL_P_MEM, COL_P_IO_S, COL_P_GPU},
    [SIDE_SYS] = {COL_S_CPU, COL_S_MEM, COL_S_IO_S, COL_S_GPU},
};
/* stats()' columns, in py_run's order */
static const int py_col[PY_N] = {COL_P_CPU, COL_P_MEM, COL_P_GPU, COL_P_VRAM, COL_P_GPUS};

/* Whether any of the picked runs' samples has GPU rows. Without, the GPU columns of
 * sample_metrics are NULL in every row (its gpu_totals and gpu_process_totals have no row to
 * join), and the pass neither selects nor joins them. gpu_samples is read first (CROSS JOIN), so
 * a database without GPUs answers at once rather than looking for each sample of the runs. */
static int runs_have_gpus(struct ctx *c)
{
    int gpus = 0;
    if (rt_store_runs_have_gpus(c->store, c->ids, &gpus) != 0)
        return db_fail(c);
    return gpus;
}

static int is_gpu_col(int col)
{
    return col == COL_P_GPU || col == COL_P_VRAM || col == COL_P_GPUS || col == COL_S_GPU ||
           col == COL_S_VRAM || col == COL_S_GPUS;
}

/* The pass over the samples is cut into stretches of a run's samples, PART_SEQS rows of
 * the (run_id, seq) index each, read by a statement each in that order. The main thread takes them
 * from the front; the top-process thread, once its own pass is done, takes them from the back on
 * its own connection (the two passes run on the two CPUs a summary of a long run has to share).
 * Each stretch adds up on its own; they are merged in order afterwards, so the result does not
 * depend on which thread read what. A run of fewer samples is one stretch, added up as one pass. */
#define PART_SEQS 16384

struct part_series {
    size_t n; /* values kept, at series[row0 .. row0 + n) */
    double sum, max;
};

struct part {
    int64_t run, lo, hi; /* its run and its seqs */
    size_t row0, nrows;  /* its first row in the pass, its rows (counted beforehand) */
    int run_first;       /* it starts with its run's first sample after the baseline */
    double nominal;      /* the run's requested interval */
    int rc, by_other;    /* read: 0 or -1; by the top-process thread */
    /* what it added up */
    struct part_series s[2][M_N];
    double totals[2][4];
    int has_tot[2][4];
    int has_tree;
    int64_t peak_sample, peak_run;
    double peak_ts, peak_mib;
    double dem_run, dem_wait;
    size_t dem_n;
    struct py_run py;
    double spark[4][SPARK_N];
    int spark_has[4][SPARK_N];
};

struct pass {
    struct part *p;
    size_t n, cap;
    size_t rows; /* every stretch's rows */
    int sel[COL_N], nsel;
    char *sql;             /* a stretch's statement */
    struct side *sides[2]; /* the series the values go into (allocated for `rows`) */
    /* the stretches not taken yet are p[front .. back); `ready` once they are planned */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t front, back, done;
    int ready;
};

/* The statement of a stretch of the pass: one run's samples after the baseline with seq in
 * ?2..?3, in order, the columns of sel[0..n), the GPU columns only where the runs have GPU rows
 * (the others are NULL, as the view gives). Without GPU rows it reads sample_metrics_base, the
 * same columns but the GPU ones: SQLite prepares it without sample_metrics's GPU joins, half of
 * the statement's preparation. The end-of-run line's figures (figures_only: the cores, the
 * memory peak) need no GPU column: it reads sample_metrics_base without asking whether the runs
 * have GPU rows (25 to 47 us of the line without GPUs, 250 with two, docs/performance.md). */
static int pass_sql(struct ctx *c, struct pass *ps)
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

/* The metrics that are rates over the sample's interval (the others are levels: memory, GPU
 * busy, VRAM) */
static int is_rate(int m)
{
    return m == M_CPU || m == M_DREAD || m == M_DWRITE || m == M_NRECV || m == M_NSENT;
}

static void py_run_add(struct py_run *r, const double *v)
{
    for (int k = 0; k < PY_N; k++) {
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

/* The run's stats() into the job's aggregate, and r emptied for the next run. */
static void py_run_close(struct ctx *c, struct py_run *r)
{
    if (r->n == 0)
        return;
    for (int k = 0; k < PY_N; k++) {
        c->py_mean[k] += r->sum[k] / (double)r->n;
        c->py_max[k] = c->py_runs && c->py_max[k] > r->max[k] ? c->py_max[k] : r->max[k];
    }
    c->py_space_max = fmax(c->py_space_max, r->space_max);
    c->py_recv = fmax(c->py_recv, r->recv);
    c->py_sent = fmax(c->py_sent, r->sent);
    c->py_duration += r->t1 - r->t0 + r->interval;
    c->py_runs++;
    memset(r, 0, sizeof(*r));
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
    if (!isnan(v[COL_P_MEM]) && (!p->peak_sample || v[COL_P_MEM] > p->peak_mib)) {
        p->peak_sample = (int64_t)v[COL_SAMPLE];
        p->peak_run = (int64_t)v[COL_RUN];
        p->peak_ts = v[COL_TS];
        p->peak_mib = v[COL_P_MEM];
    }
    if (!isnan(v[COL_P_WAIT]) && !isnan(v[COL_P_CPU])) {
        p->dem_run += v[COL_P_CPU];
        p->dem_wait += v[COL_P_WAIT];
        p->dem_n++;
    }
    for (int side = 0; side < 2; side++) {
        for (int m = 0; m < M_N; m++) {
            double x = metric_col[side][m] == NONE ? RT_NAN : v[metric_col[side][m]];
            if (isnan(x) || (short_dt && is_rate(m)))
                continue;
            struct part_series *t = &p->s[side][m];
            if (t->n == 0 || x > t->max)
                t->max = x;
            t->sum += x;
            ps->sides[side]->s[m].v[p->row0 + t->n++] = (float)x;
        }
        for (int t = 0; t < 4; t++)
            if (total_col[side][t] != NONE && !isnan(v[total_col[side][t]])) {
                p->totals[side][t] += v[total_col[side][t]];
                p->has_tot[side][t] = 1;
            }
    }
    /* the sparklines show the tree (the system for a system-only recording) */
    size_t rows = ps->rows, index = p->row0 + k;
    size_t nb = rows < SPARK_N ? rows : SPARK_N;
    size_t bucket = rows ? index * nb / rows : 0;
    if (bucket >= SPARK_N)
        bucket = SPARK_N - 1;
    for (int j = 0; j < 4; j++) {
        if (short_dt && (j == 0 || j == 2)) /* CPU and I/O: rates */
            continue;
        double x = v[spark_col[tree ? SIDE_PROC : SIDE_SYS][j]];
        if (!isnan(x) && (!p->spark_has[j][bucket] || x > p->spark[j][bucket])) {
            p->spark[j][bucket] = x;
            p->spark_has[j][bucket] = 1;
        }
    }
    py_run_add(&p->py, v);
}

/* The stretches of every picked run (PART_SEQS rows of the (run_id, seq) index each; the
 * baseline, seq 0, left out of their rows as run_sample_counts leaves it out) and each series
 * allocated for all rows. */
static int plan_pass(struct ctx *c, struct pass *ps)
{
    if (pass_sql(c, ps) != 0)
        return -1;
    /* per run: its first and last seq, whether it has a baseline, its requested interval, and
     * its rows counted up to one more than a stretch (a run of at most PART_SEQS rows is one
     * stretch, planned without the two statements below) */
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT r.id, (SELECT min(seq) FROM samples WHERE run_id = r.id), (SELECT max(seq) "
             "FROM samples WHERE run_id = r.id), EXISTS (SELECT 1 FROM samples WHERE run_id = "
             "r.id AND seq = 0 AND kind = 'baseline'), r.requested_interval_s, (SELECT count(*) "
             "FROM (SELECT 1 FROM samples WHERE run_id = r.id LIMIT %d)) FROM runs r WHERE r.id "
             "IN (%s) ORDER BY r.id",
             PART_SEQS + 1, c->ids);
    struct rt_store_rows *runs = prep(c, sql), *next = NULL, *count = NULL;
    int rc = runs ? 0 : -1, step = 0, seen = 0;
    while (rc == 0 && (step = rt_store_rows_next(runs)) == 1) {
        int64_t run = rt_store_rows_i(runs, 0), lo = rt_store_rows_i(runs, 1),
                hi = rt_store_rows_i(runs, 2), rows = rt_store_rows_i(runs, 5);
        int baseline = rt_store_rows_i(runs, 3) != 0, first = 1;
        seen++;
        if (lo == RT_NA)
            continue;                              /* a run without samples */
        double nominal = rt_store_rows_f(runs, 4); /* the run's requested interval */
        if (rows > PART_SEQS && !next) {
            /* a stretch ends PART_SEQS rows on in the index (seqs may have gaps, of any size):
             * the seq there, none for a run's last stretch, whose rows are counted */
            snprintf(sql, sizeof(sql),
                     "SELECT seq FROM samples WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq "
                     "LIMIT 1 OFFSET %d",
                     PART_SEQS - 1);
            next = prep(c, sql);
            count = prep(c, "SELECT count(*) FROM samples WHERE run_id = ?1 AND seq BETWEEN ?2 "
                            "AND ?3");
            if (!next || !count) {
                rc = -1;
                break;
            }
        }
        for (int64_t a = lo;;) {
            int got = 1;
            int64_t b = hi, n = rows;
            if (rows > PART_SEQS) {
                rt_store_rows_reset(next);
                rt_store_rows_bind_i(next, 1, run);
                rt_store_rows_bind_i(next, 2, a);
                got = rt_store_rows_next(next);
                b = got == 1 ? rt_store_rows_i(next, 0) : hi;
                n = PART_SEQS;
                if (got == 0) {
                    rt_store_rows_reset(count);
                    rt_store_rows_bind_i(count, 1, run);
                    rt_store_rows_bind_i(count, 2, a);
                    rt_store_rows_bind_i(count, 3, b);
                    got = rt_store_rows_next(count);
                    n = got == 1 ? rt_store_rows_i(count, 0) : 0;
                }
            }
            if (got != 1) {
                rc = -1;
                break;
            }
            n -= baseline && a <= 0 && b >= 0;
            if (n > 0) {
                struct part *p = RT_PUSH(ps->p, ps->n, ps->cap);
                memset(p, 0, sizeof(*p));
                p->run = run;
                p->lo = a;
                p->hi = b;
                p->row0 = ps->rows;
                p->nrows = (size_t)n;
                p->run_first = first;
                p->nominal = nominal;
                first = 0;
                ps->rows += (size_t)n;
            }
            if (b >= hi)
                break;
            a = b + 1;
        }
    }
    if (step < 0)
        rc = -1;
    rt_store_rows_close(runs);
    rt_store_rows_close(next);
    rt_store_rows_close(count);
    if (rc != 0)
        return db_fail(c);
    if (!seen && c->run_unchecked) {
        snprintf(c->err, c->errlen, "no run %lld in the database", (long long)c->o->run_id);
        return bad_request(c);
    }
    c->rows = ps->rows;
    ps->sides[SIDE_PROC] = &c->proc;
    ps->sides[SIDE_SYS] = &c->sys;
    for (int side = 0; side < 2; side++)
        for (int m = 0; m < M_N; m++)
            if (metric_col[side][m] != NONE && ps->rows) {
                /* never touched where a column has no values: no memory spent on it */
                struct series *s = &ps->sides[side]->s[m];
                s->v = xmalloc(ps->rows * sizeof(float));
                s->cap = ps->rows;
            }
    return 0;
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
    int rc;
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

/* Read stretches until none is left: the main thread's share of the pass, or the top-process
 * thread's after its own pass. */
static void read_parts(struct rt_store *store, struct pass *ps, int from_back)
{
    struct rt_store_rows *st = NULL;
    struct part *p;
    while ((p = take_part(ps, from_back))) {
        p->by_other = from_back;
        part_done(ps, p, read_part(store, &st, ps, p));
    }
    rt_store_rows_close(st);
}

/* The pass's stretches released (planned, or none when planning failed): the top-process thread
 * waits for this before it takes any. */
static void pass_ready(struct pass *ps)
{
    pthread_mutex_lock(&ps->mu);
    if (!ps->ready) {
        ps->ready = 1;
        ps->back = ps->n;
    }
    pthread_cond_broadcast(&ps->cv);
    pthread_mutex_unlock(&ps->mu);
}

static void pass_init(struct pass *ps)
{
    memset(ps, 0, sizeof(*ps));
    pthread_mutex_init(&ps->mu, NULL);
    pthread_cond_init(&ps->cv, NULL);
}

static void pass_free(struct pass *ps)
{
    pthread_mutex_destroy(&ps->mu);
    pthread_cond_destroy(&ps->cv);
    free(ps->p);
    free(ps->sql);
}

/* Stretch p's sums into the pass's, in order: each series' values moved down behind the previous
 * stretches' (a stretch keeps fewer values than rows where a value is NULL). */
static void merge_part(struct ctx *c, struct pass *ps, const struct part *p)
{
    for (int side = 0; side < 2; side++) {
        struct side *sd = ps->sides[side];
        for (int m = 0; m < M_N; m++) {
            const struct part_series *t = &p->s[side][m];
            struct series *s = &sd->s[m];
            if (t->n == 0)
                continue;
            if (s->n != p->row0)
                memmove(s->v + s->n, s->v + p->row0, t->n * sizeof(float));
            if (s->n == 0 || t->max > s->max)
                s->max = t->max;
            s->sum += t->sum;
            s->n += t->n;
        }
        for (int t = 0; t < 4; t++) {
            sd->totals[t] += p->totals[side][t];
            sd->has_tot[t] |= p->has_tot[side][t];
        }
    }
    c->has_tree |= p->has_tree;
    if (p->peak_sample && (!c->peak_sample || p->peak_mib > c->peak_mib)) {
        c->peak_sample = p->peak_sample;
        c->peak_run = p->peak_run;
        c->peak_ts = p->peak_ts;
        c->peak_mib = p->peak_mib;
    }
    c->dem_run += p->dem_run;
    c->dem_wait += p->dem_wait;
    c->dem_n += p->dem_n;
    for (int j = 0; j < 4; j++)
        for (int b = 0; b < SPARK_N; b++)
            if (p->spark_has[j][b] && (!c->spark_has[j][b] || p->spark[j][b] > c->spark[j][b])) {
                c->spark[j][b] = p->spark[j][b];
                c->spark_has[j][b] = 1;
            }
}

/* A stretch's stats() sums into its run's. */
static void py_run_merge(struct py_run *r, const struct py_run *p)
{
    if (p->n == 0)
        return;
    for (int k = 0; k < PY_N; k++) {
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

/* One pass over the samples after the baseline of every picked run (planned by plan_pass, the
 * stretches shared with the top-process thread): each metric's values, totals and sparklines,
 * and stats() per run. */
static int collect(struct ctx *c, struct pass *ps)
{
    int rc = plan_pass(c, ps);
    pass_ready(ps);
    if (rc != 0)
        return -1;
    read_parts(c->store, ps, 0);
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
            return db_fail(c);
        }
        if (p->run_first) {
            py_run_close(c, &run);
            run.interval = p->nominal;
        }
        merge_part(c, ps, p);
        py_run_merge(&run, &p->py);
    }
    rt_store_rows_close(st);
    py_run_close(c, &run);
    if (ps->rows == 0) {
        if (c->o->job)
            snprintf(c->err, c->errlen, "no run of job '%s' has two samples yet", c->o->job);
        else
            snprintf(c->err, c->errlen,
                     "run %lld has fewer than two samples: nothing to summarize yet",
                     (long long)c->o->run_id);
        return bad_request(c);
    }
    for (int k = 0; k < PY_N; k++)
        c->py_mean[k] /= c->py_runs;
    c->py_duration /= c->py_runs;
    finish_side(&c->proc);
    finish_side(&c->sys);
    return 0;
}

static void emit_metrics(struct rt_buf *b, const struct side *sd, int system)
{
    rt_buf_puts(b, "{");
    int first = 1;
    for (int m = 0; m < M_N; m++) {
        if (!system && (m == M_NRECV || m == M_NSENT))
            continue;
        j_key(b, &first, metric_names[m]);
        const struct stat4 *t = &sd->st[m];
        if (!t->ok) {
            rt_buf_puts(b, "null");
            continue;
        }
        rt_buf_puts(b, "{");
        int f2 = 1;
        j_key(b, &f2, "mean");
        j_num(b, t->mean);
        j_key(b, &f2, "p50");
        j_num(b, t->p50);
        j_key(b, &f2, "p95");
        j_num(b, t->p95);
        j_key(b, &f2, "max");
        j_num(b, t->max);
        rt_buf_puts(b, "}");
    }
    static const char *const tot[4] = {"disk_read_bytes", "disk_write_bytes", "net_recv_bytes",
                                       "net_sent_bytes"};
    for (int t = 0; t < (system ? 4 : 2); t++) {
        j_key(b, &first, tot[t]);
        j_num(b, sd->has_tot[t] ? sd->totals[t] : RT_NAN);
    }
    rt_buf_puts(b, "}");
}

/* What "run" and "host" say, each key beside the SQL that reads it from `runs r` (and the
 * run's GPUs `g`, its sample count `n`). JSON: text stored as JSON in the database (the
 * command, the tags), copied as it is (NULL as the default given). */
enum fact_kind { F_VALUE, F_BOOL, F_JSON };
struct fact {
    const char *key, *sql;
    enum fact_kind kind;
    const char *if_null; /* F_JSON */
};

static const struct fact run_facts[] = {
    {"id", "r.id", F_VALUE, NULL},
    {"uuid", "r.uuid", F_VALUE, NULL},
    {"mode", "r.mode", F_VALUE, NULL},
    {"status", "(SELECT status FROM run_status WHERE run_id = r.id)", F_VALUE, NULL},
    {"in_progress", "(SELECT status FROM run_status WHERE run_id = r.id) = 'running'", F_BOOL,
     NULL},
    {"command", "r.command", F_JSON, "null"},
    {"job_name", "r.job_name", F_VALUE, NULL},
    {"project_name", "r.project_name", F_VALUE, NULL},
    {"stage_name", "r.stage_name", F_VALUE, NULL},
    {"task_name", "r.task_name", F_VALUE, NULL},
    {"team", "r.team", F_VALUE, NULL},
    {"env", "r.env", F_VALUE, NULL},
    {"language", "r.language", F_VALUE, NULL},
    {"orchestrator", "r.orchestrator", F_VALUE, NULL},
    {"executor", "r.executor", F_VALUE, NULL},
    {"external_run_id", "r.external_run_id", F_VALUE, NULL},
    {"container_image", "r.container_image", F_VALUE, NULL},
    {"tags",
     "(SELECT json_group_object(key, value) FROM (SELECT key, value FROM run_tags WHERE "
     "run_id = r.id ORDER BY position))",
     F_JSON, "{}"},
    {"pid", "r.pid", F_VALUE, NULL},
    {"exit_code", "r.exit_code", F_VALUE, NULL},
    {"exit_signal", "r.exit_signal", F_VALUE, NULL},
    {"end_reason", "r.end_reason", F_VALUE, NULL},
    {"started_at", "r.started_at", F_VALUE, NULL},
    {"ended_at", "r.ended_at", F_VALUE, NULL},
    {"duration_s",
     "coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) - r.started_at",
     F_VALUE, NULL},
    {"samples", "n.samples", F_VALUE, NULL},
    {"interval_s", "r.requested_interval_s", F_VALUE, NULL},
};

/* the host's size, which efficiency compares the use with */
enum {
    H_HOSTNAME,
    H_CPU_MODEL,
    H_VCPUS,
    H_MEMORY_MIB,
    H_KERNEL,
    H_OS,
    H_GPU_MODEL,
    H_GPUS,
    H_VRAM
};
static const struct fact host_facts[] = {
    [H_HOSTNAME] = {"hostname", "r.host_hostname", F_VALUE, NULL},
    [H_CPU_MODEL] = {"cpu_model", "r.host_cpu_model", F_VALUE, NULL},
    [H_VCPUS] = {"vcpus", "r.host_vcpus", F_VALUE, NULL},
    [H_MEMORY_MIB] = {"memory_mib", "r.host_memory_kib / 1024.0", F_VALUE, NULL},
    [H_KERNEL] = {"kernel", "r.host_kernel", F_VALUE, NULL},
    [H_OS] = {"os", "r.host_os", F_VALUE, NULL},
    [H_GPU_MODEL] = {"gpu_model", "g.host_gpu_model", F_VALUE, NULL},
    [H_GPUS] = {"gpu_count", "g.host_gpu_count", F_VALUE, NULL},
    [H_VRAM] = {"gpu_memory_mib", "g.host_gpu_memory_mib", F_VALUE, NULL},
};
#define RUN_N  ((int)RT_ARRAY_LEN(run_facts))
#define HOST_N ((int)RT_ARRAY_LEN(host_facts))

/* The facts' columns of the current row (from `from`) as the keys of a JSON object. */
static void emit_facts(struct rt_buf *b, struct rt_store_rows *r, const struct fact *f, int n,
                       int from, int *first)
{
    for (int i = 0; i < n; i++) {
        j_key(b, first, f[i].key);
        if (f[i].kind == F_BOOL) {
            rt_buf_puts(b, rt_store_rows_i(r, from + i) == 1 ? "true" : "false");
        } else if (f[i].kind == F_JSON) {
            const char *text = rt_store_rows_t(r, from + i);
            rt_buf_puts(b, text ? text : f[i].if_null);
        } else {
            j_col(b, r, from + i);
        }
    }
}

static int emit_run(struct ctx *c, struct rt_buf *b)
{
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT ");
    for (int i = 0; i < RUN_N + HOST_N; i++) {
        rt_buf_puts(&sql, i ? ", " : "");
        rt_buf_puts(&sql, i < RUN_N ? run_facts[i].sql : host_facts[i - RUN_N].sql);
    }
    rt_buf_puts(&sql, " FROM runs r JOIN run_sample_counts n ON n.run_id = r.id "
                      "LEFT JOIN host_gpus g ON g.run_id = r.id WHERE r.id = ?1");
    struct rt_store_rows *r = prep(c, sql.p);
    rt_buf_free(&sql);
    if (!r)
        return -1;
    /* --job: the newest run's facts stand for the job */
    rt_store_rows_bind_i(r, 1, c->last_run);
    if (rt_store_rows_next(r) != 1) {
        rt_store_rows_close(r);
        snprintf(c->err, c->errlen, "cannot read the run from the database");
        return -1;
    }
    rt_buf_puts(b, "\"run\": {");
    int first = 1;
    emit_facts(b, r, run_facts, RUN_N, 0, &first);
    j_key(b, &first, "runs");
    j_num(b, c->nruns);
    rt_buf_puts(b, "}, \"host\": {");
    first = 1;
    emit_facts(b, r, host_facts, HOST_N, RUN_N, &first);
    rt_buf_puts(b, "}");
    c->host_vcpus = rt_store_rows_f(r, RUN_N + H_VCPUS);
    c->host_mem_mib = rt_store_rows_f(r, RUN_N + H_MEMORY_MIB);
    c->host_gpus = rt_store_rows_f(r, RUN_N + H_GPUS);
    c->host_vram_mib = rt_store_rows_f(r, RUN_N + H_VRAM);
    rt_store_rows_close(r);
    return 0;
}

static void emit_python_stats(struct ctx *c, struct rt_buf *b)
{
    static const char *const cols[PY_N] = {"process_cpu_usage", "process_memory_mib",
                                           "process_gpu_usage", "process_gpu_vram_mib",
                                           "process_gpu_utilized"};
    rt_buf_puts(b, "{");
    int first = 1;
    for (int k = 0; k < PY_N; k++) {
        j_key(b, &first, cols[k]);
        rt_buf_puts(b, "{\"mean\": ");
        j_num(b, round2(c->py_mean[k]));
        rt_buf_puts(b, ", \"max\": ");
        j_num(b, round2(c->py_max[k]));
        rt_buf_puts(b, "}");
    }
    j_key(b, &first, "system_disk_space_used_gb");
    rt_buf_puts(b, "{\"max\": ");
    j_num(b, round2(c->py_space_max));
    rt_buf_puts(b, "}");
    j_key(b, &first, "system_net_recv_bytes");
    rt_buf_puts(b, "{\"sum\": ");
    j_num(b, c->py_recv);
    rt_buf_puts(b, "}");
    j_key(b, &first, "system_net_sent_bytes");
    rt_buf_puts(b, "{\"sum\": ");
    j_num(b, c->py_sent);
    rt_buf_puts(b, "}");
    j_key(b, &first, "timestamp");
    rt_buf_puts(b, "{\"duration\": ");
    j_num(b, rt_py_round(c->py_duration, 3));
    rt_buf_puts(b, "}}");
}

struct reco {
    long cpu, cpu_p95, memory, gpu, vram;
    double cpu_cores;     /* mean cores the CPU figure is built on */
    const char *cpu_from; /* "usage", or "demand" (usage + waiting for a CPU) */
    double mem_peak;      /* MiB the memory figure is built on */
    const char *mem_from; /* "cgroup", "kernel" (the high-water marks) or "sampled" */
};

/* The runs' allocation columns (migration 0007), in this order. */
enum {
    A_ID,
    A_QUOTA,
    A_CPUSET,
    A_VCPUS,
    A_SLURM_CPUS,
    A_CG_MEM,
    A_HOST_MEM,
    A_SLURM_MEM_NODE,
    A_SLURM_MEM_CPU,
    A_GPUS,
    A_JOB_ID,
    A_CPU_S,
    A_WALL,
    A_CG_PEAK,
    A_N
};

/* The smaller of a candidate and what is decided so far; on a tie the earlier candidate (the
 * one asked for: Slurm's) stays. */
static void tighter(double *best, const char **from, double v, const char *name)
{
    if (!isnan(v) && v > 0 && (isnan(*best) || v < *best)) {
        *best = v;
        *from = name;
    }
}

/* One run's allocation, as seff reads it: the CPUs the job may use (Slurm's CPUs on the node,
 * the cgroup's CPU quota, its cpuset where it is smaller than the host: the tightest), the memory
 * (Slurm's per node, or per CPU x its CPUs; the cgroup's limit where it is below the host's
 * memory: the tightest), the GPUs CUDA_VISIBLE_DEVICES names. */
static void alloc_decide(struct rt_store_rows *r, struct alloc *a)
{
    memset(a, 0, sizeof(*a));
    a->cpus = a->memory_mib = a->gpus = RT_NAN;
    double v[A_N];
    for (int i = 0; i < A_N; i++)
        v[i] = rt_store_rows_f(r, i);
    tighter(&a->cpus, &a->cpus_from, v[A_SLURM_CPUS], "slurm");
    tighter(&a->cpus, &a->cpus_from, v[A_QUOTA], "cgroup");
    if (isnan(v[A_VCPUS]) || v[A_CPUSET] < v[A_VCPUS])
        tighter(&a->cpus, &a->cpus_from, v[A_CPUSET], "cpuset");
    double slurm_mem =
        !isnan(v[A_SLURM_MEM_NODE]) ? v[A_SLURM_MEM_NODE] : v[A_SLURM_MEM_CPU] * v[A_SLURM_CPUS];
    tighter(&a->memory_mib, &a->memory_from, slurm_mem, "slurm");
    double cg_mem = v[A_CG_MEM] / 1048576.0;
    if (isnan(v[A_HOST_MEM]) || cg_mem < v[A_HOST_MEM] / 1024.0)
        tighter(&a->memory_mib, &a->memory_from, cg_mem, "cgroup");
    a->gpus = v[A_GPUS];
    const char *id = rt_store_rows_t(r, A_JOB_ID);
    if (id) {
        snprintf(a->slurm_job_id, sizeof(a->slurm_job_id), "%s", id);
        a->has_job_id = 1;
    }
    a->known = !isnan(a->cpus) || !isnan(a->memory_mib) || !isnan(a->gpus) || a->has_job_id;
}

/* The runs' allocations (the newest run's stands for a job) and the cgroup peaks. */
static int alloc_facts(struct ctx *c)
{
    char sql[768];
    snprintf(sql, sizeof(sql),
             "SELECT id, cgroup_cpu_quota_cores, cgroup_cpuset_cpus, host_vcpus, "
             "slurm_cpus_on_node, cgroup_memory_limit_bytes, host_memory_kib, "
             "slurm_mem_per_node_mib, slurm_mem_per_cpu_mib, alloc_gpus, slurm_job_id, "
             "job_utime_s + job_stime_s, ended_at - started_at, cgroup_memory_peak_bytes "
             "FROM runs WHERE id IN (%s) ORDER BY id",
             c->ids);
    struct rt_store_rows *r = prep(c, sql);
    if (!r)
        return -1;
    c->cg_peak_mib = RT_NAN;
    c->alloc_cpu_s = c->alloc_core_s = 0;
    int all_kernel = 1, any = 0;
    while (rt_store_rows_next(r) == 1) {
        struct alloc a;
        alloc_decide(r, &a);
        double peak = rt_store_rows_f(r, A_CG_PEAK) / 1048576.0;
        if (!isnan(peak) && (isnan(c->cg_peak_mib) || peak > c->cg_peak_mib))
            c->cg_peak_mib = peak;
        if (!isnan(a.cpus)) {
            double cpu_s = rt_store_rows_f(r, A_CPU_S), wall = rt_store_rows_f(r, A_WALL);
            any = 1;
            if (isnan(cpu_s) || isnan(wall) || wall <= 0)
                all_kernel = 0;
            else {
                c->alloc_cpu_s += cpu_s;
                c->alloc_core_s += a.cpus * wall;
            }
        }
        c->alloc = a; /* ordered by id: the newest last */
    }
    rt_store_rows_close(r);
    if (!any || !all_kernel)
        c->alloc_core_s = RT_NAN;
    return 0;
}

/* The kernel's figures for the runs (runs.job_*: migration 0007). */
static int kernel_facts(struct ctx *c)
{
    c->k_maxrss_mib = c->k_user_s = c->k_sys_s = RT_NAN;
    char sql[256];
    snprintf(sql, sizeof(sql),
             "SELECT max(job_maxrss_kib) / 1024.0, sum(job_utime_s), sum(job_stime_s) "
             "FROM runs WHERE id IN (%s) AND job_maxrss_kib IS NOT NULL",
             c->ids);
    struct rt_store_rows *r = prep(c, sql);
    if (!r)
        return -1;
    if (rt_store_rows_next(r) == 1) {
        c->k_maxrss_mib = rt_store_rows_f(r, 0);
        c->k_user_s = rt_store_rows_f(r, 1);
        c->k_sys_s = rt_store_rows_f(r, 2);
    }
    rt_store_rows_close(r);
    r = prep(c, "SELECT exit_code, exit_signal, ended_at - started_at, host_oom_kills FROM runs "
                "WHERE id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, c->last_run);
    c->exit_code = c->exit_signal = c->oom_kills = RT_NA;
    c->duration_s = RT_NAN;
    if (rt_store_rows_next(r) == 1) {
        if (rt_store_rows_type(r, 0) != RT_STORE_NULL)
            c->exit_code = rt_store_rows_i(r, 0);
        if (rt_store_rows_type(r, 1) != RT_STORE_NULL)
            c->exit_signal = rt_store_rows_i(r, 1);
        if (rt_store_rows_type(r, 2) != RT_STORE_NULL)
            c->duration_s = rt_store_rows_f(r, 2);
        if (rt_store_rows_type(r, 3) != RT_STORE_NULL)
            c->oom_kills = rt_store_rows_i(r, 3);
    }
    rt_store_rows_close(r);
    return 0;
}

/* The caveat a run that did not end well puts on its recommendation: killed by the OOM killer
 * (SIGKILL while the host's OOM kill count grew), by another signal, or failed. 0: none. */
static int caveat(const struct ctx *c, long memory, const char **kind, char *text, size_t cap)
{
    char after[48] = "", d[32], sig[32];
    if (!isnan(c->duration_s))
        snprintf(after, sizeof(after), " after %s", rt_fmt_duration(d, sizeof(d), c->duration_s));
    if (c->exit_signal == 9 && c->oom_kills != RT_NA && c->oom_kills > 0) {
        *kind = "oom";
        snprintf(text, cap,
                 "based on a run killed by the OOM killer%s: memory is a lower bound; ask for "
                 "more than %ld MiB",
                 after, memory);
    } else if (c->exit_signal != RT_NA) {
        *kind = "signal";
        snprintf(text, cap,
                 "based on a run killed by %s%s: its figures cover only the part of the job that "
                 "ran",
                 rt_signal_name((int)c->exit_signal, sig, sizeof(sig)), after);
    } else if (c->exit_code != RT_NA && c->exit_code != 0) {
        *kind = "failed";
        snprintf(text, cap,
                 "based on a run that failed (exit %lld)%s: it may not have done all its work",
                 (long long)c->exit_code, after);
    } else {
        return 0;
    }
    return 1;
}

/* recommend_resources(): from the process tree, or the system for a system-only recording.
 * kernel: memory is built on the larger of the sampled peak and the kernel's high-water mark
 * (rtrack's recommendation), or on the sampled peak alone (the Python reference's). */
static void recommend(struct ctx *c, struct reco *r, int kernel)
{
    const struct side *sd = c->has_tree ? &c->proc : &c->sys;
    double cpu_mean = c->has_tree ? c->py_mean[0] : sd->st[M_CPU].mean;
    double mem_max = c->has_tree ? c->py_max[1] : sd->st[M_MEM].max;
    r->cpu = (long)fmax(1, round_even(round2(cpu_mean)));
    r->cpu_cores = round2(cpu_mean);
    r->cpu_from = "usage";
    /* latency-sensitive: enough cores for 95 % of the intervals */
    r->cpu_p95 = sd->st[M_CPU].ok ? (long)fmax(1, ceil(round2(sd->st[M_CPU].p95))) : r->cpu;
    /* starved (it waited for a CPU a fifth of the time it wanted one, or more): usage is a
     * lower bound on what the job wants; its demand decides when it asks for more */
    double dem = c->dem_n ? (c->dem_run + c->dem_wait) / (double)c->dem_n : RT_NAN;
    if (kernel && c->has_tree && !isnan(dem) && c->dem_wait >= 0.2 * (c->dem_run + c->dem_wait) &&
        (long)fmax(1, round_even(round2(dem))) > r->cpu) {
        r->cpu = (long)fmax(1, round_even(round2(dem)));
        r->cpu_cores = round2(dem);
        r->cpu_from = "demand";
        r->cpu_p95 = r->cpu_p95 > r->cpu ? r->cpu_p95 : r->cpu;
    }
    r->mem_peak = round2(mem_max);
    r->mem_from = "sampled";
    if (kernel && c->has_tree && c->k_maxrss_mib > r->mem_peak) {
        r->mem_peak = round2(c->k_maxrss_mib);
        r->mem_from = "kernel";
    }
    /* (the job's own cgroup's peak is shown, not used: it counts the page cache the job
     * caused, which the kernel takes back before it would kill: an I/O-heavy job's peak is its
     * limit, and limit x 1.2 would be advice to ask for more than it needed) */
    r->memory = rt_round_memory(r->mem_peak * 1.2);
    double gpu_mean = c->has_tree ? c->py_mean[2] : (sd->st[M_GPU].ok ? sd->st[M_GPU].mean : 0);
    double gpu_max = c->has_tree ? c->py_max[2] : (sd->st[M_GPU].ok ? sd->st[M_GPU].max : 0);
    double vram_max = c->has_tree ? c->py_max[3] : (sd->st[M_VRAM].ok ? sd->st[M_VRAM].max : 0);
    r->gpu = gpu_mean > 0 ? (long)fmax(1, round_even(round2(gpu_max))) : 0;
    r->vram = vram_max > 0 ? rt_round_memory(round2(vram_max) * 1.2) : 0;
}

static void emit_reco(struct rt_buf *b, const struct reco *r, const struct ctx *c)
{
    char text[160], mf[160], cpus[48], gpus[48];
    int n = snprintf(text, sizeof(text), "%s, %ld MiB memory",
                     rt_fmt_count(cpus, sizeof(cpus), (double)r->cpu, "vCPU"), r->memory);
    if (r->gpu > 0)
        snprintf(text + n, sizeof(text) - (size_t)n, ", %s with %ld MiB VRAM",
                 rt_fmt_count(gpus, sizeof(gpus), (double)r->gpu, "GPU"), r->vram);
    n = snprintf(mf, sizeof(mf), "@resources(cpu=%ld, memory=%ld", r->cpu, r->memory);
    if (r->gpu > 0)
        n += snprintf(mf + n, sizeof(mf) - (size_t)n, ", gpu=%ld", r->gpu);
    snprintf(mf + n, sizeof(mf) - (size_t)n, ")");
    rt_buf_puts(b, "{\"cpu\": ");
    j_num(b, (double)r->cpu);
    rt_buf_puts(b, ", \"cpu_basis\": {\"mean_cores\": ");
    j_num(b, r->cpu_cores);
    rt_buf_puts(b, ", \"source\": ");
    j_str(b, r->cpu_from);
    rt_buf_puts(b, "}");
    rt_buf_puts(b, ", \"cpu_p95\": ");
    j_num(b, (double)r->cpu_p95);
    rt_buf_puts(b, ", \"memory_mib\": ");
    j_num(b, (double)r->memory);
    rt_buf_puts(b, ", \"gpu\": ");
    j_num(b, (double)r->gpu);
    rt_buf_puts(b, ", \"vram_mib\": ");
    j_num(b, (double)r->vram);
    rt_buf_puts(b, ", \"text\": ");
    j_str(b, text);
    rt_buf_puts(b, ", \"metaflow\": ");
    j_str(b, mf);
    /* what decided the memory figure, and the arithmetic */
    char how[160];
    snprintf(how, sizeof(how), "peak %.2f MiB (%s) x 1.2 -> %ld MiB", r->mem_peak, r->mem_from,
             r->memory);
    rt_buf_puts(b, ", \"memory_basis\": {\"peak_mib\": ");
    j_num(b, r->mem_peak);
    rt_buf_puts(b, ", \"source\": ");
    j_str(b, r->mem_from);
    rt_buf_puts(b, ", \"headroom\": 1.2, \"arithmetic\": ");
    j_str(b, how);
    rt_buf_puts(b, "}, \"caveat\": ");
    const char *kind;
    char why[256];
    if (caveat(c, r->memory, &kind, why, sizeof(why))) {
        rt_buf_puts(b, "{\"kind\": ");
        j_str(b, kind);
        rt_buf_puts(b, ", \"text\": ");
        j_str(b, why);
        rt_buf_puts(b, "}");
    } else {
        rt_buf_puts(b, "null");
    }
    rt_buf_puts(b, "}");
}

/* When the tree's sampled memory peaked (seconds after its run's start) and who held it then:
 * the processes of that sample by PSS, the first five and the rest together, so they add up
 * to the peak. null without a tree. */
static int emit_peak(struct ctx *c, struct rt_buf *b)
{
    if (!c->has_tree || !c->peak_sample) {
        rt_buf_puts(b, "null");
        return 0;
    }
    struct rt_store_rows *r = prep(c, "SELECT ?2 - started_at FROM runs WHERE id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, c->peak_run);
    rt_store_rows_bind_f(r, 2, c->peak_ts);
    double at = rt_store_rows_next(r) == 1 ? rt_store_rows_f(r, 0) : RT_NAN;
    rt_store_rows_close(r);
    rt_buf_puts(b, "{\"mib\": ");
    j_num(b, c->peak_mib);
    rt_buf_puts(b, ", \"at_s\": ");
    j_num(b, at);
    rt_buf_puts(b, ", \"processes\": [");
    r = prep(c, "SELECT p.pid, p.name, ps.pss_kib / 1024.0 FROM process_samples ps "
                "JOIN processes p ON p.id = ps.process_id WHERE ps.sample_id = ?1 AND "
                "ps.pss_kib IS NOT NULL ORDER BY ps.pss_kib DESC, p.pid");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, c->peak_sample);
    double rest = 0;
    int n = 0, rest_n = 0;
    while (rt_store_rows_next(r) == 1) {
        if (n == 5) {
            rest += rt_store_rows_f(r, 2);
            rest_n++;
            continue;
        }
        rt_buf_puts(b, n++ ? ", {\"pid\": " : "{\"pid\": ");
        j_num(b, rt_store_rows_f(r, 0));
        rt_buf_puts(b, ", \"name\": ");
        j_col(b, r, 1);
        rt_buf_puts(b, ", \"pss_mib\": ");
        j_num(b, rt_store_rows_f(r, 2));
        rt_buf_puts(b, "}");
    }
    rt_store_rows_close(r);
    rt_buf_puts(b, "], \"others\": {\"count\": ");
    j_num(b, rest_n);
    rt_buf_puts(b, ", \"pss_mib\": ");
    j_num(b, rest);
    rt_buf_puts(b, "}}");
    return 0;
}

/* The tree's CPU demand: cores used and cores it waited for, on the samples that have both
 * (null without schedstat, for a system-only recording and for older recordings). */
static void emit_demand(struct ctx *c, struct rt_buf *b)
{
    if (!c->has_tree || !c->dem_n) {
        rt_buf_puts(b, "null");
        return;
    }
    double n = (double)c->dem_n, all = c->dem_run + c->dem_wait;
    rt_buf_puts(b, "{\"usage_cores\": ");
    j_num(b, c->dem_run / n);
    rt_buf_puts(b, ", \"wait_cores\": ");
    j_num(b, c->dem_wait / n);
    rt_buf_puts(b, ", \"demand_cores\": ");
    j_num(b, all / n);
    rt_buf_puts(b, ", \"wait_pct\": ");
    j_num(b, all > 0 ? c->dem_wait / all * 100 : 0);
    rt_buf_puts(b, ", \"starved\": ");
    rt_buf_puts(b, all > 0 && c->dem_wait >= 0.2 * all ? "true" : "false");
    rt_buf_puts(b, "}");
}

/* The kernel's own figures for the jobs: the memory high-water mark and the CPU time of the
 * reaped processes (null for record mode and older recordings). */
static void emit_kernel(struct ctx *c, struct rt_buf *b)
{
    if (isnan(c->k_maxrss_mib)) {
        rt_buf_puts(b, "null");
        return;
    }
    rt_buf_puts(b, "{\"maxrss_mib\": ");
    j_num(b, c->k_maxrss_mib);
    rt_buf_puts(b, ", \"user_s\": ");
    j_num(b, c->k_user_s);
    rt_buf_puts(b, ", \"sys_s\": ");
    j_num(b, c->k_sys_s);
    rt_buf_puts(b, ", \"cgroup_peak_mib\": ");
    j_num(b, c->cg_peak_mib);
    rt_buf_puts(b, "}");
}

/* What the (newest) run was allocated, null when nothing is known. */
static void emit_allocated(struct ctx *c, struct rt_buf *b)
{
    const struct alloc *a = &c->alloc;
    if (!a->known) {
        rt_buf_puts(b, "null");
        return;
    }
    rt_buf_puts(b, "{\"cpus\": ");
    j_num(b, a->cpus);
    rt_buf_puts(b, ", \"cpus_from\": ");
    j_str(b, a->cpus_from);
    rt_buf_puts(b, ", \"memory_mib\": ");
    j_num(b, a->memory_mib);
    rt_buf_puts(b, ", \"memory_from\": ");
    j_str(b, a->memory_from);
    rt_buf_puts(b, ", \"gpus\": ");
    j_num(b, a->gpus);
    rt_buf_puts(b, ", \"slurm_job_id\": ");
    j_str(b, a->has_job_id ? a->slurm_job_id : NULL);
    rt_buf_puts(b, "}");
}

/* Used / available, as seff reports it: mean cores over vCPUs, peak memory over RAM, mean GPUs
 * over GPUs, peak VRAM over VRAM; and against the allocation: CPU time over the allocated
 * cores x wall time (the kernel's CPU time of the reaped jobs; the sampled mean cores where a
 * run has none), the peak memory the recommendation is built on over the allocated memory. */
static void emit_efficiency(struct ctx *c, struct rt_buf *b, const struct reco *reco)
{
    const struct side *sd = c->has_tree ? &c->proc : &c->sys;
    /* memory: the peak the recommendation is built on, the kernel's high-water mark where it is
     * above the samples (a peak between two samples), as memory_alloc_pct below */
    double mpeak = fmax(sd->st[M_MEM].ok ? sd->st[M_MEM].max : RT_NAN,
                        reco->mem_peak > 0 ? reco->mem_peak : RT_NAN);
    double v[4] = {
        sd->st[M_CPU].ok ? sd->st[M_CPU].mean / c->host_vcpus * 100 : RT_NAN,
        isnan(mpeak) ? RT_NAN : mpeak / c->host_mem_mib * 100,
        sd->st[M_GPU].ok && c->host_gpus > 0 ? sd->st[M_GPU].mean / c->host_gpus * 100 : RT_NAN,
        sd->st[M_VRAM].ok && c->host_vram_mib > 0 ? sd->st[M_VRAM].max / c->host_vram_mib * 100
                                                  : RT_NAN,
    };
    static const char *const k[4] = {"cpu_pct", "memory_pct", "gpu_pct", "vram_pct"};
    rt_buf_puts(b, "{");
    int first = 1;
    for (int i = 0; i < 4; i++) {
        j_key(b, &first, k[i]);
        j_num(b, isnan(v[i]) ? RT_NAN : rt_py_round(v[i], 2));
    }
    const struct alloc *a = &c->alloc;
    double cpu = RT_NAN;
    if (isnan(a->cpus))
        cpu = RT_NAN;
    else if (!isnan(c->alloc_core_s) && c->alloc_core_s > 0)
        cpu = c->alloc_cpu_s / c->alloc_core_s * 100;
    else if (!isnan(a->cpus) && sd->st[M_CPU].ok)
        cpu = sd->st[M_CPU].mean / a->cpus * 100;
    double mem = !isnan(a->memory_mib) ? reco->mem_peak / a->memory_mib * 100 : RT_NAN;
    j_key(b, &first, "cpu_alloc_pct");
    j_num(b, isnan(cpu) ? RT_NAN : rt_py_round(cpu, 2));
    j_key(b, &first, "memory_alloc_pct");
    j_num(b, isnan(mem) ? RT_NAN : rt_py_round(mem, 2));
    rt_buf_puts(b, "}");
}

/* The reference's server allocation heuristic with its bugs fixed: "shared" when the system
 * uses clearly more than the job (cores x1.25 or +0.25, memory x1.5 or +512 MiB, GPUs x1.25
 * or +0.2, VRAM x1.25 or +512 MiB, on means), else "dedicated". */
static const char *allocation(struct ctx *c)
{
    if (!c->has_tree)
        return "shared";
    static const struct {
        int m;
        double factor, plus;
    } checks[] = {{M_CPU, 1.25, 0.25}, {M_MEM, 1.5, 512}, {M_GPU, 1.25, 0.2}, {M_VRAM, 1.25, 512}};
    for (size_t i = 0; i < RT_ARRAY_LEN(checks); i++) {
        const struct stat4 *p = &c->proc.st[checks[i].m], *s = &c->sys.st[checks[i].m];
        if (!p->ok || !s->ok)
            continue;
        if (s->mean > p->mean * checks[i].factor || s->mean > p->mean + checks[i].plus)
            return "shared";
    }
    return "dedicated";
}

/* One sparkline: eight block heights from 0 to the series' maximum (*max); a blank where no
 * sample fell; null without values. */
static void spark_line(struct rt_buf *b, const double *v, const int *has, size_t nb, double *max)
{
    static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    int any = 0;
    *max = RT_NAN;
    for (size_t i = 0; i < nb; i++)
        if (has[i]) {
            *max = any ? fmax(*max, v[i]) : fmax(0, v[i]);
            any = 1;
        }
    if (!any) {
        rt_buf_puts(b, "null");
        return;
    }
    rt_buf_puts(b, "\"");
    for (size_t i = 0; i < nb; i++) {
        if (!has[i]) {
            rt_buf_puts(b, " ");
            continue;
        }
        int lvl = *max > 0 ? (int)(v[i] / *max * 7.0 + 0.5) : 0;
        rt_buf_puts(b, blocks[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl]);
    }
    rt_buf_puts(b, "\"");
}

/* "sparklines" and, after it, "sparkline_scale": each line's top (its bottom is 0) and whose
 * lines they are (the CPU pressure is always the host's). */
static void emit_sparklines(struct ctx *c, struct rt_buf *b)
{
    static const char *const names[5] = {"cpu_cores", "memory_mib", "disk_io_bytes_per_s",
                                         "gpu_usage", "cpu_pressure_pct"};
    size_t nb = c->rows < SPARK_N ? c->rows : SPARK_N;
    double max[5];
    rt_buf_puts(b, "{");
    for (int k = 0; k < 5; k++) {
        rt_buf_puts(b, k ? ", \"" : "\"");
        rt_buf_puts(b, names[k]);
        rt_buf_puts(b, "\": ");
        if (k < 4)
            spark_line(b, c->spark[k], c->spark_has[k], nb, &max[k]);
        else
            spark_line(b, c->psi, c->psi_has, nb, &max[k]);
    }
    rt_buf_puts(b, "}, \"sparkline_scale\": {\"source\": ");
    j_str(b, c->has_tree ? "tree" : "system");
    for (int k = 0; k < 5; k++) {
        rt_buf_puts(b, ", \"");
        rt_buf_puts(b, names[k]);
        rt_buf_puts(b, "\": ");
        j_num(b, max[k]);
    }
    rt_buf_puts(b, "}");
}

/* The host's CPU pressure per stretch of the run, the stretches add_sample() makes of the pass's
 * rows: the share of each stretch's time some task waited for a CPU, from the cumulative PSI
 * counter at the stretches' ends (row i of the pass is the sample of seq i + 1; seq 0 is the
 * baseline): a handful of lookups, not a second pass over a long run. One run only (--job's
 * runs: none). */
static int pressure(struct ctx *c)
{
    if (c->nruns != 1 || !c->rows)
        return 0;
    struct rt_store_rows *r =
        prep(c, "SELECT mono, psi_cpu_some_us FROM samples WHERE run_id = ?1 AND seq = ?2");
    if (!r)
        return -1;
    size_t nb = c->rows < SPARK_N ? c->rows : SPARK_N;
    double t0 = RT_NAN, u0 = RT_NAN;
    for (size_t k = 0; k <= nb; k++) {
        /* the first row of stretch k is ceil(k x rows / nb): the row before it has seq that */
        size_t first = (k * c->rows + nb - 1) / nb;
        rt_store_rows_reset(r);
        rt_store_rows_bind_i(r, 1, c->last_run);
        rt_store_rows_bind_i(r, 2, (int64_t)first);
        double t = RT_NAN, u = RT_NAN;
        if (rt_store_rows_next(r) == 1) {
            t = rt_store_rows_f(r, 0);
            u = rt_store_rows_f(r, 1);
        }
        if (k > 0 && !isnan(t0) && !isnan(u0) && !isnan(t) && !isnan(u) && t > t0) {
            /* microseconds per second, in %; at most 100 (the clocks' jitter aside) */
            c->psi[k - 1] = fmin(100, (u - u0) / 1e4 / (t - t0));
            c->psi_has[k - 1] = 1;
        }
        t0 = t;
        u0 = u;
    }
    rt_store_rows_close(r);
    return 0;
}

/* The tree's busiest processes: CPU time summed and peak PSS per process, from one pass over
 * the runs' process rows in primary-key order (a run's sample ids are one range), kept for the
 * runs' processes only; then the five largest of each. (A GROUP BY in SQL sorts every row:
 * 3 s and 180 MB for a million samples of a 3-process tree.) The pass runs on a thread with
 * its own read-only connection while the samples are read, so the two reads overlap. */
struct top_acc {
    int64_t id, pid;
    double cpu_s, pss_kib;
    int has_pss;
};

struct top {
    struct top_acc *acc;
    size_t n, cap;
    struct rt_map slot; /* processes.id -> index into acc */
    int64_t *runs;      /* the picked runs */
    size_t nruns, runs_cap;
    struct rt_store *scan; /* the thread's own connection */
    struct pass *pass;     /* the samples' pass, whose last stretches the thread reads too */
    int threaded, rc;
    pthread_t th;
};

static void *top_scan(void *arg)
{
    struct top *t = arg;
    t->rc = -1;
    /* the runs' sample ids, lo to hi: found here, on the thread's connection and in its one
     * snapshot, rather than before the thread starts (a look at each of a run's samples) */
    rt_store_read_begin(t->scan);
    int64_t lo = 0, hi = 0;
    struct rt_store_rows *r = NULL;
    if (t->n == 0) { /* no tree: no process rows, only the samples' stretches */
        t->rc = 0;
        goto out;
    }
    r = rt_store_rows_open(t->scan, "SELECT min(id), max(id) FROM samples WHERE run_id = ?1");
    if (!r)
        goto out;
    for (size_t i = 0; i < t->nruns; i++) {
        rt_store_rows_reset(r);
        rt_store_rows_bind_i(r, 1, t->runs[i]);
        if (rt_store_rows_next(r) != 1)
            goto out;
        int64_t a = rt_store_rows_i(r, 0), b = rt_store_rows_i(r, 1);
        if (a == RT_NA)
            continue; /* a run without samples */
        lo = lo == 0 || a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    rt_store_rows_close(r);
    r = rt_store_rows_open(t->scan, "SELECT process_id, coalesce(cpu_utime_s, 0) + "
                                    "coalesce(cpu_stime_s, 0), pss_kib FROM process_samples "
                                    "WHERE sample_id BETWEEN ?1 AND ?2");
    if (!r)
        goto out;
    rt_store_rows_bind_i(r, 1, lo);
    rt_store_rows_bind_i(r, 2, hi);
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        int64_t k;
        if (!rt_map_get(&t->slot, (uint64_t)rt_store_rows_i(r, 0), &k))
            continue; /* another run's process, recorded at the same time */
        struct top_acc *a = &t->acc[k];
        a->cpu_s += rt_store_rows_f(r, 1);
        double pss = rt_store_rows_f(r, 2);
        if (!isnan(pss)) {
            if (!a->has_pss || pss > a->pss_kib)
                a->pss_kib = pss;
            a->has_pss = 1;
        }
    }
    if (rc == 0)
        t->rc = 0;
out:
    rt_store_rows_close(r);
    if (t->pass) /* then the samples' last stretches, while the main thread reads the first */
        read_parts(t->scan, t->pass, 1);
    rt_store_read_end(t->scan);
    rt_store_close(t->scan);
    t->scan = NULL;
    return NULL;
}

/* The runs' processes and sample range, then the pass (on a thread when one can be had, which
 * then shares the samples' pass `ps`). */
static int top_start(struct ctx *c, struct top *t, struct pass *ps)
{
    char sql[256];
    rt_map_init(&t->slot, 64);
    snprintf(sql, sizeof(sql), "SELECT id, pid FROM processes WHERE run_id IN (%s)", c->ids);
    struct rt_store_rows *r = prep(c, sql);
    if (!r)
        return -1;
    while (rt_store_rows_next(r) == 1) {
        struct top_acc *a = RT_PUSH(t->acc, t->n, t->cap);
        memset(a, 0, sizeof(*a));
        a->id = rt_store_rows_i(r, 0);
        a->pid = rt_store_rows_i(r, 1);
        rt_map_put(&t->slot, (uint64_t)a->id, (int64_t)(t->n - 1));
    }
    rt_store_rows_close(r);
    if (!(r = prep(c, c->ids)))
        return -1;
    while (rt_store_rows_next(r) == 1)
        *RT_PUSH(t->runs, t->nruns, t->runs_cap) = rt_store_rows_i(r, 0);
    rt_store_rows_close(r);
    if (rt_store_open_second(c->store, &t->scan) != 0) {
        t->rc = t->n ? -1 : 0; /* emit_top says so where there is a tree */
        return 0;
    }
    t->pass = ps;
    t->threaded = pthread_create(&t->th, NULL, top_scan, t) == 0;
    if (!t->threaded) {
        t->pass = NULL; /* the main thread reads every stretch */
        top_scan(t);
    }
    return 0;
}

static int by_cpu(const struct top_acc *a, const struct top_acc *b)
{
    return a->cpu_s > b->cpu_s || (a->cpu_s == b->cpu_s && a->pid < b->pid);
}

static int by_pss(const struct top_acc *a, const struct top_acc *b)
{
    return a->has_pss && (!b->has_pss || a->pss_kib > b->pss_kib ||
                          (a->pss_kib == b->pss_kib && a->pid < b->pid));
}

static void top_wait(struct top *t)
{
    if (t->threaded)
        pthread_join(t->th, NULL);
    t->threaded = 0;
}

static void top_free(struct top *t)
{
    top_wait(t);
    free(t->acc);
    free(t->runs);
    rt_map_free(&t->slot);
}

static int emit_top(struct ctx *c, struct top *t, struct rt_buf *b)
{
    top_wait(t);
    if (t->rc != 0) {
        snprintf(c->err, c->errlen, "cannot read the process rows of the database");
        return -1;
    }
    struct rt_store_rows *name = prep(c, "SELECT name FROM processes WHERE id = ?1");
    if (!name)
        return -1;
    static const char *const what[2][2] = {{"by_cpu", "cpu_s"}, {"by_pss", "pss_mib"}};
    int (*const better[2])(const struct top_acc *, const struct top_acc *) = {by_cpu, by_pss};
    const struct top_acc *acc = t->acc;
    size_t n = t->n;
    rt_buf_puts(b, "{");
    for (int k = 0; k < 2; k++) {
        rt_buf_puts(b, k ? ", " : "");
        rt_buf_json_string(b, what[k][0], strlen(what[k][0]));
        rt_buf_puts(b, ": [");
        /* five rounds of "the best one not taken yet" */
        size_t taken[5];
        for (int r = 0; r < 5; r++) {
            size_t best = n;
            for (size_t i = 0; i < n; i++) {
                int used = 0;
                for (int u = 0; u < r; u++)
                    used |= taken[u] == i;
                if (!used && (k == 0 || acc[i].has_pss) &&
                    (best == n || better[k](&acc[i], &acc[best])))
                    best = i;
            }
            if (best == n)
                break;
            taken[r] = best;
            rt_store_rows_reset(name);
            rt_store_rows_bind_i(name, 1, acc[best].id);
            rt_buf_puts(b, r ? ", {\"pid\": " : "{\"pid\": ");
            j_num(b, (double)acc[best].pid);
            rt_buf_puts(b, ", \"name\": ");
            if (rt_store_rows_next(name) == 1)
                j_col(b, name, 0);
            else
                rt_buf_puts(b, "null");
            rt_buf_puts(b, ", \"");
            rt_buf_puts(b, what[k][1]);
            rt_buf_puts(b, "\": ");
            j_num(b, rt_py_round(k ? acc[best].pss_kib / 1024.0 : acc[best].cpu_s, 3));
            rt_buf_puts(b, "}");
        }
        rt_buf_puts(b, "]");
    }
    rt_buf_puts(b, "}");
    rt_store_rows_close(name);
    return 0;
}

/* The tree's processes grouped by name (comm), busiest first: how many, their CPU time
 * together, the largest peak PSS of any one of them (peaks of different moments do not add up),
 * and the command line of the busiest one (argv joined with spaces); its pid and parent where
 * the group is one process. At most GROUPS_N groups. */
#define GROUPS_N 10
struct group {
    const char *name;
    size_t count, rep; /* rep: the busiest member, an index into acc */
    double cpu_s, pss_kib;
    int has_pss;
};

struct member {
    size_t acc;
    char *name, *command;
    int64_t ppid;
    int has_ppid;
};

static int member_cmp(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    return strcmp(x->name, y->name);
}

static int emit_groups(struct ctx *c, struct top *t, struct rt_buf *b)
{
    char sql[320];
    snprintf(sql, sizeof(sql),
             "SELECT id, coalesce(name, '?'), ppid, (SELECT group_concat(value, ' ') FROM "
             "json_each(p.cmdline)) FROM processes p WHERE run_id IN (%s)",
             c->ids);
    struct rt_store_rows *r = prep(c, sql);
    if (!r)
        return -1;
    struct member *m = NULL;
    size_t n = 0, cap = 0;
    while (rt_store_rows_next(r) == 1) {
        int64_t k;
        if (!rt_map_get(&t->slot, (uint64_t)rt_store_rows_i(r, 0), &k))
            continue;
        struct member *x = RT_PUSH(m, n, cap);
        x->acc = (size_t)k;
        x->name = xstrdup(rt_store_rows_t(r, 1));
        x->has_ppid = rt_store_rows_type(r, 2) != RT_STORE_NULL;
        x->ppid = x->has_ppid ? rt_store_rows_i(r, 2) : 0;
        const char *cmd = rt_store_rows_t(r, 3);
        x->command = cmd ? xstrdup(cmd) : NULL;
    }
    rt_store_rows_close(r);
    if (n)
        qsort(m, n, sizeof(*m), member_cmp);
    struct group *g = NULL;
    size_t ng = 0, gcap = 0;
    for (size_t i = 0; i < n; i++) {
        const struct top_acc *a = &t->acc[m[i].acc];
        struct group *cur = ng ? &g[ng - 1] : NULL;
        if (!cur || strcmp(cur->name, m[i].name) != 0) {
            cur = RT_PUSH(g, ng, gcap);
            memset(cur, 0, sizeof(*cur));
            cur->name = m[i].name;
            cur->rep = i;
        }
        cur->count++;
        cur->cpu_s += a->cpu_s;
        if (a->has_pss && (!cur->has_pss || a->pss_kib > cur->pss_kib))
            cur->pss_kib = a->pss_kib;
        cur->has_pss |= a->has_pss;
        const struct top_acc *rep = &t->acc[m[cur->rep].acc];
        if (a->cpu_s > rep->cpu_s || (a->cpu_s == rep->cpu_s && a->pid < rep->pid))
            cur->rep = i;
    }
    rt_buf_puts(b, "{\"processes\": ");
    j_num(b, (double)n);
    rt_buf_puts(b, ", \"groups\": [");
    /* GROUPS_N rounds of "the busiest group not taken yet" */
    for (int k = 0; k < GROUPS_N; k++) {
        size_t best = ng;
        for (size_t i = 0; i < ng; i++)
            if (g[i].count && (best == ng || g[i].cpu_s > g[best].cpu_s))
                best = i;
        if (best == ng)
            break;
        const struct group *x = &g[best];
        const struct member *rep = &m[x->rep];
        rt_buf_puts(b, k ? ", {\"name\": " : "{\"name\": ");
        j_str(b, x->name);
        rt_buf_puts(b, ", \"count\": ");
        j_num(b, (double)x->count);
        rt_buf_puts(b, ", \"cpu_s\": ");
        j_num(b, rt_py_round(x->cpu_s, 3));
        rt_buf_puts(b, ", \"pss_max_mib\": ");
        j_num(b, x->has_pss ? rt_py_round(x->pss_kib / 1024.0, 3) : RT_NAN);
        rt_buf_puts(b, ", \"pid\": ");
        j_num(b, x->count == 1 ? (double)t->acc[rep->acc].pid : RT_NAN);
        rt_buf_puts(b, ", \"ppid\": ");
        j_num(b, x->count == 1 && rep->has_ppid ? (double)rep->ppid : RT_NAN);
        rt_buf_puts(b, ", \"command\": ");
        j_str(b, rep->command);
        rt_buf_puts(b, "}");
        g[best].count = 0; /* taken */
    }
    rt_buf_puts(b, "]}");
    for (size_t i = 0; i < n; i++) {
        free(m[i].name);
        free(m[i].command);
    }
    free(m);
    free(g);
    return 0;
}

/* The tree's CPU time: the kernel's user and system seconds of the reaped jobs where every run
 * has them, else the sampled per-process CPU time added up (no split). null without a tree or
 * without either. */
static void emit_cpu_time(struct ctx *c, const struct top *t, struct rt_buf *b)
{
    int kernel = !isnan(c->k_user_s) && !isnan(c->k_sys_s);
    if (!c->has_tree || (!kernel && t->n == 0)) {
        rt_buf_puts(b, "null");
        return;
    }
    double total = 0;
    for (size_t i = 0; i < t->n; i++)
        total += t->acc[i].cpu_s;
    rt_buf_puts(b, "{\"user_s\": ");
    j_num(b, kernel ? c->k_user_s : RT_NAN);
    rt_buf_puts(b, ", \"sys_s\": ");
    j_num(b, kernel ? c->k_sys_s : RT_NAN);
    rt_buf_puts(b, ", \"total_s\": ");
    j_num(b, kernel ? c->k_user_s + c->k_sys_s : total);
    rt_buf_puts(b, ", \"source\": ");
    j_str(b, kernel ? "kernel" : "sampled");
    rt_buf_puts(b, "}");
}

/* The end-of-run line's one run, named in every query as it is: no temporary table to make. */
static int pick_one_run(struct ctx *c)
{
    snprintf(c->ids, sizeof(c->ids), "%lld", (long long)c->o->run_id);
    c->nruns = 1;
    c->last_run = c->o->run_id;
    c->run_unchecked = 1; /* the plan of the pass says when there is no such run */
    return 0;
}

/* The end-of-run line's figures: the numbers emit_metrics() and emit_reco() write for them. */
static void line_figures(const struct ctx *c, const struct reco *r, struct rt_summary_line *line)
{
    const struct stat4 *cpu = &(c->has_tree ? &c->proc : &c->sys)->st[M_CPU];
    line->tree = c->has_tree;
    line->cores_mean = cpu->ok ? cpu->mean : RT_NAN;
    line->cores_max = cpu->ok ? cpu->max : RT_NAN;
    line->peak_mib = r->mem_peak;
}

static int summary_doc(struct rt_store *store, const struct rt_summary_opts *o, struct rt_buf *out,
                       struct rt_summary_line *line, int *bad_input, char *err, size_t errlen)
{
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.store = store;
    c.o = o;
    c.err = err;
    c.errlen = errlen;
    c.bad = bad_input;
    *bad_input = 0;
    int rc = -1;
    /* one snapshot for every query, even while a recorder writes */
    rt_store_read_begin(store);
    struct top top;
    memset(&top, 0, sizeof(top));
    struct pass ps;
    pass_init(&ps);
    if (o->figures_only) /* no process table: no second connection, no scan of it */
        rt_map_init(&top.slot, 1);
    if ((o->figures_only && !o->job ? pick_one_run(&c) : pick_runs(&c)) != 0 ||
        (!o->figures_only && top_start(&c, &top, &ps) != 0) || collect(&c, &ps) != 0 ||
        kernel_facts(&c) != 0)
        goto out;
    if (o->figures_only) { /* what the line's figures are made of, no document */
        struct reco r;
        recommend(&c, &r, 1);
        if (line)
            line_figures(&c, &r, line);
        rc = 0;
        goto out;
    }
    if (pressure(&c) != 0 || alloc_facts(&c) != 0)
        goto out;
    rt_buf_puts(out, "{");
    if (emit_run(&c, out) != 0)
        goto out;
    rt_buf_puts(out, ", \"process\": ");
    if (c.has_tree)
        emit_metrics(out, &c.proc, 0);
    else
        rt_buf_puts(out, "null");
    rt_buf_puts(out, ", \"system\": ");
    emit_metrics(out, &c.sys, 1);
    rt_buf_puts(out, ", \"python_stats\": ");
    emit_python_stats(&c, out);
    rt_buf_puts(out, ", \"kernel\": ");
    emit_kernel(&c, out);
    rt_buf_puts(out, ", \"cpu_demand\": ");
    emit_demand(&c, out);
    rt_buf_puts(out, ", \"memory_peak\": ");
    if (emit_peak(&c, out) != 0)
        goto out;
    struct reco r, py;
    recommend(&c, &r, 1);
    recommend(&c, &py, 0);
    if (line)
        line_figures(&c, &r, line);
    rt_buf_puts(out, ", \"recommendation\": ");
    emit_reco(out, &r, &c);
    rt_buf_puts(out, ", \"python_recommendation\": ");
    emit_reco(out, &py, &c);
    rt_buf_puts(out, ", \"efficiency\": ");
    emit_efficiency(&c, out, &r);
    rt_buf_puts(out, ", \"allocated\": ");
    emit_allocated(&c, out);
    rt_buf_puts(out, ", \"allocation\": ");
    j_str(out, allocation(&c));
    rt_buf_puts(out, ", \"sparklines\": ");
    emit_sparklines(&c, out);
    rt_buf_puts(out, ", \"top_processes\": ");
    if (emit_top(&c, &top, out) != 0)
        goto out;
    rt_buf_puts(out, ", \"process_groups\": ");
    if (emit_groups(&c, &top, out) != 0)
        goto out;
    rt_buf_puts(out, ", \"cpu_time\": ");
    emit_cpu_time(&c, &top, out);
    rt_buf_puts(out, ", \"server\": ");
    if (o->recommend_server) {
        struct rt_keeper_query q = {(int)r.cpu, (int)r.memory, (int)r.gpu, (int)r.vram};
        struct rt_buf srv = {0};
        char kerr[256];
        if (rt_keeper_cheapest(o->keeper_url, &q, &srv, kerr, sizeof(kerr)) == 0) {
            rt_buf_append(out, srv.p, srv.len);
        } else {
            rt_buf_puts(out, "null, \"server_error\": ");
            j_str(out, kerr);
        }
        rt_buf_free(&srv);
    } else {
        rt_buf_puts(out, "null");
    }
    rt_buf_puts(out, "}");
    rc = 0;
out:
    pass_ready(&ps); /* (where the pass never started, the thread finds nothing to take) */
    top_free(&top);
    pass_free(&ps);
    rt_store_read_end(store);
    free_side(&c.proc);
    free_side(&c.sys);
    return rc;
}

int rt_summary_run(struct rt_store *store, const struct rt_summary_opts *o, struct rt_buf *out,
                   struct rt_summary_line *line, int *bad_input, char *err, size_t errlen)
{
    rt_store_read_begin(store); /* one snapshot for the document and its spread */
    int rc = summary_doc(store, o, out, line, bad_input, err, errlen);
    if (rc == 0 && o->job && !o->figures_only) {
        /* --job: how its runs spread (across.c), the document's last key */
        out->len--; /* its closing brace */
        rt_buf_puts(out, ", \"spread\": ");
        rc = j_spread(store, o->job, out, err, errlen);
        rt_buf_puts(out, "}");
    }
    rt_store_read_end(store);
    return rc;
}

int rt_summary_json(struct rt_store *store, const struct rt_summary_opts *o, struct rt_buf *out,
                    int *bad_input, char *err, size_t errlen)
{
    return rt_summary_run(store, o, out, NULL, bad_input, err, errlen);
}
