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
