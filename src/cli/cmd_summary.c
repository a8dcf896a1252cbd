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

enum { OPT_SERVER = 1, OPT_COMPARE, OPT_SLURM_JOB };

static const struct cmd_opt summary_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db); again, or a glob, to read several as one",
     "RTRACK_DB", 'd'},
    {"slurm-job", 0, "ID",
     "this Slurm job across its nodes: a row per node, the job, sbatch options", NULL,
     OPT_SLURM_JOB},
    {"run", 'r', "ID|latest", "the run (default latest)", NULL, 'r'},
    {"job", 'j', "NAME",
     "every run of this job name together (mean of means, max of maxes; default: one run)", NULL,
     'j'},
    {"compare", 0, "RUN RUN",
     "two runs side by side (ids or latest): each figure, the change and the change in per cent",
     NULL, OPT_COMPARE},
    {"format", 'f', "text|json|markdown", "output format (default text)", NULL, 'f'},
    {"recommend-server", 0, NULL,
     "ask the Spare Cores Keeper API for the cheapest server that fits", "RTRACK_KEEPER_URL",
     OPT_SERVER},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_summary(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_summary_def = {
    .name = "summary",
    .fn = cmd_summary,
    .summary = "what a run used and what to request next time",
    .synopsis = "[--db FILE]... [--slurm-job ID]\n"
                "[--run ID|latest | --job NAME | --compare RUN RUN]\n"
                "[--format text|json|markdown] [--recommend-server]",
    .description =
        "What a recorded run used (wall and CPU time, cores, peak memory; process\n"
        "tree and system: mean, p50, p95, max), what to request next time, how much\n"
        "of the host and of the allocation it used, its processes grouped by name.\n"
        "--job: every run of the job together, then how the runs spread (mean \u00b1 \u03c3,\n"
        "min \u2026 max); --compare: two runs side by side. Each in JSON too.",
    .opts = summary_opts,
};

static int cmd_summary(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path, *run = NULL, *format = "text", *cmp[2] = {NULL, NULL};
    struct rt_summary_opts o = {0, NULL, 0, NULL, 0};
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_summary_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        switch (c) {
        case 'd':
            if (cmd_dbs_add("summary", v) != 0)
                return RT_EXIT_USAGE;
            break;
        case OPT_SLURM_JOB:
            cmd_dbs_slurm_job(v);
            break;
        case 'r':
            run = v;
            break;
        case 'j':
            o.job = v;
            break;
        case 'f':
            format = v;
            break;
        case OPT_SERVER:
            o.recommend_server = 1;
            break;
        case OPT_COMPARE:
            /* two values: the option's and the argument after it (getopt stops there) */
            cmp[0] = v;
            cmp[1] = optind < argc && argv[optind][0] != '-' ? argv[optind++] : NULL;
            if (!cmp[1]) {
                rt_err("summary: --compare needs two runs (ids or latest)");
                return RT_EXIT_USAGE;
            }
            break;
        }
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    if (cmp[0] && (run || o.job)) {
        rt_err("summary: --compare cannot be used with --run or --job");
        return RT_EXIT_USAGE;
    }
    if (o.recommend_server && rt_env_check_http(env, "summary") != 0)
        return RT_EXIT_USAGE;
    int fmt = !strcmp(format, "text")                                ? 0
              : !strcmp(format, "json")                              ? 1
              : !strcmp(format, "markdown") || !strcmp(format, "md") ? 2
                                                                     : -1;
    if (fmt < 0) {
        rt_err("summary: unknown format '%s' (text, json or markdown)", format);
        return RT_EXIT_USAGE;
    }
    if (run && o.job) {
        rt_err("summary: --run and --job cannot be used together");
        return RT_EXIT_USAGE;
    }
    if (o.job && !*o.job) {
        rt_err("summary: --job needs a job name");
        return RT_EXIT_USAGE;
    }
    o.keeper_url = env->keeper_url;
    if (!(db_path = cmd_dbs_path("summary", env)))
        return RT_EXIT_USAGE;
    if (cmd_dbs_slurm() && !run && !o.job)
        return cmd_cluster_summary(db_path, cmd_dbs_slurm(), fmt);

    if (cmp[0]) {
        int64_t id[2];
        struct rt_store *st = cmd_open_db(db_path, RT_STORE_READ, cmp[1], &id[1], NULL);
        if (!st)
            return RT_EXIT_USAGE;
        rt_store_close(st);
        if (!(st = cmd_open_db(db_path, RT_STORE_READ, cmp[0], &id[0], NULL)))
            return RT_EXIT_USAGE;
        struct rt_summary_compare cmp_s;
        char err[512];
        int bad = 0, crc = rt_summary_compare(st, id, &cmp_s, &bad, err, sizeof(err));
        rt_store_close(st);
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
            rt_summary_compare_write_text(&cmp_s, stdout, fmt == 2);
        }
        rt_summary_compare_free(&cmp_s);
        return cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE;
    }
    const char *which = o.job ? NULL : (run ? run : "latest"); /* --job: no one run */
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, which, &o.run_id, NULL);
    if (!store)
        return RT_EXIT_USAGE;
    char err[512];
    int bad = 0, rc;
    struct rt_summary sum;
    if (rt_summary_compute(store, &o, &sum, &bad, err, sizeof(err)) != 0) {
        rt_err("summary: %s", err);
        rc = bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
        goto out;
    }
    if (fmt == 1) {
        struct rt_buf json = {0};
        rt_summary_write_json(&sum, &json);
        fwrite(json.p, 1, json.len, stdout);
        putchar('\n');
        rt_buf_free(&json);
    } else {
        rt_summary_write_text(&sum, stdout, fmt == 2);
    }
    rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
out:
    rt_summary_free(&sum);
    rt_store_close(store);
    return rc;
}
