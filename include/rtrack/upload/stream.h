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
 * the run is recorded on: record/facts.h). */
struct rt_upload_opts;
struct rt_streamer *rt_streamer_start(const char *db_path, int64_t run, double interval,
                                      const char *token, const char *api_url,
                                      const struct rt_upload_opts *o, void (*ready)(void *ud),
                                      void *ready_ud);
/* The run has ended (its end is stored): send the rest and finish, waiting at most `budget`
 * seconds. 0 when the run is finished on Sentinel; -1 otherwise (warned about once; what was
 * not sent stays pending in the database for `rtrack upload`). NULL is fine. */
int rt_streamer_finish(struct rt_streamer *st, double budget);

#endif
