/* cmd.h - subcommands: one file each, argv[0] is the subcommand's name, env what the
 * environment says (env.h). */
#ifndef RTRACK_CMD_H
#define RTRACK_CMD_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtrack/store/store.h"

struct rt_env;

/* --- the command table ---------------------------------------------------------------------
 *
 * One row per command (src/cli/commands.c), each defined beside its code (cmd_NAME.c): its
 * name, function, the line `rtrack --help` shows, and its help: `rtrack help NAME`,
 * `rtrack NAME --help`, the options getopt_long reads. The tests hold the man page's synopsis
 * and options and the shell completions against what the table prints. */

/* One option: how --help shows it and how it is parsed. */
struct cmd_opt {
    const char *name; /* long name; NULL ends a table */
    int short_opt;    /* 0: none */
    const char *arg;  /* the value's name in --help; NULL: a flag */
    const char *help; /* what it does, its default in parentheses */
    const char *env;  /* the variables that set it too (blank-separated), each shown as
                       * [env NAME], or NULL */
    int key;          /* what cmd_parse_next() returns for it */
};

struct cmd_def {
    const char *name;
    int (*fn)(int argc, char **argv, const struct rt_env *env);
    const char *summary;        /* `rtrack --help`'s line */
    const char *synopsis;       /* "usage: rtrack NAME " then this; '\n' starts an indented line */
    const char *description;    /* the paragraph before the options */
    const struct cmd_opt *opts; /* NULL: print_opts prints them (run and record: config.c) */
    void (*print_opts)(FILE *out);
    const char *epilog; /* after the options (examples, the environment), or NULL */
    int operands;       /* takes arguments after the options (merge's files): argv[optind]... */
};

/* The commands, in `rtrack --help`'s order; NULL-terminated. */
extern const struct cmd_def *const cmd_table[];
const struct cmd_def *cmd_find(const char *name);

extern const struct cmd_def cmd_run_def, cmd_record_def, cmd_export_def, cmd_runs_def,
    cmd_summary_def, cmd_report_def, cmd_upload_def, cmd_merge_def;

/* A command's whole help text. */
void cmd_help(const struct cmd_def *d, FILE *out);
/* One option line of a help text ("  -i, --interval SECS" then its help, wrapped at 80 columns
 * with "[env NAME]" as one word): what cmd_help prints for each option, and config.c for
 * run's and record's. */
void cmd_help_opt(FILE *out, int short_opt, const char *name, const char *arg, const char *help,
                  const char *env);

/* getopt_long over a command's table (stops at the first argument that is not an option, as
 * `rtrack run` needs for its job's argv). */
struct cmd_parse {
    const struct cmd_def *cmd;
    int argc;
    char **argv;
    struct option lopts[24];
    char shorts[64];
};
enum { CMD_PARSE_DONE = -1, CMD_PARSE_HELP = -2, CMD_PARSE_BAD = -3 };
void cmd_parse_begin(struct cmd_parse *p, const struct cmd_def *d, int argc, char **argv);
/* The next option's key, its value in *val (NULL for a flag); CMD_PARSE_DONE at the end;
 * CMD_PARSE_HELP after printing the help (--help, -h); CMD_PARSE_BAD after saying what is wrong
 * (an unknown option, a missing value, or, at the end, an argument that is not an option:
 * commands other than run take none). */
int cmd_parse_next(struct cmd_parse *p, const char **val);
/* What a command exits with when cmd_parse_next() said CMD_PARSE_HELP or CMD_PARSE_BAD. */
int cmd_parse_exit(int rc);

/* Shared by run and record: the database, host facts and the run row, in that order, so any
 * problem is reported before a job starts. Returns NULL after printing the error. */
struct rt_config;
struct rt_store;
struct rt_host_info;
struct rt_sysenv;
struct rt_store *cmd_open_store(const struct rt_config *cfg);
/* The run as the store records it: the options' metadata, tags and interval, started now. */
struct rt_run_desc;
void cmd_run_desc(struct rt_run_desc *d, const struct rt_config *cfg, const char *mode,
                  const char *command_json, pid_t pid, const struct rt_host_info *host,
                  const struct rt_sysenv *env);

/* A job's argv as a JSON array (malloc'd): the run's command as stored and sent. */
char *cmd_argv_json(char **argv, int n);
/* rtrack called as resource-tracker (main.c, by argv[0]'s name): the Rust tool's command line
 * (src/cli/cmd_dropin.c). */
int cmd_dropin(int argc, char **argv, const struct rt_env *env);
/* After getopt_long returned ':' or '?': say which option was wrong, and for a long option
 * the nearest of lopts (the command's, ending with a NULL name; may be NULL) as "did you
 * mean '--NAME'?"; returns exit code 2. */
int cmd_option_error(const char *cmd, int c, char **argv, const struct option *lopts);
/* The names of cands nearest `typed` (a prefix of two letters or more, else at most two edits;
 * all those equally near), each written as 'PREFIX NAME' joined by " or " into out: 1, or 0
 * (out "") when none is near. What "did you mean" says for commands, options and config keys. */
int cmd_nearest(const char *typed, const char *const *cands, size_t n, const char *prefix,
                char *out, size_t outlen);

/* Output of export and report: stdout for NULL / "-", else the file, device, FIFO or
 * descriptor the path names, by export.h's rules (rt_outfile_open): a regular file is written
 * beside its final name and renamed when complete (nothing is left under the name on failure),
 * new 0600 or with the mode and owner of the file it replaces. Both print why they failed;
 * close(ok = 0) discards a replacement. name: what messages call it (the path, or "stdout"). */
struct rt_outfile;
struct cmd_out {
    FILE *f;
    const char *name;
    struct rt_outfile *file; /* NULL: stdout */
};
int cmd_out_open(struct cmd_out *o, const char *path);
int cmd_out_close(struct cmd_out *o, int ok);
/* Say that writing the output failed: "cannot write 'NAME': reason" ("cannot write to stdout:
 * reason", once). */
void cmd_out_failed(const struct cmd_out *o, const char *reason);
/* 1 when what was written stays even if the output fails (stdout, a device, a FIFO). */
int cmd_out_direct(const struct cmd_out *o);

/* An output (export -o, report -o, run's and record's live -o; NULL or "-": stdout) that is the
 * database at db, its -wal, -shm or -journal: the same file (device and inode) where both
 * exist, the same path (links followed) where the output does not exist yet. -1 after saying so
 * (a usage error: exit 2, before anything is opened), else 0. cmd: the message's prefix. */
int cmd_out_check_db(const char *cmd, const char *out, const char *db);

/* stdout flushed and checked: 0, or -1 after saying why (once per process: "cannot write to
 * stdout: REASON"). Every command's stdout is checked so before it exits. */
int cmd_stdout_check(void);
/* main's last word: rc, or 1 instead of 0 when stdout could not be written (said once; a usage
 * error stays 2). Where a thread was left running (rt_thread_left()) it does not return: the
 * process ends there with _exit(rc), stdout and stderr flushed. */
int cmd_stdout_end(int rc);

/* The readers' preamble (export, runs, summary, report, upload): the database at db_path
 * opened (RT_STORE_READ; upload keeps its progress in it: RT_STORE_WRITE) and, unless run is
 * NULL, the run it names ("latest" or an id) resolved into *run_id and its start time into
 * *started (may be NULL). NULL after printing why: exit code 2 (RT_EXIT_USAGE). */
struct rt_store *cmd_open_db(const char *db_path, enum rt_store_mode mode, const char *run,
                             int64_t *run_id, double *started);

/* The databases a reader reads (summary, report, export, runs): --db given once or more, each a
 * file or a glob, and --slurm-job. One file without a job is read as it is; several files, a
 * glob, or a job's runs are merged (store/merge.h) into a private temporary database first,
 * removed when the process exits. One command per process: the list is the process's. */
/* --db VALUE: a file, or a pattern (glob(3)) that names one or more. -1 after saying why (a
 * pattern that matches nothing, too many files): exit 2. */
int cmd_dbs_add(const char *cmd, const char *value);
/* --slurm-job ID: only that job's runs (runs.slurm_job_id or slurm_array_job_id) */
void cmd_dbs_slurm_job(const char *id);
const char *cmd_dbs_slurm(void); /* the job asked for, or NULL */
/* The database to read: the one given (or RTRACK_DB's, rtrack.db) or the private merge of all.
 * NULL after saying why: exit 2. */
const char *cmd_dbs_path(const char *cmd, const struct rt_env *env);
/* summary --slurm-job: the job across its nodes (summary/cluster.h) in format 0 text, 1 JSON,
 * 2 markdown; an exit code. */
int cmd_cluster_summary(const char *db_path, const char *slurm_job, int fmt);

#endif
