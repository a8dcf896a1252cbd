/* svg.c - the report's chart kit (svg.h): axes, legends, lines, reference lines, hover bands
 * and stacked layers as inline SVG, from plain arrays. */
#include "svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html.h"
#include "rtrack/base/fmt.h"

enum { SVG_W = 900, SVG_H = 270, PAD_L = 84, PAD_R = 18, PAD_T = 48, PAD_B = 36 };
#define PLOT_W ((double)(SVG_W - PAD_L - PAD_R))
#define PLOT_H ((double)(SVG_H - PAD_T - PAD_B))

const char *svg_fmt_unit(char *b, size_t n, double v, enum svg_unit u)
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
    case U_GPUS:
        snprintf(b, n, "%.2f", v);
        break;
    case U_COUNT:
        snprintf(b, n, "%.1f", v);
        break;
    }
    return b;
}

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
static double unit_scale(double v, enum svg_unit u)
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

/* The top of an axis from 0 that holds `want`: a round number of the labels' unit. */
static double axis_top(double want, enum svg_unit u)
{
    return want > 0 ? nice_ceil(want / unit_scale(want, u)) * unit_scale(want, u) : 1;
}

/* An axis label of an axis whose top is `top`: every tick in the top's unit, as a plain
 * number (no exponent): "0 MiB", "500 MiB", "1.5 GiB", "1 KiB/s", "2.5". */
static const char *fmt_axis(char *b, size_t n, double v, double top, enum svg_unit u)
{
    double k = unit_scale(top, u);
    switch (u) {
    case U_BPS:
        return rt_fmt_bytes_in(b, n, v, k, "/s");
    case U_BYTES:
        return rt_fmt_bytes_in(b, n, v, k, "");
    case U_MIB:
        return rt_fmt_bytes_in(b, n, v * 1048576, k * 1048576, "");
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

/* The frame of a chart: its title, y axis from `bot` to `top` (ticks at both and halfway) and
 * x axis over the span. */
static void chart_frame(struct rt_buf *p, const char *id, const char *title, int npoints,
                        const char *cls, double bot, double top, enum svg_unit u, double span)
{
    char b[64];
    html_putf(p,
              "<svg class=\"chart%s\" id=\"chart-%s\" data-points=\"%d\" viewBox=\"0 0 %d %d\" "
              "width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"chart-%s-title\">\n"
              "<title id=\"chart-%s-title\">%s</title>\n"
              "<text class=\"title\" x=\"%d\" y=\"18\">%s</text>\n",
              cls, id, npoints, SVG_W, SVG_H, SVG_W, SVG_H, id, id, title, PAD_L, title);
    for (int g = 0; g <= 2; g++) {
        double y = PAD_T + PLOT_H - PLOT_H * g / 2.0;
        html_putf(p,
                  "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"%s\"%s/>"
                  "<text class=\"tick y\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                  PAD_L, y, PAD_L + PLOT_W, y, g ? "#ccc" : "#333",
                  g ? " stroke-dasharray=\"3 3\"" : "", PAD_L - 6, y + 4,
                  fmt_axis(b, sizeof(b), bot + (top - bot) * g / 2.0, top, u));
    }
    html_putf(p, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%.0f\" stroke=\"#333\"/>\n", PAD_L,
              PAD_T, PAD_L, PAD_T + PLOT_H);
    double step = tick_step(span);
    for (int t = 0; t * step <= span * (1 + 1e-9); t++) {
        double x = PAD_L + PLOT_W * (t * step) / span;
        html_putf(p,
                  "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\" stroke=\"#333\"/>"
                  "<text class=\"tick x\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%s</text>\n",
                  x, PAD_T + PLOT_H, x, PAD_T + PLOT_H + 5, x, PAD_T + PLOT_H + 19,
                  fmt_tick(b, sizeof(b), t * step, step));
    }
    html_putf(
        p, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" class=\"axis\">time since start</text>\n",
        SVG_W - PAD_R, SVG_H - 3);
}

/* One legend entry at *lx: a sample of the stroke (or a swatch of the fill), then the name. */
static void legend(struct rt_buf *p, double *lx, const char *color, const char *dash, int fill,
                   const char *label, const char *note)
{
    if (fill)
        html_putf(p, "<rect x=\"%.0f\" y=\"27\" width=\"30\" height=\"11\" fill=\"%s\"/>", *lx,
                  color);
    else
        html_putf(p,
                  "<line x1=\"%.0f\" y1=\"33\" x2=\"%.0f\" y2=\"33\" stroke=\"%s\" "
                  "stroke-width=\"2.5\"%s%s%s/>",
                  *lx, *lx + 30, color, dash ? " stroke-dasharray=\"" : "", dash ? dash : "",
                  dash ? "\"" : "");
    html_putf(p, "<text x=\"%.0f\" y=\"37\">", *lx + 36);
    html_esc(p, label);
    html_put(p, note);
    html_put(p, "</text>\n");
    *lx += 36 + 7.2 * (double)(strlen(label) + strlen(note)) + 22;
}

/* Hover values: one transparent band per point over the plot's height, from halfway to the
 * point before to halfway to the next, whose <title> (a tooltip in every browser, no script)
 * gives the time and each series' value there. */
static void hover_open(struct rt_buf *p, const double *xs, int n, int i, double span)
{
    char b[64];
    double x = PAD_L + PLOT_W * xs[i] / span;
    double x0 = i ? PAD_L + PLOT_W * (xs[i - 1] + xs[i]) / 2 / span : PAD_L;
    double x1 = i + 1 < n ? PAD_L + PLOT_W * (xs[i] + xs[i + 1]) / 2 / span : x;
    if (n == 1)
        x0 = PAD_L, x1 = PAD_L + PLOT_W;
    html_putf(p, "<rect class=\"hv\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.0f\"><title>+%s",
              x0, PAD_T, fmax(x1 - x0, 0.5), PLOT_H, rt_fmt_duration(b, sizeof(b), xs[i]));
}

/* A label line: the 12 px text's box as a browser lays it out (ascent + descent, about 14 px)
 * and a pixel between (13 px overlapped stacked labels by one: tests/cli/test_report_page.sh
 * measures the boxes in Chromium). */
#define LABEL_STEP 15

/* The reference lines, each labelled at its right end; a label that would touch one drawn
 * before (two figures within a label's height of each other) goes up a line, so no two
 * labels overlap. */
static void chart_refs(struct rt_buf *p, const struct svg_ref *refs, int nrefs, double bot,
                       double top, enum svg_unit u)
{
    char b[64];
    int off = 0;
    double used[8];
    int nused = 0;
    for (int k = 0; k < nrefs; k++) {
        const struct svg_ref *r = &refs[k];
        svg_fmt_unit(b, sizeof(b), r->v, u);
        if (u == U_CORES)
            rt_fmt_plain(b, sizeof(b), r->v, 2);
        if (r->v > top * (1 + 1e-9)) { /* off the scale: said in the top right corner */
            html_putf(p,
                      "<text class=\"ref off\" data-ref=\"%s\" x=\"%.0f\" y=\"%d\" "
                      "text-anchor=\"end\">%s %s (above the scale)</text>\n",
                      r->id, PAD_L + PLOT_W, 18 + LABEL_STEP * off++, r->label, b);
            continue;
        }
        double y = PAD_T + PLOT_H - PLOT_H * (r->v - bot) / (top - bot), ty = y - 3;
        for (int i = 0; i < nused; i++)
            if (fabs(used[i] - ty) < LABEL_STEP) /* one line up, and look again */
                ty = used[i] - LABEL_STEP, i = -1;
        if (nused < (int)RT_ARRAY_LEN(used))
            used[nused++] = ty;
        html_putf(p,
                  "<g class=\"ref\" data-ref=\"%s\" data-value=\"%g\"><line x1=\"%d\" "
                  "y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#555\" stroke-width=\"1.2\" "
                  "stroke-dasharray=\"5 4\"/><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" "
                  "fill=\"#333\">%s %s</text><title>%s: %s</title></g>\n",
                  r->id, r->v, PAD_L, y, PAD_L + PLOT_W, y, PAD_L + PLOT_W - 4, ty, r->label, b,
                  r->label, b);
    }
}

/* A line of text in place of a chart with nothing to draw. */
static void folded(struct rt_buf *p, const char *id, const char *text)
{
    html_putf(p, "<p class=\"folded muted\" id=\"chart-%s\" data-folded=\"1\">%s</p>\n", id, text);
}

/* The y axis of a line chart, from *bot to *top; 0 when the chart folds into a line of text
 * instead (said here). */
static int line_scale(struct rt_buf *p, const struct svg_line_chart *c, double *bot, double *top)
{
    char b[64];
    double ymax = 0, ymin = INFINITY;
    int any = 0;
    for (int k = 0; k < c->ns; k++)
        for (int i = 0; i < c->n; i++)
            if (c->s[k].has[i]) {
                ymax = fmax(ymax, c->s[k].v[i]);
                ymin = fmin(ymin, c->s[k].v[i]);
                any = 1;
            }
    if (c->empty && !(ymax > 0)) {
        folded(p, c->id, c->empty);
        return 0;
    }
    *bot = 0;
    if (c->flat && any) {
        /* a line that hardly moves on a 0-based axis is a flat line: below a hundredth of a
         * unit of change it is one figure, else the axis spans the values (not from 0) */
        if (ymax - ymin < (c->flat_eps > 0 ? c->flat_eps : 0.005)) {
            char t[160];
            snprintf(t, sizeof(t), "%s: %s throughout the run", c->flat,
                     svg_fmt_unit(b, sizeof(b), ymax, c->unit));
            folded(p, c->id, t);
            return 0;
        }
        double step = nice_ceil((ymax - ymin) / 2);
        *bot = floor(ymin / step) * step;
        while (*bot + 2 * step < ymax * (1 - 1e-12))
            step = nice_ceil(step * 1.01), *bot = floor(ymin / step) * step;
        *top = *bot + 2 * step;
        return 1;
    }
    /* a reference line within four times the data's peak is drawn on the scale; further up it
     * would flatten the data, so it is named in the corner instead */
    double want = ymax;
    for (int k = 0; k < c->nrefs; k++)
        if (c->refs[k].v <= 4 * ymax || !(ymax > 0))
            want = fmax(want, c->refs[k].v);
    *top = axis_top(want, c->unit);
    return 1;
}

/* The series: one polyline each, one vertex per point that has a value; a point without one
 * is left out, not drawn as 0. */
static void line_series(struct rt_buf *p, const struct svg_line_chart *c, double bot, double top,
                        double span)
{
    for (int k = 0; k < c->ns; k++) {
        const struct svg_series *s = &c->s[k];
        if (!s->nhas)
            continue;
        html_putf(p,
                  "<polyline class=\"series\" data-series=\"%s\" fill=\"none\" stroke=\"%s\" "
                  "stroke-width=\"1.8\" stroke-linejoin=\"round\"%s%s%s points=\"",
                  s->name, s->color, s->dash ? " stroke-dasharray=\"" : "", s->dash ? s->dash : "",
                  s->dash ? "\"" : "");
        int first = -1, drawn = 0;
        for (int i = 0; i < c->n; i++) {
            if (!s->has[i])
                continue;
            if (first < 0)
                first = i;
            double v = fmax(s->v[i], bot);
            html_putf(p, "%s%.1f,%.1f", drawn++ ? " " : "", PAD_L + PLOT_W * c->x[i] / span,
                      PAD_T + PLOT_H - PLOT_H * (v - bot) / (top - bot));
        }
        html_put(p, "\"/>\n");
        if (drawn == 1) /* a line of one vertex draws nothing: mark the point */
            html_putf(p, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\"/>\n",
                      PAD_L + PLOT_W * c->x[first] / span,
                      PAD_T + PLOT_H - PLOT_H * (fmax(s->v[first], bot) - bot) / (top - bot),
                      s->color);
    }
}

void svg_line_chart(struct rt_buf *p, const struct svg_line_chart *c)
{
    char b[64];
    double bot, top;
    if (!line_scale(p, c, &bot, &top))
        return;
    double span = c->span > 0 ? c->span : 1;
    html_put(p, "<figure>\n");
    chart_frame(p, c->id, c->title, c->n, "", bot, top, c->unit, span);
    double lx = PAD_L;
    for (int k = 0; k < c->ns; k++)
        legend(p, &lx, c->s[k].color, c->s[k].dash, 0, c->s[k].label,
               c->s[k].nhas ? "" : " (not recorded)");
    line_series(p, c, bot, top, span);
    if (!c->flat)
        chart_refs(p, c->refs, c->nrefs, bot, top, c->unit);
    html_put(p, "<g class=\"hover\">");
    for (int i = 0; i < c->n; i++) {
        hover_open(p, c->x, c->n, i, span);
        for (int k = 0; k < c->ns; k++) {
            const struct svg_series *s = &c->s[k];
            if (!s->nhas)
                continue;
            html_putf(p, "\n%s: %s", s->label,
                      s->has[i] ? svg_fmt_unit(b, sizeof(b), s->v[i], c->unit) : "not recorded");
        }
        html_put(p, "</title></rect>");
    }
    html_put(p, "</g>\n</svg>\n</figure>\n");
}

void svg_stacked_chart(struct rt_buf *p, const struct svg_stack_chart *c)
{
    double ymax = 0;
    for (int i = 0; i < c->n; i++) {
        if (!c->has[i])
            continue;
        double sum = 0;
        for (int l = 0; l < c->nl; l++)
            sum += c->val[l][i];
        ymax = fmax(ymax, sum);
    }
    double top = axis_top(ymax, U_MIB), span = c->span > 0 ? c->span : 1;
    char b[64];
    html_put(p, "<figure>\n");
    chart_frame(p, c->id, c->title, c->n, " stacked", 0, top, U_MIB, span);
    double lx = PAD_L;
    for (int l = 0; l < c->nl; l++)
        legend(p, &lx, c->colors[l], NULL, 1, c->labels[l], "");
    /* each layer a polygon: its upper edge left to right, the layer below's back */
    for (int l = 0; l < c->nl; l++) {
        html_putf(p,
                  "<polygon class=\"layer\" data-layer=\"%d\" fill=\"%s\" fill-opacity=\"0.85\" "
                  "stroke=\"#fff\" stroke-width=\"0.5\" points=\"",
                  l, c->colors[l]);
        int drawn = 0;
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < c->n; j++) {
                int i = pass ? c->n - 1 - j : j;
                if (!c->has[i])
                    continue;
                double y = 0;
                for (int m = 0; m < l + !pass; m++)
                    y += c->val[m][i];
                html_putf(p, "%s%.1f,%.1f", drawn++ ? " " : "", PAD_L + PLOT_W * c->x[i] / span,
                          PAD_T + PLOT_H - PLOT_H * y / top);
            }
        html_put(p, "\"><title>");
        html_esc(p, c->labels[l]);
        html_put(p, "</title></polygon>\n");
    }
    html_put(p, "<g class=\"hover\">");
    for (int i = 0; i < c->n; i++) {
        if (!c->has[i])
            continue;
        hover_open(p, c->x, c->n, i, span);
        for (int l = c->nl - 1; l >= 0; l--) {
            html_put(p, "\n");
            html_esc(p, c->labels[l]);
            html_putf(p, ": %s", rt_fmt_mib(b, sizeof(b), c->val[l][i]));
        }
        html_put(p, "</title></rect>");
    }
    html_put(p, "</g>\n</svg>\n</figure>\n");
}
