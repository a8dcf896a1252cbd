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

enum { OPT_SERVER = 1, OPT_SLURM_JOB };

static const struct cmd_opt report_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db); again, or a glob, to read several as one",
     "RTRACK_DB", 'd'},
    {"slurm-job", 0, "ID",
     "the runs of this Slurm job only, its nodes against its allocation first", NULL,
     OPT_SLURM_JOB},
    {"run", 'r', "ID|latest", "run to report (default latest)", NULL, 'r'},
    {"output", 'o', "FILE", "the HTML file to write (required; - = stdout)", NULL, 'o'},
    {"recommend-server", 0, NULL,
     "add the cheapest matching cloud server from the Spare Cores Keeper API", "RTRACK_KEEPER_URL",
     OPT_SERVER},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_report(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_report_def = {
    .name = "report",
    .fn = cmd_report,
    .summary = "write a run as a self-contained HTML page with charts",
    .synopsis = "[options] -o FILE",
    .description = "Write a recorded run as one HTML page: the run, what it used, what to ask for\n"
                   "next time, the busiest processes and charts over time. The page is\n"
                   "self-contained (no scripts, fonts or images to fetch) and prints well.",
    .opts = report_opts,
};

static int cmd_report(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path;
    const char *run = "latest", *output = NULL;
    int server = 0;
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_report_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        switch (c) {
        case 'd':
            if (cmd_dbs_add("report", v) != 0)
                return RT_EXIT_USAGE;
            break;
        case OPT_SLURM_JOB:
            cmd_dbs_slurm_job(v);
            break;
        case 'r':
            run = v;
            break;
        case 'o':
            output = v;
            break;
        case OPT_SERVER:
            server = 1;
            break;
        }
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    if (server && rt_env_check_http(env, "report") != 0)
        return RT_EXIT_USAGE;
    if (!output || !*output) {
        rt_err("report: which file? give -o FILE (the HTML page to write)");
        return RT_EXIT_USAGE;
    }
    /* an output that is the database (or its -wal, -shm, -journal) would destroy it */
    if (!(db_path = cmd_dbs_path("report", env)))
        return RT_EXIT_USAGE;
    if (cmd_out_check_db("report", output, db_path) != 0)
        return RT_EXIT_USAGE;

    int64_t run_id;
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, run, &run_id, NULL);
    if (!store)
        return RT_EXIT_USAGE;
    int rc;
    char err[600];
    struct rt_buf page = {0};
    struct rt_summary_opts so = {
        .run_id = run_id,
        .recommend_server = server,
        .keeper_url = env->keeper_url,
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
    if (rc == RT_EXIT_OK && write_file(output, &page) != 0)
        rc = RT_EXIT_FAILURE;
    rt_buf_free(&page);
    rt_store_close(store);
    return rc;
}
