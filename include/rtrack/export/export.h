/* export.h - turning recorded samples into the references' formats.
 *
 * Rows come from the views in sql/migrations (python_system, python_process, python_combined,
 * rust_sample); this module only formats them: the Python reference's CSV dialect
 * (QUOTE_NONNUMERIC, repr() floats, its per-column rounding and int-0 rules) and JSON Lines
 * produced by SQLite's JSON functions. Export and live output share it, so a live line and the
 * exported line of the same sample are identical. */
#ifndef RTRACK_EXPORT_H
#define RTRACK_EXPORT_H

#include <stdint.h>
#include <stdio.h>

enum rt_export_format { RT_FMT_CSV, RT_FMT_JSONL };
enum rt_export_table { RT_TABLE_COMBINED, RT_TABLE_SYSTEM, RT_TABLE_PROCESS };

struct rt_export_query {
    enum rt_export_format format;
    enum rt_export_table table;
    int64_t run_id;
    double since, until; /* epoch seconds; NAN = open */
    int64_t sample_id;   /* > 0: only this sample (live output) */
    int64_t seq_from, seq_to; /* > 0: only samples with seq in [seq_from, seq_to] (batches) */
};

struct rt_exporter;
struct rt_store;

/* Prepare the read of a query on the store; NULL with a message in err on failure. Closed
 * before the store is. */
struct rt_exporter *rt_exporter_open(struct rt_store *store, const struct rt_export_query *q,
                                     char *err, size_t errlen);
/* Write the header line (CSV only; nothing for JSON Lines). */
int rt_exporter_header(struct rt_exporter *x, FILE *out);
/* Write the matching rows; returns the number written, or -1 (message in err). */
int64_t rt_exporter_rows(struct rt_exporter *x, FILE *out, char *err, size_t errlen);
/* Live output: rebind to one sample and write its line. */
int rt_exporter_sample(struct rt_exporter *x, int64_t sample_id, FILE *out);
void rt_exporter_close(struct rt_exporter *x);

/* Live output while recording: each stored sample as one line (JSON Lines, or the combined
 * CSV with its header first), flushed at once so `tail -f` follows it. A write error (a
 * closed pipe, a full disk) stops the live output with one warning; recording goes on. */
struct rt_live;
/* NULL after printing why the output cannot be opened. */
struct rt_live *rt_live_open(struct rt_store *store, const char *path, int csv);
void rt_live_write(struct rt_live *l, int64_t sample_id);
void rt_live_close(struct rt_live *l);

#endif
