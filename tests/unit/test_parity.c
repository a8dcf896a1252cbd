/* test_parity.c - the golden cases of the Python reference (tests/fixtures/parity, a copy of
 * shared/parity/cases) drive the real collectors a -> b; every value the Python CSV row holds
 * is checked against what rtrack computed, after the reference's rounding. The byte-for-byte
 * CSV comparison belongs to the export tests; here the numbers themselves are checked.
 *
 * Where rtrack corrects a Python bug the *-fixed.csv row is the expectation (cases 05, 06, 08,
 * 11). Case 10 has two rtrack-specific differences, derived below. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

struct override {
    const char *name, *value;
};

struct pcase {
    const char *name;
    const struct override *sys_over, *proc_over;
};

/* Case 10 under rtrack's rules:
 *  - network is summed per interface present in both samples: the removed veth does not cancel
 *    eth0's traffic (rx +182000, tx +5000; Python: 0 and 3800 from sum-then-difference);
 *  - the tree keeps grandchild 4103 after its re-parenting to init (sticky membership), and the
 *    reaped child 4102's ticks are taken back only as far as the root's cutime grew:
 *    utime ticks = root +1, 4102's last 30 via cutime, 4101 +85, 4103 +30, new 4110 +12 = 158;
 *    stime = 0 + 5 + 12 + 2 + 3 = 22; children 4101, 4103, 4110 = 3; PSS 3016 + 179426 +
 *    18432 + 30123 kB; read = 8192 + 1048576 + 1000000; write = 12288 + 2097152 - 4096 (4102's
 *    writes that arrived in the root's io). */
static const struct override c10_sys[] = {
    {"net_recv_bytes", "182000"}, {"net_sent_bytes", "5000"}, {NULL, NULL}};
static const struct override c10_proc[] = {{"children", "3"},
                                           {"utime", "1.58"},
                                           {"stime", "0.22"},
                                           {"cpu_usage", "1.7991"},
                                           {"memory_mib", "225.583"},
                                           {"disk_read_bytes", "2056768"},
                                           {"disk_write_bytes", "2105344"},
                                           {NULL, NULL}};

static const struct pcase cases[] = {
    {"01-idle-2core", NULL, NULL},      {"02-busy-8core", NULL, NULL},
    {"03-process-tree", NULL, NULL},    {"04-zero-deltas", NULL, NULL},
    {"05-sector-4096", NULL, NULL},     {"06-partitions", NULL, NULL},
    {"07-no-memavailable", NULL, NULL}, {"08-comm-spaces", NULL, NULL},
    {"09-rounding-edges", NULL, NULL},  {"10-churn", c10_sys, c10_proc},
    {"11-mount-quirks", NULL, NULL},
};

static const char *expect(const struct fx_row *r, const struct override *ov, const char *name)
{
    for (; ov && ov->name; ov++)
        if (!strcmp(ov->name, name))
            return ov->value;
    const char *v = fx_row_get(r, name);
    if (!v)
        fail_msg("column %s missing from the expected row", name);
    return v;
}

/* A float column: the value rounded as Python rounds it. An expected int 0 means "the delta
 * was <= 0" for clamped columns: rtrack stores 0 then. */
static void check_f(const char *col, double got, int dp, const char *want)
{
    if (isnan(got))
        fail_msg("%s: rtrack has no value, expected %s", col, want);
    double g = py_round(got, dp), w = strtod(want, NULL);
    if (g != w)
        fail_msg("%s: rtrack %.*f (raw %.10g), expected %s", col, dp, g, got, want);
}

static void check_i(const char *col, int64_t got, const char *want)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)got);
    if (strcmp(buf, want) != 0)
        fail_msg("%s: rtrack %s, expected %s", col, buf, want);
}

static void fixture_path(char *out, size_t n, const char *cname, const char *file)
{
    snprintf(out, n, "%s/parity/%s/%s", RT_FIXTURES, cname, file);
}

static int exists(const char *p)
{
    FILE *f = fopen(p, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

static void test_case(void **state)
{
    const struct pcase *pc = *state;
    char dir[1024], path[1200];
    snprintf(dir, sizeof(dir), "%s/parity/%s", RT_FIXTURES, pc->name);
    struct fx_case c;
    fx_case_run(&c, dir, -1, 0);
    const struct rt_sample *b = &c.b;

    struct fx_row r;
    fixture_path(path, sizeof(path), pc->name, "expected-system-fixed.csv");
    if (!exists(path))
        fixture_path(path, sizeof(path), pc->name, "expected-system.csv");
    assert_int_equal(fx_row_load(&r, path), 0);
    const struct override *o = pc->sys_over;
    check_f("timestamp", b->ts, 3, expect(&r, o, "timestamp"));
    check_i("processes", b->processes, expect(&r, o, "processes"));
    check_f("utime", b->cpu_utime_s, 6, expect(&r, o, "utime"));
    check_f("stime", b->cpu_stime_s, 6, expect(&r, o, "stime"));
    check_f("cpu_usage", b->cpu_usage, 4, expect(&r, o, "cpu_usage"));
    check_f("memory_free_mib", (double)b->mem_free / 1024, 4, expect(&r, o, "memory_free_mib"));
    check_f("memory_used_mib", (double)b->mem_used / 1024, 4, expect(&r, o, "memory_used_mib"));
    check_f("memory_buffers_mib", (double)b->mem_buffers / 1024, 4,
            expect(&r, o, "memory_buffers_mib"));
    check_f("memory_cached_mib", (double)(b->mem_cached + b->mem_sreclaimable) / 1024, 4,
            expect(&r, o, "memory_cached_mib"));
    check_f("memory_active_mib", (double)b->mem_active / 1024, 4,
            expect(&r, o, "memory_active_mib"));
    check_f("memory_inactive_mib", (double)b->mem_inactive / 1024, 4,
            expect(&r, o, "memory_inactive_mib"));
    check_i("disk_read_bytes", b->disk_read_bytes, expect(&r, o, "disk_read_bytes"));
    check_i("disk_write_bytes", b->disk_write_bytes, expect(&r, o, "disk_write_bytes"));
    check_f("disk_space_total_gb", (double)b->space_total / 1e9, 2,
            expect(&r, o, "disk_space_total_gb"));
    check_f("disk_space_used_gb", (double)b->space_used / 1e9, 2,
            expect(&r, o, "disk_space_used_gb"));
    check_f("disk_space_free_gb", (double)b->space_free / 1e9, 2,
            expect(&r, o, "disk_space_free_gb"));
    check_i("net_recv_bytes", b->net_rx_bytes, expect(&r, o, "net_recv_bytes"));
    check_i("net_sent_bytes", b->net_tx_bytes, expect(&r, o, "net_sent_bytes"));
    fx_row_free(&r);

    if (c.pid > 0) {
        fixture_path(path, sizeof(path), pc->name, "expected-process-fixed.csv");
        if (!exists(path))
            fixture_path(path, sizeof(path), pc->name, "expected-process.csv");
        assert_int_equal(fx_row_load(&r, path), 0);
        o = pc->proc_over;
        assert_int_equal(b->has_tree, 1);
        check_f("timestamp", b->ts, 3, expect(&r, o, "timestamp"));
        check_i("pid", b->root_pid, expect(&r, o, "pid"));
        const char *ch = expect(&r, o, "children");
        check_i("children", b->proc_children, *ch ? ch : "0");
        check_f("utime", b->proc_utime_s, 6, expect(&r, o, "utime"));
        check_f("stime", b->proc_stime_s, 6, expect(&r, o, "stime"));
        check_f("cpu_usage", b->proc_cpu_usage, 4, expect(&r, o, "cpu_usage"));
        check_f("memory_mib", (double)b->proc_pss_kib / 1024, 4, expect(&r, o, "memory_mib"));
        check_i("disk_read_bytes", b->proc_read_bytes, expect(&r, o, "disk_read_bytes"));
        check_i("disk_write_bytes", b->proc_write_bytes, expect(&r, o, "disk_write_bytes"));
        fx_row_free(&r);
        /* the per-process rows add up to the tree's totals */
        double u = 0;
        int64_t w = 0;
        for (int i = 0; i < b->nprocs; i++) {
            u += isnan(b->procs[i].cpu_utime_s) ? 0 : b->procs[i].cpu_utime_s;
            w += b->procs[i].write_bytes == RT_NA ? 0 : b->procs[i].write_bytes;
        }
        assert_true(fabs(u - b->proc_utime_s) < 1e-9);
        assert_int_equal(w, b->proc_write_bytes);
    }
    fx_case_free(&c);
}

/* cpu_usage prints the int 0 only for a rate <= 0; a positive rate that rounds to 0 is the
 * float 0.0 (case 09): rtrack must keep that distinction in what it stores. */
static void test_positive_rate_rounding_to_zero_is_kept(void **state)
{
    (void)state;
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/parity/09-rounding-edges", RT_FIXTURES);
    struct fx_case c;
    fx_case_run(&c, dir, -1, 0);
    assert_true(c.b.cpu_usage > 0);
    assert_true(py_round(c.b.cpu_usage, 4) == 0.0);
    assert_true(c.b.proc_cpu_usage > 0);
    assert_true(c.b.cpu_stime_s == 0.0);
    fx_case_free(&c);
}

int main(void)
{
    struct CMUnitTest tests[RT_ARRAY_LEN(cases) + 1];
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate(test_case, (void *)&cases[i]);
        tests[i].name = cases[i].name;
    }
    tests[RT_ARRAY_LEN(cases)] =
        (struct CMUnitTest)cmocka_unit_test(test_positive_rate_rounding_to_zero_is_kept);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
