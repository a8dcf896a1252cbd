/* cmd_summary.c - `rtrack summary`: what a run used and what to request next time.
 *
 * The figures are rt_summary_json()'s (summary.c); text and markdown are read back from that
 * JSON (base/json.h), so the three formats can never disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_end.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/fmt.h"
#include "rtrack/base/json.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/summary.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

/* Reading values back from the summary JSON. */
struct jr {
    struct rt_json *doc;
    char buf[16][256];
    int next;
};

/* The value at path as text (rt_json_get()), or NULL for null/absent. The text lives until
 * sixteen more calls (enough for one printf's arguments). */
static const char *jt(struct jr *r, const char *path)
{
    char *v = NULL;
    if (rt_json_get(r->doc, path, &v) <= RT_JSON_NULL || !v) {
        free(v);
        return NULL;
    }
    char *out = r->buf[r->next++ & 15];
    snprintf(out, sizeof(r->buf[0]), "%s", v);
    free(v);
    rt_utf8_printable(out, 0); /* job, command and process names are the job's text */
    return out;
}

static double jd(struct jr *r, const char *path)
{
    const char *t = jt(r, path);
    return t ? strtod(t, NULL) : RT_NAN;
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

#define WIDTH 100 /* no line of the text is wider */
#define LABEL 13  /* the labels' column: "peak memory  " */

static int is_true(const char *s)
{
    return s && (!strcmp(s, "1") || !strcmp(s, "true"));
}

/* The display width of UTF-8 text (one column per code point: labels and figures are ours). */
static size_t cols(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* One labelled line of text ("label        text"; "- **label**: text" in markdown), the text
 * wrapped at `sep` (blanks inside a piece kept as they are) to WIDTH columns, continued under
 * the text's first column. */
static void line_at(int md, const char *label, const char *text, const char *sep)
{
    if (md) {
        printf("- **%s**: %s\n", label, text);
        return;
    }
    size_t at = (size_t)printf("%-*s", LABEL, label), sl = strlen(sep), sw = cols(sep);
    for (const char *p = text, *e;; p = e + sl) {
        e = strstr(p, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char piece[1024];
        snprintf(piece, sizeof(piece), "%.*s", (int)(len < sizeof(piece) ? len : sizeof(piece) - 1),
                 p);
        size_t w = cols(piece);
        if (p != text && at > LABEL && at + sw + w > WIDTH) {
            /* the separator's mark ("," of ", ") ends the line; the text goes on under itself */
            printf("%.*s\n%*s", (int)strcspn(sep, " "), sep, LABEL, "");
            at = LABEL;
        } else if (p != text) {
            fputs(sep, stdout);
            at += sw;
        }
        fputs(piece, stdout);
        at += w;
        if (!e)
            break;
    }
    putchar('\n');
}

/* One labelled line of text, wrapped at spaces. */
static void line(int md, const char *label, const char *text)
{
    line_at(md, label, text, " ");
}

/* printf into a buffer, appended */
static void cat(char *b, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *b, size_t n, const char *fmt, ...)
{
    size_t len = strlen(b);
    if (len >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + len, n - len, fmt, ap);
    va_end(ap);
}

/* A value in its unit, for people (fmt.h: the one way summary, report and runs write them). */
static const char *human(char *out, size_t n, double v, const char *unit)
{
    if (isnan(v))
        snprintf(out, n, "-");
    else if (!strcmp(unit, "B/s") || !strcmp(unit, "B"))
        rt_fmt_bytes(out, n, v, unit[1] ? "/s" : "");
    else if (!strcmp(unit, "MiB"))
        rt_fmt_mib(out, n, v);
    else if (!strcmp(unit, "s"))
        rt_fmt_duration(out, n, v);
    else
        rt_fmt_num(out, n, v);
    return out;
}

/* How the run ended, in words: "finished, exit 0", "failed, exit 3", "killed by SIGKILL (out of
 * memory)", "interrupted (its recorder is gone)", "running". `pre`: where the document has the
 * run's "run" and "recommendation" ("$", or "$.runs[1]" in --compare's). */
static void status_text(struct jr *r, const char *pre, char *out, size_t n)
{
    char p[4][64];
    snprintf(p[0], sizeof(p[0]), "%s.run.status", pre);
    snprintf(p[1], sizeof(p[1]), "%s.run.exit_code", pre);
    snprintf(p[2], sizeof(p[2]), "%s.run.exit_signal", pre);
    snprintf(p[3], sizeof(p[3]), "%s.recommendation.caveat.kind", pre);
    const char *st = or_dash(jt(r, p[0]));
    const char *code = jt(r, p[1]);
    double sig = jd(r, p[2]);
    const char *kind = jt(r, p[3]);
    if (!isnan(sig) && sig > 0) {
        char name[32];
        snprintf(out, n, "killed by %s%s", rt_signal_name((int)sig, name, sizeof(name)),
                 kind && !strcmp(kind, "oom") ? " (out of memory: the kernel's OOM killer)" : "");
    } else if (!strcmp(st, "interrupted")) {
        snprintf(out, n, "interrupted (its recorder is gone; the run has no end)");
    } else if (!strcmp(st, "running")) {
        snprintf(out, n, "running (in progress)");
    } else if (code) {
        snprintf(out, n, "%s, exit %s", st, code);
    } else {
        snprintf(out, n, "%s", st);
    }
}

/* The run's command as a shell takes it (rt_fmt_command), shortened to `width` columns; "-"
 * without one. malloc'd. `pre` as status_text()'s. */
static char *command_text(struct jr *r, const char *pre, size_t width)
{
    char *v = NULL, path[64];
    snprintf(path, sizeof(path), "%s.run.command", pre);
    if (rt_json_get(r->doc, path, &v) != RT_JSON_ARRAY) {
        free(v);
        return xstrdup("-");
    }
    char *q = rt_fmt_command(v);
    free(v);
    if (!q)
        return xstrdup("-");
    size_t len = strlen(q);
    char *out = xmalloc(len + 8);
    memcpy(out, q, len + 1);
    free(q);
    rt_fmt_shorten(out, len + 8, width);
    return out;
}

static const struct {
    const char *key, *label, *unit;
} metrics[] = {
    {"cpu_cores", "CPU cores", "cores"},
    {"memory_mib", "memory", "MiB"},
    {"disk_read_bytes_per_s", "disk read", "B/s"},
    {"disk_write_bytes_per_s", "disk write", "B/s"},
    {"net_recv_bytes_per_s", "net in", "B/s"},
    {"net_sent_bytes_per_s", "net out", "B/s"},
    {"gpu_usage", "GPUs busy", "gpus"},
    {"gpu_vram_mib", "VRAM", "MiB"},
    {"gpus_used", "GPUs used", "gpus"},
};

static void stats_table(struct jr *r, const char *side, const char *name, int md)
{
    static const char *const st[] = {"mean", "p50", "p95", "max"};
    char path[128], cell[4][32];
    for (size_t m = 0; m < RT_ARRAY_LEN(metrics); m++) {
        snprintf(path, sizeof(path), "$.%s.%s", side, metrics[m].key);
        if (!jt(r, path))
            continue; /* no such values (no GPU, no network for the tree) */
        for (int k = 0; k < 4; k++) {
            snprintf(path, sizeof(path), "$.%s.%s.%s", side, metrics[m].key, st[k]);
            human(cell[k], sizeof(cell[k]), jd(r, path), metrics[m].unit);
        }
        if (md)
            printf("| %s %s | %s | %s | %s | %s |\n", name, metrics[m].label, cell[0], cell[1],
                   cell[2], cell[3]);
        else
            printf("  %-12s %13s %13s %13s %13s\n", metrics[m].label, cell[0], cell[1], cell[2],
                   cell[3]);
    }
}

/* The header block, as `time -v` and seff give it: wall and CPU time, cores, efficiency against
 * the host and the allocation, the peak memory with when and whose it was. */
static void print_head(struct jr *r, int md)
{
    char t[1024], a[64], b[64], c[64];
    const char *tree = jt(r, "$.process") ? "process" : "system";
    char *cmd = command_text(r, "$", WIDTH - LABEL);
    line(md, "command", cmd);
    free(cmd);
    char when[40] = "-";
    double t0 = jd(r, "$.run.started_at");
    if (!isnan(t0)) {
        time_t tt = (time_t)t0;
        struct tm tm;
        if (gmtime_r(&tt, &tm))
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    snprintf(t, sizeof(t), "%s, %s every %s", when,
             rt_fmt_count(b, sizeof(b), jd(r, "$.run.samples"), "sample"),
             rt_fmt_duration(a, sizeof(a), jd(r, "$.run.interval_s")));
    line(md, "started", t);
    snprintf(t, sizeof(t), "%s: %s (%s), %s memory", or_dash(jt(r, "$.host.hostname")),
             rt_fmt_count(a, sizeof(a), jd(r, "$.host.vcpus"), "vCPU"),
             or_dash(jt(r, "$.host.cpu_model")),
             rt_fmt_mib(b, sizeof(b), jd(r, "$.host.memory_mib")));
    if (jt(r, "$.host.gpu_count"))
        cat(t, sizeof(t), ", %s (%s, %s VRAM)",
            rt_fmt_count(a, sizeof(a), jd(r, "$.host.gpu_count"), "GPU"),
            or_dash(jt(r, "$.host.gpu_model")),
            rt_fmt_mib(c, sizeof(c), jd(r, "$.host.gpu_memory_mib")));
    line(md, "host", t);
    printf("\n");

    double wall = jd(r, "$.run.duration_s");
    line(md, "wall time", rt_fmt_duration(a, sizeof(a), wall));
    if (jt(r, "$.cpu_time")) {
        double total = jd(r, "$.cpu_time.total_s");
        snprintf(t, sizeof(t), "%s", rt_fmt_duration(a, sizeof(a), total));
        if (jt(r, "$.cpu_time.user_s"))
            cat(t, sizeof(t), " (user %s, system %s; the kernel's, of the reaped job)",
                rt_fmt_duration(b, sizeof(b), jd(r, "$.cpu_time.user_s")),
                rt_fmt_duration(c, sizeof(c), jd(r, "$.cpu_time.sys_s")));
        else
            cat(t, sizeof(t), " (the tree's processes, sampled)");
        line(md, "CPU time", t);
    }
    char path[64];
    snprintf(path, sizeof(path), "$.%s.cpu_cores.mean", tree);
    snprintf(t, sizeof(t), "%s mean", rt_fmt_num(a, sizeof(a), jd(r, path)));
    snprintf(path, sizeof(path), "$.%s.cpu_cores.p95", tree);
    cat(t, sizeof(t), ", %s p95", rt_fmt_num(a, sizeof(a), jd(r, path)));
    snprintf(path, sizeof(path), "$.%s.cpu_cores.max", tree);
    cat(t, sizeof(t), ", %s max%s", rt_fmt_num(a, sizeof(a), jd(r, path)),
        strcmp(tree, "system") ? "" : " (the whole system: no process tree recorded)");
    line(md, "cores", t);
    snprintf(t, sizeof(t), "CPU %s of the host's %s, memory %s of its %s",
             rt_fmt_pct(a, sizeof(a), jd(r, "$.efficiency.cpu_pct")),
             rt_fmt_count(b, sizeof(b), jd(r, "$.host.vcpus"), "vCPU"),
             rt_fmt_pct(c, sizeof(c), jd(r, "$.efficiency.memory_pct")),
             rt_fmt_mib(path, sizeof(path), jd(r, "$.host.memory_mib")));
    if (jt(r, "$.efficiency.gpu_pct"))
        cat(t, sizeof(t), ", GPU %s, VRAM %s",
            rt_fmt_pct(a, sizeof(a), jd(r, "$.efficiency.gpu_pct")),
            rt_fmt_pct(b, sizeof(b), jd(r, "$.efficiency.vram_pct")));
    line(md, "efficiency", t);
    if (jt(r, "$.allocated")) {
        /* seff's figures: what the job was given, and how much of it it used */
        t[0] = 0;
        if (jt(r, "$.allocated.cpus"))
            cat(t, sizeof(t), "%s (%s), ",
                rt_fmt_count(a, sizeof(a), jd(r, "$.allocated.cpus"), "vCPU"),
                or_dash(jt(r, "$.allocated.cpus_from")));
        if (jt(r, "$.allocated.memory_mib"))
            cat(t, sizeof(t), "%s memory (%s), ",
                rt_fmt_mib(a, sizeof(a), jd(r, "$.allocated.memory_mib")),
                or_dash(jt(r, "$.allocated.memory_from")));
        if (jt(r, "$.allocated.gpus"))
            cat(t, sizeof(t), "%s, ", rt_fmt_count(a, sizeof(a), jd(r, "$.allocated.gpus"), "GPU"));
        if (jt(r, "$.allocated.slurm_job_id"))
            cat(t, sizeof(t), "Slurm job %s, ", jt(r, "$.allocated.slurm_job_id"));
        cat(t, sizeof(t), "used of it: CPU %s, memory %s",
            rt_fmt_pct(a, sizeof(a), jd(r, "$.efficiency.cpu_alloc_pct")),
            rt_fmt_pct(b, sizeof(b), jd(r, "$.efficiency.memory_alloc_pct")));
        line(md, "allocated", t);
    }
    t[0] = 0;
    const char *src = jt(r, "$.recommendation.memory_basis.source");
    int kern = src && !strcmp(src, "kernel"); /* above every sample: between two, or RSS > PSS */
    if (kern)
        cat(t, sizeof(t), "%s (the kernel's high-water mark of one process, above the samples)%s",
            rt_fmt_mib(a, sizeof(a), jd(r, "$.recommendation.memory_basis.peak_mib")),
            jt(r, "$.memory_peak") ? "; the tree's PSS peaked at " : "");
    if (jt(r, "$.memory_peak"))
        cat(t, sizeof(t), kern ? "%s at +%s" : "%s at +%s (the tree's PSS, sampled)",
            rt_fmt_mib(a, sizeof(a), jd(r, "$.memory_peak.mib")),
            rt_fmt_duration(b, sizeof(b), jd(r, "$.memory_peak.at_s")));
    else if (kern)
        ;
    else if (!jt(r, "$.process"))
        cat(t, sizeof(t), "%s (the system's used memory, sampled)",
            rt_fmt_mib(a, sizeof(a), jd(r, "$.system.memory_mib.max")));
    else
        cat(t, sizeof(t), "- (no memory figure of the tree was sampled)");
    line(md, "peak memory", t);
    if (jt(r, "$.memory_peak.processes[0]")) {
        t[0] = 0;
        for (int i = 0; i < 5; i++) {
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pid", i);
            if (!jt(r, path))
                break;
            const char *pid = jt(r, path);
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].name", i);
            const char *name = or_dash(jt(r, path));
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pss_mib", i);
            cat(t, sizeof(t), "%s%s (%s) %s", i ? ", " : "", name, pid,
                rt_fmt_mib(a, sizeof(a), jd(r, path)));
        }
        if (jd(r, "$.memory_peak.others.count") > 0)
            cat(t, sizeof(t), ", %.0f more %s", jd(r, "$.memory_peak.others.count"),
                rt_fmt_mib(a, sizeof(a), jd(r, "$.memory_peak.others.pss_mib")));
        line_at(md, "at the peak", t, ", "); /* "sleep (18895) 0.19 MiB" stays whole */
    }
    if (jt(r, "$.kernel")) {
        snprintf(t, sizeof(t), "largest resident set of one process %s (its high-water mark)",
                 rt_fmt_mib(a, sizeof(a), jd(r, "$.kernel.maxrss_mib")));
        line(md, "kernel", t);
    }
    if (jt(r, "$.kernel.cgroup_peak_mib")) {
        snprintf(t, sizeof(t), "the job's cgroup peaked at %s (page cache included)",
                 rt_fmt_mib(a, sizeof(a), jd(r, "$.kernel.cgroup_peak_mib")));
        line(md, "cgroup", t);
    }
    t[0] = 0;
    if (jt(r, "$.process"))
        cat(t, sizeof(t), "the tree read %s, wrote %s; ",
            human(a, sizeof(a), jd(r, "$.process.disk_read_bytes"), "B"),
            human(b, sizeof(b), jd(r, "$.process.disk_write_bytes"), "B"));
    cat(t, sizeof(t), "the system read %s, wrote %s",
        human(a, sizeof(a), jd(r, "$.system.disk_read_bytes"), "B"),
        human(b, sizeof(b), jd(r, "$.system.disk_write_bytes"), "B"));
    line(md, "disk", t);
    snprintf(t, sizeof(t), "the system received %s, sent %s",
             human(a, sizeof(a), jd(r, "$.system.net_recv_bytes"), "B"),
             human(b, sizeof(b), jd(r, "$.system.net_sent_bytes"), "B"));
    line(md, "network", t);
}
/* The sparklines, each labelled with whose it is and its scale (0 at the bottom). */
static void print_sparks(struct jr *r, int md)
{
    static const char *const sparks[5][3] = {{"cpu_cores", "CPU", "cores"},
                                             {"memory_mib", "memory", "MiB"},
                                             {"disk_io_bytes_per_s", "disk I/O", "B/s"},
                                             {"gpu_usage", "GPU", "gpus"},
                                             {"cpu_pressure_pct", "CPU pressure", "%"}};
    const char *who =
        !strcmp(or_dash(jt(r, "$.sparkline_scale.source")), "tree") ? "tree" : "system";
    int any = 0;
    for (int k = 0; k < 5; k++) {
        char path[80], label[40], top[40];
        snprintf(path, sizeof(path), "$.sparklines.%s", sparks[k][0]);
        const char *s = jt(r, path);
        if (!s)
            continue;
        if (!any++)
            printf("%s", md ? "\n```\n" : "\n");
        if (k == 4)
            snprintf(label, sizeof(label), "%s", sparks[k][1]); /* always the host's */
        else
            snprintf(label, sizeof(label), "%s %s", who, sparks[k][1]);
        snprintf(path, sizeof(path), "$.sparkline_scale.%s", sparks[k][0]);
        double max = jd(r, path);
        if (k == 4)
            rt_fmt_pct(top, sizeof(top), max);
        else if (k == 0 || k == 3)
            snprintf(top, sizeof(top), "%s %s", rt_fmt_num(path, sizeof(path), max), sparks[k][2]);
        else
            human(top, sizeof(top), max, sparks[k][2]);
        /* the line's characters are blocks, one column each */
        /* the lines are as long as each other: their scales line up */
        printf("%-15s%s  0 \u2026 %s%s\n", label, s, top, k == 4 ? " of the time (some)" : "");
    }
    if (any && md)
        printf("```\n");
}

/* The tree's processes grouped by name: "cc1 ×12" with their CPU time together and the peak
 * of the largest one; pid and parent where a row is one process; the busiest one's command. */
static void print_groups(struct jr *r, int md)
{
    if (!jt(r, "$.process_groups.groups[0]"))
        return;
    char path[96], a[64], b[64];
    double nproc = jd(r, "$.process_groups.processes");
    printf("\n%sprocesses%s: %s in the tree, grouped by name, busiest first\n\n", md ? "### " : "",
           "", rt_fmt_count(a, sizeof(a), nproc, "process"));
    if (md)
        printf("| name | CPU-s | peak PSS | pid | parent | command |\n|---|---|---|---|---|---|\n");
    else
        printf("  %-18s %7s %-16s %7s %7s  %s\n", "name", "CPU-s", "peak PSS", "pid", "parent",
               "command");
    for (int i = 0; i < 10; i++) {
#define G(key) (snprintf(path, sizeof(path), "$.process_groups.groups[%d].%s", i, key), path)
        if (!jt(r, G("name")))
            break;
        char name[96];
        snprintf(name, sizeof(name), "%s", jt(r, G("name")));
        /* the name and " ×N" in 18 columns */
        double count = jd(r, G("count"));
        char times[24] = "";
        if (count > 1)
            snprintf(times, sizeof(times), " \u00d7%.0f", count);
        rt_utf8_printable(name, 18 - cols(times) < 15 ? 18 - cols(times) : 15);
        cat(name, sizeof(name), "%s", times);
        char mem[48] = "-";
        if (jt(r, G("pss_max_mib")))
            snprintf(mem, sizeof(mem), "%s%s%s", count > 1 ? "\u2264" : "",
                     rt_fmt_mib(a, sizeof(a), jd(r, G("pss_max_mib"))), count > 1 ? " each" : "");
        const char *pid = jt(r, G("pid"));
        char pidb[24], ppidb[24];
        snprintf(pidb, sizeof(pidb), "%s", or_dash(pid));
        snprintf(ppidb, sizeof(ppidb), "%s", or_dash(jt(r, G("ppid"))));
        const char *c = jt(r, G("command"));
        size_t clen = c ? strlen(c) : 1;
        char *cmd = xmalloc(clen + 8);
        /* the program without its directory: "python3 -c ...", not "/usr/bin/python3 -c ..." */
        const char *sp = c ? strchr(c, ' ') : NULL, *start = c;
        for (const char *p = c; p && *p && (!sp || p < sp); p++)
            if (*p == '/' && p[1] && p[1] != ' ')
                start = p + 1;
        snprintf(cmd, clen + 8, "%s", c ? start : "-");
        if (md) {
            rt_utf8_printable(cmd, 0);
            printf("| %s | %s | %s | %s | %s | `", name,
                   rt_fmt_num(b, sizeof(b), jd(r, G("cpu_s"))), mem, pidb, ppidb);
            for (const char *p = cmd; *p; p++)
                fputs(*p == '|' ? "\\|" : *p == '`' ? "'" : (char[2]){*p, 0}, stdout);
            printf("` |\n");
        } else {
            rt_fmt_shorten(cmd, clen + 8, WIDTH - 63);
            /* name and mem hold multi-byte characters: padded by columns */
            size_t nw = cols(name), mw = cols(mem);
            printf("  %s%*s %7s %s%*s %7s %7s  %s\n", name, (int)(nw < 18 ? 18 - nw : 0), "",
                   rt_fmt_num(b, sizeof(b), jd(r, G("cpu_s"))), mem, (int)(mw < 16 ? 16 - mw : 0),
                   "", pidb, ppidb, cmd);
        }
        free(cmd);
#undef G
    }
}

static void print_reco(struct jr *r, int md)
{
    char t[1024], a[64], b[64], c[64];
    printf("\n%srecommendation\n\n", md ? "### " : "");
    snprintf(t, sizeof(t), "%s (for 95 %% of the intervals: %s)",
             or_dash(jt(r, "$.recommendation.text")),
             rt_fmt_count(a, sizeof(a), jd(r, "$.recommendation.cpu_p95"), "vCPU"));
    line(md, "next time", t);
    if (is_true(jt(r, "$.cpu_demand.starved"))) {
        snprintf(t, sizeof(t),
                 "starved: the tree waited for a CPU %s of the time it wanted one; it used %s "
                 "cores and would have used ~%s",
                 rt_fmt_pct(a, sizeof(a), jd(r, "$.cpu_demand.wait_pct")),
                 rt_fmt_num(b, sizeof(b), jd(r, "$.cpu_demand.usage_cores")),
                 rt_fmt_num(c, sizeof(c), jd(r, "$.cpu_demand.demand_cores")));
        line(md, "CPU", t);
    }
    if (jt(r, "$.recommendation.caveat.text"))
        line(md, "caveat", jt(r, "$.recommendation.caveat.text"));
    line(md, "memory", or_dash(jt(r, "$.recommendation.memory_basis.arithmetic")));
    snprintf(t, sizeof(t), "%s%s%s", md ? "`" : "", or_dash(jt(r, "$.recommendation.metaflow")),
             md ? "`" : "");
    line(md, "metaflow", t);
    /* the reference's heuristic compares the tree with the system: nothing to say without a
     * tree */
    if (jt(r, "$.process") && jt(r, "$.allocation")) {
        int shared = !strcmp(jt(r, "$.allocation"), "shared");
        line(md, "host",
             shared ? "shared: the system used clearly more than the tree (other work ran)"
                    : "dedicated: the tree used about all the system used");
    }
    if (jt(r, "$.server")) {
        snprintf(t, sizeof(t), "cheapest that fits: %s (%s), %s per hour on demand",
                 or_dash(jt(r, "$.server.display_name")), or_dash(jt(r, "$.server.vendor_id")),
                 or_dash(jt(r, "$.server.min_price_ondemand")));
        line(md, "server", t);
    } else if (jt(r, "$.server_error")) {
        snprintf(t, sizeof(t), "no server recommendation: %s", jt(r, "$.server_error"));
        line(md, "server", t);
    }
}

static void print_spread(struct jr *r, int md);

static void print_summary(struct jr *r, int md)
{
    char st[160];
    status_text(r, "$", st, sizeof(st));
    const char *job = jt(r, "$.run.job_name");
    char title[512];
    snprintf(title, sizeof(title), "run %s%s%s: %s", or_dash(jt(r, "$.run.id")),
             job ? " \u00b7 " : "", job ? job : "", st);
    printf("%s%s\n\n", md ? "## " : "", title);
    double runs = jd(r, "$.run.runs");
    if (runs > 1)
        printf("%d runs of job '%s' together (the newest run's facts below)\n\n", (int)runs,
               or_dash(job));
    print_head(r, md);

    printf("\n");
    if (md)
        printf("| metric | mean | p50 | p95 | max |\n|---|---|---|---|---|\n");
    else
        printf("  %-12s %13s %13s %13s %13s\n", "", "mean", "p50", "p95", "max");
    if (jt(r, "$.process")) {
        if (!md)
            printf("tree\n");
        stats_table(r, "process", "tree", md);
    }
    if (!md)
        printf("system\n");
    stats_table(r, "system", "system", md);
    print_sparks(r, md);
    print_groups(r, md);
    print_reco(r, md);
    print_spread(r, md); /* --job's */
}

/* A document on stdout: as it is (fmt 1: json), or read back by print (0: text, 2: markdown). */
static int cmd_summary_write(const char *json, size_t len, int fmt,
                             void (*print)(struct jr *r, int md))
{
    if (fmt == 1) {
        fwrite(json, 1, len, stdout);
        putchar('\n');
        return 0;
    }
    struct jr r = {NULL, {{0}}, 0};
    char why[256];
    if (!(r.doc = rt_json_open(json, len, why, sizeof(why)))) {
        rt_err("summary: %s", why);
        return -1;
    }
    print(&r, fmt == 2);
    rt_json_close(r.doc);
    return 0;
}

int cmd_summary_print(const char *json, size_t len, int md)
{
    return cmd_summary_write(json, len, md ? 2 : 0, print_summary);
}

/* --- across runs: --compare and --job's spread (the figures: summary.h's rt_summary_figures,
 * computed by src/summary/across.c) ------------------------------------------------------- */

/* A signed difference in the figure's unit: "+1.50 s", "-12.0 MiB" */
static const char *delta(char *out, size_t n, double d, const char *unit)
{
    char a[48];
    human(a, sizeof(a), fabs(d), unit);
    snprintf(out, n, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "\u00b1", a);
    return out;
}

/* Two runs side by side (rt_summary_compare_json()'s document): each figure, the change and the
 * change in per cent of the first. */
static void print_compare(struct jr *r, int md)
{
    char head[2][64], st[160], a[64], b[64], d[64], pc[32], pre[16], path[96];
    for (int i = 0; i < 2; i++) {
        snprintf(pre, sizeof(pre), "$.runs[%d]", i);
        snprintf(path, sizeof(path), "%s.run.id", pre);
        snprintf(head[i], sizeof(head[i]), "run %s", or_dash(jt(r, path)));
        status_text(r, pre, st, sizeof(st));
        snprintf(path, sizeof(path), "%s.run.job_name", pre);
        const char *job = jt(r, path);
        char t[512];
        snprintf(t, sizeof(t), "%s%s%s: %s; ", head[i], job ? " \u00b7 " : "", job ? job : "", st);
        /* the command in the room left on the line */
        size_t used = cols(t), room = WIDTH - LABEL > used + 20 ? WIDTH - LABEL - used : 20;
        char *cmd = command_text(r, pre, room);
        cat(t, sizeof(t), "%s", cmd);
        free(cmd);
        line(md, i ? "and" : "compare", t);
    }
    printf("\n");
    if (md)
        printf("| figure | %s | %s | change |\n|---|---|---|---|\n", head[0], head[1]);
    else
        printf("  %-14s %13s %13s  %s\n", "", head[0], head[1], "change");
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        const struct rt_summary_figure *fg = &rt_summary_figures[f];
        char at[64];
        snprintf(at, sizeof(at), "$.figures.%s", fg->key);
        snprintf(path, sizeof(path), "%s.values[0]", at);
        double v0 = jd(r, path);
        snprintf(path, sizeof(path), "%s.values[1]", at);
        double v1 = jd(r, path);
        if (isnan(v0) && isnan(v1))
            continue; /* neither has it (no GPU) */
        snprintf(path, sizeof(path), "%s.delta", at);
        double dv = jd(r, path);
        snprintf(path, sizeof(path), "%s.delta_pct", at);
        double dp = jd(r, path);
        pc[0] = 0;
        if (!isnan(dp))
            snprintf(pc, sizeof(pc), " (%s%s)", dp > 0 ? "+" : "", rt_fmt_pct(a, sizeof(a), dp));
        human(a, sizeof(a), v0, fg->unit);
        human(b, sizeof(b), v1, fg->unit);
        if (isnan(dv))
            snprintf(d, sizeof(d), "-");
        else
            delta(d, sizeof(d), dv, fg->unit);
        if (md)
            printf("| %s | %s | %s | %s%s |\n", fg->label, a, b, d, pc);
        else
            printf("  %-14s %13s %13s  %s%s\n", fg->label, a, b, d, pc);
    }
    for (int i = 0; i < 2; i++) {
        char t[256];
        snprintf(path, sizeof(path), "$.runs[%d].recommendation.text", i);
        snprintf(t, sizeof(t), "%s: %s", head[i], or_dash(jt(r, path)));
        printf("%s", i ? "" : "\n");
        line(md, i ? "" : "next time", t);
    }
}

/* --job: how the figures spread over the job's runs (the document's "spread"), as hyperfine
 * gives it: mean ± σ and min … max; nothing under two runs. */
static void print_spread(struct jr *r, int md)
{
    double runs = jd(r, "$.spread.runs");
    if (isnan(runs) || runs < 2)
        return;
    char t[160], a[48], b[48], c[48], d[48], path[96];
    printf("\n%sspread over %.0f runs\n\n", md ? "### " : "", runs);
    if (md)
        printf("| figure | mean ± σ | min … max |\n|---|---|---|\n");
    else
        printf("  %-14s %26s  %s\n", "", "mean \u00b1 \u03c3", "min \u2026 max"); /* 24 columns */
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        const struct rt_summary_figure *fg = &rt_summary_figures[f];
        double v[5];
        static const char *const k[5] = {"n", "mean", "sd", "min", "max"};
        for (int i = 0; i < 5; i++) {
            snprintf(path, sizeof(path), "$.spread.figures.%s.%s", fg->key, k[i]);
            v[i] = jd(r, path);
        }
        if (!(v[0] > 0))
            continue;
        human(a, sizeof(a), v[1], fg->unit);
        human(b, sizeof(b), v[2], fg->unit);
        human(c, sizeof(c), v[3], fg->unit);
        human(d, sizeof(d), v[4], fg->unit);
        snprintf(t, sizeof(t), "%s \u00b1 %s", a, b);
        if (md)
            printf("| %s | %s | %s \u2026 %s |\n", fg->label, t, c, d);
        else
            /* ± is one column in two bytes */
            printf("  %-14s %25s  %s \u2026 %s\n", fg->label, t, c, d);
    }
}

struct summary_opts {
    char *job;            /* --job */
    const char *cmp[2];   /* --compare's two runs */
    int format;           /* 0 text, 1 json, 2 markdown */
    int recommend_server; /* --recommend-server */
};

/* --compare RUN RUN: the option's value and the argument after it (getopt stops there) */
static int opt_compare(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    struct summary_opts *s = c->opts;
    s->cmp[0] = v;
    s->cmp[1] = optind < c->argc && c->argv[optind][0] != '-' ? c->argv[optind++] : NULL;
    if (!s->cmp[1]) {
        rt_err("summary: --compare needs two runs (ids or latest)");
        return -1;
    }
    return 0;
}

static const struct rt_opt summary_opts[] = {
    CMD_OPT_DBS,
    CMD_OPT_SLURM_JOB("this Slurm job across its nodes: a row per node, the job, sbatch options"),
    CMD_OPT_RUN("the run (default latest)"),
    OPT_STRING("job", 'j', "NAME",
               "every run of this job name together (mean of means, max of maxes; default: one "
               "run)",
               struct summary_opts, job),
    OPT_CALLBACK(
        "compare", 0, "RUN RUN",
        "two runs side by side (ids or latest): each figure, the change and the change in per cent",
        opt_compare),
    OPT_ENUM("format", 'f', "text|json|markdown", "output format (default text)",
             struct summary_opts, format, "format", "text", "json", "markdown|md"),
    CMD_OPT_RECOMMEND_SERVER("ask the Spare Cores Keeper API for the cheapest server that fits",
                             struct summary_opts),
    OPT_END,
};

static int summary_check(struct cmd_ctx *c);
static int cmd_summary(struct cmd_ctx *c);

const struct cmd_def cmd_summary_def = {
    .name = "summary",
    .fn = cmd_summary,
    .summary = "what a run used and what to request next time",
    .synopsis = "[--db FILE]... [--slurm-job ID]\n"
                "[--run ID|latest | --job NAME | --compare RUN RUN]\n"
                "[--format text|json|markdown] [--recommend-server]",
    .description =
        "What a recorded run used (wall and CPU time, cores, peak memory; process\n"
        "tree and system: mean, p50, p95, max), what to request next time, how much\n"
        "of the host and of the allocation it used, its processes grouped by name.\n"
        "--job: every run of the job together, then how the runs spread (mean \u00b1 \u03c3,\n"
        "min \u2026 max); --compare: two runs side by side. Each in JSON too.",
    .opts = summary_opts,
    .opts_size = sizeof(struct summary_opts),
    .check = summary_check,
    .db = CMD_DB_READ,
};

/* What goes with what; then the run the database is opened with: none for --compare (its two
 * are found by cmd_summary), --job or the Slurm job across its nodes; else --run's, or the
 * latest. */
static int summary_check(struct cmd_ctx *c)
{
    const struct summary_opts *o = c->opts;
    if (o->cmp[0] && (c->run || o->job)) {
        rt_err("summary: --compare cannot be used with --run or --job");
        return RT_EXIT_USAGE;
    }
    if (o->recommend_server && rt_env_check_http(c->env, "summary") != 0)
        return RT_EXIT_USAGE;
    if (c->run && o->job) {
        rt_err("summary: --run and --job cannot be used together");
        return RT_EXIT_USAGE;
    }
    if (o->job && !*o->job) {
        rt_err("summary: --job needs a job name");
        return RT_EXIT_USAGE;
    }
    if (o->cmp[0] || o->job || (cmd_dbs_slurm() && !c->run))
        c->run = NULL;
    else if (!c->run)
        c->run = "latest";
    return 0;
}

/* --compare: the two runs (the second found first, as they were always said) side by side */
static int summary_compare(struct cmd_ctx *c, int fmt)
{
    const struct summary_opts *o = c->opts;
    int64_t id[2];
    if (!(id[1] = cmd_find_run(c, o->cmp[1], NULL)) || !(id[0] = cmd_find_run(c, o->cmp[0], NULL)))
        return RT_EXIT_USAGE;
    struct rt_buf json = {0};
    char err[512];
    int bad = 0, crc = rt_summary_compare_json(c->store, id, &json, &bad, err, sizeof(err));
    if (crc != 0) {
        rt_err("summary: %s", err);
        rt_buf_free(&json);
        return bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    }
    crc = cmd_summary_write(json.p, json.len, fmt, print_compare);
    rt_buf_free(&json);
    if (crc != 0)
        return RT_EXIT_FAILURE;
    return cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE;
}

static int cmd_summary(struct cmd_ctx *c)
{
    const struct summary_opts *so = c->opts;
    int fmt = so->format;
    if (cmd_dbs_slurm() && !c->run && !so->job)
        return cmd_cluster_summary(c->store, cmd_dbs_slurm(), fmt);
    if (so->cmp[0])
        return summary_compare(c, fmt);
    struct rt_summary_opts o = {c->run_id, so->job, so->recommend_server, c->env->keeper_url, 0};
    char err[512];
    struct rt_buf json = {0};
    int bad = 0, rc;
    if (rt_summary_json(c->store, &o, &json, &bad, err, sizeof(err)) != 0) {
        rt_err("summary: %s", err);
        rc = bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    } else if (cmd_summary_write(json.p, json.len, fmt, print_summary) != 0) {
        rc = RT_EXIT_FAILURE;
    } else {
        rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
    }
    rt_buf_free(&json);
    return rc;
}
