/* report_data.h - what the report's charts and tables draw, read from the store into plain
 * arrays (private to src/summary/): the points of the time charts (sample_metrics's Python
 * columns and per-second rates, a run of any length bucketed to at most RT_REPORT_MAX_POINTS),
 * the stacked memory of the busiest processes at those points, the processes on GPUs. */
#ifndef RTRACK_SUMMARY_REPORT_DATA_H
#define RTRACK_SUMMARY_REPORT_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"
#include "rtrack/summary/report.h"

struct rt_store;

/* The charted columns (after the time, column 0), in the order they are read. */
enum report_col {
    C_PCPU = 1,
    C_SCPU,
    C_PMEM,
    C_SMEM,
    C_PREAD,
    C_PWRITE,
    C_SREAD,
    C_SWRITE,
    C_RX,
    C_TX,
    C_SPACE,
    C_PGPU,
    C_SGPU,
    C_PVRAM,
    C_SVRAM,
    C_N
};

struct report_points {
    int n;           /* points (buckets that got a sample) */
    int64_t samples; /* rows they stand for */
    double span;     /* seconds from the first sample to the last */
    double bucket_s; /* width of a bucket, 0 when every sample is a point */
    int gpu;         /* the run has GPU rows (else the GPU columns are not read) */
    double x[RT_REPORT_MAX_POINTS];
    double v[C_N][RT_REPORT_MAX_POINTS];
    unsigned char has[C_N][RT_REPORT_MAX_POINTS];
    int nhas[C_N]; /* points with a value, per column */
    /* the sample a point's process memory comes from (its bucket's largest; the last sample
     * of the bucket where none has one): the stacked chart of the processes reads that one */
    int64_t sid[RT_REPORT_MAX_POINTS];
};

/* 0, or -1 with err ("report: cannot read WHAT: REASON"). */
int report_load_points(struct rt_store *s, int64_t run_id, struct report_points *pts, char *err,
                       size_t errlen);

/* The five processes with the largest PSS at the points, and the rest of the tree as "others"
 * (the last layer): their PSS in MiB at each point, so the stack's top is the tree's line. */
#define REPORT_STACK 5
struct report_stack {
    int nl; /* layers: the processes, then "others"; 0: nothing to draw */
    char label[REPORT_STACK + 1][96];
    double val[REPORT_STACK + 1][RT_REPORT_MAX_POINTS];
};
int report_load_stack(struct rt_store *s, const struct report_points *pts, struct report_stack *st,
                      char *err, size_t errlen);

/* The tree's processes on GPUs: the GPUs each used, its peak device memory (summed over its
 * GPUs in a sample), its busy share, mean and peak, over the samples it was on a GPU in. */
struct report_gpu_proc {
    int64_t pid, gpus, samples;
    char *name;
    double vram_mib, busy_mean, busy_max;
};
int report_load_gpu_procs(struct rt_store *s, int64_t run_id, struct report_gpu_proc **rows, int *n,
                          char *err, size_t errlen);
void report_gpu_procs_free(struct report_gpu_proc *rows, int n);

/* The page's "Over time" section (report_charts.c): the time charts of s's run and the stacked
 * memory of its processes. 0, or -1 with err. */
struct rt_summary;
int report_section_charts(struct rt_buf *p, struct rt_store *store, const struct rt_summary *s,
                          char *err, size_t errlen);

#endif
