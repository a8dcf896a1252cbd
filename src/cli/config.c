/* config.c - options of `run` and `record` from the command line, the environment and the TOML
 * file, with one table naming each option's flag, environment variable and TOML key, so the
 * precedence (CLI > env > file > default) and the error messages are the same for all. */
#include "rtrack/cli/config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/cli/toml.h"
#include "rtrack/export/export.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

enum opt_type {
    OT_INTERVAL,
    OT_DURATION,
    OT_UPLOAD_INTERVAL,
    OT_API_URL,
    OT_DB,
    OT_QUIET,
    OT_SUMMARY,
    OT_CLOUD,
    OT_PID,
    OT_META,
    OT_TAG,
    OT_OUTPUT,
    OT_FORMAT,
    OT_CONFIG,
    OT_HELP,
    OT_VERSION
};

#define FOR_RUN    1u
#define FOR_RECORD 2u
#define FOR_DROPIN 4u /* rtrack as resource-tracker (argv[0]) */
#define FOR_BOTH   3u
#define FOR_ALL    7u

/* Each option's two variables: `env` the Rust tool's name (TRACKER_..., SENTINEL_API_URL) and
 * `env2` rtrack's (RTRACK_...); where both are set, RTRACK_... wins. docs/usage.md's settings
 * table lists them. */
struct opt {
    const char *name;
    int short_opt;
    const char *arg; /* metavariable, NULL for flags */
    const char *env, *env2;
    const char *table, *key; /* TOML location */
    enum opt_type type;
    int meta;
    unsigned cmds;
    const char *help;
};

static const struct opt opts[] = {
    {"interval", 'i', "SECS", "TRACKER_INTERVAL", "RTRACK_INTERVAL", "tracker", "interval_secs",
     OT_INTERVAL, 0, FOR_ALL, "seconds between samples, fractions allowed (default 1)"},
    {"db", 'd', "FILE", "TRACKER_DB", "RTRACK_DB", "tracker", "db", OT_DB, 0, FOR_ALL,
     "database to record into (default rtrack.db)"},
    {"config", 'c', "FILE", "TRACKER_CONFIG", "RTRACK_CONFIG", NULL, NULL, OT_CONFIG, 0, FOR_ALL,
     "TOML config file (default rtrack.toml, if present)"},
    {"quiet", 'q', NULL, "TRACKER_QUIET", "RTRACK_QUIET", "tracker", "quiet", OT_QUIET, 0, FOR_ALL,
     "no metric lines (--output is not written) and no end-of-run note"},
    {"summary", 0, NULL, "TRACKER_SUMMARY", "RTRACK_SUMMARY", "tracker", "summary", OT_SUMMARY, 0,
     FOR_RUN, "print the run's summary (as rtrack summary does) on stdout when the job has ended"},
    {"pid", 'p', "PID", "TRACKER_PID", "RTRACK_PID", "job", "pid", OT_PID, 0,
     FOR_RECORD | FOR_DROPIN,
     "track this process and its descendants (default: none, the system only)"},
    {"output", 'o', "FILE", "TRACKER_OUTPUT", "RTRACK_OUTPUT", "tracker", "output", OT_OUTPUT, 0,
     FOR_ALL,
     "also write each sample as a line to FILE ('-' = stdout) as it is recorded (default: "
     "none)"},
    {"format", 'f', "FORMAT", "TRACKER_FORMAT", "RTRACK_FORMAT", "tracker", "format", OT_FORMAT, 0,
     FOR_ALL,
     "format of --output lines: json (JSON Lines, the default), csv (Python combined CSV; as "
     "resource-tracker: the Rust tool's CSV), rust-csv, python-csv, system-csv (the 21 "
     "SystemTracker columns)"},
    {"duration", 0, "SECS", "TRACKER_DURATION", "RTRACK_DURATION", "tracker", "duration_secs",
     OT_DURATION, 0, FOR_RECORD | FOR_DROPIN,
     "stop after this many seconds (default: when stopped or the tree is gone)"},
    {"upload-interval", 0, "SECS", "TRACKER_UPLOAD_INTERVAL", "RTRACK_UPLOAD_INTERVAL", "sentinel",
     "upload_interval_secs", OT_UPLOAD_INTERVAL, 0, FOR_ALL,
     "with SENTINEL_API_TOKEN set: seconds between uploads of new samples (default 60)"},
    {"sentinel-url", 0, "URL", "SENTINEL_API_URL", "RTRACK_SENTINEL_URL", "sentinel", "api_url",
     OT_API_URL, 0, FOR_ALL, "Sentinel API (default https://api.sentinel.sparecores.net)"},
    {"cloud-discovery", 0, NULL, "TRACKER_CLOUD_DISCOVERY", "RTRACK_CLOUD_DISCOVERY", "tracker",
     "cloud_discovery", OT_CLOUD, 0, FOR_ALL,
     "ask the cloud's metadata services for vendor, region and instance type while recording, "
     "stored with the run (default: only when streaming to Sentinel; 0 in the environment or "
     "false in the file: never)"},
    {"job-name", 'n', "NAME", "TRACKER_JOB_NAME", "RTRACK_JOB_NAME", "job", "name", OT_META,
     RT_META_JOB_NAME, FOR_ALL, "job name"},
    {"project-name", 0, "NAME", "TRACKER_PROJECT_NAME", "RTRACK_PROJECT_NAME", "job",
     "project_name", OT_META, RT_META_PROJECT_NAME, FOR_ALL, "project name"},
    {"stage-name", 0, "NAME", "TRACKER_STAGE_NAME", "RTRACK_STAGE_NAME", "job", "stage_name",
     OT_META, RT_META_STAGE_NAME, FOR_ALL, "stage name"},
    {"task-name", 0, "NAME", "TRACKER_TASK_NAME", "RTRACK_TASK_NAME", "job", "task_name", OT_META,
     RT_META_TASK_NAME, FOR_ALL, "task name"},
    {"team", 0, "NAME", "TRACKER_TEAM", "RTRACK_TEAM", "job", "team", OT_META, RT_META_TEAM,
     FOR_ALL, "team"},
    {"env", 0, "NAME", "TRACKER_ENV", "RTRACK_ENV", "job", "env", OT_META, RT_META_ENV, FOR_ALL,
     "environment (prod, staging, ...)"},
    {"language", 0, "NAME", "TRACKER_LANGUAGE", "RTRACK_LANGUAGE", "job", "language", OT_META,
     RT_META_LANGUAGE, FOR_ALL, "language of the job"},
    {"orchestrator", 0, "NAME", "TRACKER_ORCHESTRATOR", "RTRACK_ORCHESTRATOR", "job",
     "orchestrator", OT_META, RT_META_ORCHESTRATOR, FOR_ALL, "orchestrator (airflow, slurm, ...)"},
    {"executor", 0, "NAME", "TRACKER_EXECUTOR", "RTRACK_EXECUTOR", "job", "executor", OT_META,
     RT_META_EXECUTOR, FOR_ALL, "executor"},
    {"external-run-id", 0, "ID", "TRACKER_EXTERNAL_RUN_ID", "RTRACK_EXTERNAL_RUN_ID", "job",
     "external_run_id", OT_META, RT_META_EXTERNAL_RUN_ID, FOR_ALL,
     "id of the run in another system"},
    {"container-image", 0, "IMAGE", "TRACKER_CONTAINER_IMAGE", "RTRACK_CONTAINER_IMAGE", "job",
     "container_image", OT_META, RT_META_CONTAINER_IMAGE, FOR_ALL, "container image of the job"},
    {"tag", 't', "KEY=VALUE", "TRACKER_TAGS", "RTRACK_TAGS", "tags", NULL, OT_TAG, 0, FOR_ALL,
     "tag, repeatable (env: comma-separated list)"},
    {"help", 'h', NULL, NULL, NULL, NULL, NULL, OT_HELP, 0, FOR_ALL, "show this help"},
    {"version", 'V', NULL, NULL, NULL, NULL, NULL, OT_VERSION, 0, FOR_DROPIN, "print the version"},
};

static unsigned cmd_bit(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN ? FOR_RUN : kind == RT_CMD_RECORD ? FOR_RECORD : FOR_DROPIN;
}

static const char *cmd_name(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN ? "run" : kind == RT_CMD_RECORD ? "record" : "resource-tracker";
}

/* The options of run or record, as their --help lists them (cmd_help: src/cli/help.c), --help
 * itself last, as for every command. */
static void print_opts(enum rt_cmd_kind kind, FILE *out)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++) {
        const struct opt *o = &opts[i];
        if (!(o->cmds & cmd_bit(kind)) || o->type == OT_HELP || o->type == OT_VERSION)
            continue;
        /* rtrack's variable, the epilog names the other (TRACKER_..., SENTINEL_API_URL);
         * resource-tracker's help the Rust tool's names, and its own defaults */
        const char *help = o->help;
        if (kind == RT_CMD_DROPIN && o->type == OT_DB)
            help = "database to record into (default: a temporary one, deleted at exit)";
        else if (kind == RT_CMD_DROPIN && o->type == OT_CONFIG)
            help = "TOML config file (default resource-tracker.toml, if present)";
        else if (kind == RT_CMD_DROPIN && o->type == OT_OUTPUT)
            help = "write each sample as a line to FILE ('-' = stdout) (default: stderr)";
        else if (kind == RT_CMD_DROPIN && o->type == OT_FORMAT)
            help = "json (JSON Lines, the default), csv (the Rust tool's CSV) or system-csv (the "
                   "21 SystemTracker columns)";
        cmd_help_opt(out, o->short_opt, o->name, o->arg, help,
                     kind == RT_CMD_DROPIN ? o->env : o->env2);
    }
    cmd_help_opt(out, 'h', "help", NULL, "show this help", NULL);
    if (kind == RT_CMD_DROPIN)
        cmd_help_opt(out, 'V', "version", NULL, "print the version", NULL);
}

void rt_config_print_dropin_opts(FILE *out)
{
    print_opts(RT_CMD_DROPIN, out);
}

size_t rt_config_option_names(const char **names, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(opts) && n < max; i++)
        if ((opts[i].cmds & FOR_BOTH) && opts[i].type != OT_HELP)
            names[n++] = opts[i].name;
    return n;
}

int rt_config_is_option(const char *arg)
{
    if (strncmp(arg, "--", 2) == 0) {
        size_t len = strcspn(arg + 2, "=");
        for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++)
            if ((opts[i].cmds & FOR_BOTH) && opts[i].type != OT_HELP &&
                strlen(opts[i].name) == len && !strncmp(opts[i].name, arg + 2, len))
                return 1;
        return 0;
    }
    for (size_t i = 0; arg[0] == '-' && arg[1] && i < RT_ARRAY_LEN(opts); i++)
        if ((opts[i].cmds & FOR_BOTH) && opts[i].type != OT_HELP && opts[i].short_opt == arg[1])
            return 1;
    return 0;
}

void rt_config_print_run_opts(FILE *out)
{
    print_opts(RT_CMD_RUN, out);
}

void rt_config_print_record_opts(FILE *out)
{
    print_opts(RT_CMD_RECORD, out);
}

const char rt_config_epilog[] =
    "Config file keys: [job] name, pid, project_name, ...; [tracker]\n"
    "interval_secs, db, quiet, duration_secs, output, format, cloud_discovery;\n"
    "[sentinel] upload_interval_secs, api_url; [tags] KEY = \"VALUE\".\n"
    "Each RTRACK_... variable also has the Rust tool's name, TRACKER_... (for\n"
    "RTRACK_SENTINEL_URL: SENTINEL_API_URL); RTRACK_... wins where both are set.\n"
    "Precedence: options > environment > config file > defaults.\n"
    "With SENTINEL_API_TOKEN set (environment only), samples are also streamed to\n"
    "Spare Cores Sentinel while recording. See docs/usage.md.\n";

/* Job metadata and tags go into JSON (export, runs, summary, the Sentinel API), which must be
 * UTF-8: a value that is not is refused rather than stored altered (a job name that silently
 * became another would no longer match `summary --job`). The value itself is not echoed. */
static int check_utf8(const char *val, const char *what, const char *src, const char *where)
{
    size_t n = strlen(val), bad = rt_utf8_check(val, n);
    if (bad == n)
        return 0;
    rt_err("%sinvalid %s for %s: not valid UTF-8 (byte %zu is 0x%02x)", where, what, src, bad + 1,
           (unsigned char)val[bad]);
    return -1;
}

static void tag_set(struct rt_config *cfg, const char *key, size_t klen, const char *value)
{
    for (size_t i = 0; i < cfg->ntags; i++)
        if (strlen(cfg->tags[i].key) == klen && strncmp(cfg->tags[i].key, key, klen) == 0) {
            free(cfg->tags[i].value);
            cfg->tags[i].value = xstrdup(value);
            return;
        }
    cfg->tags = xrealloc(cfg->tags, (cfg->ntags + 1) * sizeof(*cfg->tags));
    cfg->tags[cfg->ntags].key = xstrndup(key, klen);
    cfg->tags[cfg->ntags].value = xstrdup(value);
    cfg->ntags++;
}

/* One tag, whatever its source (--tag, TRACKER_TAGS, [tags]), through one check: key and value
 * UTF-8; a key that is not empty, holds no '=' (--tag and TRACKER_TAGS split at the first '=',
 * so such a key could come only from the file) and no blank at either end (a key ' b' is
 * another key than 'b', and looks the same in every listing). */
static int tag_add(struct rt_config *cfg, const char *key, size_t klen, const char *value,
                   const char *src, const char *where)
{
    char *k = xstrndup(key, klen);
    int rc = check_utf8(k, "tag", src, where) != 0 || check_utf8(value, "tag", src, where) != 0;
    if (!rc && (!klen || memchr(k, '=', klen) || isspace((unsigned char)k[0]) ||
                isspace((unsigned char)k[klen - 1]))) {
        rt_err("%sinvalid tag key '%s' in %s: a key is not empty and has no '=' and no blank at "
               "either end",
               where, k, src);
        rc = 1;
    }
    if (!rc)
        tag_set(cfg, k, klen, value);
    free(k);
    return rc ? -1 : 0;
}

/* "KEY=VALUE" (or a comma-separated list of them, from the environment: blanks around an item
 * are not part of it, so TRACKER_TAGS='a=1, b=2' is a and b). */
static int tags_add(struct rt_config *cfg, const char *val, int list, const char *src,
                    const char *where)
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
        if (check_utf8(item, "tag", src, where) != 0) {
            free(item);
            return -1;
        }
        if (!eq) {
            rt_err("%sinvalid tag '%s' in %s: expected KEY=VALUE", where, item, src);
            free(item);
            return -1;
        }
        int rc = tag_add(cfg, item, (size_t)(eq - item), eq + 1, src, where);
        free(item);
        if (rc != 0)
            return -1;
        p = end ? end + 1 : NULL;
    } while (p);
    return 0;
}

/* Apply one option value from any source. `src` names the option as the user wrote it
 * (--interval, RTRACK_INTERVAL, interval_secs), `where` is "FILE:LINE: " for the config file. */
static int opt_apply(struct rt_config *cfg, const struct opt *o, const char *val, const char *src,
                     const char *where)
{
    double d;
    int64_t i;
    int b;
    switch (o->type) {
    case OT_INTERVAL:
        if (rt_parse_double(val, &d) != 0 || d < RT_INTERVAL_MIN || d > RT_INTERVAL_MAX) {
            rt_err("%sinvalid value '%s' for %s: expected seconds between %g and %g", where, val,
                   src, RT_INTERVAL_MIN, RT_INTERVAL_MAX);
            return -1;
        }
        cfg->interval = d;
        return 0;
    case OT_DURATION:
        if (rt_parse_double(val, &d) != 0 || d <= 0) {
            rt_err("%sinvalid value '%s' for %s: expected a positive number of seconds", where, val,
                   src);
            return -1;
        }
        cfg->duration = d;
        return 0;
    case OT_UPLOAD_INTERVAL:
        if (rt_parse_double(val, &d) != 0 || d < 1 || d > 86400) {
            rt_err("%sinvalid value '%s' for %s: expected seconds, 1 to 86400", where, val, src);
            return -1;
        }
        cfg->upload_interval = d;
        return 0;
    case OT_API_URL:
        if (strncmp(val, "https://", 8) != 0 && strncmp(val, "http://", 7) != 0) {
            rt_err("%sinvalid value '%s' for %s: expected an http(s):// URL", where, val, src);
            return -1;
        }
        free(cfg->sentinel_url);
        cfg->sentinel_url = xstrdup(val);
        return 0;
    case OT_DB:
        if (!*val) {
            rt_err("%sinvalid value '' for %s: expected a file name", where, src);
            return -1;
        }
        free(cfg->db);
        cfg->db = xstrdup(val);
        return 0;
    case OT_QUIET:
    case OT_SUMMARY:
    case OT_CLOUD:
        if (!val)
            b = 1;
        else if ((b = rt_parse_bool(val)) < 0) {
            rt_err("%sinvalid value '%s' for %s: expected 1/0, true/false, yes/no or on/off", where,
                   val, src);
            return -1;
        }
        *(o->type == OT_QUIET     ? &cfg->quiet
          : o->type == OT_SUMMARY ? &cfg->summary
                                  : &cfg->cloud_discovery) = b;
        return 0;
    case OT_PID:
        if (rt_parse_i64(val, &i) != 0 || i <= 0 || i > 0x7fffffff) {
            rt_err("%sinvalid value '%s' for %s: expected a process id", where, val, src);
            return -1;
        }
        cfg->pid = (pid_t)i;
        return 0;
    case OT_META:
        if (check_utf8(val, "value", src, where) != 0)
            return -1;
        free(cfg->meta[o->meta]);
        cfg->meta[o->meta] = *val ? xstrdup(val) : NULL;
        return 0;
    case OT_TAG:
        return tags_add(cfg, val, o->env && strcmp(src, o->env) == 0, src, where);
    case OT_OUTPUT:
        if (!*val) {
            rt_err("%sinvalid value '' for %s: expected a file name or '-'", where, src);
            return -1;
        }
        free(cfg->output);
        cfg->output = xstrdup(val);
        return 0;
    case OT_FORMAT:
        if (!strcmp(val, "json") || !strcmp(val, "jsonl"))
            cfg->output_csv = RT_LIVE_JSONL;
        else if (!strcmp(val, "csv"))
            cfg->output_csv = cfg->dropin ? RT_LIVE_RUST_CSV : RT_LIVE_PYTHON_CSV;
        else if (!strcmp(val, "rust-csv"))
            cfg->output_csv = RT_LIVE_RUST_CSV;
        else if (!strcmp(val, "python-csv"))
            cfg->output_csv = RT_LIVE_PYTHON_CSV;
        else if (!strcmp(val, "system-csv"))
            cfg->output_csv = RT_LIVE_SYSTEM_CSV;
        else {
            rt_err("%sinvalid value '%s' for %s: expected json, csv, rust-csv, python-csv or "
                   "system-csv",
                   where, val, src);
            return -1;
        }
        return 0;
    case OT_CONFIG:
    case OT_HELP:
    case OT_VERSION:
        return 0;
    }
    return 0;
}

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

/* The option a config key sets (NULL: none); [tags] takes any key. */
static const struct opt *toml_opt(const char *table, const char *key)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++)
        if (opts[i].table && strcmp(opts[i].table, table) == 0 &&
            (opts[i].type == OT_TAG || strcmp(opts[i].key, key) == 0))
            return &opts[i];
    return NULL;
}

int rt_config_suggest_key(const char *table, const char *key, char *out, size_t outlen)
{
    const char *names[RT_ARRAY_LEN(opts) + RT_ARRAY_LEN(toml_tables)];
    size_t n = 0;
    int known_table = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
        known_table |= table && strcmp(table, toml_tables[i]) == 0;
    if (!known_table) /* a table's name (table NULL), or a key outside any table */
        for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
            names[n++] = toml_tables[i];
    else
        for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++)
            if (opts[i].table && opts[i].key && strcmp(opts[i].table, table) == 0)
                names[n++] = opts[i].key;
    return cmd_nearest(key, names, n, "", out, outlen);
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
static int apply_toml(struct rt_config *cfg, enum rt_cmd_kind kind, const char *file,
                      const char *text, size_t len)
{
    struct rt_toml_doc doc;
    char err[300];
    int lax = kind == RT_CMD_DROPIN;
    /* The parser reads a C string: a NUL byte would end the file early and silently drop the
     * rest. TOML files are UTF-8. Both are reported with the line. */
    const char *nul = memchr(text, '\0', len);
    size_t end = nul ? (size_t)(nul - text) : len;
    size_t bad = rt_utf8_check(text, end);
    if (bad < len) {
        int line = 1;
        for (size_t i = 0; i < bad; i++)
            line += text[i] == '\n';
        const char *why = bad < end ? "invalid UTF-8 (a TOML file is UTF-8 text)"
                                    : "NUL byte (a TOML file is text)";
        if (lax) {
            rt_warn("%s:%d: %s; the file is ignored", file, line, why);
            return 0;
        }
        rt_err("%s:%d: %s", file, line, why);
        return -1;
    }
    if (rt_toml_parse(text, &doc, err, sizeof(err)) != 0) {
        if (lax) {
            rt_warn("%s:%s; the file is ignored", file, err);
            return 0;
        }
        rt_err("%s:%s", file, err);
        return -1;
    }
    struct rt_buf unknown = {0};
    int rc = 0;
    for (size_t t = 0; t < doc.ntables && rc == 0; t++) {
        int ok = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
            ok |= strcmp(doc.tables[t].name, toml_tables[i]) == 0;
        if (ok)
            continue;
        if (lax) {
            list_add(&unknown, doc.tables[t].name, NULL);
            continue;
        }
        char near[256], mean[300] = "";
        if (rt_config_suggest_key(NULL, doc.tables[t].name, near, sizeof(near)))
            snprintf(mean, sizeof(mean), "; did you mean %s?", near);
        rt_err("%s:%d: unknown table [%s] (rtrack reads [job], [tracker], [sentinel] and "
               "[tags])%s",
               file, doc.tables[t].line, doc.tables[t].name, mean);
        rc = -1;
    }
    /* first every key checked (a file of the wrong shape is refused, or ignored, whole), then
     * applied */
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (size_t k = 0; k < doc.n && rc == 0; k++) {
            const struct rt_toml_kv *e = &doc.kv[k];
            char where[512];
            snprintf(where, sizeof(where), "%s:%d: ", file, e->line);
            const struct opt *o = toml_opt(e->table, e->key);
            if (!o) {
                int known_table = !*e->table;
                for (size_t i = 0; i < RT_ARRAY_LEN(toml_tables); i++)
                    known_table |= strcmp(e->table, toml_tables[i]) == 0;
                if (pass == 1 || (lax && !known_table))
                    continue; /* said in the first pass; an unknown table's keys: the table */
                char msg[512];
                unknown_key_text(e->table, e->key, msg, sizeof(msg));
                if (lax) {
                    list_add(&unknown, e->table, e->key);
                    continue;
                }
                rt_err("%s%s", where, msg);
                rc = -1;
                break;
            }
            int want_string = o->type == OT_DB || o->type == OT_META || o->type == OT_OUTPUT ||
                              o->type == OT_FORMAT || o->type == OT_API_URL;
            int ok = o->type == OT_TAG ? 1
                     : want_string     ? e->type == RT_TOML_STRING
                     : o->type == OT_QUIET || o->type == OT_CLOUD || o->type == OT_SUMMARY
                         ? e->type == RT_TOML_BOOL
                     : o->type == OT_PID ? e->type == RT_TOML_INT
                                         : (e->type == RT_TOML_INT || e->type == RT_TOML_FLOAT);
            if (!ok && pass == 0) {
                const char *want =
                    want_string ? "a string"
                    : o->type == OT_QUIET || o->type == OT_CLOUD || o->type == OT_SUMMARY
                        ? "a boolean"
                    : o->type == OT_PID ? "an integer"
                                        : "a number";
                if (lax) {
                    rt_warn("%s'%s' must be %s, not %s; the file is ignored", where, e->key, want,
                            rt_toml_type_name(e->type));
                    rt_buf_free(&unknown);
                    rt_toml_free(&doc);
                    return 0;
                }
                rt_err("%s'%s' must be %s, not %s", where, e->key, want,
                       rt_toml_type_name(e->type));
                rc = -1;
                break;
            }
            /* options of another mode ([job] pid in a file shared with `run`) are ignored */
            if (pass == 0 || !(o->cmds & cmd_bit(kind)))
                continue;
            if (o->type == OT_TAG) {
                rc = tag_add(cfg, e->key, strlen(e->key), e->str, "[tags]", where);
                continue;
            }
            /* numbers as parsed (1_000 is 1000), not as written */
            char num[64];
            const char *val = e->str;
            if (e->type == RT_TOML_INT)
                snprintf(num, sizeof(num), "%lld", (long long)e->i), val = num;
            else if (e->type == RT_TOML_FLOAT)
                snprintf(num, sizeof(num), "%.17g", e->d), val = num;
            else if (e->type == RT_TOML_BOOL)
                val = e->b ? "1" : "0";
            rc = opt_apply(cfg, o, val, e->key, where);
        }
    if (rc == 0 && unknown.len)
        rt_warn("%s: ignoring what resource-tracker does not read either: %s", file, unknown.p);
    rt_buf_free(&unknown);
    rt_toml_free(&doc);
    return rc;
}

struct cli_item {
    const struct opt *o;
    const char *val;
};

int rt_config_load(struct rt_config *cfg, enum rt_cmd_kind kind, int argc, char **argv)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->interval = 1.0;
    cfg->upload_interval = 60.0;
    cfg->cloud_discovery = -1;
    cfg->dropin = kind == RT_CMD_DROPIN;
    const char *cname = cmd_name(kind);

    /* 1. the command line, kept aside until the lower layers are applied */
    struct option lopts[RT_ARRAY_LEN(opts) + 1];
    char shorts[2 * RT_ARRAY_LEN(opts) + 4] = "+:";
    size_t nl = 0, ns = 2;
    for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++) {
        if (!(opts[i].cmds & cmd_bit(kind)))
            continue;
        lopts[nl++] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument,
                                      NULL, 1000 + (int)i};
        if (opts[i].short_opt) {
            shorts[ns++] = (char)opts[i].short_opt;
            if (opts[i].arg)
                shorts[ns++] = ':';
        }
    }
    lopts[nl] = (struct option){NULL, 0, NULL, 0};
    shorts[ns] = '\0';

    struct cli_item *items = xcalloc((size_t)argc + 1, sizeof(*items));
    size_t nitems = 0;
    const char *config_cli = NULL;
    int rc = RT_EXIT_USAGE;
    opterr = 0;
    optind = 0; /* glibc: 0 also resets getopt's internal state */
    int c;
    while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
        const struct opt *o = NULL;
        if (c >= 1000) {
            o = &opts[c - 1000];
        } else if (c != '?' && c != ':') {
            for (size_t i = 0; i < RT_ARRAY_LEN(opts) && !o; i++)
                if (opts[i].short_opt == c && (opts[i].cmds & cmd_bit(kind)))
                    o = &opts[i];
        }
        if (c == ':' || !o) {
            rc = cmd_option_error(cname, c, argv, lopts);
            goto out;
        }
        if (o->type == OT_HELP || o->type == OT_VERSION) {
            /* resource-tracker's help and version are its caller's to print */
            if (kind != RT_CMD_DROPIN)
                cmd_help(kind == RT_CMD_RUN ? &cmd_run_def : &cmd_record_def, stdout);
            rc = o->type == OT_HELP ? -1 : -2;
            goto out;
        }
        if (o->type == OT_CONFIG)
            config_cli = optarg;
        items[nitems++] = (struct cli_item){o, o->arg ? optarg : NULL};
    }
    if (kind == RT_CMD_RUN && optind >= argc) {
        rt_err("run: no command given (usage: rtrack run [options] -- CMD [ARGS...])");
        goto out;
    } else if (kind == RT_CMD_RECORD && optind < argc) {
        rt_err("record: unexpected argument '%s' (to run a command use 'rtrack run')",
               argv[optind]);
        goto out;
    }
    if (optind < argc) { /* run's job; resource-tracker's, when given */
        cfg->command = argv + optind;
        cfg->ncommand = argc - optind;
    }

    /* 2. the config file: --config > RTRACK_CONFIG > TRACKER_CONFIG > ./rtrack.toml when present
     * (resource-tracker: ./resource-tracker.toml; a file that is missing is no error there, even
     * when named, as in the Rust tool) */
    const char *config_env = cli_getenv("RTRACK_CONFIG");
    if (!config_env)
        config_env = cli_getenv("TRACKER_CONFIG");
    const char *config = config_cli              ? config_cli
                         : config_env            ? config_env
                         : kind == RT_CMD_DROPIN ? "resource-tracker.toml"
                                                 : "rtrack.toml";
    int explicit_config = config_cli || config_env;
    struct rt_buf text = {0};
    ssize_t tn = rt_read_file(config, &text);
    int trc = 0;
    if (tn < 0 && kind == RT_CMD_DROPIN) {
        if (tn != -ENOENT)
            rt_warn("cannot read config file '%s': %s; it is ignored", config,
                    rt_strerror((int)-tn));
    } else if (tn < 0 && (explicit_config || tn != -ENOENT)) {
        rt_err("cannot read config file '%s': %s", config, rt_strerror((int)-tn));
        trc = -1;
    } else if (tn >= 0) {
        cfg->config_file = xstrdup(config);
        trc = apply_toml(cfg, kind, config, text.p, (size_t)tn);
    }
    rt_buf_free(&text);
    if (trc != 0)
        goto out;

    /* 3. the environment: the Rust tool's names, then rtrack's (which win) */
    for (int which = 0; which < 2; which++)
        for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++) {
            const struct opt *o = &opts[i];
            const char *name = which ? o->env2 : o->env;
            const char *v = name ? cli_getenv(name) : NULL;
            if (!v || o->type == OT_CONFIG || !(o->cmds & cmd_bit(kind)))
                continue;
            if (opt_apply(cfg, o, v, name, "") != 0)
                goto out;
        }

    /* 4. the command line */
    for (size_t i = 0; i < nitems; i++) {
        char src[64];
        snprintf(src, sizeof(src), "--%s", items[i].o->name);
        if (opt_apply(cfg, items[i].o, items[i].val, src, "") != 0)
            goto out;
    }

    /* --quiet: no metric lines at all (the Rust tool does not even open --output) */
    if (cfg->quiet) {
        free(cfg->output);
        cfg->output = NULL;
    } else if (kind == RT_CMD_DROPIN && !cfg->output) {
        cfg->output = xstrdup("/dev/stderr"); /* the Rust tool's sink */
    }
    if (!cfg->db && kind != RT_CMD_DROPIN)
        cfg->db = xstrdup("rtrack.db");
    if (kind == RT_CMD_RUN) {
        cfg->pid = 0; /* run tracks the job it starts */
        cfg->duration = 0;
    } else if (kind == RT_CMD_RECORD && cfg->pid > 0 && kill(cfg->pid, 0) != 0 && errno == ESRCH) {
        rt_err("record: no process with pid %d", (int)cfg->pid);
        goto out;
    }
    rc = 0;
out:
    free(items);
    if (rc != 0)
        rt_config_free(cfg);
    return rc;
}

void rt_config_free(struct rt_config *cfg)
{
    free(cfg->db);
    free(cfg->config_file);
    free(cfg->output);
    free(cfg->sentinel_url);
    for (int i = 0; i < RT_META_N; i++)
        free(cfg->meta[i]);
    for (size_t i = 0; i < cfg->ntags; i++) {
        free(cfg->tags[i].key);
        free(cfg->tags[i].value);
    }
    free(cfg->tags);
    memset(cfg, 0, sizeof(*cfg));
}
