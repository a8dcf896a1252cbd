# shellcheck shell=bash
# tests/helpers/slurm_cluster.sh - a one-node Slurm cluster on this machine (sourced, not run):
# munged, `slurmctld -D` and `slurmd -D` in the background, a generated slurm.conf, the SPANK
# plugin's line in plugstack.conf. Used by tests/cli/test_slurm.sh and bench/slurm_cost.sh.
#
# The caller sets, before calling: T (an absolute directory, the working directory: the
# cluster's files go under $T/sl, the plugin's databases under $T/sdb, its logs under $T/slog),
# RTRACK (the binary) and PLUGIN (spank_rtrack.so). Needs root.
#   slurm_start             the cluster up, idle (0), or 1 after 30 s; exports SLURM_CONF
#   slurm_stop              every daemon it started and the recorders the plugin left (by pid)
#   plugstack ARGS...       the plugin's line with ARGS (interval 0.2 unless ARGS say;
#                           SLURM_INTERVAL sets it); `: >$T/sl/plugstack.conf` disables it
#   job_wait ID, job_exit ID

SLURM_PIDS=()
# munge_start DIR: a munged of its own, its key and socket (munge.sock) in DIR
munge_start() {
    dd if=/dev/urandom of="$1/munge.key" bs=1024 count=1 2>/dev/null
    chmod 400 "$1/munge.key"
    munged -F --force --socket="$1/munge.sock" --key-file="$1/munge.key" \
        --pid-file="$1/munged.pid" --seed-file="$1/munge.seed" \
        --log-file="$1/munged.log" 2>"$1/munged.err" &
    SLURM_PIDS+=($!)
}
# slurm_conf_head NAME HOST PORT DIR NODE: slurm.conf's lines of the cluster NAME with its
# controller on HOST at PORT (slurmd on PORT + 1), munge's socket, state, spool, pid and log
# files in DIR (NODE: "-%n" for a file per node of several slurmd, "" for one slurmd)
slurm_conf_head() {
    cat <<CONF
ClusterName=$1
SlurmctldHost=$2
SlurmctldPort=$3
SlurmdPort=$(($3 + 1))
AuthType=auth/munge
AuthInfo=socket=$4/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$4/state
SlurmdSpoolDir=$4/spool${5:+/%n}
SlurmctldPidFile=$4/slurmctld.pid
SlurmdPidFile=$4/slurmd$5.pid
SlurmctldLogFile=$4/slurmctld.log
SlurmdLogFile=$4/slurmd$5.log
SlurmdDebug=info
CONF
}
slurm_stop() {
    local p i left
    [ ${#SLURM_PIDS[@]} -gt 0 ] || return 0
    for p in "${SLURM_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for ((i = 0; i < 100; i++)); do
        left=0
        for p in "${SLURM_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
        [ $left = 1 ] || break
        sleep 0.05
    done
    for p in "${SLURM_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
    # the recorders the plugin started (sessions of their own) write under $T only
    for p in /proc/[0-9]*/cmdline; do
        grep -qF -- "$T/" "$p" 2>/dev/null && kill -KILL "$(basename "$(dirname "$p")")" 2>/dev/null
    done
    SLURM_PIDS=()
}
slurm_start() {
    local node mem port i
    mkdir -p sl/state sl/spool sdb slog
    munge_start "$T/sl"
    node=$(hostname -s)
    mem=$(awk '/MemTotal/ { m = int($2 / 1024) - 512; print (m > 2048 ? 2048 : m) }' /proc/meminfo)
    port=$((20000 + $$ % 20000))
    {
        slurm_conf_head "rtrack$$" "$node" "$port" "$T/sl" ""
        cat <<CONF
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
PlugStackConfig=$T/sl/plugstack.conf
NodeName=$node CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
    } >sl/slurm.conf
    plugstack "db=$T/sdb/%j.%n.db"
    export SLURM_CONF=$T/sl/slurm.conf
    for ((i = 0; i < 100; i++)); do [ -S sl/munge.sock ] && break; sleep 0.05; done
    slurmctld -D -i -f "$SLURM_CONF" >sl/slurmctld.out 2>&1 &
    SLURM_PIDS+=($!)
    slurmd -D -f "$SLURM_CONF" >sl/slurmd.out 2>&1 &
    SLURM_PIDS+=($!)
    for ((i = 0; i < 150; i++)); do
        [ "$(sinfo -h -o %t 2>/dev/null)" = idle ] && return 0
        sleep 0.2
    done
    return 1
}
# plugstack ARGS...: the plugin's line (read by every step's slurmstepd)
plugstack() {
    echo "optional $PLUGIN rtrack=$RTRACK interval=${SLURM_INTERVAL:-0.2} log=$T/slog/%j.%s.log $*" >"$T/sl/plugstack.conf"
}
# job_wait ID: until the job (every task of an array) has left the queue (60 s at most)
job_wait() {
    local i
    for ((i = 0; i < 300; i++)); do
        [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
        sleep 0.2
    done
    return 1
}
# job_exit ID: Slurm's exit code of the job, as its controller keeps it (no accounting needed)
job_exit() { scontrol show job "$1" | sed -n 's/.*[^d]ExitCode=\([0-9:]*\).*/\1/p' | head -1; }
