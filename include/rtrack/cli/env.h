/* env.h - the environment: every variable rtrack reads is read here, once, when a command
 * starts (src/cli/env.c), and what it says is passed down to the rooms that use it. The options
 * of run and record (and RTRACK_CONFIG) have their variables in config.c's option table; they
 * are read through cli_getenv() too. */
#ifndef RTRACK_CLI_ENV_H
#define RTRACK_CLI_ENV_H

#include <stdint.h>

#include "rtrack/collect/cloud.h"
#include "rtrack/sample/run.h"

/* Each value as the environment has it, NULL when unset or empty. */
struct rt_env {
    const char *db;                      /* RTRACK_DB: every command's default database */
    const char *upload_wait;             /* RTRACK_UPLOAD_WAIT: seconds, end-of-run upload */
    const char *keeper_url;              /* RTRACK_KEEPER_URL */
    const char *upload_batch_rows;       /* RTRACK_UPLOAD_BATCH_ROWS */
    const char *upload_inline_max;       /* RTRACK_UPLOAD_INLINE_MAX */
    const char *sentinel_token;          /* SENTINEL_API_TOKEN (a secret: never printed) */
    const char *sentinel_url;            /* SENTINEL_API_URL */
    const char *keep_token_in_job;       /* RTRACK_KEEP_TOKEN_IN_JOB: run's job gets the token */
    const char *s3_endpoint;             /* RTRACK_S3_ENDPOINT */
    const char *s3_region;               /* RTRACK_S3_REGION */
    const char *http_timeout;            /* RTRACK_HTTP_TIMEOUT_S */
    const char *imds[RT_CLOUD_NVENDORS]; /* RTRACK_IMDS_AWS, _GCP, ... (tests) */
    const char *proc_scan;               /* RTRACK_PROC_SCAN ("full": the /proc scan) */
    const char *nvml_library;            /* RTRACK_NVML_LIBRARY */
    const char *libcurl;                 /* RTRACK_LIBCURL (tests of a missing library) */
    /* what the job was allocated (run and record store it with the run): */
    const char *slurm_job_id;         /* SLURM_JOB_ID */
    const char *slurm_cpus_on_node;   /* SLURM_CPUS_ON_NODE */
    const char *slurm_mem_per_node;   /* SLURM_MEM_PER_NODE (MiB) */
    const char *slurm_mem_per_cpu;    /* SLURM_MEM_PER_CPU (MiB) */
    const char *cuda_visible_devices; /* CUDA_VISIBLE_DEVICES: "" when set empty (no GPU) */
    const char *tracker_db;           /* TRACKER_DB: RTRACK_DB's other name (RTRACK_DB wins) */
    /* the rest of Slurm's facts of the job step (struct rt_slurm): */
    const char *slurm_array_job_id, *slurm_array_task_id, *slurm_step_id, *slurm_job_user,
        *slurm_job_partition, *slurmd_nodename, *slurm_job_num_nodes, *slurm_ntasks,
        *slurm_cpus_per_task, *slurm_gpus_on_node, *slurm_job_gpus, *slurm_job_start_time,
        *slurm_job_end_time;
    const char *tmpdir;   /* TMPDIR: resource-tracker's own database, the readers' merge */
    const char *ready_fd; /* RTRACK_READY_FD: told when the baseline is stored (Slurm plugin) */
    int ready_fd_num;     /* its descriptor, checked when rtrack started (rt_env_load); -1: none */
    const char *columns;  /* COLUMNS: the terminal's width (runs fits its table) */
};

/* Read every variable of the table into e. RTRACK_READY_FD is checked here, before rtrack
 * opens anything (a descriptor number that is not open yet would be the next file rtrack
 * opens: its database), and taken out of the process's environment (a job must not inherit a
 * number whose descriptor it does not have). */
void rt_env_load(struct rt_env *e);

/* getenv() for the option variables of config.c's table (the one other place that names
 * variables); NULL when unset or empty. */
const char *cli_getenv(const char *name);

/* What the values mean, with today's defaults. */
const char *rt_env_db(const struct rt_env *e); /* RTRACK_DB, TRACKER_DB, else rtrack.db */
/* RTRACK_UPLOAD_WAIT: seconds >= 0, else 30 (an invalid value is refused by
 * rt_env_check_streaming before streaming starts) */
double rt_env_upload_wait(const struct rt_env *e);
/* RTRACK_HTTP_TIMEOUT_S: seconds, 0.001 to 86400; 0 when unset (or invalid: refused by
 * rt_env_check_http before any request) */
double rt_env_http_timeout(const struct rt_env *e);
/* The variables of HTTP requests, for the commands that make them (upload, summary and report
 * with --recommend-server): a set but invalid RTRACK_HTTP_TIMEOUT_S is an error, said as `cmd`
 * (0, or -1 after saying so), rather than the default taken silently. */
int rt_env_check_http(const struct rt_env *e, const char *cmd);
/* The same for run and record when they stream (SENTINEL_API_TOKEN set), and RTRACK_UPLOAD_WAIT */
int rt_env_check_streaming(const struct rt_env *e, const char *cmd);
/* RTRACK_UPLOAD_INLINE_MAX, for upload and for streaming alike: bytes >= 0, 65536 when unset;
 * -1 after saying (as `cmd`) that it is invalid. */
int rt_env_inline_max(const struct rt_env *e, const char *cmd, int64_t *out);
/* RTRACK_PROC_SCAN=full: find the tree with the /proc scan (for comparisons) */
int rt_env_full_scan(const struct rt_env *e);
/* The cloud probes' base URLs (tests); whether to probe at all is run/record's
 * --cloud-discovery (RTRACK_CLOUD_DISCOVERY). */
void rt_env_cloud_opts(const struct rt_env *e, struct rt_cloud_opts *o);

/* The environment's part of the allocation: Slurm's job id, CPUs and memory (a value that is
 * not a whole number 0 or more is unknown), and the GPUs CUDA_VISIBLE_DEVICES names (unset:
 * unknown; empty: 0; counted up to the first entry CUDA stops at: -1, NoDevFiles). */
void rt_env_alloc(const struct rt_env *e, struct rt_alloc *a);

/* RTRACK_READY_FD: a descriptor number above 2 that was open when rtrack started (made
 * close-on-exec then), else -1 (ignored; said once as `cmd` when the variable was set). */
int rt_env_ready_fd(const struct rt_env *e, const char *cmd);

/* Settings that are the whole process's, handed to their rooms once at start: the HTTP time
 * limit (net), which libcurl to load (net). */
void rt_env_apply_process_settings(const struct rt_env *e);

#endif
