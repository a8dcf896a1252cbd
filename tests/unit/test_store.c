/* test_store.c - the SQLite store: schema, refusals that leave files untouched, a round trip of
 * real collector samples, recovery after a failed transaction, and the sampler keeping what
 * the database could not take. */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"
#include "rtrack/record/sampler.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/store/uploads.h"
#include "testlib.h"
/* the store's own test looks at its connection (rt_store_db) and schema hash */
#include "../../src/store/internal.h"

static char dir[256];
static char dbpath[300];

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

static int64_t q1(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad query %s: %s", sql, sqlite3_errmsg(db));
    int64_t v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -999;
    sqlite3_finalize(st);
    return v;
}

static char *qs(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("bad query %s: %s", sql, sqlite3_errmsg(db));
    char *v = NULL;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        v = strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* Every named query of sql/queries/ prepares on s: the tables and views it names exist with the
 * columns it reads (what a migration must not break). */
static void assert_queries_prepare(struct rt_store *s)
{
    for (int q = 0; q < RT_Q_N; q++) {
        struct rt_store_rows *r = rt_store_query(s, (enum rt_query)q);
        if (!r)
            fail_msg("named query %s does not prepare: %s", rt_store_query_name((enum rt_query)q),
                     rt_store_error(s));
        rt_store_rows_close(r);
    }
    /* and every FROM clause among the named pieces, as a statement of its own */
    for (int t = 0; t < RT_QT_N; t++) {
        const char *name = rt_store_query_text_name((enum rt_query_text)t);
        size_t n = strlen(name);
        if (n < 5 || strcmp(name + n - 5, "_from") != 0)
            continue;
        char *sql =
            xasprintf("SELECT 1 FROM %s LIMIT 0", rt_store_query_text((enum rt_query_text)t));
        struct rt_store_rows *r = rt_store_rows_open(s, sql);
        free(sql);
        if (!r)
            fail_msg("named piece %s does not prepare as a FROM clause: %s", name,
                     rt_store_error(s));
        rt_store_rows_close(r);
    }
}

static void test_named_queries(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    assert_true(RT_Q_N > 0);
    assert_queries_prepare(s);
    /* and a name for each, "reader.name" */
    for (int q = 0; q < RT_Q_N; q++)
        assert_non_null(strchr(rt_store_query_name((enum rt_query)q), '.'));
    rt_store_close(s);
}

static void test_new_database(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    sqlite3 *db = rt_store_db(s);
    assert_int_equal(q1(db, "PRAGMA user_version"), rt_store_schema_version());
    assert_int_equal(q1(db, "PRAGMA application_id"), RT_APPLICATION_ID);
    char *jm = qs(db, "PRAGMA journal_mode");
    assert_string_equal(jm, "wal");
    free(jm);
    const char *tables[] = {"runs",      "run_tags",       "samples", "cpu_core_samples",
                            "disks",     "disk_samples",   "mounts",  "mount_samples",
                            "nics",      "nic_samples",    "gpus",    "gpu_samples",
                            "processes", "process_samples"};
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        char sql[200];
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM sqlite_schema WHERE name = '%s'",
                 tables[i]);
        if (q1(db, sql) != 1)
            fail_msg("table %s missing", tables[i]);
    }
    rt_store_close(s);
    /* reopening is a no-op */
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    rt_store_close(s);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_READ, &s, err, sizeof(err)), 0);
    rt_store_close(s);
}

static char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*n + 1);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

/* refused, with `expect` in the message, and the file byte-identical with no -wal/-shm left */
static void assert_refused(const char *expect)
{
    size_t n1, n2;
    char *before = file_bytes(dbpath, &n1);
    struct rt_store *s = (void *)1;
    char err[512] = "";
    assert_int_not_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    assert_null(s);
    if (!strstr(err, expect))
        fail_msg("message '%s' does not say '%s'", err, expect);
    assert_non_null(strstr(err, dbpath));
    char *after = file_bytes(dbpath, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(before, after, n1);
    free(before);
    free(after);
    char side[400];
    snprintf(side, sizeof(side), "%s-wal", dbpath);
    struct stat st;
    if (stat(side, &st) == 0 && st.st_size > 0)
        fail_msg("%s left behind with %lld bytes", side, (long long)st.st_size);
}

static void test_refusals(void **state)
{
    (void)state;
    FILE *f = fopen(dbpath, "w");
    fputs("this is a text file, not a database\n", f);
    fclose(f);
    assert_refused("not an rtrack database (not a SQLite file)");
    unlink(dbpath);

    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "CREATE TABLE notes (x); INSERT INTO notes VALUES (1)", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_refused("is a SQLite database but not an rtrack database");
    unlink(dbpath);

    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    rt_store_close(s);
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode = DELETE; PRAGMA user_version = 99",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_refused("written by a newer rtrack (schema version 99");

    char missing[400];
    snprintf(missing, sizeof(missing), "%s/no/such/dir/x.db", dir);
    assert_int_not_equal(rt_store_open(missing, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "does not exist"));
    assert_int_not_equal(rt_store_open(dir, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    assert_non_null(strstr(err, "is a directory"));
    snprintf(missing, sizeof(missing), "%s/absent.db", dir);
    assert_int_not_equal(rt_store_open(missing, RT_STORE_READ, &s, err, sizeof(err)), 0);
    assert_int_equal(access(missing, F_OK), -1); /* reading never creates */
}

static void store_case(struct rt_store *s, const char *cname, struct fx_case *c, int64_t *run)
{
    char cdir[1024];
    snprintf(cdir, sizeof(cdir), "%s/parity/%s", RT_FIXTURES, cname);
    fx_case_run(c, cdir, -1, 0);
    struct rt_tag tags[] = {{"b", "2"}, {"a", "1"}};
    struct rt_host_info h;
    rt_host_info_read(&c->env, &h);
    struct rt_run_desc rs = {.mode = "record",
                             .pid = c->pid,
                             .interval = 1.0,
                             .started_at = c->time_a,
                             .tags = tags,
                             .ntags = 2,
                             .host = &h,
                             .clk_tck = c->env.clk_tck,
                             .page_size = c->env.page_size};
    rs.meta[RT_META_JOB_NAME] = "train";
    rs.meta[RT_META_TEAM] = "ml";
    assert_int_equal(rt_store_begin_run(s, &rs, run), 0);
    rt_host_info_free(&h);
    c->b.kind = RT_SAMPLE_FINAL;
    assert_int_equal(rt_store_add_sample(s, &c->a), 0);
    assert_int_equal(rt_store_add_sample(s, &c->b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    struct rt_run_end e = rt_run_end_none(c->time_b);
    e.status = "finished";
    e.end_reason = "interrupted";
    assert_int_equal(rt_store_end_run(s, &e), 0);
}

static void test_round_trip(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run);
    sqlite3 *db = rt_store_db(s);

    char *v = qs(db, "SELECT mode || '|' || job_name || '|' || team || '|' || status || '|' || "
                     "end_reason || '|' || pid || '|' || requested_interval_s FROM runs");
    assert_string_equal(v, "record|train|ml|finished|interrupted|19873|1.0");
    free(v);
    assert_int_equal(q1(db, "SELECT exit_code IS NULL AND stage_name IS NULL FROM runs"), 1);
    v = qs(db, "SELECT group_concat(key || '=' || value, ',') FROM "
               "(SELECT * FROM run_tags ORDER BY position)");
    assert_string_equal(v, "b=2,a=1");
    free(v);
    assert_int_equal(q1(db, "SELECT clk_tck FROM runs"), 100);
    assert_int_equal(q1(db, "SELECT length(uuid) FROM runs"), 36);

    v = qs(db, "SELECT group_concat(seq || kind, ',') FROM samples");
    assert_string_equal(v, "0baseline,1final");
    free(v);
    /* baseline: gauges present, per-interval values NULL */
    assert_int_equal(q1(db, "SELECT cpu_utime_s IS NULL AND proc_utime_s IS NULL AND "
                            "disk_read_bytes IS NULL AND net_rx_bytes IS NULL AND "
                            "interval_s IS NULL AND mem_total_kib IS NOT NULL AND "
                            "proc_pss_kib IS NOT NULL FROM samples WHERE seq = 0"),
                     1);
    /* stored doubles are the computed doubles, bit for bit */
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT ts, cpu_usage, proc_cpu_usage, proc_utime_s, "
                                        "interval_s, mem_used_kib, proc_pss_kib, "
                                        "proc_write_bytes, proc_children, processes, "
                                        "disk_space_total_bytes FROM samples WHERE seq = 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_true(sqlite3_column_double(st, 0) == c.b.ts);
    assert_true(sqlite3_column_double(st, 1) == c.b.cpu_usage);
    assert_true(sqlite3_column_double(st, 2) == c.b.proc_cpu_usage);
    assert_true(sqlite3_column_double(st, 3) == c.b.proc_utime_s);
    assert_true(sqlite3_column_double(st, 4) == c.b.dt);
    assert_int_equal(sqlite3_column_int64(st, 5), c.b.mem_used);
    assert_int_equal(sqlite3_column_int64(st, 6), c.b.proc_pss_kib);
    assert_int_equal(sqlite3_column_int64(st, 7), c.b.proc_write_bytes);
    assert_int_equal(sqlite3_column_int64(st, 8), 3);
    assert_int_equal(sqlite3_column_int64(st, 9), c.b.processes);
    assert_int_equal(sqlite3_column_int64(st, 10), c.b.space_total);
    sqlite3_finalize(st);

    assert_int_equal(q1(db, "SELECT count(*) FROM cpu_core_samples"), c.a.ncores + c.b.ncores);
    /* identities once, measurements per sample */
    assert_int_equal(q1(db, "SELECT count(*) FROM processes"), 4);
    assert_int_equal(q1(db, "SELECT count(*) FROM process_samples"), 8);
    v = qs(db, "SELECT name FROM processes WHERE pid = 19921");
    assert_string_equal(v, "python3");
    free(v);
    /* the fixtures have no cmdline files: unknown is NULL */
    assert_int_equal(q1(db, "SELECT count(*) FROM processes WHERE cmdline IS NULL"), 4);
    assert_int_equal(q1(db, "SELECT first_seq FROM processes WHERE pid = 19873"), 0);
    assert_int_equal(q1(db, "SELECT count(DISTINCT name) = count(*) FROM disks"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM disk_samples"),
                     2 * q1(db, "SELECT count(*) FROM disks"));
    assert_int_equal(q1(db, "SELECT count(*) FROM nics"), c.b.nnics);
    assert_int_equal(q1(db, "SELECT count(*) FROM mounts"), c.b.nmounts);
    assert_int_equal(q1(db, "SELECT sum(total_bytes) FROM mount_samples JOIN samples ON "
                            "samples.id = sample_id WHERE seq = 1"),
                     c.b.space_total);
    assert_int_equal(q1(db, "SELECT sum(read_bytes) FROM disk_samples JOIN samples ON "
                            "samples.id = sample_id WHERE seq = 1"),
                     c.b.disk_read_bytes);
    assert_int_equal(q1(db, "PRAGMA foreign_key_check"), -999); /* no rows */
    rt_store_close(s);
    fx_case_free(&c);
}

/* A failed transaction is rolled back; the next sample still finds (or re-creates) its
 * identity rows through the upserts, and foreign keys hold. */
static void test_failure_then_recovery(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "02-busy-8core", &c, &run);
    /* the same seq again violates UNIQUE (run_id, seq) */
    assert_int_not_equal(rt_store_add_sample(s, &c.b), 0);
    assert_non_null(strstr(rt_store_error(s), "cannot write to database"));
    assert_non_null(strstr(rt_store_error(s), dbpath));
    assert_int_equal(sqlite3_get_autocommit(rt_store_db(s)),
                     1); /* rolled back, no open transaction */
    c.b.seq = 2;
    assert_int_equal(rt_store_add_sample(s, &c.b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    sqlite3 *db = rt_store_db(s);
    assert_int_equal(q1(db, "SELECT count(*) FROM samples"), 3);
    assert_int_equal(q1(db, "SELECT count(*) FROM nic_samples"), 3 * c.b.nnics);
    assert_int_equal(q1(db, "SELECT count(*) FROM nics"), c.b.nnics);
    assert_int_equal(q1(db, "PRAGMA foreign_key_check"), -999);
    rt_store_close(s);
    fx_case_free(&c);
}

/* A sampler recording the live system into dbpath (run 1, interval 0.05 s), its baseline
 * sample committed. */
struct live_rec {
    struct rt_store *s;
    struct rt_sysenv env;
    struct rt_host_info h;
    struct rt_collect_cfg cc;
    struct rt_sampler smp;
};

static void live_rec_open(struct live_rec *r)
{
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &r->s, err, sizeof(err)), 0);
    rt_sysenv_live(&r->env);
    rt_host_info_read(&r->env, &r->h);
    struct rt_run_desc rs = {.mode = "record",
                             .interval = 0.05,
                             .started_at = rt_clock_s(CLOCK_REALTIME),
                             .host = &r->h,
                             .clk_tck = r->env.clk_tck,
                             .page_size = r->env.page_size};
    int64_t run;
    assert_int_equal(rt_store_begin_run(r->s, &rs, &run), 0);
    r->cc = (struct rt_collect_cfg){getpid(), 0, 0.05, 0, NULL};
    rt_sampler_open(&r->smp, &r->env, &r->cc, r->s, 0.05);
    rt_sampler_collect(&r->smp, RT_SAMPLE_BASELINE);
    rt_sampler_store(&r->smp);
    assert_int_equal(r->smp.stored, 1);
}

static void live_rec_samples(struct live_rec *r, int n)
{
    for (int i = 0; i < n; i++) {
        rt_sampler_collect(&r->smp, RT_SAMPLE_PERIODIC);
        rt_sampler_store(&r->smp);
    }
}

static void live_rec_close(struct live_rec *r)
{
    rt_sampler_close(&r->smp);
    rt_store_close(r->s);
    rt_host_info_free(&r->h);
}

/* ended properly, every sample the sampler says it stored is there, seq 0..stored-1 */
static void live_rec_end(struct live_rec *r)
{
    struct rt_run_end e = rt_run_end_none(rt_clock_s(CLOCK_REALTIME));
    e.status = "finished";
    e.end_reason = "duration";
    assert_int_equal(rt_sampler_end(&r->smp, &e), 0);
    sqlite3 *db = rt_store_db(r->s);
    assert_int_equal(q1(db, "SELECT count(*) FROM samples"), r->smp.stored);
    assert_int_equal(q1(db, "SELECT max(seq) + 1 FROM samples"), r->smp.stored);
    assert_int_equal(q1(db, "SELECT count(*) FROM runs WHERE ended_at IS NOT NULL"), 1);
    assert_int_equal(q1(db, "SELECT count(*) FROM mount_samples ms JOIN mounts m ON "
                            "m.id = ms.mount_id WHERE m.run_id <> 1"),
                     0);
    assert_int_equal(q1(db, "PRAGMA foreign_key_check"), -999);
    live_rec_close(r);
}

/* A commit that fails (the -wal cannot grow: a file size limit stands in for a full disk)
 * loses none of the samples of its transaction: they are kept with those taken after, and
 * written when the database takes them again. The code before kept nothing: 5 of 11 lost. */
static void test_sampler_failed_commit_keeps_batch(void **state)
{
    (void)state;
    struct live_rec r;
    live_rec_open(&r);
    live_rec_samples(&r, 4); /* in the open transaction: a commit holds up to 1 s */
    assert_int_equal(r.smp.added, 4);
    char wal[400];
    snprintf(wal, sizeof(wal), "%s-wal", dbpath);
    struct stat sb;
    assert_int_equal(stat(wal, &sb), 0);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)sb.st_size;
    void (*xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    usleep(1050000); /* the next sample's commit is due */
    live_rec_samples(&r, 1);
    assert_int_equal(r.smp.warned, 1);
    assert_int_equal(r.smp.nkept, 5);
    assert_int_equal(r.smp.added, 0);
    live_rec_samples(&r, 5); /* taken while it fails: kept too */
    assert_int_equal(r.smp.nkept, 10);
    assert_int_equal(r.smp.stored, 1);
    assert_int_equal(r.smp.failed, 0);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, xfsz);
    live_rec_end(&r);
    assert_int_equal(r.smp.stored, 11);
    assert_int_equal(r.smp.failed, 0);
}

/* While the database cannot be written (here: another connection holds its write lock),
 * samples wait in memory up to the bound: the oldest are kept, the later ones counted lost and
 * said once. A try a second later writes the oldest alone, then the rest at the next sample. */
static void test_sampler_keeps_up_to_bound(void **state)
{
    (void)state;
    struct live_rec r;
    live_rec_open(&r);
    sqlite3_busy_timeout(rt_store_db(r.s), 0);
    sqlite3 *other;
    assert_int_equal(sqlite3_open(dbpath, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    live_rec_samples(&r, 1);
    assert_int_equal(r.smp.warned, 1);
    assert_int_equal(r.smp.nkept, 1);
    /* room for about 4 samples */
    r.smp.keep_bytes = r.smp.kept_bytes * 4 + r.smp.kept_bytes / 2;
    live_rec_samples(&r, 29);
    int kept = r.smp.nkept;
    assert_true(kept >= 2 && kept <= 5);
    assert_true(r.smp.kept_bytes <= r.smp.keep_bytes);
    assert_int_equal(r.smp.failed, 30 - kept);
    assert_int_equal(r.smp.warned_full, 1);
    assert_int_equal(r.smp.stored, 1);
    assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(other);
    usleep(1050000);
    live_rec_samples(&r, 1);
    assert_int_equal(r.smp.stored, 2); /* the oldest, alone */
    live_rec_samples(&r, 1);
    /* the rest, and the one taken at the first try; this one goes into a transaction again */
    assert_int_equal(r.smp.stored, 2 + kept);
    assert_int_equal(r.smp.nkept, 1);
    assert_int_equal(r.smp.added, 1);
    sqlite3 *db = rt_store_db(r.s);
    /* the oldest were kept: seq 0..kept, then the gap, then the two taken since */
    assert_int_equal(q1(db, "SELECT count(*) FROM samples WHERE seq <= 30"), 1 + kept);
    assert_int_equal(q1(db, "SELECT max(seq) FROM samples WHERE seq <= 30"), kept);
    assert_int_equal(q1(db, "SELECT group_concat(seq) = '31,32' FROM samples WHERE seq > 30"), 1);
    struct rt_run_end e = rt_run_end_none(rt_clock_s(CLOCK_REALTIME));
    e.status = "failed";
    e.end_reason = "duration";
    assert_int_equal(rt_sampler_end(&r.smp, &e), 0);
    assert_int_equal(r.smp.stored + r.smp.failed, 33);
    live_rec_close(&r);
}

/* The run's end is tried again for a while: a lock released 0.3 s after the end was due lets
 * it and the samples waiting with it in. */
static void *release_later(void *db)
{
    usleep(300000);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return NULL;
}

static void test_sampler_end_retried(void **state)
{
    (void)state;
    struct live_rec r;
    live_rec_open(&r);
    sqlite3_busy_timeout(rt_store_db(r.s), 0);
    sqlite3 *other;
    assert_int_equal(sqlite3_open(dbpath, &other), SQLITE_OK);
    assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
    live_rec_samples(&r, 3);
    rt_sampler_collect(&r.smp, RT_SAMPLE_FINAL);
    rt_sampler_store(&r.smp);
    assert_int_equal(r.smp.nkept, 4);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, release_later, other), 0);
    double t0 = rt_clock_s(CLOCK_MONOTONIC);
    live_rec_end(&r); /* asserts the end and every sample are in */
    double waited = rt_clock_s(CLOCK_MONOTONIC) - t0;
    pthread_join(th, NULL);
    sqlite3_close(other);
    assert_int_equal(r.smp.stored, 5);
    assert_true(waited >= 0.25 && waited < RT_SAMPLER_END_WAIT_S + 0.5);
}

/* The store caches process ids only for the last sample; a process missing from one sample
 * and back in the next finds its row again instead of getting a second one. */
static void test_process_returns_after_gap(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run); /* seq 0 and 1, 4 processes each */
    int n = c.b.nprocs;
    c.b.nprocs = 1;
    c.b.seq = 2;
    assert_int_equal(rt_store_add_sample(s, &c.b), 0);
    c.b.nprocs = n;
    c.b.seq = 3;
    assert_int_equal(rt_store_add_sample(s, &c.b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    sqlite3 *db = rt_store_db(s);
    assert_int_equal(q1(db, "SELECT count(*) FROM processes"), 4);
    assert_int_equal(q1(db, "SELECT count(*) FROM process_samples"), 4 + 4 + 1 + 4);
    assert_int_equal(q1(db, "SELECT count(DISTINCT process_id) FROM process_samples"), 4);
    rt_store_close(s);
    fx_case_free(&c);
}

/* several runs and recorders share one file */
static void test_two_writers(void **state)
{
    (void)state;
    struct rt_store *s1, *s2;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s1, err, sizeof(err)), 0);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s2, err, sizeof(err)), 0);
    struct fx_case c1, c2;
    int64_t r1, r2;
    store_case(s1, "01-idle-2core", &c1, &r1);
    store_case(s2, "07-no-memavailable", &c2, &r2);
    assert_int_not_equal(r1, r2);
    assert_int_equal(q1(rt_store_db(s1), "SELECT count(*) FROM samples"), 4);
    assert_int_equal(q1(rt_store_db(s2), "SELECT count(DISTINCT run_id) FROM samples"), 2);
    assert_int_equal(q1(rt_store_db(s2), "SELECT mem_available_kib IS NULL FROM samples "
                                         "WHERE run_id = 2 AND seq = 1"),
                     1);
    rt_store_close(s1);
    rt_store_close(s2);
    fx_case_free(&c1);
    fx_case_free(&c2);
}

/* How the kernel let a run be read (migration 13) is kept on the run: as the samples say it,
 * rewritten when a sample says something new (a reason replaced by a source), and what a
 * rolled-back transaction wrote is written again by the next sample that says it. */
static void test_run_facts(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    /* a parity fixture: smaps_rollup, no schedstat, no /proc/pressure */
    store_case(s, "03-process-tree", &c, &run);
    sqlite3 *db = rt_store_db(s);
    const char *facts = "SELECT coalesce(proc_memory_source, '-') || '|' || "
                        "coalesce(cpu_wait_source, '-') || '|' || coalesce(cpu_wait_missing, "
                        "'-') || '|' || coalesce(psi_missing, '-') FROM runs";
    char *v = qs(db, facts);
    assert_string_equal(v, "smaps_rollup|-|no-schedstat|no-pressure");
    free(v);
    /* a sample that fails (its seq again) takes its facts with it */
    c.b.cpu_wait_source = "schedstat";
    c.b.cpu_wait_missing = NULL;
    assert_int_not_equal(rt_store_add_sample(s, &c.b), 0);
    v = qs(db, facts);
    assert_string_equal(v, "smaps_rollup|-|no-schedstat|no-pressure");
    free(v);
    c.b.seq = 2;
    assert_int_equal(rt_store_add_sample(s, &c.b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    v = qs(db, facts);
    assert_string_equal(v, "smaps_rollup|schedstat|-|no-pressure");
    free(v);
    /* another run on the same connection starts from nothing known */
    struct rt_host_info h = {0};
    struct rt_run_desc rs = {.mode = "record", .interval = 1.0, .host = &h, .clk_tck = 100};
    int64_t run2;
    assert_int_equal(rt_store_begin_run(s, &rs, &run2), 0);
    c.a.seq = 0;
    assert_int_equal(rt_store_add_sample(s, &c.a), 0);
    assert_int_equal(rt_store_commit(s), 0);
    char sql[512];
    snprintf(sql, sizeof(sql), "%s WHERE id = %lld", facts, (long long)run2);
    v = qs(db, sql);
    assert_string_equal(v, "smaps_rollup|-|no-schedstat|no-pressure");
    free(v);
    rt_store_close(s);
    fx_case_free(&c);
}

/* Every column of samples is bound: a live periodic sample of a tracked tree fills them all
 * (pressure columns only where the kernel has PSI). */
static void test_live_sample_fills_every_column(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    struct rt_collect_cfg cc = {getpid(), 0, 1.0, 0, NULL};
    struct rt_collectors *col = rt_collectors_open(&env, &cc);
    struct rt_sample a = {0}, b = {0};
    fx_live_sample(col, &a, NULL);
    usleep(20000);
    fx_live_sample(col, &b, &a);
    struct rt_host_info h;
    rt_host_info_read(&env, &h);
    struct rt_run_desc rs = {.mode = "record",
                             .pid = getpid(),
                             .interval = 1,
                             .started_at = a.ts,
                             .host = &h,
                             .clk_tck = env.clk_tck,
                             .page_size = env.page_size};
    int64_t run;
    assert_int_equal(rt_store_begin_run(s, &rs, &run), 0);
    assert_int_equal(rt_store_add_sample(s, &a), 0);
    assert_int_equal(rt_store_add_sample(s, &b), 0);
    assert_int_equal(rt_store_commit(s), 0);
    sqlite3 *db = rt_store_db(s);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT * FROM samples WHERE seq = 1", -1, &st, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int psi = access("/proc/pressure/cpu", R_OK) == 0;
    for (int i = 0; i < sqlite3_column_count(st); i++) {
        const char *name = sqlite3_column_name(st, i);
        if (!psi && strncmp(name, "psi_", 4) == 0)
            continue;
        if (!strcmp(name, "cgroup_limit_cores")) /* NULL: no CPU quota, as here */
            continue;
        if (sqlite3_column_type(st, i) == SQLITE_NULL)
            fail_msg("samples.%s is NULL in a live periodic sample", name);
    }
    sqlite3_finalize(st);
    assert_int_equal(q1(db, "SELECT count(*) FROM runs WHERE host_hostname IS NULL OR "
                            "host_vcpus IS NULL OR host_memory_kib IS NULL OR host_kernel IS NULL "
                            "OR host_boot_time IS NULL OR host_cpu_model IS NULL"),
                     0);
    rt_host_info_free(&h);
    rt_collectors_close(col);
    rt_sample_free(&a);
    rt_sample_free(&b);
    rt_store_close(s);
}

/* A new database has exactly the schema RT_SCHEMA_FINGERPRINT names (the fast path of the
 * completeness check); one cut down by another program is refused untouched, whichever way it
 * was cut; extra tables, columns and indexes are accepted. */
static void test_schema_complete(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    uint64_t fp = rt_store_schema_fingerprint(rt_store_db(s));
    rt_store_close(s);
    if (fp != RT_SCHEMA_FINGERPRINT)
        fail_msg("the schema changed: set RT_SCHEMA_FINGERPRINT in include/rtrack/store/store.h to "
                 "0x%016llxull",
                 (unsigned long long)fp);
    char pristine[320];
    snprintf(pristine, sizeof(pristine), "%s.pristine", dbpath);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL), SQLITE_OK);
    /* The same schema listed in another order (an index and a view dropped and made again go
     * to the end of sqlite_schema, as objects an upgrade remakes do) has the same fingerprint. */
    static const char *const remade[] = {"process_samples_by_process", "sample_metrics"};
    char *first = qs(db, "SELECT name FROM sqlite_schema ORDER BY rowid LIMIT 1");
    for (size_t i = 0; i < sizeof(remade) / sizeof(remade[0]); i++) {
        char q[256];
        snprintf(q, sizeof(q), "SELECT type || '|' || sql FROM sqlite_schema WHERE name = '%s'",
                 remade[i]);
        char *ts = qs(db, q), *sql = strchr(ts, '|') + 1;
        snprintf(q, sizeof(q), "DROP %s %s", ts[0] == 'i' ? "INDEX" : "VIEW", remade[i]);
        assert_int_equal(sqlite3_exec(db, q, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        free(ts);
    }
    char *last = qs(db, "SELECT name FROM sqlite_schema ORDER BY rowid DESC LIMIT 1");
    assert_string_equal(last, "sample_metrics"); /* the order did change */
    assert_string_equal(first, "runs");
    free(first);
    free(last);
    assert_int_equal(rt_store_schema_fingerprint(db), RT_SCHEMA_FINGERPRINT);
    sqlite3_close(db);
    assert_int_equal(rename(dbpath, pristine), 0);
    static const struct {
        const char *sql, *expect;
    } cuts[] = {
        {"DROP TABLE process_samples", "table 'process_samples' is missing"},
        {"ALTER TABLE runs DROP COLUMN team", "column 'team' of table 'runs' is missing"},
        {"DROP VIEW python_combined", "view 'python_combined' is missing"},
        {"DROP VIEW python_system; CREATE VIEW python_system AS SELECT 1 AS x",
         "column 'run_id' of view 'python_system' is missing"},
        {"DROP VIEW host_gpus; CREATE TABLE host_gpus (run_id, host_gpu_model, host_gpu_count, "
         "host_gpu_memory_mib)",
         "'host_gpus' is a table, not a view"},
    };
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        size_t n;
        char *b = file_bytes(pristine, &n);
        FILE *f = fopen(dbpath, "wb");
        assert_int_equal(fwrite(b, 1, n, f), n);
        fclose(f);
        free(b);
        assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
        if (sqlite3_exec(db, cuts[i].sql, NULL, NULL, NULL) != SQLITE_OK)
            fail_msg("%s: %s", cuts[i].sql, sqlite3_errmsg(db));
        sqlite3_close(db);
        assert_refused(cuts[i].expect);
        s = (void *)1;
        assert_int_not_equal(rt_store_open(dbpath, RT_STORE_READ, &s, err, sizeof(err)), 0);
        if (!strstr(err, cuts[i].expect))
            fail_msg("read: message '%s' does not say '%s'", err, cuts[i].expect);
        unlink(dbpath);
    }
    size_t n;
    char *b = file_bytes(pristine, &n);
    FILE *f = fopen(dbpath, "wb");
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE mine (x); ALTER TABLE runs ADD COLUMN note TEXT; "
                                  "CREATE INDEX samples_ts ON samples (ts); CREATE VIEW v AS "
                                  "SELECT id FROM runs",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    rt_store_close(s);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_READ, &s, err, sizeof(err)), 0);
    rt_store_close(s);
    unlink(pristine);
}

/* The read side: rows with NULL as RT_NA / NAN / NULL, the run "latest", nested snapshots, a
 * second connection, the runs listing with the samples after the baseline. */
static void test_read_side(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run);

    struct rt_store_rows *r = rt_store_rows_open(s, "SELECT 7, 2.5, 'x', NULL, ?1, ?2, ?3, ?4");
    assert_non_null(r);
    rt_store_rows_bind_i(r, 1, RT_NA);
    rt_store_rows_bind_f(r, 2, RT_NAN);
    rt_store_rows_bind_t(r, 3, NULL);
    rt_store_rows_bind_tn(r, 4, "abcdef", 3);
    assert_int_equal(rt_store_rows_ncols(r), 8);
    assert_string_equal(rt_store_rows_name(r, 0), "7");
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_int_equal(rt_store_rows_type(r, 0), RT_STORE_INTEGER);
    assert_int_equal(rt_store_rows_i(r, 0), 7);
    assert_int_equal(rt_store_rows_type(r, 1), RT_STORE_REAL);
    assert_true(rt_store_rows_f(r, 1) == 2.5);
    assert_int_equal(rt_store_rows_type(r, 2), RT_STORE_TEXT);
    assert_string_equal(rt_store_rows_t(r, 2), "x");
    for (int i = 3; i < 7; i++) {
        assert_int_equal(rt_store_rows_type(r, i), RT_STORE_NULL);
        assert_true(rt_store_rows_i(r, i) == RT_NA);
        assert_true(isnan(rt_store_rows_f(r, i)));
        assert_null(rt_store_rows_t(r, i));
    }
    assert_string_equal(rt_store_rows_t(r, 7), "abc");
    assert_int_equal(rt_store_rows_next(r), 0);
    rt_store_rows_reset(r); /* again, the parameters kept */
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_string_equal(rt_store_rows_t(r, 7), "abc");
    rt_store_rows_close(r);
    assert_null(rt_store_rows_open(s, "SELECT * FROM no_such_table"));
    assert_non_null(strstr(rt_store_error(s), "no such table: no_such_table"));

    int64_t found;
    double started = 0;
    assert_int_equal(rt_store_find_run(s, 0, &found, &started), 0);
    assert_int_equal(found, run);
    assert_true(started == c.time_a);
    assert_int_equal(rt_store_find_run(s, run, &found, NULL), 0);
    assert_int_equal(found, run);
    assert_int_equal(rt_store_find_run(s, run + 1, &found, NULL), 0);
    assert_int_equal(found, 0);

    /* nested snapshots: the outermost pair counts */
    rt_store_read_begin(s);
    rt_store_read_begin(s);
    assert_int_equal(q1(rt_store_db(s), "SELECT count(*) FROM runs"), 1);
    rt_store_read_end(s);
    assert_int_equal(sqlite3_get_autocommit(rt_store_db(s)), 0);
    rt_store_read_end(s);
    assert_int_equal(sqlite3_get_autocommit(rt_store_db(s)), 1);

    struct rt_store *second;
    assert_int_equal(rt_store_open_second(s, &second), 0);
    r = rt_store_rows_open(second, "SELECT count(*) FROM samples");
    assert_non_null(r);
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_int_equal(rt_store_rows_i(r, 0), 2);
    rt_store_rows_close(r);
    rt_store_close(second);

    /* the baseline is not a sample of the listing (nor of summary and export) */
    r = rt_store_runs(s, RT_RUNS_TABLE);
    assert_non_null(r);
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_int_equal(rt_store_rows_i(r, 0), run);
    assert_int_equal(rt_store_rows_i(r, 5), 1);
    assert_string_equal(rt_store_rows_t(r, 8), "finished");
    assert_int_equal(rt_store_rows_next(r), 0);
    rt_store_rows_close(r);
    r = rt_store_runs(s, RT_RUNS_JSON);
    assert_non_null(r);
    assert_int_equal(rt_store_rows_next(r), 1);
    assert_non_null(strstr(rt_store_rows_t(r, 0), "\"samples\":1,"));
    rt_store_rows_close(r);
    rt_store_close(s);
    fx_case_free(&c);
}

/* Upload progress: registered, one batch with its progress, the two bodies, finished. */
static void test_upload_progress(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run);
    struct rt_store_upload u;
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_null(u.remote_run_id);
    assert_int_equal(u.last_seq, 0);
    assert_int_equal(u.finished, 0);
    assert_int_equal(u.batches, 0);
    assert_int_equal(u.max_seq, 1);
    rt_store_upload_free(&u);
    assert_int_not_equal(rt_store_upload_load(s, run + 1, &u), 0); /* no such run */
    rt_store_upload_free(&u);
    char *status;
    assert_int_equal(rt_store_upload_run_status(s, run, &status), 0);
    assert_string_equal(status, "finished");
    free(status);
    assert_int_equal(rt_store_upload_run_status(s, run + 1, &status), 0);
    assert_null(status);
    int64_t *ids;
    int n;
    assert_int_equal(rt_store_upload_pending(s, &ids, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(ids[0], run);
    free(ids);

    /* the cloud as recorded: nothing stored yet, every key null; then what discovery found */
    char *body = rt_store_upload_start_body(s, run);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"job_name\":\"train\""));
    assert_non_null(strstr(body, "\"cloud_vendor_id\":null,\"cloud_account_id\":null"));
    free(body);
    struct rt_cloud cloud = {"aws", NULL, "eu-central-1", NULL, "t3.micro"};
    assert_int_equal(rt_store_set_run_cloud(s, run, &cloud), 0);
    body = rt_store_upload_start_body(s, run);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"cloud_vendor_id\":\"aws\",\"cloud_account_id\":null,"
                                 "\"cloud_region_id\":\"eu-central-1\",\"cloud_zone_id\":null,"
                                 "\"cloud_instance_type\":\"t3.micro\""));
    free(body);
    assert_int_equal(rt_store_upload_register(s, run, "http://api", "r-1", "s3://b/p", 1000.0), 0);
    struct rt_store_upload_batch b = {0, "s3://b/p/r-1/000000.csv.gz", 1, 1, 1, 123, 1001.0};
    assert_int_equal(rt_store_upload_commit_batch(s, run, &b), 0);
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_string_equal(u.remote_run_id, "r-1");
    assert_string_equal(u.upload_uri_prefix, "s3://b/p");
    assert_int_equal(u.last_seq, 1);
    assert_int_equal(u.batches, 1);
    rt_store_upload_free(&u);
    /* the same batch again: refused, and the progress is where it was */
    assert_int_not_equal(rt_store_upload_commit_batch(s, run, &b), 0);
    assert_non_null(strstr(rt_store_error(s), "UNIQUE"));
    assert_int_equal(sqlite3_get_autocommit(rt_store_db(s)), 1);
    body = rt_store_upload_finish_body(s, run, NULL, 0);
    assert_non_null(body);
    assert_non_null(strstr(body, "\"data_uris\":[\"s3://b/p/r-1/000000.csv.gz\"]"));
    free(body);
    body = rt_store_upload_finish_body(s, run, "a,b\n1,2\nXX", 8);
    assert_non_null(strstr(body, "\"data_csv\":\"a,b\\n1,2\\n\""));
    free(body);
    assert_int_equal(rt_store_upload_finished(s, run, 1002.0, 1), 0);
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_int_equal(u.finished, 1);
    rt_store_upload_free(&u);
    assert_int_equal(rt_store_upload_pending(s, &ids, &n), 0);
    assert_int_equal(n, 0);
    free(ids);
    rt_store_close(s);
    fx_case_free(&c);
}

/* The columns of schema version 9 (Slurm's facts), dropped to make an older file. */
#define DROP_V9                                                                                    \
    "ALTER TABLE runs DROP COLUMN slurm_array_job_id; "                                            \
    "ALTER TABLE runs DROP COLUMN slurm_array_task_id; "                                           \
    "ALTER TABLE runs DROP COLUMN slurm_step_id; "                                                 \
    "ALTER TABLE runs DROP COLUMN slurm_job_user; "                                                \
    "ALTER TABLE runs DROP COLUMN slurm_job_partition; "                                           \
    "ALTER TABLE runs DROP COLUMN slurm_nodename; "                                                \
    "ALTER TABLE runs DROP COLUMN slurm_job_num_nodes; "                                           \
    "ALTER TABLE runs DROP COLUMN slurm_ntasks; "                                                  \
    "ALTER TABLE runs DROP COLUMN slurm_cpus_per_task; "                                           \
    "ALTER TABLE runs DROP COLUMN slurm_gpus_on_node; "                                            \
    "ALTER TABLE runs DROP COLUMN slurm_job_gpus; "                                                \
    "ALTER TABLE runs DROP COLUMN slurm_time_limit_s; "

/* The columns of schema version 13 (how the kernel let the figures be read), dropped to make
 * an older file. */
#define DROP_V13                                                                                   \
    "ALTER TABLE runs DROP COLUMN proc_memory_source; "                                            \
    "ALTER TABLE runs DROP COLUMN cpu_wait_source; "                                               \
    "ALTER TABLE runs DROP COLUMN cpu_wait_missing; "                                              \
    "ALTER TABLE runs DROP COLUMN psi_missing; " DROP_V14

/* The columns of schema version 14 (a Slurm step's cgroup), dropped to make an older file. */
#define DROP_V14                                                                                   \
    "ALTER TABLE runs DROP COLUMN cgroup_path; "                                                   \
    "ALTER TABLE runs DROP COLUMN cgroup_oom_kills; "                                              \
    "ALTER TABLE runs DROP COLUMN slurm_job_state; "

/* A database of schema version 4 (the views before the rates, the run's interval_s, no cloud
 * columns) is brought up to date when it is opened, for reading too. */
static void test_upgrade_from_4(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    rt_store_close(s);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DROP VIEW python_combined; "
                                  "DROP VIEW python_system; DROP VIEW python_process; "
                                  "DROP VIEW sample_metrics; DROP VIEW sample_metrics_base; "
                                  "DROP VIEW sample_rates; "
                                  "DROP VIEW nic_sample_rates; DROP VIEW disk_sample_rates; "
                                  "DROP VIEW run_sample_counts; "
                                  "ALTER TABLE runs RENAME COLUMN requested_interval_s TO "
                                  "interval_s; ALTER TABLE runs DROP COLUMN cloud_vendor_id; "
                                  "ALTER TABLE runs DROP COLUMN cloud_account_id; "
                                  "ALTER TABLE runs DROP COLUMN cloud_region_id; "
                                  "ALTER TABLE runs DROP COLUMN cloud_zone_id; "
                                  "ALTER TABLE runs DROP COLUMN cloud_instance_type; "
                                  "ALTER TABLE runs DROP COLUMN job_maxrss_kib; "
                                  "ALTER TABLE runs DROP COLUMN job_utime_s; "
                                  "ALTER TABLE runs DROP COLUMN job_stime_s; "
                                  "ALTER TABLE runs DROP COLUMN host_oom_kills; "
                                  "ALTER TABLE samples DROP COLUMN proc_cpu_wait_s; "
                                  "ALTER TABLE process_samples DROP COLUMN sched_wait_ns; "
                                  "ALTER TABLE process_samples DROP COLUMN cpu_wait_s; "
                                  "ALTER TABLE runs DROP COLUMN cgroup_cpu_quota_cores; "
                                  "ALTER TABLE runs DROP COLUMN cgroup_cpuset_cpus; "
                                  "ALTER TABLE runs DROP COLUMN cgroup_memory_limit_bytes; "
                                  "DROP INDEX runs_slurm_job; " DROP_V9 DROP_V13
                                  "ALTER TABLE runs DROP COLUMN slurm_job_id; "
                                  "ALTER TABLE runs DROP COLUMN slurm_cpus_on_node; "
                                  "ALTER TABLE runs DROP COLUMN slurm_mem_per_node_mib; "
                                  "ALTER TABLE runs DROP COLUMN slurm_mem_per_cpu_mib; "
                                  "ALTER TABLE runs DROP COLUMN cuda_visible_devices; "
                                  "ALTER TABLE runs DROP COLUMN alloc_gpus; "
                                  "ALTER TABLE runs DROP COLUMN cgroup_memory_peak_bytes; "
                                  "PRAGMA user_version = 4",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_READ, &s, err, sizeof(err)), 0);
    assert_int_equal(q1(rt_store_db(s), "PRAGMA user_version"), rt_store_schema_version());
    assert_int_equal(q1(rt_store_db(s), "SELECT count(*) FROM sample_metrics"), 0);
    assert_int_equal(q1(rt_store_db(s), "SELECT count(*) FROM pragma_table_info('runs') WHERE "
                                        "name IN ('requested_interval_s', 'cloud_vendor_id', "
                                        "'cloud_instance_type')"),
                     3);
    assert_int_equal(rt_store_schema_fingerprint(rt_store_db(s)), RT_SCHEMA_FINGERPRINT);
    assert_queries_prepare(s); /* the readers' statements on the upgraded file */
    rt_store_close(s);
}

/* One uploader per run: the claim is taken in a write transaction, refused to another owner
 * while it lasts, renewed by its owner, taken over when it ran out or its owner is the one the
 * caller found dead; a reservation that came to nothing leaves no row; a registration in doubt
 * stays until its outcome is stored. */
static void test_upload_claims(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run);
    struct rt_store_upload_owner a = {"host-a", 100, 2000.0}, b = {"host-b", 200, 2100.0}, h;
    sqlite3 *db = rt_store_db(s);
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 1000.0, NULL, &h), 0);
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads WHERE owner_pid = 100 AND api_url = "
                            "'https://api' AND remote_run_id IS NULL"),
                     1);
    /* another owner, while it lasts: refused, told who */
    memset(&h, 0, sizeof(h));
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &b, 1000.0, NULL, &h), 1);
    assert_string_equal(h.host, "host-a");
    assert_int_equal(h.pid, 100);
    assert_true(h.until == 2000.0);
    assert_int_equal(sqlite3_get_autocommit(db), 1);
    /* found dead, but renewed meanwhile: still refused; exactly that holder: taken over */
    struct rt_store_upload_owner old = h;
    a.until = 2500.0;
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 1000.0, NULL, &h), 0);
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &b, 1000.0, &old, &h), 1);
    old.until = 2500.0;
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &b, 1000.0, &old, &h), 0);
    /* ran out: taken over */
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 2200.0, NULL, &h), 0);
    /* released by someone else: nothing happens; by its owner: the empty reservation goes */
    assert_int_equal(rt_store_upload_release(s, run, &b), 0);
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads WHERE owner_pid = 100"), 1);
    assert_int_equal(rt_store_upload_release(s, run, &a), 0);
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads"), 0);

    /* a POST that went out: in doubt until its outcome is stored, and kept after release */
    struct rt_store_upload u;
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 1000.0, NULL, &h), 0);
    assert_int_equal(rt_store_upload_registering(s, run, "https://api2", 1001.0), 0);
    assert_int_equal(rt_store_upload_register_outcome(s, run, "it timed out"), 0);
    assert_int_equal(rt_store_upload_release(s, run, &a), 0);
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_null(u.remote_run_id);
    assert_true(u.register_sent_at == 1001.0);
    assert_string_equal(u.register_error, "it timed out");
    assert_string_equal(u.api_url, "https://api2");
    assert_int_equal(strlen(u.uuid), 36);
    rt_store_upload_free(&u);
    /* refused at the next try: the doubt is cleared, and the empty row goes on release */
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 1000.0, NULL, &h), 0);
    assert_int_equal(rt_store_upload_registering(s, run, "https://api", 1002.0), 0);
    assert_int_equal(rt_store_upload_register_outcome(s, run, NULL), 0);
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_true(isnan(u.register_sent_at));
    assert_null(u.register_error);
    rt_store_upload_free(&u);
    assert_int_equal(rt_store_upload_release(s, run, &a), 0);
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads"), 0);
    /* registered: the doubt gone, the row stays; registering it again is refused */
    assert_int_equal(rt_store_upload_claim(s, run, "https://api", &a, 1000.0, NULL, &h), 0);
    assert_int_equal(rt_store_upload_registering(s, run, "https://api", 1003.0), 0);
    assert_int_equal(rt_store_upload_register(s, run, "https://api", "r-1", "s3://b/p", 1004.0), 0);
    assert_int_equal(rt_store_upload_release(s, run, &a), 0);
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_string_equal(u.remote_run_id, "r-1");
    assert_true(isnan(u.register_sent_at));
    rt_store_upload_free(&u);
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads WHERE owner_pid IS NULL"), 1);
    assert_int_equal(rt_store_upload_register(s, run, "https://api", "r-2", "s3://b/q", 1005.0),
                     -1);
    assert_non_null(strstr(rt_store_error(s), "registered with sentinel already"));
    assert_int_equal(q1(db, "SELECT count(*) FROM uploads WHERE remote_run_id = 'r-1'"), 1);
    rt_store_close(s);
    fx_case_free(&c);
}

/* A new database at dbpath holding the run of fixture case 03-process-tree; its id. */
static int64_t new_db_with_case(void)
{
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run;
    store_case(s, "03-process-tree", &c, &run);
    rt_store_close(s);
    fx_case_free(&c);
    return run;
}

/* A database of schema version 5 keeps its upload progress through version 6 (the uploads
 * table rebuilt to let a reservation exist before the run has a Sentinel id). */
static void test_upgrade_from_5(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    int64_t run = new_db_with_case();
    sqlite3 *db;
    char sql[4096];
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    snprintf(sql, sizeof(sql),
             "ALTER TABLE runs DROP COLUMN job_maxrss_kib; ALTER TABLE runs DROP COLUMN "
             "job_utime_s; ALTER TABLE runs DROP COLUMN job_stime_s; ALTER TABLE runs DROP "
             "COLUMN host_oom_kills; DROP VIEW IF EXISTS rust_sample; DROP VIEW python_combined; "
             "DROP VIEW python_system; DROP VIEW python_process; DROP VIEW sample_metrics; "
             "DROP VIEW sample_metrics_base; DROP VIEW sample_rates; ALTER TABLE samples DROP "
             "COLUMN proc_cpu_wait_s; "
             "ALTER TABLE process_samples DROP COLUMN sched_wait_ns; ALTER TABLE "
             "process_samples DROP COLUMN cpu_wait_s; "
             "ALTER TABLE runs DROP COLUMN cgroup_cpu_quota_cores; "
             "ALTER TABLE runs DROP COLUMN cgroup_cpuset_cpus; "
             "ALTER TABLE runs DROP COLUMN cgroup_memory_limit_bytes; "
             "DROP INDEX runs_slurm_job; " DROP_V9 DROP_V13
             "ALTER TABLE runs DROP COLUMN slurm_job_id; "
             "ALTER TABLE runs DROP COLUMN slurm_cpus_on_node; "
             "ALTER TABLE runs DROP COLUMN slurm_mem_per_node_mib; "
             "ALTER TABLE runs DROP COLUMN slurm_mem_per_cpu_mib; "
             "ALTER TABLE runs DROP COLUMN cuda_visible_devices; "
             "ALTER TABLE runs DROP COLUMN alloc_gpus; "
             "ALTER TABLE runs DROP COLUMN cgroup_memory_peak_bytes; "
             "DROP TABLE uploads; CREATE TABLE uploads (run_id INTEGER PRIMARY KEY REFERENCES "
             "runs (id) ON DELETE CASCADE, api_url TEXT NOT NULL, remote_run_id TEXT NOT NULL, "
             "upload_uri_prefix TEXT NOT NULL, registered_at REAL NOT NULL, last_seq INTEGER NOT "
             "NULL DEFAULT 0, finished_at REAL) STRICT; INSERT INTO uploads VALUES (%lld, "
             "'https://api', 'r-9', 's3://b/p', 1000.5, 1, 1001.5); PRAGMA user_version = 5",
             (long long)run);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    assert_int_equal(q1(rt_store_db(s), "PRAGMA user_version"), rt_store_schema_version());
    assert_int_equal(rt_store_schema_fingerprint(rt_store_db(s)), RT_SCHEMA_FINGERPRINT);
    struct rt_store_upload u;
    assert_int_equal(rt_store_upload_load(s, run, &u), 0);
    assert_string_equal(u.remote_run_id, "r-9");
    assert_string_equal(u.upload_uri_prefix, "s3://b/p");
    assert_string_equal(u.api_url, "https://api");
    assert_int_equal(u.last_seq, 1);
    assert_int_equal(u.finished, 1);
    assert_true(isnan(u.register_sent_at));
    rt_store_upload_free(&u);
    assert_int_equal(q1(rt_store_db(s), "SELECT registered_at = 1000.5 AND finished_at = 1001.5 "
                                        "AND owner_pid IS NULL FROM uploads"),
                     1);
    rt_store_close(s);
}

/* The file at dbpath after `older` (SQL that turns it into an older schema) and an open for
 * reading, which must bring it up to date. */
static struct rt_store *open_after(const char *older)
{
    sqlite3 *db;
    assert_int_equal(sqlite3_open(dbpath, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, older, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_READ, &s, err, sizeof(err)), 0);
    assert_int_equal(q1(rt_store_db(s), "PRAGMA user_version"), rt_store_schema_version());
    assert_int_equal(rt_store_schema_fingerprint(rt_store_db(s)), RT_SCHEMA_FINGERPRINT);
    return s;
}

/* A database of schema version 10 (sample_metrics holding every column itself, no
 * sample_metrics_base) is brought up to date when it is opened for reading: version 11 adds
 * sample_metrics_base, the columns of sample_metrics in its order less the six GPU ones, which
 * summary and report read for runs without GPU rows. */
static void test_upgrade_from_10(void **state)
{
    (void)state;
    int64_t run = new_db_with_case();
    struct rt_store *s =
        open_after(DROP_V13 "DROP VIEW python_combined; DROP VIEW python_system; "
                            "DROP VIEW python_process; DROP VIEW sample_metrics; "
                            "DROP VIEW sample_metrics_base; PRAGMA user_version = 10");
    sqlite3 *r = rt_store_db(s);
    /* store_case stored a baseline and one sample: one row after the baseline */
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM sample_metrics_base WHERE run_id = %lld",
             (long long)run);
    assert_int_equal(q1(r, sql), 1);
    /* sample_metrics's 47 columns, in order, are sample_metrics_base's 41 and the GPU six */
    assert_int_equal(q1(r, "SELECT count(*) FROM pragma_table_info('sample_metrics')"), 47);
    assert_int_equal(q1(r, "SELECT count(*) FROM pragma_table_info('sample_metrics_base')"), 41);
    assert_int_equal(q1(r, "SELECT count(*) FROM pragma_table_info('sample_metrics') "
                           "WHERE name IN ('system_gpu_usage', 'system_gpu_vram_mib', "
                           "'system_gpu_utilized', 'process_gpu_usage', "
                           "'process_gpu_vram_mib', 'process_gpu_utilized')"),
                     6);
    assert_int_equal(q1(r, "SELECT count(*) FROM (SELECT name, row_number() OVER (ORDER BY cid) "
                           "AS n FROM pragma_table_info('sample_metrics') WHERE name NOT LIKE "
                           "'%\\_gpu\\_%' ESCAPE '\\') m JOIN (SELECT name, row_number() OVER "
                           "(ORDER BY cid) AS n FROM pragma_table_info('sample_metrics_base')) b "
                           "USING (name, n)"),
                     41);
    rt_store_close(s);
}

/* A database of schema version 11 (the rates defined in sample_rates, sample_metrics_base
 * reading them through it) is brought up to date when it is opened for reading: version 12
 * defines them in sample_metrics_base, over samples itself, adds cgroup_cores to it and to
 * sample_metrics, and sample_rates takes them from there. Every rate is still the count of its
 * interval per second of it, NULL for the baseline, in each of the three views. */
static void test_upgrade_from_11(void **state)
{
    (void)state;
    int64_t run = new_db_with_case();
    /* schema 11's sample_rates and sample_metrics_base, as they were */
    struct rt_store *s = open_after(
        "DROP VIEW python_combined; DROP VIEW python_system; DROP VIEW python_process; "
        "DROP VIEW sample_metrics; DROP VIEW sample_rates; DROP VIEW sample_metrics_base; "
        "CREATE VIEW sample_rates AS SELECT s.*, s.disk_read_bytes / s.interval_s AS "
        "disk_read_bytes_per_s FROM samples s; "
        "CREATE VIEW sample_metrics_base AS SELECT s.run_id, s.seq, s.id AS sample_id, "
        "s.disk_read_bytes_per_s AS system_disk_read_bytes_per_s FROM sample_rates s WHERE "
        "s.kind <> 'baseline'; " DROP_V13 "PRAGMA user_version = 11");
    sqlite3 *r = rt_store_db(s);
    assert_int_equal(q1(r, "SELECT count(*) FROM pragma_table_info('sample_metrics') "
                           "WHERE name = 'cgroup_cores'"),
                     1);
    /* the rates: one row of sample_rates per sample, each rate its count over the interval */
    char sql[2048];
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM sample_rates r JOIN samples s ON s.id = r.id "
             "WHERE s.run_id = %lld AND r.disk_read_bytes_per_s IS s.disk_read_bytes / "
             "s.interval_s AND r.disk_write_bytes_per_s IS s.disk_write_bytes / s.interval_s "
             "AND r.disk_io_bytes_per_s IS (s.disk_read_bytes + s.disk_write_bytes) / "
             "s.interval_s AND r.net_rx_bytes_per_s IS s.net_rx_bytes / s.interval_s AND "
             "r.net_tx_bytes_per_s IS s.net_tx_bytes / s.interval_s AND "
             "r.proc_read_bytes_per_s IS s.proc_read_bytes / s.interval_s AND "
             "r.proc_write_bytes_per_s IS s.proc_write_bytes / s.interval_s AND "
             "r.proc_io_bytes_per_s IS (s.proc_read_bytes + s.proc_write_bytes) / s.interval_s "
             "AND r.cgroup_cores IS s.cgroup_cpu_s / s.interval_s",
             (long long)run);
    assert_int_equal(q1(r, sql), 2);
    /* the baseline's are NULL, the sample's are numbers (the fixture's disk and tree read) */
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM sample_rates WHERE run_id = %lld AND seq = 0 AND "
             "disk_read_bytes_per_s IS NULL AND proc_io_bytes_per_s IS NULL",
             (long long)run);
    assert_int_equal(q1(r, sql), 1);
    snprintf(sql, sizeof(sql),
             "SELECT count(*) FROM sample_metrics m JOIN sample_rates r ON r.id = m.sample_id "
             "JOIN sample_metrics_base b ON b.sample_id = m.sample_id WHERE m.run_id = %lld "
             "AND m.system_disk_read_bytes_per_s = r.disk_read_bytes_per_s AND "
             "b.system_disk_read_bytes_per_s = r.disk_read_bytes_per_s AND "
             "m.process_disk_io_bytes_per_s = r.proc_io_bytes_per_s AND "
             "b.process_disk_io_bytes_per_s = r.proc_io_bytes_per_s AND "
             "m.system_net_recv_bytes_per_s = r.net_rx_bytes_per_s AND "
             "m.cgroup_cores IS r.cgroup_cores AND b.cgroup_cores IS r.cgroup_cores",
             (long long)run);
    assert_int_equal(q1(r, sql), 1);
    /* the view summary and report read for runs without GPU rows stands on the tables: no view
     * under sample_metrics_base (each level is worked out again by every statement's first
     * preparation) */
    assert_int_equal(q1(r, "SELECT count(*) FROM sqlite_schema v, sqlite_schema w WHERE v.name = "
                           "'sample_metrics_base' AND w.type = 'view' AND v.sql LIKE '%FROM ' || "
                           "w.name || ' %'"),
                     0);
    assert_int_equal(q1(r, "SELECT count(*) FROM sqlite_schema WHERE name = "
                           "'sample_metrics_base' AND sql LIKE '%FROM samples s%'"),
                     1);
    rt_store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_schema_complete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_database, setup, teardown),
        cmocka_unit_test_setup_teardown(test_named_queries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failure_then_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_facts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_writers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_process_returns_after_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_sample_fills_every_column, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_side, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_progress, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upload_claims, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_5, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_4, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_10, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade_from_11, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampler_failed_commit_keeps_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampler_keeps_up_to_bound, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sampler_end_retried, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
