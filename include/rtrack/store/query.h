/* query.h - the readers' named queries: the SQL with which export, summary, report, upload and
 * the CLI read the tables lives in sql/queries/READER.sql, one statement under each
 * `-- name: NAME` line, embedded at build time (cmake/EmbedQueries.cmake) as RT_Q_READER_NAME.
 *
 * So no reader writes a table's name (tests/layout/check_rooms.sh holds them to it): a
 * migration that renames a column is checked against every statement by one test that
 * prepares them all on a new database (tests/unit/test_store.c), not by a grep across four
 * rooms; and every value a statement takes is a parameter (?1, ?2, ...), never pasted into its
 * text. Readers still write SQL of their own over the views of sql/views.sql (the columns a
 * pass reads, chosen at run time). */
#ifndef RTRACK_STORE_QUERY_H
#define RTRACK_STORE_QUERY_H

#include "rtrack/store_query_names.h" /* enum rt_query, generated from sql/queries/ */

struct rt_store;
struct rt_store_rows;

/* Named query q prepared on s, its rows read through read.h (bind, next, columns, close).
 * NULL when SQLite refuses it, with the reason in rt_store_error(s). */
struct rt_store_rows *rt_store_query(struct rt_store *s, enum rt_query q);
/* The same kept for a whole recording and run again for every sample (the live output's; as
 * rt_store_rows_open_kept). */
struct rt_store_rows *rt_store_query_kept(struct rt_store *s, enum rt_query q);
/* q's name, "READER.NAME" (for messages and the test that prepares them all) */
const char *rt_store_query_name(enum rt_query q);

/* A named piece of SQL that is no statement of its own (`-- text: NAME`: a FROM clause, a
 * condition, an expression), for a reader that composes its statements from tables of fields
 * (the JSON Lines, the Rust tool's CSV). Pieces named ..._from are FROM clauses, each prepared
 * alone by the test of the named queries. */
const char *rt_store_query_text(enum rt_query_text t);
const char *rt_store_query_text_name(enum rt_query_text t); /* "READER.NAME" */

#endif
