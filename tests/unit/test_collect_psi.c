/* test_collect_psi.c - src/collect/psi.c on fixture trees built here: /proc/pressure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void test_psi(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/pressure/cpu",
             "some avg10=1.00 avg60=0.50 avg300=0.10 total=1000000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    fx_write(g.root, "proc/pressure/memory",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->psi_us[RT_PSI_CPU][RT_PSI_SOME], 1000000);
    assert_true(isnan(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME]));
    assert_true(s->psi_us[RT_PSI_IO][RT_PSI_SOME] == RT_NA); /* file absent */
    fx_write(g.root, "proc/pressure/cpu",
             "some avg10=1.00 avg60=0.50 avg300=0.10 total=1250000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=100000\n");
    s = fx_gen_sample(&g); /* one second later */
    assert_true(fabs(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME] - 25.0) < 1e-9);
    assert_true(fabs(s->psi_pct[RT_PSI_CPU][RT_PSI_FULL] - 10.0) < 1e-9);
    assert_true(fabs(s->psi_pct[RT_PSI_MEMORY][RT_PSI_SOME] - 0.0) < 1e-9);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psi),
    };
    return cmocka_run_group_tests_name("pressure", tests, NULL, NULL);
}
