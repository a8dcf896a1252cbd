/* cmd_runs.c - `rtrack runs`: the runs a database holds, or those the filters pick. */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

/* The columns of rt_store_runs(RT_RUNS_TABLE) the CSV shows, in its order. */
static const char *const headers[] = {"id",      "job",  "command", "started", "seconds",
                                      "samples", "exit", "pid",     "status"};
#define NCOLS 9
enum {
    C_ID,
    C_JOB,
    C_CMDLINE,
    C_STARTED,
    C_SECONDS,
    C_SAMPLES,
    C_EXIT,
    C_PID,
    C_STATUS,
    C_MODE,
    C_COMMAND
};

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

/* What the filters ask for. */
enum { ST_FINISHED = 1, ST_FAILED = 2, ST_RUNNING = 4, ST_INTERRUPTED = 8, ST_KILLED = 16 };
struct filter {
    char *job;
    char *external; /* --external-run-id */
    int64_t last;   /* 0: all */
    double since;   /* epoch seconds, NAN: any */
    unsigned mask;  /* ST_*, 0: any */
};

/* runs' options */
struct runs_opts {
    int format; /* 0 table, 1 csv, 2 jsonl */
    struct filter f;
};

static const struct {
    const char *name;
    unsigned bit;
} statuses[] = {{"finished", ST_FINISHED},
                {"failed", ST_FAILED},
                {"running", ST_RUNNING},
                {"interrupted", ST_INTERRUPTED},
                {"killed", ST_KILLED}};

/* --status: a comma-separated list of the words above. */
static int parse_status(const char *s, unsigned *mask)
{
    *mask = 0;
    char *copy = xstrdup(s), *save = NULL;
    int rc = 0;
    for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < RT_ARRAY_LEN(statuses) && strcmp(statuses[i].name, w) != 0)
            i++;
        if (i == RT_ARRAY_LEN(statuses)) {
            rt_err("runs: unknown status '%s' (finished, failed, killed, running or interrupted)",
                   w);
            rc = -1;
            break;
        }
        *mask |= statuses[i].bit;
    }
    free(copy);
    if (rc == 0 && !*mask) {
        rt_err("runs: --status needs a status (finished, failed, killed, running or interrupted)");
        rc = -1;
    }
    return rc;
}

/* --since: a duration back from now ("90s", "30m", "2h", "3d", "1w"; fractions allowed) or a UTC
 * date ("2026-11-27", "2026-11-27T06:00", "2026-11-27 06:00:00Z"). */
static int parse_since(const char *s, double now, double *out)
{
    char *end;
    double v = strtod(s, &end);
    static const struct {
        char unit;
        double secs;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}, {'w', 604800}};
    if (end != s && isfinite(v) && v >= 0 && end[0] && !end[1] && strncmp(s, "-", 1) != 0)
        for (size_t i = 0; i < RT_ARRAY_LEN(units); i++)
            if (end[0] == units[i].unit) {
                *out = now - v * units[i].secs;
                return 0;
            }
    struct tm tm;
    memset(&tm, 0, sizeof(tm));
    const char *rest = strptime(s, "%Y-%m-%d", &tm);
    if (rest && (*rest == 'T' || *rest == ' ')) {
        const char *r2 = strptime(rest + 1, "%H:%M:%S", &tm);
        rest = r2 ? r2 : strptime(rest + 1, "%H:%M", &tm);
    }
    if (rest && *rest == 'Z')
        rest++;
    if (!rest || *rest) {
        rt_err("runs: invalid --since '%s': expected a duration (90s, 30m, 2h, 3d, 1w) or a UTC "
               "date (2026-11-27, 2026-11-27T06:00)",
               s);
        return -1;
    }
    *out = (double)timegm(&tm);
    return 0;
}

/* One run as the table shows it. */
struct row {
    int64_t id, samples;
    char job[256], started[32], wall[32], exitc[32], status[16];
    char *command;
};

/* Which runs the filters keep, in id order: the rows of the table (rt_store_runs), each with the
 * run's start (epoch) and the signal that ended it. */
static struct row *pick(struct rt_store *store, const struct filter *f, size_t *np)
{
    struct rt_store_rows *r = rt_store_runs(store, RT_RUNS_TABLE);
    struct rt_store_rows *m = r ? rt_store_query(store, RT_Q_CLI_RUN_ENDS) : NULL;
    if (!m) {
        rt_store_rows_close(r);
        return NULL;
    }
    struct row *rows = NULL;
    size_t n = 0, cap = 0;
    int step_r, step_m = 1;
    while ((step_r = rt_store_rows_next(r)) == 1 && (step_m = rt_store_rows_next(m)) == 1) {
        int64_t id = rt_store_rows_i(r, C_ID);
        double started = rt_store_rows_f(m, 1);
        int sig = rt_store_rows_type(m, 2) == RT_STORE_NULL ? 0 : (int)rt_store_rows_i(m, 2);
        const char *st = rt_store_rows_t(r, C_STATUS);
        const char *job = rt_store_rows_t(r, C_JOB);
        const char *ext = rt_store_rows_t(m, 3);
        unsigned bit = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(statuses); i++)
            if (st && !strcmp(st, statuses[i].name))
                bit = statuses[i].bit;
        if (sig)
            bit |= ST_KILLED;
        if ((f->job && (!job || strcmp(job, f->job) != 0)) ||
            (f->external && (!ext || strcmp(ext, f->external) != 0)) ||
            (!isnan(f->since) && !(started >= f->since)) || (f->mask && !(f->mask & bit)))
            continue;
        struct row *x = RT_PUSH(rows, n, cap);
        memset(x, 0, sizeof(*x));
        x->id = id;
        x->samples = rt_store_rows_i(r, C_SAMPLES);
        snprintf(x->job, sizeof(x->job), "%s", job ? job : "-");
        snprintf(x->started, sizeof(x->started), "%s", rt_store_rows_t(r, C_STARTED));
        if (rt_store_rows_type(r, C_SECONDS) == RT_STORE_NULL)
            snprintf(x->wall, sizeof(x->wall), "-");
        else
            rt_fmt_duration(x->wall, sizeof(x->wall), rt_store_rows_f(r, C_SECONDS));
        if (sig)
            rt_signal_name(sig, x->exitc, sizeof(x->exitc));
        else
            snprintf(x->exitc, sizeof(x->exitc), "%s", rt_store_rows_t(r, C_EXIT) ?: "-");
        snprintf(x->status, sizeof(x->status), "%s", sig ? "killed" : st ? st : "-");
        /* the command as a shell takes it back: copied from here, it runs the same */
        x->command = rt_fmt_command(rt_store_rows_t(r, C_COMMAND));
        if (!x->command)
            x->command = xasprintf("(%s)", rt_store_rows_t(r, C_MODE));
    }
    rt_store_rows_close(m);
    rt_store_rows_close(r);
    if (step_r < 0 || step_m < 0) { /* a page that cannot be read: no list that looks whole */
        for (size_t i = 0; i < n; i++)
            free(rows[i].command);
        free(rows);
        return NULL;
    }
    /* --last N: the newest N of those */
    if (f->last > 0 && n > (size_t)f->last) {
        size_t drop = n - (size_t)f->last;
        for (size_t i = 0; i < drop; i++)
            free(rows[i].command);
        memmove(rows, rows + drop, (n - drop) * sizeof(*rows));
        n -= drop;
    }
    *np = n;
    return rows ? rows : xcalloc(1, sizeof(*rows));
}

static void print_table(struct row *rows, size_t n, size_t width)
{
    /* the columns before the command: 83 columns */
    printf("%4s  %-16s %-20s %9s %7s %7s %-11s  %s\n", "id", "job", "started", "wall", "samples",
           "exit", "status", "command");
    size_t room = width >= 83 + 12 ? width - 83 : 12; /* a narrow terminal: 12 at least */
    for (size_t i = 0; i < n; i++) {
        struct row *x = &rows[i];
        /* names and commands are the job's: no escape sequences to the terminal, and the
         * column cut and padded by display width (an emoji or a CJK character takes two
         * columns, a combining mark none), not by bytes or code points */
        size_t jw = rt_utf8_printable(x->job, 16);
        size_t len = strlen(x->command);
        char *cmd = xmalloc(len + 8);
        memcpy(cmd, x->command, len + 1);
        if (width)
            rt_fmt_shorten(cmd, len + 8, room);
        else
            rt_utf8_printable(cmd, 0);
        printf("%4lld  %s%*s %-20s %9s %7lld %7s %-11s  %s\n", (long long)x->id, x->job,
               (int)(16 - jw), "", x->started, x->wall, (long long)x->samples, x->exitc, x->status,
               cmd);
        free(cmd);
    }
}

/* The runs kept, as CSV or JSON Lines (their rows of rt_store_runs, in its layout). */
static int print_rows(struct rt_store *store, const struct row *rows, size_t n, int json)
{
    struct rt_map keep;
    rt_map_init(&keep, n + 1);
    for (size_t i = 0; i < n; i++)
        rt_map_put(&keep, (uint64_t)rows[i].id, 1);
    struct rt_store_rows *r = rt_store_runs(store, json ? RT_RUNS_JSON : RT_RUNS_TABLE);
    if (!r) {
        rt_map_free(&keep);
        return -1;
    }
    if (!json) {
        for (int i = 0; i < NCOLS; i++)
            printf("%s%s", i ? "," : "", headers[i]);
        putchar('\n');
    }
    int64_t v;
    int step;
    while ((step = rt_store_rows_next(r)) == 1) {
        if (json) {
            const char *t = rt_store_rows_t(r, 0); /* {"id":N,... */
            const char *p = strchr(t, ':');
            if (p && rt_map_get(&keep, (uint64_t)strtoll(p + 1, NULL, 10), &v))
                printf("%s\n", t);
            continue;
        }
        if (!rt_map_get(&keep, (uint64_t)rt_store_rows_i(r, C_ID), &v))
            continue;
        for (int i = 0; i < NCOLS; i++) {
            if (i)
                putchar(',');
            csv_field(stdout, r, i);
        }
        putchar('\n');
    }
    rt_store_rows_close(r);
    rt_map_free(&keep);
    return step < 0 ? -1 : 0;
}

/* --since WHEN and --status LIST, into the filter */
static int opt_since(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return parse_since(v, (double)ts.tv_sec + ts.tv_nsec / 1e9,
                       &((struct runs_opts *)c->opts)->f.since);
}

static int opt_status(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    return parse_status(v, &((struct runs_opts *)c->opts)->f.mask);
}

static const struct runs_opts runs_defaults = {.f = {NULL, NULL, 0, RT_NAN, 0}};

static const struct rt_opt runs_opts[] = {
    CMD_OPT_DBS,
    CMD_OPT_SLURM_JOB("the runs of this Slurm job only"),
    OPT_ENUM("format", 'f', "table|csv|jsonl",
             "table for people (default), csv or jsonl for programs (jsonl adds the host's GPUs)",
             struct runs_opts, format, "format", "table", "csv", "jsonl|json"),
    OPT_STRING("job", 'j', "NAME", "only the runs of this job name", struct runs_opts, f.job),
    OPT_STRING("external-run-id", 0, "ID", "only the runs recorded with --external-run-id ID",
               struct runs_opts, f.external),
    OPT_INT("last", 'n', "N", "only the newest N runs (of those the other filters keep)",
            struct runs_opts, f.last, 1, (double)INT64_MAX, "a whole number above 0"),
    OPT_CALLBACK("since", 0, "WHEN",
                 "only runs started since WHEN: a duration back from now (90s, 30m, 2h, 3d, 1w) "
                 "or a UTC date (2026-11-27, 2026-11-27T06:00)",
                 opt_since),
    {RT_OPT_ROW("status", 0, "LIST",
                "only runs with one of these statuses, comma-separated: finished, failed (killed "
                "included), killed (by a signal), running, interrupted (the recorder is gone)"),
     .type = RT_OPT_CALLBACK, .fn = opt_status,
     .values =
         (const char *const[]){"finished", "failed", "killed", "running", "interrupted", NULL}},
    OPT_END,
};

static int cmd_runs(struct cmd_ctx *c);

const struct cmd_def cmd_runs_def = {
    .name = "runs",
    .fn = cmd_runs,
    .summary = "list the runs in a database",
    .synopsis = "[--db FILE]... [--slurm-job ID] [--format table|csv|jsonl]\n"
                "[--job NAME] [--external-run-id ID] [--last N] [--since WHEN]\n"
                "[--status LIST]",
    .description = "List the runs a database holds: id, job name, start (UTC), wall time,\n"
                   "samples (after the baseline, as summary and export count them), exit code\n"
                   "or signal, status, and the command quoted as a shell takes it back. The\n"
                   "table fits the terminal's width (COLUMNS) by shortening the commands; a\n"
                   "pipe gets them whole.",
    .opts = runs_opts,
    .opts_size = sizeof(struct runs_opts),
    .defaults = &runs_defaults,
    .db = CMD_DB_READ,
};

static int cmd_runs(struct cmd_ctx *c)
{
    const struct runs_opts *o = c->opts;
    int rc = RT_EXIT_FAILURE;
    size_t n = 0;
    struct row *rows = pick(c->store, &o->f, &n);
    if (!rows || (o->format != 0 && print_rows(c->store, rows, n, o->format == 2) != 0)) {
        rt_err("cannot read database '%s': %s", c->db_path, rt_store_error(c->store));
    } else {
        if (o->format == 0)
            print_table(rows, n, cmd_term_width(c->env));
        rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
    }
    for (size_t i = 0; rows && i < n; i++)
        free(rows[i].command);
    free(rows);
    return rc;
}
