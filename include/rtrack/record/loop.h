/* loop.h - the one recording loop of `run` and `record`: a baseline sample, a sample at every
 * deadline, a final sample, and the run's end stored.
 *
 * run: start the job, forward the signals rtrack gets to it (not those it was started with
 * ignored: they stay ignored, in the job too), wait on the deadline timer and a
 * signalfd together, and take the final sample the moment the job exits (while it is a zombie
 * its last CPU counters are still readable); rtrack is the job's child subreaper, so orphaned
 * descendants come back to it, stay in the tracked tree, and are reaped after a sample has
 * counted them. record: sample the system (with a pid, its tree too) until SIGINT, SIGTERM,
 * SIGHUP or SIGQUIT, until the duration has passed, or until the tree is gone.
 *
 * The CLI turns options into a struct rt_recording (and opens the database, the run's row, the
 * live output and the stream around it); the loop owns the interval, the ticker and the
 * signals. */
#ifndef RTRACK_RECORD_LOOP_H
#define RTRACK_RECORD_LOOP_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "rtrack/collect/collect.h"
#include "rtrack/store/store.h"

struct rt_live;

struct rt_recording {
    /* filled in by the caller */
    struct rt_store *store;      /* with its run begun (rt_store_begin_run) */
    const struct rt_sysenv *sys; /* the system to read */
    int full_scan;               /* find the tree by scanning all of /proc (rt_collect_cfg) */
    double interval;             /* seconds between samples */
    double duration;             /* record: stop after this many seconds; 0: no limit */
    struct rt_live *live;        /* live output (--output), or NULL */
    char *const *argv;           /* run: the job to start; NULL: record */
    char *const *envp;           /* run: the job's environment; NULL: rtrack's */
    pid_t pid;                   /* record: the tree to follow; 0: the system only */
    const char *cgroup;          /* record --cgroup: the job's own cgroup (collect.h), or NULL */
    int keep_system;             /* record: the tree gone, go on sampling the system (as the
                                  * Rust tool does: resource-tracker --pid) */
    int ready_fd; /* > 2: one byte written to it, and it closed, once the baseline is stored
                     (RTRACK_READY_FD: the Slurm plugin starts the step then); else none */
    /* called once, on the loop's thread, when the run's facts are all committed that will be
     * before its end: its GPUs (rt_sampler_gpus_settled), or the recording ended; or NULL */
    void (*facts)(void *ud);
    void *facts_ud;
    /* the loop's own: set by rt_record_signals, closed by rt_record_close */
    int sigfd;
    int sig_errno;    /* why sigfd is -1 */
    sigset_t ignored; /* run: the signals ignored when rtrack started (kept so in the job) */
};

/* Block the signals the loop waits on and open a signalfd for them: run: SIGINT, SIGTERM,
 * SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 (forwarded to the job) and SIGCHLD; record: SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT (they stop it). Called before any thread starts (threads inherit
 * the mask) and before the job does; from then on these signals are queued, never lost. Without
 * a signalfd, run goes on (warned about once the job has started: it cannot forward signals)
 * and record cannot (-1, after printing why).
 * run: called before rtrack changes any signal's disposition. A signal ignored when rtrack
 * started (nohup, a script's background command) stays ignored, by rtrack and by the job, and
 * is not forwarded: rtrack is as transparent as the shell that would have started the job
 * itself. SIGCHLD is the exception: rtrack needs it at its default to see the job end (ignored,
 * the kernel would reap the job unseen), and the job starts with it at its default too. */
int rt_record_signals(struct rt_recording *r);

/* After the loop: the signals that came since, read; the first that asks rtrack to stop (any
 * but SIGCHLD), 0 when none did. What cuts the end-of-run upload wait short. */
int rt_record_stop_signal(struct rt_recording *r);

/* How a recording ended. */
struct rt_record_result {
    int started;        /* run: 0 when the job could not be started (said on stderr); record: 1 */
    int exit_code;      /* run: what rtrack exits with: the job's exit code, 128+N when signal N
                         * killed it, 127 command not found, 126 not executable; record: 0 */
    int64_t signal;     /* run: the signal that killed the job, RT_NA otherwise */
    const char *reason; /* the run's end_reason as stored: exited, signaled, spawn-failed;
                         * interrupted, duration, tree-gone */
    int64_t stored, failed; /* samples committed / lost */
    double elapsed;         /* seconds: run from the job's start, record from the collectors' */
};

/* Record until the job exits (run) or until a signal, the duration or the end of the tree
 * (record), then store the run's end (committing the final sample with it). Failures to store
 * are warned about once and never stop the recording, nor the job. */
void rt_record(struct rt_recording *r, struct rt_record_result *out);

/* The Slurm plugin's word on how a step ended (src/slurm/spank_step.c sends it): SIGTERM sent
 * with sigqueue(3) by root, its value RT_STEP_END_MAGIC << 28 | state << 24 | OOM kills << 16 |
 * signal << 8 | exit code: the largest exit code of the step's tasks, the signal that killed
 * one (0: none), the OOM kills in the step's cgroup (at most 255) and the job's state as
 * slurmctld said it (index into rt_step_end_states, 0: not asked). A record that ends on it
 * stores them (exit_code, exit_signal, cgroup_oom_kills: the larger of its own count and this,
 * slurm_job_state). */
#define RT_STEP_END_MAGIC 0xa
extern const char *const rt_step_end_states[];
#define RT_STEP_END_NSTATES 10

/* Close the signalfd (the signals stay blocked). */
void rt_record_close(struct rt_recording *r);

#endif
