/* summary.c - the compute step (summary.h): a run's or a job's summary read from the database
 * into struct rt_summary, in named phases: pick the runs, start the pass over their process
 * rows (top.c, on a thread) and over their samples (pass.c), read the run's facts, the kernel's
 * figures, the allocation, the memory peak's processes and the CPU pressure, then decide
 * (reco.c). Nothing here writes a character of any output: the renderers (render.h) do. */
#include "rtrack/summary/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rtrack/base/json.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/keeper.h"

const char *const rt_metric_keys[RT_M_N] = {
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
const char *const rt_total_keys[RT_T_N] = {"disk_read_bytes", "disk_write_bytes", "net_recv_bytes",
                                           "net_sent_bytes"};
const char *const rt_summary_meta_keys[RT_SM_N] = {
    "job_name",     "project_name", "stage_name",      "task_name",       "team", "env", "language",
    "orchestrator", "executor",     "external_run_id", "container_image",
};
const char *const rt_spark_keys[RT_SPARK_LINES] = {"cpu_cores", "memory_mib", "disk_io_bytes_per_s",
                                                   "gpu_usage", "cpu_pressure_pct"};

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* --- picking the runs --------------------------------------------------------------------------
 */

static void add_run(struct sctx *c, int64_t id)
{
    *RT_PUSH(c->ids, c->nruns, c->ids_cap) = id;
    char t[32];
    snprintf(t, sizeof(t), "%s%lld", c->nruns > 1 ? "," : "[", (long long)id);
    c->ids_json.len = c->ids_json.len ? c->ids_json.len - 1 : 0; /* the closing bracket */
    rt_buf_puts(&c->ids_json, t);
    rt_buf_puts(&c->ids_json, "]");
    c->last_run = id;
}

/* The run asked for, or every run of the job (--job), oldest first. */
static int pick_runs(struct sctx *c)
{
    const struct rt_summary_opts *o = c->o;
    if (o->figures_only && !o->job) {
        /* the end-of-run line's one run: the plan of the pass says when there is none */
        add_run(c, o->run_id);
        c->run_unchecked = 1;
        return 0;
    }
    struct rt_store_rows *r =
        summary_query(c, o->job ? RT_Q_SUMMARY_JOB_RUNS : RT_Q_SUMMARY_RUN_EXISTS, 1, 0);
    if (!r)
        return -1;
    if (o->job)
        rt_store_rows_bind_t(r, 1, o->job);
    else
        rt_store_rows_bind_i(r, 1, o->run_id);
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1)
        add_run(c, rt_store_rows_i(r, 0));
    if (summary_rows_done(c, r, rc) != 0)
        return -1;
    if (c->nruns == 0) {
        if (o->job)
            snprintf(c->err, c->errlen, "no runs of job '%s' in the database", o->job);
        else
            snprintf(c->err, c->errlen, "no run %lld in the database", (long long)o->run_id);
        return summary_bad_request(c);
    }
    return 0;
}

/* --- the run's facts ---------------------------------------------------------------------------
 */

enum {
    F_ID,
    F_UUID,
    F_MODE,
    F_STATUS,
    F_IN_PROGRESS,
    F_COMMAND,
    F_META,
    F_TAGS = F_META + RT_SM_N,
    F_PID,
    F_EXIT_CODE,
    F_EXIT_SIGNAL,
    F_END_REASON,
    F_STARTED,
    F_ENDED,
    F_DURATION,
    F_SAMPLES,
    F_INTERVAL,
    F_HOSTNAME,
    F_CPU_MODEL,
    F_VCPUS,
    F_MEMORY_MIB,
    F_KERNEL,
    F_OS,
    F_GPU_MODEL,
    F_GPU_COUNT,
    F_GPU_MEMORY_MIB,
    F_MEMORY_SOURCE,
    F_CPU_WAIT_MISSING,
    F_PSI_MISSING,
    F_N
};

/* The newest run's facts and its host's (they stand for a job's). */
static int read_facts(struct sctx *c, struct rt_summary *s)
{
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_FACTS, F_N, 0);
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, c->last_run);
    if (rt_store_rows_next(r) != 1) {
        rt_store_rows_close(r);
        snprintf(c->err, c->errlen, "cannot read the run from the database");
        return -1;
    }
    struct rt_summary_run *run = &s->run;
    run->id = rt_store_rows_f(r, F_ID);
    run->uuid = dup_or_null(rt_store_rows_t(r, F_UUID));
    run->mode = dup_or_null(rt_store_rows_t(r, F_MODE));
    run->status = dup_or_null(rt_store_rows_t(r, F_STATUS));
    run->in_progress = rt_store_rows_i(r, F_IN_PROGRESS) == 1;
    run->command_json = dup_or_null(rt_store_rows_t(r, F_COMMAND));
    for (int i = 0; i < RT_SM_N; i++)
        run->meta[i] = dup_or_null(rt_store_rows_t(r, F_META + i));
    const char *tags = rt_store_rows_t(r, F_TAGS);
    run->tags_json = xstrdup(tags ? tags : "{}");
    run->pid = rt_store_rows_f(r, F_PID);
    run->exit_code = rt_store_rows_f(r, F_EXIT_CODE);
    run->exit_signal = rt_store_rows_f(r, F_EXIT_SIGNAL);
    run->end_reason = dup_or_null(rt_store_rows_t(r, F_END_REASON));
    run->started_at = rt_store_rows_f(r, F_STARTED);
    run->ended_at = rt_store_rows_f(r, F_ENDED);
    run->duration_s = rt_store_rows_f(r, F_DURATION);
    run->samples = rt_store_rows_f(r, F_SAMPLES);
    run->interval_s = rt_store_rows_f(r, F_INTERVAL);
    run->runs = (int)c->nruns;
    struct rt_summary_host *h = &s->host;
    h->hostname = dup_or_null(rt_store_rows_t(r, F_HOSTNAME));
    h->cpu_model = dup_or_null(rt_store_rows_t(r, F_CPU_MODEL));
    h->vcpus = rt_store_rows_f(r, F_VCPUS);
    h->memory_mib = rt_store_rows_f(r, F_MEMORY_MIB);
    h->kernel = dup_or_null(rt_store_rows_t(r, F_KERNEL));
    h->os = dup_or_null(rt_store_rows_t(r, F_OS));
    h->gpu_model = dup_or_null(rt_store_rows_t(r, F_GPU_MODEL));
    h->gpu_count = rt_store_rows_f(r, F_GPU_COUNT);
    h->gpu_memory_mib = rt_store_rows_f(r, F_GPU_MEMORY_MIB);
    run->memory_source = dup_or_null(rt_store_rows_t(r, F_MEMORY_SOURCE));
    run->cpu_wait_missing = dup_or_null(rt_store_rows_t(r, F_CPU_WAIT_MISSING));
    run->psi_missing = dup_or_null(rt_store_rows_t(r, F_PSI_MISSING));
    rt_store_rows_close(r);
    return 0;
}

/* How the newest run ended and what the kernel kept of the runs' reaped jobs: the largest
 * resident set one of their processes reached, their user and system CPU seconds. */
struct ending {
    double duration_s;
    int64_t exit_code, exit_signal, oom_kills;
    int64_t kernel_runs; /* the runs the kernel's CPU time is known of */
};

static int read_kernel(struct sctx *c, struct rt_summary_kernel *k, struct ending *e)
{
    k->maxrss_mib = k->user_s = k->sys_s = k->cgroup_peak_mib = RT_NAN;
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_KERNEL, 4, 1);
    if (!r)
        return -1;
    int rc = rt_store_rows_next(r);
    e->kernel_runs = 0;
    if (rc == 1) {
        k->maxrss_mib = rt_store_rows_f(r, 0);
        k->user_s = rt_store_rows_f(r, 1);
        k->sys_s = rt_store_rows_f(r, 2);
        e->kernel_runs = rt_store_rows_i(r, 3);
    }
    k->known = !isnan(k->maxrss_mib);
    if (summary_rows_done(c, r, rc) != 0 || !(r = summary_query(c, RT_Q_SUMMARY_RUN_END, 4, 0)))
        return -1;
    rt_store_rows_bind_i(r, 1, c->last_run);
    e->exit_code = e->exit_signal = e->oom_kills = RT_NA;
    e->duration_s = RT_NAN;
    if ((rc = rt_store_rows_next(r)) == 1) {
        e->exit_code = rt_store_rows_i(r, 0);
        e->exit_signal = rt_store_rows_i(r, 1);
        e->duration_s = rt_store_rows_f(r, 2);
        e->oom_kills = rt_store_rows_i(r, 3);
    }
    return summary_rows_done(c, r, rc);
}

/* The runs' allocations (the newest run's stands for a job's), the largest of their cgroups'
 * peaks, and the kernel's CPU time over the allocated cores x wall of every run that has both
 * (*core_s NAN: not every run has). */
static int read_allocation(struct sctx *c, struct rt_summary *s, double *cpu_s, double *core_s)
{
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_ALLOCATION, 13, 1);
    if (!r)
        return -1;
    *cpu_s = *core_s = 0;
    int all_kernel = 1, any = 0, rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        double v[13];
        rt_store_rows_fv(r, 13, v);
        struct rt_allocated_in in = {v[0], v[1], v[2], v[3], v[4],
                                     v[5], v[6], v[7], v[8], rt_store_rows_t(r, 9)};
        rt_alloc_decide(&in, &s->alloc); /* ordered by id: the newest last */
        double peak = v[12] / 1048576.0;
        if (!isnan(peak) && (isnan(s->kernel.cgroup_peak_mib) || peak > s->kernel.cgroup_peak_mib))
            s->kernel.cgroup_peak_mib = peak;
        if (isnan(s->alloc.cpus))
            continue;
        any = 1;
        if (isnan(v[10]) || isnan(v[11]) || v[11] <= 0) {
            all_kernel = 0;
        } else {
            *cpu_s += v[10];
            *core_s += s->alloc.cpus * v[11];
        }
    }
    if (!any || !all_kernel)
        *core_s = RT_NAN;
    return summary_rows_done(c, r, rc);
}

/* When the tree's sampled memory peaked (seconds after its run's start) and who held it then:
 * that sample's processes by PSS, the first five and the rest together. */
static int read_peak(struct sctx *c, const struct pass_sums *sums, struct rt_summary_peak *pk)
{
    if (!sums->has_tree || !sums->peak_sample)
        return 0;
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_SINCE_START, 1, 0);
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, sums->peak_run);
    rt_store_rows_bind_f(r, 2, sums->peak_ts);
    int rc = rt_store_rows_next(r);
    pk->known = 1;
    pk->run = (double)sums->peak_run;
    pk->mib = sums->peak_mib;
    pk->at_s = rc == 1 ? rt_store_rows_f(r, 0) : RT_NAN;
    if (summary_rows_done(c, r, rc) != 0 ||
        !(r = summary_query(c, RT_Q_SUMMARY_PEAK_PROCESSES, 3, 0)))
        return -1;
    rt_store_rows_bind_i(r, 1, sums->peak_sample);
    while ((rc = rt_store_rows_next(r)) == 1) {
        if (pk->nprocs == RT_SUMMARY_TOP) {
            pk->others_pss_mib += rt_store_rows_f(r, 2);
            pk->others_count++;
            continue;
        }
        struct rt_summary_proc *p = &pk->procs[pk->nprocs++];
        p->pid = rt_store_rows_f(r, 0);
        p->name = dup_or_null(rt_store_rows_t(r, 1));
        p->value = rt_store_rows_f(r, 2);
    }
    return summary_rows_done(c, r, rc);
}

/* The host's CPU pressure per stretch of the run (the sparklines' stretches): the share of each
 * stretch's time some task waited for a CPU, from the cumulative PSI counter at the stretches'
 * ends (row i of the pass is the sample of seq i + 1; seq 0 is the baseline): a handful of
 * lookups, not a second pass over a long run. One run only (--job's runs: none). */
static int read_pressure(struct sctx *c, size_t rows, struct rt_summary_sparks *sp)
{
    if (c->nruns != 1 || !rows)
        return 0;
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_PRESSURE, 2, 0);
    if (!r)
        return -1;
    size_t nb = rows < RT_SPARK_N ? rows : RT_SPARK_N;
    double t0 = RT_NAN, u0 = RT_NAN;
    int rc = 0;
    for (size_t k = 0; k <= nb && rc >= 0; k++) {
        /* the first row of stretch k is ceil(k x rows / nb): the row before it has seq that */
        size_t first = (k * rows + nb - 1) / nb;
        rt_store_rows_reset(r);
        rt_store_rows_bind_i(r, 1, c->last_run);
        rt_store_rows_bind_i(r, 2, (int64_t)first);
        double t = RT_NAN, u = RT_NAN;
        if ((rc = rt_store_rows_next(r)) == 1) {
            t = rt_store_rows_f(r, 0);
            u = rt_store_rows_f(r, 1);
        }
        if (k > 0 && !isnan(t0) && !isnan(u0) && !isnan(t) && !isnan(u) && t > t0) {
            /* microseconds per second, in %; at most 100 (the clocks' jitter aside) */
            sp->v[RT_SPARK_PSI][k - 1] = fmin(100, (u - u0) / 1e4 / (t - t0));
            sp->has[RT_SPARK_PSI][k - 1] = 1;
        }
        t0 = t;
        u0 = u;
    }
    return summary_rows_done(c, r, rc);
}

/* --- from the pass's sums to the figures --------------------------------------------------- */

static void fill_sides(struct rt_summary *s, struct pass_sums *sums)
{
    struct rt_summary_side *side[2] = {&s->process, &s->system};
    for (int k = 0; k < 2; k++) {
        for (int m = 0; m < RT_M_N; m++)
            summary_stat4(&sums->s[k][m], &side[k]->st[m]);
        for (int t = 0; t < RT_T_N; t++)
            side[k]->total[t] = sums->has_tot[k][t] ? sums->totals[k][t] : RT_NAN;
    }
    s->has_tree = sums->has_tree;
    s->py = sums->py;
    s->sparks.n = sums->rows < RT_SPARK_N ? sums->rows : RT_SPARK_N;
    s->sparks.tree = sums->has_tree;
    memcpy(s->sparks.v, sums->spark, sizeof(sums->spark));
    memcpy(s->sparks.has, sums->spark_has, sizeof(sums->spark_has));
}

/* The policy's inputs: the tree's figures (the system's for a system-only recording). */
static void reco_inputs(const struct rt_summary *s, const struct ending *e, int python,
                        struct rt_reco_in *in)
{
    const struct rt_summary_side *sd = s->has_tree ? &s->process : &s->system;
    const struct rt_stat4 *cpu = &sd->st[RT_M_CPU], *mem = &sd->st[RT_M_MEM];
    const struct rt_stat4 *gpu = &sd->st[RT_M_GPU], *vram = &sd->st[RT_M_VRAM];
    *in = (struct rt_reco_in){
        .has_tree = s->has_tree,
        /* rtrack's: the tree's mean cores (CPU time / wall time); the Python reference's: the
         * mean of its samples' column */
        .cpu_mean = s->has_tree && python ? s->py.mean[RT_PY_CPU] : cpu->mean,
        .cpu_p95 = cpu->p95,
        .cpu_p95_ok = cpu->ok,
        .demand = s->demand,
        .mem_max = s->has_tree ? s->py.max[RT_PY_MEM] : mem->max,
        .kernel_maxrss_mib = s->kernel.maxrss_mib,
        .gpu_mean = s->has_tree ? s->py.mean[RT_PY_GPU] : (gpu->ok ? gpu->mean : 0),
        .gpu_max = s->has_tree ? s->py.max[RT_PY_GPU] : (gpu->ok ? gpu->max : 0),
        .vram_max = s->has_tree ? s->py.max[RT_PY_VRAM] : (vram->ok ? vram->max : 0),
        .duration_s = e->duration_s,
        .exit_code = e->exit_code,
        .exit_signal = e->exit_signal,
        .oom_kills = e->oom_kills,
    };
}

static double mean_or_nan(const struct rt_stat4 *t)
{
    return t->ok ? t->mean : RT_NAN;
}

static double max_or_nan(const struct rt_stat4 *t)
{
    return t->ok ? t->max : RT_NAN;
}

/* What the host and the allocation were used for, and whether the host was shared. */
static void decide_use(struct rt_summary *s, double alloc_cpu_s, double alloc_core_s)
{
    const struct rt_summary_side *sd = s->has_tree ? &s->process : &s->system;
    struct rt_efficiency_in in = {
        .cpu_mean = mean_or_nan(&sd->st[RT_M_CPU]),
        .mem_max = max_or_nan(&sd->st[RT_M_MEM]),
        .gpu_mean = mean_or_nan(&sd->st[RT_M_GPU]),
        .vram_max = max_or_nan(&sd->st[RT_M_VRAM]),
        .reco_peak = s->reco.mem_peak,
        .host_vcpus = s->host.vcpus,
        .host_mem_mib = s->host.memory_mib,
        .host_gpus = s->host.gpu_count,
        .host_vram_mib = s->host.gpu_memory_mib,
        .alloc_cpus = s->alloc.cpus,
        .alloc_mem_mib = s->alloc.memory_mib,
        .alloc_cpu_s = alloc_cpu_s,
        .alloc_core_s = alloc_core_s,
    };
    rt_efficiency(&in, &s->eff);
    const struct rt_summary_side *p = &s->process, *y = &s->system;
    struct rt_sharing_in sh = {
        s->has_tree,
        mean_or_nan(&p->st[RT_M_CPU]),
        mean_or_nan(&y->st[RT_M_CPU]),
        mean_or_nan(&p->st[RT_M_GPU]),
        mean_or_nan(&y->st[RT_M_GPU]),
        p->total[RT_T_DREAD] + p->total[RT_T_DWRITE],
        y->total[RT_T_DREAD] + y->total[RT_T_DWRITE],
    };
    rt_host_sharing(&sh, &s->sharing);
    s->allocation = s->sharing.kind;
}

/* The runs' wall times together: the newest run's where it is the only one and has ended. */
static int read_wall(struct sctx *c, const struct ending *e, double *wall)
{
    if (c->nruns == 1 && !isnan(e->duration_s)) {
        *wall = e->duration_s;
        return 0;
    }
    struct rt_store_rows *r = summary_query(c, RT_Q_SUMMARY_WALL, 1, 1);
    if (!r)
        return -1;
    int rc = rt_store_rows_next(r);
    *wall = rc == 1 ? rt_store_rows_f(r, 0) : RT_NAN;
    return summary_rows_done(c, r, rc);
}

/* The tree's CPU time: the kernel's user and system seconds of the reaped jobs where every run
 * has them, else the tree's sampled cores x each sample's interval; over the runs' wall time
 * it is the tree's mean cores, the one figure of them (the statistics' mean among). */
static void decide_cpu_time(struct rt_summary *s, const struct pass_sums *sums,
                            const struct ending *e, double wall)
{
    int kernel = e->kernel_runs == (int64_t)s->run.runs && e->kernel_runs > 0 &&
                 !isnan(s->kernel.user_s) && !isnan(s->kernel.sys_s);
    if (!s->has_tree || (!kernel && !sums->has_tree_cpu))
        return;
    double total = kernel ? s->kernel.user_s + s->kernel.sys_s : sums->tree_cpu_s;
    s->cpu_time = (struct rt_summary_cpu_time){
        1,
        kernel ? s->kernel.user_s : RT_NAN,
        kernel ? s->kernel.sys_s : RT_NAN,
        total,
        kernel ? "kernel" : "sampled",
        wall,
        wall > 0 ? total / wall : RT_NAN,
    };
    if (!isnan(s->cpu_time.mean_cores) && s->process.st[RT_M_CPU].ok)
        s->process.st[RT_M_CPU].mean = s->cpu_time.mean_cores;
}

/* What the kernel did not let rtrack know of the run (docs/portability.md, "Old kernels"), in
 * words: the tree's memory read another way, no CPU demand, no pressure, no OOM count. */
static void decide_notes(struct rt_summary *s, const struct ending *e)
{
    const struct rt_summary_run *r = &s->run;
    struct {
        int when;
        const char *text;
    } notes[] = {
        {r->memory_source && !strcmp(r->memory_source, "smaps"),
         "memory: the tree's PSS is the sum of smaps (this kernel has no smaps_rollup)"},
        {r->memory_source && !strcmp(r->memory_source, "rss"),
         "memory: PSS unknown (this kernel has no smaps); the tree's memory figures are "
         "missing and the advice rests on the kernel's high-water mark (RSS)"},
        {r->cpu_wait_missing && !strcmp(r->cpu_wait_missing, "no-schedstat"),
         "CPU demand unknown: the kernel has no /proc/PID/schedstat (built without "
         "CONFIG_SCHEDSTATS); the CPU advice rests on usage alone, which on a busy host is "
         "less than the job wants"},
        {r->cpu_wait_missing && !strcmp(r->cpu_wait_missing, "schedstat-off"),
         "CPU demand unknown: this kernel does not account CPU wait (schedstat reads 0 0 0; "
         "boot with delayacct); the CPU advice rests on usage alone"},
        {r->psi_missing && !strcmp(r->psi_missing, "no-pressure"),
         "CPU pressure unknown: the kernel has no /proc/pressure (before 4.20, or no "
         "CONFIG_PSI)"},
        {r->psi_missing && !strcmp(r->psi_missing, "psi-off"),
         "CPU pressure unknown: PSI is disabled (boot with psi=1)"},
        {e->exit_signal == 9 && e->oom_kills == RT_NA,
         "whether the OOM killer ended the job is unknown: the recording has no OOM kill count "
         "(kernels before 4.13 keep none)"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(notes) && s->nnotes < (int)RT_ARRAY_LEN(s->notes); i++)
        if (notes[i].when)
            snprintf(s->notes[s->nnotes++], sizeof(s->notes[0]), "%s", notes[i].text);
}

/* Keeper's cheapest server for the recommendation, its fields read for people. */
static void ask_keeper(const struct rt_summary_opts *o, struct rt_summary *s)
{
    struct rt_summary_server *v = &s->server;
    v->asked = 1;
    v->memory_amount = v->gpu_count = v->price = RT_NAN;
    struct rt_keeper_query q = {(int)s->reco.cpu, (int)s->reco.memory, (int)s->reco.gpu,
                                (int)s->reco.vram};
    struct rt_buf srv = {0};
    char kerr[256];
    if (rt_keeper_cheapest(o->keeper_url, &q, &srv, kerr, sizeof(kerr)) != 0) {
        v->error = xstrdup(kerr);
        rt_buf_free(&srv);
        return;
    }
    v->json = xstrndup(srv.p, srv.len);
    rt_buf_free(&srv);
    struct rt_json *j = rt_json_open(v->json, strlen(v->json), kerr, sizeof(kerr));
    if (!j)
        return;
    struct {
        const char *path;
        char **out;
    } text[] = {{"$.display_name", &v->display_name},   {"$.name", &v->name},
                {"$.server_id", &v->server_id},         {"$.vendor_id", &v->vendor_id},
                {"$.api_reference", &v->api_reference}, {"$.vcpus", &v->vcpus},
                {"$.gpu_model", &v->gpu_model},         {"$.min_price_ondemand", &v->price_text}};
    for (size_t i = 0; i < RT_ARRAY_LEN(text); i++) {
        char *val = NULL;
        if (rt_json_get(j, text[i].path, &val) > RT_JSON_NULL)
            *text[i].out = val;
        else
            free(val);
    }
    double x;
    enum rt_json_type t;
    if ((t = rt_json_num(j, "$.memory_amount", &x)) == RT_JSON_INTEGER || t == RT_JSON_REAL)
        v->memory_amount = x;
    if ((t = rt_json_num(j, "$.gpu_count", &x)) == RT_JSON_INTEGER || t == RT_JSON_REAL)
        v->gpu_count = x;
    if ((t = rt_json_num(j, "$.min_price_ondemand", &x)) == RT_JSON_INTEGER || t == RT_JSON_REAL)
        v->price = x;
    rt_json_close(j);
}

/* --- the compute step ---------------------------------------------------------------------- */

static void summary_init(struct rt_summary *s)
{
    memset(s, 0, sizeof(*s));
    s->run.id = s->run.pid = s->run.exit_code = s->run.exit_signal = RT_NAN;
    s->run.started_at = s->run.ended_at = s->run.duration_s = RT_NAN;
    s->run.samples = s->run.interval_s = RT_NAN;
    s->host.vcpus = s->host.memory_mib = s->host.gpu_count = s->host.gpu_memory_mib = RT_NAN;
    s->kernel.maxrss_mib = s->kernel.user_s = s->kernel.sys_s = RT_NAN;
    s->kernel.cgroup_peak_mib = RT_NAN;
    s->alloc.cpus = s->alloc.memory_mib = s->alloc.gpus = RT_NAN;
}

/* What the document needs beyond the end-of-run line's figures: the run's facts, the pressure,
 * the allocation, the peak's processes, the top processes and groups, Keeper. */
static int compute_rest(struct sctx *c, struct rt_summary *s, struct pass_sums *sums, struct top *t,
                        const struct ending *e)
{
    double alloc_cpu_s, alloc_core_s;
    if (read_pressure(c, sums->rows, &s->sparks) != 0 ||
        read_allocation(c, s, &alloc_cpu_s, &alloc_core_s) != 0 || read_facts(c, s) != 0 ||
        read_peak(c, sums, &s->peak) != 0)
        return -1;
    decide_use(s, alloc_cpu_s, alloc_core_s);
    decide_notes(s, e);
    if (top_lists(c, t, s) != 0 || top_groups(c, t, &s->groups) != 0)
        return -1;
    if (c->o->recommend_server)
        ask_keeper(c->o, s);
    return 0;
}

static int compute(struct sctx *c, struct rt_summary *s)
{
    const struct rt_summary_opts *o = c->o;
    struct pass_sums sums;
    memset(&sums, 0, sizeof(sums));
    struct pass *ps = pass_new();
    struct top t;
    memset(&t, 0, sizeof(t));
    if (o->figures_only) /* no process table: no second connection, no scan of it */
        rt_map_init(&t.slot, 1);
    struct ending e;
    int rc = -1;
    if (pick_runs(c) != 0 || (!o->figures_only && top_start(c, &t, ps) != 0) ||
        pass_plan(c, ps, &sums) != 0)
        goto out;
    pass_read(c->store, ps, 0);
    if (pass_finish(c, ps, &sums) != 0 || read_kernel(c, &s->kernel, &e) != 0)
        goto out;
    fill_sides(s, &sums);
    s->run.runs = (int)c->nruns;
    double wall;
    if (read_wall(c, &e, &wall) != 0)
        goto out;
    decide_cpu_time(s, &sums, &e, wall);
    /* the demand of the mean cores just decided: one figure for the usage, everywhere */
    if (s->has_tree && s->process.st[RT_M_CPU].ok)
        rt_cpu_demand(s->process.st[RT_M_CPU].mean, sums.dem_run, sums.dem_wait, &s->demand);
    struct rt_reco_in in;
    reco_inputs(s, &e, 0, &in);
    rt_recommend(&in, 1, &s->reco);
    reco_inputs(s, &e, 1, &in);
    rt_recommend(&in, 0, &s->py_reco);
    rc = o->figures_only ? 0 : compute_rest(c, s, &sums, &t, &e);
out:
    pass_ready(ps); /* (where the pass never started, the thread finds nothing to take) */
    top_free(&t);
    pass_free(ps, &sums);
    return rc;
}

/* The job's runs, each computed on its own, and each figure's spread over them. */
static int compute_spread(struct rt_store *store, const char *job, struct rt_summary_spread *sp,
                          char *err, size_t errlen);

int rt_summary_compute(struct rt_store *store, const struct rt_summary_opts *o,
                       struct rt_summary *s, int *bad_input, char *err, size_t errlen)
{
    summary_init(s);
    struct sctx c = {.store = store, .o = o, .err = err, .errlen = errlen, .bad = bad_input};
    *bad_input = 0;
    /* one snapshot for every query, even while a recorder writes */
    rt_store_read_begin(store);
    int rc = compute(&c, s);
    if (rc == 0 && o->job && !o->figures_only) {
        s->has_spread = 1;
        rc = compute_spread(store, o->job, &s->spread, err, errlen);
    }
    rt_store_read_end(store);
    free(c.ids);
    rt_buf_free(&c.ids_json);
    return rc;
}

/* --- across runs ---------------------------------------------------------------------------- */

const struct rt_summary_figure rt_summary_figures[RT_SUMMARY_NFIGURES] = {
    {"wall_time_s", "wall time", "s"},         {"cpu_time_s", "CPU time", "s"},
    {"cores_mean", "cores mean", "cores"},     {"cores_max", "cores max", "cores"},
    {"memory_mean_mib", "memory mean", "MiB"}, {"peak_memory_mib", "peak memory", "MiB"},
    {"disk_read_bytes", "disk read", "B"},     {"disk_write_bytes", "disk written", "B"},
    {"gpu_usage_mean", "GPUs busy", "gpus"},   {"vram_max_mib", "VRAM max", "MiB"},
};

void rt_summary_figure_values(const struct rt_summary *s, double v[RT_SUMMARY_NFIGURES])
{
    /* the tree's, or the system's for a system-only recording */
    const struct rt_summary_side *sd = s->has_tree ? &s->process : &s->system;
    v[0] = s->run.duration_s;
    v[1] = s->cpu_time.known ? s->cpu_time.total_s : RT_NAN;
    v[2] = mean_or_nan(&sd->st[RT_M_CPU]);
    v[3] = max_or_nan(&sd->st[RT_M_CPU]);
    v[4] = mean_or_nan(&sd->st[RT_M_MEM]);
    v[5] = s->reco.mem_peak;
    v[6] = sd->total[RT_T_DREAD];
    v[7] = sd->total[RT_T_DWRITE];
    v[8] = mean_or_nan(&sd->st[RT_M_GPU]);
    v[9] = max_or_nan(&sd->st[RT_M_VRAM]);
}

static int compute_spread(struct rt_store *store, const char *job, struct rt_summary_spread *sp,
                          char *err, size_t errlen)
{
    struct rt_store_rows *q = rt_store_query(store, RT_Q_SUMMARY_JOB_RUNS);
    if (!q) {
        snprintf(err, errlen, "cannot read the database: %s", rt_store_error(store));
        return -1;
    }
    rt_store_rows_bind_t(q, 1, job);
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    while (rt_store_rows_next(q) == 1)
        *RT_PUSH(ids, n, cap) = rt_store_rows_i(q, 0);
    rt_store_rows_close(q);
    /* each run's figures (NAN: the run has none), then the statistics over them */
    double *vals = xcalloc(n * RT_SUMMARY_NFIGURES + 1, sizeof(double));
    size_t used = 0;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct rt_summary_opts o = {.run_id = ids[i]};
        struct rt_summary one;
        int bad = 0;
        if (rt_summary_compute(store, &o, &one, &bad, err, errlen) == 0)
            rt_summary_figure_values(&one, &vals[used++ * RT_SUMMARY_NFIGURES]);
        else if (!bad) /* (a run with too few samples is left out) */
            rc = -1;
        rt_summary_free(&one);
    }
    free(ids);
    sp->runs = (double)used;
    for (int f = 0; f < RT_SUMMARY_NFIGURES && rc == 0; f++) {
        double sum = 0, sq = 0, lo = RT_NAN, hi = RT_NAN;
        int cnt = 0;
        for (size_t i = 0; i < used; i++) {
            double v = vals[i * RT_SUMMARY_NFIGURES + (size_t)f];
            if (isnan(v))
                continue;
            lo = cnt ? fmin(lo, v) : v;
            hi = cnt ? fmax(hi, v) : v;
            sum += v;
            cnt++;
        }
        double mean = cnt ? sum / cnt : RT_NAN;
        for (size_t i = 0; i < used; i++) {
            double v = vals[i * RT_SUMMARY_NFIGURES + (size_t)f];
            if (!isnan(v))
                sq += (v - mean) * (v - mean);
        }
        sp->f[f].n = cnt;
        sp->f[f].mean = mean;
        sp->f[f].sd = cnt > 1 ? sqrt(sq / (cnt - 1)) : RT_NAN;
        sp->f[f].min = lo;
        sp->f[f].max = hi;
    }
    free(vals);
    return rc;
}

int rt_summary_compare(struct rt_store *store, const int64_t id[2], struct rt_summary_compare *c,
                       int *bad_input, char *err, size_t errlen)
{
    memset(c, 0, sizeof(*c));
    summary_init(&c->s[0]);
    summary_init(&c->s[1]);
    *bad_input = 0;
    for (int i = 0; i < 2; i++) {
        struct rt_summary_opts o = {.run_id = id[i]};
        int bad = 0;
        rt_summary_free(&c->s[i]);
        if (rt_summary_compute(store, &o, &c->s[i], &bad, err, errlen) != 0) {
            if (bad) {
                snprintf(err, errlen, "run %lld has fewer than two samples: nothing to compare",
                         (long long)id[i]);
                *bad_input = 1;
            }
            return -1;
        }
        rt_summary_figure_values(&c->s[i], c->v[i]);
    }
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        double v0 = c->v[0][f], v1 = c->v[1][f];
        int both = !isnan(v0) && !isnan(v1);
        c->delta[f] = both ? v1 - v0 : RT_NAN;
        c->delta_pct[f] = both && v0 != 0 ? (v1 - v0) / fabs(v0) * 100 : RT_NAN;
    }
    return 0;
}

void rt_summary_compare_free(struct rt_summary_compare *c)
{
    rt_summary_free(&c->s[0]);
    rt_summary_free(&c->s[1]);
}

void rt_summary_line_of(const struct rt_summary *s, struct rt_summary_line *line)
{
    const struct rt_stat4 *cpu = &(s->has_tree ? &s->process : &s->system)->st[RT_M_CPU];
    line->tree = s->has_tree;
    line->cores_mean = cpu->ok ? cpu->mean : RT_NAN;
    line->cores_max = cpu->ok ? cpu->max : RT_NAN;
    line->peak_mib = s->reco.mem_peak;
}

void rt_summary_free(struct rt_summary *s)
{
    struct rt_summary_run *r = &s->run;
    free(r->uuid);
    free(r->mode);
    free(r->status);
    free(r->command_json);
    for (int i = 0; i < RT_SM_N; i++)
        free(r->meta[i]);
    free(r->tags_json);
    free(r->end_reason);
    free(r->memory_source);
    free(r->cpu_wait_missing);
    free(r->psi_missing);
    struct rt_summary_host *h = &s->host;
    free(h->hostname);
    free(h->cpu_model);
    free(h->kernel);
    free(h->os);
    free(h->gpu_model);
    for (int i = 0; i < s->peak.nprocs; i++)
        free(s->peak.procs[i].name);
    for (int i = 0; i < s->top.ncpu; i++)
        free(s->top.by_cpu[i].name);
    for (int i = 0; i < s->top.npss; i++)
        free(s->top.by_pss[i].name);
    for (int i = 0; i < s->groups.n; i++) {
        free(s->groups.g[i].name);
        free(s->groups.g[i].command);
    }
    struct rt_summary_server *v = &s->server;
    free(v->json);
    free(v->error);
    free(v->display_name);
    free(v->name);
    free(v->server_id);
    free(v->vendor_id);
    free(v->api_reference);
    free(v->vcpus);
    free(v->gpu_model);
    free(v->price_text);
    summary_init(s);
}
