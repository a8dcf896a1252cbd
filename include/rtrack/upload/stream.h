/* stream.h - streaming a run to Spare Cores Sentinel while `run` or `record` records it. */
#ifndef RTRACK_STREAM_H
#define RTRACK_STREAM_H

#include <stdint.h>

struct rt_streamer;

/* Start streaming run `run` of the database at db_path: a background thread registers the run
 * and uploads the samples committed since the last batch every `interval` seconds, in batches
 * of o->batch_rows. NULL, and no network connection at all, without a token (the CLI passes
 * SENTINEL_API_TOKEN). api_url: the Sentinel API (NULL: the public one). o is copied; its
 * strings must outlive the streamer. ready (may be NULL) is called on the streamer's thread
 * before the run is registered: what the registration sends must be stored by then (the cloud
 * the run is recorded on: record/facts.h). The registration also waits for
 * rt_streamer_facts_stored() (its GPUs), at most facts_wait seconds or until the run ends. */
struct rt_upload_opts;
struct rt_streamer *rt_streamer_start(const char *db_path, int64_t run, double interval,
                                      const char *token, const char *api_url,
                                      const struct rt_upload_opts *o, void (*ready)(void *ud),
                                      void *ready_ud, double facts_wait);
/* What rt_streamer_finish returns. */
enum {
    RT_STREAM_FINISHED = 0, /* the run is finished on Sentinel */
    RT_STREAM_FAILED = -1,  /* the streamer ended without finishing it */
    RT_STREAM_LEFT = -2,    /* the wait ended first (its time, or a signal): the streamer's thread
                             * is left running (it may be inside a network call, and still use
                             * what its ready() uses) until the process ends, by _exit
                             * (rt_thread_left()) */
};

/* The least facts_wait a recorder gives: a slow driver's init, then the first sample that
 * carries the GPUs, committed (the samples recorded meanwhile go in the first batch; after it
 * the run is registered without them). The recorder adds two sampling intervals to it. */
#define RT_STREAM_FACTS_WAIT_S 30.0

/* The recorder has committed the run's facts (its GPUs, or there are none): the registration
 * may go. From the recorder's thread; NULL is fine. */
void rt_streamer_facts_stored(struct rt_streamer *st);

/* What may cut the end-of-run wait short: when fd (a signalfd) is readable, stop(ud) is called;
 * a signal number > 0 ends the wait, 0 goes on waiting. */
struct rt_stream_cut {
    int fd;
    int (*stop)(void *ud);
    void *ud;
};

/* The run has ended (its end is stored): send the rest and finish, waiting at most `budget`
 * seconds, or until cut (may be NULL) says stop. Anything but RT_STREAM_FINISHED is warned
 * about once; what was not sent stays pending in the database for `rtrack upload`. NULL is
 * fine (RT_STREAM_FINISHED). */
int rt_streamer_finish(struct rt_streamer *st, double budget, const struct rt_stream_cut *cut);

#endif
