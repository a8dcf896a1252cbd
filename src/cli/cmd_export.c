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
    const unsigned forms = CMD_TIME_EPOCH | CMD_TIME_AFTER;
    if (o->since && cmd_parse_time(o->since, forms, 0, c->started, &q->since) != 0) {
        rt_err("export: invalid time '%s' for --since", o->since);
        return -1;
    }
    if (o->until && cmd_parse_time(o->until, forms, 0, c->started, &q->until) != 0) {
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
        o->format, o->table < 0 ? RT_TABLE_COMBINED : o->table, c->run_id, RT_NAN, RT_NAN, 0, 0, 0,
        0};
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
