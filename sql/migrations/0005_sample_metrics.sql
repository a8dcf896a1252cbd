-- Schema version 5: the views gained the per-second rates (sample_rates, nic_sample_rates,
-- disk_sample_rates), the Python columns and rates per sample that summary and report read
-- (sample_metrics) and the samples after the baseline per run (run_sample_counts). Views hold
-- no data: they live in sql/views.sql, applied after every upgrade; this migration only marks
-- the version, so that a database of version 4 gets them when it is opened.
SELECT 1;
