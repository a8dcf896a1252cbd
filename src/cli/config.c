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
    OT_HELP
};

#define FOR_RUN    1u
#define FOR_RECORD 2u
#define FOR_BOTH   3u

struct opt {
    const char *name;
    int short_opt;
    const char *arg; /* metavariable, NULL for flags */
    const char *env;
    const char *table, *key; /* TOML location */
    enum opt_type type;
    int meta;
    unsigned cmds;
    const char *help;
};

static const struct opt opts[] = {
    {"interval", 'i', "SECS", "RTRACK_INTERVAL", "tracker", "interval_secs", OT_INTERVAL, 0,
     FOR_BOTH, "seconds between samples, fractions allowed (default 1)"},
    {"db", 'd', "FILE", "RTRACK_DB", "tracker", "db", OT_DB, 0, FOR_BOTH,
     "database to record into (default rtrack.db)"},
    {"config", 'c', "FILE", "RTRACK_CONFIG", NULL, NULL, OT_CONFIG, 0, FOR_BOTH,
     "TOML config file (default rtrack.toml, if present)"},
    {"quiet", 'q', NULL, "TRACKER_QUIET", "tracker", "quiet", OT_QUIET, 0, FOR_BOTH,
     "no end-of-run note on stderr"},
    {"summary", 0, NULL, "RTRACK_SUMMARY", "tracker", "summary", OT_SUMMARY, 0, FOR_RUN,
     "print the run's summary (as rtrack summary does) on stdout when the job has ended"},
    {"pid", 'p', "PID", NULL, "job", "pid", OT_PID, 0, FOR_RECORD,
     "track this process and its descendants (default: none, the system only)"},
    {"output", 'o', "FILE", "TRACKER_OUTPUT", "tracker", "output", OT_OUTPUT, 0, FOR_BOTH,
     "also write each sample as a line to FILE ('-' = stdout) as it is recorded (default: none)"},
    {"format", 'f', "json|csv", "RTRACK_FORMAT", "tracker", "format", OT_FORMAT, 0, FOR_BOTH,
     "format of --output lines (default json: JSON Lines; csv: Python combined CSV)"},
    {"duration", 0, "SECS", "RTRACK_DURATION", "tracker", "duration_secs", OT_DURATION, 0,
     FOR_RECORD, "stop after this many seconds (default: when stopped or the tree is gone)"},
    {"upload-interval", 0, "SECS", "TRACKER_UPLOAD_INTERVAL", "sentinel", "upload_interval_secs",
     OT_UPLOAD_INTERVAL, 0, FOR_BOTH,
     "with SENTINEL_API_TOKEN set: seconds between uploads of new samples (default 60)"},
    {"sentinel-url", 0, "URL", "SENTINEL_API_URL", "sentinel", "api_url", OT_API_URL, 0, FOR_BOTH,
     "Sentinel API (default https://api.sentinel.sparecores.net)"},
    {"cloud-discovery", 0, NULL, "RTRACK_CLOUD_DISCOVERY", "tracker", "cloud_discovery", OT_CLOUD,
     0, FOR_BOTH,
     "ask the cloud's metadata services for vendor, region and instance type while recording, "
     "stored with the run (default: only when streaming to Sentinel; 0 in the environment or "
     "false in the file: never)"},
    {"job-name", 'n', "NAME", "TRACKER_JOB_NAME", "job", "name", OT_META, RT_META_JOB_NAME,
     FOR_BOTH, "job name"},
    {"project-name", 0, "NAME", "TRACKER_PROJECT_NAME", "job", "project_name", OT_META,
     RT_META_PROJECT_NAME, FOR_BOTH, "project name"},
    {"stage-name", 0, "NAME", "TRACKER_STAGE_NAME", "job", "stage_name", OT_META,
     RT_META_STAGE_NAME, FOR_BOTH, "stage name"},
    {"task-name", 0, "NAME", "TRACKER_TASK_NAME", "job", "task_name", OT_META, RT_META_TASK_NAME,
     FOR_BOTH, "task name"},
    {"team", 0, "NAME", "TRACKER_TEAM", "job", "team", OT_META, RT_META_TEAM, FOR_BOTH, "team"},
    {"env", 0, "NAME", "TRACKER_ENV", "job", "env", OT_META, RT_META_ENV, FOR_BOTH,
     "environment (prod, staging, ...)"},
    {"language", 0, "NAME", "TRACKER_LANGUAGE", "job", "language", OT_META, RT_META_LANGUAGE,
     FOR_BOTH, "language of the job"},
    {"orchestrator", 0, "NAME", "TRACKER_ORCHESTRATOR", "job", "orchestrator", OT_META,
     RT_META_ORCHESTRATOR, FOR_BOTH, "orchestrator (airflow, slurm, ...)"},
    {"executor", 0, "NAME", "TRACKER_EXECUTOR", "job", "executor", OT_META, RT_META_EXECUTOR,
     FOR_BOTH, "executor"},
    {"external-run-id", 0, "ID", "TRACKER_EXTERNAL_RUN_ID", "job", "external_run_id", OT_META,
     RT_META_EXTERNAL_RUN_ID, FOR_BOTH, "id of the run in another system"},
    {"container-image", 0, "IMAGE", "TRACKER_CONTAINER_IMAGE", "job", "container_image", OT_META,
     RT_META_CONTAINER_IMAGE, FOR_BOTH, "container image of the job"},
    {"tag", 't', "KEY=VALUE", "TRACKER_TAGS", "tags", NULL, OT_TAG, 0, FOR_BOTH,
     "tag, repeatable (env: comma-separated list)"},
    {"help", 'h', NULL, NULL, NULL, NULL, OT_HELP, 0, FOR_BOTH, "show this help"},
};

static unsigned cmd_bit(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN ? FOR_RUN : FOR_RECORD;
}

static const char *cmd_name(enum rt_cmd_kind kind)
{
    return kind == RT_CMD_RUN ? "run" : "record";
}

/* The options of run or record, as their --help lists them (cmd_help: src/cli/help.c), --help
 * itself last, as for every command. */
static void print_opts(enum rt_cmd_kind kind, FILE *out)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++) {
        const struct opt *o = &opts[i];
        if ((o->cmds & cmd_bit(kind)) && o->type != OT_HELP)
            cmd_help_opt(out, o->short_opt, o->name, o->arg, o->help, o->env);
    }
    cmd_help_opt(out, 'h', "help", NULL, "show this help", NULL);
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
            cfg->output_csv = 0;
        else if (!strcmp(val, "csv"))
            cfg->output_csv = 1;
        else {
            rt_err("%sinvalid value '%s' for %s: expected json or csv", where, val, src);
            return -1;
        }
        return 0;
    case OT_CONFIG:
    case OT_HELP:
        return 0;
    }
    return 0;
}

static int apply_toml(struct rt_config *cfg, enum rt_cmd_kind kind, const char *file,
                      const char *text, size_t len)
{
    struct rt_toml_doc doc;
    char err[300];
    /* The parser reads a C string: a NUL byte would end the file early and silently drop the
     * rest. TOML files are UTF-8. Both are reported with the line. */
    const char *nul = memchr(text, '\0', len);
    size_t end = nul ? (size_t)(nul - text) : len;
    size_t bad = rt_utf8_check(text, end);
    if (bad < len) {
        int line = 1;
        for (size_t i = 0; i < bad; i++)
            line += text[i] == '\n';
        rt_err("%s:%d: %s", file, line,
               bad < end ? "invalid UTF-8 (a TOML file is UTF-8 text)"
                         : "NUL byte (a TOML file is text)");
        return -1;
    }
    if (rt_toml_parse(text, &doc, err, sizeof(err)) != 0) {
        rt_err("%s:%s", file, err);
        return -1;
    }
    static const char *const known[] = {"job", "tracker", "sentinel", "tags"};
    for (size_t t = 0; t < doc.ntables; t++) {
        int ok = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(known); i++)
            ok |= strcmp(doc.tables[t].name, known[i]) == 0;
        if (!ok) {
            rt_err("%s:%d: unknown table [%s] (rtrack reads [job], [tracker], [sentinel] and "
                   "[tags])",
                   file, doc.tables[t].line, doc.tables[t].name);
            rt_toml_free(&doc);
            return -1;
        }
    }
    const struct rt_toml_kv *kv = doc.kv;
    size_t n = doc.n;
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++) {
        const struct rt_toml_kv *e = &kv[k];
        char where[512];
        snprintf(where, sizeof(where), "%s:%d: ", file, e->line);
        const struct opt *o = NULL;
        for (size_t i = 0; i < RT_ARRAY_LEN(opts) && !o; i++)
            if (opts[i].table && strcmp(opts[i].table, e->table) == 0 &&
                (opts[i].type == OT_TAG || strcmp(opts[i].key, e->key) == 0))
                o = &opts[i];
        if (!o) {
            if (*e->table)
                rt_err("%s:%d: unknown key '%s' in [%s]", file, e->line, e->key, e->table);
            else
                rt_err("%s:%d: unknown key '%s' (keys belong in [job], [tracker], [sentinel] or "
                       "[tags])",
                       file, e->line, e->key);
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
        if (!ok) {
            rt_err("%s:%d: '%s' must be %s, not %s", file, e->line, e->key,
                   want_string ? "a string"
                   : o->type == OT_QUIET || o->type == OT_CLOUD || o->type == OT_SUMMARY
                       ? "a boolean"
                   : o->type == OT_PID ? "an integer"
                                       : "a number",
                   rt_toml_type_name(e->type));
            rc = -1;
            break;
        }
        /* options of the other subcommand ([job] pid in a file shared with `run`) are ignored */
        if (!(o->cmds & cmd_bit(kind)))
            continue;
        if (o->type == OT_TAG) {
            if ((rc = tag_add(cfg, e->key, strlen(e->key), e->str, "[tags]", where)) != 0)
                break;
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
            rc = cmd_option_error(cname, c, argv);
            goto out;
        }
        if (o->type == OT_HELP) {
            cmd_help(kind == RT_CMD_RUN ? &cmd_run_def : &cmd_record_def, stdout);
            rc = -1;
            goto out;
        }
        if (o->type == OT_CONFIG)
            config_cli = optarg;
        items[nitems++] = (struct cli_item){o, o->arg ? optarg : NULL};
    }
    if (kind == RT_CMD_RUN) {
        if (optind >= argc) {
            rt_err("run: no command given (usage: rtrack run [options] -- CMD [ARGS...])");
            goto out;
        }
        cfg->command = argv + optind;
        cfg->ncommand = argc - optind;
    } else if (optind < argc) {
        rt_err("record: unexpected argument '%s' (to run a command use 'rtrack run')",
               argv[optind]);
        goto out;
    }

    /* 2. the config file: --config > RTRACK_CONFIG > ./rtrack.toml when present */
    const char *config_env = cli_getenv("RTRACK_CONFIG");
    const char *config = config_cli                    ? config_cli
                         : (config_env && *config_env) ? config_env
                                                       : "rtrack.toml";
    int explicit_config = config_cli || (config_env && *config_env);
    struct rt_buf text = {0};
    ssize_t tn = rt_read_file(config, &text);
    int trc = 0;
    if (tn < 0 && (explicit_config || tn != -ENOENT)) {
        rt_err("cannot read config file '%s': %s", config, rt_strerror((int)-tn));
        trc = -1;
    } else if (tn >= 0) {
        cfg->config_file = xstrdup(config);
        trc = apply_toml(cfg, kind, config, text.p, (size_t)tn);
    }
    rt_buf_free(&text);
    if (trc != 0)
        goto out;

    /* 3. the environment */
    for (size_t i = 0; i < RT_ARRAY_LEN(opts); i++) {
        const struct opt *o = &opts[i];
        const char *v = o->env ? cli_getenv(o->env) : NULL;
        if (!v || !*v || o->type == OT_CONFIG || !(o->cmds & cmd_bit(kind)))
            continue;
        if (opt_apply(cfg, o, v, o->env, "") != 0)
            goto out;
    }

    /* 4. the command line */
    for (size_t i = 0; i < nitems; i++) {
        char src[64];
        snprintf(src, sizeof(src), "--%s", items[i].o->name);
        if (opt_apply(cfg, items[i].o, items[i].val, src, "") != 0)
            goto out;
    }

    if (!cfg->db)
        cfg->db = xstrdup("rtrack.db");
    if (kind == RT_CMD_RUN) {
        cfg->pid = 0; /* run tracks the job it starts */
        cfg->duration = 0;
    } else if (cfg->pid > 0 && kill(cfg->pid, 0) != 0 && errno == ESRCH) {
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
