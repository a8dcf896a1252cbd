/* cluster.h - one Slurm job across its nodes: what each node used against what it was
 * allocated, the job's total, and the sbatch options to ask for next time.
 *
 * Read from a database that holds the job's runs (rtrack merge, or the readers' private merge
 * of several --db): one run per job step and node (the SPANK plugin's recordings, or `srun
 * rtrack run`), told apart by runs.slurm_nodename (else the host name). Per node (and job id,
 * for the tasks of an array): CPU seconds (the kernel's for `rtrack run`, else the sampled tree's
 * utime + stime), the peak of memory (PSS) and cores of the steps that ran at once (summed per
 * second), the allocation (SLURM_CPUS_ON_NODE, SLURM_MEM_PER_NODE or _PER_CPU x CPUs, the GPUs
 * on the node; the cgroup's limits where Slurm's are unknown). Efficiency as seff computes it:
 * CPU seconds / (CPUs allocated x the job's wall time), memory peak / memory allocated.
 *
 * The JSON document:
 * {"slurm_job", "nodes": [{"job_id", "array_job_id", "array_task_id", "node", "steps" (text:
 *   the step ids, comma-separated), "runs", "wall_s", "cpu_s", "mean_cores", "peak_cores",
 *   "memory_peak_mib", "gpus_used", "alloc_cpus", "alloc_memory_mib", "alloc_gpus",
 *   "cpu_eff_pct", "memory_eff_pct", "cpu_from", "alloc_cpus_from", "alloc_memory_from",
 *   "memory_peak_from", "cgroup_memory_peak_mib", "largest_process_peak_mib", "oom_kills",
 *   "recommended": {"cpus", "memory_mib", "gpus"}}...],
 *  "job": {"nodes", "runs", "wall_s", "time_limit_s", "cpu_s", "alloc_cpus" (sum over the
 *   nodes), "alloc_memory_mib" (sum), "memory_peak_mib" (sum of the nodes' peaks),
 *   "memory_peak_max_node_mib", "cpu_eff_pct", "memory_eff_pct", "recommended": {"nodes",
 *   "ntasks_per_node", "cpus_per_task", "memory_mib" (per node), "gpus" (per node), "time_s"},
 *   "sbatch" (the options as text)},
 *  "caveats": [{"kind", "node", "step", "text"}...]}
 * null where a value is unknown. */
#ifndef RTRACK_SUMMARY_CLUSTER_H
#define RTRACK_SUMMARY_CLUSTER_H

#include <stddef.h>
#include <stdio.h>

struct rt_store;
struct rt_buf;

/* One node's runs of one job id (NAN: unknown). Where its figures came from (the *_from
 * names, "" unknown): CPU time "kernel" (rtrack run's reaped job), "cgroup" (the step
 * cgroup's CPU: record --cgroup), "tree" (the sampled processes); CPUs and memory allocated
 * "cgroup cpuset", "cgroup CPU quota", "SLURM_CPUS_ON_NODE"; "cgroup memory limit",
 * "SLURM_MEM_PER_NODE", "SLURM_MEM_PER_CPU" (for a step's cgroup the tightest of the cgroup's
 * and Slurm's, else Slurm's first); the memory peak "pss" or "rss" (the sampled processes). */
struct rt_cluster_node {
    char job[32], array_job[32], array_task[16], name[64], steps[128];
    char cpu_from[8], cpus_from[24], mem_from[24], peak_from[8];
    int runs;
    double t0, t1, cpu_s, a_cpus, a_mem, a_gpus, mem_peak, cores_peak, gpus_used;
    double ntasks, num_nodes, time_limit;
    double cg_peak;   /* the largest step cgroup's own peak (memory.peak), MiB */
    double proc_peak; /* the largest peak of one process (PSS, else RSS), MiB */
    double oom_kills; /* in the steps' cgroups */
    double job_wall;  /* of its job id, over every node */
    int rec_cpus, rec_gpus;
    long rec_mem;
};

/* What a reader of the figures must know: a step that did not end by itself. kind: "oom" (a
 * process killed by the OOM killer in the step's cgroup), "cancelled" (scancel), "timeout"
 * (the time limit), "signal" (a task killed by a signal, Slurm's reason unknown), "failed" (a
 * task's exit code not 0). */
struct rt_cluster_caveat {
    char kind[16], node[64], step[32], text[256];
};
#define RT_CLUSTER_CAVEATS 32

/* The job: its nodes, the totals over them, the sbatch options for next time. */
struct rt_cluster {
    char slurm_job[64];
    struct rt_cluster_node *n;
    size_t count;
    int runs, nodes_per_job, ntasks_per_node, cpus_per_task, gpus;
    double t0, t1, cpu_s, a_cpus, a_mem, a_core_s, mem_peak, mem_peak_max, time_limit;
    double wall_max; /* the longest wall time of one job id */
    long memory;
    char sbatch[256]; /* the options as text */
    struct rt_cluster_caveat caveats[RT_CLUSTER_CAVEATS];
    size_t ncaveats;
};

/* The job `slurm_job` read and decided into *c (freed with rt_cluster_free, also after a
 * failure). 0; -1 with the reason in err (*bad_input set when the job has no run: exit 2). */
int rt_cluster_compute(struct rt_store *s, const char *slurm_job, struct rt_cluster *c,
                       int *bad_input, char *err, size_t errlen);
void rt_cluster_free(struct rt_cluster *c);

/* A row's figures as the document has them (a node, or the job's total for n NULL): wall and
 * CPU seconds (2 dp), cores allocated, CPU efficiency (%, 1 dp), peak memory (MiB, 2 dp),
 * memory allocated, memory efficiency (%, 1 dp); NAN where unknown. */
struct rt_cluster_row {
    double wall_s, cpu_s, alloc_cpus, cpu_eff_pct, memory_peak_mib, alloc_memory_mib,
        memory_eff_pct;
};
void rt_cluster_row_of(const struct rt_cluster *c, const struct rt_cluster_node *n,
                       struct rt_cluster_row *r);

/* The document above, appended to out; the same for people: a row per node, the job's total,
 * the sbatch options (markdown: md). */
void rt_cluster_write_json(const struct rt_cluster *c, struct rt_buf *out);
void rt_cluster_write_text(const struct rt_cluster *c, FILE *f, int md);

/* Compute and write in one call (`summary --slurm-job`): 0; -1 as rt_cluster_compute. */
int rt_cluster_json(struct rt_store *s, const char *slurm_job, struct rt_buf *out, int *bad_input,
                    char *err, size_t errlen);
int rt_cluster_print(struct rt_store *s, const char *slurm_job, FILE *f, int md, int *bad_input,
                     char *err, size_t errlen);

#endif
