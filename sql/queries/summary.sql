-- The summary's statements (src/summary/summary.c, pass.c, top.c): named here, asked for as
-- RT_Q_SUMMARY_NAME (include/rtrack/store/query.h). The runs a summary covers are bound as a
-- JSON array of their ids (?1 = '[3]' or '[1,2,5]': `IN (SELECT value FROM json_each(?1))`).
-- A statement's columns are read by position: the C side names them in the same order.

-- name: job_runs
-- the runs of job ?1, oldest first
SELECT id FROM runs WHERE job_name = ?1 ORDER BY id

-- name: run_exists
SELECT id FROM runs WHERE id = ?1

-- name: plan
-- per run of ?1: its first and last seq, whether seq 0 is its baseline, its requested interval,
-- and its rows counted up to ?2 (a run of at most a stretch is planned without the two below)
SELECT r.id, (SELECT min(seq) FROM samples WHERE run_id = r.id),
       (SELECT max(seq) FROM samples WHERE run_id = r.id),
       EXISTS (SELECT 1 FROM samples WHERE run_id = r.id AND seq = 0 AND kind = 'baseline'),
       r.requested_interval_s,
       (SELECT count(*) FROM (SELECT 1 FROM samples WHERE run_id = r.id LIMIT ?2))
FROM runs r WHERE r.id IN (SELECT value FROM json_each(?1)) ORDER BY r.id

-- name: stretch_end
-- the seq ?3 rows on from seq ?2 in run ?1's (run_id, seq) index: where a stretch ends
SELECT seq FROM samples WHERE run_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT 1 OFFSET ?3

-- name: stretch_count
SELECT count(*) FROM samples WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3

-- name: runs_have_gpus
-- whether any sample of the runs ?1 has GPU rows: gpu_samples read first (CROSS JOIN), so a
-- database without GPUs answers at once rather than looking up each sample of the runs
SELECT EXISTS (SELECT 1 FROM gpu_samples g CROSS JOIN samples s ON s.id = g.sample_id
               WHERE s.run_id IN (SELECT value FROM json_each(?1)))

-- name: facts
-- run ?1's facts and its host's, in struct rt_summary_run's and rt_summary_host's order
SELECT r.id, r.uuid, r.mode, (SELECT status FROM run_status WHERE run_id = r.id),
       (SELECT status FROM run_status WHERE run_id = r.id) = 'running', r.command,
       r.job_name, r.project_name, r.stage_name, r.task_name, r.team, r.env, r.language,
       r.orchestrator, r.executor, r.external_run_id, r.container_image,
       (SELECT json_group_object(key, value) FROM
          (SELECT key, value FROM run_tags WHERE run_id = r.id ORDER BY position)),
       r.pid, r.exit_code, r.exit_signal, r.end_reason, r.started_at, r.ended_at,
       coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) - r.started_at,
       n.samples, r.requested_interval_s,
       r.host_hostname, r.host_cpu_model, r.host_vcpus, r.host_memory_kib / 1024.0,
       r.host_kernel, r.host_os, g.host_gpu_model, g.host_gpu_count, g.host_gpu_memory_mib,
       r.proc_memory_source, r.cpu_wait_missing, r.psi_missing
FROM runs r JOIN run_sample_counts n ON n.run_id = r.id
     LEFT JOIN host_gpus g ON g.run_id = r.id
WHERE r.id = ?1

-- name: allocation
-- the runs' allocation columns (migration 0007), oldest first, in struct rt_alloc_in's order,
-- then the kernel's CPU time, the wall time and the cgroup's peak
SELECT slurm_cpus_on_node, cgroup_cpu_quota_cores, cgroup_cpuset_cpus, host_vcpus,
       slurm_mem_per_node_mib, slurm_mem_per_cpu_mib, cgroup_memory_limit_bytes,
       host_memory_kib, alloc_gpus, slurm_job_id,
       job_utime_s + job_stime_s, ended_at - started_at, cgroup_memory_peak_bytes
FROM runs WHERE id IN (SELECT value FROM json_each(?1)) ORDER BY id

-- name: kernel
-- what the kernel kept of the runs' reaped jobs (runs.job_*, migration 0007), and of how many
SELECT max(job_maxrss_kib) / 1024.0, sum(job_utime_s), sum(job_stime_s), count(*)
FROM runs WHERE id IN (SELECT value FROM json_each(?1)) AND job_maxrss_kib IS NOT NULL
  AND job_utime_s IS NOT NULL AND job_stime_s IS NOT NULL

-- name: wall
-- the runs' wall times together (a run still recording: to its last sample)
SELECT sum(coalesce(r.ended_at, (SELECT max(ts) FROM samples WHERE run_id = r.id)) - r.started_at)
FROM runs r WHERE r.id IN (SELECT value FROM json_each(?1))

-- name: run_end
-- how run ?1 ended: for the recommendation's caveat (the OOM kills: its cgroup's, a Slurm
-- step's, else the host's while it ran)
SELECT exit_code, exit_signal, ended_at - started_at, coalesce(cgroup_oom_kills, host_oom_kills)
FROM runs WHERE id = ?1

-- name: since_start
-- the moment ?2 (epoch s) in seconds after run ?1's start
SELECT ?2 - started_at FROM runs WHERE id = ?1

-- name: peak_processes
-- the processes of sample ?1 by PSS, largest first
SELECT p.pid, p.name, ps.pss_kib / 1024.0 FROM process_samples ps
JOIN processes p ON p.id = ps.process_id
WHERE ps.sample_id = ?1 AND ps.pss_kib IS NOT NULL ORDER BY ps.pss_kib DESC, p.pid

-- name: pressure
-- the clock and the cumulative CPU pressure (PSI "some", us) of run ?1's sample of seq ?2
SELECT mono, psi_cpu_some_us FROM samples WHERE run_id = ?1 AND seq = ?2

-- name: processes
-- the runs' processes: id and pid
SELECT id, pid FROM processes WHERE run_id IN (SELECT value FROM json_each(?1))

-- name: sample_ids
-- run ?1's first and last sample id (a run's samples are one range of ids)
SELECT min(id), max(id) FROM samples WHERE run_id = ?1

-- name: process_rows
-- every process row of the samples ?1 to ?2: CPU seconds of the interval, PSS
SELECT process_id, coalesce(cpu_utime_s, 0) + coalesce(cpu_stime_s, 0), pss_kib
FROM process_samples WHERE sample_id BETWEEN ?1 AND ?2

-- name: process_name
SELECT name FROM processes WHERE id = ?1

-- name: process_members
-- the runs' processes by name (comm), with the parent and the argv joined with spaces
SELECT id, coalesce(name, '?'), ppid,
       (SELECT group_concat(value, ' ') FROM json_each(p.cmdline))
FROM processes p WHERE run_id IN (SELECT value FROM json_each(?1))
