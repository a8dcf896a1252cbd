/* store.h - the SQLite database: schema and migrations, runs, samples.
 *
 * The database is the single source of truth: export, summary and upload read runs back from
 * it, through the store's read side (read.h; upload's progress: uploads.h), never through a
 * SQLite handle of their own. One database holds many runs and several recorders may write to
 * it at once (WAL, busy timeout). Every function returns 0 on success and -1 on failure, with
 * rt_store_error() saying what failed in a message fit for the user (never containing
 * secrets). */
#ifndef RTRACK_STORE_H
#define RTRACK_STORE_H

#include <stdint.h>
#include <sys/types.h>

#include "rtrack/sample/run.h"
#include "rtrack/sample/sample.h"

struct rt_migration {
    int version;
    const char *name;
    const char *sql;
};
extern const struct rt_migration rt_sql_migrations[]; /* ends with {0, NULL, NULL} */
extern const char rt_sql_schema[];
extern const char rt_sql_views[]; /* applied after every upgrade: drops and recreates views */
#define RT_SCHEMA_BASE_VERSION 1
/* 'rtrk': marks a SQLite file as an rtrack database (PRAGMA application_id). */
#define RT_APPLICATION_ID 0x7274726b

/* SQLite's version as loaded, and the one rtrack was built with (for --version). */
const char *rt_store_sqlite_version(void);
const char *rt_store_sqlite_built_version(void);

/* The schema version this rtrack writes: the base schema plus every migration. */
int rt_store_schema_version(void);

/* A hash of a database's schema as sqlite_schema lists it. A file whose hash is
 * RT_SCHEMA_FINGERPRINT has exactly the schema this rtrack creates and is opened without
 * comparing it, table by table and column by column, with a reference schema built in memory
 * (a few milliseconds). tests/unit/test_store.c says the new value when the schema changes; a
 * stale value only costs that time, never a wrong answer. */
#define RT_SCHEMA_FINGERPRINT 0xec5a38ef8fe4d7ffull

struct rt_store;

enum rt_store_mode { RT_STORE_WRITE, RT_STORE_READ };
/* Open (and for RT_STORE_WRITE create and migrate) a database. A file that is not an rtrack
 * database, or was written by a newer schema, is refused and left untouched. */
int rt_store_open(const char *path, enum rt_store_mode mode, struct rt_store **out, char *err,
                  size_t errlen);
void rt_store_close(struct rt_store *s);
/* Whether runs may be recorded or merged into the database at path: 0 when it does not exist or
 * belongs to this process's user; -1 with the reason in err for another user's, root's
 * included (what goes into it, command lines, tags, process trees, is its owner's to read, and
 * a database planted where a recorder writes, /tmp/rtrack-%u made first by someone else, would
 * collect them). Uploading keeps its progress in any database it may write. */
int rt_store_check_own(const char *path, char *err, size_t errlen);
const char *rt_store_error(const struct rt_store *s);

/* Write the run row (and its tags) and make it the run that samples are added to. */
int rt_store_begin_run(struct rt_store *s, const struct rt_run_desc *r, int64_t *run_id);
/* run mode: the job's pid is known only once it has started; written with the next commit
 * (again in the next transaction if that one fails) */
int rt_store_set_run_pid(struct rt_store *s, pid_t pid);
/* Compile now the statements a sample's rows go in with, which the first sample would compile
 * (run: while the job is being started). 0, or -1 with the error (the first sample meets it
 * again). */
int rt_store_prepare_samples(struct rt_store *s);
/* Queue a sample into the current transaction (opened on demand). */
int rt_store_add_sample(struct rt_store *s, const struct rt_sample *smp);
/* Commit what was added; a failed transaction is rolled back (its samples are not recorded:
 * the caller still has them and may add them again, in a new transaction). */
int rt_store_commit(struct rt_store *s);
/* Whether a write that failed may succeed later (a full disk, a lock held by another writer,
 * a file made read-only): 0 once the file is known to have been deleted or renamed. */
int rt_store_retryable(const struct rt_store *s);
/* Whether another connection (a second recorder, an upload) committed to the database since
 * the last call; the first call only takes the reference. */
int rt_store_others_wrote(struct rt_store *s);
/* Row id of the sample added last (live output reads it back through the export views). */
int64_t rt_store_last_sample_id(const struct rt_store *s);

int rt_store_end_run(struct rt_store *s, const struct rt_run_end *e);
/* The run's last stored sample becomes its final one (a periodic sample before it): for a
 * recording whose ending sample was not stored (rt_sampler_drop). Within the open transaction,
 * before rt_store_end_run. 0, or -1 with the transaction rolled back. */
int rt_store_last_is_final(struct rt_store *s);

/* The cloud run `run` was recorded on (collect/cloud.h), once its discovery has answered: an
 * autocommitted update of the run's row, so the thread that discovered it can store it through
 * a connection of its own while the recorder goes on. */
int rt_store_set_run_cloud(struct rt_store *s, int64_t run, const struct rt_cloud *c);

#endif
