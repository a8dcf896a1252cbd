/* cmd.h - subcommands: one file each, argv[0] is the subcommand's name, env what the
 * environment says (env.h). */
#ifndef RTRACK_CMD_H
#define RTRACK_CMD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtrack/cli/opt.h"
#include "rtrack/store/store.h"

struct rt_env;

/* --- the command table ---------------------------------------------------------------------
 *
 * One row per command (src/cli/commands.c), each defined beside its code (cmd_NAME.c): its
 * name, function, the line `rtrack --help` shows, its help, its options (a table of opt.h's
 * rows: `rtrack NAME --help`, the parsing, `rtrack help --options NAME`) and how it gets its
 * database. cmd_call() does what every command does alike before its function runs: the options
 * by the table, the command's own checks, the databases (--db again or a glob, --slurm-job)
 * merged or taken as they are, opened, and --run resolved. The tests hold the man page's
 * synopsis and options and the shell completions against what the table prints. */

struct cmd_ctx;

/* How a command reads the database (the readers: export, runs, summary, report, upload). */
enum cmd_db_mode {
    CMD_DB_NONE,  /* none, or its own (run, record, merge) */
    CMD_DB_READ,  /* RT_STORE_READ */
    CMD_DB_WRITE, /* RT_STORE_WRITE (upload keeps its progress in it) */
};
#define CMD_DB_RUN                                                                                 \
    1u /* --run resolved ("latest" when not given; NULL after the check: no                        \
        * run) into c->run_id */
#define CMD_DB_EACH                                                                                \
    2u                     /* every database given, each in turn (not merged): the function        \
                            * runs once per database (upload) */
#define CMD_DB_EXISTING 4u /* a database that is not there is an error (not made) */
#define CMD_DB_OUTPUT                                                                              \
    8u /* writes c->output (NULL: stdout), which must not be the database or                       \
        * its -wal, -shm, -journal */

struct cmd_def {
    const char *name;
    int (*fn)(struct cmd_ctx *c);
    const char *summary;     /* `rtrack --help`'s line */
    const char *synopsis;    /* "usage: rtrack NAME " then this; '\n' starts an indented line */
    const char *description; /* the paragraph before the options */
    const struct rt_opt *opts;
    unsigned face;        /* the rows of opts it takes (0: all; run and record: config.c's) */
    size_t opts_size;     /* the options struct the rows' offsets point into, ... */
    const void *defaults; /* ... as it starts (NULL: zeros) */
    /* after the options, before the database: the command's own usage checks; may set c->run
     * and c->output. 0, or an exit code after saying why */
    int (*check)(struct cmd_ctx *c);
    enum cmd_db_mode db;
    unsigned db_flags;  /* CMD_DB_* */
    int layered;        /* run, record: the function reads argv itself (rt_config_load: options >
                         * environment > config file) */
    const char *epilog; /* after the options (examples, the environment), or NULL */
    int operands;       /* takes arguments after the options (merge's files): argv[optind]... */
};

/* What a command's function gets. */
struct cmd_ctx {
    const struct cmd_def *def;
    const struct rt_env *env;
    int argc; /* the command's arguments, argv[0] its name */
    char **argv;
    int optind;         /* the first operand */
    void *opts;         /* def->opts_size bytes, filled by def->opts */
    const char *run;    /* --run (an id or "latest"), as the check left it; NULL: none */
    const char *output; /* CMD_DB_OUTPUT: what it writes (NULL: stdout); the check sets it */
    const char *db_path;
    int ndbs;               /* the databases given (CMD_DB_EACH: the function runs for each) */
    struct rt_store *store; /* open while the function runs (db not CMD_DB_NONE) */
    int64_t run_id;         /* c->run's id */
    double started;         /* and its start (epoch seconds) */
    /* --external-run-id ID: c->run is that id (external_run 1), found by cmd_find_external_run;
     * run_opt names the option that set c->run in messages: "--run" or "--external-run-id" */
    int external_run;
    const char *run_opt;
};

/* The commands, in `rtrack --help`'s order; NULL-terminated. */
extern const struct cmd_def *const cmd_table[];
const struct cmd_def *cmd_find(const char *name);

extern const struct cmd_def cmd_run_def, cmd_record_def, cmd_export_def, cmd_runs_def,
    cmd_summary_def, cmd_report_def, cmd_upload_def, cmd_merge_def;

/* Command d with its arguments (argv[0] its name): options, check, database, function, in
 * that order; its exit code. */
int cmd_call(const struct cmd_def *d, int argc, char **argv, const struct rt_env *env);

/* A command's whole help text. */
void cmd_help(const struct cmd_def *d, FILE *out);

/* The readers' shared rows (cmd_call.c): --db given again or a glob (the databases of
 * cmd_dbs_add), --slurm-job (cmd_dbs_slurm_job), --run (c->run); each with its help. */
int cmd_opt_db(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v);
int cmd_opt_slurm_job(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v);
int cmd_opt_run(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v);
int cmd_opt_external_run_id(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v);
#define CMD_OPT_DB(h)                                                                              \
    {                                                                                              \
        RT_OPT_ROW("db", 'd', "FILE", h), .env = "RTRACK_DB", .env_rust = "TRACKER_DB",            \
                                          .type = RT_OPT_CALLBACK, .fn = cmd_opt_db                \
    }
#define CMD_OPT_DBS                                                                                \
    CMD_OPT_DB("database (default rtrack.db); again, or a glob, to read several as one")
#define CMD_OPT_SLURM_JOB(h) OPT_CALLBACK("slurm-job", 0, "ID", h, cmd_opt_slurm_job)
#define CMD_OPT_RUN(h)       OPT_CALLBACK("run", 'r', "ID|latest", h, cmd_opt_run)
/* --external-run-id ID: the one run recorded with run's --external-run-id ID, in place of --run
 * (none or several is an error naming them) */
#define CMD_OPT_EXTERNAL_RUN_ID                                                                    \
    OPT_CALLBACK("external-run-id", 0, "ID",                                                       \
                 "the run recorded with --external-run-id ID (instead of --run)",                  \
                 cmd_opt_external_run_id)

/* --recommend-server (summary, report): a flag into st's `recommend_server`; the Keeper's URL is
 * RTRACK_KEEPER_URL's (rt_env) */
#define CMD_OPT_RECOMMEND_SERVER(h, st)                                                            \
    {                                                                                              \
        RT_OPT_ROW("recommend-server", 0, NULL, h),                                                \
            .env = "RTRACK_KEEPER_URL", .type = RT_OPT_BOOL, .off = offsetof(st, recommend_server) \
    }

/* Run arg ("latest" or an id) of c's database: its id, and its start into *started (may be
 * NULL); 0 after saying why not (no such run, not an id). */
int64_t cmd_find_run(const struct cmd_ctx *c, const char *arg, double *started);
/* The one run of store (at db_path) recorded with external run id ext: its id and start; 0
 * after saying why not (no such run; several, named). */
int64_t cmd_find_external_run(struct rt_store *store, const char *db_path, const char *ext,
                              double *started);

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

/* The terminal's width: COLUMNS where set (env may be NULL), else the terminal's own when
 * stdout is one; 0 otherwise. And the width text is wrapped to: that, or RT_TEXT_WIDTH (80). */
size_t cmd_term_width(const struct rt_env *env);
int cmd_text_width(const struct rt_env *env);

/* stdout flushed and checked: 0, or -1 after saying why (once per process: "cannot write to
 * stdout: REASON"). Every command's stdout is checked so before it exits. */
int cmd_stdout_check(void);
/* main's last word: rc, or 1 instead of 0 when stdout could not be written (said once; a usage
 * error stays 2). Where a thread was left running (rt_thread_left()) it does not return: the
 * process ends there with _exit(rc), stdout and stderr flushed. */
int cmd_stdout_end(int rc);

/* The readers' preamble (cmd_call() for export, runs, summary, report, upload): the database at
 * db_path opened (RT_STORE_READ; upload keeps its progress in it: RT_STORE_WRITE) and, unless
 * run is NULL, the run it names ("latest" or an id) resolved into *run_id and its start time
 * into *started (may be NULL). NULL after printing why: exit code 2 (RT_EXIT_USAGE). */
struct rt_store *cmd_open_db(const char *db_path, enum rt_store_mode mode, const char *run,
                             int64_t *run_id, double *started);

/* The databases a reader reads (summary, report, export, runs; upload each in turn): --db given
 * once or more, each a file or a glob, and --slurm-job. One file without a job is read as it
 * is; several files, a glob, or a job's runs are merged (store/merge.h) into a private
 * temporary database first, removed when the process exits. One command per process: the list
 * is the process's. */
/* --db VALUE: a file, or a pattern (glob(3)) that names one or more. -1 after saying why (a
 * pattern that matches nothing, too many files): exit 2. */
int cmd_dbs_add(const char *cmd, const char *value);
/* --slurm-job ID: only that job's runs (runs.slurm_job_id or slurm_array_job_id) */
void cmd_dbs_slurm_job(const char *id);
const char *cmd_dbs_slurm(void); /* the job asked for, or NULL */
/* The database to read: the one given (or RTRACK_DB's, rtrack.db) or the private merge of all.
 * NULL after saying why: exit 2. */
const char *cmd_dbs_path(const char *cmd, const struct rt_env *env);
/* How many databases --db named (a glob's files counted); 0 when none was given. */
int cmd_dbs_count(void);
/* The databases as given, not merged (upload's, each in turn): *n of them, the default one
 * (RTRACK_DB's, rtrack.db) when none was given. */
const char *const *cmd_dbs_list(const struct rt_env *env, int *n);
/* summary --slurm-job: the job across its nodes (summary/cluster.h) in format 0 text, 1 JSON,
 * 2 markdown, from the database open in store; an exit code. */
int cmd_cluster_summary(struct rt_store *store, const char *slurm_job, int fmt);

#endif
