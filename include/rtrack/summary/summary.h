/* summary.h - what a run used and what to ask for next time, computed once from the database
 * into a plain struct (rt_summary_compute), then rendered (render.h): as JSON, text, markdown,
 * the HTML report and the line `rtrack run` ends with. Every figure comes from the views
 * (sample_metrics: the Python columns and the rates) and the per-process rows through the
 * store's named queries; nothing is recomputed from /proc or written twice.
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
 *   "memory_peak": {"run" (the run it was in), "mib" (the tree's highest sampled memory),
 *                  "at_s" (seconds after that run's start), "processes": [{"pid", "name", "pss_mib"}...] (that sample's processes
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
 *   "allocation": "dedicated" | "shared": "shared" only on evidence of other processes' work
 *                 beside the tree (never their memory: an OS's own few hundred MiB are no
 *                 sharing), "allocation_basis": {"resource" ("cpu" | "gpu" | "disk": what other
 *                 work was found on, null for dedicated), "others_cores" (the system's mean
 *                 cores less the tree's), "others_gpus", "others_disk_bytes" (the devices'
 *                 bytes read and written less the tree's)} (null without a tree),
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
 *                "total_s", "source" ("kernel" where every run has it | "sampled": the tree's
 *                cores x each sample's interval), "wall_s" (the runs' wall times together),
 *                "mean_cores" (total_s / wall_s: the tree's mean cores everywhere the document
 *                or the text says them: process.cpu_cores.mean is this figure)} | null (no
 *                tree, or neither figure),
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
 *
 * In the struct, an unknown number is NAN and an unknown text NULL: the JSON's null. */
#ifndef RTRACK_SUMMARY_H
#define RTRACK_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"
#include "rtrack/summary/reco.h"

struct rt_store;

/* --- what is asked -------------------------------------------------------------------------- */

struct rt_summary_opts {
    int64_t run_id;         /* the run, or 0 with `job` */
    const char *job;        /* aggregate every run with this job_name (--job), or NULL */
    int recommend_server;   /* ask the Keeper API for the cheapest matching server */
    const char *keeper_url; /* base URL (RTRACK_KEEPER_URL), NULL for the public one */
    int figures_only;       /* the end-of-run line's figures only (rt_summary_line()): only
                             * what those are made of is read (not the process table, the run's
                             * and host's facts, the allocation, the pressure) */
};

/* --- what is computed ----------------------------------------------------------------------- */

/* The metrics of a side (the tree, the system), in the document's order. */
enum rt_metric {
    RT_M_CPU,    /* cpu_cores */
    RT_M_MEM,    /* memory_mib */
    RT_M_DREAD,  /* disk_read_bytes_per_s */
    RT_M_DWRITE, /* disk_write_bytes_per_s */
    RT_M_NRECV,  /* net_recv_bytes_per_s (the system only) */
    RT_M_NSENT,  /* net_sent_bytes_per_s (the system only) */
    RT_M_GPU,    /* gpu_usage */
    RT_M_VRAM,   /* gpu_vram_mib */
    RT_M_GPUS,   /* gpus_used */
    RT_M_N
};
extern const char *const rt_metric_keys[RT_M_N];

/* Totals over the run: disk read and written (both sides), net received and sent (system). */
enum rt_total { RT_T_DREAD, RT_T_DWRITE, RT_T_NRECV, RT_T_NSENT, RT_T_N };
extern const char *const rt_total_keys[RT_T_N];

/* mean, p50, p95 (nearest rank) and max of a metric; ok 0: no sample has it */
struct rt_stat4 {
    int ok;
    double mean, p50, p95, max;
};

struct rt_summary_side {
    struct rt_stat4 st[RT_M_N];
    double total[RT_T_N]; /* NAN: no sample has it */
};

/* The run's facts (--job: the newest run's). Job metadata in rt_summary_meta's order. */
enum rt_summary_meta {
    RT_SM_JOB,
    RT_SM_PROJECT,
    RT_SM_STAGE,
    RT_SM_TASK,
    RT_SM_TEAM,
    RT_SM_ENV,
    RT_SM_LANGUAGE,
    RT_SM_ORCHESTRATOR,
    RT_SM_EXECUTOR,
    RT_SM_EXTERNAL_RUN_ID,
    RT_SM_CONTAINER_IMAGE,
    RT_SM_N
};
extern const char *const rt_summary_meta_keys[RT_SM_N];

struct rt_summary_run {
    double id;
    char *uuid, *mode, *status;
    int in_progress;
    char *command_json; /* the argv as stored: a JSON array (NULL: unknown) */
    char *meta[RT_SM_N];
    char *tags_json; /* {"key":"value",...} as SQLite's json_group_object writes it */
    double pid, exit_code, exit_signal;
    char *end_reason;
    double started_at, ended_at, duration_s, samples, interval_s;
    int runs; /* aggregated: 1, or --job's count */
    char *memory_source, *cpu_wait_missing, *psi_missing;
};

struct rt_summary_host {
    char *hostname, *cpu_model, *kernel, *os, *gpu_model;
    double vcpus, memory_mib, gpu_count, gpu_memory_mib;
};

/* The Python reference's stats() (aggregate_stats() over a job's runs: mean of means, max of
 * maxes), unrounded; rt_summary_pystats's order of process columns. */
enum { RT_PY_CPU, RT_PY_MEM, RT_PY_GPU, RT_PY_VRAM, RT_PY_GPUS, RT_PY_N };
struct rt_summary_py {
    double mean[RT_PY_N], max[RT_PY_N];
    double space_max, recv, sent, duration;
};

struct rt_summary_kernel {
    int known;
    double maxrss_mib, user_s, sys_s, cgroup_peak_mib;
};

/* A process of a list (the peak's, the top ones): its pid, name and figure (PSS MiB, CPU s) */
struct rt_summary_proc {
    double pid;
    char *name;
    double value;
};

#define RT_SUMMARY_TOP 5
struct rt_summary_peak {
    int known;
    double run; /* the run it was in (--job) */
    double mib, at_s;
    struct rt_summary_proc procs[RT_SUMMARY_TOP];
    int nprocs;
    double others_count, others_pss_mib;
};

/* The sparklines: the tree's (the system's without one) CPU, memory, disk I/O, GPU, and the
 * host's CPU pressure, each the largest value of each of up to SPARK_N stretches of the run. */
#define RT_SPARK_N 40
enum { RT_SPARK_CPU, RT_SPARK_MEM, RT_SPARK_IO, RT_SPARK_GPU, RT_SPARK_PSI, RT_SPARK_LINES };
extern const char *const rt_spark_keys[RT_SPARK_LINES];
struct rt_summary_sparks {
    size_t n; /* stretches */
    double v[RT_SPARK_LINES][RT_SPARK_N];
    int has[RT_SPARK_LINES][RT_SPARK_N];
    int tree; /* whose the first four are */
};

struct rt_summary_top {
    struct rt_summary_proc by_cpu[RT_SUMMARY_TOP], by_pss[RT_SUMMARY_TOP];
    int ncpu, npss;
};

#define RT_SUMMARY_GROUPS 10
struct rt_summary_group {
    char *name, *command;
    double count, cpu_s, pss_max_mib, pid, ppid;
};
struct rt_summary_groups {
    double processes;
    struct rt_summary_group g[RT_SUMMARY_GROUPS];
    int n;
};

/* The tree's CPU time and what it makes of the wall time: the one definition of its mean
 * cores, used wherever a mean of the job's cores is printed (the statistics' mean, efficiency,
 * the recommendation, --compare, --job's spread). */
struct rt_summary_cpu_time {
    int known;
    double user_s, sys_s, total_s;
    const char *source; /* "kernel" | "sampled" */
    double wall_s;      /* the runs' wall times together */
    double mean_cores;  /* total_s / wall_s */
};

/* Keeper's answer, when asked: the server object as Keeper wrote it, and the fields people
 * read, as the JSON reader gives them (text: numbers as their JSON text; NULL: absent or null),
 * the numbers among them as numbers too (NAN: absent or not a number). */
struct rt_summary_server {
    int asked;
    char *json;  /* the object, NULL when there is none */
    char *error; /* why not, when asked */
    char *display_name, *name, *server_id, *vendor_id, *api_reference, *vcpus, *gpu_model,
        *price_text;
    double memory_amount, gpu_count, price;
};

/* --job: how each figure spread over the job's runs */
#define RT_SUMMARY_NFIGURES 10
struct rt_summary_figure {
    const char *key, *label, *unit;
};
extern const struct rt_summary_figure rt_summary_figures[RT_SUMMARY_NFIGURES];
struct rt_summary_spread {
    double runs;
    struct {
        double n, mean, sd, min, max;
    } f[RT_SUMMARY_NFIGURES];
};

struct rt_summary {
    struct rt_summary_run run;
    struct rt_summary_host host;
    int has_tree;
    struct rt_summary_side process, system;
    struct rt_summary_py py;
    struct rt_summary_kernel kernel;
    struct rt_summary_demand demand;
    struct rt_summary_peak peak;
    struct rt_reco reco, py_reco;
    struct rt_eff eff;
    struct rt_allocated alloc;
    const char *allocation; /* "dedicated" | "shared" */
    struct rt_sharing sharing;
    struct rt_summary_sparks sparks;
    struct rt_summary_top top;
    struct rt_summary_groups groups;
    struct rt_summary_cpu_time cpu_time;
    struct rt_summary_server server;
    int has_spread; /* --job */
    struct rt_summary_spread spread;
    /* what could not be known of the run, for people: "CPU demand: ..." (text and report) */
    char notes[4][240];
    int nnotes;
};

/* Compute the summary of o's run or job into *s (freed with rt_summary_free, also after a
 * failure). 0; -1 with a message in err, and *bad_input set when the cause is the request
 * (unknown run, too few samples, unknown job): exit code 2. */
int rt_summary_compute(struct rt_store *store, const struct rt_summary_opts *o,
                       struct rt_summary *s, int *bad_input, char *err, size_t errlen);
void rt_summary_free(struct rt_summary *s);

/* The end-of-run line's figures (o->figures_only): "tree" is 1 where the document's "process"
 * is an object; cores_mean and cores_max are its "cpu_cores" "mean" and "max" (the system's
 * without a tree), peak_mib the recommendation's memory basis; NAN where unknown. */
struct rt_summary_line {
    int tree;
    double cores_mean, cores_max, peak_mib;
};
void rt_summary_line_of(const struct rt_summary *s, struct rt_summary_line *line);

/* The figures runs are compared by (rt_summary_figures' order), NAN where the run has none. */
void rt_summary_figure_values(const struct rt_summary *s, double v[RT_SUMMARY_NFIGURES]);

/* Two runs side by side (`summary --compare`): each run's facts and recommendation, and each
 * figure's values, change and change in per cent of the first. */
struct rt_summary_compare {
    struct rt_summary s[2];
    double v[2][RT_SUMMARY_NFIGURES];
    double delta[RT_SUMMARY_NFIGURES], delta_pct[RT_SUMMARY_NFIGURES];
};
/* 0; -1 with err, *bad_input set when a run has too few samples. Freed with
 * rt_summary_compare_free (also after a failure). */
int rt_summary_compare(struct rt_store *store, const int64_t id[2], struct rt_summary_compare *c,
                       int *bad_input, char *err, size_t errlen);
void rt_summary_compare_free(struct rt_summary_compare *c);

#endif
