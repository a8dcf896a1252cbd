/* config.c - options of `run` and `record` (and of rtrack as resource-tracker) from the command
 * line, the environment and the TOML file, with one table (rt_config_opts, opt.h's rows) naming
 * each option's flag, variables and TOML key, so the precedence (CLI > env > file > default) and
 * the error messages are the same for all. The command line is read by opt.c's getopt builder,
 * as every command's is. */
#include "rtrack/cli/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/cli/toml.h"
#include "rtrack/export/export.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

static int nonempty(const char *v)
{
    return *v != '\0';
}

static int abs_path(const char *v)
{
    return v[0] == '/';
}

static int http_url(const char *v)
{
    return !strncmp(v, "https://", 8) || !strncmp(v, "http://", 7);
}

static int opt_tag(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val);

#define CFG(f)     offsetof(struct rt_config, f)
#define RUN_RECORD (RT_FACE_RUN | RT_FACE_RECORD)
#define WITH_PID   (RT_FACE_RECORD | RT_FACE_DROPIN)
/* A row's flag, value and help, its variables (RTRACK_VAR, and the Rust tool's TRACKER_VAR: both
 * in docs/usage.md's settings table; where both are set, RTRACK_... wins) and its TOML key. */
#define LIVE(l, s, a, var, tbl, key, h)                                                            \
    RT_OPT_ROW(l, s, a, h), .env = "RTRACK_" var, .env_rust = "TRACKER_" var, .toml_table = tbl,   \
                            .toml_key = key
/* the job's metadata: stored as given (UTF-8: it goes into JSON), '' unsets it */
#define META(l, s, a, var, key, m, h)                                                              \
    {                                                                                              \
        LIVE(l, s, a, var, "job", key, h), .type = RT_OPT_STRING, .off = CFG(meta[m]),             \
                                           .flags = RT_OPT_UTF8 | RT_OPT_EMPTY_NULL                \
    }
/* --format's values, in the order of live_format()'s list */
static const char *const live_formats[] = {"json|jsonl", "csv",        "rust-csv",
                                           "python-csv", "system-csv", NULL};
/* --summary-format's: summary --format's (text, json, markdown: render.h's three) */
static const char *const summary_formats[] = {"text", "json", "markdown|md", NULL};

/* Where the help of resource-tracker says something else (its defaults), its own row follows
 * rtrack's. */
const struct rt_opt rt_config_opts[] = {
    {LIVE("interval", 'i', "SECS", "INTERVAL", "tracker", "interval_secs",
          "seconds between samples, fractions allowed (default 1)"),
     .type = RT_OPT_DOUBLE, .off = CFG(interval), .min = RT_INTERVAL_MIN, .max = RT_INTERVAL_MAX,
     .expect = "seconds between 0.001 and 86400"},
    {LIVE("db", 'd', "FILE", "DB", "tracker", "db", "database to record into (default rtrack.db)"),
     .type = RT_OPT_STRING, .off = CFG(db), .accept = nonempty, .expect = "a file name",
     .faces = RUN_RECORD},
    {LIVE("db", 'd', "FILE", "DB", "tracker", "db",
          "database to record into (default: a temporary one, deleted at exit)"),
     .type = RT_OPT_STRING, .off = CFG(db), .accept = nonempty, .expect = "a file name",
     .faces = RT_FACE_DROPIN},
    {LIVE("config", 'c', "FILE", "CONFIG", NULL, NULL,
          "TOML config file (default rtrack.toml, if present)"),
     .type = RT_OPT_STRING, .off = CFG(config_file), .flags = RT_OPT_FIRST, .faces = RUN_RECORD},
    {LIVE("config", 'c', "FILE", "CONFIG", NULL, NULL,
          "TOML config file (default resource-tracker.toml, if present)"),
     .type = RT_OPT_STRING, .off = CFG(config_file), .flags = RT_OPT_FIRST,
     .faces = RT_FACE_DROPIN},
    {LIVE("quiet", 'q', NULL, "QUIET", "tracker", "quiet",
          "no metric lines (--output is not written) and no end-of-run note"),
     .type = RT_OPT_BOOL, .off = CFG(quiet)},
    {LIVE("summary", 0, NULL, "SUMMARY", "tracker", "summary",
          "print the run's summary (as rtrack summary does) on stdout when the job has ended"),
     .type = RT_OPT_BOOL, .off = CFG(summary), .faces = RT_FACE_RUN},
    {LIVE("summary-format", 0, "FORMAT", "SUMMARY_FORMAT", "tracker", "summary_format",
          "the format of --summary, as rtrack summary --format: text (the default), json or "
          "markdown; implies --summary"),
     .type = RT_OPT_ENUM, .off = CFG(summary_format), .values = summary_formats,
     .faces = RT_FACE_RUN},
    {LIVE("run-id-file", 0, "FILE", "RUN_ID_FILE", "tracker", "run_id_file",
          "write the run's id to FILE (a new file is 0600) as soon as it is known, before the "
          "job starts (default: none)"),
     .type = RT_OPT_STRING, .off = CFG(run_id_file), .accept = nonempty, .expect = "a file name",
     .faces = RUN_RECORD},
    {LIVE("pid", 'p', "PID", "PID", "job", "pid",
          "track this process and its descendants (default: none, the system only)"),
     .type = RT_OPT_INT, .off = CFG(pid), .min = 1, .max = 0x7fffffff, .expect = "a process id",
     .faces = WITH_PID},
    {LIVE("cgroup", 0, "PATH", "CGROUP", "job", "cgroup",
          "with --pid: the job's own cgroup, as /proc/PID/cgroup names it (a Slurm step's: the "
          "SPANK plugin passes it): its processes belong to the tree, its limits are the "
          "allocation, its CPU, peak and OOM kills are recorded (default: none)"),
     .type = RT_OPT_STRING, .off = CFG(cgroup), .accept = abs_path,
     .expect = "a cgroup path starting with /", .faces = RT_FACE_RECORD},
    {LIVE("output", 'o', "FILE", "OUTPUT", "tracker", "output",
          "also write each sample as a line to FILE ('-' = stdout) as it is recorded (default: "
          "none)"),
     .type = RT_OPT_STRING, .off = CFG(output), .accept = nonempty, .expect = "a file name or '-'",
     .faces = RUN_RECORD},
    {LIVE("output", 'o', "FILE", "OUTPUT", "tracker", "output",
          "write each sample as a line to FILE ('-' = stdout) (default: stderr)"),
     .type = RT_OPT_STRING, .off = CFG(output), .accept = nonempty, .expect = "a file name or '-'",
     .faces = RT_FACE_DROPIN},
    {LIVE("format", 'f', "FORMAT", "FORMAT", "tracker", "format",
          "format of --output lines: json (JSON Lines, the default), csv (Python combined CSV; as "
          "resource-tracker: the Rust tool's CSV), rust-csv, python-csv, system-csv (the 21 "
          "SystemTracker columns)"),
     .type = RT_OPT_ENUM, .off = CFG(format), .values = live_formats, .faces = RUN_RECORD},
    {LIVE("format", 'f', "FORMAT", "FORMAT", "tracker", "format",
          "json (JSON Lines, the default), csv (the Rust tool's CSV) or system-csv (the 21 "
          "SystemTracker columns)"),
     .type = RT_OPT_ENUM, .off = CFG(format), .values = live_formats, .faces = RT_FACE_DROPIN},
    {LIVE("duration", 0, "SECS", "DURATION", "tracker", "duration_secs",
          "stop after this many seconds (default: when stopped or the tree is gone)"),
     .type = RT_OPT_DOUBLE, .off = CFG(duration), .min = 0, .max = DBL_MAX,
     .flags = RT_OPT_ABOVE_MIN, .expect = "a positive number of seconds", .faces = WITH_PID},
    {LIVE("upload-interval", 0, "SECS", "UPLOAD_INTERVAL", "sentinel", "upload_interval_secs",
          "with SENTINEL_API_TOKEN set: seconds between uploads of new samples (default 60)"),
     .type = RT_OPT_DOUBLE, .off = CFG(upload_interval), .min = 1, .max = 86400,
     .expect = "seconds, 1 to 86400"},
    /* the Rust tool's name for it is not TRACKER_... */
    {RT_OPT_ROW("sentinel-url", 0, "URL",
                "Sentinel API (default https://api.sentinel.sparecores.net)"),
     .env = "RTRACK_SENTINEL_URL", .env_rust = "SENTINEL_API_URL", .toml_table = "sentinel",
     .toml_key = "api_url", .type = RT_OPT_STRING, .off = CFG(sentinel_url), .accept = http_url,
     .expect = "an http(s):// URL"},
    {LIVE("cloud-discovery", 0, NULL, "CLOUD_DISCOVERY", "tracker", "cloud_discovery",
          "ask the cloud's metadata services for vendor, region and instance type while "
          "recording, stored with the run (default: only when streaming to Sentinel; 0 in the "
          "environment or false in the file: never)"),
     .type = RT_OPT_BOOL, .off = CFG(cloud_discovery)},
    META("job-name", 'n', "NAME", "JOB_NAME", "name", RT_META_JOB_NAME, "job name"),
    META("project-name", 0, "NAME", "PROJECT_NAME", "project_name", RT_META_PROJECT_NAME,
         "project name"),
    META("stage-name", 0, "NAME", "STAGE_NAME", "stage_name", RT_META_STAGE_NAME, "stage name"),
    META("task-name", 0, "NAME", "TASK_NAME", "task_name", RT_META_TASK_NAME, "task name"),
    META("team", 0, "NAME", "TEAM", "team", RT_META_TEAM, "team"),
    META("env", 0, "NAME", "ENV", "env", RT_META_ENV, "environment (prod, staging, ...)"),
    META("language", 0, "NAME", "LANGUAGE", "language", RT_META_LANGUAGE, "language of the job"),
    META("orchestrator", 0, "NAME", "ORCHESTRATOR", "orchestrator", RT_META_ORCHESTRATOR,
         "orchestrator (airflow, slurm, ...)"),
    META("executor", 0, "NAME", "EXECUTOR", "executor", RT_META_EXECUTOR, "executor"),
    META("external-run-id", 0, "ID", "EXTERNAL_RUN_ID", "external_run_id", RT_META_EXTERNAL_RUN_ID,
         "id of the run in another system"),
    META("container-image", 0, "IMAGE", "CONTAINER_IMAGE", "container_image",
         RT_META_CONTAINER_IMAGE, "container image of the job"),
    /* any key of [tags] is a tag */
    {LIVE("tag", 't', "KEY=VALUE", "TAGS", "tags", NULL,
          "tag, repeatable (env: comma-separated list)"),
     .type = RT_OPT_CALLBACK, .fn = opt_tag},
    {RT_OPT_ROW("version", 'V', NULL, "print the version"), .type = RT_OPT_VERSION,
     .faces = RT_FACE_DROPIN},
    OPT_END,
};

/* --format's values (live_formats): what each writes; csv is the Python reference's CSV in
 * rtrack, the Rust tool's as resource-tracker */
static int live_format(int value, int dropin)
{
    static const int formats[] = {RT_LIVE_JSONL, RT_LIVE_PYTHON_CSV, RT_LIVE_RUST_CSV,
                                  RT_LIVE_PYTHON_CSV, RT_LIVE_SYSTEM_CSV};
    if (value == 1 && dropin)
        return RT_LIVE_RUST_CSV;
    if (value == 0 && dropin)
        return RT_LIVE_RUST_JSONL; /* the Rust tool's lines exactly (jsonl.c) */
    return value >= 0 && value < (int)RT_ARRAY_LEN(formats) ? formats[value] : RT_LIVE_JSONL;
}

static unsigned kind_face(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN      ? RT_FACE_RUN
           : kind == RT_CMD_RECORD ? RT_FACE_RECORD
                                   : RT_FACE_DROPIN;
}

static const char *cmd_name(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN ? "run" : kind == RT_CMD_RECORD ? "record" : "resource-tracker";
}

/* run's and record's options: what main.c's shorthands and suggestions know */
static int run_or_record(const struct rt_opt *o)
{
    return (!o->faces || (o->faces & RUN_RECORD)) && o->type != RT_OPT_VERSION;
}

size_t rt_config_option_names(const char **names, size_t max)
{
    size_t n = 0;
    for (const struct rt_opt *o = rt_config_opts; o->name && n < max; o++)
        if (run_or_record(o) && (n == 0 || strcmp(names[n - 1], o->name) != 0))
            names[n++] = o->name;
    return n;
}

int rt_config_is_option(const char *arg)
{
    if (strncmp(arg, "--", 2) == 0) {
        size_t len = strcspn(arg + 2, "=");
        for (const struct rt_opt *o = rt_config_opts; o->name; o++)
            if (run_or_record(o) && strlen(o->name) == len && !strncmp(o->name, arg + 2, len))
                return 1;
        return 0;
    }
    for (const struct rt_opt *o = rt_config_opts; arg[0] == '-' && arg[1] && o->name; o++)
        if (run_or_record(o) && o->short_opt == arg[1])
            return 1;
    return 0;
}

int rt_config_option_takes_value(const char *arg)
{
    for (const struct rt_opt *o = rt_config_opts; o->name; o++) {
        if (!run_or_record(o) || !o->arg)
            continue;
        if ((arg[0] == '-' && arg[1] == '-' && !strcmp(arg + 2, o->name)) ||
            (o->short_opt && arg[0] == '-' && arg[1] == o->short_opt && !arg[2]))
            return 1;
    }
    return 0;
}

const char rt_config_epilog[] =
    "Config file keys: [job] name, pid, project_name, ...; [tracker]\n"
    "interval_secs, db, quiet, summary, summary_format, run_id_file, duration_secs,\n"
    "output, format, cloud_discovery;\n"
    "[sentinel] upload_interval_secs, api_url; [tags] KEY = \"VALUE\".\n"
    "Each RTRACK_... variable also has the Rust tool's name, TRACKER_... (for\n"
    "RTRACK_SENTINEL_URL: SENTINEL_API_URL); RTRACK_... wins where both are set.\n"
    "Precedence: options > environment > config file > defaults.\n"
    "With SENTINEL_API_TOKEN set (environment only), samples are also streamed to\n"
    "Spare Cores Sentinel while recording. See docs/usage.md.\n";

/* --- tags ------------------------------------------------------------------------------------- */

/* A later source's tag replaces an earlier one's of the same key; found by the key's hash, not
 * by a pass over every tag (40 000 [tags] keys were 19 s of it) */
static void tag_set(struct rt_config *cfg, const char *key, size_t klen, const char *value)
{
    uint64_t h = rt_hash_bytes(0, key, klen);
    int64_t at;
    int hit = rt_map_get(&cfg->tag_at, h, &at);
    for (size_t i = hit ? (size_t)at : cfg->ntags; i < cfg->ntags; i++)
        /* (the first of the hash, else, as rare as a shared hash is, any after it) */
        if (strlen(cfg->tags[i].key) == klen && strncmp(cfg->tags[i].key, key, klen) == 0) {
            free(cfg->tags[i].value);
            cfg->tags[i].value = xstrdup(value);
            return;
        }
    if (!hit)
        rt_map_put(&cfg->tag_at, h, (int64_t)cfg->ntags);
    struct rt_tag *t = RT_PUSH(cfg->tags, cfg->ntags, cfg->tags_cap);
    t->key = xstrndup(key, klen);
    t->value = xstrdup(value);
}

/* One tag, whatever its source (--tag, the variables, [tags]), through one check: key and value
 * UTF-8 (tags go into JSON, and a value silently altered would no longer be the one asked for);
 * a key that is not empty, holds no '=' (--tag and the variables split at the first '=', so such
 * a key could come only from the file) and no blank at either end (a key ' b' is another key
 * than 'b', and looks the same in every listing). */
static int tag_add(struct rt_opt_ctx *c, const char *key, size_t klen, const char *value)
{
    char *k = xstrndup(key, klen);
    int rc = rt_opt_check_utf8(c, k, "tag") != 0 || rt_opt_check_utf8(c, value, "tag") != 0;
    if (!rc && (!klen || memchr(k, '=', klen) || isspace((unsigned char)k[0]) ||
                isspace((unsigned char)k[klen - 1]))) {
        rt_err("%sinvalid tag key '%s' in %s: a key is not empty and has no '=' and no blank at "
               "either end",
               c->where, k, c->src);
        rc = 1;
    }
    if (!rc)
        tag_set(c->opts, k, klen, value);
    free(k);
    return rc ? -1 : 0;
}

/* "KEY=VALUE" (or a comma-separated list of them, from a variable: blanks around an item are
 * not part of it, so TRACKER_TAGS='a=1, b=2' is a and b). */
static int tags_add(struct rt_opt_ctx *c, const char *val, int list)
{
    const char *p = val;
    do {
        const char *end = list ? strchr(p, ',') : NULL;
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *s = p;
        while (list && n && isspace((unsigned char)*s))
            s++, n--;
        while (list && n && isspace((unsigned char)s[n - 1]))
            n--;
        char *item = xstrndup(s, n);
        char *eq = strchr(item, '=');
        if (rt_opt_check_utf8(c, item, "tag") != 0) {
            free(item);
            return -1;
        }
        if (!eq) {
            rt_err("%sinvalid tag '%s' in %s: expected KEY=VALUE", c->where, item, c->src);
            free(item);
            return -1;
        }
        int rc = tag_add(c, item, (size_t)(eq - item), eq + 1);
        free(item);
        if (rc != 0)
            return -1;
        p = end ? end + 1 : NULL;
    } while (p);
    return 0;
}

/* --tag KEY=VALUE; RTRACK_TAGS and TRACKER_TAGS a list; in the file, a key of [tags] */
static int opt_tag(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val)
{
    (void)o;
    if (c->from == RT_OPT_FROM_FILE)
        return tag_add(c, c->key, strlen(c->key), val);
    return tags_add(c, val, c->from == RT_OPT_FROM_ENV);
}

/* --- the config file ---------------------------------------------------------------------------
 */

/* One more on a list of what is ignored: "[table]", "'key' in [table]", "'key'". */
static void list_add(struct rt_buf *b, const char *table, const char *key)
{
    char item[512];
    if (!key)
        snprintf(item, sizeof(item), "[%s]", table);
    else if (*table)
        snprintf(item, sizeof(item), "'%s' in [%s]", key, table);
    else
        snprintf(item, sizeof(item), "'%s'", key);
    if (b->len)
        rt_buf_puts(b, ", ");
    rt_buf_puts(b, item);
}

static const char *const toml_tables[] = {"job", "tracker", "sentinel", "tags"};

static int known_table(const char *table)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
        if (strcmp(table, toml_tables[i]) == 0)
            return 1;
    return 0;
}

/* The row a config key sets (NULL: none), this face's first: a key of another face's option is
 * known, and ignored ([job] pid in a file shared with `run`). */
static const struct rt_opt *toml_opt(const char *table, const char *key, unsigned face)
{
    const struct rt_opt *other = NULL;
    for (const struct rt_opt *o = rt_config_opts; o->name; o++)
        if (o->toml_table && strcmp(o->toml_table, table) == 0 &&
            (!o->toml_key || strcmp(o->toml_key, key) == 0)) {
            if (rt_opt_in_face(o, face))
                return o;
            other = other ? other : o;
        }
    return other;
}

int rt_config_suggest_key(const char *table, const char *key, char *out, size_t outlen)
{
    size_t max = RT_ARRAY_LEN(toml_tables), n = 0;
    for (const struct rt_opt *o = rt_config_opts; o->name; o++)
        max++;
    const char **names = xcalloc(max, sizeof(*names));
    if (!table || !known_table(table)) /* a table's name (table NULL), or a key outside any */
        for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
            names[n++] = toml_tables[i];
    else
        for (const struct rt_opt *o = rt_config_opts; o->name; o++)
            if (o->toml_table && o->toml_key && strcmp(o->toml_table, table) == 0)
                names[n++] = o->toml_key;
    int rc = cmd_nearest(key, names, n, "", out, outlen);
    free(names);
    return rc;
}

/* "unknown key 'K' in [T]; did you mean 'KEY'?" (or the tables where a key belongs), without
 * the FILE:LINE: prefix. */
static void unknown_key_text(const char *table, const char *key, char *out, size_t outlen)
{
    char near[256];
    int k;
    if (*table)
        k = snprintf(out, outlen, "unknown key '%s' in [%s]", key, table);
    else
        k = snprintf(out, outlen,
                     "unknown key '%s' (keys belong in [job], [tracker], [sentinel] or [tags])",
                     key);
    if (k > 0 && (size_t)k < outlen && *table &&
        rt_config_suggest_key(table, key, near, sizeof(near)))
        snprintf(out + k, outlen - (size_t)k, "; did you mean %s?", near);
}

/* Config files are strict in rtrack (a typo is an error that names the nearest key); as
 * resource-tracker they are read as the Rust tool reads them: unknown tables and keys are
 * ignored (one warning names them all) and a file that cannot be parsed, or holds a value of
 * the wrong type, is ignored whole (with a warning; the Rust tool says nothing). A value of the
 * right type that is out of range (interval_secs = 0) is an error in both. */
struct toml_read {
    struct rt_config *cfg;
    unsigned face;
    int lax; /* as resource-tracker */
    const char *file;
    struct rt_toml_doc doc;
    struct rt_buf unknown; /* lax: what is ignored (the first IGNORED_LISTED of it) */
    size_t nunknown;
};

/* how much of what is ignored the warning names (300 000 unknown tables made one line of 3 MB) */
#define IGNORED_LISTED 20

static void ignored(struct toml_read *t, const char *table, const char *key)
{
    if (t->nunknown++ < IGNORED_LISTED)
        list_add(&t->unknown, table, key);
}

/* An error, or (lax) a warning that the file is ignored: -1, or 1 (ignored). */
static int toml_bad(const struct toml_read *t, const char *msg)
{
    if (t->lax) {
        rt_warn("%s; the file is ignored", msg);
        return 1;
    }
    rt_err("%s", msg);
    return -1;
}

/* The text as text: the parser reads a C string, so a NUL byte would end the file early and
 * silently drop the rest; TOML files are UTF-8. Both are reported with the line. */
static int toml_check_text(const struct toml_read *t, const char *text, size_t len)
{
    const char *nul = memchr(text, '\0', len);
    size_t end = nul ? (size_t)(nul - text) : len;
    size_t bad = rt_utf8_check(text, end);
    if (bad >= len)
        return 0;
    int line = 1;
    for (size_t i = 0; i < bad; i++)
        line += text[i] == '\n';
    char msg[600];
    snprintf(msg, sizeof(msg), "%s:%d: %s", t->file, line,
             bad < end ? "invalid UTF-8 (a TOML file is UTF-8 text)"
                       : "NUL byte (a TOML file is text)");
    return toml_bad(t, msg);
}

/* Every [table] known (lax: the unknown ones listed). */
static int toml_check_tables(struct toml_read *t)
{
    for (size_t i = 0; i < t->doc.ntables; i++) {
        const struct rt_toml_table *tb = &t->doc.tables[i];
        if (known_table(tb->name))
            continue;
        if (t->lax) {
            ignored(t, tb->name, NULL);
            continue;
        }
        char near[256], mean[300] = "";
        if (rt_config_suggest_key(NULL, tb->name, near, sizeof(near)))
            snprintf(mean, sizeof(mean), "; did you mean %s?", near);
        rt_err("%s:%d: unknown table [%s] (rtrack reads [job], [tracker], [sentinel] and "
               "[tags])%s",
               t->file, tb->line, tb->name, mean);
        return -1;
    }
    return 0;
}

/* The TOML type a row's value is, and how a message says it. */
static int toml_type_ok(const struct rt_opt *o, enum rt_toml_type type, const char **want)
{
    switch (o->type) {
    case RT_OPT_STRING:
    case RT_OPT_ENUM:
        *want = "a string";
        return type == RT_TOML_STRING;
    case RT_OPT_BOOL:
        *want = "a boolean";
        return type == RT_TOML_BOOL;
    case RT_OPT_INT:
        *want = "an integer";
        return type == RT_TOML_INT;
    case RT_OPT_DOUBLE:
        *want = "a number";
        return type == RT_TOML_INT || type == RT_TOML_FLOAT;
    default: /* a tag's value as written */
        *want = "a value";
        return 1;
    }
}

/* One key checked: known (lax: else listed), its value of the row's type. 0, -1 (an error),
 * 1 (lax: the file is ignored). */
static int toml_check_key(struct toml_read *t, const struct rt_toml_kv *e)
{
    char msg[1100], what[512];
    const struct rt_opt *o = toml_opt(e->table, e->key, t->face);
    if (!o) {
        if (t->lax && *e->table && !known_table(e->table))
            return 0; /* an unknown table's keys: the table is listed */
        unknown_key_text(e->table, e->key, what, sizeof(what));
        if (t->lax) {
            ignored(t, e->table, e->key);
            return 0;
        }
        snprintf(msg, sizeof(msg), "%s:%d: %s", t->file, e->line, what);
        return toml_bad(t, msg);
    }
    const char *want;
    if (toml_type_ok(o, e->type, &want))
        return 0;
    snprintf(msg, sizeof(msg), "%s:%d: '%s' must be %s, not %s", t->file, e->line, e->key, want,
             rt_toml_type_name(e->type));
    return toml_bad(t, msg);
}

/* One key applied (an option of another face is ignored), its number as parsed (1_000 is
 * 1000), not as written. */
static int toml_apply_key(const struct toml_read *t, const struct rt_toml_kv *e)
{
    const struct rt_opt *o = toml_opt(e->table, e->key, t->face);
    if (!o || !rt_opt_in_face(o, t->face))
        return 0;
    char where[512], num[64], table[300];
    snprintf(where, sizeof(where), "%s:%d: ", t->file, e->line);
    snprintf(table, sizeof(table), "[%s]", e->table);
    struct rt_opt_ctx c = {.cmd = "",
                           .prefix = "",
                           .face = t->face,
                           .opts = t->cfg,
                           .from = RT_OPT_FROM_FILE,
                           .src = o->toml_key ? e->key : table,
                           .where = where,
                           .key = e->key};
    const char *val = e->str; /* a string; a tag's value as written */
    if (o->type == RT_OPT_CALLBACK || e->type == RT_TOML_STRING)
        return rt_opt_set(&c, o, val);
    if (e->type == RT_TOML_INT)
        snprintf(num, sizeof(num), "%lld", (long long)e->i), val = num;
    else if (e->type == RT_TOML_FLOAT)
        snprintf(num, sizeof(num), "%.17g", e->d), val = num;
    else if (e->type == RT_TOML_BOOL)
        val = e->b ? "1" : "0";
    return rt_opt_set(&c, o, val);
}

/* The file's text applied: first every key checked (a file of the wrong shape is refused, or
 * ignored, whole), then applied. 0 or -1. */
static int apply_toml(struct toml_read *t, const char *text, size_t len)
{
    char err[300];
    int rc = toml_check_text(t, text, len);
    if (rc != 0)
        return rc < 0 ? -1 : 0;
    if (rt_toml_parse(text, &t->doc, err, sizeof(err)) != 0) {
        char msg[700];
        snprintf(msg, sizeof(msg), "%s:%s", t->file, err);
        return toml_bad(t, msg) < 0 ? -1 : 0;
    }
    rc = toml_check_tables(t);
    for (size_t k = 0; k < t->doc.n && rc == 0; k++)
        rc = toml_check_key(t, &t->doc.kv[k]);
    if (rc > 0) { /* lax: ignored whole */
        rt_buf_free(&t->unknown);
        rc = 0;
    } else {
        for (size_t k = 0; k < t->doc.n && rc == 0; k++)
            rc = toml_apply_key(t, &t->doc.kv[k]);
        if (rc == 0 && t->nunknown > IGNORED_LISTED)
            rt_warn("%s: ignoring what resource-tracker does not read either: %s and %zu more",
                    t->file, t->unknown.p, t->nunknown - IGNORED_LISTED);
        else if (rc == 0 && t->unknown.len)
            rt_warn("%s: ignoring what resource-tracker does not read either: %s", t->file,
                    t->unknown.p);
    }
    rt_buf_free(&t->unknown);
    rt_toml_free(&t->doc);
    return rc;
}

/* --- the layers --------------------------------------------------------------------------------
 */

struct load {
    struct rt_config *cfg;
    enum rt_cmd_kind kind;
    unsigned face;
    const char *name;
    const struct rt_opt **cli; /* the command line's options, applied last */
    const char **cli_val;
    size_t ncli;
};

static int set_from(const struct load *l, const struct rt_opt *o, const char *val,
                    enum rt_opt_source from, const char *src)
{
    struct rt_opt_ctx c = {.cmd = l->name,
                           .prefix = "",
                           .face = l->face,
                           .opts = l->cfg,
                           .from = from,
                           .src = src,
                           .where = ""};
    return rt_opt_set(&c, o, val);
}

static void config_defaults(struct rt_config *cfg, enum rt_cmd_kind kind)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->interval = 1.0;
    cfg->upload_interval = 60.0;
    cfg->cloud_discovery = -1;
    cfg->summary_format = -1;
    cfg->dropin = kind == RT_CMD_DROPIN;
}

/* 1. the command line, kept aside until the lower layers are applied (--config, which names
 * one of them, at once); run's job after it. 0, -1 after --help, -2 for --version (the
 * caller's to print as resource-tracker), or RT_EXIT_USAGE after saying why. */
static int read_cli(struct load *l, int argc, char **argv)
{
    struct rt_opt_getopt g;
    rt_opt_getopt_begin(&g, l->name, rt_config_opts, l->face, argc, argv);
    l->cli = xcalloc((size_t)argc + 1, sizeof(*l->cli));
    l->cli_val = xcalloc((size_t)argc + 1, sizeof(*l->cli_val));
    const struct rt_opt *o;
    const char *v;
    int rc = 0, k;
    while (rc == 0 && (k = rt_opt_getopt_next(&g, &o, &v)) != RT_GETOPT_DONE) {
        if (k == RT_GETOPT_BAD) {
            rc = RT_EXIT_USAGE;
        } else if (k == RT_GETOPT_HELP) {
            if (l->kind != RT_CMD_DROPIN)
                cmd_help(l->kind == RT_CMD_RUN ? &cmd_run_def : &cmd_record_def, stdout);
            rc = -1;
        } else if (o->type == RT_OPT_VERSION) {
            rc = -2;
        } else if (o->flags & RT_OPT_FIRST) {
            char src[64];
            snprintf(src, sizeof(src), "--%s", o->name);
            rc = set_from(l, o, v, RT_OPT_FROM_CLI, src) ? RT_EXIT_USAGE : 0;
        } else {
            l->cli[l->ncli] = o;
            l->cli_val[l->ncli++] = v;
        }
    }
    rt_opt_getopt_end(&g);
    if (rc != 0)
        return rc;
    if (l->kind == RT_CMD_RUN && optind >= argc) {
        rt_err("run: no command given (usage: rtrack run [options] -- CMD [ARGS...])");
        return RT_EXIT_USAGE;
    }
    if (l->kind == RT_CMD_RECORD && optind < argc) {
        rt_err("record: unexpected argument '%s' (to run a command use 'rtrack run')",
               argv[optind]);
        return RT_EXIT_USAGE;
    }
    if (optind < argc) { /* run's job; resource-tracker's, when given */
        l->cfg->command = argv + optind;
        l->cfg->ncommand = argc - optind;
    }
    return 0;
}

/* What a config file may be: a regular file of at most 16 MiB. `-c /dev/zero` was read until
 * memory ran out (1.9 GB in 10 s), `-c FIFO` waited forever for a writer, a file of millions of
 * lines held the job back while it was parsed; 16 MiB leaves room for the longest values a
 * config holds (test_hostile.sh: a job name and a tag of 1 MiB each) and parses in well under a
 * second. */
#define CONFIG_MAX_BYTES (16 << 20)
enum { CONFIG_NOT_REGULAR = -100000, CONFIG_TOO_BIG = -100001 };

static const char *file_kind(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a named pipe"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a file";
}

/* The file's text into b, *st its status: its length, -errno, CONFIG_NOT_REGULAR or
 * CONFIG_TOO_BIG. Opened without blocking (a FIFO), checked on the descriptor it reads. */
static ssize_t config_read(const char *file, struct rt_buf *b, struct stat *st)
{
    int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -errno;
    ssize_t rc = 0;
    if (fstat(fd, st) != 0)
        rc = -errno;
    else if (!S_ISREG(st->st_mode))
        rc = CONFIG_NOT_REGULAR;
    else if (st->st_size > CONFIG_MAX_BYTES)
        rc = CONFIG_TOO_BIG;
    rt_buf_reserve(b, rc == 0 ? (size_t)st->st_size + 1 : 1);
    b->len = 0;
    while (rc == 0) {
        /* (one byte more than the cap: a file that grew meanwhile is seen to be too big) */
        if (b->cap - b->len < 2)
            rt_buf_reserve(b,
                           b->cap * 2 > CONFIG_MAX_BYTES + 2 ? CONFIG_MAX_BYTES + 2 : b->cap * 2);
        ssize_t n = read(fd, b->p + b->len, b->cap - b->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        else if (n == 0)
            break;
        else if ((b->len += (size_t)n) > CONFIG_MAX_BYTES)
            rc = CONFIG_TOO_BIG;
    }
    close(fd);
    if (rc != 0) {
        b->len = 0;
        b->p[0] = '\0';
        return rc;
    }
    b->p[b->len] = '\0';
    return (ssize_t)b->len;
}

/* Why config_read() failed, in words. */
static void config_read_error(char *out, size_t n, const char *file, ssize_t rc,
                              const struct stat *st)
{
    if (rc == CONFIG_NOT_REGULAR)
        snprintf(out, n, "cannot read config file '%s': not a regular file (%s)", file,
                 file_kind(st->st_mode));
    else if (rc == CONFIG_TOO_BIG)
        snprintf(out, n,
                 "cannot read config file '%s': larger than %d MiB, more than a config file holds",
                 file, CONFIG_MAX_BYTES >> 20);
    else
        snprintf(out, n, "cannot read config file '%s': %s", file, rt_strerror((int)-rc));
}

/* The config file found in the working directory, not named: obeyed only when it is the
 * user's or root's and nobody else can write it (ssh's rule for its files, git's for a
 * repository's owner). In a shared directory (/tmp, a 1777 scratch space) another user's
 * resource-tracker.toml or rtrack.toml would choose where root's recording goes (output=, db=:
 * a root-owned file truncated). 1, or 0 with the warning in why. */
static int config_trusted(const char *file, const struct stat *st, char *why, size_t n)
{
    uid_t me = geteuid();
    struct stat ln;
    if (lstat(file, &ln) == 0 && S_ISLNK(ln.st_mode) && ln.st_uid != me && ln.st_uid != 0)
        snprintf(why, n,
                 "ignoring config file '%s': it is a symbolic link of user %u, not yours or "
                 "root's (give it with --config to use it)",
                 file, (unsigned)ln.st_uid);
    else if (st->st_uid != me && st->st_uid != 0)
        snprintf(why, n,
                 "ignoring config file '%s': it belongs to user %u, not to you or root (give it "
                 "with --config to use it)",
                 file, (unsigned)st->st_uid);
    else if ((st->st_mode & S_IWOTH) || ((st->st_mode & S_IWGRP) && st->st_gid != getegid()))
        snprintf(why, n,
                 "ignoring config file '%s': others can write it (mode %04o; chmod go-w '%s')",
                 file, (unsigned)(st->st_mode & 07777), file);
    else
        return 1;
    return 0;
}

/* 2. the config file: --config > RTRACK_CONFIG > TRACKER_CONFIG > ./rtrack.toml when present
 * (resource-tracker: ./resource-tracker.toml; a file that is missing is no error there, even
 * when named, as in the Rust tool). cfg->config_file is then the file read (NULL: none). */
static int read_file(struct load *l)
{
    const struct rt_opt *o = rt_config_opts;
    while (o->name && !((o->flags & RT_OPT_FIRST) && rt_opt_in_face(o, l->face)))
        o++;
    char *cli = l->cfg->config_file;
    l->cfg->config_file = NULL;
    const char *env = cli_getenv(o->env);
    if (!env)
        env = cli_getenv(o->env_rust);
    const char *file = cli                        ? cli
                       : env                      ? env
                       : l->kind == RT_CMD_DROPIN ? "resource-tracker.toml"
                                                  : "rtrack.toml";
    struct rt_buf text = {0};
    struct stat st;
    ssize_t tn = config_read(file, &text, &st);
    int rc = 0;
    char why[PATH_MAX + 200];
    if (tn < 0)
        config_read_error(why, sizeof(why), file, tn, &st);
    else if (!cli && !env && !config_trusted(file, &st, why, sizeof(why))) {
        rt_warn("%s", why);
        tn = -ENOENT; /* as if it were not there */
    }
    if (tn < 0 && l->kind == RT_CMD_DROPIN) {
        if (tn != -ENOENT)
            rt_warn("%s; it is ignored", why);
    } else if (tn < 0 && (cli || env || tn != -ENOENT)) {
        rt_err("%s", why);
        rc = -1;
    } else if (tn >= 0) {
        l->cfg->config_file = xstrdup(file);
        struct toml_read t = {
            .cfg = l->cfg, .face = l->face, .lax = l->kind == RT_CMD_DROPIN, .file = file};
        rc = apply_toml(&t, text.p, (size_t)tn);
    }
    rt_buf_free(&text);
    free(cli);
    return rc ? RT_EXIT_USAGE : 0;
}

/* 3. the environment: the Rust tool's names, then rtrack's (which win) */
static int read_env(const struct load *l)
{
    for (int which = 0; which < 2; which++)
        for (const struct rt_opt *o = rt_config_opts; o->name; o++) {
            const char *name = which ? o->env : o->env_rust;
            const char *v = name ? cli_getenv(name) : NULL;
            if (!v || (o->flags & RT_OPT_FIRST) || !rt_opt_in_face(o, l->face))
                continue;
            if (set_from(l, o, v, RT_OPT_FROM_ENV, name) != 0)
                return RT_EXIT_USAGE;
        }
    return 0;
}

/* 4. the command line */
static int apply_cli(const struct load *l)
{
    for (size_t i = 0; i < l->ncli; i++) {
        char src[64];
        snprintf(src, sizeof(src), "--%s", l->cli[i]->name);
        if (set_from(l, l->cli[i], l->cli_val[i], RT_OPT_FROM_CLI, src) != 0)
            return RT_EXIT_USAGE;
    }
    return 0;
}

/* 5. what the options mean together, and the defaults that depend on the command */
static int config_finish(const struct load *l)
{
    struct rt_config *cfg = l->cfg;
    /* --quiet: no metric lines at all (the Rust tool does not even open --output) */
    if (cfg->quiet) {
        free(cfg->output);
        cfg->output = NULL;
    } else if (l->kind == RT_CMD_DROPIN && !cfg->output) {
        cfg->output = xstrdup("/dev/stderr"); /* the Rust tool's sink */
    }
    cfg->output_csv = live_format(cfg->format, cfg->dropin);
    if (!cfg->db && l->kind != RT_CMD_DROPIN)
        cfg->db = xstrdup("rtrack.db");
    if (l->kind == RT_CMD_RECORD && cfg->cgroup && cfg->pid <= 0) {
        rt_err("record: --cgroup needs --pid (the process whose tree it adds to)");
        return RT_EXIT_USAGE;
    }
    if (cfg->summary_format >= 0)
        cfg->summary = 1; /* --summary-format json: the summary, in JSON */
    if (l->kind == RT_CMD_RUN) {
        cfg->pid = 0; /* run tracks the job it starts */
        cfg->duration = 0;
    } else if (l->kind == RT_CMD_RECORD && cfg->pid > 0 && kill((pid_t)cfg->pid, 0) != 0 &&
               errno == ESRCH) {
        rt_err("record: no process with pid %d", (int)cfg->pid);
        return RT_EXIT_USAGE;
    }
    return 0;
}

int rt_config_load(struct rt_config *cfg, enum rt_cmd_kind kind, int argc, char **argv)
{
    config_defaults(cfg, kind);
    struct load l = {.cfg = cfg, .kind = kind, .face = kind_face(kind), .name = cmd_name(kind)};
    int rc = read_cli(&l, argc, argv);
    if (rc == 0)
        rc = read_file(&l);
    if (rc == 0)
        rc = read_env(&l);
    if (rc == 0)
        rc = apply_cli(&l);
    if (rc == 0)
        rc = config_finish(&l);
    free(l.cli);
    free(l.cli_val);
    if (rc != 0)
        rt_config_free(cfg);
    return rc;
}

void rt_config_free(struct rt_config *cfg)
{
    rt_opt_free(rt_config_opts, cfg);
    for (size_t i = 0; i < cfg->ntags; i++) {
        free(cfg->tags[i].key);
        free(cfg->tags[i].value);
    }
    free(cfg->tags);
    rt_map_free(&cfg->tag_at);
    memset(cfg, 0, sizeof(*cfg));
}
