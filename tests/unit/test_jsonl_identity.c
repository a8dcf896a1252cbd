/* test_jsonl_identity.c - the JSON Lines the exporter writes are byte for byte the lines the
 * rust_sample view of rtrack 47d1eed wrote with the changes made on purpose since
 * (tests/fixtures/jsonl/rust_sample_v2.sql: that view, frozen, and each change named),
 * for every parity case recorded through the real collectors and store, and for the values
 * those cases do not reach (GPUs, text that JSON escapes, NULLs, reals SQLite prints with an
 * exponent), written into the same database by SQL. The view is the oracle: SQLite's
 * json_object() decides every byte (number text, escapes, key order), independently of the
 * exporter under test. Both the whole-run export and the live path (one sample by id) are
 * compared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"
#include "rtrack/export/export.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "testlib.h"

static char dir[256], dbpath[300];

static int setup(void **state)
{
    (void)state;
    return fx_tmpdir(dir, sizeof(dir), dbpath, sizeof(dbpath));
}

static int teardown(void **state)
{
    (void)state;
    fx_rmtree(dir);
    return 0;
}

static void exec_sql(struct rt_store *s, const char *sql)
{
    struct rt_store_rows *r = rt_store_rows_open(s, sql);
    if (!r)
        fail_msg("sql refused: %s\n%s", rt_store_error(s), sql);
    while (rt_store_rows_next(r) == 1)
        ;
    rt_store_rows_close(r);
}

static void create_oracle(struct rt_store *s)
{
    char *sql = fx_slurp(RT_FIXTURES "/jsonl/rust_sample_v2.sql");
    assert_non_null(sql);
    exec_sql(s, sql);
    free(sql);
}

/* one store per run: a store records one run */
static int64_t record_case(const char *cname)
{
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    char cdir[1024];
    snprintf(cdir, sizeof(cdir), "%s/parity/%s", RT_FIXTURES, cname);
    struct fx_case c;
    fx_case_run(&c, cdir, -1, 0);
    struct rt_host_info h;
    rt_host_info_read(&c.env, &h);
    struct rt_run_desc rs = {.mode = "record",
                             .pid = c.pid,
                             .interval = 1.0,
                             .started_at = c.time_a,
                             .host = &h,
                             .clk_tck = c.env.clk_tck,
                             .page_size = c.env.page_size};
    int64_t run;
    if (rt_store_begin_run(s, &rs, &run) != 0)
        fail_msg("%s: %s", cname, rt_store_error(s));
    rt_host_info_free(&h);
    assert_int_equal(rt_store_add_sample(s, &c.a), 0);
    assert_int_equal(rt_store_add_sample(s, &c.b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    rt_store_close(s);
    fx_case_free(&c);
    return run;
}

static char *export_run(struct rt_store *s, int64_t run)
{
    struct rt_export_query q = {RT_FMT_JSONL, RT_TABLE_COMBINED, run, RT_NAN, RT_NAN, 0, 0, 0, 0};
    char err[256] = "";
    struct rt_exporter *x = rt_exporter_open(s, &q, err, sizeof(err));
    if (!x)
        fail_msg("exporter: %s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(rt_exporter_header(x, m), 0);
    assert_true(rt_exporter_rows(x, m, err, sizeof(err)) >= 0);
    fclose(m);
    rt_exporter_close(x);
    return text;
}

/* the live path: one sample by id, as rt_live_write() asks for it */
static char *export_sample(struct rt_store *s, int64_t sample_id)
{
    struct rt_export_query q = {RT_FMT_JSONL, RT_TABLE_COMBINED, 0, RT_NAN, RT_NAN, 1, 0, 0, 0};
    char err[256] = "";
    struct rt_exporter *x = rt_exporter_open(s, &q, err, sizeof(err));
    if (!x)
        fail_msg("exporter: %s", err);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_int_equal(rt_exporter_sample(x, sample_id, m), 0);
    fclose(m);
    rt_exporter_close(x);
    return text;
}

/* The oracle's lines of a run, and the same run through the exporter, whole and per sample;
 * returns the number of lines compared. */
static int compare_run(struct rt_store *s, int64_t run, const char *what)
{
    struct rt_store_rows *r = rt_store_rows_open(
        s, "SELECT sample_id, json FROM rust_sample_v2 WHERE run_id = ?1 ORDER BY seq");
    assert_non_null(r);
    rt_store_rows_bind_i(r, 1, run);
    char *want = NULL;
    size_t wlen = 0;
    FILE *m = open_memstream(&want, &wlen);
    int n = 0;
    while (rt_store_rows_next(r) == 1) {
        const char *line = rt_store_rows_t(r, 1);
        fprintf(m, "%s\n", line);
        char *one = export_sample(s, rt_store_rows_i(r, 0));
        char *want1 = xasprintf("%s\n", line);
        if (strcmp(one, want1) != 0)
            fail_msg("%s: live line of sample %lld differs:\nexporter: %sview:     %s", what,
                     (long long)rt_store_rows_i(r, 0), one, want1);
        free(one);
        free(want1);
        n++;
    }
    rt_store_rows_close(r);
    fclose(m);
    char *got = export_run(s, run);
    if (strcmp(got, want) != 0) {
        size_t i = 0;
        while (got[i] && got[i] == want[i])
            i++;
        fail_msg("%s: export differs at byte %zu:\nexporter: %.200s\nview:     %.200s", what, i,
                 got + (i > 40 ? i - 40 : 0), want + (i > 40 ? i - 40 : 0));
    }
    free(got);
    free(want);
    return n;
}

static const char *const cases[] = {
    "01-idle-2core",     "02-busy-8core", "03-process-tree",    "04-zero-deltas",
    "05-sector-4096",    "06-partitions", "07-no-memavailable", "08-comm-spaces",
    "09-rounding-edges", "10-churn",      "11-mount-quirks",
};

/* Every parity case, each a run of its own in one database (the exporter must keep runs
 * apart too). */
static void test_parity_cases(void **state)
{
    (void)state;
    int64_t runs[RT_ARRAY_LEN(cases)];
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++)
        runs[i] = record_case(cases[i]);
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    create_oracle(s);
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++)
        assert_int_equal(compare_run(s, runs[i], cases[i]), 1);
    rt_store_close(s);
}

/* What the fixtures do not hold, put into a recorded case by SQL: two GPUs (NVIDIA and AMD,
 * one with most values unknown) with tree processes on them, text JSON must escape in every
 * text field the lines carry, reals with exponents and negative values, a sample whose
 * interval is unknown, a second sample with other children, and a mount shared by two disks'
 * names (the view's first-mount-per-source rule). */
static const char edge_sql[] =
    "UPDATE runs SET job_name = 'job \"q\" \\ back' || char(10) || 'tab' || char(9) || "
    "  char(1) || char(31) || char(127) || ' é ✓', rtrack_version = 'v' || char(8) || char(12);"
    "UPDATE processes SET name = 'a\"b\\c' || char(13) || char(10) || char(0x1f) WHERE id = "
    "  (SELECT min(id) FROM processes);"
    "UPDATE nics SET mac = NULL, driver = 'dr\"v', speed_mbps = -1;"
    "UPDATE disks SET model = 'Model ' || char(9) || '\"x\"', serial = NULL;"
    "UPDATE mounts SET fstype = 'ext4\\x';"
    "UPDATE samples SET cpu_busy_cores = 1.5e-7, cgroup_cpu_s = 12345678901234567890.0, "
    "  cgroup_limit_cores = 0.5, mem_total_kib = 1023, swap_total_kib = 2048, swap_free_kib = 4096,"
    "  psi_cpu_some_pct = 1e300, psi_io_full_pct = -0.0, psi_memory_some_us = -5 "
    "  WHERE kind <> 'baseline';"
    "INSERT INTO samples (run_id, seq, kind, ts, mono, interval_s, proc_root_pid, "
    "  proc_pss_kib, mem_total_kib, mem_used_kib, swap_total_kib, swap_free_kib) "
    "  SELECT run_id, seq + 1, 'final', ts + 0.25, mono + 0.25, NULL, proc_root_pid, 2047, 0, "
    "  0, 0, 0 FROM samples WHERE seq = (SELECT max(seq) FROM samples);"
    "INSERT INTO gpus (run_id, idx, uuid, name, vendor, driver_version, pci_bus_id, "
    "  vram_total_bytes, core_count) SELECT id, 0, 'GPU-0a\"', 'NVIDIA \\ H100', 'nvidia', "
    "  '550.54', '0000:01:00.0', 85899345920, 16896 FROM runs;"
    "INSERT INTO gpus (run_id, idx, uuid, name, vendor, pci_bus_id) SELECT id, 1, "
    "  'amd-0000:02:00.0', 'Radeon' || char(10), 'amd', '0000:02:00.0' FROM runs;"
    "INSERT INTO gpu_samples (sample_id, gpu_id, util_pct, mem_util_pct, vram_total_bytes, "
    "  vram_used_bytes, temperature_c, power_w, clock_graphics_mhz, clock_sm_mhz, "
    "  clock_mem_mhz) SELECT s.id, g.id, 37.5, 12, NULL, 1073741824, 64.5, 301.25, 1755, 1980, "
    "  2619 FROM samples s JOIN gpus g ON g.run_id = s.run_id AND g.idx = 0 "
    "  WHERE s.kind <> 'baseline';"
    "INSERT INTO gpu_samples (sample_id, gpu_id, vram_total_bytes) SELECT s.id, g.id, 0 "
    "  FROM samples s JOIN gpus g ON g.run_id = s.run_id AND g.idx = 1 "
    "  WHERE s.kind = 'periodic';"
    "INSERT INTO process_samples (sample_id, process_id, ppid, state, threads, cpu_utime_s, "
    "  cpu_stime_s, pss_kib, rss_kib, read_bytes, write_bytes) SELECT s2.id, ps.process_id, "
    "  ps.ppid, 'Z', ps.threads, ps.cpu_utime_s, NULL, ps.pss_kib, ps.rss_kib, 0, 7 FROM "
    "  process_samples ps JOIN samples s1 ON s1.id = ps.sample_id AND s1.kind = 'periodic' "
    "  JOIN samples s2 ON s2.run_id = s1.run_id AND s2.kind = 'final';"
    "INSERT INTO gpu_process_samples (sample_id, process_id, gpu_id, util_pct, "
    "  vram_used_bytes) SELECT ps.sample_id, ps.process_id, g.id, 20 + g.idx, "
    "  268435456 * (g.idx + 1) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id "
    "  JOIN gpus g ON g.run_id = s.run_id WHERE s.kind <> 'baseline';";

static void test_edges(void **state)
{
    (void)state;
    static const char *const with_edges[] = {"03-process-tree", "08-comm-spaces", "10-churn",
                                             "11-mount-quirks", "02-busy-8core"};
    int64_t runs[RT_ARRAY_LEN(with_edges)];
    for (size_t i = 0; i < RT_ARRAY_LEN(with_edges); i++)
        runs[i] = record_case(with_edges[i]);
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    /* one statement at a time: the read side prepares one */
    char *sql = xstrdup(edge_sql);
    for (char *p = sql, *e; *p; p = e + 1) {
        e = strchr(p, ';');
        *e = '\0';
        exec_sql(s, p);
    }
    free(sql);
    create_oracle(s);
    for (size_t i = 0; i < RT_ARRAY_LEN(with_edges); i++)
        assert_int_equal(compare_run(s, runs[i], with_edges[i]), 2);
    rt_store_close(s);
}

/* Reals as rt_store_rows_json() writes them (its own digits for whole numbers below 1e15,
 * SQLite's text for every other) against json_array()'s text of the same value: whole numbers
 * around every power of ten and of two up to the limit and past it, negative ones, -0.0,
 * fractions, tiny and huge values, and pseudo-random whole numbers. */
static void test_real_text(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct rt_store_rows *r = rt_store_rows_open(s, "SELECT ?1, json_array(?1)");
    assert_non_null(r);
    double v[400];
    size_t n = 0;
    double p10 = 1;
    for (int e = 0; e <= 17; e++, p10 *= 10) {
        const double around[] = {p10 - 1, p10, p10 + 1, -p10, -(p10 - 1), p10 / 2, p10 * 1.5};
        for (size_t i = 0; i < RT_ARRAY_LEN(around); i++)
            v[n++] = around[i];
    }
    for (int e = 0; e <= 60; e += 3)
        v[n++] = (double)(1ULL << e), v[n++] = -(double)(1ULL << e) + 1;
    const double other[] = {0.0,
                            -0.0,
                            0.5,
                            -0.5,
                            99.99,
                            100.0,
                            1e-300,
                            1e300,
                            2.5e-7,
                            1.0e15,
                            -1.0e15,
                            999999999999999.0,
                            -999999999999999.0,
                            123456789012345.0,
                            1e16 + 2,
                            3.0e18};
    for (size_t i = 0; i < RT_ARRAY_LEN(other); i++)
        v[n++] = other[i];
    uint64_t x = 88172645463325252ULL; /* xorshift64 */
    while (n < RT_ARRAY_LEN(v)) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        v[n++] = (double)(int64_t)(x % 2000000000000000ULL) - 1e15;
    }
    struct rt_buf got = {0};
    for (size_t i = 0; i < n; i++) {
        rt_store_rows_bind_f(r, 1, v[i]);
        assert_int_equal(rt_store_rows_next(r), 1);
        got.len = 0;
        rt_buf_puts(&got, "[");
        rt_store_rows_json(r, 0, &got);
        rt_buf_puts(&got, "]");
        const char *want = rt_store_rows_t(r, 1);
        if (strcmp(got.p, want) != 0)
            fail_msg("%.17g: rt_store_rows_json %s, json_array %s", v[i], got.p, want);
        rt_store_rows_reset(r);
    }
    rt_buf_free(&got);
    rt_store_rows_close(r);
    rt_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_parity_cases, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_real_text, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
