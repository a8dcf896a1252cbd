/* cmd.h - subcommands: one file each, argv[0] is the subcommand's name, env what the
 * environment says (env.h). */
#ifndef RTRACK_CMD_H
#define RTRACK_CMD_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "rtrack/store/store.h"

struct rt_env;

int cmd_run(int argc, char **argv, const struct rt_env *env);
int cmd_record(int argc, char **argv, const struct rt_env *env);
int cmd_export(int argc, char **argv, const struct rt_env *env);
int cmd_runs(int argc, char **argv, const struct rt_env *env);
int cmd_summary(int argc, char **argv, const struct rt_env *env);
int cmd_report(int argc, char **argv, const struct rt_env *env);
int cmd_upload(int argc, char **argv, const struct rt_env *env);

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

/* After getopt_long returned ':' or '?': say which option was wrong; returns exit code 2. */
int cmd_option_error(const char *cmd, int c, char **argv);

/* Output of export and report: a file written beside its final name and renamed when complete
 * (nothing is left under the name on failure), or stdout for NULL / "-". Both print why they
 * failed; close(ok = 0) discards the file. */
struct cmd_out {
    FILE *f;
    char *path, *tmp;
};
int cmd_out_open(struct cmd_out *o, const char *path);
int cmd_out_close(struct cmd_out *o, int ok);

/* The readers' preamble (export, runs, summary, report, upload): the database at db_path
 * opened (RT_STORE_READ; upload keeps its progress in it: RT_STORE_WRITE) and, unless run is
 * NULL, the run it names ("latest" or an id) resolved into *run_id and its start time into
 * *started (may be NULL). NULL after printing why: exit code 2 (RT_EXIT_USAGE). */
struct rt_store *cmd_open_db(const char *db_path, enum rt_store_mode mode, const char *run,
                             int64_t *run_id, double *started);

#endif
