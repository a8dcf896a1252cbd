/* svg.h - the report's chart kit (private to src/summary/): a time series chart of a few lines
 * with reference lines, and a stacked area chart, drawn as inline SVG from plain arrays. It
 * knows no SQL and no summary: report.c hands it the points and says what to draw.
 *
 * Every chart is 900 x 270 user units, its plot within fixed margins; the y axis has ticks at
 * the bottom, halfway and the top (round numbers of the unit the labels use), the x axis on
 * round seconds, minutes or hours. A point without a value is left out of its line, never drawn
 * as 0. Hover bands (no script: an SVG <title> per point) give the time and each line's value. */
#ifndef RTRACK_SUMMARY_SVG_H
#define RTRACK_SUMMARY_SVG_H

#include <stddef.h>

#include "rtrack/base/util.h"

enum svg_unit { U_CORES, U_MIB, U_BPS, U_BYTES, U_GPUS, U_COUNT };

/* A value with its unit, as the tables and axis labels print it. */
const char *svg_fmt_unit(char *b, size_t n, double v, enum svg_unit u);

/* One line: its values at the chart's points (has[i] 0: none there), nhas of them. */
struct svg_series {
    const char *name, *label;
    const char *color, *dash; /* dash NULL: solid */
    const double *v;
    const unsigned char *has;
    int nhas;
};

/* A reference line: a figure the reader compares the lines with (the host's vCPUs, what was
 * allocated, what is recommended). */
struct svg_ref {
    const char *id, *label;
    double v;
};

struct svg_line_chart {
    const char *id, *title;
    enum svg_unit unit;
    /* the line of text the chart folds into when nothing above zero was recorded, and when its
     * values stay flat (NULL: drawn from zero whatever they are) */
    const char *empty, *flat;
    double flat_eps; /* `flat`: a change below this is no change (0: 0.005 of the unit) */
    int n;           /* points */
    const double *x; /* their times, seconds after the start */
    double span;     /* the x axis: 0 to span seconds */
    const struct svg_series *s;
    int ns;
    const struct svg_ref *refs; /* drawn unless the chart is `flat` */
    int nrefs;
};
void svg_line_chart(struct rt_buf *out, const struct svg_line_chart *c);

/* Layers stacked from the bottom, each a polygon: val[l][i] in MiB at point i where has[i]. */
struct svg_stack_chart {
    const char *id, *title;
    int n;
    const double *x;
    double span;
    const unsigned char *has;
    int nl;
    const char *const *labels, *const *colors;
    const double *const *val;
};
void svg_stacked_chart(struct rt_buf *out, const struct svg_stack_chart *c);

#endif
