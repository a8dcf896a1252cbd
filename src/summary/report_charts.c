/* report_charts.c - the report's "Over time" section (report_data.h): which charts it draws,
 * each series' colour and dash, the reference lines from the summary (the host's vCPUs, the
 * allocation, the recommendation), drawn by the chart kit (svg.c) from report_data.c's points. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "report_data.h"
#include "rtrack/summary/summary.h"
#include "svg.h"

/* --- charts --------------------------------------------------------------------------------- */

/* Colours from the Okabe-Ito palette (distinct for colour-blind readers), and every series of
 * a chart has its own dash pattern too, so a grey print or a monochrome reader tells them
 * apart. */
#define BLUE   "#0072B2"
#define ORANGE "#D55E00"
#define GREEN  "#009E73"
#define PURPLE "#CC79A7"
#define YELLOW "#E69F00"
#define SKY    "#56B4E9"

struct series_def {
    const char *name, *label;
    int col;
    const char *color, *dash; /* dash NULL: solid */
};

struct chart_def {
    const char *id, *title;
    enum svg_unit unit;
    int gpu;
    const char *empty, *flat; /* svg.h's */
    double flat_eps;
    struct series_def s[4];
};

/* The tree's I/O and the system's have a chart each: a burst of the page cache's writeback
 * would otherwise set the scale and flatten the tree's own traffic to the floor. */
static const struct chart_def charts[] = {
    {"cpu",
     "CPU (cores)",
     U_CORES,
     0,
     NULL,
     NULL,
     0,
     {{"process", "process tree", C_PCPU, BLUE, NULL},
      {"system", "system", C_SCPU, ORANGE, "7 4"}}},
    {"memory",
     "Memory",
     U_MIB,
     0,
     NULL,
     NULL,
     0,
     {{"process", "process tree PSS", C_PMEM, BLUE, NULL},
      {"system", "system used", C_SMEM, ORANGE, "7 4"}}},
    {"process-io",
     "Disk I/O of the process tree (per second)",
     U_BPS,
     0,
     "disk I/O of the process tree: none recorded",
     NULL,
     0,
     {{"process-read", "read", C_PREAD, BLUE, NULL},
      {"process-write", "written", C_PWRITE, GREEN, "2 3"}}},
    {"disk-io",
     "Disk I/O of the system (per second)",
     U_BPS,
     0,
     "disk I/O of the system: none recorded",
     NULL,
     0,
     {{"system-read", "read", C_SREAD, ORANGE, "7 4"},
      {"system-write", "written", C_SWRITE, PURPLE, "10 3 2 3"}}},
    {"network",
     "Network (per second, system)",
     U_BPS,
     0,
     "network: no traffic recorded",
     NULL,
     0,
     {{"recv", "received", C_RX, BLUE, NULL}, {"sent", "sent", C_TX, ORANGE, "7 4"}}},
    /* in bytes, as the other charts (its column is the Python reference's GB); a change under
     * 5 MB is none, as when it was drawn in GB */
    {"disk-space",
     "Disk space used (system)",
     U_BYTES,
     0,
     "disk space used: not recorded",
     "disk space used",
     5e6,
     {{"system", "system used", C_SPACE, BLUE, NULL}}},
    {"gpu",
     "GPU usage (GPUs)",
     U_GPUS,
     1,
     NULL,
     NULL,
     0,
     {{"process", "process tree", C_PGPU, BLUE, NULL},
      {"system", "system", C_SGPU, ORANGE, "7 4"}}},
    {"vram",
     "GPU memory",
     U_MIB,
     1,
     NULL,
     NULL,
     0,
     {{"process", "process tree", C_PVRAM, BLUE, NULL},
      {"system", "system", C_SVRAM, ORANGE, "7 4"}}},
};

/* The reference lines of a chart: vCPUs, the allocation and the recommendation on the CPU
 * chart; the allocation and the recommendation on the memory chart. */
static int chart_refs(const struct rt_summary *s, const char *id, struct svg_ref *refs)
{
    int n = 0;
    if (!strcmp(id, "cpu")) {
        if (s->host.vcpus > 0)
            refs[n++] = (struct svg_ref){"vcpus", "vCPUs", s->host.vcpus};
        if (s->alloc.known && s->alloc.cpus > 0)
            refs[n++] = (struct svg_ref){"allocated", "allocated", s->alloc.cpus};
        if (s->reco.cpu > 0)
            refs[n++] = (struct svg_ref){"recommended", "recommended", (double)s->reco.cpu};
    } else if (!strcmp(id, "memory")) {
        if (s->alloc.known && s->alloc.memory_mib > 0)
            refs[n++] = (struct svg_ref){"allocated", "allocated", s->alloc.memory_mib};
        if (s->reco.memory > 0)
            refs[n++] = (struct svg_ref){"recommended", "recommended", (double)s->reco.memory};
        /* the peak the recommendation is built on, where the samples missed it */
        if (s->reco.mem_from && !strcmp(s->reco.mem_from, "kernel"))
            refs[n++] = (struct svg_ref){"kernel-peak", "peak (kernel)", s->reco.mem_peak};
    }
    return n;
}

/* Reference lines of the same figure are one line with both names ("vCPUs, recommended 2"),
 * not two labels drawn on each other: merged into refs[], whose names live in names[]. */
static int merge_refs(struct svg_ref *refs, int n, char names[][2][64])
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < m && refs[k].v != refs[i].v)
            k++;
        if (k == m) {
            snprintf(names[m][0], sizeof(names[m][0]), "%s", refs[i].id);
            snprintf(names[m][1], sizeof(names[m][1]), "%s", refs[i].label);
            refs[m] = refs[i];
            m++;
        } else {
            size_t a = strlen(names[k][0]), b = strlen(names[k][1]);
            snprintf(names[k][0] + a, sizeof(names[k][0]) - a, " %s", refs[i].id);
            snprintf(names[k][1] + b, sizeof(names[k][1]) - b, ", %s", refs[i].label);
        }
    }
    for (int k = 0; k < m; k++) {
        refs[k].id = names[k][0];
        refs[k].label = names[k][1];
    }
    return m;
}

static void chart(struct rt_buf *p, const struct chart_def *d, const struct report_points *pts,
                  const struct rt_summary *s)
{
    struct svg_series series[4];
    struct svg_ref refs[4];
    int ns = 0;
    for (; ns < 4 && d->s[ns].name; ns++) {
        const struct series_def *sd = &d->s[ns];
        series[ns] =
            (struct svg_series){sd->name,        sd->label,         sd->color,         sd->dash,
                                pts->v[sd->col], pts->has[sd->col], pts->nhas[sd->col]};
    }
    char names[4][2][64];
    int nrefs = merge_refs(refs, chart_refs(s, d->id, refs), names);
    struct svg_line_chart c = {
        .id = d->id,
        .title = d->title,
        .unit = d->unit,
        .empty = d->empty,
        .flat = d->flat,
        .flat_eps = d->flat_eps,
        .n = pts->n,
        .x = pts->x,
        .span = pts->span,
        .s = series,
        .ns = ns,
        .refs = refs,
        .nrefs = nrefs,
    };
    svg_line_chart(p, &c);
}

/* The five processes with the largest PSS of the run, stacked under the tree's PSS at each
 * point (the sample its memory point comes from, so the stack's top is the tree's line), the
 * rest of the tree as "others" on top. Processes are told apart by pid and name. */
static int chart_stacked(struct rt_buf *p, struct rt_store *store, const struct report_points *pts,
                         char *err, size_t errlen)
{
    static const char *const palette[REPORT_STACK + 1] = {BLUE,   ORANGE, GREEN,
                                                          PURPLE, YELLOW, "#999"};
    struct report_stack *st = xmalloc(sizeof(*st));
    int rc = report_load_stack(store, pts, st, err, errlen);
    if (rc == 0 && st->nl) {
        const char *labels[REPORT_STACK + 1], *colors[REPORT_STACK + 1];
        const double *val[REPORT_STACK + 1];
        for (int l = 0; l < st->nl; l++) {
            labels[l] = st->label[l];
            colors[l] = palette[l < st->nl - 1 ? l : REPORT_STACK];
            val[l] = st->val[l];
        }
        struct svg_stack_chart c = {"memory-processes",
                                    "Memory by process (PSS, stacked)",
                                    pts->n,
                                    pts->x,
                                    pts->span,
                                    pts->has[C_PMEM],
                                    st->nl,
                                    labels,
                                    colors,
                                    val};
        svg_stacked_chart(p, &c);
    }
    free(st);
    return rc;
}

int report_section_charts(struct rt_buf *p, struct rt_store *store, const struct rt_summary *s,
                          char *err, size_t errlen)
{
    struct report_points *pts = xmalloc(sizeof(*pts));
    if (report_load_points(store, (int64_t)s->run.id, pts, err, errlen) != 0) {
        free(pts);
        return -1;
    }
    html_put(p, "<section class=\"charts\"><h2>Over time</h2>\n");
    if (pts->bucket_s > 0)
        html_putf(p,
                  "<p class=\"muted\">%lld samples drawn as %d points: each point is the largest "
                  "value of %.3g s of the run, so peaks stay visible.</p>\n",
                  (long long)pts->samples, pts->n, pts->bucket_s);
    else if (pts->n == 0)
        html_put(p, "<p class=\"muted\">No samples after the baseline yet.</p>\n");
    html_put(p, "<p class=\"muted\">Hover over a chart for the values at that time; dashed grey "
                "lines are the host's vCPUs, the allocation and the recommendation.</p>\n");
    int rc = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(charts) && rc == 0; i++) {
        if (!charts[i].gpu || pts->gpu)
            chart(p, &charts[i], pts, s);
        if (!strcmp(charts[i].id, "memory"))
            rc = chart_stacked(p, store, pts, err, errlen);
    }
    html_put(p, "</section>\n");
    free(pts);
    return rc;
}
