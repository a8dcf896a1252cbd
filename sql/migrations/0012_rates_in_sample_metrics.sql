-- Schema version 12: no table changes. The per-second rates of a sample's interval move from
-- sample_rates into sample_metrics_base (applied from sql/views.sql after this upgrade), which
-- now reads `samples` itself instead of through sample_rates, and sample_metrics and
-- sample_metrics_base gain cgroup_cores. sample_rates takes its rates from sample_metrics_base.
-- Same definitions, same values; a statement over sample_metrics_base is prepared in about half
-- the time (the end-of-run line's, docs/performance.md).
SELECT 1;
