/* bench/nvml_cost.c - what each NVML query rtrack makes per sample costs on this machine.
 *
 *   cc -O2 -o nvml_cost bench/nvml_cost.c -ldl && ./nvml_cost [CALLS]
 *
 * Loads NVML like rtrack does (RTRACK_NVML_LIBRARY, else libnvidia-ml.so.1), times nvmlInit_v2,
 * then for every device calls each per-sample query CALLS times (default 200) and prints the
 * median and the 90th percentile in microseconds of wall time, plus the CPU time of the whole
 * loop per call (getrusage: user+system of this process, so driver work done in the kernel on
 * our behalf counts, work in other processes does not). Buffers are sized once, so only the
 * filling calls are timed. Only the shapes of the calls matter here: every struct is passed as a
 * large enough zeroed buffer. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef int (*fn_void)(void);
typedef int (*fn_count)(unsigned *);
typedef int (*fn_handle)(unsigned, void **);
typedef int (*fn_dev_buf)(void *, void *);
typedef int (*fn_dev_int_buf)(void *, int, void *);
typedef int (*fn_list)(void *, unsigned *, void *);
typedef int (*fn_putil)(void *, void *, unsigned *, unsigned long long);

static double now_us(int clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static double cpu_us(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static unsigned char buf[1 << 16];
static unsigned long long last_seen;

/* One query, identified by kind, on device d. */
enum kind { K_BUF, K_INT_BUF, K_LIST, K_PUTIL };
struct query {
    const char *label, *sym;
    enum kind kind;
    int arg;
    void *fn;
};

static int call(const struct query *q, void *d)
{
    unsigned n = sizeof(buf) / 32;
    switch (q->kind) {
    case K_BUF:
        memset(buf, 0, 64);
        *(unsigned *)buf = q->arg; /* versioned structs: the version word */
        return ((fn_dev_buf)q->fn)(d, buf);
    case K_INT_BUF:
        return ((fn_dev_int_buf)q->fn)(d, q->arg, buf);
    case K_LIST:
        return ((fn_list)q->fn)(d, &n, buf);
    case K_PUTIL:
        return ((fn_putil)q->fn)(d, buf, &n, last_seen);
    }
    return -1;
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 200;
    const char *path = getenv("RTRACK_NVML_LIBRARY");
    void *lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "nvml_cost: cannot load NVML: %s\n", dlerror());
        return 1;
    }
    fn_void init = (fn_void)dlsym(lib, "nvmlInit_v2");
    fn_count count = (fn_count)dlsym(lib, "nvmlDeviceGetCount_v2");
    fn_handle handle = (fn_handle)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    if (!init || !count || !handle) {
        fprintf(stderr, "nvml_cost: NVML lacks the _v2 init/count/handle functions\n");
        return 1;
    }
    double t0 = now_us(CLOCK_MONOTONIC), c0 = cpu_us();
    int rc = init();
    printf("nvmlInit_v2: rc %d, %.0f us wall, %.0f us cpu\n", rc, now_us(CLOCK_MONOTONIC) - t0,
           cpu_us() - c0);
    unsigned ndev = 0;
    count(&ndev);
    struct query qs[] = {
        {"utilization", "nvmlDeviceGetUtilizationRates", K_BUF, 0, NULL},
        {"memory v1", "nvmlDeviceGetMemoryInfo", K_BUF, 0, NULL},
        {"memory v2", "nvmlDeviceGetMemoryInfo_v2", K_BUF, 40 | (2 << 24), NULL},
        {"temperature", "nvmlDeviceGetTemperature", K_INT_BUF, 0, NULL},
        {"power", "nvmlDeviceGetPowerUsage", K_BUF, 0, NULL},
        {"clock graphics", "nvmlDeviceGetClockInfo", K_INT_BUF, 0, NULL},
        {"clock sm", "nvmlDeviceGetClockInfo", K_INT_BUF, 1, NULL},
        {"clock mem", "nvmlDeviceGetClockInfo", K_INT_BUF, 2, NULL},
        {"compute procs v3", "nvmlDeviceGetComputeRunningProcesses_v3", K_LIST, 0, NULL},
        {"graphics procs v3", "nvmlDeviceGetGraphicsRunningProcesses_v3", K_LIST, 0, NULL},
        {"process util", "nvmlDeviceGetProcessUtilization", K_PUTIL, 0, NULL},
    };
    size_t nq = sizeof(qs) / sizeof(qs[0]);
    for (size_t i = 0; i < nq; i++)
        qs[i].fn = dlsym(lib, qs[i].sym);
    double *t = calloc((size_t)calls, sizeof(double));
    for (unsigned di = 0; di < ndev; di++) {
        void *d = NULL;
        if (handle(di, &d) != 0)
            continue;
        printf("device %u: %d calls each\n%-18s %4s %9s %9s %9s\n", di, calls, "query", "rc",
               "med us", "p90 us", "cpu us");
        double total = 0;
        for (size_t i = 0; i < nq; i++) {
            if (!qs[i].fn) {
                printf("%-18s  (not exported)\n", qs[i].label);
                continue;
            }
            struct timespec now;
            clock_gettime(CLOCK_REALTIME, &now);
            last_seen = (unsigned long long)now.tv_sec * 1000000ULL - 1000000ULL;
            int r = call(&qs[i], d); /* warm-up, and the rc to show */
            double cs = cpu_us();
            for (int k = 0; k < calls; k++) {
                double a = now_us(CLOCK_MONOTONIC);
                call(&qs[i], d);
                t[k] = now_us(CLOCK_MONOTONIC) - a;
            }
            double cpu = (cpu_us() - cs) / calls;
            qsort(t, (size_t)calls, sizeof(double), cmp);
            printf("%-18s %4d %9.1f %9.1f %9.1f\n", qs[i].label, r, t[calls / 2],
                   t[calls * 9 / 10], cpu);
            if (strcmp(qs[i].label, "memory v1") != 0)
                total += t[calls / 2];
        }
        printf("sum of medians (one of each, memory v2): %.1f us\n", total);
    }
    free(t);
    return 0;
}
