/* cgroup.c - CPU time of the cgroup rtrack runs in, and its CPU limit.
 *
 * The Rust reference reports cgroup_usage_secs and cgroup_utilization_pct from the root of the
 * cgroup mount. rtrack follows its own cgroup (/proc/self/cgroup): in a container that is the
 * container's, under Slurm or systemd the job's or the unit's, which is what the job is charged
 * for. cgroup v2 (cpu.stat usage_usec) is preferred, v1 (cpuacct.usage, ns) is the fallback;
 * the limit is the tightest CFS quota of the cgroup and its ancestors.
 *
 * The cgroup's directory is /sys/fs/cgroup/HIERARCHY/PATH, PATH as /proc/self/cgroup names it.
 * In a container without a cgroup namespace (Docker on a cgroup v1 host) that path is the
 * host's (/docker/ID) and does not exist inside: the container's own cgroup is mounted at the
 * hierarchy's mount point, with that path as the mount's root (/proc/self/mountinfo), which is
 * where it is looked for when the usual place has nothing.
 *
 * Read once when a run starts: what the job was allocated (the cgroup's CPU quota, cpuset and
 * memory limit: the job inherits rtrack's cgroup) and, at the end, the peak memory charge of
 * that cgroup when it is the job's own (rt_cgroup_peak_open in collect.h says when). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

struct cgroup_state {
    char usage_path[4096]; /* below the root: a fixture's root changes between samples */
    int v2;                /* usage_path is a cpu.stat (µs) rather than cpuacct.usage (ns) */
    double limit_cores;    /* NAN: no quota */
    const char *cg;        /* record --cgroup's, NULL: rtrack's own */
    int fresh;             /* the cgroup was not there at the start: its first reading counts */
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

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* Whether a mountinfo line (modified) is a mount of the hierarchy of `controller` (NULL: the
 * v2 one); its root and mount point then. */
static int cgroup_mount(char *line, const char *controller, char **root, char **mp)
{
    char *f[6], *save = NULL, *tok = strtok_r(line, " ", &save);
    int n = 0;
    for (; tok && n < 6; tok = strtok_r(NULL, " ", &save))
        f[n++] = tok;
    while (tok && strcmp(tok, "-") != 0)
        tok = strtok_r(NULL, " ", &save); /* optional fields, up to the separator */
    char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
    char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
    char *opts = source ? strtok_r(NULL, " ", &save) : NULL;
    if (n < 5 || !opts || strcmp(fstype, controller ? "cgroup" : "cgroup2") != 0)
        return 0;
    int match = !controller;
    for (char *o = opts, *e; controller && !match && o; o = e ? e + 1 : NULL) {
        e = strchr(o, ',');
        size_t l = e ? (size_t)(e - o) : strlen(o);
        match = l == strlen(controller) && strncmp(o, controller, l) == 0;
    }
    if (!match)
        return 0;
    unescape(f[3]);
    unescape(f[4]);
    *root = f[3];
    *mp = f[4];
    return 1;
}

/* Where rtrack's cgroup in the hierarchy of `controller` (NULL: v2) is, from the mounts of this
 * mount namespace: the mount point (base) and the cgroup's path below the mount's root (rel, ""
 * for the root itself). 0 when found. */
static int mount_dir(const struct rt_sysenv *env, const char *text, const char *controller,
                     char *base, size_t bcap, char *rel, size_t rcap)
{
    char cg[2048], path[4096];
    struct rt_buf mi = {0};
    if (cgroup_path(text, controller, cg, sizeof(cg)) != 0 ||
        rt_path(env, path, sizeof(path), "/proc/self/mountinfo") || rt_read_file(path, &mi) <= 0) {
        rt_buf_free(&mi);
        return -1;
    }
    int found = -1;
    for (char *line = mi.p, *nl; found && line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *root, *mp;
        if (!cgroup_mount(line, controller, &root, &mp))
            continue;
        size_t rl = strcmp(root, "/") ? strlen(root) : 0;
        if (strncmp(cg, root, rl) != 0 || (cg[rl] != '/' && cg[rl] != '\0'))
            continue; /* the cgroup is outside what this mount shows */
        const char *r = strcmp(cg + rl, "/") ? cg + rl : "";
        if ((size_t)snprintf(base, bcap, "%s", mp) < bcap &&
            (size_t)snprintf(rel, rcap, "%s", r) < rcap &&
            !rt_path(env, path, sizeof(path), "%s%s", base, rel) && access(path, F_OK) == 0)
            found = 0;
    }
    rt_buf_free(&mi);
    return found;
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

/* The text of /proc/self/cgroup, or what it would say for a process in `cg` in every hierarchy
 * (record --cgroup: the cgroup of a Slurm step, with the same path in each v1 hierarchy). 0, or
 * -1 when there is none. */
static int cgroup_text(const struct rt_sysenv *env, const char *cg, struct rt_buf *text)
{
    char path[4096];
    if (cg) {
        static const char *const ctls[] = {"cpu", "cpuacct", "cpuset", "memory", "freezer", "pids"};
        for (size_t i = 0; i < RT_ARRAY_LEN(ctls); i++) {
            snprintf(path, sizeof(path), "%zu:%s:%s\n", i + 1, ctls[i], cg);
            rt_buf_puts(text, path);
        }
        snprintf(path, sizeof(path), "0::%s\n", cg);
        rt_buf_puts(text, path);
        return 0;
    }
    if (rt_path(env, path, sizeof(path), "/proc/self/cgroup") || rt_read_file(path, text) <= 0) {
        rt_buf_free(text);
        return -1;
    }
    return 0;
}

/* Where the usage of the cgroup that `text` names is read, and its CPU limit, into st. */
static void cgroup_resolve(struct cgroup_state *st, const struct rt_sysenv *env, const char *text)
{
    char path[4096], cg[2048];
    static const char *const v2_bases[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    static const char *const v1_acct[] = {"/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct",
                                          "/sys/fs/cgroup/cpuacct,cpu"};
    static const char *const v1_cpu[] = {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct",
                                         "/sys/fs/cgroup/cpuacct,cpu"};
    if (cgroup_path(text, NULL, cg, sizeof(cg)) == 0) {
        const char *rel = strcmp(cg, "/") ? cg : "";
        for (size_t i = 0; i < RT_ARRAY_LEN(v2_bases) && !st->usage_path[0]; i++) {
            if (rt_path(env, path, sizeof(path), "%s%s/cpu.stat", v2_bases[i], rel) ||
                !readable(path))
                continue;
            snprintf(st->usage_path, sizeof(st->usage_path), "%s", path + strlen(env->root));
            st->v2 = 1;
            st->limit_cores = find_limit(env, v2_bases[i], rel, 1);
        }
    }
    if (!st->usage_path[0] && cgroup_path(text, "cpuacct", cg, sizeof(cg)) == 0) {
        const char *rel = strcmp(cg, "/") ? cg : "";
        for (size_t i = 0; i < RT_ARRAY_LEN(v1_acct) && !st->usage_path[0]; i++)
            if (!rt_path(env, path, sizeof(path), "%s%s/cpuacct.usage", v1_acct[i], rel) &&
                readable(path))
                snprintf(st->usage_path, sizeof(st->usage_path), "%s", path + strlen(env->root));
        if (cgroup_path(text, "cpu", cg, sizeof(cg)) == 0) {
            rel = strcmp(cg, "/") ? cg : "";
            for (size_t i = 0; i < RT_ARRAY_LEN(v1_cpu) && isnan(st->limit_cores); i++)
                st->limit_cores = find_limit(env, v1_cpu[i], rel, 0);
        }
    }
    if (!st->usage_path[0]) {
        /* nothing where the cgroup's path leads: a container's own cgroup is at the mount */
        char base[1024], rel[2048];
        if (mount_dir(env, text, NULL, base, sizeof(base), rel, sizeof(rel)) == 0 &&
            !rt_path(env, path, sizeof(path), "%s%s/cpu.stat", base, rel) && readable(path)) {
            snprintf(st->usage_path, sizeof(st->usage_path), "%s", path + strlen(env->root));
            st->v2 = 1;
            st->limit_cores = find_limit(env, base, rel, 1);
        } else if (mount_dir(env, text, "cpuacct", base, sizeof(base), rel, sizeof(rel)) == 0 &&
                   !rt_path(env, path, sizeof(path), "%s%s/cpuacct.usage", base, rel) &&
                   readable(path)) {
            snprintf(st->usage_path, sizeof(st->usage_path), "%s", path + strlen(env->root));
            if (mount_dir(env, text, "cpu", base, sizeof(base), rel, sizeof(rel)) == 0)
                st->limit_cores = find_limit(env, base, rel, 0);
        }
    }
}

/* A cgroup named by record --cgroup may not have its CPU accounting yet (Slurm makes a step's
 * cpuacct cgroup with its first task, after the recorder's start): looked for again each
 * sample, and once there, counted from zero (a new cgroup's counter starts at 0). */
static void *cgroup_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    struct rt_buf text = {0};
    if (cgroup_text(env, cfg->cgroup, &text) != 0)
        return NULL;
    struct cgroup_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_SINGLE; /* cpu.stat and cpuacct.usage: one seq_show each */
    st->limit_cores = RT_NAN;
    st->cg = cfg->cgroup;
    cgroup_resolve(st, env, text.p);
    rt_buf_free(&text);
    if (!st->usage_path[0] && !st->cg) {
        free(st);
        return NULL; /* no cgroup CPU accounting: the columns stay NULL */
    }
    st->fresh = !st->usage_path[0];
    return st;
}

static void cgroup_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                           const struct rt_sample *prev)
{
    struct cgroup_state *st = state;
    char path[4096];
    if (!st->usage_path[0]) {
        struct rt_buf text = {0};
        if (cgroup_text(env, st->cg, &text) == 0)
            cgroup_resolve(st, env, text.p);
        rt_buf_free(&text);
        if (!st->usage_path[0])
            return;
    }
    cur->cgroup_limit_cores = st->limit_cores;
    if (rt_path(env, path, sizeof(path), "%s", st->usage_path) ||
        rt_kfile_read(&st->kf, path, &st->buf) <= 0)
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
    } else if (st->fresh && prev) {
        cur->cgroup_cpu_s = (double)cur->cgroup_usage_us / 1e6;
    }
    st->fresh = 0;
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

/* --- what the job was allocated, and the peak of a cgroup of its own ----------------------- */

/* A v1 controller is mounted at /sys/fs/cgroup/<its hierarchy's controllers> ("cpu,cpuacct"),
 * often with a link of each controller's own name: the directory of the cgroup rtrack is in,
 * base (the mount) and rel (the cgroup's path, "" for the root) apart. 0 when found. */
static int v1_dir(const struct rt_sysenv *env, const char *text, const char *controller, char *base,
                  size_t bcap, char *rel, size_t rcap)
{
    char cg[2048], path[4096];
    if (cgroup_path(text, controller, cg, sizeof(cg)) != 0)
        return -1;
    const char *const mounts[] = {controller, "cpu,cpuacct", "cpuacct,cpu"};
    size_t n = strcmp(controller, "cpu") ? 1 : RT_ARRAY_LEN(mounts);
    for (size_t i = 0; i < n; i++) {
        const char *m = mounts[i];
        snprintf(rel, rcap, "%s", strcmp(cg, "/") ? cg : "");
        if (rt_path(env, path, sizeof(path), "/sys/fs/cgroup/%s%s", m, rel) == 0 &&
            access(path, F_OK) == 0) {
            snprintf(base, bcap, "/sys/fs/cgroup/%s", m);
            return 0;
        }
    }
    return mount_dir(env, text, controller, base, bcap, rel, rcap);
}

/* The v2 directory of rtrack's cgroup that has `file` (a controller's file: the hybrid layout's
 * /sys/fs/cgroup/unified has none). 0 when found. */
static int v2_dir(const struct rt_sysenv *env, const char *text, const char *file, char *base,
                  size_t bcap, char *rel, size_t rcap)
{
    static const char *const bases[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    char cg[2048], path[4096];
    if (cgroup_path(text, NULL, cg, sizeof(cg)) != 0)
        return -1;
    for (size_t i = 0; i < RT_ARRAY_LEN(bases); i++) {
        snprintf(rel, rcap, "%s", strcmp(cg, "/") ? cg : "");
        if (rt_path(env, path, sizeof(path), "%s%s/%s", bases[i], rel, file) == 0 &&
            access(path, F_OK) == 0) {
            snprintf(base, bcap, "%s", bases[i]);
            return 0;
        }
    }
    return mount_dir(env, text, NULL, base, bcap, rel, rcap) == 0 &&
                   rt_path(env, path, sizeof(path), "%s%s/%s", base, rel, file) == 0 &&
                   access(path, F_OK) == 0
               ? 0
               : -1;
}

int64_t rt_cpuset_count(const char *list)
{
    /* "0-3,8,10-11"; the empty list of a cgroup without CPUs of its own is no answer */
    int64_t n = 0;
    const char *p = list;
    if (!*p)
        return RT_NA;
    for (;;) {
        uint64_t a, b;
        if (!(p = rt_parse_u64(p, &a)))
            return RT_NA;
        b = a;
        if (*p == '-' && (!(p = rt_parse_u64(p + 1, &b)) || b < a))
            return RT_NA;
        if (b - a >= (UINT64_C(1) << 20))
            return RT_NA;
        n += (int64_t)(b - a + 1);
        if (*p == '\0')
            return n;
        if (*p++ != ',')
            return RT_NA;
    }
}

/* v1's "no limit" is the largest page count the kernel keeps, in bytes (9223372036854771712
 * with 4 KiB pages); any value that large is none. */
#define CGROUP_NO_LIMIT (INT64_C(1) << 62)

/* The tightest memory limit of base+rel and its ancestors, bytes, RT_NA when none. */
static int64_t memory_limit(const struct rt_sysenv *env, const char *base, const char *cg, int v2)
{
    char rel[4096], path[4096], val[128];
    snprintf(rel, sizeof(rel), "%s", cg);
    int64_t best = RT_NA;
    for (;;) {
        uint64_t v;
        const char *e;
        if (!rt_path(env, path, sizeof(path), "%s%s/%s", base, rel,
                     v2 ? "memory.max" : "memory.limit_in_bytes") &&
            rt_read_small(path, val, sizeof(val)) > 0 && (e = rt_parse_u64(val, &v)) && !*e &&
            v < (uint64_t)CGROUP_NO_LIMIT && (best == RT_NA || (int64_t)v < best))
            best = (int64_t)v; /* ("max": no limit) */
        char *slash = strrchr(rel, '/');
        if (!slash)
            break;
        *slash = '\0';
    }
    return best;
}

/* The CPUs of the cpuset in force: the cgroup's effective list, or its nearest ancestor's where
 * the controller is not enabled below it (v2). */
static int64_t cpuset_cpus(const struct rt_sysenv *env, const char *base, const char *cg, int v2)
{
    char rel[4096], path[4096], val[4096];
    snprintf(rel, sizeof(rel), "%s", cg);
    static const char *const v1_files[] = {"cpuset.effective_cpus", "cpuset.cpus"};
    static const char *const v2_files[] = {"cpuset.cpus.effective"};
    const char *const *files = v2 ? v2_files : v1_files;
    size_t nfiles = v2 ? RT_ARRAY_LEN(v2_files) : RT_ARRAY_LEN(v1_files);
    for (;;) {
        for (size_t i = 0; i < nfiles; i++)
            if (!rt_path(env, path, sizeof(path), "%s%s/%s", base, rel, files[i]) &&
                rt_read_small(path, val, sizeof(val)) > 0)
                return rt_cpuset_count(val);
        char *slash = strrchr(rel, '/');
        if (!slash)
            return RT_NA;
        *slash = '\0';
    }
}

void rt_cgroup_alloc_read(const struct rt_sysenv *env, struct rt_alloc *a)
{
    rt_cgroup_alloc_read_at(env, NULL, a);
}

void rt_cgroup_alloc_read_at(const struct rt_sysenv *env, const char *cg, struct rt_alloc *a)
{
    char base[256], rel[2048];
    struct rt_buf text = {0};
    a->cgroup_cpu_cores = RT_NAN;
    a->cgroup_cpuset_cpus = a->cgroup_memory_bytes = RT_NA;
    if (cgroup_text(env, cg, &text) != 0)
        return;
    /* a controller on a v1 hierarchy is on no v2 one: v1 first, then v2 */
    if (v1_dir(env, text.p, "cpu", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_cpu_cores = find_limit(env, base, rel, 0);
    else if (v2_dir(env, text.p, "cgroup.procs", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_cpu_cores = find_limit(env, base, rel, 1);
    if (v1_dir(env, text.p, "cpuset", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_cpuset_cpus = cpuset_cpus(env, base, rel, 0);
    else if (v2_dir(env, text.p, "cgroup.procs", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_cpuset_cpus = cpuset_cpus(env, base, rel, 1);
    if (v1_dir(env, text.p, "memory", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_memory_bytes = memory_limit(env, base, rel, 0);
    else if (v2_dir(env, text.p, "cgroup.procs", base, sizeof(base), rel, sizeof(rel)) == 0)
        a->cgroup_memory_bytes = memory_limit(env, base, rel, 1);
    rt_buf_free(&text);
}

int rt_cgroup_dir(const struct rt_sysenv *env, const char *cg, const char *controller, char *dir,
                  size_t cap)
{
    char base[256], rel[2048];
    struct rt_buf text = {0};
    int rc = -1;
    if (cgroup_text(env, cg, &text) != 0)
        return -1;
    if (controller && v1_dir(env, text.p, controller, base, sizeof(base), rel, sizeof(rel)) == 0)
        rc = 0;
    else if (!controller &&
             v2_dir(env, text.p, "cgroup.procs", base, sizeof(base), rel, sizeof(rel)) == 0)
        rc = 0;
    if (rc == 0 && rt_path(env, dir, cap, "%s%s", base, rel) != 0)
        rc = -1;
    rt_buf_free(&text);
    return rc;
}

/* Whether the cgroup directory `dir` and every cgroup below it hold no process but `self`
 * (which may be in dir itself). A tree too deep or too wide to look through is not. */
static int only_self(const char *dir, pid_t self, int top, int *budget)
{
    char path[4096];
    struct rt_buf b = {0};
    if (--*budget < 0 ||
        (size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path) ||
        rt_read_file(path, &b) < 0) {
        rt_buf_free(&b);
        return 0;
    }
    int ok = 1;
    for (char *l = b.p; ok && l && *l;) {
        int64_t pid;
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        if (*l)
            ok = top && rt_parse_i64(l, &pid) == 0 && pid == self;
        l = nl ? nl + 1 : NULL;
    }
    rt_buf_free(&b);
    DIR *d = ok ? opendir(dir) : NULL;
    if (ok && !d)
        return 0;
    struct dirent *de;
    while (ok && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        struct stat st;
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path) ||
            stat(path, &st) != 0) {
            ok = 0;
            break;
        }
        if (S_ISDIR(st.st_mode))
            ok = only_self(path, self, 0, budget);
    }
    if (d)
        closedir(d);
    return ok;
}

/* The peak file of the memory cgroup of `cg` (NULL: rtrack's own) into p->path, its directory
 * into dir: 0, or -1 when there is none. */
static int peak_file(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_peak *p,
                     char *dir, size_t cap)
{
    char base[256], rel[2048];
    struct rt_buf text = {0};
    int found = 0;
    if (cgroup_text(env, cg, &text) == 0) {
        if (v1_dir(env, text.p, "memory", base, sizeof(base), rel, sizeof(rel)) == 0 &&
            !rt_path(env, dir, cap, "%s%s", base, rel) &&
            (size_t)snprintf(p->path, sizeof(p->path), "%s/memory.max_usage_in_bytes", dir) <
                sizeof(p->path))
            found = 1;
        else if (v2_dir(env, text.p, "memory.peak", base, sizeof(base), rel, sizeof(rel)) == 0 &&
                 !rt_path(env, dir, cap, "%s%s", base, rel) &&
                 (size_t)snprintf(p->path, sizeof(p->path), "%s/memory.peak", dir) <
                     sizeof(p->path))
            found = 1;
    }
    rt_buf_free(&text);
    return found ? 0 : -1;
}

/* The peak's value now into p->start: 0, or -1 (and no peak) when unreadable. */
static int peak_start(struct rt_cgroup_peak *p)
{
    char val[64];
    uint64_t v;
    const char *e;
    if (rt_read_small(p->path, val, sizeof(val)) <= 0 || !(e = rt_parse_u64(val, &v)) || *e ||
        v > INT64_MAX) {
        p->path[0] = '\0';
        return -1;
    }
    p->start = (int64_t)v;
    return 0;
}

int rt_cgroup_peak_open(const struct rt_sysenv *env, pid_t self, struct rt_cgroup_peak *p)
{
    char dir[4096];
    memset(p, 0, sizeof(*p));
    p->start = p->max = RT_NA;
    int budget = 256;
    if (peak_file(env, NULL, p, dir, sizeof(dir)) != 0 || !only_self(dir, self, 1, &budget)) {
        p->path[0] = '\0';
        return -1;
    }
    return peak_start(p);
}

int rt_cgroup_peak_open_at(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_peak *p)
{
    char dir[4096];
    memset(p, 0, sizeof(*p));
    p->start = p->max = RT_NA;
    p->env = env;
    p->cg = cg;
    if (peak_file(env, cg, p, dir, sizeof(dir)) != 0) {
        p->path[0] = '\0';
        p->start = 0; /* not made yet: all of its peak is the run's */
        return -1;
    }
    return peak_start(p);
}

/* The peak file's value now: bytes, or RT_NA. A cgroup made after the start is looked for. */
static int64_t peak_now(struct rt_cgroup_peak *p)
{
    char val[64], dir[4096];
    uint64_t v;
    const char *e;
    if (!p->path[0] && p->cg && p->start == 0 && peak_file(p->env, p->cg, p, dir, sizeof(dir)))
        p->path[0] = '\0';
    if (!p->path[0] || p->start == RT_NA || rt_read_small(p->path, val, sizeof(val)) <= 0 ||
        !(e = rt_parse_u64(val, &v)) || *e || v > INT64_MAX)
        return RT_NA;
    return (int64_t)v;
}

void rt_cgroup_peak_poll(struct rt_cgroup_peak *p)
{
    if (!p->cg)
        return;
    int64_t v = peak_now(p);
    if (v != RT_NA && (p->max == RT_NA || v > p->max))
        p->max = v;
}

int64_t rt_cgroup_peak_end(struct rt_cgroup_peak *p)
{
    int64_t v = peak_now(p);
    if (p->cg && p->max != RT_NA && (v == RT_NA || p->max > v))
        v = p->max; /* (the cgroup may be gone by the end: its last reading) */
    /* a peak that did not grow may be older than the job (the cgroup's earlier tenants) */
    return v != RT_NA && v > p->start ? v : RT_NA;
}
