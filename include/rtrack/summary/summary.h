/* summary.h - what a run used and what to ask for next time, computed from the database.
 *
 * rt_summary_json() is the one computation: `rtrack summary` prints it as JSON, text or
 * markdown, and `rtrack report` embeds it in the HTML page. Every figure comes from the
 * views (sample_metrics: the Python columns and the rates) and the per-process rows; nothing
 * is recomputed from /proc or from the tables.
 *
 * The JSON document (keys always present; null where a value does not exist):
 * {
 *   "run": {"id", "uuid", "mode", "status", "in_progress" (bool), "command" (array|null),
 *           "job_name", "project_name", "stage_name", "task_name", "team", "env", "language",
 *           "orchestrator", "executor", "external_run_id", "container_image", "tags" {k: v},
 *           "pid", "exit_code", "exit_signal", "end_reason", "started_at", "ended_at"
 *           (epoch s), "duration_s", "samples" (rows after the baseline), "interval_s",
 *           "runs" (how many runs were aggregated: 1, or N for --job)},
 *   "host": {"hostname", "cpu_model", "vcpus", "memory_mib", "kernel", "os", "gpu_model",
 *            "gpu_count", "gpu_memory_mib"},
 *   "process": METRICS | null (null for a system-only recording),
 *   "system": METRICS,
 *   "python_stats": the Python reference's stats() under its names, e.g.
 *            {"process_cpu_usage": {"mean", "max"}, ..., "system_net_recv_bytes": {"sum"},
 *             "timestamp": {"duration"}} (2 dp where the reference rounds),
 *   "kernel": {"maxrss_mib" (the largest resident set one process of the job reached: the
 *             kernel's high-water mark, getrusage of the reaped job), "user_s", "sys_s" (their
 *             CPU time), "cgroup_peak_mib" (the job's own cgroup's peak charge, page cache
 *             included; null unless the cgroup was the job's)} | null (record mode, or a
 *             recording older than schema 7),
 *   "memory_peak": {"mib" (the tree's highest sampled memory), "at_s" (seconds after the run's
 *                  start), "processes": [{"pid", "name", "pss_mib"}...] (that sample's processes
 *                  by PSS, at most 5), "others": {"count", "pss_mib"} (the rest: they add up to
 *                  "mib")} | null (no tree),
 *   "cpu_demand": {"usage_cores", "wait_cores" (runnable but waiting for a CPU: schedstat),
 *                 "demand_cores" (the two together), "wait_pct" (wait of demand), "starved"
 *                 (wait_pct >= 20)}: means over the samples with a wait figure | null,
 *   "recommendation": {"cpu", "cpu_basis": {"mean_cores", "source" ("usage", or "demand" when
 *                      the tree was starved and its demand rounds to more cores)}, "cpu_p95",
 *                      "memory_mib", "gpu", "vram_mib", "text",
 *                      "metaflow", "memory_basis": {"peak_mib", "source" ("kernel" when the
 *                      kernel's high-water mark is above the sampled peak, else "sampled"),
 *                      "headroom" (1.2), "arithmetic" (text)}, "caveat": {"kind" ("oom":
 *                      killed by SIGKILL while the host's OOM kill count grew; "signal";
 *                      "failed": a non-zero exit), "text"} | null}: rtrack's,
 *   "python_recommendation": the same keys, the Python reference's recommend_resources()
 *                      (on the sampled peak only),
 *   "efficiency": {"cpu_pct", "memory_pct", "gpu_pct", "vram_pct"} (used / host, null
 *                 without that resource), "cpu_alloc_pct" (CPU time / (allocated cpus x wall):
 *                 the kernel's CPU time of the reaped jobs, summed over the runs, when every
 *                 run has it; else the sampled mean cores / allocated cpus), "memory_alloc_pct"
 *                 (recommendation.memory_basis.peak_mib / allocated memory_mib) (null without
 *                 that allocation),
 *   "allocated": {"cpus", "cpus_from" ("slurm" | "cgroup" | "cpuset": the tightest of
 *                 SLURM_CPUS_ON_NODE, the cgroup's CPU quota and its cpuset where smaller than
 *                 the host; Slurm's on a tie), "memory_mib", "memory_from" ("slurm" | "cgroup":
 *                 the tightest of SLURM_MEM_PER_NODE (or _PER_CPU x SLURM_CPUS_ON_NODE) and
 *                 the cgroup's limit where below the host's memory), "gpus" (the devices
 *                 CUDA_VISIBLE_DEVICES names), "slurm_job_id"} (each null when unknown) | null
 *                 (nothing known): what the (newest) run was allocated,
 *   "allocation": "dedicated" | "shared" (the Python reference's server heuristic),
 *   "top_processes": {"by_cpu": [{"pid", "name", "cpu_s"}...], "by_pss": [{"pid", "name",
 *                     "pss_mib"}...]} (at most 5 each),
 *   "sparklines": {"cpu_cores", "memory_mib", "disk_io_bytes_per_s", "gpu_usage"}: 40
 *                 (or fewer) block characters, each the peak of a stretch of the run, of the
 *                 tree (the system for a system-only recording); "cpu_pressure_pct": the host's
 *                 CPU pressure over each stretch (PSI "some": the share of its time some task
 *                 waited for a CPU), one run only (null for --job); null without values,
 *   "sparkline_scale": {"source" ("tree" | "system": whose the first four are), "cpu_cores",
 *                 "memory_mib", "disk_io_bytes_per_s", "gpu_usage", "cpu_pressure_pct"}: the
 *                 value of each line's full block (its bottom is 0; null without a line),
 *   "process_groups": {"processes" (how many the tree had), "groups": [{"name" (comm),
 *                 "count", "cpu_s" (their CPU time together), "pss_max_mib" (the largest peak
 *                 PSS of one of them: peaks of different moments do not add up), "pid", "ppid"
 *                 (where count is 1, else null), "command" (the busiest one's argv joined with
 *                 spaces, null when unreadable)}...] (the busiest 10 by CPU time)},
 *   "cpu_time": {"user_s", "sys_s" (the kernel's, of the reaped jobs; null when sampled),
 *                "total_s", "source" ("kernel" | "sampled": the per-process rows added up)} |
 *               null (no tree, or neither figure),
 *   "server": Keeper's cheapest matching server object, or null (not asked / offline), and
 *             then "server_error": why not, when it was asked for,
 *   "spread" (--job only, last): how the job's runs spread, as hyperfine gives it:
 *             {"runs" (the runs counted: those with two samples or more), "figures": {FIGURE:
 *             {"n" (the runs that have the figure), "mean", "sd" (the sample standard deviation,
 *             n - 1; null for n < 2), "min", "max"} (mean, min and max null for n = 0)}}
 * }
 * METRICS = {"cpu_cores", "memory_mib", "disk_read_bytes_per_s", "disk_write_bytes_per_s",
 *            "net_recv_bytes_per_s", "net_sent_bytes_per_s", "gpu_usage", "gpu_vram_mib",
 *            "gpus_used": {"mean", "p50", "p95", "max"} (null when no sample has the value),
 *            "disk_read_bytes", "disk_write_bytes", "net_recv_bytes", "net_sent_bytes":
 *            totals over the run (net only for "system")}.
 */
#ifndef RTRACK_SUMMARY_H
#define RTRACK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"

struct rt_store;

struct rt_summary_opts {
    int64_t run_id;         /* the run, or 0 with `job` */
    const char *job;        /* aggregate every run with this job_name (--job), or NULL */
    int recommend_server;   /* ask the Keeper API for the cheapest matching server */
    const char *keeper_url; /* base URL (RTRACK_KEEPER_URL), NULL for the public one */
    int figures_only;       /* the end-of-run line's figures only (rt_summary_run()'s *line): no
                             * document is written, and only what those figures are made of is
                             * read (not the process table, the run's and host's facts, the
                             * allocation, the pressure) */
};

/* The figures of the end-of-run line (`rtrack run`), the document's own numbers: "tree" is 1
 * where "process" is an object; "cores_mean" and "cores_max" are "cpu_cores" "mean" and "max"
 * of "process" (of "system" without a tree), "peak_mib" is "recommendation" "memory_basis"
 * "peak_mib"; NAN where the document has null. */
struct rt_summary_line {
    int tree;
    double cores_mean, cores_max, peak_mib;
};

/* The Python reference's report.round_memory: 128, 256, 512, 1024, 2048 MiB, then up to the
 * next multiple of 1024. */
long rt_round_memory(double mib);

/* Append the summary JSON to `out`. 0 on success; -1 with a message in err, and *bad_input set
 * when the cause is the request (unknown run, too few samples, unknown job): exit code 2. */
int rt_summary_json(struct rt_store *store, const struct rt_summary_opts *o, struct rt_buf *out,
                    int *bad_input, char *err, size_t errlen);

/* rt_summary_json(), and the end-of-run line's figures in *line when line is not NULL; with
 * o->figures_only, those figures only: nothing is appended to out (which may be NULL). */
int rt_summary_run(struct rt_store *store, const struct rt_summary_opts *o, struct rt_buf *out,
                   struct rt_summary_line *line, int *bad_input, char *err, size_t errlen);

/* The figures runs are compared by and a job's runs spread over: the key in the JSON, the label
 * for people, the unit ("s", "cores", "MiB", "B", "gpus"). */
#define RT_SUMMARY_NFIGURES 10
struct rt_summary_figure {
    const char *key, *label, *unit;
};
extern const struct rt_summary_figure rt_summary_figures[RT_SUMMARY_NFIGURES];

/* Append the document of two runs side by side (above). 0 on success; -1 with a message in
 * err, and *bad_input set when the cause is the request (a run with too few samples). */
int rt_summary_compare_json(struct rt_store *store, const int64_t id[2], struct rt_buf *out,
                            int *bad_input, char *err, size_t errlen);

#endif
