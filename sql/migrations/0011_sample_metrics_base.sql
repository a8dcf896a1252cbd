-- Schema version 11: no table changes. sample_metrics (applied from sql/views.sql after this
-- upgrade) is split in two: sample_metrics_base holds every column but the six GPU ones, with
-- the same definitions, and sample_metrics adds those to it through the same joins of
-- gpu_totals and gpu_process_totals. A reader that needs no GPU column (summary and report of
-- runs without GPU rows) reads sample_metrics_base, whose statements SQLite prepares without
-- the GPU views' joins and subqueries. Same columns, same values.
SELECT 1;
