/* fake_nvml.c - a fake libnvidia-ml.so.1 for the GPU collector's tests: no GPU, no driver.
 *
 * Declares the few NVML types itself (nvml.h is non-free and not installed). Built twice:
 *   fake_nvml         full/libnvidia-ml.so.1    the _v2/_v3 API plus the unversioned symbols
 *   fake_nvml_legacy  legacy/libnvidia-ml.so.1  -DFAKE_NVML_LEGACY: unversioned symbols only (no
 *                                               _v2/_v3, PciInfo, NumGpuCores, ProcessUtilization)
 *
 * Behaviour, from environment variables (read at the 0->1 nvmlInit unless noted):
 *   FAKE_NVML_GPUS=N           device count, default 1, clamped to 0..64
 *   FAKE_NVML_FAIL_INIT=1      nvmlInit/_v2 return DRIVER_NOT_LOADED (read at every init call)
 *   FAKE_NVML_UTIL=a,b,c       gpu utilization of device 0,1,2 (empty/missing: default)
 *   FAKE_NVML_NOT_SUPPORTED=   comma list of power,temperature,clocks,utilization,memory,pci,
 *                              cores,name,uuid,processes,procutil -> NOT_SUPPORTED, all devices
 *   FAKE_NVML_PROC_FILE=path   read at every process-list / process-utilization / memory call;
 *                              lines "gpu pid used_mib sm_util mem_util type", '#' comments;
 *                              used_mib/sm_util/mem_util may be '-', type C, G or CG; trailing
 *                              fields may be left out (they default to '-', '-', '-', C)
 *   FAKE_NVML_RACE=1           the first INSUFFICIENT_SIZE per device and list (compute, graphics)
 *                              adds a phantom process (pid 4000000+gpu, 1 MiB) to that list for
 *                              the rest of the process's life: the list grew after the size query
 *   FAKE_NVML_LOST=dev:after[,dev:after...]  once nvmlDeviceGetUtilizationRates has been called
 *                              `after` times on `dev`, every call on that device -> GPU_IS_LOST
 *   FAKE_NVML_HANG_AFTER=N     the (N+1)th nvmlDeviceGetUtilizationRates call (all devices
 *                              together) never returns
 *   FAKE_NVML_DELAY_US=k       every device call sleeps k microseconds first
 *   FAKE_NVML_INIT_MS=k        (read at every init call) nvmlInit/_v2 take k milliseconds, as
 *                              a real driver without persistence mode can
 *   FAKE_NVML_CALLS=path       (read at every call) append each exported function's name to path
 *
 * Device i: name "NVIDIA Fake GPU i", uuid GPU-fa4e0000-0000-0000-0000-%012d, PCI bus 0x10+i,
 * 6912+i cores, utilization gpu 20+10*i (max 100) memory 5+i, 80 GiB memory of which (i+1) GiB
 * plus its processes' memory are used, 40+i C, 100000+1000*i mW, clocks graphics 1500+i,
 * SM 1400+i, memory 2600+i MHz. Driver version "550.00-fake".
 *
 * No mutex: counters and flags are C11 atomics; configuration is written only by the 0->1
 * nvmlInit. Safe for a client that calls from one thread (or initializes before sharing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* --- NVML's types, as in nvml.h (API version 11/12) --------------------------------------------
 */

typedef enum nvmlReturn_enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999
} nvmlReturn_t;

typedef struct nvmlDevice_st *nvmlDevice_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct {
    unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t; /* == nvmlProcessInfo_v3_t */

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp; /* microseconds since the epoch */
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

#define NVML_VALUE_NOT_AVAILABLE ((unsigned long long)-1)
#define NVML_TEMPERATURE_GPU     0
#define NVML_CLOCK_GRAPHICS      0
#define NVML_CLOCK_SM            1
#define NVML_CLOCK_MEM           2

_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "v1 process info is 16 bytes");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24, "v2/v3 process info is 24 bytes");
_Static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t v2/v3 layout");

/* --- the exported API ------------------------------------------------------------------------- */

#define FAKE_API __attribute__((visibility("default")))

FAKE_API nvmlReturn_t nvmlInit(void);
FAKE_API nvmlReturn_t nvmlShutdown(void);
FAKE_API const char *nvmlErrorString(nvmlReturn_t result);
FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetCount(unsigned int *count);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
FAKE_API nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u);
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
#ifndef FAKE_NVML_LEGACY
typedef struct {
    unsigned int version; /* sizeof(nvmlMemory_v2_t) | 2 << 24 */
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
#endif
FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *t);
FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
                                                           unsigned int *infoCount,
                                                           nvmlProcessInfo_v1_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device,
                                                            unsigned int *infoCount,
                                                            nvmlProcessInfo_v1_t *infos);
#ifndef FAKE_NVML_LEGACY
FAKE_API nvmlReturn_t nvmlInit_v2(void);
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
FAKE_API nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                              unsigned int *infoCount,
                                                              nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                               unsigned int *infoCount,
                                                               nvmlProcessInfo_v2_t *infos);
FAKE_API nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                                      nvmlProcessUtilizationSample_t *utilization,
                                                      unsigned int *processSamplesCount,
                                                      unsigned long long lastSeenTimeStamp);
#endif

/* --- state ------------------------------------------------------------------------------------ */

#define MAX_GPUS         64
#define MIB              1048576ULL
#define GIB              (1024ULL * MIB)
#define TOTAL_MEM        (80ULL * GIB)
#define PHANTOM_PID_BASE 4000000u

enum { LIST_COMPUTE = 0, LIST_GRAPHICS = 1 };
#define IN_COMPUTE  (1u << LIST_COMPUTE)
#define IN_GRAPHICS (1u << LIST_GRAPHICS)

enum {
    NS_POWER = 1 << 0,
    NS_TEMPERATURE = 1 << 1,
    NS_CLOCKS = 1 << 2,
    NS_UTILIZATION = 1 << 3,
    NS_MEMORY = 1 << 4,
    NS_PCI = 1 << 5,
    NS_CORES = 1 << 6,
    NS_NAME = 1 << 7,
    NS_UUID = 1 << 8,
    NS_PROCESSES = 1 << 9,
    NS_PROCUTIL = 1 << 10,
};

struct nvmlDevice_st {
    unsigned int index;
    unsigned int gpu_util; /* set at init */
    int lost;              /* set at init: FAKE_NVML_LOST names this device */
    unsigned int lost_after;
    /* for the process's whole life, across nvmlShutdown/nvmlInit */
    atomic_uint util_calls;
    atomic_int phantom[2]; /* per list: told INSUFFICIENT_SIZE once, the list has grown */
};

static struct nvmlDevice_st g_dev[MAX_GPUS];
static atomic_int g_init;        /* nvmlInit reference count */
static atomic_uint g_util_total; /* nvmlDeviceGetUtilizationRates calls, all devices */
static struct {
    unsigned int ngpus;
    unsigned int notsup;
    int race;
    int hang;
    unsigned int hang_after;
    unsigned long delay_us;
} g_cfg;

/* --- helpers ---------------------------------------------------------------------------------- */

static void log_call(const char *fn)
{
    const char *path = getenv("FAKE_NVML_CALLS");
    if (!path || !*path)
        return;
    char line[96];
    size_t n = strlen(fn);
    if (n > sizeof(line) - 1)
        n = sizeof(line) - 1;
    memcpy(line, fn, n);
    line[n++] = '\n';
    int saved = errno;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        ssize_t w = write(fd, line, n); /* one write(2) with O_APPEND: lines never interleave */
        (void)w;
        close(fd);
    }
    errno = saved;
}
#define ENTER() log_call(__func__)

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* A whole decimal number <= max; no sign. */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

static int env_num(const char *name, unsigned long long max, unsigned long long *out)
{
    return parse_num(getenv(name), max, out);
}

static void load_config(void)
{
    unsigned long long v;

    memset(&g_cfg, 0, sizeof(g_cfg));
    g_cfg.ngpus = 1;
    const char *gpus = getenv("FAKE_NVML_GPUS");
    if (gpus && *gpus) {
        char *end;
        long n = strtol(gpus, &end, 10);
        if (!*end)
            g_cfg.ngpus = n < 0 ? 0 : n > MAX_GPUS ? MAX_GPUS : (unsigned int)n;
    }
    g_cfg.race = env_flag("FAKE_NVML_RACE");
    if (env_num("FAKE_NVML_HANG_AFTER", UINT32_MAX, &v) == 0) {
        g_cfg.hang = 1;
        g_cfg.hang_after = (unsigned int)v;
    }
    if (env_num("FAKE_NVML_DELAY_US", UINT32_MAX, &v) == 0)
        g_cfg.delay_us = (unsigned long)v;

    static const struct {
        const char *name;
        unsigned int bit;
    } ns_names[] = {
        {"power", NS_POWER},       {"temperature", NS_TEMPERATURE},
        {"clocks", NS_CLOCKS},     {"utilization", NS_UTILIZATION},
        {"memory", NS_MEMORY},     {"pci", NS_PCI},
        {"cores", NS_CORES},       {"name", NS_NAME},
        {"uuid", NS_UUID},         {"processes", NS_PROCESSES},
        {"procutil", NS_PROCUTIL},
    };
    const char *ns = getenv("FAKE_NVML_NOT_SUPPORTED");
    while (ns && *ns) {
        size_t len = strcspn(ns, ", \t");
        for (size_t k = 0; k < sizeof(ns_names) / sizeof(ns_names[0]); k++)
            if (strlen(ns_names[k].name) == len && strncmp(ns, ns_names[k].name, len) == 0)
                g_cfg.notsup |= ns_names[k].bit;
        ns += len;
        ns += strspn(ns, ", \t");
    }

    for (unsigned int i = 0; i < MAX_GPUS; i++) {
        struct nvmlDevice_st *d = &g_dev[i];
        d->index = i;
        d->gpu_util = 20 + 10 * i > 100 ? 100 : 20 + 10 * i;
        d->lost = 0;
        d->lost_after = 0;
    }

    /* FAKE_NVML_UTIL=a,b,c: element i for device i; empty or bad elements keep the default */
    const char *u = getenv("FAKE_NVML_UTIL");
    for (unsigned int i = 0; u && *u && i < MAX_GPUS; i++) {
        size_t len = strcspn(u, ",");
        char tok[32];
        if (len > 0 && len < sizeof(tok)) {
            memcpy(tok, u, len);
            tok[len] = '\0';
            if (parse_num(tok, 100, &v) == 0)
                g_dev[i].gpu_util = (unsigned int)v;
        }
        u += len;
        if (*u == ',')
            u++;
        else
            break;
    }

    /* FAKE_NVML_LOST=dev:after[,dev:after...] */
    const char *l = getenv("FAKE_NVML_LOST");
    while (l && *l) {
        unsigned int dev, after;
        if (sscanf(l, "%u:%u", &dev, &after) == 2 && dev < MAX_GPUS) {
            g_dev[dev].lost = 1;
            g_dev[dev].lost_after = after;
        }
        l += strcspn(l, ",");
        if (*l == ',')
            l++;
    }
}

static int initialized(void)
{
    return atomic_load(&g_init) > 0;
}

static int notsup(unsigned int bit)
{
    return (g_cfg.notsup & bit) != 0;
}

static int dev_valid(nvmlDevice_t dev)
{
    uintptr_t p = (uintptr_t)dev, base = (uintptr_t)g_dev;
    return p >= base && p < base + g_cfg.ngpus * sizeof(g_dev[0]) &&
           (p - base) % sizeof(g_dev[0]) == 0;
}

static void delay(void)
{
    if (!g_cfg.delay_us)
        return;
    struct timespec ts = {(time_t)(g_cfg.delay_us / 1000000),
                          (long)(g_cfg.delay_us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The start of every call on a device: initialized, a valid handle, the delay, lost. */
static nvmlReturn_t dev_enter(nvmlDevice_t dev)
{
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (!dev_valid(dev))
        return NVML_ERROR_INVALID_ARGUMENT;
    delay();
    if (dev->lost && atomic_load(&dev->util_calls) >= dev->lost_after)
        return NVML_ERROR_GPU_IS_LOST;
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(char *buf, unsigned int length, const char *s)
{
    if (!buf)
        return NVML_ERROR_INVALID_ARGUMENT;
    size_t n = strlen(s) + 1;
    if (length < n)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(buf, s, n);
    return NVML_SUCCESS;
}

/* --- processes from FAKE_NVML_PROC_FILE ------------------------------------------------------- */

struct fproc {
    unsigned int pid;
    unsigned long long used; /* bytes or NVML_VALUE_NOT_AVAILABLE */
    int has_sm;
    unsigned int sm, mem;
    unsigned int lists; /* IN_COMPUTE | IN_GRAPHICS */
};

struct plist {
    struct fproc *v;
    size_t n, cap;
};

static int plist_push(struct plist *l, const struct fproc *p)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        struct fproc *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *p;
    return 0;
}

/* "-" or a number <= max */
static int parse_field(const char *s, unsigned long long max, int *present, unsigned long long *v)
{
    if (!s || strcmp(s, "-") == 0) {
        *present = 0;
        return 0;
    }
    *present = 1;
    return parse_num(s, max, v);
}

static int parse_proc_line(char *line, struct fproc *p, unsigned int *gpu)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *save = NULL, *f[6] = {0};
    int nf = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nf < 6;
         t = strtok_r(NULL, " \t\r\n", &save))
        f[nf++] = t;
    if (nf < 2)
        return -1;

    unsigned long long v;
    int present;
    if (parse_num(f[0], MAX_GPUS - 1, &v) < 0)
        return -1;
    *gpu = (unsigned int)v;
    if (parse_num(f[1], UINT32_MAX, &v) < 0)
        return -1;
    p->pid = (unsigned int)v;
    if (parse_field(f[2], NVML_VALUE_NOT_AVAILABLE / MIB, &present, &v) < 0)
        return -1;
    p->used = present ? v * MIB : NVML_VALUE_NOT_AVAILABLE;
    if (parse_field(f[3], 100, &present, &v) < 0)
        return -1;
    p->has_sm = present;
    p->sm = present ? (unsigned int)v : 0;
    if (parse_field(f[4], 100, &present, &v) < 0)
        return -1;
    p->mem = present ? (unsigned int)v : 0;
    const char *type = f[5] ? f[5] : "C";
    if (strcmp(type, "C") == 0)
        p->lists = IN_COMPUTE;
    else if (strcmp(type, "G") == 0)
        p->lists = IN_GRAPHICS;
    else if (strcmp(type, "CG") == 0 || strcmp(type, "GC") == 0)
        p->lists = IN_COMPUTE | IN_GRAPHICS;
    else
        return -1;
    return 0;
}

/* The processes of `dev` in any of the lists in `mask`, in file order, plus the phantoms the
 * race has added. -1: out of memory. */
static int read_procs(nvmlDevice_t dev, unsigned int mask, struct plist *out)
{
    memset(out, 0, sizeof(*out));
    const char *path = getenv("FAKE_NVML_PROC_FILE");
    FILE *f = path && *path ? fopen(path, "re") : NULL;
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) >= 0) {
            struct fproc p;
            unsigned int gpu;
            if (parse_proc_line(line, &p, &gpu) < 0 || gpu != dev->index || !(p.lists & mask))
                continue;
            if (plist_push(out, &p) < 0) {
                free(line);
                fclose(f);
                free(out->v);
                memset(out, 0, sizeof(*out));
                return -1;
            }
        }
        free(line);
        fclose(f);
    }
    struct fproc ph = {PHANTOM_PID_BASE + dev->index, MIB, 0, 0, 0, 0};
    if ((mask & IN_COMPUTE) && atomic_load(&dev->phantom[LIST_COMPUTE]))
        ph.lists |= IN_COMPUTE;
    if ((mask & IN_GRAPHICS) && atomic_load(&dev->phantom[LIST_GRAPHICS]))
        ph.lists |= IN_GRAPHICS;
    if (ph.lists && plist_push(out, &ph) < 0) {
        free(out->v);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

/* One entry per pid (the first), in place. */
static void plist_dedup(struct plist *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        size_t j = 0;
        while (j < n && l->v[j].pid != l->v[i].pid)
            j++;
        if (j == n)
            l->v[n++] = l->v[i];
    }
    l->n = n;
}

/* The count protocol of nvmlDeviceGet{Compute,Graphics}RunningProcesses*. v1: 16-byte entries. */
static nvmlReturn_t running_procs(nvmlDevice_t dev, int list, int v1, unsigned int *count,
                                  void *infos)
{
    nvmlReturn_t r = dev_enter(dev);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_PROCESSES))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct plist l;
    if (read_procs(dev, 1u << list, &l) < 0)
        return NVML_ERROR_UNKNOWN;
    unsigned int n = (unsigned int)l.n;
    if (n == 0) {
        *count = 0;
    } else if (!infos || *count < n) {
        *count = n;
        r = NVML_ERROR_INSUFFICIENT_SIZE;
        if (g_cfg.race)
            atomic_store(&dev->phantom[list], 1);
    } else {
        for (unsigned int i = 0; i < n; i++) {
            if (v1) {
                nvmlProcessInfo_v1_t *e = (nvmlProcessInfo_v1_t *)infos + i;
                e->pid = l.v[i].pid;
                e->usedGpuMemory = l.v[i].used;
            } else {
                nvmlProcessInfo_v2_t *e = (nvmlProcessInfo_v2_t *)infos + i;
                e->pid = l.v[i].pid;
                e->usedGpuMemory = l.v[i].used;
                e->gpuInstanceId = 0xFFFFFFFFu;
                e->computeInstanceId = 0xFFFFFFFFu;
            }
        }
        *count = n;
    }
    free(l.v);
    return r;
}

/* --- init, system ----------------------------------------------------------------------------- */

static nvmlReturn_t do_init(void)
{
    if (env_flag("FAKE_NVML_FAIL_INIT"))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    unsigned long long ms;
    if (env_num("FAKE_NVML_INIT_MS", 600000, &ms) == 0) {
        struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    if (!initialized())
        load_config();
    atomic_fetch_add(&g_init, 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit(void)
{
    ENTER();
    return do_init();
}

nvmlReturn_t nvmlShutdown(void)
{
    ENTER();
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    atomic_fetch_sub(&g_init, 1);
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result)
{
    ENTER();
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
        return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
        return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument version mismatch";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
    ENTER();
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    return copy_str(version, length, "550.00-fake");
}

static nvmlReturn_t get_count(unsigned int *count)
{
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    *count = g_cfg.ngpus;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount(unsigned int *count)
{
    ENTER();
    return get_count(count);
}

static nvmlReturn_t get_handle(unsigned int index, nvmlDevice_t *device)
{
    if (!initialized())
        return NVML_ERROR_UNINITIALIZED;
    if (index >= g_cfg.ngpus || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t r = dev_enter(&g_dev[index]);
    if (r != NVML_SUCCESS)
        return r;
    *device = &g_dev[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
    ENTER();
    return get_handle(index, device);
}

/* --- device queries --------------------------------------------------------------------------- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_NAME))
        return NVML_ERROR_NOT_SUPPORTED;
    char s[64];
    snprintf(s, sizeof(s), "NVIDIA Fake GPU %u", device->index);
    return copy_str(name, length, s);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_UUID))
        return NVML_ERROR_NOT_SUPPORTED;
    char s[64];
    snprintf(s, sizeof(s), "GPU-fa4e0000-0000-0000-0000-%012u", device->index);
    return copy_str(uuid, length, s);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    unsigned int before = atomic_fetch_add(&g_util_total, 1);
    if (g_cfg.hang && before >= g_cfg.hang_after)
        for (;;)
            sleep(1000); /* a hung driver */
    atomic_fetch_add(&device->util_calls, 1);
    if (notsup(NS_UTILIZATION))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!u)
        return NVML_ERROR_INVALID_ARGUMENT;
    u->gpu = device->gpu_util;
    u->memory = 5 + device->index > 100 ? 100 : 5 + device->index;
    return NVML_SUCCESS;
}

/* Memory the device's processes use: (index + 1) GiB plus each listed process once. Like the
 * real driver, the v1 query counts the driver's reservation (FAKE_RESERVED) as used; the v2
 * query reports it apart. */
#define FAKE_RESERVED (256ULL << 20)
static nvmlReturn_t mem_used(nvmlDevice_t device, unsigned long long *used_out)
{
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_MEMORY))
        return NVML_ERROR_NOT_SUPPORTED;
    struct plist l;
    if (read_procs(device, IN_COMPUTE | IN_GRAPHICS, &l) < 0)
        return NVML_ERROR_UNKNOWN;
    plist_dedup(&l);
    unsigned long long used = (device->index + 1ULL) * GIB;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i].used != NVML_VALUE_NOT_AVAILABLE)
            used += l.v[i].used;
    free(l.v);
    if (used > TOTAL_MEM - FAKE_RESERVED)
        used = TOTAL_MEM - FAKE_RESERVED;
    *used_out = used;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
    ENTER();
    unsigned long long used;
    nvmlReturn_t r = mem_used(device, &used);
    if (r != NVML_SUCCESS)
        return r;
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    memory->total = TOTAL_MEM;
    memory->used = used + FAKE_RESERVED;
    memory->free = TOTAL_MEM - memory->used;
    return NVML_SUCCESS;
}

#ifndef FAKE_NVML_LEGACY
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
    ENTER();
    unsigned long long used;
    nvmlReturn_t r = mem_used(device, &used);
    if (r != NVML_SUCCESS)
        return r;
    if (!memory)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != (unsigned)(sizeof(nvmlMemory_v2_t) | (2u << 24)))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = TOTAL_MEM;
    memory->reserved = FAKE_RESERVED;
    memory->used = used;
    memory->free = TOTAL_MEM - used - FAKE_RESERVED;
    return NVML_SUCCESS;
}
#endif

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor, unsigned int *t)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_TEMPERATURE))
        return NVML_ERROR_NOT_SUPPORTED;
    if (sensor != NVML_TEMPERATURE_GPU || !t)
        return NVML_ERROR_INVALID_ARGUMENT;
    *t = 40 + device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_POWER))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!power)
        return NVML_ERROR_INVALID_ARGUMENT;
    *power = 100000 + 1000 * device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int *clock)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_CLOCKS))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!clock)
        return NVML_ERROR_INVALID_ARGUMENT;
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
        *clock = 1500 + device->index;
        return NVML_SUCCESS;
    case NVML_CLOCK_SM:
        *clock = 1400 + device->index;
        return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
        *clock = 2600 + device->index;
        return NVML_SUCCESS;
    default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                  nvmlProcessInfo_v1_t *infos)
{
    ENTER();
    return running_procs(device, LIST_COMPUTE, 1, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
                                                   nvmlProcessInfo_v1_t *infos)
{
    ENTER();
    return running_procs(device, LIST_GRAPHICS, 1, infoCount, infos);
}

/* --- the versioned API (not in the legacy library) -------------------------------------------- */
#ifndef FAKE_NVML_LEGACY

nvmlReturn_t nvmlInit_v2(void)
{
    ENTER();
    return do_init();
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    ENTER();
    return get_count(count);
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
    ENTER();
    return get_handle(index, device);
}

static nvmlReturn_t get_pci(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_PCI))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!pci)
        return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    pci->domain = 0;
    pci->bus = 0x10 + device->index;
    pci->device = 0;
    pci->pciDeviceId = 0x20B010DEu;
    pci->pciSubSystemId = 0x134F10DEu;
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", pci->bus);
    snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", pci->bus);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER();
    return get_pci(device, pci);
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
    ENTER();
    return get_pci(device, pci);
}

nvmlReturn_t nvmlDeviceGetNumGpuCores(nvmlDevice_t device, unsigned int *numCores)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_CORES))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!numCores)
        return NVML_ERROR_INVALID_ARGUMENT;
    *numCores = 6912 + device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    ENTER();
    return running_procs(device, LIST_COMPUTE, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                     nvmlProcessInfo_v2_t *infos)
{
    ENTER();
    return running_procs(device, LIST_COMPUTE, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v2(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_v2_t *infos)
{
    ENTER();
    return running_procs(device, LIST_GRAPHICS, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device, unsigned int *infoCount,
                                                      nvmlProcessInfo_v2_t *infos)
{
    ENTER();
    return running_procs(device, LIST_GRAPHICS, 0, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device,
                                             nvmlProcessUtilizationSample_t *utilization,
                                             unsigned int *processSamplesCount,
                                             unsigned long long lastSeenTimeStamp)
{
    ENTER();
    nvmlReturn_t r = dev_enter(device);
    if (r != NVML_SUCCESS)
        return r;
    if (notsup(NS_PROCUTIL))
        return NVML_ERROR_NOT_SUPPORTED;
    if (!processSamplesCount)
        return NVML_ERROR_INVALID_ARGUMENT;
    struct plist l;
    if (read_procs(device, IN_COMPUTE | IN_GRAPHICS, &l) < 0)
        return NVML_ERROR_UNKNOWN;
    plist_dedup(&l);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long now =
        (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
    unsigned int n = 0;
    if (now > lastSeenTimeStamp)
        for (size_t i = 0; i < l.n; i++)
            if (l.v[i].has_sm)
                l.v[n++] = l.v[i];
    if (n == 0) {
        *processSamplesCount = 0;
        r = NVML_ERROR_NOT_FOUND;
    } else if (!utilization || *processSamplesCount < n) {
        *processSamplesCount = n;
        r = NVML_ERROR_INSUFFICIENT_SIZE;
    } else {
        for (unsigned int i = 0; i < n; i++) {
            nvmlProcessUtilizationSample_t *e = &utilization[i];
            e->pid = l.v[i].pid;
            e->timeStamp = now;
            e->smUtil = l.v[i].sm;
            e->memUtil = l.v[i].mem;
            e->encUtil = 0;
            e->decUtil = 0;
        }
        *processSamplesCount = n;
    }
    free(l.v);
    return r;
}

#endif /* !FAKE_NVML_LEGACY */
