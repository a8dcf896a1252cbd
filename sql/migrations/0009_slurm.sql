-- Schema version 9: the rest of Slurm's facts of the job step a run belongs to, as the job's
-- environment has them (SLURM_*), or as the SPANK plugin (src/slurm/) sets them for the
-- recorder it starts for a step: the array job and task, the step ("batch" and "extern" for
-- those steps), the user, the partition, the node (SLURMD_NODENAME: one job's runs on several
-- nodes are told apart by it), the job's node and task counts, CPUs per task, the GPUs on the
-- node (count and indexes) and the time limit (newer Slurm only: end - start time). NULL when
-- unknown. An index on the job id: several databases merged read one job's runs by it.
ALTER TABLE runs ADD COLUMN slurm_array_job_id TEXT;
ALTER TABLE runs ADD COLUMN slurm_array_task_id TEXT;
ALTER TABLE runs ADD COLUMN slurm_step_id TEXT;
ALTER TABLE runs ADD COLUMN slurm_job_user TEXT;
ALTER TABLE runs ADD COLUMN slurm_job_partition TEXT;
ALTER TABLE runs ADD COLUMN slurm_nodename TEXT;
ALTER TABLE runs ADD COLUMN slurm_job_num_nodes INTEGER;
ALTER TABLE runs ADD COLUMN slurm_ntasks INTEGER;
ALTER TABLE runs ADD COLUMN slurm_cpus_per_task INTEGER;
ALTER TABLE runs ADD COLUMN slurm_gpus_on_node INTEGER;
ALTER TABLE runs ADD COLUMN slurm_job_gpus TEXT;
ALTER TABLE runs ADD COLUMN slurm_time_limit_s REAL;
CREATE INDEX runs_slurm_job ON runs (slurm_job_id);
