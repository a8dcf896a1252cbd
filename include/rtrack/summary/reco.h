/* reco.h - the right-sizing policy, as pure functions of plain figures: what to ask for next
 * time (and what the Python reference would say), the caveat a run that ended badly puts on it,
 * what the run was allocated, whether the host was shared, and how much of the host and of the
 * allocation the run used. No database, no I/O: summary.c gathers the figures, these decide,
 * and tests/unit/test_reco.c holds each rule to its arithmetic. */
#ifndef RTRACK_SUMMARY_RECO_H
#define RTRACK_SUMMARY_RECO_H

#include <stddef.h>
#include <stdint.h>

/* --- the recommendation ------------------------------------------------------------------- */

#define RT_RECO_HEADROOM 1.2 /* memory: the peak x this, rounded up (rt_round_memory) */
#define RT_RECO_STARVED  0.2 /* starved: waited for a CPU this share of the demand, or more */

/* The tree's CPU demand, one figure per quantity: usage_cores is the job's mean cores (CPU time
 * / wall time, as everywhere), wait_pct the share of the time it wanted a CPU that it waited
 * for one (runnable, no CPU free: from the samples), and the waiting in cores is the usage's
 * part in that proportion, so usage + waiting = demand. */
struct rt_summary_demand {
    int known;
    double usage_cores, wait_cores, demand_cores, wait_pct;
    int starved; /* waited RT_RECO_STARVED of the time it wanted a CPU, or more */
};

/* From the mean cores and the seconds the samples with both figures saw the tree run and wait
 * (known 0 without such samples or without a mean). */
void rt_cpu_demand(double usage_cores, double run_s, double wait_s, struct rt_summary_demand *out);

struct rt_reco_in {
    int has_tree; /* a process tree was recorded (else the system's figures stand in) */
    /* CPU: the mean cores (the tree's: Python's stats() mean of process_cpu_usage; the
     * system's mean), their p95 (cpu_p95_ok 0: none) */
    double cpu_mean, cpu_p95;
    int cpu_p95_ok;
    /* the tree's CPU demand (rt_cpu_demand) */
    struct rt_summary_demand demand;
    /* memory: the sampled peak, MiB (the tree's Python max, else the system's); the kernel's
     * high-water mark of one process of the job (NAN: unknown) */
    double mem_max, kernel_maxrss_mib;
    /* GPUs: mean and max GPUs busy, the VRAM peak (0 without) */
    double gpu_mean, gpu_max, vram_max;
    /* how the (newest) run ended, for the caveat: seconds (NAN), exit code and signal (RT_NA:
     * none), the host's OOM kills during the run (RT_NA: unknown) */
    double duration_s;
    int64_t exit_code, exit_signal, oom_kills;
};

struct rt_reco {
    long cpu, cpu_p95, memory, gpu, vram;
    double cpu_cores;        /* the mean cores the CPU figure is built on (2 dp) */
    const char *cpu_from;    /* "usage", or "demand" (usage + waiting for a CPU) */
    double mem_peak;         /* MiB the memory figure is built on (2 dp) */
    const char *mem_from;    /* "kernel" (the high-water mark, above the samples) or "sampled" */
    const char *caveat_kind; /* NULL, "oom", "signal" or "failed" */
    char caveat[256];        /* its text ("" without) */
    char text[160];          /* "2 vCPUs, 512 MiB memory[, 1 GPU with 1024 MiB VRAM]" */
    char metaflow[160];      /* "@resources(cpu=2, memory=512[, gpu=1])" */
    char arithmetic[160];    /* "peak 257.73 MiB (kernel) x 1.2 -> 512 MiB" */
};

/* rtrack's recommendation (kernel 1: starved jobs ask for their demand, memory on the larger of
 * the samples and the kernel's high-water mark), or the Python reference's recommend_resources()
 * (kernel 0: usage and the sampled peak only). */
void rt_recommend(const struct rt_reco_in *in, int kernel, struct rt_reco *out);

/* The Python reference's report.round_memory: 128, 256, 512, 1024, 2048 MiB, then up to the
 * next multiple of 1024. */
long rt_round_memory(double mib);

/* --- the allocation ------------------------------------------------------------------------ */

/* One run's limits as recorded (NAN: unknown) */
struct rt_allocated_in {
    double slurm_cpus;         /* SLURM_CPUS_ON_NODE */
    double cgroup_quota_cores; /* cpu.max / cfs_quota over period */
    double cpuset_cpus;        /* the cgroup's cpuset */
    double host_vcpus;
    double slurm_mem_node_mib, slurm_mem_cpu_mib;
    double cgroup_mem_bytes, host_mem_kib;
    double gpus; /* the devices CUDA_VISIBLE_DEVICES names */
    const char *slurm_job_id;
};

struct rt_allocated {
    int known;
    double cpus, memory_mib, gpus;
    const char *cpus_from, *memory_from; /* "slurm" | "cgroup" | "cpuset", "slurm" | "cgroup" */
    char slurm_job_id[64];
    int has_job_id;
};

/* What the run was allocated, as seff reads it: the CPUs (Slurm's on the node, the cgroup's
 * quota, its cpuset where smaller than the host: the tightest; Slurm's on a tie), the memory
 * (Slurm's per node, or per CPU x its CPUs; the cgroup's limit where below the host's memory:
 * the tightest), the GPUs. */
void rt_alloc_decide(const struct rt_allocated_in *in, struct rt_allocated *a);

/* --- the host ------------------------------------------------------------------------------ */

/* Whether other work shared the host with the tree, on evidence of that work only: the
 * system's mean cores, GPUs busy and disk bytes beside the tree's. An OS's own memory (a few
 * hundred MiB on any host) is no evidence, so memory is not looked at. NAN: unknown. */
#define RT_SHARED_CORES      0.25 /* other processes' mean cores, at least, */
#define RT_SHARED_CORES_PART 0.1  /* and this part of the tree's */
#define RT_SHARED_GPUS       0.2
#define RT_SHARED_DISK_BYTES (256.0 * 1048576) /* and more than the tree's own */
struct rt_sharing_in {
    int has_tree;
    double tree_cores, sys_cores, tree_gpus, sys_gpus, tree_disk_bytes, sys_disk_bytes;
};
struct rt_sharing {
    const char *kind;     /* "dedicated" | "shared" */
    const char *resource; /* "cpu" | "gpu" | "disk" for shared, else NULL */
    double others_cores, others_gpus, others_disk_bytes; /* never below 0; NAN: unknown */
};
void rt_host_sharing(const struct rt_sharing_in *in, struct rt_sharing *out);

/* --- efficiency ----------------------------------------------------------------------------- */

struct rt_efficiency_in {
    double cpu_mean;  /* mean cores (NAN) */
    double mem_max;   /* the sampled peak, MiB (NAN) */
    double gpu_mean;  /* mean GPUs busy (NAN) */
    double vram_max;  /* VRAM peak, MiB (NAN) */
    double reco_peak; /* the peak the recommendation is built on */
    double host_vcpus, host_mem_mib, host_gpus, host_vram_mib;
    double alloc_cpus, alloc_mem_mib;
    /* the kernel's CPU time of the runs and their allocated cores x wall (NAN: not every run
     * has both) */
    double alloc_cpu_s, alloc_core_s;
};

struct rt_eff {
    double cpu_pct, memory_pct, gpu_pct, vram_pct, cpu_alloc_pct, memory_alloc_pct;
};

/* Used / available, as seff reports it (2 dp, NAN without the resource): mean cores over
 * vCPUs, peak memory over RAM, mean GPUs over GPUs, peak VRAM over VRAM; against the
 * allocation, CPU time over allocated cores x wall (the sampled mean cores over the allocated
 * cores where not every run has the kernel's CPU time), the recommendation's peak over the
 * allocated memory. */
void rt_efficiency(const struct rt_efficiency_in *in, struct rt_eff *out);

#endif
