/* jsonl.h - the JSON Lines passes (jsonl.c), private to the export room: export.c opens them
 * for a whole run or for one sample (the live output). */
#ifndef RTRACK_EXPORT_JSONL_H
#define RTRACK_EXPORT_JSONL_H

#include <stdint.h>

struct rt_buf;
struct rt_store;
struct rt_jsonl;

/* Prepare the passes over the samples that `filter` (SQL over the sample `s`, with the
 * parameters ?1 to ?6 of export.c) selects; NULL with the reason in rt_store_error(). kept:
 * run again for every sample of a recording. */
struct rt_jsonl *export_jsonl_open(struct rt_store *store, const char *filter, int kept);
/* From now on the Rust tool's own lines (rtrack as resource-tracker): rtrack's *_kib memory
 * fields left out, and actual_interval_ms on the first line written through j. */
void export_jsonl_rust(struct rt_jsonl *j);
/* Parameter i of every pass. */
void export_jsonl_bind_i(struct rt_jsonl *j, int i, int64_t v);
void export_jsonl_bind_f(struct rt_jsonl *j, int i, double v);
/* The next sample's line into `line` (without the newline) and its seq: 1, or 0 after the last,
 * or -1 when the database could not be read. */
int export_jsonl_next(struct rt_jsonl *j, struct rt_buf *line, int64_t *seq);
/* Back to before the first sample, the parameters kept. */
void export_jsonl_reset(struct rt_jsonl *j);
void export_jsonl_close(struct rt_jsonl *j);

#endif
