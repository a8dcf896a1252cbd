/* cmd_summary.c - `rtrack summary`: what a run used and what to request next time.
 *
 * The options, then the summary room's compute step (rt_summary_compute) and one of its
 * renderers (render.h: JSON, text, markdown): the formats print one struct, so they can never
 * disagree. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "run_end.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/fmt.h"
#include "rtrack/base/json.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/render.h"
#include "rtrack/summary/summary.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

struct summary_opts {
    char *job;            /* --job */
    const char *cmp[2];   /* --compare's two runs */
    int format;           /* 0 text, 1 json, 2 markdown */
    int recommend_server; /* --recommend-server */
};

/* --compare RUN RUN: the option's value and the argument after it (getopt stops there) */
static int opt_compare(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    struct summary_opts *s = c->opts;
    s->cmp[0] = v;
    s->cmp[1] = optind < c->argc && c->argv[optind][0] != '-' ? c->argv[optind++] : NULL;
    if (!s->cmp[1]) {
        rt_err("summary: --compare needs two runs (ids or latest)");
        return -1;
    }
    return 0;
}

static const struct rt_opt summary_opts[] = {
    CMD_OPT_DBS,
    CMD_OPT_SLURM_JOB("this Slurm job across its nodes: a row per node, the job, sbatch options"),
    CMD_OPT_RUN("the run (default latest)"),
    CMD_OPT_EXTERNAL_RUN_ID,
    OPT_STRING("job", 'j', "NAME",
               "every run of this job name together (mean of means, max of maxes; default: one "
               "run)",
               struct summary_opts, job),
    OPT_CALLBACK(
        "compare", 0, "RUN RUN",
        "two runs side by side (ids or latest): each figure, the change and the change in per cent",
        opt_compare),
    OPT_ENUM("format", 'f', "text|json|markdown", "output format (default text)",
             struct summary_opts, format, "format", "text", "json", "markdown|md"),
    CMD_OPT_RECOMMEND_SERVER("ask the Spare Cores Keeper API for the cheapest server that fits",
                             struct summary_opts),
    OPT_END,
};

static int summary_check(struct cmd_ctx *c);
static int cmd_summary(struct cmd_ctx *c);

const struct cmd_def cmd_summary_def = {
    .name = "summary",
    .fn = cmd_summary,
    .summary = "what a run used and what to request next time",
    .synopsis = "[--db FILE]... [--slurm-job ID]\n"
                "[--run ID|latest | --external-run-id ID | --job NAME |\n"
                " --compare RUN RUN]\n"
                "[--format text|json|markdown] [--recommend-server]",
    .description =
        "What a recorded run used (wall and CPU time, cores, peak memory; process\n"
        "tree and system: mean, p50, p95, max), what to request next time, how much\n"
        "of the host and of the allocation it used, its processes grouped by name.\n"
        "--job: every run of the job together, then how the runs spread (mean \u00b1 \u03c3,\n"
        "min \u2026 max); --compare: two runs side by side. Each in JSON too.",
    .epilog = "words (docs/usage.md#words-used-on-the-screen has them all):\n"
              "  job          the command rtrack started and every process it started in\n"
              "               turn (its process tree), also those it left running\n"
              "  wall time    from the start to the end, as a clock on the wall counts it\n"
              "  CPU time     the seconds the job's processes ran on a CPU, user + system;\n"
              "               'as the kernel counted the job': its own total, taken when\n"
              "               the job was reaped, not added up over samples\n"
              "  mean cores   CPU time / wall time (2.00: two CPUs busy all along)\n"
              "  sampled      seen in the samples, one per interval; a peak between two\n"
              "               samples is missed by them\n"
              "  PSS          proportional set size: a process's memory, with each page\n"
              "               shared by n processes counted 1/n (the job's processes add up)\n"
              "  RSS          resident set size: a process's memory with shared pages whole\n"
              "  kernel peak  the most memory one process held (its RSS high-water mark),\n"
              "               kept by the kernel: never missed, but one process's only\n"
              "  waited       time a process was ready to run but no CPU was free\n"
              "  shared host  other processes did work (CPU, GPU, disk) beside the job\n",
    .opts = summary_opts,
    .opts_size = sizeof(struct summary_opts),
    .check = summary_check,
    .db = CMD_DB_READ,
};

/* What goes with what; then the run the database is opened with: none for --compare (its two
 * are found by summary_compare), --job or the Slurm job across its nodes; else --run's, or the
 * latest. */
static int summary_check(struct cmd_ctx *c)
{
    const struct summary_opts *o = c->opts;
    if (o->cmp[0] && (c->run || o->job)) {
        rt_err("summary: --compare cannot be used with %s", c->run ? c->run_opt : "--job");
        return RT_EXIT_USAGE;
    }
    if (o->recommend_server && rt_env_check_http(c->env, "summary") != 0)
        return RT_EXIT_USAGE;
    if (c->run && o->job) {
        rt_err("summary: %s and --job cannot be used together", c->run_opt);
        return RT_EXIT_USAGE;
    }
    if (o->job && !*o->job) {
        rt_err("summary: --job needs a job name");
        return RT_EXIT_USAGE;
    }
    if (o->cmp[0] || o->job || (cmd_dbs_slurm() && !c->run))
        c->run = NULL;
    else if (!c->run)
        c->run = "latest";
    return 0;
}

/* --compare: the two runs (the second found first, as they were always said) side by side */
static int summary_compare(struct cmd_ctx *c, int fmt)
{
    const struct summary_opts *o = c->opts;
    int64_t id[2];
    if (!(id[1] = cmd_find_run(c, o->cmp[1], NULL)) || !(id[0] = cmd_find_run(c, o->cmp[0], NULL)))
        return RT_EXIT_USAGE;
    struct rt_summary_compare cmp_s;
    char err[512];
    int bad = 0, crc = rt_summary_compare(c->store, id, &cmp_s, &bad, err, sizeof(err));
    if (crc != 0) {
        rt_err("summary: %s", err);
        rt_summary_compare_free(&cmp_s);
        return bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    }
    if (fmt == 1) {
        struct rt_buf json = {0};
        rt_summary_compare_write_json(&cmp_s, &json);
        fwrite(json.p, 1, json.len, stdout);
        putchar('\n');
        rt_buf_free(&json);
    } else {
        rt_summary_compare_write_text(&cmp_s, stdout, fmt == 2, cmd_text_width(c->env));
    }
    rt_summary_compare_free(&cmp_s);
    return cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE;
}

void cmd_summary_print(const struct rt_summary *s, int fmt, int width)
{
    if (fmt == 1) {
        struct rt_buf json = {0};
        rt_summary_write_json(s, &json);
        fwrite(json.p, 1, json.len, stdout);
        putchar('\n');
        rt_buf_free(&json);
    } else {
        rt_summary_write_text(s, stdout, fmt == 2, width);
    }
}

static int cmd_summary(struct cmd_ctx *c)
{
    const struct summary_opts *so = c->opts;
    int fmt = so->format;
    if (cmd_dbs_slurm() && !c->run && !so->job)
        return cmd_cluster_summary(c->store, cmd_dbs_slurm(), fmt);
    if (so->cmp[0])
        return summary_compare(c, fmt);
    struct rt_summary_opts o = {c->run_id, so->job, so->recommend_server, c->env->keeper_url, 0};
    char err[512];
    int bad = 0, rc;
    struct rt_summary sum;
    if (rt_summary_compute(c->store, &o, &sum, &bad, err, sizeof(err)) != 0) {
        rt_err("summary: %s", err);
        rc = bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
        goto out;
    }
    cmd_summary_print(&sum, fmt, cmd_text_width(c->env));
    rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
out:
    rt_summary_free(&sum);
    return rc;
}
