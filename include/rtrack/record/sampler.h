/* sampler.h - the parts of the recording loop (loop.h): taking and storing samples, the commit
 * cadence, absolute deadlines, and the signals rtrack waits on. */
#ifndef RTRACK_SAMPLER_H
#define RTRACK_SAMPLER_H

#include <signal.h>
#include <stdint.h>

#include "rtrack/collect/collect.h"
#include "rtrack/sample/sample.h"
#include "rtrack/store/store.h"

struct rt_live;
struct rt_slot;

/* What the sampler keeps in memory when the database cannot take samples (full disk, a lock
 * held too long, a file made read-only): the samples waiting, at most this many bytes of them
 * (the oldest are kept, later ones are lost until the database takes them again). */
#define RT_SAMPLER_KEEP_BYTES (16u << 20)
/* The samples of the open transaction are kept too, until it commits (a failed commit would
 * lose them otherwise); a transaction holding more than this is committed at once. */
#define RT_SAMPLER_BATCH_BYTES (64u << 10)
/* After a failed write, the oldest waiting sample is tried again this often. */
#define RT_SAMPLER_RETRY_S 1.0
/* At the end of the run, the run's end (and what waits) is tried for at most this long. */
#define RT_SAMPLER_END_WAIT_S 2.0

struct rt_sampler {
    const struct rt_sysenv *env;
    struct rt_collectors *col;
    struct rt_store *store;
    double interval;
    struct rt_sample *cur, *prev;
    /* The samples not committed yet, oldest first, each in a slot of its own until it is: the
     * first `added` are in the open transaction, the others wait for a write to succeed again.
     * kept[(kept_head + i) % kept_cap]. Slots are reused (spare), so recording allocates
     * nothing in the steady state. */
    struct rt_slot **kept;
    int kept_head, nkept, kept_cap, added;
    size_t kept_bytes; /* their memory */
    size_t keep_bytes; /* its bound: RT_SAMPLER_KEEP_BYTES (a test lowers it) */
    struct rt_slot **spare;
    int nspare, spare_cap;
    double retry_at;          /* monotonic time of the next try to write waiting samples */
    int catching_up;          /* the last try succeeded: write the next waiting ones at once */
    double first_uncommitted; /* monotonic time of the oldest sample not committed yet */
    /* commit every sample until then: another connection writes to the database too */
    double shared_until;
    int64_t stored, failed; /* samples committed / lost */
    int gpus_committed;     /* a sample with GPU rows was committed: the GPUs' facts with it */
    struct rt_live *live;   /* --output, or NULL */
    int warned, warned_full;
    int last_final; /* rt_sampler_drop: the last stored sample is the final one */
};

void rt_sampler_open(struct rt_sampler *s, const struct rt_sysenv *env,
                     const struct rt_collect_cfg *cc, struct rt_store *store, double interval);
/* Read every collector into a new sample (wall and monotonic clocks taken first). */
struct rt_sample *rt_sampler_collect(struct rt_sampler *s, enum rt_sample_kind kind);
/* Store the sample just collected. Commits when waiting for the next sample would leave a
 * sample uncommitted for more than a second (at a 1 s interval: every other sample; a kill -9
 * loses at most the samples of the last second), when the open transaction's samples take more
 * than RT_SAMPLER_BATCH_BYTES, and always for the baseline sample (in run mode with the job's
 * pid) and while another connection writes to the database. A final sample waits for
 * rt_sampler_end. A failure is reported once on stderr and loses nothing: the samples of the
 * failed transaction and those taken after it are kept (up to RT_SAMPLER_KEEP_BYTES) and
 * written, oldest first, once a try (every RT_SAMPLER_RETRY_S) succeeds. The job is never
 * affected. */
void rt_sampler_store(struct rt_sampler *s);
/* Whether the run's GPU facts (its gpus rows) are all the database will get before the end:
 * committed with a sample, or none to come (no GPU here). */
int rt_sampler_gpus_settled(struct rt_sampler *s);
/* The sample just collected is not stored, and ends the recording: the last stored sample
 * becomes the final one at rt_sampler_end (record --pid: the sample that finds the tree gone
 * measures nothing of it; stored, its zeros would read as a tree that used nothing). */
void rt_sampler_drop(struct rt_sampler *s);
/* Record the run's end, committing it with what is still uncommitted (the final sample, and
 * any samples still waiting): one commit for the end and the last of them. A failure is tried
 * again for up to RT_SAMPLER_END_WAIT_S (only then, and never for a deleted file). Returns 0 or
 * -1; `stored`/`failed` count every sample, those kept and lost at the end included. */
int rt_sampler_end(struct rt_sampler *s, const struct rt_run_end *e);
void rt_sampler_close(struct rt_sampler *s);

/* Absolute deadlines start + k*interval on CLOCK_MONOTONIC: no drift, and an overrun skips to
 * the next deadline instead of bursting. */
struct rt_ticker {
    int fd;
    double start, interval, stop_at; /* stop_at: an extra deadline (--duration), or 0 */
};
int rt_ticker_open(struct rt_ticker *t, double start, double interval, double stop_at);
/* Arm for the next deadline after now; returns that deadline. */
double rt_ticker_arm(struct rt_ticker *t);
void rt_ticker_close(struct rt_ticker *t);

/* Block `sigs` (plus SIGCHLD when wanted) and return a signalfd for them; SIGPIPE is ignored so
 * a closed stderr cannot kill the tracker (the job gets default dispositions back). */
int rt_signals_open(const int *sigs, int nsigs);

#endif
