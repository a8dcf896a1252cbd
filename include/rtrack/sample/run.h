/* run.h - a run as the recording describes it to the store: what ran (mode, command, pid), who
 * it was for (the Rust reference's metadata, tags), where (the host's facts), at what interval,
 * and how it ended. Plain data: the CLI turns options into it, the collectors fill the host's
 * part, the store writes it as it is. */
#ifndef RTRACK_RUN_H
#define RTRACK_RUN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtrack/base/util.h"

/* Job metadata of the Rust reference (and Sentinel's run fields). */
enum rt_meta_field {
    RT_META_JOB_NAME,
    RT_META_PROJECT_NAME,
    RT_META_STAGE_NAME,
    RT_META_TASK_NAME,
    RT_META_TEAM,
    RT_META_ENV,
    RT_META_LANGUAGE,
    RT_META_ORCHESTRATOR,
    RT_META_EXECUTOR,
    RT_META_EXTERNAL_RUN_ID,
    RT_META_CONTAINER_IMAGE,
    RT_META_N
};
/* Column names in the runs table, in enum order. */
extern const char *const rt_meta_columns[RT_META_N];

struct rt_tag {
    char *key, *value;
};

/* Facts of the host, read once per run (collect/host.c). Strings are malloc'd, NULL unknown. */
struct rt_host_info {
    char *hostname, *machine_id, *cpu_model, *kernel, *os;
    int64_t vcpus, memory_kib;
    double boot_time;
};

/* Facts of the cloud the host runs on (collect/cloud.h), each a malloc'd string or NULL when
 * unknown. vendor_id is one of aws, gcp, azure, hcloud, upcloud, vultr, alicloud, ovh (Spare
 * Cores' vendor ids), or NULL off-cloud. */
struct rt_cloud {
    char *vendor_id;
    char *account_id;
    char *region_id;
    char *zone_id;
    char *instance_type;
};

struct rt_run_desc {
    const char *mode;            /* "run" or "record" */
    const char *command_json;    /* argv as a JSON array, or NULL */
    pid_t pid;                   /* tracked root, 0 = none */
    double interval;             /* seconds between samples, as asked for */
    double started_at;           /* epoch seconds */
    const char *meta[RT_META_N]; /* NULL = not set */
    const struct rt_tag *tags;
    size_t ntags;
    const struct rt_host_info *host;
    long clk_tck, page_size; /* of the system the counters come from */
};

struct rt_run_end {
    double ended_at;
    const char *status;     /* finished, failed */
    int64_t exit_code;      /* RT_NA when none */
    int64_t exit_signal;    /* RT_NA when none */
    const char *end_reason; /* exited, signaled, spawn-failed, interrupted, duration, tree-gone */
    /* run: the reaped job and orphans' getrusage(RUSAGE_CHILDREN); RT_NA / NAN otherwise */
    int64_t maxrss_kib;
    double utime_s, stime_s;
    int64_t oom_kills; /* run: OOM kills on the host while the job ran (/proc/vmstat), RT_NA */
};

/* An end at `ended_at` with nothing else known (every field NULL). */
static inline struct rt_run_end rt_run_end_none(double ended_at)
{
    return (struct rt_run_end){.ended_at = ended_at,
                               .exit_code = RT_NA,
                               .exit_signal = RT_NA,
                               .maxrss_kib = RT_NA,
                               .utime_s = RT_NAN,
                               .stime_s = RT_NAN,
                               .oom_kills = RT_NA};
}

#endif
