/* cgroup_step.c - a cgroup that is a job's own, named rather than rtrack's: a Slurm step's
 * (record --cgroup, which the SPANK plugin passes on a node with proctrack/cgroup or
 * task/cgroup). Its processes belong to the recorded tree, found there even where they are
 * not below the tree's root (a task slurmstepd did not start itself, a daemonised grandchild
 * re-parented to init); its OOM kills say which of the step's processes its memory limit cost.
 *
 * Where the processes are listed: the unified (v2) hierarchy, else the first v1 hierarchy
 * that has the cgroup, in the order freezer (proctrack/cgroup keeps every process of a step in
 * its freezer cgroup), memory, pids, cpuacct, cpuset; the cgroup and every cgroup below it
 * (task/cgroup's task_N). The OOM kills: v2's memory.events counts the cgroup's and its
 * descendants' together; v1's memory.oom_control counts each cgroup's own, so the cgroups
 * below it are added, and polled while the step runs: a task's cgroup is gone by its end. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rtrack/collect/collect.h"

/* the directories looked through below a cgroup, at most (a step has one per task) */
#define CG_WALK_MAX 4096

int rt_cgroup_procs_open(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_procs *c)
{
    static const char *const v1[] = {"freezer", "memory", "pids", "cpuacct", "cpuset"};
    c->dir[0] = '\0';
    if (!cg || !*cg)
        return -1;
    if (rt_cgroup_dir(env, cg, NULL, c->dir, sizeof(c->dir)) == 0)
        return 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(v1); i++)
        if (rt_cgroup_dir(env, cg, v1[i], c->dir, sizeof(c->dir)) == 0)
            return 0;
    c->dir[0] = '\0';
    return -1;
}

/* Call fn(dir, ud) for `dir` and every directory below it, depth first; *budget directories at
 * most. */
static void each_cgroup(const char *dir, void (*fn)(const char *dir, void *ud), void *ud,
                        int *budget)
{
    if (--*budget < 0)
        return;
    fn(dir, ud);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    char path[4096];
    while ((de = readdir(d)) && *budget >= 0) {
        if (de->d_name[0] == '.' ||
            (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= sizeof(path))
            continue;
        struct stat st;
        if (de->d_type == DT_DIR ||
            (de->d_type == DT_UNKNOWN && stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
            each_cgroup(path, fn, ud, budget);
    }
    closedir(d);
}

struct pid_list {
    struct rt_buf buf;
    pid_t *pids;
    size_t n, cap;
};

static void add_procs(const char *dir, void *ud)
{
    struct pid_list *l = ud;
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= sizeof(path) ||
        rt_read_file(path, &l->buf) <= 0)
        return;
    for (const char *p = l->buf.p; *p;) {
        char *end;
        long pid = strtol(p, &end, 10);
        if (end == p)
            break;
        p = *end ? end + 1 : end;
        if (pid <= 0 || pid >= 1L << 30)
            continue;
        if (l->n == l->cap) {
            l->cap = l->cap ? l->cap * 2 : 16;
            l->pids = xrealloc(l->pids, l->cap * sizeof(*l->pids));
        }
        l->pids[l->n++] = (pid_t)pid;
    }
}

size_t rt_cgroup_procs_list(const struct rt_cgroup_procs *c, pid_t **pids, size_t *cap)
{
    struct pid_list l = {{0}, *pids, 0, *cap};
    int budget = CG_WALK_MAX;
    if (c->dir[0])
        each_cgroup(c->dir, add_procs, &l, &budget);
    rt_buf_free(&l.buf);
    *pids = l.pids;
    *cap = l.cap;
    return l.n;
}

/* "oom_kill N" of a memory.events (v2) or memory.oom_control (v1) file, RT_NA when none */
static int64_t oom_kill_of(const char *path)
{
    char buf[512];
    uint64_t v;
    if (rt_read_small(path, buf, sizeof(buf)) <= 0)
        return RT_NA;
    for (const char *l = buf; l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (!strncmp(l, "oom_kill ", 9) && rt_parse_u64(l + 9, &v) && v < INT64_MAX)
            return (int64_t)v;
    return RT_NA;
}

static void add_oom(const char *dir, void *ud)
{
    int64_t *sum = ud;
    char path[4096];
    if ((size_t)snprintf(path, sizeof(path), "%s/memory.oom_control", dir) >= sizeof(path))
        return;
    int64_t v = oom_kill_of(path);
    if (v != RT_NA)
        *sum = (*sum == RT_NA ? 0 : *sum) + v;
}

/* The cgroup's OOM kills now (below it included), RT_NA when unknown. */
static int64_t oom_now(const struct rt_cgroup_oom *o)
{
    char path[4096];
    if (o->v2)
        return (size_t)snprintf(path, sizeof(path), "%s/memory.events", o->dir) < sizeof(path)
                   ? oom_kill_of(path)
                   : RT_NA;
    int64_t sum = RT_NA;
    int budget = CG_WALK_MAX;
    each_cgroup(o->dir, add_oom, &sum, &budget);
    return sum;
}

/* The cgroup's memory directory, v1's or else v2's (with memory.events): 0, or -1 */
static int oom_dir(struct rt_cgroup_oom *o)
{
    char path[4200];
    o->v2 = 0;
    if (rt_cgroup_dir(o->env, o->cg, "memory", o->dir, sizeof(o->dir)) == 0)
        return 0;
    if (rt_cgroup_dir(o->env, o->cg, NULL, o->dir, sizeof(o->dir)) == 0 &&
        (size_t)snprintf(path, sizeof(path), "%s/memory.events", o->dir) < sizeof(path) &&
        oom_kill_of(path) != RT_NA) {
        o->v2 = 1;
        return 0;
    }
    o->dir[0] = '\0';
    return -1;
}

int rt_cgroup_oom_open(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_oom *o)
{
    o->start = o->max = RT_NA;
    o->v2 = 0;
    o->dir[0] = '\0';
    o->env = env;
    o->cg = cg;
    if (!cg || !*cg)
        return -1;
    if (oom_dir(o) != 0) {
        o->start = 0; /* not made yet: looked for at each poll */
        return -1;
    }
    o->start = o->max = oom_now(o);
    if (o->start == RT_NA)
        o->dir[0] = '\0';
    return o->start == RT_NA ? -1 : 0;
}

void rt_cgroup_oom_poll(struct rt_cgroup_oom *o)
{
    if (!o->dir[0] && (!o->cg || o->start != 0 || oom_dir(o) != 0))
        return;
    int64_t v = oom_now(o);
    if (v != RT_NA && (o->max == RT_NA || v > o->max))
        o->max = v;
}

int64_t rt_cgroup_oom_end(struct rt_cgroup_oom *o)
{
    rt_cgroup_oom_poll(o);
    return o->start == RT_NA || o->max == RT_NA ? RT_NA : o->max - o->start;
}
