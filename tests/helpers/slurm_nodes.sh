# shellcheck shell=bash
# tests/helpers/slurm_nodes.sh - a two-node Slurm cluster on this machine, as sites run it
# (sourced, not run): one slurmctld, slurmdbd over a private MariaDB (so sacct works), munged,
# and two slurmd, n1 and n2, each in a network, UTS, mount and cgroup namespace of its own
# (Debian's Slurm 22.05 has no multiple-slurmd); ProctrackType=proctrack/cgroup,
# TaskPlugin=task/cgroup, JobAcctGatherType=jobacct_gather/cgroup on the machine's cgroup v1
# hierarchies. Used by tests/cli/test_slurm_nodes.sh.
#
# Each node's cgroup namespace is rooted at a cgroup the helper makes for it in every v1
# hierarchy (below the suite's own: .../rtslurm2-PID-nI), and the node's mount namespace has
# those hierarchies mounted again at /sys/fs/cgroup: inside a node, /proc/PID/cgroup and
# /sys/fs/cgroup read as on a node of its own (slurm_nI/uid_U/job_J/step_S), and the two
# nodes' cgroups of one job never meet. Traffic only between addresses of namespaces made here:
# a bridge with an address of its own in the root namespace (slurmctld, slurmdbd) and one veth
# per node; MariaDB listens on a Unix socket only.
#
# The caller sets T (an absolute directory: the cluster's files under $T/sn, the plugin's
# databases under $T/sdb and logs under $T/slog), RTRACK and PLUGIN, and sources
# slurm_cluster.sh first (plugstack, job_wait, job_exit, munge_start, slurm_conf_head and
# SLURM_PIDS are its). Needs root.
#   nodes_can_run          0, or 1 with the reason in NODES_WHY (not root, no cgroup v1, no
#                          slurmdbd or MariaDB)
#   nodes_start            the cluster up, both nodes idle: 0, or 1 (after 30 s at most)
#   nodes_stop             every daemon, recorder, namespace, link and cgroup made, gone;
#                          0 when nothing is left, else 1 with what is in NODES_LEFT
#   in_node N CMD...       CMD in node N's namespaces (its cgroup hierarchies at /sys/fs/cgroup)
#   node_cg N MOUNTPOINT   the directory (root namespace) of node N's cgroup in a v1 hierarchy

SN_TAG=rtslurm2-$$
SN_NETNS=()
SN_CGDIRS=()
SN_LINKS=()
SN_PREFIX=""
# the v1 hierarchies: "MOUNTPOINT CONTROLLERS" lines
sn_hierarchies() { awk '$3 == "cgroup" { print $2 }' /proc/mounts; }

nodes_can_run() {
    NODES_WHY=""
    if [ "$(id -u)" != 0 ]; then
        NODES_WHY="a Slurm cluster with namespaces needs root"
    elif [ ! -d /sys/fs/cgroup/memory ] || [ ! -d /sys/fs/cgroup/cpuset ] ||
        [ ! -d /sys/fs/cgroup/freezer ] || [ ! -d /sys/fs/cgroup/cpuacct ]; then
        # (a cgroup v2 host: slurmd's cgroup/v2 wants systemd's delegation, not set up here)
        NODES_WHY="no cgroup v1 hierarchies (memory, cpuset, freezer, cpuacct) at /sys/fs/cgroup: the two-node cluster's cgroup setup is written and checked for cgroup v1 only"
    elif ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null ||
        ! command -v sacct >/dev/null; then
        NODES_WHY="slurmdbd or MariaDB is not installed (slurmdbd mariadb-server: scripts/bootstrap.sh)"
    elif ! command -v unshare >/dev/null || ! command -v nsenter >/dev/null || ! command -v ip >/dev/null; then
        NODES_WHY="unshare, nsenter or ip is missing"
    fi
    [ -z "$NODES_WHY" ]
}

# a /24 no route of this machine uses yet
sn_subnet() {
    local i n
    for ((i = 0; i < 50; i++)); do
        n=$((($$ + i * 37) % 250 + 1))
        ip route | grep -q "^10\.213\.$n\." || {
            echo "10.213.$n"
            return 0
        }
    done
    return 1
}

sn_network() {
    local i br=rs2b$$
    SN_PREFIX=$(sn_subnet) || return 1
    ip link add "$br" type bridge && SN_LINKS+=("$br") || return 1
    ip addr add "$SN_PREFIX.1/24" dev "$br" && ip link set "$br" up || return 1
    for i in 1 2; do
        ip netns add "$SN_TAG-n$i" && SN_NETNS+=("$SN_TAG-n$i") || return 1
        ip link add "rs2h$i$$" type veth peer name "rs2n$i$$" && SN_LINKS+=("rs2h$i$$") || return 1
        ip link set "rs2n$i$$" netns "$SN_TAG-n$i" &&
            ip link set "rs2h$i$$" master "$br" && ip link set "rs2h$i$$" up &&
            ip netns exec "$SN_TAG-n$i" ip addr add "$SN_PREFIX.$((i + 1))/24" dev "rs2n$i$$" &&
            ip netns exec "$SN_TAG-n$i" ip link set "rs2n$i$$" up &&
            ip netns exec "$SN_TAG-n$i" ip link set lo up || return 1
    done
}

node_cg() { echo "$2$(awk -F: -v c="${2##*/}" '{ n = split($2, a, ","); for (i = 1; i <= n; i++)
    if (a[i] == c || a[i] == "name=" c) print $3 }' /proc/$$/cgroup | sed 's|^/$||')/$SN_TAG-n$1"; }

# a cgroup per node in every v1 hierarchy, below the suite's own (cpuset's CPUs and memory
# nodes copied from its parent: an empty cpuset takes no process)
sn_cgroups() {
    local i mp d
    for i in 1 2; do
        for mp in $(sn_hierarchies); do
            d=$(node_cg "$i" "$mp")
            mkdir "$d" || return 1
            SN_CGDIRS+=("$d")
            if [ -f "$d/cpuset.cpus" ]; then
                cat "${d%/*}/cpuset.cpus" >"$d/cpuset.cpus" && cat "${d%/*}/cpuset.mems" >"$d/cpuset.mems" || return 1
            fi
        done
    done
}

# the body a node's namespaces run: its hierarchies mounted again, its hostname, then CMD
SN_INNER='mount -t tmpfs -o mode=755 rtslurm2 /sys/fs/cgroup || exit 1
for m in $SN_MOUNTS; do
    mkdir -p "/sys/fs/cgroup/${m%%=*}" && mount -t cgroup -o "${m#*=}" cgroup "/sys/fs/cgroup/${m%%=*}" || exit 1
done
hostname "$SN_NODE" && exec "$@"'

# sn_enter N CMD...: CMD as the first process of node N: into its cgroups, then its namespaces
sn_enter() {
    local n=$1 mp mounts=""
    shift
    for mp in $(sn_hierarchies); do
        echo $BASHPID >"$(node_cg "$n" "$mp")/cgroup.procs" || return 1
        mounts="$mounts ${mp##*/}=$(awk -v m="$mp" '$2 == m { print $4 }' /proc/mounts |
            tr ',' '\n' | grep -vE '^(rw|ro|relatime|noatime|nosuid|nodev|noexec)$' | paste -sd,)"
    done
    SN_MOUNTS=$mounts SN_NODE=n$n exec nsenter --net="/run/netns/$SN_TAG-n$n" \
        unshare --uts --mount --cgroup --propagation private sh -c "$SN_INNER" rtslurm2 "$@"
}
# in_node N CMD...: CMD inside node N (a fresh set of the node's namespaces but its network's
# and its cgroups'), waited for
in_node() { (sn_enter "$@"); }

# the database's files (in the background: it takes a few seconds), then the server, on a Unix
# socket only
sn_mariadb_init() {
    mkdir -p "$T/sn/db"
    mariadb-install-db --no-defaults --datadir="$T/sn/db/data" --auth-root-authentication-method=normal \
        --skip-test-db --user=root >"$T/sn/db/install.log" 2>&1
}
sn_mariadb() {
    mariadbd --no-defaults --datadir="$T/sn/db/data" --socket="$T/sn/db/sock" \
        --pid-file="$T/sn/db/pid" --skip-networking --user=root --log-error="$T/sn/db/err.log" \
        --innodb-buffer-pool-size=32M >"$T/sn/db/out.log" 2>&1 &
    SLURM_PIDS+=($!)
}

sn_conf() {
    local port=$((40000 + $$ % 20000)) host mem=2048
    host=$(hostname -s)
    SN_DBD_PORT=$((port + 2))
    mkdir -p "$T/sn/state" "$T/sn/spool/n1" "$T/sn/spool/n2" "$T/sdb" "$T/slog"
    {
        slurm_conf_head "rts$$" "$host($SN_PREFIX.1)" "$port" "$T/sn" "-%n"
        cat <<CONF
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup
JobAcctGatherType=jobacct_gather/cgroup
JobAcctGatherFrequency=task=1
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=$SN_PREFIX.1
AccountingStoragePort=$SN_DBD_PORT
AccountingStoragePass=$T/sn/munge.sock
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
KillWait=2
ReturnToService=2
PlugStackConfig=$T/sl/plugstack.conf
NodeName=n1 NodeAddr=$SN_PREFIX.2 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
NodeName=n2 NodeAddr=$SN_PREFIX.3 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP
CONF
    } >"$T/sn/slurm.conf"
    cat >"$T/sn/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
CgroupAutomount=no
ConstrainCores=yes
ConstrainRAMSpace=yes
CONF
    cat >"$T/sn/slurmdbd.conf" <<CONF
AuthType=auth/munge
AuthInfo=socket=$T/sn/munge.sock
DbdAddr=$SN_PREFIX.1
DbdHost=$host
DbdPort=$SN_DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=rts$$
PidFile=$T/sn/slurmdbd.pid
LogFile=$T/sn/slurmdbd.log
CONF
    chmod 600 "$T/sn/slurmdbd.conf"
}

# sn_wait SECS CMD...: until CMD succeeds (every 0.1 s), SECS at most
sn_wait() {
    local i n=$(($1 * 10))
    shift
    for ((i = 0; i < n; i++)); do
        "$@" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}
sn_idle() { [ "$(timeout 5 sinfo -h -N -o %t 2>/dev/null | sort -u)" = idle ] && [ "$(timeout 5 sinfo -h -N -o %N | wc -l)" = 2 ]; }

nodes_start() {
    local i end=$((SECONDS + 30))
    mkdir -p "$T/sn" "$T/sl"
    : >"$T/sl/plugstack.conf"
    sn_mariadb_init &
    local dbinit=$!
    sn_network && sn_cgroups
    local made=$?
    sn_janitor
    if [ $made != 0 ]; then
        wait "$dbinit"
        return 1
    fi
    munge_start "$T/sn"
    sn_conf
    export SLURM_CONF=$T/sn/slurm.conf
    wait "$dbinit" || return 1
    sn_mariadb
    sn_wait $((end - SECONDS)) test -S "$T/sn/db/sock" || return 1
    MYSQL_UNIX_PORT=$T/sn/db/sock slurmdbd -D >"$T/sn/slurmdbd.out" 2>&1 &
    SLURM_PIDS+=($!)
    sn_wait $((end - SECONDS)) timeout 5 sacctmgr -n list cluster >/dev/null || return 1
    timeout 10 sacctmgr -i add cluster "rts$$" >/dev/null 2>&1
    slurmctld -D -i -f "$SLURM_CONF" >"$T/sn/slurmctld.out" 2>&1 &
    SLURM_PIDS+=($!)
    for i in 1 2; do
        (sn_enter "$i" slurmd -D -N "n$i" -f "$SLURM_CONF") >"$T/sn/slurmd-n$i.out" 2>&1 &
        SLURM_PIDS+=($!)
    done
    sn_wait $((end - SECONDS)) sn_idle
}

# sn_sweep: what the cluster leaves beyond its daemons, gone: every process of the nodes'
# cgroups (slurmd, slurmstepd, tasks and recorders: slurmstepd and the recorders are sessions
# of their own, out of the suite's process group), then the cgroups, the namespaces and the
# links; what is still there in NODES_LEFT
sn_sweep() {
    local i p d left=""
    for ((i = 0; i < 60; i++)); do
        p=$(sn_cg_pids)
        [ -z "$p" ] && break
        # (a task that forks meanwhile is caught by the next round)
        for d in $p; do kill -KILL "$d" 2>/dev/null; done
        sleep 0.05
    done
    [ -n "$p" ] && left="$left processes: $p;"
    for d in "${SN_CGDIRS[@]}"; do
        [ -d "$d" ] || continue
        # (a cgroup whose last process just died may still be busy for a moment)
        for ((i = 0; i < 40; i++)); do
            find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
            [ -d "$d" ] || break
            sleep 0.05
        done
        [ -d "$d" ] && left="$left cgroup $d;"
    done
    for d in "${SN_NETNS[@]}"; do
        ip netns del "$d" 2>/dev/null
        [ -e "/run/netns/$d" ] && left="$left netns $d;"
    done
    for d in "${SN_LINKS[@]}"; do
        ip link del "$d" 2>/dev/null
        ip link show "$d" >/dev/null 2>&1 && left="$left link $d;"
    done
    NODES_LEFT=$left
}

# sn_janitor: a process of its own session (the suite's group is killed when the suite ends:
# lib.sh) that sweeps when the suite is gone however it ended, a SIGKILL included (ctest's
# timeout): started once the names are known, stopped by nodes_stop
SN_JANITOR=""
sn_janitor() {
    (
        exec setsid bash -c '
            s=$1
            eval "$(cat)"
            while read -r x 2>/dev/null </proc/$s/stat && [[ ${x##*) } != Z* ]]; do sleep 0.5; done
            sn_sweep' rtslurm2-janitor "$$" >/dev/null 2>&1 <<<"$(declare -f sn_sweep sn_cg_pids)
SN_CGDIRS=($(printf '%q ' "${SN_CGDIRS[@]}")) SN_NETNS=($(printf '%q ' "${SN_NETNS[@]}"))
SN_LINKS=($(printf '%q ' "${SN_LINKS[@]}"))"
    ) &
    SN_JANITOR=$!
}

# the processes of node cgroups (every node's slurmd, slurmstepd, tasks and recorders)
sn_cg_pids() {
    local d
    for d in "${SN_CGDIRS[@]}"; do
        [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
    done | sort -un
}

nodes_stop() {
    slurm_stop
    sn_sweep
    [ -n "$SN_JANITOR" ] && kill "$SN_JANITOR" 2>/dev/null
    SN_JANITOR=""
    SN_CGDIRS=()
    SN_NETNS=()
    SN_LINKS=()
    [ -z "$NODES_LEFT" ]
}
