/* test_collect_cpu.c - src/collect/cpu.c on fixture trees built here: /proc/stat. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void test_cpu_lines(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    /* an old kernel's 4-field lines, and two cores */
    fx_write(g.root, "proc/stat",
             "cpu  100 0 50 1000\ncpu0 50 0 25 500\ncpu1 50 0 25 500\n"
             "ctxt 10\nbtime 1700000000\nprocesses 99\n"
             "procs_running 3\nprocs_blocked 1\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->ncores, 2);
    assert_true(s->cpu.v[RT_CPU_IOWAIT] == RT_NA);
    assert_int_equal(s->ctxt_total, 10);
    assert_int_equal(s->forks_total, 99);
    assert_int_equal(s->procs_running, 3);
    assert_int_equal(s->btime, 1700000000);
    fx_write(g.root, "proc/stat", "cpu  250 0 50 1050\ncpu0 200 0 25 500\ncpu1 50 0 25 550\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(s->cpu_utime_s - 1.5) < 1e-9);
    assert_true(s->cpu_stime_s == 0.0);
    assert_true(fabs(s->cpu_usage - 1.5) < 1e-9);
    /* 150 busy of 200 ticks on 2 cores = 1.5 cores; core 0 fully busy, core 1 idle */
    assert_true(fabs(s->cpu_busy_cores - 1.5) < 1e-9);
    assert_true(fabs(s->cores[0].busy_pct - 100.0) < 1e-9);
    assert_true(fabs(s->cores[1].busy_pct - 0.0) < 1e-9);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_lines),
    };
    return cmocka_run_group_tests_name("cpu", tests, NULL, NULL);
}
