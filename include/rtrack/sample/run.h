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

/* Slurm's facts of the job step a run belongs to (SLURM_* as the job's environment has them,
 * or as the SPANK plugin sets them for its recorder): strings NULL, counts RT_NA, the time
 * limit NAN when unknown. */
struct rt_slurm {
    const char *array_job_id;  /* SLURM_ARRAY_JOB_ID */
    const char *array_task_id; /* SLURM_ARRAY_TASK_ID */
    const char *step_id;       /* SLURM_STEP_ID ("batch", "extern" from the plugin) */
    const char *user;          /* SLURM_JOB_USER */
    const char *partition;     /* SLURM_JOB_PARTITION */
    const char *nodename;      /* SLURMD_NODENAME */
    const char *job_gpus;      /* SLURM_JOB_GPUS: the GPU indexes of the node, as listed */
    int64_t num_nodes;         /* SLURM_JOB_NUM_NODES */
    int64_t ntasks;            /* SLURM_NTASKS */
    int64_t cpus_per_task;     /* SLURM_CPUS_PER_TASK */
    int64_t gpus_on_node;      /* SLURM_GPUS_ON_NODE */
    double time_limit_s;       /* SLURM_JOB_END_TIME - SLURM_JOB_START_TIME (newer Slurm) */
};

/* What the job was allocated, read when the run starts: the limits of the cgroup rtrack runs in
 * (the job inherits it; collect/cgroup.c) and what Slurm and CUDA's environment say (read by the
 * CLI). Unknown or unlimited is RT_NA / NAN / NULL. */
struct rt_alloc {
    double cgroup_cpu_cores;     /* tightest CFS quota / period of the cgroup and its ancestors */
    int64_t cgroup_cpuset_cpus;  /* CPUs of the cgroup's effective cpuset */
    int64_t cgroup_memory_bytes; /* tightest memory.max / memory.limit_in_bytes */
    const char *slurm_job_id;    /* SLURM_JOB_ID */
    int64_t slurm_cpus_on_node;  /* SLURM_CPUS_ON_NODE */
    int64_t slurm_mem_per_node_mib, slurm_mem_per_cpu_mib; /* SLURM_MEM_PER_NODE / _PER_CPU */
    const char *cuda_visible_devices; /* as set ("" when set empty), NULL when unset */
    int64_t gpus; /* entries of CUDA_VISIBLE_DEVICES: 0 when set empty, RT_NA when unset */
    struct rt_slurm slurm;
    const char *cgroup_path; /* record --cgroup: the cgroup the cgroup_* figures are of; NULL:
                              * rtrack's own */
};

/* Nothing known. */
static inline struct rt_alloc rt_alloc_none(void)
{
    return (struct rt_alloc){.cgroup_cpu_cores = RT_NAN,
                             .cgroup_cpuset_cpus = RT_NA,
                             .cgroup_memory_bytes = RT_NA,
                             .slurm_cpus_on_node = RT_NA,
                             .slurm_mem_per_node_mib = RT_NA,
                             .slurm_mem_per_cpu_mib = RT_NA,
                             .gpus = RT_NA,
                             .slurm = {.num_nodes = RT_NA,
                                       .ntasks = RT_NA,
                                       .cpus_per_task = RT_NA,
                                       .gpus_on_node = RT_NA,
                                       .time_limit_s = RT_NAN}};
}

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
    long clk_tck, page_size;      /* of the system the counters come from */
    const struct rt_alloc *alloc; /* what the job was allocated; NULL: nothing known */
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
    /* run: the peak memory charge of rtrack's memory cgroup, bytes, when the cgroup held only
     * rtrack at the start and its peak grew while the job ran (rt_cgroup_peak_*); RT_NA */
    int64_t cgroup_peak_bytes;
    /* record --cgroup: the cgroup's peak (the same field), its OOM kills while recording
     * (RT_NA unknown), and how Slurm says the job ended when the plugin said so (NULL) */
    int64_t cgroup_oom_kills;
    const char *slurm_job_state;
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
                               .oom_kills = RT_NA,
                               .cgroup_peak_bytes = RT_NA,
                               .cgroup_oom_kills = RT_NA};
}

#endif
