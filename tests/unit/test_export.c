/* test_export.c - the golden cases through the whole pipeline: the real collectors read the
 * a and b snapshots, the store records them into a real SQLite file, and the real exporter
 * prints the Python layouts; the bytes must equal the reference's expected-*.csv (or the
 * *-fixed.csv where rtrack corrects a Python bug, and rtrack's own row for case 10). */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Record a case a -> b (plus further samples) into the db; returns the run id. */
static int64_t record_case(struct rt_store *s, const char *cname, struct fx_case *c)
{
    char cdir[1024];
    snprintf(cdir, sizeof(cdir), "%s/parity/%s", RT_FIXTURES, cname);
    fx_case_run(c, cdir, -1, 0);
    struct rt_host_info h;
    rt_host_info_read(&c->env, &h);
    struct rt_run_desc rs = {.mode = "record",
                             .pid = c->pid,
                             .interval = 1.0,
                             .started_at = c->time_a,
                             .host = &h,
                             .clk_tck = c->env.clk_tck,
                             .page_size = c->env.page_size};
    int64_t run;
    assert_int_equal(rt_store_begin_run(s, &rs, &run), 0);
    rt_host_info_free(&h);
    assert_int_equal(rt_store_add_sample(s, &c->a), 0);
    assert_int_equal(rt_store_add_sample(s, &c->b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    return run;
}

static char *export_text(struct rt_store *s, int64_t run, enum rt_export_format f,
                         enum rt_export_table t)
{
    struct rt_export_query q = {f, t, run, RT_NAN, RT_NAN, 0, 0, 0};
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

/* case 10: rtrack's rows (test_parity.c derives each number) */
static const char c10_system[] =
    "1795666801.905,5,1.96,0.32,2.2789,11936.9688,8289.8945,784.625,12176.8887,9028.9824,"
    "8367.0801,1048576,2097152,1000.2,544.59,455.61,182000,5000,0,0,0\n";
static const char c10_process[] =
    "1795666801.905,4100,3,1.58,0.22,1.7991,225.583,2056768,2105344,0,0,0\n";

static char *expected(const char *cname, const char *what)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/parity/%s/expected-%s-fixed.csv", RT_FIXTURES, cname, what);
    char *t = fx_slurp(path);
    if (!t) {
        snprintf(path, sizeof(path), "%s/parity/%s/expected-%s.csv", RT_FIXTURES, cname, what);
        t = fx_slurp(path);
    }
    if (t && !strcmp(cname, "10-churn")) {
        char *nl = strchr(t, '\n');
        nl[1] = '\0';
        char *row = !strcmp(what, "system") ? (char *)c10_system : (char *)c10_process;
        char *n = xasprintf("%s%s", t, row);
        free(t);
        t = n;
    }
    return t;
}

static const char *const cases[] = {
    "01-idle-2core",     "02-busy-8core", "03-process-tree",    "04-zero-deltas",
    "05-sector-4096",    "06-partitions", "07-no-memavailable", "08-comm-spaces",
    "09-rounding-edges", "10-churn",      "11-mount-quirks",
};

static void test_golden(void **state)
{
    const char *cname = *state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run = record_case(s, cname, &c);

    char *want = expected(cname, "system");
    char *got = export_text(s, run, RT_FMT_CSV, RT_TABLE_SYSTEM);
    if (strcmp(got, want) != 0)
        fail_msg("%s system:\nrtrack:   %sexpected: %s", cname, strchr(got, '\n') + 1,
                 strchr(want, '\n') + 1);
    free(got);
    free(want);

    if (c.pid > 0) {
        want = expected(cname, "process");
        got = export_text(s, run, RT_FMT_CSV, RT_TABLE_PROCESS);
        if (strcmp(got, want) != 0)
            fail_msg("%s process:\nrtrack:   %sexpected: %s", cname, strchr(got, '\n') + 1,
                     strchr(want, '\n') + 1);
        free(got);
        free(want);
        /* the combined row is the system row, then the process row without its timestamp */
        char *sys = expected(cname, "system"), *proc = expected(cname, "process");
        got = export_text(s, run, RT_FMT_CSV, RT_TABLE_COMBINED);
        char *srow = strchr(sys, '\n') + 1, *prow = strchr(strchr(proc, '\n') + 1, ',') + 1;
        srow[strlen(srow) - 1] = '\0';
        char *want_row = xasprintf("%s,%s", srow, prow);
        const char *got_row = strchr(got, '\n') + 1;
        if (strcmp(got_row, want_row) != 0)
            fail_msg("%s combined:\nrtrack:   %sexpected: %s", cname, got_row, want_row);
        assert_int_equal(strncmp(got, "\"timestamp\",\"system_processes\",", 31), 0);
        free(want_row);
        free(got);
        free(sys);
        free(proc);
    }
    rt_store_close(s);
    fx_case_free(&c);
}

/* A run without a tree: the process columns of the combined layout are empty strings. */
static void test_combined_without_tree(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run = record_case(s, "01-idle-2core", &c);
    char *got = export_text(s, run, RT_FMT_CSV, RT_TABLE_COMBINED);
    const char *row = strchr(got, '\n') + 1;
    assert_non_null(strstr(row, ",0,0,0,\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"));
    int commas = 0;
    for (const char *p = row; *p; p++)
        commas += *p == ',';
    assert_int_equal(commas, 31);
    free(got);
    rt_store_close(s);
    fx_case_free(&c);
}

/* JSON Lines: one valid object per sample with the reference's fields and types. */
static void test_jsonl_fields(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run = record_case(s, "03-process-tree", &c);
    char *got = export_text(s, run, RT_FMT_JSONL, RT_TABLE_COMBINED);
    assert_int_equal(strlen(got) > 0 && got[strlen(got) - 1] == '\n', 1);
    *strchr(got, '\n') = '\0';
    const char *checks =
        "SELECT json_valid(?1), json_extract(?1, '$.timestamp_secs'), "
        "json_type(?1, '$.timestamp_secs'), json_extract(?1, '$.tracked_pid'), "
        "json_extract(?1, '$.cpu.process_child_count'), "
        "json_type(?1, '$.memory.used_mib'), json_extract(?1, '$.memory.total_mib'), "
        "json_type(?1, '$.network'), json_array_length(?1, '$.cpu.per_core_pct'), "
        "json_type(?1, '$.gpu'), json_extract(?1, '$.cpu.process_pss_mib'), "
        "json_type(?1, '$.actual_interval_ms'), json_array_length(?1, '$.processes'), "
        "json_type(?1, '$.disk[0].mounts')";
    struct rt_store_rows *r = rt_store_rows_open(s, checks);
    assert_non_null(r);
    rt_store_rows_bind_t(r, 1, got);
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_int_equal(rt_store_rows_i(r, 0), 1);
    assert_int_equal(rt_store_rows_i(r, 1), (int64_t)c.time_b);
    assert_string_equal(rt_store_rows_t(r, 2), "integer");
    assert_int_equal(rt_store_rows_i(r, 3), 19873);
    assert_int_equal(rt_store_rows_i(r, 4), 3);
    assert_string_equal(rt_store_rows_t(r, 5), "integer");
    assert_int_equal(rt_store_rows_i(r, 6), c.b.mem_total / 1024);
    assert_string_equal(rt_store_rows_t(r, 7), "array");
    assert_int_equal(rt_store_rows_i(r, 8), c.b.ncores);
    assert_string_equal(rt_store_rows_t(r, 9), "array");
    assert_int_equal(rt_store_rows_i(r, 10), c.b.proc_pss_kib / 1024);
    assert_string_equal(rt_store_rows_t(r, 11), "integer");
    assert_int_equal(rt_store_rows_i(r, 12), 4);
    rt_store_rows_close(r);
    free(got);
    rt_store_close(s);
    fx_case_free(&c);
}

/* --- output files (export.h's rules) --------------------------------------------------------- */

static char *at(const char *name)
{
    static char buf[4][600];
    static int n;
    char *b = buf[n++ & 3];
    snprintf(b, sizeof(buf[0]), "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
    static char buf[256];
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* How many names in dir start with prefix. */
static int count_names(const char *prefix)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += !strncmp(e->d_name, prefix, strlen(prefix));
    closedir(d);
    return n;
}

static void test_out_resolve(void **state)
{
    (void)state;
    struct rt_out_target t;
    char err[1024];
    assert_int_equal(rt_out_resolve(at("none.csv"), &t, err, sizeof(err)), 0);
    assert_int_equal(t.kind, RT_OUT_NEW);
    rt_out_target_free(&t);
    put(at("file.csv"), "x", 0644);
    assert_int_equal(rt_out_resolve(at("file.csv"), &t, err, sizeof(err)), 0);
    assert_int_equal(t.kind, RT_OUT_REGULAR);
    rt_out_target_free(&t);
    /* an own link: followed to its target, relative to the link's directory */
    assert_int_equal(symlink("file.csv", at("link.csv")), 0);
    assert_int_equal(rt_out_resolve(at("link.csv"), &t, err, sizeof(err)), 0);
    assert_int_equal(t.kind, RT_OUT_REGULAR);
    assert_string_equal(t.path, at("file.csv"));
    rt_out_target_free(&t);
    /* a link to nothing: refused, where it leads said */
    assert_int_equal(symlink("gone.csv", at("dangling.csv")), 0);
    assert_int_equal(rt_out_resolve(at("dangling.csv"), &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "which does not exist"));
    assert_string_equal(t.path, at("gone.csv"));
    rt_out_target_free(&t);
    assert_int_equal(mkfifo(at("fifo"), 0600), 0);
    assert_int_equal(rt_out_resolve(at("fifo"), &t, err, sizeof(err)), 0);
    assert_int_equal(t.kind, RT_OUT_DIRECT);
    rt_out_target_free(&t);
    assert_int_equal(rt_out_resolve("/dev/null", &t, err, sizeof(err)), 0);
    assert_int_equal(t.kind, RT_OUT_DIRECT);
    rt_out_target_free(&t);
    assert_int_equal(rt_out_resolve(dir, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "it is a directory"));
    rt_out_target_free(&t);
    /* descriptors by name */
    static const char *const fds[] = {"-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"};
    for (size_t i = 0; i < RT_ARRAY_LEN(fds); i++) {
        assert_int_equal(rt_out_resolve(fds[i], &t, err, sizeof(err)), 0);
        assert_int_equal(t.kind, RT_OUT_FD);
        assert_int_equal(t.fd, 1);
        rt_out_target_free(&t);
    }
    assert_int_equal(rt_out_resolve("/dev/fd/987", &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "descriptor 987 is not open"));
    rt_out_target_free(&t);
}

static void test_outfile_replace(void **state)
{
    (void)state;
    char err[1024];
    /* a new file: 0600 whatever the umask, there only once complete */
    mode_t old = umask(0);
    struct rt_outfile *o = rt_outfile_open(at("new.csv"), RT_OUT_MODE_REPLACE, err, sizeof(err));
    umask(old);
    assert_non_null(o);
    assert_int_equal(rt_outfile_direct(o), 0);
    fputs("new\n", rt_outfile_stream(o));
    assert_null(slurp(at("new.csv")));
    assert_int_equal(count_names("new.csv.tmp-"), 1);
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_string_equal(slurp(at("new.csv")), "new\n");
    struct stat st;
    assert_int_equal(stat(at("new.csv"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(count_names("new.csv.tmp-"), 0);
    /* a replaced file keeps its mode; a failed output leaves it as it was */
    put(at("old.csv"), "old\n", 0640);
    o = rt_outfile_open(at("old.csv"), RT_OUT_MODE_REPLACE, err, sizeof(err));
    assert_non_null(o);
    fputs("half", rt_outfile_stream(o));
    assert_int_equal(rt_outfile_close(o, 0, err, sizeof(err)), 0);
    assert_string_equal(slurp(at("old.csv")), "old\n");
    assert_int_equal(count_names("old.csv.tmp-"), 0);
    o = rt_outfile_open(at("old.csv"), RT_OUT_MODE_REPLACE, err, sizeof(err));
    fputs("whole\n", rt_outfile_stream(o));
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_string_equal(slurp(at("old.csv")), "whole\n");
    assert_int_equal(stat(at("old.csv"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    /* a device is written, not replaced, and its errors said */
    o = rt_outfile_open("/dev/full", RT_OUT_MODE_REPLACE, err, sizeof(err));
    assert_non_null(o);
    assert_int_equal(rt_outfile_direct(o), 1);
    fputs("x\n", rt_outfile_stream(o));
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "cannot write '/dev/full'"));
    assert_int_equal(lstat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

static void test_outfile_truncate(void **state)
{
    (void)state;
    char err[1024];
    put(at("live.jsonl"), "a much longer old content\n", 0640);
    struct stat before, after;
    assert_int_equal(stat(at("live.jsonl"), &before), 0);
    struct rt_outfile *o =
        rt_outfile_open(at("live.jsonl"), RT_OUT_MODE_TRUNCATE, err, sizeof(err));
    assert_non_null(o);
    assert_int_equal(rt_outfile_direct(o), 1);
    fputs("line\n", rt_outfile_stream(o));
    fflush(rt_outfile_stream(o));
    assert_string_equal(slurp(at("live.jsonl")), "line\n"); /* visible as it is written */
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_int_equal(stat(at("live.jsonl"), &after), 0);
    assert_int_equal(after.st_ino, before.st_ino);
    assert_int_equal(after.st_mode & 0777, 0640);
    mode_t old = umask(0);
    o = rt_outfile_open(at("live2.jsonl"), RT_OUT_MODE_TRUNCATE, err, sizeof(err));
    umask(old);
    assert_non_null(o);
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_int_equal(stat(at("live2.jsonl"), &after), 0);
    assert_int_equal(after.st_mode & 0777, 0600);
}

int main(void)
{
    struct CMUnitTest tests[RT_ARRAY_LEN(cases) + 5];
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        tests[i] = (struct CMUnitTest)cmocka_unit_test_prestate_setup_teardown(
            test_golden, setup, teardown, (void *)cases[i]);
        tests[i].name = cases[i];
    }
    tests[RT_ARRAY_LEN(cases)] = (struct CMUnitTest)cmocka_unit_test_setup_teardown(
        test_combined_without_tree, setup, teardown);
    tests[RT_ARRAY_LEN(cases) + 1] =
        (struct CMUnitTest)cmocka_unit_test_setup_teardown(test_jsonl_fields, setup, teardown);
    tests[RT_ARRAY_LEN(cases) + 2] =
        (struct CMUnitTest)cmocka_unit_test_setup_teardown(test_out_resolve, setup, teardown);
    tests[RT_ARRAY_LEN(cases) + 3] =
        (struct CMUnitTest)cmocka_unit_test_setup_teardown(test_outfile_replace, setup, teardown);
    tests[RT_ARRAY_LEN(cases) + 4] =
        (struct CMUnitTest)cmocka_unit_test_setup_teardown(test_outfile_truncate, setup, teardown);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
