/* upload.c - one recorded run to Sentinel: register, gzip CSV batches to S3, finish.
 *
 * Progress lives in the database (uploads, upload_batches: the store's uploads.h), committed
 * after every batch, so an upload that stops anywhere (network down, kill -9) resumes with the
 * first sample not yet in an uploaded batch, and a finished run is never sent again. A batch is
 * the combined 32-column CSV of `rtrack export` (header + rows), gzip'ed with zlib.
 *
 * One uploader per run: whatever sends anything runs under the run's claim in the database
 * (rt_store_upload_claim), taken before POST /runs and renewed before each request, so a second
 * `rtrack upload` (or a streaming recorder) sees it and leaves the run alone instead of
 * registering it again. A claim whose owner died (same host, no such process) or whose time ran
 * out is taken over. POST /runs is recorded as sent before it goes out: when its answer is lost
 * (a timeout, a closed connection, a kill -9 in between) the registration is in doubt, and the
 * run is not posted again by itself; the user is told why and how to clear it. Every message
 * that leaves this file is stripped of the token and the S3 credentials (rt_sentinel_redact). */
#include "rtrack/upload/upload_run.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/net/http.h"
#include "rtrack/net/libs.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/store/uploads.h"
#include "rtrack/upload/upload.h"

/* A claim lasts this long past its last renewal (and longer than any one step can take: an S3
 * object's three tries at the longest time limit): long enough that a live uploader is never
 * taken over, short enough that a dead one on another host frees the run the same day. */
#define CLAIM_MIN_S 600.0

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
    struct rt_export_query q = {RT_FMT_CSV, RT_TABLE_COMBINED, run, RT_NAN, RT_NAN, 0, from, to, 0};
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
    char api[512];                   /* the API's URL as stored and shown (no secret in it) */
    char *uuid;                      /* runs.uuid: the Idempotency-Key of POST /runs */
    struct rt_store_upload_owner me; /* this process, as its claims name it */
    int claims;                      /* how deep inside claim_begin() this session is */
    double doubt_at;                 /* a POST /runs whose answer was lost went out then (NAN) */
    char *doubt_api, *doubt_why;     /* to that API, for that reason (NULL: its sender died) */
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
    free(u->uuid);
    free(u->doubt_api);
    free(u->doubt_why);
    u->uuid = st.uuid;
    u->doubt_at = st.register_sent_at;
    u->doubt_api = st.api_url;
    u->doubt_why = st.register_error;
    st.uuid = st.api_url = st.register_error = NULL;
    rt_store_upload_free(&st);
    return 0;
}

/* --- one uploader per run ------------------------------------------------------------------- */

static double claim_lease_s(void)
{
    return CLAIM_MIN_S + 4.0 * (double)rt_http_timeout_ms(60000) / 1000.0;
}

/* The holder of a claim is gone: a process of this host that no longer exists. (A process of
 * another host cannot be asked: its claim runs out instead. A reused pid keeps the claim alive
 * until then: the safe side.) */
static int holder_gone(const struct rt_upload_session *u, const struct rt_store_upload_owner *h)
{
    return h->pid > 0 && strcmp(h->host, u->me.host) == 0 && kill((pid_t)h->pid, 0) != 0 &&
           errno == ESRCH;
}

/* Take the run's claim, or renew it when this session holds it. -1 with err when another
 * uploader holds it (res->busy) or the database fails. */
static int claim_take(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                      size_t errlen)
{
    double now = now_s();
    u->me.until = now + claim_lease_s();
    struct rt_store_upload_owner holder, stale;
    const struct rt_store_upload_owner *gone = NULL;
    for (;;) {
        int k = rt_store_upload_claim(u->store, u->run, u->api, &u->me, now, gone, &holder);
        if (k < 0)
            return db_fail(u->store, err, errlen);
        if (k == 0)
            return 0;
        if (gone || !holder_gone(u, &holder))
            break;
        stale = holder; /* taken over only if it is still exactly that dead holder's */
        gone = &stale;
    }
    snprintf(err, errlen, "another rtrack (pid %lld on %s) is uploading it; it is not sent twice",
             (long long)holder.pid, holder.host);
    if (res)
        res->busy = 1;
    return -1;
}

static int claim_begin(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                       size_t errlen)
{
    if (u->claims == 0 && claim_take(u, res, err, errlen) != 0)
        return -1;
    u->claims++;
    return 0;
}

static void claim_end(struct rt_upload_session *u)
{
    /* a claim that cannot be given back runs out, or is taken over once this process is gone */
    if (--u->claims == 0)
        rt_store_upload_release(u->store, u->run, &u->me);
}

/* What leaves this file carries no secret, whoever wrote it (sentinel, S3, libcurl). */
static int upload_failed(struct rt_upload_session *u, char *err, size_t errlen)
{
    rt_sentinel_redact(u->s, err, errlen);
    return -1;
}

/* --- registering -------------------------------------------------------------------------- */

/* The registration at u->api is in doubt: why, and that it is not sent again. */
static void doubt_message(const struct rt_upload_session *u, char *err, size_t errlen)
{
    char when[32] = "?";
    time_t t = (time_t)u->doubt_at;
    struct tm tm;
    if (gmtime_r(&t, &tm))
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(err, errlen,
             "its registration is in doubt: POST /runs to %s at %s got no usable answer (%s), so "
             "sentinel may hold the run already; it is not registered again by itself",
             u->doubt_api ? u->doubt_api : u->api, when,
             u->doubt_why ? u->doubt_why
                          : "the rtrack that sent it stopped before its answer "
                            "was stored");
}

/* Register the run (POST /runs), or get fresh credentials for one registered before. Never
 * posts twice to the same API when the first answer was lost (res->in_doubt). */
static int ensure_registered(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                             size_t errlen)
{
    if (u->r.creds.secret_key)
        return 0;
    if (u->registered)
        return rt_sentinel_refresh(u->s, &u->r, err, errlen);
    /* a doubt about another API says nothing of this one (the scheme and host are any case) */
    if (!isnan(u->doubt_at) && (!u->doubt_api || strcasecmp(u->doubt_api, u->api) == 0)) {
        doubt_message(u, err, errlen);
        if (res)
            res->in_doubt = 1;
        return -1;
    }
    /* host and cloud facts as recorded: an upload measures nothing (a database copied
     * elsewhere and uploaded there still says where the job ran) */
    char *body = rt_store_upload_start_body(u->store, u->run);
    if (!body)
        return db_fail(u->store, err, errlen);
    /* sent, as far as the database knows, before it is: a kill -9 during the POST leaves the
     * doubt behind, not a run that looks never registered */
    double sent_at = now_s();
    if (rt_store_upload_registering(u->store, u->run, u->api, sent_at) != 0) {
        free(body);
        return db_fail(u->store, err, errlen);
    }
    int k = rt_sentinel_start_run(u->s, body, u->uuid, &u->r, err, errlen);
    free(body);
    if (k != 0) {
        rt_sentinel_redact(u->s, err, errlen); /* stored below: no secret in the database */
        if (!u->r.in_doubt) {
            /* refused or never sent: nothing was registered, the next attempt may post */
            rt_store_upload_register_outcome(u->store, u->run, NULL);
            return -1;
        }
        rt_store_upload_register_outcome(u->store, u->run, err);
        size_t n = strlen(err);
        snprintf(err + n, errlen - n,
                 "; sentinel may have registered the run all the same: it is not registered "
                 "again by itself");
        u->doubt_at = sent_at;
        if (res)
            res->in_doubt = 1;
        return -1;
    }
    if (rt_store_upload_register(u->store, u->run, u->api, u->r.run_id, u->r.upload_uri_prefix,
                                 now_s()) != 0)
        return db_fail(u->store, err, errlen); /* still in doubt: the answer is not stored */
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

/* rt_upload_send under the claim. */
static int send_claimed(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                        size_t errlen)
{
    int64_t max_seq;
    if (load_state(u, &max_seq, err, errlen) != 0)
        return -1;
    if (u->finished) /* by another uploader meanwhile: nothing more belongs to it */
        return 0;
    if (ensure_registered(u, res, err, errlen) != 0)
        return -1;
    while (u->last_seq < max_seq) {
        if (claim_take(u, res, err, errlen) != 0) /* renewed for the next object */
            return -1;
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

/* rt_upload_finish under the claim. */
static int finish_claimed(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
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
    if (!inline_data && send_claimed(u, res, err, errlen) != 0)
        return -1;
    char *body = rt_store_upload_finish_body(u->store, u->run, inline_data ? csv : NULL, csv_len);
    free(csv);
    if (!body)
        return db_fail(u->store, err, errlen);
    if (claim_take(u, res, err, errlen) != 0) {
        free(body);
        return -1;
    }
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

int rt_upload_send(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                   size_t errlen)
{
    if (claim_begin(u, res, err, errlen) != 0)
        return upload_failed(u, err, errlen);
    int rc = send_claimed(u, res, err, errlen);
    claim_end(u);
    return rc == 0 ? 0 : upload_failed(u, err, errlen);
}

int rt_upload_finish(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                     size_t errlen)
{
    if (claim_begin(u, res, err, errlen) != 0)
        return upload_failed(u, err, errlen);
    int rc = finish_claimed(u, res, err, errlen);
    claim_end(u);
    return rc == 0 ? 0 : upload_failed(u, err, errlen);
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
    u->doubt_at = RT_NAN;
    rt_sentinel_where(s, u->api, sizeof(u->api));
    if (gethostname(u->me.host, sizeof(u->me.host) - 1) != 0)
        snprintf(u->me.host, sizeof(u->me.host), "?");
    u->me.pid = (int64_t)getpid();
    return u;
}

void rt_upload_close(struct rt_upload_session *u)
{
    if (!u)
        return;
    rt_buf_free(&u->gz);
    free(u->uuid);
    free(u->doubt_api);
    free(u->doubt_why);
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
        if (rc != 0 && res->busy)
            res->skipped = 1; /* the other uploader sends it: said, not an error */
    }
    rt_upload_close(u);
    return rc;
}
