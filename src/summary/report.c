/* report.c - a run as one self-contained HTML page (report.h): the page and its sections,
 * printed from the computed summary (summary.h) and the plain arrays of report_data.c, the
 * charts drawn by the chart kit (svg.c). No JavaScript, no fonts or images to fetch, and a
 * Content-Security-Policy that forbids fetching anything, so a string that slipped through
 * could not load a resource either. Every string from the database is HTML-escaped (a job
 * name may well be `<script>`); every command is quoted for a shell by rt_fmt_command, as
 * `summary` and `runs` quote it. */
#include "rtrack/summary/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "html.h"
#include "report_data.h"
#include "rtrack/base/fmt.h"
#include "rtrack/base/json.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/summary/cluster.h"
#include "rtrack/summary/summary.h"
#include "rtrack/version.h"
#include "svg.h"

extern const char rt_sql_report_css[]; /* src/summary/report.css, embedded */

static const char *fmt_utc(char *b, size_t n, double epoch)
{
    time_t t = (time_t)floor(epoch);
    struct tm tm;
    if (!gmtime_r(&t, &tm)) {
        snprintf(b, n, "%.3f", epoch);
        return b;
    }
    strftime(b, n, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return b;
}

/* One row of a facts table when the value exists. */
static void fact_text(struct rt_buf *p, const char *label, const char *v)
{
    if (!v)
        return;
    html_putf(p, "<tr><th>%s</th><td>", label);
    html_esc(p, v);
    html_put(p, "</td></tr>\n");
}

/* A whole number as text ("8"), for the facts table; NULL when unknown. */
static const char *whole(char *b, size_t n, double v)
{
    if (isnan(v))
        return NULL;
    snprintf(b, n, "%.0f", v);
    return b;
}

/* The status banner at the top: how the run ended, in words and a colour: finished, failed
 * (exit N), killed by a signal (its name), killed by the OOM killer, interrupted (its recorder
 * is gone: the view run_status), still recording. */
static void section_banner(struct rt_buf *p, const struct rt_summary *s)
{
    char b[64], sig[32], head[160];
    const char *status = s->run.status, *kind = s->reco.caveat_kind;
    double code = s->run.exit_code, signo = s->run.exit_signal, dur = s->run.duration_s;
    const char *cls = "warn", *id = "unknown";
    snprintf(head, sizeof(head), "%s", status ? status : "unknown");
    if (kind && !strcmp(kind, "oom")) {
        cls = "bad", id = "oom";
        snprintf(head, sizeof(head), "killed by the OOM killer (%s)",
                 rt_signal_name((int)signo, sig, sizeof(sig)));
    } else if (!isnan(signo)) {
        cls = "bad", id = "signal";
        snprintf(head, sizeof(head), "killed by %s", rt_signal_name((int)signo, sig, sizeof(sig)));
    } else if (status && !strcmp(status, "interrupted")) {
        id = "interrupted";
        snprintf(head, sizeof(head), "interrupted: the recorder stopped before the job ended");
    } else if (status && !strcmp(status, "running")) {
        id = "running";
        snprintf(head, sizeof(head), "still recording");
    } else if (!isnan(code) && code != 0) {
        cls = "bad", id = "failed";
        snprintf(head, sizeof(head), "failed (exit %.0f)", code);
    } else if (status && !strcmp(status, "finished")) {
        cls = "ok", id = "finished";
        if (isnan(code)) /* a system-only recording: no job, no exit */
            snprintf(head, sizeof(head), "finished");
        else
            snprintf(head, sizeof(head), "finished (exit %.0f)", code);
    }
    html_putf(p,
              "<div class=\"banner %s\" id=\"status\" role=\"status\" data-status=\"%s\">"
              "<strong>",
              cls, id);
    html_esc(p, head);
    html_put(p, "</strong>");
    if (!isnan(dur) && !strcmp(id, "interrupted"))
        html_putf(p, " · %s recorded", rt_fmt_duration(b, sizeof(b), dur));
    else if (!isnan(dur) && strcmp(id, "running") != 0)
        html_putf(p, " after %s", rt_fmt_duration(b, sizeof(b), dur));
    html_put(p, "</div>\n");
}

/* One tag as <code>k=v</code>, the first one opening the row (a walk over the stored tags). */
struct tag_walk {
    struct rt_buf *p;
    int n;
};

static int put_tag(void *ud, const char *key, enum rt_json_type type, const char *value)
{
    struct tag_walk *w = ud;
    (void)type;
    html_put(w->p, w->n++ ? ", " : "<tr><th>tags</th><td>");
    html_put(w->p, "<code>");
    html_esc(w->p, key ? key : "");
    html_put(w->p, "=");
    html_esc(w->p, value ? value : "");
    html_put(w->p, "</code>");
    return 0;
}

static int run_tags(struct rt_buf *p, const char *tags_json, char *err, size_t errlen)
{
    char why[256];
    struct rt_json *j = rt_json_open(tags_json, strlen(tags_json), why, sizeof(why));
    if (!j) {
        snprintf(err, errlen, "report: cannot read the run's tags: %s", why);
        return -1;
    }
    struct tag_walk w = {p, 0};
    int rc = rt_json_get(j, "$", NULL) == RT_JSON_OBJECT ? rt_json_each(j, "$", put_tag, &w) : 0;
    if (rc < 0)
        snprintf(err, errlen, "report: cannot read the run's tags: %s", rt_json_errmsg(j));
    if (w.n)
        html_put(p, "</td></tr>\n");
    rt_json_close(j);
    return rc < 0 ? -1 : 0;
}

/* status: "finished, exit code 0 (exited)" */
static void run_status(struct rt_buf *p, const struct rt_summary_run *r)
{
    char sig[32];
    const char *reason = r->end_reason;
    html_put(p, "<tr><th>status</th><td>");
    html_esc(p, r->status ? r->status : "unknown");
    if (r->in_progress)
        html_put(p, " (still recording)");
    if (!isnan(r->exit_signal)) { /* (its exit code is the shell's 128 + N) */
        html_putf(p, ", killed by %s (signal %.0f)",
                  rt_signal_name((int)r->exit_signal, sig, sizeof(sig)), r->exit_signal);
        if (reason && !strcmp(reason, "signaled"))
            reason = NULL;
    } else if (!isnan(r->exit_code)) {
        html_putf(p, ", exit code %.0f", r->exit_code);
    }
    if (reason && *reason) {
        html_put(p, " (");
        html_esc(p, reason);
        html_put(p, ")");
    }
    html_put(p, "</td></tr>\n");
}

static void section_host(struct rt_buf *p, const struct rt_summary_host *h)
{
    char b[128], n[32];
    html_put(p, "<h3>Host</h3>\n<table class=\"facts\">\n");
    fact_text(p, "hostname", h->hostname);
    fact_text(p, "CPU", h->cpu_model);
    fact_text(p, "vCPUs", whole(n, sizeof(n), h->vcpus));
    if (!isnan(h->memory_mib))
        html_putf(p, "<tr><th>memory</th><td>%s</td></tr>\n",
                  rt_fmt_mib(b, sizeof(b), h->memory_mib));
    fact_text(p, "operating system", h->os);
    fact_text(p, "kernel", h->kernel);
    if (h->gpu_count > 0) {
        html_putf(p, "<tr><th>GPUs</th><td>%.0f", h->gpu_count);
        if (h->gpu_model) {
            html_put(p, " × ");
            html_esc(p, h->gpu_model);
        }
        if (!isnan(h->gpu_memory_mib))
            html_putf(p, ", %s VRAM in all", rt_fmt_mib(b, sizeof(b), h->gpu_memory_mib));
        html_put(p, "</td></tr>\n");
    }
    html_put(p, "</table>\n</section>\n");
}

static int section_run(struct rt_buf *p, const struct rt_summary *s, char *err, size_t errlen)
{
    static const char *const labels[RT_SM_N] = {
        [RT_SM_JOB] = "job",
        [RT_SM_PROJECT] = "project",
        [RT_SM_STAGE] = "stage",
        [RT_SM_TASK] = "task",
        [RT_SM_TEAM] = "team",
        [RT_SM_ENV] = "environment",
        [RT_SM_LANGUAGE] = "language",
        [RT_SM_ORCHESTRATOR] = "orchestrator",
        [RT_SM_EXECUTOR] = "executor",
        [RT_SM_EXTERNAL_RUN_ID] = "external run id",
        [RT_SM_CONTAINER_IMAGE] = "container image",
    };
    const struct rt_summary_run *r = &s->run;
    char b[128], n[32];
    html_put(p, "<section class=\"run\"><h2>Run</h2>\n<table class=\"facts\">\n");
    char *cmd =
        r->command_json && r->command_json[0] == '[' ? rt_fmt_command(r->command_json) : NULL;
    if (cmd) {
        html_put(p, "<tr><th>command</th><td><code>");
        html_esc(p, cmd);
        html_put(p, "</code></td></tr>\n");
        free(cmd);
    }
    for (int i = 0; i < RT_SM_N; i++)
        fact_text(p, labels[i], r->meta[i]);
    if (r->tags_json && run_tags(p, r->tags_json, err, errlen) != 0)
        return -1;
    if (!isnan(r->started_at))
        html_putf(p, "<tr><th>started</th><td>%s</td></tr>\n",
                  fmt_utc(b, sizeof(b), r->started_at));
    if (!isnan(r->ended_at))
        html_putf(p, "<tr><th>ended</th><td>%s</td></tr>\n", fmt_utc(b, sizeof(b), r->ended_at));
    if (!isnan(r->duration_s))
        html_putf(p, "<tr><th>duration</th><td>%s</td></tr>\n",
                  rt_fmt_duration(b, sizeof(b), r->duration_s));
    run_status(p, r);
    if (!isnan(r->samples)) {
        html_putf(p, "<tr><th>samples</th><td>%.0f after the baseline", r->samples);
        if (!isnan(r->interval_s))
            html_putf(p, ", every %g s", r->interval_s);
        html_put(p, "</td></tr>\n");
    }
    for (int i = 0; i < s->nnotes; i++)
        fact_text(p, "note", s->notes[i]);
    if (s->cpu_time.known) {
        char c1[48], c2[48];
        html_putf(p, "<tr><th>CPU time</th><td>%s (%s cores over the wall time; %s)</td></tr>\n",
                  rt_fmt_duration(c1, sizeof(c1), s->cpu_time.total_s),
                  rt_fmt_num(c2, sizeof(c2), s->cpu_time.mean_cores),
                  !strcmp(s->cpu_time.source, "kernel") ? "as the kernel counted the job"
                                                        : "the job's processes, sampled");
    }
    if (s->kernel.known)
        html_putf(p,
                  "<tr><th>largest process</th><td>%s at its peak (its resident set, the "
                  "kernel's count)</td></tr>\n",
                  rt_fmt_mib(b, sizeof(b), s->kernel.maxrss_mib));
    fact_text(p, "mode", r->mode);
    fact_text(p, "tracked pid", whole(n, sizeof(n), r->pid));
    if (!isnan(r->id)) {
        html_putf(p, "<tr><th>run</th><td>%.0f", r->id);
        if (r->uuid) {
            html_put(p, " (<code>");
            html_esc(p, r->uuid);
            html_put(p, "</code>)");
        }
        html_put(p, "</td></tr>\n");
    }
    html_put(p, "</table>\n");
    section_host(p, &s->host);
    return 0;
}

static const struct stat_row {
    const char *label;
    enum svg_unit unit;
} stat_rows[RT_M_N] = {
    [RT_M_CPU] = {"CPU (cores)", U_CORES},
    [RT_M_MEM] = {"memory (process: PSS, system: used)", U_MIB},
    [RT_M_DREAD] = {"disk read", U_BPS},
    [RT_M_DWRITE] = {"disk write", U_BPS},
    [RT_M_NRECV] = {"network received", U_BPS},
    [RT_M_NSENT] = {"network sent", U_BPS},
    [RT_M_GPU] = {"GPU usage (GPUs)", U_GPUS},
    [RT_M_VRAM] = {"GPU memory", U_MIB},
    [RT_M_GPUS] = {"GPUs in use", U_COUNT},
};

static void stat_cells(struct rt_buf *p, const struct rt_stat4 *t, enum svg_unit u)
{
    char b[64];
    const double v[4] = {t->mean, t->p50, t->p95, t->max};
    for (int i = 0; i < 4; i++)
        if (t->ok)
            html_putf(p, "<td class=\"n\">%s</td>", svg_fmt_unit(b, sizeof(b), v[i], u));
        else
            html_put(p, "<td class=\"n\">–</td>");
}

static void section_stats(struct rt_buf *p, const struct rt_summary *s)
{
    static const struct rt_stat4 none;
    char b[64];
    html_put(p, "<section class=\"stats\"><h2>Usage</h2>\n");
    if (!s->has_tree)
        html_put(p,
                 "<p class=\"muted\">A system-only recording: no process tree was tracked.</p>\n");
    html_put(p, "<table class=\"stats\">\n<thead><tr><th rowspan=\"2\">metric</th>"
                "<th colspan=\"4\">process tree</th><th colspan=\"4\">system</th></tr>\n<tr>");
    for (int k = 0; k < 2; k++)
        html_put(p, "<th class=\"n\">mean</th><th class=\"n\">p50</th><th class=\"n\">p95</th>"
                    "<th class=\"n\">max</th>");
    html_put(p, "</tr></thead>\n<tbody>\n");
    for (int m = 0; m < RT_M_N; m++) {
        const struct rt_stat4 *tree = s->has_tree ? &s->process.st[m] : &none;
        /* GPU rows only where a GPU was there to measure */
        if (!tree->ok && !s->system.st[m].ok)
            continue;
        html_putf(p, "<tr><th>%s</th>", stat_rows[m].label);
        stat_cells(p, tree, stat_rows[m].unit);
        stat_cells(p, &s->system.st[m], stat_rows[m].unit);
        html_put(p, "</tr>\n");
    }
    html_put(p, "</tbody></table>\n");
    static const char *const totals[RT_T_N] = {"disk read", "disk written", "network received",
                                               "network sent"};
    html_put(p, "<h3>Totals over the run</h3>\n<table class=\"totals\">\n<thead><tr><th></th>"
                "<th class=\"n\">process tree</th><th class=\"n\">system</th></tr></thead>\n"
                "<tbody>\n");
    for (int t = 0; t < RT_T_N; t++) {
        html_putf(p, "<tr><th>%s</th>", totals[t]);
        /* (the tree has no network) */
        double v[2] = {s->has_tree && t < RT_T_NRECV ? s->process.total[t] : RT_NAN,
                       s->system.total[t]};
        for (int k = 0; k < 2; k++)
            if (!isnan(v[k]))
                html_putf(p, "<td class=\"n\">%s</td>", rt_fmt_bytes(b, sizeof(b), v[k], ""));
            else
                html_put(p, "<td class=\"n\">–</td>");
        html_put(p, "</tr>\n");
    }
    html_put(p, "</tbody></table>\n</section>\n");
}

static void pct_row(struct rt_buf *p, const char *label, double v)
{
    if (!isnan(v))
        html_putf(p, "<tr><th>%s</th><td class=\"n\">%.1f %%</td></tr>\n", label, v);
}

static void server_part(struct rt_buf *p, const struct rt_summary *s)
{
    char b[64];
    const struct rt_summary_server *v = &s->server;
    if (!v->json) {
        if (v->asked && v->error) { /* asked for, but Keeper did not answer */
            html_put(p, "<p class=\"muted\">No server recommendation: ");
            html_esc(p, v->error);
            html_put(p, "</p>\n");
        }
        return;
    }
    html_put(p,
             "<h3>Cheapest matching server (Spare Cores Keeper)</h3>\n<table class=\"facts\">\n");
    const char *name = v->display_name ? v->display_name : v->name ? v->name : v->server_id;
    fact_text(p, "server", name);
    fact_text(p, "vendor", v->vendor_id);
    fact_text(p, "API reference", v->api_reference);
    fact_text(p, "vCPUs", v->vcpus);
    if (!isnan(v->memory_amount))
        html_putf(p, "<tr><th>memory</th><td>%s</td></tr>\n",
                  rt_fmt_mib(b, sizeof(b), v->memory_amount));
    if (v->gpu_count > 0) {
        html_putf(p, "<tr><th>GPUs</th><td>%.0f", v->gpu_count);
        if (v->gpu_model) {
            html_put(p, " × ");
            html_esc(p, v->gpu_model);
        }
        html_put(p, "</td></tr>\n");
    }
    if (!isnan(v->price))
        html_putf(p, "<tr><th>on-demand price</th><td>$%.4f per hour</td></tr>\n", v->price);
    if (!isnan(v->price) && !isnan(s->run.duration_s))
        html_putf(p, "<tr><th>this run on it</th><td>about $%.6f</td></tr>\n",
                  v->price / 3600 * s->run.duration_s);
    html_put(p, "</table>\n");
}

/* How the recommendation was made: a caveat first, then what decided the memory and the CPU
 * figures, the starved tree's demand, the sampled peak and who held it. */
static void reco_how(struct rt_buf *p, const struct rt_summary *s)
{
    const struct rt_reco *r = &s->reco;
    if (r->caveat_kind) {
        html_put(p, "<p class=\"caveat\">");
        html_esc(p, r->caveat);
        html_put(p, "</p>\n");
    }
    html_put(p, "<p class=\"muted how\">memory: ");
    html_esc(p, r->arithmetic);
    html_put(p, "</p>\n");
    if (!isnan(r->cpu_cores)) {
        char b1[32];
        html_putf(p,
                  "<p class=\"muted how\" id=\"cpu-arithmetic\">CPU: %s %.2f cores, rounded to a "
                  "whole core (halves to even, at least 1) -> %s</p>\n",
                  !strcmp(r->cpu_from, "demand") ? "demand" : "mean use", r->cpu_cores,
                  rt_fmt_count(b1, sizeof(b1), (double)r->cpu, "vCPU"));
    }
    const struct rt_summary_demand *d = &s->demand;
    if (!strcmp(r->cpu_from, "demand") && d->known)
        html_putf(p,
                  "<p class=\"muted how\">CPU: starved: the job waited for a CPU %.0f %% of the "
                  "time it wanted one; it used %.2f cores and would have used ~%.2f</p>\n",
                  d->wait_pct, d->usage_cores, d->demand_cores);
    const struct rt_summary_peak *pk = &s->peak;
    if (!pk->known || isnan(pk->at_s))
        return;
    html_putf(p, "<p class=\"muted how\">peak memory sampled: %.1f MiB at +%.1f s, held by",
              pk->mib, pk->at_s);
    for (int i = 0; i < pk->nprocs && !isnan(pk->procs[i].pid); i++) {
        html_put(p, i ? ", " : " ");
        html_esc(p, pk->procs[i].name ? pk->procs[i].name : "-");
        html_putf(p, " (%.0f) %.1f MiB", pk->procs[i].pid, pk->procs[i].value);
    }
    if (pk->others_count > 0)
        html_putf(p, ", %.0f more %.1f MiB", pk->others_count, pk->others_pss_mib);
    html_put(p, "</p>\n");
}

static void section_recommendation(struct rt_buf *p, const struct rt_summary *s)
{
    const struct rt_reco *r = &s->reco;
    html_put(p, "<section class=\"recommendation\"><h2>Recommendation</h2>\n<p class=\"rec\">");
    html_esc(p, r->text);
    html_put(p, "</p>\n<pre class=\"metaflow\"><code>");
    html_esc(p, r->metaflow);
    html_put(p, "</code></pre>\n");
    reco_how(p, s);
    html_put(p, "<div class=\"cols\"><div>\n<table class=\"facts\">\n");
    html_putf(p,
              "<tr><th>vCPUs</th><td class=\"n\">%ld (%ld to keep up in 95 %% of the "
              "intervals)</td></tr>\n",
              r->cpu, r->cpu_p95);
    html_putf(p, "<tr><th>memory</th><td class=\"n\">%ld MiB</td></tr>\n", r->memory);
    if (r->gpu > 0) {
        html_putf(p, "<tr><th>GPUs</th><td class=\"n\">%ld</td></tr>\n", r->gpu);
        html_putf(p, "<tr><th>VRAM</th><td class=\"n\">%ld MiB</td></tr>\n", r->vram);
    }
    html_put(p, "</table>\n</div><div>\n<table class=\"facts efficiency\">\n"
                "<caption class=\"muted\">efficiency: used / what the host has</caption>\n");
    pct_row(p, "CPU", s->eff.cpu_pct);
    pct_row(p, "memory", s->eff.memory_pct);
    pct_row(p, "GPU", s->eff.gpu_pct);
    pct_row(p, "VRAM", s->eff.vram_pct);
    if (s->allocation && s->has_tree) {
        char b1[64], b2[64];
        const struct rt_sharing *sh = &s->sharing;
        html_put(p, "<tr><th>host</th><td>");
        html_esc(p, s->allocation);
        if (sh->resource && !strcmp(sh->resource, "cpu"))
            html_putf(p, " (other processes used %s cores beside the job)",
                      rt_fmt_num(b1, sizeof(b1), sh->others_cores));
        else if (sh->resource && !strcmp(sh->resource, "gpu"))
            html_putf(p, " (other processes kept %s GPUs busy)",
                      rt_fmt_num(b1, sizeof(b1), sh->others_gpus));
        else if (sh->resource)
            html_putf(p, " (other processes read and wrote %s of the disks)",
                      rt_fmt_bytes(b1, sizeof(b1), sh->others_disk_bytes, ""));
        else
            html_putf(p, " (other processes used %s cores and %s of disk I/O)",
                      rt_fmt_num(b1, sizeof(b1), sh->others_cores),
                      isnan(sh->others_disk_bytes)
                          ? "-"
                          : rt_fmt_bytes(b2, sizeof(b2), sh->others_disk_bytes, ""));
        html_put(p, "</td></tr>\n");
    }
    html_put(p, "</table>\n</div></div>\n");
    server_part(p, s);
    html_put(p, "</section>\n");
}

static void top_table(struct rt_buf *p, const struct rt_summary_proc *rows, int n,
                      const char *title, const char *col, int mib)
{
    char b[64], pid[32];
    html_putf(p,
              "<div><h3>%s</h3>\n<table class=\"top\">\n<thead><tr><th class=\"n\">pid</th>"
              "<th>name</th><th class=\"n\">%s</th></tr></thead>\n<tbody>\n",
              title, col);
    for (int i = 0; i < n; i++) {
        html_put(p, "<tr><td class=\"n\">");
        html_esc(p, whole(pid, sizeof(pid), rows[i].pid) ? pid : "–");
        html_put(p, "</td><td>");
        html_esc(p, rows[i].name ? rows[i].name : "–");
        if (isnan(rows[i].value))
            html_put(p, "</td><td class=\"n\">–</td></tr>\n");
        else if (mib)
            html_putf(p, "</td><td class=\"n\">%s</td></tr>\n",
                      rt_fmt_mib(b, sizeof(b), rows[i].value));
        else
            html_putf(p, "</td><td class=\"n\">%.2f</td></tr>\n", rows[i].value);
    }
    if (!n)
        html_put(p, "<tr><td colspan=\"3\" class=\"muted\">none</td></tr>\n");
    html_put(p, "</tbody></table></div>\n");
}

/* The tree's processes on GPUs: nothing when no process of the tree was on one. */
static void gpu_table(struct rt_buf *p, const struct report_gpu_proc *rows, int n)
{
    char b[64];
    if (!n)
        return;
    html_put(p, "<div><h3>on GPUs</h3>\n<table class=\"top gpu\">\n<thead><tr>"
                "<th class=\"n\">pid</th><th>name</th><th class=\"n\">GPUs</th>"
                "<th class=\"n\">peak VRAM</th><th class=\"n\">mean busy</th>"
                "<th class=\"n\">peak busy</th><th class=\"n\">samples</th></tr></thead>\n"
                "<tbody>\n");
    for (int i = 0; i < n; i++) {
        const struct report_gpu_proc *g = &rows[i];
        html_putf(p, "<tr><td class=\"n\">%lld</td><td>", (long long)g->pid);
        html_esc(p, g->name ? g->name : "–");
        html_putf(p, "</td><td class=\"n\">%lld</td>", (long long)g->gpus);
        if (isnan(g->vram_mib))
            html_put(p, "<td class=\"n\">–</td>");
        else
            html_putf(p, "<td class=\"n\">%s</td>", rt_fmt_mib(b, sizeof(b), g->vram_mib));
        const double busy[2] = {g->busy_mean, g->busy_max};
        for (int k = 0; k < 2; k++)
            if (isnan(busy[k]))
                html_put(p, "<td class=\"n\">–</td>");
            else
                html_putf(p, "<td class=\"n\">%.1f %%</td>", busy[k]);
        html_putf(p, "<td class=\"n\">%lld</td></tr>\n", (long long)g->samples);
    }
    html_put(p, "</tbody></table></div>\n");
}

static int section_top(struct rt_buf *p, struct rt_store *store, const struct rt_summary *s,
                       char *err, size_t errlen)
{
    struct report_gpu_proc *gpu;
    int ngpu;
    if (report_load_gpu_procs(store, (int64_t)s->run.id, &gpu, &ngpu, err, errlen) != 0)
        return -1;
    html_put(p, "<section class=\"top\"><h2>Top processes</h2>\n<div class=\"cols\">\n");
    top_table(p, s->top.by_cpu, s->top.ncpu, "by CPU time", "CPU s", 0);
    top_table(p, s->top.by_pss, s->top.npss, "by peak memory (PSS)", "PSS", 1);
    gpu_table(p, gpu, ngpu);
    html_put(p, "</div>\n</section>\n");
    report_gpu_procs_free(gpu, ngpu);
    return 0;
}

/* --- the Slurm job ---------------------------------------------------------------------------- */

/* One row of the job's table (rt_cluster_row_of: a node's, or the job's total): wall, CPU
 * time, cores allocated, CPU efficiency, peak, allocated memory, memory efficiency. */
static void job_cells(struct rt_buf *p, const struct rt_cluster *c, const struct rt_cluster_node *n)
{
    struct rt_cluster_row r;
    rt_cluster_row_of(c, n, &r);
    const double v[7] = {r.wall_s,        r.cpu_s,           r.alloc_cpus,
                         r.cpu_eff_pct,   r.memory_peak_mib, r.alloc_memory_mib,
                         r.memory_eff_pct};
    static const int kind[7] = {0, 0, 1, 2, 3, 3, 2}; /* duration, number, percent, MiB */
    for (int i = 0; i < 7; i++) {
        char b[48];
        const char *t = "-";
        if (!isnan(v[i]))
            t = kind[i] == 0   ? rt_fmt_duration(b, sizeof(b), v[i])
                : kind[i] == 1 ? rt_fmt_plain(b, sizeof(b), v[i], 2)
                : kind[i] == 2 ? rt_fmt_pct(b, sizeof(b), v[i])
                               : rt_fmt_mib(b, sizeof(b), v[i]);
        html_putf(p, "<td class=\"n\">%s</td>", t);
    }
}

/* The report of a Slurm job (--slurm-job): its nodes, the job's total, the sbatch options for
 * next time, as `rtrack summary --slurm-job` gives them. */
static void section_slurm_job(struct rt_buf *p, const struct rt_cluster *c)
{
    html_put(p, "<section class=\"slurm-job\"><h2>Slurm job ");
    html_esc(p, c->slurm_job);
    html_put(p, "</h2>\n<p class=\"muted\">what each node used against what Slurm allocated it "
                "(CPU efficiency: CPU time / (cores allocated &#215; the job's wall time), as seff "
                "computes it); this page's other sections are one run of the job</p>\n"
                "<table class=\"top slurm-nodes\">\n<thead><tr><th>node</th><th>steps</th>"
                "<th class=\"n\">wall</th><th class=\"n\">CPU time</th>"
                "<th class=\"n\">cores allocated</th><th class=\"n\">CPU efficiency</th>"
                "<th class=\"n\">peak memory</th><th class=\"n\">allocated memory</th>"
                "<th class=\"n\">memory efficiency</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < c->count; i++) {
        const struct rt_cluster_node *n = &c->n[i];
        html_put(p, "<tr><td>");
        html_esc(p, n->name);
        if (*n->array_task) {
            html_put(p, " [");
            html_esc(p, n->array_task);
            html_put(p, "]");
        }
        html_put(p, "</td><td>");
        html_esc(p, n->steps);
        html_put(p, "</td>");
        job_cells(p, c, n);
        html_put(p, "</tr>\n");
    }
    html_put(p, "</tbody>\n<tfoot><tr><th>job total</th><td>-</td>");
    job_cells(p, c, NULL);
    html_put(p, "</tr></tfoot>\n</table>\n<p class=\"rec\">next time: <code class=\"sbatch\">"
                "sbatch ");
    html_esc(p, c->sbatch);
    html_put(p, "</code></p>\n");
    if (!isnan(c->mem_peak_max)) {
        char b[48];
        html_putf(p,
                  "<p class=\"muted how\">the job's total adds the nodes' CPU time, cores, "
                  "memory and peaks; --mem is per node: the largest node peaked at %s</p>\n",
                  rt_fmt_mib(b, sizeof(b), rt_py_round(c->mem_peak_max, 2)));
    }
    html_put(p, "</section>\n");
}

/* --- the page ------------------------------------------------------------------------------- */

static void page_head(struct rt_buf *p, const struct rt_summary *s)
{
    char b[128];
    const char *job = s->run.meta[RT_SM_JOB], *host = s->host.hostname;
    long long id = (long long)s->run.id;
    html_put(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                "style-src 'unsafe-inline'\">\n"
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    html_putf(p, "<meta name=\"generator\" content=\"rtrack %s\">\n<title>", RTRACK_VERSION);
    html_putf(p, "rtrack report: run %lld", id);
    if (job) {
        html_put(p, " (");
        html_esc(p, job);
        html_put(p, ")");
    }
    html_put(p, "</title>\n<style>");
    html_put(p, rt_sql_report_css);
    html_put(p, "</style>\n</head>\n<body>\n<header>\n<h1>");
    if (job) {
        html_esc(p, job);
        html_putf(p, " <span class=\"muted\">· run %lld</span>", id);
    } else {
        html_putf(p, "Run %lld", id);
    }
    html_put(p, "</h1>\n<p class=\"sub\">rtrack report");
    if (host) {
        html_put(p, " · ");
        html_esc(p, host);
    }
    if (!isnan(s->run.started_at))
        html_putf(p, " · %s", fmt_utc(b, sizeof(b), s->run.started_at));
    if (!isnan(s->run.duration_s))
        html_putf(p, " · %s", rt_fmt_duration(b, sizeof(b), s->run.duration_s));
    html_put(p, "</p>\n</header>\n");
}

int rt_report_html(struct rt_store *store, const struct rt_summary *s, const struct rt_cluster *job,
                   double now, struct rt_buf *out, char *err, size_t errlen)
{
    char b[128];
    page_head(out, s);
    section_banner(out, s);
    if (job)
        section_slurm_job(out, job);
    if (section_run(out, s, err, errlen) != 0)
        return -1;
    section_recommendation(out, s);
    section_stats(out, s);
    if (section_top(out, store, s, err, errlen) != 0 ||
        report_section_charts(out, store, s, err, errlen) != 0)
        return -1;
    html_putf(out,
              "<footer>Made by rtrack %s (commit %s) on %s from the recorded samples; "
              "nothing on this page is fetched from elsewhere.</footer>\n</body>\n</html>\n",
              RTRACK_VERSION, RTRACK_GIT_COMMIT, fmt_utc(b, sizeof(b), now));
    return 0;
}
