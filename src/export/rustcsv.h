/* rustcsv.h - the Rust resource-tracker's CSV (its src/output/csv.rs): private to src/export/
 * (live.c). */
#ifndef RTRACK_EXPORT_RUSTCSV_H
#define RTRACK_EXPORT_RUSTCSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rt_store;
struct rt_rustcsv;

/* NULL with a message in err when the statement cannot be prepared. */
struct rt_rustcsv *rt_rustcsv_open(struct rt_store *store, char *err, size_t errlen);
/* The header line; -1 when it cannot be written. */
int rt_rustcsv_header(FILE *out);
/* The row of one stored sample (nothing for the baseline, which has none); -1 when it cannot
 * be written. */
int rt_rustcsv_sample(struct rt_rustcsv *x, int64_t sample_id, FILE *out);
void rt_rustcsv_close(struct rt_rustcsv *x);

#endif
