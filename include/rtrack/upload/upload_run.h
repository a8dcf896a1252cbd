/* upload_run.h - `rtrack upload`'s unit of work: one recorded run to Sentinel, resumable. */
#ifndef RTRACK_UPLOAD_RUN_H
#define RTRACK_UPLOAD_RUN_H

#include <stddef.h>
#include <stdint.h>

struct rt_store;
struct rt_sentinel;

struct rt_upload_opts {
    int dry_run;        /* say what would be sent; no network, nothing written */
    int64_t batch_rows; /* samples per S3 object */
    int64_t inline_max; /* a run whose whole CSV has at most this many bytes, none of it sent
                         * yet, goes inline with /finish instead of S3 (0: always S3) */
    const char *s3_endpoint, *s3_region; /* rt_s3_target_parse's; NULL: AWS, the bucket's */
};

struct rt_upload_result {
    int already;                  /* finished before: nothing to do */
    int skipped;                  /* still being recorded, or busy */
    int busy;                     /* another rtrack is uploading it (its claim, uploads.h) */
    int in_doubt;                 /* a POST /runs of it got no usable answer (now or before):
                                   * Sentinel may hold it; not registered again by itself */
    int bad_input;                /* no such run */
    int registered;               /* POST /runs made now (else resumed) */
    int inline_data;              /* finished with data_csv instead of S3 objects */
    int64_t pending_rows;         /* samples not yet in an uploaded batch, before this call */
    int64_t batches, rows, bytes; /* sent by this call (inline: bytes of CSV, no batch) */
    char remote_run_id[128];
};

/* Register (or resume) run `run`, upload the samples not yet in an uploaded batch as gzip CSV
 * objects, finish it. Progress is committed after every batch. 0 when the run is finished on
 * Sentinel (or was already, or dry_run); -1 with a one-line reason in err (never a secret),
 * progress kept. One uploader per run: while another holds the run's claim, -1 with busy and
 * skipped set. A run whose registration is in doubt at this API is not posted: -1, in_doubt. */
int rt_upload_run(struct rt_store *store, int64_t run, const struct rt_sentinel *s,
                  const struct rt_upload_opts *o, struct rt_upload_result *res, char *err,
                  size_t errlen);

/* The steps, for streaming while recording (stream.c): a session registers the run on first
 * use (or resumes it with fresh credentials), sends every committed sample not yet sent in
 * batches, and finishes (inline when nothing was sent and the CSV is small). Each call may
 * fail and be repeated later; nothing is lost or sent twice. Each holds the run's claim while
 * it runs (busy when another uploader holds it). res may be NULL. */
struct rt_upload_session;
struct rt_upload_session *rt_upload_open(struct rt_store *store, int64_t run,
                                         const struct rt_sentinel *s,
                                         const struct rt_upload_opts *o);
int rt_upload_send(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                   size_t errlen);
int rt_upload_finish(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                     size_t errlen);
void rt_upload_close(struct rt_upload_session *u);

#endif
