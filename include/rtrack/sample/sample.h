/* sample.h - one sample: what every collector fills and the store writes.
 *
 * Raw cumulative counters and the per-interval values computed from them live side by side
 * (DESIGN.md principle 1). Integers use RT_NA and doubles NAN for "unknown" (SQL NULL). Arrays
 * are owned by the sample and reused from sample to sample; identity structs (disk, nic, mount)
 * are owned by their collector's cache and stay valid for the collector's lifetime. */
#ifndef RTRACK_SAMPLE_H
#define RTRACK_SAMPLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum rt_sample_kind { RT_SAMPLE_BASELINE, RT_SAMPLE_PERIODIC, RT_SAMPLE_FINAL };

/* /proc/stat cpu line fields, in kernel order. */
enum {
    RT_CPU_USER,
    RT_CPU_NICE,
    RT_CPU_SYSTEM,
    RT_CPU_IDLE,
    RT_CPU_IOWAIT,
    RT_CPU_IRQ,
    RT_CPU_SOFTIRQ,
    RT_CPU_STEAL,
    RT_CPU_GUEST,
    RT_CPU_GUEST_NICE,
    RT_CPU_NFIELDS
};

struct rt_cpu_ticks {
    int64_t v[RT_CPU_NFIELDS]; /* RT_NA where an old kernel prints fewer fields */
};

struct rt_core_sample {
    int core;
    struct rt_cpu_ticks t;
    double busy_pct;
};

/* /proc/diskstats fields 4..14 (1-based), kernel order. */
enum {
    RT_DS_READS,
    RT_DS_READS_MERGED,
    RT_DS_SECTORS_READ,
    RT_DS_READ_MS,
    RT_DS_WRITES,
    RT_DS_WRITES_MERGED,
    RT_DS_SECTORS_WRITTEN,
    RT_DS_WRITE_MS,
    RT_DS_IN_FLIGHT,
    RT_DS_IO_MS,
    RT_DS_WEIGHTED_IO_MS,
    RT_DS_NFIELDS
};

struct rt_disk_ident {
    char *name;
    int64_t major, minor;
    char *model, *vendor, *serial; /* NULL when unknown */
    const char *type;              /* "nvme", "ssd", "hdd" or NULL */
    int64_t capacity_bytes;        /* RT_NA when the device reports 0 sectors */
    int64_t hw_sector_size;
};

struct rt_disk_sample {
    const struct rt_disk_ident *ident;
    int64_t f[RT_DS_NFIELDS];
    int64_t read_bytes, write_bytes; /* per interval, RT_NA when not in the previous sample */
};

struct rt_mount_ident {
    char *mount_point; /* decoded */
    char *fstype;
    char *source;
    char *disk; /* whole disk, or NULL */
};

struct rt_mount_sample {
    const struct rt_mount_ident *ident;
    int64_t total_bytes, used_bytes, available_bytes, free_bytes;
};

struct rt_nic_ident {
    char *name;
    char *mac, *driver; /* NULL when unknown */
    int64_t mtu, speed_mbps;
};

enum {
    RT_NIC_RX_BYTES,
    RT_NIC_RX_PACKETS,
    RT_NIC_RX_ERRS,
    RT_NIC_RX_DROP,
    RT_NIC_TX_BYTES,
    RT_NIC_TX_PACKETS,
    RT_NIC_TX_ERRS,
    RT_NIC_TX_DROP,
    RT_NIC_NFIELDS
};

struct rt_nic_sample {
    const struct rt_nic_ident *ident;
    int64_t f[RT_NIC_NFIELDS];
    int64_t rx_bytes, tx_bytes; /* per interval */
    char operstate[16];
};

struct rt_proc_sample {
    pid_t pid, ppid;
    int64_t starttime; /* ticks after boot */
    char state;
    int64_t threads;
    int64_t utime, stime, cutime, cstime;
    int64_t rss_kib, pss_kib;
    int64_t read_total, write_total;
    int64_t sched_wait_ns;           /* cumulative time its threads waited for a CPU, RT_NA */
    double cpu_utime_s, cpu_stime_s; /* per interval, NAN when first seen (unless born in it) */
    double cpu_wait_s;               /* per interval: waited, runnable, for a CPU (schedstat) */
    int64_t read_bytes, write_bytes; /* per interval */
    char comm[64];
    char *cmdline_json; /* only when first seen or renamed; owned by the sample */
    int first_seen;
    int renamed; /* name changed since the previous sample (an exec after the fork), or its
                  * first command line was empty (caught inside its exec): identity read again */
};

/* A GPU's identity, read once; owned by its backend (gpu.h) for the backend's lifetime. */
struct rt_gpu_ident {
    const char *vendor;   /* "nvidia" or "amd" */
    int index;            /* the vendor's own device index (nvidia-smi's, card N for AMD) */
    char *uuid, *name;    /* NULL when unknown */
    char *pci_bus_id;     /* "0000:65:00.0" form as the driver prints it, NULL when unknown */
    char *driver_version; /* NULL when unknown */
    int64_t vram_total_bytes, core_count; /* RT_NA when unknown */
};

/* One GPU in one sample. Unknown: RT_NA / NAN (no permission, not supported, device lost). */
struct rt_gpu_sample {
    const struct rt_gpu_ident *ident;
    double util_pct;     /* busy %, 0-100 */
    double mem_util_pct; /* memory controller busy %, 0-100 */
    int64_t vram_used_bytes, vram_total_bytes;
    double temperature_c, power_w;
    int64_t clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz;
};

/* One process on one GPU. Backends list every process they see (pid only); the GPU collector
 * keeps those of the tracked tree and fills in their starttime. */
struct rt_gpu_proc {
    pid_t pid;
    int64_t starttime;   /* of the matching tree process; 0 from backends */
    int dev;             /* index into the sample's (or reading's) GPU array */
    int64_t vram_bytes;  /* device memory used, RT_NA when the driver does not say */
    int64_t gtt_bytes;   /* AMD: GTT (system memory mapped for the GPU), RT_NA otherwise */
    double util_pct;     /* SM (NVIDIA) / gfx engine (AMD) busy % over the interval, NAN unknown */
    double mem_util_pct; /* NVIDIA: memory controller share %, NAN unknown */
};

enum { RT_PSI_CPU, RT_PSI_MEMORY, RT_PSI_IO, RT_PSI_NRES };
enum { RT_PSI_SOME, RT_PSI_FULL, RT_PSI_NKIND };

struct rt_sample {
    int64_t seq;
    enum rt_sample_kind kind;
    double ts;   /* wall clock, epoch seconds */
    double mono; /* monotonic seconds */
    double dt;   /* mono - previous mono; NAN for the baseline */

    /* cpu */
    struct rt_cpu_ticks cpu;
    double cpu_utime_s, cpu_stime_s, cpu_usage, cpu_busy_cores;
    int ncores, cores_cap;
    struct rt_core_sample *cores;
    int64_t processes, procs_running, procs_blocked, forks_total, ctxt_total, btime;

    /* memory, KiB */
    int64_t mem_total, mem_free, mem_available, mem_used, mem_buffers, mem_cached, mem_sreclaimable,
        mem_shmem, mem_active, mem_inactive, swap_total, swap_free;

    /* the cgroup rtrack runs in */
    int64_t cgroup_usage_us;   /* cumulative CPU, µs */
    double cgroup_cpu_s;       /* per interval */
    double cgroup_limit_cores; /* CFS quota / period; NAN = none */

    /* pressure */
    int64_t psi_us[RT_PSI_NRES][RT_PSI_NKIND];
    double psi_pct[RT_PSI_NRES][RT_PSI_NKIND];
    /* why there is none (a fact of the kernel, kept on the run), NULL when read: "no-pressure"
     * (no /proc/pressure: before 4.20, or no CONFIG_PSI), "psi-off" (there but unreadable:
     * PSI disabled at boot, psi=0, or CONFIG_PSI_DEFAULT_DISABLED without psi=1) */
    const char *psi_missing;

    /* disks */
    int ndisks, disks_cap;
    struct rt_disk_sample *disks;
    int64_t disk_read_bytes, disk_write_bytes;

    /* mounts */
    int nmounts, mounts_cap;
    struct rt_mount_sample *mounts;
    int64_t space_total, space_used, space_free;

    /* network */
    int nnics, nics_cap;
    struct rt_nic_sample *nics;
    int64_t net_rx_bytes, net_tx_bytes;

    /* process tree */
    int has_tree;
    pid_t root_pid;
    int64_t proc_count, proc_children;
    double proc_utime_s, proc_stime_s, proc_cpu_usage;
    double proc_cpu_wait_s; /* the members' time runnable but waiting for a CPU, per interval */
    int64_t proc_pss_kib, proc_rss_kib, proc_read_bytes, proc_write_bytes;
    int64_t proc_utime_total, proc_stime_total;
    /* How the kernel let the tree's memory and CPU wait be read: facts of the kernel, the same
     * all run long (the store keeps them on the run: docs/portability.md), NULL until known.
     * proc_memory_source: "smaps_rollup"; "smaps" (before 4.14: the Pss of every mapping
     * summed); "rss" (neither file: PSS unknown, proc_pss_kib NULL, proc_rss_kib is all).
     * cpu_wait_source: "schedstat" once a member's wait was read; otherwise cpu_wait_missing
     * says why: "no-schedstat" (no /proc/PID/schedstat: a kernel without CONFIG_SCHEDSTATS,
     * or CONFIG_SCHED_INFO from 4.2) or "schedstat-off" (it reads "0 0 0": not accounted). */
    const char *proc_memory_source, *cpu_wait_source, *cpu_wait_missing;
    int nprocs, procs_cap;
    struct rt_proc_sample *procs;

    /* GPUs (after the tree: processes are matched against it) */
    int gpu_state; /* RT_GPU_NONE: no backend; RT_GPU_OK; RT_GPU_MISSED: backends did not answer */
    int ngpus, gpus_cap;
    struct rt_gpu_sample *gpus;
    int ngpu_procs, gpu_procs_cap;
    struct rt_gpu_proc *gpu_procs; /* processes of the tracked tree only */
};

enum { RT_GPU_NONE, RT_GPU_OK, RT_GPU_MISSED };

/* A process's identity across samples, as one map key: a pid is reused, a pid with its start
 * time is not. The collector matches processes from sample to sample with it and the store
 * finds a process's row with it, so both must compute it alike. pids stay below 2^22 (the
 * kernel's PID_MAX_LIMIT); a start time wraps only after 2^42 ticks (1 394 years at 100 Hz). */
static inline uint64_t rt_proc_key(pid_t pid, int64_t starttime)
{
    return ((uint64_t)(starttime + 1) << 22) | (uint64_t)pid;
}

/* Reset the scalar fields to "unknown" and set time and kind; arrays are emptied, not freed. */
void rt_sample_begin(struct rt_sample *s, const struct rt_sample *prev, enum rt_sample_kind kind,
                     double wall, double mono);
void rt_sample_free(struct rt_sample *s);

#endif
