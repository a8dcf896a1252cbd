/* report.h - a run as one self-contained HTML page: the summary and charts.
 *
 * The page has no scripts, fonts, images or links to fetch: CSS and the charts (SVG) are
 * inline, so it opens offline, can be mailed or archived, and prints. What it says about the
 * run is the computed summary (summary.h), rendered as `rtrack summary` renders it; the charts
 * come from the view sample_metrics (its Python columns and per-second rates), the stacked
 * chart of the processes' memory from their rows, the table of the processes on GPUs from
 * theirs (src/summary/report_data.c reads them, src/summary/svg.c draws them). */
#ifndef RTRACK_REPORT_H
#define RTRACK_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"

struct rt_store;
struct rt_summary;
struct rt_cluster;

/* Most points one chart series holds (fewer than a chart's 798 pixel columns): longer runs are
 * bucketed by time (each bucket keeps its maximum), so the page stays small for any run length,
 * hover titles included. */
#define RT_REPORT_MAX_POINTS 600

/* Append the HTML page of the summarized run (s: its summary, computed from `store`) to out,
 * with a Slurm job's view first when job is not NULL (summary --slurm-job's: a row per node,
 * the job's total and the sbatch options for next time). `now`: the time the footer says the
 * page was made (epoch s). 0 on success; -1 with a message in err (a database error). */
int rt_report_html(struct rt_store *store, const struct rt_summary *s, const struct rt_cluster *job,
                   double now, struct rt_buf *out, char *err, size_t errlen);

#endif
