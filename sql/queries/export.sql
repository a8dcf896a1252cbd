-- The exporter's statements (src/export/): named here, asked for as RT_Q_EXPORT_NAME
-- (include/rtrack/store/query.h). ?1, ?2, ... are bound by the exporter.

-- The CSV layouts (the views python_combined, python_system, python_process of sql/views.sql),
-- each read two ways: a run's samples (?1 the run; ?2 and ?3 the time window, ?5 and ?6 the
-- seqs, NULL: open), or one sample (?4, the live output's). The views start with run_id, seq,
-- sample_id; the exported columns follow, by their names.

-- name: combined_run
SELECT * FROM python_combined
WHERE run_id = ?1 AND (?2 IS NULL OR timestamp >= ?2) AND (?3 IS NULL OR timestamp <= ?3)
  AND (?5 IS NULL OR seq >= ?5) AND (?6 IS NULL OR seq <= ?6)
ORDER BY seq

-- name: combined_sample
SELECT * FROM python_combined WHERE sample_id = ?4

-- name: system_run
SELECT * FROM python_system
WHERE run_id = ?1 AND (?2 IS NULL OR timestamp >= ?2) AND (?3 IS NULL OR timestamp <= ?3)
  AND (?5 IS NULL OR seq >= ?5) AND (?6 IS NULL OR seq <= ?6)
ORDER BY seq

-- name: system_sample
SELECT * FROM python_system WHERE sample_id = ?4

-- name: process_run
SELECT * FROM python_process
WHERE run_id = ?1 AND (?2 IS NULL OR timestamp >= ?2) AND (?3 IS NULL OR timestamp <= ?3)
  AND (?5 IS NULL OR seq >= ?5) AND (?6 IS NULL OR seq <= ?6)
ORDER BY seq

-- name: process_sample
SELECT * FROM python_process WHERE sample_id = ?4

-- name: seq_span
-- the first and last seq of run ?1: where a long JSON Lines export is cut in two
SELECT min(seq), max(seq) FROM samples WHERE run_id = ?1

-- name: seq_count
-- the samples of run ?1 with a seq from ?2 to ?3: whether those seqs are dense enough to share
SELECT count(*) FROM samples WHERE run_id = ?1 AND seq BETWEEN ?2 AND ?3

-- The JSON Lines (src/export/jsonl.c) and the Rust tool's CSV (src/export/rustcsv.c) are
-- written from tables of fields, each a key and the SQL of its value over the aliases below:
-- their statements are put together there from these pieces (RT_QT_EXPORT_NAME). Each pass of
-- the JSON Lines reads one table beside the sample `s`.

-- text: jsonl_sample_from
samples s JOIN runs r ON r.id = s.run_id JOIN sample_metrics m ON m.sample_id = s.id

-- text: jsonl_cores_from
samples s JOIN cpu_core_samples c ON c.sample_id = s.id

-- text: jsonl_nics_from
samples s JOIN nic_sample_rates ns ON ns.sample_id = s.id JOIN nics n ON n.id = ns.nic_id

-- text: jsonl_disks_from
samples s JOIN disk_sample_rates ds ON ds.sample_id = s.id JOIN disks d ON d.id = ds.disk_id

-- text: jsonl_disks_where
-- loop and RAM disks are not disks to the Rust reference
d.name NOT LIKE 'loop%' AND d.name NOT LIKE 'ram%'

-- text: jsonl_mounts_from
samples s JOIN mount_samples ms ON ms.sample_id = s.id JOIN mounts m ON m.id = ms.mount_id

-- text: jsonl_mounts_where
-- a filesystem mounted at several places is listed once per disk, at its first mount
m.disk IS NOT NULL AND m.id = (SELECT min(m2.id) FROM mounts m2
  JOIN mount_samples ms2 ON ms2.mount_id = m2.id AND ms2.sample_id = s.id
  WHERE m2.source = m.source AND m2.disk = m.disk)

-- text: jsonl_gpus_from
samples s JOIN gpu_samples gs ON gs.sample_id = s.id JOIN gpus gp ON gp.id = gs.gpu_id

-- text: jsonl_procs_from
samples s JOIN process_samples ps ON ps.sample_id = s.id JOIN processes p ON p.id = ps.process_id

-- text: jsonl_proc_gpu_vram
-- a process's device memory and busy share over its GPUs in the sample
(SELECT sum(x.vram_used_bytes) FROM gpu_process_samples x
 WHERE x.sample_id = s.id AND x.process_id = p.id)

-- text: jsonl_proc_gpu_util
(SELECT sum(x.util_pct) FROM gpu_process_samples x WHERE x.sample_id = s.id AND x.process_id = p.id)

-- text: rustcsv_from
sample_metrics m JOIN samples s ON s.id = m.sample_id
