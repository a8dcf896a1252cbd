/* cmd_report.c - `rtrack report`: a recorded run as one self-contained HTML page (report.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/summary/cluster.h"
#include "rtrack/summary/report.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/summary.h"
#include "rtrack/base/util.h"

/* The page, through the write-then-rename output export uses too. */
static int write_file(const char *path, const struct rt_buf *page)
{
    struct cmd_out o;
    if (cmd_out_open(&o, path) != 0)
        return -1;
    int ok = fwrite(page->p, 1, page->len, o.f) == page->len;
    if (!ok)
        cmd_out_failed(&o, rt_strerror(errno ? errno : EIO));
    return cmd_out_close(&o, ok) == 0 && ok ? 0 : -1;
}

struct report_opts {
    char *output;
    int recommend_server;
};

static const struct rt_opt report_opts[] = {
    CMD_OPT_DBS,
    CMD_OPT_SLURM_JOB("the runs of this Slurm job only, its nodes against its allocation first"),
    CMD_OPT_RUN("run to report (default latest)"),
    CMD_OPT_EXTERNAL_RUN_ID,
    OPT_STRING("output", 'o', "FILE", "the HTML file to write (required; - = stdout)",
               struct report_opts, output),
    CMD_OPT_RECOMMEND_SERVER(
        "add the cheapest matching cloud server from the Spare Cores Keeper API",
        struct report_opts),
    OPT_END,
};

static int report_check(struct cmd_ctx *c);
static int cmd_report(struct cmd_ctx *c);

const struct cmd_def cmd_report_def = {
    .name = "report",
    .fn = cmd_report,
    .summary = "write a run as a self-contained HTML page with charts",
    .synopsis = "[options] -o FILE",
    .description = "Write a recorded run as one HTML page: the run, what it used, what to ask for\n"
                   "next time, the busiest processes and charts over time. The page is\n"
                   "self-contained (no scripts, fonts or images to fetch) and prints well.",
    .opts = report_opts,
    .opts_size = sizeof(struct report_opts),
    .check = report_check,
    .db = CMD_DB_READ,
    .db_flags = CMD_DB_RUN | CMD_DB_OUTPUT,
};

static int report_check(struct cmd_ctx *c)
{
    const struct report_opts *o = c->opts;
    if (o->recommend_server && rt_env_check_http(c->env, "report") != 0)
        return RT_EXIT_USAGE;
    if (!o->output || !*o->output) {
        rt_err("report: which file? give -o FILE (the HTML page to write)");
        return RT_EXIT_USAGE;
    }
    c->output = o->output;
    return 0;
}

static int cmd_report(struct cmd_ctx *c)
{
    const struct report_opts *o = c->opts;
    struct rt_store *store = c->store;
    int rc;
    char err[600];
    struct rt_buf page = {0};
    struct rt_summary_opts so = {
        .run_id = c->run_id,
        .recommend_server = o->recommend_server,
        .keeper_url = c->env->keeper_url,
    };
    /* one read snapshot: the summary and the charts see the same samples even while a
     * recorder is still writing the run */
    rt_store_read_begin(store);
    int bad_input = 0;
    err[0] = '\0';
    struct rt_summary sum;
    struct rt_cluster job;
    memset(&job, 0, sizeof(job));
    if (rt_summary_compute(store, &so, &sum, &bad_input, err, sizeof(err)) != 0) {
        rt_err("%s", err[0] ? err : "report: cannot summarize the run");
        rc = bad_input ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    } else if (cmd_dbs_slurm() && rt_cluster_compute(store, cmd_dbs_slurm(), &job, &bad_input, err,
                                                     sizeof(err)) != 0) {
        /* --slurm-job: the job's nodes come first on the page */
        rt_err("%s", err);
        rc = bad_input ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    } else if (rt_report_html(store, &sum, cmd_dbs_slurm() ? &job : NULL, (double)time(NULL), &page,
                              err, sizeof(err)) != 0) {
        rt_err("%s", err);
        rc = RT_EXIT_FAILURE;
    } else {
        rc = RT_EXIT_OK;
    }
    rt_summary_free(&sum);
    rt_cluster_free(&job);
    rt_store_read_end(store);
    if (rc == RT_EXIT_OK && write_file(o->output, &page) != 0)
        rc = RT_EXIT_FAILURE;
    rt_buf_free(&page);
    return rc;
}
