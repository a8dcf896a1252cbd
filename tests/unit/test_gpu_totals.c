/* test_gpu_totals.c - the per-sample GPU totals of sample_metrics (sql/views.sql: gpu_totals,
 * gpu_process_totals): their values for a sample, worked out by hand from the rows written
 * here, what reading them for ONE sample costs, and that sample_metrics_base reads none.
 * The live output runs its statements for one sample after every sample it records; that must
 * cost the same at sample 2 000 as at sample 10. SQLite's own counters of the statement say so
 * without timing anything: the virtual machine's steps and the steps of full table scans.
 * (Aggregate views GROUP BY sample_id, as the views were up to schema version 8, are materialized
 * over every GPU row of the file each time such a statement runs: their steps grow with the run,
 * and they scan gpu_samples.) */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/store/store.h"
#include "testlib.h"

static char dir[256], dbpath[300];
static sqlite3 *db;

static void exec(const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("sql refused: %s\n%s", msg ? msg : "?", sql);
}

/* Samples seq FROM..TO of run 1, each with its rows on both GPUs and of the tree:
 *   GPU 0: util (seq % 5) * 10 %, 1 MiB used;  GPU 1: util 50 %, 3 MiB used;
 *   tree: process 1 on GPU 0 (10 %, 256 MiB), process 2 on GPU 0 (5 %, 128 MiB) and on
 *   GPU 1 (20 %, 64 MiB). */
static void add_samples(int from, int to)
{
    char sql[2048];
    snprintf(sql, sizeof(sql),
             "WITH RECURSIVE n(seq) AS (SELECT %d UNION ALL SELECT seq + 1 FROM n WHERE seq < %d) "
             "INSERT INTO samples (run_id, seq, kind, ts, mono, interval_s) "
             "SELECT 1, seq, 'periodic', 1000.0 + seq, seq, 1.0 FROM n;"
             "INSERT INTO gpu_samples (sample_id, gpu_id, util_pct, vram_used_bytes) "
             "SELECT id, 1, (seq %% 5) * 10.0, 1048576 FROM samples WHERE seq BETWEEN %d AND %d "
             "UNION ALL SELECT id, 2, 50.0, 3145728 FROM samples WHERE seq BETWEEN %d AND %d;"
             "INSERT INTO gpu_process_samples (sample_id, process_id, gpu_id, util_pct, "
             "vram_used_bytes) "
             "SELECT id, 1, 1, 10.0, 268435456 FROM samples WHERE seq BETWEEN %d AND %d "
             "UNION ALL SELECT id, 2, 1, 5.0, 134217728 FROM samples WHERE seq BETWEEN %d AND %d "
             "UNION ALL SELECT id, 2, 2, 20.0, 67108864 FROM samples WHERE seq BETWEEN %d AND %d",
             from, to, from, to, from, to, from, to, from, to, from, to);
    exec(sql);
}

static int setup(void **state)
{
    (void)state;
    if (fx_tmpdir(dir, sizeof(dir), dbpath, sizeof(dbpath)) != 0)
        return -1;
    struct rt_store *s;
    char err[512];
    if (rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)) != 0)
        return -1;
    rt_store_close(s);
    if (sqlite3_open(dbpath, &db) != SQLITE_OK)
        return -1;
    exec("BEGIN;"
         "INSERT INTO runs (id, uuid, mode, requested_interval_s, started_at, clk_tck, page_size, "
         "rtrack_version) VALUES (1, 'u', 'run', 1.0, 1000.0, 100, 4096, 'test');"
         "INSERT INTO gpus (id, run_id, idx, vendor) VALUES (1, 1, 0, 'nvidia'), "
         "(2, 1, 1, 'nvidia');"
         "INSERT INTO processes (id, run_id, pid, starttime, first_seq) VALUES "
         "(1, 1, 100, 1, 0), (2, 1, 101, 1, 0);"
         "INSERT INTO samples (run_id, seq, kind, ts, mono) VALUES (1, 0, 'baseline', 1000.0, 0);");
    add_samples(1, 20);
    /* seq 21: GPU rows, none of the tree; seq 22: no GPU rows at all */
    exec("INSERT INTO samples (run_id, seq, kind, ts, mono, interval_s) VALUES "
         "(1, 21, 'periodic', 1021.0, 21, 1.0), (1, 22, 'periodic', 1022.0, 22, 1.0);"
         "INSERT INTO gpu_samples (sample_id, gpu_id, util_pct, vram_used_bytes) "
         "SELECT id, 2, 25.0, 2097152 FROM samples WHERE seq = 21;"
         "COMMIT");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    sqlite3_close(db);
    fx_rmtree(dir);
    return 0;
}

static int64_t sample_id(int seq)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT id FROM samples WHERE run_id = 1 AND seq = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int(st, 1, seq);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return id;
}

/* The six GPU columns of sample_metrics for one sample; NAN for NULL. */
static void gpu_columns(int seq, double out[6])
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT system_gpu_usage, system_gpu_vram_mib, "
                                        "system_gpu_utilized, process_gpu_usage, "
                                        "process_gpu_vram_mib, process_gpu_utilized "
                                        "FROM sample_metrics WHERE sample_id = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, sample_id(seq));
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    for (int i = 0; i < 6; i++)
        out[i] = sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
    /* one row per sample, whatever its GPU rows */
    assert_int_equal(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
}

static void expect(int seq, const double want[6])
{
    double got[6];
    gpu_columns(seq, got);
    for (int i = 0; i < 6; i++) {
        if (isnan(want[i])) {
            if (!isnan(got[i]))
                fail_msg("seq %d column %d: %g, want NULL", seq, i, got[i]);
        } else if (isnan(got[i]) || fabs(got[i] - want[i]) > 1e-9) {
            fail_msg("seq %d column %d: %g, want %g", seq, i, got[i], want[i]);
        }
    }
}

static void test_values(void **state)
{
    (void)state;
    /* seq 10: GPU 0 at 0 % (1 MiB), GPU 1 at 50 % (3 MiB): 0.5 GPUs, 4 MiB, one GPU busy;
     * the tree: 10 + 5 + 20 % = 0.35 GPUs, 256 + 128 + 64 = 448 MiB, on 2 GPUs */
    expect(10, (const double[6]){0.5, 4.0, 1, 0.35, 448.0, 2});
    /* seq 13: GPU 0 at 30 %: 0.8 GPUs, both busy */
    expect(13, (const double[6]){0.8, 4.0, 2, 0.35, 448.0, 2});
    /* GPU rows but no process of the tree on a GPU: the tree's figures are 0 */
    expect(21, (const double[6]){0.25, 2.0, 1, 0.0, 0.0, 0});
    /* no GPU rows: no GPU figure at all */
    expect(22, (const double[6]){NAN, NAN, NAN, NAN, NAN, NAN});
}

/* What the live output's statements read for one sample: the CSV layouts' views by sample id,
 * and sample_metrics joined to the sample as the JSON Lines' sample pass reads it. */
static const char *const live_sql[] = {
    "SELECT * FROM python_combined WHERE sample_id = ?1",
    "SELECT * FROM python_system WHERE sample_id = ?1",
    "SELECT * FROM python_process WHERE sample_id = ?1",
    "SELECT m.* FROM samples s JOIN sample_metrics m ON m.sample_id = s.id WHERE s.id = ?1",
};

struct cost {
    int steps, fullscan;
};

static struct cost cost_of(const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        rows++;
    assert_int_equal(rows, 1);
    struct cost c = {sqlite3_stmt_status(st, SQLITE_STMTSTATUS_VM_STEP, 0),
                     sqlite3_stmt_status(st, SQLITE_STMTSTATUS_FULLSCAN_STEP, 0)};
    sqlite3_finalize(st);
    return c;
}

static void test_one_sample_costs_the_same_at_any_length(void **state)
{
    (void)state;
    int64_t id = sample_id(10);
    struct cost small[RT_ARRAY_LEN(live_sql)];
    for (size_t i = 0; i < RT_ARRAY_LEN(live_sql); i++)
        small[i] = cost_of(live_sql[i], id);
    /* the run goes on: 2 000 more samples with their GPU rows */
    exec("BEGIN");
    add_samples(23, 2022);
    exec("COMMIT");
    for (size_t i = 0; i < RT_ARRAY_LEN(live_sql); i++) {
        struct cost big = cost_of(live_sql[i], id);
        if (big.fullscan != 0 || big.steps != small[i].steps)
            fail_msg("%s: %d steps (%d in full scans) after 2 000 more samples, %d before: the "
                     "statement for one sample reads other samples' rows",
                     live_sql[i], big.steps, big.fullscan, small[i].steps);
    }
    /* and the values are still this sample's */
    expect(10, (const double[6]){0.5, 4.0, 1, 0.35, 448.0, 2});
}

static int q_int(const char *sql)
{
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* Which GPU tables a statement opens (its bytecode's OpenRead of a b-tree of gpu_samples, 1, or
 * of gpu_process_samples, 2), found in the program SQLite compiled, without running it. */
static int gpu_tables_opened(const char *sql)
{
    sqlite3_stmt *st, *root;
    char expl[512];
    snprintf(expl, sizeof(expl), "EXPLAIN %s", sql);
    assert_int_equal(sqlite3_prepare_v2(db, expl, -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT (tbl_name = 'gpu_samples') + 2 * (tbl_name = "
                                        "'gpu_process_samples') FROM sqlite_schema WHERE "
                                        "rootpage = ?1",
                                        -1, &root, NULL),
                     SQLITE_OK);
    int opened = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (strcmp((const char *)sqlite3_column_text(st, 1), "OpenRead") != 0)
            continue;
        sqlite3_bind_int(root, 1, sqlite3_column_int(st, 3));
        if (sqlite3_step(root) == SQLITE_ROW)
            opened |= sqlite3_column_int(root, 0);
        sqlite3_reset(root);
    }
    sqlite3_finalize(root);
    sqlite3_finalize(st);
    return opened;
}

/* sample_metrics_base is sample_metrics less its six GPU columns, and without their joins:
 * a reader that needs no GPU column (summary and report of runs without GPU rows) reads no GPU
 * row, here where every sample has some. */
static void test_base_reads_no_gpu_rows(void **state)
{
    (void)state;
    const char *cols = "timestamp, mono, interval_s, system_disk_read_bytes_per_s";
    char sql[256];
    snprintf(sql, sizeof(sql), "SELECT %s FROM sample_metrics WHERE run_id = 1 ORDER BY seq", cols);
    assert_int_equal(gpu_tables_opened(sql), 3); /* the check sees the GPU joins */
    snprintf(sql, sizeof(sql), "SELECT %s FROM sample_metrics_base WHERE run_id = 1 ORDER BY seq",
             cols);
    assert_int_equal(gpu_tables_opened(sql), 0);
    /* its rows: the samples after the baseline, seq 1, 2, ... at ts 1000 + seq, mono seq, 1 s
     * intervals, as setup and add_samples wrote them */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n++;
        assert_true(sqlite3_column_double(st, 0) == 1000.0 + n);
        assert_true(sqlite3_column_double(st, 1) == n);
        assert_true(sqlite3_column_double(st, 2) == 1.0);
        assert_int_equal(sqlite3_column_type(st, 3), SQLITE_NULL); /* no disk counts written */
    }
    sqlite3_finalize(st);
    assert_int_equal(n, q_int("SELECT count(*) FROM samples WHERE run_id = 1 AND seq > 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_base_reads_no_gpu_rows),
        cmocka_unit_test(test_one_sample_costs_the_same_at_any_length),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
