/* report.h - a run as one self-contained HTML page: the summary and charts.
 *
 * The page has no scripts, fonts, images or links to fetch: CSS and the charts (SVG drawn
 * here) are inline, so it opens offline, can be mailed or archived, and prints. What it says
 * about the run comes from the summary JSON (rt_summary_json(), read back with SQLite's JSON
 * functions); the charts come from the view sample_metrics (its Python columns and per-second
 * rates) and the samples table, the stacked chart of the processes' memory from
 * process_samples, the table of the processes on GPUs from gpu_process_samples. */
#ifndef RTRACK_REPORT_H
#define RTRACK_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"

struct rt_store;

/* Most points one chart series holds (fewer than a chart's 798 pixel columns): longer runs are
 * bucketed by time (each bucket keeps its maximum), so the page stays small for any run length,
 * hover titles included. */
#define RT_REPORT_MAX_POINTS 600

/* Append the HTML page of run `run_id` to `out`, given its summary JSON (summary.h's schema).
 * 0 on success; -1 with a message in err (a database error, a summary that is not JSON). */
int rt_report_html(struct rt_store *store, int64_t run_id, const char *summary_json,
                   struct rt_buf *out, char *err, size_t errlen);

/* The same with a Slurm job's view first (slurm_job_json: rt_cluster_json()'s document, NULL
 * for none): a row per node, the job's total and the sbatch options for next time. */
int rt_report_html_job(struct rt_store *store, int64_t run_id, const char *summary_json,
                       const char *slurm_job_json, struct rt_buf *out, char *err, size_t errlen);

#endif
