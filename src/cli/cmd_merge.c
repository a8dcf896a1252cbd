/* cmd_merge.c - `rtrack merge OUT IN...`: the runs of several databases gathered into one
 * (store/merge.h: known by their UUID, so nothing is copied twice). */
#include <stdio.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/store/merge.h"
#include "rtrack/store/store.h"

enum { OPT_SLURM_JOB = 1 };

static const struct cmd_opt merge_opts[] = {
    {"slurm-job", 0, "ID", "only the runs of this Slurm job (its id, or an array's job id)", NULL,
     OPT_SLURM_JOB},
    {"quiet", 'q', NULL, "say nothing on success", NULL, 'q'},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_merge(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_merge_def = {
    .name = "merge",
    .fn = cmd_merge,
    .summary = "copy the runs of several databases into one",
    .synopsis = "[--slurm-job ID] [--quiet] OUT.db IN.db...",
    .description =
        "Copy the runs of each IN.db that OUT.db does not hold yet (runs are known by\n"
        "their UUID: merging twice adds nothing) into OUT.db, created when missing, with\n"
        "all their samples, processes, disks, NICs, GPUs and tags. Upload progress is not\n"
        "copied. For a cluster's files: one database per node, gathered for SQL.",
    .opts = merge_opts,
    .operands = 1,
};

static int cmd_merge(int argc, char **argv, const struct rt_env *env)
{
    (void)env;
    const char *job = NULL;
    int quiet = 0;
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_merge_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        if (c == OPT_SLURM_JOB)
            job = v;
        else if (c == 'q')
            quiet = 1;
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    int first = optind;
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
    if (rt_store_open(argv[first], RT_STORE_WRITE, &out, err, sizeof(err)) != 0) {
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
        if (!quiet)
            printf("%s: %lld runs added, %lld already in %s\n", argv[i], (long long)n.added,
                   (long long)n.present, argv[first]);
    }
    rt_store_close(out);
    return cmd_stdout_check() == 0 ? rc : RT_EXIT_FAILURE;
}
