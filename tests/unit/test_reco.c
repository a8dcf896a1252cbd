/* test_reco.c - the right-sizing policy (summary/reco.h) as the pure functions it is: a table of
 * inputs and every output field for rt_recommend() (rtrack's rule and the Python reference's),
 * and tables for rt_round_memory(), rt_alloc_decide(), rt_host_sharing() and rt_efficiency().
 * Each row says its arithmetic beside it, so a changed rule shows up as a row whose comment no
 * longer adds up, not as a figure nobody can explain. No database: these are the decisions the
 * summary, the report and `rtrack run`'s last line print, held to their numbers one by one. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/summary/reco.h"
#include "testlib.h"

/* --- rt_recommend ---------------------------------------------------------------------------- */

/* How the run ended (the caveat's inputs): duration, exit code, signal, the host's OOM kills. */
#define ENDED(dur, code, sig, oom)                                                                 \
    .duration_s = (dur), .exit_code = (code), .exit_signal = (sig), .oom_kills = (oom)
#define EXIT_0  ENDED(2.0, 0, RT_NA, 0)
#define NO_END  ENDED(NAN, RT_NA, RT_NA, RT_NA)
#define NO_GPU  .gpu_mean = 0, .gpu_max = 0, .vram_max = 0
#define NO_WAIT .demand = {0, 0, 0, 0, 0, 0}
/* the demand of mean cores u when the samples saw the tree run `run` s and wait `wait` s, as
 * rt_cpu_demand makes it (its own test below holds it to hand-worked figures) */
#define DEMAND(u, run, wait)                                                                       \
    .demand = {1,                                                                                  \
               (u),                                                                                \
               (u) * (wait) / (run),                                                               \
               (u) + (u) * (wait) / (run),                                                         \
               (wait) / ((run) + (wait)) * 100,                                                    \
               (wait) >= 0.2 * ((run) + (wait))}
#define NO_P95   .cpu_p95 = 0, .cpu_p95_ok = 0
#define P95(x)   .cpu_p95 = (x), .cpu_p95_ok = 1
#define NO_KPEAK .kernel_maxrss_mib = NAN

struct reco_want {
    long cpu, cpu_p95;
    double cpu_cores;
    const char *cpu_from;
    long memory;
    double mem_peak;
    const char *mem_from;
    long gpu, vram;
    const char *caveat_kind; /* NULL: none */
    const char *text, *metaflow, *arithmetic, *caveat;
};

struct reco_case {
    const char *name;
    int kernel; /* 1: rtrack's rule, 0: the Python reference's */
    struct rt_reco_in in;
    struct reco_want want;
};

static const struct reco_case reco_cases[] = {
    /* mean 1.5 cores: round(1.5) = 2 (ties to even); p95 2.4 -> ceil 3; peak 300 MiB x 1.2 =
     * 360 -> 512; exit 0 after 2 s: no caveat */
    {"steady",
     1,
     {.has_tree = 1, .cpu_mean = 1.5, P95(2.4), NO_WAIT, .mem_max = 300, NO_KPEAK, NO_GPU, EXIT_0},
     {2, 3, 1.5, "usage", 512, 300, "sampled", 0, 0, NULL, "2 vCPUs, 512 MiB memory",
      "@resources(cpu=2, memory=512)", "peak 300.00 MiB (sampled) x 1.2 -> 512 MiB", ""}},
    /* mean 0.02: round(0.02) = 0 -> at least 1; p95 0.004 -> 0.00 (2 dp) -> ceil 0 -> at least
     * 1; peak 12.5 x 1.2 = 15 -> the 128 MiB floor; the kernel's 10 MiB is below the samples;
     * nothing known of the ending: no caveat */
    {"tiny job",
     1,
     {.has_tree = 1,
      .cpu_mean = 0.02,
      P95(0.004),
      NO_WAIT,
      .mem_max = 12.5,
      .kernel_maxrss_mib = 10,
      NO_GPU,
      NO_END},
     {1, 1, 0.02, "usage", 128, 12.5, "sampled", 0, 0, NULL, "1 vCPU, 128 MiB memory",
      "@resources(cpu=1, memory=128)", "peak 12.50 MiB (sampled) x 1.2 -> 128 MiB", ""}},
    /* waited 2 of run + wait = 8 + 2 = 10 s: 20 % >= 20 %, starved (at the threshold exactly);
     * demand 1.2 x 10 / 8 = 1.5 cores: round(1.5) = 2 (ties to even) > round(1.2) = 1 ->
     * "demand", 2 cores on 1.5; p95 ceil(1.3) = 2, not below 2; 200 x 1.2 = 240 -> 256 */
    {"starved at 20 %",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.2,
      P95(1.3),
      DEMAND(1.2, 8, 2),
      .mem_max = 200,
      NO_KPEAK,
      NO_GPU,
      EXIT_0},
     {2, 2, 1.5, "demand", 256, 200, "sampled", 0, 0, NULL, "2 vCPUs, 256 MiB memory",
      "@resources(cpu=2, memory=256)", "peak 200.00 MiB (sampled) x 1.2 -> 256 MiB", ""}},
    /* waited 16 of 14 + 16 = 30 s (53 %): starved; demand 1.4 x 30 / 14 = 3.0 -> 3 > round(1.4)
     * = 1; p95 ceil(1.8) = 2 is raised to the 3 asked for; 1000 x 1.2 = 1200 -> 2048 */
    {"starved, p95 raised",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.4,
      P95(1.8),
      DEMAND(1.4, 14, 16),
      .mem_max = 1000,
      NO_KPEAK,
      NO_GPU,
      EXIT_0},
     {3, 3, 3.0, "demand", 2048, 1000, "sampled", 0, 0, NULL, "3 vCPUs, 2048 MiB memory",
      "@resources(cpu=3, memory=2048)", "peak 1000.00 MiB (sampled) x 1.2 -> 2048 MiB", ""}},
    /* waited 2 of 8 + 2 = 10 s (20 %): starved, but demand 1.6 x 10 / 8 = 2.0 -> 2 = round(1.6)
     * = 2: no more cores, so "usage" stays, on 1.6; p95 ceil(2.9) = 3; 500 x 1.2 = 600 -> 1024 */
    {"starved, demand rounds to the same",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.6,
      P95(2.9),
      DEMAND(1.6, 8, 2),
      .mem_max = 500,
      NO_KPEAK,
      NO_GPU,
      EXIT_0},
     {2, 3, 1.6, "usage", 1024, 500, "sampled", 0, 0, NULL, "2 vCPUs, 1024 MiB memory",
      "@resources(cpu=2, memory=1024)", "peak 500.00 MiB (sampled) x 1.2 -> 1024 MiB", ""}},
    /* waited 19 of 81 + 19 = 100 s: 19 % < 20 %, not starved, although its demand (2.4 x 100 /
     * 81 = 2.96 cores) would round to more; no p95: cpu_p95 = cpu = 2; 100 x 1.2 = 120 -> 128 */
    {"not starved at 19 %",
     1,
     {.has_tree = 1,
      .cpu_mean = 2.4,
      NO_P95,
      DEMAND(2.4, 81, 19),
      .mem_max = 100,
      NO_KPEAK,
      NO_GPU,
      EXIT_0},
     {2, 2, 2.4, "usage", 128, 100, "sampled", 0, 0, NULL, "2 vCPUs, 128 MiB memory",
      "@resources(cpu=2, memory=128)", "peak 100.00 MiB (sampled) x 1.2 -> 128 MiB", ""}},
    /* the Python rule on a starved tree with a kernel peak above the samples: usage only
     * (round(1.4) = 1, p95 ceil(1.8) = 2) and the sampled peak only (300 x 1.2 = 360 -> 512) */
    {"Python's rule ignores demand and the kernel",
     0,
     {.has_tree = 1,
      .cpu_mean = 1.4,
      P95(1.8),
      DEMAND(1.4, 14, 16),
      .mem_max = 300,
      .kernel_maxrss_mib = 900,
      NO_GPU,
      EXIT_0},
     {1, 2, 1.4, "usage", 512, 300, "sampled", 0, 0, NULL, "1 vCPU, 512 MiB memory",
      "@resources(cpu=1, memory=512)", "peak 300.00 MiB (sampled) x 1.2 -> 512 MiB", ""}},
    /* the same input under rtrack's rule: demand 1.4 x 30 / 14 = 3 cores (p95 2 raised to 3), the
     * kernel's 900 MiB above the sampled 300: 900 x 1.2 = 1080 -> 2048 */
    {"rtrack's rule on the same input",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.4,
      P95(1.8),
      DEMAND(1.4, 14, 16),
      .mem_max = 300,
      .kernel_maxrss_mib = 900,
      NO_GPU,
      EXIT_0},
     {3, 3, 3.0, "demand", 2048, 900, "kernel", 0, 0, NULL, "3 vCPUs, 2048 MiB memory",
      "@resources(cpu=3, memory=2048)", "peak 900.00 MiB (kernel) x 1.2 -> 2048 MiB", ""}},
    /* a spike between two samples: the kernel's 257.734 MiB (2 dp: 257.73) above the sampled
     * 214.78: 257.73 x 1.2 = 309.28 -> 512; mean 0.9 -> 1 */
    {"spike above the samples",
     1,
     {.has_tree = 1,
      .cpu_mean = 0.9,
      NO_P95,
      NO_WAIT,
      .mem_max = 214.78,
      .kernel_maxrss_mib = 257.734,
      NO_GPU,
      EXIT_0},
     {1, 1, 0.9, "usage", 512, 257.73, "kernel", 0, 0, NULL, "1 vCPU, 512 MiB memory",
      "@resources(cpu=1, memory=512)", "peak 257.73 MiB (kernel) x 1.2 -> 512 MiB", ""}},
    /* the kernel's 650 below the sampled 700: 700 x 1.2 = 840 -> 1024; mean 3.5 -> 4 (ties to
     * even); p95 4.004 -> 4.00 (2 dp) -> ceil 4, not 5 */
    {"kernel peak below the samples",
     1,
     {.has_tree = 1,
      .cpu_mean = 3.5,
      P95(4.004),
      NO_WAIT,
      .mem_max = 700,
      .kernel_maxrss_mib = 650,
      NO_GPU,
      EXIT_0},
     {4, 4, 3.5, "usage", 1024, 700, "sampled", 0, 0, NULL, "4 vCPUs, 1024 MiB memory",
      "@resources(cpu=4, memory=1024)", "peak 700.00 MiB (sampled) x 1.2 -> 1024 MiB", ""}},
    /* SIGKILL (9) while the host's OOM kills grew: "oom", naming the memory; the kernel's 1900
     * MiB x 1.2 = 2280, above 2048: the next multiple of 1024, 3072; 2 s is "2.00 s" */
    {"killed by the OOM killer",
     1,
     {.has_tree = 1,
      .cpu_mean = 0.8,
      P95(0.95),
      NO_WAIT,
      .mem_max = 1800,
      .kernel_maxrss_mib = 1900,
      NO_GPU,
      ENDED(2.0, RT_NA, 9, 1)},
     {1, 1, 0.8, "usage", 3072, 1900, "kernel", 0, 0, "oom", "1 vCPU, 3072 MiB memory",
      "@resources(cpu=1, memory=3072)", "peak 1900.00 MiB (kernel) x 1.2 -> 3072 MiB",
      "based on a run killed by the OOM killer after 2.00 s: memory is a lower bound; ask for "
      "more than 3072 MiB"}},
    /* SIGKILL with no OOM kill: "signal"; 75 s is "1m15s" */
    {"SIGKILL without OOM",
     1,
     {.has_tree = 1,
      .cpu_mean = 2.0,
      NO_P95,
      NO_WAIT,
      .mem_max = 100,
      NO_KPEAK,
      NO_GPU,
      ENDED(75, RT_NA, 9, 0)},
     {2, 2, 2.0, "usage", 128, 100, "sampled", 0, 0, "signal", "2 vCPUs, 128 MiB memory",
      "@resources(cpu=2, memory=128)", "peak 100.00 MiB (sampled) x 1.2 -> 128 MiB",
      "based on a run killed by SIGKILL after 1m15s: its figures cover only the part of the job "
      "that ran"}},
    /* SIGKILL, the OOM kills unknown, no duration: "signal", no " after" */
    {"SIGKILL, OOM kills unknown",
     1,
     {.has_tree = 1,
      .cpu_mean = 2.0,
      NO_P95,
      NO_WAIT,
      .mem_max = 100,
      NO_KPEAK,
      NO_GPU,
      ENDED(NAN, RT_NA, 9, RT_NA)},
     {2, 2, 2.0, "usage", 128, 100, "sampled", 0, 0, "signal", "2 vCPUs, 128 MiB memory",
      "@resources(cpu=2, memory=128)", "peak 100.00 MiB (sampled) x 1.2 -> 128 MiB",
      "based on a run killed by SIGKILL: its figures cover only the part of the job that ran"}},
    /* SIGTERM (15): a signal, not the OOM killer, even while OOM kills grew; 12.5 s */
    {"SIGTERM",
     1,
     {.has_tree = 1,
      .cpu_mean = 2.0,
      NO_P95,
      NO_WAIT,
      .mem_max = 100,
      NO_KPEAK,
      NO_GPU,
      ENDED(12.5, RT_NA, 15, 3)},
     {2, 2, 2.0, "usage", 128, 100, "sampled", 0, 0, "signal", "2 vCPUs, 128 MiB memory",
      "@resources(cpu=2, memory=128)", "peak 100.00 MiB (sampled) x 1.2 -> 128 MiB",
      "based on a run killed by SIGTERM after 12.5 s: its figures cover only the part of the "
      "job that ran"}},
    /* exit 3 after 2 s: "failed" */
    {"failed, exit 3",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.0,
      NO_P95,
      NO_WAIT,
      .mem_max = 100,
      NO_KPEAK,
      NO_GPU,
      ENDED(2.0, 3, RT_NA, 0)},
     {1, 1, 1.0, "usage", 128, 100, "sampled", 0, 0, "failed", "1 vCPU, 128 MiB memory",
      "@resources(cpu=1, memory=128)", "peak 100.00 MiB (sampled) x 1.2 -> 128 MiB",
      "based on a run that failed (exit 3) after 2.00 s: it may not have done all its work"}},
    /* a GPU busy 0.3 on average, at most 0.4 at once: round(0.4) = 0 -> at least 1; VRAM 800
     * x 1.2 = 960 -> 1024; mean 1.6 -> 2; 400 x 1.2 = 480 -> 512 */
    {"one GPU",
     1,
     {.has_tree = 1,
      .cpu_mean = 1.6,
      NO_P95,
      NO_WAIT,
      .mem_max = 400,
      NO_KPEAK,
      .gpu_mean = 0.3,
      .gpu_max = 0.4,
      .vram_max = 800,
      EXIT_0},
     {2, 2, 1.6, "usage", 512, 400, "sampled", 1, 1024, NULL,
      "2 vCPUs, 512 MiB memory, 1 GPU with 1024 MiB VRAM", "@resources(cpu=2, memory=512, gpu=1)",
      "peak 400.00 MiB (sampled) x 1.2 -> 512 MiB", ""}},
    /* at most 3.5 GPUs busy -> 4 (ties to even); mean 2.5 cores -> 2 (ties to even); VRAM
     * 20000 x 1.2 = 24000 -> ceil(24000 / 1024) = 24 x 1024 = 24576; 3000 x 1.2 = 3600 ->
     * 4 x 1024 = 4096 */
    {"GPUs, ties to even",
     1,
     {.has_tree = 1,
      .cpu_mean = 2.5,
      NO_P95,
      NO_WAIT,
      .mem_max = 3000,
      NO_KPEAK,
      .gpu_mean = 1.7,
      .gpu_max = 3.5,
      .vram_max = 20000,
      EXIT_0},
     {2, 2, 2.5, "usage", 4096, 3000, "sampled", 4, 24576, NULL,
      "2 vCPUs, 4096 MiB memory, 4 GPUs with 24576 MiB VRAM",
      "@resources(cpu=2, memory=4096, gpu=4)", "peak 3000.00 MiB (sampled) x 1.2 -> 4096 MiB", ""}},
    /* no tree: the system's figures stand, neither a demand (30 of 40 s waiting) nor the
     * kernel's 9000 MiB is used; 3.2 -> 3, p95 ceil(3.9) = 4; 5000 x 1.2 = 6000 -> 6 x 1024 */
    {"no tree",
     1,
     {.has_tree = 0,
      .cpu_mean = 3.2,
      P95(3.9),
      DEMAND(3.2, 10, 30),
      .mem_max = 5000,
      .kernel_maxrss_mib = 9000,
      NO_GPU,
      EXIT_0},
     {3, 4, 3.2, "usage", 6144, 5000, "sampled", 0, 0, NULL, "3 vCPUs, 6144 MiB memory",
      "@resources(cpu=3, memory=6144)", "peak 5000.00 MiB (sampled) x 1.2 -> 6144 MiB", ""}},
    /* 2 dp first: 3.497 -> 3.50 -> round 4 (round(3.497) alone would be 3); p95 2.004 -> 2.00
     * -> ceil 2 (not 3); the peak 0.495 is 0.49499999... as a double: 2 dp 0.49, not 0.5 */
    {"rounded to 2 dp first",
     1,
     {.has_tree = 1,
      .cpu_mean = 3.497,
      P95(2.004),
      NO_WAIT,
      .mem_max = 0.495,
      NO_KPEAK,
      NO_GPU,
      EXIT_0},
     {4, 2, 3.5, "usage", 128, 0.49, "sampled", 0, 0, NULL, "4 vCPUs, 128 MiB memory",
      "@resources(cpu=4, memory=128)", "peak 0.49 MiB (sampled) x 1.2 -> 128 MiB", ""}},
};

static void want_long(const char *name, const char *field, long got, long want)
{
    if (got != want)
        fail_msg("%s: %s is %ld, want %ld", name, field, got, want);
}

static void want_double(const char *name, const char *field, double got, double want)
{
    if (!(got == want || (isnan(got) && isnan(want))))
        fail_msg("%s: %s is %.17g, want %.17g", name, field, got, want);
}

static void want_str(const char *name, const char *field, const char *got, const char *want)
{
    if (!got != !want || (got && strcmp(got, want)))
        fail_msg("%s: %s is \"%s\", want \"%s\"", name, field, got ? got : "(null)",
                 want ? want : "(null)");
}

static void test_recommend_table(void **state)
{
    (void)state;
    assert_true(RT_ARRAY_LEN(reco_cases) >= 12);
    for (size_t i = 0; i < RT_ARRAY_LEN(reco_cases); i++) {
        const struct reco_case *c = &reco_cases[i];
        const struct reco_want *w = &c->want;
        struct rt_reco r;
        memset(&r, 0x5a, sizeof(r)); /* whatever was there before is overwritten */
        rt_recommend(&c->in, c->kernel, &r);
        want_long(c->name, "cpu", r.cpu, w->cpu);
        want_long(c->name, "cpu_p95", r.cpu_p95, w->cpu_p95);
        want_double(c->name, "cpu_cores", r.cpu_cores, w->cpu_cores);
        want_str(c->name, "cpu_from", r.cpu_from, w->cpu_from);
        want_long(c->name, "memory", r.memory, w->memory);
        want_double(c->name, "mem_peak", r.mem_peak, w->mem_peak);
        want_str(c->name, "mem_from", r.mem_from, w->mem_from);
        want_long(c->name, "gpu", r.gpu, w->gpu);
        want_long(c->name, "vram", r.vram, w->vram);
        want_str(c->name, "caveat_kind", r.caveat_kind, w->caveat_kind);
        want_str(c->name, "text", r.text, w->text);
        want_str(c->name, "metaflow", r.metaflow, w->metaflow);
        want_str(c->name, "arithmetic", r.arithmetic, w->arithmetic);
        want_str(c->name, "caveat", r.caveat, w->caveat);
    }
}

/* rt_cpu_demand: the usage is the mean cores given (CPU time / wall time, the figure shown
 * everywhere), the samples give the share of the time it waited, and the waiting in cores is
 * the usage's part in that proportion (issue 36: the starved line said "it used 0.95 cores"
 * beside a mean of 0.89). */
static void test_cpu_demand(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        double usage, run_s, wait_s;
        int known;
        double wait_cores, demand, wait_pct;
        int starved;
    } rows[] = {
        /* 5 of 15 + 5 = 20 s waiting: 25 %, starved; 1.0 x 5 / 15 = 0.333 cores more: 1.333 */
        {"a quarter waited", 1.0, 15, 5, 1, 1.0 / 3, 4.0 / 3, 25, 1},
        /* the demo on a busy VM: 6 of 9 s waiting (66.7 %); 0.9 x 6 / 3 = 1.8 -> 2.7 cores */
        {"two thirds waited", 0.9, 3, 6, 1, 1.8, 2.7, 200.0 / 3, 1},
        /* 1 of 16 s: 6.25 %, not starved; 1.5 x 1 / 15 = 0.1 -> 1.6 */
        {"barely waited", 1.5, 15, 1, 1, 0.1, 1.6, 6.25, 0},
        /* 1 of 5 s: 20 % exactly is starved */
        {"at the threshold", 2.0, 4, 1, 1, 0.5, 2.5, 20, 1},
        /* it only waited: all of the time waiting, no usage to take a part of */
        {"never ran", 0.0, 0, 5, 1, 0, 0, 100, 1},
        /* no sample saw it run or wait; no mean: nothing known */
        {"no samples", 1.0, 0, 0, 0, 0, 0, 0, 0},
        {"no mean", NAN, 10, 5, 0, 0, 0, 0, 0},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(rows); i++) {
        struct rt_summary_demand d;
        rt_cpu_demand(rows[i].usage, rows[i].run_s, rows[i].wait_s, &d);
        if (d.known != rows[i].known || d.starved != rows[i].starved ||
            fabs(d.wait_cores - rows[i].wait_cores) > 1e-9 ||
            fabs(d.demand_cores - rows[i].demand) > 1e-9 ||
            fabs(d.wait_pct - rows[i].wait_pct) > 1e-9 ||
            (d.known && d.usage_cores != rows[i].usage))
            fail_msg("%s: known %d starved %d wait %g demand %g pct %g", rows[i].name, d.known,
                     d.starved, d.wait_cores, d.demand_cores, d.wait_pct);
    }
    /* and what the recommendation makes of it: 1.333 rounds to the usage's 1 (no more cores);
     * 1.4 cores with 16 of 30 s waiting want 3 */
    struct rt_reco_in in = {
        .has_tree = 1, .cpu_mean = 1.0, NO_P95, .mem_max = 100, NO_KPEAK, NO_GPU, EXIT_0};
    struct rt_reco r;
    rt_cpu_demand(1.0, 15, 5, &in.demand);
    rt_recommend(&in, 1, &r);
    assert_int_equal(r.cpu, 1);
    assert_string_equal(r.cpu_from, "usage");
    in.cpu_mean = 1.4;
    rt_cpu_demand(1.4, 14, 16, &in.demand);
    rt_recommend(&in, 1, &r);
    assert_int_equal(r.cpu, 3);
    assert_string_equal(r.cpu_from, "demand");
    assert_true(fabs(r.cpu_cores - 3.0) < 1e-9);
}

/* --- rt_round_memory ------------------------------------------------------------------------- */

static void test_round_memory_steps(void **state)
{
    (void)state;
    static const struct {
        double mib;
        long want;
    } rows[] = {
        {-5, 128},                                        /* below anything: the floor */
        {0, 128},           {127.99, 128},    {128, 128}, /* at a step: that step */
        {128.001, 256},     {255.5, 256},     {256, 256},     {256.01, 512},
        {512, 512},         {512.5, 1024},    {1024, 1024},   {1024.2, 2048},
        {2048, 2048},       {2048.001, 3072}, /* above 2048: ceil(x / 1024) x 1024 */
        {3072, 3072},       {3072.5, 4096},   {10000, 10240}, /* ceil(9.77) = 10 */
        {1048576, 1048576},                                   /* 1 TiB: exact */
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(rows); i++)
        if (rt_round_memory(rows[i].mib) != rows[i].want)
            fail_msg("rt_round_memory(%g) = %ld, want %ld", rows[i].mib,
                     rt_round_memory(rows[i].mib), rows[i].want);
}

/* --- rt_alloc_decide ------------------------------------------------------------------------- */

struct alloc_case {
    const char *name;
    /* slurm_cpus, cgroup_quota_cores, cpuset_cpus, host_vcpus, slurm_mem_node_mib,
     * slurm_mem_cpu_mib, cgroup_mem_bytes, host_mem_kib, gpus, slurm_job_id */
    struct rt_allocated_in in;
    int known;
    double cpus;
    const char *cpus_from;
    double memory_mib;
    const char *memory_from;
    double gpus;
    const char *job_id; /* NULL: has_job_id 0 */
};

#define GiB_B   1073741824.0 /* bytes */
#define GiB_KiB 1048576.0    /* KiB */

static const struct alloc_case alloc_cases[] = {
    {"nothing known",
     {NAN, NAN, NAN, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, NULL},
     0,
     NAN,
     NULL,
     NAN,
     NULL,
     NAN,
     NULL},
    /* Slurm's 4 CPUs and 8192 MiB per node */
    {"Slurm only",
     {4, NAN, NAN, 16, 8192, NAN, NAN, 16 * GiB_KiB, NAN, "4242"},
     1,
     4,
     "slurm",
     8192,
     "slurm",
     NAN,
     "4242"},
    /* the cgroup's quota 2.5 below Slurm's 4: the tightest */
    {"cgroup quota tighter",
     {4, 2.5, NAN, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, NULL},
     1,
     2.5,
     "cgroup",
     NAN,
     NULL,
     NAN,
     NULL},
    /* a tie, 4 and 4 (and a cpuset of 4 of 16): Slurm's, the one asked for */
    {"tie goes to Slurm",
     {4, 4, 4, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, NULL},
     1,
     4,
     "slurm",
     NAN,
     NULL,
     NAN,
     NULL},
    /* a cpuset of 8 of the host's 16, below the quota's 12 */
    {"cpuset below the host",
     {NAN, 12, 8, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, NULL},
     1,
     8,
     "cpuset",
     NAN,
     NULL,
     NAN,
     NULL},
    /* a cpuset of the whole host says nothing of an allocation: ignored */
    {"cpuset of the whole host",
     {NAN, NAN, 16, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, NULL},
     0,
     NAN,
     NULL,
     NAN,
     NULL,
     NAN,
     NULL},
    /* the host's vCPUs unknown: the cpuset counts */
    {"cpuset, host unknown",
     {NAN, NAN, 6, NAN, NAN, NAN, NAN, NAN, NAN, NULL},
     1,
     6,
     "cpuset",
     NAN,
     NULL,
     NAN,
     NULL},
    /* no per-node memory: 2048 MiB per CPU x 4 CPUs = 8192 */
    {"memory per CPU x CPUs",
     {4, NAN, NAN, 16, NAN, 2048, NAN, 16 * GiB_KiB, NAN, NULL},
     1,
     4,
     "slurm",
     8192,
     "slurm",
     NAN,
     NULL},
    /* per node wins over per CPU (1000 MiB, not 512 x 4) */
    {"memory per node first",
     {4, NAN, NAN, 16, 1000, 512, NAN, 16 * GiB_KiB, NAN, NULL},
     1,
     4,
     "slurm",
     1000,
     "slurm",
     NAN,
     NULL},
    /* the cgroup's 4 GiB (4096 MiB) below Slurm's 8192 and the host's 16 GiB */
    {"cgroup memory tighter",
     {4, NAN, NAN, 16, 8192, NAN, 4 * GiB_B, 16 * GiB_KiB, NAN, NULL},
     1,
     4,
     "slurm",
     4096,
     "cgroup",
     NAN,
     NULL},
    /* 4096 both: Slurm's */
    {"memory tie goes to Slurm",
     {NAN, NAN, NAN, 16, 4096, NAN, 4 * GiB_B, 16 * GiB_KiB, NAN, NULL},
     1,
     NAN,
     NULL,
     4096,
     "slurm",
     NAN,
     NULL},
    /* a cgroup limit at the host's memory (16 GiB) limits nothing: ignored */
    {"cgroup limit at the host",
     {NAN, NAN, NAN, 16, NAN, NAN, 16 * GiB_B, 16 * GiB_KiB, NAN, NULL},
     0,
     NAN,
     NULL,
     NAN,
     NULL,
     NAN,
     NULL},
    /* above it (cgroup "max" read as a huge number): ignored as well */
    {"cgroup limit above the host",
     {NAN, NAN, NAN, 16, 2048, NAN, 64 * GiB_B, 16 * GiB_KiB, NAN, NULL},
     1,
     NAN,
     NULL,
     2048,
     "slurm",
     NAN,
     NULL},
    /* zeros are not limits */
    {"zeros ignored",
     {0, 0, 0, 16, 0, NAN, 0, 16 * GiB_KiB, NAN, NULL},
     0,
     NAN,
     NULL,
     NAN,
     NULL,
     NAN,
     NULL},
    /* the GPUs alone, or the job id alone, make it known */
    {"GPUs only",
     {NAN, NAN, NAN, 16, NAN, NAN, NAN, 16 * GiB_KiB, 2, NULL},
     1,
     NAN,
     NULL,
     NAN,
     NULL,
     2,
     NULL},
    {"job id only",
     {NAN, NAN, NAN, 16, NAN, NAN, NAN, 16 * GiB_KiB, NAN, "123_7"},
     1,
     NAN,
     NULL,
     NAN,
     NULL,
     NAN,
     "123_7"},
};

static void test_alloc_decide_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < RT_ARRAY_LEN(alloc_cases); i++) {
        const struct alloc_case *c = &alloc_cases[i];
        struct rt_allocated a;
        memset(&a, 0x5a, sizeof(a));
        rt_alloc_decide(&c->in, &a);
        want_long(c->name, "known", a.known, c->known);
        want_double(c->name, "cpus", a.cpus, c->cpus);
        want_str(c->name, "cpus_from", a.cpus_from, c->cpus_from);
        want_double(c->name, "memory_mib", a.memory_mib, c->memory_mib);
        want_str(c->name, "memory_from", a.memory_from, c->memory_from);
        want_double(c->name, "gpus", a.gpus, c->gpus);
        want_long(c->name, "has_job_id", a.has_job_id, c->job_id != NULL);
        if (c->job_id)
            want_str(c->name, "slurm_job_id", a.slurm_job_id, c->job_id);
    }
}

/* A job id longer than the struct's room is cut, not overrun. */
static void test_alloc_job_id_cut(void **state)
{
    (void)state;
    char id[100];
    memset(id, '7', sizeof(id) - 1);
    id[sizeof(id) - 1] = '\0';
    struct rt_allocated_in in = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, id};
    struct rt_allocated a;
    rt_alloc_decide(&in, &a);
    assert_int_equal(a.has_job_id, 1);
    assert_int_equal(strlen(a.slurm_job_id), sizeof(a.slurm_job_id) - 1);
    assert_int_equal(strspn(a.slurm_job_id, "7"), sizeof(a.slurm_job_id) - 1);
}

/* --- rt_host_sharing -------------------------------------------------------------------------
 * "shared" only on evidence of other work (issue 36: the OS's own memory made every small job
 * "shared" on an idle VM): other processes' cores at least 0.25 and a tenth of the tree's,
 * their GPUs at least 0.2, their disk bytes at least 256 MiB and the tree's own. */

static void test_host_sharing_table(void **state)
{
    (void)state;
    const double MiB = 1048576;
    static const struct {
        const char *name;
        struct rt_sharing_in in; /* has_tree; tree, sys cores; tree, sys GPUs; tree, sys bytes */
        const char *kind, *resource;
        double others_cores;
    } rows[] = {
        /* an idle VM: the system's 0.05 cores beyond the tree are the OS and rtrack */
        {"idle host", {1, 0.5, 0.55, NAN, NAN, 0, 0}, "dedicated", NULL, 0.05},
        /* two outside spinners: 2.00 - 0.60 = 1.40 cores of other work */
        {"spinners beside", {1, 0.6, 2.0, NAN, NAN, 0, 0}, "shared", "cpu", 1.4},
        /* 0.25 exactly is other work (>=); 0.24 is not */
        {"a quarter core", {1, 1.0, 1.25, NAN, NAN, 0, 0}, "shared", "cpu", 0.25},
        {"under a quarter", {1, 1.0, 1.24, NAN, NAN, 0, 0}, "dedicated", NULL, 0.24},
        /* a 32-core tree: a tenth of it, 3.2, is needed; 3 cores beside it are not */
        {"big tree, small others", {1, 32, 35, NAN, NAN, 0, 0}, "dedicated", NULL, 3},
        {"big tree, a tenth more", {1, 32, 35.2, NAN, NAN, 0, 0}, "shared", "cpu", 3.2},
        /* the system below the tree (other counters, other moments): 0, not negative */
        {"system below the tree", {1, 2, 1.9, NAN, NAN, 0, 0}, "dedicated", NULL, 0},
        /* GPUs: 0.7 - 0.4 = 0.3 GPUs of other work */
        {"GPUs beside", {1, 1, 1, 0.4, 0.7, 0, 0}, "shared", "gpu", 0},
        {"GPUs barely", {1, 1, 1, 0.4, 0.59, 0, 0}, "dedicated", NULL, 0},
        /* disk: 300 MiB beyond a tree that moved 10 MiB; not 200 MiB; not beyond a tree that
         * moved 400 MiB itself */
        {"disk beside", {1, 1, 1, NAN, NAN, 10 * MiB, 310 * MiB}, "shared", "disk", 0},
        {"disk little", {1, 1, 1, NAN, NAN, 10 * MiB, 210 * MiB}, "dedicated", NULL, 0},
        {"disk the tree's own", {1, 1, 1, NAN, NAN, 400 * MiB, 700 * MiB}, "dedicated", NULL, 0},
        /* CPU first: it is named where several would be */
        {"CPU named first", {1, 0.5, 1.5, 0.1, 0.9, 0, 1024 * MiB}, "shared", "cpu", 1},
        /* unknown figures are no evidence */
        {"nothing known", {1, NAN, NAN, NAN, NAN, NAN, NAN}, "dedicated", NULL, NAN},
        /* no tree: the reference's answer */
        {"no tree", {0, NAN, 2, NAN, NAN, NAN, 0}, "shared", NULL, NAN},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(rows); i++) {
        struct rt_sharing out;
        rt_host_sharing(&rows[i].in, &out);
        want_str(rows[i].name, "kind", out.kind, rows[i].kind);
        if (rows[i].resource || out.resource)
            want_str(rows[i].name, "resource", out.resource ? out.resource : "(null)",
                     rows[i].resource ? rows[i].resource : "(null)");
        if (isnan(rows[i].others_cores) != isnan(out.others_cores) ||
            (!isnan(out.others_cores) && fabs(out.others_cores - rows[i].others_cores) > 1e-9))
            fail_msg("%s: others_cores %g, want %g", rows[i].name, out.others_cores,
                     rows[i].others_cores);
    }
}

/* --- rt_efficiency --------------------------------------------------------------------------- */

struct eff_case {
    const char *name;
    struct rt_efficiency_in in;
    struct rt_eff want;
};

/* cpu_mean, mem_max, gpu_mean, vram_max, reco_peak, host_vcpus, host_mem_mib, host_gpus,
 * host_vram_mib, alloc_cpus, alloc_mem_mib, alloc_cpu_s, alloc_core_s;
 * want: cpu_pct, memory_pct, gpu_pct, vram_pct, cpu_alloc_pct, memory_alloc_pct */
static const struct eff_case eff_cases[] = {
    /* 3 of 8 cores = 37.5; 1024 of 16384 MiB = 6.25; 0.5 of 2 GPUs = 25; 4000 of 16000 = 25;
     * the kernel's 280 CPU-s of 4 cores x 100 s = 400 core-s = 70 (the sampled 3 of 4 would be
     * 75); the peak 1024 of 2048 allocated = 50 */
    {"every figure",
     {3, 1024, 0.5, 4000, 1024, 8, 16384, 2, 16000, 4, 2048, 280, 400},
     {37.5, 6.25, 25, 25, 70, 50}},
    /* no kernel CPU time for every run: the sampled 3 cores of 4 = 75 */
    {"CPU time unknown",
     {3, 1024, NAN, NAN, 1024, 8, 16384, 0, 0, 4, 2048, NAN, NAN},
     {37.5, 6.25, NAN, NAN, 75, 50}},
    /* allocated core-seconds 0 (a run of no wall time): the sampled figure as well */
    {"no core-seconds",
     {3, 1024, NAN, NAN, 1024, 8, 16384, NAN, NAN, 4, 2048, 10, 0},
     {37.5, 6.25, NAN, NAN, 75, 50}},
    /* the recommendation's peak (the kernel's 1500) above the sampled 1000: 1500 / 16384 =
     * 9.155 -> 9.16; 1500 / 2048 = 73.242 -> 73.24; 1 of 3 cores = 33.33 */
    {"kernel peak above the samples",
     {1, 1000, NAN, NAN, 1500, 3, 16384, NAN, NAN, NAN, 2048, NAN, NAN},
     {33.33, 9.16, NAN, NAN, NAN, 73.24}},
    /* the recommendation's peak below the sampled max (the Python max of a job's runs may
     * differ): the larger, 1000 / 16384 = 6.1035 -> 6.1; against the allocation the
     * recommendation's own 800 / 1000 = 80 */
    {"reco peak below the sampled max",
     {2, 1000, NAN, NAN, 800, 4, 16384, NAN, NAN, NAN, 1000, NAN, NAN},
     {50, 6.1, NAN, NAN, NAN, 80}},
    /* nothing sampled and no host: every figure null; no reco peak (0) */
    {"nothing known",
     {NAN, NAN, NAN, NAN, 0, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN},
     {NAN, NAN, NAN, NAN, NAN, NAN}},
    /* no sampled memory, a recommendation's peak of 512: 512 / 8192 = 6.25 */
    {"only the reco peak",
     {NAN, NAN, NAN, NAN, 512, 4, 8192, NAN, NAN, NAN, NAN, NAN, NAN},
     {NAN, 6.25, NAN, NAN, NAN, NAN}},
    /* a host with GPUs the job did not use: 0 % of each, not null */
    {"GPUs idle",
     {1, 100, 0, 0, 100, 2, 1000, 4, 8000, NAN, NAN, NAN, NAN},
     {50, 10, 0, 0, NAN, NAN}},
};

static void test_efficiency_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < RT_ARRAY_LEN(eff_cases); i++) {
        const struct eff_case *c = &eff_cases[i];
        struct rt_eff e;
        memset(&e, 0x5a, sizeof(e));
        rt_efficiency(&c->in, &e);
        want_double(c->name, "cpu_pct", e.cpu_pct, c->want.cpu_pct);
        want_double(c->name, "memory_pct", e.memory_pct, c->want.memory_pct);
        want_double(c->name, "gpu_pct", e.gpu_pct, c->want.gpu_pct);
        want_double(c->name, "vram_pct", e.vram_pct, c->want.vram_pct);
        want_double(c->name, "cpu_alloc_pct", e.cpu_alloc_pct, c->want.cpu_alloc_pct);
        want_double(c->name, "memory_alloc_pct", e.memory_alloc_pct, c->want.memory_alloc_pct);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recommend_table),    cmocka_unit_test(test_cpu_demand),
        cmocka_unit_test(test_round_memory_steps), cmocka_unit_test(test_alloc_decide_table),
        cmocka_unit_test(test_alloc_job_id_cut),   cmocka_unit_test(test_host_sharing_table),
        cmocka_unit_test(test_efficiency_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
