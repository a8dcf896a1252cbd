#!/usr/bin/env bash
# rtrack as a drop-in for SpareCores' Rust resource-tracker (issue 17): the binary called by the
# name `resource-tracker` (a link made here) runs every example of the Rust tool's usage guide
# and README (../shared/reference/resource-tracker-rs.md): the quick start (`timeout 5s
# sha512sum /dev/zero`, 2 s here), --pid, the config file, TRACKER_* exports, -f csv -o FILE,
# --quiet, the system-wide mode stopped by SIGTERM. Each JSON line is held to the Rust tool's
# schema (§2: every key it writes, with its JSON type: integers where it writes u64/i32, floats
# where it writes f64, 2.0 and not 2), the CSV to its header and number formats (§3), the exit
# codes to the wrapped command's. Then rtrack's own shorthands (`rtrack -- CMD`, `rtrack --pid
# N`), TRACKER_* through rtrack, and the "did you mean" of a mistyped option or config key.
# Streaming to Sentinel (SENTINEL_API_TOKEN) goes to the mock API of tests/helpers/.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
# the variables this suite sets, kept from the caller too
unset TRACKER_INTERVAL TRACKER_FORMAT TRACKER_PID TRACKER_OUTPUT TRACKER_DB TRACKER_CONFIG \
    RTRACK_OUTPUT RTRACK_QUIET RTRACK_FORMAT RTRACK_PID RTRACK_JOB_NAME TRACKER_DURATION
command -v python3 >/dev/null || skip_all "python3 missing: the JSON lines cannot be checked"

ln -s "$RTRACK" resource-tracker
RT=$PWD/resource-tracker
mkdir tmp work
export TMPDIR=$T/tmp # where its private database goes (and must be gone from)
cd work || exit 1

# The Rust tool's sample schema (resource-tracker-rs.md §2), each key's JSON type: i = integer,
# f = float (a JSON number with a fraction or exponent: serde_json writes f64 so), s = string,
# n = null allowed. rtrack's own keys beside them are not checked here.
cat >"$T/schema.py" <<'EOF'
import json, sys
TOP = {"timestamp_secs": "i", "job_name": "sn", "tracked_pid": "in", "cpu": "o", "memory": "o",
       "network": "a", "disk": "a", "gpu": "a", "resource-tracker-version": "s"}
CPU = {"utilization_pct": "f", "per_core_pct": "a", "utime_secs": "f", "stime_secs": "f",
       "process_count": "i", "cgroup_usage_secs": "fn", "cgroup_utilization_pct": "fn",
       "process_cores_used": "fn", "process_child_count": "in", "process_utime_secs": "fn",
       "process_stime_secs": "fn", "process_pss_mib": "in", "process_rss_mib": "in",
       "process_disk_read_bytes": "in", "process_disk_write_bytes": "in",
       "process_gpu_usage": "fn", "process_gpu_vram_mib": "fn", "process_gpu_utilized": "in"}
MEM = {"total_mib": "i", "free_mib": "i", "available_mib": "i", "used_mib": "i", "used_pct": "f",
       "buffers_mib": "i", "cached_mib": "i", "active_mib": "i", "inactive_mib": "i",
       "swap_total_mib": "i", "swap_used_mib": "i", "swap_used_pct": "f"}
NIC = {"interface": "s", "mac_address": "sn", "driver": "sn", "operstate": "sn",
       "speed_mbps": "in", "mtu": "in", "rx_bytes_per_sec": "f", "tx_bytes_per_sec": "f",
       "rx_bytes_total": "i", "tx_bytes_total": "i"}
DISK = {"device": "s", "model": "sn", "vendor": "sn", "serial": "sn", "device_type": "sn",
        "capacity_bytes": "in", "read_bytes_per_sec": "f", "write_bytes_per_sec": "f",
        "read_bytes_total": "i", "write_bytes_total": "i", "mounts": "a"}
MOUNT = {"mount_point": "s", "filesystem": "s", "total_bytes": "i", "used_bytes": "i",
         "available_bytes": "i", "used_pct": "f"}
GPU = {"uuid": "s", "name": "s", "device_type": "s", "host_id": "s", "detail": "o",
       "utilization_pct": "f", "vram_total_bytes": "i", "vram_used_bytes": "i",
       "vram_used_pct": "f", "temperature_celsius": "i", "power_watts": "f",
       "frequency_mhz": "i", "core_count": "n"}
def ok(v, t):
    if v is None: return "n" in t
    if isinstance(v, bool): return False
    return (("i" in t and isinstance(v, int)) or ("f" in t and isinstance(v, float)) or
            ("s" in t and isinstance(v, str)) or ("o" in t and isinstance(v, dict)) or
            ("a" in t and isinstance(v, list)))
def check(obj, schema, where, errs):
    for k, t in schema.items():
        if k not in obj: errs.append(f"{where}: no key {k}")
        elif not ok(obj[k], t): errs.append(f"{where}.{k}: {json.dumps(obj[k])} is not of type {t}")
errs, n = [], 0
for i, line in enumerate(open(sys.argv[1])):
    where = f"line {i + 1}"
    try:
        d = json.loads(line)
    except ValueError:
        errs.append(f"{where}: not JSON: {line[:60]!r}"); continue
    n += 1
    check(d, TOP, where, errs)
    if "actual_interval_ms" in d and not ok(d["actual_interval_ms"], "i"):
        errs.append(f"{where}: actual_interval_ms {d['actual_interval_ms']!r} is not an integer")
    check(d.get("cpu", {}), CPU, where + ".cpu", errs)
    for c in d.get("cpu", {}).get("per_core_pct", []):
        if not ok(c, "f"): errs.append(f"{where}.cpu.per_core_pct: {c!r} is not a float")
    check(d.get("memory", {}), MEM, where + ".memory", errs)
    for x in d.get("network", []): check(x, NIC, where + ".network", errs)
    for x in d.get("disk", []):
        check(x, DISK, where + ".disk", errs)
        for m in x.get("mounts", []): check(m, MOUNT, where + ".disk.mounts", errs)
    for x in d.get("gpu", []): check(x, GPU, where + ".gpu", errs)
print("%d %s" % (n, "; ".join(errs[:5]) if errs else "ok"))
EOF
# schema FILE -> "N ok" (N JSON lines, all of the Rust schema) or "N first errors"
schema() { python3 "$T/schema.py" "$1"; }
# field FILE EXPR -> the python expression over each line's d, one result per line
field() { python3 -c "
import json, signal, sys
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
for l in open(sys.argv[1]):
    d = json.loads(l); c = d['cpu']
    print($2)" "$1"; }
# nothing was left in the working directory nor of the private database
clean() {
    check "$1: nothing left in the working directory" \
        "$(find . -mindepth 1 ! -name '*.out' ! -name '*.err' ! -name '*.csv' ! -name '*.toml' | tr '\n' ' ')" ""
    check "$1: the private database is gone" "$(ls -A "$TMPDIR")" ""
}

# --- the quick start: resource-tracker [--] CMD -------------------------------------------------------
"$RT" timeout 2s sha512sum /dev/zero 2>q.err >q.out
check "quick start: exit status of the wrapped command (timeout's 124)" "$?" 124
read -r n res <<<"$(schema q.err)"
check "quick start: every stderr line is a sample of the Rust schema" "$res" ok
check_range "quick start: about one sample a second for 2 s" "$n" 2 4
check "quick start: one tracked pid in every sample, not null" \
    "$(field q.err "d['tracked_pid'] is not None and d['tracked_pid'] > 0" | sort -u)" True
# sha512sum on /dev/zero keeps a core busy (a share of it on a loaded machine): the tree's cores
# in the full-interval samples, not 0 (the final one is left out: it is taken the moment the job
# ends, a few ms after the one before)
check_range "quick start: the job's busy core is seen (process_cores_used x100)" \
    "$(field q.err "int(c['process_cores_used'] * 100) if d.get('actual_interval_ms', 0) >= 500 else 0" | sort -n | tail -1)" 10 110
check "quick start: stdout is the job's (empty)" "$(wc -c <q.out)" 0
clean "quick start"
# the Rust tool's lines exactly (issue 31 item 19): its first sample has no actual_interval_ms
# (nothing before it to measure from), and memory holds its *_mib fields only (0.1.14 renamed its
# _kib fields; a consumer checking for the old names found rtrack's exact KiB there)
check "quick start: actual_interval_ms left out of the first line only" \
    "$(field q.err "'actual_interval_ms' in d" | uniq -c | awk '{ printf "%s%s", (NR > 1 ? " " : ""), $2 }')" "False True"
check "quick start: memory holds the Rust tool's fields, no more" \
    "$(field q.err "' '.join(sorted(d['memory']))" | sort -u)" \
    "active_mib available_mib buffers_mib cached_mib free_mib inactive_mib swap_total_mib swap_used_mib swap_used_pct total_mib used_mib used_pct"
"$RT" -i 0.2 -o rust.jsonl.out -- sleep 0.5 2>/dev/null
check "-o FILE: the same lines: no actual_interval_ms in the first, no *_kib" \
    "$(field rust.jsonl.out "('actual_interval_ms' in d, any(k.endswith('_kib') for k in d['memory']))" | uniq | head -2 | tr '\n' ' ')" \
    "(False, False) (True, False) "
# rtrack's own live lines keep both (its export and its tests of identity: test_jsonl_identity.sh)
"$RTRACK" run --db own.db -i 0.2 -o own.jsonl.out -- sleep 0.5 2>/dev/null
check "rtrack run -o: its own lines keep actual_interval_ms and the exact KiB" \
    "$(field own.jsonl.out "('actual_interval_ms' in d, 'total_kib' in d['memory'])" | sort -u)" "(True, True)"
rm -f own.db own.db-wal own.db-shm
"$RT" -- sh -c 'exit 3' 2>w.err
check "with --: the job's exit status" "$?" 3
check "with --: samples on stderr" "$(schema w.err | cut -d' ' -f2)" ok
"$RT" -- no-such-command-rt17 2>nf.err
check "a command not found: exit 127" "$?" 127
grep -q "no-such-command-rt17" nf.err && pass "a command not found: says which" ||
    fail "a command not found: stderr: $(head -3 nf.err)"
clean "exit statuses"

# --- --pid: a tree followed, the system on after it is gone, until SIGTERM ------------------------------
sleep 30 &
victim=$!
"$RT" --pid "$victim" -i 0.25 2>pid.err &
tracker=$!
sleep 1.2
kill "$victim"
wait "$victim" 2>/dev/null
gone=$(date +%s.%N)
sleep 1.2
kill -TERM "$tracker"
wait "$tracker"
check "--pid: SIGTERM ends it with exit 0" "$?" 0
read -r n res <<<"$(schema pid.err)"
check "--pid: every line of the Rust schema" "$res" ok
check "--pid: tracked_pid is the pid in every sample" "$(field pid.err "d['tracked_pid']" | sort -u)" "$victim"
# the Rust tool keeps running with the tree's values 0 (not null): at 0.25 s, 1.2 s (or more, on a
# loaded machine) after the tree is gone, 4 samples or more; a tracker that stopped has none
check_range "--pid: samples go on after the tree is gone" \
    "$(field pid.err "d['timestamp'] > $gone" | grep -c True)" 3 40
check "--pid: the tree's values are 0 there (not null)" \
    "$(field pid.err "d['timestamp'] <= $gone or (c['process_rss_mib'], c['process_cores_used'], c['process_child_count']) == (0, 0.0, 0)" | sort -u)" True
clean "--pid"

# --- system-wide, stopped by SIGTERM (and SIGINT) -------------------------------------------------------
for sig in TERM INT; do
    "$RT" -i 0.25 2>sys.err &
    tracker=$!
    sleep 1.2
    kill -"$sig" "$tracker"
    wait "$tracker"
    check "system-wide: SIG$sig ends it with exit 0" "$?" 0
    read -r n res <<<"$(schema sys.err)"
    check "system-wide (SIG$sig): lines of the Rust schema" "$res" ok
    check_range "system-wide (SIG$sig): a sample every 0.25 s" "$n" 3 6
    check "system-wide (SIG$sig): no tree: tracked_pid and the process fields null" \
        "$(field sys.err "(d['tracked_pid'], c['process_cores_used'], c['process_pss_mib'])" | sort -u)" \
        "(None, None, None)"
done
clean "system-wide"

# --- the config file: resource-tracker.toml in the working directory --------------------------------
printf '[job]\nname = "from-toml"\n\n[tracker]\ninterval_secs = 2\n' >resource-tracker.toml
"$RT" sleep 2.5 2>c.err
check "config: the job's exit status" "$?" 0
check "config: [job] name is every sample's job_name" "$(field c.err "d['job_name']" | sort -u)" from-toml
check "config: [tracker] interval_secs = 2 (the first sample's interval)" \
    "$(field c.err "1.9 <= d['interval_s'] <= 2.3" | head -1)" True
"$RT" -n from-cli -i 0.5 sleep 1.2 2>c2.err
check "config: --job-name wins over [job] name" "$(field c2.err "d['job_name']" | sort -u)" from-cli
check "config: --interval wins over interval_secs" "$(field c2.err "0.4 <= d['interval_s'] <= 0.7" | head -1)" True
# a key the Rust tool does not know: one warning, the job runs (the Rust tool ignores it)
printf '[tracker]\nintervl_secs = 2\ninterval_secs = 0.5\n[extra]\nx = 1\n' >resource-tracker.toml
"$RT" sh -c 'sleep 1.2; exit 4' 2>u.err
check "config: an unknown key: the job runs (its exit status)" "$?" 4
check "config: an unknown key: one warning" "$(grep -c 'warning' u.err)" 1
grep -q "'intervl_secs' in \[tracker\], \[extra\]\|\[extra\], 'intervl_secs' in \[tracker\]" u.err &&
    pass "config: the warning names the unknown key and table" || fail "config: warning: $(grep warning u.err)"
check "config: the known keys of that file apply" \
    "$(grep -v warning u.err | field /dev/stdin "0.4 <= d['interval_s'] <= 0.7" | head -1)" True
printf '[tracker]\ninterval_secs = "two"\n' >resource-tracker.toml
"$RT" true 2>t.err
check "config: a value of the wrong type: the file is ignored, the job runs" "$?" 0
rm resource-tracker.toml
"$RT" -c missing.toml -- true 2>m.err
check "config: a missing --config file is no error (as the Rust tool)" "$?" 0
check "config: ... and says nothing about it" "$(grep -vc '^{' m.err)" 0
printf '[tracker]\ninterval_secs = 0\n' >zero.toml
"$RT" -c zero.toml -- true 2>z.err
rc=$?
[ "$rc" -ne 0 ] && pass "config: interval_secs = 0 is refused (exit $rc)" || fail "config: interval_secs = 0 accepted"
"$RT" --interval 0 -- true 2>/dev/null
rc=$?
[ "$rc" -ne 0 ] && pass "--interval 0 is refused (exit $rc)" || fail "--interval 0 accepted"
clean "config"

# --- TRACKER_* exports -----------------------------------------------------------------------------
TRACKER_JOB_NAME=env-job TRACKER_INTERVAL=0.5 TRACKER_TEAM=ml "$RT" sleep 1.2 2>e.err
check "TRACKER_JOB_NAME: every sample's job_name" "$(field e.err "d['job_name']" | sort -u)" env-job
check "TRACKER_INTERVAL=0.5: the interval" "$(field e.err "0.4 <= d['interval_s'] <= 0.7" | head -1)" True
TRACKER_JOB_NAME=env-job "$RT" --job-name cli-job true 2>e2.err
check "--job-name wins over TRACKER_JOB_NAME" "$(field e2.err "d['job_name']" | sort -u)" cli-job
TRACKER_OUTPUT=env.jsonl.out "$RT" -i 0.5 sleep 1 2>o.err
check "TRACKER_OUTPUT: the samples go to the file" "$(schema env.jsonl.out | cut -d' ' -f2)" ok
check "TRACKER_OUTPUT: none on stderr" "$(wc -c <o.err)" 0
for v in 1 true; do
    TRACKER_QUIET=$v "$RT" -i 0.5 sh -c 'sleep 1; exit 5' 2>qe.err
    check "TRACKER_QUIET=$v: the job's exit status" "$?" 5
    check "TRACKER_QUIET=$v: no metric line" "$(wc -c <qe.err)" 0
done
TRACKER_FORMAT=csv "$RT" -i 0.5 sleep 0.7 2>f.err
check "TRACKER_FORMAT=csv: the CSV header first" "$(head -1 f.err | cut -d, -f1-3)" "timestamp,system_processes,system_utime"
TRACKER_INTERVAL=soon "$RT" true 2>bad.err
check "TRACKER_INTERVAL set but invalid: exit 2" "$?" 2
grep -q "invalid value 'soon' for TRACKER_INTERVAL" bad.err && pass "TRACKER_INTERVAL invalid: names the variable" ||
    fail "TRACKER_INTERVAL invalid: $(cat bad.err)"
RTRACK_INTERVAL=0.5 TRACKER_INTERVAL=2 "$RT" sleep 1.2 2>both.err
check "RTRACK_INTERVAL wins over TRACKER_INTERVAL" "$(field both.err "0.4 <= d['interval_s'] <= 0.7" | head -1)" True
clean "TRACKER_*"

# --- -f csv -o FILE: the Rust tool's CSV -----------------------------------------------------------
HEADER=timestamp,system_processes,system_utime,system_stime,system_cpu_usage,system_memory_free_mib,system_memory_used_mib,system_memory_buffers_mib,system_memory_cached_mib,system_memory_active_mib,system_memory_inactive_mib,system_disk_read_bytes,system_disk_write_bytes,system_disk_space_total_gb,system_disk_space_used_gb,system_disk_space_free_gb,system_net_recv_bytes,system_net_sent_bytes,system_gpu_usage,system_gpu_vram_mib,system_gpu_utilized,process_pid,process_children,process_utime,process_stime,process_cpu_usage,process_memory_mib,process_disk_read_bytes,process_disk_write_bytes,process_gpu_usage,process_gpu_vram_mib,process_gpu_utilized
"$RT" -f csv -o metrics.csv -i 0.5 -- sh -c 'sleep 1.2' 2>csv.err
check "-f csv -o: the job's exit status" "$?" 0
check "-f csv -o: nothing on stderr" "$(wc -c <csv.err)" 0
check "-f csv: the Rust tool's 32-column header" "$(head -1 metrics.csv)" "$HEADER"
check_range "-f csv: rows" "$(($(wc -l <metrics.csv) - 1))" 2 4
# each column's format (resource-tracker-rs.md §3): I integer, F3/F4/F6 fixed decimals, E empty
# or the format (process GPU columns without a GPU), G the GPU's (0.0000 / 0 without one)
FMTS=(I I F3 F3 F4 I I I I I I I I F6 F6 F6 I I F4 F4 I I I F4 F4 F4 I I I F4E F4E IE)
bad=$(tail -n +2 metrics.csv | awk -F, -v f="${FMTS[*]}" '
    BEGIN { n = split(f, fmt, " ") }
    NF != 32 { print "row " NR ": " NF " fields"; next }
    { for (i = 1; i <= 32; i++) {
        t = fmt[i]; v = $i; re = "";
        if (t ~ /^I/) re = "^-?[0-9]+$";
        else if (t ~ /^F3/) re = "^-?[0-9]+\\.[0-9][0-9][0-9]$";
        else if (t ~ /^F4/) re = "^-?[0-9]+\\.[0-9][0-9][0-9][0-9]$";
        else if (t ~ /^F6/) re = "^-?[0-9]+\\.[0-9][0-9][0-9][0-9][0-9][0-9]$";
        if (!(v ~ re) && !(t ~ /E$/ && v == "")) print "row " NR " col " i " (" t "): \x27" v "\x27" } }')
check "-f csv: every field in the Rust tool's format" "$bad" ""
# the wrapped job is the tracked tree: process_pid the same in every row, not empty
check "-f csv: process_pid set, one value" "$(tail -n +2 metrics.csv | cut -d, -f22 | sort -u | grep -c '^[0-9][0-9]*$')" 1
# used = total - free (the Rust tool's rule: free is what users may still write)
check "-f csv: disk space used = total - free" "$(tail -n +2 metrics.csv | awk -F, '
    { d = $14 - $16 - $15; if (d < -0.000002 || d > 0.000002) print NR ": " $14 " - " $16 " != " $15 }')" ""
# without a tree the process columns are empty, as the Rust tool's None
"$RT" -f csv -o sys.csv -i 0.3 --duration 0.8 2>/dev/null
check "-f csv without a tree: the 11 process columns empty" \
    "$(tail -n +2 sys.csv | cut -d, -f22-32 | sort -u)" ",,,,,,,,,,"
# the 21 SystemTracker columns the usage guide and the Python comparison use
"$RT" -f system-csv -o sysT.csv -i 0.3 -- sleep 0.7 2>/dev/null
check "-f system-csv: the SystemTracker's 21 columns" "$(head -1 sysT.csv | tr ',' '\n' | wc -l):$(head -1 sysT.csv | cut -d, -f1-2)" \
    '21:"timestamp","processes"'
clean "-f csv"

# --- --quiet -------------------------------------------------------------------------------------
"$RT" --quiet -i 0.3 sh -c 'sleep 0.7; exit 6' 2>quiet.err
check "--quiet: the job's exit status" "$?" 6
check "--quiet: no metric line on stderr" "$(wc -c <quiet.err)" 0
"$RT" --quiet -o never.out -i 0.3 sleep 0.5 2>/dev/null
[ -e never.out ] && fail "--quiet -o: the file was written" || pass "--quiet -o: the file is not even opened"
clean "--quiet"

# --- -h, -V, a database only where asked ----------------------------------------------------------
"$RT" -h >h.out 2>&1
check "-h: exit 0, usage as resource-tracker" "$?:$(head -1 h.out | cut -c1-23)" "0:usage: resource-tracker"
check "-V: 'resource-tracker VERSION' first" "$("$RT" -V | head -1 | grep -cE '^resource-tracker [0-9]+\.[0-9]+\.[0-9]+$')" 1
RTRACK_DB=$T/keep.db "$RT" --quiet -i 0.3 -- sleep 0.5
check "RTRACK_DB: the run is recorded there" "$(q "$T/keep.db" "SELECT count(*) FROM runs")" 1
"$RT" --db kept.db --quiet -i 0.3 -- true
check "--db: the run is recorded there" "$(q kept.db "SELECT mode FROM runs")" run
rm -f kept.db*
clean "--db"

# --- streaming to Sentinel with SENTINEL_API_TOKEN (the mock API: tests/helpers/sentinel_mock.py) ---
TOKEN=tok-$RANDOM-dropin
: >"$T/api.log"
python3 "$HERE/../helpers/sentinel_mock.py" "$T/api.log" "$TOKEN" >"$T/mock.port" &
mock=$!
for _ in $(seq 100); do [ -s "$T/mock.port" ] && break; sleep 0.05; done
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=http://127.0.0.1:$(head -n 1 "$T/mock.port") \
    RTRACK_CLOUD_DISCOVERY=0 "$RT" --quiet -n streamed -i 0.3 -- sh -c 'sleep 0.8; exit 3'
check "streaming: the job's exit status" "$?" 3
kill "$mock" 2>/dev/null
wait "$mock" 2>/dev/null
# the run registered with its metadata and the command (a JSON string of the argv), finished
# as failed with the job's code, the samples inline (no upload interval passed)
check "streaming: the API's requests" "$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); b = json.loads(r["body"]) if r["body"] else {}
    if r["path"] == "/runs":
        print("start", b.get("job_name"), b.get("command"))
    elif r["path"].endswith("/finish"):
        rows = b.get("data_csv", "").count("\n") - 1
        print("finish", b["exit_code"], b["run_status"], b["data_source"], rows >= 2)' "$T/api.log")" \
    "start streamed [\"sh\",\"-c\",\"sleep 0.8; exit 3\"]
finish 3 failed inline True"
clean "streaming"

# --- rtrack's shorthands and its own names ---------------------------------------------------------
cd "$T" || exit 1
mkdir short && cd short || exit 1
"$RTRACK" -- true 2>s.err
check "rtrack -- true: exit 0" "$?" 0
check "rtrack -- true: a run recorded in rtrack.db" "$(q rtrack.db "SELECT mode || ' ' || command FROM runs")" 'run ["true"]'
"$RTRACK" --pid $$ --duration 1 --quiet
check "rtrack --pid \$\$ --duration 1: exit 0" "$?" 0
check "rtrack --pid: a record of that pid" "$(q rtrack.db "SELECT mode || ' ' || pid FROM runs ORDER BY id DESC LIMIT 1")" "record $$"
"$RTRACK" -i 0.25 -- sh -c 'exit 7' 2>/dev/null
check "rtrack -i 0.25 -- CMD: run, the job's status" "$?" 7
check "rtrack -i 0.25 -- CMD: its interval" "$(q rtrack.db "SELECT requested_interval_s FROM runs ORDER BY id DESC LIMIT 1")" 0.25
TRACKER_INTERVAL=0.5 TRACKER_JOB_NAME=tj "$RTRACK" run --quiet -- true
check "TRACKER_INTERVAL and TRACKER_JOB_NAME through rtrack run" \
    "$(q rtrack.db "SELECT requested_interval_s || ' ' || job_name FROM runs ORDER BY id DESC LIMIT 1")" "0.5 tj"
TRACKER_PID=$$ "$RTRACK" record --quiet --duration 0.5
check "TRACKER_PID through rtrack record" "$(q rtrack.db "SELECT pid FROM runs ORDER BY id DESC LIMIT 1")" $$
TRACKER_FORMAT=rust-csv "$RTRACK" run --quiet -o r.csv -- true
[ -e r.csv ] && fail "rtrack --quiet -o: the file was written" || pass "rtrack --quiet: no metric output either"
TRACKER_FORMAT=rust-csv "$RTRACK" run -o r.csv -- true 2>/dev/null
check "TRACKER_FORMAT=rust-csv through rtrack: the Rust header" "$(head -1 r.csv)" "$HEADER"
TRACKER_INTERVAL=abc "$RTRACK" run -- true 2>bad.err
check "rtrack: TRACKER_INTERVAL invalid: exit 2" "$?" 2
grep -q "invalid value 'abc' for TRACKER_INTERVAL" bad.err && pass "rtrack: names TRACKER_INTERVAL" ||
    fail "rtrack: TRACKER_INTERVAL invalid: $(cat bad.err)"

# --- JSON floats: cgroup_utilization_pct capped at the (integer) core count is 2.0, not 2 --------------
# (a cgroup busier than the machine's cores cannot be made here: the stored sample is edited to
# be one, 1000 CPU-seconds in its interval on 2 cores without a quota, so the cap applies)
"$RTRACK" record --quiet --db cg.db -i 0.2 --duration 0.5
q cg.db "UPDATE samples SET cgroup_cpu_s = 1000, cgroup_limit_cores = NULL, ncores = 2
         WHERE kind <> 'baseline'"
"$RTRACK" export --db cg.db --format jsonl >cg.jsonl
check "cgroup_utilization_pct capped at 2 cores: written 2.0, a JSON float" \
    "$(grep -o '"cgroup_utilization_pct":[^,]*' cg.jsonl | sort -u)" '"cgroup_utilization_pct":2.0'

# --- did you mean --------------------------------------------------------------------------------------
"$RTRACK" run --intervl 2 -- true 2>dm.err
check "a mistyped option: exit 2" "$?" 2
check "a mistyped option: the nearest named" "$(cat dm.err)" \
    "rtrack: run: unknown option '--intervl'; did you mean '--interval'?"
"$RTRACK" --intervl 2 -- true 2>dm2.err
check "a mistyped option before --: the nearest named" "$(cat dm2.err)" \
    "rtrack: unknown option '--intervl'; did you mean '--interval'?"
printf '[tracker]\nintervl_secs = 2\n' >rtrack.toml
"$RTRACK" run -- true 2>dk.err
check "a mistyped config key: exit 2 (rtrack stays strict)" "$?" 2
check "a mistyped config key: the nearest named" "$(cat dk.err)" \
    "rtrack: rtrack.toml:2: unknown key 'intervl_secs' in [tracker]; did you mean 'interval_secs'?"
rm rtrack.toml
finish
