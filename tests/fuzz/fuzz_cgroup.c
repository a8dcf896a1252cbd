/* fuzz_cgroup.c - the cgroup collector: /proc/self/cgroup (which cgroup rtrack is in), the CPU
 * quota of that cgroup and its ancestors (v2 cpu.max, v1 cpu.cfs_quota_us/cpu.cfs_period_us)
 * and its CPU time (v2 cpu.stat usage_usec, v1 cpuacct.usage), two samples.
 * Input, parts separated by NUL (a missing part leaves its files out): /proc/self/cgroup; the
 * quota (cpu.max and cpu.cfs_quota_us); the usage in the first sample (cpu.stat and
 * cpuacct.usage); in the second; cpu.cfs_period_us; /proc/self/mountinfo (where a container
 * finds its own cgroup when /proc/self/cgroup names the host's path). The quota, period and
 * usage files are written both at the hierarchy's root and in its job.slice cgroup. Then what
 * the run's allocation reads of the same files (rt_cgroup_alloc_read). */
#include <stdio.h>

#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];
static struct fz_part part[6];

static const char *const dirs[] = {"sys/fs/cgroup", "sys/fs/cgroup/job.slice",
                                   "sys/fs/cgroup/cpu,cpuacct",
                                   "sys/fs/cgroup/cpu,cpuacct/job.slice"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

static void put(const char *file, const struct fz_part *p)
{
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char rel[256];
        snprintf(rel, sizeof(rel), "%s/%s", dirs[i], file);
        fz_write_part(rel, p);
    }
}

static void second(void *ud)
{
    (void)ud;
    const struct fz_part *p = part[3].p ? &part[3] : &part[2];
    put("cpu.stat", p);
    put("cpuacct.usage", p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_split(data, size, part, 6);
    fz_write_part("proc/self/cgroup", &part[0]);
    fz_write_part("proc/self/mountinfo", &part[5]);
    put("cpu.max", &part[1]);
    put("cpu.cfs_quota_us", &part[1]);
    put("cpu.stat", &part[2]);
    put("cpuacct.usage", &part[2]);
    put("cpu.cfs_period_us", &part[4]);
    struct rt_collect_cfg cfg = {0, 0, 1.0, 0};
    fz_collect2(&rt_collector_cgroup, &env, &cfg, second, NULL, s);
    struct rt_alloc a;
    rt_cgroup_alloc_read(&env, &a);
    return 0;
}
