/* cmd_export.c - `rtrack export`: a recorded run as the Python reference's CSV (combined,
 * system or process layout) or as the Rust reference's JSON Lines, streamed from the database. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/base/util.h"

static int parse_format(const char *s, enum rt_export_format *f)
{
    if (!strcmp(s, "csv"))
        *f = RT_FMT_CSV;
    else if (!strcmp(s, "jsonl") || !strcmp(s, "json"))
        *f = RT_FMT_JSONL;
    else
        return -1;
    return 0;
}

/* Whether s starts with a date that exists: YYYY-MM-DD with the month's days, and when a time
 * follows (after 'T' or ' '), an hour of 00 to 23. SQLite's date functions check each field on
 * its own (a day up to 31, an hour up to 24) and roll 2026-02-30 over into March; a bare time
 * ("10:00", the year 2000 to SQLite) or "now" is no date of a run either. */
static int real_date(const char *s)
{
    for (int i = 0; i < 10; i++)
        if (i == 4 || i == 7 ? s[i] != '-' : !isdigit((unsigned char)s[i]))
            return 0;
    int y = atoi(s), m = atoi(s + 5), d = atoi(s + 8);
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1)
        return 0;
    int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    if (d > mdays[m - 1] + (m == 2 && leap))
        return 0;
    if ((s[10] == 'T' || s[10] == ' ') && isdigit((unsigned char)s[11]) &&
        isdigit((unsigned char)s[12]) && atoi(s + 11) > 23)
        return 0;
    return 1;
}

/* Epoch seconds, ISO 8601 (through SQLite's date functions), or +SECS after the run's start. */
static int parse_time(struct rt_store *store, const char *s, double run_start, double *out)
{
    if (*s == '+') {
        double d;
        if (!(isdigit((unsigned char)s[1]) || s[1] == '.') || rt_parse_double(s + 1, &d) != 0 ||
            d < 0)
            return -1;
        *out = run_start + d;
        return 0;
    }
    if (rt_parse_double(s, out) == 0)
        return 0;
    if (!real_date(s))
        return -1;
    /* Whole seconds and milliseconds apart: through julianday() a Julian day's double near 2.46e6
     * carries up to 20 us of error, enough to move a sample across a millisecond bound. */
    struct rt_store_rows *r = rt_store_rows_open(
        store, "SELECT CAST(strftime('%s', ?1) AS INTEGER)"
               " + (CAST(round(strftime('%f', ?1) * 1000) AS INTEGER) % 1000) / 1000.0");
    if (!r)
        return -1;
    rt_store_rows_bind_t(r, 1, s);
    int ok = rt_store_rows_next(r) == 1 && rt_store_rows_type(r, 0) != RT_STORE_NULL;
    if (ok)
        *out = rt_store_rows_f(r, 0);
    rt_store_rows_close(r);
    return ok ? 0 : -1;
}

enum { OPT_SINCE = 1, OPT_UNTIL, OPT_SLURM_JOB };

static const struct cmd_opt export_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db); again, or a glob, to read several as one",
     "RTRACK_DB", 'd'},
    {"slurm-job", 0, "ID", "the runs of this Slurm job only", NULL, OPT_SLURM_JOB},
    {"run", 'r', "ID|latest", "run to export (default latest)", NULL, 'r'},
    {"format", 'f', "csv|jsonl", "output format (default csv; json = jsonl)", NULL, 'f'},
    {"table", 't', "combined|system|process", "CSV layout (default combined: 32 columns)", NULL,
     't'},
    {"output", 'o', "FILE", "write to FILE (default: stdout)", NULL, 'o'},
    {"since", 0, "T", "samples at or after T (default: from the start)", NULL, OPT_SINCE},
    {"until", 0, "T", "samples at or before T (default: to the end)", NULL, OPT_UNTIL},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_export(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_export_def = {
    .name = "export",
    .fn = cmd_export,
    .summary = "write a run as Python-parity CSV or Rust-compatible JSON Lines",
    .synopsis = "[options]",
    .description = "Write a recorded run as the Python resource-tracker's CSV or the Rust\n"
                   "resource-tracker's JSON Lines.",
    .opts = export_opts,
    .epilog = "T is epoch seconds, an ISO 8601 date and time (UTC unless it carries an offset),\n"
              "or +SECONDS after the start of the run.\n",
};

static int cmd_export(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path;
    const char *run = "latest", *output = NULL, *since = NULL, *until = NULL, *table = NULL;
    struct rt_export_query q = {RT_FMT_CSV, RT_TABLE_COMBINED, 0, RT_NAN, RT_NAN, 0, 0, 0};
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_export_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        switch (c) {
        case 'd':
            if (cmd_dbs_add("export", v) != 0)
                return RT_EXIT_USAGE;
            break;
        case OPT_SLURM_JOB:
            cmd_dbs_slurm_job(v);
            break;
        case 'r':
            run = v;
            break;
        case 'f':
            if (parse_format(v, &q.format) != 0) {
                rt_err("export: unknown format '%s' (csv or jsonl)", v);
                return RT_EXIT_USAGE;
            }
            break;
        case 't':
            table = v;
            break;
        case 'o':
            output = v;
            break;
        case OPT_SINCE:
            since = v;
            break;
        case OPT_UNTIL:
            until = v;
            break;
        }
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    if (table) {
        if (q.format != RT_FMT_CSV) {
            rt_err("export: --table chooses a CSV layout; JSON Lines has one layout");
            return RT_EXIT_USAGE;
        }
        if (!strcmp(table, "combined"))
            q.table = RT_TABLE_COMBINED;
        else if (!strcmp(table, "system"))
            q.table = RT_TABLE_SYSTEM;
        else if (!strcmp(table, "process"))
            q.table = RT_TABLE_PROCESS;
        else {
            rt_err("export: unknown table '%s' (combined, system or process)", table);
            return RT_EXIT_USAGE;
        }
    }

    /* an output that is the database (or its -wal, -shm, -journal) would destroy it */
    if (!(db_path = cmd_dbs_path("export", env)))
        return RT_EXIT_USAGE;
    if (cmd_out_check_db("export", output, db_path) != 0)
        return RT_EXIT_USAGE;

    double started = 0;
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, run, &q.run_id, &started);
    if (!store)
        return RT_EXIT_USAGE;
    int rc = RT_EXIT_USAGE;
    char err[600];
    if (since && parse_time(store, since, started, &q.since) != 0) {
        rt_err("export: invalid time '%s' for --since", since);
        goto out;
    }
    if (until && parse_time(store, until, started, &q.until) != 0) {
        rt_err("export: invalid time '%s' for --until", until);
        goto out;
    }
    if (!isnan(q.since) && !isnan(q.until) && q.since > q.until) {
        rt_err("export: --since %s is after --until %s", since, until);
        goto out;
    }
    err[0] = '\0';
    struct rt_exporter *x = rt_exporter_open(store, &q, err, sizeof(err));
    if (!x) {
        rt_err("%s", err);
        rc = RT_EXIT_FAILURE;
        goto out;
    }
    /* one read snapshot: a recorder writing meanwhile is not seen half-way */
    rt_store_read_begin(store);
    struct cmd_out o;
    rc = RT_EXIT_FAILURE;
    if (cmd_out_open(&o, output) == 0) {
        int64_t n = -1;
        errno = 0;
        if (rt_exporter_header(x, o.f) != 0)
            cmd_out_failed(&o, rt_strerror(errno ? errno : EIO));
        else if ((n = rt_exporter_rows(x, o.f, err, sizeof(err))) == -2)
            cmd_out_failed(&o, err);
        else if (n == -1) { /* the rows end early: say where, and what became of the output */
            if (!cmd_out_direct(&o))
                rt_err("export: %s; '%s' was not written", err, o.name);
            else if (!o.file)
                rt_err("export: %s; the output on stdout ends there, incomplete", err);
            else
                rt_err("export: %s; the output in '%s' ends there, incomplete", err, o.name);
        }
        int ok = n >= 0;
        if (cmd_out_close(&o, ok) == 0 && ok)
            rc = RT_EXIT_OK;
    }
    rt_store_read_end(store);
    rt_exporter_close(x);
out:
    rt_store_close(store);
    return rc;
}
