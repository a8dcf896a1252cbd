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

/* A container without a cgroup namespace (Docker on a cgroup v1 host, as on Amazon Linux 2's
 * ECS): /proc/self/cgroup names the host's path, which does not exist inside; the container's
 * own cgroup is mounted at each hierarchy's mount point, the host's path as the mount's root.
 * Its CPU time, quota, cpuset, memory limit and peak are read there (they were all NULL). */
static void test_cgroup_v1_container(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    const char *id = "/docker/4f1c0a5e9b7d";
    char text[2048];
    snprintf(text, sizeof(text),
             "11:pids:%s\n4:memory:%s\n3:cpuset:%s\n2:cpu,cpuacct:%s\n1:name=systemd:%s\n", id, id,
             id, id, id);
    fx_write(g.root, "proc/self/cgroup", text);
    snprintf(text, sizeof(text),
             "812 695 0:171 / / rw,relatime master:312 - overlay overlay rw,lowerdir=/l,upperdir="
             "/u,workdir=/w\n"
             "816 812 0:175 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro\n"
             "817 816 0:176 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - tmpfs tmpfs "
             "rw,mode=755\n"
             "818 817 0:27 %s /sys/fs/cgroup/systemd ro,nosuid,nodev,noexec,relatime master:9 - "
             "cgroup cgroup rw,xattr,release_agent=/usr/lib/systemd/systemd-cgroups-agent,"
             "name=systemd\n"
             "819 817 0:30 %s /sys/fs/cgroup/cpu,cpuacct ro,nosuid,nodev,noexec,relatime "
             "master:12 - cgroup cgroup rw,cpu,cpuacct\n"
             "820 817 0:31 %s /sys/fs/cgroup/cpuset ro,nosuid,nodev,noexec,relatime master:13 - "
             "cgroup cgroup rw,cpuset\n"
             "821 817 0:32 %s /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime master:14 - "
             "cgroup cgroup rw,memory\n",
             id, id, id, id);
    fx_write(g.root, "proc/self/mountinfo", text);
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/cpuacct.usage", "2500000000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    fx_symlink(g.root, "sys/fs/cgroup/cpu", "cpu,cpuacct");
    fx_symlink(g.root, "sys/fs/cgroup/cpuacct", "cpu,cpuacct");
    fx_write(g.root, "sys/fs/cgroup/cpuset/cpuset.cpus", "2-3\n");
    fx_write(g.root, "sys/fs/cgroup/cpuset/cpuset.effective_cpus", "2-3\n");
    fx_write(g.root, "sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
    fx_write(g.root, "sys/fs/cgroup/memory/memory.max_usage_in_bytes", "104857600\n");
    fx_write(g.root, "sys/fs/cgroup/memory/cgroup.procs", "4242\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 2500000);
    assert_true(fabs(s->cgroup_limit_cores - 0.5) < 1e-9);
    struct rt_alloc a;
    rt_cgroup_alloc_read(&g.env, &a);
    assert_true(fabs(a.cgroup_cpu_cores - 0.5) < 1e-9);
    assert_int_equal(a.cgroup_cpuset_cpus, 2);
    assert_int_equal(a.cgroup_memory_bytes, 536870912);
    struct rt_cgroup_peak p;
    assert_int_equal(rt_cgroup_peak_open(&g.env, 4242, &p), 0);
    assert_int_equal(p.start, 104857600);
    fx_write(g.root, "sys/fs/cgroup/memory/memory.max_usage_in_bytes", "209715200\n");
    assert_int_equal(rt_cgroup_peak_end(&p), 209715200);
    /* a mount that shows another part of the hierarchy than rtrack's cgroup is no answer */
    fx_write(g.root, "proc/self/cgroup", "2:cpu,cpuacct:/elsewhere\n");
    rt_cgroup_alloc_read(&g.env, &a);
    assert_true(isnan(a.cgroup_cpu_cores));
    fx_gen_free(&g);
}

/* The same on a cgroup v2 host with the container in the host's cgroup namespace
 * (--cgroupns=host): the v2 hierarchy mounted at /sys/fs/cgroup, its root the container's. */
static void test_cgroup_v2_container(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "0::/system.slice/docker-4f1c0a5e9b7d.scope\n");
    fx_write(g.root, "proc/self/mountinfo",
             "812 695 0:171 / / rw,relatime - overlay overlay rw,lowerdir=/l\n"
             "817 812 0:26 /system.slice/docker-4f1c0a5e9b7d.scope /sys/fs/cgroup "
             "ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n");
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", "usage_usec 7000000\nuser_usec 6000000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu.max", "200000 100000\n");
    fx_write(g.root, "sys/fs/cgroup/memory.max", "1073741824\n");
    fx_write(g.root, "sys/fs/cgroup/cgroup.procs", "77\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 7000000);
    assert_true(fabs(s->cgroup_limit_cores - 2.0) < 1e-9);
    struct rt_alloc a;
    rt_cgroup_alloc_read(&g.env, &a);
    assert_true(fabs(a.cgroup_cpu_cores - 2.0) < 1e-9);
    assert_int_equal(a.cgroup_memory_bytes, 1073741824);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cgroup_v2),           cmocka_unit_test(test_cgroup_v1),
        cmocka_unit_test(test_cgroup_follows_root), cmocka_unit_test(test_cgroup_v1_container),
        cmocka_unit_test(test_cgroup_v2_container),
    };
    return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
