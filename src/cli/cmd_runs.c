/* cmd_runs.c - `rtrack runs`: the runs a database holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

/* The columns of rt_store_runs(RT_RUNS_TABLE) the table and the CSV show, in its order. */
static const char *const headers[] = {"id",      "job",  "command", "started", "seconds",
                                      "samples", "exit", "pid",     "status"};
#define NCOLS 9

static void csv_field(FILE *f, struct rt_store_rows *r, int i)
{
    enum rt_store_type type = rt_store_rows_type(r, i);
    if (type == RT_STORE_NULL)
        return;
    const char *v = rt_store_rows_t(r, i);
    if (type != RT_STORE_TEXT || !strpbrk(v, ",\"\r\n")) {
        fputs(v, f);
        return;
    }
    fputc('"', f);
    for (; *v; v++) {
        if (*v == '"')
            fputc('"', f);
        fputc(*v, f);
    }
    fputc('"', f);
}

enum { OPT_SLURM_JOB = 1 };

static const struct cmd_opt runs_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db); again, or a glob, to read several as one",
     "RTRACK_DB", 'd'},
    {"slurm-job", 0, "ID", "the runs of this Slurm job only", NULL, OPT_SLURM_JOB},
    {"format", 'f', "table|csv|jsonl",
     "table for people (default), csv or jsonl for programs (jsonl adds the host's GPUs)", NULL,
     'f'},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_runs(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_runs_def = {
    .name = "runs",
    .fn = cmd_runs,
    .summary = "list the runs in a database",
    .synopsis = "[--db FILE]... [--slurm-job ID] [--format table|csv|jsonl]",
    .description = "List the runs a database holds: id, job name, command, start (UTC),\n"
                   "duration, samples (after the baseline, as summary and export count\n"
                   "them), exit code, tracked pid, status.",
    .opts = runs_opts,
};

static int cmd_runs(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path;
    const char *format = "table";
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_runs_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        if (c == 'd' && cmd_dbs_add("runs", v) != 0)
            return RT_EXIT_USAGE;
        else if (c == OPT_SLURM_JOB)
            cmd_dbs_slurm_job(v);
        else if (c == 'f')
            format = v;
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    int fmt = !strcmp(format, "table")                                ? 0
              : !strcmp(format, "csv")                                ? 1
              : (!strcmp(format, "jsonl") || !strcmp(format, "json")) ? 2
                                                                      : -1;
    if (fmt < 0) {
        rt_err("runs: unknown format '%s' (table, csv or jsonl)", format);
        return RT_EXIT_USAGE;
    }
    if (!(db_path = cmd_dbs_path("runs", env)))
        return RT_EXIT_USAGE;
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, NULL, NULL, NULL);
    if (!store)
        return RT_EXIT_USAGE;
    int rc = RT_EXIT_FAILURE;
    struct rt_store_rows *r = rt_store_runs(store, fmt == 2 ? RT_RUNS_JSON : RT_RUNS_TABLE);
    if (!r) {
        rt_err("cannot read database '%s': %s", db_path, rt_store_error(store));
        rt_store_close(store);
        return rc;
    }
    if (fmt == 2) {
        while (rt_store_rows_next(r) == 1)
            printf("%s\n", rt_store_rows_t(r, 0));
    } else {
        if (fmt == 1) {
            for (int i = 0; i < NCOLS; i++)
                printf("%s%s", i ? "," : "", headers[i]);
            putchar('\n');
            while (rt_store_rows_next(r) == 1) {
                for (int i = 0; i < NCOLS; i++) {
                    if (i)
                        putchar(',');
                    csv_field(stdout, r, i);
                }
                putchar('\n');
            }
        } else {
            printf("%4s  %-16s %-20s %8s %7s %4s %7s %-8s  %s\n", "id", "job", "started", "seconds",
                   "samples", "exit", "pid", "status", "command");
            while (rt_store_rows_next(r) == 1) {
                const char *cmd = rt_store_rows_t(r, 2);
                const char *exitc = rt_store_rows_t(r, 6);
                const char *pid = rt_store_rows_t(r, 7);
                const char *secs = rt_store_rows_t(r, 4);
                /* names and commands are the job's: no escape sequences to the terminal, and
                 * the column cut and padded by display width (an emoji or a CJK character
                 * takes two columns, a combining mark none), not by bytes or code points; room
                 * for 16 columns of 4-byte characters with combining marks */
                char job[256], *line;
                snprintf(job, sizeof(job), "%s",
                         rt_store_rows_type(r, 1) == RT_STORE_NULL ? "-" : rt_store_rows_t(r, 1));
                size_t jw = rt_utf8_printable(job, 16);
                line = xstrdup(cmd ? cmd : rt_store_rows_t(r, 9));
                rt_utf8_printable(line, 0);
                printf("%4lld  %s%*s %-20s %8s %7lld %4s %7s %-8s  %s\n",
                       (long long)rt_store_rows_i(r, 0), job, (int)(16 - jw), "",
                       rt_store_rows_t(r, 3), secs ? secs : "-", (long long)rt_store_rows_i(r, 5),
                       exitc ? exitc : "-", pid ? pid : "-", rt_store_rows_t(r, 8), line);
                free(line);
            }
        }
    }
    rt_store_rows_close(r);
    rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
    rt_store_close(store);
    return rc;
}
