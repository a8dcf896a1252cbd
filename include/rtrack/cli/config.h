/* config.h - options of `run` and `record`: CLI > TRACKER_... and RTRACK_... environment > TOML
 * file > defaults, all from one table (src/cli/config.c, rows of opt.h). */
#ifndef RTRACK_CONFIG_H
#define RTRACK_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtrack/base/util.h"
#include "rtrack/cli/opt.h"
#include "rtrack/sample/run.h"

struct rt_config {
    double interval;
    char *db;
    char *config_file; /* the file that was read, NULL if none */
    int quiet;
    int summary;            /* run: the summary on stdout when the job has ended (--summary) */
    int summary_format;     /* --summary-format: 0 text, 1 json, 2 markdown; -1 not given */
    char *run_id_file;      /* --run-id-file: the run's id written there once it is known */
    int db_private;         /* db is resource-tracker's private one: the job is not told of it */
    int cloud_discovery;    /* 1: ask the cloud while recording; 0: never; -1: when streaming */
    int64_t pid;            /* record: --pid (0: none) */
    char *cgroup;           /* record: --cgroup, NULL: none */
    double duration;        /* 0 = no limit */
    char *output;           /* live output: a file, "-" for stdout, NULL for none */
    int format;             /* --format: the index of its value in the table's list */
    int output_csv;         /* live output format: enum rt_live_format (export.h), of format */
    int dropin;             /* read as resource-tracker (argv[0]): the Rust tool's defaults */
    double upload_interval; /* streaming to Sentinel: seconds between uploads */
    char *sentinel_url;     /* Sentinel API base URL, NULL = SENTINEL_API_URL's default */
    char *meta[RT_META_N];
    struct rt_tag *tags;
    size_t ntags, tags_cap;
    struct rt_map tag_at; /* a hash of each tag's key -> its index (config.c's tag_set) */
    char **command;       /* run (and resource-tracker with one): NULL-terminated argv of the job
                           * (points into the caller's argv) */
    int ncommand;
};

/* RT_CMD_DROPIN: rtrack called as resource-tracker (src/cli/cmd_dropin.c): the Rust tool's
 * options and defaults (a command is optional, resource-tracker.toml, metric lines to stderr,
 * unknown config keys warned about), the environment and the table the same. */
enum rt_cmd_kind { RT_CMD_RUN, RT_CMD_RECORD, RT_CMD_DROPIN };

#define RT_INTERVAL_MIN 0.001
#define RT_INTERVAL_MAX 86400.0

/* Parse the subcommand's arguments (argv[0] is the subcommand name). Returns 0 when the caller
 * should go on, RT_EXIT_USAGE after printing an error, or -1 after printing --help (DROPIN: -1
 * for --help, -2 for --version, printed by the caller). */
int rt_config_load(struct rt_config *cfg, enum rt_cmd_kind kind, int argc, char **argv);
void rt_config_free(struct rt_config *cfg);
/* The options of run (RT_FACE_RUN), record (RT_FACE_RECORD) and resource-tracker
 * (RT_FACE_DROPIN), one row each (a row of its own where resource-tracker's help says another
 * default): their help, parsing, variables and config keys. */
extern const struct rt_opt rt_config_opts[];
/* The long names of run's and record's options (for "did you mean"), at most max. */
size_t rt_config_option_names(const char **names, size_t max);
/* 1 when arg ("--interval", "--pid=3", "-p") is one of run's or record's options: what
 * `rtrack --pid N` and `rtrack -i 2 -- CMD` are recognised by. */
int rt_config_is_option(const char *arg);
/* 1 when arg is one of those options and its value is the next argument ("--db", "-d"; not
 * "--db=x", "-dx" or a flag): what main.c steps over to find the word after the options. */
int rt_config_option_takes_value(const char *arg);
/* The config keys of [table] nearest `key` (table NULL: the table names nearest `key`), as
 * "'a' or 'b'" into out: 1, or 0 when none is near. */
int rt_config_suggest_key(const char *table, const char *key, char *out, size_t outlen);
extern const char rt_config_epilog[];

#endif
