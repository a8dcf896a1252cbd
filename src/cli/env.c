/* env.c - every environment variable rtrack reads (but the option variables of config.c's
 * table, read through cli_getenv()): one table, read once at start. The rooms below the CLI
 * never call getenv(); what the environment says reaches them as arguments. */
#include "rtrack/cli/env.h"

#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/net/http.h"
#include "rtrack/net/libs.h"

static const struct {
    const char *name;
    size_t off;
} vars[] = {
    {"RTRACK_DB", offsetof(struct rt_env, db)},
    {"RTRACK_UPLOAD_WAIT", offsetof(struct rt_env, upload_wait)},
    {"RTRACK_KEEPER_URL", offsetof(struct rt_env, keeper_url)},
    {"RTRACK_UPLOAD_BATCH_ROWS", offsetof(struct rt_env, upload_batch_rows)},
    {"RTRACK_UPLOAD_INLINE_MAX", offsetof(struct rt_env, upload_inline_max)},
    {"SENTINEL_API_TOKEN", offsetof(struct rt_env, sentinel_token)},
    {"SENTINEL_API_URL", offsetof(struct rt_env, sentinel_url)},
    {"RTRACK_KEEP_TOKEN_IN_JOB", offsetof(struct rt_env, keep_token_in_job)},
    {"RTRACK_S3_ENDPOINT", offsetof(struct rt_env, s3_endpoint)},
    {"RTRACK_S3_REGION", offsetof(struct rt_env, s3_region)},
    {"RTRACK_HTTP_TIMEOUT_S", offsetof(struct rt_env, http_timeout)},
    {"RTRACK_IMDS_AWS", offsetof(struct rt_env, imds[RT_CLOUD_AWS])},
    {"RTRACK_IMDS_GCP", offsetof(struct rt_env, imds[RT_CLOUD_GCP])},
    {"RTRACK_IMDS_AZURE", offsetof(struct rt_env, imds[RT_CLOUD_AZURE])},
    {"RTRACK_IMDS_HETZNER", offsetof(struct rt_env, imds[RT_CLOUD_HETZNER])},
    {"RTRACK_IMDS_UPCLOUD", offsetof(struct rt_env, imds[RT_CLOUD_UPCLOUD])},
    {"RTRACK_IMDS_VULTR", offsetof(struct rt_env, imds[RT_CLOUD_VULTR])},
    {"RTRACK_IMDS_ALICLOUD", offsetof(struct rt_env, imds[RT_CLOUD_ALICLOUD])},
    {"RTRACK_IMDS_OVH", offsetof(struct rt_env, imds[RT_CLOUD_OVH])},
    {"RTRACK_PROC_SCAN", offsetof(struct rt_env, proc_scan)},
    {"RTRACK_NVML_LIBRARY", offsetof(struct rt_env, nvml_library)},
    {"RTRACK_LIBCURL", offsetof(struct rt_env, libcurl)},
    {"SLURM_JOB_ID", offsetof(struct rt_env, slurm_job_id)},
    {"SLURM_CPUS_ON_NODE", offsetof(struct rt_env, slurm_cpus_on_node)},
    {"SLURM_MEM_PER_NODE", offsetof(struct rt_env, slurm_mem_per_node)},
    {"SLURM_MEM_PER_CPU", offsetof(struct rt_env, slurm_mem_per_cpu)},
    {"TRACKER_DB", offsetof(struct rt_env, tracker_db)},
    {"SLURM_ARRAY_JOB_ID", offsetof(struct rt_env, slurm_array_job_id)},
    {"SLURM_ARRAY_TASK_ID", offsetof(struct rt_env, slurm_array_task_id)},
    {"SLURM_STEP_ID", offsetof(struct rt_env, slurm_step_id)},
    {"SLURM_JOB_USER", offsetof(struct rt_env, slurm_job_user)},
    {"SLURM_JOB_PARTITION", offsetof(struct rt_env, slurm_job_partition)},
    {"SLURMD_NODENAME", offsetof(struct rt_env, slurmd_nodename)},
    {"SLURM_JOB_NUM_NODES", offsetof(struct rt_env, slurm_job_num_nodes)},
    {"SLURM_NTASKS", offsetof(struct rt_env, slurm_ntasks)},
    {"SLURM_CPUS_PER_TASK", offsetof(struct rt_env, slurm_cpus_per_task)},
    {"SLURM_GPUS_ON_NODE", offsetof(struct rt_env, slurm_gpus_on_node)},
    {"SLURM_JOB_GPUS", offsetof(struct rt_env, slurm_job_gpus)},
    {"SLURM_JOB_START_TIME", offsetof(struct rt_env, slurm_job_start_time)},
    {"SLURM_JOB_END_TIME", offsetof(struct rt_env, slurm_job_end_time)},
    {"TMPDIR", offsetof(struct rt_env, tmpdir)},
    {"RTRACK_READY_FD", offsetof(struct rt_env, ready_fd)},
    {"COLUMNS", offsetof(struct rt_env, columns)},
};

/* RTRACK_READY_FD's descriptor, checked before anything is opened: a number that names no open
 * descriptor at start would name the next file rtrack opens (its database: the ready byte
 * landed in the header, "1QLite format 3", when a nested `rtrack run` inherited the variable
 * without the descriptor). Made close-on-exec at once. -1: none. */
static int ready_fd_check(const char *v)
{
    int64_t fd;
    if (!v || rt_parse_i64(v, &fd) != 0 || fd <= 2 || fd >= INT_MAX)
        return -1;
    return fcntl((int)fd, F_SETFD, FD_CLOEXEC) != -1 ? (int)fd : -1;
}

const char *cli_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void rt_env_load(struct rt_env *e)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(vars); i++)
        *(const char **)((char *)e + vars[i].off) = cli_getenv(vars[i].name);
    /* set but empty is a fact here: CUDA sees no GPU */
    e->cuda_visible_devices = getenv("CUDA_VISIBLE_DEVICES");
    e->ready_fd_num = ready_fd_check(e->ready_fd);
    /* the Slurm plugin's descriptor is rtrack's: the job (a nested rtrack among others) gets
     * neither the descriptor (close-on-exec) nor its number */
    if (getenv("RTRACK_READY_FD"))
        unsetenv("RTRACK_READY_FD");
}

const char *rt_env_db(const struct rt_env *e)
{
    return e->db ? e->db : e->tracker_db ? e->tracker_db : "rtrack.db";
}

/* RTRACK_UPLOAD_WAIT: seconds, 0 or more; 30 when unset. -1 when invalid. */
static int upload_wait(const struct rt_env *e, double *out)
{
    *out = 30.0;
    if (!e->upload_wait)
        return 0;
    double d;
    if (rt_parse_double(e->upload_wait, &d) != 0 || d < 0)
        return -1;
    *out = d;
    return 0;
}

double rt_env_upload_wait(const struct rt_env *e)
{
    double d;
    return upload_wait(e, &d) == 0 ? d : 30.0;
}

/* RTRACK_HTTP_TIMEOUT_S: seconds, 0.001 (libcurl counts milliseconds) to a day; 0 when unset.
 * -1 when invalid. The one reading of the variable, for the process setting and the checks. */
static int http_timeout(const struct rt_env *e, double *out)
{
    *out = 0;
    if (!e->http_timeout)
        return 0;
    double v;
    if (rt_parse_double(e->http_timeout, &v) != 0 || v < 0.001 || v > 86400)
        return -1;
    *out = v;
    return 0;
}

double rt_env_http_timeout(const struct rt_env *e)
{
    double v;
    return http_timeout(e, &v) == 0 ? v : 0;
}

int rt_env_check_http(const struct rt_env *e, const char *cmd)
{
    double v;
    if (http_timeout(e, &v) == 0)
        return 0;
    rt_err("%s: invalid value '%s' for RTRACK_HTTP_TIMEOUT_S: expected seconds between 0.001 and "
           "86400",
           cmd, e->http_timeout);
    return -1;
}

int rt_env_check_streaming(const struct rt_env *e, const char *cmd)
{
    double v;
    if (rt_env_check_http(e, cmd) != 0)
        return -1;
    if (upload_wait(e, &v) == 0)
        return 0;
    rt_err("%s: invalid value '%s' for RTRACK_UPLOAD_WAIT: expected seconds, 0 or more", cmd,
           e->upload_wait);
    return -1;
}

int rt_env_inline_max(const struct rt_env *e, const char *cmd, int64_t *out)
{
    *out = 64 * 1024;
    if (!e->upload_inline_max)
        return 0;
    if (rt_parse_i64(e->upload_inline_max, out) != 0 || *out < 0) {
        rt_err("%s: invalid RTRACK_UPLOAD_INLINE_MAX '%s': expected bytes, 0 or more", cmd,
               e->upload_inline_max);
        return -1;
    }
    return 0;
}

int rt_env_full_scan(const struct rt_env *e)
{
    return e->proc_scan && strcmp(e->proc_scan, "full") == 0;
}

void rt_env_cloud_opts(const struct rt_env *e, struct rt_cloud_opts *o)
{
    o->off = 0;
    for (int v = 0; v < RT_CLOUD_NVENDORS; v++)
        o->base[v] = e->imds[v];
}

/* A count the scheduler gave: a whole number, 0 or more; anything else is not known. */
static int64_t count_of(const char *v)
{
    int64_t n;
    return v && rt_parse_i64(v, &n) == 0 && n >= 0 ? n : RT_NA;
}

/* CUDA's reading of the list: the devices named up to the first one that cannot be (-1,
 * Slurm's NoDevFiles, an empty entry). */
static int64_t cuda_devices(const char *v)
{
    if (!v)
        return RT_NA;
    int64_t n = 0;
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || *p == '-' || (len == 10 && !strncmp(p, "NoDevFiles", 10)))
            break;
        n++;
        p += len;
        if (*p == ',')
            p++;
    }
    return n;
}

void rt_env_alloc(const struct rt_env *e, struct rt_alloc *a)
{
    a->slurm_job_id = e->slurm_job_id;
    a->slurm_cpus_on_node = count_of(e->slurm_cpus_on_node);
    a->slurm_mem_per_node_mib = count_of(e->slurm_mem_per_node);
    a->slurm_mem_per_cpu_mib = count_of(e->slurm_mem_per_cpu);
    a->cuda_visible_devices = e->cuda_visible_devices;
    a->gpus = cuda_devices(e->cuda_visible_devices);
    struct rt_slurm *sl = &a->slurm;
    sl->array_job_id = e->slurm_array_job_id;
    sl->array_task_id = e->slurm_array_task_id;
    sl->step_id = e->slurm_step_id;
    sl->user = e->slurm_job_user;
    sl->partition = e->slurm_job_partition;
    sl->nodename = e->slurmd_nodename;
    sl->job_gpus = e->slurm_job_gpus;
    sl->num_nodes = count_of(e->slurm_job_num_nodes);
    sl->ntasks = count_of(e->slurm_ntasks);
    sl->cpus_per_task = count_of(e->slurm_cpus_per_task);
    sl->gpus_on_node = count_of(e->slurm_gpus_on_node);
    int64_t t0 = count_of(e->slurm_job_start_time), t1 = count_of(e->slurm_job_end_time);
    sl->time_limit_s = t0 != RT_NA && t1 != RT_NA && t1 > t0 ? (double)(t1 - t0) : RT_NAN;
}

int rt_env_ready_fd(const struct rt_env *e, const char *cmd)
{
    if (e->ready_fd && e->ready_fd_num < 0)
        rt_warn("%s: RTRACK_READY_FD '%s' names no descriptor above 2 that was open when rtrack "
                "started; ignored",
                cmd, e->ready_fd);
    return e->ready_fd_num;
}

void rt_env_apply_process_settings(const struct rt_env *e)
{
    /* an invalid value leaves the clients' defaults: every command that makes a request has
     * refused it before (rt_env_check_http) */
    double t = rt_env_http_timeout(e);
    long ms = (long)(t * 1000.0);
    rt_http_set_timeout_ms(t > 0 ? (ms > 0 ? ms : 1) : 0);
    rt_libs_set_curl_name(e->libcurl);
}
