/* cmd_export.c - `rtrack export`: a recorded run as the Python reference's CSV (combined,
 * system or process layout) or as the Rust reference's JSON Lines, streamed from the database. */
#include <errno.h>
#include <getopt.h>
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

static void usage(FILE *out)
{
    fprintf(out,
            "usage: rtrack export [options]\n\n"
            "Write a recorded run as the Python resource-tracker's CSV or the Rust\n"
            "resource-tracker's JSON Lines.\n\noptions:\n"
            "  -d, --db FILE              database (default rtrack.db) [env RTRACK_DB]\n"
            "  -r, --run ID|latest        run to export (default latest)\n"
            "  -f, --format csv|jsonl     output format (default csv; json = jsonl)\n"
            "  -t, --table combined|system|process\n"
            "                             CSV layout (default combined: 32 columns)\n"
            "  -o, --output FILE          write to FILE (default: stdout)\n"
            "      --since T              samples at or after T (default: from the start)\n"
            "      --until T              samples at or before T (default: to the end)\n"
            "  -h, --help                 show this help\n\n"
            "T is epoch seconds, an ISO 8601 date and time (UTC unless it carries an offset),\n"
            "or +SECONDS after the start of the run.\n");
}

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

/* Epoch seconds, ISO 8601 (through SQLite's date functions), or +SECS after the run's start. */
static int parse_time(struct rt_store *store, const char *s, double run_start, double *out)
{
    if (*s == '+') {
        double d;
        if (rt_parse_double(s + 1, &d) != 0 || d < 0)
            return -1;
        *out = run_start + d;
        return 0;
    }
    if (rt_parse_double(s, out) == 0)
        return 0;
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

int cmd_export(int argc, char **argv, const struct rt_env *env)
{
    static const struct option lopts[] = {
        {"db", required_argument, NULL, 'd'},
        {"run", required_argument, NULL, 'r'},
        {"format", required_argument, NULL, 'f'},
        {"table", required_argument, NULL, 't'},
        {"output", required_argument, NULL, 'o'},
        {"since", required_argument, NULL, 1},
        {"until", required_argument, NULL, 2},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *db_path = rt_env_db(env);
    const char *run = "latest", *output = NULL, *since = NULL, *until = NULL, *table = NULL;
    struct rt_export_query q = {RT_FMT_CSV, RT_TABLE_COMBINED, 0, RT_NAN, RT_NAN, 0, 0, 0};
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+:d:r:f:t:o:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            db_path = optarg;
            break;
        case 'r':
            run = optarg;
            break;
        case 'f':
            if (parse_format(optarg, &q.format) != 0) {
                rt_err("export: unknown format '%s' (csv or jsonl)", optarg);
                return RT_EXIT_USAGE;
            }
            break;
        case 't':
            table = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 1:
            since = optarg;
            break;
        case 2:
            until = optarg;
            break;
        case 'h':
            usage(stdout);
            return RT_EXIT_OK;
        default:
            return cmd_option_error("export", c, argv);
        }
    }
    if (optind < argc) {
        rt_err("export: unexpected argument '%s'", argv[optind]);
        return RT_EXIT_USAGE;
    }
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
        int ok = rt_exporter_header(x, o.f) == 0 && rt_exporter_rows(x, o.f, err, sizeof(err)) >= 0;
        if (!ok)
            rt_err("export: %s", err[0] ? err : "cannot write the output");
        if (cmd_out_close(&o, ok) == 0 && ok)
            rc = RT_EXIT_OK;
    }
    rt_store_read_end(store);
    rt_exporter_close(x);
out:
    rt_store_close(store);
    return rc;
}
