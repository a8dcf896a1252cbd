/* collect.c - the table of collectors and the sample life cycle. */
#include "rtrack/collect/collect.h"

#include "rtrack/collect/gpu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Order matters: /proc/stat is read before the process tree, so the tree's CPU time in an
 * interval can never include ticks the system line has not counted yet (resource-tracker-rs
 * 0.1.8 learned this). */
const struct rt_collector *const rt_collectors_all[RT_NCOLLECTORS] = {
    &rt_collector_cpu, &rt_collector_cgroup, &rt_collector_proc,  &rt_collector_mem,
    &rt_collector_psi, &rt_collector_disk,   &rt_collector_mount, &rt_collector_net,
};

struct rt_collectors {
    const struct rt_sysenv *env;
    void *state[RT_NCOLLECTORS];
    struct rt_gpu *gpu;
    double gpu_timeout;
};

struct rt_collectors *rt_collectors_open(const struct rt_sysenv *env,
                                         const struct rt_collect_cfg *cfg)
{
    struct rt_collectors *c = xcalloc(1, sizeof(*c));
    c->env = env;
    for (size_t i = 0; i < RT_NCOLLECTORS; i++)
        c->state[i] = rt_collectors_all[i]->open(env, cfg);
    c->gpu = rt_gpu_open(env);
    /* A GPU reading that takes longer than half an interval is not waited for. */
    c->gpu_timeout = cfg->interval > 0 ? cfg->interval / 2 : 0.5;
    if (c->gpu_timeout < 0.05)
        c->gpu_timeout = 0.05;
    if (c->gpu_timeout > 2.0)
        c->gpu_timeout = 2.0;
    return c;
}

void rt_collectors_sample(struct rt_collectors *c, struct rt_sample *cur,
                          const struct rt_sample *prev)
{
    for (size_t i = 0; i < RT_NCOLLECTORS; i++) {
        if (c->state[i])
            rt_collectors_all[i]->collect(c->state[i], c->env, cur, prev);
        /* the GPU reading runs beside the remaining collectors, once the tree is known */
        if (rt_collectors_all[i] == &rt_collector_proc)
            rt_gpu_start(c->gpu, cur);
    }
    rt_gpu_finish(c->gpu, cur, c->gpu_timeout);
}

int rt_collectors_gpu_none(struct rt_collectors *c)
{
    return rt_gpu_none(c->gpu);
}

void rt_collectors_close(struct rt_collectors *c)
{
    if (!c)
        return;
    rt_gpu_close(c->gpu);
    for (size_t i = 0; i < RT_NCOLLECTORS; i++)
        if (c->state[i])
            rt_collectors_all[i]->close(c->state[i]);
    free(c);
}
