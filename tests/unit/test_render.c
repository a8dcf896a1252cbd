/* test_render.c - the summary's renderers (render.h: render_json.c, render_text.c) on a struct
 * rt_summary built by hand, so each figure printed is one this file chose: the JSON document of
 * summary.h read back (values, and the nulls and absent keys the schema promises: a run without
 * a tree, a caveat or none, Keeper's answer or its error, --job's spread), the text and markdown
 * people read (exact lines: the title, how the run ended, the cores of a system-only run, the
 * wrapping at 100 columns, the tables, the groups, the spread), and --compare's two runs in both.
 * No database: test_summary.c covers the compute step; this covers what is made of its struct. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/json.h"
#include "rtrack/base/util.h"
#include "rtrack/summary/reco.h"
#include "rtrack/summary/render.h"
#include "rtrack/summary/summary.h"
#include "testlib.h"

static struct rt_stat4 st4(double mean, double p50, double p95, double max)
{
    return (struct rt_stat4){1, mean, p50, p95, max};
}

/* Run 42 of job "train": `python train.py --epochs 3`, 100 s sampled every second on "box" (8
 * vCPUs, 16 GiB); the tree at 1.5 cores on average (p50 1.4, p95 2.5, max 3) and 300 MiB (max
 * 500 MiB: sampled), the kernel's high-water mark 520 MiB; the system at 2 cores and 4000 MiB.
 * It exited 0. Every string malloc'd: rt_summary_free() frees them. */
static void tree_run(struct rt_summary *s)
{
    memset(s, 0, sizeof(*s));
    struct rt_summary_run *r = &s->run;
    r->id = 42;
    r->uuid = xstrdup("u-42");
    r->mode = xstrdup("run");
    r->status = xstrdup("finished");
    r->command_json = xstrdup("[\"python\",\"train.py\",\"--epochs\",\"3\"]");
    r->meta[RT_SM_JOB] = xstrdup("train");
    r->tags_json = xstrdup("{\"team\":\"ml\"}");
    r->pid = 1234;
    r->exit_code = 0;
    r->exit_signal = NAN;
    r->end_reason = xstrdup("exited");
    r->started_at = 1700000000; /* 2023-11-14 22:13:20 UTC */
    r->ended_at = 1700000100;
    r->duration_s = 100;
    r->samples = 100;
    r->interval_s = 1;
    r->runs = 1;
    struct rt_summary_host *h = &s->host;
    h->hostname = xstrdup("box");
    h->cpu_model = xstrdup("Xeon");
    h->kernel = xstrdup("6.1.0");
    h->os = xstrdup("Debian 12");
    h->vcpus = 8;
    h->memory_mib = 16384;
    h->gpu_count = h->gpu_memory_mib = NAN;

    s->has_tree = 1;
    for (int t = 0; t < RT_T_N; t++)
        s->process.total[t] = s->system.total[t] = NAN;
    s->process.st[RT_M_CPU] = st4(1.5, 1.4, 2.5, 3);
    s->process.st[RT_M_MEM] = st4(300, 290, 400, 500);
    s->process.total[RT_T_DREAD] = 1048576;
    s->process.total[RT_T_DWRITE] = 0;
    s->system.st[RT_M_CPU] = st4(2, 2, 3, 4);
    s->system.st[RT_M_MEM] = st4(4000, 4000, 4100, 4200);
    s->system.st[RT_M_NRECV] = st4(100, 100, 150, 200);
    s->system.total[RT_T_DREAD] = 2097152;
    s->system.total[RT_T_DWRITE] = 1536;
    s->system.total[RT_T_NRECV] = 10000;
    s->system.total[RT_T_NSENT] = 500;

    s->py.mean[RT_PY_CPU] = 1.456; /* 2 dp in the document: 1.46 */
    s->py.max[RT_PY_CPU] = 3;
    s->py.mean[RT_PY_MEM] = 300;
    s->py.max[RT_PY_MEM] = 500;
    s->py.duration = 100.0004; /* 3 dp: 100 */
    s->py.space_max = 12.345;  /* 2 dp: 12.35 (the double is 12.3450000000000006) */
    s->py.recv = 10000;
    s->py.sent = 500;

    s->kernel = (struct rt_summary_kernel){1, 520, 140, 10, NAN};
    s->demand = (struct rt_summary_demand){1, 1.5, 0.1, 1.6, 6.25, 0};
    s->peak.known = 1;
    s->peak.mib = 500;
    s->peak.at_s = 42;
    s->peak.procs[0] = (struct rt_summary_proc){1234, xstrdup("python"), 400};
    s->peak.procs[1] = (struct rt_summary_proc){1300, xstrdup("worker"), 100};
    s->peak.nprocs = 2;

    /* mean 1.5 -> 2 cores (ties to even); p95 2.5 -> 3; wait 1 of 16 (6 %): not starved; the
     * kernel's 520 MiB above the sampled 500: 520 x 1.2 = 624 -> 1024 MiB (Python's: 500 x 1.2
     * = 600 -> 1024) */
    struct rt_reco_in in = {.has_tree = 1,
                            .cpu_mean = 1.5,
                            .cpu_p95 = 2.5,
                            .cpu_p95_ok = 1,
                            .demand = {1, 1.5, 0.1, 1.6, 6.25, 0},
                            .mem_max = 500,
                            .kernel_maxrss_mib = 520,
                            .duration_s = 100,
                            .exit_code = 0,
                            .exit_signal = RT_NA,
                            .oom_kills = 0};
    rt_recommend(&in, 1, &s->reco);
    rt_recommend(&in, 0, &s->py_reco);
    /* 1.5 of 8 cores = 18.75 %; the peak 520 of 16384 MiB = 3.17 % */
    struct rt_efficiency_in ein = {1.5, 500, NAN, NAN, 520, 8, 16384, NAN, NAN, NAN, NAN, NAN, NAN};
    rt_efficiency(&ein, &s->eff);
    s->alloc.cpus = s->alloc.memory_mib = s->alloc.gpus = NAN;
    s->allocation = "dedicated";

    /* three stretches: the tree's CPU 1, 2, 4 and the host's pressure 10, 20, 40 % */
    s->sparks.n = 3;
    s->sparks.tree = 1;
    const double cpu[] = {1, 2, 4}, psi[] = {10, 20, 40};
    for (int i = 0; i < 3; i++) {
        s->sparks.v[RT_SPARK_CPU][i] = cpu[i];
        s->sparks.v[RT_SPARK_PSI][i] = psi[i];
        s->sparks.has[RT_SPARK_CPU][i] = s->sparks.has[RT_SPARK_PSI][i] = 1;
    }
    s->top.by_cpu[0] = (struct rt_summary_proc){1234, xstrdup("python"), 140};
    s->top.ncpu = 1;
    s->top.by_pss[0] = (struct rt_summary_proc){1234, xstrdup("python"), 400};
    s->top.npss = 1;
    s->groups.processes = 13;
    s->groups.g[0] = (struct rt_summary_group){
        xstrdup("python"), xstrdup("/usr/bin/python train.py"), 1, 140, 400, 1234, 1};
    s->groups.n = 1;
    s->cpu_time = (struct rt_summary_cpu_time){1, 140, 10, 150, "kernel", 100, 1.5};
}

/* --- the JSON document --------------------------------------------------------------------------
 */

static struct rt_buf doc;
static struct rt_json *json;

static void open_json(const struct rt_summary *s)
{
    doc.len = 0;
    rt_summary_write_json(s, &doc);
    rt_buf_append(&doc, "", 1);
    doc.len--;
    char err[128];
    rt_json_close(json);
    json = rt_json_open(doc.p, doc.len, err, sizeof(err));
    assert_non_null(json);
    assert_int_equal(rt_json_get(json, "$", NULL), RT_JSON_OBJECT); /* valid JSON */
}

static int teardown_json(void **state)
{
    (void)state;
    rt_json_close(json);
    json = NULL;
    rt_buf_free(&doc);
    return 0;
}

static enum rt_json_type type_at(const char *path)
{
    return rt_json_get(json, path, NULL);
}

static double num_at(const char *path)
{
    double v = NAN;
    enum rt_json_type t = rt_json_num(json, path, &v);
    if (t != RT_JSON_INTEGER && t != RT_JSON_REAL)
        fail_msg("%s: type %d, not a number", path, (int)t);
    return v;
}

static void text_at(const char *path, const char *want)
{
    char *v = NULL;
    enum rt_json_type t = rt_json_get(json, path, &v);
    if (t != RT_JSON_TEXT || strcmp(v, want))
        fail_msg("%s: \"%s\" (type %d), want \"%s\"", path, v ? v : "(null)", (int)t, want);
    free(v);
}

static void null_at(const char *path)
{
    if (type_at(path) != RT_JSON_NULL)
        fail_msg("%s: type %d, want null", path, (int)type_at(path));
}

static void absent_at(const char *path)
{
    if (type_at(path) != RT_JSON_ABSENT)
        fail_msg("%s: type %d, want absent", path, (int)type_at(path));
}

static void test_json_tree_run(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    open_json(&s);
    assert_true(num_at("$.run.id") == 42);
    text_at("$.run.status", "finished");
    assert_int_equal(type_at("$.run.in_progress"), RT_JSON_FALSE);
    text_at("$.run.command[1]", "train.py"); /* the stored array, as it is */
    text_at("$.run.job_name", "train");
    null_at("$.run.project_name");
    text_at("$.run.tags.team", "ml");
    assert_true(num_at("$.run.exit_code") == 0);
    null_at("$.run.exit_signal");
    assert_true(num_at("$.run.runs") == 1);
    null_at("$.host.gpu_count");
    null_at("$.host.gpu_model");
    /* the tree's METRICS: statistics, null where no sample has a value, no network */
    assert_true(num_at("$.process.cpu_cores.mean") == 1.5);
    assert_true(num_at("$.process.cpu_cores.p50") == 1.4);
    assert_true(num_at("$.process.cpu_cores.p95") == 2.5);
    assert_true(num_at("$.process.memory_mib.max") == 500);
    null_at("$.process.gpu_usage");
    absent_at("$.process.net_recv_bytes_per_s");
    absent_at("$.process.net_recv_bytes");
    assert_true(num_at("$.process.disk_read_bytes") == 1048576);
    /* the system's has the network */
    assert_true(num_at("$.system.net_recv_bytes_per_s.p95") == 150);
    assert_true(num_at("$.system.net_sent_bytes") == 500);
    null_at("$.system.net_sent_bytes_per_s");
    /* the reference's stats: 2 dp, the duration 3 dp */
    assert_true(num_at("$.python_stats.process_cpu_usage.mean") == 1.46);
    assert_true(num_at("$.python_stats.timestamp.duration") == 100);
    assert_true(num_at("$.python_stats.system_disk_space_used_gb.max") == 12.35);
    assert_true(num_at("$.kernel.maxrss_mib") == 520);
    null_at("$.kernel.cgroup_peak_mib");
    assert_int_equal(type_at("$.cpu_demand.starved"), RT_JSON_FALSE);
    assert_true(num_at("$.cpu_demand.wait_pct") == 6.25);
    text_at("$.memory_peak.processes[1].name", "worker");
    assert_true(num_at("$.memory_peak.processes[0].pss_mib") == 400);
    assert_true(num_at("$.memory_peak.others.count") == 0);
    /* the recommendation: rtrack's on the kernel's peak, Python's on the samples */
    assert_true(num_at("$.recommendation.cpu") == 2);
    assert_true(num_at("$.recommendation.cpu_p95") == 3);
    text_at("$.recommendation.cpu_basis.source", "usage");
    assert_true(num_at("$.recommendation.memory_mib") == 1024);
    assert_true(num_at("$.recommendation.memory_basis.peak_mib") == 520);
    text_at("$.recommendation.memory_basis.source", "kernel");
    assert_true(num_at("$.recommendation.memory_basis.headroom") == 1.2);
    text_at("$.recommendation.memory_basis.arithmetic",
            "peak 520.00 MiB (kernel) x 1.2 -> 1024 MiB");
    null_at("$.recommendation.caveat");
    text_at("$.python_recommendation.memory_basis.source", "sampled");
    assert_true(num_at("$.python_recommendation.memory_basis.peak_mib") == 500);
    text_at("$.python_recommendation.text", "2 vCPUs, 1024 MiB memory");
    assert_true(num_at("$.efficiency.cpu_pct") == 18.75);
    assert_true(num_at("$.efficiency.memory_pct") == 3.17);
    null_at("$.efficiency.gpu_pct");
    null_at("$.efficiency.cpu_alloc_pct");
    null_at("$.allocated");
    text_at("$.allocation", "dedicated");
    /* sparklines: 1, 2, 4 of 4 -> levels 2, 4, 7 */
    text_at("$.sparklines.cpu_cores", "\u2583\u2585\u2588");
    null_at("$.sparklines.memory_mib");
    text_at("$.sparklines.cpu_pressure_pct", "\u2583\u2585\u2588");
    text_at("$.sparkline_scale.source", "tree");
    assert_true(num_at("$.sparkline_scale.cpu_cores") == 4);
    assert_true(num_at("$.sparkline_scale.cpu_pressure_pct") == 40);
    null_at("$.sparkline_scale.memory_mib");
    assert_true(num_at("$.top_processes.by_cpu[0].cpu_s") == 140);
    assert_int_equal(type_at("$.top_processes.by_cpu[1]"), RT_JSON_ABSENT);
    assert_true(num_at("$.process_groups.processes") == 13);
    text_at("$.process_groups.groups[0].command", "/usr/bin/python train.py");
    text_at("$.cpu_time.source", "kernel");
    assert_true(num_at("$.cpu_time.total_s") == 150);
    /* Keeper not asked: "server" null, no "server_error"; no --job: no "spread" */
    null_at("$.server");
    absent_at("$.server_error");
    absent_at("$.spread");
    /* the document's separators: ", " and ": " */
    assert_non_null(strstr(doc.p, "{\"run\": {\"id\": 42, \"uuid\": \"u-42\", "));
    rt_summary_free(&s);
}

/* A system-only recording: the tree's objects are null, the system's figures stand in. */
static void test_json_no_tree(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.has_tree = 0;
    s.kernel.known = 0;
    s.demand.known = 0;
    s.peak.known = 0;
    s.cpu_time.known = 0;
    s.sparks.tree = 0;
    s.allocation = "shared";
    open_json(&s);
    null_at("$.process");
    assert_int_equal(type_at("$.system"), RT_JSON_OBJECT);
    null_at("$.kernel");
    null_at("$.cpu_demand");
    null_at("$.memory_peak");
    null_at("$.cpu_time");
    text_at("$.sparkline_scale.source", "system");
    text_at("$.allocation", "shared");
    rt_summary_free(&s);
}

/* A caveat is an object of its kind and text; an allocation is an object with nulls inside. */
static void test_json_caveat_and_allocation(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    struct rt_reco_in in = {.has_tree = 1,
                            .cpu_mean = 1.5,
                            .mem_max = 500,
                            .kernel_maxrss_mib = NAN,
                            .duration_s = 100,
                            .exit_code = RT_NA,
                            .exit_signal = 9,
                            .oom_kills = 2};
    rt_recommend(&in, 1, &s.reco);
    struct rt_allocated_in ain = {4, NAN, NAN, 8, NAN, NAN, NAN, NAN, NAN, "4242"};
    rt_alloc_decide(&ain, &s.alloc);
    open_json(&s);
    assert_int_equal(type_at("$.recommendation.caveat"), RT_JSON_OBJECT);
    text_at("$.recommendation.caveat.kind", "oom");
    text_at("$.recommendation.caveat.text",
            "based on a run killed by the OOM killer after 1m40s: memory is a lower bound; ask "
            "for more than 1024 MiB");
    /* 500 x 1.2 = 600 -> 1024 */
    assert_true(num_at("$.recommendation.memory_mib") == 1024);
    assert_true(num_at("$.allocated.cpus") == 4);
    text_at("$.allocated.cpus_from", "slurm");
    null_at("$.allocated.memory_mib");
    null_at("$.allocated.memory_from");
    null_at("$.allocated.gpus");
    text_at("$.allocated.slurm_job_id", "4242");
    rt_summary_free(&s);
}

/* Keeper asked: its object as it wrote it, or null and the error. */
static void test_json_server(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.server.asked = 1;
    s.server.error = xstrdup("cannot reach keeper: timed out");
    open_json(&s);
    null_at("$.server");
    text_at("$.server_error", "cannot reach keeper: timed out");
    s.server.json = xstrdup("{\"name\":\"c7i.large\",\"price\":0.089}");
    open_json(&s);
    text_at("$.server.name", "c7i.large");
    assert_true(num_at("$.server.price") == 0.089);
    absent_at("$.server_error");
    rt_summary_free(&s);
}

/* --job: "spread" last, its figures' statistics, nulls where a figure has no run. */
static void test_json_spread(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.run.runs = 3;
    s.has_spread = 1;
    s.spread.runs = 3;
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        s.spread.f[f].n = 0;
        s.spread.f[f].mean = s.spread.f[f].sd = s.spread.f[f].min = s.spread.f[f].max = NAN;
    }
    s.spread.f[0].n = 3, s.spread.f[0].mean = 100, s.spread.f[0].sd = 10;
    s.spread.f[0].min = 90, s.spread.f[0].max = 110;
    s.spread.f[2].n = 1, s.spread.f[2].mean = 1.5, s.spread.f[2].min = 1.5;
    s.spread.f[2].max = 1.5;
    open_json(&s);
    assert_true(num_at("$.spread.runs") == 3);
    assert_true(num_at("$.spread.figures.wall_time_s.sd") == 10);
    assert_true(num_at("$.spread.figures.wall_time_s.min") == 90);
    assert_true(num_at("$.spread.figures.cores_mean.n") == 1);
    null_at("$.spread.figures.cores_mean.sd"); /* one run: no deviation */
    assert_true(num_at("$.spread.figures.vram_max_mib.n") == 0);
    null_at("$.spread.figures.vram_max_mib.mean");
    /* after "server", the last key */
    const char *sv = strstr(doc.p, "\"server\": "), *sp = strstr(doc.p, "\"spread\": ");
    assert_non_null(sv);
    assert_non_null(sp);
    assert_true(sp > sv);
    assert_string_equal(doc.p + doc.len - 3, "}}}");
    rt_summary_free(&s);
}

/* --- the text ----------------------------------------------------------------------------------
 */

static char *render(const struct rt_summary *s, int md)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rt_summary_write_text(s, f, md, 80);
    fclose(f);
    return buf;
}

/* t begins with `head` */
static void starts(const char *t, const char *head)
{
    if (strncmp(t, head, strlen(head)))
        fail_msg("does not begin with \"%s\":\n%s", head, t);
}

/* t has `line` as a whole line */
static void has_line(const char *t, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = t; p; p = strchr(p, '\n')) {
        if (*p == '\n')
            p++;
        if (!strncmp(p, line, n) && (p[n] == '\n' || p[n] == '\0'))
            return;
    }
    fail_msg("no line \"%s\" in\n%s", line, t);
}

static void lacks_text(const char *t, const char *what)
{
    if (strstr(t, what))
        fail_msg("\"%s\" should not be in\n%s", what, t);
}

static void test_text_head(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    char *t = render(&s, 0);
    starts(t, "run 42 \u00b7 train: finished, exit 0\n\n");
    has_line(t, "command      python train.py --epochs 3");
    has_line(t, "started      2023-11-14 22:13:20 UTC, 100 samples every 1.00 s");
    has_line(t, "host         box: 8 vCPUs (Xeon), 16.0 GiB memory");
    has_line(t, "wall time    1m40s");
    has_line(t, "CPU time     2m30s (user 2m20s, system 10.0 s, as the kernel counted the job)");
    /* the mean cores: the CPU time over the wall time, 150 s / 100 s */
    has_line(t, "cores        1.50 mean (CPU time / wall time), 2.50 p95, 3.00 max");
    /* 18.75 % is 18.8 % (3 significant digits) */
    has_line(t, "efficiency   CPU 18.8 % of the host's 8 vCPUs, memory 3.17 % of its 16.0 GiB");
    lacks_text(t, "allocated    "); /* nothing known */
    /* the kernel's peak above the samples, wrapped at a space before 80 columns, a figure and
     * its unit on one line */
    has_line(t, "peak memory  520.0 MiB (the most one process held, by the kernel's count: more");
    has_line(t, "             than any sample saw); the job's processes together peaked at");
    has_line(t, "             500.0 MiB at +42.0 s");
    has_line(t, "at the peak  python (1234) 400.0 MiB, worker (1300) 100.0 MiB");
    has_line(t, "kernel       the largest process held 520.0 MiB at its peak (its resident set,");
    has_line(t, "             the kernel's count)");
    /* what each disk figure counts (issue 36: a job that wrote more than the disks did) */
    has_line(t, "disk         the job had 1.00 MiB read and 0 B written (what it asked of the");
    has_line(t, "             disks); the disks read 2.00 MiB and wrote 1.50 KiB (everyone's,");
    has_line(t, "network      the system received 9.77 KiB, sent 500 B");
    /* the statistics, the tree's then the system's */
    has_line(t, "                        mean           p50           p95           max");
    has_line(t, "job (its processes together)");
    has_line(t, "  CPU cores             1.50          1.40          2.50          3.00");
    has_line(t, "  memory           300.0 MiB     290.0 MiB     400.0 MiB     500.0 MiB");
    has_line(t, "  net in             100 B/s       100 B/s       150 B/s       200 B/s");
    /* the sparklines */
    has_line(t, "job CPU        \u2583\u2585\u2588  0 \u2026 4.00 cores");
    has_line(t, "CPU pressure   \u2583\u2585\u2588  0 \u2026 40.0 % of the time (some)");
    /* the recommendation */
    has_line(t, "next time    2 vCPUs, 1024 MiB memory (for 95 % of the intervals: 3 vCPUs)");
    has_line(t, "memory       peak 520.00 MiB (kernel) x 1.2 -> 1024 MiB");
    has_line(t, "metaflow     @resources(cpu=2, memory=1024)");
    has_line(t, "host         dedicated: other processes used 0.00 cores and 0 B of disk I/O");
    has_line(t, "             beside the job");
    lacks_text(t, "caveat");
    lacks_text(t, "starved");
    lacks_text(t, "spread over");
    /* no line is wider than 80 columns */
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        size_t w = 0;
        for (const char *q = p; q < e; q++)
            w += ((unsigned char)*q & 0xC0) != 0x80;
        if (w > 80)
            fail_msg("a line of %zu columns: %.*s", w, (int)(e - p), p);
        p = e + 1;
    }
    free(t);
    rt_summary_free(&s);
}

/* How the run ended, in the title: the OOM killer named; a failure; no job. */
static void test_text_status(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.run.exit_signal = 9;
    s.run.exit_code = NAN;
    free(s.run.status);
    s.run.status = xstrdup("killed");
    struct rt_reco_in in = {.has_tree = 1,
                            .cpu_mean = 1.5,
                            .mem_max = 500,
                            .kernel_maxrss_mib = NAN,
                            .duration_s = 100,
                            .exit_code = RT_NA,
                            .exit_signal = 9,
                            .oom_kills = 1};
    rt_recommend(&in, 1, &s.reco);
    char *t = render(&s, 0);
    has_line(t, "run 42 \u00b7 train: killed by SIGKILL (out of memory: the kernel's OOM killer)");
    /* the caveat, wrapped at a space */
    has_line(t, "caveat       based on a run killed by the OOM killer after 1m40s: memory is a");
    has_line(t, "             lower bound; ask for more than 1024 MiB");
    free(t);
    /* SIGKILL while no OOM kill happened: only the signal */
    in.oom_kills = 0;
    rt_recommend(&in, 1, &s.reco);
    t = render(&s, 0);
    has_line(t, "run 42 \u00b7 train: killed by SIGKILL");
    free(t);
    /* exit 3, no job name, in markdown */
    s.run.exit_signal = NAN;
    s.run.exit_code = 3;
    free(s.run.status);
    s.run.status = xstrdup("failed");
    free(s.run.meta[RT_SM_JOB]);
    s.run.meta[RT_SM_JOB] = NULL;
    t = render(&s, 1);
    starts(t, "## run 42: failed, exit 3\n\n");
    free(t);
    rt_summary_free(&s);
}

/* A system-only recording: the cores are the system's, said so; the peak is the system's. */
static void test_text_no_tree(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.has_tree = 0;
    s.peak.known = 0;
    for (int i = 0; i < s.peak.nprocs; i++)
        free(s.peak.procs[i].name);
    s.peak.nprocs = 0;
    s.cpu_time.known = 0;
    struct rt_reco_in in = {.has_tree = 0,
                            .cpu_mean = 2,
                            .mem_max = 4200,
                            .kernel_maxrss_mib = 520,
                            .duration_s = 100,
                            .exit_code = 0,
                            .exit_signal = RT_NA,
                            .oom_kills = 0};
    rt_recommend(&in, 1, &s.reco);
    char *t = render(&s, 0);
    has_line(t, "cores        2.00 mean, 3.00 p95, 4.00 max (the whole system: no job's processes");
    has_line(t, "             recorded)");
    /* 4200 MiB = 4.10 GiB */
    has_line(t, "peak memory  4.10 GiB (the system's used memory, sampled)");
    has_line(t, "disk         the disks read 2.00 MiB and wrote 1.50 KiB (everyone's, written");
    lacks_text(t, "\ntree\n");
    lacks_text(t, "at the peak");
    lacks_text(t, "CPU time");
    lacks_text(t, "dedicated"); /* the host heuristic says nothing without a tree */
    free(t);
    rt_summary_free(&s);
}

/* Five processes at the peak, each kept whole: the line breaks after a ", " (its "," ending the
 * line) and goes on under the text's first column. */
static void test_text_peak_wraps(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    static const double pss[] = {400, 50, 30, 9.5, 2};
    for (int i = 0; i < s.peak.nprocs; i++)
        free(s.peak.procs[i].name);
    for (int i = 0; i < 5; i++) {
        char name[32];
        snprintf(name, sizeof(name), "python3-worker-%d", i);
        s.peak.procs[i] = (struct rt_summary_proc){10001 + i, xstrdup(name), pss[i]};
    }
    s.peak.nprocs = 5;
    s.peak.others_count = 3;
    s.peak.others_pss_mib = 1.25;
    char *t = render(&s, 0);
    /* 13 + 34 = 47; another ", " + 33 would reach 82, over 80 */
    has_line(t, "at the peak  python3-worker-0 (10001) 400.0 MiB,");
    has_line(t, "             python3-worker-1 (10002) 50.0 MiB,");
    has_line(t, "             python3-worker-3 (10004) 9.50 MiB,");
    has_line(t, "             python3-worker-4 (10005) 2.00 MiB, 3 more 1.25 MiB");
    free(t);
    /* markdown is not wrapped */
    t = render(&s, 1);
    has_line(t, "- **at the peak**: python3-worker-0 (10001) 400.0 MiB, python3-worker-1 (10002) "
                "50.0 MiB, python3-worker-2 (10003) 30.0 MiB, python3-worker-3 (10004) 9.50 MiB, "
                "python3-worker-4 (10005) 2.00 MiB, 3 more 1.25 MiB");
    free(t);
    rt_summary_free(&s);
}

static void test_markdown_tables(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    char *t = render(&s, 1);
    starts(t, "## run 42 \u00b7 train: finished, exit 0\n\n");
    has_line(t, "- **cores**: 1.50 mean (CPU time / wall time), 2.50 p95, 3.00 max");
    has_line(t, "| metric | mean | p50 | p95 | max |");
    has_line(t, "|---|---|---|---|---|");
    has_line(t, "| job CPU cores | 1.50 | 1.40 | 2.50 | 3.00 |");
    has_line(t, "| system memory | 3.91 GiB | 3.91 GiB | 4.00 GiB | 4.10 GiB |");
    has_line(t, "### processes: 13 processes in the job, grouped by name, busiest first");
    has_line(t, "| name | CPU-s | peak PSS | pid | parent | command |");
    has_line(t, "|---|---|---|---|---|---|");
    /* the program without its directory */
    has_line(t, "| python | 140 | 400.0 MiB | 1234 | 1 | `python train.py` |");
    has_line(t, "### recommendation");
    has_line(t, "- **metaflow**: `@resources(cpu=2, memory=1024)`");
    lacks_text(t, "\ntree\n");
    free(t);
    rt_summary_free(&s);
}

/* The groups table: a name of 18 columns or more is cut to fit its column (15, or 18 with its
 * " xN"), a group's peak is "<= each", its pid and parent "-", a long command shortened. */
static void test_text_groups(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    free(s.groups.g[0].name);
    free(s.groups.g[0].command);
    s.groups.g[0] = (struct rt_summary_group){
        xstrdup("averyveryverylongprocessname"),
        xstrdup("/usr/bin/python3 -c import time; time.sleep(10) # waiting"),
        1,
        123.4,
        512,
        1234,
        1};
    s.groups.g[1] = (struct rt_summary_group){xstrdup("cc1"), NULL, 12, 45.6, 20.5, NAN, NAN};
    s.groups.g[2] = (struct rt_summary_group){
        xstrdup("averyveryverylongprocessname"), xstrdup("x"), 12, 1, NAN, NAN, NAN};
    s.groups.n = 3;
    char *t = render(&s, 0);
    has_line(t, "processes: 13 processes in the job, grouped by name, busiest first");
    has_line(t, "  name                 CPU-s peak PSS             pid  parent  command");
    /* 15 columns of the name; the command without /usr/bin/, cut to the 17 columns an
     * 80-column line leaves it */
    has_line(t, "  averyveryverylo        123 512.0 MiB           1234       1  python3 -c "
                "impor\u2026");
    has_line(t, "  cc1 \u00d712               45.6 \u226420.5 MiB each         -       -  -");
    /* with " ×12" the name gets 14 columns: 18 in all */
    has_line(t, "  averyveryveryl \u00d712    1.00 -                      -       -  x");
    free(t);
    rt_summary_free(&s);
}

/* --job: how the runs spread, each figure with a run: mean ± sd, min … max. */
static void test_text_spread(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    s.run.runs = 3;
    s.has_spread = 1;
    s.spread.runs = 3;
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        s.spread.f[f].n = 0;
        s.spread.f[f].mean = s.spread.f[f].sd = s.spread.f[f].min = s.spread.f[f].max = NAN;
    }
    s.spread.f[0].n = 3, s.spread.f[0].mean = 100, s.spread.f[0].sd = 10;
    s.spread.f[0].min = 90, s.spread.f[0].max = 110;
    s.spread.f[2].n = 3, s.spread.f[2].mean = 1.5, s.spread.f[2].sd = 0.25;
    s.spread.f[2].min = 1.2, s.spread.f[2].max = 1.8;
    char *t = render(&s, 0);
    has_line(t, "3 runs of job 'train' together (the command, start and host: the newest run's)");
    /* the wall time of the runs together, beside their CPU time together (issue 36: the newest
     * run's wall time beside three runs' CPU time made 3.6 cores of a 2-vCPU host) */
    has_line(t, "wall time    1m40s, 3 runs together (the newest: 1m40s)");
    has_line(t, "spread over 3 runs");
    /* "mean ± σ" right-aligned in 24 columns (26 bytes) */
    has_line(t, "                                 mean \u00b1 \u03c3  min \u2026 max");
    has_line(t, "  wall time                1m40s \u00b1 10.0 s  1m30s \u2026 1m50s");
    has_line(t, "  cores mean                  1.50 \u00b1 0.25  1.20 \u2026 1.80");
    lacks_text(t, "VRAM max"); /* no run has it */
    /* the spread is the text's last part */
    size_t tl = strlen(t), el = strlen("1.20 \u2026 1.80\n");
    assert_true(tl > el);
    assert_string_equal(t + tl - el, "1.20 \u2026 1.80\n");
    free(t);
    t = render(&s, 1);
    has_line(t, "### spread over 3 runs");
    has_line(t, "| figure | mean \u00b1 \u03c3 | min \u2026 max |");
    has_line(t, "| wall time | 1m40s \u00b1 10.0 s | 1m30s \u2026 1m50s |");
    free(t);
    /* one run counted: no spread block */
    s.spread.runs = 1;
    t = render(&s, 0);
    lacks_text(t, "spread over");
    free(t);
    rt_summary_free(&s);
}

/* --- --compare ----------------------------------------------------------------------------------
 */

/* Runs 42 and 43: the second failed and took 120 s instead of 100; CPU time 0 then 5 s (a zero
 * first value: no per cent); the peak 520 then 480 MiB; no GPU in either. delta and delta_pct as
 * rt_summary_compare() computes them: v1 - v0, and (v1 - v0) / |v0| x 100 where v0 is not 0. */
static void compare_pair(struct rt_summary_compare *c)
{
    tree_run(&c->s[0]);
    tree_run(&c->s[1]);
    struct rt_summary *b = &c->s[1];
    b->run.id = 43;
    b->run.exit_code = 3;
    free(b->run.status);
    b->run.status = xstrdup("failed");
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++)
        c->v[0][f] = c->v[1][f] = c->delta[f] = c->delta_pct[f] = NAN;
    c->v[0][0] = 100, c->v[1][0] = 120, c->delta[0] = 20, c->delta_pct[0] = 20;
    c->v[0][1] = 0, c->v[1][1] = 5, c->delta[1] = 5; /* delta_pct: NAN */
    c->v[0][5] = 520, c->v[1][5] = 480, c->delta[5] = -40;
    c->delta_pct[5] = -40.0 / 520 * 100; /* -7.69 */
}

static void test_compare_json(void **state)
{
    (void)state;
    struct rt_summary_compare c;
    compare_pair(&c);
    doc.len = 0;
    rt_summary_compare_write_json(&c, &doc);
    rt_buf_append(&doc, "", 1);
    doc.len--;
    /* the run and recommendation objects compact, the document around them not */
    starts(doc.p, "{\"runs\": [{\"run\": {\"id\":42,\"uuid\":\"u-42\",\"mode\":\"run\","
                  "\"status\":\"finished\",\"in_progress\":false,\"command\":[\"python\","
                  "\"train.py\",\"--epochs\",\"3\"],\"job_name\":\"train\",");
    assert_non_null(strstr(doc.p, "}, \"recommendation\": {\"cpu\":2,\"cpu_basis\":{\"mean_cores\":"
                                  "1.5,\"source\":\"usage\"},\"cpu_p95\":3,"));
    assert_non_null(strstr(doc.p, "\"caveat\":null}}, {\"run\": {\"id\":43,"));
    assert_non_null(strstr(
        doc.p, "\"wall_time_s\": {\"values\": [100, 120], \"delta\": 20, \"delta_pct\": 20}"));
    assert_non_null(
        strstr(doc.p, "\"cpu_time_s\": {\"values\": [0, 5], \"delta\": 5, \"delta_pct\": null}"));
    assert_non_null(strstr(doc.p, "\"gpu_usage_mean\": {\"values\": [null, null], \"delta\": null, "
                                  "\"delta_pct\": null}"));
    char err[128];
    rt_json_close(json);
    json = rt_json_open(doc.p, doc.len, err, sizeof(err));
    assert_non_null(json);
    text_at("$.runs[1].run.status", "failed");
    assert_true(num_at("$.runs[1].run.exit_code") == 3);
    text_at("$.runs[0].recommendation.text", "2 vCPUs, 1024 MiB memory");
    assert_true(num_at("$.figures.peak_memory_mib.delta") == -40);
    assert_true(num_at("$.figures.peak_memory_mib.delta_pct") == -40.0 / 520 * 100);
    absent_at("$.runs[2]");
    /* the ten figures, in their order */
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        char path[96];
        snprintf(path, sizeof(path), "$.figures.%s.values[1]", rt_summary_figures[f].key);
        assert_int_not_equal(type_at(path), RT_JSON_ABSENT);
    }
    rt_summary_compare_free(&c);
}

static void test_compare_text(void **state)
{
    (void)state;
    struct rt_summary_compare c;
    compare_pair(&c);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rt_summary_compare_write_text(&c, f, 0, 100);
    fclose(f);
    assert_string_equal(
        buf, "compare      run 42 \u00b7 train: finished, exit 0; python train.py "
             "--epochs 3\n"
             "and          run 43 \u00b7 train: failed, exit 3; python train.py --epochs "
             "3\n"
             "\n"
             "                        run 42        run 43  change\n"
             "  wall time              1m40s         2m00s  +20.0 s (+20.0 %)\n"
             "  CPU time              0.00 s        5.00 s  +5.00 s\n"
             "  peak memory        520.0 MiB     480.0 MiB  -40.0 MiB (-7.69 %)\n"
             "\n"
             "next time    run 42: 2 vCPUs, 1024 MiB memory\n"
             "             run 43: 2 vCPUs, 1024 MiB memory\n");
    free(buf);
    /* markdown: a table, the change in the last column */
    buf = NULL;
    f = open_memstream(&buf, &len);
    rt_summary_compare_write_text(&c, f, 1, 100);
    fclose(f);
    has_line(buf, "| figure | run 42 | run 43 | change |");
    has_line(buf, "|---|---|---|---|");
    has_line(buf, "| wall time | 1m40s | 2m00s | +20.0 s (+20.0 %) |");
    has_line(buf, "| CPU time | 0.00 s | 5.00 s | +5.00 s |");
    has_line(buf, "- **next time**: run 42: 2 vCPUs, 1024 MiB memory");
    /* the second run's line is the next item, not an empty bold label ("- ****: run 43") */
    has_line(buf, "- run 43: 2 vCPUs, 1024 MiB memory");
    lacks_text(buf, "- ****:");
    free(buf);
    rt_summary_compare_free(&c);
}

/* The figures runs are compared by: the tree's, or the system's without one. */
static void test_figure_values(void **state)
{
    (void)state;
    struct rt_summary s;
    tree_run(&s);
    double v[RT_SUMMARY_NFIGURES];
    rt_summary_figure_values(&s, v);
    assert_true(v[0] == 100); /* wall time */
    assert_true(v[1] == 150); /* CPU time: the kernel's total */
    assert_true(v[2] == 1.5); /* the tree's mean cores */
    assert_true(v[3] == 3);   /* and max */
    assert_true(v[4] == 300); /* mean memory */
    assert_true(v[5] == 520); /* the recommendation's peak: the kernel's */
    assert_true(v[6] == 1048576);
    assert_true(v[7] == 0);
    assert_true(isnan(v[8])); /* no GPU sampled */
    assert_true(isnan(v[9]));
    s.has_tree = 0;
    s.cpu_time.known = 0;
    rt_summary_figure_values(&s, v);
    assert_true(isnan(v[1]));
    assert_true(v[2] == 2 && v[3] == 4 && v[4] == 4000);
    assert_true(v[6] == 2097152 && v[7] == 1536);
    rt_summary_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_json_tree_run, teardown_json),
        cmocka_unit_test_teardown(test_json_no_tree, teardown_json),
        cmocka_unit_test_teardown(test_json_caveat_and_allocation, teardown_json),
        cmocka_unit_test_teardown(test_json_server, teardown_json),
        cmocka_unit_test_teardown(test_json_spread, teardown_json),
        cmocka_unit_test(test_text_head),
        cmocka_unit_test(test_text_status),
        cmocka_unit_test(test_text_no_tree),
        cmocka_unit_test(test_text_peak_wraps),
        cmocka_unit_test(test_markdown_tables),
        cmocka_unit_test(test_text_groups),
        cmocka_unit_test(test_text_spread),
        cmocka_unit_test_teardown(test_compare_json, teardown_json),
        cmocka_unit_test(test_compare_text),
        cmocka_unit_test(test_figure_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
