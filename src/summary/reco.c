/* reco.c - the right-sizing policy (reco.h): pure functions of the figures summary.c gathers.
 *
 * The Python reference's recommend_resources() is the starting point, with its bugs fixed
 * (memory MiB divided by 1024, an allocation that is never "dedicated", a 512 GiB memory
 * threshold) and two of rtrack's own additions, both only where the kernel says more than the
 * samples: a starved tree asks for the cores it wanted (its demand: usage + waiting for a CPU),
 * and memory is built on the kernel's high-water mark where a peak fell between two samples. */
#include "rtrack/summary/reco.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/pyfmt.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/util.h"

static double round2(double x)
{
    return rt_py_round(x, 2);
}

/* Python's round(x): ties to even; at least one */
static long whole_cores(double x)
{
    return (long)fmax(1, rt_py_round(round2(x), 0));
}

long rt_round_memory(double mib)
{
    static const long steps[] = {128, 256, 512, 1024, 2048};
    if (!(mib > 0)) /* nothing known (NAN) or nothing used: the smallest step, never (long)NAN */
        return steps[0];
    for (size_t i = 0; i < RT_ARRAY_LEN(steps); i++)
        if (mib <= steps[i])
            return steps[i];
    return (long)ceil(mib / 1024.0) * 1024;
}

/* The caveat a run that did not end well puts on its recommendation: killed by the OOM killer
 * (SIGKILL while the host's OOM kill count grew), by another signal, or failed. */
static void reco_caveat(const struct rt_reco_in *in, struct rt_reco *r)
{
    char after[48] = "", d[32], sig[32];
    if (!isnan(in->duration_s))
        snprintf(after, sizeof(after), " after %s", rt_fmt_duration(d, sizeof(d), in->duration_s));
    r->caveat_kind = NULL;
    r->caveat[0] = '\0';
    if (in->exit_signal == 9 && in->oom_kills != RT_NA && in->oom_kills > 0) {
        r->caveat_kind = "oom";
        snprintf(r->caveat, sizeof(r->caveat),
                 "based on a run killed by the OOM killer%s: memory is a lower bound; ask for "
                 "more than %ld MiB",
                 after, r->memory);
    } else if (in->exit_signal != RT_NA) {
        r->caveat_kind = "signal";
        snprintf(r->caveat, sizeof(r->caveat),
                 "based on a run killed by %s%s: its figures cover only the part of the job that "
                 "ran",
                 rt_signal_name((int)in->exit_signal, sig, sizeof(sig)), after);
    } else if (in->exit_code != RT_NA && in->exit_code != 0) {
        r->caveat_kind = "failed";
        snprintf(r->caveat, sizeof(r->caveat),
                 "based on a run that failed (exit %lld)%s: it may not have done all its work",
                 (long long)in->exit_code, after);
    }
}

/* What the figures say in words: the request, Metaflow's decorator, the memory's arithmetic. */
static void reco_text(struct rt_reco *r)
{
    char cpus[48], gpus[48];
    int n = snprintf(r->text, sizeof(r->text), "%s, %ld MiB memory",
                     rt_fmt_count(cpus, sizeof(cpus), (double)r->cpu, "vCPU"), r->memory);
    if (r->gpu > 0)
        snprintf(r->text + n, sizeof(r->text) - (size_t)n, ", %s with %ld MiB VRAM",
                 rt_fmt_count(gpus, sizeof(gpus), (double)r->gpu, "GPU"), r->vram);
    n = snprintf(r->metaflow, sizeof(r->metaflow), "@resources(cpu=%ld, memory=%ld", r->cpu,
                 r->memory);
    if (r->gpu > 0)
        n += snprintf(r->metaflow + n, sizeof(r->metaflow) - (size_t)n, ", gpu=%ld", r->gpu);
    snprintf(r->metaflow + n, sizeof(r->metaflow) - (size_t)n, ")");
    snprintf(r->arithmetic, sizeof(r->arithmetic), "peak %.2f MiB (%s) x 1.2 -> %ld MiB",
             r->mem_peak, r->mem_from, r->memory);
}

void rt_cpu_demand(double usage_cores, double run_s, double wait_s, struct rt_summary_demand *out)
{
    memset(out, 0, sizeof(*out));
    double all = run_s + wait_s;
    if (isnan(usage_cores) || isnan(all) || all <= 0)
        return;
    out->known = 1;
    out->usage_cores = usage_cores;
    out->wait_pct = wait_s / all * 100;
    out->starved = wait_s >= RT_RECO_STARVED * all;
    /* the waiting in the proportion the samples saw, of the usage the kernel counted; a job
     * that waited and never ran (all of it waiting) has no usage to take it from */
    out->wait_cores = run_s > 0 ? usage_cores * wait_s / run_s : 0;
    out->demand_cores = usage_cores + out->wait_cores;
}

void rt_recommend(const struct rt_reco_in *in, int kernel, struct rt_reco *r)
{
    memset(r, 0, sizeof(*r));
    r->cpu = whole_cores(in->cpu_mean);
    r->cpu_cores = round2(in->cpu_mean);
    r->cpu_from = "usage";
    /* latency-sensitive: enough cores for 95 % of the intervals */
    r->cpu_p95 = in->cpu_p95_ok ? (long)fmax(1, ceil(round2(in->cpu_p95))) : r->cpu;
    /* starved (it waited for a CPU a fifth of the time it wanted one, or more): usage is a
     * lower bound on what the job wants; its demand decides when it asks for more */
    double dem = in->demand.demand_cores;
    if (kernel && in->has_tree && in->demand.known && in->demand.starved &&
        whole_cores(dem) > r->cpu) {
        r->cpu = whole_cores(dem);
        r->cpu_cores = round2(dem);
        r->cpu_from = "demand";
        r->cpu_p95 = r->cpu_p95 > r->cpu ? r->cpu_p95 : r->cpu;
    }
    r->mem_peak = round2(in->mem_max);
    r->mem_from = "sampled";
    if (kernel && in->has_tree && in->kernel_maxrss_mib > r->mem_peak) {
        r->mem_peak = round2(in->kernel_maxrss_mib);
        r->mem_from = "kernel";
    }
    /* (the job's own cgroup's peak is shown, not used: it counts the page cache the job
     * caused, which the kernel takes back before it would kill: an I/O-heavy job's peak is its
     * limit, and limit x 1.2 would be advice to ask for more than it needed) */
    r->memory = rt_round_memory(r->mem_peak * RT_RECO_HEADROOM);
    r->gpu = in->gpu_mean > 0 ? whole_cores(in->gpu_max) : 0;
    r->vram = in->vram_max > 0 ? rt_round_memory(round2(in->vram_max) * RT_RECO_HEADROOM) : 0;
    reco_text(r);
    reco_caveat(in, r);
}

/* The smaller of a candidate and what is decided so far; on a tie the earlier candidate (the
 * one asked for: Slurm's) stays. */
static void tighter(double *best, const char **from, double v, const char *name)
{
    if (!isnan(v) && v > 0 && (isnan(*best) || v < *best)) {
        *best = v;
        *from = name;
    }
}

void rt_alloc_decide(const struct rt_allocated_in *in, struct rt_allocated *a)
{
    memset(a, 0, sizeof(*a));
    a->cpus = a->memory_mib = a->gpus = RT_NAN;
    tighter(&a->cpus, &a->cpus_from, in->slurm_cpus, "slurm");
    tighter(&a->cpus, &a->cpus_from, in->cgroup_quota_cores, "cgroup");
    if (isnan(in->host_vcpus) || in->cpuset_cpus < in->host_vcpus)
        tighter(&a->cpus, &a->cpus_from, in->cpuset_cpus, "cpuset");
    double slurm_mem = !isnan(in->slurm_mem_node_mib) ? in->slurm_mem_node_mib
                                                      : in->slurm_mem_cpu_mib * in->slurm_cpus;
    tighter(&a->memory_mib, &a->memory_from, slurm_mem, "slurm");
    double cg_mem = in->cgroup_mem_bytes / 1048576.0;
    if (isnan(in->host_mem_kib) || cg_mem < in->host_mem_kib / 1024.0)
        tighter(&a->memory_mib, &a->memory_from, cg_mem, "cgroup");
    a->gpus = in->gpus;
    if (in->slurm_job_id) {
        snprintf(a->slurm_job_id, sizeof(a->slurm_job_id), "%s", in->slurm_job_id);
        a->has_job_id = 1;
    }
    a->known = !isnan(a->cpus) || !isnan(a->memory_mib) || !isnan(a->gpus) || a->has_job_id;
}

/* what the system used beyond the tree: never below 0 (counters taken at slightly other
 * moments can make it so) */
static double others(double sys, double tree)
{
    return isnan(sys) || isnan(tree) ? RT_NAN : fmax(0, sys - tree);
}

void rt_host_sharing(const struct rt_sharing_in *in, struct rt_sharing *out)
{
    out->others_cores = others(in->sys_cores, in->tree_cores);
    out->others_gpus = others(in->sys_gpus, in->tree_gpus);
    out->others_disk_bytes = others(in->sys_disk_bytes, in->tree_disk_bytes);
    out->kind = "dedicated";
    out->resource = NULL;
    if (!in->has_tree) { /* no tree to tell other work from: the Python reference's answer */
        out->kind = "shared";
        return;
    }
    if (out->others_cores >= fmax(RT_SHARED_CORES, RT_SHARED_CORES_PART * in->tree_cores))
        out->resource = "cpu";
    else if (out->others_gpus >= RT_SHARED_GPUS)
        out->resource = "gpu";
    else if (out->others_disk_bytes >= fmax(RT_SHARED_DISK_BYTES, in->tree_disk_bytes))
        out->resource = "disk";
    if (out->resource)
        out->kind = "shared";
}

static double pct2(double used, double of)
{
    return isnan(used) || isnan(of) ? RT_NAN : rt_py_round(used / of * 100, 2);
}

void rt_efficiency(const struct rt_efficiency_in *in, struct rt_eff *out)
{
    /* memory: the peak the recommendation is built on, the kernel's high-water mark where it is
     * above the samples (a peak between two samples), as memory_alloc_pct below */
    double mpeak = fmax(in->mem_max, in->reco_peak > 0 ? in->reco_peak : RT_NAN);
    out->cpu_pct = pct2(in->cpu_mean, in->host_vcpus);
    out->memory_pct = pct2(mpeak, in->host_mem_mib);
    out->gpu_pct = in->host_gpus > 0 ? pct2(in->gpu_mean, in->host_gpus) : RT_NAN;
    out->vram_pct = in->host_vram_mib > 0 ? pct2(in->vram_max, in->host_vram_mib) : RT_NAN;
    double cpu = RT_NAN;
    if (!isnan(in->alloc_cpus)) {
        if (!isnan(in->alloc_core_s) && in->alloc_core_s > 0)
            cpu = in->alloc_cpu_s / in->alloc_core_s * 100;
        else
            cpu = in->cpu_mean / in->alloc_cpus * 100;
    }
    out->cpu_alloc_pct = isnan(cpu) ? RT_NAN : rt_py_round(cpu, 2);
    out->memory_alloc_pct = pct2(in->reco_peak, in->alloc_mem_mib);
}
