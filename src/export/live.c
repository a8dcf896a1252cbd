/* live.c - one line per recorded sample while recording, through the export views. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/base/util.h"

struct rt_live {
    FILE *f;
    char *name;
    struct rt_exporter *x;
    int dead;
};

struct rt_live *rt_live_open(struct rt_store *store, const char *path, int csv)
{
    struct rt_live *l = xcalloc(1, sizeof(*l));
    int std = !strcmp(path, "-");
    l->name = xstrdup(std ? "stdout" : path);
    /* close-on-exec: the job must not inherit a descriptor of the output file */
    l->f = std ? stdout : fopen(path, "we");
    if (!l->f) {
        rt_err("cannot open output file '%s': %s", path, rt_strerror(errno));
        rt_live_close(l);
        return NULL;
    }
    /* the statement reads one sample by id; uncommitted rows of our own connection are
     * visible to it, so the line is written the moment the sample is stored */
    struct rt_export_query q = {
        csv ? RT_FMT_CSV : RT_FMT_JSONL, RT_TABLE_COMBINED, 0, RT_NAN, RT_NAN, 1, 0, 0};
    char err[512];
    l->x = rt_exporter_open(store, &q, err, sizeof(err));
    if (!l->x) {
        rt_err("%s", err);
        rt_live_close(l);
        return NULL;
    }
    if (rt_exporter_header(l->x, l->f) != 0 || fflush(l->f) != 0) {
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
    if (rt_exporter_sample(l->x, sample_id, l->f) != 0 || fflush(l->f) != 0) {
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
    if (l->f && l->f != stdout)
        fclose(l->f);
    else if (l->f)
        fflush(l->f);
    free(l->name);
    free(l);
}
