/* test_collect.c - src/collect/collect.c: every collector through the table at once, on a
 * fixture tree built here and on the live system. One test file per collector beside this one
 * (test_collect_NAME.c for src/collect/NAME.c) holds the rest. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/* Counters at and beyond INT64_MAX: a value beyond int64 is unknown (or its line malformed),
 * sums and byte counts saturate at INT64_MAX. Under the sanitizers this is also the check that
 * none of it overflows (it did in cpu.c, mem.c, disk.c, net.c, psi.c and cgroup.c). */
static void test_huge_counters(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    const char *max = "9223372036854775807", *over = "18446744073709551615";
    const char *hdr = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n";
    char text[1024];
    fx_write(g.root, "proc/stat", "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0\n");
    snprintf(text, sizeof(text),
             "MemTotal: 1000 kB\nMemFree: %s kB\nBuffers: %s kB\nCached: %s kB\n", max, max, over);
    fx_write(g.root, "proc/meminfo", text);
    fx_write(g.root, "sys/block/sda/size", "100\n");
    fx_write(g.root, "sys/block/sdb/size", "100\n");
    fx_write(g.root, "proc/diskstats",
             "8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
    snprintf(text, sizeof(text),
             "%s  eth0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n  eth1: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
             hdr);
    fx_write(g.root, "proc/net/dev", text);
    snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%s\n", over);
    fx_write(g.root, "proc/pressure/cpu", text);
    fx_write(g.root, "proc/self/cgroup", "0::/\n");
    snprintf(text, sizeof(text), "usage_usec %s\n", over);
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", text);
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(s->mem_cached == RT_NA);
    assert_int_equal(s->mem_free, INT64_MAX);
    assert_int_equal(s->mem_used, 1000 - INT64_MAX); /* free + buffers saturated */
    assert_true(s->psi_us[RT_PSI_CPU][RT_PSI_SOME] == RT_NA);
    assert_true(s->cgroup_usage_us == RT_NA);

    snprintf(text, sizeof(text), "cpu  %s %s 0 0 0 0 0 0 0 0\ncpu0 %s 0 %s 0\nctxt %s\n", max, max,
             over, max, over);
    fx_write(g.root, "proc/stat", text);
    snprintf(text, sizeof(text),
             "8 0 sda 0 0 %s 0 0 0 %s 0 0 0 0\n8 16 sdb 0 0 %s 0 0 0 0 0 0 0 0\n", max, max, max);
    fx_write(g.root, "proc/diskstats", text);
    snprintf(
        text, sizeof(text),
        "%s  eth0: %s 0 0 0 0 0 0 0 %s 0 0 0 0 0 0 0\n  eth1: %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        "  eth2: %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        hdr, max, max, max, over);
    fx_write(g.root, "proc/net/dev", text);
    snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%s\n", max);
    fx_write(g.root, "proc/pressure/cpu", text);
    snprintf(text, sizeof(text), "usage_usec %s\n", max);
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", text);
    s = fx_gen_sample(&g);
    assert_true(s->cpu_utime_s > 0 && isfinite(s->cpu_utime_s));
    assert_true(s->cpu_usage > 0 && isfinite(s->cpu_usage));
    assert_true(isfinite(s->cpu_busy_cores));
    assert_true(s->cores[0].t.v[RT_CPU_USER] == RT_NA);
    assert_true(s->ctxt_total == RT_NA);
    assert_int_equal(s->ndisks, 2);
    assert_int_equal(s->disks[0].read_bytes, INT64_MAX); /* sectors * 512, saturated */
    assert_int_equal(s->disk_read_bytes, INT64_MAX);
    assert_int_equal(s->disk_write_bytes, INT64_MAX);
    assert_int_equal(s->nnics, 2); /* eth2's counter beyond int64: its line is malformed */
    assert_int_equal(s->net_rx_bytes, INT64_MAX);
    assert_int_equal(s->net_tx_bytes, INT64_MAX);
    assert_int_equal(s->psi_us[RT_PSI_CPU][RT_PSI_SOME], INT64_MAX);
    assert_true(isnan(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME])); /* no previous value */
    assert_int_equal(s->cgroup_usage_us, INT64_MAX);
    assert_true(isnan(s->cgroup_cpu_s));
    fx_gen_free(&g);
}

static void burn(double secs)
{
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

static void test_live_self(void **state)
{
    (void)state;
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    struct rt_collect_cfg cc = {getpid(), 0, 1.0, 0, NULL};
    struct rt_collectors *col = rt_collectors_open(&env, &cc);
    struct rt_sample a = {0}, b = {0};
    fx_live_sample(col, &a, NULL);
    burn(0.3);
    fx_live_sample(col, &b, &a);
    assert_true(b.mem_total > 0 && b.mem_used > 0 && b.mem_used < b.mem_total);
    assert_int_equal(b.ncores, sysconf(_SC_NPROCESSORS_ONLN));
    assert_true(b.processes > 1);
    assert_int_equal(b.proc_count, 1);
    const struct rt_proc_sample *me = fx_find_proc(&b, getpid());
    assert_non_null(me);
    assert_true(me->pss_kib > 0);
    assert_true(me->rss_kib > 0);
    assert_true(me->read_total != RT_NA);
    /* what this kernel has, as the sample says it (the run keeps it) */
    assert_string_equal(b.proc_memory_source,
                        access("/proc/self/smaps_rollup", R_OK) == 0 ? "smaps_rollup" : "smaps");
    if (access("/proc/self/schedstat", R_OK) == 0)
        assert_true(b.cpu_wait_source ? !strcmp(b.cpu_wait_source, "schedstat")
                                      : !strcmp(b.cpu_wait_missing, "schedstat-off"));
    else
        assert_string_equal(b.cpu_wait_missing, "no-schedstat");
    char probe[256];
    if (rt_read_small("/proc/pressure/cpu", probe, sizeof(probe)) >= 0)
        assert_null(b.psi_missing);
    else
        assert_non_null(b.psi_missing);
    /* 0.3 s of CPU burnt, measured in 10 ms ticks */
    assert_true(b.proc_utime_s + b.proc_stime_s >= 0.25);
    assert_true(b.proc_utime_s + b.proc_stime_s <= b.dt + 0.05);
    assert_true(b.cpu_utime_s + b.cpu_stime_s >= 0.25);
    assert_true(b.nmounts >= 1);
    int root_mounted = 0;
    for (int i = 0; i < b.nmounts; i++)
        root_mounted |= !strcmp(b.mounts[i].ident->mount_point, "/");
    assert_true(root_mounted);
    assert_true(b.space_total > 0);
    rt_collectors_close(col);
    rt_sample_free(&a);
    rt_sample_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_huge_counters),
        cmocka_unit_test(test_live_self),
    };
    return cmocka_run_group_tests_name("collectors", tests, NULL, NULL);
}
