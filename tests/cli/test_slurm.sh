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
    SLURM_GPUS_ON_NODE=2 "SLURM_JOB_GPUS=0,3" SLURM_JOB_START_TIME=1700000000
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

# --- 2. merge, and the readers over several databases: two simulated nodes of job 77 ----------
# node a runs two steps at once (a1, a2: one database), node b one step (b.db); the kernel's CPU
# times, the start and end and the memory of every sample are then set to figures chosen here,
# so every total below is worked out by hand from them
node_env() { env SLURM_JOB_ID=77 SLURMD_NODENAME="$1" SLURM_STEP_ID="$2" SLURM_CPUS_ON_NODE=2 \
    SLURM_MEM_PER_NODE=1024 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS=2 "${@:3}"; }
node_env a 0 "$RTRACK" run --quiet --db a.db --interval 0.2 --tag step=a1 -- sleep 1.5 &
a1=$!
node_env a 1 "$RTRACK" run --quiet --db a.db --interval 0.2 --tag step=a2 -- sleep 1.5 &
a2=$!
node_env b 0 "$RTRACK" run --quiet --db b.db --interval 0.2 -- sleep 1.5
wait_exit "$a1" 20
wait_exit "$a2" 20
"$RTRACK" run --quiet --db b.db --interval 0.1 -- true # another job's run, not job 77's
set_run() { # DB TAG-OR-NODE UTIME STIME START END PSS_KIB
    q "$1" "UPDATE runs SET job_utime_s = $3, job_stime_s = $4, started_at = $5, ended_at = $6
        WHERE id = $2; UPDATE samples SET proc_pss_kib = $7 WHERE run_id = $2"
}
a1id=$(q a.db "SELECT run_id FROM run_tags WHERE value = 'a1'")
a2id=$(q a.db "SELECT run_id FROM run_tags WHERE value = 'a2'")
set_run a.db "$a1id" 3 1 1000 1010 524288  # 4 s CPU, 512 MiB
set_run a.db "$a2id" 0.5 0.5 1002 1006 131072 # 1 s CPU, 128 MiB, at the same time as a1
set_run b.db 1 5 1 1000.5 1009 262144     # 6 s CPU, 256 MiB
# (the samples keep their real times: a1 and a2 ran at once, so node a's peak is 512 + 128)

# what each input holds per run (by UUID), deep rows included
per_uuid() { q "$1" "SELECT r.uuid, (SELECT count(*) FROM samples WHERE run_id = r.id),
    (SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id
     WHERE s.run_id = r.id), (SELECT count(*) FROM cpu_core_samples c JOIN samples s
     ON s.id = c.sample_id WHERE s.run_id = r.id), (SELECT count(*) FROM disk_samples d
     JOIN samples s ON s.id = d.sample_id JOIN disks k ON k.id = d.disk_id AND k.run_id = r.id
     WHERE s.run_id = r.id), (SELECT group_concat(key || '=' || value) FROM run_tags
     WHERE run_id = r.id), r.job_utime_s, r.slurm_nodename FROM runs r ORDER BY r.uuid"; }
{ per_uuid a.db; per_uuid b.db; } | sort >want.txt
"$RTRACK" merge all.db a.db b.db >merge1.out
check "merge: exit 0" "$?" 0
check "merge: says what it added" "$(cat merge1.out)" "a.db: 2 runs added, 0 already in all.db
b.db: 2 runs added, 0 already in all.db"
per_uuid all.db | sort >got.txt
check_cmd "merge: every run with all its rows, each under its own run (by UUID)" \
    diff -u want.txt got.txt
check "merge: no dangling reference" "$(q all.db 'PRAGMA foreign_key_check')" ""
counts() { q all.db "SELECT (SELECT count(*) FROM runs) || ' ' || (SELECT count(*) FROM samples)
    || ' ' || (SELECT count(*) FROM process_samples) || ' ' || (SELECT count(*) FROM processes)"; }
before=$(counts)
"$RTRACK" merge all.db b.db a.db >merge2.out
check "merge twice: nothing added" "$(cat merge2.out)" "b.db: 0 runs added, 2 already in all.db
a.db: 0 runs added, 2 already in all.db"
check "merge twice: the same rows" "$(counts)" "$before"
"$RTRACK" merge --quiet --slurm-job 77 job.db a.db b.db
check "merge --slurm-job: only the job's runs" "$(q job.db "SELECT count(*) || ' ' ||
    count(DISTINCT slurm_job_id) || ' ' || min(slurm_job_id) FROM runs")" "3 1 77"
"$RTRACK" merge all.db all.db >/dev/null 2>self.err
check "merge: the output as an input is refused" "$?:$(grep -c 'is the output itself' self.err)" "1:1"
"$RTRACK" merge all.db 2>/dev/null
check "merge: no input is a usage error" "$?" 2

# the readers: several --db, a glob, --slurm-job; the private merge is removed afterwards
mkdir tmp
export TMPDIR=$T/tmp
check "runs: two databases as one" "$("$RTRACK" runs --db a.db --db b.db --format csv | tail -n +2 | wc -l)" 4
check "runs: a glob" "$("$RTRACK" runs --db '[ab].db' --format csv | tail -n +2 | wc -l)" 4
check "runs --slurm-job: the job's runs" \
    "$("$RTRACK" runs --db '[ab].db' --slurm-job 77 --format csv | tail -n +2 | wc -l)" 3
"$RTRACK" export --db a.db --db b.db --slurm-job 77 --run 1 --format jsonl >/dev/null
check "export: several databases" "$?" 0
"$RTRACK" runs --db 'zz*.db' 2>/dev/null
check "a glob that matches nothing: exit 2" "$?" 2
"$RTRACK" summary --db a.db --slurm-job 4242 2>/dev/null
check "summary: a job with no run: exit 2" "$?" 2
check "the private merges are removed" "$(ls tmp)" ""

"$RTRACK" summary --db a.db --db b.db --slurm-job 77 --format json >job.json
check "summary --slurm-job: exit 0" "$?" 0
# by hand: node a CPU 4 + 1 = 5 s, b 6 s; the job's wall 1000 -> 1010 = 10 s; 2 CPUs allocated
# on each node: a 5 / (2 x 10) = 25 %, b 6 / 20 = 30 %, the job 11 / (4 x 10) = 27.5 %; memory
# peaks a 512 + 128 = 640 MiB (two steps at once), b 256; allocated 1024 each: a 62.5 %, b 25 %,
# the job (640 + 256) / 2048 = 43.75 % (43.8); next time per node: ceil(0.5) = ceil(0.6) = 1 CPU,
# memory a 640 x 1.2 = 768 -> 1024, b 307.2 -> 512; --mem the larger: 1G; 2 tasks on 2 nodes:
# 1 per node; --time 10 x 1.5 = 15 s -> 1 minute
check "summary --slurm-job: per node and the job, by hand" "$(python3 - job.json <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
out = []
for n in j["nodes"]:
    out.append("%s %s %s %s %s %s %s %s %s" % (n["node"], n["steps"], n["runs"], n["cpu_s"],
               n["cpu_eff_pct"], n["memory_peak_mib"], n["memory_eff_pct"],
               n["recommended"]["cpus"], n["recommended"]["memory_mib"]))
t = j["job"]
out.append("job %s %s %s %s %s %s %s %s %s" % (t["nodes"], t["wall_s"], t["cpu_s"], t["alloc_cpus"],
           t["cpu_eff_pct"], t["memory_peak_mib"], t["memory_peak_max_node_mib"],
           t["memory_eff_pct"], t["alloc_memory_mib"]))
out.append(t["sbatch"])
print("\n".join(out))
PY
)" "a 0,1 2 5 25 640 62.5 1 1024
b 0 1 6 30 256 25 1 512
job 2 10 11 4 27.5 896 640 43.8 2048
--nodes=2 --ntasks-per-node=1 --cpus-per-task=1 --mem=1G --time=0:01:00"
"$RTRACK" summary --db a.db --db b.db --slurm-job 77 >job.txt
check "summary --slurm-job: the text has a row per node, the total and sbatch" \
    "$(grep -c -E '^  (a|b|job total) ' job.txt) $(grep -c -- '^next time: sbatch --nodes=2' job.txt)" "3 1"

finish
