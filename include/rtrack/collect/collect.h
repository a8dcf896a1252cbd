/* collect.h - the collectors: /proc and /sys readers, one per resource.
 *
 * Every path is built from a root prefix (empty on a live system, a fixture tree in tests) and
 * statvfs goes through one replaceable function, so fixture trees can drive the real collectors
 * (the way sysstat's tests run on fake /proc and /sys roots). */
#ifndef RTRACK_COLLECT_H
#define RTRACK_COLLECT_H

#include <stdint.h>
#include <sys/types.h>

#include "rtrack/sample/run.h"
#include "rtrack/sample/sample.h"
#include "rtrack/base/util.h"

struct rt_fsstat {
    uint64_t frsize, blocks, bfree, bavail;
};

/* 0 on success, -errno on failure. */
typedef int (*rt_statvfs_fn)(void *ud, const char *path, struct rt_fsstat *out);

struct rt_sysenv {
    const char *root; /* "" on a live system */
    rt_statvfs_fn statvfs_fn;
    void *statvfs_ud;
    long clk_tck;
    long page_size;
    const char *nvml_library; /* the NVML library to load instead of libnvidia-ml.so.1, or NULL */
};

/* The live system: root "", statvfs(2), sysconf values. */
void rt_sysenv_live(struct rt_sysenv *env);
/* Build root-prefixed path; returns 0, or -1 when it does not fit. */
int rt_path(const struct rt_sysenv *env, char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Busy cores from CPU seconds over a window, within what the machine can give: 0 to ncores
 * (when known). Ticks of 10 ms counted over a window of a few ms (a final sample just after a
 * periodic one) can say 3.5 cores on 2: the rate is clamped to the machine; the CPU seconds
 * stay as the counters say. */
static inline double rt_cores_bound(double r, int ncores)
{
    if (!(r > 0))
        return 0.0;
    return ncores > 0 && r > ncores ? (double)ncores : r;
}

/* The kernel's count of OOM kills since boot (/proc/vmstat oom_kill), RT_NA when unknown. */
int64_t rt_oom_kills(const struct rt_sysenv *env);

/* What the job is allocated by the cgroup rtrack runs in (the job inherits it): the tightest CPU
 * quota (v2 cpu.max, v1 cpu.cfs_quota_us / cpu.cfs_period_us) and memory limit (v2 memory.max,
 * v1 memory.limit_in_bytes; v1's huge "unlimited" is none) of the cgroup and its ancestors, and
 * the CPUs of its effective cpuset (v2 cpuset.cpus.effective, v1 cpuset.effective_cpus or
 * cpuset.cpus). Fills the cgroup_* fields of a only; unknown stays RT_NA / NAN. */
void rt_cgroup_alloc_read(const struct rt_sysenv *env, struct rt_alloc *a);
/* The same of the cgroup `cg` (a path as /proc/PID/cgroup names it, the same in every v1
 * hierarchy: a Slurm step's), or of rtrack's own for NULL. */
void rt_cgroup_alloc_read_at(const struct rt_sysenv *env, const char *cg, struct rt_alloc *a);
/* The directory of cgroup `cg` (NULL: rtrack's own) in the v1 hierarchy of `controller`, or in
 * the v2 one for controller NULL: 0, or -1 when it has none there. */
int rt_cgroup_dir(const struct rt_sysenv *env, const char *cg, const char *controller, char *dir,
                  size_t cap);
/* The CPUs of a cpuset list ("0-3,8" -> 5), RT_NA when it is not one. */
int64_t rt_cpuset_count(const char *list);

/* The peak memory charge of rtrack's memory cgroup (v2 memory.peak, v1
 * memory.max_usage_in_bytes), which is the job's only when the cgroup is the job's own. The rule:
 * at the start (before the job is spawned) the cgroup and every cgroup below it hold no process
 * but rtrack (`self`): rtrack was started as the only process of a dedicated cgroup (a Slurm
 * step, `systemd-run --scope`, a container whose entrypoint is rtrack); and at the end the peak
 * is above what it was at the start (a peak that did not grow may be an earlier tenant's). It
 * counts what the cgroup is charged: the tree's memory, its page cache, and rtrack's own few
 * MiB. open: 0 when the rule's first half holds and the peak is readable, else -1. end: bytes,
 * or RT_NA. */
struct rt_cgroup_peak {
    char path[4096]; /* the peak file, "" when none */
    int64_t start;   /* its value at the start */
    /* open_at: the cgroup (looked for again when it was not there at the start), and the
     * highest value poll read (Slurm removes a step's cgroup before its end is told) */
    const struct rt_sysenv *env;
    const char *cg;
    int64_t max;
};
int rt_cgroup_peak_open(const struct rt_sysenv *env, pid_t self, struct rt_cgroup_peak *p);
int64_t rt_cgroup_peak_end(struct rt_cgroup_peak *p);
/* The peak of cgroup `cg`, a job's own by construction (record --cgroup: a Slurm step's, made
 * for the step): no rule on who is in it at the start; the end's rule holds. A cgroup not made
 * yet is looked for at the end, its whole peak the run's. */
int rt_cgroup_peak_open_at(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_peak *p);
void rt_cgroup_peak_poll(struct rt_cgroup_peak *p);

/* record --cgroup (collect/cgroup_step.c): the processes of cgroup `cg` and of every cgroup
 * below it, listed where they are (v2, else the first v1 hierarchy of freezer, memory, pids,
 * cpuacct, cpuset that has it). open: 0, or -1 when no hierarchy has it. list: the pids into
 * *pids (grown as needed, *cap its size), their count. */
struct rt_cgroup_procs {
    char dir[4096];
};
int rt_cgroup_procs_open(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_procs *c);
size_t rt_cgroup_procs_list(const struct rt_cgroup_procs *c, pid_t **pids, size_t *cap);
/* The OOM kills in cgroup `cg` and below it since open (oom_kill of v2's memory.events; the sum
 * of v1's memory.oom_control over the cgroup and those below, polled: a task's cgroup may be
 * gone by the end). A cgroup not made yet is looked for at each poll, counted from 0. open: 0,
 * or -1 when not there (yet); end: the count, or RT_NA. */
struct rt_cgroup_oom {
    char dir[4096];
    int v2;
    int64_t start, max;
    const struct rt_sysenv *env;
    const char *cg;
};
int rt_cgroup_oom_open(const struct rt_sysenv *env, const char *cg, struct rt_cgroup_oom *o);
void rt_cgroup_oom_poll(struct rt_cgroup_oom *o);
int64_t rt_cgroup_oom_end(struct rt_cgroup_oom *o);

struct rt_collect_cfg {
    pid_t root_pid;     /* tracked tree root, 0 = system only */
    pid_t subreaper;    /* run mode: rtrack's pid; its children other than the root (orphans of the
                         * job, re-parented to us) belong to the tree too. 0 in record mode. */
    double interval;    /* seconds between samples; bounds how long a GPU reading is waited for */
    int full_scan;      /* find the tree by scanning all of /proc, not through children files (for
                         * comparisons: RTRACK_PROC_SCAN=full) */
    const char *cgroup; /* record --cgroup: the processes of this cgroup (and below) belong to
                         * the tree; the cgroup collector follows it instead of rtrack's own */
};

/* One collector: open() probes and returns its state (NULL = not available on this system),
 * collect() fills its part of `cur`, computing per-interval values against `prev`. */
struct rt_collector {
    const char *name;
    void *(*open)(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg);
    void (*collect)(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                    const struct rt_sample *prev);
    void (*close)(void *state);
};

extern const struct rt_collector rt_collector_cpu;
extern const struct rt_collector rt_collector_proc;
extern const struct rt_collector rt_collector_mem;
extern const struct rt_collector rt_collector_psi;
extern const struct rt_collector rt_collector_cgroup;
extern const struct rt_collector rt_collector_disk;
extern const struct rt_collector rt_collector_mount;
extern const struct rt_collector rt_collector_net;
/* Every collector, in the order a sample is taken (bench/hotloop.c times each one). */
#define RT_NCOLLECTORS 8
extern const struct rt_collector *const rt_collectors_all[RT_NCOLLECTORS];

struct rt_collectors;
struct rt_collectors *rt_collectors_open(const struct rt_sysenv *env,
                                         const struct rt_collect_cfg *cfg);
/* Fill `cur` (already begun with rt_sample_begin) from every collector in order. */
void rt_collectors_sample(struct rt_collectors *c, struct rt_sample *cur,
                          const struct rt_sample *prev);
/* rt_gpu_none() of its GPU collector: no GPU facts will come. */
int rt_collectors_gpu_none(struct rt_collectors *c);
void rt_collectors_close(struct rt_collectors *c);

/* Parsers shared with tests (each takes the file's text). */
int rt_parse_proc_stat_line(const char *line, struct rt_cpu_ticks *t);
/* Fields of /proc/PID/stat after the last ')'. 0 on success. */
struct rt_pid_stat {
    char comm[64];
    char state;
    pid_t ppid;
    int64_t utime, stime, cutime, cstime, threads, starttime, rss_pages;
};
/* Larger values are not a kernel's: a stat line with utime, stime, cutime, cstime, threads or
 * starttime above RT_PROC_MAX_COUNTER, rss above RT_PROC_MAX_PAGES or any of them negative is
 * rejected (-1); Pss above RT_PROC_MAX_COUNTER KiB and io above RT_PROC_MAX_IO_BYTES read as
 * RT_NA. The tree's sums saturate; with these bounds no difference or product overflows. */
#define RT_PROC_MAX_COUNTER  (INT64_C(1) << 50)
#define RT_PROC_MAX_PAGES    (INT64_C(1) << 40)
#define RT_PROC_MAX_IO_BYTES (INT64_C(1) << 60)
int rt_parse_pid_stat(const char *text, struct rt_pid_stat *out);
/* The sum of the Pss lines of /proc/PID/smaps_rollup (one) or of /proc/PID/smaps (one per
 * mapping), KiB; RT_NA when there is none, or one that no kernel prints. */
int64_t rt_parse_smaps_pss(const char *text);
/* read_bytes and write_bytes of /proc/PID/io, RT_NA when absent. */
void rt_parse_pid_io(const char *text, int64_t *read_bytes, int64_t *write_bytes);
/* /proc/PID/schedstat (or a thread's): ns on a CPU, ns waiting for one (runnable), times put on
 * a CPU. 0; 1 when the kernel does not account them (every task reads "0 0 0": 4.2 to 5.13
 * built without CONFIG_SCHEDSTATS and with delay accounting off; any task that has run has
 * a CPU time, always counted): unknown, not 0; -1 when it is not a schedstat line. */
struct rt_schedstat {
    int64_t run_ns, wait_ns, slices;
};
int rt_parse_schedstat(const char *text, struct rt_schedstat *out);
/* Whole disk versus partition (see disk.c). */
int rt_disk_is_partition(const struct rt_sysenv *env, const char *name);

/* Host facts, read once per run. */
void rt_host_info_read(const struct rt_sysenv *env, struct rt_host_info *h);
void rt_host_info_free(struct rt_host_info *h);

#endif
