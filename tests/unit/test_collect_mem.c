/* test_collect_mem.c - src/collect/mem.c on fixture trees built here: /proc/meminfo, with and
 * without MemAvailable, and the OOM kill count of /proc/vmstat. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* MemAvailable came with 3.14 (RHEL 7's 3.10 has it backported): without it, used is total less
 * free, buffers, cached and SReclaimable, as the references compute it, and available is NULL,
 * not 0. */
static void test_meminfo_with_and_without_available(void **state)
{
    (void)state;
    static const char head[] = "MemTotal:        8009912 kB\nMemFree:         5123400 kB\n";
    static const char tail[] = "Buffers:            2108 kB\nCached:           932100 kB\n"
                               "SwapCached:            0 kB\nActive:          1503220 kB\n"
                               "Inactive:         702912 kB\nSwapTotal:       2097148 kB\n"
                               "SwapFree:        2097148 kB\nShmem:              9180 kB\n"
                               "Slab:             141236 kB\nSReclaimable:      88532 kB\n";
    char text[1024];
    for (int avail = 0; avail < 2; avail++) {
        struct fx_gen g;
        fx_gen_init(&g);
        snprintf(text, sizeof(text), "%s%s%s", head, avail ? "MemAvailable:    6021000 kB\n" : "",
                 tail);
        fx_write(g.root, "proc/meminfo", text);
        fx_gen_open(&g, 0, 0);
        struct rt_sample *s = fx_gen_sample(&g);
        assert_int_equal(s->mem_total, 8009912);
        assert_int_equal(s->mem_free, 5123400);
        assert_int_equal(s->mem_buffers, 2108);
        assert_int_equal(s->mem_cached, 932100);
        assert_int_equal(s->mem_sreclaimable, 88532);
        assert_int_equal(s->mem_shmem, 9180);
        assert_int_equal(s->mem_active, 1503220);
        assert_int_equal(s->mem_inactive, 702912);
        assert_int_equal(s->swap_total, 2097148);
        assert_int_equal(s->swap_free, 2097148);
        if (avail) {
            assert_int_equal(s->mem_available, 6021000);
            assert_int_equal(s->mem_used, 8009912 - 6021000);
        } else {
            assert_true(s->mem_available == RT_NA);
            assert_int_equal(s->mem_used, 8009912 - 5123400 - 2108 - 932100 - 88532);
        }
        fx_gen_free(&g);
    }
}

/* /proc/vmstat's oom_kill came with 4.13: before it, and without the file, the count is
 * unknown (the run's host_oom_kills NULL), not 0. */
static void test_oom_kills(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    assert_true(rt_oom_kills(&g.env) == RT_NA);
    fx_write(g.root, "proc/vmstat",
             "nr_free_pages 1280850\npgfault 80201733\npgmajfault 4102\ndrop_pagecache 0\n"
             "drop_slab 0\n");
    assert_true(rt_oom_kills(&g.env) == RT_NA);
    fx_write(g.root, "proc/vmstat",
             "nr_free_pages 1280850\npgfault 80201733\npgmajfault 4102\ndrop_pagecache 0\n"
             "drop_slab 0\noom_kill 3\nnuma_pte_updates 0\n");
    assert_int_equal(rt_oom_kills(&g.env), 3);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_meminfo_with_and_without_available),
        cmocka_unit_test(test_oom_kills),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
