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

/* The file at path holds exactly want. */
static void assert_file_text(const char *path, const char *want)
{
    char *got = fx_slurp(path);
    assert_non_null(got);
    assert_string_equal(got, want);
    free(got);
}

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

/* Record the case in cdir, a -> b, into the db; returns the run id. */
static int64_t record_dir(struct rt_store *s, const char *cdir, struct fx_case *c)
{
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

/* Record a golden case a -> b into the db; returns the run id. */
static int64_t record_case(struct rt_store *s, const char *cname, struct fx_case *c)
{
    char cdir[1024];
    snprintf(cdir, sizeof(cdir), "%s/parity/%s", RT_FIXTURES, cname);
    return record_dir(s, cdir, c);
}

static char *export_text(struct rt_store *s, int64_t run, enum rt_export_format f,
                         enum rt_export_table t)
{
    struct rt_export_query q = {f, t, run, RT_NAN, RT_NAN, 0, 0, 0, 0};
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

/* --- JSON Lines values ------------------------------------------------------------------------
 *
 * Every expected number below is worked out by hand from the case's raw snapshots (a -> b) or
 * its expected-*.csv row, the arithmetic in the comment next to it; none comes from the code
 * under test. Reals must match to 1e-9 relative (the JSON prints 15 digits), integers exactly,
 * and the JSON type must be the one named. */

struct jwant {
    const char *path;
    const char *type; /* json_type(): integer, real, text, null, array; "length" = array length */
    double v;         /* integer, real, length */
    const char *text; /* text */
};
#define JI(p, x)                                                                                   \
    {                                                                                              \
        p, "integer", (double)(x), NULL                                                            \
    }
#define JR(p, x)                                                                                   \
    {                                                                                              \
        p, "real", (double)(x), NULL                                                               \
    }
#define JT(p, x)                                                                                   \
    {                                                                                              \
        p, "text", 0, x                                                                            \
    }
#define JN(p)                                                                                      \
    {                                                                                              \
        p, "null", 0, NULL                                                                         \
    }
#define JL(p, n)                                                                                   \
    {                                                                                              \
        p, "length", (double)(n), NULL                                                             \
    }

/* The one JSON line of a case's a -> b interval, checked against want[]; every mismatch is
 * reported, then the test fails. */
static void check_json(struct rt_store *s, const char *line, const struct jwant *want, size_t n)
{
    struct rt_store_rows *r =
        rt_store_rows_open(s, "SELECT json_valid(?1), json_type(?1, ?2), json_extract(?1, ?2), "
                              "json_array_length(?1, ?2)");
    assert_non_null(r);
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const struct jwant *w = &want[i];
        rt_store_rows_reset(r);
        rt_store_rows_bind_t(r, 1, line);
        rt_store_rows_bind_t(r, 2, w->path);
        assert_int_equal(rt_store_rows_next(r), 1);
        assert_int_equal(rt_store_rows_i(r, 0), 1);
        const char *type = rt_store_rows_t(r, 1);
        char got[128];
        snprintf(got, sizeof(got), "%s %s", type ? type : "(missing)",
                 rt_store_rows_t(r, 2) ? rt_store_rows_t(r, 2) : "");
        int ok;
        if (!strcmp(w->type, "length"))
            ok = type && !strcmp(type, "array") && rt_store_rows_i(r, 3) == (int64_t)w->v;
        else if (!type || strcmp(type, w->type) != 0)
            ok = 0;
        else if (!strcmp(w->type, "integer"))
            ok = rt_store_rows_i(r, 2) == (int64_t)w->v;
        else if (!strcmp(w->type, "real"))
            ok = fabs(rt_store_rows_f(r, 2) - w->v) <= 1e-9 * fmax(1.0, fabs(w->v));
        else if (!strcmp(w->type, "text"))
            ok = !strcmp(rt_store_rows_t(r, 2), w->text);
        else
            ok = 1; /* null */
        if (!ok) {
            if (!strcmp(w->type, "text"))
                print_error("%s: got %s, want text %s\n", w->path, got, w->text);
            else
                print_error("%s: got %s, want %s %.17g\n", w->path, got, w->type, w->v);
            bad++;
        }
    }
    rt_store_rows_close(r);
    if (bad) {
        print_error("the line: %s\n", line);
        fail_msg("%d of %zu JSON values wrong", bad, n);
    }
}

/* The single JSON line of a recorded case (the a -> b sample), without its newline. */
static char *json_line(struct rt_store *s, int64_t run)
{
    char *got = export_text(s, run, RT_FMT_JSONL, RT_TABLE_COMBINED);
    size_t len = strlen(got);
    assert_true(len > 0 && got[len - 1] == '\n');
    got[len - 1] = '\0';
    assert_null(strchr(got, '\n')); /* one sample after the baseline: one line */
    return got;
}

/* time_b - time_a of the case's meta: the interval every per-second rate divides by */
#define DT03 (1795664114.524965 - 1795664112.924735)
#define DT10 (1795666801.905003 - 1795666800.904512)

/* Case 03 (a real process tree), with /proc/pressure files added to a copy of it (the Python
 * reference reads no PSI, so the golden case has none): every field group of the line except
 * the GPUs (tests/cli/test_export.sh checks those through the fake NVML library). */
static void test_jsonl_fields(void **state)
{
    (void)state;
    char cdir[1024], src[1024];
    snprintf(src, sizeof(src), "%s/parity/03-process-tree", RT_FIXTURES);
    snprintf(cdir, sizeof(cdir), "%s/03-with-psi", dir);
    fx_copytree(src, cdir);
    char adir[1100], bdir[1100];
    snprintf(adir, sizeof(adir), "%s/a", cdir);
    snprintf(bdir, sizeof(bdir), "%s/b", cdir);
    /* stall totals in µs: a, then b = a + share * 1600230 µs (the interval) */
    fx_write(adir, "proc/pressure/cpu",
             "some avg10=1.00 avg60=1.00 avg300=1.00 total=5000000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=2000000\n");
    fx_write(bdir, "proc/pressure/cpu",
             "some avg10=1.00 avg60=1.00 avg300=1.00 total=5480069\n"   /* +30% */
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=2160023\n"); /* +10% */
    fx_write(adir, "proc/pressure/memory",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=300000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=100000\n");
    fx_write(bdir, "proc/pressure/memory",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=940092\n"   /* +40% */
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=420046\n"); /* +20% */
    fx_write(adir, "proc/pressure/io",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=7000000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=900000\n");
    fx_write(bdir, "proc/pressure/io",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=9000000\n"  /* more than the interval */
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=800000\n"); /* went back */

    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run = record_dir(s, cdir, &c);
    char *line = json_line(s, run);

    static const struct jwant want[] = {
        JI("$.timestamp_secs", 1795664114),   /* meta time_b 1795664114.524965, truncated */
        JR("$.timestamp", 1795664114.524965), /* meta time_b */
        JI("$.actual_interval_ms", 1600),     /* 1.600230 s */
        JR("$.interval_s", DT03), JN("$.job_name"), JI("$.tracked_pid", 19873), /* meta pid */
        /* /proc/stat "cpu" a -> b: user 29834 -> 29963 (+129), nice +0, system 16906 -> 16984
         * (+78), idle 198300 -> 198411 (+111), iowait 939 -> 940 (+1), irq +0, softirq
         * 501 -> 504 (+3), steal +0: total 322, idle+iowait 112, busy 210; 2 cpuN lines */
        JR("$.cpu.utilization_pct", 210.0 / 322.0 * 2), /* busy share x cores */
        JL("$.cpu.per_core_pct", 2),
        /* cpu0 +76 user +11 system +70 idle +1 iowait +2 softirq: 89 busy of 160 */
        JR("$.cpu.per_core_pct[0]", 89.0 / 160.0 * 100),
        /* cpu1 +52 user +66 system +42 idle: 118 busy of 160 */
        JR("$.cpu.per_core_pct[1]", 118.0 / 160.0 * 100),
        JR("$.cpu.utime_secs", 1.29), /* (129 user + 0 nice) ticks / 100 Hz */
        JR("$.cpu.stime_secs", 0.78), /* 78 system ticks / 100 Hz */
        JR("$.cpu.usage_cores", (1.29 + 0.78) / DT03),
        JI("$.cpu.process_count", 5), /* b/proc: 1 19873 19919 19920 19921 */
        JI("$.cpu.procs_running", 1), /* b/proc/stat procs_running */
        JI("$.cpu.procs_blocked", 0),
        JN("$.cpu.cgroup_usage_secs"), /* no cgroup files in the case */
        JN("$.cpu.cgroup_utilization_pct"),
        /* the tree (expected-process.csv: utime 0.88, stime 0.01, memory_mib 79.3359,
         * disk 1048576 / 3145728 bytes): only 19919 moves, utime 240 -> 328, stime 11 -> 12 */
        JR("$.cpu.process_cores_used", (0.88 + 0.01) / DT03),
        JI("$.cpu.process_child_count", 3), /* 19919, 19920, 19921 */
        JR("$.cpu.process_utime_secs", 0.88), JR("$.cpu.process_stime_secs", 0.01),
        JI("$.cpu.process_pss_kib", 81240), /* Pss 463 + 9707 + 460 + 70610 kB */
        JI("$.cpu.process_pss_mib", 79),    /* 81240 / 1024 = 79.34, truncated */
        JI("$.cpu.process_rss_kib", 94804), /* stat rss (757 + 3466 + 768 + 18710) pages x 4 KiB */
        JI("$.cpu.process_rss_mib", 92),    /* 94804 / 1024 = 92.58, truncated */
        JI("$.cpu.process_disk_read_bytes", 1048576),  /* 19919: 3686400 - 2637824 */
        JI("$.cpu.process_disk_write_bytes", 3145728), /* 19919: 11546624 - 8400896 */
        JN("$.cpu.process_gpu_usage"),                 /* no GPU */
        JN("$.cpu.process_gpu_vram_mib"), JN("$.cpu.process_gpu_utilized"),
        /* b/proc/meminfo: MemTotal 24683620, MemFree 24029012, MemAvailable 24193104,
         * Buffers 3980, Cached 332780, SReclaimable 87920, Active 93768, Inactive 386992,
         * Shmem 8952, SwapTotal 0 kB; MiB are KiB / 1024 truncated (the Rust reference's) */
        JI("$.memory.total_kib", 24683620),
        JI("$.memory.total_mib", 24105), /* 24683620 / 1024 = 24105.1 */
        JI("$.memory.free_mib", 23465),  /* 24029012 / 1024 = 23465.8 */
        JI("$.memory.available_kib", 24193104),
        JI("$.memory.available_mib", 23626), /* 24193104 / 1024 = 23626.1 */
        JI("$.memory.used_kib", 490516),     /* MemTotal - MemAvailable = 24683620 - 24193104 */
        JI("$.memory.used_mib", 479),        /* 490516 / 1024 = 479.02 (CSV: 479.0195) */
        JR("$.memory.used_pct", 479.0 * 100 / 24105),
        JI("$.memory.buffers_mib", 3),       /* 3980 / 1024 = 3.9 */
        JI("$.memory.cached_mib", 324 + 85), /* Cached 332780 / 1024 + SReclaimable 87920 / 1024 */
        JI("$.memory.active_mib", 91),       /* 93768 / 1024 = 91.6 */
        JI("$.memory.inactive_mib", 377),    /* 386992 / 1024 = 377.9 */
        JI("$.memory.swap_total_mib", 0), JI("$.memory.swap_used_mib", 0),
        JR("$.memory.swap_used_pct", 0.0), JI("$.memory.shmem_kib", 8952),
        /* pressure: the share of the 1.600230 s interval stalled, from the total= deltas */
        JR("$.pressure.cpu.some_pct", 480069 / (DT03 * 1e6) * 100),    /* 5480069 - 5000000 */
        JR("$.pressure.cpu.full_pct", 160023 / (DT03 * 1e6) * 100),    /* 2160023 - 2000000 */
        JR("$.pressure.memory.some_pct", 640092 / (DT03 * 1e6) * 100), /* 940092 - 300000 */
        JR("$.pressure.memory.full_pct", 320046 / (DT03 * 1e6) * 100), /* 420046 - 100000 */
        JR("$.pressure.io.some_pct", 100.0), /* 2000000 µs stalled in 1600230: capped at 100 */
        JR("$.pressure.io.full_pct", 0.0),   /* 800000 < 900000: a reset, not negative */
        JI("$.pressure.cpu.some_total_us", 5480069), JI("$.pressure.cpu.full_total_us", 2160023),
        JI("$.pressure.memory.some_total_us", 940092),
        JI("$.pressure.memory.full_total_us", 420046), JI("$.pressure.io.some_total_us", 9000000),
        JI("$.pressure.io.full_total_us", 800000),
        /* network: eth0 (lo is not listed) did not move; its b totals differ from each other */
        JL("$.network", 1), JT("$.network[0].interface", "eth0"),
        JI("$.network[0].rx_bytes", 0), /* 62255664 - 62255664 */
        JI("$.network[0].tx_bytes", 0), /* 746403 - 746403 */
        JR("$.network[0].rx_bytes_per_sec", 0.0), JR("$.network[0].tx_bytes_per_sec", 0.0),
        JI("$.network[0].rx_bytes_total", 62255664), JI("$.network[0].tx_bytes_total", 746403),
        JN("$.network[0].mac_address"), /* no sysfs class/net in the case */
        JN("$.network[0].speed_mbps"),
        /* disk vda (512-byte sectors): sectors read 4743778 -> 4743786, written 1885280 ->
         * 1891472 (expected-system.csv: disk_read_bytes 4096, disk_write_bytes 3170304) */
        JL("$.disk", 1), JT("$.disk[0].device", "vda"),
        JI("$.disk[0].read_bytes", 4096),                    /* (4743786 - 4743778) x 512 */
        JI("$.disk[0].write_bytes", 3170304),                /* (1891472 - 1885280) x 512 */
        JR("$.disk[0].read_bytes_per_sec", 4096 / DT03),     /* 2559.6 */
        JR("$.disk[0].write_bytes_per_sec", 3170304 / DT03), /* 1981155.2 */
        JI("$.disk[0].read_bytes_total", 2428818432),        /* 4743786 x 512 */
        JI("$.disk[0].write_bytes_total", 968433664),        /* 1891472 x 512 */
        /* its mount, / (ext4 on /dev/vda); b/statvfs.tsv: f_frsize 4096, f_blocks 66053021,
         * f_bfree 61823995, f_bavail 20855271 (expected-system.csv: 270.55, 185.13, 85.42 GB) */
        JL("$.disk[0].mounts", 1), JT("$.disk[0].mounts[0].mount_point", "/"),
        JT("$.disk[0].mounts[0].filesystem", "ext4"),
        JI("$.disk[0].mounts[0].total_bytes", 270553174016),    /* 66053021 x 4096 */
        JI("$.disk[0].mounts[0].used_bytes", 17322090496),      /* (66053021 - 61823995) x 4096 */
        JI("$.disk[0].mounts[0].available_bytes", 85423190016), /* 20855271 x 4096 */
        JR("$.disk[0].mounts[0].used_pct", 4229026.0 * 100 / 66053021), JL("$.gpu", 0),
        /* the tree's processes, by pid; their b stat, Pss and io, deltas against a */
        JL("$.processes", 4), JI("$.processes[0].pid", 19873), JI("$.processes[0].ppid", 1),
        JT("$.processes[0].name", "tree.sh"), JT("$.processes[0].state", "S"),
        JI("$.processes[0].threads", 1),
        JR("$.processes[0].cpu_utime_secs", 0.0), /* utime 0, cutime 56: unchanged */
        JR("$.processes[0].cpu_stime_secs", 0.0), /* stime 1, cstime 19: unchanged */
        JI("$.processes[0].pss_kib", 463),
        JI("$.processes[0].rss_kib", 3028), /* 757 pages x 4 KiB */
        JI("$.processes[0].disk_read_bytes", 0), JI("$.processes[0].disk_write_bytes", 0),
        JN("$.processes[0].gpu_vram_bytes"), JN("$.processes[0].gpu_util_pct"),
        JI("$.processes[1].pid", 19919), JI("$.processes[1].ppid", 19873),
        JT("$.processes[1].name", "python3"),
        JR("$.processes[1].cpu_utime_secs", 0.88), /* utime 240 -> 328 ticks */
        JR("$.processes[1].cpu_stime_secs", 0.01), /* stime 11 -> 12 ticks */
        JI("$.processes[1].pss_kib", 9707),
        JI("$.processes[1].rss_kib", 13864),            /* 3466 pages x 4 KiB */
        JI("$.processes[1].disk_read_bytes", 1048576),  /* 3686400 - 2637824 */
        JI("$.processes[1].disk_write_bytes", 3145728), /* 11546624 - 8400896 */
        JI("$.processes[2].pid", 19920), JI("$.processes[2].ppid", 19873),
        JT("$.processes[2].name", "bash"), JR("$.processes[2].cpu_utime_secs", 0.0),
        JI("$.processes[2].pss_kib", 460),
        JI("$.processes[2].rss_kib", 3072), /* 768 pages x 4 KiB */
        JI("$.processes[3].pid", 19921), JI("$.processes[3].ppid", 19920),
        JI("$.processes[3].pss_kib", 70610),
        JI("$.processes[3].rss_kib", 74840),      /* 18710 pages x 4 KiB */
        JI("$.processes[3].disk_write_bytes", 0), /* 4096 -> 4096 */
    };
    check_json(s, line, want, RT_ARRAY_LEN(want));
    free(line);
    rt_store_close(s);
    fx_case_free(&c);
}

/* Case 10 (churn): a NIC and a disk whose in and out differ, a disk that appeared, and process
 * rows after a reap, a re-parenting and a birth. */
static void test_jsonl_churn(void **state)
{
    (void)state;
    struct rt_store *s;
    char err[512];
    assert_int_equal(rt_store_open(dbpath, RT_STORE_WRITE, &s, err, sizeof(err)), 0);
    struct fx_case c;
    int64_t run = record_case(s, "10-churn", &c);
    char *line = json_line(s, run);
    static const struct jwant want[] = {
        JI("$.tracked_pid", 4100),
        JI("$.actual_interval_ms", 1000), /* 1.000491 s */
        /* /proc/stat a -> b: cpu0 +70 user +11 system +17 idle +1 iowait +1 softirq (82 busy
         * of 100), cpu1 +66 +9 +24 idle +1 softirq (76 of 100), cpu2 +12 +4 +84 idle (16 of
         * 100), cpu3 +48 +8 +44 idle (56 of 100); "cpu": 230 busy of 400 ticks, 4 cores */
        JR("$.cpu.utilization_pct", 230.0 / 400.0 * 4),
        JL("$.cpu.per_core_pct", 4),
        JR("$.cpu.per_core_pct[0]", 82.0),
        JR("$.cpu.per_core_pct[1]", 76.0),
        JR("$.cpu.per_core_pct[2]", 16.0),
        JR("$.cpu.per_core_pct[3]", 56.0),
        JR("$.cpu.utime_secs", 1.96), /* user 2871746 -> 2871942 */
        JR("$.cpu.stime_secs", 0.32), /* system 1221090 -> 1221122 */
        /* eth0 (veth9f3c2a1 is gone in b, lo not listed) */
        JL("$.network", 1),
        JT("$.network[0].interface", "eth0"),
        JI("$.network[0].rx_bytes", 182000), /* 912527678 - 912345678 */
        JI("$.network[0].tx_bytes", 5000),   /* 212350678 - 212345678 */
        JR("$.network[0].rx_bytes_per_sec", 182000 / DT10),
        JR("$.network[0].tx_bytes_per_sec", 5000 / DT10),
        JI("$.network[0].rx_bytes_total", 912527678),
        JI("$.network[0].tx_bytes_total", 212350678),
        /* sda: sectors read 46123456 -> 46125504, written 92345678 -> 92349774; sdc only in b
         * (no interval: NULL); loop0 not listed; sdb gone */
        JL("$.disk", 2),
        JT("$.disk[0].device", "sda"),
        JI("$.disk[0].read_bytes", 1048576),  /* 2048 sectors x 512 */
        JI("$.disk[0].write_bytes", 2097152), /* 4096 sectors x 512 */
        JR("$.disk[0].read_bytes_per_sec", 1048576 / DT10),
        JR("$.disk[0].write_bytes_per_sec", 2097152 / DT10),
        JI("$.disk[0].read_bytes_total", 23616258048),  /* 46125504 x 512 */
        JI("$.disk[0].write_bytes_total", 47283084288), /* 92349774 x 512 */
        /* / on /dev/sda; b/statvfs.tsv: 4096 x (244190646 blocks, 123455765 free, 111233543
         * available) */
        JL("$.disk[0].mounts", 1),
        JT("$.disk[0].mounts[0].mount_point", "/"),
        JI("$.disk[0].mounts[0].total_bytes", 1000204886016),    /* 244190646 x 4096 */
        JI("$.disk[0].mounts[0].used_bytes", 494530072576),      /* 120734881 x 4096 */
        JI("$.disk[0].mounts[0].available_bytes", 455612592128), /* 111233543 x 4096 */
        JR("$.disk[0].mounts[0].used_pct", 120734881.0 * 100 / 244190646),
        JT("$.disk[1].device", "sdc"),
        JN("$.disk[1].read_bytes"),
        JN("$.disk[1].write_bytes"),
        JN("$.disk[1].read_bytes_per_sec"),
        JN("$.disk[1].write_bytes_per_sec"),
        JI("$.disk[1].read_bytes_total", 4158976), /* 8123 x 512 */
        JI("$.disk[1].write_bytes_total", 0),
        JL("$.disk[1].mounts", 0),
        /* the tree: the root 4100 reaped 4102 (last seen utime 800, stime 200, io 0 / 4096),
         * 4103 re-parented to init stays the job's, 4110 was born (starttime 1750) */
        JI("$.cpu.process_child_count", 3),
        JR("$.cpu.process_utime_secs", 0.31 + 0.85 + 0.30 + 0.12),
        JR("$.cpu.process_stime_secs", 0.05 + 0.12 + 0.02 + 0.03),
        JI("$.cpu.process_disk_read_bytes", 8192 + 1048576 + 1000000),
        JI("$.cpu.process_disk_write_bytes", 8192 + 2097152),
        JI("$.cpu.process_pss_kib", 3016 + 179426 + 18432 + 30123),
        JL("$.processes", 4),
        JI("$.processes[0].pid", 4100),
        JI("$.processes[0].ppid", 2211),
        /* utime 120 -> 121 (+1), cutime 300 -> 1130 (+830) less 4102's 800 already counted */
        JR("$.processes[0].cpu_utime_secs", 0.31),
        /* stime 40 -> 40, cstime 80 -> 285 (+205) less 4102's 200 */
        JR("$.processes[0].cpu_stime_secs", 0.05),
        JI("$.processes[0].disk_read_bytes", 8192),  /* 12288 - 4096, less 4102's 0 */
        JI("$.processes[0].disk_write_bytes", 8192), /* 1060864 - 1048576 = 12288, less 4096 */
        JI("$.processes[0].pss_kib", 3016),
        JI("$.processes[0].rss_kib", 13864), /* 3466 pages x 4 KiB */
        JI("$.processes[1].pid", 4101),
        JR("$.processes[1].cpu_utime_secs", 0.85),      /* 5000 -> 5085 */
        JR("$.processes[1].cpu_stime_secs", 0.12),      /* 700 -> 712 */
        JI("$.processes[1].disk_read_bytes", 1048576),  /* 25624576 - 24576000 */
        JI("$.processes[1].disk_write_bytes", 2097152), /* 43331584 - 41234432 */
        JI("$.processes[1].pss_kib", 179426),
        JI("$.processes[2].pid", 4103),
        JI("$.processes[2].ppid", 1),
        JR("$.processes[2].cpu_utime_secs", 0.30),     /* 40 -> 70 */
        JR("$.processes[2].cpu_stime_secs", 0.02),     /* 50 -> 52 */
        JI("$.processes[2].disk_read_bytes", 1000000), /* 53428800 - 52428800 */
        JI("$.processes[2].disk_write_bytes", 0),
        JI("$.processes[3].pid", 4110),
        JR("$.processes[3].cpu_utime_secs", 0.12), /* born: 12 ticks from zero */
        JR("$.processes[3].cpu_stime_secs", 0.03), /* 3 ticks */
        JI("$.processes[3].disk_read_bytes", 0),
        JI("$.processes[3].pss_kib", 30123),
    };
    check_json(s, line, want, RT_ARRAY_LEN(want));
    free(line);
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
    assert_null(fx_slurp(at("new.csv")));
    assert_int_equal(count_names("new.csv.tmp-"), 1);
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_file_text(at("new.csv"), "new\n");
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
    assert_file_text(at("old.csv"), "old\n");
    assert_int_equal(count_names("old.csv.tmp-"), 0);
    o = rt_outfile_open(at("old.csv"), RT_OUT_MODE_REPLACE, err, sizeof(err));
    fputs("whole\n", rt_outfile_stream(o));
    assert_int_equal(rt_outfile_close(o, 1, err, sizeof(err)), 0);
    assert_file_text(at("old.csv"), "whole\n");
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
    assert_file_text(at("live.jsonl"), "line\n"); /* visible as it is written */
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
    struct CMUnitTest tests[RT_ARRAY_LEN(cases) + 6];
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
    tests[RT_ARRAY_LEN(cases) + 5] =
        (struct CMUnitTest)cmocka_unit_test_setup_teardown(test_jsonl_churn, setup, teardown);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
