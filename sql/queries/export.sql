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
