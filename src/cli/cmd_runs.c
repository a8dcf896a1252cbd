/* cmd_runs.c - `rtrack runs`: the runs a database holds. */
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

/* The samples after the baseline: what summary counts and export writes as rows (the baseline
 * has no interval, so no rates). The baseline is a run's sample 0; counting all of the run's
 * rows through the (run_id, seq) index and looking up that one row keeps this fast on a run of
 * a million samples. */
#define SAMPLES_SQL                                                                                \
    "((SELECT count(*) FROM samples WHERE run_id = r.id) - EXISTS (SELECT 1 FROM samples WHERE "   \
    "run_id = r.id AND seq = 0 AND kind = 'baseline'))"

/* id, job, command (argv joined with spaces), start (UTC, the whole second as summary and report
 * show it), duration, samples, exit code, pid */
static const char *const runs_sql =
    "SELECT r.id, r.job_name, "
    "  CASE WHEN r.command IS NULL THEN NULL ELSE "
    "    (SELECT group_concat(value, ' ') FROM json_each(r.command)) END, "
    "  strftime('%Y-%m-%dT%H:%M:%SZ', CAST(r.started_at AS INTEGER), 'unixepoch'), "
    "  round(coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) "
    "        - r.started_at, 2), "
    "  " SAMPLES_SQL ", r.exit_code, r.pid, r.status, "
    "  r.mode, r.command "
    "FROM runs r ORDER BY r.id";

static const char *const headers[] = {"id",      "job",  "command", "started", "seconds",
                                      "samples", "exit", "pid",     "status"};
#define NCOLS 9

static void csv_field(FILE *f, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return;
    const char *v = (const char *)sqlite3_column_text(st, i);
    if (sqlite3_column_type(st, i) != SQLITE_TEXT || !strpbrk(v, ",\"\r\n")) {
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

int cmd_runs(int argc, char **argv, const struct rt_env *env)
{
    static const struct option lopts[] = {{"db", required_argument, NULL, 'd'},
                                          {"format", required_argument, NULL, 'f'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *db_path = rt_env_db(env);
    const char *format = "table";
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+:d:f:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            db_path = optarg;
            break;
        case 'f':
            format = optarg;
            break;
        case 'h':
            printf("usage: rtrack runs [--db FILE] [--format table|csv|jsonl]\n\n"
                   "List the runs a database holds: id, job name, command, start (UTC),\n"
                   "duration, samples (after the baseline, as summary and export count\n"
                   "them), exit code, tracked pid, status.\n\noptions:\n"
                   "  -d, --db FILE              database (default rtrack.db) [env RTRACK_DB]\n"
                   "  -f, --format table|csv|jsonl\n"
                   "                             table for people (default), csv or jsonl for\n"
                   "                             programs (jsonl adds the host's GPUs)\n"
                   "  -h, --help                 show this help\n");
            return RT_EXIT_OK;
        default:
            return cmd_option_error("runs", c, argv);
        }
    }
    if (optind < argc) {
        rt_err("runs: unexpected argument '%s'", argv[optind]);
        return RT_EXIT_USAGE;
    }
    int fmt = !strcmp(format, "table")                                ? 0
              : !strcmp(format, "csv")                                ? 1
              : (!strcmp(format, "jsonl") || !strcmp(format, "json")) ? 2
                                                                      : -1;
    if (fmt < 0) {
        rt_err("runs: unknown format '%s' (table, csv or jsonl)", format);
        return RT_EXIT_USAGE;
    }
    struct rt_store *store;
    char err[600];
    if (rt_store_open(db_path, RT_STORE_READ, &store, err, sizeof(err)) != 0) {
        rt_err("%s", err);
        return RT_EXIT_USAGE;
    }
    sqlite3 *db = rt_store_db(store);
    sqlite3_stmt *st;
    int rc = RT_EXIT_FAILURE;
    if (fmt == 2) {
        const char *sql =
            "SELECT json_object('id', id, 'job_name', job_name, 'mode', mode, 'command', "
            "json(command), 'started_at', started_at, 'ended_at', ended_at, 'seconds', seconds, "
            "'samples', samples, 'exit_code', exit_code, 'pid', pid, 'status', status, "
            "'host_gpu_model', host_gpu_model, 'host_gpu_count', host_gpu_count, "
            "'host_gpu_memory_mib', host_gpu_memory_mib) FROM ("
            "SELECT r.*, round(coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = "
            "r.id)) - r.started_at, 3) AS seconds, " SAMPLES_SQL " AS samples, g.host_gpu_model, "
            "g.host_gpu_count, g.host_gpu_memory_mib "
            "FROM runs r LEFT JOIN host_gpus g ON g.run_id = r.id ORDER BY r.id)";
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
            goto dberr;
        while (sqlite3_step(st) == SQLITE_ROW)
            printf("%s\n", sqlite3_column_text(st, 0));
    } else {
        if (sqlite3_prepare_v2(db, runs_sql, -1, &st, NULL) != SQLITE_OK)
            goto dberr;
        if (fmt == 1) {
            for (int i = 0; i < NCOLS; i++)
                printf("%s%s", i ? "," : "", headers[i]);
            putchar('\n');
            while (sqlite3_step(st) == SQLITE_ROW) {
                for (int i = 0; i < NCOLS; i++) {
                    if (i)
                        putchar(',');
                    csv_field(stdout, st, i);
                }
                putchar('\n');
            }
        } else {
            printf("%4s  %-16s %-20s %8s %7s %4s %7s %-8s  %s\n", "id", "job", "started", "seconds",
                   "samples", "exit", "pid", "status", "command");
            while (sqlite3_step(st) == SQLITE_ROW) {
                const char *cmd = (const char *)sqlite3_column_text(st, 2);
                const char *exitc = (const char *)sqlite3_column_text(st, 6);
                const char *pid = (const char *)sqlite3_column_text(st, 7);
                const char *secs = (const char *)sqlite3_column_text(st, 4);
                /* names and commands are the job's: no escape sequences to the terminal, and
                 * the column cut by characters, not bytes */
                char job[64], *line;
                snprintf(job, sizeof(job), "%s",
                         sqlite3_column_type(st, 1) == SQLITE_NULL
                             ? "-"
                             : (const char *)sqlite3_column_text(st, 1));
                size_t jw = rt_utf8_printable(job, 16);
                line = xstrdup(cmd ? cmd : (const char *)sqlite3_column_text(st, 9));
                rt_utf8_printable(line, 0);
                printf("%4lld  %s%*s %-20s %8s %7lld %4s %7s %-8s  %s\n",
                       (long long)sqlite3_column_int64(st, 0), job, (int)(16 - jw), "",
                       sqlite3_column_text(st, 3), secs ? secs : "-",
                       (long long)sqlite3_column_int64(st, 5), exitc ? exitc : "-", pid ? pid : "-",
                       sqlite3_column_text(st, 8), line);
                free(line);
            }
        }
    }
    sqlite3_finalize(st);
    rc = fflush(stdout) == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE;
    rt_store_close(store);
    return rc;
dberr:
    rt_err("cannot read database '%s': %s", db_path, sqlite3_errmsg(db));
    rt_store_close(store);
    return rc;
}
