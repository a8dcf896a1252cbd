/* cmd_recording.h - what `run` and `record` do alike around the recording loop: private to
 * src/cli/ (cmd_run.c, cmd_record.c). */
#ifndef RTRACK_CLI_CMD_RECORDING_H
#define RTRACK_CLI_CMD_RECORDING_H

#include <stdint.h>
#include <sys/types.h>

#include "rtrack/cli/config.h"
#include "rtrack/cli/env.h"
#include "rtrack/collect/collect.h"
#include "rtrack/record/loop.h"

struct cmd_recording {
    struct rt_sysenv sys;
    struct rt_host_info host;
    struct rt_store *store;
    int64_t run_id;
    struct rt_live *live;
    struct rt_streamer *stream;
    struct rt_cloud_job *cloud; /* the cloud being discovered and stored, or NULL */
    int64_t inline_max;         /* RTRACK_UPLOAD_INLINE_MAX, for streaming */
    char **job_env;             /* run: the job's environment (environ's strings, a new array) */
    char *job_vars[2];          /* and the two it adds: RTRACK_RUN_ID=, RTRACK_RUN_DB= */
    struct rt_recording loop;   /* what the loop needs, from the options */
};

/* What a recording is asked to do, checked before anything is done: a live output that is the
 * database (or its -wal, -shm, -journal), the environment's values (streaming's time limits,
 * RTRACK_UPLOAD_INLINE_MAX; run: RTRACK_KEEP_TOKEN_IN_JOB). -1 after saying what is wrong (a
 * usage error: exit 2). Called first; c is then ready for the open. */
int cmd_recording_check(struct cmd_recording *c, const struct rt_config *cfg,
                        const struct rt_env *env, const char *mode);

/* The database, the host's facts and the run's row, in that order, so any problem is reported
 * before a job starts (--run-id-file: opened before the database, written once the row is);
 * the job's environment (RTRACK_RUN_ID and RTRACK_RUN_DB added); the live output; the loop's
 * signals; the cloud's discovery (when streaming or asked for); streaming (with
 * SENTINEL_API_TOKEN). mode: "run" or "record"; command_json: run's argv as a JSON array; pid:
 * record's --pid. -1 after printing why; cmd_recording_close undoes what was done either way. */
int cmd_recording_open(struct cmd_recording *c, const struct rt_config *cfg,
                       const struct rt_env *env, const char *mode, const char *command_json,
                       pid_t pid);
/* After the loop stored the run's end: the streamer sends the rest and finishes (waiting at
 * most RTRACK_UPLOAD_WAIT seconds, cut short by a signal that comes meanwhile: SIGCHLD aside,
 * any the loop waits for), and the cloud's discovery is waited for (not when the streamer is
 * left running: both are left to the process's exit). */
void cmd_recording_finish(struct cmd_recording *c, const struct rt_env *env);
void cmd_recording_close(struct cmd_recording *c);
/* Exit as the job did: a job killed by signal N kills rtrack with N, everything stored, closed
 * and written (a shell stops its loop on Ctrl-C only when the child died of SIGINT, not when it
 * exited 130; 128+N where that cannot be done); else returns exit_code. */
int cmd_exit_as_job(int exit_code, int job_signal);

#endif
