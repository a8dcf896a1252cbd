/* cluster.c - one Slurm job across its nodes (cluster.h): per-node rows, the job's total, the
 * sbatch options for next time. */
#include "rtrack/summary/cluster.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/jsonw.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/reco.h"
#include "internal.h"

#define HEADROOM_MEM  1.2 /* as the run's recommendation (summary.c) */
#define HEADROOM_TIME 1.5 /* --time: the longest wall time x this, whole minutes */

static double vmax(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : fmax(a, b);
}

static double vsum(double a, double b)
{
    return isnan(a) ? b : isnan(b) ? a : a + b;
}

static void copy_t(char *dst, size_t n, const char *v)
{
    snprintf(dst, n, "%s", v ? v : "");
}

/* The columns of the runs query (sql/queries/cluster.sql) */
enum {
    C_JOB,
    C_NODE,
    C_STEP,
    C_T0,
    C_T1,
    C_CPU,
    C_CPU_FROM,
    C_GPUS,
    C_NTASKS,
    C_NNODES,
    C_LIMIT,
    C_ARRAY_JOB,
    C_ARRAY_TASK,
    C_SL_CPUS,
    C_SL_MEM_NODE,
    C_SL_MEM_CPU,
    C_CG_QUOTA,
    C_CG_CPUSET,
    C_CG_MEM,
    C_CG_PATH,
    C_CG_PEAK,
    C_PROC_PEAK,
    C_EXIT_CODE,
    C_EXIT_SIGNAL,
    C_OOM,
    C_STATE,
    C_MEM_SRC
};

/* A figure and where it came from. */
struct pick {
    double v;
    const char *from;
};

/* The first known of n candidates, or (tightest) the smallest known. */
static struct pick pick_of(const struct pick *c, int n, int tightest)
{
    struct pick p = {RT_NAN, ""};
    for (int i = 0; i < n; i++)
        if (!isnan(c[i].v) && c[i].v > 0 && (isnan(p.v) || (tightest && c[i].v < p.v))) {
            p = c[i];
            if (!tightest)
                break;
        }
    return p;
}

/* A run's allocation: for a step's own cgroup (the plugin's record --cgroup) the tightest of
 * what the kernel enforces and what Slurm says (the step's cpuset is its CPUs on this node, its
 * limit its memory; a SLURM_* of the job's environment may be another node's); else Slurm's
 * first, the cgroup's where Slurm says nothing (rtrack run in a container). */
static void run_alloc(struct rt_store_rows *r, struct pick *cpus, struct pick *mem)
{
    int step = rt_store_rows_t(r, C_CG_PATH) != NULL;
    double sl_cpus = rt_store_rows_f(r, C_SL_CPUS);
    struct pick sc = {sl_cpus, "SLURM_CPUS_ON_NODE"};
    struct pick cq = {rt_store_rows_f(r, C_CG_QUOTA), "cgroup CPU quota"};
    struct pick cs = {rt_store_rows_f(r, C_CG_CPUSET), "cgroup cpuset"};
    /* (a tie goes to the first: the step cgroup's, what the kernel holds the step to) */
    struct pick pc[3] = {step ? cs : sc, cq, step ? sc : cs};
    *cpus = pick_of(pc, 3, step);
    struct pick sn = {rt_store_rows_f(r, C_SL_MEM_NODE), "SLURM_MEM_PER_NODE"};
    struct pick sp = {rt_store_rows_f(r, C_SL_MEM_CPU) * sl_cpus, "SLURM_MEM_PER_CPU"};
    struct pick cm = {rt_store_rows_f(r, C_CG_MEM), "cgroup memory limit"};
    struct pick pm[3] = {step ? cm : sn, step ? sn : sp, step ? sp : cm};
    *mem = pick_of(pm, 3, step);
}

/* The caveat of how a run's step ended, added once to the job's list. */
static void run_caveat(struct rt_cluster *j, struct rt_store_rows *r, const char *node)
{
    const char *step = rt_store_rows_t(r, C_STEP), *state = rt_store_rows_t(r, C_STATE);
    double oom = rt_store_rows_f(r, C_OOM), sig = rt_store_rows_f(r, C_EXIT_SIGNAL);
    double code = rt_store_rows_f(r, C_EXIT_CODE), limit = rt_store_rows_f(r, C_CG_MEM);
    struct rt_cluster_caveat c;
    memset(&c, 0, sizeof(c));
    copy_t(c.node, sizeof(c.node), node);
    copy_t(c.step, sizeof(c.step), step);
    char a[48], b[48];
    if (!isnan(oom) && oom > 0) {
        snprintf(c.kind, sizeof(c.kind), "oom");
        snprintf(c.text, sizeof(c.text),
                 "step %s on %s: %s killed by the OOM killer at its cgroup's memory limit%s%s: "
                 "its memory peak is a lower bound of what it needs",
                 step, node, rt_fmt_count(a, sizeof(a), oom, "process"), isnan(limit) ? "" : " of ",
                 isnan(limit) ? "" : rt_fmt_mib(b, sizeof(b), limit));
    } else if (state && (!strcmp(state, "CANCELLED") || !strcmp(state, "TIMEOUT"))) {
        int cancel = !strcmp(state, "CANCELLED");
        snprintf(c.kind, sizeof(c.kind), "%s", cancel ? "cancelled" : "timeout");
        c.node[0] = c.step[0] = '\0';
        snprintf(c.text, sizeof(c.text),
                 "the job was %s (Slurm: %s): its figures cover only the part that ran%s",
                 cancel ? "cancelled" : "stopped at its time limit", state,
                 cancel ? "" : "; ask for more --time");
    } else if (!isnan(sig)) {
        snprintf(c.kind, sizeof(c.kind), "signal");
        snprintf(c.text, sizeof(c.text), "step %s on %s: a task was killed by %s%s%s", step, node,
                 rt_signal_name((int)sig, a, sizeof(a)), state ? " (Slurm: " : "",
                 state ? state : "");
        if (state)
            strncat(c.text, ")", sizeof(c.text) - strlen(c.text) - 1);
    } else if (!isnan(code) && code != 0) {
        snprintf(c.kind, sizeof(c.kind), "failed");
        snprintf(c.text, sizeof(c.text), "step %s on %s: a task exited with code %g", step, node,
                 code);
    } else {
        return;
    }
    for (size_t i = 0; i < j->ncaveats; i++)
        if (!strcmp(j->caveats[i].text, c.text))
            return;
    if (j->ncaveats < RT_CLUSTER_CAVEATS)
        j->caveats[j->ncaveats++] = c;
}

/* A new node's row for (job, name). */
static struct rt_cluster_node *node_add(struct rt_cluster *j, size_t *cap, const char *job,
                                        const char *name)
{
    if (j->count == *cap) {
        *cap = *cap ? *cap * 2 : 16;
        j->n = xrealloc(j->n, *cap * sizeof(*j->n));
    }
    struct rt_cluster_node *n = &j->n[j->count++];
    memset(n, 0, sizeof(*n));
    copy_t(n->job, sizeof(n->job), job);
    copy_t(n->name, sizeof(n->name), name);
    n->t0 = n->t1 = n->cpu_s = n->a_cpus = n->a_mem = n->a_gpus = RT_NAN;
    n->mem_peak = n->cores_peak = n->gpus_used = RT_NAN;
    n->ntasks = n->num_nodes = n->time_limit = RT_NAN;
    n->cg_peak = n->proc_peak = n->oom_kills = RT_NAN;
    return n;
}

/* A run's row added to its node's figures. */
static void node_run(struct rt_cluster *j, struct rt_cluster_node *n, struct rt_store_rows *r)
{
    const char *step = rt_store_rows_t(r, C_STEP);
    size_t used = strlen(n->steps);
    if (!strstr(n->steps, step) && used + strlen(step) + 2 < sizeof(n->steps))
        snprintf(n->steps + used, sizeof(n->steps) - used, "%s%s", used ? "," : "", step);
    n->runs++;
    double t0 = rt_store_rows_f(r, C_T0), t1 = rt_store_rows_f(r, C_T1);
    n->t0 = isnan(n->t0) ? t0 : fmin(n->t0, t0);
    n->t1 = vmax(n->t1, t1);
    double cpu = rt_store_rows_f(r, C_CPU);
    n->cpu_s = vsum(n->cpu_s, cpu);
    if (!isnan(cpu))
        copy_t(n->cpu_from, sizeof(n->cpu_from), rt_store_rows_t(r, C_CPU_FROM));
    struct pick cpus, mem;
    run_alloc(r, &cpus, &mem);
    if (!isnan(cpus.v) && (isnan(n->a_cpus) || cpus.v > n->a_cpus)) {
        n->a_cpus = cpus.v;
        copy_t(n->cpus_from, sizeof(n->cpus_from), cpus.from);
    }
    if (!isnan(mem.v) && (isnan(n->a_mem) || mem.v > n->a_mem)) {
        n->a_mem = mem.v;
        copy_t(n->mem_from, sizeof(n->mem_from), mem.from);
    }
    const char *msrc = rt_store_rows_t(r, C_MEM_SRC);
    copy_t(n->peak_from, sizeof(n->peak_from), msrc && !strcmp(msrc, "rss") ? "rss" : "pss");
    n->a_gpus = vmax(n->a_gpus, rt_store_rows_f(r, C_GPUS));
    n->ntasks = vmax(n->ntasks, rt_store_rows_f(r, C_NTASKS));
    n->num_nodes = vmax(n->num_nodes, rt_store_rows_f(r, C_NNODES));
    n->time_limit = vmax(n->time_limit, rt_store_rows_f(r, C_LIMIT));
    n->cg_peak = vmax(n->cg_peak, rt_store_rows_f(r, C_CG_PEAK));
    n->proc_peak = vmax(n->proc_peak, rt_store_rows_f(r, C_PROC_PEAK));
    n->oom_kills = vsum(n->oom_kills, rt_store_rows_f(r, C_OOM));
    copy_t(n->array_job, sizeof(n->array_job), rt_store_rows_t(r, C_ARRAY_JOB));
    copy_t(n->array_task, sizeof(n->array_task), rt_store_rows_t(r, C_ARRAY_TASK));
    run_caveat(j, r, n->name);
}

static int read_nodes(struct rt_store *s, const char *id, struct rt_cluster *j, char *err,
                      size_t errlen)
{
    struct rt_store_rows *r = rt_store_query(s, RT_Q_CLUSTER_RUNS);
    if (!r) {
        snprintf(err, errlen, "cannot read the runs: %s", rt_store_error(s));
        return -1;
    }
    rt_store_rows_bind_t(r, 1, id);
    size_t cap = 0;
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        const char *job = rt_store_rows_t(r, C_JOB), *name = rt_store_rows_t(r, C_NODE);
        struct rt_cluster_node *n = j->count ? &j->n[j->count - 1] : NULL;
        if (!n || strcmp(n->job, job ? job : "") || strcmp(n->name, name))
            n = node_add(j, &cap, job, name);
        node_run(j, n, r);
    }
    rt_store_rows_close(r);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the runs: %s", rt_store_error(s));
        return -1;
    }
    if (!(r = rt_store_query(s, RT_Q_CLUSTER_PEAKS))) {
        snprintf(err, errlen, "cannot read the samples: %s", rt_store_error(s));
        return -1;
    }
    rt_store_rows_bind_t(r, 1, id);
    while ((rc = rt_store_rows_next(r)) == 1) {
        const char *job = rt_store_rows_t(r, 0);
        char jb[32];
        copy_t(jb, sizeof(jb), job);
        for (size_t i = 0; i < j->count; i++)
            if (!strcmp(j->n[i].job, jb) && !strcmp(j->n[i].name, rt_store_rows_t(r, 1))) {
                j->n[i].mem_peak = rt_store_rows_f(r, 2);
                j->n[i].cores_peak = rt_store_rows_f(r, 3);
                j->n[i].gpus_used = rt_store_rows_f(r, 4);
            }
    }
    rt_store_rows_close(r);
    if (rc < 0) {
        snprintf(err, errlen, "cannot read the samples: %s", rt_store_error(s));
        return -1;
    }
    return 0;
}

/* The figures derived from the rows: each job id's wall time, the efficiencies' parts, the
 * recommendations. */
static void decide(struct rt_cluster *j)
{
    j->t0 = j->t1 = j->cpu_s = j->a_cpus = j->a_mem = j->mem_peak = j->mem_peak_max = RT_NAN;
    j->time_limit = RT_NAN;
    j->a_core_s = 0;
    j->wall_max = 0;
    int all_alloc = 1, per_node_max = 0;
    double cpus_node = 0, tasks = RT_NAN, nodes = RT_NAN;
    for (size_t i = 0; i < j->count; i++) {
        struct rt_cluster_node *n = &j->n[i];
        double t0 = n->t0, t1 = n->t1;
        int count = 0;
        for (size_t k = 0; k < j->count; k++)
            if (!strcmp(j->n[k].job, n->job)) {
                t0 = fmin(t0, j->n[k].t0);
                t1 = fmax(t1, j->n[k].t1);
                count++;
            }
        n->job_wall = t1 - t0;
        per_node_max = count > per_node_max ? count : per_node_max;
        j->wall_max = fmax(j->wall_max, n->job_wall);
        j->t0 = isnan(j->t0) ? n->t0 : fmin(j->t0, n->t0);
        j->t1 = vmax(j->t1, n->t1);
        j->runs += n->runs;
        j->cpu_s = vsum(j->cpu_s, n->cpu_s);
        j->a_cpus = vsum(j->a_cpus, n->a_cpus);
        j->a_mem = vsum(j->a_mem, n->a_mem);
        j->mem_peak = vsum(j->mem_peak, n->mem_peak);
        j->mem_peak_max = vmax(j->mem_peak_max, n->mem_peak);
        j->time_limit = vmax(j->time_limit, n->time_limit);
        if (isnan(n->a_cpus))
            all_alloc = 0;
        else
            j->a_core_s += n->a_cpus * n->job_wall;
        double mean = n->job_wall > 0 ? n->cpu_s / n->job_wall : RT_NAN;
        n->rec_cpus = isnan(mean) ? 1 : (int)fmax(1, ceil(rt_py_round(mean, 2)));
        n->rec_mem = isnan(n->mem_peak) ? 0 : rt_round_memory(n->mem_peak * HEADROOM_MEM);
        n->rec_gpus = isnan(n->gpus_used) ? 0 : (int)ceil(n->gpus_used);
        cpus_node = fmax(cpus_node, n->rec_cpus);
        j->memory = n->rec_mem > j->memory ? n->rec_mem : j->memory;
        j->gpus = n->rec_gpus > j->gpus ? n->rec_gpus : j->gpus;
        tasks = vmax(tasks, n->ntasks);
        nodes = vmax(nodes, n->num_nodes);
    }
    if (!all_alloc)
        j->a_core_s = RT_NAN;
    /* the nodes a job asked for: Slurm's count, else the nodes it was seen on */
    j->nodes_per_job = !isnan(nodes) && nodes > 0 ? (int)nodes : per_node_max;
    j->ntasks_per_node = !isnan(tasks) && tasks > 0
                             ? (int)ceil(tasks / (j->nodes_per_job ? j->nodes_per_job : 1))
                             : 1;
    j->cpus_per_task = (int)fmax(1, ceil(cpus_node / j->ntasks_per_node));
}

static double pct(double used, double alloc)
{
    return !isnan(used) && !isnan(alloc) && alloc > 0 ? rt_py_round(100.0 * used / alloc, 1)
                                                      : RT_NAN;
}

static double time_rec(const struct rt_cluster *j)
{
    return ceil(j->wall_max * HEADROOM_TIME / 60.0) * 60.0;
}

static void sbatch_text(const struct rt_cluster *j, char *out, size_t n)
{
    long min = (long)fmax(1, time_rec(j) / 60.0);
    char mem[32] = "";
    if (j->memory > 0)
        snprintf(mem, sizeof(mem), j->memory % 1024 ? " --mem=%ldM" : " --mem=%ldG",
                 j->memory % 1024 ? j->memory : j->memory / 1024);
    char gres[32] = "";
    if (j->gpus > 0)
        snprintf(gres, sizeof(gres), " --gres=gpu:%d", j->gpus);
    snprintf(out, n, "--nodes=%d --ntasks-per-node=%d --cpus-per-task=%d%s%s --time=%ld:%02ld:00",
             j->nodes_per_job, j->ntasks_per_node, j->cpus_per_task, mem, gres, min / 60, min % 60);
}

int rt_cluster_compute(struct rt_store *s, const char *id, struct rt_cluster *j, int *bad,
                       char *err, size_t errlen)
{
    memset(j, 0, sizeof(*j));
    snprintf(j->slurm_job, sizeof(j->slurm_job), "%s", id);
    *bad = 0;
    rt_store_read_begin(s);
    int rc = read_nodes(s, id, j, err, errlen);
    rt_store_read_end(s);
    if (rc != 0)
        return -1;
    if (!j->count) {
        snprintf(err, errlen, "no run of Slurm job %s", id);
        *bad = 1;
        return -1;
    }
    decide(j);
    sbatch_text(j, j->sbatch, sizeof(j->sbatch));
    return 0;
}

void rt_cluster_free(struct rt_cluster *c)
{
    free(c->n);
    memset(c, 0, sizeof(*c));
}

void rt_cluster_row_of(const struct rt_cluster *c, const struct rt_cluster_node *n,
                       struct rt_cluster_row *r)
{
    if (n) {
        *r = (struct rt_cluster_row){rt_py_round(n->t1 - n->t0, 2),
                                     rt_py_round(n->cpu_s, 2),
                                     n->a_cpus,
                                     pct(n->cpu_s, n->a_cpus * n->job_wall),
                                     rt_py_round(n->mem_peak, 2),
                                     n->a_mem,
                                     pct(n->mem_peak, n->a_mem)};
    } else {
        *r = (struct rt_cluster_row){
            rt_py_round(c->t1 - c->t0, 2), rt_py_round(c->cpu_s, 2),    c->a_cpus,
            pct(c->cpu_s, c->a_core_s),    rt_py_round(c->mem_peak, 2), c->a_mem,
            pct(c->mem_peak, c->a_mem)};
    }
}

void rt_cluster_write_json(const struct rt_cluster *c, struct rt_buf *b)
{
    const struct rt_cluster j = *c;
    struct rt_cluster_row row;
    struct rt_jw w;
    rt_jw_init(&w, b);
    rt_jw_object(&w);
    rt_jw_kv_str(&w, "slurm_job", j.slurm_job);
    rt_jw_kv_array(&w, "nodes");
    for (size_t i = 0; i < j.count; i++) {
        const struct rt_cluster_node *n = &j.n[i];
        rt_cluster_row_of(c, n, &row);
        rt_jw_object(&w);
        rt_jw_kv_str(&w, "job_id", n->job);
        rt_jw_kv_str(&w, "array_job_id", *n->array_job ? n->array_job : NULL);
        rt_jw_kv_str(&w, "array_task_id", *n->array_task ? n->array_task : NULL);
        rt_jw_kv_str(&w, "node", n->name);
        rt_jw_kv_str(&w, "steps", n->steps);
        rt_jw_kv_num(&w, "runs", n->runs);
        rt_jw_kv_num(&w, "wall_s", row.wall_s);
        rt_jw_kv_num(&w, "cpu_s", row.cpu_s);
        rt_jw_kv_num(&w, "mean_cores",
                     n->job_wall > 0 ? rt_py_round(n->cpu_s / n->job_wall, 2) : RT_NAN);
        rt_jw_kv_num(&w, "peak_cores", rt_py_round(n->cores_peak, 2));
        rt_jw_kv_num(&w, "memory_peak_mib", row.memory_peak_mib);
        rt_jw_kv_num(&w, "gpus_used", n->gpus_used);
        rt_jw_kv_num(&w, "alloc_cpus", row.alloc_cpus);
        rt_jw_kv_num(&w, "alloc_memory_mib", row.alloc_memory_mib);
        rt_jw_kv_num(&w, "alloc_gpus", n->a_gpus);
        rt_jw_kv_num(&w, "cpu_eff_pct", row.cpu_eff_pct);
        rt_jw_kv_num(&w, "memory_eff_pct", row.memory_eff_pct);
        rt_jw_kv_str(&w, "cpu_from", *n->cpu_from ? n->cpu_from : NULL);
        rt_jw_kv_str(&w, "alloc_cpus_from", *n->cpus_from ? n->cpus_from : NULL);
        rt_jw_kv_str(&w, "alloc_memory_from", *n->mem_from ? n->mem_from : NULL);
        rt_jw_kv_str(&w, "memory_peak_from", isnan(n->mem_peak) ? NULL : n->peak_from);
        rt_jw_kv_num(&w, "cgroup_memory_peak_mib", rt_py_round(n->cg_peak, 2));
        rt_jw_kv_num(&w, "largest_process_peak_mib", rt_py_round(n->proc_peak, 2));
        rt_jw_kv_num(&w, "oom_kills", n->oom_kills);
        rt_jw_kv_object(&w, "recommended");
        rt_jw_kv_num(&w, "cpus", n->rec_cpus);
        rt_jw_kv_num(&w, "memory_mib", n->rec_mem ? (double)n->rec_mem : RT_NAN);
        rt_jw_kv_num(&w, "gpus", n->rec_gpus);
        rt_jw_end(&w);
        rt_jw_end(&w);
    }
    rt_jw_end(&w);
    rt_cluster_row_of(c, NULL, &row);
    rt_jw_kv_object(&w, "job");
    rt_jw_kv_num(&w, "nodes", (double)j.count);
    rt_jw_kv_num(&w, "runs", j.runs);
    rt_jw_kv_num(&w, "wall_s", row.wall_s);
    rt_jw_kv_num(&w, "time_limit_s", j.time_limit);
    rt_jw_kv_num(&w, "cpu_s", row.cpu_s);
    rt_jw_kv_num(&w, "alloc_cpus", row.alloc_cpus);
    rt_jw_kv_num(&w, "alloc_memory_mib", row.alloc_memory_mib);
    rt_jw_kv_num(&w, "memory_peak_mib", row.memory_peak_mib);
    rt_jw_kv_num(&w, "memory_peak_max_node_mib", rt_py_round(j.mem_peak_max, 2));
    rt_jw_kv_num(&w, "cpu_eff_pct", row.cpu_eff_pct);
    rt_jw_kv_num(&w, "memory_eff_pct", row.memory_eff_pct);
    rt_jw_kv_object(&w, "recommended");
    rt_jw_kv_num(&w, "nodes", j.nodes_per_job);
    rt_jw_kv_num(&w, "ntasks_per_node", j.ntasks_per_node);
    rt_jw_kv_num(&w, "cpus_per_task", j.cpus_per_task);
    rt_jw_kv_num(&w, "memory_mib", j.memory ? (double)j.memory : RT_NAN);
    rt_jw_kv_num(&w, "gpus", j.gpus);
    rt_jw_kv_num(&w, "time_s", time_rec(&j));
    rt_jw_end(&w);
    rt_jw_kv_str(&w, "sbatch", j.sbatch);
    rt_jw_end(&w);
    rt_jw_kv_array(&w, "caveats");
    for (size_t i = 0; i < j.ncaveats; i++) {
        const struct rt_cluster_caveat *cv = &j.caveats[i];
        rt_jw_object(&w);
        rt_jw_kv_str(&w, "kind", cv->kind);
        rt_jw_kv_str(&w, "node", *cv->node ? cv->node : NULL);
        rt_jw_kv_str(&w, "step", *cv->step ? cv->step : NULL);
        rt_jw_kv_str(&w, "text", cv->text);
        rt_jw_end(&w);
    }
    rt_jw_end(&w);
    rt_jw_end(&w);
}

/* "42.0%", or "-" */
static const char *pct_text(char *b, size_t n, double v)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.1f%%", v);
    return b;
}

static const char *num_text(char *b, size_t n, double v)
{
    if (isnan(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%g", rt_py_round(v, 2));
    return b;
}

static const char *mib_text(char *b, size_t n, double v)
{
    return isnan(v) ? (snprintf(b, n, "-"), b) : rt_fmt_mib(b, n, v);
}

/* A value of the runs' (a node's name, its steps, an array task: what SLURMD_NODENAME and
 * SLURM_STEP_ID said to `rtrack run`, anyone's to set) as the text shows it: printable (no
 * escape sequence reaches the terminal), and in markdown escaped (no HTML, no cell of its own). */
static const char *shown(char *out, size_t n, const char *v, int md)
{
    char plain[256];
    snprintf(plain, sizeof(plain), "%s", v);
    rt_utf8_printable(plain, 0);
    if (md)
        summary_md_text(out, n, plain);
    else
        snprintf(out, n, "%s", plain);
    return out;
}

/* "what: A (n1, n2); B (n3)": the nodes grouped by where a figure of theirs came from */
static void sources_line(const struct rt_cluster *c, FILE *f, const char *what, size_t off, int md)
{
    const char *seen[16];
    size_t nseen = 0;
    for (size_t i = 0; i < c->count && nseen < RT_ARRAY_LEN(seen); i++) {
        const char *src = (const char *)&c->n[i] + off;
        int dup = 0;
        for (size_t k = 0; k < nseen; k++)
            dup |= !strcmp(seen[k], src);
        if (!dup && *src)
            seen[nseen++] = src;
    }
    if (!nseen)
        return;
    char v[600];
    fprintf(f, "%s%s:", md ? "- " : "  ", what);
    for (size_t k = 0; k < nseen; k++) {
        fprintf(f, "%s %s (", k ? ";" : "", shown(v, sizeof(v), seen[k], md));
        for (size_t i = 0, m = 0; i < c->count; i++)
            if (!strcmp((const char *)&c->n[i] + off, seen[k]))
                fprintf(f, "%s%s", m++ ? ", " : "", shown(v, sizeof(v), c->n[i].name, md));
        fprintf(f, ")");
    }
    fprintf(f, "\n");
}

/* Where each figure came from, the step cgroups' own peaks, and the caveats. */
static void write_sources(const struct rt_cluster *c, FILE *f, int md)
{
    int any = 0;
    for (size_t i = 0; i < c->count; i++)
        any |= *c->n[i].cpu_from || *c->n[i].cpus_from || *c->n[i].mem_from;
    if (any)
        fprintf(f, "\nfigures from:\n");
    sources_line(c, f, "CPU time", offsetof(struct rt_cluster_node, cpu_from), md);
    sources_line(c, f, "cores allocated", offsetof(struct rt_cluster_node, cpus_from), md);
    sources_line(c, f, "memory allocated", offsetof(struct rt_cluster_node, mem_from), md);
    sources_line(c, f, "memory peak", offsetof(struct rt_cluster_node, peak_from), md);
    char a[48], b[48], v[1600];
    for (size_t i = 0; i < c->count; i++)
        if (any && (c->n[i].cg_peak > 0 || c->n[i].proc_peak > 0))
            fprintf(f, "%s%s: the step cgroup's own peak %s, the largest process %s\n",
                    md ? "- " : "  ", shown(v, sizeof(v), c->n[i].name, md),
                    mib_text(a, sizeof(a), c->n[i].cg_peak),
                    mib_text(b, sizeof(b), c->n[i].proc_peak));
    if (c->ncaveats)
        fprintf(f, "\ncaveats:\n");
    /* a caveat names nodes and steps too */
    for (size_t i = 0; i < c->ncaveats; i++)
        fprintf(f, "%s%s\n", md ? "- " : "  - ", shown(v, sizeof(v), c->caveats[i].text, md));
}

void rt_cluster_write_text(const struct rt_cluster *c, FILE *f, int md)
{
    const struct rt_cluster j = *c;
    char a[8][48], id[600];
    fprintf(f, "%sslurm job %s: %s, %s, wall %s", md ? "## " : "",
            shown(id, sizeof(id), j.slurm_job, md),
            rt_fmt_count(a[0], sizeof(a[0]), (double)j.count, "node"),
            rt_fmt_count(a[1], sizeof(a[1]), j.runs, "run"),
            rt_fmt_duration(a[2], sizeof(a[2]), j.t1 - j.t0));
    if (!isnan(j.time_limit))
        fprintf(f, " of a %s limit", rt_fmt_duration(a[3], sizeof(a[3]), j.time_limit));
    fprintf(f, "\n\n");
    const char *hdr[] = {"node",    "steps",    "CPU time",  "cores",   "alloc",
                         "CPU eff", "mem peak", "mem alloc", "mem eff", "next"};
    if (md)
        fprintf(f,
                "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n|---|---|---:|---:|---:|"
                "---:|---:|---:|---:|---|\n",
                hdr[0], hdr[1], hdr[2], hdr[3], hdr[4], hdr[5], hdr[6], hdr[7], hdr[8], hdr[9]);
    else
        fprintf(f, "  %-16s %-12s %9s %6s %6s %8s %11s %11s %8s  %s\n", hdr[0], hdr[1], hdr[2],
                hdr[3], hdr[4], hdr[5], hdr[6], hdr[7], hdr[8], hdr[9]);
    for (size_t i = 0; i <= j.count; i++) {
        const struct rt_cluster_node *n = i < j.count ? &j.n[i] : NULL;
        char name[1300], next[96], node[600], task[600], steps[1600];
        if (n) {
            snprintf(name, sizeof(name), "%s%s%s%s", shown(node, sizeof(node), n->name, md),
                     *n->array_task ? " [" : "", shown(task, sizeof(task), n->array_task, md),
                     *n->array_task ? "]" : "");
            char gpus[48] = "";
            if (n->rec_gpus)
                snprintf(gpus, sizeof(gpus), ", %s",
                         rt_fmt_count(a[6], sizeof(a[6]), n->rec_gpus, "GPU"));
            snprintf(next, sizeof(next), "%s, %s%s",
                     rt_fmt_count(a[5], sizeof(a[5]), n->rec_cpus, "CPU"),
                     mib_text(a[7], sizeof(a[7]), n->rec_mem ? (double)n->rec_mem : RT_NAN), gpus);
        } else {
            snprintf(name, sizeof(name), "job total");
            snprintf(next, sizeof(next), "-");
        }
        shown(steps, sizeof(steps), n ? n->steps : "-", md);
        double cpu = n ? n->cpu_s : j.cpu_s, alloc = n ? n->a_cpus : j.a_cpus;
        double cores = n ? (n->job_wall > 0 ? n->cpu_s / n->job_wall : RT_NAN)
                         : (j.t1 - j.t0 > 0 ? j.cpu_s / (j.t1 - j.t0) : RT_NAN);
        double ceff = n ? pct(n->cpu_s, n->a_cpus * n->job_wall) : pct(j.cpu_s, j.a_core_s);
        double mem = n ? n->mem_peak : j.mem_peak, amem = n ? n->a_mem : j.a_mem;
        rt_fmt_duration(a[0], sizeof(a[0]), cpu);
        if (isnan(cpu))
            snprintf(a[0], sizeof(a[0]), "-");
        num_text(a[1], sizeof(a[1]), cores);
        num_text(a[2], sizeof(a[2]), alloc);
        pct_text(a[3], sizeof(a[3]), ceff);
        mib_text(a[4], sizeof(a[4]), mem);
        mib_text(a[5], sizeof(a[5]), amem);
        pct_text(a[6], sizeof(a[6]), pct(mem, amem));
        if (md)
            fprintf(f, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, steps, a[0],
                    a[1], a[2], a[3], a[4], a[5], a[6], next);
        else
            fprintf(f, "  %-16s %-12s %9s %6s %6s %8s %11s %11s %8s  %s\n", name, steps, a[0], a[1],
                    a[2], a[3], a[4], a[5], a[6], next);
    }
    fprintf(f, "\n%snext time: sbatch %s\n", md ? "- " : "", j.sbatch);
    if (!isnan(j.mem_peak_max))
        fprintf(f,
                "%s(memory: the largest node peaked at %s; --mem is per node, with x%.1f "
                "headroom; --time is the longest wall time x%.1f)\n",
                md ? "- " : "", rt_fmt_mib(a[0], sizeof(a[0]), j.mem_peak_max), HEADROOM_MEM,
                HEADROOM_TIME);
    write_sources(c, f, md);
}

int rt_cluster_json(struct rt_store *s, const char *slurm_job, struct rt_buf *out, int *bad,
                    char *err, size_t errlen)
{
    struct rt_cluster c;
    int rc = rt_cluster_compute(s, slurm_job, &c, bad, err, errlen);
    if (rc == 0)
        rt_cluster_write_json(&c, out);
    rt_cluster_free(&c);
    return rc;
}

int rt_cluster_print(struct rt_store *s, const char *slurm_job, FILE *f, int md, int *bad,
                     char *err, size_t errlen)
{
    struct rt_cluster c;
    int rc = rt_cluster_compute(s, slurm_job, &c, bad, err, errlen);
    if (rc == 0)
        rt_cluster_write_text(&c, f, md);
    rt_cluster_free(&c);
    return rc;
}
