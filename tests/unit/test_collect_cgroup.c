/* test_collect_cgroup.c - src/collect/cgroup.c on fixture trees built here: the CPU time and
 * quota of rtrack's cgroup, v2 and v1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

/* cgroup v2: rtrack's own cgroup (a Slurm job's), the limit from an ancestor's cpu.max */
static void test_cgroup_v2(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "0::/slurm/job_7/step_0\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.stat",
             "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.max", "max 100000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/cpu.max", "250000 100000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/cpu.max", "400000 100000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", "usage_usec 99999999999\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 5000000);
    assert_true(isnan(s->cgroup_cpu_s));
    assert_true(fabs(s->cgroup_limit_cores - 2.5) < 1e-9);
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.stat", "usage_usec 6750000\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 1.75) < 1e-9);
    fx_gen_free(&g);
}

/* cgroup v1: cpuacct.usage in ns, quota from the cpu controller; no quota is NULL */
static void test_cgroup_v1(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpuacct.usage", "1000000000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 1000000);
    assert_true(isnan(s->cgroup_limit_cores));
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpuacct.usage", "1500000000\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 0.5) < 1e-9);
    fx_gen_free(&g);
    /* without any cgroup file: NULL, not 0 */
    fx_gen_init(&g);
    fx_gen_open(&g, 0, 0);
    s = fx_gen_sample(&g);
    assert_true(s->cgroup_usage_us == RT_NA);
    fx_gen_free(&g);
}

/* The collector follows the root it is given at each sample, as every other collector does: a
 * fixture case's second snapshot is another directory (tests/fixtures/kernels/), and its
 * cgroup's CPU time must be read there, not in the first one again (it read 0 s). */
static void test_cgroup_follows_root(void **state)
{
    (void)state;
    struct fx_gen a, b;
    fx_gen_init(&a);
    fx_gen_init(&b);
    for (int i = 0; i < 2; i++) {
        const char *root = i ? b.root : a.root;
        fx_write(root, "proc/self/cgroup", "3:cpuacct,cpu:/slurm/job_1\n");
        fx_write(root, "sys/fs/cgroup/cpu,cpuacct/slurm/job_1/cpuacct.usage",
                 i ? "3500000000\n" : "1000000000\n");
    }
    fx_gen_open(&a, 0, 0);
    struct rt_sample *s = fx_gen_sample(&a);
    assert_int_equal(s->cgroup_usage_us, 1000000);
    a.env.root = b.root;
    s = fx_gen_sample(&a);
    assert_int_equal(s->cgroup_usage_us, 3500000);
    assert_true(fabs(s->cgroup_cpu_s - 2.5) < 1e-9);
    a.env.root = a.root;
    fx_gen_free(&a);
    fx_gen_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgroup_v2),
        cmocka_unit_test(test_cgroup_v1),
        cmocka_unit_test(test_cgroup_follows_root),
    };
    return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
