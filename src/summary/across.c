/* across.c - figures across runs, from each run's summary JSON (rt_summary_json()): two runs
 * side by side (`summary --compare`) and how a job's runs spread (`summary --job`'s "spread").
 * The one computation of both: `rtrack summary` prints its text and markdown from these
 * documents, and --format json writes them as they are. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jout.h"
#include "rtrack/base/json.h"
#include "rtrack/base/util.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/summary.h"

/* `side`: the path is under the tree ("$.process") or, for a system-only recording, the
 * system; else under the document's root. */
static const struct {
    const char *path;
    int side;
} paths[RT_SUMMARY_NFIGURES] = {
    {"run.duration_s", 0},   {"cpu_time.total_s", 0}, {"cpu_cores.mean", 1},
    {"cpu_cores.max", 1},    {"memory_mib.mean", 1},  {"recommendation.memory_basis.peak_mib", 0},
    {"disk_read_bytes", 1},  {"disk_write_bytes", 1}, {"gpu_usage.mean", 1},
    {"gpu_vram_mib.max", 1},
};

const struct rt_summary_figure rt_summary_figures[RT_SUMMARY_NFIGURES] = {
    {"wall_time_s", "wall time", "s"},         {"cpu_time_s", "CPU time", "s"},
    {"cores_mean", "cores mean", "cores"},     {"cores_max", "cores max", "cores"},
    {"memory_mean_mib", "memory mean", "MiB"}, {"peak_memory_mib", "peak memory", "MiB"},
    {"disk_read_bytes", "disk read", "B"},     {"disk_write_bytes", "disk written", "B"},
    {"gpu_usage_mean", "GPUs busy", "gpus"},   {"vram_max_mib", "VRAM max", "MiB"},
};

/* One run's summary, opened: 0; 1 when it has too few samples (nothing opened); -1 with err. */
static int load(struct rt_store *store, int64_t id, struct rt_buf *json, struct rt_json **doc,
                char *err, size_t errlen)
{
    struct rt_summary_opts o = {id, NULL, 0, NULL, 0};
    int bad = 0;
    json->len = 0;
    *doc = NULL;
    if (rt_summary_json(store, &o, json, &bad, err, errlen) != 0)
        return bad ? 1 : -1;
    if (!(*doc = rt_json_open(json->p, json->len, err, errlen)))
        return -1;
    return 0;
}

/* The run's figure f (NAN: it has none). */
static double figure(struct rt_json *doc, int f)
{
    char path[96];
    const char *side = "";
    if (paths[f].side)
        side = rt_json_get(doc, "$.process", NULL) == RT_JSON_OBJECT ? "process." : "system.";
    snprintf(path, sizeof(path), "$.%s%s", side, paths[f].path);
    double v;
    enum rt_json_type t = rt_json_num(doc, path, &v);
    return t == RT_JSON_INTEGER || t == RT_JSON_REAL ? v : RT_NAN;
}

/* The value at path, as it is in the document (null when absent). */
static void copy(struct rt_buf *out, struct rt_json *doc, const char *path)
{
    char *v = NULL;
    enum rt_json_type t = rt_json_get(doc, path, &v);
    if (t == RT_JSON_TEXT)
        j_str(out, v);
    else if (t > RT_JSON_NULL && v)
        rt_buf_puts(out, t == RT_JSON_TRUE ? "true" : t == RT_JSON_FALSE ? "false" : v);
    else
        rt_buf_puts(out, "null");
    free(v);
}

int rt_summary_compare_json(struct rt_store *store, const int64_t id[2], struct rt_buf *out,
                            int *bad_input, char *err, size_t errlen)
{
    struct rt_buf json[2] = {{0}, {0}};
    struct rt_json *doc[2] = {NULL, NULL};
    int rc = -1;
    *bad_input = 0;
    for (int i = 0; i < 2; i++) {
        int l = load(store, id[i], &json[i], &doc[i], err, errlen);
        if (l == 1) {
            snprintf(err, errlen, "run %lld has fewer than two samples: nothing to compare",
                     (long long)id[i]);
            *bad_input = 1;
        }
        if (l != 0)
            goto out;
    }
    rt_buf_puts(out, "{\"runs\": [");
    for (int i = 0; i < 2; i++) {
        rt_buf_puts(out, i ? ", {\"run\": " : "{\"run\": ");
        copy(out, doc[i], "$.run");
        rt_buf_puts(out, ", \"recommendation\": ");
        copy(out, doc[i], "$.recommendation");
        rt_buf_puts(out, "}");
    }
    rt_buf_puts(out, "], \"figures\": {");
    int first = 1;
    for (int f = 0; f < RT_SUMMARY_NFIGURES; f++) {
        double v0 = figure(doc[0], f), v1 = figure(doc[1], f);
        int both = !isnan(v0) && !isnan(v1);
        j_key(out, &first, rt_summary_figures[f].key);
        rt_buf_puts(out, "{\"values\": [");
        j_num(out, v0);
        rt_buf_puts(out, ", ");
        j_num(out, v1);
        rt_buf_puts(out, "], \"delta\": ");
        j_num(out, both ? v1 - v0 : RT_NAN);
        rt_buf_puts(out, ", \"delta_pct\": ");
        j_num(out, both && v0 != 0 ? (v1 - v0) / fabs(v0) * 100 : RT_NAN);
        rt_buf_puts(out, "}");
    }
    rt_buf_puts(out, "}}");
    rc = 0;
out:
    for (int i = 0; i < 2; i++) {
        rt_json_close(doc[i]);
        rt_buf_free(&json[i]);
    }
    return rc;
}

/* --job's "spread": over the job's runs with two samples or more, each figure's mean, sample
 * standard deviation (n - 1, as hyperfine), min and max. */
int j_spread(struct rt_store *store, const char *job, struct rt_buf *out, char *err, size_t errlen)
{
    struct rt_store_rows *q =
        rt_store_rows_open(store, "SELECT id FROM runs WHERE job_name = ?1 ORDER BY id");
    if (!q) {
        snprintf(err, errlen, "cannot read the database: %s", rt_store_error(store));
        return -1;
    }
    rt_store_rows_bind_t(q, 1, job);
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    while (rt_store_rows_next(q) == 1)
        *RT_PUSH(ids, n, cap) = rt_store_rows_i(q, 0);
    rt_store_rows_close(q);
    /* each run's figures (NAN: the run has none), then the statistics over them */
    double *vals = xcalloc(n * RT_SUMMARY_NFIGURES + 1, sizeof(double));
    size_t used = 0;
    int rc = 0;
    struct rt_buf json = {0};
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct rt_json *doc;
        int l = load(store, ids[i], &json, &doc, err, errlen);
        if (l < 0)
            rc = -1;
        if (l != 0)
            continue;
        for (int f = 0; f < RT_SUMMARY_NFIGURES; f++)
            vals[used * RT_SUMMARY_NFIGURES + (size_t)f] = figure(doc, f);
        used++;
        rt_json_close(doc);
    }
    rt_buf_free(&json);
    free(ids);
    if (rc == 0) {
        rt_buf_puts(out, "{\"runs\": ");
        j_num(out, (double)used);
        rt_buf_puts(out, ", \"figures\": {");
    }
    int first = 1;
    for (int f = 0; f < RT_SUMMARY_NFIGURES && rc == 0; f++) {
        double sum = 0, sq = 0, lo = RT_NAN, hi = RT_NAN;
        int cnt = 0;
        for (size_t i = 0; i < used; i++) {
            double v = vals[i * RT_SUMMARY_NFIGURES + (size_t)f];
            if (isnan(v))
                continue;
            lo = cnt ? fmin(lo, v) : v;
            hi = cnt ? fmax(hi, v) : v;
            sum += v;
            cnt++;
        }
        double mean = cnt ? sum / cnt : RT_NAN;
        for (size_t i = 0; i < used; i++) {
            double v = vals[i * RT_SUMMARY_NFIGURES + (size_t)f];
            if (!isnan(v))
                sq += (v - mean) * (v - mean);
        }
        j_key(out, &first, rt_summary_figures[f].key);
        rt_buf_puts(out, "{\"n\": ");
        j_num(out, cnt);
        rt_buf_puts(out, ", \"mean\": ");
        j_num(out, mean);
        rt_buf_puts(out, ", \"sd\": ");
        j_num(out, cnt > 1 ? sqrt(sq / (cnt - 1)) : RT_NAN);
        rt_buf_puts(out, ", \"min\": ");
        j_num(out, lo);
        rt_buf_puts(out, ", \"max\": ");
        j_num(out, hi);
        rt_buf_puts(out, "}");
    }
    if (rc == 0)
        rt_buf_puts(out, "}}");
    free(vals);
    return rc;
}
