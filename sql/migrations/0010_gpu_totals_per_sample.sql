-- Schema version 10: no table changes. The gpu_totals and gpu_process_totals views (applied
-- from sql/views.sql after this upgrade) are no longer aggregates over the whole of
-- gpu_samples and gpu_process_samples: SQLite materialized those over every GPU row of the file
-- each time a statement read sample_metrics, so a live line for one sample read every GPU row
-- recorded so far and a reader's memory grew with the run. Same columns, same values.
SELECT 1;
