/* sctx.c - the compute step's context (internal.h): how the summary room's files read a named
 * query (its column count checked, the runs bound) and say that the database or the request
 * failed, in one place for summary.c, pass.c and top.c. */
#include <stdio.h>

#include "internal.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"

int summary_db_fail(struct sctx *c)
{
    snprintf(c->err, c->errlen, "cannot read the database: %s", rt_store_error(c->store));
    return -1;
}

int summary_bad_request(struct sctx *c)
{
    *c->bad = 1;
    return -1;
}

struct rt_store_rows *summary_query(struct sctx *c, enum rt_query q, int ncols, int bind_runs)
{
    struct rt_store_rows *r = rt_store_query(c->store, q);
    if (!r) {
        summary_db_fail(c);
        return NULL;
    }
    if (rt_store_rows_ncols(r) != ncols) {
        snprintf(c->err, c->errlen, "named query %s has %d columns, its reader reads %d",
                 rt_store_query_name(q), rt_store_rows_ncols(r), ncols);
        rt_store_rows_close(r);
        return NULL;
    }
    if (bind_runs)
        rt_store_rows_bind_t(r, 1, c->ids_json.p);
    return r;
}

int summary_rows_done(struct sctx *c, struct rt_store_rows *r, int rc)
{
    rt_store_rows_close(r);
    return rc < 0 ? summary_db_fail(c) : 0;
}
