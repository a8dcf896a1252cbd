-- Schema version 14: a recording of a Slurm job step by the SPANK plugin on a node with
-- proctrack/cgroup or task/cgroup (`rtrack record --cgroup PATH`: docs/cluster.md). The step's
-- cgroup is the allocation and a second witness of what the step used:
-- cgroup_path: the cgroup the run's allocation (cgroup_cpu_quota_cores, cgroup_cpuset_cpus,
--   cgroup_memory_limit_bytes), its peak (cgroup_memory_peak_bytes) and the samples' cgroup
--   CPU (cgroup_usage_us, cgroup_cpu_s) were read from, as /proc/PID/cgroup names it
--   (".../job_4711/step_0"); NULL: rtrack's own cgroup (run), or none.
-- cgroup_oom_kills: the processes the kernel's OOM killer killed in that cgroup (and below it)
--   while the run recorded, for hitting its memory limit (v2 memory.events, v1
--   memory.oom_control: oom_kill); NULL when unknown.
-- slurm_job_state: how Slurm says the job ended, when the step's tasks were killed by a signal
--   (the plugin asks slurmctld then): CANCELLED (scancel), TIMEOUT (its time limit), or another
--   of sacct's states; NULL when the tasks exited by themselves or nobody asked. With it,
--   exit_code and exit_signal hold the step's tasks' (the largest exit code, the signal that
--   killed one), as the plugin saw them end.
ALTER TABLE runs ADD COLUMN cgroup_path TEXT;
ALTER TABLE runs ADD COLUMN cgroup_oom_kills INTEGER;
ALTER TABLE runs ADD COLUMN slurm_job_state TEXT;
