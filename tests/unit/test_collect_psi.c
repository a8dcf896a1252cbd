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
    assert_null(s->psi_missing);
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

/* No PSI: every column NULL, and the sample says why: no /proc/pressure (before 4.20, no
 * CONFIG_PSI), or its files unreadable (RHEL 8: EOPNOTSUPP unless booted with psi=1; here a
 * directory in the file's place, which no read can read either). */
static void test_psi_missing(void **state)
{
    (void)state;
    struct fx_gen g;
    for (int off = 0; off < 2; off++) {
        fx_gen_init(&g);
        char dir[300];
        snprintf(dir, sizeof(dir), "%s/proc/pressure/cpu", g.root);
        if (off)
            fx_mkdirs(dir);
        fx_gen_open(&g, 0, 0);
        fx_gen_sample(&g);
        struct rt_sample *s = fx_gen_sample(&g);
        assert_string_equal(s->psi_missing, off ? "psi-off" : "no-pressure");
        for (int r = 0; r < RT_PSI_NRES; r++)
            for (int k = 0; k < RT_PSI_NKIND; k++) {
                assert_true(s->psi_us[r][k] == RT_NA);
                assert_true(isnan(s->psi_pct[r][k]));
            }
        fx_gen_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_psi),
        cmocka_unit_test(test_psi_missing),
    };
    return cmocka_run_group_tests_name("pressure", tests, NULL, NULL);
}
