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

struct rt_sampler {
    const struct rt_sysenv *env;
    struct rt_collectors *col;
    struct rt_store *store;
    double interval;
    struct rt_sample buf[2];
    struct rt_sample *cur, *prev;
    double first_uncommitted; /* monotonic time of the oldest sample not committed yet */
    /* commit every sample until then: another connection writes to the database too */
    double shared_until;
    int64_t stored, failed; /* samples committed / lost */
    int64_t uncommitted;    /* added to the open transaction, not committed yet */
    struct rt_live *live;   /* --output, or NULL */
    int warned;
};

void rt_sampler_open(struct rt_sampler *s, const struct rt_sysenv *env,
                     const struct rt_collect_cfg *cc, struct rt_store *store, double interval);
/* Read every collector into a new sample (wall and monotonic clocks taken first). */
struct rt_sample *rt_sampler_collect(struct rt_sampler *s, enum rt_sample_kind kind);
/* Store the sample just collected. Commits when waiting for the next sample would leave a
 * sample uncommitted for more than a second (at a 1 s interval: every other sample; a kill -9
 * loses at most the samples of the last second), and always for the baseline sample (in run
 * mode with the job's pid) and while another connection writes to the database. A final sample
 * waits for rt_sampler_end. A failure is reported once on stderr; recording keeps being
 * attempted, the job is never affected. */
void rt_sampler_store(struct rt_sampler *s);
/* Record the run's end, committing it with what is still uncommitted (the final sample): one
 * commit for both. Returns rt_store_end_run's result; `stored`/`failed` count those samples. */
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
