/* merge.c - runs copied from one database into another, known by their UUID (merge.h).
 *
 * The input is attached to the output's connection and copied table by table with one
 * INSERT ... SELECT each: a row id column (INTEGER PRIMARY KEY) is moved past the largest id the
 * output's table holds, and every foreign key follows its parent's move. Which tables, in which
 * order, and which columns point where is read from the schema (PRAGMA table_info and
 * foreign_key_list), so a table a migration adds is merged without a change here. */
#include "rtrack/store/merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "rtrack/base/util.h"

#define MAX_TABLES 32
#define MAX_COLS   128

/* Tables that are the file's own, not the runs': upload progress (merge.h). */
static const char *const kept_out[] = {"uploads", "upload_batches"};

struct fk {
    char col[64], parent[64];
};

struct table {
    char name[64];
    char id[64]; /* the row id column (INTEGER PRIMARY KEY), "" when none */
    char cols[MAX_COLS][64];
    int ncols;
    struct fk fks[8];
    int nfks;
    int done;       /* copied (its rows' ids known to its children) */
    int64_t offset; /* what its ids move by */
    char *filter;   /* the input's rows of the copied runs: a WHERE condition */
};

static int read_tables(struct rt_store *s, struct table *t, int *n)
{
    sqlite3_stmt *st = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name "
                           "NOT LIKE 'sqlite_%' ORDER BY name",
                           -1, &st, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot read database");
    while (sqlite3_step(st) == SQLITE_ROW && *n < MAX_TABLES) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        int skip = 0;
        for (size_t k = 0; k < RT_ARRAY_LEN(kept_out); k++)
            skip |= !strcmp(name, kept_out[k]);
        if (skip || strlen(name) >= sizeof(t->name))
            continue;
        memset(&t[*n], 0, sizeof(t[*n]));
        snprintf(t[*n].name, sizeof(t->name), "%s", name);
        (*n)++;
    }
    sqlite3_finalize(st);
    for (int i = 0; i < *n; i++) {
        char *sql = xasprintf("SELECT name, type, pk, (SELECT count(*) FROM "
                              "pragma_table_info('%s') WHERE pk > 0) FROM pragma_table_info('%s')",
                              t[i].name, t[i].name);
        int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        free(sql);
        if (rc != SQLITE_OK)
            return store_db_err(s, "cannot read database");
        while (sqlite3_step(st) == SQLITE_ROW && t[i].ncols < MAX_COLS) {
            const char *col = (const char *)sqlite3_column_text(st, 0);
            const char *type = (const char *)sqlite3_column_text(st, 1);
            snprintf(t[i].cols[t[i].ncols++], 64, "%s", col);
            if (sqlite3_column_int(st, 2) == 1 && sqlite3_column_int(st, 3) == 1 && type &&
                !strcasecmp(type, "INTEGER"))
                snprintf(t[i].id, sizeof(t[i].id), "%s", col);
        }
        sqlite3_finalize(st);
        sql = xasprintf("SELECT \"from\", \"table\" FROM pragma_foreign_key_list('%s')", t[i].name);
        rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        free(sql);
        if (rc != SQLITE_OK)
            return store_db_err(s, "cannot read database");
        while (sqlite3_step(st) == SQLITE_ROW && t[i].nfks < 8) {
            struct fk *f = &t[i].fks[t[i].nfks++];
            snprintf(f->col, sizeof(f->col), "%s", (const char *)sqlite3_column_text(st, 0));
            snprintf(f->parent, sizeof(f->parent), "%s", (const char *)sqlite3_column_text(st, 1));
        }
        sqlite3_finalize(st);
    }
    return 0;
}

static struct table *find(struct table *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

static int64_t max_id(struct rt_store *s, const struct table *t, int *ok)
{
    char *sql = xasprintf("SELECT coalesce(max(\"%s\"), 0) FROM main.\"%s\"", t->id, t->name);
    sqlite3_stmt *st;
    int64_t v = 0;
    *ok = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK;
    free(sql);
    if (*ok) {
        *ok = sqlite3_step(st) == SQLITE_ROW;
        v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

/* Copy one table's rows of the runs being merged. */
static int copy_table(struct rt_store *s, struct table *t, struct table *all, int n)
{
    int ok = 1;
    if (*t->id)
        t->offset = max_id(s, t, &ok);
    if (!ok)
        return store_db_err(s, "cannot read database");
    struct rt_buf cols = {0}, vals = {0};
    for (int c = 0; c < t->ncols; c++) {
        const char *col = t->cols[c];
        char *w = xasprintf("%s\"%s\"", c ? ", " : "", col);
        rt_buf_puts(&cols, w);
        rt_buf_puts(&vals, w);
        free(w);
        int64_t by = 0;
        if (*t->id && !strcmp(col, t->id))
            by = t->offset;
        for (int f = 0; f < t->nfks; f++) {
            struct table *p = find(all, n, t->fks[f].parent);
            if (!strcmp(t->fks[f].col, col) && p && *p->id)
                by = p->offset;
        }
        if (by) {
            w = xasprintf(" + %lld", (long long)by);
            rt_buf_puts(&vals, w);
            free(w);
        }
    }
    char *sql = xasprintf("INSERT INTO main.\"%s\" (%s) SELECT %s FROM src.\"%s\" WHERE %s",
                          t->name, cols.p, vals.p, t->name, t->filter);
    rt_buf_free(&cols);
    rt_buf_free(&vals);
    int rc = store_exec(s, sql);
    free(sql);
    return rc;
}

/* Which tables hold rows of runs: runs, and those with a key to one that does. -1 without a
 * runs table. */
static int find_of_runs(struct rt_store *s, struct table *t, int n, int *of_runs)
{
    struct table *runs = find(t, n, "runs");
    if (!runs || !*runs->id)
        return store_err(s, "cannot merge into '%s': it has no runs table", s->path);
    memset(of_runs, 0, MAX_TABLES * sizeof(*of_runs));
    of_runs[runs - t] = 1;
    for (int grew = 1; grew;) {
        grew = 0;
        for (int i = 0; i < n; i++)
            for (int f = 0; f < t[i].nfks && !of_runs[i]; f++) {
                struct table *p = find(t, n, t[i].fks[f].parent);
                if (p && p != &t[i] && of_runs[p - t])
                    of_runs[i] = grew = 1;
            }
    }
    return 0;
}

/* Every table below runs, parents first, each with the condition that picks the input's rows
 * of the runs that runs->filter picks (their ids moving by runs->offset); tables that refer to
 * no run are the file's own. */
static int copy_below_runs(struct rt_store *s, struct table *t, int n, const int *of_runs)
{
    struct table *runs = find(t, n, "runs");
    for (int i = 0; i < n; i++)
        if (&t[i] != runs) {
            t[i].done = 0;
            free(t[i].filter);
            t[i].filter = NULL;
        }
    runs->done = 1;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int i = 0; i < n; i++) {
            if (t[i].done || !of_runs[i])
                continue;
            /* ready when every parent that holds rows of runs is copied: the keys to it move */
            int via = -1, ready = 1;
            for (int f = 0; f < t[i].nfks; f++) {
                struct table *p = find(t, n, t[i].fks[f].parent);
                if (!p || p == &t[i] || !of_runs[p - t])
                    continue;
                if (!p->done)
                    ready = 0;
                else if (via < 0)
                    via = f;
            }
            if (!ready || via < 0)
                continue;
            struct table *p = find(t, n, t[i].fks[via].parent);
            t[i].filter = xasprintf("\"%s\" IN (SELECT \"%s\" FROM src.\"%s\" WHERE %s)",
                                    t[i].fks[via].col, p->id, p->name, p->filter);
            if (copy_table(s, &t[i], t, n) != 0)
                return -1;
            t[i].done = progress = 1;
        }
    }
    return 0;
}

/* The runs of temp.rt_merge_runs copied, with every row of theirs. */
static int copy_new(struct rt_store *s, struct table *t, int n, const int *of_runs)
{
    struct table *runs = find(t, n, "runs");
    free(runs->filter);
    runs->filter = xasprintf("\"%s\" IN (SELECT id FROM temp.rt_merge_runs)", runs->id);
    if (copy_table(s, runs, t, n) != 0)
        return -1;
    return copy_below_runs(s, t, n, of_runs);
}

/* A run the output holds from an earlier merge, taken while it was still recording, brought up
 * to date: its rows below runs are deleted (the foreign keys cascade) and copied again from the
 * input, its runs row updated in place, so its id in the output stays (and its upload
 * progress, which is the output's own). */
static int refresh_run(struct rt_store *s, struct table *t, int n, const int *of_runs,
                       int64_t src_id, int64_t out_id)
{
    struct table *runs = find(t, n, "runs");
    for (int i = 0; i < n; i++)
        for (int f = 0; f < t[i].nfks && &t[i] != runs; f++) {
            if (strcmp(t[i].fks[f].parent, "runs") != 0)
                continue;
            char *sql = xasprintf("DELETE FROM main.\"%s\" WHERE \"%s\" = %lld", t[i].name,
                                  t[i].fks[f].col, (long long)out_id);
            int rc = store_exec(s, sql);
            free(sql);
            if (rc != 0)
                return -1;
        }
    struct rt_buf cols = {0};
    for (int c = 0, k = 0; c < runs->ncols; c++) {
        if (!strcmp(runs->cols[c], runs->id))
            continue;
        char *w = xasprintf("%s\"%s\"", k++ ? ", " : "", runs->cols[c]);
        rt_buf_puts(&cols, w);
        free(w);
    }
    char *sql = xasprintf("UPDATE main.\"%s\" SET (%s) = (SELECT %s FROM src.\"%s\" WHERE "
                          "\"%s\" = %lld) WHERE \"%s\" = %lld",
                          runs->name, cols.p, cols.p, runs->name, runs->id, (long long)src_id,
                          runs->id, (long long)out_id);
    rt_buf_free(&cols);
    int rc = store_exec(s, sql);
    free(sql);
    if (rc != 0)
        return -1;
    free(runs->filter);
    runs->filter = xasprintf("\"%s\" = %lld", runs->id, (long long)src_id);
    runs->offset = out_id - src_id;
    return copy_below_runs(s, t, n, of_runs);
}

/* The pairs (input id, output id) of the runs both hold where the output's copy is unfinished
 * (no end) and the input's has more: an end, or samples past the output's last. */
static int stale_runs(struct rt_store *out, const char *job, int64_t **pairs, int *npairs)
{
    static const char sql[] =
        "SELECT i.id, o.id FROM src.runs i JOIN main.runs o ON o.uuid = i.uuid "
        "WHERE o.ended_at IS NULL AND (?1 IS NULL OR i.slurm_job_id = ?1 OR "
        "i.slurm_array_job_id = ?1) AND (i.ended_at IS NOT NULL OR "
        "coalesce((SELECT max(seq) FROM src.samples WHERE run_id = i.id), -1) > "
        "coalesce((SELECT max(seq) FROM main.samples WHERE run_id = o.id), -1))";
    sqlite3_stmt *st;
    int cap = 0;
    *npairs = 0;
    if (sqlite3_prepare_v2(out->db, sql, -1, &st, NULL) != SQLITE_OK)
        return store_db_err(out, "cannot read database");
    store_bind_t(st, 1, job);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*npairs + 2 > cap) {
            cap = cap ? cap * 2 : 16;
            *pairs = xrealloc(*pairs, (size_t)cap * sizeof(**pairs));
        }
        (*pairs)[(*npairs)++] = sqlite3_column_int64(st, 0);
        (*pairs)[(*npairs)++] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return store_db_err(out, "cannot read database");
    *npairs /= 2;
    return 0;
}

/* `head` (SQL up to "uuid [NOT] IN") of the input's runs of the job (NULL: every one) that
 * the output holds, or not: the count it selects, or the rows it inserted, in *n. */
static int job_runs(struct rt_store *out, const char *head, const char *job, int64_t *n)
{
    /* (a job id, an array's, or one task of an array as sacct names it: ARRAY_TASK) */
    char *sql = xasprintf("%s (SELECT uuid FROM main.runs) AND (?1 IS NULL OR slurm_job_id = ?1 "
                          "OR slurm_array_job_id = ?1 "
                          "OR slurm_array_job_id || '_' || slurm_array_task_id = ?1)",
                          head);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(out->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return store_db_err(out, "cannot read database");
    store_bind_t(st, 1, job);
    rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : sqlite3_changes(out->db);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return store_db_err(out, "cannot write database");
    return 0;
}

/* The attached input's b-trees checked (PRAGMA quick_check: every page's structure, not the
 * indexes against their tables): 0, or -1 naming the input and the first problem. */
static int check_input(struct rt_store *out, const char *in_path)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(out->db, "PRAGMA src.quick_check(1)", -1, &st, NULL) != SQLITE_OK)
        return store_err(out, "cannot read database '%s': %s", in_path, sqlite3_errmsg(out->db));
    int rc = sqlite3_step(st);
    const char *msg = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ok = msg && !strcmp(msg, "ok");
    if (!ok) {
        /* (an attached database's report starts "*** in database src ***" on a line of its own) */
        const char *nl = msg ? strrchr(msg, '\n') : NULL;
        store_err(out, "cannot merge '%s': the database is corrupt (%s); nothing of it was merged",
                  in_path,
                  nl    ? nl + 1
                  : msg ? msg
                        : sqlite3_errmsg(out->db));
    }
    sqlite3_finalize(st);
    return ok ? 0 : -1;
}

int rt_store_merge(struct rt_store *out, const char *in_path, const char *slurm_job,
                   struct rt_merge_count *count)
{
    count->added = count->present = count->updated = 0;
    /* the input by the store's rules: an rtrack database, upgraded when older */
    struct rt_store *in;
    char err[600];
    if (rt_store_open(in_path, RT_STORE_READ, &in, err, sizeof(err)) != 0)
        return store_err(out, "%s", err);
    /* attached as it was opened: immutable where it is read without a -shm (a read-only place,
     * another user's file), so merge reads what every other reader reads */
    char *src = in->uri ? xstrdup(in->uri) : store_file_uri(in_path, NULL);
    rt_store_close(in);
    struct stat a, b;
    if (stat(in_path, &a) == 0 && stat(out->path, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino) {
        free(src);
        return store_err(out, "'%s' is the output itself", in_path);
    }

    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(out->db, "ATTACH ?1 AS src", -1, &st, NULL) != SQLITE_OK) {
        free(src);
        return store_db_err(out, "cannot read database");
    }
    sqlite3_bind_text(st, 1, src, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    free(src);
    if (rc != SQLITE_DONE)
        return store_err(out, "cannot read database '%s': %s", in_path, sqlite3_errmsg(out->db));

    /* A corrupt page reads as a page with fewer rows as easily as it fails the read: a
     * process_samples leaf whose cell count was hit was merged with the rest of its rows and
     * exit 0, where the copy's SELECT could not tell. The input is checked first, and named. */
    if (check_input(out, in_path) != 0) {
        sqlite3_exec(out->db, "DETACH src", NULL, NULL, NULL);
        return -1;
    }

    struct table *t = xcalloc(MAX_TABLES, sizeof(*t));
    int n = 0, ret = -1;
    int64_t *pairs = NULL; /* the runs brought up to date: input id, output id */
    int npairs = 0, of_runs[MAX_TABLES];
    if (store_exec(out, "BEGIN IMMEDIATE") != 0)
        goto detach;
    if (store_exec(out, "CREATE TEMP TABLE IF NOT EXISTS rt_merge_runs (id INTEGER PRIMARY KEY);"
                        "DELETE FROM temp.rt_merge_runs") != 0)
        goto rollback;
    /* the runs to copy: the job's (or all) of the input that the output does not hold */
    if (job_runs(out, "INSERT INTO temp.rt_merge_runs SELECT id FROM src.runs WHERE uuid NOT IN",
                 slurm_job, &count->added) != 0 ||
        job_runs(out, "SELECT count(*) FROM src.runs WHERE uuid IN", slurm_job, &count->present) !=
            0)
        goto rollback;
    if (stale_runs(out, slurm_job, &pairs, &npairs) != 0)
        goto rollback;
    count->updated = npairs;
    count->present -= npairs;
    if ((count->added || npairs) &&
        (read_tables(out, t, &n) != 0 || find_of_runs(out, t, n, of_runs) != 0 ||
         (count->added && copy_new(out, t, n, of_runs) != 0)))
        goto rollback;
    for (int i = 0; i < npairs; i++)
        if (refresh_run(out, t, n, of_runs, pairs[2 * i], pairs[2 * i + 1]) != 0)
            goto rollback;
    if (store_exec(out, "COMMIT") != 0)
        goto rollback;
    ret = 0;
    goto detach;
rollback:
    sqlite3_exec(out->db, "ROLLBACK", NULL, NULL, NULL);
detach:
    for (int i = 0; i < n; i++)
        free(t[i].filter);
    free(t);
    free(pairs);
    sqlite3_exec(out->db, "DETACH src", NULL, NULL, NULL);
    if (ret != 0)
        count->added = count->updated = 0;
    return ret;
}
