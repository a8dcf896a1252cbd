-- Schema version 5.
-- 1. The run's interval is the one asked for; each sample's interval_s is the one measured:
--    the run's column says so by its name now.
-- 2. The cloud the run was recorded on (collect/cloud.h), a fact of the recording like the
--    host's: discovered while recording, when streaming to Sentinel or asked for
--    (--cloud-discovery), and sent by `rtrack upload` as recorded; NULL when not asked or not
--    on a cloud.
-- 3. The views gained the per-second rates (sample_rates, nic_sample_rates, disk_sample_rates),
--    the Python columns and rates per sample that summary and report read (sample_metrics) and
--    the samples after the baseline per run (run_sample_counts); views live in sql/views.sql,
--    applied after every upgrade.
ALTER TABLE runs RENAME COLUMN interval_s TO requested_interval_s;
ALTER TABLE runs ADD COLUMN cloud_vendor_id TEXT;
ALTER TABLE runs ADD COLUMN cloud_account_id TEXT;
ALTER TABLE runs ADD COLUMN cloud_region_id TEXT;
ALTER TABLE runs ADD COLUMN cloud_zone_id TEXT;
ALTER TABLE runs ADD COLUMN cloud_instance_type TEXT;
