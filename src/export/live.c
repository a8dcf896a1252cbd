/* live.c - the live output: one line per recorded sample while recording, through the export
 * views (or the Rust tool's CSV, rustcsv.c), into an output file (outfile.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/export/export.h"
#include "rustcsv.h"
#include "rtrack/base/log.h"
#include "rtrack/base/util.h"

/* --- the live output -------------------------------------------------------------------------- */

struct rt_live {
    struct rt_outfile *out;
    FILE *f;
    char *name;
    struct rt_exporter *x;   /* JSON Lines and the Python CSVs */
    struct rt_rustcsv *rust; /* or the Rust tool's CSV */
    int dead;
};

struct rt_live *rt_live_open(struct rt_store *store, const char *path, int format)
{
    struct rt_live *l = xcalloc(1, sizeof(*l));
    l->name = xstrdup(strcmp(path, "-") ? path : "stdout");
    char err[PATH_MAX + 512];
    /* close-on-exec: the job must not inherit a descriptor of the output file */
    if (!(l->out = rt_outfile_open(path, RT_OUT_MODE_TRUNCATE, err, sizeof(err)))) {
        rt_err("%s", err);
        rt_live_close(l);
        return NULL;
    }
    l->f = rt_outfile_stream(l->out);
    /* the statement reads one sample by id; uncommitted rows of our own connection are
     * visible to it, so the line is written the moment the sample is stored */
    int jsonl = format == RT_LIVE_JSONL || format == RT_LIVE_RUST_JSONL;
    struct rt_export_query q = {jsonl ? RT_FMT_JSONL : RT_FMT_CSV,
                                format == RT_LIVE_SYSTEM_CSV ? RT_TABLE_SYSTEM : RT_TABLE_COMBINED,
                                0,
                                RT_NAN,
                                RT_NAN,
                                1,
                                0,
                                0,
                                format == RT_LIVE_RUST_JSONL};
    if (format == RT_LIVE_RUST_CSV)
        l->rust = rt_rustcsv_open(store, err, sizeof(err));
    else
        l->x = rt_exporter_open(store, &q, err, sizeof(err));
    if (!l->x && !l->rust) {
        rt_err("%s", err);
        rt_live_close(l);
        return NULL;
    }
    if ((l->rust ? rt_rustcsv_header(l->f) : rt_exporter_header(l->x, l->f)) != 0 ||
        fflush(l->f) != 0) {
        rt_err("cannot write output file '%s': %s", l->name, rt_strerror(errno));
        rt_live_close(l);
        return NULL;
    }
    return l;
}

void rt_live_write(struct rt_live *l, int64_t sample_id)
{
    if (!l || l->dead)
        return;
    int rc = l->rust ? rt_rustcsv_sample(l->rust, sample_id, l->f)
                     : rt_exporter_sample(l->x, sample_id, l->f);
    if (rc != 0 || fflush(l->f) != 0) {
        /* SIGPIPE is ignored: a closed pipe is EPIPE here, not the tracker's death */
        rt_warn("live output to '%s' stopped: %s; recording goes on", l->name,
                rt_strerror(errno ? errno : EIO));
        l->dead = 1;
    }
}

void rt_live_close(struct rt_live *l)
{
    if (!l)
        return;
    rt_exporter_close(l->x);
    rt_rustcsv_close(l->rust);
    char err[PATH_MAX + 512];
    /* every line was flushed (and a failure said once): nothing more to report */
    rt_outfile_close(l->out, 0, err, sizeof(err));
    free(l->name);
    free(l);
}
