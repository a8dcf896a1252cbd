#!/usr/bin/env bash
# Slurm: the facts `rtrack run` records inside an allocation (SLURM_* set by hand), merge and the
# readers over several databases (two simulated nodes of one job), and a real one-node cluster
# (Debian's slurmctld, slurmd, munge; the SPANK plugin in plugstack.conf) running jobs that name
# no rtrack.
. "$(dirname "$0")/lib.sh" "$1"

# --- 1. the facts of a Slurm allocation, without the plugin -----------------------------------
# every variable of the table, as sbatch/srun set them (values made up, each distinct)
slurm_env=(SLURM_JOB_ID=4711 SLURM_ARRAY_JOB_ID=4700 SLURM_ARRAY_TASK_ID=11 SLURM_STEP_ID=3
    SLURM_JOB_USER=alice SLURM_JOB_PARTITION=gpu SLURMD_NODENAME=node07 SLURM_JOB_NUM_NODES=2
    SLURM_NTASKS=4 SLURM_CPUS_PER_TASK=2 SLURM_CPUS_ON_NODE=4 SLURM_MEM_PER_NODE=2048
    SLURM_GPUS_ON_NODE=2 SLURM_JOB_GPUS=0,3 SLURM_JOB_START_TIME=1700000000
    SLURM_JOB_END_TIME=1700003600)
env "${slurm_env[@]}" "$RTRACK" run --quiet --db facts.db --interval 0.1 -- true
check "facts: run exits 0" "$?" 0
check "facts: every SLURM_* fact stored as set" "$(q facts.db "SELECT slurm_job_id, \
slurm_array_job_id, slurm_array_task_id, slurm_step_id, slurm_job_user, slurm_job_partition, \
slurm_nodename, slurm_job_num_nodes, slurm_ntasks, slurm_cpus_per_task, slurm_cpus_on_node, \
slurm_mem_per_node_mib, slurm_gpus_on_node, slurm_job_gpus, slurm_time_limit_s FROM runs")" \
    "4711|4700|11|3|alice|gpu|node07|2|4|2|4|2048|2|0,3|3600.0"
# outside Slurm: nothing of it
env -u SLURM_JOB_ID -u SLURMD_NODENAME -u SLURM_STEP_ID "$RTRACK" run --quiet --db none.db \
    --interval 0.1 -- true
check "facts: none outside an allocation" "$(q none.db "SELECT count(*) FROM runs WHERE \
coalesce(slurm_job_id, slurm_nodename, slurm_step_id, slurm_ntasks) IS NULL")" 1
# a count that is not a whole number is not known
SLURM_NTASKS=two SLURM_JOB_NUM_NODES=-1 "$RTRACK" run --quiet --db bad.db --interval 0.1 -- true
check "facts: a count that is no whole number is unknown" \
    "$(q bad.db "SELECT coalesce(slurm_ntasks, 'null') || coalesce(slurm_job_num_nodes, 'null') FROM runs")" \
    "nullnull"

finish
