/* cgroup.c - CPU time of the cgroup rtrack runs in, and its CPU limit.
 *
 * The Rust reference reports cgroup_usage_secs and cgroup_utilization_pct from the root of the
 * cgroup mount. rtrack follows its own cgroup (/proc/self/cgroup): in a container that is the
 * container's, under Slurm or systemd the job's or the unit's, which is what the job is charged
 * for. cgroup v2 (cpu.stat usage_usec) is preferred, v1 (cpuacct.usage, ns) is the fallback;
 * the limit is the tightest CFS quota of the cgroup and its ancestors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

struct cgroup_state {
    char usage_path[4096];
    int v2;             /* usage_path is a cpu.stat (µs) rather than cpuacct.usage (ns) */
    double limit_cores; /* NAN: no quota */
    struct rt_buf buf;
    struct rt_kfile kf;
};

/* "id:controllers:path" line of /proc/self/cgroup for a v1 controller, or v2's "0::" */
static int cgroup_path(const char *text, const char *controller, char *out, size_t cap)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *c1 = strchr(l, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        const char *nl = strchr(l, '\n');
        if (!c2 || (nl && c2 > nl))
            continue;
        size_t cl = (size_t)(c2 - c1 - 1);
        int match = 0;
        if (!controller) {
            match = cl == 0 && strncmp(l, "0:", 2) == 0;
        } else {
            /* controllers are comma-separated: "cpu,cpuacct" */
            for (const char *p = c1 + 1; p < c2;) {
                const char *e = memchr(p, ',', (size_t)(c2 - p));
                size_t n = e ? (size_t)(e - p) : (size_t)(c2 - p);
                if (n == strlen(controller) && !strncmp(p, controller, n))
                    match = 1;
                p += n + 1;
            }
        }
        if (!match)
            continue;
        size_t pl = nl ? (size_t)(nl - c2 - 1) : strlen(c2 + 1);
        if (pl >= cap)
            return -1;
        memcpy(out, c2 + 1, pl);
        out[pl] = '\0';
        return 0;
    }
    return -1;
}

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

/* The tightest quota of dir and its ancestors up to the mount point (base). */
static double find_limit(const struct rt_sysenv *env, const char *base, const char *cg, int v2)
{
    char rel[4096], path[4096], val[128];
    snprintf(rel, sizeof(rel), "%s", cg);
    double best = RT_NAN;
    for (;;) {
        double cores = RT_NAN;
        if (v2) {
            if (!rt_path(env, path, sizeof(path), "%s%s/cpu.max", base, rel) &&
                rt_read_small(path, val, sizeof(val)) > 0) {
                /* "QUOTA PERIOD" or "max PERIOD" (no limit) */
                uint64_t quota, period;
                const char *e = rt_parse_u64(val, &quota);
                if (e && *e == ' ' && (e = rt_parse_u64(e, &period)) && !*e && quota > 0 &&
                    period > 0)
                    cores = (double)quota / (double)period;
            }
        } else {
            /* the quota is -1 when there is none; a value that is not a number is no limit */
            int64_t quota = -1, period = 0;
            if (!rt_path(env, path, sizeof(path), "%s%s/cpu.cfs_quota_us", base, rel) &&
                rt_read_small(path, val, sizeof(val)) > 0 && rt_parse_i64(val, &quota) != 0)
                quota = -1;
            if (!rt_path(env, path, sizeof(path), "%s%s/cpu.cfs_period_us", base, rel) &&
                rt_read_small(path, val, sizeof(val)) > 0 && rt_parse_i64(val, &period) != 0)
                period = 0;
            if (quota > 0 && period > 0)
                cores = (double)quota / (double)period;
        }
        if (!isnan(cores) && (isnan(best) || cores < best))
            best = cores;
        char *slash = strrchr(rel, '/');
        if (!slash || rel[0] == '\0' || (slash == rel && rel[1] == '\0'))
            break;
        *slash = '\0';
    }
    return best;
}

static void *cgroup_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)cfg;
    char path[4096], cg[2048];
    struct rt_buf text = {0};
    if (rt_path(env, path, sizeof(path), "/proc/self/cgroup") || rt_read_file(path, &text) <= 0) {
        rt_buf_free(&text);
        return NULL;
    }
    struct cgroup_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_SINGLE; /* cpu.stat and cpuacct.usage: one seq_show each */
    st->limit_cores = RT_NAN;
    static const char *const v2_bases[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    static const char *const v1_acct[] = {"/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct",
                                          "/sys/fs/cgroup/cpuacct,cpu"};
    static const char *const v1_cpu[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                         "/sys/fs/cgroup/cpuacct,cpu"};
    if (cgroup_path(text.p, NULL, cg, sizeof(cg)) == 0) {
        const char *rel = strcmp(cg, "/") ? cg : "";
        for (size_t i = 0; i < RT_ARRAY_LEN(v2_bases) && !st->usage_path[0]; i++) {
            if (rt_path(env, path, sizeof(path), "%s%s/cpu.stat", v2_bases[i], rel) ||
                !readable(path))
                continue;
            snprintf(st->usage_path, sizeof(st->usage_path), "%s", path);
            st->v2 = 1;
            st->limit_cores = find_limit(env, v2_bases[i], rel, 1);
        }
    }
    if (!st->usage_path[0] && cgroup_path(text.p, "cpuacct", cg, sizeof(cg)) == 0) {
        const char *rel = strcmp(cg, "/") ? cg : "";
        for (size_t i = 0; i < RT_ARRAY_LEN(v1_acct) && !st->usage_path[0]; i++)
            if (!rt_path(env, path, sizeof(path), "%s%s/cpuacct.usage", v1_acct[i], rel) &&
                readable(path))
                snprintf(st->usage_path, sizeof(st->usage_path), "%s", path);
        if (cgroup_path(text.p, "cpu", cg, sizeof(cg)) == 0) {
            rel = strcmp(cg, "/") ? cg : "";
            for (size_t i = 0; i < RT_ARRAY_LEN(v1_cpu) && isnan(st->limit_cores); i++)
                st->limit_cores = find_limit(env, v1_cpu[i], rel, 0);
        }
    }
    rt_buf_free(&text);
    if (!st->usage_path[0]) {
        free(st);
        return NULL; /* no cgroup CPU accounting: the columns stay NULL */
    }
    return st;
}

static void cgroup_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                           const struct rt_sample *prev)
{
    (void)env;
    struct cgroup_state *st = state;
    cur->cgroup_limit_cores = st->limit_cores;
    if (rt_kfile_read(&st->kf, st->usage_path, &st->buf) <= 0)
        return;
    uint64_t v;
    if (st->v2) {
        const char *u = strstr(st->buf.p, "usage_usec ");
        if (!u || !rt_parse_u64(u + 11, &v) || v > INT64_MAX)
            return;
        cur->cgroup_usage_us = (int64_t)v;
    } else {
        if (!rt_parse_u64(st->buf.p, &v))
            return;
        cur->cgroup_usage_us = (int64_t)(v / 1000);
    }
    if (prev && prev->cgroup_usage_us != RT_NA) {
        int64_t d = cur->cgroup_usage_us - prev->cgroup_usage_us;
        cur->cgroup_cpu_s = (double)(d > 0 ? d : 0) / 1e6;
    }
}

static void cgroup_close(void *state)
{
    struct cgroup_state *st = state;
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    free(st);
}

const struct rt_collector rt_collector_cgroup = {"cgroup", cgroup_open, cgroup_collect,
                                                 cgroup_close};
