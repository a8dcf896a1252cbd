/* open.c - opening a database: a file is checked to be an rtrack database of a version this
 * rtrack understands before anything is written to it, then created, migrated (sql/schema.sql,
 * sql/migrations/, the views of sql/views.sql) and set up for recording (WAL) or reading.
 *
 * WAL with synchronous=NORMAL: a commit is durable against a crash of rtrack (kill -9) and never
 * corrupts the file; only a power loss can drop the last commits. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "rtrack/base/util.h"

/* --- error text ----------------------------------------------------------------------------- */

int store_err(struct rt_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* SQLite's messages are already lowercase; say which database and what failed. */
int store_db_err(struct rt_store *s, const char *what)
{
    int code = sqlite3_extended_errcode(s->db);
    const char *msg = sqlite3_errmsg(s->db);
    /* (a -shm file that cannot grow on a full disk is an I/O error to SQLite) */
    if ((code & 0xff) == SQLITE_FULL ||
        ((code & 0xff) == SQLITE_IOERR && sqlite3_system_errno(s->db) == ENOSPC))
        msg = "no space left on device";
    else if ((code & 0xff) == SQLITE_BUSY)
        msg = "database is locked by another writer";
    else if ((code & 0xff) == SQLITE_READONLY)
        msg = "database is read-only";
    return store_err(s, "%s '%s': %s", what, s->path, msg);
}

const char *rt_store_error(const struct rt_store *s)
{
    return s->err;
}

struct sqlite3 *rt_store_db(struct rt_store *s)
{
    return s->db;
}

const char *rt_store_sqlite_version(void)
{
    return sqlite3_libversion();
}

const char *rt_store_sqlite_built_version(void)
{
    return SQLITE_VERSION;
}

int rt_store_schema_version(void)
{
    int v = RT_SCHEMA_BASE_VERSION;
    for (const struct rt_migration *m = rt_sql_migrations; m->sql; m++)
        if (m->version > v)
            v = m->version;
    return v;
}

int store_exec(struct rt_store *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int code = sqlite3_extended_errcode(s->db) & 0xff;
        int full =
            code == SQLITE_FULL || (code == SQLITE_IOERR && sqlite3_system_errno(s->db) == ENOSPC);
        store_err(s, "cannot update database '%s': %s", s->path,
                  full  ? "no space left on device"
                  : msg ? msg
                        : "unknown error");
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

/* n bytes at p and a separator folded into h eight at a time: FNV-1a byte by byte took 25 us
 * over the 26 KB of the schema's text at every open, this 5 (the least of 200 tries, warm).
 * (Little-endian words: on a big-endian machine every fingerprint differs from
 * RT_SCHEMA_FINGERPRINT, and check_complete takes its full check: slower, never wrong.) */
static uint64_t fold_words(uint64_t h, const unsigned char *p, size_t n)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    /* the tail (at most 7 bytes) and, in the eighth, its length: the separator between
     * values ("ab" then "c" is not "a" then "bc") */
    uint64_t w = 0;
    if (n)
        memcpy(&w, p, n);
    h = (h ^ w ^ ((uint64_t)(n + 1) << 56)) * k;
    return h ^ (h >> 29);
}

/* Each object's hash, added up: the same for any order of sqlite_schema's rows (a file that was
 * upgraded lists its objects in another order than a new one), without SQLite sorting the 26 KB
 * of text first (an ORDER BY took 28 us of the 16 a pass in file order takes, warm). */
uint64_t rt_store_schema_fingerprint(struct sqlite3 *db)
{
    sqlite3_stmt *st;
    uint64_t sum = 0;
    if (sqlite3_prepare_v2(db,
                           "SELECT type, name, tbl_name, coalesce(sql, '') FROM main.sqlite_schema",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        uint64_t h = FNV_OFFSET;
        for (int i = 0; i < 4; i++) {
            const unsigned char *t = sqlite3_column_text(st, i);
            h = fold_words(h, t, t ? (size_t)sqlite3_column_bytes(st, i) : 0);
        }
        sum += h;
    }
    sqlite3_finalize(st);
    return sum;
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
        store_db_err(s, "cannot read database");
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
            ok = store_err(s,
                           "'%s' is not a complete rtrack database: %s '%s' is missing; refusing "
                           "to touch it",
                           s->path, type, name);
        else if (got == SK_BROKEN_VIEW)
            ok = store_err(s,
                           "'%s' is not a complete rtrack database: view '%s' is broken (%s); "
                           "refusing to touch it",
                           s->path, name, broken);
        else if ((got == SK_TABLE) != (strcmp(type, "table") == 0))
            ok = store_err(s,
                           "'%s' is not a complete rtrack database: '%s' is a %s, not a %s; "
                           "refusing to touch it",
                           s->path, name, got == SK_TABLE ? "table" : "view", type);
        else if (!rt_map_get(&have, schema_key(name, col), &c))
            ok = store_err(s,
                           "'%s' is not a complete rtrack database: column '%s' of %s '%s' is "
                           "missing; refusing to touch it",
                           s->path, col, type, name);
    }
    goto out;
no_ref:
    store_err(s, "cannot check database '%s': cannot build the reference schema", s->path);
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
    s->read_rc = rc;
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            store_err(s, "'%s' is not an rtrack database (not a SQLite file)", s->path);
        else
            store_db_err(s, "cannot read database");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    int64_t ver = query_int(s->db, "PRAGMA user_version", &rc);
    int64_t ntables =
        rc == SQLITE_OK ? query_int(s->db, "SELECT count(*) FROM sqlite_schema", &rc) : 0;
    s->read_rc = rc;
    if (rc != SQLITE_OK) {
        store_db_err(s, "cannot read database");
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
    s->schema_version = (int)ver;
    int latest = rt_store_schema_version();
    if (app != RT_APPLICATION_ID && (app != 0 || ver != 0 || ntables != 0))
        return store_err(s,
                         "'%s' is a SQLite database but not an rtrack database; refusing to "
                         "touch it",
                         s->path);
    if (ver > latest)
        return store_err(s,
                         "'%s' was written by a newer rtrack (schema version %lld, this rtrack "
                         "knows up to %d); refusing to touch it",
                         s->path, (long long)ver, latest);
    if (mode == RT_STORE_READ) {
        if (ver == 0)
            return store_err(s, "'%s' holds no rtrack data yet", s->path);
        s->needs_upgrade = ver < latest;
        /* an older one is checked by the writing connection that upgrades it */
        return s->needs_upgrade ? 0 : check_complete(s);
    }
    if (sqlite3_db_readonly(s->db, "main") == 1)
        return store_err(s, "cannot write database '%s': file is read-only", s->path);
    if (ver == latest)
        return check_complete(s);
    if (store_exec(s, "BEGIN IMMEDIATE") != 0)
        return -1;
    /* a concurrent recorder may have created it in the meantime */
    ver = query_int(s->db, "PRAGMA user_version", &rc);
    char sql[128];
    int created = ver == 0;
    if (ver == 0) {
        if (store_exec(s, rt_sql_schema) != 0)
            goto fail;
        snprintf(sql, sizeof(sql), "PRAGMA application_id = %d; PRAGMA user_version = %d",
                 RT_APPLICATION_ID, RT_SCHEMA_BASE_VERSION);
        if (store_exec(s, sql) != 0)
            goto fail;
        ver = RT_SCHEMA_BASE_VERSION;
    }
    for (const struct rt_migration *m = rt_sql_migrations; m->sql; m++) {
        if (m->version <= ver)
            continue;
        if (store_exec(s, m->sql) != 0)
            goto fail;
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->version);
        if (store_exec(s, sql) != 0)
            goto fail;
        ver = m->version;
    }
    if (store_exec(s, rt_sql_views) != 0)
        goto fail;
    /* an upgraded file must have ended up complete; a new one is */
    if (!created && check_complete(s) != 0)
        goto fail;
    return store_exec(s, "COMMIT");
fail:
    sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
}

/* --- rt_store_open, phase by phase ----------------------------------------------------------- */

static const char *const sibling_suffix[3] = {"-journal", "-wal", "-shm"};

/* A database that does not exist yet, in write mode: its directory must be there and writable.
 * Created here, not by SQLite, so that it is 0600 from the start (argv, job names and tags can
 * hold secrets); SQLite gives the -wal and -shm files the mode of the database. O_EXCL: a
 * recorder that created it in the meantime wins, the file is checked after. */
static int store_create_file(struct rt_store *s, const char *path, struct stat *sb)
{
    char *copy = xstrdup(path);
    const char *dir = dirname(copy);
    struct stat db;
    if (stat(dir, &db) != 0 || !S_ISDIR(db.st_mode))
        store_err(s, "cannot create database '%s': directory '%s' does not exist", path, dir);
    else if (access(dir, W_OK) != 0)
        store_err(s, "cannot create database '%s': directory '%s' is not writable", path, dir);
    free(copy);
    if (s->err[0])
        return -1;
    for (int i = 0; i < 3; i++) {
        char *sib = xasprintf("%s%s", path, sibling_suffix[i]);
        s->sibling_existed[i] = lstat(sib, &db) == 0;
        free(sib);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        s->created = fstat(fd, &db) == 0;
        s->created_dev = db.st_dev;
        s->created_ino = db.st_ino;
        close(fd);
    } else if (errno != EEXIST)
        return store_err(s, "cannot create database '%s': %s", path, rt_strerror(errno));
    if (stat(path, sb) != 0)
        return store_err(s, "cannot create database '%s': %s", path, rt_strerror(errno));
    return 0;
}

int store_created_unused(struct rt_store *s)
{
    struct stat sb;
    if (!s->created || stat(s->path, &sb) != 0 || sb.st_dev != s->created_dev ||
        sb.st_ino != s->created_ino)
        return 0;
    if (sb.st_size == 0 || !s->db)
        return 1;
    /* A recorder that started at the same moment may have put its run into the file this one
     * created: then it stays. (No runs table: the schema was never made.) */
    int rc;
    int64_t runs = query_int(s->db, "SELECT count(*) FROM runs", &rc);
    return rc != SQLITE_OK || runs == 0;
}

/* The database this handle created, and the -journal, -wal and -shm files SQLite made beside
 * it, once the connection is closed (closing may checkpoint and delete some of them). */
static void store_remove_created(const char *path, const unsigned char existed[3])
{
    unlink(path);
    for (int i = 0; i < 3; i++) {
        if (existed[i])
            continue;
        char *sib = xasprintf("%s%s", path, sibling_suffix[i]);
        unlink(sib);
        free(sib);
    }
}

/* SQLite would quietly fall back to read-only and, reading a WAL database, leave -wal and -shm
 * files behind; say why it cannot be written before it touches anything. access(), not open() +
 * close(): closing any descriptor of the file would drop every POSIX lock this process holds on
 * it, those of another connection too (the streaming thread's second connection did that: a
 * reader could then delete the live WAL). */
static int store_check_writable(struct rt_store *s, const char *path)
{
    int ok = access(path, R_OK | W_OK) == 0;
    int e = errno;
    char *copy = xstrdup(path);
    const char *dir = dirname(copy);
    if (!ok)
        store_err(s, "cannot write database '%s': %s", path,
                  e == EROFS                  ? "read-only file system"
                  : e == EACCES || e == EPERM ? "the file is read-only"
                                              : rt_strerror(e));
    else if (access(dir, W_OK) != 0)
        store_err(s, "cannot write database '%s': %s", path,
                  errno == EROFS ? "read-only file system"
                                 : "its directory is not writable (needed for the -wal file)");
    free(copy);
    return s->err[0] ? -1 : 0;
}

/* A name that SQLite uses for a file of its own beside another database: x.db-wal is the
 * write-ahead log of x.db, -shm its shared memory, -journal its rollback journal. A database
 * written under such a name is deleted or overwritten by SQLite the next time x.db is opened
 * (`rtrack merge x.db-wal a.db`, then `rtrack run --db x.db`): refused for writing. NULL, or
 * what the name would be. */
static const char *sqlite_sibling_name(const char *path)
{
    static const struct {
        const char *suffix, *what;
    } names[] = {{"-wal", "write-ahead log"},
                 {"-shm", "shared-memory file"},
                 {"-journal", "rollback journal"}};
    size_t n = strlen(path);
    for (size_t i = 0; i < RT_ARRAY_LEN(names); i++) {
        size_t k = strlen(names[i].suffix);
        if (n > k && !strcmp(path + n - k, names[i].suffix) && path[n - k - 1] != '/')
            return names[i].what;
    }
    return NULL;
}

int rt_store_check_own(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_uid == geteuid())
        return 0;
    snprintf(err, errlen,
             "cannot write database '%s': it belongs to user %u, not to you (%u); rtrack records "
             "only into its own databases, which their owner reads; use another --db",
             path, (unsigned)sb.st_uid, (unsigned)geteuid());
    return -1;
}

/* Phase 1, the path: SQLite opens nothing that is not known to be a regular file this process
 * may use as asked, so each refusal says why in rtrack's words. Write mode creates a missing
 * file; read mode never does. */
static int store_check_path(struct rt_store *s, const char *path, enum rt_store_mode mode)
{
    const char *sibling = mode == RT_STORE_WRITE ? sqlite_sibling_name(path) : NULL;
    if (sibling)
        return store_err(s,
                         "cannot write database '%s': SQLite takes that name for the %s of the "
                         "database '%.*s', and deletes or overwrites it when that one is opened; "
                         "choose another name",
                         path, sibling, (int)(strrchr(path, '-') - path), path);
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    int stat_errno = errno;
    if (!exists && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode))
        /* creating a file through a link that points nowhere is the classic way to make a
         * program write where it was not meant to */
        return store_err(s,
                         "cannot %s database '%s': it is a symbolic link to a file that does "
                         "not exist",
                         mode == RT_STORE_WRITE ? "create" : "open", path);
    if (!exists && mode == RT_STORE_READ)
        return store_err(s, "cannot open database '%s': %s", path, rt_strerror(stat_errno));
    if (!exists && store_create_file(s, path, &sb) != 0)
        return -1;
    if (S_ISDIR(sb.st_mode))
        return store_err(s, "cannot open database '%s': is a directory", path);
    /* A FIFO would block the open, a device (/dev/null, a disk) would be read or written as if
     * it were the file: only regular files (also through a symbolic link) are databases. */
    if (!S_ISREG(sb.st_mode))
        return store_err(s, "cannot open database '%s': not a regular file (%s)", path,
                         S_ISFIFO(sb.st_mode)   ? "a named pipe"
                         : S_ISCHR(sb.st_mode)  ? "a character device"
                         : S_ISBLK(sb.st_mode)  ? "a block device"
                         : S_ISSOCK(sb.st_mode) ? "a socket"
                                                : "not a file");
    if (mode == RT_STORE_READ && access(path, R_OK) != 0)
        /* (SQLite's own words: "unable to open database file") */
        return store_err(s, "cannot read database '%s': %s", path, rt_strerror(errno));
    return mode == RT_STORE_WRITE ? store_check_writable(s, path) : 0;
}

/* Phase 2, the connection. */
static int store_connect_uri(struct rt_store *s, const char *name, int flags)
{
    if (sqlite3_open_v2(name, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
        return store_db_err(s, "cannot open database");
    sqlite3_extended_result_codes(s->db, 1);
    /* no lookaside allocator where SQLite has one (~120 KiB less resident memory; the
     * recorder's allocations are few and reused anyway). Debian's is built without it
     * (SQLITE_OMIT_LOOKASIDE), and this changes nothing there. */
    sqlite3_db_config(s->db, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0);
    sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS);
    return 0;
}

char *store_file_uri(const char *path, const char *query)
{
    struct rt_buf uri = {0};
    /* file:///abs (an empty authority: a path starting with // is not a host) or file:rel */
    rt_buf_puts(&uri, path[0] == '/' ? "file://" : "file:");
    for (const char *p = path; *p; p++) {
        char esc[4];
        snprintf(esc, sizeof(esc), "%%%02X", (unsigned char)*p);
        if (*p == '%' || *p == '?' || *p == '#')
            rt_buf_puts(&uri, esc);
        else
            rt_buf_append(&uri, p, 1);
    }
    if (query) {
        rt_buf_puts(&uri, "?");
        rt_buf_puts(&uri, query);
    }
    return uri.p;
}

/* A writer's connection takes URIs (its own name given as one, so a path that begins with
 * "file:" stays a path): merge ATTACHes an input by its URI, immutable where the input is read
 * where it cannot be written (store_check_read_only_place). */
static int store_connect(struct rt_store *s, enum rt_store_mode mode)
{
    if (mode != RT_STORE_WRITE)
        return store_connect_uri(s, s->path, SQLITE_OPEN_READONLY);
    char *uri = store_file_uri(s->path, NULL);
    int rc =
        store_connect_uri(s, uri, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI);
    free(uri);
    return rc;
}

/* Phase 3 for a reader where it cannot write. A database in WAL mode is read through its -shm
 * file, which SQLite creates beside it unless it is there already; on a read-only file system,
 * or in a directory this user may not write to (another user's database), it cannot, and the
 * read fails. With no -wal file (or an empty one) the database is whole in its file and nobody
 * writes it (a recorder keeps its -wal while it has the file open, and it is not empty once it
 * commits): then it is opened as immutable, without -shm or locks. A -wal file with content
 * holds commits the file does not have yet, which cannot be read without the -shm: refused,
 * saying so. */
static int store_check_read_only_place(struct rt_store *s)
{
    if (check_and_migrate(s, RT_STORE_READ) == 0)
        return 0;
    int code = s->read_rc & 0xff;
    if (code != SQLITE_CANTOPEN && code != SQLITE_READONLY)
        return -1;
    char *wal = xasprintf("%s-wal", s->path);
    struct stat sb;
    /* (an empty one holds nothing: readers leave one behind) */
    int has_wal = lstat(wal, &sb) == 0 && sb.st_size > 0;
    free(wal);
    if (has_wal)
        return store_err(s,
                         "cannot read database '%s' here: its -wal file holds commits that are "
                         "read through a -shm file, which cannot be created here (a recorder "
                         "writes it, or was killed while it did); copy the database with its "
                         "-wal file to a place you can write to, or read it where it was "
                         "recorded",
                         s->path);
    sqlite3_close(s->db);
    s->db = NULL;
    s->err[0] = '\0';
    s->uri = store_file_uri(s->path, "immutable=1");
    if (store_connect_uri(s, s->uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) != 0)
        return -1;
    return check_and_migrate(s, RT_STORE_READ);
}

static int store_check_and_migrate(struct rt_store *s, enum rt_store_mode mode)
{
    return mode == RT_STORE_READ ? store_check_read_only_place(s) : check_and_migrate(s, mode);
}

/* Phase 4, the connection's settings: the page cache is capped (small for a recorder, larger
 * for a reader). */
static int store_set_pragmas(struct rt_store *s, enum rt_store_mode mode)
{
    char pragmas[256];
    snprintf(pragmas, sizeof(pragmas),
             "PRAGMA foreign_keys = ON; PRAGMA cache_size = -%d; PRAGMA temp_store = MEMORY;",
             mode == RT_STORE_WRITE ? CACHE_KIB : READ_CACHE_KIB);
    return store_exec(s, pragmas);
}

/* Phase 5, a writer only: WAL lets export and summary read while a recorder writes, and several
 * recorders share one file; NORMAL sync: no fsync per commit, still crash-safe. */
static int store_use_wal(struct rt_store *s)
{
    /* The pragma answers the mode it ended in: a reader that has the file open at that moment
     * (a sqlite3 shell polling a new database) keeps it in rollback mode, where readers block
     * commits. Ask again for a second before giving up. */
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
    if (!wal)
        return store_err(s,
                         "cannot write database '%s': cannot switch it to WAL mode (another "
                         "program keeps it open)",
                         s->path);
    if (store_exec(s, "PRAGMA synchronous = NORMAL") != 0)
        return store_db_err(s, "cannot write database");
    /* a long run's WAL is cut back after each checkpoint instead of keeping its peak size */
    store_exec(s, "PRAGMA journal_size_limit = 1048576");
    return 0;
}

/* One connection through every phase (phase 3 is check_and_migrate, above). */
static int store_open_once(const char *path, enum rt_store_mode mode, struct rt_store **out,
                           char *err, size_t errlen)
{
    struct rt_store *s = xcalloc(1, sizeof(*s));
    s->path = xstrdup(path);
    rt_map_init(&s->ids, 256);
    rt_map_init(&s->procs, 64);
    rt_map_init(&s->procs_next, 64);
    if (store_check_path(s, path, mode) != 0 || store_connect(s, mode) != 0 ||
        store_check_and_migrate(s, mode) != 0 || store_set_pragmas(s, mode) != 0 ||
        (mode == RT_STORE_WRITE && store_use_wal(s) != 0)) {
        snprintf(err, errlen, "%s", s->err);
        /* a database that could not be made (a full disk) is not left behind, empty */
        s->discard = store_created_unused(s);
        rt_store_close(s);
        return -1;
    }
    *out = s;
    return 0;
}

int rt_store_open(const char *path, enum rt_store_mode mode, struct rt_store **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    struct rt_store *s;
    if (store_open_once(path, mode, &s, err, errlen) != 0)
        return -1;
    if (!s->needs_upgrade) {
        *out = s;
        return 0;
    }
    /* A reader found an older schema (its export views are not this rtrack's): the reading
     * connection cannot change it, so it is closed, a writing connection upgrades the file once
     * and is closed, and the file is opened for reading again, current now. */
    int ver = s->schema_version;
    rt_store_close(s);
    struct rt_store *w;
    char why[512];
    if (store_open_once(path, RT_STORE_WRITE, &w, why, sizeof(why)) != 0) {
        /* (a read-only file system, another user's file) */
        snprintf(err, errlen,
                 "'%s' has schema version %d, older than this rtrack's %d: it is upgraded before "
                 "it is read, and that needs write access (%s); run rtrack on it once where it "
                 "can be written, or read a copy",
                 path, ver, rt_store_schema_version(), why);
        return -1;
    }
    rt_store_close(w);
    return rt_store_open(path, RT_STORE_READ, out, err, errlen);
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
    if (s->discard)
        store_remove_created(s->path, s->sibling_existed);
    free(s->uri);
    free(s->path);
    free(s);
}
