/* gpu.h - GPU backends: NVIDIA through NVML (dlopen'ed at run time, no build-time driver
 * dependency) and AMD through sysfs and DRM fdinfo.
 *
 * A backend reads its devices and the processes using them into an rt_gpu_reading. The GPU
 * collector (gpu.c) runs the backends on a worker thread, so a driver call that hangs never
 * stops CPU and memory recording, and matches the processes against the tracked tree. */
#ifndef RTRACK_GPU_H
#define RTRACK_GPU_H

#include <sys/types.h>

#include "rtrack/collect/collect.h"
#include "rtrack/sample/sample.h"

/* What the backends saw in one reading. Device identities stay owned by their backend. */
struct rt_gpu_reading {
    int ndev, dev_cap;
    struct rt_gpu_sample *dev;
    int nproc, proc_cap;
    struct rt_gpu_proc *procs; /* every process seen, any owner; dev indexes `dev` */
};

struct rt_gpu_backend {
    const char *name;
    /* Whether open() could find a device here, from the existence of a file or two (the
     * driver's): no library loaded, nothing that can hang. 0 on most machines, which then
     * start no GPU thread at all. */
    int (*present)(const struct rt_sysenv *env);
    /* Probe. NULL when this vendor has no usable device here (no driver, no library, init
     * failure): silently, since most machines have no GPU. */
    void *(*open)(const struct rt_sysenv *env);
    /* Append this backend's devices (always all of them, in the same order every time) and
     * the processes using them to `r`. `pids`: the tracked tree (npids may be 0); backends
     * that must scan per process (AMD fdinfo) look only at these. `mono`: CLOCK_MONOTONIC
     * seconds now, for per-interval rates. Values that cannot be read are RT_NA / NAN. */
    void (*read)(void *state, const struct rt_sysenv *env, const pid_t *pids, int npids,
                 double mono, struct rt_gpu_reading *r);
    void (*close)(void *state);
};

extern const struct rt_gpu_backend rt_gpu_nvml;
/* The NVML library the NVIDIA backend loads (RTLD_NOW | RTLD_LOCAL): `explicit` when given
 * (RTRACK_NVML_LIBRARY), else libnvidia-ml.so.1 or libnvidia-ml.so. NULL when it cannot be
 * loaded, with dlerror()'s reason in `why` when one was named (else "": no driver, nothing to
 * say). */
void *rt_nvml_open_library(const char *explicit, char *why, size_t whylen);
extern const struct rt_gpu_backend rt_gpu_amd;

/* Add one device to a reading (fields set to unknown, ident set) and return it. */
struct rt_gpu_sample *rt_gpu_reading_add_dev(struct rt_gpu_reading *r,
                                             const struct rt_gpu_ident *ident);
/* Add one process (fields set to unknown, pid and dev set) and return it. */
struct rt_gpu_proc *rt_gpu_reading_add_proc(struct rt_gpu_reading *r, pid_t pid, int dev);
void rt_gpu_reading_clear(struct rt_gpu_reading *r);
void rt_gpu_reading_free(struct rt_gpu_reading *r);
void rt_gpu_ident_free(struct rt_gpu_ident *id);

/* The GPU collector: every available backend, on a worker thread; no thread where no backend is
 * present(), and then no GPU values in any sample. */
struct rt_gpu;
struct rt_gpu *rt_gpu_open(const struct rt_sysenv *env);
/* Start a reading for the sample being taken (the tree's pids are copied). */
void rt_gpu_start(struct rt_gpu *g, const struct rt_sample *cur);
/* Wait for that reading (at most `timeout` seconds) and put it into `cur`: every device, and
 * the processes of the tracked tree. A reading that does not come in time leaves the sample
 * without GPU values (gpu_state RT_GPU_MISSED), warns once, and is not waited for again
 * until it has come back. */
void rt_gpu_finish(struct rt_gpu *g, struct rt_sample *cur, double timeout);
/* Whether it is known that no GPU will be read: no vendor's driver, or every backend opened
 * and found none. 0 while they are still opening, and where GPUs are read. */
int rt_gpu_none(struct rt_gpu *g);
void rt_gpu_close(struct rt_gpu *g);

#endif
