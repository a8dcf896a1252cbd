-- One Slurm job across its nodes (src/summary/cluster.c): RT_Q_CLUSTER_NAME. ?1 is the job's
-- id: runs.slurm_job_id, or slurm_array_job_id (every task of an array).

-- name: runs
-- a node's runs, one row per run, in (job, node) order: the job and node, the step, the start
-- and end, the CPU seconds (the kernel's, else the sampled tree's), the allocation (Slurm's,
-- else the cgroup's), the tasks, nodes and time limit Slurm gave, the array's ids
SELECT r.slurm_job_id, coalesce(r.slurm_nodename, r.host_hostname, '-'),
       coalesce(r.slurm_step_id, '-'), r.started_at,
       coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id), r.started_at),
       coalesce(r.job_utime_s + r.job_stime_s,
                (SELECT sum(process_utime + process_stime) FROM sample_metrics
                 WHERE run_id = r.id)),
       coalesce(r.slurm_cpus_on_node, r.cgroup_cpu_quota_cores, r.cgroup_cpuset_cpus),
       coalesce(r.slurm_mem_per_node_mib, r.slurm_mem_per_cpu_mib * r.slurm_cpus_on_node,
                r.cgroup_memory_limit_bytes / 1048576.0),
       coalesce(r.slurm_gpus_on_node, r.alloc_gpus),
       r.slurm_ntasks, r.slurm_job_num_nodes, r.slurm_time_limit_s, r.slurm_array_job_id,
       r.slurm_array_task_id
FROM runs r WHERE r.slurm_job_id = ?1 OR r.slurm_array_job_id = ?1
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
  WHERE (r.slurm_job_id = ?1 OR r.slurm_array_job_id = ?1) AND m.interval_s > 0
  GROUP BY m.run_id, b),
node AS (SELECT job, node, sum(mem) AS mem, sum(cores) AS cores, sum(gpus) AS gpus
         FROM per GROUP BY job, node, b)
SELECT job, node, max(mem), max(cores), max(gpus) FROM node GROUP BY job, node
