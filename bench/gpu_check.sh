#!/usr/bin/env bash
# bench/gpu_check.sh - the real-GPU check of docs/gpu.md, in one go (device time is short).
#
#   bench/gpu_check.sh RTRACK OUTDIR [SECONDS]
#
# Runs a PyTorch bf16 matmul loop on CUDA for SECONDS (default 20) as a *child* of the tracked
# shell, under `rtrack run --interval 0.5`, while nvidia-smi samples the same GPU once a
# second for comparison; exports the run (CSV and JSON Lines) and prints a summary: device
# utilization, VRAM, power, temperature and clocks as recorded, the tree's GPU columns, and
# nvidia-smi's view of the same seconds. Then measures rtrack's own CPU time per sample with
# the real NVML (system-only `record` at 0.1 s for 5 s, idle GPU) and checks that 0.1 s
# intervals keep their pace; and, while the matmul loop runs again, the CPU per sample of
# `record --pid` attributing it (0.1 s and 1 s) next to one with NVML left out. Needs python3
# with torch and nvidia-smi on the PATH.
set -u
RTRACK=$(readlink -f "${1:?usage: $0 RTRACK OUTDIR [SECONDS]}")
OUT=$(readlink -f "${2:?usage: $0 RTRACK OUTDIR [SECONDS]}")
SECS=${3:-20}
mkdir -p "$OUT"
cd "$OUT" || exit 1

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total,pci.bus_id --format=csv,noheader
uname -r

cat >work.py <<EOF
import time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
pad = torch.empty(4 << 30, dtype=torch.uint8, device="cuda")  # 4 GiB more VRAM in use
t, n = time.time(), 0
while time.time() - t < $SECS:
    c = a @ b
    n += 1
    if n % 64 == 0:
        torch.cuda.synchronize()
torch.cuda.synchronize()
print("matmuls", n, "in", round(time.time() - t, 1), "s")
EOF

nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,temperature.gpu,clocks.sm \
    --format=csv,noheader,nounits -l 1 >smi.csv 2>/dev/null &
smi=$!
echo "== rtrack run -- bash -c 'python3 work.py'"
"$RTRACK" run --db gpu.db --interval 0.5 -- bash -c 'python3 work.py; echo child done'
echo "rtrack exit: $?"
nvidia-smi --query-compute-apps=pid,used_memory --format=csv >apps-after.csv 2>&1
kill $smi 2>/dev/null
"$RTRACK" export --db gpu.db --format csv >gpu.csv
"$RTRACK" export --db gpu.db --format jsonl >gpu.jsonl

python3 - <<'EOF'
import csv, json, sqlite3, statistics as st
db = sqlite3.connect("gpu.db")
q = lambda s: db.execute(s).fetchall()
print("== recorded")
print("gpus:", q("SELECT idx, vendor, name, uuid, pci_bus_id, driver_version, vram_total_bytes, core_count FROM gpus"))
print("host_gpus:", q("SELECT host_gpu_model, host_gpu_count, host_gpu_memory_mib FROM host_gpus"))
n, with_gpu = q("SELECT count(*), sum(EXISTS (SELECT 1 FROM gpu_samples g WHERE g.sample_id = s.id)) FROM samples s")[0]
print(f"samples: {n}, with gpu rows: {with_gpu}")
rows = q("SELECT util_pct, mem_util_pct, vram_used_bytes / 1048576.0, temperature_c, power_w, clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz FROM gpu_samples")
names = ["util_pct", "mem_util_pct", "vram_used_mib", "temperature_c", "power_w", "clock_graphics_mhz", "clock_sm_mhz", "clock_mem_mhz"]
for i, name in enumerate(names):
    v = [r[i] for r in rows if r[i] is not None]
    nul = sum(r[i] is None for r in rows)
    if v:
        print(f"  {name:20s} min {min(v):10.1f}  median {st.median(v):10.1f}  max {max(v):10.1f}  nulls {nul}")
    else:
        print(f"  {name:20s} all NULL ({nul})")
print("tree processes seen on the GPU:",
      q("SELECT p.pid, p.name, count(*), max(x.vram_used_bytes) / 1048576, round(avg(x.util_pct), 1), max(x.util_pct) "
        "FROM gpu_process_samples x JOIN processes p ON p.id = x.process_id GROUP BY p.id"))
print("root pid:", q("SELECT pid FROM runs")[0][0], " tree:",
      q("SELECT pid, ppid, name FROM processes ORDER BY first_seq, pid"))
r = list(csv.DictReader(open("gpu.csv")))
def col(c):
    return [float(x[c]) for x in r if x[c] not in ("", None)]
for c in ("system_gpu_usage", "system_gpu_vram_mib", "system_gpu_utilized", "process_gpu_usage",
          "process_gpu_vram_mib", "process_gpu_utilized"):
    v = col(c)
    print(f"  csv {c:22s} median {st.median(v):10.4f}  max {max(v):10.4f}  rows {len(v)}")
j = [json.loads(l) for l in open("gpu.jsonl")]
mid = j[len(j) // 2]
print("json middle sample gpu[0]:", json.dumps(mid["gpu"][0]) if mid["gpu"] else "[]")
print("json middle sample cpu.process_gpu_*:", mid["cpu"]["process_gpu_usage"], mid["cpu"]["process_gpu_vram_mib"], mid["cpu"]["process_gpu_utilized"])
print("== nvidia-smi, once a second over the same run")
s = [l.split(", ") for l in open("smi.csv") if l.count(",") == 5]
for i, name in enumerate(["util %", "mem used MiB", "power W", "temp C", "sm clock MHz"], 1):
    v = [float(x[i]) for x in s if x[i].strip().replace(".", "").isdigit()]
    if v:
        print(f"  {name:14s} min {min(v):10.1f}  median {st.median(v):10.1f}  max {max(v):10.1f}  n {len(v)}")
EOF

echo "== rtrack's own CPU per sample, real NVML vs NVML left out (record, system only, 0.1 s, 5 s)"
python3 - "$RTRACK" <<'EOF'
import os, resource, sqlite3, subprocess, sys, time
for label, env in (("nvml", {}), ("no nvml", {"RTRACK_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})):
    db = f"rec-{label.replace(' ', '-')}.db"
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.Popen([sys.argv[1], "record", "--db", db, "--interval", "0.1", "--duration", "5",
                          "--quiet"], env={**os.environ, **env}, stderr=subprocess.DEVNULL)
    time.sleep(4.5)
    hwm = [l.split()[1] for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM")][0]
    p.wait()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    c = sqlite3.connect(db)
    n, g = c.execute("SELECT count(*), (SELECT count(DISTINCT sample_id) FROM gpu_samples) FROM samples").fetchone()
    iv = sorted(x[0] for x in c.execute("SELECT interval_s FROM samples WHERE kind = 'periodic'"))
    print(f"{label:8s} samples {n} (with gpu rows {g}), cpu {cpu:.3f} s -> {cpu / n * 1e6:.0f} us/sample, "
          f"median interval {iv[len(iv) // 2]:.4f} s, max {iv[-1]:.4f} s, VmHWM {hwm} KiB")
EOF

echo "== rtrack's CPU per sample while the tracked process computes on the GPU (record --pid, 8 s window)"
python3 work.py >/dev/null 2>&1 &
job=$!
sleep 7 # CUDA context up
python3 - "$RTRACK" "$job" <<'EOF'
import os, sqlite3, subprocess, sys, time
rt, pid = sys.argv[1], sys.argv[2]
cfgs = [("nvml 0.1 s", "0.1", {}), ("nvml 1 s", "1", {}),
        ("no nvml 0.1 s", "0.1", {"RTRACK_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1"})]
procs = []
for i, (label, iv, env) in enumerate(cfgs):
    db = f"busy{i}.db"
    p = subprocess.Popen([rt, "record", "--pid", pid, "--db", db, "--interval", iv, "--quiet"],
                         env={**os.environ, **env}, stderr=subprocess.DEVNULL)
    procs.append((label, db, p))
time.sleep(2)
ns = lambda p: int(open(f"/proc/{p.pid}/schedstat").read().split()[0])
t0, c0 = time.time(), [ns(p) for _, _, p in procs]
time.sleep(8)
t1, c1 = time.time(), [ns(p) for _, _, p in procs]
hwm = [[l.split()[1] for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM")][0] for _, _, p in procs]
for _, _, p in procs:
    p.terminate()
    p.wait()
for (label, db, _), a, b, h in zip(procs, c0, c1, hwm):
    c = sqlite3.connect(db)
    n = c.execute("SELECT count(*) FROM samples WHERE ts >= ? AND ts < ?", (t0, t1)).fetchone()[0]
    g = c.execute("SELECT count(*), avg(util_pct) FROM gpu_process_samples x JOIN samples s ON s.id = x.sample_id WHERE s.ts >= ? AND s.ts < ?", (t0, t1)).fetchone()
    print(f"{label:14s} {n:3d} samples in the window, {(b - a) / 1e3 / max(n, 1):7.0f} us cpu/sample, "
          f"{(b - a) / 1e7 / (t1 - t0):5.2f} % of a core, VmHWM {h} KiB, tree gpu rows {g[0]} (mean util {g[1]})")
EOF
wait $job
