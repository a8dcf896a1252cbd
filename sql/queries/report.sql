-- The report's statements (src/summary/report_data.c): RT_Q_REPORT_NAME. ?1 is the run's id
-- unless said otherwise.

-- name: range
-- the samples after the baseline (run_sample_counts), and the clock of the first of them, of
-- the last, and of the baseline (the charts' origin): a run's samples are taken one after the
-- other on one monotonic clock, so these are its smallest and largest, found in the
-- (run_id, seq) index rather than read from every sample
SELECT (SELECT samples FROM run_sample_counts WHERE run_id = ?1),
       (SELECT mono FROM samples WHERE run_id = ?1 AND kind <> 'baseline' ORDER BY seq LIMIT 1),
       (SELECT mono FROM samples WHERE run_id = ?1 AND kind <> 'baseline'
        ORDER BY seq DESC LIMIT 1),
       (SELECT mono FROM samples WHERE run_id = ?1 ORDER BY seq LIMIT 1)

-- name: stack_top
-- the five processes with the largest PSS at the samples ?1 (a JSON array of sample ids: the
-- ones the memory chart's points come from): id, pid, name. CROSS JOIN keeps json_each the
-- outer loop: left to itself SQLite 3.40 reads every row of the five processes through
-- process_samples_by_process and scans the list for each (12 s for 100 000 samples)
SELECT t.process_id, p.pid, p.name
FROM (SELECT ps.process_id, max(ps.pss_kib) AS peak
      FROM json_each(?1) j CROSS JOIN process_samples ps ON ps.sample_id = j.value
      WHERE ps.pss_kib > 0 GROUP BY ps.process_id
      ORDER BY peak DESC, ps.process_id LIMIT 5) t
JOIN processes p ON p.id = t.process_id ORDER BY t.peak DESC, t.process_id

-- name: stack_rows
-- the PSS of processes ?2 to ?6 at the samples ?1 (as above): sample, process, KiB
SELECT ps.sample_id, ps.process_id, ps.pss_kib
FROM json_each(?1) j CROSS JOIN process_samples ps ON ps.sample_id = j.value
WHERE ps.process_id IN (?2, ?3, ?4, ?5, ?6) AND ps.pss_kib IS NOT NULL

-- name: gpu_processes
-- the tree's processes on GPUs: per process, the GPUs it used, its peak device memory (summed
-- over its GPUs in a sample, MiB), its SM/gfx busy share, mean and peak, and the samples it
-- was on a GPU in; the ten with the most memory
SELECT pr.pid, pr.name, max(t.gpus), max(t.vram), avg(t.util), max(t.util), count(*)
FROM (SELECT g.sample_id, g.process_id, count(DISTINCT g.gpu_id) AS gpus,
             sum(g.vram_used_bytes) / 1048576.0 AS vram, sum(g.util_pct) AS util
      FROM gpu_process_samples g JOIN processes pp ON pp.id = g.process_id
      WHERE pp.run_id = ?1 GROUP BY g.sample_id, g.process_id) t
JOIN processes pr ON pr.id = t.process_id GROUP BY t.process_id
ORDER BY max(t.vram) DESC, avg(t.util) DESC, pr.pid LIMIT 10
