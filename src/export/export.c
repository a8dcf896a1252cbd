/* export.c - rows of the export views, formatted as the references print them. */
#include "rtrack/export/export.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"
#include "rtrack/base/util.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/store/query.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

/* How the Python reference prints each column (resource-tracker 0.5.0, helpers.render_csv_row
 * over the rounding of tracker.py; shared/parity/README.md has the rules with examples). */
enum colfmt {
    CF_INT,      /* int; NULL -> "" */
    CF_F2,       /* round(x, 2) */
    CF_F3,       /* round(x, 3) */
    CF_F4,       /* round(x, 4) */
    CF_CLAMP6,   /* round(max(0, x), 6): the int 0 when that is <= 0 */
    CF_RATE4,    /* max(0, x): the int 0 when x <= 0, else round(x, 4) (0.0 stays a float) */
    CF_CHILDREN, /* int, "" when 0 (Python's None for "no children") */
    CF_GPU_F4,   /* without GPU data the int 0 (what Python prints without nvidia-smi) */
    CF_GPU_INT,
};

struct colrule {
    const char *name; /* without the system_/process_ prefix */
    enum colfmt fmt;
};

static const struct colrule rules[] = {
    {"timestamp", CF_F3},           {"processes", CF_INT},          {"pid", CF_INT},
    {"children", CF_CHILDREN},      {"utime", CF_CLAMP6},           {"stime", CF_CLAMP6},
    {"cpu_usage", CF_RATE4},        {"memory_free_mib", CF_F4},     {"memory_used_mib", CF_F4},
    {"memory_buffers_mib", CF_F4},  {"memory_cached_mib", CF_F4},   {"memory_active_mib", CF_F4},
    {"memory_inactive_mib", CF_F4}, {"memory_mib", CF_F4},          {"disk_read_bytes", CF_INT},
    {"disk_write_bytes", CF_INT},   {"disk_space_total_gb", CF_F2}, {"disk_space_used_gb", CF_F2},
    {"disk_space_free_gb", CF_F2},  {"net_recv_bytes", CF_INT},     {"net_sent_bytes", CF_INT},
    {"gpu_usage", CF_GPU_F4},       {"gpu_vram_mib", CF_GPU_F4},    {"gpu_utilized", CF_GPU_INT},
};

/* Views start with run_id, seq, sample_id; the exported columns follow. */
#define VIEW_KEYS 3

struct rt_exporter {
    struct rt_store *store;
    struct rt_store_rows *rows; /* CSV */
    struct rt_jsonl *jsonl;     /* JSON Lines (jsonl.c) */
    struct rt_export_query q;
    int ncols;
    enum colfmt *fmt;
    int *is_process; /* column belongs to the process tracker */
    int pid_col;     /* index of the (process_)pid column, -1 if none */
    struct rt_buf line;
};

/* The CSV layouts' statements (sql/queries/export.sql): a run's samples, or one sample */
static const enum rt_query layout_rows[][2] = {
    [RT_TABLE_COMBINED] = {RT_Q_EXPORT_COMBINED_RUN, RT_Q_EXPORT_COMBINED_SAMPLE},
    [RT_TABLE_SYSTEM] = {RT_Q_EXPORT_SYSTEM_RUN, RT_Q_EXPORT_SYSTEM_SAMPLE},
    [RT_TABLE_PROCESS] = {RT_Q_EXPORT_PROCESS_RUN, RT_Q_EXPORT_PROCESS_SAMPLE},
};

static int find_rule(const char *name, enum colfmt *out)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(rules); i++)
        if (strcmp(rules[i].name, name) == 0) {
            *out = rules[i].fmt;
            return 0;
        }
    return -1;
}

/* The JSON Lines' selection of a run's samples, the CSV's below, over the sample `s` of every
 * pass: ?1 the run, ?2 and ?3 the time window, ?5 and ?6 the seqs (NULL: open), as bounds SQLite
 * seeks to in the (run_id, seq) index (a stretch of a long run is read by them, below). */
static const char jsonl_filter[] =
    "s.run_id = ?1 AND (?2 IS NULL OR s.ts >= ?2) AND (?3 IS NULL OR s.ts <= ?3) AND "
    "s.seq BETWEEN coalesce(?5, 0) AND coalesce(?6, 9223372036854775807)";

static void bind_i(struct rt_exporter *x, int i, int64_t v)
{
    if (x->jsonl)
        export_jsonl_bind_i(x->jsonl, i, v);
    else
        rt_store_rows_bind_i(x->rows, i, v);
}

static void bind_query(struct rt_exporter *x)
{
    const struct rt_export_query *q = &x->q;
    if (q->sample_id > 0)
        return;
    bind_i(x, 1, q->run_id);
    if (x->jsonl) {
        export_jsonl_bind_f(x->jsonl, 2, q->since);
        export_jsonl_bind_f(x->jsonl, 3, q->until);
    } else {
        rt_store_rows_bind_f(x->rows, 2, q->since);
        rt_store_rows_bind_f(x->rows, 3, q->until);
    }
    if (q->seq_from > 0)
        bind_i(x, 5, q->seq_from);
    if (q->seq_to > 0)
        bind_i(x, 6, q->seq_to);
}

struct rt_exporter *rt_exporter_open(struct rt_store *store, const struct rt_export_query *q,
                                     char *err, size_t errlen)
{
    struct rt_exporter *x = xcalloc(1, sizeof(*x));
    x->store = store;
    x->q = *q;
    x->pid_col = -1;
    if (q->format == RT_FMT_JSONL) {
        x->jsonl = export_jsonl_open(store, q->sample_id > 0 ? "s.id = ?4" : jsonl_filter, 1);
        if (!x->jsonl) {
            snprintf(err, errlen, "cannot read the samples: %s", rt_store_error(store));
            rt_exporter_close(x);
            return NULL;
        }
        if (q->rust_jsonl)
            export_jsonl_rust(x->jsonl);
        bind_query(x);
        return x;
    }
    /* kept: live output runs it again for every sample of the recording */
    if (!(x->rows = rt_store_query_kept(store, layout_rows[q->table][q->sample_id > 0]))) {
        snprintf(err, errlen, "cannot read the export views: %s", rt_store_error(store));
        rt_exporter_close(x);
        return NULL;
    }
    x->ncols = rt_store_rows_ncols(x->rows) - VIEW_KEYS;
    x->fmt = xcalloc((size_t)x->ncols, sizeof(*x->fmt));
    x->is_process = xcalloc((size_t)x->ncols, sizeof(*x->is_process));
    for (int i = 0; q->format == RT_FMT_CSV && i < x->ncols; i++) {
        const char *name = rt_store_rows_name(x->rows, i + VIEW_KEYS);
        const char *base = name;
        if (strncmp(name, "system_", 7) == 0)
            base = name + 7;
        else if (strncmp(name, "process_", 8) == 0) {
            base = name + 8;
            x->is_process[i] = 1;
        } else if (q->table == RT_TABLE_PROCESS && strcmp(name, "timestamp") != 0) {
            x->is_process[i] = 1;
        }
        if (strcmp(base, "pid") == 0)
            x->pid_col = i;
        if (find_rule(base, &x->fmt[i]) != 0) {
            snprintf(err, errlen, "export view column '%s' has no formatting rule", name);
            rt_exporter_close(x);
            return NULL;
        }
    }
    bind_query(x);
    return x;
}

int rt_exporter_header(struct rt_exporter *x, FILE *out)
{
    if (x->q.format != RT_FMT_CSV)
        return 0;
    x->line.len = 0;
    for (int i = 0; i < x->ncols; i++) {
        rt_buf_puts(&x->line, i ? ",\"" : "\"");
        rt_buf_puts(&x->line, rt_store_rows_name(x->rows, i + VIEW_KEYS));
        rt_buf_puts(&x->line, "\"");
    }
    rt_buf_puts(&x->line, "\n");
    return fwrite(x->line.p, 1, x->line.len, out) == x->line.len ? 0 : -1;
}

/* repr(round(v, nd)); returns the sign of the rounded value */
static int put_round(struct rt_buf *b, double v, int nd)
{
    char num[RT_PYFLOAT_MAX];
    size_t n;
    int sign = rt_py_round_repr(v, nd, num, &n);
    rt_buf_append(b, num, n);
    return sign;
}

static void put_int(struct rt_buf *b, int64_t v)
{
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", (long long)v);
    rt_buf_append(b, num, (size_t)n);
}

/* One CSV field of the current row, its value read once (NULL comes back as RT_NA or NAN). */
static void put_field(struct rt_exporter *x, int i, int no_process)
{
    struct rt_store_rows *r = x->rows;
    int c = i + VIEW_KEYS;
    struct rt_buf *b = &x->line;
    enum colfmt f = x->fmt[i];
    if (x->is_process[i] && no_process) {
        rt_buf_puts(b, "\"\""); /* no tree tracked: the process tracker has no row */
        return;
    }
    if (f == CF_INT || f == CF_CHILDREN || f == CF_GPU_INT) {
        int64_t n = rt_store_rows_i(r, c);
        if (n == RT_NA)
            rt_buf_puts(b, f == CF_GPU_INT ? "0" : "\"\"");
        else if (f == CF_CHILDREN && n == 0)
            rt_buf_puts(b, "\"\"");
        else
            put_int(b, n);
        return;
    }
    double v = rt_store_rows_f(r, c);
    if (isnan(v)) {
        rt_buf_puts(b, f == CF_GPU_F4 ? "0" : "\"\"");
        return;
    }
    switch (f) {
    case CF_F2:
        put_round(b, v, 2);
        break;
    case CF_F3:
        put_round(b, v, 3);
        break;
    case CF_F4:
    case CF_GPU_F4:
        put_round(b, v, 4);
        break;
    case CF_CLAMP6: {
        size_t len0 = b->len;
        if (put_round(b, v > 0 ? v : 0, 6) <= 0) {
            b->len = len0;
            rt_buf_puts(b, "0");
        }
        break;
    }
    case CF_RATE4:
        if (v <= 0)
            rt_buf_puts(b, "0");
        else
            put_round(b, v, 4);
        break;
    default:
        break;
    }
}

/* The next row into x->line, with its newline: 1, 0 after the last, -1 on a read error. */
static int next_row(struct rt_exporter *x, int64_t *seq)
{
    struct rt_buf *b = &x->line;
    if (x->jsonl) {
        int rc = export_jsonl_next(x->jsonl, b, seq);
        if (rc == 1)
            rt_buf_append(b, "\n", 1);
        return rc;
    }
    int rc = rt_store_rows_next(x->rows);
    if (rc != 1)
        return rc;
    *seq = rt_store_rows_i(x->rows, 1);
    b->len = 0;
    int no_process =
        x->pid_col >= 0 && rt_store_rows_type(x->rows, x->pid_col + VIEW_KEYS) == RT_STORE_NULL;
    for (int i = 0; i < x->ncols; i++) {
        if (i)
            rt_buf_puts(b, ",");
        put_field(x, i, no_process);
    }
    rt_buf_puts(b, "\n");
    return 1;
}

static void reset_rows(struct rt_exporter *x)
{
    if (x->jsonl)
        export_jsonl_reset(x->jsonl);
    else
        rt_store_rows_reset(x->rows);
}

static int write_line(struct rt_exporter *x, FILE *out)
{
    return fwrite(x->line.p, 1, x->line.len, out) == x->line.len ? 0 : -1;
}

/* A page SQLite cannot read (a corrupt file, an I/O error) ends the rows: say where, so what
 * was written before is known for what it is. */
static void read_failed(struct rt_exporter *x, int64_t n, int64_t last_seq, const char *why,
                        char *err, size_t errlen)
{
    if (n)
        snprintf(err, errlen,
                 "cannot read the database after %lld row%s (the last is sample %lld of run %lld): "
                 "%s",
                 (long long)n, n == 1 ? "" : "s", (long long)last_seq, (long long)x->q.run_id, why);
    else
        snprintf(err, errlen, "cannot read the database (run %lld, before its first row): %s",
                 (long long)x->q.run_id, why);
}

/* --- JSON Lines of a long run on two threads ------------------------------------------------
 * A line is some 200 values from seven tables, and formatting them costs more than reading them:
 * a run of more than two stretches of JSONL_SEQS samples is cut into those stretches. The main
 * thread formats and writes the even ones; a second thread on a connection of its own formats
 * each odd one into a buffer meanwhile, the main thread writes that buffer next, and the second
 * thread goes on with the next odd one: the lines come out in order, byte for byte as one thread
 * writes them. The stretches' seqs are the main connection's (its snapshot): the same rows on
 * both connections. */
#define JSONL_SEQS 32

/* The last seq of the stretch that starts at a, in a selection that ends at hi. */
static int64_t stretch_end(int64_t a, int64_t hi)
{
    return hi - a < JSONL_SEQS ? hi : a + JSONL_SEQS - 1;
}

struct jworker {
    struct rt_store *store; /* its connection */
    struct rt_jsonl *j;     /* its passes */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int posted, done, quit; /* a stretch to do, done */
    int64_t lo, hi;         /* its seqs */
    struct rt_buf buf;      /* its lines */
    int64_t rows, last_seq;
    int rc; /* 0, or -1: the read failed after `rows` lines */
};

/* The lines of seqs lo..hi of the selection through j (reset and bound to them), written to out
 * or appended to `to`, rows and last seq counted: 0, -1 (a read failed) or -2 (a write). */
static int jsonl_stretch(struct rt_jsonl *j, int64_t lo, int64_t hi, struct rt_buf *line,
                         struct rt_buf *to, FILE *out, int64_t *rows, int64_t *last_seq)
{
    export_jsonl_reset(j);
    export_jsonl_bind_i(j, 5, lo);
    export_jsonl_bind_i(j, 6, hi);
    int rc;
    int64_t seq;
    while ((rc = export_jsonl_next(j, line, &seq)) == 1) {
        rt_buf_append(line, "\n", 1);
        if (to)
            rt_buf_append(to, line->p, line->len);
        else if (fwrite(line->p, 1, line->len, out) != line->len)
            return -2;
        (*rows)++;
        *last_seq = seq;
    }
    return rc < 0 ? -1 : 0;
}

static void *jworker_main(void *arg)
{
    struct jworker *w = arg;
    struct rt_buf line = {0};
    rt_store_read_begin(w->store);
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->posted && !w->quit)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit)
            break;
        w->posted = 0;
        pthread_mutex_unlock(&w->mu);
        w->buf.len = 0;
        w->rows = 0;
        w->rc = jsonl_stretch(w->j, w->lo, w->hi, &line, &w->buf, NULL, &w->rows, &w->last_seq);
        pthread_mutex_lock(&w->mu);
        w->done = 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    rt_store_read_end(w->store);
    rt_buf_free(&line);
    return NULL;
}

static void jworker_post(struct jworker *w, int64_t lo, int64_t hi)
{
    pthread_mutex_lock(&w->mu);
    w->lo = lo;
    w->hi = hi;
    w->done = 0;
    w->posted = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

static void jworker_wait(struct jworker *w)
{
    pthread_mutex_lock(&w->mu);
    while (!w->done)
        pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
}

/* The selection's seqs, first and last; 0 where it is too short to share, or its seqs too far
 * apart (a hand-made or merged file with gaps: stretches of seqs, not of rows, would be mostly
 * empty). */
static int jsonl_span(struct rt_exporter *x, int64_t *lo, int64_t *hi)
{
    struct rt_store_rows *r = rt_store_query(x->store, RT_Q_EXPORT_SEQ_SPAN);
    if (!r)
        return 0;
    rt_store_rows_bind_i(r, 1, x->q.run_id);
    int ok = rt_store_rows_next(r) == 1 && rt_store_rows_i(r, 0) != RT_NA;
    if (ok) {
        *lo = rt_store_rows_i(r, 0);
        *hi = rt_store_rows_i(r, 1);
    }
    rt_store_rows_close(r);
    if (x->q.seq_from > 0 && x->q.seq_from > *lo)
        *lo = x->q.seq_from;
    if (x->q.seq_to > 0 && x->q.seq_to < *hi)
        *hi = x->q.seq_to;
    if (!ok || *hi - *lo < 2 * JSONL_SEQS)
        return 0;
    r = rt_store_query(x->store, RT_Q_EXPORT_SEQ_COUNT);
    if (!r)
        return 0;
    rt_store_rows_bind_i(r, 1, x->q.run_id);
    rt_store_rows_bind_i(r, 2, *lo);
    rt_store_rows_bind_i(r, 3, *hi);
    ok = rt_store_rows_next(r) == 1 && (*hi - *lo) / 2 < rt_store_rows_i(r, 0);
    rt_store_rows_close(r);
    return ok;
}

/* The rows of a long JSON Lines selection on two threads into *n (as rt_exporter_rows returns
 * them); 0 when it did not start (too short, no second connection or thread: the caller writes
 * them on one). */
static int jsonl_shared(struct rt_exporter *x, FILE *out, char *err, size_t errlen, int64_t *res)
{
    int64_t lo = 0, hi = 0;
    struct jworker w;
    memset(&w, 0, sizeof(w));
    /* (on one CPU the two threads would only take turns, and spend more: one thread writes) */
    if (rt_usable_cpus() < 2 || !jsonl_span(x, &lo, &hi) ||
        rt_store_open_second(x->store, &w.store) != 0)
        return 0;
    if ((w.j = export_jsonl_open(w.store, jsonl_filter, 0))) {
        export_jsonl_bind_i(w.j, 1, x->q.run_id);
        export_jsonl_bind_f(w.j, 2, x->q.since);
        export_jsonl_bind_f(w.j, 3, x->q.until);
    }
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    if (!w.j || pthread_create(&w.th, NULL, jworker_main, &w) != 0) {
        pthread_mutex_destroy(&w.mu);
        pthread_cond_destroy(&w.cv);
        export_jsonl_close(w.j);
        rt_store_close(w.store);
        return 0;
    }
    int64_t n = 0, last_seq = 0, nst = (hi - lo) / JSONL_SEQS + 1;
    int rc = 0;
    char why[256] = "";
    jworker_post(&w, lo + JSONL_SEQS, stretch_end(lo + JSONL_SEQS, hi));
    for (int64_t k = 0; k < nst && rc == 0; k += 2) {
        int64_t a = lo + k * JSONL_SEQS, b = stretch_end(a, hi);
        rc = jsonl_stretch(x->jsonl, a, b, &x->line, NULL, out, &n, &last_seq);
        if (rc == -1)
            snprintf(why, sizeof(why), "%s", rt_store_error(x->store));
        if (rc != 0 || k + 1 >= nst)
            break;
        jworker_wait(&w); /* stretch k + 1, posted before; the worker waits for the next */
        if (w.rc == -1)
            snprintf(why, sizeof(why), "%s", rt_store_error(w.store));
        if (w.buf.len && fwrite(w.buf.p, 1, w.buf.len, out) != w.buf.len) {
            rc = -2;
            break;
        }
        n += w.rows;
        if (w.rows)
            last_seq = w.last_seq;
        rc = w.rc;
        if (rc == 0 && k + 3 < nst) {
            int64_t c = lo + (k + 3) * JSONL_SEQS;
            jworker_post(&w, c, stretch_end(c, hi));
        }
    }
    if (rc == -2)
        snprintf(err, errlen, "%s", rt_strerror(errno ? errno : EIO));
    else if (rc == -1)
        read_failed(x, n, last_seq, why, err, errlen);
    pthread_mutex_lock(&w.mu);
    w.quit = 1; /* (a stretch posted and not taken is dropped) */
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(w.th, NULL);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    export_jsonl_close(w.j);
    rt_store_close(w.store);
    rt_buf_free(&w.buf);
    /* the selection as it was bound before */
    reset_rows(x);
    export_jsonl_bind_i(x->jsonl, 5, x->q.seq_from > 0 ? x->q.seq_from : RT_NA);
    export_jsonl_bind_i(x->jsonl, 6, x->q.seq_to > 0 ? x->q.seq_to : RT_NA);
    *res = rc < 0 ? rc : n;
    return 1;
}

int64_t rt_exporter_rows(struct rt_exporter *x, FILE *out, char *err, size_t errlen)
{
    int64_t n = 0, last_seq = 0, seq = 0;
    if (x->jsonl && x->q.sample_id <= 0 && jsonl_shared(x, out, err, errlen, &n))
        return n;
    int rc;
    while ((rc = next_row(x, &seq)) == 1) {
        if (write_line(x, out) != 0) {
            snprintf(err, errlen, "%s", rt_strerror(errno ? errno : EIO));
            reset_rows(x);
            return -2;
        }
        n++;
        last_seq = seq;
    }
    if (rc < 0)
        read_failed(x, n, last_seq, rt_store_error(x->store), err, errlen);
    reset_rows(x);
    return rc < 0 ? -1 : n;
}

int rt_exporter_sample(struct rt_exporter *x, int64_t sample_id, FILE *out)
{
    bind_i(x, 4, sample_id);
    int64_t seq;
    int rc = 0;
    if (next_row(x, &seq) == 1)
        rc = write_line(x, out);
    reset_rows(x);
    return rc;
}

void rt_exporter_close(struct rt_exporter *x)
{
    if (!x)
        return;
    rt_store_rows_close(x->rows);
    export_jsonl_close(x->jsonl);
    free(x->fmt);
    free(x->is_process);
    rt_buf_free(&x->line);
    free(x);
}
