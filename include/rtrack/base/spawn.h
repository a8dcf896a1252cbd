/* spawn.h - starting processes: the job, and short helper commands. */
#ifndef RTRACK_SPAWN_H
#define RTRACK_SPAWN_H

#include <signal.h>
#include <sys/types.h>

#include "rtrack/base/util.h"

/* Start argv (PATH lookup) with the signal mask and dispositions a fresh process expects,
 * sharing our stdin, stdout and stderr. Returns 0 and the pid, or the errno of the failed start
 * (ENOENT: not found, EACCES/ENOEXEC/...: not executable). */
int rt_spawn_job(char *const argv[], pid_t *pid);

/* Run a helper command with stdout captured into `out` and a time limit; it is killed when the
 * limit passes. Returns 0 when it exited 0 in time. */
int rt_capture(char *const argv[], int timeout_ms, struct rt_buf *out);

#endif
