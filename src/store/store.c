/* store.c - SQLite storage of runs and samples.
 *
 * WAL with synchronous=NORMAL: a commit is durable against a crash of rtrack (kill -9) and never
 * corrupts the file; only a power loss can drop the last commits. Samples are batched so a
 * commit happens at least once a second (the sampler decides when). Statements are prepared
 * once and reused. Identity rows (disks, nics, mounts, processes) are upserted once per run and
 * their ids cached. */
#include "rtrack/store.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/utf8.h"
#include "rtrack/util.h"
#include "rtrack/version.h"

#define BUSY_TIMEOUT_MS 2000
#define CACHE_KIB       128 /* page cache cap: keeps the recorder's RSS small and flat */
/* A reader's cap: a JSON Lines row gathers the sample's rows from six tables, and the pages on
 * the way to them must stay cached from one row to the next, or a long run's export reads them
 * again for every row (docs/performance.md, Export). */
#define READ_CACHE_KIB 1024

enum {
    ST_SAMPLE,
    ST_CORE,
    ST_DISK,
    ST_DISK_SAMPLE,
    ST_MOUNT,
    ST_MOUNT_SAMPLE,
    ST_NIC,
    ST_NIC_SAMPLE,
    ST_PROCESS,
    ST_PROCESS_SAMPLE,
    ST_GPU,
    ST_GPU_SAMPLE,
    ST_GPU_PROCESS_SAMPLE,
    ST_DATA_VERSION,
    ST_COUNT
};

struct rt_store {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *st[ST_COUNT];
    int64_t run_id;
    int in_tx;
    int needs_upgrade; /* opened for reading, schema older than this rtrack's */
    int64_t last_sample_id;
    int64_t data_version; /* PRAGMA data_version at the last rt_store_others_wrote() */
    int have_data_version;
    struct rt_map ids;   /* identity pointer -> row id (disks, mounts, nics: few per run) */
    struct rt_map procs; /* process key -> row id, for the processes of the last sample */
    struct rt_map procs_next;
    char err[512];
};

/* --- error text ----------------------------------------------------------------------------- */

static int set_err(struct rt_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_err(struct rt_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* SQLite's messages are already lowercase; say which database and what failed. */
static int db_err(struct rt_store *s, const char *what)
{
    int code = sqlite3_extended_errcode(s->db);
    const char *msg = sqlite3_errmsg(s->db);
    if ((code & 0xff) == SQLITE_FULL)
        msg = "no space left on device";
    else if ((code & 0xff) == SQLITE_BUSY)
        msg = "database is locked by another writer";
    else if ((code & 0xff) == SQLITE_READONLY)
        msg = "database is read-only";
    return set_err(s, "%s '%s': %s", what, s->path, msg);
}

/* The database file was deleted (or renamed) while open. In WAL mode SQLite would go on
 * committing into the unlinked file and its -wal, so every later sample would be lost without
 * a word; instead each write fails, as on a full disk (one stat() per transaction). */
static int file_gone(struct rt_store *s)
{
    int moved = 0;
    if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_HAS_MOVED, &moved) != SQLITE_OK || !moved)
        return 0;
    set_err(s, "cannot write to database '%s': the file was deleted or renamed while recording",
            s->path);
    return 1;
}

const char *rt_store_error(const struct rt_store *s)
{
    return s->err;
}

struct sqlite3 *rt_store_db(struct rt_store *s)
{
    return s->db;
}

int rt_store_schema_version(void)
{
    int v = RT_SCHEMA_BASE_VERSION;
    for (const struct rt_migration *m = rt_sql_migrations; m->sql; m++)
        if (m->version > v)
            v = m->version;
    return v;
}

static int exec(struct rt_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        set_err(s, "cannot update database '%s': %s", s->path, msg ? msg : "unknown error");
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

static int64_t query_int(sqlite3 *db, const char *sql, int *rc)
{
    sqlite3_stmt *st;
    int64_t v = 0;
    *rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (*rc != SQLITE_OK)
        return 0;
    *rc = sqlite3_step(st);
    if (*rc == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
        *rc = SQLITE_OK;
    } else if (*rc == SQLITE_DONE) {
        *rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return v;
}

/* --- open, validate, migrate ----------------------------------------------------------------- */

#define FNV_OFFSET 1469598103934665603ull

/* FNV-1a of s (NULL: nothing) and a 0xff separator, continuing from h */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (h ^ 0xff) * 1099511628211ull;
}

/* the key of a column of a table or view (col "": the table or view itself) */
static uint64_t schema_key(const char *name, const char *col)
{
    uint64_t h = fnv1a(fnv1a(FNV_OFFSET, name), col);
    return h ? h : 1;
}

enum { SK_TABLE = 1, SK_VIEW, SK_BROKEN_VIEW, SK_COLUMN };

uint64_t rt_store_schema_fingerprint(struct sqlite3 *db)
{
    sqlite3_stmt *st;
    uint64_t h = FNV_OFFSET;
    if (sqlite3_prepare_v2(db,
                           "SELECT type, name, tbl_name, coalesce(sql, '') FROM main.sqlite_schema "
                           "ORDER BY type, name",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        for (int i = 0; i < 4; i++)
            h = fnv1a(h, (const char *)sqlite3_column_text(st, i));
    sqlite3_finalize(st);
    return h;
}

/* Every table and view of this rtrack's schema, with each of its columns, must be in the file:
 * one that another program cut down would otherwise fail half-way through a run or an export.
 * Extra tables, views and columns are left alone. The reference is the schema built the way a
 * new database is, in a private in-memory database. */
static int check_complete(struct rt_store *s)
{
    sqlite3 *ref = NULL;
    sqlite3_stmt *want = NULL, *objs = NULL, *cols = NULL;
    struct rt_map have;
    char broken[256] = "";
    int ok = -1;
    /* the usual case, a database this rtrack made and nobody changed: no reference needed */
    if (rt_store_schema_fingerprint(s->db) == RT_SCHEMA_FINGERPRINT)
        return 0;
    rt_map_init(&have, 512);
    /* what the file has: each object once (a view is compiled once), then its columns */
    if (sqlite3_prepare_v2(s->db,
                           "SELECT type, name FROM main.sqlite_schema WHERE type IN ('table', "
                           "'view') AND name NOT LIKE 'sqlite_%'",
                           -1, &objs, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "SELECT name FROM pragma_table_info(?1, 'main')", -1, &cols,
                           NULL) != SQLITE_OK) {
        db_err(s, "cannot read database");
        goto out;
    }
    while (sqlite3_step(objs) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(objs, 0);
        const char *name = (const char *)sqlite3_column_text(objs, 1);
        int kind = strcmp(type, "table") == 0 ? SK_TABLE : SK_VIEW;
        sqlite3_bind_text(cols, 1, name, -1, SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(cols)) == SQLITE_ROW)
            rt_map_put(&have, schema_key(name, (const char *)sqlite3_column_text(cols, 0)),
                       SK_COLUMN);
        if (rc != SQLITE_DONE && kind == SK_VIEW) {
            /* a view over a table or column that is gone */
            kind = SK_BROKEN_VIEW;
            if (!broken[0])
                snprintf(broken, sizeof(broken), "%s", sqlite3_errmsg(s->db));
        }
        sqlite3_reset(cols);
        rt_map_put(&have, schema_key(name, ""), kind);
    }
    if (sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
            SQLITE_OK ||
        sqlite3_exec(ref, rt_sql_schema, NULL, NULL, NULL) != SQLITE_OK)
        goto no_ref;
    for (const struct rt_migration *m = rt_sql_migrations; m->sql; m++)
        if (m->version > RT_SCHEMA_BASE_VERSION &&
            sqlite3_exec(ref, m->sql, NULL, NULL, NULL) != SQLITE_OK)
            goto no_ref;
    if (sqlite3_exec(ref, rt_sql_views, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(ref,
                           "SELECT m.type, m.name, p.name FROM sqlite_schema m, "
                           "pragma_table_info(m.name) p WHERE m.type IN ('table', 'view') AND "
                           "m.name NOT LIKE 'sqlite_%' ORDER BY m.type <> 'table', m.name, p.cid",
                           -1, &want, NULL) != SQLITE_OK)
        goto no_ref;
    ok = 0;
    while (ok == 0 && sqlite3_step(want) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(want, 0);
        const char *name = (const char *)sqlite3_column_text(want, 1);
        const char *col = (const char *)sqlite3_column_text(want, 2);
        int64_t got = 0, c;
        rt_map_get(&have, schema_key(name, ""), &got);
        if (!got)
            ok = set_err(s,
                         "'%s' is not a complete rtrack database: %s '%s' is missing; refusing "
                         "to touch it",
                         s->path, type, name);
        else if (got == SK_BROKEN_VIEW)
            ok = set_err(s,
                         "'%s' is not a complete rtrack database: view '%s' is broken (%s); "
                         "refusing to touch it",
                         s->path, name, broken);
        else if ((got == SK_TABLE) != (strcmp(type, "table") == 0))
            ok = set_err(s,
                         "'%s' is not a complete rtrack database: '%s' is a %s, not a %s; "
                         "refusing to touch it",
                         s->path, name, got == SK_TABLE ? "table" : "view", type);
        else if (!rt_map_get(&have, schema_key(name, col), &c))
            ok = set_err(s,
                         "'%s' is not a complete rtrack database: column '%s' of %s '%s' is "
                         "missing; refusing to touch it",
                         s->path, col, type, name);
    }
    goto out;
no_ref:
    set_err(s, "cannot check database '%s': cannot build the reference schema", s->path);
out:
    sqlite3_finalize(want);
    sqlite3_finalize(objs);
    sqlite3_finalize(cols);
    sqlite3_close(ref);
    rt_map_free(&have);
    return ok;
}

/* Reading the header is the first thing done: nothing is written to a file until it is known
 * to be an rtrack database of a version this rtrack understands. */
static int check_and_migrate(struct rt_store *s, enum rt_store_mode mode)
{
    int rc;
    /* One read transaction for the three: a recorder creating the file at this moment is seen
     * before or after its schema transaction, never across it (separate reads could see its
     * application_id still 0, then its tables, and refuse a database that is fine). */
    sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL);
    int64_t app = query_int(s->db, "PRAGMA application_id", &rc);
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            set_err(s, "'%s' is not an rtrack database (not a SQLite file)", s->path);
        else
            db_err(s, "cannot read database");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    int64_t ver = query_int(s->db, "PRAGMA user_version", &rc);
    int64_t ntables =
        rc == SQLITE_OK ? query_int(s->db, "SELECT count(*) FROM sqlite_schema", &rc) : 0;
    if (rc != SQLITE_OK) {
        db_err(s, "cannot read database");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    int latest = rt_store_schema_version();
    if (app != RT_APPLICATION_ID && (app != 0 || ver != 0 || ntables != 0))
        return set_err(s,
                       "'%s' is a SQLite database but not an rtrack database; refusing to "
                       "touch it",
                       s->path);
    if (ver > latest)
        return set_err(s,
                       "'%s' was written by a newer rtrack (schema version %lld, this rtrack "
                       "knows up to %d); refusing to touch it",
                       s->path, (long long)ver, latest);
    if (mode == RT_STORE_READ) {
        if (ver == 0)
            return set_err(s, "'%s' holds no rtrack data yet", s->path);
        s->needs_upgrade = ver < latest;
        /* an older one is checked by the writing connection that upgrades it */
        return s->needs_upgrade ? 0 : check_complete(s);
    }
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return set_err(s, "cannot write database '%s': file is read-only", s->path);
    if (ver == latest)
        return check_complete(s);
    if (exec(s, "BEGIN IMMEDIATE") != 0)
        return -1;
    /* a concurrent recorder may have created it in the meantime */
    ver = query_int(s->db, "PRAGMA user_version", &rc);
    char sql[128];
    int created = ver == 0;
    if (ver == 0) {
        if (exec(s, rt_sql_schema) != 0)
            goto fail;
        snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 RT_APPLICATION_ID, RT_SCHEMA_BASE_VERSION);
        if (exec(s, sql) != 0)
            goto fail;
        ver = RT_SCHEMA_BASE_VERSION;
    }
    for (const struct rt_migration *m = rt_sql_migrations; m->sql; m++) {
        if (m->version <= ver)
            continue;
        if (exec(s, m->sql) != 0)
            goto fail;
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->version);
        if (exec(s, sql) != 0)
            goto fail;
        ver = m->version;
    }
    if (exec(s, rt_sql_views) != 0)
        goto fail;
    /* an upgraded file must have ended up complete; a new one is */
    if (!created && check_complete(s) != 0)
        goto fail;
    return exec(s, "COMMIT");
fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

int rt_store_open(const char *path, enum rt_store_mode mode, struct rt_store **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    struct rt_store *s = xcalloc(1, sizeof(*s));
    s->path = xstrdup(path);
    rt_map_init(&s->ids, 256);
    rt_map_init(&s->procs, 64);
    rt_map_init(&s->procs_next, 64);

    struct stat sb;
    int exists = stat(path, &sb) == 0;
    int stat_errno = errno;
    if (!exists && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        /* creating a file through a link that points nowhere is the classic way to make a
         * program write where it was not meant to */
        set_err(s, "cannot %s database '%s': it is a symbolic link to a file that does not exist",
                mode == RT_STORE_WRITE ? "create" : "open", path);
        goto fail;
    }
    if (!exists && mode == RT_STORE_READ) {
        set_err(s, "cannot open database '%s': %s", path, rt_strerror(stat_errno));
        goto fail;
    }
    if (!exists) {
        char *copy = xstrdup(path);
        const char *dir = dirname(copy);
        struct stat db;
        if (stat(dir, &db) != 0 || !S_ISDIR(db.st_mode))
            set_err(s, "cannot create database '%s': directory '%s' does not exist", path, dir);
        else if (access(dir, W_OK) != 0)
            set_err(s, "cannot create database '%s': directory '%s' is not writable", path, dir);
        free(copy);
        if (s->err[0])
            goto fail;
        /* Created here, not by SQLite, so that it is 0600 from the start (argv, job names and
         * tags can hold secrets); SQLite gives the -wal and -shm files the mode of the database.
         * O_EXCL: a recorder that created it in the meantime wins, the file is checked below. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
        else if (errno != EEXIST) {
            set_err(s, "cannot create database '%s': %s", path, rt_strerror(errno));
            goto fail;
        }
        if (stat(path, &sb) != 0) {
            set_err(s, "cannot create database '%s': %s", path, rt_strerror(errno));
            goto fail;
        }
        exists = 1;
    }
    if (S_ISDIR(sb.st_mode)) {
        set_err(s, "cannot open database '%s': is a directory", path);
        goto fail;
    }
    /* A FIFO would block the open, a device (/dev/null, a disk) would be read or written as if
     * it were the file: only regular files (also through a symbolic link) are databases. */
    if (!S_ISREG(sb.st_mode)) {
        set_err(s, "cannot open database '%s': not a regular file (%s)", path,
                S_ISFIFO(sb.st_mode)   ? "a named pipe"
                : S_ISCHR(sb.st_mode)  ? "a character device"
                : S_ISBLK(sb.st_mode)  ? "a block device"
                : S_ISSOCK(sb.st_mode) ? "a socket"
                                       : "not a file");
        goto fail;
    }
    if (exists && mode == RT_STORE_WRITE) {
        /* SQLite would quietly fall back to read-only and, reading a WAL database, leave -wal
         * and -shm files behind; say why it cannot be written before it touches anything.
         * access(), not open() + close(): closing any descriptor of the file would drop every
         * POSIX lock this process holds on it, those of another connection too (the streaming
         * thread's second connection did that: a reader could then delete the live WAL). */
        int fd = access(path, R_OK | W_OK) == 0 ? 0 : -1;
        int e = errno;
        char *copy = xstrdup(path);
        const char *dir = dirname(copy);
        if (fd < 0)
            set_err(s, "cannot write database '%s': %s", path,
                    e == EROFS                  ? "read-only file system"
                    : e == EACCES || e == EPERM ? "the file is read-only"
                                                : rt_strerror(e));
        else if (access(dir, W_OK) != 0)
            set_err(s, "cannot write database '%s': %s", path,
                    errno == EROFS ? "read-only file system"
                                   : "its directory is not writable (needed for the -wal file)");
        free(copy);
        if (s->err[0])
            goto fail;
    }
    int flags =
        mode == RT_STORE_WRITE ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        db_err(s, "cannot open database");
        goto fail;
    }
    sqlite3_extended_result_codes(s->db, 1);
    /* no lookaside allocator: ~120 KiB less resident memory, the recorder's allocations are
     * few and reused anyway */
    sqlite3_db_config(s->db, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    if (check_and_migrate(s, mode) != 0)
        goto fail;
    char pragmas[256];
    snprintf(pragmas, sizeof(pragmas),
             "PRAGMA foreign_keys = ON; PRAGMA cache_size = -%d; PRAGMA temp_store = MEMORY;",
             mode == RT_STORE_WRITE ? CACHE_KIB : READ_CACHE_KIB);
    if (exec(s, pragmas) != 0)
        goto fail;
    if (mode == RT_STORE_WRITE) {
        /* WAL lets export and summary read while a recorder writes, and several recorders
         * share one file; NORMAL sync: no fsync per commit, still crash-safe. */
        /* The pragma answers the mode it ended in: a reader that has the file open at that
         * moment (a sqlite3 shell polling a new database) keeps it in rollback mode, where
         * readers block commits. Ask again for a second before giving up. */
        int wal = 0, rc = SQLITE_OK;
        for (int tries = 0; tries < 100 && !wal && rc == SQLITE_OK; tries++) {
            sqlite3_stmt *st;
            rc = sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st, NULL);
            if (rc == SQLITE_OK) {
                if (sqlite3_step(st) == SQLITE_ROW)
                    wal = !sqlite3_stricmp((const char *)sqlite3_column_text(st, 0), "wal");
                sqlite3_finalize(st);
            }
            if (!wal)
                usleep(10000);
        }
        if (!wal) {
            set_err(s,
                    "cannot write database '%s': cannot switch it to WAL mode (another "
                    "program keeps it open)",
                    s->path);
            goto fail;
        }
        if (exec(s, "PRAGMA synchronous = NORMAL") != 0) {
            db_err(s, "cannot write database");
            goto fail;
        }
        /* a long run's WAL is cut back after each checkpoint instead of keeping its peak size */
        exec(s, "PRAGMA journal_size_limit = 1048576");
    }
    if (s->needs_upgrade) {
        /* an older database: bring its schema (the export views) up to date once, through a
         * writing connection, then read */
        rt_store_close(s);
        struct rt_store *w;
        char why[512];
        if (rt_store_open(path, RT_STORE_WRITE, &w, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "'%s' has an older schema that must be upgraded first: %s", path,
                     why);
            return -1;
        }
        rt_store_close(w);
        return rt_store_open(path, RT_STORE_READ, out, err, errlen);
    }
    *out = s;
    return 0;
fail:
    snprintf(err, errlen, "%s", s->err);
    rt_store_close(s);
    return -1;
}

void rt_store_close(struct rt_store *s)
{
    if (!s)
        return;
    for (int i = 0; i < ST_COUNT; i++)
        sqlite3_finalize(s->st[i]);
    if (s->db)
        sqlite3_close(s->db);
    rt_map_free(&s->ids);
    rt_map_free(&s->procs);
    rt_map_free(&s->procs_next);
    free(s->path);
    free(s);
}

/* --- statements ------------------------------------------------------------------------------ */

/* The samples columns and where each comes from, in one place: the INSERT is generated from
 * this table, so a column cannot be bound to the wrong field. */
struct col {
    const char *name;
    char type; /* i: int64 (RT_NA = NULL), n: int, f: double (NAN = NULL) */
    size_t off;
};
#define CI(n, f)                                                                                   \
    {                                                                                              \
        n, 'i', offsetof(struct rt_sample, f)                                                      \
    }
#define CF(n, f)                                                                                   \
    {                                                                                              \
        n, 'f', offsetof(struct rt_sample, f)                                                      \
    }
#define CN(n, f)                                                                                   \
    {                                                                                              \
        n, 'n', offsetof(struct rt_sample, f)                                                      \
    }
static const struct col sample_cols[] = {
    CI("seq", seq),
    CF("ts", ts),
    CF("mono", mono),
    CF("interval_s", dt),
    CI("cpu_user", cpu.v[RT_CPU_USER]),
    CI("cpu_nice", cpu.v[RT_CPU_NICE]),
    CI("cpu_system", cpu.v[RT_CPU_SYSTEM]),
    CI("cpu_idle", cpu.v[RT_CPU_IDLE]),
    CI("cpu_iowait", cpu.v[RT_CPU_IOWAIT]),
    CI("cpu_irq", cpu.v[RT_CPU_IRQ]),
    CI("cpu_softirq", cpu.v[RT_CPU_SOFTIRQ]),
    CI("cpu_steal", cpu.v[RT_CPU_STEAL]),
    CI("cpu_guest", cpu.v[RT_CPU_GUEST]),
    CI("cpu_guest_nice", cpu.v[RT_CPU_GUEST_NICE]),
    CF("cpu_utime_s", cpu_utime_s),
    CF("cpu_stime_s", cpu_stime_s),
    CF("cpu_usage", cpu_usage),
    CF("cpu_busy_cores", cpu_busy_cores),
    CN("ncores", ncores),
    CI("processes", processes),
    CI("procs_running", procs_running),
    CI("procs_blocked", procs_blocked),
    CI("forks_total", forks_total),
    CI("ctxt_total", ctxt_total),
    CI("cgroup_usage_us", cgroup_usage_us),
    CF("cgroup_cpu_s", cgroup_cpu_s),
    CF("cgroup_limit_cores", cgroup_limit_cores),
    CI("mem_total_kib", mem_total),
    CI("mem_free_kib", mem_free),
    CI("mem_available_kib", mem_available),
    CI("mem_used_kib", mem_used),
    CI("mem_buffers_kib", mem_buffers),
    CI("mem_cached_kib", mem_cached),
    CI("mem_sreclaimable_kib", mem_sreclaimable),
    CI("mem_shmem_kib", mem_shmem),
    CI("mem_active_kib", mem_active),
    CI("mem_inactive_kib", mem_inactive),
    CI("swap_total_kib", swap_total),
    CI("swap_free_kib", swap_free),
    CI("disk_read_bytes", disk_read_bytes),
    CI("disk_write_bytes", disk_write_bytes),
    CI("disk_space_total_bytes", space_total),
    CI("disk_space_used_bytes", space_used),
    CI("disk_space_free_bytes", space_free),
    CI("net_rx_bytes", net_rx_bytes),
    CI("net_tx_bytes", net_tx_bytes),
    CI("psi_cpu_some_us", psi_us[RT_PSI_CPU][RT_PSI_SOME]),
    CI("psi_cpu_full_us", psi_us[RT_PSI_CPU][RT_PSI_FULL]),
    CI("psi_memory_some_us", psi_us[RT_PSI_MEMORY][RT_PSI_SOME]),
    CI("psi_memory_full_us", psi_us[RT_PSI_MEMORY][RT_PSI_FULL]),
    CI("psi_io_some_us", psi_us[RT_PSI_IO][RT_PSI_SOME]),
    CI("psi_io_full_us", psi_us[RT_PSI_IO][RT_PSI_FULL]),
    CF("psi_cpu_some_pct", psi_pct[RT_PSI_CPU][RT_PSI_SOME]),
    CF("psi_cpu_full_pct", psi_pct[RT_PSI_CPU][RT_PSI_FULL]),
    CF("psi_memory_some_pct", psi_pct[RT_PSI_MEMORY][RT_PSI_SOME]),
    CF("psi_memory_full_pct", psi_pct[RT_PSI_MEMORY][RT_PSI_FULL]),
    CF("psi_io_some_pct", psi_pct[RT_PSI_IO][RT_PSI_SOME]),
    CF("psi_io_full_pct", psi_pct[RT_PSI_IO][RT_PSI_FULL]),
    CI("proc_count", proc_count),
    CI("proc_children", proc_children),
    CF("proc_utime_s", proc_utime_s),
    CF("proc_stime_s", proc_stime_s),
    CF("proc_cpu_usage", proc_cpu_usage),
    CI("proc_pss_kib", proc_pss_kib),
    CI("proc_rss_kib", proc_rss_kib),
    CI("proc_read_bytes", proc_read_bytes),
    CI("proc_write_bytes", proc_write_bytes),
    CI("proc_utime_total", proc_utime_total),
    CI("proc_stime_total", proc_stime_total),
};

static const char *const fixed_sql[ST_COUNT] = {
    [ST_DATA_VERSION] = "PRAGMA data_version",
    [ST_CORE] = "INSERT INTO cpu_core_samples (sample_id, core, user, nice, system, idle, iowait, "
                "irq, softirq, steal, guest, guest_nice, busy_pct) VALUES "
                "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_DISK] = "INSERT INTO disks (run_id, name, major, minor, model, vendor, serial, type, "
                "capacity_bytes, hw_sector_size) VALUES (?,?,?,?,?,?,?,?,?,?) "
                "ON CONFLICT (run_id, name) DO UPDATE SET name = excluded.name RETURNING id",
    [ST_DISK_SAMPLE] = "INSERT INTO disk_samples (sample_id, disk_id, reads, reads_merged, "
                       "sectors_read, read_ms, writes, writes_merged, sectors_written, write_ms, "
                       "in_flight, io_ms, weighted_io_ms, read_bytes, write_bytes) VALUES "
                       "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_MOUNT] = "INSERT INTO mounts (run_id, mount_point, fstype, source, disk) VALUES "
                 "(?,?,?,?,?) ON CONFLICT (run_id, mount_point, fstype, source) DO UPDATE SET "
                 "disk = excluded.disk RETURNING id",
    [ST_MOUNT_SAMPLE] = "INSERT INTO mount_samples (sample_id, mount_id, total_bytes, "
                        "used_bytes, available_bytes, free_bytes) VALUES (?,?,?,?,?,?)",
    [ST_NIC] = "INSERT INTO nics (run_id, name, mac, driver, mtu, speed_mbps) VALUES "
               "(?,?,?,?,?,?) ON CONFLICT (run_id, name) DO UPDATE SET name = excluded.name "
               "RETURNING id",
    [ST_NIC_SAMPLE] = "INSERT INTO nic_samples (sample_id, nic_id, rx_bytes_total, "
                      "rx_packets_total, rx_errors_total, rx_dropped_total, tx_bytes_total, "
                      "tx_packets_total, tx_errors_total, tx_dropped_total, rx_bytes, tx_bytes, "
                      "operstate) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_PROCESS] = "INSERT INTO processes (run_id, pid, starttime, ppid, name, cmdline, "
                   "first_seq) VALUES (?,?,?,?,?,?,?) ON CONFLICT (run_id, pid, starttime) DO "
                   "UPDATE SET name = excluded.name, cmdline = coalesce(excluded.cmdline, "
                   "cmdline) RETURNING id",
    [ST_PROCESS_SAMPLE] = "INSERT INTO process_samples (sample_id, process_id, ppid, state, "
                          "threads, utime, stime, cutime, cstime, rss_kib, pss_kib, "
                          "read_bytes_total, write_bytes_total, cpu_utime_s, cpu_stime_s, "
                          "read_bytes, write_bytes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GPU] = "INSERT INTO gpus (run_id, idx, vendor, uuid, name, pci_bus_id, driver_version, "
               "vram_total_bytes, core_count) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (run_id, "
               "idx) DO UPDATE SET idx = excluded.idx RETURNING id",
    [ST_GPU_SAMPLE] = "INSERT INTO gpu_samples (sample_id, gpu_id, util_pct, mem_util_pct, "
                      "vram_used_bytes, vram_total_bytes, temperature_c, power_w, "
                      "clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz) VALUES "
                      "(?,?,?,?,?,?,?,?,?,?,?)",
    [ST_GPU_PROCESS_SAMPLE] = "INSERT INTO gpu_process_samples (sample_id, process_id, gpu_id, "
                              "vram_used_bytes, gtt_bytes, util_pct, mem_util_pct) VALUES "
                              "(?,?,?,?,?,?,?)",
};

static int prepare_all(struct rt_store *s)
{
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "INSERT INTO samples (run_id, kind, proc_root_pid");
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++) {
        rt_buf_puts(&sql, ", ");
        rt_buf_puts(&sql, sample_cols[i].name);
    }
    rt_buf_puts(&sql, ") VALUES (?, ?, ?");
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++)
        rt_buf_puts(&sql, ", ?");
    rt_buf_puts(&sql, ")");
    int rc = 0;
    for (int i = 0; i < ST_COUNT && rc == 0; i++) {
        if (s->st[i])
            continue;
        const char *q = i == ST_SAMPLE ? sql.p : fixed_sql[i];
        if (sqlite3_prepare_v3(s->db, q, -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK)
            rc = db_err(s, "cannot prepare statements for database");
    }
    rt_buf_free(&sql);
    return rc;
}

static void bind_i(sqlite3_stmt *st, int i, int64_t v)
{
    if (v == RT_NA)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, v);
}

static void bind_f(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v))
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_double(st, i, v);
}

/* Text from outside rtrack (argv, process names, mount points, device models) may hold any
 * bytes; what is stored is valid UTF-8 (ill-formed bytes become U+FFFD), so every JSON document
 * built from the database by SQLite's JSON functions is valid too. */
static void bind_t(sqlite3_stmt *st, int i, const char *v)
{
    if (!v) {
        sqlite3_bind_null(st, i);
        return;
    }
    size_t n = strlen(v);
    if (rt_utf8_check(v, n) == n) {
        sqlite3_bind_text(st, i, v, (int)n, SQLITE_STATIC);
        return;
    }
    char *fixed = rt_utf8_repair(v, n);
    sqlite3_bind_text(st, i, fixed, -1, SQLITE_TRANSIENT);
    free(fixed);
}

/* Step a statement that returns nothing (or one id row with RETURNING). */
static int step(struct rt_store *s, sqlite3_stmt *st, int64_t *id)
{
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && id) {
        *id = sqlite3_column_int64(st, 0);
        rc = sqlite3_step(st);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE)
        return db_err(s, "cannot write to database");
    return 0;
}

/* --- runs --------------------------------------------------------------------------------------
 */

static void uuid_v4(char out[37])
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
        /* no entropy source: time and pid still make a collision unlikely within one db */
        double t = rt_clock_s(0);
        memcpy(b, &t, sizeof(t));
        pid_t p = getpid();
        memcpy(b + 8, &p, sizeof(p));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

int rt_store_begin_run(struct rt_store *s, const struct rt_run_start *r, int64_t *run_id)
{
    if (prepare_all(s) != 0)
        return -1;
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "INSERT INTO runs (uuid, mode, command, pid, interval_s, started_at, "
                      "host_hostname, host_machine_id, host_vcpus, host_cpu_model, "
                      "host_memory_kib, host_kernel, host_os, host_boot_time, clk_tck, "
                      "page_size, rtrack_version");
    for (int i = 0; i < RT_META_N; i++) {
        rt_buf_puts(&sql, ", ");
        rt_buf_puts(&sql, rt_meta_columns[i]);
    }
    rt_buf_puts(&sql, ") VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?");
    for (int i = 0; i < RT_META_N; i++)
        rt_buf_puts(&sql, ",?");
    rt_buf_puts(&sql, ")");

    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (exec(s, "BEGIN IMMEDIATE") != 0) {
        db_err(s, "cannot write database");
        goto out;
    }
    if (sqlite3_prepare_v2(s->db, sql.p, -1, &st, NULL) != SQLITE_OK) {
        db_err(s, "cannot write database");
        goto rollback;
    }
    char uuid[37];
    uuid_v4(uuid);
    const struct rt_host_info *h = r->host;
    int k = 1;
    bind_t(st, k++, uuid);
    bind_t(st, k++, r->mode);
    bind_t(st, k++, r->command_json);
    bind_i(st, k++, r->pid > 0 ? r->pid : RT_NA);
    bind_f(st, k++, r->cfg->interval);
    bind_f(st, k++, r->started_at);
    bind_t(st, k++, h->hostname);
    bind_t(st, k++, h->machine_id);
    bind_i(st, k++, h->vcpus);
    bind_t(st, k++, h->cpu_model);
    bind_i(st, k++, h->memory_kib);
    bind_t(st, k++, h->kernel);
    bind_t(st, k++, h->os);
    bind_f(st, k++, h->boot_time);
    bind_i(st, k++, r->env->clk_tck);
    bind_i(st, k++, r->env->page_size);
    bind_t(st, k++, RTRACK_VERSION);
    for (int i = 0; i < RT_META_N; i++)
        bind_t(st, k++, r->cfg->meta[i]);
    if (sqlite3_step(st) != SQLITE_DONE) {
        db_err(s, "cannot write database");
        goto rollback;
    }
    s->run_id = sqlite3_last_insert_rowid(s->db);
    sqlite3_finalize(st);
    st = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "INSERT INTO run_tags (run_id, position, key, value) "
                           "VALUES (?,?,?,?)",
                           -1, &st, NULL) != SQLITE_OK) {
        db_err(s, "cannot write database");
        goto rollback;
    }
    for (size_t i = 0; i < r->cfg->ntags; i++) {
        sqlite3_bind_int64(st, 1, s->run_id);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        bind_t(st, 3, r->cfg->tags[i].key);
        bind_t(st, 4, r->cfg->tags[i].value);
        if (step(s, st, NULL) != 0)
            goto rollback;
    }
    if (exec(s, "COMMIT") != 0) {
        db_err(s, "cannot write database");
        goto rollback;
    }
    *run_id = s->run_id;
    rc = 0;
    goto out;
rollback:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
out:
    sqlite3_finalize(st);
    rt_buf_free(&sql);
    return rc;
}

static void rollback(struct rt_store *s)
{
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_tx = 0;
    /* identity rows of the rolled-back transaction are gone; upserts find the others again */
    rt_map_clear(&s->ids);
    rt_map_clear(&s->procs);
}

/* roll back, keeping the message of what failed (ROLLBACK's own result would replace it) */
static void rollback_keep_err(struct rt_store *s)
{
    char keep[sizeof(s->err)];
    memcpy(keep, s->err, sizeof(keep));
    rollback(s);
    memcpy(s->err, keep, sizeof(keep));
}

/* (A deleted file is found at the commit: rt_store_commit checks, once per transaction.) */
static int begin_tx(struct rt_store *s)
{
    if (s->in_tx)
        return 0;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_err(s, "cannot write to database");
    s->in_tx = 1;
    return 0;
}

int rt_store_set_run_pid(struct rt_store *s, pid_t pid)
{
    /* in the transaction the baseline sample goes into: one commit for both */
    if (begin_tx(s) != 0)
        return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "UPDATE runs SET pid = ? WHERE id = ?", -1, &st, NULL) !=
        SQLITE_OK)
        return db_err(s, "cannot write database");
    sqlite3_bind_int64(st, 1, pid);
    sqlite3_bind_int64(st, 2, s->run_id);
    int rc = step(s, st, NULL);
    sqlite3_finalize(st);
    return rc;
}

int rt_store_end_run(struct rt_store *s, const struct rt_run_end *e)
{
    sqlite3_stmt *st;
    if (file_gone(s))
        return -1;
    if (sqlite3_prepare_v2(s->db,
                           "UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, "
                           "exit_signal = ?, end_reason = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return db_err(s, "cannot write database");
    bind_f(st, 1, e->ended_at);
    bind_t(st, 2, e->status);
    bind_i(st, 3, e->exit_code);
    bind_i(st, 4, e->exit_signal);
    bind_t(st, 5, e->end_reason);
    sqlite3_bind_int64(st, 6, s->run_id);
    int rc = step(s, st, NULL);
    sqlite3_finalize(st);
    if (rc == 0 && s->in_tx)
        rc = rt_store_commit(s); /* with the final sample, added before */
    else if (rc != 0 && s->in_tx)
        rollback_keep_err(s);
    return rc;
}

/* --- samples ------------------------------------------------------------------------------------
 */

static uint64_t ptr_key(const void *p)
{
    return (uint64_t)(uintptr_t)p;
}

static uint64_t process_key(pid_t pid, int64_t starttime)
{
    return ((uint64_t)(starttime + 1) << 22) | (uint64_t)pid;
}

/* GPUs and the tree's processes on them. A GPU's idx is its position in the sample: the
 * backends list every device in the same order every time. Runs after the processes of the
 * sample are in `procs_next`. */
static int insert_gpus(struct rt_store *s, const struct rt_sample *smp, int64_t sid)
{
    sqlite3_stmt *st;
    int64_t gid[64]; /* more GPUs than any host has (16 today) */
    int n = smp->ngpus < 64 ? smp->ngpus : 64;
    for (int i = 0; i < n; i++) {
        const struct rt_gpu_sample *g = &smp->gpus[i];
        const struct rt_gpu_ident *id = g->ident;
        if (!rt_map_get(&s->ids, ptr_key(id), &gid[i])) {
            st = s->st[ST_GPU];
            sqlite3_bind_int64(st, 1, s->run_id);
            sqlite3_bind_int64(st, 2, i);
            bind_t(st, 3, id->vendor);
            bind_t(st, 4, id->uuid);
            bind_t(st, 5, id->name);
            bind_t(st, 6, id->pci_bus_id);
            bind_t(st, 7, id->driver_version);
            bind_i(st, 8, id->vram_total_bytes);
            bind_i(st, 9, id->core_count);
            if (step(s, st, &gid[i]) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), gid[i]);
        }
        st = s->st[ST_GPU_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, gid[i]);
        bind_f(st, 3, g->util_pct);
        bind_f(st, 4, g->mem_util_pct);
        bind_i(st, 5, g->vram_used_bytes);
        bind_i(st, 6, g->vram_total_bytes);
        bind_f(st, 7, g->temperature_c);
        bind_f(st, 8, g->power_w);
        bind_i(st, 9, g->clock_graphics_mhz);
        bind_i(st, 10, g->clock_sm_mhz);
        bind_i(st, 11, g->clock_mem_mhz);
        if (step(s, st, NULL) != 0)
            return -1;
    }
    st = s->st[ST_GPU_PROCESS_SAMPLE];
    for (int i = 0; i < smp->ngpu_procs; i++) {
        const struct rt_gpu_proc *p = &smp->gpu_procs[i];
        int64_t pid_row;
        if (p->dev < 0 || p->dev >= n ||
            !rt_map_get(&s->procs_next, process_key(p->pid, p->starttime), &pid_row))
            continue;
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, pid_row);
        sqlite3_bind_int64(st, 3, gid[p->dev]);
        bind_i(st, 4, p->vram_bytes);
        bind_i(st, 5, p->gtt_bytes);
        bind_f(st, 6, p->util_pct);
        bind_f(st, 7, p->mem_util_pct);
        if (step(s, st, NULL) != 0)
            return -1;
    }
    return 0;
}

static int insert_sample(struct rt_store *s, const struct rt_sample *smp)
{
    static const char *const kinds[] = {"baseline", "periodic", "final"};
    sqlite3_stmt *st = s->st[ST_SAMPLE];
    sqlite3_bind_int64(st, 1, s->run_id);
    bind_t(st, 2, kinds[smp->kind]);
    bind_i(st, 3, smp->has_tree ? smp->root_pid : RT_NA);
    for (size_t i = 0; i < RT_ARRAY_LEN(sample_cols); i++) {
        const char *p = (const char *)smp + sample_cols[i].off;
        if (sample_cols[i].type == 'i')
            bind_i(st, (int)i + 4, *(const int64_t *)p);
        else if (sample_cols[i].type == 'n')
            sqlite3_bind_int(st, (int)i + 4, *(const int *)p);
        else
            bind_f(st, (int)i + 4, *(const double *)p);
    }
    if (step(s, st, NULL) != 0)
        return -1;
    int64_t sid = sqlite3_last_insert_rowid(s->db);
    s->last_sample_id = sid;

    st = s->st[ST_CORE];
    for (int i = 0; i < smp->ncores; i++) {
        const struct rt_core_sample *c = &smp->cores[i];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, c->core);
        for (int f = 0; f < RT_CPU_NFIELDS; f++)
            bind_i(st, 3 + f, c->t.v[f]);
        bind_f(st, 13, c->busy_pct);
        if (step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->ndisks; i++) {
        const struct rt_disk_sample *d = &smp->disks[i];
        const struct rt_disk_ident *id = d->ident;
        /* a disk that has never done any I/O since boot (idle loop devices) is not stored */
        int64_t any = 0;
        for (int f = 0; f < RT_DS_NFIELDS; f++)
            any |= d->f[f];
        if (!any)
            continue;
        int64_t did;
        if (!rt_map_get(&s->ids, ptr_key(id), &did)) {
            st = s->st[ST_DISK];
            sqlite3_bind_int64(st, 1, s->run_id);
            bind_t(st, 2, id->name);
            bind_i(st, 3, id->major);
            bind_i(st, 4, id->minor);
            bind_t(st, 5, id->model);
            bind_t(st, 6, id->vendor);
            bind_t(st, 7, id->serial);
            bind_t(st, 8, id->type);
            bind_i(st, 9, id->capacity_bytes);
            bind_i(st, 10, id->hw_sector_size);
            if (step(s, st, &did) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), did);
        }
        st = s->st[ST_DISK_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, did);
        for (int f = 0; f < RT_DS_NFIELDS; f++)
            bind_i(st, 3 + f, d->f[f]);
        bind_i(st, 14, d->read_bytes);
        bind_i(st, 15, d->write_bytes);
        if (step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->nmounts; i++) {
        const struct rt_mount_sample *m = &smp->mounts[i];
        const struct rt_mount_ident *id = m->ident;
        int64_t mid;
        if (!rt_map_get(&s->ids, ptr_key(id), &mid)) {
            st = s->st[ST_MOUNT];
            sqlite3_bind_int64(st, 1, s->run_id);
            bind_t(st, 2, id->mount_point);
            bind_t(st, 3, id->fstype);
            bind_t(st, 4, id->source);
            bind_t(st, 5, id->disk);
            if (step(s, st, &mid) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), mid);
        }
        st = s->st[ST_MOUNT_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, mid);
        bind_i(st, 3, m->total_bytes);
        bind_i(st, 4, m->used_bytes);
        bind_i(st, 5, m->available_bytes);
        bind_i(st, 6, m->free_bytes);
        if (step(s, st, NULL) != 0)
            return -1;
    }

    for (int i = 0; i < smp->nnics; i++) {
        const struct rt_nic_sample *n = &smp->nics[i];
        const struct rt_nic_ident *id = n->ident;
        int64_t nid;
        if (!rt_map_get(&s->ids, ptr_key(id), &nid)) {
            st = s->st[ST_NIC];
            sqlite3_bind_int64(st, 1, s->run_id);
            bind_t(st, 2, id->name);
            bind_t(st, 3, id->mac);
            bind_t(st, 4, id->driver);
            bind_i(st, 5, id->mtu);
            bind_i(st, 6, id->speed_mbps);
            if (step(s, st, &nid) != 0)
                return -1;
            rt_map_put(&s->ids, ptr_key(id), nid);
        }
        st = s->st[ST_NIC_SAMPLE];
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, nid);
        for (int f = 0; f < RT_NIC_NFIELDS; f++)
            bind_i(st, 3 + f, n->f[f]);
        bind_i(st, 11, n->rx_bytes);
        bind_i(st, 12, n->tx_bytes);
        bind_t(st, 13, n->operstate[0] ? n->operstate : NULL);
        if (step(s, st, NULL) != 0)
            return -1;
    }

    /* Only the processes of the previous sample are cached, so a job that forks a million
     * short-lived processes does not grow the recorder: a process that comes back after a gap
     * finds its row again through the upsert. */
    rt_map_clear(&s->procs_next);
    for (int i = 0; i < smp->nprocs; i++) {
        const struct rt_proc_sample *p = &smp->procs[i];
        int64_t pid_row;
        uint64_t key = process_key(p->pid, p->starttime);
        /* a renamed process (exec after the fork) updates its row's name and command line */
        if (!rt_map_get(&s->procs, key, &pid_row) || p->renamed) {
            st = s->st[ST_PROCESS];
            sqlite3_bind_int64(st, 1, s->run_id);
            sqlite3_bind_int64(st, 2, p->pid);
            sqlite3_bind_int64(st, 3, p->starttime);
            sqlite3_bind_int64(st, 4, p->ppid);
            bind_t(st, 5, p->comm);
            bind_t(st, 6, p->cmdline_json);
            sqlite3_bind_int64(st, 7, smp->seq);
            if (step(s, st, &pid_row) != 0)
                return -1;
        }
        rt_map_put(&s->procs_next, key, pid_row);
        st = s->st[ST_PROCESS_SAMPLE];
        char state[2] = {p->state, '\0'};
        sqlite3_bind_int64(st, 1, sid);
        sqlite3_bind_int64(st, 2, pid_row);
        sqlite3_bind_int64(st, 3, p->ppid);
        bind_t(st, 4, state);
        bind_i(st, 5, p->threads);
        bind_i(st, 6, p->utime);
        bind_i(st, 7, p->stime);
        bind_i(st, 8, p->cutime);
        bind_i(st, 9, p->cstime);
        bind_i(st, 10, p->rss_kib);
        bind_i(st, 11, p->pss_kib);
        bind_i(st, 12, p->read_total);
        bind_i(st, 13, p->write_total);
        bind_f(st, 14, p->cpu_utime_s);
        bind_f(st, 15, p->cpu_stime_s);
        bind_i(st, 16, p->read_bytes);
        bind_i(st, 17, p->write_bytes);
        if (step(s, st, NULL) != 0)
            return -1;
    }
    if (insert_gpus(s, smp, sid) != 0)
        return -1;
    struct rt_map t = s->procs;
    s->procs = s->procs_next;
    s->procs_next = t;
    return 0;
}

int rt_store_others_wrote(struct rt_store *s)
{
    /* asked once per transaction: the statement is kept, not parsed again each time */
    sqlite3_stmt *st = s->st[ST_DATA_VERSION];
    if (!st && (prepare_all(s) != 0 || !(st = s->st[ST_DATA_VERSION])))
        return 0;
    int ok = sqlite3_step(st) == SQLITE_ROW;
    int64_t v = ok ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    if (!ok)
        return 0;
    int changed = s->have_data_version && v != s->data_version;
    s->data_version = v;
    s->have_data_version = 1;
    return changed;
}

int rt_store_add_sample(struct rt_store *s, const struct rt_sample *smp)
{
    if (begin_tx(s) != 0)
        return -1;
    if (insert_sample(s, smp) != 0) {
        rollback_keep_err(s);
        return -1;
    }
    return 0;
}

int rt_store_commit(struct rt_store *s)
{
    if (!s->in_tx)
        return 0;
    int gone = file_gone(s);
    if (gone || sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        if (!gone)
            db_err(s, "cannot write to database");
        rollback_keep_err(s);
        return -1;
    }
    s->in_tx = 0;
    return 0;
}

int64_t rt_store_last_sample_id(const struct rt_store *s)
{
    return s->last_sample_id;
}
