/* render_text.c - the summary for people (render.h): text, at most `width` columns a line, or
 * markdown; and --compare's two runs side by side. Printed from the computed struct, so it
 * says what the JSON says. Every size, duration, count and quoted command goes through
 * base/fmt.h, as `runs` and the report do, so a figure reads the same everywhere; every text
 * that comes from the job (its name, command, process names) is made printable first. */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "rtrack/base/fmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/utf8.h"
#include "rtrack/summary/render.h"

#define LABEL 13 /* the labels' column: "peak memory  " */

/* Text of the job's, printable and at most 255 bytes (and in markdown escaped: up to six times
 * that), in one of sixteen buffers (enough for one printf's arguments); NULL stays NULL. */
struct tx {
    FILE *f;
    int md;
    size_t width; /* no line of the text is wider (the tables' fixed columns aside) */
    char buf[16][1536];
    int next;
};

void summary_md_text(char *out, size_t n, const char *s)
{
    size_t o = 0;
    for (; n && *s; s++) {
        char one[2] = {*s, 0};
        const char *put = *s == '<'                 ? "&lt;"
                          : *s == '>'               ? "&gt;"
                          : *s == '&'               ? "&amp;"
                          : strchr("\\`*_[]~|", *s) ? NULL
                                                    : one;
        char esc[3] = {'\\', *s, 0};
        if (!put)
            put = esc;
        size_t l = strlen(put);
        if (o + l >= n)
            break;
        memcpy(out + o, put, l);
        o += l;
    }
    if (n)
        out[o] = '\0';
}

/* printable (a terminal's text: no escape sequence of the job's reaches it) */
static const char *pt_plain(struct tx *x, const char *s)
{
    if (!s)
        return NULL;
    char *out = x->buf[x->next++ & 15];
    snprintf(out, 256, "%s", s);
    rt_utf8_printable(out, 0);
    return out;
}

/* printable, and in markdown escaped: what goes into the text as text */
static const char *pt(struct tx *x, const char *s)
{
    const char *p = pt_plain(x, s);
    if (!p || !x->md)
        return p;
    char *out = x->buf[x->next++ & 15];
    summary_md_text(out, sizeof(x->buf[0]), p);
    return out;
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

/* The display width of UTF-8 text (one column per code point: labels and figures are ours). */
static size_t cols(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Whether the word at w (up to a blank or the end) is a unit ("MiB", "cores,", "%)"): a figure
 * and its unit stay on one line ("500.0 MiB", never "500.0" then "MiB"). */
static int is_unit(const char *w)
{
    static const char *const units[] = {"B",     "KiB",   "MiB",   "GiB",   "TiB", "B/s",
                                        "KiB/s", "MiB/s", "GiB/s", "%",     "s",   "GB",
                                        "cores", "core",  "vCPU",  "vCPUs", "GPU", "GPUs"};
    size_t n = strcspn(w, " ");
    while (n && strchr(",;:)", w[n - 1]))
        n--;
    for (size_t i = 0; i < RT_ARRAY_LEN(units); i++)
        if (strlen(units[i]) == n && !strncmp(w, units[i], n))
            return 1;
    return 0;
}

/* One labelled line of text ("label        text"; "- **label**: text" in markdown), the text
 * wrapped at `sep` (blanks inside a piece kept as they are) to x->width columns, continued under
 * the text's first column. */
static void line_at(struct tx *x, const char *label, const char *text, const char *sep)
{
    FILE *f = x->f;
    if (x->md) { /* without a label, the next item of the list (text indents it instead) */
        if (*label)
            fprintf(f, "- **%s**: %s\n", label, text);
        else
            fprintf(f, "- %s\n", text);
        return;
    }
    size_t at = (size_t)fprintf(f, "%-*s", LABEL, label), sl = strlen(sep), sw = cols(sep);
    for (const char *p = text, *e;; p = e + sl) {
        e = strstr(p, sep);
        /* a figure's unit goes with it */
        while (e && sl == 1 && e > p && isdigit((unsigned char)e[-1]) && is_unit(e + 1))
            e = strstr(e + 1, sep);
        size_t len = e ? (size_t)(e - p) : strlen(p);
        char piece[1024];
        snprintf(piece, sizeof(piece), "%.*s", (int)(len < sizeof(piece) ? len : sizeof(piece) - 1),
                 p);
        size_t w = cols(piece);
        if (p != text && at > LABEL && at + sw + w > x->width) {
            /* the separator's mark ("," of ", ") ends the line; the text goes on under itself */
            fprintf(f, "%.*s\n%*s", (int)strcspn(sep, " "), sep, LABEL, "");
            at = LABEL;
        } else if (p != text) {
            fputs(sep, f);
            at += sw;
        }
        fputs(piece, f);
        at += w;
        if (!e)
            break;
    }
    fputc('\n', f);
}

/* One labelled line of text, wrapped at spaces. */
static void line(struct tx *x, const char *label, const char *text)
{
    line_at(x, label, text, " ");
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

/* A value in its unit, for people ("-" when unknown). */
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

/* A whole number as the JSON has it ("3"), or NULL when unknown */
static const char *num_text(char *b, size_t n, double v)
{
    if (isnan(v))
        return NULL;
    snprintf(b, n, "%.0f", v);
    return b;
}

/* How the run ended, in words: "finished, exit 0", "failed, exit 3", "killed by SIGKILL (out of
 * memory)", "interrupted (its recorder is gone)", "running". */
static void status_text(struct tx *x, const struct rt_summary *s, char *out, size_t n)
{
    const char *st = or_dash(pt(x, s->run.status));
    double sig = s->run.exit_signal;
    const char *kind = s->reco.caveat_kind;
    if (!isnan(sig) && sig > 0) {
        char name[32];
        snprintf(out, n, "killed by %s%s", rt_signal_name((int)sig, name, sizeof(name)),
                 kind && !strcmp(kind, "oom") ? " (out of memory: the kernel's OOM killer)" : "");
    } else if (!strcmp(st, "interrupted")) {
        snprintf(out, n, "interrupted (its recorder is gone; the run has no end)");
    } else if (!strcmp(st, "running")) {
        snprintf(out, n, "running (in progress)");
    } else if (!isnan(s->run.exit_code)) {
        snprintf(out, n, "%s, exit %.0f", st, s->run.exit_code);
    } else {
        snprintf(out, n, "%s", st);
    }
}

/* The run's command as a shell takes it (rt_fmt_command), shortened to `width` columns; "-"
 * without one; in markdown escaped (the job's argv is anything: `<img onerror=...>`). malloc'd. */
static char *command_text(struct tx *x, const struct rt_summary *s, size_t width)
{
    const char *j = s->run.command_json;
    while (j && (*j == ' ' || *j == '\t' || *j == '\n'))
        j++;
    char *q = j && *j == '[' ? rt_fmt_command(j) : NULL;
    if (!q)
        return xstrdup("-");
    size_t len = strlen(q);
    char *out = xmalloc(len + 8);
    memcpy(out, q, len + 1);
    free(q);
    rt_fmt_shorten(out, len + 8, width);
    if (!x->md)
        return out;
    size_t n = strlen(out) * 6 + 1;
    char *md = xmalloc(n);
    summary_md_text(md, n, out);
    free(out);
    return md;
}

static const struct {
    const char *label, *unit;
} metrics[RT_M_N] = {
    [RT_M_CPU] = {"CPU cores", "cores"}, [RT_M_MEM] = {"memory", "MiB"},
    [RT_M_DREAD] = {"disk read", "B/s"}, [RT_M_DWRITE] = {"disk write", "B/s"},
    [RT_M_NRECV] = {"net in", "B/s"},    [RT_M_NSENT] = {"net out", "B/s"},
    [RT_M_GPU] = {"GPUs busy", "gpus"},  [RT_M_VRAM] = {"VRAM", "MiB"},
    [RT_M_GPUS] = {"GPUs used", "gpus"},
};

static void stats_table(struct tx *x, const struct rt_summary_side *sd, const char *name)
{
    char cell[4][32];
    for (int m = 0; m < RT_M_N; m++) {
        const struct rt_stat4 *t = &sd->st[m];
        if (!t->ok)
            continue; /* no such values (no GPU, no network for the tree) */
        human(cell[0], sizeof(cell[0]), t->mean, metrics[m].unit);
        human(cell[1], sizeof(cell[1]), t->p50, metrics[m].unit);
        human(cell[2], sizeof(cell[2]), t->p95, metrics[m].unit);
        human(cell[3], sizeof(cell[3]), t->max, metrics[m].unit);
        if (x->md)
            fprintf(x->f, "| %s %s | %s | %s | %s | %s |\n", name, metrics[m].label, cell[0],
                    cell[1], cell[2], cell[3]);
        else
            fprintf(x->f, "  %-12s %13s %13s %13s %13s\n", metrics[m].label, cell[0], cell[1],
                    cell[2], cell[3]);
    }
}

/* command, started, host */
static void head_run(struct tx *x, const struct rt_summary *s)
{
    char t[1024], a[64], b[64], c[64];
    char *cmd = command_text(x, s, x->width - LABEL);
    line(x, "command", cmd);
    free(cmd);
    char when[40] = "-";
    if (!isnan(s->run.started_at)) {
        time_t tt = (time_t)s->run.started_at;
        struct tm tm;
        if (gmtime_r(&tt, &tm))
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
    }
    snprintf(t, sizeof(t), "%s, %s every %s", when,
             rt_fmt_count(b, sizeof(b), s->run.samples, "sample"),
             rt_fmt_duration(a, sizeof(a), s->run.interval_s));
    line(x, "started", t);
    const struct rt_summary_host *h = &s->host;
    snprintf(t, sizeof(t), "%s: %s (%s), %s memory", or_dash(pt(x, h->hostname)),
             rt_fmt_count(a, sizeof(a), h->vcpus, "vCPU"), or_dash(pt(x, h->cpu_model)),
             rt_fmt_mib(b, sizeof(b), h->memory_mib));
    if (!isnan(h->gpu_count))
        cat(t, sizeof(t), ", %s (%s, %s VRAM)", rt_fmt_count(a, sizeof(a), h->gpu_count, "GPU"),
            or_dash(pt(x, h->gpu_model)), rt_fmt_mib(c, sizeof(c), h->gpu_memory_mib));
    line(x, "host", t);
}

/* wall time, CPU time, cores, efficiency, allocated */
static void head_cpu(struct tx *x, const struct rt_summary *s)
{
    char t[1024], a[64], b[64], c[64], d[64];
    const struct rt_summary_cpu_time *ct = &s->cpu_time;
    if (s->run.runs > 1 && ct->known) /* --job: every run's wall time, as its CPU time */
        snprintf(t, sizeof(t), "%s, %d runs together (the newest: %s)",
                 rt_fmt_duration(a, sizeof(a), ct->wall_s), s->run.runs,
                 rt_fmt_duration(b, sizeof(b), s->run.duration_s));
    else
        rt_fmt_duration(t, sizeof(t), s->run.duration_s);
    line(x, "wall time", t);
    if (ct->known) {
        snprintf(t, sizeof(t), "%s", rt_fmt_duration(a, sizeof(a), ct->total_s));
        if (!isnan(ct->user_s))
            cat(t, sizeof(t), " (user %s, system %s, as the kernel counted the job)",
                rt_fmt_duration(b, sizeof(b), ct->user_s),
                rt_fmt_duration(c, sizeof(c), ct->sys_s));
        else
            cat(t, sizeof(t), " (the job's processes, sampled)");
        line(x, "CPU time", t);
    }
    const struct rt_stat4 *cpu = &(s->has_tree ? &s->process : &s->system)->st[RT_M_CPU];
    snprintf(t, sizeof(t), "%s mean%s", rt_fmt_num(a, sizeof(a), cpu->ok ? cpu->mean : RT_NAN),
             ct->known ? " (CPU time / wall time)" : "");
    cat(t, sizeof(t), ", %s p95", rt_fmt_num(a, sizeof(a), cpu->ok ? cpu->p95 : RT_NAN));
    cat(t, sizeof(t), ", %s max%s", rt_fmt_num(a, sizeof(a), cpu->ok ? cpu->max : RT_NAN),
        s->has_tree ? "" : " (the whole system: no job's processes recorded)");
    line(x, "cores", t);
    const struct rt_eff *e = &s->eff;
    snprintf(t, sizeof(t), "CPU %s of the host's %s, memory %s of its %s",
             rt_fmt_pct(a, sizeof(a), e->cpu_pct),
             rt_fmt_count(b, sizeof(b), s->host.vcpus, "vCPU"),
             rt_fmt_pct(c, sizeof(c), e->memory_pct), rt_fmt_mib(d, sizeof(d), s->host.memory_mib));
    if (!isnan(e->gpu_pct))
        cat(t, sizeof(t), ", GPU %s, VRAM %s", rt_fmt_pct(a, sizeof(a), e->gpu_pct),
            rt_fmt_pct(b, sizeof(b), e->vram_pct));
    line(x, "efficiency", t);
    const struct rt_allocated *al = &s->alloc;
    if (!al->known)
        return;
    /* seff's figures: what the job was given, and how much of it it used */
    t[0] = 0;
    if (!isnan(al->cpus))
        cat(t, sizeof(t), "%s (%s), ", rt_fmt_count(a, sizeof(a), al->cpus, "vCPU"),
            or_dash(al->cpus_from));
    if (!isnan(al->memory_mib))
        cat(t, sizeof(t), "%s memory (%s), ", rt_fmt_mib(a, sizeof(a), al->memory_mib),
            or_dash(al->memory_from));
    if (!isnan(al->gpus))
        cat(t, sizeof(t), "%s, ", rt_fmt_count(a, sizeof(a), al->gpus, "GPU"));
    if (al->has_job_id)
        cat(t, sizeof(t), "Slurm job %s, ", pt(x, al->slurm_job_id));
    cat(t, sizeof(t), "used of it: CPU %s, memory %s", rt_fmt_pct(a, sizeof(a), e->cpu_alloc_pct),
        rt_fmt_pct(b, sizeof(b), e->memory_alloc_pct));
    line(x, "allocated", t);
}

/* peak memory, at the peak */
static void head_peak(struct tx *x, const struct rt_summary *s)
{
    char t[1024], a[64], b[64];
    const struct rt_summary_peak *pk = &s->peak;
    t[0] = 0;
    int kern = s->reco.mem_from && !strcmp(s->reco.mem_from, "kernel"); /* between two samples */
    char of_run[48] = "";
    if (s->run.runs > 1 && pk->known) /* --job: whose run it was */
        snprintf(of_run, sizeof(of_run), " of run %.0f", pk->run);
    if (kern)
        cat(t, sizeof(t),
            "%s (the most one process held, by the kernel's count: more than any sample "
            "saw)%s",
            rt_fmt_mib(a, sizeof(a), s->reco.mem_peak),
            pk->known ? "; the job's processes together peaked at " : "");
    if (pk->known)
        cat(t, sizeof(t),
            kern ? "%s at +%s%s" : "%s at +%s%s (the job's processes together, sampled)",
            rt_fmt_mib(a, sizeof(a), pk->mib), rt_fmt_duration(b, sizeof(b), pk->at_s), of_run);
    else if (kern)
        ;
    else if (!s->has_tree)
        cat(t, sizeof(t), "%s (the system's used memory, sampled)",
            rt_fmt_mib(a, sizeof(a),
                       s->system.st[RT_M_MEM].ok ? s->system.st[RT_M_MEM].max : RT_NAN));
    else
        cat(t, sizeof(t), "- (no memory figure of the job was sampled)");
    line(x, "peak memory", t);
    if (pk->nprocs == 0)
        return;
    t[0] = 0;
    for (int i = 0; i < pk->nprocs; i++) {
        char pid[32];
        cat(t, sizeof(t), "%s%s (%s) %s", i ? ", " : "", or_dash(pt(x, pk->procs[i].name)),
            or_dash(num_text(pid, sizeof(pid), pk->procs[i].pid)),
            rt_fmt_mib(a, sizeof(a), pk->procs[i].value));
    }
    if (pk->others_count > 0)
        cat(t, sizeof(t), ", %.0f more %s", pk->others_count,
            rt_fmt_mib(a, sizeof(a), pk->others_pss_mib));
    line_at(x, "at the peak", t, ", "); /* "sleep (18895) 0.19 MiB" stays whole */
}

/* kernel, cgroup, disk, network */
static void head_io(struct tx *x, const struct rt_summary *s)
{
    char t[1024], a[64], b[64];
    if (s->kernel.known) {
        snprintf(t, sizeof(t),
                 "the largest process held %s at its peak (its resident set, the kernel's count)",
                 rt_fmt_mib(a, sizeof(a), s->kernel.maxrss_mib));
        line(x, "kernel", t);
    }
    if (s->kernel.known && !isnan(s->kernel.cgroup_peak_mib)) {
        snprintf(t, sizeof(t), "the job's cgroup peaked at %s (page cache included)",
                 rt_fmt_mib(a, sizeof(a), s->kernel.cgroup_peak_mib));
        line(x, "cgroup", t);
    }
    for (int i = 0; i < s->nnotes; i++)
        line(x, "note", s->notes[i]);
    /* what each figure counts, so that a job that wrote more than the disks did (its writes
     * still in the page cache) does not read as a bug */
    t[0] = 0;
    if (s->has_tree)
        cat(t, sizeof(t), "the job had %s read and %s written (what it asked of the disks); ",
            human(a, sizeof(a), s->process.total[RT_T_DREAD], "B"),
            human(b, sizeof(b), s->process.total[RT_T_DWRITE], "B"));
    cat(t, sizeof(t),
        "the disks read %s and wrote %s (everyone's, written back from the page cache when the "
        "kernel chose)",
        human(a, sizeof(a), s->system.total[RT_T_DREAD], "B"),
        human(b, sizeof(b), s->system.total[RT_T_DWRITE], "B"));
    line(x, "disk", t);
    snprintf(t, sizeof(t), "the system received %s, sent %s",
             human(a, sizeof(a), s->system.total[RT_T_NRECV], "B"),
             human(b, sizeof(b), s->system.total[RT_T_NSENT], "B"));
    line(x, "network", t);
}

/* The sparklines, each labelled with whose it is and its scale (0 at the bottom). */
static void print_sparks(struct tx *x, const struct rt_summary *s)
{
    static const char *const sparks[RT_SPARK_LINES][2] = {{"CPU", "cores"},
                                                          {"memory", "MiB"},
                                                          {"disk I/O", "B/s"},
                                                          {"GPU", "gpus"},
                                                          {"CPU pressure", "%"}};
    const struct rt_summary_sparks *sp = &s->sparks;
    const char *who = sp->tree ? "job" : "system";
    int any = 0;
    for (int k = 0; k < RT_SPARK_LINES; k++) {
        char text[SPARK_TEXT_MAX], label[40], top[40], num[40];
        double max;
        if (!summary_spark_text(sp->v[k], sp->has[k], sp->n, text, &max))
            continue;
        if (!any++)
            fprintf(x->f, "%s", x->md ? "\n```\n" : "\n");
        if (k == RT_SPARK_PSI)
            snprintf(label, sizeof(label), "%s", sparks[k][0]); /* always the host's */
        else
            snprintf(label, sizeof(label), "%s %s", who, sparks[k][0]);
        if (k == RT_SPARK_PSI)
            rt_fmt_pct(top, sizeof(top), max);
        else if (k == RT_SPARK_CPU || k == RT_SPARK_GPU)
            snprintf(top, sizeof(top), "%s %s", rt_fmt_num(num, sizeof(num), max), sparks[k][1]);
        else
            human(top, sizeof(top), max, sparks[k][1]);
        /* the line's characters are blocks, one column each; the lines are as long as each
         * other: their scales line up */
        fprintf(x->f, "%-15s%s  0 \u2026 %s%s\n", label, text, top,
                k == RT_SPARK_PSI ? " of the time (some)" : "");
    }
    if (any && x->md)
        fprintf(x->f, "```\n");
}

/* A group's command: the program without its directory ("python3 -c ...", not
 * "/usr/bin/python3 -c ..."); malloc'd, with room for rt_fmt_shorten. */
static char *group_command(const char *c, size_t *cap)
{
    size_t clen = c ? strlen(c) : 1;
    *cap = clen + 8;
    char *cmd = xmalloc(*cap);
    const char *sp = c ? strchr(c, ' ') : NULL, *start = c;
    for (const char *p = c; p && *p && (!sp || p < sp); p++)
        if (*p == '/' && p[1] && p[1] != ' ')
            start = p + 1;
    snprintf(cmd, *cap, "%s", c ? start : "-");
    return cmd;
}

/* One group's row: "cc1 ×12" with their CPU time together and the peak of the largest one;
 * pid and parent where a row is one process; the busiest one's command. */
static void group_row(struct tx *x, const struct rt_summary_group *g)
{
    char name[600], a[64], b[64], times[24] = "", mem[48] = "-", pidb[24], ppidb[24];
    snprintf(name, sizeof(name), "%s", or_dash(pt_plain(x, g->name)));
    /* the name and " ×N" in 18 columns (cut before markdown escapes it) */
    if (g->count > 1)
        snprintf(times, sizeof(times), " \u00d7%.0f", g->count);
    rt_utf8_printable(name, 18 - cols(times) < 15 ? 18 - cols(times) : 15);
    if (x->md) {
        char cut[600];
        snprintf(cut, sizeof(cut), "%s", name);
        summary_md_text(name, sizeof(name), cut);
    }
    cat(name, sizeof(name), "%s", times);
    if (!isnan(g->pss_max_mib))
        snprintf(mem, sizeof(mem), "%s%s%s", g->count > 1 ? "\u2264" : "",
                 rt_fmt_mib(a, sizeof(a), g->pss_max_mib), g->count > 1 ? " each" : "");
    if (!num_text(pidb, sizeof(pidb), g->pid))
        snprintf(pidb, sizeof(pidb), "-");
    if (!num_text(ppidb, sizeof(ppidb), g->ppid))
        snprintf(ppidb, sizeof(ppidb), "-");
    size_t cap;
    /* (in markdown a code span: its own escapes below) */
    char *cmd = group_command(pt_plain(x, g->command), &cap);
    if (x->md) {
        rt_utf8_printable(cmd, 0);
        fprintf(x->f, "| %s | %s | %s | %s | %s | `", name, rt_fmt_num(b, sizeof(b), g->cpu_s), mem,
                pidb, ppidb);
        for (const char *p = cmd; *p; p++)
            fputs(*p == '|' ? "\\|" : *p == '`' ? "'" : (char[2]){*p, 0}, x->f);
        fprintf(x->f, "` |\n");
    } else {
        rt_fmt_shorten(cmd, cap, x->width > 63 + 12 ? x->width - 63 : 12);
        /* name and mem hold multi-byte characters: padded by columns */
        size_t nw = cols(name), mw = cols(mem);
        fprintf(x->f, "  %s%*s %7s %s%*s %7s %7s  %s\n", name, (int)(nw < 18 ? 18 - nw : 0), "",
                rt_fmt_num(b, sizeof(b), g->cpu_s), mem, (int)(mw < 16 ? 16 - mw : 0), "", pidb,
                ppidb, cmd);
    }
    free(cmd);
}

/* The tree's processes grouped by name, busiest first. */
static void print_groups(struct tx *x, const struct rt_summary *s)
{
    if (s->groups.n == 0)
        return;
    char a[64];
    fprintf(x->f, "\n%sprocesses: %s in the job, grouped by name, busiest first\n\n",
            x->md ? "### " : "", rt_fmt_count(a, sizeof(a), s->groups.processes, "process"));
    if (x->md)
        fprintf(
            x->f,
            "| name | CPU-s | peak PSS | pid | parent | command |\n|---|---|---|---|---|---|\n");
    else
        fprintf(x->f, "  %-18s %7s %-16s %7s %7s  %s\n", "name", "CPU-s", "peak PSS", "pid",
                "parent", "command");
    for (int i = 0; i < s->groups.n; i++)
        group_row(x, &s->groups.g[i]);
}

static void print_reco(struct tx *x, const struct rt_summary *s)
{
    char t[1024], a[64], b[64], c[64];
    const struct rt_reco *r = &s->reco;
    fprintf(x->f, "\n%srecommendation\n\n", x->md ? "### " : "");
    snprintf(t, sizeof(t), "%s (for 95 %% of the intervals: %s)", r->text,
             rt_fmt_count(a, sizeof(a), (double)r->cpu_p95, "vCPU"));
    line(x, "next time", t);
    const struct rt_summary_demand *d = &s->demand;
    if (d->known && d->starved) {
        snprintf(t, sizeof(t),
                 "starved: the job waited for a CPU %s of the time it wanted one; it used %s "
                 "cores and would have used ~%s",
                 rt_fmt_pct(a, sizeof(a), d->wait_pct), rt_fmt_num(b, sizeof(b), d->usage_cores),
                 rt_fmt_num(c, sizeof(c), d->demand_cores));
        line(x, "CPU", t);
    }
    if (r->caveat_kind)
        line(x, "caveat", r->caveat);
    line(x, "memory", r->arithmetic);
    snprintf(t, sizeof(t), "%s%s%s", x->md ? "`" : "", r->metaflow, x->md ? "`" : "");
    line(x, "metaflow", t);
    /* other work beside the job, named; nothing to say without the job's processes */
    const struct rt_sharing *sh = &s->sharing;
    if (s->has_tree && s->allocation) {
        const struct rt_stat4 *cpu = &s->process.st[RT_M_CPU];
        if (sh->resource && !strcmp(sh->resource, "cpu"))
            snprintf(t, sizeof(t), "shared: other processes used %s cores beside the job's %s",
                     rt_fmt_num(a, sizeof(a), sh->others_cores),
                     rt_fmt_num(b, sizeof(b), cpu->ok ? cpu->mean : RT_NAN));
        else if (sh->resource && !strcmp(sh->resource, "gpu"))
            snprintf(t, sizeof(t), "shared: other processes kept %s GPUs busy beside the job",
                     rt_fmt_num(a, sizeof(a), sh->others_gpus));
        else if (sh->resource)
            snprintf(t, sizeof(t), "shared: other processes read and wrote %s of the disks",
                     human(a, sizeof(a), sh->others_disk_bytes, "B"));
        else
            snprintf(t, sizeof(t),
                     "dedicated: other processes used %s cores and %s of disk I/O beside the job",
                     rt_fmt_num(a, sizeof(a), sh->others_cores),
                     human(b, sizeof(b), sh->others_disk_bytes, "B"));
        line(x, "host", t);
    }
    const struct rt_summary_server *v = &s->server;
    if (v->json) {
        snprintf(t, sizeof(t), "cheapest that fits: %s (%s), %s per hour on demand",
                 or_dash(pt(x, v->display_name)), or_dash(pt(x, v->vendor_id)),
                 or_dash(pt(x, v->price_text)));
        line(x, "server", t);
    } else if (v->asked && v->error) {
        snprintf(t, sizeof(t), "no server recommendation: %s", pt(x, v->error));
        line(x, "server", t);
    }
}

/* --job: how the figures spread over the job's runs, as hyperfine gives it: mean ± σ and
 * min … max; nothing under two runs. */
static void print_spread(struct tx *x, const struct rt_summary *s)
{
    const struct rt_summary_spread *sp = &s->spread;
    if (!s->has_spread || sp->runs < 2)
        return;
    char t[160], a[48], b[48], c[48], d[48];
    fprintf(x->f, "\n%sspread over %.0f runs\n\n", x->md ? "### " : "", sp->runs);
    if (x->md)
        fprintf(x->f, "| figure | mean ± σ | min … max |\n|---|---|---|\n");
    else
        fprintf(x->f, "  %-14s %26s  %s\n", "", "mean \u00b1 \u03c3",
                "min \u2026 max"); /* 24 columns */
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        const struct rt_summary_figure *fg = &rt_summary_figures[f];
        if (!(sp->f[f].n > 0))
            continue;
        human(a, sizeof(a), sp->f[f].mean, fg->unit);
        human(b, sizeof(b), sp->f[f].sd, fg->unit);
        human(c, sizeof(c), sp->f[f].min, fg->unit);
        human(d, sizeof(d), sp->f[f].max, fg->unit);
        snprintf(t, sizeof(t), "%s \u00b1 %s", a, b);
        if (x->md)
            fprintf(x->f, "| %s | %s | %s \u2026 %s |\n", fg->label, t, c, d);
        else /* ± is one column in two bytes */
            fprintf(x->f, "  %-14s %25s  %s \u2026 %s\n", fg->label, t, c, d);
    }
}

/* the text's width: the terminal's, within reason */
static size_t text_width(int width)
{
    return width <= 0 ? RT_TEXT_WIDTH : width < 60 ? 60 : width > 200 ? 200 : (size_t)width;
}

void rt_summary_write_text(const struct rt_summary *s, FILE *f, int md, int width)
{
    struct tx x = {.f = f, .md = md, .width = text_width(width)};
    char st[160], id[32], title[512];
    status_text(&x, s, st, sizeof(st));
    const char *job = pt(&x, s->run.meta[RT_SM_JOB]);
    snprintf(title, sizeof(title), "run %s%s%s: %s", or_dash(num_text(id, sizeof(id), s->run.id)),
             job ? " \u00b7 " : "", job ? job : "", st);
    fprintf(f, "%s%s\n\n", md ? "## " : "", title);
    if (s->run.runs > 1)
        fprintf(f,
                "%d runs of job '%s' together (the command, start and host: the newest run's)\n\n",
                s->run.runs, or_dash(job));
    head_run(&x, s);
    fprintf(f, "\n");
    head_cpu(&x, s);
    head_peak(&x, s);
    head_io(&x, s);

    fprintf(f, "\n");
    if (md)
        fprintf(f, "| metric | mean | p50 | p95 | max |\n|---|---|---|---|---|\n");
    else
        fprintf(f, "  %-12s %13s %13s %13s %13s\n", "", "mean", "p50", "p95", "max");
    if (s->has_tree) {
        if (!md)
            fprintf(f, "job (its processes together)\n");
        stats_table(&x, &s->process, "job");
    }
    if (!md)
        fprintf(f, "system\n");
    stats_table(&x, &s->system, "system");
    print_sparks(&x, s);
    print_groups(&x, s);
    print_reco(&x, s);
    print_spread(&x, s); /* --job's */
}

/* --- two runs side by side -------------------------------------------------------------------- */

/* A signed difference in the figure's unit: "+1.50 s", "-12.0 MiB" */
static const char *delta(char *out, size_t n, double d, const char *unit)
{
    char a[48];
    human(a, sizeof(a), fabs(d), unit);
    snprintf(out, n, "%s%s", d < 0 ? "-" : d > 0 ? "+" : "\u00b1", a);
    return out;
}

/* compare / and: each run's id, job, status and command in the room left on the line */
static void compare_heads(struct tx *x, const struct rt_summary_compare *c, char head[2][64])
{
    for (int i = 0; i < 2; i++) {
        const struct rt_summary *s = &c->s[i];
        char st[160], id[32], t[512];
        snprintf(head[i], 64, "run %s", or_dash(num_text(id, sizeof(id), s->run.id)));
        status_text(x, s, st, sizeof(st));
        const char *job = pt(x, s->run.meta[RT_SM_JOB]);
        snprintf(t, sizeof(t), "%s%s%s: %s; ", head[i], job ? " \u00b7 " : "", job ? job : "", st);
        size_t used = cols(t), room = x->width - LABEL > used + 20 ? x->width - LABEL - used : 20;
        char *cmd = command_text(x, s, room);
        cat(t, sizeof(t), "%s", cmd);
        free(cmd);
        line(x, i ? "and" : "compare", t);
    }
}

void rt_summary_compare_write_text(const struct rt_summary_compare *c, FILE *f, int md, int width)
{
    struct tx x = {.f = f, .md = md, .width = text_width(width)};
    char head[2][64], a[64], b[64], d[64], pc[32];
    compare_heads(&x, c, head);
    fprintf(f, "\n");
    if (md)
        fprintf(f, "| figure | %s | %s | change |\n|---|---|---|---|\n", head[0], head[1]);
    else
        fprintf(f, "  %-14s %13s %13s  %s\n", "", head[0], head[1], "change");
    for (int k = 0; k < RT_SUMMARY_NFIGURES; k++) {
        const struct rt_summary_figure *fg = &rt_summary_figures[k];
        double v0 = c->v[0][k], v1 = c->v[1][k], dv = c->delta[k], dp = c->delta_pct[k];
        if (isnan(v0) && isnan(v1))
            continue; /* neither has it (no GPU) */
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
            fprintf(f, "| %s | %s | %s | %s%s |\n", fg->label, a, b, d, pc);
        else
            fprintf(f, "  %-14s %13s %13s  %s%s\n", fg->label, a, b, d, pc);
    }
    for (int i = 0; i < 2; i++) {
        char t[256];
        snprintf(t, sizeof(t), "%s: %s", head[i], c->s[i].reco.text);
        fprintf(f, "%s", i ? "" : "\n");
        line(&x, i ? "" : "next time", t);
    }
}
