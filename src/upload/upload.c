/* upload.c - one recorded run to Sentinel: register, gzip CSV batches to S3, finish.
 *
 * Progress lives in the database (uploads, upload_batches: sql/migrations/0004), committed
 * after every batch, so an upload that stops anywhere (network down, kill -9) resumes with the
 * first sample not yet in an uploaded batch, and a finished run is never sent again. A batch is
 * the combined 32-column CSV of `rtrack export` (header + rows), gzip'ed with zlib. */
#include "rtrack/upload/upload_run.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/upload/cloud.h"
#include "rtrack/net/libs.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/upload/upload.h"

/* The run as Sentinel's POST /runs wants it (resource-tracker-rs §6.2): metadata keys only when
 * set, tags as "k=v" strings, command as a JSON-encoded string, every host_* and cloud_* key
 * (null when unknown), never pid. Built by SQLite's JSON functions. */
static const char start_sql[] =
    "WITH o AS (SELECT json_object("
    "  'job_name', r.job_name, 'project_name', r.project_name, 'stage_name', r.stage_name, "
    "  'task_name', r.task_name, 'team', r.team, 'env', r.env, 'language', r.language, "
    "  'orchestrator', r.orchestrator, 'executor', r.executor, "
    "  'external_run_id', r.external_run_id, 'container_image', r.container_image, "
    "  'command', r.command, "
    "  'tags', (SELECT json_group_array(key || '=' || value) FROM "
    "           (SELECT key, value FROM run_tags WHERE run_id = r.id ORDER BY position)), "
    "  'host_id', r.host_machine_id, 'host_hostname', r.host_hostname, 'host_ip', NULL, "
    "  'host_server_allocation', NULL, 'host_vcpus', r.host_vcpus, "
    "  'host_cpu_model', r.host_cpu_model, 'host_memory_mib', r.host_memory_kib / 1024, "
    "  'host_gpu_model', g.host_gpu_model, 'host_gpu_count', g.host_gpu_count, "
    "  'host_gpu_memory_mib', g.host_gpu_memory_mib, 'host_storage_gb', NULL, "
    "  'cloud_vendor_id', ?2, 'cloud_account_id', ?3, 'cloud_region_id', ?4, "
    "  'cloud_zone_id', ?5, 'cloud_instance_type', ?6) AS j "
    "  FROM runs r LEFT JOIN host_gpus g ON g.run_id = r.id WHERE r.id = ?1) "
    "SELECT json_group_object(e.key, CASE WHEN e.type IN ('array', 'object') THEN json(e.value) "
    "                                      ELSE e.value END) "
    "FROM o, json_each(o.j) e "
    "WHERE (e.type <> 'null' AND NOT (e.key = 'tags' AND e.value = '[]')) "
    "   OR e.key LIKE 'host\\_%' ESCAPE '\\' OR e.key LIKE 'cloud\\_%' ESCAPE '\\'";

/* POST /runs/{id}/finish (§6.7): the S3 route with every batch's URI, or inline CSV. */
static const char finish_sql[] =
    "SELECT json_object('exit_code', coalesce(r.exit_code, 0), "
    "  'run_status', CASE WHEN r.status IN ('failed', 'running') OR coalesce(r.exit_code, 0) <> 0 "
    "                     THEN 'failed' ELSE 'finished' END, "
    "  'finished_at', strftime('%Y-%m-%dT%H:%M:%SZ', coalesce(r.ended_at, "
    "                 (SELECT max(ts) FROM samples WHERE run_id = r.id), r.started_at), "
    "                 'unixepoch'), "
    "  'data_source', CASE WHEN ?2 IS NULL THEN 's3' ELSE 'inline' END, "
    "  CASE WHEN ?2 IS NULL THEN 'data_uris' ELSE 'data_csv' END, "
    "  CASE WHEN ?2 IS NULL THEN (SELECT json_group_array(uri) FROM (SELECT uri FROM "
    "       upload_batches WHERE run_id = r.id ORDER BY batch)) ELSE ?2 END) "
    "FROM runs r WHERE r.id = ?1";

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int db_fail(sqlite3 *db, char *err, size_t errlen)
{
    snprintf(err, errlen, "cannot use the database: %s", sqlite3_errmsg(db));
    return -1;
}

/* One text value of a query with up to two int64 parameters (NULL -> NULL). */
static char *query_text(sqlite3 *db, const char *sql, int64_t a)
{
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_int64(st, 1, a);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        v = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
}

/* The combined CSV (header + rows with seq in [from, to]) into a memory buffer. */
static int batch_csv(sqlite3 *db, int64_t run, int64_t from, int64_t to, char **text, size_t *len,
                     int64_t *rows, char *err, size_t errlen)
{
    struct rt_export_query q = {RT_FMT_CSV, RT_TABLE_COMBINED, run, RT_NAN, RT_NAN, 0, from, to};
    struct rt_exporter *x = rt_exporter_open(db, &q, err, errlen);
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
    sqlite3 *db;
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(u->db,
                           "SELECT u.remote_run_id, u.upload_uri_prefix, coalesce(u.last_seq, 0), "
                           "u.finished_at IS NOT NULL, "
                           "(SELECT count(*) FROM upload_batches WHERE run_id = ?1), "
                           "(SELECT coalesce(max(seq), 0) FROM samples WHERE run_id = ?1) "
                           "FROM runs LEFT JOIN uploads u ON u.run_id = runs.id WHERE runs.id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(u->db, err, errlen);
    sqlite3_bind_int64(st, 1, u->run);
    int rc = -1;
    if (sqlite3_step(st) == SQLITE_ROW) {
        u->registered = sqlite3_column_type(st, 0) != SQLITE_NULL;
        if (u->registered && !u->r.run_id) {
            u->r.run_id = xstrdup((const char *)sqlite3_column_text(st, 0));
            u->r.upload_uri_prefix = xstrdup((const char *)sqlite3_column_text(st, 1));
        }
        u->last_seq = sqlite3_column_int64(st, 2);
        u->finished = sqlite3_column_int(st, 3);
        u->batches = sqlite3_column_int64(st, 4);
        *max_seq = sqlite3_column_int64(st, 5);
        rc = 0;
    } else {
        db_fail(u->db, err, errlen);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Register the run (POST /runs), or get fresh credentials for one registered before. */
static int ensure_registered(struct rt_upload_session *u, struct rt_upload_result *res, char *err,
                             size_t errlen)
{
    if (u->r.creds.secret_key)
        return 0;
    if (u->registered)
        return rt_sentinel_refresh(u->s, &u->r, err, errlen);
    /* the cloud_* fields: asked of the metadata services only when the run was recorded on
     * this very machine (a database copied elsewhere and uploaded there must not claim that
     * machine's cloud) */
    struct rt_cloud cloud;
    memset(&cloud, 0, sizeof(cloud));
    char *rec_id = query_text(u->db, "SELECT host_machine_id FROM runs WHERE id = ?1", u->run);
    char here[128];
    if (rec_id && rt_read_small("/etc/machine-id", here, sizeof(here)) > 0 && !strcmp(rec_id, here))
        rt_cloud_discover(&cloud, &u->o.cloud, 2.0);
    free(rec_id);
    sqlite3_stmt *st;
    char *body = NULL;
    if (sqlite3_prepare_v2(u->db, start_sql, -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, u->run);
        const char *cv[5] = {cloud.vendor_id, cloud.account_id, cloud.region_id, cloud.zone_id,
                             cloud.instance_type};
        for (int i = 0; i < 5; i++)
            sqlite3_bind_text(st, i + 2, cv[i], -1, SQLITE_TRANSIENT);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
            body = xstrdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    rt_cloud_free(&cloud);
    if (!body)
        return db_fail(u->db, err, errlen);
    int k = rt_sentinel_start_run(u->s, body, &u->r, err, errlen);
    free(body);
    if (k != 0)
        return -1;
    if (sqlite3_prepare_v2(u->db,
                           "INSERT INTO uploads (run_id, api_url, remote_run_id, "
                           "upload_uri_prefix, registered_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(u->db, err, errlen);
    sqlite3_bind_int64(st, 1, u->run);
    sqlite3_bind_text(st, 2, u->s->base, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, u->r.run_id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, u->r.upload_uri_prefix, -1, SQLITE_STATIC);
    sqlite3_bind_double(st, 5, now_s());
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok)
        return db_fail(u->db, err, errlen);
    u->registered = 1;
    if (res)
        res->registered = 1;
    return 0;
}

/* Record one uploaded batch and the new progress in one transaction. */
static int commit_batch(struct rt_upload_session *u, const char *uri, int64_t from, int64_t to,
                        int64_t rows, char *err, size_t errlen)
{
    sqlite3 *db = u->db;
    sqlite3_stmt *st = NULL;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen);
    if (uri) {
        if (sqlite3_prepare_v2(db,
                               "INSERT INTO upload_batches (run_id, batch, uri, first_seq, "
                               "last_seq, rows, bytes, uploaded_at) VALUES "
                               "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                               -1, &st, NULL) != SQLITE_OK)
            goto fail;
        sqlite3_bind_int64(st, 1, u->run);
        sqlite3_bind_int64(st, 2, u->batches);
        sqlite3_bind_text(st, 3, uri, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 4, from);
        sqlite3_bind_int64(st, 5, to);
        sqlite3_bind_int64(st, 6, rows);
        sqlite3_bind_int64(st, 7, (int64_t)u->gz.len);
        sqlite3_bind_double(st, 8, now_s());
        int ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
        if (!ok)
            goto fail;
    }
    if (sqlite3_prepare_v2(db, "UPDATE uploads SET last_seq = ?2 WHERE run_id = ?1", -1, &st,
                           NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_int64(st, 1, u->run);
    sqlite3_bind_int64(st, 2, to);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        goto fail;
    if (uri)
        u->batches++;
    u->last_seq = to;
    return 0;
fail:
    db_fail(db, err, errlen);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
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
        if (batch_csv(u->db, u->run, from, to, &csv, &csv_len, &rows, err, errlen) != 0) {
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
        if (batch_csv(u->db, u->run, 0, 0, &csv, &csv_len, &rows, err, errlen) != 0) {
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
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(u->db, finish_sql, -1, &st, NULL) != SQLITE_OK) {
        free(csv);
        return db_fail(u->db, err, errlen);
    }
    sqlite3_bind_int64(st, 1, u->run);
    if (inline_data)
        sqlite3_bind_text(st, 2, csv, (int)csv_len, SQLITE_STATIC);
    char *body = NULL;
    if (sqlite3_step(st) == SQLITE_ROW)
        body = xstrdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    free(csv);
    if (!body)
        return db_fail(u->db, err, errlen);
    int k = rt_sentinel_finish(u->s, u->r.run_id, body, err, errlen);
    free(body);
    if (k != 0)
        return -1;
    if (sqlite3_prepare_v2(u->db,
                           "UPDATE uploads SET finished_at = ?2, last_seq = max(last_seq, ?3) "
                           "WHERE run_id = ?1",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(u->db, err, errlen);
    sqlite3_bind_int64(st, 1, u->run);
    sqlite3_bind_double(st, 2, now_s());
    sqlite3_bind_int64(st, 3, max_seq);
    int ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_finalize(st);
    if (!ok)
        return db_fail(u->db, err, errlen);
    u->finished = 1;
    if (res) {
        res->inline_data = inline_data;
        snprintf(res->remote_run_id, sizeof(res->remote_run_id), "%s", u->r.run_id);
    }
    return 0;
}

struct rt_upload_session *rt_upload_open(sqlite3 *db, int64_t run, const struct rt_sentinel *s,
                                         const struct rt_upload_opts *o)
{
    struct rt_upload_session *u = xcalloc(1, sizeof(*u));
    u->db = db;
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

int rt_upload_run(sqlite3 *db, int64_t run, const struct rt_sentinel *s,
                  const struct rt_upload_opts *o, struct rt_upload_result *res, char *err,
                  size_t errlen)
{
    memset(res, 0, sizeof(*res));
    err[0] = '\0';
    /* a run still marked running whose newest sample is older than three intervals and two
     * seconds was abandoned (its recorder was killed): it is sent as failed */
    char *status = query_text(db,
                              "SELECT CASE WHEN status <> 'running' THEN status "
                              "WHEN (SELECT max(ts) FROM samples WHERE run_id = ?1) < "
                              "(julianday('now') - 2440587.5) * 86400.0 - 3 * interval_s - 2 "
                              "THEN 'abandoned' "
                              "ELSE 'running' END FROM runs WHERE id = ?1",
                              run);
    if (!status) {
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
    struct rt_upload_session *u = rt_upload_open(db, run, s, o);
    int64_t max_seq;
    int rc = load_state(u, &max_seq, err, errlen);
    if (rc == 0 && u->finished) {
        res->already = 1;
    } else if (rc == 0 && !u->registered && max_seq <= u->last_seq) {
        /* nothing after the baseline, and Sentinel has never heard of the run: registering it
         * would only leave an empty run there (a command that was not found, a recording
         * stopped before its first interval) */
        snprintf(err, errlen, "it has no samples after its baseline (its command did not start, "
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
