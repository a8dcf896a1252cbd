/* read.c - the store's read side (read.h): readers' SQL prepared, bound and stepped here, so
 * that export, summary, report, upload and the CLI never hold a SQLite handle, and the
 * questions several of them ask (which run is "latest", the runs listing) have one answer.
 *
 * A failed read leaves SQLite's own message in s->err, taken at the moment it failed (a later
 * call on the connection would replace it); the reader wraps it in its own words. */
#include "rtrack/store/read.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

struct rt_store_rows {
    struct rt_store *s;
    sqlite3_stmt *st;
};

int store_read_err(struct rt_store *s)
{
    return store_err(s, "%s", sqlite3_errmsg(s->db));
}

/* --- one statement's rows -------------------------------------------------------------------- */

static struct rt_store_rows *rows_prepare(struct rt_store *s, const char *sql, unsigned flags)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v3(s->db, sql, -1, flags, &st, NULL) != SQLITE_OK) {
        store_read_err(s);
        sqlite3_finalize(st);
        return NULL;
    }
    struct rt_store_rows *r = xcalloc(1, sizeof(*r));
    r->s = s;
    r->st = st;
    return r;
}

struct rt_store_rows *rt_store_rows_open(struct rt_store *s, const char *sql)
{
    return rows_prepare(s, sql, 0);
}

/* SQLite takes a persistent statement's memory from the heap rather than its small lookaside
 * pool, which a statement kept for hours should not occupy */
struct rt_store_rows *rt_store_rows_open_kept(struct rt_store *s, const char *sql)
{
    return rows_prepare(s, sql, SQLITE_PREPARE_PERSISTENT);
}

void rt_store_rows_bind_i(struct rt_store_rows *r, int i, int64_t v)
{
    if (v == RT_NA)
        sqlite3_bind_null(r->st, i);
    else
        sqlite3_bind_int64(r->st, i, v);
}

void rt_store_rows_bind_f(struct rt_store_rows *r, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(r->st, i);
    else
        sqlite3_bind_double(r->st, i, v);
}

void rt_store_rows_bind_t(struct rt_store_rows *r, int i, const char *v)
{
    sqlite3_bind_text(r->st, i, v, -1, SQLITE_TRANSIENT);
}

void rt_store_rows_bind_tn(struct rt_store_rows *r, int i, const char *v, size_t n)
{
    sqlite3_bind_text64(r->st, i, v, (sqlite3_uint64)n, SQLITE_TRANSIENT, SQLITE_UTF8);
}

int rt_store_rows_next(struct rt_store_rows *r)
{
    int rc = sqlite3_step(r->st);
    if (rc == SQLITE_ROW)
        return 1;
    if (rc == SQLITE_DONE)
        return 0;
    return store_read_err(r->s);
}

enum rt_store_type rt_store_rows_type(struct rt_store_rows *r, int col)
{
    switch (sqlite3_column_type(r->st, col)) {
    case SQLITE_INTEGER:
        return RT_STORE_INTEGER;
    case SQLITE_FLOAT:
        return RT_STORE_REAL;
    case SQLITE_TEXT:
        return RT_STORE_TEXT;
    case SQLITE_BLOB:
        return RT_STORE_BLOB;
    default:
        return RT_STORE_NULL;
    }
}

/* One sqlite3_column_value() and the value read from it, rather than sqlite3_column_type() and
 * sqlite3_column_double(): half the calls through the statement, which is what a pass over a
 * million rows of 30 columns spends much of its time on. (An unprotected value may be read
 * this way by the one thread that uses the connection.) */
int64_t rt_store_rows_i(struct rt_store_rows *r, int col)
{
    sqlite3_value *v = sqlite3_column_value(r->st, col);
    return sqlite3_value_type(v) == SQLITE_NULL ? RT_NA : sqlite3_value_int64(v);
}

double rt_store_rows_f(struct rt_store_rows *r, int col)
{
    sqlite3_value *v = sqlite3_column_value(r->st, col);
    return sqlite3_value_type(v) == SQLITE_NULL ? RT_NAN : sqlite3_value_double(v);
}

void rt_store_rows_fv(struct rt_store_rows *r, int n, double *out)
{
    for (int col = 0; col < n; col++) {
        sqlite3_value *v = sqlite3_column_value(r->st, col);
        out[col] = sqlite3_value_type(v) == SQLITE_NULL ? RT_NAN : sqlite3_value_double(v);
    }
}

const char *rt_store_rows_t(struct rt_store_rows *r, int col)
{
    return (const char *)sqlite3_column_text(r->st, col);
}

/* SQLite 3.40's jsonAppendString(): '"' and '\\' escaped, the control characters below 0x20
 * as \b \t \n \f \r or \u00XX, every other byte (UTF-8 or not) as it is */
static void json_text(struct rt_buf *b, const unsigned char *z, size_t n)
{
    static const char special[32] = {[8] = 'b', [9] = 't', [10] = 'n', [12] = 'f', [13] = 'r'};
    static const char hex[] = "0123456789abcdef";
    rt_buf_reserve(b, b->len + n * 6 + 3);
    char *o = b->p + b->len;
    *o++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = z[i];
        if (c == '"' || c == '\\') {
            *o++ = '\\';
        } else if (c < 0x20) {
            *o++ = '\\';
            if (special[c]) {
                c = (unsigned char)special[c];
            } else {
                memcpy(o, "u00", 3);
                o[3] = hex[c >> 4];
                o += 4;
                c = (unsigned char)hex[c & 15];
            }
        }
        *o++ = (char)c;
    }
    *o++ = '"';
    *o = '\0';
    b->len = (size_t)(o - b->p);
}

/* "%lld", and ".0" after it for a real, without printf's cost on a line of a hundred values */
static void json_int(struct rt_buf *b, int64_t i, int real)
{
    uint64_t u = i < 0 ? 0 - (uint64_t)i : (uint64_t)i;
    char num[26], *e = num + sizeof(num), *d = e;
    if (real) {
        *--d = '0';
        *--d = '.';
    }
    do
        *--d = (char)('0' + u % 10);
    while (u /= 10);
    if (i < 0)
        *--d = '-';
    rt_buf_append(b, d, (size_t)(e - d));
}

void rt_store_rows_json(struct rt_store_rows *r, int col, struct rt_buf *b)
{
    sqlite3_value *v = sqlite3_column_value(r->st, col);
    switch (sqlite3_value_type(v)) {
    case SQLITE_INTEGER:
        json_int(b, sqlite3_value_int64(v), 0);
        break;
    case SQLITE_FLOAT: {
        /* a whole number below 1e15 is "%!.15g"'s N.0 (exact in a double, 15 digits at most,
         * no exponent; -0.0 is 0.0): most reals of a sample (0.0, 100.0) are, and SQLite's
         * printf is most of the time a line takes. Any other real: SQLite's own text of it,
         * what json_object() appends. test_jsonl_identity holds both to SQLite's bytes. */
        double d = sqlite3_value_double(v);
        if (d > -1e15 && d < 1e15 && d == (double)(int64_t)d) {
            json_int(b, (int64_t)d, 1);
            break;
        }
        rt_buf_append(b, (const char *)sqlite3_column_text(r->st, col),
                      (size_t)sqlite3_column_bytes(r->st, col));
        break;
    }
    case SQLITE_TEXT:
        json_text(b, sqlite3_column_text(r->st, col), (size_t)sqlite3_column_bytes(r->st, col));
        break;
    default:
        rt_buf_append(b, "null", 4);
        break;
    }
}

int rt_store_rows_ncols(struct rt_store_rows *r)
{
    return sqlite3_column_count(r->st);
}

const char *rt_store_rows_name(struct rt_store_rows *r, int col)
{
    return sqlite3_column_name(r->st, col);
}

void rt_store_rows_reset(struct rt_store_rows *r)
{
    sqlite3_reset(r->st);
}

void rt_store_rows_close(struct rt_store_rows *r)
{
    if (!r)
        return;
    sqlite3_finalize(r->st);
    free(r);
}

/* --- whole reads ----------------------------------------------------------------------------- */

/* A deferred BEGIN: the snapshot is taken by the first read. Failures are left alone: without
 * a transaction each read still sees a consistent database, only not the same one. */
void rt_store_read_begin(struct rt_store *s)
{
    if (s->read_depth++ == 0)
        sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
}

void rt_store_read_end(struct rt_store *s)
{
    if (s->read_depth > 0 && --s->read_depth == 0)
        sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
}

/* Only what reading needs: the file was checked when s was opened, and a thread's scan of one
 * table waits for a busy recorder longer than a reader's usual timeout. Without SQLite's mutex:
 * the connection is used by one thread at a time, like the store's own. */
int rt_store_open_second(struct rt_store *s, struct rt_store **out)
{
    *out = NULL;
    const char *file = sqlite3_db_filename(s->db, "main");
    if (!file || !*file)
        return store_err(s, "the database has no file name to open it again");
    struct rt_store *r = xcalloc(1, sizeof(*r));
    r->path = xstrdup(file);
    /* a database read where it cannot be written is opened again the same way (open.c) */
    if (sqlite3_open_v2(s->uri ? s->uri : file, &r->db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | (s->uri ? SQLITE_OPEN_URI : 0),
                        NULL) != SQLITE_OK) {
        store_err(s, "%s", r->db ? sqlite3_errmsg(r->db) : "out of memory");
        rt_store_close(r);
        return -1;
    }
    sqlite3_busy_timeout(r->db, 5000);
    /* a second reader's passes go through the file in order: a small page cache is enough */
    sqlite3_exec(r->db, "PRAGMA cache_size = -" SECOND_CACHE_KIB, NULL, NULL, NULL);
    *out = r;
    return 0;
}

/* --- questions several readers ask ----------------------------------------------------------- */

int rt_store_find_run(struct rt_store *s, int64_t id, int64_t *found, double *started)
{
    *found = 0;
    struct rt_store_rows *r =
        rt_store_rows_open(s, id > 0 ? "SELECT id, started_at FROM runs WHERE id = ?1"
                                     : "SELECT id, started_at FROM runs ORDER BY id DESC LIMIT 1");
    if (!r)
        return -1;
    if (id > 0)
        rt_store_rows_bind_i(r, 1, id);
    if (rt_store_rows_next(r) == 1) {
        *found = rt_store_rows_i(r, 0);
        if (started)
            *started = sqlite3_column_double(r->st, 1);
    }
    rt_store_rows_close(r);
    return 0;
}

/* CROSS JOIN: SQLite reads gpu_samples first (the order as written), finding a sample by its
 * id, rather than the runs' samples first and gpu_samples for each */
int rt_store_runs_have_gpus(struct rt_store *s, const char *runs, int *out)
{
    *out = 0;
    char *sql = xasprintf("SELECT EXISTS (SELECT 1 FROM gpu_samples g CROSS JOIN samples s ON "
                          "s.id = g.sample_id WHERE s.run_id IN (%s))",
                          runs);
    struct rt_store_rows *r = rt_store_rows_open(s, sql);
    free(sql);
    if (!r)
        return -1;
    int rc = rt_store_rows_next(r);
    if (rc == 1)
        *out = rt_store_rows_i(r, 0) != 0;
    rt_store_rows_close(r);
    return rc == 1 ? 0 : rc < 0 ? -1 : store_err(s, "no answer to whether the runs have GPUs");
}

/* the start as summary and report show it: UTC, the whole second; the samples as summary
 * counts them (run_sample_counts, sql/views.sql) */
static const char runs_table_sql[] =
    "SELECT r.id, r.job_name, "
    "  CASE WHEN r.command IS NULL THEN NULL ELSE "
    "    (SELECT group_concat(value, ' ') FROM json_each(r.command)) END, "
    "  strftime('%Y-%m-%dT%H:%M:%SZ', CAST(r.started_at AS INTEGER), 'unixepoch'), "
    "  round(coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) "
    "        - r.started_at, 2), "
    "  n.samples, r.exit_code, r.pid, st.status, r.mode, r.command "
    "FROM runs r JOIN run_sample_counts n ON n.run_id = r.id "
    "JOIN run_status st ON st.run_id = r.id ORDER BY r.id";

static const char runs_json_sql[] =
    "SELECT json_object('id', id, 'job_name', job_name, 'mode', mode, 'command', "
    "json(command), 'started_at', started_at, 'ended_at', ended_at, 'seconds', seconds, "
    "'samples', samples, 'exit_code', exit_code, 'pid', pid, 'status', status_now, "
    "'host_gpu_model', host_gpu_model, 'host_gpu_count', host_gpu_count, "
    "'host_gpu_memory_mib', host_gpu_memory_mib) FROM ("
    "SELECT r.*, (SELECT status FROM run_status WHERE run_id = r.id) AS status_now, "
    "round(coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = "
    "r.id)) - r.started_at, 3) AS seconds, n.samples AS samples, g.host_gpu_model, "
    "g.host_gpu_count, g.host_gpu_memory_mib "
    "FROM runs r JOIN run_sample_counts n ON n.run_id = r.id "
    "LEFT JOIN host_gpus g ON g.run_id = r.id ORDER BY r.id)";

struct rt_store_rows *rt_store_runs(struct rt_store *s, enum rt_store_runs_layout layout)
{
    return rt_store_rows_open(s, layout == RT_RUNS_JSON ? runs_json_sql : runs_table_sql);
}
