/* gpu_nvml.c - NVIDIA GPUs through NVML, loaded with dlopen at run time.
 *
 * No build-time driver dependency: the few NVML types are declared here (nvtop's way), with the
 * values of nvml.h (NVML_API_VERSION 11/12). Functions that exist in several versions are
 * looked up newest first, each with its own struct layout; a query that answers "not
 * supported" once is not asked again for that device. Unknown values stay unknown (NULL in
 * the database), never 0. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "rtrack/collect/gpu.h"
#include "rtrack/base/log.h"
#include "rtrack/base/util.h"

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_GPU_IS_LOST = 15,
};
enum { NVML_TEMPERATURE_GPU = 0 };
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
#define NVML_BUFFER_SIZE         96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE, ..._UUID_V2_... */
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

typedef struct {
    unsigned gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: the driver's reservation apart from what allocations use (the
 * v1 query counts it as used: 615 MiB on an idle H200, where nvidia-smi says 0) */
typedef struct {
    unsigned version;
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
#define NVML_MEMORY_V2_VERSION ((unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))

/* nvmlDeviceGetPciInfo_v2 and _v3 */
typedef struct {
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

/* the unversioned nvmlDeviceGet*RunningProcesses */
typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* _v2 and _v3 */
typedef struct {
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct {
    unsigned pid;
    unsigned long long timeStamp; /* µs, wall clock */
    unsigned smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

typedef nvmlReturn_t (*proclist_fn)(nvmlDevice_t, unsigned *, void *);

struct nvml_api {
    void *lib;
    nvmlReturn_t (*init)(void);
    nvmlReturn_t (*shutdown)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*driver_version)(char *, unsigned);
    nvmlReturn_t (*count)(unsigned *);
    nvmlReturn_t (*handle)(unsigned, nvmlDevice_t *);
    nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned);
    nvmlReturn_t (*pci)(nvmlDevice_t, nvmlPciInfo_t *);
    nvmlReturn_t (*cores)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*util)(nvmlDevice_t, nvmlUtilization_t *);
    nvmlReturn_t (*mem)(nvmlDevice_t, nvmlMemory_t *);
    nvmlReturn_t (*mem2)(nvmlDevice_t, nvmlMemory_v2_t *);
    nvmlReturn_t (*temp)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    proclist_fn procs[2]; /* compute, graphics */
    size_t proc_size[2];  /* sizeof the struct the chosen version fills */
    nvmlReturn_t (*proc_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned *,
                              unsigned long long);
};

/* Per-device queries, as bits: set once a query answered "not supported" / "no permission". */
enum {
    Q_UTIL = 1 << 0,
    Q_MEM = 1 << 1,
    Q_TEMP = 1 << 2,
    Q_POWER = 1 << 3,
    Q_CLK_GR = 1 << 4,
    Q_CLK_SM = 1 << 5,
    Q_CLK_MEM = 1 << 6,
    Q_PROCS_C = 1 << 7,
    Q_PROCS_G = 1 << 8,
    Q_PROC_UTIL = 1 << 9,
};

#define PROC_UTIL_PERIOD 0.95 /* s: a 1 s interval queries every sample */

struct util_cache {
    pid_t pid;
    double sm, mem;
};

struct nvml_dev {
    nvmlDevice_t h;
    struct rt_gpu_ident id;
    unsigned skip;           /* Q_* bits not to ask again */
    int lost;                /* the driver said the GPU is lost: not asked again */
    int mem_v1;              /* the v2 memory query failed once: use v1 */
    double util_at;          /* when process utilization was last queried (mono s) */
    int ncached, cached_cap; /* ... and what it said, per pid */
    struct util_cache *cached;
    unsigned long long last_seen; /* newest process-utilization sample taken, µs */
};

struct nvml {
    struct nvml_api api;
    int ndev;
    struct nvml_dev *dev;
    unsigned char *buf; /* process lists */
    size_t buf_cap;
    nvmlProcessUtilizationSample_t *us;
    unsigned us_cap;
};

static void *sym(void *lib, const char *const *names, int *which)
{
    for (int i = 0; names[i]; i++) {
        void *p = dlsym(lib, names[i]);
        if (p) {
            if (which)
                *which = i;
            return p;
        }
    }
    return NULL;
}

#define SYM(lib, ...) sym((lib), (const char *const[]){__VA_ARGS__, NULL}, NULL)

void *rt_nvml_open_library(const char *explicit, char *why, size_t whylen)
{
    if (whylen)
        why[0] = '\0';
    if (explicit && *explicit) {
        void *lib = dlopen(explicit, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *e = dlerror();
            snprintf(why, whylen, "%s", e ? e : "unknown error");
        }
        return lib;
    }
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        lib = dlopen("libnvidia-ml.so", RTLD_NOW | RTLD_LOCAL);
    return lib; /* NULL: no NVIDIA driver, the common case, nothing to say */
}

/* Whether an NVIDIA driver is there to talk to: its kernel module (/proc/driver/nvidia, which
 * NVML itself needs to create missing device nodes), its control device, or WSL's GPU device.
 * Without any, NVML's init could only fail: a recorder skips looking the library up (the
 * dynamic loader's search of every library directory, a part of each `rtrack run`'s start). */
static int nvidia_driver_present(void)
{
    static const char *const where[] = {"/proc/driver/nvidia", "/dev/nvidiactl", "/dev/dxg"};
    for (size_t i = 0; i < RT_ARRAY_LEN(where); i++)
        if (access(where[i], F_OK) == 0)
            return 1;
    return 0;
}

/* A library named by RTRACK_NVML_LIBRARY, or the driver there: worth loading NVML for. A
 * fixture root has no live driver. */
static int nvml_present(const struct rt_sysenv *env)
{
    if (*env->root)
        return 0;
    return (env->nvml_library && *env->nvml_library) || nvidia_driver_present();
}

static int load(struct nvml_api *a, const char *explicit)
{
    char why[512];
    if (!(explicit && *explicit) && !nvidia_driver_present()) {
        a->lib = NULL;
        return -1;
    }
    a->lib = rt_nvml_open_library(explicit, why, sizeof(why));
    if (!a->lib) {
        if (why[0]) /* asked for by name: say why it is not used */
            rt_warn("gpu: cannot load NVML library '%s' (RTRACK_NVML_LIBRARY): %s", explicit, why);
        return -1;
    }
    void *l = a->lib;
    *(void **)&a->init = SYM(l, "nvmlInit_v2", "nvmlInit");
    *(void **)&a->shutdown = SYM(l, "nvmlShutdown");
    *(void **)&a->error_string = SYM(l, "nvmlErrorString");
    *(void **)&a->driver_version = SYM(l, "nvmlSystemGetDriverVersion");
    *(void **)&a->count = SYM(l, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    *(void **)&a->handle = SYM(l, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    *(void **)&a->name = SYM(l, "nvmlDeviceGetName");
    *(void **)&a->uuid = SYM(l, "nvmlDeviceGetUUID");
    *(void **)&a->pci = SYM(l, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2");
    *(void **)&a->cores = SYM(l, "nvmlDeviceGetNumGpuCores");
    *(void **)&a->util = SYM(l, "nvmlDeviceGetUtilizationRates");
    *(void **)&a->mem = SYM(l, "nvmlDeviceGetMemoryInfo");
    *(void **)&a->mem2 = SYM(l, "nvmlDeviceGetMemoryInfo_v2");
    *(void **)&a->temp = SYM(l, "nvmlDeviceGetTemperature");
    *(void **)&a->power = SYM(l, "nvmlDeviceGetPowerUsage");
    *(void **)&a->clock = SYM(l, "nvmlDeviceGetClockInfo");
    *(void **)&a->proc_util = SYM(l, "nvmlDeviceGetProcessUtilization");
    /* _v3 and _v2 fill the 24-byte struct, the unversioned function the 16-byte v1 one:
     * mixing them up would read garbage pids. */
    static const char *const lists[2][4] = {
        {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
         "nvmlDeviceGetComputeRunningProcesses", NULL},
        {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
         "nvmlDeviceGetGraphicsRunningProcesses", NULL},
    };
    for (int k = 0; k < 2; k++) {
        int which = 0;
        *(void **)&a->procs[k] = sym(l, lists[k], &which);
        a->proc_size[k] = which == 2 ? sizeof(nvmlProcessInfo_v1_t) : sizeof(nvmlProcessInfo_v2_t);
    }
    if (!a->init || !a->count || !a->handle) {
        dlclose(l);
        a->lib = NULL;
        return -1;
    }
    return 0;
}

static char *str_or_null(nvmlReturn_t rc, const char *s)
{
    return rc == NVML_SUCCESS && s[0] ? xstrdup(s) : NULL;
}

/* Device memory: the v2 query where the driver has it, else v1 (reservation counted as used). */
static nvmlReturn_t memory_info(struct nvml *n, struct nvml_dev *d, int64_t *used, int64_t *total)
{
    const struct nvml_api *a = &n->api;
    if (a->mem2 && !d->mem_v1) {
        nvmlMemory_v2_t m;
        memset(&m, 0, sizeof(m));
        m.version = NVML_MEMORY_V2_VERSION;
        nvmlReturn_t rc = a->mem2(d->h, &m);
        if (rc == NVML_SUCCESS) {
            *used = (int64_t)m.used;
            *total = (int64_t)m.total;
            return rc;
        }
        if (rc == NVML_ERROR_GPU_IS_LOST)
            return rc;
        d->mem_v1 = 1; /* not this driver's: v1 from now on */
    }
    if (!a->mem)
        return NVML_ERROR_NOT_SUPPORTED;
    nvmlMemory_t m;
    nvmlReturn_t rc = a->mem(d->h, &m);
    if (rc == NVML_SUCCESS) {
        *used = (int64_t)m.used;
        *total = (int64_t)m.total;
    }
    return rc;
}

static void *nvml_open(const struct rt_sysenv *env)
{
    if (*env->root)
        return NULL; /* NVML reads the live driver; a fixture root has none */
    struct nvml *n = xcalloc(1, sizeof(*n));
    struct nvml_api *a = &n->api;
    if (load(a, env->nvml_library) != 0)
        goto fail;
    if (a->init() != NVML_SUCCESS)
        goto fail_close; /* driver not loaded, no device: silently no NVIDIA backend */
    unsigned count = 0;
    if (a->count(&count) != NVML_SUCCESS || count == 0) {
        if (a->shutdown)
            a->shutdown();
        goto fail_close;
    }
    char driver[NVML_BUFFER_SIZE] = "";
    nvmlReturn_t drc = a->driver_version ? a->driver_version(driver, sizeof(driver)) : -1;
    n->dev = xcalloc(count, sizeof(*n->dev));
    for (unsigned i = 0; i < count; i++) {
        struct nvml_dev *d = &n->dev[n->ndev];
        if (a->handle(i, &d->h) != NVML_SUCCESS)
            continue; /* no permission on this one (cgroup device rules): leave it out */
        struct rt_gpu_ident *id = &d->id;
        id->vendor = "nvidia";
        id->index = (int)i;
        id->vram_total_bytes = id->core_count = RT_NA;
        char buf[NVML_BUFFER_SIZE];
        if (a->name) {
            buf[0] = '\0';
            id->name = str_or_null(a->name(d->h, buf, sizeof(buf)), buf);
        }
        if (a->uuid) {
            buf[0] = '\0';
            id->uuid = str_or_null(a->uuid(d->h, buf, sizeof(buf)), buf);
        }
        nvmlPciInfo_t pci;
        memset(&pci, 0, sizeof(pci));
        if (a->pci && a->pci(d->h, &pci) == NVML_SUCCESS) {
            pci.busId[sizeof(pci.busId) - 1] = '\0';
            if (pci.busId[0])
                id->pci_bus_id = xstrdup(pci.busId);
        }
        unsigned cores;
        if (a->cores && a->cores(d->h, &cores) == NVML_SUCCESS)
            id->core_count = cores;
        int64_t used, total;
        if (memory_info(n, d, &used, &total) == NVML_SUCCESS)
            id->vram_total_bytes = total;
        id->driver_version = str_or_null(drc, driver);
        n->ndev++;
    }
    if (n->ndev == 0) {
        if (a->shutdown)
            a->shutdown();
        goto fail_close;
    }
    return n;
fail_close:
    free(n->dev);
    dlclose(a->lib);
fail:
    free(n);
    return NULL;
}

static const char *errstr(const struct nvml *n, nvmlReturn_t rc)
{
    const char *s = n->api.error_string ? n->api.error_string(rc) : NULL;
    return s ? s : "unknown error";
}

/* A query's answer: 1 = value, 0 = no value this time; remembers what will never answer. */
static int answered(struct nvml *n, struct nvml_dev *d, nvmlReturn_t rc, unsigned q)
{
    if (rc == NVML_SUCCESS)
        return 1;
    if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_NO_PERMISSION)
        d->skip |= q;
    else if (rc == NVML_ERROR_GPU_IS_LOST && !d->lost) {
        d->lost = 1;
        rt_warn("gpu: %s %d (%s) %s; its values are recorded as unknown from now on", d->id.vendor,
                d->id.index, d->id.uuid ? d->id.uuid : "no uuid", errstr(n, rc));
    }
    return 0;
}

static int clock_mhz(struct nvml *n, struct nvml_dev *d, int type, unsigned q, int64_t *out)
{
    unsigned v;
    if (!(d->skip & q) && !d->lost && answered(n, d, n->api.clock(d->h, type, &v), q))
        *out = v;
    return 0;
}

/* One process list (compute or graphics) with NVML's count protocol: ask, and when the list
 * grew between the size answer and the call, ask again with room to spare. */
static int get_list(struct nvml *n, struct nvml_dev *d, int k, unsigned *count)
{
    proclist_fn f = n->api.procs[k];
    size_t sz = n->api.proc_size[k];
    for (int tries = 0; tries < 8; tries++) {
        unsigned c = (unsigned)(n->buf_cap / sz);
        nvmlReturn_t rc = f(d->h, &c, n->buf);
        if (rc == NVML_SUCCESS) {
            *count = c;
            return 0;
        }
        if (rc != NVML_ERROR_INSUFFICIENT_SIZE) {
            answered(n, d, rc, k == 0 ? Q_PROCS_C : Q_PROCS_G);
            return -1;
        }
        size_t want = ((size_t)c + 8) * sizeof(nvmlProcessInfo_v2_t);
        if (want > n->buf_cap) {
            n->buf_cap = want;
            n->buf = xrealloc(n->buf, want);
        }
    }
    return -1;
}

/* SM utilization per process: the mean of the driver's samples taken since the last query
 * (not just the newest one, which is what the references report). A listed process without a
 * sample was idle. */
static void proc_util(struct nvml *n, struct nvml_dev *d, struct rt_gpu_reading *r, int first)
{
    unsigned long long since = d->last_seen;
    if (since == 0) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        since = (unsigned long long)tv.tv_sec * 1000000ULL + (unsigned long long)tv.tv_usec -
                1000000ULL;
    }
    unsigned c = 0;
    nvmlReturn_t rc = NVML_ERROR_INSUFFICIENT_SIZE;
    for (int tries = 0; tries < 8 && rc == NVML_ERROR_INSUFFICIENT_SIZE; tries++) {
        c = n->us_cap;
        rc = n->api.proc_util(d->h, n->us_cap ? n->us : NULL, &c, since);
        if (rc == NVML_ERROR_INSUFFICIENT_SIZE) {
            n->us_cap = c + 16;
            n->us = xrealloc(n->us, n->us_cap * sizeof(*n->us));
        }
    }
    if (rc == NVML_ERROR_NOT_FOUND)
        c = 0; /* no samples since `since`: nothing ran */
    else if (rc != NVML_SUCCESS) {
        answered(n, d, rc, Q_PROC_UTIL);
        return;
    }
    for (int j = first; j < r->nproc; j++) {
        struct rt_gpu_proc *p = &r->procs[j];
        double sm = 0, mem = 0;
        int ns = 0;
        for (unsigned i = 0; i < c; i++) {
            const nvmlProcessUtilizationSample_t *u = &n->us[i];
            /* drivers have been seen returning stale and >100 % samples (nvtop #110) */
            if ((pid_t)u->pid != p->pid || u->timeStamp <= since || u->smUtil > 100 ||
                u->memUtil > 100)
                continue;
            sm += u->smUtil;
            mem += u->memUtil;
            ns++;
        }
        p->util_pct = ns ? sm / ns : 0.0;
        p->mem_util_pct = ns ? mem / ns : 0.0;
    }
    for (unsigned i = 0; i < c; i++)
        if (n->us[i].timeStamp > d->last_seen)
            d->last_seen = n->us[i].timeStamp;
    if (d->last_seen < since)
        d->last_seen = since;
}

static void read_procs(struct nvml *n, struct nvml_dev *d, int dev, const pid_t *pids, int npids,
                       double mono, struct rt_gpu_reading *r)
{
    int first = r->nproc;
    int listed = 0;
    for (int k = 0; k < 2; k++) {
        unsigned q = k == 0 ? Q_PROCS_C : Q_PROCS_G;
        unsigned count;
        if (!n->api.procs[k] || (d->skip & q) || d->lost || get_list(n, d, k, &count) != 0)
            continue;
        listed = 1;
        size_t sz = n->api.proc_size[k];
        for (unsigned i = 0; i < count; i++) {
            const unsigned char *e = n->buf + i * sz;
            unsigned pid;
            unsigned long long used;
            if (sz == sizeof(nvmlProcessInfo_v1_t)) {
                const nvmlProcessInfo_v1_t *p = (const void *)e;
                pid = p->pid;
                used = p->usedGpuMemory;
            } else {
                const nvmlProcessInfo_v2_t *p = (const void *)e;
                pid = p->pid;
                used = p->usedGpuMemory;
            }
            int64_t vram = used == NVML_VALUE_NOT_AVAILABLE ? RT_NA : (int64_t)used;
            /* a process in both lists is one process (the Rust reference counts it twice) */
            struct rt_gpu_proc *p = NULL;
            for (int j = first; j < r->nproc; j++)
                if (r->procs[j].pid == (pid_t)pid) {
                    p = &r->procs[j];
                    break;
                }
            if (!p) {
                p = rt_gpu_reading_add_proc(r, (pid_t)pid, dev);
                p->vram_bytes = vram;
            } else if (vram != RT_NA && (p->vram_bytes == RT_NA || vram > p->vram_bytes)) {
                p->vram_bytes = vram;
            }
        }
    }
    if (!listed || r->nproc == first || !n->api.proc_util || (d->skip & Q_PROC_UTIL) || d->lost)
        return;
    /* nvmlDeviceGetProcessUtilization costs about 2 ms of CPU per call (H200, driver 580),
     * a hundred times any other query: it is made only for a GPU the tracked tree has a
     * process on, and at most once a second; samples in between carry that mean. */
    int ours = 0;
    for (int j = first; j < r->nproc && !ours; j++)
        for (int t = 0; t < npids && !ours; t++)
            ours = r->procs[j].pid == pids[t];
    if (!ours)
        return;
    if (d->util_at > 0 && mono - d->util_at < PROC_UTIL_PERIOD) {
        for (int j = first; j < r->nproc; j++)
            for (int c = 0; c < d->ncached; c++)
                if (d->cached[c].pid == r->procs[j].pid) {
                    r->procs[j].util_pct = d->cached[c].sm;
                    r->procs[j].mem_util_pct = d->cached[c].mem;
                }
        return;
    }
    proc_util(n, d, r, first);
    d->util_at = mono;
    d->ncached = 0;
    for (int j = first; j < r->nproc; j++) {
        if (isnan(r->procs[j].util_pct))
            continue;
        struct util_cache *c = RT_PUSH(d->cached, d->ncached, d->cached_cap);
        c->pid = r->procs[j].pid;
        c->sm = r->procs[j].util_pct;
        c->mem = r->procs[j].mem_util_pct;
    }
}

static void nvml_read(void *state, const struct rt_sysenv *env, const pid_t *pids, int npids,
                      double mono, struct rt_gpu_reading *r)
{
    (void)env;
    struct nvml *n = state;
    const struct nvml_api *a = &n->api;
    for (int i = 0; i < n->ndev; i++) {
        struct nvml_dev *d = &n->dev[i];
        int dev = r->ndev;
        struct rt_gpu_sample *g = rt_gpu_reading_add_dev(r, &d->id);
        nvmlUtilization_t u;
        if (a->util && !(d->skip & Q_UTIL) && !d->lost &&
            answered(n, d, a->util(d->h, &u), Q_UTIL)) {
            g->util_pct = u.gpu;
            g->mem_util_pct = u.memory;
        }
        int64_t used, total;
        if (!(d->skip & Q_MEM) && !d->lost &&
            answered(n, d, memory_info(n, d, &used, &total), Q_MEM)) {
            g->vram_used_bytes = used;
            g->vram_total_bytes = total;
        }
        unsigned v;
        if (a->temp && !(d->skip & Q_TEMP) && !d->lost &&
            answered(n, d, a->temp(d->h, NVML_TEMPERATURE_GPU, &v), Q_TEMP))
            g->temperature_c = v;
        if (a->power && !(d->skip & Q_POWER) && !d->lost &&
            answered(n, d, a->power(d->h, &v), Q_POWER))
            g->power_w = v / 1000.0;
        if (a->clock) {
            clock_mhz(n, d, NVML_CLOCK_GRAPHICS, Q_CLK_GR, &g->clock_graphics_mhz);
            clock_mhz(n, d, NVML_CLOCK_SM, Q_CLK_SM, &g->clock_sm_mhz);
            clock_mhz(n, d, NVML_CLOCK_MEM, Q_CLK_MEM, &g->clock_mem_mhz);
        }
        int first_proc = r->nproc;
        read_procs(n, d, dev, pids, npids, mono, r);
        if (d->lost) {
            /* what was read before the loss was noticed in this round is dropped too */
            r->ndev = dev;
            r->nproc = first_proc;
            rt_gpu_reading_add_dev(r, &d->id);
        }
    }
}

static void nvml_close(void *state)
{
    struct nvml *n = state;
    if (!n)
        return;
    if (n->api.shutdown)
        n->api.shutdown();
    for (int i = 0; i < n->ndev; i++) {
        rt_gpu_ident_free(&n->dev[i].id);
        free(n->dev[i].cached);
    }
    free(n->dev);
    free(n->buf);
    free(n->us);
    dlclose(n->api.lib);
    free(n);
}

const struct rt_gpu_backend rt_gpu_nvml = {"nvml", nvml_present, nvml_open, nvml_read, nvml_close};
