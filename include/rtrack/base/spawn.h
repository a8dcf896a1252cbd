/* spawn.h - starting processes: the job, and short helper commands; and ending as the job
 * ended. */
#ifndef RTRACK_SPAWN_H
#define RTRACK_SPAWN_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "rtrack/base/util.h"

/* Start argv (PATH lookup) with the environment envp (NULL: rtrack's own), sharing our stdin,
 * stdout and stderr, with nothing blocked and every signal at its default disposition but those
 * in keep_ignored (NULL: none), which stay ignored (they must be ignored in rtrack too: those
 * ignored when it started, as nohup and a script's background commands leave them). Returns 0
 * and the pid, or the errno of the failed start (ENOENT: not found, EACCES/ENOEXEC/...: not
 * executable). */
int rt_spawn_job(char *const argv[], char *const envp[], const sigset_t *keep_ignored, pid_t *pid);

/* rt_spawn_job on a thread of its own, so that the caller works on while the kernel makes the
 * job: posix_spawn's caller waits until the job has exec'd (or failed to), which on a machine
 * whose other CPU sleeps is a few hundred microseconds of waiting. Where no thread can be
 * started, the job is started by rt_spawn_job_start itself, before it returns; where the
 * thread took the last task a limit allowed (EAGAIN), by rt_spawn_job_finish. The thread
 * starts with the caller's signal mask, so a signal rtrack waits for stays blocked in it.
 * argv, envp and keep_ignored must stay as they are until rt_spawn_job_finish. */
struct rt_spawn_async {
    char *const *argv, *const *envp;
    const sigset_t *keep_ignored;
    pthread_t th;
    int threaded, err;
    pid_t pid;
};
void rt_spawn_job_start(struct rt_spawn_async *a, char *const argv[], char *const envp[],
                        const sigset_t *keep_ignored);
/* Waits for the start: rt_spawn_job's result (0 and *pid, or the errno). */
int rt_spawn_job_finish(struct rt_spawn_async *a, pid_t *pid);

/* Why argv0 could not be started (err: rt_spawn_job's errno; envp: the PATH it was looked up
 * on, NULL: rtrack's), as shells say it, into why: "command not found", "its interpreter
 * '/x' was not found", "it is not a binary and has no '#!' line ...", "it is a directory", ... */
void rt_spawn_why(const char *argv0, char *const envp[], int err, char *why, size_t n);

/* 1 when argv0 names a file (it has a '/') or a regular file on rtrack's PATH: what a start
 * would find (rtrack's "is this a program?" when a command name is unknown). */
int rt_spawn_findable(const char *argv0);

/* The exit code of a job that could not be started: 127 not found, 126 found but not
 * executable. */
int rt_spawn_exit_code(int err);

/* Run a helper command with stdout captured into `out` and a time limit; it is killed when the
 * limit passes. Returns 0 when it exited 0 in time. */
int rt_capture(char *const argv[], int timeout_ms, struct rt_buf *out);

/* Die of signal sig, as the job did, so that a parent sees the job's wait status (a shell
 * ends its loop on a child killed by SIGINT, but not on one that exited 130): core dumps
 * disabled (the job's core is the job's; rtrack's own would be a surprise), sig reset to its
 * default and unblocked in this thread, then raised. Call it last: everything stored, closed
 * and flushed. Returns only where that is not possible (a signal that cannot be raised, such as
 * glibc's internal ones; core dumps that cannot be disabled): the caller exits 128 + sig. */
void rt_die_of_signal(int sig);

/* "SIGTERM" for the standard signals, "SIGRTMIN+N" for real-time ones, else "signal N"
 * (buf: at least 16 bytes). */
const char *rt_signal_name(int sig, char *buf, size_t n);

#endif
