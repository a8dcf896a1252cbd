/* report.c - a run as one self-contained HTML page (report.h).
 *
 * Everything the page says about the run is read from the summary JSON (base/json.h: SQLite's
 * JSON functions on the text), so the page and `rtrack summary` cannot disagree. The charts are
 * drawn here as inline SVG from sample_metrics (the view with the exported columns and the
 * per-second rates) and the samples table: no JavaScript, no fonts or images to fetch, and a
 * Content-Security-Policy that forbids fetching anything, so a string that slipped through
 * could not load a resource either. Every string from the database is HTML-escaped (a job
 * name may well be `<script>`). */
#include "rtrack/summary/report.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/json.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/version.h"

struct page {
    struct rt_store *store;
    struct rt_buf *out;
    struct rt_json *doc;    /* the summary */
    enum rt_json_type type; /* of the last path asked */
    char *val;              /* its value, as rt_json_get() gives it */
    char *err;
    size_t errlen;
};

/* --- output helpers ------------------------------------------------------------------------- */

static void put(struct page *p, const char *s)
{
    rt_buf_puts(p->out, s);
}

static void putf(struct page *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct page *p, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        rt_buf_append(p->out, small, (size_t)n);
        return;
    }
    rt_buf_reserve(p->out, p->out->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p->out->p + p->out->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    p->out->len += (size_t)n;
}

/* Text or attribute value: the five characters HTML gives a meaning. */
static void put_esc(struct page *p, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            continue;
        }
        rt_buf_append(p->out, run, (size_t)(s - run));
        put(p, rep);
        run = s + 1;
    }
    rt_buf_append(p->out, run, (size_t)(s - run));
}

static int json_fail(struct page *p)
{
    snprintf(p->err, p->errlen, "report: cannot read the summary: %s", rt_json_errmsg(p->doc));
    return -1;
}

static int db_fail(struct page *p, const char *what)
{
    snprintf(p->err, p->errlen, "report: cannot read %s: %s", what, rt_store_error(p->store));
    return -1;
}

/* --- reading the summary JSON --------------------------------------------------------------- */

/* Look up `path`: 1 when it exists and is not null, its type in p->type and its value in
 * p->val (until the next lookup). */
static int jfind(struct page *p, const char *path)
{
    free(p->val);
    p->type = rt_json_get(p->doc, path, &p->val);
    return p->type > RT_JSON_NULL;
}

static int jnum(struct page *p, const char *path, double *v)
{
    enum rt_json_type t = rt_json_num(p->doc, path, v);
    return t == RT_JSON_INTEGER || t == RT_JSON_REAL;
}

static int jnumf(struct page *p, double *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int jnumf(struct page *p, double *v, const char *fmt, ...)
{
    char path[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof(path), fmt, ap);
    va_end(ap);
    return jnum(p, path, v);
}

/* The value as text (numbers too), or NULL; the caller frees. */
static char *jstr(struct page *p, const char *path)
{
    if (!jfind(p, path))
        return NULL;
    return p->val ? xstrdup(p->val) : NULL;
}

static int jtrue(struct page *p, const char *path)
{
    return jfind(p, path) && p->type == RT_JSON_TRUE;
}

/* --- number text ---------------------------------------------------------------------------- */

enum unit { U_CORES, U_MIB, U_BPS, U_BYTES, U_GB, U_GPUS, U_COUNT };

/* A value with its unit, as the tables and axis labels print it. */
static const char *fmt_unit(char *b, size_t n, double v, enum unit u)
{
    switch (u) {
    case U_CORES:
        snprintf(b, n, "%.2f", v);
        break;
    case U_MIB:
        return rt_fmt_mib(b, n, v);
    case U_BPS:
        return rt_fmt_bytes(b, n, v, "/s");
    case U_BYTES:
        return rt_fmt_bytes(b, n, v, "");
    case U_GB:
        snprintf(b, n, "%.2f GB", v);
        break;
    case U_GPUS:
        snprintf(b, n, "%.2f", v);
        break;
    case U_COUNT:
        snprintf(b, n, "%.1f", v);
        break;
    }
    return b;
}

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

/* --- page parts ----------------------------------------------------------------------------- */

static const char css[] =
    ":root{color-scheme:light}"
    "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
    "sans-serif;color:#111;background:#fff;max-width:980px;margin:0 auto;padding:16px 20px}"
    "h1{font-size:1.5em;margin:.2em 0;overflow-wrap:anywhere}"
    "h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:2px solid #333;padding-bottom:2px}"
    "h3{font-size:1em;margin:1em 0 .3em}"
    ".sub{color:#444;margin:0 0 1em}"
    "table{border-collapse:collapse;margin:.3em 0 .8em}"
    "th,td{border:1px solid #bbb;padding:3px 8px;text-align:left;vertical-align:top}"
    "thead th{background:#eee}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
    "table.facts th{font-weight:600;background:#f4f4f4;white-space:nowrap}"
    "table.slurm-nodes th{white-space:nowrap}"
    "table.facts td{overflow-wrap:anywhere}"
    "code,pre{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace}"
    "pre.metaflow{border:1px solid #999;border-left:4px solid #333;padding:6px 10px;"
    "background:#f7f7f7;white-space:pre-wrap;overflow-wrap:anywhere}"
    "p.rec{font-size:1.15em;font-weight:600;margin:.3em 0}"
    ".cols{display:flex;flex-wrap:wrap;gap:0 28px}"
    ".muted{color:#555}"
    "figure{margin:0 0 18px;break-inside:avoid;page-break-inside:avoid}"
    "figcaption{font-size:.9em;color:#444}"
    "svg.chart{width:100%;height:auto;max-width:900px;display:block;border:1px solid #ccc}"
    "svg.chart text{font:12px system-ui,Arial,sans-serif;fill:#222}"
    "svg.chart text.title{font-weight:700;font-size:14px}"
    ".banner{border:1px solid;border-left:8px solid;padding:8px 12px;margin:.6em 0 1em;"
    "font-size:1.1em}"
    ".banner strong{font-size:1.1em}"
    ".banner.ok{border-color:#009E73;background:#eef8f3}"
    ".banner.bad{border-color:#D55E00;background:#fbeee6}"
    ".banner.warn{border-color:#E69F00;background:#fdf5e4}"
    "p.folded{margin:.2em 0 .8em;font-style:italic}"
    "svg.chart rect.hv{fill:transparent}"
    "svg.chart rect.hv:hover{fill:rgba(0,0,0,.07)}"
    "footer{margin-top:2em;border-top:1px solid #999;padding-top:4px;color:#555;"
    "font-size:.85em}"
    "@page{margin:14mm}"
    "@media print{body{max-width:none;padding:0;font-size:10.5pt}"
    "h2{break-after:avoid;page-break-after:avoid}"
    "section.stats,section.recommendation,section.top,table{break-inside:avoid;"
    "page-break-inside:avoid}"
    "thead th,table.facts th,pre.metaflow{background:none}"
    "svg.chart{max-width:100%;border-color:#888}}";

/* One row of the facts table when the value exists. */
static void fact_text(struct page *p, const char *label, const char *path)
{
    char *v = jstr(p, path);
    if (!v)
        return;
    putf(p, "<tr><th>%s</th><td>", label);
    put_esc(p, v);
    put(p, "</td></tr>\n");
    free(v);
}

/* An argument as a POSIX shell would need it quoted. */
static void put_shell_word(struct page *p, const char *w)
{
    if (*w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                        "_@%+=:,./-") == strlen(w)) {
        put_esc(p, w);
        return;
    }
    put(p, "&#39;");
    for (const char *s = w; *s; s++) {
        if (*s == '\'') {
            put(p, "&#39;\\&#39;&#39;");
        } else {
            char c[2] = {*s, '\0'};
            put_esc(p, c);
        }
    }
    put(p, "&#39;");
}

/* A walk over the members of an array or object of the summary (rt_json_each). */
struct walk {
    struct page *p;
    int n; /* members put so far */
};

/* The command's words, each quoted for a shell. */
static int put_command_word(void *ud, const char *key, enum rt_json_type type, const char *value)
{
    struct walk *w = ud;
    (void)key;
    (void)type;
    if (w->n++)
        put(w->p, " ");
    put_shell_word(w->p, value ? value : "");
    return 0;
}

/* One tag as <code>k=v</code>, the first one opening the row. */
static int put_tag(void *ud, const char *key, enum rt_json_type type, const char *value)
{
    struct walk *w = ud;
    (void)type;
    put(w->p, w->n++ ? ", " : "<tr><th>tags</th><td>");
    put(w->p, "<code>");
    put_esc(w->p, key ? key : "");
    put(w->p, "=");
    put_esc(w->p, value ? value : "");
    put(w->p, "</code>");
    return 0;
}

/* The status banner at the top: how the run ended, in words and a colour: finished, failed
 * (exit N), killed by a signal (its name), killed by the OOM killer, interrupted (its recorder
 * is gone: the view run_status), still recording. */
static void section_banner(struct page *p)
{
    char b[64], sig[32];
    double code = NAN, signo = NAN, dur = NAN;
    char *status = jstr(p, "$.run.status");
    char *kind = jstr(p, "$.recommendation.caveat.kind");
    jnum(p, "$.run.exit_code", &code);
    jnum(p, "$.run.exit_signal", &signo);
    jnum(p, "$.run.duration_s", &dur);
    const char *cls = "warn", *id = "unknown";
    char head[160];
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
    putf(p,
         "<div class=\"banner %s\" id=\"status\" role=\"status\" data-status=\"%s\">"
         "<strong>",
         cls, id);
    put_esc(p, head);
    put(p, "</strong>");
    if (!isnan(dur) && !strcmp(id, "interrupted"))
        putf(p, " · %s recorded", rt_fmt_duration(b, sizeof(b), dur));
    else if (!isnan(dur) && strcmp(id, "running") != 0)
        putf(p, " after %s", rt_fmt_duration(b, sizeof(b), dur));
    put(p, "</div>\n");
    free(status);
    free(kind);
}

static int section_run(struct page *p)
{
    char b[128], b2[128];
    double v;
    put(p, "<section class=\"run\"><h2>Run</h2>\n<table class=\"facts\">\n");
    if (jfind(p, "$.run.command") && p->type == RT_JSON_ARRAY) {
        struct walk w = {p, 0};
        put(p, "<tr><th>command</th><td><code>");
        if (rt_json_each(p->doc, "$.run.command", put_command_word, &w) < 0)
            return json_fail(p);
        put(p, "</code></td></tr>\n");
    }
    static const char *const meta[][2] = {
        {"job", "$.run.job_name"},
        {"project", "$.run.project_name"},
        {"stage", "$.run.stage_name"},
        {"task", "$.run.task_name"},
        {"team", "$.run.team"},
        {"environment", "$.run.env"},
        {"language", "$.run.language"},
        {"orchestrator", "$.run.orchestrator"},
        {"executor", "$.run.executor"},
        {"external run id", "$.run.external_run_id"},
        {"container image", "$.run.container_image"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(meta); i++)
        fact_text(p, meta[i][0], meta[i][1]);
    if (jfind(p, "$.run.tags") && p->type == RT_JSON_OBJECT) {
        struct walk w = {p, 0};
        if (rt_json_each(p->doc, "$.run.tags", put_tag, &w) < 0)
            return json_fail(p);
        if (w.n)
            put(p, "</td></tr>\n");
    }
    if (jnum(p, "$.run.started_at", &v)) {
        putf(p, "<tr><th>started</th><td>%s</td></tr>\n", fmt_utc(b, sizeof(b), v));
    }
    if (jnum(p, "$.run.ended_at", &v))
        putf(p, "<tr><th>ended</th><td>%s</td></tr>\n", fmt_utc(b, sizeof(b), v));
    if (jnum(p, "$.run.duration_s", &v))
        putf(p, "<tr><th>duration</th><td>%s</td></tr>\n", rt_fmt_duration(b, sizeof(b), v));
    /* status: "finished, exit code 0 (exited)" */
    char *status = jstr(p, "$.run.status");
    char *reason = jstr(p, "$.run.end_reason");
    put(p, "<tr><th>status</th><td>");
    put_esc(p, status ? status : "unknown");
    if (jtrue(p, "$.run.in_progress"))
        put(p, " (still recording)");
    if (jnum(p, "$.run.exit_signal", &v)) { /* (its exit code is the shell's 128 + N) */
        char sig[32];
        putf(p, ", killed by %s (signal %.0f)", rt_signal_name((int)v, sig, sizeof(sig)), v);
        if (reason && !strcmp(reason, "signaled"))
            reason[0] = '\0';
    } else if (jnum(p, "$.run.exit_code", &v)) {
        putf(p, ", exit code %.0f", v);
    }
    if (reason && *reason) {
        put(p, " (");
        put_esc(p, reason);
        put(p, ")");
    }
    put(p, "</td></tr>\n");
    free(status);
    free(reason);
    if (jnum(p, "$.run.samples", &v)) {
        putf(p, "<tr><th>samples</th><td>%.0f after the baseline", v);
        if (jnum(p, "$.run.interval_s", &v))
            putf(p, ", every %g s", v);
        put(p, "</td></tr>\n");
    }
    fact_text(p, "mode", "$.run.mode");
    fact_text(p, "tracked pid", "$.run.pid");
    if (jnum(p, "$.run.id", &v)) {
        putf(p, "<tr><th>run</th><td>%.0f", v);
        char *uuid = jstr(p, "$.run.uuid");
        if (uuid) {
            put(p, " (<code>");
            put_esc(p, uuid);
            put(p, "</code>)");
            free(uuid);
        }
        put(p, "</td></tr>\n");
    }
    put(p, "</table>\n");

    put(p, "<h3>Host</h3>\n<table class=\"facts\">\n");
    fact_text(p, "hostname", "$.host.hostname");
    fact_text(p, "CPU", "$.host.cpu_model");
    fact_text(p, "vCPUs", "$.host.vcpus");
    if (jnum(p, "$.host.memory_mib", &v))
        putf(p, "<tr><th>memory</th><td>%s</td></tr>\n", rt_fmt_mib(b, sizeof(b), v));
    fact_text(p, "operating system", "$.host.os");
    fact_text(p, "kernel", "$.host.kernel");
    double gpus = 0;
    if (jnum(p, "$.host.gpu_count", &gpus) && gpus > 0) {
        char *model = jstr(p, "$.host.gpu_model");
        putf(p, "<tr><th>GPUs</th><td>%.0f", gpus);
        if (model) {
            put(p, " × ");
            put_esc(p, model);
            free(model);
        }
        if (jnum(p, "$.host.gpu_memory_mib", &v))
            putf(p, ", %s VRAM in all", rt_fmt_mib(b2, sizeof(b2), v));
        put(p, "</td></tr>\n");
    }
    put(p, "</table>\n</section>\n");
    return 0;
}

static const struct stat_row {
    const char *key, *label;
    enum unit unit;
} stat_rows[] = {
    {"cpu_cores", "CPU (cores)", U_CORES},
    {"memory_mib", "memory (process: PSS, system: used)", U_MIB},
    {"disk_read_bytes_per_s", "disk read", U_BPS},
    {"disk_write_bytes_per_s", "disk write", U_BPS},
    {"net_recv_bytes_per_s", "network received", U_BPS},
    {"net_sent_bytes_per_s", "network sent", U_BPS},
    {"gpu_usage", "GPU usage (GPUs)", U_GPUS},
    {"gpu_vram_mib", "GPU memory", U_MIB},
    {"gpus_used", "GPUs in use", U_COUNT},
};

static void stat_cells(struct page *p, const char *side, const struct stat_row *r)
{
    static const char *const stats[] = {"mean", "p50", "p95", "max"};
    char b[64];
    for (size_t i = 0; i < RT_ARRAY_LEN(stats); i++) {
        double v;
        if (jnumf(p, &v, "$.%s.%s.%s", side, r->key, stats[i]))
            putf(p, "<td class=\"n\">%s</td>", fmt_unit(b, sizeof(b), v, r->unit));
        else
            put(p, "<td class=\"n\">–</td>");
    }
}

static void section_stats(struct page *p)
{
    char b[64];
    double v;
    int has_process = jfind(p, "$.process") && p->type == RT_JSON_OBJECT;
    put(p, "<section class=\"stats\"><h2>Usage</h2>\n");
    if (!has_process)
        put(p, "<p class=\"muted\">A system-only recording: no process tree was tracked.</p>\n");
    put(p, "<table class=\"stats\">\n<thead><tr><th rowspan=\"2\">metric</th>"
           "<th colspan=\"4\">process tree</th><th colspan=\"4\">system</th></tr>\n<tr>");
    for (int s = 0; s < 2; s++)
        put(p, "<th class=\"n\">mean</th><th class=\"n\">p50</th><th class=\"n\">p95</th>"
               "<th class=\"n\">max</th>");
    put(p, "</tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < RT_ARRAY_LEN(stat_rows); i++) {
        const struct stat_row *r = &stat_rows[i];
        /* GPU rows only where a GPU was there to measure */
        if (!jnumf(p, &v, "$.process.%s.max", r->key) && !jnumf(p, &v, "$.system.%s.max", r->key))
            continue;
        putf(p, "<tr><th>%s</th>", r->label);
        stat_cells(p, "process", r);
        stat_cells(p, "system", r);
        put(p, "</tr>\n");
    }
    put(p, "</tbody></table>\n");

    static const char *const totals[][2] = {
        {"disk_read_bytes", "disk read"},
        {"disk_write_bytes", "disk written"},
        {"net_recv_bytes", "network received"},
        {"net_sent_bytes", "network sent"},
    };
    put(p, "<h3>Totals over the run</h3>\n<table class=\"totals\">\n<thead><tr><th></th>"
           "<th class=\"n\">process tree</th><th class=\"n\">system</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < RT_ARRAY_LEN(totals); i++) {
        putf(p, "<tr><th>%s</th>", totals[i][1]);
        for (int s = 0; s < 2; s++) {
            if (jnumf(p, &v, "$.%s.%s", s ? "system" : "process", totals[i][0]))
                putf(p, "<td class=\"n\">%s</td>", rt_fmt_bytes(b, sizeof(b), v, ""));
            else
                put(p, "<td class=\"n\">–</td>");
        }
        put(p, "</tr>\n");
    }
    put(p, "</tbody></table>\n</section>\n");
}

static void pct_row(struct page *p, const char *label, const char *path)
{
    double v;
    if (jnum(p, path, &v))
        putf(p, "<tr><th>%s</th><td class=\"n\">%.1f %%</td></tr>\n", label, v);
}

static void server_part(struct page *p)
{
    char b[64];
    double v, price = NAN, secs;
    if (!jfind(p, "$.server") || p->type != RT_JSON_OBJECT) {
        char *why = jstr(p, "$.server_error"); /* asked for, but Keeper did not answer */
        if (why) {
            put(p, "<p class=\"muted\">No server recommendation: ");
            put_esc(p, why);
            put(p, "</p>\n");
            free(why);
        }
        return;
    }
    put(p, "<h3>Cheapest matching server (Spare Cores Keeper)</h3>\n<table class=\"facts\">\n");
    char *name = jstr(p, "$.server.display_name");
    if (!name)
        name = jstr(p, "$.server.name");
    if (!name)
        name = jstr(p, "$.server.server_id");
    if (name) {
        put(p, "<tr><th>server</th><td>");
        put_esc(p, name);
        put(p, "</td></tr>\n");
        free(name);
    }
    fact_text(p, "vendor", "$.server.vendor_id");
    fact_text(p, "API reference", "$.server.api_reference");
    fact_text(p, "vCPUs", "$.server.vcpus");
    if (jnum(p, "$.server.memory_amount", &v))
        putf(p, "<tr><th>memory</th><td>%s</td></tr>\n", rt_fmt_mib(b, sizeof(b), v));
    if (jnum(p, "$.server.gpu_count", &v) && v > 0) {
        char *model = jstr(p, "$.server.gpu_model");
        putf(p, "<tr><th>GPUs</th><td>%.0f", v);
        if (model) {
            put(p, " × ");
            put_esc(p, model);
            free(model);
        }
        put(p, "</td></tr>\n");
    }
    if (jnum(p, "$.server.min_price_ondemand", &price))
        putf(p, "<tr><th>on-demand price</th><td>$%.4f per hour</td></tr>\n", price);
    if (!isnan(price) && jnum(p, "$.run.duration_s", &secs))
        putf(p, "<tr><th>this run on it</th><td>about $%.6f</td></tr>\n", price / 3600 * secs);
    put(p, "</table>\n");
}

static void section_recommendation(struct page *p)
{
    double v;
    put(p, "<section class=\"recommendation\"><h2>Recommendation</h2>\n");
    char *text = jstr(p, "$.recommendation.text");
    char *mf = jstr(p, "$.recommendation.metaflow");
    if (text) {
        put(p, "<p class=\"rec\">");
        put_esc(p, text);
        put(p, "</p>\n");
    }
    if (mf) {
        put(p, "<pre class=\"metaflow\"><code>");
        put_esc(p, mf);
        put(p, "</code></pre>\n");
    }
    free(text);
    free(mf);
    /* how it was made: a caveat first, then what decided the CPU and memory figures */
    static const char *const why[] = {"$.recommendation.caveat.text",
                                      "$.recommendation.memory_basis.arithmetic"};
    for (size_t i = 0; i < RT_ARRAY_LEN(why); i++) {
        char *t = jstr(p, why[i]);
        if (t) {
            put(p, i ? "<p class=\"muted how\">memory: " : "<p class=\"caveat\">");
            put_esc(p, t);
            put(p, "</p>\n");
            free(t);
        }
    }
    char *src = jstr(p, "$.recommendation.cpu_basis.source");
    double mean, cpus;
    if (src && jnum(p, "$.recommendation.cpu_basis.mean_cores", &mean) &&
        jnum(p, "$.recommendation.cpu", &cpus)) {
        char b1[32];
        putf(p,
             "<p class=\"muted how\" id=\"cpu-arithmetic\">CPU: %s %.2f cores, rounded to a "
             "whole core (halves to even, at least 1) -> %s</p>\n",
             !strcmp(src, "demand") ? "demand" : "mean use", mean,
             rt_fmt_count(b1, sizeof(b1), cpus, "vCPU"));
    }
    double wait, used, want;
    if (src && !strcmp(src, "demand") && jnum(p, "$.cpu_demand.wait_pct", &wait) &&
        jnum(p, "$.cpu_demand.usage_cores", &used) && jnum(p, "$.cpu_demand.demand_cores", &want))
        putf(p,
             "<p class=\"muted how\">CPU: starved: the tree waited for a CPU %.0f %% of the time "
             "it wanted one; it used %.2f cores and would have used ~%.2f</p>\n",
             wait, used, want);
    free(src);
    double pk, at;
    if (jnum(p, "$.memory_peak.mib", &pk) && jnum(p, "$.memory_peak.at_s", &at)) {
        putf(p, "<p class=\"muted how\">peak memory sampled: %.1f MiB at +%.1f s, held by", pk, at);
        for (int i = 0; i < 5; i++) {
            char path[64];
            double pid, mib;
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pid", i);
            if (!jnum(p, path, &pid))
                break;
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].name", i);
            char *name = jstr(p, path);
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pss_mib", i);
            if (!jnum(p, path, &mib))
                mib = RT_NAN;
            put(p, i ? ", " : " ");
            put_esc(p, name ? name : "-");
            putf(p, " (%.0f) %.1f MiB", pid, mib);
            free(name);
        }
        double n, rest;
        if (jnum(p, "$.memory_peak.others.count", &n) && n > 0 &&
            jnum(p, "$.memory_peak.others.pss_mib", &rest))
            putf(p, ", %.0f more %.1f MiB", n, rest);
        put(p, "</p>\n");
    }
    put(p, "<div class=\"cols\"><div>\n<table class=\"facts\">\n");
    if (jnum(p, "$.recommendation.cpu", &v)) {
        putf(p, "<tr><th>vCPUs</th><td class=\"n\">%.0f", v);
        if (jnum(p, "$.recommendation.cpu_p95", &v))
            putf(p, " (%.0f to keep up in 95 %% of the intervals)", v);
        put(p, "</td></tr>\n");
    }
    if (jnum(p, "$.recommendation.memory_mib", &v))
        putf(p, "<tr><th>memory</th><td class=\"n\">%.0f MiB</td></tr>\n", v);
    if (jnum(p, "$.recommendation.gpu", &v) && v > 0) {
        putf(p, "<tr><th>GPUs</th><td class=\"n\">%.0f</td></tr>\n", v);
        if (jnum(p, "$.recommendation.vram_mib", &v))
            putf(p, "<tr><th>VRAM</th><td class=\"n\">%.0f MiB</td></tr>\n", v);
    }
    put(p, "</table>\n</div><div>\n<table class=\"facts efficiency\">\n"
           "<caption class=\"muted\">efficiency: used / what the host has</caption>\n");
    pct_row(p, "CPU", "$.efficiency.cpu_pct");
    pct_row(p, "memory", "$.efficiency.memory_pct");
    pct_row(p, "GPU", "$.efficiency.gpu_pct");
    pct_row(p, "VRAM", "$.efficiency.vram_pct");
    char *alloc = jstr(p, "$.allocation");
    if (alloc) {
        put(p, "<tr><th>allocation</th><td>");
        put_esc(p, alloc);
        put(p, !strcmp(alloc, "shared") ? " (other processes used the host too)"
                                        : " (the job had the host to itself)");
        put(p, "</td></tr>\n");
        free(alloc);
    }
    put(p, "</table>\n</div></div>\n");
    server_part(p);
    put(p, "</section>\n");
}

static int top_table(struct page *p, const char *path, const char *title, const char *col,
                     const char *key, int mib)
{
    char b[64], at[160];
    putf(p,
         "<div><h3>%s</h3>\n<table class=\"top\">\n<thead><tr><th class=\"n\">pid</th>"
         "<th>name</th><th class=\"n\">%s</th></tr></thead>\n<tbody>\n",
         title, col);
    int rows = 0;
    for (;; rows++) {
        snprintf(at, sizeof(at), "%s[%d]", path, rows);
        if (rt_json_get(p->doc, at, NULL) <= RT_JSON_ABSENT)
            break;
        snprintf(at, sizeof(at), "%s[%d].pid", path, rows);
        char *pid = jstr(p, at);
        snprintf(at, sizeof(at), "%s[%d].name", path, rows);
        char *name = jstr(p, at);
        put(p, "<tr><td class=\"n\">");
        put_esc(p, pid ? pid : "–");
        put(p, "</td><td>");
        put_esc(p, name ? name : "–");
        free(pid);
        free(name);
        double v;
        if (!jnumf(p, &v, "%s[%d].%s", path, rows, key))
            put(p, "</td><td class=\"n\">–</td></tr>\n");
        else if (mib)
            putf(p, "</td><td class=\"n\">%s</td></tr>\n", rt_fmt_mib(b, sizeof(b), v));
        else
            putf(p, "</td><td class=\"n\">%.2f</td></tr>\n", v);
    }
    if (!rows)
        put(p, "<tr><td colspan=\"3\" class=\"muted\">none</td></tr>\n");
    put(p, "</tbody></table></div>\n");
    return 0;
}

/* The tree's processes on GPUs (gpu_process_samples): per process, the GPUs it used, its
 * peak device memory (summed over its GPUs in a sample) and its SM/gfx busy share, mean and
 * peak over the samples it was on a GPU in. Nothing when no process of the tree was. */
static int gpu_table(struct page *p, int64_t run_id)
{
    struct rt_store_rows *r = rt_store_rows_open(
        p->store,
        "SELECT pr.pid, pr.name, max(t.gpus), max(t.vram), avg(t.util), max(t.util), count(*) "
        "FROM (SELECT g.sample_id, g.process_id, count(DISTINCT g.gpu_id) AS gpus, "
        "sum(g.vram_used_bytes) / 1048576.0 AS vram, sum(g.util_pct) AS util "
        "FROM gpu_process_samples g JOIN processes pp ON pp.id = g.process_id "
        "WHERE pp.run_id = ?1 GROUP BY g.sample_id, g.process_id) t "
        "JOIN processes pr ON pr.id = t.process_id GROUP BY t.process_id "
        "ORDER BY max(t.vram) DESC, avg(t.util) DESC, pr.pid LIMIT 10");
    if (!r)
        return db_fail(p, "the GPU processes");
    rt_store_rows_bind_i(r, 1, run_id);
    int rows = 0, rc;
    char b[64];
    while ((rc = rt_store_rows_next(r)) == 1) {
        if (!rows++)
            put(p, "<div><h3>on GPUs</h3>\n<table class=\"top gpu\">\n<thead><tr>"
                   "<th class=\"n\">pid</th><th>name</th><th class=\"n\">GPUs</th>"
                   "<th class=\"n\">peak VRAM</th><th class=\"n\">mean busy</th>"
                   "<th class=\"n\">peak busy</th><th class=\"n\">samples</th></tr></thead>\n"
                   "<tbody>\n");
        const char *name = rt_store_rows_t(r, 1);
        putf(p, "<tr><td class=\"n\">%lld</td><td>", (long long)rt_store_rows_i(r, 0));
        put_esc(p, name ? name : "–");
        putf(p, "</td><td class=\"n\">%lld</td>", (long long)rt_store_rows_i(r, 2));
        double v[3] = {rt_store_rows_f(r, 3), rt_store_rows_f(r, 4), rt_store_rows_f(r, 5)};
        if (isnan(v[0]))
            put(p, "<td class=\"n\">–</td>");
        else
            putf(p, "<td class=\"n\">%s</td>", rt_fmt_mib(b, sizeof(b), v[0]));
        for (int i = 1; i < 3; i++)
            if (isnan(v[i]))
                put(p, "<td class=\"n\">–</td>");
            else
                putf(p, "<td class=\"n\">%.1f %%</td>", v[i]);
        putf(p, "<td class=\"n\">%lld</td></tr>\n", (long long)rt_store_rows_i(r, 6));
    }
    rt_store_rows_close(r);
    if (rc != 0)
        return db_fail(p, "the GPU processes");
    if (rows)
        put(p, "</tbody></table></div>\n");
    return 0;
}

static int section_top(struct page *p, int64_t run_id)
{
    if (!jfind(p, "$.top_processes") || p->type != RT_JSON_OBJECT)
        return 0;
    put(p, "<section class=\"top\"><h2>Top processes</h2>\n<div class=\"cols\">\n");
    if (top_table(p, "$.top_processes.by_cpu", "by CPU time", "CPU s", "cpu_s", 0) != 0 ||
        top_table(p, "$.top_processes.by_pss", "by peak memory (PSS)", "PSS", "pss_mib", 1) != 0 ||
        gpu_table(p, run_id) != 0)
        return -1;
    put(p, "</div>\n</section>\n");
    return 0;
}

/* --- charts --------------------------------------------------------------------------------- */

/* Columns of the chart query (after the time, column 0). */
enum col {
    C_PCPU = 1,
    C_SCPU,
    C_PMEM,
    C_SMEM,
    C_PREAD,
    C_PWRITE,
    C_SREAD,
    C_SWRITE,
    C_RX,
    C_TX,
    C_SPACE,
    C_PGPU,
    C_SGPU,
    C_PVRAM,
    C_SVRAM,
    C_N
};

/* Seconds since the first sample of the run (the monotonic clock, so a wall-clock step cannot
 * fold the time axis), then the charted values: the Python columns and the per-second rates of
 * sample_metrics, in the order of enum col; load_points adds the sample's id after them. */
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

struct points {
    int n;           /* points (buckets that got a sample) */
    int64_t samples; /* rows they stand for */
    double span;     /* seconds from the first sample to the last */
    double bucket_s; /* width of a bucket, 0 when every sample is a point */
    int gpu;         /* the run has GPU rows (else the GPU columns are not read) */
    double x[RT_REPORT_MAX_POINTS];
    double v[C_N][RT_REPORT_MAX_POINTS];
    unsigned char has[C_N][RT_REPORT_MAX_POINTS];
    int nhas[C_N]; /* points with a value, per column */
    /* the sample a point's process memory comes from (its bucket's largest; the last sample
     * of the bucket where none has one): the stacked chart of the processes reads that one */
    int64_t sid[RT_REPORT_MAX_POINTS];
};

/* Downsampling: a run longer than RT_REPORT_MAX_POINTS samples is cut into that many buckets
 * of equal time, and each bucket becomes one point at the time of its last sample holding,
 * per series, the bucket's largest value. The maximum rather than the mean, because what a
 * reader looks for in a resource chart is the peak (the memory high-water mark, a burst of
 * I/O) and an average would flatten exactly that; a run of any length gives at most
 * RT_REPORT_MAX_POINTS points per series (fewer than a chart's 798 pixel columns), so the page
 * stays small (a few hundred KB of charts with their hover titles). Shorter runs are drawn
 * sample by sample. A bucket can only be empty when the recording has a gap (fewer points
 * then); a sample without a value (NULL: unknown, such as the memory of the final sample,
 * taken of a tree already reaped) takes no part in its bucket's maximum. */
static int load_points(struct page *p, int64_t run_id, struct points *pts)
{
    memset(pts, 0, sizeof(*pts));
    /* the samples after the baseline, counted in the (run_id, seq) index (run_sample_counts),
     * and the clock of the first of them, of the last, and of the baseline (the origin): a
     * run's samples are taken one after the other on one monotonic clock, so these are its
     * smallest and largest, found in the index rather than read from every sample (a sample
     * off that order falls into the first or last bucket). */
    struct rt_store_rows *r = rt_store_rows_open(
        p->store,
        "SELECT (SELECT samples FROM run_sample_counts WHERE run_id = ?1), "
        "(SELECT mono FROM samples WHERE run_id = ?1 AND kind <> 'baseline' ORDER BY seq LIMIT 1), "
        "(SELECT mono FROM samples WHERE run_id = ?1 AND kind <> 'baseline' ORDER BY seq DESC "
        "LIMIT 1), (SELECT mono FROM samples WHERE run_id = ?1 ORDER BY seq LIMIT 1)");
    if (!r)
        return db_fail(p, "the samples");
    rt_store_rows_bind_i(r, 1, run_id);
    if (rt_store_rows_next(r) != 1) {
        rt_store_rows_close(r);
        return db_fail(p, "the samples");
    }
    int64_t n = rt_store_rows_i(r, 0) == RT_NA ? 0 : rt_store_rows_i(r, 0);
    double first = rt_store_rows_f(r, 1), last = rt_store_rows_f(r, 2);
    double origin = rt_store_rows_f(r, 3);
    rt_store_rows_close(r);
    /* whether the run has GPU rows (a database without GPUs answers at once) */
    char ids[32];
    snprintf(ids, sizeof(ids), "%lld", (long long)run_id);
    if (rt_store_runs_have_gpus(p->store, ids, &pts->gpu) != 0)
        return db_fail(p, "the samples");
    pts->samples = n;
    if (n <= 0)
        return 0;
    int buckets = n > RT_REPORT_MAX_POINTS ? RT_REPORT_MAX_POINTS : (int)n;
    double width = n > RT_REPORT_MAX_POINTS ? (last - first) / buckets : 0;
    pts->bucket_s = width;
    /* without GPU rows the GPU columns (the last ones) are NULL: neither selected nor joined
     * (sample_metrics_base is sample_metrics without them and its GPU joins) */
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT ");
    for (int c = 0; c < (pts->gpu ? C_N : C_PGPU); c++) {
        rt_buf_puts(&sql, c ? ", " : "");
        rt_buf_puts(&sql, chart_cols[c]);
    }
    rt_buf_puts(&sql, pts->gpu ? ", sample_id FROM sample_metrics"
                               : ", sample_id FROM sample_metrics_base");
    rt_buf_puts(&sql, " WHERE run_id = ?1 ORDER BY seq");
    r = rt_store_rows_open(p->store, sql.p);
    rt_buf_free(&sql);
    if (!r)
        return db_fail(p, "the samples");
    int ncols = pts->gpu ? C_N : C_PGPU;
    double v[C_N];
    rt_store_rows_bind_i(r, 1, run_id);
    rt_store_rows_bind_f(r, 2, origin);
    int cur = -1;
    int64_t row = 0;
    int rc;
    while ((rc = rt_store_rows_next(r)) == 1) {
        rt_store_rows_fv(r, ncols, v);
        double x = v[0];
        int b;
        if (width > 0) {
            double f = (x - (first - origin)) / width;
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
        int i = pts->n - 1;
        pts->x[i] = x;
        int64_t sid = rt_store_rows_i(r, ncols);
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
    rt_store_rows_close(r);
    if (rc != 0)
        return db_fail(p, "the samples");
    pts->span = pts->n ? pts->x[pts->n - 1] : 0;
    for (int c = 1; c < C_N; c++)
        for (int i = 0; i < pts->n; i++)
            pts->nhas[c] += pts->has[c][i];
    return 0;
}

struct series_def {
    const char *name, *label;
    int col;
    const char *color, *dash; /* dash NULL: solid */
};

struct chart_def {
    const char *id, *title;
    enum unit unit;
    int gpu;
    /* the line of text the chart folds into when nothing above zero was recorded, and when
     * its values stay flat (NULL: drawn from zero whatever they are) */
    const char *empty, *flat;
    struct series_def s[4];
};

/* Colours from the Okabe-Ito palette (distinct for colour-blind readers), and every series of
 * a chart has its own dash pattern too, so a grey print or a monochrome reader tells them
 * apart. */
#define BLUE   "#0072B2"
#define ORANGE "#D55E00"
#define GREEN  "#009E73"
#define PURPLE "#CC79A7"
#define YELLOW "#E69F00"
#define SKY    "#56B4E9"

/* The tree's I/O and the system's have a chart each: a burst of the page cache's writeback
 * would otherwise set the scale and flatten the tree's own traffic to the floor. */
static const struct chart_def charts[] = {
    {"cpu",
     "CPU (cores)",
     U_CORES,
     0,
     NULL,
     NULL,
     {{"process", "process tree", C_PCPU, BLUE, NULL},
      {"system", "system", C_SCPU, ORANGE, "7 4"}}},
    {"memory",
     "Memory",
     U_MIB,
     0,
     NULL,
     NULL,
     {{"process", "process tree PSS", C_PMEM, BLUE, NULL},
      {"system", "system used", C_SMEM, ORANGE, "7 4"}}},
    {"process-io",
     "Disk I/O of the process tree (per second)",
     U_BPS,
     0,
     "disk I/O of the process tree: none recorded",
     NULL,
     {{"process-read", "read", C_PREAD, BLUE, NULL},
      {"process-write", "written", C_PWRITE, GREEN, "2 3"}}},
    {"disk-io",
     "Disk I/O of the system (per second)",
     U_BPS,
     0,
     "disk I/O of the system: none recorded",
     NULL,
     {{"system-read", "read", C_SREAD, ORANGE, "7 4"},
      {"system-write", "written", C_SWRITE, PURPLE, "10 3 2 3"}}},
    {"network",
     "Network (per second, system)",
     U_BPS,
     0,
     "network: no traffic recorded",
     NULL,
     {{"recv", "received", C_RX, BLUE, NULL}, {"sent", "sent", C_TX, ORANGE, "7 4"}}},
    {"disk-space",
     "Disk space used (GB, system)",
     U_GB,
     0,
     "disk space used: not recorded",
     "disk space used",
     {{"system", "system used", C_SPACE, BLUE, NULL}}},
    {"gpu",
     "GPU usage (GPUs)",
     U_GPUS,
     1,
     NULL,
     NULL,
     {{"process", "process tree", C_PGPU, BLUE, NULL},
      {"system", "system", C_SGPU, ORANGE, "7 4"}}},
    {"vram",
     "GPU memory",
     U_MIB,
     1,
     NULL,
     NULL,
     {{"process", "process tree", C_PVRAM, BLUE, NULL},
      {"system", "system", C_SVRAM, ORANGE, "7 4"}}},
};

/* The smallest of 1, 2, 2.5, 5 x 10^k that is >= v (v > 0). */
static double nice_ceil(double v)
{
    double e = pow(10, floor(log10(v)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    for (size_t i = 0; i < RT_ARRAY_LEN(steps); i++)
        if (steps[i] * e >= v * (1 - 1e-9))
            return steps[i] * e;
    return 10 * e;
}

/* Binary units step by 1024: scale to the unit the labels will use, so the top of the axis is
 * a round number of that unit (2.5 GiB/s, not 2.33). In bytes for U_BPS/U_BYTES, in MiB for
 * U_MIB. */
static double unit_scale(double v, enum unit u)
{
    double k = 1;
    if (u == U_BPS || u == U_BYTES)
        while (v / k >= 1024 && k < 1125899906842624.0)
            k *= 1024;
    else if (u == U_MIB)
        while (v / k >= 1024 && k < 1073741824.0)
            k *= 1024;
    return k;
}

/* An axis label of an axis whose top is `top`: every tick in the top's unit, as a plain
 * number (no exponent): "0 MiB", "500 MiB", "1.5 GiB", "1 KiB/s", "2.5". */
static const char *fmt_axis(char *b, size_t n, double v, double top, enum unit u)
{
    double k = unit_scale(top, u);
    switch (u) {
    case U_BPS:
        return rt_fmt_bytes_in(b, n, v, k, "/s");
    case U_BYTES:
        return rt_fmt_bytes_in(b, n, v, k, "");
    case U_MIB:
        return rt_fmt_bytes_in(b, n, v * 1048576, k * 1048576, "");
    case U_GB: {
        char num[48];
        snprintf(b, n, "%s GB", rt_fmt_plain(num, sizeof(num), v, 2));
        return b;
    }
    default:
        return rt_fmt_plain(b, n, v, 2);
    }
}

/* Time tick spacing: about 4 to 8 ticks over the span, on round seconds/minutes/hours. */
static double tick_step(double span)
{
    static const double steps[] = {0.1,  0.2,   0.5,   1,     2,     5,      10,    15,
                                   30,   60,    120,   300,   600,   900,    1800,  3600,
                                   7200, 10800, 21600, 43200, 86400, 172800, 604800};
    for (size_t i = 0; i < RT_ARRAY_LEN(steps); i++)
        if (span / steps[i] <= 7)
            return steps[i];
    return steps[RT_ARRAY_LEN(steps) - 1] * ceil(span / 7 / 604800);
}

static const char *fmt_tick(char *b, size_t n, double t, double step)
{
    char num[48];
    if (step < 60 || fmod(step, 60) != 0)
        snprintf(b, n, "%s s", rt_fmt_plain(num, sizeof(num), t, 1));
    else if (step < 3600 || fmod(step, 3600) != 0)
        snprintf(b, n, "%s min", rt_fmt_plain(num, sizeof(num), t / 60, 1));
    else
        snprintf(b, n, "%s h", rt_fmt_plain(num, sizeof(num), t / 3600, 1));
    return b;
}

enum { SVG_W = 900, SVG_H = 270, PAD_L = 84, PAD_R = 18, PAD_T = 48, PAD_B = 36 };
#define PLOT_W ((double)(SVG_W - PAD_L - PAD_R))
#define PLOT_H ((double)(SVG_H - PAD_T - PAD_B))

/* A reference line: a figure the reader compares the series with (the host's vCPUs, what was
 * allocated, what is recommended). */
struct ref {
    const char *id, *label;
    double v;
};

/* The frame of a chart: its title, legend, y axis from `bot` to `top` (ticks at both and
 * halfway) and x axis over the span. */
static void chart_frame(struct page *p, const char *id, const char *title, int npoints,
                        const char *cls, double bot, double top, enum unit u, double span)
{
    char b[64];
    putf(p,
         "<svg class=\"chart%s\" id=\"chart-%s\" data-points=\"%d\" viewBox=\"0 0 %d %d\" "
         "width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"chart-%s-title\">\n"
         "<title id=\"chart-%s-title\">%s</title>\n"
         "<text class=\"title\" x=\"%d\" y=\"18\">%s</text>\n",
         cls, id, npoints, SVG_W, SVG_H, SVG_W, SVG_H, id, id, title, PAD_L, title);
    for (int g = 0; g <= 2; g++) {
        double y = PAD_T + PLOT_H - PLOT_H * g / 2.0;
        putf(p,
             "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"%s/>"
             "<text class=\"tick y\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
             PAD_L, y, PAD_L + PLOT_W, y, g ? "#ccc" : "#333", g ? " stroke-dasharray=\"3 3\"" : "",
             PAD_L - 6, y + 4, fmt_axis(b, sizeof(b), bot + (top - bot) * g / 2.0, top, u));
    }
    putf(p, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.0f\" stroke=\"#333\"/>\n", PAD_L, PAD_T,
         PAD_L, PAD_T + PLOT_H);
    double step = tick_step(span);
    for (int t = 0; t * step <= span * (1 + 1e-9); t++) {
        double x = PAD_L + PLOT_W * (t * step) / span;
        putf(p,
             "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#333\"/>"
             "<text class=\"tick x\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
             x, PAD_T + PLOT_H, x, PAD_T + PLOT_H + 5, x, PAD_T + PLOT_H + 19,
             fmt_tick(b, sizeof(b), t * step, step));
    }
    putf(p, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"axis\">time since start</text>\n",
         SVG_W - PAD_R, SVG_H - 3);
}

/* One legend entry at *lx: a sample of the stroke (or a swatch of the fill), then the name. */
static void legend(struct page *p, double *lx, const char *color, const char *dash, int fill,
                   const char *label, const char *note)
{
    if (fill)
        putf(p, "<rect x=\"%.0f\" y=\"27\" width=\"30\" height=\"11\" fill=\"%s\"/>", *lx, color);
    else
        putf(p,
             "<line x1=\"%.0f\" y1=\"33\" x2=\"%.0f\" y2=\"33\" stroke=\"%s\" "
             "stroke-width=\"2.5\"%s%s%s/>",
             *lx, *lx + 30, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
             dash ? "\"" : "");
    putf(p, "<text x=\"%.0f\" y=\"37\">", *lx + 36);
    put_esc(p, label);
    put(p, note);
    put(p, "</text>\n");
    *lx += 36 + 7.2 * (double)(strlen(label) + strlen(note)) + 22;
}

/* Hover values: one transparent band per point over the plot's height, from halfway to the
 * point before to halfway to the next, whose <title> (a tooltip in every browser, no script)
 * gives the time and each series' value there. */
static void hover_open(struct page *p, const struct points *pts, int i, double span)
{
    char b[64];
    double x = PAD_L + PLOT_W * pts->x[i] / span;
    double x0 = i ? PAD_L + PLOT_W * (pts->x[i - 1] + pts->x[i]) / 2 / span : PAD_L;
    double x1 = i + 1 < pts->n ? PAD_L + PLOT_W * (pts->x[i] + pts->x[i + 1]) / 2 / span : x;
    if (pts->n == 1)
        x0 = PAD_L, x1 = PAD_L + PLOT_W;
    putf(p, "<rect class=\"hv\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.0f\"><title>+%s", x0,
         PAD_T, fmax(x1 - x0, 0.5), PLOT_H, rt_fmt_duration(b, sizeof(b), pts->x[i]));
}

static void chart_refs(struct page *p, const struct ref *refs, int nrefs, double bot, double top,
                       enum unit u)
{
    char b[64];
    int off = 0;
    for (int k = 0; k < nrefs; k++) {
        const struct ref *r = &refs[k];
        fmt_unit(b, sizeof(b), r->v, u);
        if (u == U_CORES)
            rt_fmt_plain(b, sizeof(b), r->v, 2);
        if (r->v > top * (1 + 1e-9)) { /* off the scale: said in the top right corner */
            putf(p,
                 "<text class=\"ref off\" data-ref=\"%s\" x=\"%.0f\" y=\"%d\" "
                 "text-anchor=\"end\">%s %s (above the scale)</text>\n",
                 r->id, PAD_L + PLOT_W, 18 + 13 * off++, r->label, b);
            continue;
        }
        double y = PAD_T + PLOT_H - PLOT_H * (r->v - bot) / (top - bot);
        putf(p,
             "<g class=\"ref\" data-ref=\"%s\" data-value=\"%g\"><line x1=\"%d\" y1=\"%.1f\" "
             "x2=\"%.0f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.2\" "
             "stroke-dasharray=\"5 4\"/><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
             "fill=\"#333\">%s %s</text><title>%s: %s</title></g>\n",
             r->id, r->v, PAD_L, y, PAD_L + PLOT_W, y, PAD_L + PLOT_W - 4, y - 3, r->label, b,
             r->label, b);
    }
}

/* The reference lines of a chart, from the summary: vCPUs, the allocation and the
 * recommendation on the CPU chart; the allocation and the recommendation on the memory
 * chart. */
static int chart_ref_lines(struct page *p, const char *id, struct ref *refs)
{
    int n = 0;
    double v;
    if (!strcmp(id, "cpu")) {
        if (jnum(p, "$.host.vcpus", &v) && v > 0)
            refs[n++] = (struct ref){"vcpus", "vCPUs", v};
        if (jnum(p, "$.allocated.cpus", &v) && v > 0)
            refs[n++] = (struct ref){"allocated", "allocated", v};
        if (jnum(p, "$.recommendation.cpu", &v) && v > 0)
            refs[n++] = (struct ref){"recommended", "recommended", v};
    } else if (!strcmp(id, "memory")) {
        if (jnum(p, "$.allocated.memory_mib", &v) && v > 0)
            refs[n++] = (struct ref){"allocated", "allocated", v};
        if (jnum(p, "$.recommendation.memory_mib", &v) && v > 0)
            refs[n++] = (struct ref){"recommended", "recommended", v};
    }
    return n;
}

/* A line of text in place of a chart with nothing to draw. */
static void folded(struct page *p, const char *id, const char *text)
{
    putf(p, "<p class=\"folded muted\" id=\"chart-%s\" data-folded=\"1\">%s</p>\n", id, text);
}

static void chart(struct page *p, const struct chart_def *c, const struct points *pts)
{
    char b[64];
    int ns = 0;
    while (ns < 4 && c->s[ns].name)
        ns++;
    double ymax = 0, ymin = INFINITY;
    int any = 0;
    for (int k = 0; k < ns; k++)
        for (int i = 0; i < pts->n; i++)
            if (pts->has[c->s[k].col][i]) {
                double v = pts->v[c->s[k].col][i];
                ymax = fmax(ymax, v);
                ymin = fmin(ymin, v);
                any = 1;
            }
    if (c->empty && !(ymax > 0)) {
        folded(p, c->id, c->empty);
        return;
    }
    double bot = 0, top;
    if (c->flat && any) {
        /* a line that hardly moves on a 0-based axis is a flat line: below a hundredth of a
         * unit of change it is one figure, else the axis spans the values (not from 0) */
        if (ymax - ymin < 0.005) {
            char t[160];
            snprintf(t, sizeof(t), "%s: %s throughout the run", c->flat,
                     fmt_unit(b, sizeof(b), ymax, c->unit));
            folded(p, c->id, t);
            return;
        }
        double step = nice_ceil((ymax - ymin) / 2);
        bot = floor(ymin / step) * step;
        while (bot + 2 * step < ymax * (1 - 1e-12))
            step = nice_ceil(step * 1.01), bot = floor(ymin / step) * step;
        top = bot + 2 * step;
    } else {
        struct ref refs[4];
        int nrefs = chart_ref_lines(p, c->id, refs);
        /* a reference line within four times the data's peak is drawn on the scale; further
         * up it would flatten the data, so it is named in the corner instead */
        double want = ymax;
        for (int k = 0; k < nrefs; k++)
            if (refs[k].v <= 4 * ymax || !(ymax > 0))
                want = fmax(want, refs[k].v);
        top =
            want > 0 ? nice_ceil(want / unit_scale(want, c->unit)) * unit_scale(want, c->unit) : 1;
    }
    double span = pts->span > 0 ? pts->span : 1;

    put(p, "<figure>\n");
    chart_frame(p, c->id, c->title, pts->n, "", bot, top, c->unit, span);
    double lx = PAD_L;
    for (int k = 0; k < ns; k++)
        legend(p, &lx, c->s[k].color, c->s[k].dash, 0, c->s[k].label,
               pts->nhas[c->s[k].col] ? "" : " (not recorded)");

    /* The series: one polyline each, one vertex per point that has a value; a point without
     * one (a sample the collector could not read, the final sample's memory of a reaped tree)
     * is left out, not drawn as 0. */
    for (int k = 0; k < ns; k++) {
        const struct series_def *s = &c->s[k];
        if (!pts->nhas[s->col])
            continue;
        putf(p,
             "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
             "stroke-width=\"1.8\" stroke-linejoin=\"round\"%s%s%s points=\"",
             s->name, s->color, s->dash ? " stroke-dasharray=\"" : "", s->dash ? s->dash : "",
             s->dash ? "\"" : "");
        int first = -1, drawn = 0;
        for (int i = 0; i < pts->n; i++) {
            if (!pts->has[s->col][i])
                continue;
            if (first < 0)
                first = i;
            double v = fmax(pts->v[s->col][i], bot);
            putf(p, "%s%.1f,%.1f", drawn++ ? " " : "", PAD_L + PLOT_W * pts->x[i] / span,
                 PAD_T + PLOT_H - PLOT_H * (v - bot) / (top - bot));
        }
        put(p, "\"/>\n");
        if (drawn == 1) /* a line of one vertex draws nothing: mark the point */
            putf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                 PAD_L + PLOT_W * pts->x[first] / span,
                 PAD_T + PLOT_H - PLOT_H * (fmax(pts->v[s->col][first], bot) - bot) / (top - bot),
                 s->color);
    }
    if (!c->flat) {
        struct ref refs[4];
        int nrefs = chart_ref_lines(p, c->id, refs);
        chart_refs(p, refs, nrefs, bot, top, c->unit);
    }
    put(p, "<g class=\"hover\">");
    for (int i = 0; i < pts->n; i++) {
        hover_open(p, pts, i, span);
        for (int k = 0; k < ns; k++) {
            const struct series_def *s = &c->s[k];
            if (!pts->nhas[s->col])
                continue;
            putf(p, "\n%s: %s", s->label,
                 pts->has[s->col][i] ? fmt_unit(b, sizeof(b), pts->v[s->col][i], c->unit)
                                     : "not recorded");
        }
        put(p, "</title></rect>");
    }
    put(p, "</g>\n</svg>\n</figure>\n");
}

/* --- the processes' memory, stacked ------------------------------------------------------- */

enum { TOP_STACK = 5 };

struct sample_point {
    int64_t sid; /* a sample's id */
    int i;       /* the point it is drawn as */
};

static int by_sid(const void *a, const void *b)
{
    int64_t x = ((const struct sample_point *)a)->sid, y = ((const struct sample_point *)b)->sid;
    return (x > y) - (x < y);
}

/* The five processes with the largest PSS of the run, stacked under the tree's PSS at each
 * point (the sample its memory point comes from, so the stack's top is the tree's line), the
 * rest of the tree as "others" on top. Processes are told apart by pid and name. */
static int chart_stacked(struct page *p, const struct points *pts)
{
    static const char *const colors[TOP_STACK + 1] = {BLUE, ORANGE, GREEN, PURPLE, YELLOW, "#999"};
    if (pts->nhas[C_PMEM] == 0)
        return 0;
    /* Only the samples the points come from are read (at most RT_REPORT_MAX_POINTS, by the
     * primary key of process_samples), as a JSON array for json_each: the five are the
     * largest at those samples, what the chart can show. CROSS JOIN keeps json_each the
     * outer loop: left to itself SQLite 3.40 reads every row of the five processes through
     * process_samples_by_process and scans the list for each (12 s for 100 000 samples). */
    struct rt_buf sids = {0};
    rt_buf_puts(&sids, "[");
    for (int i = 0, k = 0; i < pts->n; i++)
        if (pts->has[C_PMEM][i]) {
            char one[32];
            snprintf(one, sizeof(one), "%s%lld", k++ ? "," : "", (long long)pts->sid[i]);
            rt_buf_puts(&sids, one);
        }
    rt_buf_puts(&sids, "]");
    struct rt_store_rows *r = rt_store_rows_open(
        p->store, "SELECT t.process_id, p.pid, p.name FROM (SELECT ps.process_id, "
                  "max(ps.pss_kib) AS peak FROM json_each(?1) j CROSS JOIN process_samples ps "
                  "ON ps.sample_id = j.value WHERE ps.pss_kib > 0 GROUP BY ps.process_id "
                  "ORDER BY peak DESC, ps.process_id LIMIT 5) t "
                  "JOIN processes p ON p.id = t.process_id ORDER BY t.peak DESC, t.process_id");
    if (!r) {
        rt_buf_free(&sids);
        return db_fail(p, "the processes");
    }
    rt_store_rows_bind_t(r, 1, sids.p);
    int64_t id[TOP_STACK];
    char label[TOP_STACK + 1][96];
    int np = 0, rc = 0;
    while (np < TOP_STACK && (rc = rt_store_rows_next(r)) == 1) {
        id[np] = rt_store_rows_i(r, 0);
        const char *name = rt_store_rows_t(r, 2);
        snprintf(label[np], sizeof(label[np]), "%s (%lld)", name ? name : "?",
                 (long long)rt_store_rows_i(r, 1));
        np++;
    }
    rt_store_rows_close(r);
    if (rc < 0 || np == 0) {
        rt_buf_free(&sids);
        return rc < 0 ? db_fail(p, "the processes") : 0;
    }
    snprintf(label[np], sizeof(label[np]), "others");
    int nl = np + 1;
    /* layer values in MiB, [layer][point] */
    double(*val)[RT_REPORT_MAX_POINTS] = xmalloc(sizeof(*val) * (size_t)nl);
    for (int l = 0; l < nl; l++)
        for (int i = 0; i < pts->n; i++)
            val[l][i] = 0;
    /* the points by sample id, to find a row's point */
    struct sample_point *by = xmalloc(sizeof(*by) * (size_t)pts->n);
    int nby = 0;
    for (int i = 0; i < pts->n; i++)
        if (pts->has[C_PMEM][i])
            by[nby++] = (struct sample_point){pts->sid[i], i};
    qsort(by, (size_t)nby, sizeof(*by), by_sid);
    r = rt_store_rows_open(
        p->store, "SELECT ps.sample_id, ps.process_id, ps.pss_kib FROM json_each(?1) j "
                  "CROSS JOIN process_samples ps ON ps.sample_id = j.value "
                  "WHERE ps.process_id IN (?2, ?3, ?4, ?5, ?6) AND ps.pss_kib IS NOT NULL");
    if (r) {
        rt_store_rows_bind_t(r, 1, sids.p);
        for (int k = 0; k < TOP_STACK; k++)
            rt_store_rows_bind_i(r, k + 2, k < np ? id[k] : id[0]);
        while ((rc = rt_store_rows_next(r)) == 1) {
            int64_t sid = rt_store_rows_i(r, 0), pid = rt_store_rows_i(r, 1);
            struct sample_point key = {sid, 0};
            const struct sample_point *at = bsearch(&key, by, (size_t)nby, sizeof(*by), by_sid);
            for (int k = 0; at && k < np; k++)
                if (id[k] == pid)
                    val[k][at->i] = rt_store_rows_f(r, 2) / 1024.0;
        }
        rt_store_rows_close(r);
    }
    free(by);
    rt_buf_free(&sids);
    if (!r || rc != 0) {
        free(val);
        return db_fail(p, "the processes");
    }
    double ymax = 0;
    for (int i = 0; i < pts->n; i++) {
        if (!pts->has[C_PMEM][i])
            continue;
        double sum = 0;
        for (int k = 0; k < np; k++)
            sum += val[k][i];
        val[np][i] = fmax(pts->v[C_PMEM][i] - sum, 0);
        ymax = fmax(ymax, sum + val[np][i]);
    }
    double top = ymax > 0 ? nice_ceil(ymax / unit_scale(ymax, U_MIB)) * unit_scale(ymax, U_MIB) : 1;
    double span = pts->span > 0 ? pts->span : 1;
    char b[64];
    put(p, "<figure>\n");
    chart_frame(p, "memory-processes", "Memory by process (PSS, stacked)", pts->n, " stacked", 0,
                top, U_MIB, span);
    double lx = PAD_L;
    for (int l = 0; l < nl; l++)
        legend(p, &lx, colors[l < np ? l : TOP_STACK], NULL, 1, label[l], "");
    /* each layer a polygon: its upper edge left to right, the layer below's back */
    for (int l = 0; l < nl; l++) {
        putf(p,
             "<polygon class=\"layer\" data-layer=\"%d\" fill=\"%s\" fill-opacity=\"0.85\" "
             "stroke=\"#fff\" stroke-width=\"0.5\" points=\"",
             l, colors[l < np ? l : TOP_STACK]);
        int drawn = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < pts->n; j++) {
                int i = pass ? pts->n - 1 - j : j;
                if (!pts->has[C_PMEM][i])
                    continue;
                double y = 0;
                for (int m = 0; m < l + !pass; m++)
                    y += val[m][i];
                putf(p, "%s%.1f,%.1f", drawn++ ? " " : "", PAD_L + PLOT_W * pts->x[i] / span,
                     PAD_T + PLOT_H - PLOT_H * y / top);
            }
        put(p, "\"><title>");
        put_esc(p, label[l]);
        put(p, "</title></polygon>\n");
    }
    put(p, "<g class=\"hover\">");
    for (int i = 0; i < pts->n; i++) {
        if (!pts->has[C_PMEM][i])
            continue;
        hover_open(p, pts, i, span);
        for (int l = nl - 1; l >= 0; l--) {
            put(p, "\n");
            put_esc(p, label[l]);
            putf(p, ": %s", rt_fmt_mib(b, sizeof(b), val[l][i]));
        }
        put(p, "</title></rect>");
    }
    put(p, "</g>\n</svg>\n</figure>\n");
    free(val);
    return 0;
}

static int section_charts(struct page *p, int64_t run_id)
{
    struct points *pts = xmalloc(sizeof(*pts));
    if (load_points(p, run_id, pts) != 0) {
        free(pts);
        return -1;
    }
    int gpu = pts->gpu;

    put(p, "<section class=\"charts\"><h2>Over time</h2>\n");
    if (pts->bucket_s > 0)
        putf(p,
             "<p class=\"muted\">%lld samples drawn as %d points: each point is the largest "
             "value of %.3g s of the run, so peaks stay visible.</p>\n",
             (long long)pts->samples, pts->n, pts->bucket_s);
    else if (pts->n == 0)
        put(p, "<p class=\"muted\">No samples after the baseline yet.</p>\n");
    put(p, "<p class=\"muted\">Hover over a chart for the values at that time; dashed grey lines "
           "are the host's vCPUs, the allocation and the recommendation.</p>\n");
    int rc = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(charts) && rc == 0; i++) {
        if (!charts[i].gpu || gpu)
            chart(p, &charts[i], pts);
        if (!strcmp(charts[i].id, "memory"))
            rc = chart_stacked(p, pts);
    }
    put(p, "</section>\n");
    free(pts);
    return rc;
}

/* --- the Slurm job -----------------------------------------------------------------------------
 */

/* One row of the job's table from the cluster JSON (cluster.h) at `at` ("$.nodes[0]", "$.job"):
 * wall, CPU time, cores allocated, CPU efficiency, peak, allocated memory, memory efficiency. */
static void job_cells(struct page *p, const char *at)
{
    static const struct {
        const char *key;
        int kind; /* 0 duration, 1 number, 2 percent, 3 MiB */
    } col[] = {{"wall_s", 0},        {"cpu_s", 0},           {"alloc_cpus", 1},
               {"cpu_eff_pct", 2},   {"memory_peak_mib", 3}, {"alloc_memory_mib", 3},
               {"memory_eff_pct", 2}};
    for (size_t i = 0; i < RT_ARRAY_LEN(col); i++) {
        char b[48];
        double v;
        const char *t = "-";
        if (jnumf(p, &v, "%s.%s", at, col[i].key))
            t = col[i].kind == 0   ? rt_fmt_duration(b, sizeof(b), v)
                : col[i].kind == 1 ? rt_fmt_plain(b, sizeof(b), v, 2)
                : col[i].kind == 2 ? rt_fmt_pct(b, sizeof(b), v)
                                   : rt_fmt_mib(b, sizeof(b), v);
        putf(p, "<td class=\"n\">%s</td>", t);
    }
}

/* The report of a Slurm job (--slurm-job): its nodes, the job's total, the sbatch options for
 * next time, as `rtrack summary --slurm-job` gives them (job_json: rt_cluster_json()). */
static int section_slurm_job(struct page *p, const char *job_json)
{
    char why[256];
    struct rt_json *run_doc = p->doc;
    if (!(p->doc = rt_json_open(job_json, strlen(job_json), why, sizeof(why)))) {
        snprintf(p->err, p->errlen, "report: cannot read the slurm job: %s", why);
        p->doc = run_doc;
        return -1;
    }
    char *id = jstr(p, "$.slurm_job");
    put(p, "<section class=\"slurm-job\"><h2>Slurm job ");
    put_esc(p, id ? id : "-");
    put(p, "</h2>\n<p class=\"muted\">what each node used against what Slurm allocated it "
           "(CPU efficiency: CPU time / (cores allocated &#215; the job's wall time), as seff "
           "computes it); this page's other sections are one run of the job</p>\n"
           "<table class=\"top slurm-nodes\">\n<thead><tr><th>node</th><th>steps</th>"
           "<th class=\"n\">wall</th><th class=\"n\">CPU time</th>"
           "<th class=\"n\">cores allocated</th><th class=\"n\">CPU efficiency</th>"
           "<th class=\"n\">peak memory</th><th class=\"n\">allocated memory</th>"
           "<th class=\"n\">memory efficiency</th></tr></thead>\n<tbody>\n");
    for (int i = 0;; i++) {
        char at[64], path[96];
        snprintf(at, sizeof(at), "$.nodes[%d]", i);
        if (rt_json_get(p->doc, at, NULL) <= RT_JSON_ABSENT)
            break;
        snprintf(path, sizeof(path), "%s.node", at);
        char *node = jstr(p, path);
        snprintf(path, sizeof(path), "%s.array_task_id", at);
        char *task = jstr(p, path);
        snprintf(path, sizeof(path), "%s.steps", at);
        char *steps = jstr(p, path);
        put(p, "<tr><td>");
        put_esc(p, node ? node : "-");
        if (task) {
            put(p, " [");
            put_esc(p, task);
            put(p, "]");
        }
        put(p, "</td><td>");
        put_esc(p, steps ? steps : "-");
        put(p, "</td>");
        job_cells(p, at);
        put(p, "</tr>\n");
        free(node);
        free(task);
        free(steps);
    }
    put(p, "</tbody>\n<tfoot><tr><th>job total</th><td>-</td>");
    job_cells(p, "$.job");
    put(p, "</tr></tfoot>\n</table>\n");
    char *sb = jstr(p, "$.job.sbatch");
    if (sb) {
        put(p, "<p class=\"rec\">next time: <code class=\"sbatch\">sbatch ");
        put_esc(p, sb);
        put(p, "</code></p>\n");
    }
    double mx;
    if (jnum(p, "$.job.memory_peak_max_node_mib", &mx)) {
        char b[48];
        putf(p,
             "<p class=\"muted how\">the job's total adds the nodes' CPU time, cores, memory and "
             "peaks; --mem is per node: the largest node peaked at %s</p>\n",
             rt_fmt_mib(b, sizeof(b), mx));
    }
    put(p, "</section>\n");
    free(id);
    free(sb);
    free(p->val);
    p->val = NULL;
    rt_json_close(p->doc);
    p->doc = run_doc;
    return 0;
}

/* --- the page ------------------------------------------------------------------------------- */

int rt_report_html(struct rt_store *store, int64_t run_id, const char *summary_json,
                   struct rt_buf *out, char *err, size_t errlen)
{
    return rt_report_html_job(store, run_id, summary_json, NULL, out, err, errlen);
}

int rt_report_html_job(struct rt_store *store, int64_t run_id, const char *summary_json,
                       const char *slurm_job_json, struct rt_buf *out, char *err, size_t errlen)
{
    struct page pg = {.store = store, .out = out, .err = err, .errlen = errlen};
    struct page *p = &pg;
    int rc = -1;
    char why[256];
    if (!(p->doc = rt_json_open(summary_json, strlen(summary_json), why, sizeof(why)))) {
        snprintf(err, errlen, "report: cannot read the summary: %s", why);
        return -1;
    }
    if (rt_json_get(p->doc, "$.run", NULL) != RT_JSON_OBJECT) {
        snprintf(err, errlen, "report: the summary of run %lld is not a JSON object with a run",
                 (long long)run_id);
        goto out;
    }

    char b[128];
    char *job = jstr(p, "$.run.job_name");
    char *host = jstr(p, "$.host.hostname");
    double started = NAN, v;
    jnum(p, "$.run.started_at", &started);
    put(p, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
           "style-src 'unsafe-inline'\">\n"
           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    putf(p, "<meta name=\"generator\" content=\"rtrack %s\">\n<title>", RTRACK_VERSION);
    putf(p, "rtrack report: run %lld", (long long)run_id);
    if (job) {
        put(p, " (");
        put_esc(p, job);
        put(p, ")");
    }
    putf(p, "</title>\n<style>%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
    if (job) {
        put_esc(p, job);
        putf(p, " <span class=\"muted\">· run %lld</span>", (long long)run_id);
    } else {
        putf(p, "Run %lld", (long long)run_id);
    }
    put(p, "</h1>\n<p class=\"sub\">rtrack report");
    if (host) {
        put(p, " · ");
        put_esc(p, host);
    }
    if (!isnan(started))
        putf(p, " · %s", fmt_utc(b, sizeof(b), started));
    if (jnum(p, "$.run.duration_s", &v))
        putf(p, " · %s", rt_fmt_duration(b, sizeof(b), v));
    put(p, "</p>\n</header>\n");
    free(job);
    free(host);

    section_banner(p);
    if (slurm_job_json && section_slurm_job(p, slurm_job_json) != 0)
        goto out;
    if (section_run(p) != 0)
        goto out;
    section_recommendation(p);
    section_stats(p);
    if (section_top(p, run_id) != 0 || section_charts(p, run_id) != 0)
        goto out;

    time_t now = time(NULL);
    putf(p,
         "<footer>Made by rtrack %s (commit %s) on %s from the recorded samples; "
         "nothing on this page is fetched from elsewhere.</footer>\n</body>\n</html>\n",
         RTRACK_VERSION, RTRACK_GIT_COMMIT, fmt_utc(b, sizeof(b), (double)now));
    rc = 0;
out:
    free(p->val);
    rt_json_close(p->doc);
    return rc;
}
