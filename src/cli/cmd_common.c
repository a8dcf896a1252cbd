/* cmd_common.c - helpers the subcommands share. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/summary/render.h"
#include "rtrack/cli/config.h"
#include "rtrack/cli/env.h"
#include "rtrack/collect/collect.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/upload/stream.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"

struct rt_store *cmd_open_store(const struct rt_config *cfg)
{
    struct rt_store *store;
    char err[512];
    if (rt_store_open(cfg->db, RT_STORE_WRITE, &store, err, sizeof(err)) != 0) {
        rt_err("%s", err);
        return NULL;
    }
    return store;
}

char *cmd_argv_json(char **argv, int n)
{
    struct rt_buf b = {0};
    rt_buf_puts(&b, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            rt_buf_puts(&b, ",");
        rt_buf_json_string(&b, argv[i], strlen(argv[i]));
    }
    rt_buf_puts(&b, "]");
    return b.p;
}

void cmd_run_desc(struct rt_run_desc *d, const struct rt_config *cfg, const char *mode,
                  const char *command_json, pid_t pid, const struct rt_host_info *host,
                  const struct rt_sysenv *env)
{
    memset(d, 0, sizeof(*d));
    d->mode = mode;
    d->command_json = command_json;
    d->pid = pid;
    d->interval = cfg->interval;
    d->started_at = rt_clock_s(CLOCK_REALTIME);
    for (int i = 0; i < RT_META_N; i++)
        d->meta[i] = cfg->meta[i];
    d->tags = cfg->tags;
    d->ntags = cfg->ntags;
    d->host = host;
    d->clk_tck = env->clk_tck;
    d->page_size = env->page_size;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = xcalloc(lb + 1, sizeof(*row));
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

/* How far `typed` is from `name`: 0 when it begins `name` (two letters at least: "sum" for
 * summary), else the edit distance. */
static size_t distance(const char *typed, const char *name)
{
    size_t n = strlen(typed);
    if (n >= 2 && strncmp(typed, name, n) == 0)
        return 0;
    return edit_distance(typed, name);
}

int cmd_nearest(const char *typed, const char *const *cands, size_t n, const char *prefix,
                char *out, size_t outlen)
{
    size_t best = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = distance(typed, cands[i]);
        if (d < best)
            best = d;
    }
    size_t len = 0;
    if (outlen)
        out[0] = '\0';
    for (size_t i = 0; i < n && best < 3 && len < outlen; i++) {
        int dup = 0;
        for (size_t j = 0; j < i && !dup; j++)
            dup = strcmp(cands[j], cands[i]) == 0;
        if (dup || distance(typed, cands[i]) != best)
            continue;
        int k = snprintf(out + len, outlen - len, "%s'%s%s'", len ? " or " : "", prefix, cands[i]);
        len += k > 0 ? (size_t)k : 0;
    }
    return len > 0;
}

int cmd_option_error(const char *cmd, int c, char **argv, const struct option *lopts)
{
    if (c == ':') {
        rt_err("%s: option '%s' needs a value", cmd, argv[optind - 1]);
        return RT_EXIT_USAGE;
    }
    /* resource-tracker is a command of its own */
    const char *see = strcmp(cmd, "resource-tracker") ? "rtrack " : "";
    if (optopt > ' ' && optopt < 127) {
        rt_err("%s: unknown option '-%c' (see '%s%s --help')", cmd, optopt, see, cmd);
        return RT_EXIT_USAGE;
    }
    /* a long option: the nearest of the command's (all those equally near, two edits at most) */
    const char *arg = argv[optind - 1];
    char typed[128] = "";
    if (!strncmp(arg, "--", 2))
        snprintf(typed, sizeof(typed), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
    size_t n = 0;
    while (lopts && lopts[n].name)
        n++;
    const char **names = xcalloc(n + 1, sizeof(*names));
    for (size_t i = 0; i < n; i++)
        names[i] = lopts[i].name;
    char near[256];
    if (typed[0] && cmd_nearest(typed, names, n, "--", near, sizeof(near)))
        rt_err("%s: unknown option '%s'; did you mean %s?", cmd, arg, near);
    else
        rt_err("%s: unknown option '%s' (see '%s%s --help')", cmd, arg, see, cmd);
    free(names);
    return RT_EXIT_USAGE;
}

/* The id of `arg` ("latest" or a number) and its start time; 0 after printing why not. */
static int64_t resolve_run(struct rt_store *store, const char *db_path, const char *arg,
                           double *started)
{
    int64_t id = 0, found;
    if (strcmp(arg, "latest") != 0 && (rt_parse_i64(arg, &id) != 0 || id <= 0)) {
        rt_err("invalid run '%s': expected a run id or 'latest'", arg);
        return 0;
    }
    if (rt_store_find_run(store, id, &found, started) != 0) {
        rt_err("cannot read database '%s': %s", db_path, rt_store_error(store));
        return 0;
    }
    if (!found) {
        if (id > 0)
            rt_err("no run %lld in '%s' (see 'rtrack runs')", (long long)id, db_path);
        else
            rt_err("'%s' has no runs yet", db_path);
    }
    return found;
}

int64_t cmd_find_run(const struct cmd_ctx *c, const char *arg, double *started)
{
    return resolve_run(c->store, c->db_path, arg, started);
}

int64_t cmd_find_external_run(struct rt_store *store, const char *db_path, const char *ext,
                              double *started)
{
    struct rt_store_rows *r = rt_store_query(store, RT_Q_CLI_RUNS_BY_EXTERNAL_ID);
    if (!r) {
        rt_err("cannot read database '%s': %s", db_path, rt_store_error(store));
        return 0;
    }
    rt_store_rows_bind_t(r, 1, ext);
    int64_t found = 0, n = 0;
    char ids[160] = "";
    size_t len = 0;
    int step;
    while ((step = rt_store_rows_next(r)) == 1) {
        if (n++ == 0) {
            found = rt_store_rows_i(r, 0);
            if (started)
                *started = rt_store_rows_f(r, 1);
        }
        if (n <= 8 && len < sizeof(ids)) { /* the first eight named */
            int k = snprintf(ids + len, sizeof(ids) - len, "%s%lld", n > 1 ? ", " : "",
                             (long long)rt_store_rows_i(r, 0));
            len += k > 0 ? (size_t)k : 0;
        }
    }
    rt_store_rows_close(r);
    if (step < 0) {
        rt_err("cannot read database '%s': %s", db_path, rt_store_error(store));
        found = 0;
    } else if (n == 0) {
        rt_err("no run with external run id '%s' in '%s' (run and record store it with "
               "--external-run-id; 'rtrack runs --format jsonl' shows each run's)",
               ext, db_path);
    } else if (n > 1) {
        rt_err("%lld runs in '%s' have external run id '%s' (runs %s%s): choose one with --run ID",
               (long long)n, db_path, ext, ids, n > 8 ? ", ..." : "");
        found = 0;
    }
    return found;
}

struct rt_store *cmd_open_db(const char *db_path, enum rt_store_mode mode, const char *run,
                             int64_t *run_id, double *started)
{
    struct rt_store *store;
    char err[600];
    if (rt_store_open(db_path, mode, &store, err, sizeof(err)) != 0) {
        rt_err("%s", err);
        return NULL;
    }
    if (run && !(*run_id = resolve_run(store, db_path, run, started))) {
        rt_store_close(store);
        return NULL;
    }
    return store;
}

/* --- output ----------------------------------------------------------------------------------- */

int cmd_out_open(struct cmd_out *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        o->name = "stdout";
        return 0;
    }
    char err[PATH_MAX + 512];
    if (!(o->file = rt_outfile_open(path, RT_OUT_MODE_REPLACE, err, sizeof(err)))) {
        rt_err("%s", err);
        return -1;
    }
    o->f = rt_outfile_stream(o->file);
    o->name = path;
    return 0;
}

static int stdout_said; /* a failure of stdout was said: not again */

void cmd_out_failed(const struct cmd_out *o, const char *reason)
{
    if (o->file) {
        rt_err("cannot write '%s': %s", o->name, reason);
        return;
    }
    if (!stdout_said)
        rt_err("cannot write to stdout: %s", reason);
    stdout_said = 1;
}

int cmd_out_close(struct cmd_out *o, int ok)
{
    if (!o->file) {
        if (ok)
            return cmd_stdout_check();
        /* what was written goes out; the caller said why it is incomplete */
        if (fflush(stdout) != 0 || ferror(stdout))
            stdout_said = 1;
        return 0;
    }
    char err[PATH_MAX + 512];
    int rc = rt_outfile_close(o->file, ok, err, sizeof(err));
    if (rc != 0)
        rt_err("%s", err);
    o->file = NULL;
    o->f = NULL;
    return rc;
}

int cmd_out_direct(const struct cmd_out *o)
{
    return !o->file || rt_outfile_direct(o->file);
}

/* `p` absolute, its directories' links resolved: realpath() of the whole when follow_last and
 * it exists, else of its directory with the last name added (the file need not exist). NULL
 * when the directory does not resolve either. */
static char *canon_path(const char *p, int follow_last)
{
    char *r;
    if (follow_last && (r = realpath(p, NULL)))
        return r;
    const char *slash = strrchr(p, '/');
    const char *base = slash ? slash + 1 : p;
    if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
        return realpath(p, NULL);
    char *dir = !slash       ? xstrdup(".")
                : slash == p ? xstrdup("/")
                             : xasprintf("%.*s", (int)(slash - p), p);
    char *rd = realpath(dir, NULL);
    free(dir);
    if (!rd)
        return NULL;
    r = xasprintf("%s%s%s", rd, strcmp(rd, "/") ? "/" : "", base);
    free(rd);
    return r;
}

int cmd_out_check_db(const char *cmd, const char *out, const char *db)
{
    if (!db || !*db)
        return 0;
    /* the output as it would be opened (links followed by the same rules); where they lead to
     * nothing yet, where they lead counts: opening the database may create its -wal and -shm
     * there */
    struct rt_out_target t;
    char err[PATH_MAX + 512];
    int bad = rt_out_resolve(out ? out : "-", &t, err, sizeof(err)) != 0;
    struct stat os;
    int have = 0;
    char *ocanon = NULL;
    if (bad) {
        ocanon = t.path ? canon_path(t.path, 0) : NULL;
    } else if (t.kind == RT_OUT_FD) {
        have = fstat(t.fd, &os) == 0 && S_ISREG(os.st_mode); /* stdout into the database */
    } else {
        if (t.have_stat) {
            os = t.st;
            have = 1;
        }
        ocanon = canon_path(t.path, 0);
    }
    rt_out_target_free(&t);

    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    static const char *const what[] = {"the database", "the write-ahead log of the database",
                                       "the shared-memory file of the database",
                                       "the rollback journal of the database"};
    /* SQLite opens a database through a link and keeps -wal and -shm beside the link's target:
     * the path as given, the target and the name beside the link all count */
    char *dbs[3] = {xstrdup(db), canon_path(db, 1), canon_path(db, 0)};
    int hit = -1;
    for (int i = 0; i < 4 && hit < 0; i++)
        for (int k = 0; k < 3 && hit < 0; k++) {
            if (!dbs[k])
                continue;
            char *f = xasprintf("%s%s", dbs[k], suffix[i]);
            struct stat ds;
            if (have && stat(f, &ds) == 0 && ds.st_dev == os.st_dev && ds.st_ino == os.st_ino)
                hit = i;
            else if (k > 0 && ocanon && !strcmp(f, ocanon))
                hit = i;
            free(f);
        }
    for (int k = 0; k < 3; k++)
        free(dbs[k]);
    free(ocanon);
    if (hit < 0)
        return 0;
    if (!out || !strcmp(out, "-"))
        rt_err("%s: stdout is %s '%s'; refusing to write over it", cmd, what[hit], db);
    else
        rt_err("%s: the output '%s' is %s '%s'; refusing to write over it", cmd, out, what[hit],
               db);
    return -1;
}

size_t cmd_term_width(const struct rt_env *env)
{
    int64_t c;
    if (env && env->columns && rt_parse_i64(env->columns, &c) == 0 && c > 0 && c < 100000)
        return (size_t)c;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

int cmd_text_width(const struct rt_env *env)
{
    size_t w = cmd_term_width(env);
    return w ? (int)w : RT_TEXT_WIDTH;
}

int cmd_stdout_check(void)
{
    int e = 0;
    errno = 0;
    if (fflush(stdout) != 0)
        e = errno ? errno : EIO;
    else if (ferror(stdout))
        e = EIO;
    if (!e)
        return 0;
    if (!stdout_said)
        rt_err("cannot write to stdout: %s", rt_strerror(e));
    stdout_said = 1;
    return -1;
}

int cmd_stdout_end(int rc)
{
    if (cmd_stdout_check() != 0 && rc == RT_EXIT_OK)
        rc = RT_EXIT_FAILURE;
    if (rt_threads_left()) {
        fflush(stderr);
        _exit(rc);
    }
    return rc;
}
