/* internal.h - what the files of the summary room share (private to src/summary/): the
 * compute step's context, the statistics of a series, the pass over the samples and the pass
 * over the process rows that runs beside it on a thread. */
#ifndef RTRACK_SUMMARY_INTERNAL_H
#define RTRACK_SUMMARY_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"
#include "rtrack/store/query.h"
#include "rtrack/summary/summary.h"

struct rt_store;
struct rt_store_rows;

/* --- the compute step's context (sctx.c) ------------------------------------------------ */

struct sctx {
    struct rt_store *store;
    const struct rt_summary_opts *o;
    /* the runs summarized: their ids, oldest first, and the same as a JSON array (bound as ?1
     * where a named query reads them all) */
    int64_t *ids;
    size_t nruns, ids_cap;
    struct rt_buf ids_json;
    int64_t last_run;  /* the newest: its facts stand for a job's */
    int run_unchecked; /* o->run_id not yet known to exist (the end-of-run line) */
    char *err;
    size_t errlen;
    int *bad;
};

/* "cannot read the database: REASON" in c->err: -1 */
int summary_db_fail(struct sctx *c);
/* c->err already says what was wrong with the request (exit 2): -1 */
int summary_bad_request(struct sctx *c);
/* Named query q, with ?1 bound to the runs' ids when bind_runs; its column count checked
 * against ncols (a statement edited out of step with its reader fails here, in every test,
 * not as a shifted column). NULL after summary_db_fail(). */
struct rt_store_rows *summary_query(struct sctx *c, enum rt_query q, int ncols, int bind_runs);
/* Run a statement to its end; 0, or -1 after summary_db_fail(). */
int summary_rows_done(struct sctx *c, struct rt_store_rows *r, int rc);

/* --- statistics (stats.c) -------------------------------------------------------------------- */

/* A metric's values. Kept as floats (7 significant digits, half the memory of doubles: 4 MB
 * per metric for a million samples) for the percentile selection; sum and max stay exact. */
struct series {
    float *v;
    size_t n, cap;
    double sum, max;
};

/* mean, max, and p50 and p95 by nearest rank (the value at position ceil(p * n) of the sorted
 * values, found by selection: a million samples need no sort). Reorders s->v. */
void summary_stat4(struct series *s, struct rt_stat4 *t);

/* A sparkline: eight block heights from 0 to the line's top, a blank where no sample fell.
 * Into out (RT_SPARK_N x 3 bytes + 1), its top in *max; 0 without values (out ""). */
#define SPARK_TEXT_MAX (RT_SPARK_N * 3 + 1)
int summary_spark_text(const double *v, const int *has, size_t n, char *out, double *max);

/* --- the pass over the samples (pass.c) ------------------------------------------------------ */

enum { SIDE_PROC, SIDE_SYS };

/* What the pass adds up over every picked run's samples after the baseline. */
struct pass_sums {
    struct series s[2][RT_M_N]; /* per side and metric */
    double totals[2][RT_T_N];
    int has_tot[2][RT_T_N];
    int has_tree;
    /* the sample with the tree's highest sampled memory (the first, on a tie) */
    int64_t peak_sample, peak_run;
    double peak_ts, peak_mib;
    /* CPU demand over the samples with a wait figure */
    double dem_run, dem_wait; /* seconds the tree ran and waited, in samples with both */
    /* the tree's CPU seconds: its cores x each sample's interval, every sample (the short
     * final one too: its seconds are real, only its rate is noise) */
    double tree_cpu_s;
    int has_tree_cpu;
    /* the Python reference's stats() per run, aggregated as aggregate_stats() does */
    struct rt_summary_py py;
    int py_runs;
    /* the sparklines' four series: the maximum of each stretch */
    size_t rows;
    double spark[4][RT_SPARK_N];
    int spark_has[4][RT_SPARK_N];
};

struct pass; /* the stretches, shared by the main thread and the process rows' thread */

struct pass *pass_new(void);
/* Plan the stretches of c's runs and allocate the series. 0, or -1 with c->err. The stretches
 * are released to the other thread (pass_ready) whatever the outcome. */
int pass_plan(struct sctx *c, struct pass *ps, struct pass_sums *sums);
/* Read stretches until none is left, on `store` (the caller's connection): the main thread from
 * the front, the process rows' thread from the back. */
void pass_read(struct rt_store *store, struct pass *ps, int from_back);
/* Wait for every stretch, read again on the main connection what the other failed, and merge
 * them in order into sums; the statistics of each series. 0, or -1 with c->err. */
int pass_finish(struct sctx *c, struct pass *ps, struct pass_sums *sums);
/* Release the stretches (none when planning failed), so a waiting thread finds them. */
void pass_ready(struct pass *ps);
void pass_free(struct pass *ps, struct pass_sums *sums);

/* --- the process rows (top.c) ---------------------------------------------------------------- */

/* Per process of the runs: CPU time summed, peak PSS. */
struct top_acc {
    int64_t id, pid;
    double cpu_s, pss_kib;
    int has_pss;
};

struct top {
    struct top_acc *acc;
    size_t n, cap;
    struct rt_map slot;    /* processes.id -> index into acc */
    struct rt_store *scan; /* the thread's own connection */
    struct pass *pass;     /* the samples' pass, whose last stretches the thread reads too */
    int64_t *runs;
    size_t nruns;
    int threaded, rc;
    pthread_t th;
};

/* The runs' processes, then the scan of their rows on a thread with its own connection (which
 * then helps with the samples' pass `ps`), or at once where no thread can be had. 0, or -1. */
int top_start(struct sctx *c, struct top *t, struct pass *ps);
void top_wait(struct top *t);
void top_free(struct top *t);
/* The busiest five by CPU and by peak PSS, the groups by name, the tree's CPU time. */
int top_lists(struct sctx *c, struct top *t, struct rt_summary *s);
int top_groups(struct sctx *c, struct top *t, struct rt_summary_groups *g);
/* The per-process CPU seconds added up */
double top_cpu_total(const struct top *t);

#endif
