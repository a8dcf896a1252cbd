/* config.h - options of `run` and `record`: CLI > TRACKER_... and RTRACK_... environment > TOML
 * file > defaults, all from one table (src/config.c). */
#ifndef RTRACK_CONFIG_H
#define RTRACK_CONFIG_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtrack/sample/run.h"

struct rt_config {
    double interval;
    char *db;
    char *config_file; /* the file that was read, NULL if none */
    int quiet;
    int summary;         /* run: the summary on stdout when the job has ended (--summary) */
    int cloud_discovery; /* 1: ask the cloud while recording; 0: never; -1: when streaming */
    pid_t pid;
    double duration;        /* 0 = no limit */
    char *output;           /* live output: a file, "-" for stdout, NULL for none */
    int output_csv;         /* live output format: 0 JSON Lines, 1 CSV */
    double upload_interval; /* streaming to Sentinel: seconds between uploads */
    char *sentinel_url;     /* Sentinel API base URL, NULL = SENTINEL_API_URL's default */
    char *meta[RT_META_N];
    struct rt_tag *tags;
    size_t ntags;
    char **command; /* run: NULL-terminated argv of the job (points into the caller's argv) */
    int ncommand;
};

enum rt_cmd_kind { RT_CMD_RUN, RT_CMD_RECORD };

#define RT_INTERVAL_MIN 0.001
#define RT_INTERVAL_MAX 86400.0

/* Parse the subcommand's arguments (argv[0] is the subcommand name). Returns 0 when the caller
 * should go on, RT_EXIT_USAGE after printing an error, or -1 after printing --help. */
int rt_config_load(struct rt_config *cfg, enum rt_cmd_kind kind, int argc, char **argv);
void rt_config_free(struct rt_config *cfg);
/* The option lines of run's and record's --help (their rows of the command table print the
 * rest), and what follows them. */
void rt_config_print_run_opts(FILE *out);
void rt_config_print_record_opts(FILE *out);
extern const char rt_config_epilog[];

#endif
