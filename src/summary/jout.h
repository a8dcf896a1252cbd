/* jout.h - the summary room's JSON writers (summary.c), shared with cluster.c. Private to
 * src/summary/. */
#ifndef RTRACK_SUMMARY_JOUT_H
#define RTRACK_SUMMARY_JOUT_H

#include "rtrack/base/util.h"

/* A number as Python's repr (whole numbers without ".0"), NAN and infinities as null. */
void j_num(struct rt_buf *b, double x);
/* ", " unless first, then "key": */
void j_key(struct rt_buf *b, int *first, const char *k);
/* A string, NULL as null. */
void j_str(struct rt_buf *b, const char *s);

struct rt_store;
/* --job's "spread" object (across.c), appended; -1 with a message in err. */
int j_spread(struct rt_store *store, const char *job, struct rt_buf *out, char *err, size_t errlen);

#endif
