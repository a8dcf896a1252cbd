/* cmd_merge.c - `rtrack merge OUT IN...`: the runs of several databases gathered into one
 * (store/merge.h: known by their UUID, so nothing is copied twice). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/store/merge.h"
#include "rtrack/store/store.h"

struct merge_opts {
    char *slurm_job;
    int quiet;
};

static const struct rt_opt merge_opts[] = {
    OPT_STRING("slurm-job", 0, "ID",
               "only the runs of this Slurm job (its id, or an array's job id)", struct merge_opts,
               slurm_job),
    OPT_BOOL("quiet", 'q', "say nothing on success", struct merge_opts, quiet),
    OPT_END,
};

static int cmd_merge(struct cmd_ctx *c);

const struct cmd_def cmd_merge_def = {
    .name = "merge",
    .fn = cmd_merge,
    .summary = "copy the runs of several databases into one",
    .synopsis = "[--slurm-job ID] [--quiet] OUT.db IN.db...",
    .description =
        "Copy the runs of each IN.db that OUT.db does not hold yet (runs are known by\n"
        "their UUID: merging twice adds nothing) into OUT.db, created when missing, with\n"
        "all their samples, processes, disks, NICs, GPUs and tags. Upload progress is not\n"
        "copied. A run merged while it was still recording is brought up to date by the\n"
        "next merge of its file. For a cluster's files: one database per node, gathered\n"
        "for SQL.",
    .opts = merge_opts,
    .opts_size = sizeof(struct merge_opts),
    .operands = 1,
};

static int cmd_merge(struct cmd_ctx *c)
{
    const struct merge_opts *o = c->opts;
    const char *job = o->slurm_job;
    int argc = c->argc, first = c->optind;
    char **argv = c->argv;
    if (argc - first < 2) {
        rt_err("merge: expected OUT.db and at least one IN.db (see 'rtrack merge --help')");
        return RT_EXIT_USAGE;
    }
    if (job && !*job) {
        rt_err("merge: --slurm-job needs a job id");
        return RT_EXIT_USAGE;
    }
    struct rt_store *out;
    char err[600];
    if (rt_store_check_own(argv[first], err, sizeof(err)) != 0 ||
        rt_store_open(argv[first], RT_STORE_WRITE, &out, err, sizeof(err)) != 0) {
        rt_err("merge: %s", err);
        return RT_EXIT_USAGE;
    }
    int rc = RT_EXIT_OK;
    for (int i = first + 1; i < argc; i++) {
        struct rt_merge_count n;
        if (rt_store_merge(out, argv[i], job, &n) != 0) {
            rt_err("merge: %s", rt_store_error(out));
            rc = RT_EXIT_FAILURE;
            continue;
        }
        if (!o->quiet && n.updated)
            printf("%s: %lld runs added, %lld brought up to date, %lld already in %s\n", argv[i],
                   (long long)n.added, (long long)n.updated, (long long)n.present, argv[first]);
        else if (!o->quiet)
            printf("%s: %lld runs added, %lld already in %s\n", argv[i], (long long)n.added,
                   (long long)n.present, argv[first]);
    }
    rt_store_close(out);
    return cmd_stdout_check() == 0 ? rc : RT_EXIT_FAILURE;
}
