/* gpu.c - the GPU collector: backends on a worker thread, processes matched to the tree. */
#include "rtrack/collect/gpu.h"

#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"

struct rt_gpu_sample *rt_gpu_reading_add_dev(struct rt_gpu_reading *r,
                                             const struct rt_gpu_ident *ident)
{
    struct rt_gpu_sample *d = RT_PUSH(r->dev, r->ndev, r->dev_cap);
    d->ident = ident;
    d->util_pct = d->mem_util_pct = d->temperature_c = d->power_w = RT_NAN;
    d->vram_used_bytes = d->vram_total_bytes = RT_NA;
    d->clock_graphics_mhz = d->clock_sm_mhz = d->clock_mem_mhz = RT_NA;
    return d;
}

struct rt_gpu_proc *rt_gpu_reading_add_proc(struct rt_gpu_reading *r, pid_t pid, int dev)
{
    struct rt_gpu_proc *p = RT_PUSH(r->procs, r->nproc, r->proc_cap);
    p->pid = pid;
    p->starttime = 0;
    p->dev = dev;
    p->vram_bytes = p->gtt_bytes = RT_NA;
    p->util_pct = p->mem_util_pct = RT_NAN;
    return p;
}

void rt_gpu_reading_clear(struct rt_gpu_reading *r)
{
    r->ndev = 0;
    r->nproc = 0;
}

void rt_gpu_reading_free(struct rt_gpu_reading *r)
{
    free(r->dev);
    free(r->procs);
    memset(r, 0, sizeof(*r));
}

void rt_gpu_ident_free(struct rt_gpu_ident *id)
{
    if (!id)
        return;
    free(id->uuid);
    free(id->name);
    free(id->pci_bus_id);
    free(id->driver_version);
    memset(id, 0, sizeof(*id));
}

/* --- the collector ------------------------------------------------------------------------- */

static const struct rt_gpu_backend *const backends[] = {&rt_gpu_nvml, &rt_gpu_amd};
#define NBACKENDS RT_ARRAY_LEN(backends)

/* The worker owns the backends: it opens them (nvmlInit can take seconds without persistence
 * mode, which must not delay the job's start), reads them when asked, and closes them. The
 * sampler never waits longer than its timeout for it. */
enum { W_OPENING, W_IDLE, W_READING, W_GONE };

struct rt_gpu {
    const struct rt_sysenv *env;
    void *state[NBACKENDS];
    int threaded;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* worker waits for a request */
    pthread_cond_t done_cv; /* sampler waits for the reading */
    int wstate;
    int requested; /* a reading was asked for the sample being taken */
    int ready;     /* ... and it is in `rd` */
    int quit;
    pid_t *pids;
    int npids, pids_cap;
    double mono;
    struct rt_gpu_reading rd;
    struct rt_map tree; /* pid -> index into the sample's procs */
    int warned;
};

static int open_backends(struct rt_gpu *g)
{
    int any = 0;
    for (size_t i = 0; i < NBACKENDS; i++) {
        g->state[i] = backends[i]->open(g->env);
        any |= g->state[i] != NULL;
    }
    return any;
}

static void close_backends(struct rt_gpu *g)
{
    for (size_t i = 0; i < NBACKENDS; i++)
        if (g->state[i])
            backends[i]->close(g->state[i]);
}

static void read_backends(struct rt_gpu *g)
{
    rt_gpu_reading_clear(&g->rd);
    for (size_t i = 0; i < NBACKENDS; i++)
        if (g->state[i])
            backends[i]->read(g->state[i], g->env, g->pids, g->npids, g->mono, &g->rd);
}

static void *worker(void *arg)
{
    struct rt_gpu *g = arg;
    int any = open_backends(g);
    pthread_mutex_lock(&g->mu);
    g->wstate = any ? W_IDLE : W_GONE;
    pthread_cond_broadcast(&g->done_cv);
    while (any) {
        while (!g->quit && g->wstate != W_READING)
            pthread_cond_wait(&g->cv, &g->mu);
        if (g->quit)
            break;
        pthread_mutex_unlock(&g->mu);
        read_backends(g);
        pthread_mutex_lock(&g->mu);
        g->ready = 1;
        g->wstate = W_IDLE;
        pthread_cond_broadcast(&g->done_cv);
    }
    pthread_mutex_unlock(&g->mu);
    if (any)
        close_backends(g);
    return NULL;
}

struct rt_gpu *rt_gpu_open(const struct rt_sysenv *env)
{
    struct rt_gpu *g = xcalloc(1, sizeof(*g));
    g->env = env;
    rt_map_init(&g->tree, 64);
    pthread_mutex_init(&g->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&g->cv, NULL);
    pthread_cond_init(&g->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    int present = 0;
    for (size_t i = 0; i < NBACKENDS; i++)
        present |= backends[i]->present(env);
    if (!present) {
        /* no driver of any vendor: nothing to open, no thread to start (and its memory arena:
         * a part of every `rtrack run`'s start on the many machines without a GPU) */
        g->wstate = W_GONE;
        return g;
    }
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 1 << 20);
    /* All signals stay blocked in the worker (the sampler waits for them on a signalfd). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    g->wstate = W_OPENING;
    int rc = pthread_create(&g->th, &at, worker, g);
    g->threaded = rc == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&at);
    if (!g->threaded) {
        /* no thread to be had (pids.max reached): read inline, unprotected from hangs */
        g->wstate = open_backends(g) ? W_IDLE : W_GONE;
        if (g->wstate == W_IDLE)
            rt_warn("gpu: cannot start the GPU reader thread (%s); GPUs are read without a "
                    "timeout, so a hung driver would delay samples",
                    rt_strerror(rc));
    }
    return g;
}

void rt_gpu_start(struct rt_gpu *g, const struct rt_sample *cur)
{
    pthread_mutex_lock(&g->mu);
    g->requested = 0;
    g->ready = 0;
    if (g->wstate == W_IDLE) {
        g->npids = 0;
        if (cur->has_tree)
            for (int i = 0; i < cur->nprocs; i++)
                *RT_PUSH(g->pids, g->npids, g->pids_cap) = cur->procs[i].pid;
        g->mono = cur->mono;
        g->requested = 1;
        if (g->threaded) {
            g->wstate = W_READING;
            pthread_cond_signal(&g->cv);
        }
    }
    pthread_mutex_unlock(&g->mu);
}

/* Copy the reading into the sample: every device, and the processes of the tracked tree. */
static void take_reading(struct rt_gpu *g, struct rt_sample *cur)
{
    const struct rt_gpu_reading *rd = &g->rd;
    cur->gpu_state = RT_GPU_OK;
    for (int i = 0; i < rd->ndev; i++)
        *RT_PUSH(cur->gpus, cur->ngpus, cur->gpus_cap) = rd->dev[i];
    if (!cur->has_tree || rd->nproc == 0)
        return;
    rt_map_clear(&g->tree);
    for (int i = 0; i < cur->nprocs; i++)
        rt_map_put(&g->tree, (uint64_t)cur->procs[i].pid, i);
    for (int i = 0; i < rd->nproc; i++) {
        int64_t k;
        if (!rt_map_get(&g->tree, (uint64_t)rd->procs[i].pid, &k))
            continue;
        struct rt_gpu_proc *p = RT_PUSH(cur->gpu_procs, cur->ngpu_procs, cur->gpu_procs_cap);
        *p = rd->procs[i];
        p->starttime = cur->procs[k].starttime;
    }
}

void rt_gpu_finish(struct rt_gpu *g, struct rt_sample *cur, double timeout)
{
    pthread_mutex_lock(&g->mu);
    if (!g->requested) {
        /* still opening (the baseline of a run on a slow driver), no GPU, or a reading that
         * did not come back yet */
        cur->gpu_state = g->wstate == W_READING ? RT_GPU_MISSED : RT_GPU_NONE;
        pthread_mutex_unlock(&g->mu);
        return;
    }
    if (!g->threaded) {
        read_backends(g);
        g->ready = 1;
    }
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    double t = dl.tv_sec + dl.tv_nsec / 1e9 + timeout;
    dl.tv_sec = (time_t)t;
    dl.tv_nsec = (long)((t - (double)dl.tv_sec) * 1e9);
    while (!g->ready)
        if (pthread_cond_timedwait(&g->done_cv, &g->mu, &dl) != 0)
            break;
    if (g->ready) {
        take_reading(g, cur);
    } else {
        cur->gpu_state = RT_GPU_MISSED;
        if (!g->warned) {
            rt_warn("gpu: the GPU driver did not answer within %.2f s; samples are recorded "
                    "without GPU values until it does",
                    timeout);
            g->warned = 1;
        }
    }
    g->requested = 0;
    pthread_mutex_unlock(&g->mu);
}

int rt_gpu_none(struct rt_gpu *g)
{
    if (!g)
        return 1;
    pthread_mutex_lock(&g->mu);
    int none = g->wstate == W_GONE;
    pthread_mutex_unlock(&g->mu);
    return none;
}

void rt_gpu_close(struct rt_gpu *g)
{
    if (!g)
        return;
    if (g->threaded) {
        pthread_mutex_lock(&g->mu);
        g->quit = 1;
        pthread_cond_signal(&g->cv);
        /* give a slow nvmlInit or an unfinished reading a moment to end */
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        dl.tv_sec += 2;
        while (g->wstate == W_OPENING || g->wstate == W_READING)
            if (pthread_cond_timedwait(&g->done_cv, &g->mu, &dl) != 0)
                break;
        int hung = g->wstate == W_OPENING || g->wstate == W_READING;
        pthread_mutex_unlock(&g->mu);
        if (hung) {
            /* a driver call that never returns: leave the worker to the process's end (an
             * _exit: the driver library's clean-up must not run under it); its memory is not
             * freed, since it may still be touched */
            pthread_detach(g->th);
            rt_thread_left();
            return;
        }
        pthread_join(g->th, NULL);
    } else if (g->wstate != W_GONE) {
        close_backends(g);
    }
    rt_gpu_reading_free(&g->rd);
    rt_map_free(&g->tree);
    free(g->pids);
    pthread_mutex_destroy(&g->mu);
    pthread_cond_destroy(&g->cv);
    pthread_cond_destroy(&g->done_cv);
    free(g);
}
