/* facts.h - facts of the recording that take a while to learn: the cloud the host runs on.
 *
 * The metadata services answer within two seconds, or not at all (collect/cloud.h). The
 * sampling thread never waits for them: the cloud is asked on a thread of its own, and what it
 * says is stored with the run through a connection of its own, before anything registers the
 * run with Sentinel (rt_cloud_job_wait). */
#ifndef RTRACK_RECORD_FACTS_H
#define RTRACK_RECORD_FACTS_H

#include <stdint.h>

#include "rtrack/collect/cloud.h"

struct rt_cloud_job;

/* Discover the cloud (o: how; copied) and store it with run `run` of the database at db_path.
 * NULL when no thread can be had (warned: the run is recorded without its cloud). */
struct rt_cloud_job *rt_cloud_job_start(const char *db_path, int64_t run,
                                        const struct rt_cloud_opts *o);
/* Wait until the cloud is stored (or discovery gave up), at most timeout seconds, from any
 * thread: 0 when it is done. j may be NULL (0). */
int rt_cloud_job_wait(struct rt_cloud_job *j, double timeout);
/* Wait for the job's end and free it. Bounded: discovery returns within its budget, and the
 * store's write within its busy timeout. j may be NULL. */
void rt_cloud_job_finish(struct rt_cloud_job *j);

#endif
