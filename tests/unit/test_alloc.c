/* test_alloc.c - what a job is allocated (issue 16): the limits of rtrack's cgroup read from
 * cgroup v1 and v2 fixture trees built here, the peak of a cgroup of the job's own and the rule
 * that says when it is one, and the environment's part (Slurm, CUDA_VISIBLE_DEVICES). Every
 * expected value is the fixture's number worked out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#include "rtrack/cli/env.h"

static void fx_init(char *root, size_t cap, struct rt_sysenv *env)
{
    snprintf(root, cap, "/tmp/rtrack-alloc.XXXXXX");
    assert_non_null(mkdtemp(root));
    memset(env, 0, sizeof(*env));
    env->root = root;
    env->clk_tck = 100;
    env->page_size = 4096;
}

/* "0-3,8,10-11": 4 + 1 + 2 CPUs */
static void test_cpuset_count(void **state)
{
    (void)state;
    assert_int_equal(rt_cpuset_count("0-3,8,10-11"), 7);
    assert_int_equal(rt_cpuset_count("7"), 1);
    assert_int_equal(rt_cpuset_count("0-1"), 2);
    assert_true(rt_cpuset_count("") == RT_NA);
    assert_true(rt_cpuset_count("3-1") == RT_NA);
    assert_true(rt_cpuset_count("0,,1") == RT_NA);
    assert_true(rt_cpuset_count("0-") == RT_NA);
    assert_true(rt_cpuset_count("x") == RT_NA);
}

/* cgroup v2, a Slurm step: the CPU quota is the tightest of the step (none), the job (150000 /
 * 100000 = 1.5 cores) and the slurm cgroup (4 cores); memory the tightest of the step (max),
 * the job (2 GiB) and slurm (4 GiB); the cpuset the step's effective list (7 CPUs). */
static void test_v2_limits(void **state)
{
    (void)state;
    char root[256];
    struct rt_sysenv env;
    fx_init(root, sizeof(root), &env);
    fx_write(root, "proc/self/cgroup", "0::/slurm/job_7/step_0\n");
    const char *step = "sys/fs/cgroup/slurm/job_7/step_0/";
    char p[256];
#define AT(dir, f) (snprintf(p, sizeof(p), "%s%s", dir, f), p)
    fx_write(root, AT(step, "cgroup.procs"), "");
    fx_write(root, AT(step, "cpu.max"), "max 100000\n");
    fx_write(root, AT(step, "memory.max"), "max\n");
    fx_write(root, AT(step, "cpuset.cpus.effective"), "0-3,8,10-11\n");
    fx_write(root, "sys/fs/cgroup/slurm/job_7/cpu.max", "150000 100000\n");
    fx_write(root, "sys/fs/cgroup/slurm/job_7/memory.max", "2147483648\n");
    fx_write(root, "sys/fs/cgroup/slurm/cpu.max", "400000 100000\n");
    fx_write(root, "sys/fs/cgroup/slurm/memory.max", "4294967296\n");
    struct rt_alloc a = rt_alloc_none();
    rt_cgroup_alloc_read(&env, &a);
    assert_true(fabs(a.cgroup_cpu_cores - 1.5) < 1e-12);
    assert_int_equal(a.cgroup_memory_bytes, INT64_C(2147483648));
    assert_int_equal(a.cgroup_cpuset_cpus, 7);
    /* the cpuset controller not enabled in the step: its nearest ancestor's list holds */
    char q[512];
    snprintf(q, sizeof(q), "%s/%scpuset.cpus.effective", root, step);
    assert_int_equal(unlink(q), 0);
    fx_write(root, "sys/fs/cgroup/slurm/cpuset.cpus.effective", "2-3\n");
    rt_cgroup_alloc_read(&env, &a);
    assert_int_equal(a.cgroup_cpuset_cpus, 2);
    /* no limits anywhere: unknown, not 0 */
    fx_write(root, "sys/fs/cgroup/slurm/job_7/cpu.max", "max 100000\n");
    fx_write(root, "sys/fs/cgroup/slurm/cpu.max", "max 100000\n");
    fx_write(root, "sys/fs/cgroup/slurm/job_7/memory.max", "max\n");
    fx_write(root, "sys/fs/cgroup/slurm/memory.max", "max\n");
    rt_cgroup_alloc_read(&env, &a);
    assert_true(isnan(a.cgroup_cpu_cores));
    assert_true(a.cgroup_memory_bytes == RT_NA);
    fx_rmtree(root);
#undef AT
}

/* cgroup v1 with the hybrid's empty v2 mount: each controller from its own hierarchy. CPU 250000
 * / 100000 = 2.5 cores from cpu,cpuacct; memory: the job's "unlimited" (the largest page count
 * in bytes) is none, its parent's 1 GiB holds; cpuset 2-3 = 2 CPUs. */
static void test_v1_limits(void **state)
{
    (void)state;
    char root[256];
    struct rt_sysenv env;
    fx_init(root, sizeof(root), &env);
    fx_write(root, "proc/self/cgroup",
             "11:memory:/a/job\n4:cpuset:/a/job\n3:cpu,cpuacct:/a/job\n1:name=systemd:/\n0::/\n");
    fx_write(root, "sys/fs/cgroup/unified/cgroup.procs", "1\n");
    fx_write(root, "sys/fs/cgroup/cpu,cpuacct/a/job/cpu.cfs_quota_us", "250000\n");
    fx_write(root, "sys/fs/cgroup/cpu,cpuacct/a/job/cpu.cfs_period_us", "100000\n");
    fx_write(root, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    fx_write(root, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    fx_write(root, "sys/fs/cgroup/memory/a/job/memory.limit_in_bytes", "9223372036854771712\n");
    fx_write(root, "sys/fs/cgroup/memory/a/memory.limit_in_bytes", "1073741824\n");
    fx_write(root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
    fx_write(root, "sys/fs/cgroup/cpuset/a/job/cpuset.effective_cpus", "2-3\n");
    fx_write(root, "sys/fs/cgroup/cpuset/a/job/cpuset.cpus", "0-7\n");
    struct rt_alloc a = rt_alloc_none();
    rt_cgroup_alloc_read(&env, &a);
    assert_true(fabs(a.cgroup_cpu_cores - 2.5) < 1e-12);
    assert_int_equal(a.cgroup_memory_bytes, INT64_C(1073741824));
    assert_int_equal(a.cgroup_cpuset_cpus, 2);
    /* every level unlimited: none */
    fx_write(root, "sys/fs/cgroup/memory/a/memory.limit_in_bytes", "9223372036854771712\n");
    rt_cgroup_alloc_read(&env, &a);
    assert_true(a.cgroup_memory_bytes == RT_NA);
    fx_rmtree(root);
}

/* The peak, v2: rtrack (pid 4242) alone in its cgroup; memory.peak 1 MiB at the start, 5 MiB
 * at the end: 5 MiB. */
static void test_v2_peak(void **state)
{
    (void)state;
    char root[256];
    struct rt_sysenv env;
    fx_init(root, sizeof(root), &env);
    fx_write(root, "proc/self/cgroup", "0::/job\n");
    fx_write(root, "sys/fs/cgroup/job/cgroup.procs", "4242\n");
    fx_write(root, "sys/fs/cgroup/job/memory.peak", "1048576\n");
    struct rt_cgroup_peak pk;
    assert_int_equal(rt_cgroup_peak_open(&env, 4242, &pk), 0);
    assert_int_equal(pk.start, 1048576);
    fx_write(root, "sys/fs/cgroup/job/memory.peak", "5242880\n");
    assert_int_equal(rt_cgroup_peak_end(&pk), 5242880);
    /* a peak that did not grow may be an earlier tenant's: unknown */
    fx_write(root, "sys/fs/cgroup/job/memory.peak", "1048576\n");
    assert_true(rt_cgroup_peak_end(&pk) == RT_NA);
    /* an empty child cgroup is fine; one with a process in it is not the job's */
    fx_write(root, "sys/fs/cgroup/job/sub/cgroup.procs", "");
    assert_int_equal(rt_cgroup_peak_open(&env, 4242, &pk), 0);
    fx_write(root, "sys/fs/cgroup/job/sub/deeper/cgroup.procs", "77\n");
    assert_int_equal(rt_cgroup_peak_open(&env, 4242, &pk), -1);
    assert_true(rt_cgroup_peak_end(&pk) == RT_NA);
    fx_write(root, "sys/fs/cgroup/job/sub/deeper/cgroup.procs", "");
    /* another process beside rtrack: not the job's own */
    fx_write(root, "sys/fs/cgroup/job/cgroup.procs", "4242\n4243\n");
    assert_int_equal(rt_cgroup_peak_open(&env, 4242, &pk), -1);
    /* rtrack is not in it at all (another pid namespace's view, a stale file) */
    fx_write(root, "sys/fs/cgroup/job/cgroup.procs", "4243\n");
    assert_int_equal(rt_cgroup_peak_open(&env, 4242, &pk), -1);
    fx_rmtree(root);
}

/* The peak, v1: memory.max_usage_in_bytes of the memory hierarchy's cgroup. */
static void test_v1_peak(void **state)
{
    (void)state;
    char root[256];
    struct rt_sysenv env;
    fx_init(root, sizeof(root), &env);
    fx_write(root, "proc/self/cgroup", "9:memory:/rt\n3:cpu,cpuacct:/\n0::/\n");
    fx_write(root, "sys/fs/cgroup/memory/rt/cgroup.procs", "31\n");
    fx_write(root, "sys/fs/cgroup/memory/rt/memory.max_usage_in_bytes", "3145728\n");
    /* v2's root files must not be taken for the job's */
    fx_write(root, "sys/fs/cgroup/unified/cgroup.procs", "1\n31\n");
    fx_write(root, "sys/fs/cgroup/unified/memory.peak", "999999999\n");
    struct rt_cgroup_peak pk;
    assert_int_equal(rt_cgroup_peak_open(&env, 31, &pk), 0);
    assert_int_equal(pk.start, 3145728);
    fx_write(root, "sys/fs/cgroup/memory/rt/memory.max_usage_in_bytes", "734003200\n");
    assert_int_equal(rt_cgroup_peak_end(&pk), 734003200);
    /* the root cgroup holds every process: never the job's */
    fx_write(root, "proc/self/cgroup", "9:memory:/\n0::/\n");
    fx_write(root, "sys/fs/cgroup/memory/cgroup.procs", "1\n31\n");
    fx_write(root, "sys/fs/cgroup/memory/memory.max_usage_in_bytes", "8000000000\n");
    assert_int_equal(rt_cgroup_peak_open(&env, 31, &pk), -1);
    fx_rmtree(root);
}

static void set(const char *name, const char *v)
{
    if (v)
        setenv(name, v, 1);
    else
        unsetenv(name);
}

static struct rt_alloc env_alloc(const char *cpus, const char *mem_node, const char *mem_cpu,
                                 const char *cuda)
{
    set("SLURM_JOB_ID", "12345");
    set("SLURM_CPUS_ON_NODE", cpus);
    set("SLURM_MEM_PER_NODE", mem_node);
    set("SLURM_MEM_PER_CPU", mem_cpu);
    set("CUDA_VISIBLE_DEVICES", cuda);
    struct rt_env e;
    memset(&e, 0, sizeof(e));
    rt_env_load(&e);
    struct rt_alloc a = rt_alloc_none();
    rt_env_alloc(&e, &a);
    return a;
}

/* The environment's part: Slurm's numbers as given; CUDA_VISIBLE_DEVICES counted the way CUDA
 * reads it (unset: unknown; empty: none; up to the first entry it stops at). */
static void test_env(void **state)
{
    (void)state;
    struct rt_alloc a = env_alloc("4", "8192", NULL, "0,1");
    assert_string_equal(a.slurm_job_id, "12345");
    assert_int_equal(a.slurm_cpus_on_node, 4);
    assert_int_equal(a.slurm_mem_per_node_mib, 8192);
    assert_true(a.slurm_mem_per_cpu_mib == RT_NA);
    assert_string_equal(a.cuda_visible_devices, "0,1");
    assert_int_equal(a.gpus, 2);
    a = env_alloc("x", NULL, "2048", "");
    assert_true(a.slurm_cpus_on_node == RT_NA);
    assert_int_equal(a.slurm_mem_per_cpu_mib, 2048);
    assert_string_equal(a.cuda_visible_devices, "");
    assert_int_equal(a.gpus, 0);
    a = env_alloc("-2", NULL, NULL, NULL);
    assert_true(a.slurm_cpus_on_node == RT_NA);
    assert_null(a.cuda_visible_devices);
    assert_true(a.gpus == RT_NA);
    assert_int_equal(env_alloc(NULL, NULL, NULL, "GPU-5f1c,MIG-2,3").gpus, 3);
    assert_int_equal(env_alloc(NULL, NULL, NULL, "2,-1,3").gpus, 1);
    assert_int_equal(env_alloc(NULL, NULL, NULL, "NoDevFiles").gpus, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpuset_count), cmocka_unit_test(test_v2_limits),
        cmocka_unit_test(test_v1_limits),    cmocka_unit_test(test_v2_peak),
        cmocka_unit_test(test_v1_peak),      cmocka_unit_test(test_env),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
