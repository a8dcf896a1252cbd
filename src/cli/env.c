/* env.c - every environment variable rtrack reads (but the option variables of config.c's
 * table, read through cli_getenv()): one table, read once at start. The rooms below the CLI
 * never call getenv(); what the environment says reaches them as arguments. */
#include "rtrack/cli/env.h"

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
};

const char *cli_getenv(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void rt_env_load(struct rt_env *e)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(vars); i++)
        *(const char **)((char *)e + vars[i].off) = cli_getenv(vars[i].name);
}

const char *rt_env_db(const struct rt_env *e)
{
    return e->db ? e->db : "rtrack.db";
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

void rt_env_apply_process_settings(const struct rt_env *e)
{
    /* an invalid value leaves the clients' defaults: every command that makes a request has
     * refused it before (rt_env_check_http) */
    double t = rt_env_http_timeout(e);
    long ms = (long)(t * 1000.0);
    rt_http_set_timeout_ms(t > 0 ? (ms > 0 ? ms : 1) : 0);
    rt_libs_set_curl_name(e->libcurl);
}
