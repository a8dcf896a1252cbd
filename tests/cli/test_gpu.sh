#!/usr/bin/env bash
# GPUs through NVML, driven by the fake NVML library the test suite builds
# (tests/fake_nvml; RT_FAKE_NVML and RT_FAKE_NVML_LEGACY name it): devices, the tracked tree's
# processes on them, symbol-version fallbacks, what the driver cannot say, a lost GPU, a hung
# driver, and what rtrack records and exports without any GPU.
. "$(dirname "$0")/lib.sh" "$1"

FULL=${RT_FAKE_NVML:?RT_FAKE_NVML names the fake libnvidia-ml.so.1}
LEGACY=${RT_FAKE_NVML_LEGACY:?RT_FAKE_NVML_LEGACY names the legacy fake}
unset RTRACK_NVML_LIBRARY FAKE_NVML_GPUS FAKE_NVML_FAIL_INIT FAKE_NVML_PROC_FILE FAKE_NVML_RACE \
      FAKE_NVML_LOST FAKE_NVML_HANG_AFTER FAKE_NVML_NOT_SUPPORTED FAKE_NVML_UTIL \
      FAKE_NVML_DELAY_US FAKE_NVML_CALLS
MIB=1048576
GIB=1073741824

# The job registers itself and a child with the fake driver, as a CUDA program would by
# opening a context: gpu pid used_mib sm_util mem_util list. An outsider (this shell, not in
# the tree) uses GPU 0 too.
cat >job.sh <<'EOF'
procs=$1
sleep 1.6 &
child=$!
{
    echo "0 $$ 1024 50 10 C"
    echo "1 $$ 512 30 5 CG"
    echo "1 $child 256 20 2 G"
} >>"$procs"
wait
EOF
fake_run() { # DB [rtrack run options...]: run job.sh under the fake, 2 GPUs
    local db=$1
    shift
    echo "0 $$ 4096 70 20 C" >"$db.procs"
    RTRACK_NVML_LIBRARY=${LIB:-$FULL} FAKE_NVML_GPUS=2 FAKE_NVML_PROC_FILE="$T/$db.procs" \
        "$RTRACK" run --db "$db" --interval 0.2 "$@" -- sh job.sh "$T/$db.procs" 2>"$db.err"
}
# the last periodic sample in which the job and its child are both live: all registered by
# then (on a loaded machine the child's exit can come a sample before the job's)
last() { q "$1" "SELECT max(id) FROM samples WHERE kind = 'periodic' AND proc_count >= 2"; }
gs() { # DB IDX COLUMNS: one gpu_samples row of the last periodic sample
    q "$1" "SELECT $3 FROM gpu_samples gs JOIN gpus g ON g.id = gs.gpu_id WHERE g.idx = $2 AND gs.sample_id = $(last "$1")"
}
gps() { # DB WHERE COLUMNS: gpu_process_samples rows of the last periodic sample, by pid
    q "$1" "SELECT $3 FROM gpu_process_samples x JOIN processes p ON p.id = x.process_id JOIN gpus g ON g.id = x.gpu_id WHERE x.sample_id = $(last "$1") AND $2 ORDER BY g.idx, p.pid"
}

# --- no GPU at all: nothing recorded, Python's int 0 in the CSV, [] and null in JSON ----------
"$RTRACK" run --db none.db --interval 0.2 -- sleep 0.5 2>none.err
check "no gpu: exit 0" "$?" 0
check "no gpu: no gpus rows" "$(q none.db "SELECT count(*) FROM gpus")" 0
check "no gpu: no gpu_samples rows" "$(q none.db "SELECT count(*) FROM gpu_samples")" 0
check "no gpu: runs jsonl host GPU fields null" \
    "$("$RTRACK" runs --db none.db --format jsonl | python3 -c 'import json, sys; r = json.loads(sys.stdin.readline()); print(r["host_gpu_model"], r["host_gpu_count"], r["host_gpu_memory_mib"])')" \
    "None None None"
check "no gpu: nothing about gpus on stderr" "$(grep -ci gpu none.err)" 0
"$RTRACK" export --db none.db --format csv >none.csv
check "no gpu: csv gpu columns are Python's int 0" \
    "$(tail -n 1 none.csv | awk -F, '{ print $19 "," $20 "," $21 "," $30 "," $31 "," $32 }')" "0,0,0,0,0,0"
"$RTRACK" export --db none.db --format jsonl >none.jsonl
check "no gpu: json gpu [] and process gpu fields null" "$(tail -n 1 none.jsonl | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
c = j["cpu"]
print(j["gpu"], c["process_gpu_usage"], c["process_gpu_vram_mib"], c["process_gpu_utilized"])')" \
    "[] None None None"

# --- two fake GPUs, the tree's processes on them ---------------------------------------------
DB=fake.db
: >calls.log
FAKE_NVML_CALLS=$T/calls.log fake_run $DB
check "fake: exit 0" "$?" 0
check "fake: stderr has no gpu warning" "$(grep -ci gpu $DB.err)" 0
check "fake: two gpus" "$(q $DB "SELECT count(*) FROM gpus")" 2
check "fake: gpu 0 identity" \
    "$(q $DB "SELECT idx, vendor, name, uuid, pci_bus_id, driver_version, vram_total_bytes, core_count FROM gpus WHERE idx = 0")" \
    "0|nvidia|NVIDIA Fake GPU 0|GPU-fa4e0000-0000-0000-0000-000000000000|00000000:10:00.0|550.00-fake|85899345920|6912"
check "fake: gpu 1 identity" "$(q $DB "SELECT name, pci_bus_id, core_count FROM gpus WHERE idx = 1")" \
    "NVIDIA Fake GPU 1|00000000:11:00.0|6913"
check "fake: every sample after the baseline has both gpus" \
    "$(q $DB "SELECT count(*) FROM samples s WHERE s.seq > 0 AND (SELECT count(*) FROM gpu_samples WHERE sample_id = s.id) <> 2")" 0
check "fake: gpu 0 values" "$(gs $DB 0 "util_pct, mem_util_pct, temperature_c, power_w, clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz, gs.vram_total_bytes")" \
    "20.0|5.0|40.0|100.0|1500|1400|2600|85899345920"
check "fake: gpu 1 values" "$(gs $DB 1 "util_pct, mem_util_pct, temperature_c, power_w, clock_graphics_mhz, clock_sm_mhz, clock_mem_mhz")" \
    "30.0|6.0|41.0|101.0|1501|1401|2601"
check "fake: gpu 0 vram used = 1 GiB + job 1024 MiB + outsider 4096 MiB" \
    "$(gs $DB 0 vram_used_bytes)" $((GIB + 5120 * MIB))
check "fake: gpu 1 vram used = 2 GiB + 512 + 256 MiB" "$(gs $DB 1 vram_used_bytes)" $((2 * GIB + 768 * MIB))
root=$(q $DB "SELECT pid FROM runs")
check "fake: tree processes on gpus: root on 0 and 1 (listed twice, recorded once), child on 1" \
    "$(gps $DB 1 "g.idx, p.pid = $root, x.vram_used_bytes / $MIB, x.util_pct, x.mem_util_pct")" \
    "$(printf '0|1|1024|50.0|10.0\n1|1|512|30.0|5.0\n1|0|256|20.0|2.0')"
check "fake: the outsider is not attributed to the job" "$(gps $DB "p.pid = $$" "count(*)")" 0
check "fake: host_gpus view" "$(q $DB "SELECT host_gpu_model, host_gpu_count, host_gpu_memory_mib FROM host_gpus")" \
    "NVIDIA Fake GPU 0|2|163840"
check "fake: rtrack runs --format jsonl has the host GPU fields" \
    "$("$RTRACK" runs --db $DB --format jsonl | python3 -c 'import json, sys; r = json.loads(sys.stdin.readline()); print(r["host_gpu_model"], r["host_gpu_count"], r["host_gpu_memory_mib"])')" \
    "NVIDIA Fake GPU 0 2 163840"
check "fake: newest symbol versions used" \
    "$(grep -cx -e nvmlInit_v2 -e nvmlDeviceGetCount_v2 -e nvmlDeviceGetComputeRunningProcesses_v3 -e nvmlDeviceGetGraphicsRunningProcesses_v3 -e nvmlDeviceGetPciInfo_v3 calls.log | awk '{ print ($1 > 5) }')" 1
# per-process utilization costs ~2 ms of driver CPU per call on a real GPU: at most once a
# second per GPU (2 GPUs, ~1.8 s, 9 samples at 0.2 s: without the limit it would be >= 18)
check_range "fake: process utilization queried at most once a second per gpu" \
    "$(grep -cx nvmlDeviceGetProcessUtilization calls.log)" 2 8
check "fake: process utilization in every sample with tree processes (carried between queries)" \
    "$(q $DB "SELECT count(*) FROM gpu_process_samples WHERE util_pct IS NULL")" 0
check "fake: memory from the v2 query (reservation apart)" "$(grep -cx nvmlDeviceGetMemoryInfo_v2 calls.log | awk '{ print ($1 > 5) }')" 1
check "fake: no unversioned process list used" \
    "$(grep -cx -e nvmlDeviceGetComputeRunningProcesses -e nvmlDeviceGetGraphicsRunningProcesses -e nvmlInit calls.log)" 0

# exported: the last periodic row of the combined CSV, system and process GPU columns
"$RTRACK" export --db $DB --format csv >fake.csv
row=$(python3 - fake.csv "$(q $DB "SELECT seq FROM samples WHERE id = $(last $DB)")" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), quoting=csv.QUOTE_NONNUMERIC))
h, r = rows[0], rows[int(sys.argv[2])]
print(",".join(repr(r[h.index(c)]) for c in (
    "system_gpu_usage", "system_gpu_vram_mib", "system_gpu_utilized",
    "process_gpu_usage", "process_gpu_vram_mib", "process_gpu_utilized")))
EOF
)
check "fake: csv gpu columns (system 0.2+0.3 GPUs, 6144+2816 MiB, 2; tree 0.5+0.3+0.2, 1792 MiB, 2)" \
    "$row" "0.5,8960.0,2.0,1.0,1792.0,2.0"
line=$(grep -o '"process_gpu_utilized",*[0-9]*' fake.csv | head -n 1)
check "fake: csv header has process_gpu_utilized" "$line" '"process_gpu_utilized"'
"$RTRACK" export --db $DB --format jsonl >fake.jsonl
check "fake: json gpu objects and process gpu fields" "$(python3 - fake.jsonl "$(q $DB "SELECT seq FROM samples WHERE id = $(last $DB)")" <<'EOF'
import json, sys
j = [json.loads(l) for l in open(sys.argv[1])][int(sys.argv[2]) - 1]
g = j["gpu"]
c = j["cpu"]
print(len(g), g[0]["name"], g[0]["host_id"], g[0]["utilization_pct"], g[1]["vram_used_bytes"],
      g[0]["temperature_celsius"], g[1]["power_watts"], g[0]["frequency_mhz"], g[0]["core_count"],
      g[0]["detail"]["driver_version"], c["process_gpu_usage"], c["process_gpu_vram_mib"],
      c["process_gpu_utilized"])
EOF
)" "2 NVIDIA Fake GPU 0 0 20.0 $((2 * GIB + 768 * MIB)) 40 101.0 1500 6912 550.00-fake 1.0 1792.0 2"

check "fake: summary: the tree's GPU use and the GPU recommendation (1792 MiB x 1.2 -> 3072)" \
    "$("$RTRACK" summary --db $DB --format json | python3 -c '
import json, sys
j = json.load(sys.stdin)
p, r = j["process"], j["recommendation"]
print(p["gpu_usage"]["max"], p["gpu_vram_mib"]["max"], p["gpus_used"]["max"], r["gpu"], r["vram_mib"], j["host"]["gpu_count"])')" \
    "1 1792 2 1 3072 2"

# --- the legacy library: unversioned functions with the 16-byte v1 process struct ------------
DB=legacy.db
: >calls.log
LIB=$LEGACY FAKE_NVML_CALLS=$T/calls.log fake_run $DB
check "legacy: exit 0" "$?" 0
check "legacy: unversioned init and process lists used" \
    "$(grep -cx -e nvmlInit -e nvmlDeviceGetComputeRunningProcesses calls.log | awk '{ print ($1 > 2) }')" 1
root=$(q $DB "SELECT pid FROM runs")
check "legacy: pids and memory read through the v1 layout; no utilization function -> NULL" \
    "$(gps $DB 1 "g.idx, p.pid = $root, x.vram_used_bytes / $MIB, coalesce(x.util_pct, 'null')")" \
    "$(printf '0|1|1024|null\n1|1|512|null\n1|0|256|null')"
check "legacy: the v1 memory query counts the driver's 256 MiB reservation as used" \
    "$(gs $DB 0 vram_used_bytes)" $((GIB + 5376 * MIB))
check "legacy: no pci/core-count functions -> NULL identity fields" \
    "$(q $DB "SELECT coalesce(pci_bus_id, 'null'), coalesce(core_count, 'null'), name FROM gpus WHERE idx = 0")" \
    "null|null|NVIDIA Fake GPU 0"

# --- the count protocol racing a growing list ---------------------------------------------------
DB=race.db
FAKE_NVML_RACE=1 fake_run $DB
check "race: exit 0" "$?" 0
check "race: the tree's rows are all there" "$(gps $DB 1 "count(*)")" 3
check "race: the phantom process that appeared mid-call is listed, not attributed" \
    "$(gps $DB "p.pid >= 4000000" "count(*)")" 0
check "race: gpu 0 vram includes the phantom's 1 MiB" "$(gs $DB 0 vram_used_bytes)" $((GIB + 5121 * MIB))

# --- what the driver cannot say is NULL, not 0 -------------------------------------------------
DB=ns.db
FAKE_NVML_NOT_SUPPORTED=power,temperature,clocks fake_run $DB
check "not supported: exit 0" "$?" 0
check "not supported: power, temperature, clocks NULL; utilization kept" \
    "$(gs $DB 0 "coalesce(power_w, 'null'), coalesce(temperature_c, 'null'), coalesce(clock_graphics_mhz, 'null'), coalesce(clock_sm_mhz, 'null'), util_pct")" \
    "null|null|null|null|20.0"
DB=noperm.db
sed 's/ 1024 50 10 C/ - 50 10 C/' job.sh >job-noperm.sh
cp job.sh job-full.sh
cp job-noperm.sh job.sh
fake_run $DB
cp job-full.sh job.sh
check "no permission: usedGpuMemory not available -> NULL; others kept" \
    "$(gps $DB "g.idx = 0" "coalesce(x.vram_used_bytes, 'null'), x.util_pct")" "null|50.0"

# --- init failure and a missing library: no GPU backend; only the explicit path warns -----------
DB=initfail.db
FAKE_NVML_FAIL_INIT=1 fake_run $DB
check "init failure: exit 0" "$?" 0
check "init failure: no gpus" "$(q $DB "SELECT count(*) FROM gpus")" 0
check "init failure: silent" "$(grep -ci gpu $DB.err)" 0
check "init failure: samples recorded" "$(q $DB "SELECT count(*) > 3 FROM samples WHERE cpu_usage IS NOT NULL")" 1
DB=nolib.db
RTRACK_NVML_LIBRARY=$T/no-such-libnvidia-ml.so.1 "$RTRACK" run --quiet --db $DB -- true 2>$DB.err
check "missing explicit library: exit 0" "$?" 0
check "missing explicit library: one warning naming it" \
    "$(grep -c "gpu: cannot load NVML library '$T/no-such-libnvidia-ml.so.1'" $DB.err),$(wc -l <$DB.err)" "1,1"

# --- a GPU lost mid-run: its values become unknown, the other GPU and the CPU go on --------------
DB=lost.db
FAKE_NVML_LOST=1:3 fake_run $DB
check "lost: exit 0" "$?" 0
check "lost: one warning" "$(grep -c "is lost\|lost;" $DB.err)" 1
check "lost: gpu 1 row present with every value NULL" \
    "$(gs $DB 1 "coalesce(util_pct, vram_used_bytes, temperature_c, power_w, clock_graphics_mhz, 'null')")" "null"
check "lost: gpu 0 still measured" "$(gs $DB 0 util_pct)" "20.0"
check "lost: no process rows on the lost gpu" "$(gps $DB "g.idx = 1" "count(*)")" 0

# --- a hung driver: recording goes on without GPU values, the run ends on time -------------------
# the worker, still inside the driver at the end, is left running: rtrack then ends with _exit,
# not exit()'s handlers (the driver library's clean-up would run under it); rt_slow_exit.so makes
# exit() 5 s slower after those handlers, which the bound below would see
DB=hang.db
start=$(date +%s.%N)
LD_PRELOAD="$RT_HELPERS/rt_slow_exit.so" RT_SLOW_EXIT_S=5 \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    FAKE_NVML_HANG_AFTER=4 fake_run $DB
rc=$?
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
check "hang: exit 0" "$rc" 0
check_range "hang: the run ends with the job (s)" "$wall" 1.5 6
check "hang: one warning" "$(grep -c "did not answer" $DB.err)" 1
check "hang: samples kept coming (>= 7)" "$(q $DB "SELECT count(*) >= 7 FROM samples")" 1
check "hang: the last samples have CPU values but no GPU rows" \
    "$(q $DB "SELECT count(*) FROM samples s WHERE s.seq >= (SELECT max(seq) - 2 FROM samples) AND (s.cpu_usage IS NULL OR EXISTS (SELECT 1 FROM gpu_samples WHERE sample_id = s.id))")" 0
check "hang: the samples before the hang have GPU rows" \
    "$(q $DB "SELECT count(DISTINCT sample_id) >= 1 FROM gpu_samples")" 1

# --- sub-second intervals keep working with GPUs ----------------------------------------------------
DB=fast.db
echo >fast.procs
RTRACK_NVML_LIBRARY=$FULL FAKE_NVML_GPUS=8 FAKE_NVML_PROC_FILE=$T/fast.procs \
    "$RTRACK" run --db $DB --interval 0.1 -- sleep 1.2 2>/dev/null
check "fast: exit 0" "$?" 0
check_range "fast: samples at 0.1 s over 1.2 s" "$(q $DB "SELECT count(*) FROM samples")" 9 14
check "fast: every sample after the baseline has all 8 gpus" \
    "$(q $DB "SELECT count(*) FROM samples s WHERE s.seq > 0 AND (SELECT count(*) FROM gpu_samples WHERE sample_id = s.id) <> 8")" 0

# --- record, system only: devices yes, no process attribution -------------------------------------
DB=rec.db
echo "0 $$ 2048 10 1 C" >rec.procs
: >calls.log
RTRACK_NVML_LIBRARY=$FULL FAKE_NVML_GPUS=1 FAKE_NVML_PROC_FILE=$T/rec.procs FAKE_NVML_CALLS=$T/calls.log \
    "$RTRACK" record --db $DB --interval 0.2 --duration 0.7 2>/dev/null
check "record: exit 0" "$?" 0
check "record: gpu rows" "$(q $DB "SELECT count(*) > 2 FROM gpu_samples")" 1
check "record: no process rows" "$(q $DB "SELECT count(*) FROM gpu_process_samples")" 0
check "record: no process utilization query without a tracked process on the gpu" \
    "$(grep -cx nvmlDeviceGetProcessUtilization calls.log)" 0

finish
