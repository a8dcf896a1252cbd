/* read.h - the store's read side: what export, summary, report, upload and the CLI ask of a
 * database, asked through the store instead of a raw SQLite handle.
 *
 * Readers write their SQL over the views of sql/views.sql and the tables (docs/schema.md); the
 * store prepares, binds and steps it, so SQLite stays inside src/store/. A value that is NULL
 * in SQL ("unknown", DESIGN.md principle 4) comes back as RT_NA (integers), NAN (reals) or
 * NULL (text), and binding those values binds NULL. When a read fails, rt_store_error() holds
 * SQLite's reason alone: the reader says what it was reading ("cannot read the export views:
 * REASON"). A read open on a store must be closed before the store is. */
#ifndef RTRACK_STORE_READ_H
#define RTRACK_STORE_READ_H

#include <stddef.h>
#include <stdint.h>

struct rt_store;
struct rt_buf;

/* --- one SQL statement's rows ---------------------------------------------------------------- */

struct rt_store_rows;

enum rt_store_type { RT_STORE_NULL, RT_STORE_INTEGER, RT_STORE_REAL, RT_STORE_TEXT, RT_STORE_BLOB };

/* Prepare one statement; NULL when SQLite refuses it. _kept: a read kept for the whole
 * recording and run again for every sample (the live output). */
struct rt_store_rows *rt_store_rows_open(struct rt_store *s, const char *sql);
struct rt_store_rows *rt_store_rows_open_kept(struct rt_store *s, const char *sql);
/* Parameters ?1, ?2, ... (i from 1): an int64 (RT_NA: NULL), a double (NAN: NULL), text
 * (NULL: NULL; copied, so it may go away after the call), text of n bytes. */
void rt_store_rows_bind_i(struct rt_store_rows *r, int i, int64_t v);
void rt_store_rows_bind_f(struct rt_store_rows *r, int i, double v);
void rt_store_rows_bind_t(struct rt_store_rows *r, int i, const char *v);
void rt_store_rows_bind_tn(struct rt_store_rows *r, int i, const char *v, size_t n);
/* The next row: 1, or 0 when there are no more, or -1 when the read failed. */
int rt_store_rows_next(struct rt_store_rows *r);
/* Column col (from 0) of the current row. Text lives until the next call on r. */
enum rt_store_type rt_store_rows_type(struct rt_store_rows *r, int col);
int64_t rt_store_rows_i(struct rt_store_rows *r, int col);
double rt_store_rows_f(struct rt_store_rows *r, int col);
/* Columns 0 to n-1 of the current row as doubles (NULL: NAN), in one call: what a pass over a
 * million rows of many columns reads */
void rt_store_rows_fv(struct rt_store_rows *r, int n, double *out);
const char *rt_store_rows_t(struct rt_store_rows *r, int col);
/* Column col appended to b as a JSON value, the bytes SQLite's json_object() writes for it: an
 * integer or a real as SQLite's own text of it (reals "%!.15g": 2.0, 1.0e+300), text quoted
 * with SQLite's escapes, NULL (and a blob, which JSON cannot hold) as null. The JSON Lines
 * exporter formats every value through it, so its lines are the ones the SQL JSON functions
 * gave. */
void rt_store_rows_json(struct rt_store_rows *r, int col, struct rt_buf *b);
int rt_store_rows_ncols(struct rt_store_rows *r);
const char *rt_store_rows_name(struct rt_store_rows *r, int col);
/* Back to before the first row, the parameters kept (to run it again with other ones). */
void rt_store_rows_reset(struct rt_store_rows *r);
void rt_store_rows_close(struct rt_store_rows *r);

/* --- whole reads ----------------------------------------------------------------------------- */

/* One snapshot for a reader: every read between begin and end sees the database as the first
 * one did, even while a recorder commits (a report's summary and charts see the same samples).
 * Pairs may nest; the outermost one counts. */
void rt_store_read_begin(struct rt_store *s);
void rt_store_read_end(struct rt_store *s);

/* A second, read-only connection to the store's file, for a reader's thread (a connection is
 * used by one thread at a time). Closed with rt_store_close(). 0, or -1 with the reason in
 * rt_store_error(s). */
int rt_store_open_second(struct rt_store *s, struct rt_store **out);

/* --- questions several readers ask ----------------------------------------------------------- */

/* Run `id`, or the newest run for id 0: its id in *found (0: no such run) and its start
 * (epoch seconds) in *started (may be NULL). 0, or -1 when the database cannot be read. */
int rt_store_find_run(struct rt_store *s, int64_t id, int64_t *found, double *started);

/* The runs a database holds, oldest first, for `rtrack runs`. RT_RUNS_TABLE: id, job_name,
 * command (argv joined with spaces), started (UTC text, whole seconds), seconds (2 dp),
 * samples (after the baseline), exit_code, pid, status, mode, command (JSON). RT_RUNS_JSON: one
 * column, a JSON object per run with the host's GPUs. NULL when the database cannot be read. */
enum rt_store_runs_layout { RT_RUNS_TABLE, RT_RUNS_JSON };
struct rt_store_rows *rt_store_runs(struct rt_store *s, enum rt_store_runs_layout layout);

#endif
