/* sample.c - the life cycle of a sample: begun empty ("unknown" everywhere) with its arrays
 * kept from the previous use, filled by the collectors, freed at the end of a recording. */
#include "rtrack/sample/sample.h"

#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"

void rt_sample_begin(struct rt_sample *s, const struct rt_sample *prev, enum rt_sample_kind kind,
                     double wall, double mono)
{
    /* Keep the arrays, reset everything else to "unknown". */
    for (int i = 0; i < s->nprocs; i++)
        free(s->procs[i].cmdline_json);
    struct rt_core_sample *cores = s->cores;
    struct rt_disk_sample *disks = s->disks;
    struct rt_mount_sample *mounts = s->mounts;
    struct rt_nic_sample *nics = s->nics;
    struct rt_proc_sample *procs = s->procs;
    struct rt_gpu_sample *gpus = s->gpus;
    struct rt_gpu_proc *gpu_procs = s->gpu_procs;
    int cc = s->cores_cap, dc = s->disks_cap, mc = s->mounts_cap, nc = s->nics_cap,
        pc = s->procs_cap, gc = s->gpus_cap, gpc = s->gpu_procs_cap;
    memset(s, 0, sizeof(*s));
    s->cores = cores;
    s->disks = disks;
    s->mounts = mounts;
    s->nics = nics;
    s->procs = procs;
    s->cores_cap = cc;
    s->disks_cap = dc;
    s->mounts_cap = mc;
    s->nics_cap = nc;
    s->procs_cap = pc;
    s->gpus = gpus;
    s->gpu_procs = gpu_procs;
    s->gpus_cap = gc;
    s->gpu_procs_cap = gpc;

    s->seq = prev ? prev->seq + 1 : 0;
    s->kind = kind;
    s->ts = wall;
    s->mono = mono;
    s->dt = prev ? mono - prev->mono : RT_NAN;

    for (int i = 0; i < RT_CPU_NFIELDS; i++)
        s->cpu.v[i] = RT_NA;
    s->cpu_utime_s = s->cpu_stime_s = s->cpu_usage = s->cpu_busy_cores = RT_NAN;
    s->processes = s->procs_running = s->procs_blocked = s->forks_total = s->ctxt_total = s->btime =
        RT_NA;
    int64_t *mem[] = {&s->mem_total,   &s->mem_free,     &s->mem_available,    &s->mem_used,
                      &s->mem_buffers, &s->mem_cached,   &s->mem_sreclaimable, &s->mem_shmem,
                      &s->mem_active,  &s->mem_inactive, &s->swap_total,       &s->swap_free};
    for (size_t i = 0; i < RT_ARRAY_LEN(mem); i++)
        *mem[i] = RT_NA;
    for (int r = 0; r < RT_PSI_NRES; r++)
        for (int k = 0; k < RT_PSI_NKIND; k++) {
            s->psi_us[r][k] = RT_NA;
            s->psi_pct[r][k] = RT_NAN;
        }
    s->cgroup_usage_us = RT_NA;
    s->cgroup_cpu_s = s->cgroup_limit_cores = RT_NAN;
    s->disk_read_bytes = s->disk_write_bytes = RT_NA;
    s->space_total = s->space_used = s->space_free = RT_NA;
    s->net_rx_bytes = s->net_tx_bytes = RT_NA;
    s->root_pid = 0;
    s->proc_count = s->proc_children = RT_NA;
    s->proc_utime_s = s->proc_stime_s = s->proc_cpu_usage = s->proc_cpu_wait_s = RT_NAN;
    s->proc_pss_kib = s->proc_rss_kib = s->proc_read_bytes = s->proc_write_bytes = RT_NA;
    s->proc_utime_total = s->proc_stime_total = RT_NA;
}

void rt_sample_free(struct rt_sample *s)
{
    for (int i = 0; i < s->nprocs; i++)
        free(s->procs[i].cmdline_json);
    free(s->cores);
    free(s->disks);
    free(s->mounts);
    free(s->nics);
    free(s->procs);
    free(s->gpus);
    free(s->gpu_procs);
    memset(s, 0, sizeof(*s));
}
