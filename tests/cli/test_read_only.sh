#!/usr/bin/env bash
# A finished database is read from places where the reader cannot write: a read-only bind
# mount, and another user's 0644 file in a 0755 directory. SQLite reads a WAL database through
# a -shm file it creates beside it, which it cannot there: the readers (export, summary,
# report, runs) then open the file as immutable, and print what they print anywhere else. What
# cannot be read there is refused, saying why: a -wal file that holds commits (no -shm to read
# it through), and an older schema (upgrading it needs write access). Needs root (mounts,
# setpriv).
. "$(dirname "$0")/lib.sh" "$1"

[ "$(id -u)" = 0 ] ||
    skip_all root "read-only places suite: needs root for a read-only bind mount and another user (running as uid $(id -u))"
mkdir src view out
chmod 755 "$T" src
chmod 777 out
rec=
trap '[ -n "$rec" ] && kill -KILL "$rec" 2>/dev/null; umount "$T/view" 2>/dev/null; rm -rf "$T"' EXIT

timeout 20 "$RTRACK" run --quiet --interval 0.1 --db src/a.db -- sh -c 'sleep 0.5' || fail "setup: recording a.db"
# a recorder killed mid-run: its -wal holds commits the file does not have
"$RTRACK" record --quiet --interval 0.05 --db src/k.db &
rec=$!
for _ in $(seq 100); do
    [ "$(q src/k.db "SELECT count(*) FROM samples" 2>/dev/null)" -ge 3 ] 2>/dev/null && break
    sleep 0.05
done
kill -KILL $rec
wait $rec 2>/dev/null
rec=
rm -f src/k.db-shm
# a database of schema 4 (before requested_interval_s and the cloud columns), as in
# test_store.c's test_upgrade_from_4
timeout 20 "$RTRACK" run --quiet --db src/old.db -- true
q src/old.db "DROP VIEW python_combined; DROP VIEW python_system;
    DROP VIEW python_process; DROP VIEW sample_metrics; DROP VIEW sample_metrics_base;
    DROP VIEW sample_rates;
    DROP VIEW nic_sample_rates; DROP VIEW disk_sample_rates; DROP VIEW run_sample_counts;
    ALTER TABLE runs RENAME COLUMN requested_interval_s TO interval_s;
    ALTER TABLE runs DROP COLUMN cloud_vendor_id; ALTER TABLE runs DROP COLUMN cloud_account_id;
    ALTER TABLE runs DROP COLUMN cloud_region_id; ALTER TABLE runs DROP COLUMN cloud_zone_id;
    ALTER TABLE runs DROP COLUMN cloud_instance_type; ALTER TABLE runs DROP COLUMN job_maxrss_kib;
    ALTER TABLE runs DROP COLUMN job_utime_s; ALTER TABLE runs DROP COLUMN job_stime_s;
    ALTER TABLE runs DROP COLUMN host_oom_kills; ALTER TABLE samples DROP COLUMN proc_cpu_wait_s;
    ALTER TABLE process_samples DROP COLUMN sched_wait_ns;
    ALTER TABLE process_samples DROP COLUMN cpu_wait_s;
    ALTER TABLE runs DROP COLUMN cgroup_cpu_quota_cores;
    ALTER TABLE runs DROP COLUMN cgroup_cpuset_cpus;
    ALTER TABLE runs DROP COLUMN cgroup_memory_limit_bytes;
    DROP INDEX runs_slurm_job;
    ALTER TABLE runs DROP COLUMN slurm_array_job_id;
    ALTER TABLE runs DROP COLUMN slurm_array_task_id;
    ALTER TABLE runs DROP COLUMN slurm_step_id;
    ALTER TABLE runs DROP COLUMN slurm_job_user;
    ALTER TABLE runs DROP COLUMN slurm_job_partition;
    ALTER TABLE runs DROP COLUMN slurm_nodename;
    ALTER TABLE runs DROP COLUMN slurm_job_num_nodes;
    ALTER TABLE runs DROP COLUMN slurm_ntasks;
    ALTER TABLE runs DROP COLUMN slurm_cpus_per_task;
    ALTER TABLE runs DROP COLUMN slurm_gpus_on_node;
    ALTER TABLE runs DROP COLUMN slurm_job_gpus;
    ALTER TABLE runs DROP COLUMN slurm_time_limit_s;
    ALTER TABLE runs DROP COLUMN slurm_job_id;
    ALTER TABLE runs DROP COLUMN slurm_cpus_on_node;
    ALTER TABLE runs DROP COLUMN slurm_mem_per_node_mib;
    ALTER TABLE runs DROP COLUMN slurm_mem_per_cpu_mib;
    ALTER TABLE runs DROP COLUMN cuda_visible_devices;
    ALTER TABLE runs DROP COLUMN alloc_gpus;
    ALTER TABLE runs DROP COLUMN cgroup_memory_peak_bytes;
    ALTER TABLE runs DROP COLUMN proc_memory_source; ALTER TABLE runs DROP COLUMN cpu_wait_source;
    ALTER TABLE runs DROP COLUMN cpu_wait_missing; ALTER TABLE runs DROP COLUMN psi_missing;
    PRAGMA user_version = 4" ||
    fail "setup: making old.db"
# a second database, with a Slurm job's run: read with a.db as one (issue 31 item 11)
timeout 20 env SLURM_JOB_ID=88 "$RTRACK" run --quiet --interval 0.1 --db src/b.db -- sh -c 'sleep 0.3' ||
    fail "setup: recording b.db"
chmod 644 src/*.db src/*-wal
ls src >files.before
sum_before=$(cat src/* | sha256sum)

# what each reader prints where it can write (the reference); report's footer says when the
# page was made, and is left out of the comparison
readers() { # DIR PREFIX [RUN AS...]: one output file per reader, and its exit status
    local d=$1 p=$2
    shift 2
    timeout 20 "$@" "$RTRACK" export --db "$d/a.db" >"out/$p.csv" 2>"out/$p.csv.err"
    echo "export csv $?" >"out/$p.rc"
    timeout 20 "$@" "$RTRACK" export --db "$d/a.db" --format jsonl >"out/$p.jsonl" 2>"out/$p.jsonl.err"
    echo "export jsonl $?" >>"out/$p.rc"
    timeout 20 "$@" "$RTRACK" summary --db "$d/a.db" >"out/$p.sum" 2>"out/$p.sum.err"
    echo "summary $?" >>"out/$p.rc"
    timeout 20 "$@" "$RTRACK" summary --db "$d/a.db" --format json >"out/$p.sumjson" 2>"out/$p.sumjson.err"
    echo "summary json $?" >>"out/$p.rc"
    timeout 20 "$@" "$RTRACK" runs --db "$d/a.db" >"out/$p.runs" 2>"out/$p.runs.err"
    echo "runs $?" >>"out/$p.rc"
    timeout 20 "$@" "$RTRACK" report --db "$d/a.db" -o "out/$p.page" 2>"out/$p.html.err"
    echo "report $?" >>"out/$p.rc"
    grep -v '^<footer>' "out/$p.page" >"out/$p.html" 2>/dev/null
}
same_outputs() { # PREFIX: 1 when every output equals the reference's
    local f
    for f in csv jsonl sum sumjson runs html rc; do
        cmp -s "out/ref.$f" "out/$1.$f" || { echo "# $1.$f differs: $(head -c 300 "out/$1.$f.err" 2>/dev/null)" >&2; echo 0; return; }
    done
    echo 1
}
# several databases where the reader cannot write (issue 31 item 11): merged into a private
# copy, or by `rtrack merge`, through ATTACH, which had no immutable fallback: "unable to open
# database file" where one --db of the same file read fine
several() { # DIR PREFIX [RUN AS...]: "rc rows" of each reader of a.db and b.db together
    local d=$1 p=$2
    shift 2
    local r
    r=$(timeout 20 "$@" env TMPDIR="$T/out" "$RTRACK" runs --db "$d/a.db" --db "$d/b.db" --format csv 2>"out/$p.several.err")
    echo "runs $? $(echo "$r" | tail -n +2 | wc -l)"
    r=$(timeout 20 "$@" env TMPDIR="$T/out" "$RTRACK" runs --db "$d/[ab].db" --format csv 2>>"out/$p.several.err")
    echo "glob $? $(echo "$r" | tail -n +2 | wc -l)"
    r=$(timeout 20 "$@" env TMPDIR="$T/out" "$RTRACK" export --db "$d/a.db" --db "$d/b.db" --slurm-job 88 2>>"out/$p.several.err")
    echo "export --slurm-job $? $(echo "$r" | tail -n +2 | awk 'END { print (NR > 0 ? "rows" : "none") }')"
    timeout 20 "$@" env TMPDIR="$T/out" "$RTRACK" summary --db "$d/a.db" --db "$d/b.db" --slurm-job 88 >/dev/null 2>>"out/$p.several.err"
    echo "summary --slurm-job $?"
    timeout 20 "$@" "$RTRACK" merge --quiet "out/m-$p.db" "$d/a.db" "$d/b.db" 2>>"out/$p.several.err"
    echo "merge $? $(q "out/m-$p.db" "SELECT count(*) FROM runs" 2>/dev/null)"
}
want_several="runs 0 2
glob 0 2
export --slurm-job 0 rows
summary --slurm-job 0
merge 0 2"
cp -a src ref
readers ref ref
check "reference: several databases read as one" "$(several ref ref)" "$want_several"
check "reference: every reader succeeds" "$(awk '{ print $NF }' out/ref.rc | sort -u)" 0

# --- a read-only bind mount of the directory
if mount --bind src view 2>mount.err && mount -o remount,bind,ro view 2>>mount.err; then
    readers view ro
    check "read-only mount: every reader exits 0" "$(awk '{ print $NF }' out/ro.rc | sort -u)" 0
    check "read-only mount: export, summary, runs and report print what they print elsewhere" "$(same_outputs ro)" 1
    check "read-only mount: no error output" "$(cat out/ro.*.err | wc -c)" 0
    check "read-only mount: several databases as one, a glob, --slurm-job, merge" "$(several view ro)" "$want_several"
    check "read-only mount: several databases: no error output" "$(cat out/ro.several.err)" ""
    # a -wal with commits and no -shm: refused, saying why
    timeout 20 "$RTRACK" export --db view/k.db >k.csv 2>k.err
    check "read-only mount, -wal with commits: export exits 2" "$?" 2
    check "read-only mount, -wal with commits: the message says why" "$(grep -c "cannot read database 'view/k.db' here: its -wal file" k.err)" 1
    # an older schema: it cannot be upgraded here, and the message says so
    timeout 20 "$RTRACK" runs --db view/old.db >old.out 2>old.err
    check "read-only mount, older schema: runs exits 2" "$?" 2
    check "read-only mount, older schema: the message says it needs an upgrade, which needs write access" \
        "$(grep -c "'view/old.db' has schema version 4, older than this rtrack's .*needs write access (cannot write database 'view/old.db': read-only file system)" old.err)" 1
    umount view
else
    skip_req tmpfs "read-only mount: cannot make a read-only bind mount: $(cat mount.err)"
fi

# --- another user reading root's 0644 files in a 0755 directory
if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>setpriv.err &&
    setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$RTRACK"; then
    as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    readers src other "${as_nobody[@]}"
    check "another user: every reader exits 0" "$(awk '{ print $NF }' out/other.rc | sort -u)" 0
    check "another user: export, summary, runs and report print what they print elsewhere" "$(same_outputs other)" 1
    check "another user: no error output" "$(cat out/other.*.err | wc -c)" 0
    check "another user: several databases as one, a glob, --slurm-job, merge" \
        "$(several src other "${as_nobody[@]}")" "$want_several"
    check "another user: several databases: no error output" "$(cat out/other.several.err)" ""
    timeout 20 "${as_nobody[@]}" "$RTRACK" summary --db src/old.db >old2.out 2>old2.err
    check "another user, older schema: summary exits 2 saying it needs write access" \
        "$?:$(grep -c "'src/old.db' has schema version 4, .*needs write access (cannot write database 'src/old.db': the file is read-only)" old2.err)" "2:1"
    chmod 600 src/a.db
    timeout 20 "${as_nobody[@]}" "$RTRACK" runs --db src/a.db >unreadable.out 2>unreadable.err
    check "another user, a 0600 file: runs exits 2 saying permission denied" \
        "$?:$(grep -c "cannot read database 'src/a.db': permission denied" unreadable.err)" "2:1"
    chmod 644 src/a.db
else
    skip "another user: cannot run rtrack as uid 65534 (setpriv: $(cat setpriv.err); or $RTRACK is not reachable)"
fi

check "nothing was written beside the databases" "$(ls src | diff files.before - && echo same)" same
check "the databases are unchanged" "$(cat src/* | sha256sum)" "$sum_before"
finish
