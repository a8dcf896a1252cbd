-- Schema version 7: what the kernel knows of a run's job once it is reaped (run mode), from
-- getrusage(RUSAGE_CHILDREN) after the job and the orphans rtrack reaped as its subreaper:
-- ru_maxrss, the largest resident set any one of them reached (a high-water mark the kernel
-- keeps, so a peak between two samples is not missed), and their user and system CPU time.
-- NULL for record mode (the tree is not rtrack's child) and for runs of older rtracks.
ALTER TABLE runs ADD COLUMN job_maxrss_kib INTEGER;
ALTER TABLE runs ADD COLUMN job_utime_s REAL;
ALTER TABLE runs ADD COLUMN job_stime_s REAL;
-- And the OOM kills anywhere on the host while the job ran (/proc/vmstat oom_kill, after minus
-- before; run mode): with a job killed by SIGKILL, the OOM killer is the likely killer.
ALTER TABLE runs ADD COLUMN host_oom_kills INTEGER;
-- And the tree's CPU demand: the time its processes were runnable but waiting for a CPU
-- (/proc/PID/schedstat, second field; summed over the threads of a multi-threaded process).
-- Usage on a busy host is a lower bound on what a job wants: run + wait is its demand.
ALTER TABLE samples ADD COLUMN proc_cpu_wait_s REAL;          -- per interval, s
ALTER TABLE process_samples ADD COLUMN sched_wait_ns INTEGER; -- cumulative, ns
ALTER TABLE process_samples ADD COLUMN cpu_wait_s REAL;       -- per interval, s
-- What the job was allocated, read when the run starts (run and record): the cgroup rtrack runs
-- in, which the job inherits (the tightest CPU quota in cores and memory limit in bytes of it and
-- its ancestors, the CPUs of its effective cpuset; NULL: none or unknown), and what the
-- environment says: Slurm's job id, CPUs on the node and memory (MiB, per node or per CPU), and
-- CUDA_VISIBLE_DEVICES as set (NULL unset, '' set empty) with the GPUs it names.
ALTER TABLE runs ADD COLUMN cgroup_cpu_quota_cores REAL;
ALTER TABLE runs ADD COLUMN cgroup_cpuset_cpus INTEGER;
ALTER TABLE runs ADD COLUMN cgroup_memory_limit_bytes INTEGER;
ALTER TABLE runs ADD COLUMN slurm_job_id TEXT;
ALTER TABLE runs ADD COLUMN slurm_cpus_on_node INTEGER;
ALTER TABLE runs ADD COLUMN slurm_mem_per_node_mib INTEGER;
ALTER TABLE runs ADD COLUMN slurm_mem_per_cpu_mib INTEGER;
ALTER TABLE runs ADD COLUMN cuda_visible_devices TEXT;
ALTER TABLE runs ADD COLUMN alloc_gpus INTEGER;
-- And the peak memory charge of that cgroup when it is the job's own (run; rtrack was its only
-- process at the start and the peak grew while the job ran: docs/schema.md), bytes.
ALTER TABLE runs ADD COLUMN cgroup_memory_peak_bytes INTEGER;
