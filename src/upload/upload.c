/* upload.c - one recorded run to Sentinel: register, gzip CSV batches to S3, finish.
 *
 * Progress lives in the database (uploads, upload_batches: the store's uploads.h), committed
 * after every batch, so an upload that stops anywhere (network down, kill -9) resumes with the
 * first sample not yet in an uploaded batch, and a finished run is never sent again. A batch is
 * the combined 32-column CSV of `rtrack export` (header + rows), gzip'ed with zlib. */
#include "rtrack/upload/upload_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/net/libs.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/store/uploads.h"
#include "rtrack/upload/upload.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int db_fail(struct rt_store *store, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot use the database: %s", rt_store_error(store));
    return -1;
}

/* The combined CSV (header + rows with seq in [from, to]) into a memory buffer. */
static int batch_csv(struct rt_store *store, int64_t run, int64_t from, int64_t to, char **text,
                     size_t *len, int64_t *rows, char *err, size_t errlen)
{
    struct rt_export_query q = {RT_FMT_CSV, RT_TABLE_COMBINED, run, RT_NAN, RT_NAN, 0, from, to};
    struct rt_exporter *x = rt_exporter_open(store, &q, err, errlen);
    if (!x)
        return -1;
    FILE *f = open_memstream(text, len);
    int rc = -1;
    if (f && rt_exporter_header(x, f) == 0 && (*rows = rt_exporter_rows(x, f, err, errlen)) >= 0)
        rc = 0;
    if (f && fclose(f) != 0)
        rc = -1;
    rt_exporter_close(x);
    if (rc != 0 && !*err)
        snprintf(err, errlen, "cannot build a batch in memory");
    return rc;
}

/* gzip (not zlib/deflate framing) of the CSV text, at zlib's default level. */
static int gzip_buf(const char *in, size_t len, struct rt_buf *out)
{
    const struct rt_zlib_api *zl = rt_zlib();
    if (!zl)
        return -1;
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (zl->deflate_init2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY,
                          ZLIB_VERSION, (int)sizeof(z)) != Z_OK)
        return -1;
    size_t bound = zl->deflate_bound(&z, (uLong)len);
    out->len = 0;
    rt_buf_reserve(out, bound + 1);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    z.next_out = (Bytef *)out->p;
    z.avail_out = (uInt)bound;
    int rc = zl->deflate(&z, Z_FINISH);
    out->len = z.total_out;
    zl->deflate_end(&z);
    return rc == Z_STREAM_END ? 0 : -1;
}

static int refresh_if_needed(const struct rt_sentinel *s, struct rt_sentinel_run *r, char *err,
                             size_t errlen)
{
    if (r->expires_at - now_s() >= 300)
        return 0;
    return rt_sentinel_refresh(s, r, err, errlen);
}

/* One run's upload: what the database says was sent, and the live credentials. */
struct rt_upload_session {
    struct rt_store *store;
    int64_t run;
    const struct rt_sentinel *s;
    struct rt_upload_opts o;
    struct rt_sentinel_run r;
    struct rt_s3_target t;
    int registered, finished;
    int64_t last_seq, batches;
    struct rt_buf gz;
};

/* Where the upload of a run stands (uploads, upload_batches) and the newest sample's seq. */
static int load_state(struct rt_upload_session *u, int64_t *max_seq, char *err, size_t errlen)
{
    struct rt_store_upload st;
    if (rt_store_upload_load(u->store, u->run, &st) != 0)
        return db_fail(u->store, err, errlen);
    u->registered = st.remote_run_id != NULL;
    if (u->registered && !u->r.run_id) {
        u->r.run_id = st.remote_run_id;
        u->r.upload_uri_prefix = st.upload_uri_prefix;
        st.remote_run_id = st.upload_uri_prefix = NULL;
    }
    u->last_seq = st.last_seq;
    u->finished = st.finished;
    u->batches = st.batches;
    *max_seq = st.max_seq;
    rt_store_upload_free(&st);
    return 0;
}

/* Register the run (POST /runs), or get fresh credentials for one registered before. */
static int ensure_registered(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                             size_t errlen)
{
    if (u->r.creds.secret_key)
        return 0;
    if (u->registered)
        return rt_sentinel_refresh(u->s, &u->r, err, errlen);
    /* host and cloud facts as recorded: an upload measures nothing (a database copied
     * elsewhere and uploaded there still says where the job ran) */
    char *body = rt_store_upload_start_body(u->store, u->run);
    if (!body)
        return db_fail(u->store, err, errlen);
    int k = rt_sentinel_start_run(u->s, body, &u->r, err, errlen);
    free(body);
    if (k != 0)
        return -1;
    if (rt_store_upload_register(u->store, u->run, u->s->base, u->r.run_id, u->r.upload_uri_prefix,
                                 now_s()) != 0)
        return db_fail(u->store, err, errlen);
    u->registered = 1;
    if (res)
        res->registered = 1;
    return 0;
}

/* Record one uploaded batch (uri NULL: none, the range had no rows) and the new progress. */
static int commit_batch(struct rt_upload_session *u, const char *uri, int64_t from, int64_t to,
                        int64_t rows, char *err, size_t errlen)
{
    struct rt_store_upload_batch b = {u->batches, uri, from, to, rows, (int64_t)u->gz.len, now_s()};
    if (rt_store_upload_commit_batch(u->store, u->run, &b) != 0)
        return db_fail(u->store, err, errlen);
    if (uri)
        u->batches++;
    u->last_seq = to;
    return 0;
}

/* One object, tried three times (after 1 s and 3 s) before the call gives up; the batch is
 * not dropped either way: it stays the next one to send. */
static int put_with_retries(struct rt_upload_session *u, const char *key, char *uri, size_t uricap,
                            char *err, size_t errlen)
{
    static const unsigned waits_ms[] = {0, 1000, 3000};
    for (size_t i = 0; i < RT_ARRAY_LEN(waits_ms); i++) {
        if (waits_ms[i])
            usleep(waits_ms[i] * 1000);
        if (refresh_if_needed(u->s, &u->r, err, errlen) == 0 &&
            rt_s3_put(&u->t, &u->r.creds, key, u->gz.p, u->gz.len, uri, uricap, err, errlen) == 0)
            return 0;
    }
    return -1;
}

int rt_upload_send(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                   size_t errlen)
{
    int64_t max_seq;
    if (load_state(u, &max_seq, err, errlen) != 0 || ensure_registered(u, res, err, errlen) != 0)
        return -1;
    while (u->last_seq < max_seq) {
        int64_t from = u->last_seq + 1, to = u->last_seq + u->o.batch_rows;
        if (to > max_seq)
            to = max_seq;
        char *csv = NULL;
        size_t csv_len = 0;
        int64_t rows = 0;
        if (batch_csv(u->store, u->run, from, to, &csv, &csv_len, &rows, err, errlen) != 0) {
            free(csv);
            return -1;
        }
        char uri[2048];
        int rc = 0;
        if (rows > 0) {
            char key[160];
            snprintf(key, sizeof(key), "%s/%06lld.csv.gz", u->r.run_id, (long long)u->batches);
            if (gzip_buf(csv, csv_len, &u->gz) != 0) {
                const char *why = rt_zlib_load_error();
                snprintf(err, errlen, "cannot compress a batch%s%s", why ? ": " : "",
                         why ? why : "");
                rc = -1;
            } else if ((!u->t.bucket &&
                        rt_s3_target_parse(u->r.upload_uri_prefix, u->o.s3_endpoint, u->o.s3_region,
                                           &u->t, err, errlen) != 0) ||
                       put_with_retries(u, key, uri, sizeof(uri), err, errlen) != 0) {
                rc = -1;
            }
        }
        free(csv);
        if (rc != 0 || commit_batch(u, rows > 0 ? uri : NULL, from, to, rows, err, errlen) != 0)
            return -1;
        if (res && rows > 0) {
            res->batches++;
            res->rows += rows;
            res->bytes += (int64_t)u->gz.len;
        }
    }
    return 0;
}

int rt_upload_finish(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                     size_t errlen)
{
    int64_t max_seq;
    if (load_state(u, &max_seq, err, errlen) != 0)
        return -1;
    if (u->finished) {
        if (res)
            res->already = 1;
        return 0;
    }
    if (ensure_registered(u, res, err, errlen) != 0)
        return -1;
    /* a small run none of which was sent yet goes inline with /finish */
    char *csv = NULL;
    size_t csv_len = 0;
    int inline_data = 0;
    if (u->batches == 0 && u->last_seq == 0) {
        int64_t rows;
        if (batch_csv(u->store, u->run, 0, 0, &csv, &csv_len, &rows, err, errlen) != 0) {
            free(csv);
            return -1;
        }
        if ((int64_t)csv_len <= u->o.inline_max) {
            inline_data = 1;
            if (res) {
                res->rows = rows;
                res->bytes = (int64_t)csv_len;
            }
        } else {
            free(csv);
            csv = NULL;
        }
    }
    if (!inline_data && rt_upload_send(u, res, err, errlen) != 0)
        return -1;
    char *body = rt_store_upload_finish_body(u->store, u->run, inline_data ? csv : NULL, csv_len);
    free(csv);
    if (!body)
        return db_fail(u->store, err, errlen);
    int k = rt_sentinel_finish(u->s, u->r.run_id, body, err, errlen);
    free(body);
    if (k != 0)
        return -1;
    if (rt_store_upload_finished(u->store, u->run, now_s(), max_seq) != 0)
        return db_fail(u->store, err, errlen);
    u->finished = 1;
    if (res) {
        res->inline_data = inline_data;
        snprintf(res->remote_run_id, sizeof(res->remote_run_id), "%s", u->r.run_id);
    }
    return 0;
}

struct rt_upload_session *rt_upload_open(struct rt_store *store, int64_t run,
                                         const struct rt_sentinel *s,
                                         const struct rt_upload_opts *o)
{
    struct rt_upload_session *u = xcalloc(1, sizeof(*u));
    u->store = store;
    u->run = run;
    u->s = s;
    u->o = *o;
    return u;
}

void rt_upload_close(struct rt_upload_session *u)
{
    if (!u)
        return;
    rt_buf_free(&u->gz);
    rt_s3_target_free(&u->t);
    rt_sentinel_run_free(&u->r);
    free(u);
}

int rt_upload_run(struct rt_store *store, int64_t run, const struct rt_sentinel *s,
                  const struct rt_upload_opts *o, struct rt_upload_result *res, char *err,
                  size_t errlen)
{
    memset(res, 0, sizeof(*res));
    err[0] = '\0';
    /* an abandoned run (its recorder was killed) is sent as failed */
    char *status = NULL;
    if (rt_store_upload_run_status(store, run, &status) != 0 || !status) {
        snprintf(err, errlen, "no run %lld in the database", (long long)run);
        res->bad_input = 1;
        return -1;
    }
    int running = !strcmp(status, "running");
    free(status);
    if (running) {
        snprintf(err, errlen, "run %lld is still being recorded", (long long)run);
        res->skipped = 1;
        return -1;
    }
    struct rt_upload_session *u = rt_upload_open(store, run, s, o);
    int64_t max_seq;
    int rc = load_state(u, &max_seq, err, errlen);
    if (rc == 0 && u->finished) {
        res->already = 1;
    } else if (rc == 0 && !u->registered && max_seq <= u->last_seq) {
        /* nothing after the baseline, and Sentinel has never heard of the run: registering it
         * would only leave an empty run there (a command that was not found, a recording
         * stopped before its first interval) */
        snprintf(err, errlen,
                 "it has no samples after its baseline (its command did not start, "
                 "or it ended before the first interval)");
        res->skipped = 1;
        rc = -1;
    } else if (rc == 0 && o->dry_run) {
        res->pending_rows = max_seq > u->last_seq ? max_seq - u->last_seq : 0;
    } else if (rc == 0) {
        res->pending_rows = max_seq > u->last_seq ? max_seq - u->last_seq : 0;
        rc = rt_upload_finish(u, res, err, errlen);
    }
    rt_upload_close(u);
    return rc;
}
