/* uploads.h - what the database keeps of uploads to Spare Cores Sentinel (the uploads and
 * upload_batches tables, sql/migrations/0004_uploads.sql and 0006_upload_claims.sql), and the
 * two request bodies that are built from a run's rows.
 *
 * Progress is committed after every uploaded batch, so an upload that stops anywhere resumes
 * with the first sample not yet in an uploaded batch, and a finished run is never sent again.
 * One rtrack at a time uploads a run: it reserves the run's uploads row (rt_store_upload_claim)
 * before anything is sent, and a POST /runs is recorded as sent before it goes out, so one whose
 * answer was lost is known afterwards (in doubt) and not sent again blindly.
 * Every function returns 0 (or a string) on success and -1 (or NULL) on failure, with SQLite's
 * reason alone in rt_store_error(): upload.c says "cannot use the database: REASON". */
#ifndef RTRACK_STORE_UPLOADS_H
#define RTRACK_STORE_UPLOADS_H

#include <stddef.h>
#include <stdint.h>

struct rt_store;

/* Where the upload of a run stands. */
struct rt_store_upload {
    char *remote_run_id;     /* Sentinel's id of the run; NULL: not registered yet */
    char *upload_uri_prefix; /* s3://bucket/prefix the API assigned (with remote_run_id) */
    int64_t last_seq;        /* samples up to this seq are in uploaded batches */
    int finished;            /* /finish was accepted */
    int64_t batches;         /* objects uploaded */
    int64_t max_seq;         /* the run's newest sample */
    char *uuid;              /* runs.uuid: the run's stable key (never NULL after a load) */
    char *api_url;           /* the API of the row; NULL: no row */
    /* not registered, and a POST /runs went out at this time whose answer was never stored
     * (NAN: none); register_error says why (NULL: its sender stopped before it knew) */
    double register_sent_at;
    char *register_error;
};

/* The state of run `run`'s upload; -1 also when there is no such run. Free with
 * rt_store_upload_free(). */
int rt_store_upload_load(struct rt_store *s, int64_t run, struct rt_store_upload *u);
void rt_store_upload_free(struct rt_store_upload *u);

/* Who uploads a run: a process on a host, until a time unless it renews its claim. */
struct rt_store_upload_owner {
    char host[256];
    int64_t pid;
    double until; /* epoch seconds */
};

/* Reserve run `run`'s upload for `me` in one write transaction: its uploads row is made (with
 * api_url) when there is none, and owned by me when nobody owns it, me already does (a renewal:
 * me->until is stored), the owner's time ran out (before `now`), or the owner is exactly
 * `stale` (NULL: none), one the caller found dead. 0: it is mine; 1: another owns it (*holder,
 * which may be NULL); -1: the database failed. */
int rt_store_upload_claim(struct rt_store *s, int64_t run, const char *api_url,
                          const struct rt_store_upload_owner *me, double now,
                          const struct rt_store_upload_owner *stale,
                          struct rt_store_upload_owner *holder);
/* Give it back: the row is no longer mine, and a row that holds nothing else (not registered,
 * no registration in doubt) is removed. Nothing happens when me does not own it. */
int rt_store_upload_release(struct rt_store *s, int64_t run,
                            const struct rt_store_upload_owner *me);

/* POST /runs to `api_url` goes out now (`now`): committed before it is sent, so that if the
 * answer is never stored the registration is known to be in doubt. */
int rt_store_upload_registering(struct rt_store *s, int64_t run, const char *api_url, double now);
/* Its outcome: why is the reason it is unknown (the registration stays in doubt), or NULL when
 * Sentinel certainly did not register the run (never sent, refused): the doubt is cleared. */
int rt_store_upload_register_outcome(struct rt_store *s, int64_t run, const char *why);

/* The run was registered with the API at `api_url` as `remote_run_id` at time `now` (any doubt
 * cleared; the row made when there is none). */
int rt_store_upload_register(struct rt_store *s, int64_t run, const char *api_url,
                             const char *remote_run_id, const char *upload_uri_prefix, double now);

/* One uploaded object, recorded with the run's new progress in one transaction. */
struct rt_store_upload_batch {
    int64_t batch;   /* 0, 1, 2 ... */
    const char *uri; /* NULL: nothing was uploaded (no rows), only the progress moves */
    int64_t first_seq, last_seq, rows, bytes;
    double uploaded_at;
};
int rt_store_upload_commit_batch(struct rt_store *s, int64_t run,
                                 const struct rt_store_upload_batch *b);

/* /finish was accepted at `now`; every sample up to max_seq counts as sent. */
int rt_store_upload_finished(struct rt_store *s, int64_t run, double now, int64_t max_seq);

/* Whether run `run` may be uploaded: *status is its status, "abandoned" for a run still marked
 * running whose newest sample is older than three intervals and two seconds (its recorder was
 * killed), or NULL when there is no such run (0 returned). Free *status. */
int rt_store_upload_run_status(struct rt_store *s, int64_t run, char **status);

/* The statement a person runs (with sqlite3) to say that Sentinel has no such run: it clears
 * the doubt of run `run`'s registration, so that upload registers it again. The tables are the
 * store's to name; the id is in the text, as it is for a person to paste. Free it. */
char *rt_store_upload_doubt_sql(int64_t run);

/* The runs `rtrack upload --all` sends: not finished on Sentinel, not being recorded; oldest
 * first. *ids is allocated (free it), *n its length. */
int rt_store_upload_pending(struct rt_store *s, int64_t **ids, int *n);

/* The JSON body of POST /runs for run `run` (Sentinel's run metadata, resource-tracker-rs
 * §6.2): the run's metadata, host and cloud facts, as they were recorded. NULL when it cannot
 * be built. Free it. */
char *rt_store_upload_start_body(struct rt_store *s, int64_t run);

/* The JSON body of POST /runs/{id}/finish (§6.7): the S3 route with every batch's URI, or,
 * with csv (csv_len bytes), the run's CSV inline. NULL when it cannot be built. Free it. */
char *rt_store_upload_finish_body(struct rt_store *s, int64_t run, const char *csv, size_t csv_len);

#endif
