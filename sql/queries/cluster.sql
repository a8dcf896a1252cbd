-- One Slurm job across its nodes (src/summary/cluster.c): RT_Q_CLUSTER_NAME. ?1 is the job's
-- id: runs.slurm_job_id, or slurm_array_job_id (every task of an array), or ARRAY_TASK (one
-- task of an array, as sacct names it: 4700_11).

-- name: runs
-- a node's runs, one row per run, in (job, node) order: the job and node, the step, the start
-- and end, the CPU seconds (the kernel's for `rtrack run`, else the step cgroup's for a record
-- --cgroup, else the sampled tree's) and where they came from, the GPUs allocated, the tasks,
-- nodes and time limit Slurm gave, the array's ids; then what the allocation is decided from
-- (cluster.c): Slurm's CPUs and memory, the cgroup's quota, cpuset and limit, the cgroup's
-- path (a Slurm step's for the plugin's recordings); then the step cgroup's peak, the largest
-- process's peak, and how the step ended (exit code and signal, OOM kills, Slurm's state)
SELECT r.slurm_job_id, coalesce(r.slurm_nodename, r.host_hostname, '-'),
       coalesce(r.slurm_step_id, '-'), r.started_at,
       coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id), r.started_at),
       coalesce(r.job_utime_s + r.job_stime_s,
                CASE WHEN r.cgroup_path IS NOT NULL THEN
                  (SELECT sum(cgroup_cpu_s) FROM samples WHERE run_id = r.id) END,
                (SELECT sum(process_utime + process_stime) FROM sample_metrics
                 WHERE run_id = r.id)),
       CASE WHEN r.job_utime_s + r.job_stime_s IS NOT NULL THEN 'kernel'
            WHEN r.cgroup_path IS NOT NULL AND
                 (SELECT count(cgroup_cpu_s) FROM samples WHERE run_id = r.id) > 0 THEN 'cgroup'
            ELSE 'tree' END,
       coalesce(r.slurm_gpus_on_node, r.alloc_gpus),
       r.slurm_ntasks, r.slurm_job_num_nodes, r.slurm_time_limit_s, r.slurm_array_job_id,
       r.slurm_array_task_id,
       r.slurm_cpus_on_node, r.slurm_mem_per_node_mib, r.slurm_mem_per_cpu_mib,
       r.cgroup_cpu_quota_cores, r.cgroup_cpuset_cpus, r.cgroup_memory_limit_bytes / 1048576.0,
       r.cgroup_path,
       r.cgroup_memory_peak_bytes / 1048576.0,
       (SELECT max(coalesce(ps.pss_kib, ps.rss_kib)) FROM process_samples ps
        JOIN samples s ON s.id = ps.sample_id WHERE s.run_id = r.id) / 1024.0,
       r.exit_code, r.exit_signal, r.cgroup_oom_kills, r.slurm_job_state, r.proc_memory_source
FROM runs r WHERE r.slurm_job_id = ?1 OR r.slurm_array_job_id = ?1
   OR r.slurm_array_job_id || '_' || r.slurm_array_task_id = ?1
ORDER BY 1, 2, r.started_at, r.id

-- name: peaks
-- per node: the peaks of what its steps used at once, summed second by second (each run's
-- highest memory and mean cores in that second)
WITH per AS (
  SELECT r.slurm_job_id AS job, coalesce(r.slurm_nodename, r.host_hostname, '-') AS node,
         CAST(m.timestamp AS INTEGER) AS b, max(m.process_memory_mib) AS mem,
         avg((m.process_utime + m.process_stime) / m.interval_s) AS cores,
         max(m.process_gpu_utilized) AS gpus
  FROM sample_metrics m JOIN runs r ON r.id = m.run_id
  WHERE (r.slurm_job_id = ?1 OR r.slurm_array_job_id = ?1
         OR r.slurm_array_job_id || '_' || r.slurm_array_task_id = ?1) AND m.interval_s > 0
  GROUP BY m.run_id, b),
node AS (SELECT job, node, sum(mem) AS mem, sum(cores) AS cores, sum(gpus) AS gpus
         FROM per GROUP BY job, node, b)
SELECT job, node, max(mem), max(cores), max(gpus) FROM node GROUP BY job, node
