/* test_collect_cgroup_step.c - src/collect/cgroup_step.c and record --cgroup's parts of
 * src/collect/cgroup.c and proc.c, on fixture trees built here: a Slurm step's cgroup, v1
 * (the same path in each hierarchy: proctrack/cgroup's freezer, task/cgroup's memory and
 * cpuset, jobacct_gather/cgroup's cpuacct) and v2; its processes in the tree wherever their
 * parents are, its allocation, its CPU (made after the recorder's start: counted from zero),
 * its peak and its OOM kills (v1: each task's own cgroup, gone by the end). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#define P(...) (&(struct fx_proc){__VA_ARGS__})
#define STEP   "/slurm_n1/uid_0/job_7/step_0"
#define V1(c)  "sys/fs/cgroup/" c STEP

/* v1: the processes of the step's freezer cgroup belong to the tree (a task whose parent is
 * init, not slurmstepd); another process of init's is not; the cgroup's CPU appears with the
 * first task and counts from zero; the allocation is the step's cpuset and its job's limit */
static void test_step_v1(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "4:memory:/\n0::/\n");
    fx_write_proc(g.root, P(.pid = 1, .ppid = 0, .comm = "init", .pss_kib = -1, .read_bytes = -1));
    fx_write_proc(g.root, P(.pid = 100, .ppid = 1, .comm = "slurmstepd", .utime = 5,
                            .starttime = 100, .rss_pages = 100, .pss_kib = 2048));
    fx_write_proc(g.root, P(.pid = 200, .ppid = 100, .comm = "task0", .utime = 300,
                            .starttime = 200, .rss_pages = 100, .pss_kib = 4096));
    fx_write_proc(g.root, P(.pid = 300, .ppid = 1, .comm = "task1", .utime = 200, .starttime = 300,
                            .rss_pages = 100, .pss_kib = 8192));
    fx_write_proc(g.root, P(.pid = 400, .ppid = 1, .comm = "other", .utime = 900, .starttime = 400,
                            .rss_pages = 100, .pss_kib = 65536));
    fx_write(g.root, V1("freezer") "/cgroup.procs", "100\n200\n");
    fx_write(g.root, V1("freezer") "/task_1/cgroup.procs", "300\n");
    fx_write(g.root, V1("cpuset") "/cpuset.cpus", "2-3\n");
    fx_write(g.root, V1("memory") "/memory.limit_in_bytes", "9223372036854771712\n");
    fx_write(g.root, "sys/fs/cgroup/memory/slurm_n1/uid_0/job_7/memory.limit_in_bytes",
             "629145600\n");
    g.cgroup = STEP;
    fx_gen_open(&g, 100, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_non_null(fx_find_proc(s, 300));
    assert_null(fx_find_proc(s, 400));
    assert_int_equal(s->nprocs, 3);
    assert_true(s->cgroup_usage_us == RT_NA); /* no cpuacct cgroup yet */
    /* the first task made the step's cpuacct cgroup: 1.25 s since, all of it the run's */
    fx_write(g.root, V1("cpuacct") "/cpuacct.usage", "1250000000\n");
    s = fx_gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 1250000);
    assert_true(fabs(s->cgroup_cpu_s - 1.25) < 1e-9);
    fx_write(g.root, V1("cpuacct") "/cpuacct.usage", "2000000000\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 0.75) < 1e-9);
    struct rt_alloc a = rt_alloc_none();
    rt_cgroup_alloc_read_at(&g.env, STEP, &a);
    assert_int_equal(a.cgroup_cpuset_cpus, 2);
    assert_int_equal(a.cgroup_memory_bytes, 629145600);
    assert_true(isnan(a.cgroup_cpu_cores));
    fx_gen_free(&g);
}

/* without --cgroup the same tree is slurmstepd's alone: the orphaned task is not in it */
static void test_step_without_cgroup(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 100, .ppid = 1, .comm = "slurmstepd", .starttime = 100,
                            .rss_pages = 1, .pss_kib = 4));
    fx_write_proc(g.root, P(.pid = 300, .ppid = 1, .comm = "task1", .starttime = 300,
                            .rss_pages = 1, .pss_kib = 4));
    fx_write(g.root, V1("freezer") "/cgroup.procs", "100\n300\n");
    fx_gen_open(&g, 100, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_null(fx_find_proc(s, 300));
    assert_int_equal(s->nprocs, 1);
    fx_gen_free(&g);
}

/* v1's OOM kills: each cgroup's own count, the task's added to the step's; a task cgroup gone by
 * the end keeps what a poll saw. The peak: polled, the last reading kept when the cgroup is
 * gone; a memory cgroup made after the start counts from zero. */
static void test_step_v1_oom_peak(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, V1("memory") "/memory.oom_control",
             "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
    fx_write(g.root, V1("memory") "/task_0/memory.oom_control",
             "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
    struct rt_cgroup_oom o;
    assert_int_equal(rt_cgroup_oom_open(&g.env, STEP, &o), 0);
    fx_write(g.root, V1("memory") "/task_0/memory.oom_control", "oom_kill 3\n");
    fx_write(g.root, V1("memory") "/task_1/memory.oom_control", "oom_kill 1\n");
    rt_cgroup_oom_poll(&o);
    char path[512];
    snprintf(path, sizeof(path), "%s/" V1("memory") "/task_0", g.root);
    fx_rmtree(path);
    assert_int_equal(rt_cgroup_oom_end(&o), 2);
    /* a step whose memory cgroup came after the start: its kills from zero */
    struct rt_cgroup_oom late;
    assert_int_equal(rt_cgroup_oom_open(&g.env, "/slurm_n1/uid_0/job_7/step_1", &late), -1);
    fx_write(g.root, "sys/fs/cgroup/memory/slurm_n1/uid_0/job_7/step_1/memory.oom_control",
             "oom_kill 1\n");
    assert_int_equal(rt_cgroup_oom_end(&late), 1);
    /* the peak */
    struct rt_cgroup_peak pk;
    assert_int_equal(rt_cgroup_peak_open_at(&g.env, "/slurm_n1/uid_0/job_7/step_2", &pk), -1);
    fx_write(g.root, "sys/fs/cgroup/memory/slurm_n1/uid_0/job_7/step_2/memory.max_usage_in_bytes",
             "314572800\n");
    rt_cgroup_peak_poll(&pk);
    snprintf(path, sizeof(path), "%s/sys/fs/cgroup/memory/slurm_n1/uid_0/job_7/step_2", g.root);
    fx_rmtree(path);
    assert_int_equal(rt_cgroup_peak_end(&pk), 314572800);
    /* a cgroup in no hierarchy: no count */
    assert_int_equal(rt_cgroup_oom_open(&g.env, "/nowhere", &o), -1);
    o.start = RT_NA; /* (as a run without --cgroup holds it) */
    assert_true(rt_cgroup_oom_end(&o) == RT_NA);
    fx_gen_free(&g);
}

/* v2: the step's processes below it (slurmstepd in step_0/slurm, the tasks in step_0/user/task_N),
 * memory.events counting the cgroups below too, memory.peak, cpu.max and the effective cpuset */
static void test_step_v2(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    const char *d = "sys/fs/cgroup/system.slice/slurmstepd.scope/job_7/step_0";
    char rel[512];
#define AT(f) (snprintf(rel, sizeof(rel), "%s/%s", d, f), rel)
    fx_write_proc(g.root, P(.pid = 100, .ppid = 1, .comm = "slurmstepd", .starttime = 100,
                            .rss_pages = 1, .pss_kib = 4));
    fx_write_proc(g.root, P(.pid = 300, .ppid = 1, .comm = "task0", .utime = 70, .starttime = 300,
                            .rss_pages = 1, .pss_kib = 4));
    fx_write(g.root, AT("cgroup.procs"), "");
    fx_write(g.root, AT("slurm/cgroup.procs"), "100\n");
    fx_write(g.root, AT("user/task_0/cgroup.procs"), "300\n");
    fx_write(g.root, AT("cpu.stat"), "usage_usec 500000\n");
    fx_write(g.root, AT("cpu.max"), "200000 100000\n");
    fx_write(g.root, AT("cpuset.cpus.effective"), "0,4\n");
    fx_write(g.root, AT("memory.max"), "1073741824\n");
    fx_write(g.root, AT("memory.peak"), "1048576\n");
    fx_write(g.root, AT("memory.events"), "low 0\nhigh 0\nmax 3\noom 1\noom_kill 0\n");
    const char *cg = "/system.slice/slurmstepd.scope/job_7/step_0";
    g.cgroup = cg;
    struct rt_cgroup_oom o;
    assert_int_equal(rt_cgroup_oom_open(&g.env, cg, &o), 0);
    struct rt_cgroup_peak pk;
    assert_int_equal(rt_cgroup_peak_open_at(&g.env, cg, &pk), 0);
    fx_gen_open(&g, 100, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_non_null(fx_find_proc(s, 300));
    assert_true(fabs(s->cgroup_limit_cores - 2.0) < 1e-9);
    fx_write(g.root, AT("cpu.stat"), "usage_usec 2500000\n");
    fx_write(g.root, AT("memory.events"), "oom 2\noom_kill 2\n");
    fx_write(g.root, AT("memory.peak"), "536870912\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 2.0) < 1e-9);
    rt_cgroup_oom_poll(&o);
    rt_cgroup_peak_poll(&pk);
    assert_int_equal(rt_cgroup_oom_end(&o), 2);
    assert_int_equal(rt_cgroup_peak_end(&pk), 536870912);
    struct rt_alloc a = rt_alloc_none();
    rt_cgroup_alloc_read_at(&g.env, cg, &a);
    assert_int_equal(a.cgroup_cpuset_cpus, 2);
    assert_int_equal(a.cgroup_memory_bytes, 1073741824);
    assert_true(fabs(a.cgroup_cpu_cores - 2.0) < 1e-9);
#undef AT
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_step_v1),
        cmocka_unit_test(test_step_without_cgroup),
        cmocka_unit_test(test_step_v1_oom_peak),
        cmocka_unit_test(test_step_v2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
