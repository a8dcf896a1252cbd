/* internal.h - what the store's files share: the handle, its statements, error text and the
 * binding helpers. Private to src/store/. */
#ifndef RTRACK_STORE_INTERNAL_H
#define RTRACK_STORE_INTERNAL_H

#include <sqlite3.h>
#include <stdint.h>

#include "rtrack/base/util.h"
#include "rtrack/store/store.h"

#define BUSY_TIMEOUT_MS 2000
#define CACHE_KIB       128 /* page cache cap: keeps the recorder's RSS small and flat */
/* A reader's cap: a JSON Lines row gathers the sample's rows from six tables, and the pages on
 * the way to them must stay cached from one row to the next, or a long run's export reads them
 * again for every row (docs/performance.md, Export). */
#define READ_CACHE_KIB 1024
/* rt_store_open_second's connection (a reader's second thread), as a string for its pragma:
 * the paths of a JSON Lines stretch's seven cursors stay cached (128 KiB thrashes at a million
 * samples: 3 s of system time re-reading pages), and two threads' export stays within 1 MiB of
 * the CSV's peak RSS (docs/performance.md) */
#define SECOND_CACHE_KIB "256"

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
    ST_RUN_FACTS,
    ST_COUNT
};

struct rt_store {
    sqlite3 *db;
    char *path;
    sqlite3_stmt *st[ST_COUNT];
    int64_t run_id;
    int in_tx;
    pid_t unsaved_pid;  /* the job's pid, written in every transaction until one commits */
    int gone;           /* the file was deleted or renamed while open: no write can succeed */
    int needs_upgrade;  /* opened for reading, schema older than this rtrack's */
    int schema_version; /* the file's, as opened */
    int read_rc;        /* SQLite's code for the first read of the file (open.c) */
    char *uri;          /* opened by this URI (immutable, read where it cannot write), or NULL */
    int64_t last_sample_id;
    int64_t data_version; /* PRAGMA data_version at the last rt_store_others_wrote() */
    int have_data_version;
    struct rt_map ids;   /* identity pointer -> row id (disks, mounts, nics: few per run) */
    struct rt_map procs; /* process key -> row id, for the processes of the last sample */
    struct rt_map procs_next;
    /* the run's facts of the kernel (write.c, run_fact_cols) as last written in this run's
     * transactions; all NULL at its start and after a rollback */
    const char *run_facts[4];
    char err[512];
    int read_depth; /* rt_store_read_begin() pairs open (read.c) */
    /* The file was created by this handle (open.c): removed again, with the -journal, -wal and
     * -shm files that were not there before it, when the open or the first run fails. */
    int created, discard;
    dev_t created_dev;
    ino_t created_ino;
    unsigned char sibling_existed[3];
};

/* The handle and the schema's hash (open.c): for the store's own files and its unit test. */
sqlite3 *rt_store_db(struct rt_store *s);
uint64_t rt_store_schema_fingerprint(sqlite3 *db);

/* path as a file: URI (%, ? and # escaped), with "?query" when query is not NULL (malloc'd). */
char *store_file_uri(const char *path, const char *query);

/* The message of what failed, in s->err (returns -1, for `return store_err(...)`). */
int store_err(struct rt_store *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "WHAT 'path': SQLite's reason", with the usual reasons in rtrack's words (returns -1). */
int store_db_err(struct rt_store *s, const char *what);
/* Run SQL without results; on failure the message is in s->err. 0 or -1. */
int store_exec(struct rt_store *s, const char *sql);

/* Bind an int64 (RT_NA: NULL), a double (NAN: NULL) or text (NULL: NULL; repaired to valid
 * UTF-8 when it is not). */
void store_bind_i(sqlite3_stmt *st, int i, int64_t v);
void store_bind_f(sqlite3_stmt *st, int i, double v);
void store_bind_t(sqlite3_stmt *st, int i, const char *v);
/* SQLite's reason for what just failed on s->db, alone, in s->err (read.c; returns -1): the
 * reader puts it into its own message. */
int store_read_err(struct rt_store *s);

/* Whether the file this handle created holds no run (open.c): it is removed at close then
 * (s->discard), when the first run could not be written. */
int store_created_unused(struct rt_store *s);

/* Step a statement that returns nothing (or one id row with RETURNING), then reset it. */
int store_step(struct rt_store *s, sqlite3_stmt *st, int64_t *id);

#endif
