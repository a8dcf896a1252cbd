/* uploads.c - upload progress to Sentinel (uploads.h): the uploads and upload_batches tables,
 * and the request bodies built from a run's rows by SQLite's JSON functions.
 *
 * A run may be uploaded once nobody records it any more: its status is no longer 'running',
 * or it was abandoned (ABANDONED below), which `rtrack upload` and `--all` decide alike. */
#include "rtrack/store/uploads.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "rtrack/store/read.h"

/* A run still marked running whose recorder is gone: 'interrupted' in the view run_status
 * (sql/views.sql), the one rule of every reader. (r: the runs row.) */
#define ABANDONED "(SELECT status FROM run_status WHERE run_id = r.id) = 'interrupted'"

/* The run as Sentinel's POST /runs wants it (resource-tracker-rs §6.2): metadata keys only when
 * set, tags as "k=v" strings, command as a JSON-encoded string, every host_* and cloud_* key
 * (null when unknown: the cloud as it was found while recording), never pid. */
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
    "  'cloud_vendor_id', r.cloud_vendor_id, 'cloud_account_id', r.cloud_account_id, "
    "  'cloud_region_id', r.cloud_region_id, 'cloud_zone_id', r.cloud_zone_id, "
    "  'cloud_instance_type', r.cloud_instance_type) AS j "
    "  FROM runs r LEFT JOIN host_gpus g ON g.run_id = r.id WHERE r.id = ?1) "
    "SELECT json_group_object(e.key, CASE WHEN e.type IN ('array', 'object') THEN json(e.value) "
    "                                      ELSE e.value END) "
    "FROM o, json_each(o.j) e "
    "WHERE (e.type <> 'null' AND NOT (e.key = 'tags' AND e.value = '[]')) "
    "   OR e.key LIKE 'host\\_%' ESCAPE '\\' OR e.key LIKE 'cloud\\_%' ESCAPE '\\'";

/* POST /runs/{id}/finish (§6.7): the S3 route with every batch's URI, or inline CSV (?2). */
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

/* Step a statement that returns no rows and close it; 0 or -1 with SQLite's reason. */
static int run_write(struct rt_store_rows *r)
{
    int rc = rt_store_rows_next(r);
    rt_store_rows_close(r);
    return rc == 0 ? 0 : -1;
}

/* The open transaction undone after a failure, SQLite's reason kept in s->err: -1. */
static int rollback(struct rt_store *s)
{
    store_read_err(s);
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* The last statement of a transaction, then COMMIT; undone when either fails. */
static int commit_last(struct rt_store *s, struct rt_store_rows *r)
{
    if (run_write(r) != 0 || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return rollback(s);
    return 0;
}

/* The text of column 0 of the first row as a copy, then r closed. NULL for no row or NULL in
 * SQL (SQLite's word for it in s->err, as upload.c always printed it), or a failed read. */
static char *first_text(struct rt_store *s, struct rt_store_rows *r)
{
    char *v = NULL;
    int rc = rt_store_rows_next(r);
    if (rc == 1 && rt_store_rows_t(r, 0))
        v = xstrdup(rt_store_rows_t(r, 0));
    else if (rc >= 0)
        store_read_err(s);
    rt_store_rows_close(r);
    return v;
}

int rt_store_upload_load(struct rt_store *s, int64_t run, struct rt_store_upload *u)
{
    memset(u, 0, sizeof(*u));
    u->register_sent_at = RT_NAN;
    struct rt_store_rows *r =
        rt_store_rows_open(s, "SELECT u.remote_run_id, u.upload_uri_prefix, "
                              "coalesce(u.last_seq, 0), u.finished_at IS NOT NULL, "
                              "(SELECT count(*) FROM upload_batches WHERE run_id = ?1), "
                              "(SELECT coalesce(max(seq), 0) FROM samples WHERE run_id = ?1), "
                              "runs.uuid, u.api_url, u.register_sent_at, u.register_error "
                              "FROM runs LEFT JOIN uploads u ON u.run_id = runs.id "
                              "WHERE runs.id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    int rc = rt_store_rows_next(r);
    if (rc == 1) {
        if (rt_store_rows_type(r, 0) != RT_STORE_NULL) {
            u->remote_run_id = xstrdup(rt_store_rows_t(r, 0));
            u->upload_uri_prefix = xstrdup(rt_store_rows_t(r, 1));
        }
        u->last_seq = rt_store_rows_i(r, 2);
        u->finished = (int)rt_store_rows_i(r, 3);
        u->batches = rt_store_rows_i(r, 4);
        u->max_seq = rt_store_rows_i(r, 5);
        u->uuid = xstrdup(rt_store_rows_t(r, 6) ? rt_store_rows_t(r, 6) : "");
        if (rt_store_rows_t(r, 7))
            u->api_url = xstrdup(rt_store_rows_t(r, 7));
        if (!u->remote_run_id)
            u->register_sent_at = rt_store_rows_f(r, 8);
        if (rt_store_rows_t(r, 9))
            u->register_error = xstrdup(rt_store_rows_t(r, 9));
    } else if (rc == 0) {
        store_read_err(s);
    }
    rt_store_rows_close(r);
    return rc == 1 ? 0 : -1;
}

void rt_store_upload_free(struct rt_store_upload *u)
{
    free(u->remote_run_id);
    free(u->upload_uri_prefix);
    free(u->uuid);
    free(u->api_url);
    free(u->register_error);
    memset(u, 0, sizeof(*u));
}

/* The row's owner into *o (host "" and pid 0: nobody). 1: a row, 0: none, -1: failed. */
static int claim_read(struct rt_store *s, int64_t run, struct rt_store_upload_owner *o)
{
    memset(o, 0, sizeof(*o));
    struct rt_store_rows *r = rt_store_rows_open(
        s, "SELECT owner_host, owner_pid, owner_until FROM uploads WHERE run_id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    int rc = rt_store_rows_next(r);
    if (rc == 1 && rt_store_rows_type(r, 1) != RT_STORE_NULL) {
        snprintf(o->host, sizeof(o->host), "%s",
                 rt_store_rows_t(r, 0) ? rt_store_rows_t(r, 0) : "");
        o->pid = rt_store_rows_i(r, 1);
        o->until = rt_store_rows_f(r, 2);
        if (isnan(o->until))
            o->until = 0;
    }
    rt_store_rows_close(r);
    return rc;
}

static int same_owner(const struct rt_store_upload_owner *a, const struct rt_store_upload_owner *b)
{
    return a->pid == b->pid && strcmp(a->host, b->host) == 0;
}

int rt_store_upload_claim(struct rt_store *s, int64_t run, const char *api_url,
                          const struct rt_store_upload_owner *me, double now,
                          const struct rt_store_upload_owner *stale,
                          struct rt_store_upload_owner *holder)
{
    /* IMMEDIATE: two uploaders cannot both read "nobody" and both take it */
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_read_err(s);
    struct rt_store_upload_owner cur;
    int row = claim_read(s, run, &cur);
    if (row < 0)
        goto fail;
    if (row == 1 && cur.pid != 0 && !same_owner(&cur, me) && cur.until >= now &&
        !(stale && same_owner(&cur, stale) && cur.until == stale->until)) {
        if (holder)
            *holder = cur;
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
        return 1;
    }
    struct rt_store_rows *r = rt_store_rows_open(
        s, row == 1 ? "UPDATE uploads SET owner_host = ?3, owner_pid = ?4, owner_until = ?5 "
                      "WHERE run_id = ?1"
                    : "INSERT INTO uploads (run_id, api_url, owner_host, owner_pid, owner_until) "
                      "VALUES (?1, ?2, ?3, ?4, ?5)");
    if (!r)
        goto fail;
    rt_store_rows_bind_i(r, 1, run);
    if (row != 1)
        rt_store_rows_bind_t(r, 2, api_url);
    rt_store_rows_bind_t(r, 3, me->host);
    rt_store_rows_bind_i(r, 4, me->pid);
    rt_store_rows_bind_f(r, 5, me->until);
    return commit_last(s, r);
fail:
    return rollback(s);
}

int rt_store_upload_release(struct rt_store *s, int64_t run, const struct rt_store_upload_owner *me)
{
    struct rt_store_rows *r = rt_store_rows_open(
        s, "UPDATE uploads SET owner_host = NULL, owner_pid = NULL, owner_until = NULL "
           "WHERE run_id = ?1 AND owner_host = ?2 AND owner_pid = ?3");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    rt_store_rows_bind_t(r, 2, me->host);
    rt_store_rows_bind_i(r, 3, me->pid);
    if (run_write(r) != 0)
        return -1;
    /* a reservation that came to nothing: as if it had never been made */
    r = rt_store_rows_open(s, "DELETE FROM uploads WHERE run_id = ?1 AND remote_run_id IS NULL "
                              "AND register_sent_at IS NULL AND owner_pid IS NULL");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    return run_write(r);
}

int rt_store_upload_registering(struct rt_store *s, int64_t run, const char *api_url, double now)
{
    struct rt_store_rows *r = rt_store_rows_open(
        s, "UPDATE uploads SET api_url = ?2, register_sent_at = ?3, register_error = NULL "
           "WHERE run_id = ?1 AND remote_run_id IS NULL");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    rt_store_rows_bind_t(r, 2, api_url);
    rt_store_rows_bind_f(r, 3, now);
    return run_write(r);
}

int rt_store_upload_register_outcome(struct rt_store *s, int64_t run, const char *why)
{
    struct rt_store_rows *r = rt_store_rows_open(
        s,
        why ? "UPDATE uploads SET register_error = ?2 WHERE run_id = ?1 AND remote_run_id IS NULL"
            : "UPDATE uploads SET register_sent_at = NULL, register_error = NULL "
              "WHERE run_id = ?1 AND remote_run_id IS NULL");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    if (why)
        rt_store_rows_bind_t(r, 2, why);
    return run_write(r);
}

int rt_store_upload_register(struct rt_store *s, int64_t run, const char *api_url,
                             const char *remote_run_id, const char *upload_uri_prefix, double now)
{
    struct rt_store_rows *r = rt_store_rows_open(
        s, "INSERT INTO uploads (run_id, api_url, remote_run_id, upload_uri_prefix, "
           "registered_at) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (run_id) DO UPDATE SET "
           "api_url = excluded.api_url, remote_run_id = excluded.remote_run_id, "
           "upload_uri_prefix = excluded.upload_uri_prefix, "
           "registered_at = excluded.registered_at, register_sent_at = NULL, "
           "register_error = NULL WHERE uploads.remote_run_id IS NULL RETURNING run_id");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    rt_store_rows_bind_t(r, 2, api_url);
    rt_store_rows_bind_t(r, 3, remote_run_id);
    rt_store_rows_bind_t(r, 4, upload_uri_prefix);
    rt_store_rows_bind_f(r, 5, now);
    /* a run registered already keeps its id (its batches are under it): refused, not replaced */
    int rc = rt_store_rows_next(r);
    rt_store_rows_close(r);
    if (rc == 0)
        return store_err(s, "run %lld is registered with sentinel already", (long long)run);
    return rc == 1 ? 0 : -1;
}

/* The batch's row and the new progress commit together or not at all: a batch recorded without
 * its progress would be sent again, progress without its batch would lose its URI. */
int rt_store_upload_commit_batch(struct rt_store *s, int64_t run,
                                 const struct rt_store_upload_batch *b)
{
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return store_read_err(s);
    struct rt_store_rows *r;
    if (b->uri) {
        r = rt_store_rows_open(s, "INSERT INTO upload_batches (run_id, batch, uri, first_seq, "
                                  "last_seq, rows, bytes, uploaded_at) VALUES "
                                  "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        if (!r)
            goto fail;
        rt_store_rows_bind_i(r, 1, run);
        rt_store_rows_bind_i(r, 2, b->batch);
        rt_store_rows_bind_t(r, 3, b->uri);
        rt_store_rows_bind_i(r, 4, b->first_seq);
        rt_store_rows_bind_i(r, 5, b->last_seq);
        rt_store_rows_bind_i(r, 6, b->rows);
        rt_store_rows_bind_i(r, 7, b->bytes);
        rt_store_rows_bind_f(r, 8, b->uploaded_at);
        if (run_write(r) != 0)
            goto fail;
    }
    r = rt_store_rows_open(s, "UPDATE uploads SET last_seq = ?2 WHERE run_id = ?1");
    if (!r)
        goto fail;
    rt_store_rows_bind_i(r, 1, run);
    rt_store_rows_bind_i(r, 2, b->last_seq);
    return commit_last(s, r);
fail:
    return rollback(s);
}

int rt_store_upload_finished(struct rt_store *s, int64_t run, double now, int64_t max_seq)
{
    struct rt_store_rows *r =
        rt_store_rows_open(s, "UPDATE uploads SET finished_at = ?2, last_seq = max(last_seq, ?3) "
                              "WHERE run_id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    rt_store_rows_bind_f(r, 2, now);
    rt_store_rows_bind_i(r, 3, max_seq);
    return run_write(r);
}

int rt_store_upload_run_status(struct rt_store *s, int64_t run, char **status)
{
    *status = NULL;
    struct rt_store_rows *r =
        rt_store_rows_open(s, "SELECT CASE WHEN r.status <> 'running' THEN r.status "
                              "WHEN " ABANDONED " THEN 'abandoned' "
                              "ELSE 'running' END FROM runs r WHERE r.id = ?1");
    if (!r)
        return -1;
    rt_store_rows_bind_i(r, 1, run);
    int rc = rt_store_rows_next(r);
    if (rc == 1 && rt_store_rows_t(r, 0))
        *status = xstrdup(rt_store_rows_t(r, 0));
    rt_store_rows_close(r);
    return rc < 0 ? -1 : 0;
}

char *rt_store_upload_doubt_sql(int64_t run)
{
    return xasprintf("DELETE FROM uploads WHERE run_id = %lld AND remote_run_id IS NULL",
                     (long long)run);
}

int rt_store_upload_pending(struct rt_store *s, int64_t **ids, int *n)
{
    *ids = NULL;
    *n = 0;
    struct rt_store_rows *r =
        rt_store_rows_open(s, "SELECT r.id FROM runs r LEFT JOIN uploads u ON u.run_id = r.id "
                              "WHERE u.finished_at IS NULL AND (r.status <> 'running' OR " ABANDONED
                              ") ORDER BY r.id");
    if (!r)
        return -1;
    int cap = 0;
    while (rt_store_rows_next(r) == 1)
        *RT_PUSH(*ids, *n, cap) = rt_store_rows_i(r, 0);
    rt_store_rows_close(r);
    return 0;
}

char *rt_store_upload_start_body(struct rt_store *s, int64_t run)
{
    struct rt_store_rows *r = rt_store_rows_open(s, start_sql);
    if (!r)
        return NULL;
    rt_store_rows_bind_i(r, 1, run);
    return first_text(s, r);
}

char *rt_store_upload_finish_body(struct rt_store *s, int64_t run, const char *csv, size_t csv_len)
{
    struct rt_store_rows *r = rt_store_rows_open(s, finish_sql);
    if (!r)
        return NULL;
    rt_store_rows_bind_i(r, 1, run);
    if (csv)
        rt_store_rows_bind_tn(r, 2, csv, csv_len);
    return first_text(s, r);
}
