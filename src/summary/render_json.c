/* render_json.c - the summary's JSON document (summary.h has its schema), written from the
 * computed struct through the JSON writer (base/jsonw.h): one function per object of the
 * document, in its order. */
#include <math.h>
#include <string.h>

#include "internal.h"
#include "rtrack/base/jsonw.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/summary/render.h"

static double r2(double x)
{
    return rt_py_round(x, 2);
}

static void w_run(struct rt_jw *w, const struct rt_summary_run *r)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "id", r->id);
    rt_jw_kv_str(w, "uuid", r->uuid);
    rt_jw_kv_str(w, "mode", r->mode);
    rt_jw_kv_str(w, "status", r->status);
    rt_jw_kv_bool(w, "in_progress", r->in_progress);
    rt_jw_kv_raw(w, "command", r->command_json); /* as stored: JSON */
    for (int i = 0; i < RT_SM_N; i++)
        rt_jw_kv_str(w, rt_summary_meta_keys[i], r->meta[i]);
    rt_jw_kv_raw(w, "tags", r->tags_json ? r->tags_json : "{}");
    rt_jw_kv_num(w, "pid", r->pid);
    rt_jw_kv_num(w, "exit_code", r->exit_code);
    rt_jw_kv_num(w, "exit_signal", r->exit_signal);
    rt_jw_kv_str(w, "end_reason", r->end_reason);
    rt_jw_kv_num(w, "started_at", r->started_at);
    rt_jw_kv_num(w, "ended_at", r->ended_at);
    rt_jw_kv_num(w, "duration_s", r->duration_s);
    rt_jw_kv_num(w, "samples", r->samples);
    rt_jw_kv_num(w, "interval_s", r->interval_s);
    rt_jw_kv_num(w, "runs", r->runs);
    rt_jw_kv_str(w, "memory_source", r->memory_source);
    rt_jw_kv_str(w, "cpu_wait_missing", r->cpu_wait_missing);
    rt_jw_kv_str(w, "psi_missing", r->psi_missing);
    rt_jw_end(w);
}

static void w_host(struct rt_jw *w, const struct rt_summary_host *h)
{
    rt_jw_object(w);
    rt_jw_kv_str(w, "hostname", h->hostname);
    rt_jw_kv_str(w, "cpu_model", h->cpu_model);
    rt_jw_kv_num(w, "vcpus", h->vcpus);
    rt_jw_kv_num(w, "memory_mib", h->memory_mib);
    rt_jw_kv_str(w, "kernel", h->kernel);
    rt_jw_kv_str(w, "os", h->os);
    rt_jw_kv_str(w, "gpu_model", h->gpu_model);
    rt_jw_kv_num(w, "gpu_count", h->gpu_count);
    rt_jw_kv_num(w, "gpu_memory_mib", h->gpu_memory_mib);
    rt_jw_end(w);
}

/* METRICS: each metric's statistics (the tree has no network), then the totals */
static void w_side(struct rt_jw *w, const struct rt_summary_side *sd, int system)
{
    rt_jw_object(w);
    for (int m = 0; m < RT_M_N; m++) {
        if (!system && (m == RT_M_NRECV || m == RT_M_NSENT))
            continue;
        const struct rt_stat4 *t = &sd->st[m];
        if (!t->ok) {
            rt_jw_kv_null(w, rt_metric_keys[m]);
            continue;
        }
        rt_jw_kv_object(w, rt_metric_keys[m]);
        rt_jw_kv_num(w, "mean", t->mean);
        rt_jw_kv_num(w, "p50", t->p50);
        rt_jw_kv_num(w, "p95", t->p95);
        rt_jw_kv_num(w, "max", t->max);
        rt_jw_end(w);
    }
    for (int t = 0; t < (system ? RT_T_N : 2); t++)
        rt_jw_kv_num(w, rt_total_keys[t], sd->total[t]);
    rt_jw_end(w);
}

static void w_python_stats(struct rt_jw *w, const struct rt_summary_py *py)
{
    static const char *const cols[RT_PY_N] = {"process_cpu_usage", "process_memory_mib",
                                              "process_gpu_usage", "process_gpu_vram_mib",
                                              "process_gpu_utilized"};
    rt_jw_object(w);
    for (int k = 0; k < RT_PY_N; k++) {
        rt_jw_kv_object(w, cols[k]);
        rt_jw_kv_num(w, "mean", r2(py->mean[k]));
        rt_jw_kv_num(w, "max", r2(py->max[k]));
        rt_jw_end(w);
    }
    rt_jw_kv_object(w, "system_disk_space_used_gb");
    rt_jw_kv_num(w, "max", r2(py->space_max));
    rt_jw_end(w);
    rt_jw_kv_object(w, "system_net_recv_bytes");
    rt_jw_kv_num(w, "sum", py->recv);
    rt_jw_end(w);
    rt_jw_kv_object(w, "system_net_sent_bytes");
    rt_jw_kv_num(w, "sum", py->sent);
    rt_jw_end(w);
    rt_jw_kv_object(w, "timestamp");
    rt_jw_kv_num(w, "duration", rt_py_round(py->duration, 3));
    rt_jw_end(w);
    rt_jw_end(w);
}

static void w_kernel(struct rt_jw *w, const struct rt_summary_kernel *k)
{
    if (!k->known) {
        rt_jw_null(w);
        return;
    }
    rt_jw_object(w);
    rt_jw_kv_num(w, "maxrss_mib", k->maxrss_mib);
    rt_jw_kv_num(w, "user_s", k->user_s);
    rt_jw_kv_num(w, "sys_s", k->sys_s);
    rt_jw_kv_num(w, "cgroup_peak_mib", k->cgroup_peak_mib);
    rt_jw_end(w);
}

static void w_demand(struct rt_jw *w, const struct rt_summary_demand *d)
{
    if (!d->known) {
        rt_jw_null(w);
        return;
    }
    rt_jw_object(w);
    rt_jw_kv_num(w, "usage_cores", d->usage_cores);
    rt_jw_kv_num(w, "wait_cores", d->wait_cores);
    rt_jw_kv_num(w, "demand_cores", d->demand_cores);
    rt_jw_kv_num(w, "wait_pct", d->wait_pct);
    rt_jw_kv_bool(w, "starved", d->starved);
    rt_jw_end(w);
}

static void w_proc(struct rt_jw *w, const struct rt_summary_proc *p, const char *value_key)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "pid", p->pid);
    rt_jw_kv_str(w, "name", p->name);
    rt_jw_kv_num(w, value_key, p->value);
    rt_jw_end(w);
}

static void w_peak(struct rt_jw *w, const struct rt_summary_peak *pk)
{
    if (!pk->known) {
        rt_jw_null(w);
        return;
    }
    rt_jw_object(w);
    rt_jw_kv_num(w, "run", pk->run);
    rt_jw_kv_num(w, "mib", pk->mib);
    rt_jw_kv_num(w, "at_s", pk->at_s);
    rt_jw_kv_array(w, "processes");
    for (int i = 0; i < pk->nprocs; i++)
        w_proc(w, &pk->procs[i], "pss_mib");
    rt_jw_end(w);
    rt_jw_kv_object(w, "others");
    rt_jw_kv_num(w, "count", pk->others_count);
    rt_jw_kv_num(w, "pss_mib", pk->others_pss_mib);
    rt_jw_end(w);
    rt_jw_end(w);
}

static void w_reco(struct rt_jw *w, const struct rt_reco *r)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "cpu", (double)r->cpu);
    rt_jw_kv_object(w, "cpu_basis");
    rt_jw_kv_num(w, "mean_cores", r->cpu_cores);
    rt_jw_kv_str(w, "source", r->cpu_from);
    rt_jw_end(w);
    rt_jw_kv_num(w, "cpu_p95", (double)r->cpu_p95);
    rt_jw_kv_num(w, "memory_mib", (double)r->memory);
    rt_jw_kv_num(w, "gpu", (double)r->gpu);
    rt_jw_kv_num(w, "vram_mib", (double)r->vram);
    rt_jw_kv_str(w, "text", r->text);
    rt_jw_kv_str(w, "metaflow", r->metaflow);
    /* what decided the memory figure, and the arithmetic */
    rt_jw_kv_object(w, "memory_basis");
    rt_jw_kv_num(w, "peak_mib", r->mem_peak);
    rt_jw_kv_str(w, "source", r->mem_from);
    rt_jw_kv_num(w, "headroom", RT_RECO_HEADROOM);
    rt_jw_kv_str(w, "arithmetic", r->arithmetic);
    rt_jw_end(w);
    if (r->caveat_kind) {
        rt_jw_kv_object(w, "caveat");
        rt_jw_kv_str(w, "kind", r->caveat_kind);
        rt_jw_kv_str(w, "text", r->caveat);
        rt_jw_end(w);
    } else {
        rt_jw_kv_null(w, "caveat");
    }
    rt_jw_end(w);
}

static void w_efficiency(struct rt_jw *w, const struct rt_eff *e)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "cpu_pct", e->cpu_pct);
    rt_jw_kv_num(w, "memory_pct", e->memory_pct);
    rt_jw_kv_num(w, "gpu_pct", e->gpu_pct);
    rt_jw_kv_num(w, "vram_pct", e->vram_pct);
    rt_jw_kv_num(w, "cpu_alloc_pct", e->cpu_alloc_pct);
    rt_jw_kv_num(w, "memory_alloc_pct", e->memory_alloc_pct);
    rt_jw_end(w);
}

static void w_allocated(struct rt_jw *w, const struct rt_allocated *a)
{
    if (!a->known) {
        rt_jw_null(w);
        return;
    }
    rt_jw_object(w);
    rt_jw_kv_num(w, "cpus", a->cpus);
    rt_jw_kv_str(w, "cpus_from", a->cpus_from);
    rt_jw_kv_num(w, "memory_mib", a->memory_mib);
    rt_jw_kv_str(w, "memory_from", a->memory_from);
    rt_jw_kv_num(w, "gpus", a->gpus);
    rt_jw_kv_str(w, "slurm_job_id", a->has_job_id ? a->slurm_job_id : NULL);
    rt_jw_end(w);
}

/* "sparklines", then "sparkline_scale": each line's top (its bottom is 0) and whose lines they
 * are (the CPU pressure is always the host's) */
static void w_sparks(struct rt_jw *w, const struct rt_summary_sparks *sp)
{
    double max[RT_SPARK_LINES];
    char text[SPARK_TEXT_MAX];
    rt_jw_kv_object(w, "sparklines");
    for (int k = 0; k < RT_SPARK_LINES; k++) {
        if (summary_spark_text(sp->v[k], sp->has[k], sp->n, text, &max[k]))
            rt_jw_kv_str(w, rt_spark_keys[k], text);
        else
            rt_jw_kv_null(w, rt_spark_keys[k]);
    }
    rt_jw_end(w);
    rt_jw_kv_object(w, "sparkline_scale");
    rt_jw_kv_str(w, "source", sp->tree ? "tree" : "system");
    for (int k = 0; k < RT_SPARK_LINES; k++)
        rt_jw_kv_num(w, rt_spark_keys[k], max[k]);
    rt_jw_end(w);
}

static void w_top(struct rt_jw *w, const struct rt_summary_top *t)
{
    rt_jw_object(w);
    rt_jw_kv_array(w, "by_cpu");
    for (int i = 0; i < t->ncpu; i++)
        w_proc(w, &t->by_cpu[i], "cpu_s");
    rt_jw_end(w);
    rt_jw_kv_array(w, "by_pss");
    for (int i = 0; i < t->npss; i++)
        w_proc(w, &t->by_pss[i], "pss_mib");
    rt_jw_end(w);
    rt_jw_end(w);
}

static void w_groups(struct rt_jw *w, const struct rt_summary_groups *g)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "processes", g->processes);
    rt_jw_kv_array(w, "groups");
    for (int i = 0; i < g->n; i++) {
        const struct rt_summary_group *x = &g->g[i];
        rt_jw_object(w);
        rt_jw_kv_str(w, "name", x->name);
        rt_jw_kv_num(w, "count", x->count);
        rt_jw_kv_num(w, "cpu_s", x->cpu_s);
        rt_jw_kv_num(w, "pss_max_mib", x->pss_max_mib);
        rt_jw_kv_num(w, "pid", x->pid);
        rt_jw_kv_num(w, "ppid", x->ppid);
        rt_jw_kv_str(w, "command", x->command);
        rt_jw_end(w);
    }
    rt_jw_end(w);
    rt_jw_end(w);
}

static void w_cpu_time(struct rt_jw *w, const struct rt_summary_cpu_time *t)
{
    if (!t->known) {
        rt_jw_null(w);
        return;
    }
    rt_jw_object(w);
    rt_jw_kv_num(w, "user_s", t->user_s);
    rt_jw_kv_num(w, "sys_s", t->sys_s);
    rt_jw_kv_num(w, "total_s", t->total_s);
    rt_jw_kv_str(w, "source", t->source);
    rt_jw_kv_num(w, "wall_s", t->wall_s);
    rt_jw_kv_num(w, "mean_cores", t->mean_cores);
    rt_jw_end(w);
}

static void w_spread(struct rt_jw *w, const struct rt_summary_spread *sp)
{
    rt_jw_object(w);
    rt_jw_kv_num(w, "runs", sp->runs);
    rt_jw_kv_object(w, "figures");
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        rt_jw_kv_object(w, rt_summary_figures[f].key);
        rt_jw_kv_num(w, "n", sp->f[f].n);
        rt_jw_kv_num(w, "mean", sp->f[f].mean);
        rt_jw_kv_num(w, "sd", sp->f[f].sd);
        rt_jw_kv_num(w, "min", sp->f[f].min);
        rt_jw_kv_num(w, "max", sp->f[f].max);
        rt_jw_end(w);
    }
    rt_jw_end(w);
    rt_jw_end(w);
}

void rt_summary_write_json(const struct rt_summary *s, struct rt_buf *out)
{
    struct rt_jw w;
    rt_jw_init(&w, out);
    rt_jw_object(&w);
    rt_jw_key(&w, "run");
    w_run(&w, &s->run);
    rt_jw_key(&w, "host");
    w_host(&w, &s->host);
    rt_jw_key(&w, "process");
    if (s->has_tree)
        w_side(&w, &s->process, 0);
    else
        rt_jw_null(&w);
    rt_jw_key(&w, "system");
    w_side(&w, &s->system, 1);
    rt_jw_key(&w, "python_stats");
    w_python_stats(&w, &s->py);
    rt_jw_key(&w, "kernel");
    w_kernel(&w, &s->kernel);
    rt_jw_key(&w, "cpu_demand");
    w_demand(&w, &s->demand);
    rt_jw_key(&w, "memory_peak");
    w_peak(&w, &s->peak);
    rt_jw_key(&w, "recommendation");
    w_reco(&w, &s->reco);
    rt_jw_key(&w, "python_recommendation");
    w_reco(&w, &s->py_reco);
    rt_jw_key(&w, "efficiency");
    w_efficiency(&w, &s->eff);
    rt_jw_key(&w, "allocated");
    w_allocated(&w, &s->alloc);
    rt_jw_kv_str(&w, "allocation", s->allocation);
    rt_jw_key(&w, "allocation_basis");
    if (s->has_tree) {
        rt_jw_object(&w);
        rt_jw_kv_str(&w, "resource", s->sharing.resource);
        rt_jw_kv_num(&w, "others_cores", s->sharing.others_cores);
        rt_jw_kv_num(&w, "others_gpus", s->sharing.others_gpus);
        rt_jw_kv_num(&w, "others_disk_bytes", s->sharing.others_disk_bytes);
        rt_jw_end(&w);
    } else {
        rt_jw_null(&w);
    }
    w_sparks(&w, &s->sparks);
    rt_jw_key(&w, "top_processes");
    w_top(&w, &s->top);
    rt_jw_key(&w, "process_groups");
    w_groups(&w, &s->groups);
    rt_jw_key(&w, "cpu_time");
    w_cpu_time(&w, &s->cpu_time);
    rt_jw_kv_raw(&w, "server", s->server.json);
    if (s->server.asked && !s->server.json)
        rt_jw_kv_str(&w, "server_error", s->server.error);
    if (s->has_spread) {
        rt_jw_key(&w, "spread");
        w_spread(&w, &s->spread);
    }
    rt_jw_end(&w);
}

void rt_summary_compare_write_json(const struct rt_summary_compare *c, struct rt_buf *out)
{
    struct rt_jw w;
    rt_jw_init(&w, out);
    rt_jw_object(&w);
    rt_jw_kv_array(&w, "runs");
    for (int i = 0; i < 2; i++) {
        /* each object as SQLite's JSON functions copied it out of the run's summary: compact */
        rt_jw_object(&w);
        rt_jw_key(&w, "run");
        rt_jw_compact(&w, 1);
        w_run(&w, &c->s[i].run);
        rt_jw_compact(&w, 0);
        rt_jw_key(&w, "recommendation");
        rt_jw_compact(&w, 1);
        w_reco(&w, &c->s[i].reco);
        rt_jw_compact(&w, 0);
        rt_jw_end(&w);
    }
    rt_jw_end(&w);
    rt_jw_kv_object(&w, "figures");
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        rt_jw_kv_object(&w, rt_summary_figures[f].key);
        rt_jw_kv_array(&w, "values");
        rt_jw_num(&w, c->v[0][f]);
        rt_jw_num(&w, c->v[1][f]);
        rt_jw_end(&w);
        rt_jw_kv_num(&w, "delta", c->delta[f]);
        rt_jw_kv_num(&w, "delta_pct", c->delta_pct[f]);
        rt_jw_end(&w);
    }
    rt_jw_end(&w);
    rt_jw_end(&w);
}
