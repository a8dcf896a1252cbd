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
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/base/util.h"

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
    /* through SQLite's date functions (sql/queries/cli.sql: why in two parts) */
    struct rt_store_rows *r = rt_store_query(store, RT_Q_CLI_EPOCH);
    if (!r)
        return -1;
    rt_store_rows_bind_t(r, 1, s);
    int ok = rt_store_rows_next(r) == 1 && rt_store_rows_type(r, 0) != RT_STORE_NULL;
    if (ok)
        *out = rt_store_rows_f(r, 0);
    rt_store_rows_close(r);
    return ok ? 0 : -1;
}

struct export_opts {
    int format; /* enum rt_export_format */
    int table;  /* enum rt_export_table; -1: not given */
    char *output, *since, *until;
};

static const struct export_opts export_defaults = {.format = RT_FMT_CSV, .table = -1};

static const struct rt_opt export_opts[] = {
    CMD_OPT_DBS,
    CMD_OPT_SLURM_JOB("the runs of this Slurm job only"),
    CMD_OPT_RUN("run to export (default latest)"),
    CMD_OPT_EXTERNAL_RUN_ID,
    OPT_ENUM("format", 'f', "csv|jsonl", "output format (default csv; json = jsonl)",
             struct export_opts, format, "format", "csv", "jsonl|json"),
    OPT_ENUM("table", 't', "combined|system|process", "CSV layout (default combined: 32 columns)",
             struct export_opts, table, "table", "combined", "system", "process"),
    OPT_STRING("output", 'o', "FILE", "write to FILE (default: stdout)", struct export_opts,
               output),
    OPT_STRING("since", 0, "T", "samples at or after T (default: from the start)",
               struct export_opts, since),
    OPT_STRING("until", 0, "T", "samples at or before T (default: to the end)", struct export_opts,
               until),
    OPT_END,
};

static int export_check(struct cmd_ctx *c);
static int cmd_export(struct cmd_ctx *c);

const struct cmd_def cmd_export_def = {
    .name = "export",
    .fn = cmd_export,
    .summary = "write a run as Python-parity CSV or Rust-compatible JSON Lines",
    .synopsis = "[options]",
    .description = "Write a recorded run as the Python resource-tracker's CSV or the Rust\n"
                   "resource-tracker's JSON Lines.",
    .opts = export_opts,
    .opts_size = sizeof(struct export_opts),
    .defaults = &export_defaults,
    .check = export_check,
    .db = CMD_DB_READ,
    .db_flags = CMD_DB_RUN | CMD_DB_OUTPUT,
    .epilog = "T is epoch seconds, an ISO 8601 date and time (UTC unless it carries an offset),\n"
              "or +SECONDS after the start of the run.\n",
};

static int export_check(struct cmd_ctx *c)
{
    const struct export_opts *o = c->opts;
    if (o->table >= 0 && o->format != RT_FMT_CSV) {
        rt_err("export: --table chooses a CSV layout; JSON Lines has one layout");
        return RT_EXIT_USAGE;
    }
    c->output = o->output;
    return 0;
}

/* --since and --until, which may be +SECS after the run's start, into q */
static int export_window(const struct cmd_ctx *c, struct rt_export_query *q)
{
    const struct export_opts *o = c->opts;
    if (o->since && parse_time(c->store, o->since, c->started, &q->since) != 0) {
        rt_err("export: invalid time '%s' for --since", o->since);
        return -1;
    }
    if (o->until && parse_time(c->store, o->until, c->started, &q->until) != 0) {
        rt_err("export: invalid time '%s' for --until", o->until);
        return -1;
    }
    if (!isnan(q->since) && !isnan(q->until) && q->since > q->until) {
        rt_err("export: --since %s is after --until %s", o->since, o->until);
        return -1;
    }
    return 0;
}

/* The rows of x written to the output; an exit code. */
static int export_write(struct rt_exporter *x, const char *output)
{
    char err[600];
    struct cmd_out o;
    if (cmd_out_open(&o, output) != 0)
        return RT_EXIT_FAILURE;
    int64_t n = -1;
    errno = 0;
    err[0] = '\0';
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
    return cmd_out_close(&o, ok) == 0 && ok ? RT_EXIT_OK : RT_EXIT_FAILURE;
}

static int cmd_export(struct cmd_ctx *c)
{
    const struct export_opts *o = c->opts;
    struct rt_export_query q = {
        o->format, o->table < 0 ? RT_TABLE_COMBINED : o->table, c->run_id, RT_NAN, RT_NAN, 0, 0, 0};
    if (export_window(c, &q) != 0)
        return RT_EXIT_USAGE;
    char err[600] = "";
    struct rt_exporter *x = rt_exporter_open(c->store, &q, err, sizeof(err));
    if (!x) {
        rt_err("%s", err);
        return RT_EXIT_FAILURE;
    }
    /* one read snapshot: a recorder writing meanwhile is not seen half-way */
    rt_store_read_begin(c->store);
    int rc = export_write(x, o->output);
    rt_store_read_end(c->store);
    rt_exporter_close(x);
    return rc;
}
