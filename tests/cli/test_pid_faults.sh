#!/usr/bin/env bash
# Process identity and process limits: a PID of the tree recycled by an unrelated process between
# samples (forced with ns_last_pid inside a PID namespace), jobs and rtrack inside PID
# namespaces, and no room for more tasks (cgroup pids.max, RLIMIT_NPROC): the GPU reader and
# upload threads cannot start, or the job cannot. Needs root (unshare, ns_last_pid, cgroups,
# setpriv); each part says SKIP with the reason where it cannot run.
. "$(dirname "$0")/lib.sh" "$1"

SPIN=$RT_HELPERS/rt_spin
FAKE_NVML=${RT_FAKE_NVML:-}
[ "$(id -u)" = 0 ] ||
    skip_all root "pid faults: needs root for PID namespaces, ns_last_pid, cgroups and setpriv (running as uid $(id -u))"
# CPU seconds of the whole tree from bash's `times` output (the shell and its reaped children)
times_total() { awk '{ for (i = 1; i <= NF; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } } END { print s }' "$1"; }

# --- PID reuse: C, a CPU-burning child of the job, exits and is reaped; an unrelated process
# outside the tree then gets C's pid (ns_last_pid) and burns CPU while the job lives on. rtrack
# tells the two apart by their start times: the newcomer is not in the tree, C's process row gets
# no samples after its death, and the tree's CPU is the kernel's figure for the job alone.
cat >job.sh <<'EOF'
spin=$1
mkfifo idle.fifo
exec 9<>idle.fifo
nap() { read -t "$1" -u 9; } # a sleep that starts no process (nothing may take the pid first)
"$spin" 0.5 &
c=$!
read -r st <"/proc/$c/stat"
f=(${st##*) }) # the fields after the name: starttime is the 22nd of the line
echo "${f[19]}" >c.start
wait $c
echo $c >reuse.pid
while [ ! -s reused.pid ]; do nap 0.02; done
nap 1.5
times >job.times
EOF
cat >driver.sh <<'EOF'
rtrack=$1 spin=$2
mkfifo launch.fifo
exec 8<>launch.fifo
# the launcher, outside the tracked tree: waits for C's pid, has the kernel hand it out next
( while [ ! -s reuse.pid ]; do read -t 0.01 -u 8; done
  read -r p <reuse.pid
  echo $((p - 1)) >/proc/sys/kernel/ns_last_pid || exit 1
  "$spin" 1.5 &
  echo "${EPOCHREALTIME/,/.}" >reused.t
  read -r st <"/proc/$!/stat"
  f=(${st##*) })
  echo "${f[19]}" >reused.start
  echo $! >reused.pid
  wait ) &
"$rtrack" run --quiet --interval 0.1 --db reuse.db -- bash job.sh "$spin"
echo $? >rtrack.rc
wait
EOF
if ! unshare --pid --fork --mount-proc true 2>ns.err; then
    skip "pid reuse: cannot create a PID namespace: $(cat ns.err)"
else
    unshare --pid --fork --mount-proc bash driver.sh "$RTRACK" "$SPIN" 2>reuse.err
    c=$(cat reuse.pid 2>/dev/null)
    if [ -z "$c" ] || [ "$(cat reused.pid 2>/dev/null)" != "$c" ]; then
        skip "pid reuse: could not make the kernel recycle pid '$c' (got '$(cat reused.pid 2>/dev/null)'): $(cat reuse.err)"
    else
        reused_t=$(cat reused.t)
        check "pid reuse: the job's exit status" "$(cat rtrack.rc)" 0
        check "pid reuse: the pid was recycled while the job ran: samples after it" \
            "$(q reuse.db "SELECT count(*) >= 8 FROM samples WHERE ts > $reused_t")" 1
        c_start=$(cat c.start) new_start=$(cat reused.start)
        check "pid reuse: the two have different start times" "$([ "$c_start" != "$new_start" ] && echo yes)" yes
        check "pid reuse: one processes row for pid $c: the tree's child (its start time)" \
            "$(q reuse.db "SELECT count(*) || ',' || group_concat(starttime) FROM processes WHERE pid = $c")" "1,$c_start"
        check "pid reuse: the newcomer is not in the tree" \
            "$(q reuse.db "SELECT count(*) FROM processes WHERE pid = $c AND starttime = $new_start")" 0
        check "pid reuse: the dead child's row gets no samples after its pid was recycled" \
            "$(q reuse.db "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id JOIN processes p ON p.id = ps.process_id WHERE p.pid = $c AND s.ts > $reused_t")" 0
        check "pid reuse: after it, the tree is the job's shell alone" \
            "$(q reuse.db "SELECT group_concat(DISTINCT proc_count) FROM samples WHERE kind = 'periodic' AND ts > $reused_t")" 1
        truth=$(times_total job.times)
        cpu=$(q reuse.db "SELECT round(sum(proc_utime_s + proc_stime_s), 3) FROM samples")
        check_range "pid reuse: tree CPU-s, without the newcomer's (kernel: $truth)" "$cpu" \
            "$(awk -v t="$truth" 'BEGIN { print t * 0.95 - 0.05 }')" "$(awk -v t="$truth" 'BEGIN { print t * 1.05 + 0.05 }')"
        check "pid reuse: integrity_check" "$(q reuse.db "PRAGMA integrity_check")" ok
    fi

    # --- the job in a PID namespace of its own (rtrack outside): the tree is recorded with the
    # pids rtrack's /proc shows, unshare and everything under it
    "$RTRACK" run --quiet --interval 0.1 --db nsjob.db -- \
        unshare --pid --fork --mount-proc bash -c '"$0" 0.6 & sleep 0.8; wait; times >nsjob.times; exit 3' "$SPIN"
    check "job in a PID namespace: exit status" "$?" 3
    # (the shape, not the names: a child seen between its fork and its exec keeps its parent's
    # name in the processes table)
    check "job in a PID namespace: the tree: unshare, its child, that one's 2 children" \
        "$(q nsjob.db "SELECT (SELECT count(*) FROM processes) || ':' || r.name || ':' ||
            (SELECT count(*) FROM processes c WHERE c.ppid = r.pid) || ':' ||
            (SELECT count(*) FROM processes g JOIN processes c ON g.ppid = c.pid WHERE c.ppid = r.pid)
            FROM runs, processes r WHERE r.pid = runs.pid")" "4:unshare:1:2"
    truth=$(times_total nsjob.times)
    check_range "job in a PID namespace: the tree's CPU-s (kernel: $truth, and unshare's own)" \
        "$(q nsjob.db "SELECT round(sum(proc_utime_s + proc_stime_s), 3) FROM samples")" \
        "$(awk -v t="$truth" 'BEGIN { print t * 0.95 - 0.03 }')" "$(awk -v t="$truth" 'BEGIN { print t * 1.05 + 0.08 }')"

    # --- rtrack itself in a PID namespace with its own /proc: it is the namespace's init (pid 1),
    # the job one of the first pids after it (the thread that starts the job takes one), the tree
    # is recorded with the namespace's pids. When rtrack exits, the kernel ends the namespace: a
    # process the job left behind is killed, not left running.
    unshare --pid --fork --mount-proc "$RTRACK" run --quiet --interval 0.1 --db nsrt.db -- \
        sh -c '(sleep 1; echo alive >orphan.txt) & "$0" 0.5; exit 4' "$SPIN"
    check "rtrack in a PID namespace: exit status" "$?" 4
    check "rtrack in a PID namespace: the job is one of the namespace's first pids, its parent rtrack, pid 1" \
        "$(q nsrt.db "SELECT r.pid BETWEEN 2 AND 3, p.ppid FROM runs r JOIN processes p ON p.pid = r.pid")" "1|1"
    check "rtrack in a PID namespace: the tree: sh, its subshell and rt_spin, the subshell's sleep" \
        "$(q nsrt.db "SELECT count(*) || ':' || (SELECT count(*) FROM processes WHERE ppid = (SELECT pid FROM runs)) || ':' ||
            (SELECT count(*) FROM processes g JOIN processes c ON g.ppid = c.pid WHERE c.ppid = (SELECT pid FROM runs)) FROM processes")" "4:2:1"
    sleep 1.2
    check "rtrack in a PID namespace: what the job left behind ended with the namespace" \
        "$([ -e orphan.txt ] && echo survived || echo killed)" killed

    # --- rtrack in a PID namespace without its own /proc: the pids it knows (its own is 1, the
    # job's 2) are not those /proc shows. It must not track whatever has those pids on the host
    # (pid 2 is kthreadd there); either it follows the job or it records no tree and says why.
    unshare --pid --fork "$RTRACK" run --interval 0.1 --db nsproc.db -- sh -c 'sleep 0.5; exit 5' 2>nsproc.err
    check "rtrack in a PID namespace, host /proc: exit status" "$?" 5
    names=$(q nsproc.db "SELECT group_concat(DISTINCT name) FROM (SELECT name FROM processes ORDER BY name)")
    if [ -z "$names" ]; then
        check "rtrack in a PID namespace, host /proc: no tree recorded, and a warning says why" \
            "$(grep -c '^rtrack: warning: .*namespace' nsproc.err)" 1
    else
        check "rtrack in a PID namespace, host /proc: only the job's processes are recorded" "$names" "sh,sleep"
    fi
fi

# --- no room for another task. Each limit is tried with pids.max (a cgroup of its own) and with
# RLIMIT_NPROC (a uid of its own): at 1 task, `record` gets no streaming thread and no GPU reader
# thread (it warns once for each and records on; the GPUs are read by the sampler; the run waits
# for `rtrack upload`); at 2 tasks `run` starts the job but no thread (the thread that starts
# the job takes the job's task: rtrack starts the job itself once that thread is gone); at 1
# `run` cannot start the job (126, like any job that cannot be executed).
# LeakSanitizer (a sanitizer build) stops the process with a thread of its own at exit, which
# these limits forbid: its leak check is left out here, the other checks stay
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
# limited KIND LIMIT CMD...: run CMD with at most LIMIT tasks
limited() {
    local kind=$1 limit=$2
    shift 2
    if [ "$kind" = pids.max ]; then
        echo "$limit" >"$CG/pids.max"
        sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$@"
    else
        prlimit --nproc="$limit" setpriv --reuid="$NP_UID" --regid="$NP_UID" --clear-groups "$@"
    fi
}
CG=
if grep -qw pids /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
    CG=/sys/fs/cgroup/rtrack-test-$$
elif [ -w /sys/fs/cgroup/pids/cgroup.procs ]; then
    CG=/sys/fs/cgroup/pids/rtrack-test-$$
fi
[ -n "$CG" ] && ! mkdir "$CG" 2>cg.err && CG=
trap '[ -n "$CG" ] && rmdir "$CG" 2>/dev/null; rm -rf "$T"' EXIT
# a uid nothing runs as: RLIMIT_NPROC counts the tasks of the real uid
for _ in $(seq 20); do
    NP_UID=$((40000 + RANDOM % 20000))
    [ -z "$(ps -o pid= -u "$NP_UID")" ] && break
done
mkdir np
chown "$NP_UID" np
chmod 711 "$T"
kinds=
if [ -n "$CG" ]; then kinds=pids.max; else skip "pids.max: no pids cgroup to create (cgroup v2 without pids in cgroup.subtree_control, no v1 pids hierarchy)"; fi
if ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
    skip "RLIMIT_NPROC: setpriv or prlimit missing"
elif ! setpriv --reuid="$NP_UID" --regid="$NP_UID" --clear-groups env "$RTRACK" --version >/dev/null 2>&1; then
    # a checkout in a directory only root may enter (mktemp -d makes them 0700)
    skip "RLIMIT_NPROC: uid $NP_UID cannot run $RTRACK (a directory on its path is closed to others)"
else
    kinds="$kinds RLIMIT_NPROC"
fi
[ -n "$FAKE_NVML" ] || skip "task limits: RT_FAKE_NVML not set: the GPU reader thread is not tried"
for kind in $kinds; do
    db=np/$kind.db
    # record at 1 task, streaming on (a token and an API nothing listens on) and a fake GPU
    limited $kind 1 env SENTINEL_API_TOKEN=tok SENTINEL_API_URL=http://127.0.0.1:9 \
        RTRACK_CLOUD_DISCOVERY=0 RTRACK_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_GPUS=1 \
        "$RTRACK" record --quiet --interval 0.1 --duration 1 --db "$db" 2>np.err
    check "$kind 1, record: exit 0" "$?" 0
    check "$kind 1, record: one warning: no upload thread, the run is left for 'rtrack upload'" \
        "$(grep -c "^rtrack: warning: sentinel: cannot start the upload thread; 'rtrack upload' sends the run later" np.err)" 1
    if [ -n "$FAKE_NVML" ]; then
        check "$kind 1, record: one warning: no GPU reader thread" \
            "$(grep -c '^rtrack: warning: gpu: cannot start the GPU reader thread' np.err)" 1
        check "$kind 1, record: the GPU read all the same, every sample after the baseline" \
            "$(q "$db" "SELECT count(*) FROM samples s WHERE s.seq > 0 AND NOT EXISTS (SELECT 1 FROM gpu_samples WHERE sample_id = s.id)")" 0
    fi
    check "$kind 1, record: nothing else on stderr" "$(grep -vc 'cannot start the' np.err)" 0
    n=$(q "$db" "SELECT count(*) FROM samples")
    check "$kind 1, record: the run, finished, on the 0.1 s grid" \
        "$(q "$db" "SELECT status || ',' || end_reason FROM runs"):$([ "$n" -ge 8 ] && [ "$n" -le 12 ] && echo ok)" "finished,duration:ok"
    check "$kind 1, record: upload --dry-run: every sample waits to be sent" \
        "$("$RTRACK" upload --dry-run --db "$db" 2>&1)" "run 1: $((n - 1)) samples to upload"
    # run at 2 tasks: rtrack and the job (which does not fork)
    limited $kind 2 env RTRACK_NVML_LIBRARY="$FAKE_NVML" FAKE_NVML_GPUS=1 \
        "$RTRACK" run --quiet --interval 0.1 --db "$db" -- "$SPIN" 0.5 2>np2.err
    check "$kind 2, run: the job ran, exit 0" "$?" 0
    [ -n "$FAKE_NVML" ] && check "$kind 2, run: one warning: no GPU reader thread" \
        "$(grep -c '^rtrack: warning: gpu: cannot start the GPU reader thread' np2.err):$(wc -l <np2.err)" "1:1"
    # (the sample before the final one is left out: the job may exit while it is being taken,
    # and a zombie does not count as live)
    check "$kind 2, run: recorded: finished, the job in every sample" \
        "$(q "$db" "SELECT status || ',' || exit_code FROM runs WHERE id = 2"):$(q "$db" "SELECT min(proc_count) || ',' || max(proc_count) FROM samples WHERE run_id = 2 AND kind <> 'final' AND seq < (SELECT max(seq) - 1 FROM samples WHERE run_id = 2)")" "finished,0:1,1"
    # run at 1 task: no room for the job
    limited $kind 1 "$RTRACK" run --quiet --db "$db" -- "$SPIN" 0.5 2>np3.err
    check "$kind 1, run: exit 126, the job could not start" "$?" 126
    check "$kind 1, run: the message says why" \
        "$(grep -c "^rtrack: cannot run '.*rt_spin': resource temporarily unavailable" np3.err)" 1
    check "$kind 1, run: the run row says so" \
        "$(q "$db" "SELECT status || ',' || exit_code || ',' || end_reason FROM runs WHERE id = 3")" "failed,126,spawn-failed"
    check "$kind: integrity_check" "$(q "$db" "PRAGMA integrity_check")" ok
done

finish
