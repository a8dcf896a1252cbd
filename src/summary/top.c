/* top.c - the tree's busiest processes (internal.h): CPU time summed and peak PSS per process,
 * from one pass over the runs' process rows in primary-key order (a run's sample ids are one
 * range), kept for the runs' processes only; then the five largest of each, and the processes
 * grouped by name. (A GROUP BY in SQL sorts every row: 3 s and 180 MB for a million samples of a
 * 3-process tree.) The pass runs on a thread with its own read-only connection while the
 * samples are read, so the two reads overlap; once done, the thread reads the samples' last
 * stretches (pass.c). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

/* The process rows of the runs' sample ids, lo to hi, added up per process: on the thread's
 * connection and in its one snapshot. 0, or -1. */
static int top_scan_rows(struct top *t)
{
    int64_t lo = 0, hi = 0;
    struct rt_store_rows *r = rt_store_query(t->scan, RT_Q_SUMMARY_SAMPLE_IDS);
    if (!r)
        return -1;
    for (size_t i = 0; i < t->nruns; i++) {
        rt_store_rows_reset(r);
        rt_store_rows_bind_i(r, 1, t->runs[i]);
        if (rt_store_rows_next(r) != 1) {
            rt_store_rows_close(r);
            return -1;
        }
        int64_t a = rt_store_rows_i(r, 0), b = rt_store_rows_i(r, 1);
        if (a == RT_NA)
            continue; /* a run without samples */
        lo = lo == 0 || a < lo ? a : lo;
        hi = b > hi ? b : hi;
    }
    rt_store_rows_close(r);
    if (!(r = rt_store_query(t->scan, RT_Q_SUMMARY_PROCESS_ROWS)))
        return -1;
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
    rt_store_rows_close(r);
    return rc == 0 ? 0 : -1;
}

static void *top_scan(void *arg)
{
    struct top *t = arg;
    rt_store_read_begin(t->scan);
    /* no tree: no process rows, only the samples' stretches */
    t->rc = t->n == 0 ? 0 : top_scan_rows(t);
    if (t->pass) /* then the samples' last stretches, while the main thread reads the first */
        pass_read(t->scan, t->pass, 1);
    rt_store_read_end(t->scan);
    rt_store_close(t->scan);
    t->scan = NULL;
    return NULL;
}

int top_start(struct sctx *c, struct top *t, struct pass *ps)
{
    rt_map_init(&t->slot, 64);
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_PROCESSES, 2, 1);
    if (!r)
        return -1;
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        struct top_acc *a = RT_PUSH(t->acc, t->n, t->cap);
        memset(a, 0, sizeof(*a));
        a->id = rt_store_rows_i(r, 0);
        a->pid = rt_store_rows_i(r, 1);
        rt_map_put(&t->slot, (uint64_t)a->id, (int64_t)(t->n - 1));
    }
    if (summary_rows_done(c, r, rc) != 0)
        return -1;
    t->runs = c->ids;
    t->nruns = c->nruns;
    if (rt_store_open_second(c->store, &t->scan) != 0) {
        t->rc = t->n ? -1 : 0; /* top_lists says so where there is a tree */
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

void top_wait(struct top *t)
{
    if (t->threaded)
        pthread_join(t->th, NULL);
    t->threaded = 0;
}

void top_free(struct top *t)
{
    top_wait(t);
    free(t->acc);
    rt_map_free(&t->slot);
}

double top_cpu_total(const struct top *t)
{
    double total = 0;
    for (size_t i = 0; i < t->n; i++)
        total += t->acc[i].cpu_s;
    return total;
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

/* The best RT_SUMMARY_TOP of t by `better` (those without PSS left out for by_pss), into out
 * with their names: five rounds of "the best one not taken yet". */
static int top_pick(struct sctx *c, struct top *t, struct rt_store_rows *name, int pss,
                    struct rt_summary_proc *out)
{
    int (*better)(const struct top_acc *, const struct top_acc *) = pss ? by_pss : by_cpu;
    size_t taken[RT_SUMMARY_TOP];
    int r;
    for (r = 0; r < RT_SUMMARY_TOP; r++) {
        size_t best = t->n;
        for (size_t i = 0; i < t->n; i++) {
            int used = 0;
            for (int u = 0; u < r; u++)
                used |= taken[u] == i;
            if (!used && (!pss || t->acc[i].has_pss) &&
                (best == t->n || better(&t->acc[i], &t->acc[best])))
                best = i;
        }
        if (best == t->n)
            break;
        taken[r] = best;
        const struct top_acc *a = &t->acc[best];
        rt_store_rows_reset(name);
        rt_store_rows_bind_i(name, 1, a->id);
        int rc = rt_store_rows_next(name);
        if (rc < 0)
            return summary_db_fail(c);
        out[r].pid = (double)a->pid;
        out[r].name =
            rc == 1 && rt_store_rows_t(name, 0) ? xstrdup(rt_store_rows_t(name, 0)) : NULL;
        out[r].value = rt_py_round(pss ? a->pss_kib / 1024.0 : a->cpu_s, 3);
    }
    return r;
}

int top_lists(struct sctx *c, struct top *t, struct rt_summary *s)
{
    top_wait(t);
    if (t->rc != 0) {
        snprintf(c->err, c->errlen, "cannot read the process rows of the database");
        return -1;
    }
    struct rt_store_rows *name = summary_query(c, RT_Q_SUMMARY_PROCESS_NAME, 1, 0);
    if (!name)
        return -1;
    s->top.ncpu = top_pick(c, t, name, 0, s->top.by_cpu);
    s->top.npss = s->top.ncpu < 0 ? -1 : top_pick(c, t, name, 1, s->top.by_pss);
    rt_store_rows_close(name);
    if (s->top.ncpu < 0 || s->top.npss < 0) {
        s->top.ncpu = s->top.npss = 0;
        return -1;
    }
    return 0;
}

/* --- the processes grouped by name ------------------------------------------------------------
 * How many, their CPU time together, the largest peak PSS of any one of them (peaks of
 * different moments do not add up), and the command line of the busiest one (argv joined with
 * spaces); its pid and parent where the group is one process. At most RT_SUMMARY_GROUPS. */
struct group {
    const char *name;
    size_t count, rep; /* rep: the busiest member, an index into the members */
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

/* The runs' processes of the tree, sorted by name. */
static int read_members(struct sctx *c, struct top *t, struct member **out, size_t *n)
{
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_PROCESS_MEMBERS, 4, 1);
    if (!r)
        return -1;
    struct member *m = NULL;
    size_t cap = 0;
    *n = 0;
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        int64_t k;
        if (!rt_map_get(&t->slot, (uint64_t)rt_store_rows_i(r, 0), &k))
            continue;
        struct member *x = RT_PUSH(m, *n, cap);
        x->acc = (size_t)k;
        x->name = xstrdup(rt_store_rows_t(r, 1));
        x->has_ppid = rt_store_rows_type(r, 2) != RT_STORE_NULL;
        x->ppid = x->has_ppid ? rt_store_rows_i(r, 2) : 0;
        const char *cmd = rt_store_rows_t(r, 3);
        x->command = cmd ? xstrdup(cmd) : NULL;
    }
    *out = m;
    if (summary_rows_done(c, r, rc) != 0)
        return -1;
    if (*n)
        qsort(m, *n, sizeof(*m), member_cmp);
    return 0;
}

/* Members of one name in one group each, its busiest member its representative. */
static struct group *make_groups(const struct top *t, const struct member *m, size_t n, size_t *ng)
{
    struct group *g = NULL;
    size_t gcap = 0;
    *ng = 0;
    for (size_t i = 0; i < n; i++) {
        const struct top_acc *a = &t->acc[m[i].acc];
        struct group *cur = *ng ? &g[*ng - 1] : NULL;
        if (!cur || strcmp(cur->name, m[i].name) != 0) {
            cur = RT_PUSH(g, *ng, gcap);
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
    return g;
}

int top_groups(struct sctx *c, struct top *t, struct rt_summary_groups *out)
{
    struct member *m = NULL;
    size_t n = 0, ng = 0;
    int rc = read_members(c, t, &m, &n);
    struct group *g = rc == 0 ? make_groups(t, m, n, &ng) : NULL;
    out->processes = (double)n;
    /* RT_SUMMARY_GROUPS rounds of "the busiest group not taken yet" */
    for (int k = 0; rc == 0 && k < RT_SUMMARY_GROUPS; k++) {
        size_t best = ng;
        for (size_t i = 0; i < ng; i++)
            if (g[i].count && (best == ng || g[i].cpu_s > g[best].cpu_s))
                best = i;
        if (best == ng)
            break;
        const struct group *x = &g[best];
        const struct member *rep = &m[x->rep];
        struct rt_summary_group *o = &out->g[out->n++];
        o->name = xstrdup(x->name);
        o->count = (double)x->count;
        o->cpu_s = rt_py_round(x->cpu_s, 3);
        o->pss_max_mib = x->has_pss ? rt_py_round(x->pss_kib / 1024.0, 3) : RT_NAN;
        o->pid = x->count == 1 ? (double)t->acc[rep->acc].pid : RT_NAN;
        o->ppid = x->count == 1 && rep->has_ppid ? (double)rep->ppid : RT_NAN;
        o->command = rep->command ? xstrdup(rep->command) : NULL;
        g[best].count = 0; /* taken */
    }
    for (size_t i = 0; i < n; i++) {
        free(m[i].name);
        free(m[i].command);
    }
    free(m);
    free(g);
    return rc;
}
