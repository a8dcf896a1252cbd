/* proc_threads.h - private to src/collect/: a many-threaded process's CPU wait, summed over its
 * threads' schedstat files but read only as far as the process's CPU clock says its threads ran
 * (proc_threads.c; proc.c owns the members, their kept files and the descriptor budget). */
#ifndef RTRACK_COLLECT_PROC_THREADS_H
#define RTRACK_COLLECT_PROC_THREADS_H

#include <stdint.h>

#include "rtrack/base/util.h"

/* The descriptors the process collector may keep open between samples: only on the live /proc
 * (keep), n of them, at most max (half the fd limit, 4096 at most). */
struct rt_fd_budget {
    int keep, n, max;
};

/* What one sample's reading of a process's threads said: whether it was quiet (its clock had
 * not moved: none of its threads ran), whether any file was tried, how many read, of them how
 * many "0 0 0" (not accounted) and how many with a figure (proc.c's learn_wait_src). */
struct rt_threads_seen {
    int quiet, tried, read, off, known;
};

/* One process's threads as last read; NULL before its first reading. */
struct rt_threads;

/* How long a cold thread's wait may wait to be read: every thread is read at least every this
 * many seconds of samples while the process runs. */
#define RT_THREADS_FULL_S 10.0
/* CPU time, ns, the process's clock may grow beyond what its hot threads account for since the
 * last reading of every thread before every thread is read again (a cold thread woke up, a new
 * one ran): 10 ms, more than the clock lags behind a thread running on another CPU (up to one
 * scheduler tick, 4 ms at HZ 250, per running thread). */
#define RT_THREADS_RESIDUE_NS INT64_C(10000000)

/* The process's CPU wait, ns, cumulative as rtrack counted it: the sum over its threads'
 * schedstat at its first reading, grown since by each thread's growth as read (a thread that
 * exits keeps what was counted of it); RT_NA while no thread's file gave a figure. *t is the
 * process's table (made at its first reading); task_fd its /proc/PID/task, open; clock_ns its
 * CPU clock (all its threads' CPU time, exited ones' too), -1 when unknown (then every thread
 * is read); threads the count its stat gave; gen the sample's number (from 1), full_every the
 * samples between two readings of every thread at the most. buf is scratch; seen says what was
 * read. */
int64_t rt_threads_wait(struct rt_threads **t, int task_fd, int64_t clock_ns, int64_t threads,
                        unsigned gen, unsigned full_every, struct rt_fd_budget *fds,
                        struct rt_buf *buf, struct rt_threads_seen *seen);
/* Close the table's descriptors (returned to fds) and free it; *t becomes NULL. */
void rt_threads_free(struct rt_threads **t, struct rt_fd_budget *fds);

#endif
