/* summary.c - what a run used and what to ask for next time (summary.h has the JSON schema).
 *
 * One pass over the run's samples (the columns of the export view python_combined, so the
 * figures are the exported ones, unrounded) collects each metric's values; mean and max come from
 * the pass, p50/p95 from a selection (nearest rank: the value at position ceil(p * n) of the sorted
 * values), so a million samples need no sort. The Python reference's stats() and
 * recommend_resources() are computed the way it computes them, with its bugs fixed (memory
 * MiB divided by 1024, an allocation that is never "dedicated", a 512 GiB memory threshold). */
#include "rtrack/summary/summary.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/summary/keeper.h"
#include "rtrack/export/pyfmt.h"

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

static void push(struct series *s, double x, size_t rows)
{
    if (isnan(x))
        return;
    if (s->n == s->cap) {
        /* the row count is known before the pass: one allocation of the right size */
        s->cap = s->cap ? s->cap * 2 : rows > 0 ? rows : 256;
        s->v = xrealloc(s->v, s->cap * sizeof(float));
    }
    if (s->n == 0 || x > s->max)
        s->max = x;
    s->v[s->n++] = (float)x;
    s->sum += x;
}

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

static void j_num(struct rt_buf *b, double x)
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

static void j_key(struct rt_buf *b, int *first, const char *k)
{
    if (!*first)
        rt_buf_puts(b, ", ");
    *first = 0;
    rt_buf_json_string(b, k, strlen(k));
    rt_buf_puts(b, ": ");
}

static void j_str(struct rt_buf *b, const char *s)
{
    if (s)
        rt_buf_json_string(b, s, strlen(s));
    else
        rt_buf_puts(b, "null");
}

/* A column of the current row as JSON: text quoted, numbers as they are, NULL as null. */
static void j_col(struct rt_buf *b, sqlite3_stmt *st, int i)
{
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL:
        rt_buf_puts(b, "null");
        break;
    case SQLITE_INTEGER: {
        char t[24];
        snprintf(t, sizeof(t), "%lld", (long long)sqlite3_column_int64(st, i));
        rt_buf_puts(b, t);
        break;
    }
    case SQLITE_FLOAT:
        j_num(b, sqlite3_column_double(st, i));
        break;
    default:
        j_str(b, (const char *)sqlite3_column_text(st, i));
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

struct ctx {
    sqlite3 *db;
    const struct rt_summary_opts *o;
    char ids[64]; /* the subquery naming the runs */
    int nruns;
    int64_t last_run;
    int has_tree;
    struct side proc, sys;
    /* python stats per run, aggregated like aggregate_stats: mean of means, max of maxes */
    double py_mean[5], py_max[5], py_space_max, py_recv, py_sent, py_duration;
    int py_runs;
    double host_vcpus, host_mem_mib, host_gpus, host_vram_mib;
    /* sparklines: the maximum of each of SPARK_N stretches of the run, per series */
    size_t rows;
    double spark[4][SPARK_N];
    int spark_has[4][SPARK_N];
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

static sqlite3_stmt *prep(struct ctx *c, const char *sql)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(c->db, sql, -1, &st, NULL) != SQLITE_OK) {
        snprintf(c->err, c->errlen, "cannot read the database: %s", sqlite3_errmsg(c->db));
        return NULL;
    }
    return st;
}

/* The runs to summarize, one or every run of a job (--job), go into a temporary table that
 * every query below reads (`run_id IN (SELECT id FROM temp.summary_runs)`). */
static int pick_runs(struct ctx *c)
{
    snprintf(c->ids, sizeof(c->ids), "SELECT id FROM temp.summary_runs");
    if (sqlite3_exec(c->db,
                     "CREATE TEMP TABLE IF NOT EXISTS summary_runs (id INTEGER PRIMARY KEY); "
                     "DELETE FROM temp.summary_runs",
                     NULL, NULL, NULL) != SQLITE_OK) {
        snprintf(c->err, c->errlen, "cannot read the database: %s", sqlite3_errmsg(c->db));
        return -1;
    }
    sqlite3_stmt *st = prep(c, c->o->job ? "INSERT INTO temp.summary_runs SELECT id FROM runs "
                                           "WHERE job_name = ?1"
                                         : "INSERT INTO temp.summary_runs SELECT id FROM runs "
                                           "WHERE id = ?2");
    if (!st)
        return -1;
    if (c->o->job)
        sqlite3_bind_text(st, 1, c->o->job, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, 2, c->o->run_id);
    sqlite3_step(st);
    sqlite3_finalize(st);
    st = prep(c, "SELECT count(*), max(id) FROM temp.summary_runs");
    if (!st)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        c->nruns = sqlite3_column_int(st, 0);
        c->last_run = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (c->nruns == 0) {
        if (c->o->job)
            snprintf(c->err, c->errlen, "no runs of job '%s' in the database", c->o->job);
        else
            snprintf(c->err, c->errlen, "no run %lld in the database", (long long)c->o->run_id);
        return bad_request(c);
    }
    return 0;
}

/* One pass over the samples after the baseline of every picked run. */
static int collect(struct ctx *c)
{
    char sql[1536];
    /* the columns of python_combined, straight from the tables (the view joins two views of
     * samples, which costs three times as much on a long run); the GPU sums only where the
     * runs have GPU rows */
    char gq[384];
    snprintf(gq, sizeof(gq),
             "SELECT EXISTS (SELECT 1 FROM gpu_samples WHERE sample_id BETWEEN (SELECT min(id) "
             "FROM samples WHERE run_id IN (%s)) AND (SELECT max(id) FROM samples WHERE run_id "
             "IN (%s)))",
             c->ids, c->ids);
    sqlite3_stmt *st = prep(c, gq);
    if (!st)
        return -1;
    int gpus = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    snprintf(sql, sizeof(sql),
             "SELECT s.run_id, s.interval_s, s.proc_root_pid, s.proc_cpu_usage, "
             "s.proc_pss_kib / 1024.0, s.proc_read_bytes, s.proc_write_bytes, %s, "
             "s.cpu_usage, s.mem_used_kib / 1024.0, s.disk_read_bytes, s.disk_write_bytes, "
             "s.net_rx_bytes, s.net_tx_bytes, %s, s.disk_space_used_bytes / 1e9, s.ts, "
             "r.interval_s FROM samples s JOIN runs r ON r.id = s.run_id %s "
             "WHERE s.run_id IN (%s) AND s.kind <> 'baseline' ORDER BY s.run_id, s.seq",
             gpus ? "CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_usage, 0.0) END, "
                    "CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_vram_mib, 0.0) END, "
                    "CASE WHEN g.sample_id IS NOT NULL THEN coalesce(pg.gpu_utilized, 0) END"
                  : "NULL, NULL, NULL",
             gpus ? "g.gpu_usage, g.gpu_vram_mib, g.gpu_utilized" : "NULL, NULL, NULL",
             gpus ? "LEFT JOIN gpu_totals g ON g.sample_id = s.id "
                    "LEFT JOIN gpu_process_totals pg ON pg.sample_id = s.id"
                  : "",
             c->ids);
    char csql[160];
    snprintf(csql, sizeof(csql),
             "SELECT count(*) FROM samples WHERE run_id IN (%s) AND kind <> 'baseline'", c->ids);
    st = prep(c, csql);
    if (!st)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        c->rows = (size_t)sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    st = prep(c, sql);
    if (!st)
        return -1;
    int64_t run = -1;
    double r_sum[5] = {0}, r_max[5] = {0}, r_space = 0, r_recv = 0, r_sent = 0, t0 = 0, t1 = 0,
           iv = 0;
    size_t r_n = 0, total = 0;
#define COL(i)                                                                                     \
    (sqlite3_column_type(st, (i)) == SQLITE_NULL ? RT_NAN : sqlite3_column_double(st, (i)))
    for (int rc = sqlite3_step(st);; rc = sqlite3_step(st)) {
        int64_t this_run = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -2;
        if (this_run != run && r_n > 0) {
            /* close the previous run's stats() */
            for (int k = 0; k < 5; k++) {
                c->py_mean[k] += r_sum[k] / (double)r_n;
                c->py_max[k] = c->py_runs && c->py_max[k] > r_max[k] ? c->py_max[k] : r_max[k];
            }
            c->py_space_max = fmax(c->py_space_max, r_space);
            c->py_recv = fmax(c->py_recv, r_recv);
            c->py_sent = fmax(c->py_sent, r_sent);
            c->py_duration += t1 - t0 + iv;
            c->py_runs++;
            memset(r_sum, 0, sizeof(r_sum));
            memset(r_max, 0, sizeof(r_max));
            r_space = r_recv = r_sent = 0;
            r_n = 0;
        }
        if (rc != SQLITE_ROW)
            break;
        run = this_run;
        double dt = COL(1);
        iv = COL(21); /* the run's nominal interval: stats() adds one to max - min */
        double x[21];
        for (int i = 2; i < 21; i++)
            x[i] = COL(i);
        if (!isnan(x[2]))
            c->has_tree = 1;
        if (r_n == 0)
            t0 = x[20];
        t1 = x[20];
        struct side *p = &c->proc, *y = &c->sys;
        push(&p->s[M_CPU], x[3], c->rows);
        push(&p->s[M_MEM], x[4], c->rows);
        push(&p->s[M_DREAD], dt > 0 ? x[5] / dt : RT_NAN, c->rows);
        push(&p->s[M_DWRITE], dt > 0 ? x[6] / dt : RT_NAN, c->rows);
        push(&p->s[M_GPU], x[7], c->rows);
        push(&p->s[M_VRAM], x[8], c->rows);
        push(&p->s[M_GPUS], x[9], c->rows);
        push(&y->s[M_CPU], x[10], c->rows);
        push(&y->s[M_MEM], x[11], c->rows);
        push(&y->s[M_DREAD], dt > 0 ? x[12] / dt : RT_NAN, c->rows);
        push(&y->s[M_DWRITE], dt > 0 ? x[13] / dt : RT_NAN, c->rows);
        push(&y->s[M_NRECV], dt > 0 ? x[14] / dt : RT_NAN, c->rows);
        push(&y->s[M_NSENT], dt > 0 ? x[15] / dt : RT_NAN, c->rows);
        push(&y->s[M_GPU], x[16], c->rows);
        push(&y->s[M_VRAM], x[17], c->rows);
        push(&y->s[M_GPUS], x[18], c->rows);
        const int tot_col[2][4] = {{5, 6, -1, -1}, {12, 13, 14, 15}};
        struct side *sides[2] = {p, y};
        for (int k = 0; k < 2; k++)
            for (int t = 0; t < 4; t++)
                if (tot_col[k][t] >= 0 && !isnan(x[tot_col[k][t]])) {
                    sides[k]->totals[t] += x[tot_col[k][t]];
                    sides[k]->has_tot[t] = 1;
                }
        /* stats(): process cpu, memory, gpu usage, vram, gpus (NULL counts as the 0 Python
         * prints without a GPU); disk space max; network sums */
        const int py_col[5] = {3, 4, 7, 8, 9};
        for (int k = 0; k < 5; k++) {
            double v = isnan(x[py_col[k]]) ? 0 : x[py_col[k]];
            r_sum[k] += v;
            if (r_n == 0 || v > r_max[k])
                r_max[k] = v;
        }
        /* sparklines of the tree (the system for a system-only recording) */
        int tree = !isnan(x[2]);
        double sp[4] = {tree ? x[3] : x[10], tree ? x[4] : x[11],
                        dt > 0 ? ((tree ? x[5] : x[12]) + (tree ? x[6] : x[13])) / dt : RT_NAN,
                        tree ? x[7] : x[16]};
        size_t nb = c->rows < SPARK_N ? c->rows : SPARK_N;
        size_t bucket = c->rows ? total * nb / c->rows : 0;
        if (bucket >= SPARK_N)
            bucket = SPARK_N - 1;
        for (int k = 0; k < 4; k++)
            if (!isnan(sp[k]) && (!c->spark_has[k][bucket] || sp[k] > c->spark[k][bucket])) {
                c->spark[k][bucket] = sp[k];
                c->spark_has[k][bucket] = 1;
            }
        if (!isnan(x[19]) && x[19] > r_space)
            r_space = x[19];
        r_recv += isnan(x[14]) ? 0 : x[14];
        r_sent += isnan(x[15]) ? 0 : x[15];
        r_n++;
        total++;
    }
#undef COL
    sqlite3_finalize(st);
    if (total == 0) {
        if (c->o->job)
            snprintf(c->err, c->errlen, "no run of job '%s' has two samples yet", c->o->job);
        else
            snprintf(c->err, c->errlen,
                     "run %lld has fewer than two samples: nothing to summarize yet",
                     (long long)c->o->run_id);
        return bad_request(c);
    }
    for (int k = 0; k < 5; k++)
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

static int emit_run(struct ctx *c, struct rt_buf *b)
{
    sqlite3_stmt *st = prep(
        c, "SELECT r.id, r.uuid, r.mode, r.status, r.status = 'running', r.command, r.job_name, "
           "r.project_name, r.stage_name, r.task_name, r.team, r.env, r.language, "
           "r.orchestrator, r.executor, r.external_run_id, r.container_image, "
           "(SELECT json_group_object(key, value) FROM (SELECT key, value FROM run_tags "
           "WHERE run_id = r.id ORDER BY position)), r.pid, r.exit_code, r.exit_signal, "
           "r.end_reason, r.started_at, r.ended_at, "
           "coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) - "
           "r.started_at, (SELECT count(*) FROM samples WHERE run_id = r.id AND kind <> "
           "'baseline'), r.interval_s, "
           "r.host_hostname, r.host_cpu_model, r.host_vcpus, r.host_memory_kib / 1024.0, "
           "r.host_kernel, r.host_os, g.host_gpu_model, g.host_gpu_count, g.host_gpu_memory_mib "
           "FROM runs r LEFT JOIN host_gpus g ON g.run_id = r.id WHERE r.id = ?1");
    if (!st)
        return -1;
    /* --job: the newest run's facts stand for the job */
    sqlite3_bind_int64(st, 1, c->last_run);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        snprintf(c->err, c->errlen, "cannot read the run from the database");
        return -1;
    }
    static const char *const keys[] = {"id",
                                       "uuid",
                                       "mode",
                                       "status",
                                       "in_progress",
                                       "command",
                                       "job_name",
                                       "project_name",
                                       "stage_name",
                                       "task_name",
                                       "team",
                                       "env",
                                       "language",
                                       "orchestrator",
                                       "executor",
                                       "external_run_id",
                                       "container_image",
                                       "tags",
                                       "pid",
                                       "exit_code",
                                       "exit_signal",
                                       "end_reason",
                                       "started_at",
                                       "ended_at",
                                       "duration_s",
                                       "samples",
                                       "interval_s"};
    rt_buf_puts(b, "\"run\": {");
    int first = 1;
    for (int i = 0; i < (int)RT_ARRAY_LEN(keys); i++) {
        j_key(b, &first, keys[i]);
        if (i == 4)
            rt_buf_puts(b, sqlite3_column_int(st, 4) ? "true" : "false");
        else if (i == 5 || i == 17) /* JSON text stored in the database */
            rt_buf_puts(b, sqlite3_column_type(st, i) == SQLITE_NULL
                               ? (i == 17 ? "{}" : "null")
                               : (const char *)sqlite3_column_text(st, i));
        else
            j_col(b, st, i);
    }
    j_key(b, &first, "runs");
    j_num(b, c->nruns);
    rt_buf_puts(b, "}, \"host\": {");
    static const char *const hkeys[] = {"hostname",   "cpu_model", "vcpus",
                                        "memory_mib", "kernel",    "os",
                                        "gpu_model",  "gpu_count", "gpu_memory_mib"};
    first = 1;
    for (int i = 0; i < (int)RT_ARRAY_LEN(hkeys); i++) {
        j_key(b, &first, hkeys[i]);
        j_col(b, st, 27 + i);
    }
    rt_buf_puts(b, "}");
    c->host_vcpus =
        sqlite3_column_type(st, 29) == SQLITE_NULL ? RT_NAN : sqlite3_column_double(st, 29);
    c->host_mem_mib =
        sqlite3_column_type(st, 30) == SQLITE_NULL ? RT_NAN : sqlite3_column_double(st, 30);
    c->host_gpus =
        sqlite3_column_type(st, 34) == SQLITE_NULL ? RT_NAN : sqlite3_column_double(st, 34);
    c->host_vram_mib =
        sqlite3_column_type(st, 35) == SQLITE_NULL ? RT_NAN : sqlite3_column_double(st, 35);
    sqlite3_finalize(st);
    return 0;
}

static void emit_python_stats(struct ctx *c, struct rt_buf *b)
{
    static const char *const cols[5] = {"process_cpu_usage", "process_memory_mib",
                                        "process_gpu_usage", "process_gpu_vram_mib",
                                        "process_gpu_utilized"};
    rt_buf_puts(b, "{");
    int first = 1;
    for (int k = 0; k < 5; k++) {
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
};

/* recommend_resources(): from the process tree, or the system for a system-only recording. */
static void recommend(struct ctx *c, struct reco *r)
{
    const struct side *sd = c->has_tree ? &c->proc : &c->sys;
    double cpu_mean = c->has_tree ? c->py_mean[0] : sd->st[M_CPU].mean;
    double mem_max = c->has_tree ? c->py_max[1] : sd->st[M_MEM].max;
    r->cpu = (long)fmax(1, round_even(round2(cpu_mean)));
    /* latency-sensitive: enough cores for 95 % of the intervals */
    r->cpu_p95 = sd->st[M_CPU].ok ? (long)fmax(1, ceil(round2(sd->st[M_CPU].p95))) : r->cpu;
    r->memory = rt_round_memory(round2(mem_max) * 1.2);
    double gpu_mean = c->has_tree ? c->py_mean[2] : (sd->st[M_GPU].ok ? sd->st[M_GPU].mean : 0);
    double gpu_max = c->has_tree ? c->py_max[2] : (sd->st[M_GPU].ok ? sd->st[M_GPU].max : 0);
    double vram_max = c->has_tree ? c->py_max[3] : (sd->st[M_VRAM].ok ? sd->st[M_VRAM].max : 0);
    r->gpu = gpu_mean > 0 ? (long)fmax(1, round_even(round2(gpu_max))) : 0;
    r->vram = vram_max > 0 ? rt_round_memory(round2(vram_max) * 1.2) : 0;
}

static void emit_reco(struct rt_buf *b, const struct reco *r)
{
    char text[160], mf[160];
    int n = snprintf(text, sizeof(text), "%ld vCPUs, %ld MiB memory", r->cpu, r->memory);
    if (r->gpu > 0)
        snprintf(text + n, sizeof(text) - (size_t)n, ", %ld GPUs with %ld MiB VRAM", r->gpu,
                 r->vram);
    n = snprintf(mf, sizeof(mf), "@resources(cpu=%ld, memory=%ld", r->cpu, r->memory);
    if (r->gpu > 0)
        n += snprintf(mf + n, sizeof(mf) - (size_t)n, ", gpu=%ld", r->gpu);
    snprintf(mf + n, sizeof(mf) - (size_t)n, ")");
    rt_buf_puts(b, "{\"cpu\": ");
    j_num(b, (double)r->cpu);
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
    rt_buf_puts(b, "}");
}

/* Used / available, as seff reports it: mean cores over vCPUs, peak memory over RAM, mean GPUs
 * over GPUs, peak VRAM over VRAM. */
static void emit_efficiency(struct ctx *c, struct rt_buf *b)
{
    const struct side *sd = c->has_tree ? &c->proc : &c->sys;
    double v[4] = {
        sd->st[M_CPU].ok ? sd->st[M_CPU].mean / c->host_vcpus * 100 : RT_NAN,
        sd->st[M_MEM].ok ? sd->st[M_MEM].max / c->host_mem_mib * 100 : RT_NAN,
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

/* Eight block heights from 0 to the series' maximum; a blank where no sample fell. */
static void emit_sparklines(struct ctx *c, struct rt_buf *b)
{
    static const char *const names[4] = {"cpu_cores", "memory_mib", "disk_io_bytes_per_s",
                                         "gpu_usage"};
    static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    size_t nb = c->rows < SPARK_N ? c->rows : SPARK_N;
    rt_buf_puts(b, "{");
    for (int k = 0; k < 4; k++) {
        double max = 0;
        int any = 0;
        for (size_t i = 0; i < nb; i++)
            if (c->spark_has[k][i]) {
                any = 1;
                max = fmax(max, c->spark[k][i]);
            }
        rt_buf_puts(b, k ? ", \"" : "\"");
        rt_buf_puts(b, names[k]);
        rt_buf_puts(b, "\": ");
        if (!any) {
            rt_buf_puts(b, "null");
            continue;
        }
        rt_buf_puts(b, "\"");
        for (size_t i = 0; i < nb; i++) {
            if (!c->spark_has[k][i]) {
                rt_buf_puts(b, " ");
                continue;
            }
            int lvl = max > 0 ? (int)(c->spark[k][i] / max * 7.0 + 0.5) : 0;
            rt_buf_puts(b, blocks[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl]);
        }
        rt_buf_puts(b, "\"");
    }
    rt_buf_puts(b, "}");
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
    int64_t lo, hi;     /* the runs' sample ids */
    const char *path;
    int threaded, rc;
    pthread_t th;
};

static void *top_scan(void *arg)
{
    struct top *t = arg;
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    t->rc = -1;
    if (sqlite3_open_v2(t->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        goto out;
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_prepare_v2(db,
                           "SELECT process_id, coalesce(cpu_utime_s, 0) + coalesce(cpu_stime_s, "
                           "0), pss_kib FROM process_samples WHERE sample_id BETWEEN ?1 AND ?2",
                           -1, &st, NULL) != SQLITE_OK)
        goto out;
    sqlite3_bind_int64(st, 1, t->lo);
    sqlite3_bind_int64(st, 2, t->hi);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t k;
        if (!rt_map_get(&t->slot, (uint64_t)sqlite3_column_int64(st, 0), &k))
            continue; /* another run's process, recorded at the same time */
        struct top_acc *a = &t->acc[k];
        a->cpu_s += sqlite3_column_double(st, 1);
        if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
            double pss = sqlite3_column_double(st, 2);
            if (!a->has_pss || pss > a->pss_kib)
                a->pss_kib = pss;
            a->has_pss = 1;
        }
    }
    if (rc == SQLITE_DONE)
        t->rc = 0;
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return NULL;
}

/* The runs' processes and sample range, then the pass (on a thread when one can be had). */
static int top_start(struct ctx *c, struct top *t)
{
    char sql[256];
    rt_map_init(&t->slot, 64);
    snprintf(sql, sizeof(sql), "SELECT id, pid FROM processes WHERE run_id IN (%s)", c->ids);
    sqlite3_stmt *st = prep(c, sql);
    if (!st)
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        struct top_acc *a = RT_PUSH(t->acc, t->n, t->cap);
        memset(a, 0, sizeof(*a));
        a->id = sqlite3_column_int64(st, 0);
        a->pid = sqlite3_column_int64(st, 1);
        rt_map_put(&t->slot, (uint64_t)a->id, (int64_t)(t->n - 1));
    }
    sqlite3_finalize(st);
    snprintf(sql, sizeof(sql), "SELECT min(id), max(id) FROM samples WHERE run_id IN (%s)", c->ids);
    if (!(st = prep(c, sql)))
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        t->lo = sqlite3_column_int64(st, 0);
        t->hi = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    t->path = sqlite3_db_filename(c->db, "main");
    if (t->n == 0 || !t->path || !*t->path) {
        t->rc = 0; /* no tree: nothing to scan */
        if (!t->n)
            return 0;
        snprintf(c->err, c->errlen, "the database has no file name to read its processes from");
        return -1;
    }
    t->threaded = pthread_create(&t->th, NULL, top_scan, t) == 0;
    if (!t->threaded)
        top_scan(t);
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
    rt_map_free(&t->slot);
}

static int emit_top(struct ctx *c, struct top *t, struct rt_buf *b)
{
    top_wait(t);
    if (t->rc != 0) {
        snprintf(c->err, c->errlen, "cannot read the process rows of the database");
        return -1;
    }
    sqlite3_stmt *st = prep(c, "SELECT name FROM processes WHERE id = ?1");
    if (!st)
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
            sqlite3_reset(st);
            sqlite3_bind_int64(st, 1, acc[best].id);
            rt_buf_puts(b, r ? ", {\"pid\": " : "{\"pid\": ");
            j_num(b, (double)acc[best].pid);
            rt_buf_puts(b, ", \"name\": ");
            if (sqlite3_step(st) == SQLITE_ROW)
                j_col(b, st, 0);
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
    sqlite3_finalize(st);
    return 0;
}

int rt_summary_json(sqlite3 *db, const struct rt_summary_opts *o, struct rt_buf *out,
                    int *bad_input, char *err, size_t errlen)
{
    struct ctx c;
    memset(&c, 0, sizeof(c));
    c.db = db;
    c.o = o;
    c.err = err;
    c.errlen = errlen;
    c.bad = bad_input;
    *bad_input = 0;
    int rc = -1;
    /* one snapshot for every query, even while a recorder writes */
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    struct top top;
    memset(&top, 0, sizeof(top));
    if (pick_runs(&c) != 0 || top_start(&c, &top) != 0 || collect(&c) != 0)
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
    struct reco r;
    recommend(&c, &r);
    rt_buf_puts(out, ", \"recommendation\": ");
    emit_reco(out, &r);
    rt_buf_puts(out, ", \"efficiency\": ");
    emit_efficiency(&c, out);
    rt_buf_puts(out, ", \"allocation\": ");
    j_str(out, allocation(&c));
    rt_buf_puts(out, ", \"sparklines\": ");
    emit_sparklines(&c, out);
    rt_buf_puts(out, ", \"top_processes\": ");
    if (emit_top(&c, &top, out) != 0)
        goto out;
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
    top_free(&top);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    free_side(&c.proc);
    free_side(&c.sys);
    return rc;
}
