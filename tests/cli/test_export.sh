#!/usr/bin/env bash
# rtrack export, rtrack runs and live output (--output): a real recorded run read back in every
# layout and parsed with Python's own csv and json modules (types, units, column counts, NULL
# handling), filters, bad input, export during recording, and live lines equal to exported ones.
. "$(dirname "$0")/lib.sh" "$1"
PY=${PYTHON:-/usr/bin/python3}
SPIN=$RT_HELPERS/rt_spin

"$RTRACK" run --quiet --db r.db --interval 0.3 --job-name exp -- "$SPIN" 1.5 2
check "record a run" "$?" 0
NS=$(q r.db "SELECT count(*) FROM samples WHERE kind <> 'baseline'")
check_range "periodic + final samples" "$NS" 4 9

# --- CSV layouts, checked by the csv module with QUOTE_NONNUMERIC (numbers unquoted, "" empty)
for t in combined system process; do
    "$RTRACK" export --db r.db --table "$t" -o "$t.csv"
    check "export --table $t: exit 0" "$?" 0
done
"$RTRACK" export --db r.db >default.csv
check "export: the default is the combined CSV on stdout" "$(cmp -s default.csv combined.csv && echo same)" same
out=$("$PY" - r.db "$NS" <<'EOF'
import csv, sqlite3, sys
db, ns = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
want = {
    "system": ["timestamp", "processes", "utime", "stime", "cpu_usage", "memory_free_mib",
               "memory_used_mib", "memory_buffers_mib", "memory_cached_mib", "memory_active_mib",
               "memory_inactive_mib", "disk_read_bytes", "disk_write_bytes",
               "disk_space_total_gb", "disk_space_used_gb", "disk_space_free_gb",
               "net_recv_bytes", "net_sent_bytes", "gpu_usage", "gpu_vram_mib", "gpu_utilized"],
    "process": ["timestamp", "pid", "children", "utime", "stime", "cpu_usage", "memory_mib",
                "disk_read_bytes", "disk_write_bytes", "gpu_usage", "gpu_vram_mib",
                "gpu_utilized"],
}
want["combined"] = (["timestamp"] + ["system_" + c for c in want["system"][1:]]
                    + ["process_" + c for c in want["process"][1:]])
ints = {"processes", "pid", "disk_read_bytes", "disk_write_bytes", "net_recv_bytes",
        "net_sent_bytes", "gpu_utilized"}
problems = []
for t in ("combined", "system", "process"):
    with open(t + ".csv", newline="") as f:
        raw = f.read()
    if "\r" in raw:
        problems.append(t + ": CR in output")
    lines = raw.split("\n")
    rows = list(csv.reader(lines[:-1], quoting=csv.QUOTE_NONNUMERIC))
    header, body = rows[0], rows[1:]
    if header != want[t]:
        problems.append(t + ": header " + repr(header))
    if len(body) != ns:
        problems.append(t + ": %d rows, want %d" % (len(body), ns))
    for r in body:
        if len(r) != len(header):
            problems.append(t + ": row of %d fields" % len(r))
        for name, v in zip(header, r):
            base = name.split("_", 1)[1] if name.startswith(("system_", "process_")) else name
            if v == "":
                if base != "children":
                    problems.append("%s: %s empty" % (t, name))
                continue
            if not isinstance(v, float):
                problems.append("%s: %s = %r is not a number" % (t, name, v))
    # every number printed as an int where Python prints ints, with a '.' for floats
    for line in lines[1:-1]:
        for name, text in zip(header, line.split(",")):
            base = name.split("_", 1)[1] if name.startswith(("system_", "process_")) else name
            if base in ints and not (text.isdigit() or text == '""'):
                problems.append("%s: %s printed as %s" % (t, name, text))
            if base.endswith(("_mib", "_gb")) and not base.startswith("gpu") and "." not in text:
                problems.append("%s: float %s printed as %s" % (t, name, text))
# units against the database: MiB from KiB, GB = 1e9 bytes, bytes per interval, seconds
s = con.execute("SELECT ts, mem_used_kib, disk_space_total_bytes, net_rx_bytes, cpu_utime_s, "
                "proc_pss_kib, proc_root_pid, seq FROM samples WHERE kind <> 'baseline' ORDER BY seq").fetchall()
with open("combined.csv", newline="") as f:
    body = list(csv.reader(f, quoting=csv.QUOTE_NONNUMERIC))[1:]
h = want["combined"]
for row, db_row in zip(body, s):
    ts, used_kib, space, rx, ut, pss, pid, seq = db_row
    r = dict(zip(h, row))
    # Python's round() of the stored value, exactly: a value halfway between two printed ones
    # (a multiple of 32 KiB is one in MiB to 4 places) is rounded half-to-even, half a unit off
    if r["timestamp"] != round(ts, 3): problems.append("timestamp")
    if r["system_memory_used_mib"] != round(used_kib / 1024, 4):
        problems.append("memory MiB (seq %d: %r in the CSV, %r KiB stored)"
                        % (seq, r["system_memory_used_mib"], used_kib))
    if r["system_disk_space_total_gb"] != round(space / 1e9, 2): problems.append("space GB")
    if r["system_net_recv_bytes"] != rx: problems.append("net bytes")
    if abs(r["system_utime"] - ut) > 0.0000005 * (1 + 1e-9): problems.append("utime")
    # unknown (NULL: the final sample's tree of zombies) is Python's 0
    if r["process_memory_mib"] != round((pss or 0) / 1024, 4): problems.append("pss MiB")
    if r["process_pid"] != pid: problems.append("pid")
print("ok" if not problems else "; ".join(sorted(set(problems))[:8]))
EOF
)
check "CSV layouts parse with QUOTE_NONNUMERIC, types and units right" "$out" ok
# a memory value halfway between two printed ones (1024.03125 MiB): Python's round() gives
# 1024.0312 (half to even), half a unit from the value (this check's tolerance once refused it)
cp r.db half.db
q half.db "UPDATE samples SET mem_used_kib = 1048608 WHERE seq = 1" >/dev/null
"$RTRACK" export --db half.db --table system -o half.csv
check "a value halfway is rounded half to even, as Python does" \
    "$(sed -n 2p half.csv | cut -d, -f7)" 1024.0312

# --- JSON Lines: one object per sample, the Rust reference's fields and types
"$RTRACK" export --db r.db --format jsonl -o r.jsonl
check "export --format jsonl: exit 0" "$?" 0
"$RTRACK" export --db r.db --format json >r2.jsonl
check "json is jsonl" "$(cmp -s r.jsonl r2.jsonl && echo same)" same
out=$("$PY" - r.jsonl "$NS" <<'EOF'
import json, sys
lines = open(sys.argv[1]).read().split("\n")
problems = []
if lines[-1] != "": problems.append("no final newline")
objs = [json.loads(l) for l in lines[:-1]]
if len(objs) != int(sys.argv[2]): problems.append("%d objects" % len(objs))
for o in objs:
    for k, ty in [("timestamp_secs", int), ("actual_interval_ms", int), ("job_name", str),
                  ("tracked_pid", int), ("cpu", dict), ("memory", dict), ("network", list),
                  ("disk", list), ("gpu", list), ("timestamp", float),
                  ("resource-tracker-version", str)]:
        if not isinstance(o.get(k), ty): problems.append("%s: %r" % (k, o.get(k)))
    c, m = o["cpu"], o["memory"]
    for k in ("utilization_pct", "utime_secs", "stime_secs", "process_cores_used",
              "process_utime_secs", "process_stime_secs"):
        if not isinstance(c.get(k), (int, float)): problems.append("cpu." + k)
    for k in ("process_count", "process_child_count", "process_pss_mib", "process_rss_mib",
              "process_disk_read_bytes", "process_disk_write_bytes"):
        if not isinstance(c.get(k), int): problems.append("cpu." + k)
    if not isinstance(c.get("per_core_pct"), list) or not c["per_core_pct"]: problems.append("per_core")
    for k in ("total_mib", "free_mib", "available_mib", "used_mib", "buffers_mib", "cached_mib",
              "active_mib", "inactive_mib", "swap_total_mib", "swap_used_mib"):
        if not isinstance(m.get(k), int): problems.append("memory." + k)
    if not (0 <= m["used_pct"] <= 100): problems.append("used_pct")
    for n in o["network"]:
        for k in ("interface", "rx_bytes_per_sec", "tx_bytes_per_sec", "rx_bytes_total", "tx_bytes_total"):
            if k not in n: problems.append("network." + k)
    for d in o["disk"]:
        for k in ("device", "read_bytes_per_sec", "write_bytes_total", "mounts"):
            if k not in d: problems.append("disk." + k)
    if o["tracked_pid"] != objs[0]["tracked_pid"]: problems.append("pid changes")
    if not o["processes"]: problems.append("no process detail")
print("ok" if not problems else "; ".join(sorted(set(problems))[:8]))
EOF
)
check "JSON Lines parse, reference fields with their types" "$out" ok

# --- JSON Lines values: each per-interval number worked out again from the raw cumulative
# counters the store keeps (ticks, sectors, bytes, KiB) of the sample and the one before it
out=$("$PY" - r.db r.jsonl <<'EOF'
import json, sqlite3, sys
con = sqlite3.connect(sys.argv[1])
objs = [json.loads(l) for l in open(sys.argv[2])]
problems = []
def near(what, got, want, tol=1e-9):
    if got is None or want is None or abs(got - want) > tol * max(1.0, abs(want)):
        problems.append("%s: %r, want %r" % (what, got, want))
def same(what, got, want):
    if got != want or type(got) != type(want):
        problems.append("%s: %r, want %r" % (what, got, want))
tck, = con.execute("SELECT clk_tck FROM runs WHERE id = 1").fetchone()
rows = con.execute("SELECT id, mono FROM samples WHERE run_id = 1 ORDER BY seq").fetchall()
if len(objs) != len(rows) - 1: problems.append("%d lines for %d samples" % (len(objs), len(rows)))
CPU = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
SAMPLE_CPU = "SELECT %s FROM samples WHERE id = ?" % ", ".join("cpu_" + f for f in CPU)
CORE_CPU = "SELECT %s FROM cpu_core_samples WHERE sample_id = ? AND core = ?" % ", ".join(CPU)
def ticks(sql, *args):
    r = con.execute(sql, args).fetchone()
    return None if r is None else [v or 0 for v in r]
nd = nn = 0
for o, (sid, mono), (psid, pmono) in zip(objs, rows[1:], rows):
    dt = mono - pmono
    near("interval_s", o["interval_s"], dt)
    c, m = o["cpu"], o["memory"]
    # cpu: the /proc/stat ticks of this sample less the previous one's
    a, b = ticks(SAMPLE_CPU, psid), ticks(SAMPLE_CPU, sid)
    d = [y - x for x, y in zip(a, b)]
    near("cpu.utime_secs", c["utime_secs"], (d[0] + d[1]) / tck)
    near("cpu.stime_secs", c["stime_secs"], d[2] / tck)
    ncores = len(c["per_core_pct"])
    if sum(d) > 0:
        near("cpu.utilization_pct", c["utilization_pct"], (sum(d) - d[3] - d[4]) / sum(d) * ncores)
    for k in range(ncores):
        a, b = ticks(CORE_CPU, psid, k), ticks(CORE_CPU, sid, k)
        d = [y - x for x, y in zip(a, b)]
        if sum(d) > 0:
            near("per_core_pct[%d]" % k, c["per_core_pct"][k],
                 min(100.0, max(0.0, (sum(d) - d[3] - d[4]) / sum(d) * 100)))
    # memory: MiB are /proc/meminfo KiB // 1024; used = MemTotal - MemAvailable
    tot, free, avail, buf, cached, srec = con.execute(
        "SELECT mem_total_kib, mem_free_kib, mem_available_kib, mem_buffers_kib, mem_cached_kib, "
        "mem_sreclaimable_kib FROM samples WHERE id = ?", (sid,)).fetchone()
    same("memory.total_mib", m["total_mib"], tot // 1024)
    same("memory.free_mib", m["free_mib"], free // 1024)
    same("memory.used_mib", m["used_mib"], (tot - avail) // 1024)
    same("memory.available_mib", m["available_mib"], avail // 1024)
    same("memory.buffers_mib", m["buffers_mib"], buf // 1024)
    same("memory.cached_mib", m["cached_mib"], cached // 1024 + (srec or 0) // 1024)
    near("memory.used_pct", m["used_pct"], ((tot - avail) // 1024) * 100 / (tot // 1024))
    # disks: 512-byte sectors of diskstats (whatever the device's sector size)
    for dk in o["disk"]:
        nd += 1
        q = ("SELECT sectors_read, sectors_written FROM disk_samples ds JOIN disks k "
             "ON k.id = ds.disk_id WHERE ds.sample_id = ? AND k.name = ?")
        b = con.execute(q, (sid, dk["device"])).fetchone()
        a = con.execute(q, (psid, dk["device"])).fetchone()
        same(dk["device"] + " read_bytes_total", dk["read_bytes_total"], b[0] * 512)
        same(dk["device"] + " write_bytes_total", dk["write_bytes_total"], b[1] * 512)
        if a is None: continue
        rd, wr = max(0, b[0] - a[0]) * 512, max(0, b[1] - a[1]) * 512
        same(dk["device"] + " read_bytes", dk["read_bytes"], rd)
        same(dk["device"] + " write_bytes", dk["write_bytes"], wr)
        near(dk["device"] + " read_bytes_per_sec", dk["read_bytes_per_sec"], rd / dt)
        near(dk["device"] + " write_bytes_per_sec", dk["write_bytes_per_sec"], wr / dt)
        for mt in dk["mounts"]:
            if mt["total_bytes"] > 0:
                near(mt["mount_point"] + " used_pct", mt["used_pct"],
                     mt["used_bytes"] * 100 / mt["total_bytes"])
            if not 0 <= mt["used_bytes"] <= mt["total_bytes"]:
                problems.append(mt["mount_point"] + " used_bytes %r" % mt["used_bytes"])
    # NICs: the byte counters of /proc/net/dev
    for n in o["network"]:
        nn += 1
        q = ("SELECT rx_bytes_total, tx_bytes_total FROM nic_samples ns JOIN nics i "
             "ON i.id = ns.nic_id WHERE ns.sample_id = ? AND i.name = ?")
        b = con.execute(q, (sid, n["interface"])).fetchone()
        a = con.execute(q, (psid, n["interface"])).fetchone()
        same(n["interface"] + " rx_bytes_total", n["rx_bytes_total"], b[0])
        same(n["interface"] + " tx_bytes_total", n["tx_bytes_total"], b[1])
        if a is None: continue
        rx, tx = max(0, b[0] - a[0]), max(0, b[1] - a[1])
        same(n["interface"] + " rx_bytes", n["rx_bytes"], rx)
        same(n["interface"] + " tx_bytes", n["tx_bytes"], tx)
        near(n["interface"] + " rx_bytes_per_sec", n["rx_bytes_per_sec"], rx / dt)
        near(n["interface"] + " tx_bytes_per_sec", n["tx_bytes_per_sec"], tx / dt)
    # the tree: its totals are the sums of its process rows
    ps = o["processes"]
    near("process_utime_secs", c["process_utime_secs"], sum(p["cpu_utime_secs"] or 0 for p in ps))
    near("process_stime_secs", c["process_stime_secs"], sum(p["cpu_stime_secs"] or 0 for p in ps))
    same("process_disk_read_bytes", c["process_disk_read_bytes"], sum(p["disk_read_bytes"] or 0 for p in ps))
    same("process_disk_write_bytes", c["process_disk_write_bytes"], sum(p["disk_write_bytes"] or 0 for p in ps))
    # a tree none of whose memory could be read (the final sample: a zombie) has it unknown
    # (null), and the reference's integer MiB fields its 0
    known = [p["pss_kib"] for p in ps if p["pss_kib"] is not None]
    same("process_pss_kib", c["process_pss_kib"], sum(known) if known else None)
    same("process_pss_mib", c["process_pss_mib"], (c["process_pss_kib"] or 0) // 1024)
    same("process_rss_mib", c["process_rss_mib"], (c["process_rss_kib"] or 0) // 1024)
    if dt > 0:
        # busy cores, at most the machine's (10 ms ticks over a short final window can say more)
        near("process_cores_used", c["process_cores_used"],
             min(ncores, (c["process_utime_secs"] + c["process_stime_secs"]) / dt), 1e-6)
if nd == 0: problems.append("no disk in any line")
if nn == 0: problems.append("no NIC in any line")
print("ok" if not problems else "; ".join(problems[:8]))
EOF
)
check "JSON Lines values = the raw counters' differences over the interval" "$out" ok

# --- JSON Lines GPU values, from the fake NVML library (tests/fake_nvml/fake_nvml.c): device i
# has gpu utilization 20+10i %, memory utilization 5+i %, 80 GiB of which (i+1) GiB plus its
# processes' memory are used, 40+i C, 100+i W, clocks 1500+i / 1400+i / 2600+i MHz, 6912+i
# cores, PCI bus 0x10+i. The job's shell and its child register with the fake driver; this
# shell (not in the tree) uses GPU 0 too.
if [ -n "${RT_FAKE_NVML:-}" ] && [ -e "$RT_FAKE_NVML" ]; then
    cat >gjob.sh <<'EOF'
sleep 1.4 &
child=$!
{
    echo "0 $$ 2048 45 12 C"
    echo "1 $$ 640 25 4 CG"
    echo "1 $child 128 15 3 G"
} >>"$1"
wait
EOF
    echo "0 $$ 3072 60 20 C" >g.procs
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=2 FAKE_NVML_PROC_FILE=$T/g.procs \
        "$RTRACK" run --quiet --db g.db --interval 0.2 -- sh gjob.sh "$T/g.procs"
    check "gpu run" "$?" 0
    "$RTRACK" export --db g.db --format jsonl -o g.jsonl
    # the last periodic sample in which the job and its child are both live (registered by
    # then; on a loaded machine the child's exit can come a sample before the job's)
    seq=$(q g.db "SELECT max(seq) FROM samples WHERE kind = 'periodic' AND proc_count >= 2")
    out=$("$PY" - g.jsonl "$seq" "$(q g.db "SELECT pid FROM runs")" <<'EOF'
import json, sys
o = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]) - 1]
root = int(sys.argv[3])
GIB, MIB = 1 << 30, 1 << 20
problems = []
def same(what, got, want):
    if got != want or type(got) != type(want):
        problems.append("%s: %r, want %r" % (what, got, want))
want = [
    {"uuid": "GPU-fa4e0000-0000-0000-0000-000000000000", "name": "NVIDIA Fake GPU 0",
     "device_type": "GPU", "host_id": "0",
     "detail": {"vendor": "nvidia", "driver_version": "550.00-fake",
                "pci_bus_id": "00000000:10:00.0"},
     "utilization_pct": 20.0, "memory_utilization_pct": 5.0,
     "vram_total_bytes": 80 * GIB,
     "vram_used_bytes": 1 * GIB + (2048 + 3072) * MIB,  # 1 GiB + job 2048 + outsider 3072 MiB
     "vram_used_pct": 6.0 * 100 / 80,                   # 6 GiB of 80
     "temperature_celsius": 40, "power_watts": 100.0,
     "frequency_mhz": 1500, "sm_clock_mhz": 1400, "memory_clock_mhz": 2600, "core_count": 6912},
    {"uuid": "GPU-fa4e0000-0000-0000-0000-000000000001", "name": "NVIDIA Fake GPU 1",
     "device_type": "GPU", "host_id": "1",
     "detail": {"vendor": "nvidia", "driver_version": "550.00-fake",
                "pci_bus_id": "00000000:11:00.0"},
     "utilization_pct": 30.0, "memory_utilization_pct": 6.0,
     "vram_total_bytes": 80 * GIB,
     "vram_used_bytes": 2 * GIB + (640 + 128) * MIB,   # the job listed twice (CG) counts once
     "vram_used_pct": 2.75 * 100 / 80,                 # 2.75 GiB of 80
     "temperature_celsius": 41, "power_watts": 101.0,
     "frequency_mhz": 1501, "sm_clock_mhz": 1401, "memory_clock_mhz": 2601, "core_count": 6913},
]
same("gpu count", len(o["gpu"]), 2)
for i, (g, w) in enumerate(zip(o["gpu"], want)):
    for k, v in w.items():
        same("gpu[%d].%s" % (i, k), g.get(k), v)
c = o["cpu"]
same("process_gpu_usage", c["process_gpu_usage"], (45 + 25 + 15) / 100)  # the tree's SM %, in GPUs
same("process_gpu_vram_mib", c["process_gpu_vram_mib"], 2048.0 + 640 + 128)
same("process_gpu_utilized", c["process_gpu_utilized"], 2)
ps = {p["pid"]: p for p in o["processes"]}
same("root gpu_vram_bytes", ps.get(root, {}).get("gpu_vram_bytes"), (2048 + 640) * MIB)
same("root gpu_util_pct", ps.get(root, {}).get("gpu_util_pct"), 45.0 + 25)
kids = [p for p in o["processes"] if p["ppid"] == root]
same("one child", len(kids), 1)
if kids:
    same("child gpu_vram_bytes", kids[0]["gpu_vram_bytes"], 128 * MIB)
    same("child gpu_util_pct", kids[0]["gpu_util_pct"], 15.0)
print("ok" if not problems else "; ".join(problems[:8]))
EOF
)
    check "JSON Lines gpu objects, tree and process GPU values" "$out" ok
else
    skip "JSON Lines gpu values: RT_FAKE_NVML does not name the fake NVML library (run under ctest)"
fi

# --- a system-only recording: the process columns are empty strings, JSON has nulls
"$RTRACK" record --quiet --db r.db --interval 0.2 --duration 0.7
"$RTRACK" export --db r.db --run latest >sys.csv
check "system-only: process columns are \"\"" \
    "$(sed -n 2p sys.csv | awk -F, '{ print $22 "|" $32 }')" '""|""'
check "system-only: 32 columns" "$(sed -n 2p sys.csv | awk -F, '{ print NF }')" 32
check "system-only: JSON tracked_pid is null" \
    "$("$RTRACK" export --db r.db -f jsonl | head -1 | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["tracked_pid"])')" None
check "--run 1 still exports the first run" "$("$RTRACK" export --db r.db --run 1 | wc -l)" $((NS + 1))

# --- time filters: epoch seconds, ISO 8601, +seconds from the start of the run
T1=$(q r.db "SELECT printf('%.3f', ts - 0.001) FROM samples WHERE run_id = 1 AND seq = 2")
T3=$(q r.db "SELECT printf('%.3f', ts + 0.001) FROM samples WHERE run_id = 1 AND seq = 3")
check "--since/--until epoch: two rows" "$("$RTRACK" export --db r.db --run 1 --since "$T1" --until "$T3" | wc -l)" 3
ISO=$(q r.db "SELECT strftime('%Y-%m-%dT%H:%M:%fZ', ts - 0.01, 'unixepoch') FROM samples WHERE run_id = 1 AND seq = 2")
check "--since ISO 8601" "$("$RTRACK" export --db r.db --run 1 --since "$ISO" | wc -l)" $((NS - 1 + 1))
# ISO times are exact to the millisecond. julianday()'s double near 2.46e6 days once put an ISO
# time up to 20 us off: 16:30:11.062Z read as 20 us later, 16:30:11.000Z as 20 us earlier, so a
# sample 1 us after (before) them fell out of --since (--until). Timestamps set on a copy.
q r.db "VACUUM INTO 'iso.db'"
q iso.db "UPDATE samples SET ts = 1795710600 + 10 * seq WHERE run_id = 1;
          UPDATE samples SET ts = 1795710610.999999 WHERE run_id = 1 AND seq = 2;
          UPDATE samples SET ts = 1795710611.062001 WHERE run_id = 1 AND seq = 3"
iso() { "$RTRACK" export --db iso.db --run 1 "$@" | wc -l; }
check "--until ISO 1 us after the sample" "$(iso --until 2026-11-26T16:30:11.000Z)" 3
check "--until ISO 1 ms before that" "$(iso --until 2026-11-26T16:30:10.999Z)" 2
check "--since ISO 1 us before the sample" "$(iso --since 2026-11-26T16:30:11.062Z)" $((NS - 2 + 1))
check "--since ISO 1 ms after that" "$(iso --since 2026-11-26T16:30:11.063Z)" $((NS - 3 + 1))
check "--since ISO with an offset" "$(iso --since '2026-11-26 17:30:11.062+01:00')" $((NS - 2 + 1))
check "--until +0.1 s after the start: header only" "$("$RTRACK" export --db r.db --run 1 --until +0.1 | wc -l)" 1

# --- bad input: a message, exit 2, nothing on stdout
bad() { # NAME EXPECTED-IN-MESSAGE ARGS...
    local name=$1 msg=$2; shift 2
    "$RTRACK" export "$@" >bad.out 2>bad.err
    check "$name: exit 2" "$?" 2
    check "$name: message" "$(grep -c -- "$msg" bad.err)" 1
    check "$name: no output" "$(wc -c <bad.out)" 0
}
bad "unknown run" "no run 99" --db r.db --run 99
bad "bad run id" "invalid run" --db r.db --run x
bad "unknown format" "unknown format" --db r.db --format xml
bad "unknown table" "unknown table" --db r.db --table disks
bad "--table with jsonl" "one layout" --db r.db --format jsonl --table system
bad "--since after --until" "is after" --db r.db --since 200 --until 100
bad "bad time" "invalid time" --db r.db --since yesterday
bad "missing database" "cannot open database" --db nope.db
echo "not a database" >text.db
bad "not a database" "not an rtrack database" --db text.db
sqlite3 other.db "CREATE TABLE t (x)"
bad "another application's database" "not an rtrack database" --db other.db
"$RTRACK" record --quiet --db empty.db --duration 0.1 && sqlite3 empty.db "DELETE FROM runs"
bad "database without runs" "no runs yet" --db empty.db
check "missing database not created" "$([ -e nope.db ] && echo yes || echo no)" no

# --- a run with no completed interval exports the header only
"$RTRACK" record --quiet --db b.db --interval 10 &
rec=$!
for _ in $(seq 50); do [ "$(q b.db "SELECT count(*) FROM samples" 2>/dev/null)" = 1 ] && break; sleep 0.05; done
kill -9 $rec; wait $rec 2>/dev/null
check "baseline only: header only" "$("$RTRACK" export --db b.db | wc -l)" 1
check "baseline only: empty JSON Lines" "$("$RTRACK" export --db b.db -f jsonl | wc -c)" 0

# --- export while a recorder writes the same database: always a whole, consistent prefix
"$RTRACK" record --quiet --db w.db --interval 0.02 --duration 4 &
rec=$!
sleep 0.3
prev=0 badread=0
for _ in $(seq 20); do
    "$RTRACK" export --db w.db -o snap.csv || badread=$((badread + 1))
    n=$("$PY" -c 'import csv,sys; r=list(csv.reader(open("snap.csv"), quoting=csv.QUOTE_NONNUMERIC)); assert all(len(x)==32 for x in r); print(len(r)-1)' 2>/dev/null || echo -1)
    [ "$n" -ge "$prev" ] || badread=$((badread + 1))
    prev=$n
    sleep 0.1
done
wait $rec
check "export during recording: 20 consistent, growing snapshots" "$badread" 0
check_range "export during recording: rows seen" "$prev" 10 200

# --- live output: the same lines export gives, flushed as they are recorded
"$RTRACK" run --db l.db --interval 0.2 --output live.jsonl -- "$SPIN" 1
"$RTRACK" export --db l.db -f jsonl >exported.jsonl
check "live JSON Lines equal the exported ones" "$(cmp -s live.jsonl exported.jsonl && echo same)" same
"$RTRACK" run --db l.db --interval 0.2 --output live.csv --format csv -- "$SPIN" 1
"$RTRACK" export --db l.db >exported.csv
check "live CSV equals the exported one" "$(cmp -s live.csv exported.csv && echo same)" same
"$RTRACK" record --db l.db --interval 0.1 --duration 3 --output tail.jsonl &
rec=$!
sleep 1.2
check_range "lines are flushed while recording" "$(wc -l <tail.jsonl)" 5 20
wait $rec
check_range "all lines at the end" "$(wc -l <tail.jsonl)" 25 31
# a closed pipe: one warning, the job and the recording go on
"$RTRACK" run --db p.db --interval 0.1 --output - -- sh -c 'sleep 1; exit 4' 2>pipe.err | head -c 10 >/dev/null
check "closed pipe: exit status is the job's" "${PIPESTATUS[0]}" 4
check "closed pipe: one warning" "$(grep -c 'live output to .stdout. stopped' pipe.err)" 1
check_range "closed pipe: recording went on" "$(q p.db "SELECT count(*) FROM samples")" 8 13
"$RTRACK" run --db p.db --output /nonexistent/dir/x -- touch started 2>out.err
check "unwritable --output: rtrack fails before the job" "$?" 125
check "unwritable --output: job not started" "$([ -e started ] && echo yes || echo no)" no

# --- help for every command; a misspelt one gets a suggestion and exit 2
for c in run record export runs; do
    check "help $c: usage on stdout" "$("$RTRACK" help $c | head -1 | grep -c "^usage: rtrack $c")" 1
    check "$c --help: the same text" "$("$RTRACK" $c --help | cmp -s - <("$RTRACK" help $c) && echo same)" same
done
"$RTRACK" exprot 2>typo.err
check "misspelt command: exit 2" "$?" 2
check "misspelt command: suggestion" "$(grep -c "did you mean 'export'" typo.err)" 1

# --- rtrack runs
"$RTRACK" runs --db r.db >runs.txt
check "runs: a header and one line per run" "$(wc -l <runs.txt)" 3
check "runs: the job name and command" "$(sed -n 2p runs.txt | grep -c 'exp .*rt_spin 1.5 2')" 1
# samples: those after the baseline, as export writes rows and summary counts them
check "runs csv" "$("$RTRACK" runs --db r.db --format csv | "$PY" -c 'import csv,sys; r=list(csv.reader(sys.stdin)); print(len(r), r[0][:3], r[1][5])')" \
    "3 ['id', 'job', 'command'] $NS"
check "runs: samples = export's rows = summary's samples" \
    "$("$RTRACK" runs --db r.db --format jsonl | "$PY" -c 'import json,sys; print(json.loads(sys.stdin.readline())["samples"])') $(($("$RTRACK" export --db r.db --run 1 | wc -l) - 1)) $("$RTRACK" summary --db r.db --run 1 --format json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["run"]["samples"])')" \
    "$NS $NS $NS"
check "runs jsonl" "$("$RTRACK" runs --db r.db --format jsonl | "$PY" -c 'import json,sys; r=[json.loads(l) for l in sys.stdin]; print(len(r), r[0]["command"][-1], r[1]["mode"], r[0]["exit_code"])')" \
    "2 2 record 0"
"$RTRACK" runs --db r.db --format xml 2>/dev/null
check "runs: unknown format exits 2" "$?" 2
finish
