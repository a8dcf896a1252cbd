#!/usr/bin/env bash
# rtrack summary: the golden text and markdown of a hand-made run (tests/fixtures/summary), the
# JSON document's keys, a live run, --job, the Keeper recommendation through a local mock, and
# bad input. (The figures themselves are checked by hand in tests/unit/test_summary.c.)
MOCK=$(cd "$(dirname "$0")/../helpers" && pwd)/keeper_mock.py
. "$(dirname "$0")/lib.sh" "$1"
FX=${RT_FIXTURES:?}/summary

# a database rtrack created (real schema), holding the fixture runs
"$RTRACK" record --db fx.db --duration 0.05 --quiet
q fx.db "PRAGMA foreign_keys = ON; DELETE FROM runs"
"$SQLITE" fx.db <"$FX/runs.sql"

"$RTRACK" summary --db fx.db --run 1 >run1.txt
check "text: exit 0" "$?" 0
check_cmd "text: the golden summary of run 1" diff -u "$FX/run1.txt" run1.txt
"$RTRACK" summary --db fx.db --run 1 --format markdown >run1.md
check_cmd "markdown: the golden summary of run 1" diff -u "$FX/run1.md" run1.md
check "text: no escape sequences (no colour)" "$(grep -c $'\e' run1.txt)" 0

"$RTRACK" summary --db fx.db --run 1 --format json >run1.json
check "json: every key of the schema (include/rtrack/summary/summary.h)" "$(python3 - run1.json <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
want = {
    "": ["run", "host", "process", "system", "python_stats", "kernel", "recommendation",
         "python_recommendation", "efficiency", "allocation", "sparklines", "top_processes",
         "server"],
    "run": ["id", "uuid", "mode", "status", "in_progress", "command", "job_name", "project_name",
            "stage_name", "task_name", "team", "env", "language", "orchestrator", "executor",
            "external_run_id", "container_image", "tags", "pid", "exit_code", "exit_signal",
            "end_reason", "started_at", "ended_at", "duration_s", "samples", "interval_s", "runs"],
    "host": ["hostname", "cpu_model", "vcpus", "memory_mib", "kernel", "os", "gpu_model",
             "gpu_count", "gpu_memory_mib"],
    "process": ["cpu_cores", "memory_mib", "disk_read_bytes_per_s", "disk_write_bytes_per_s",
                "gpu_usage", "gpu_vram_mib", "gpus_used", "disk_read_bytes", "disk_write_bytes"],
    "system": ["cpu_cores", "memory_mib", "disk_read_bytes_per_s", "disk_write_bytes_per_s",
               "net_recv_bytes_per_s", "net_sent_bytes_per_s", "gpu_usage", "gpu_vram_mib",
               "gpus_used", "disk_read_bytes", "disk_write_bytes", "net_recv_bytes",
               "net_sent_bytes"],
    "python_stats": ["process_cpu_usage", "process_memory_mib", "process_gpu_usage",
                     "process_gpu_vram_mib", "process_gpu_utilized", "system_disk_space_used_gb",
                     "system_net_recv_bytes", "system_net_sent_bytes", "timestamp"],
    "recommendation": ["cpu", "cpu_p95", "memory_mib", "gpu", "vram_mib", "text", "metaflow",
                       "memory_basis"],
    "python_recommendation": ["cpu", "cpu_p95", "memory_mib", "gpu", "vram_mib", "text",
                              "metaflow", "memory_basis"],
    "efficiency": ["cpu_pct", "memory_pct", "gpu_pct", "vram_pct"],
    "sparklines": ["cpu_cores", "memory_mib", "disk_io_bytes_per_s", "gpu_usage"],
    "top_processes": ["by_cpu", "by_pss"],
}
bad = []
for obj, keys in want.items():
    o = j if obj == "" else j[obj]
    bad += [f"{obj}.{k} missing" for k in keys if k not in o]
    bad += [f"{obj}.{k} unexpected" for k in o if k not in keys]
for k in ("mean", "p50", "p95", "max"):
    if k not in j["process"]["cpu_cores"]:
        bad.append("process.cpu_cores." + k)
print(" ".join(bad) or "ok")
EOF
)" ok

# --- a live run: summary of what was just recorded -------------------------------------------
"$RTRACK" run --quiet --db live.db --interval 0.1 --job-name live -- \
    sh -c 'i=0; while [ $i -lt 600000 ]; do i=$((i+1)); done; head -c 4000000 /dev/zero >blob; sync; rm blob'
"$RTRACK" summary --db live.db --format json >live.json
check "live: exit 0" "$?" 0
check "live: the job's own figures" "$(python3 - live.json <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
p = j["process"]
print(j["run"]["job_name"], j["run"]["samples"] >= 2, p["cpu_cores"]["max"] > 0.3,
      p["memory_mib"]["max"] > 0, p["disk_write_bytes"] >= 4000000, j["recommendation"]["cpu"] >= 1,
      j["top_processes"]["by_cpu"][0]["name"] in ("sh", "head", "sync", "rm"))
EOF
)" "live True True True True True True"
"$RTRACK" run --quiet --db live.db --interval 0.1 --job-name live -- sleep 0.3
check "--job: two runs together" "$("$RTRACK" summary --db live.db --job live --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["run"]["runs"])')" 2
RTRACK_DB=live.db "$RTRACK" summary >env.txt
check "RTRACK_DB names the database" "$(head -c 5 env.txt)" "run 2"

# --- Keeper: the cheapest server through a local mock; offline --------------------------------
python3 "$MOCK" "$T/keeper.log" >mock.port &
mock=$!
for _ in $(seq 50); do [ -s mock.port ] && break; sleep 0.1; done
port=$(head -n 1 mock.port)
RTRACK_KEEPER_URL=http://127.0.0.1:$port "$RTRACK" summary --db fx.db --run 1 --recommend-server \
    --format json >srv.json
check "keeper: exit 0" "$?" 0
check "keeper: the first server, asked with the recommendation (2 vCPUs, 1024 MiB -> 1 GB)" \
    "$(python3 - srv.json "$T/keeper.log" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
req = [json.loads(l) for l in open(sys.argv[2])][-1]
print(j["server"]["api_reference"], "vcpus_min=2&memory_min=1&" in req["path"], req["headers"]["x-application-id"])
EOF
)" "cax11 True rtrack"
RTRACK_KEEPER_URL=http://127.0.0.1:$port "$RTRACK" summary --db fx.db --run 1 --recommend-server >srv.txt
check "keeper: the text names the server" "$(grep -c 'cheapest fitting server: CAX11' srv.txt)" 1
kill $mock 2>/dev/null
wait $mock 2>/dev/null
RTRACK_KEEPER_URL=http://127.0.0.1:$port "$RTRACK" summary --db fx.db --run 1 --recommend-server >off.txt 2>off.err
check "offline: exit 0, everything else still there" "$?,$(grep -c 'next time: 2 vCPUs' off.txt)" "0,1"
check "offline: one line says why" "$(grep -c 'no server recommendation: 127.0.0.1 not reachable' off.txt)" 1

# --- bad input: message, exit 2, nothing on stdout ---------------------------------------------
bad() { # NAME EXPECTED-MESSAGE ARGS...
    local name=$1 msg=$2
    shift 2
    "$RTRACK" summary "$@" >bad.out 2>bad.err
    check "bad input: $name: exit 2" "$?" 2
    check "bad input: $name: message" "$(grep -c -- "$msg" bad.err)" 1
    check "bad input: $name: nothing on stdout" "$(wc -c <bad.out)" 0
}
bad "unknown run" "no run 99 in 'fx.db'" --db fx.db --run 99
bad "one sample only" "run 4 has fewer than two samples" --db fx.db --run 4
bad "unknown job" "no runs of job 'nope'" --db fx.db --job nope
bad "unknown format" "unknown format 'xml'" --db fx.db --format xml
bad "run and job" "cannot be used together" --db fx.db --run 1 --job train
bad "missing database" "rtrack" --db missing.db
check "in progress: marked" "$("$RTRACK" summary --db fx.db --run 3 | head -n 1)" "run 3: running (in progress)"

finish
