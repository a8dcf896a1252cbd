#!/usr/bin/env bash
# The text people read (issue 19): summary's text and markdown on hand-made runs
# (tests/fixtures/summary/text.sql, every figure worked out by hand there and below), the status
# words, --compare, --job's spread (mean ± σ with n - 1, min … max), lines of at most 100
# columns; runs' filters (--job, --last, --since, --status, interrupted with a kill -9'ed
# recorder), its quoted commands and its width; the end-of-run line of `rtrack run` and
# `run --summary`.
. "$(dirname "$0")/lib.sh" "$1"
FX=${RT_FIXTURES:?}/summary
export LC_ALL=C.UTF-8
# the widest line of stdin, in terminal columns
widest() { wc -L | tr -d ' '; }
# "yes" when no line of FILE is wider than N (default 80) columns, else the widest
narrow() { awk -v w="$(widest <"$1")" -v n="${2:-80}" 'BEGIN { print (w <= n) ? "yes" : w }'; }

# a database rtrack created (real schema), holding the fixture runs 10 to 13
"$RTRACK" record --db fx.db --duration 0.05 --quiet
q fx.db "PRAGMA foreign_keys = ON; DELETE FROM runs"
"$SQLITE" fx.db <"$FX/text.sql"

# --- run 10 (its golden text and markdown: test_summary.sh) -------------------------------------
# By hand (text.sql): wall 10004 - 10000 = 4.00 s; CPU time 5 + 1 = 6.00 s (the kernel's); cores
# 1, 2, 2, 1: mean 1.50, p95 (rank ceil(0.95 x 4) = 4 of 1, 1, 2, 2) 2.00, max 2.00; 1.5 of 4
# vCPUs = 37.5 %; 300 MiB of 8192 = 3.66 %; peak 300 MiB at 10003 - 10000 = +3.00 s, held by
# cc1 202 (200 MiB), cc1 203 (40 MiB), make (2 MiB); the tree wrote 4 x 512 B = 2.00 KiB, the
# system 4 x 1024 B = 4.00 KiB; sparklines: cores 1/2 x 7 + 0.5 -> level 4 (▅), 2 -> 7 (█);
# memory 100/300 x 7 + .5 = 2.8 -> ▃, 200 -> 5.2 -> ▆, 300 -> █, 50 -> 1.7 -> ▂; pressure 10/40
# -> ▃, 20 -> ▅, 40 -> █, 0 -> ▁; processes: cc1 x3 with 2 + 2 + 1 = 5.00 CPU-s, the largest
# peak 200 MiB, the busiest (201 and 202 tie at 2 s: the lower pid) cc1's command without its
# directory (cut to the 17 columns an 80-column line leaves it); make 4 x 0.1 = 0.40 CPU-s, 2 MiB,
# pid 200, parent 1; the mean cores are the CPU time over the wall time, 6 / 4 = 1.50; next time
# round-half-even(1.5) = 2 vCPUs, 300 x 1.2 = 360 -> 512 MiB; shared: other processes' 2.5 - 1.5
# = 1.00 cores, at least 0.25.
"$RTRACK" summary --db fx.db --run 10 >run10.txt
check "text: no line over 80 columns (stdout no terminal)" "$(narrow run10.txt)" yes
check "text: the header's figures" \
    "$(grep -E '^(wall time|CPU time|cores|efficiency|peak memory) ' run10.txt | cut -c14- | tr '\n' '|')" \
    "4.00 s|6.00 s (user 5.00 s, system 1.00 s, as the kernel counted the job)|1.50 mean (CPU time / wall time), 2.00 p95, 2.00 max|CPU 37.5 % of the host's 4 vCPUs, memory 3.66 % of its 8.00 GiB|300.0 MiB at +3.00 s (the job's processes together, sampled)|"
check "text: labelled sparklines with their scales" \
    "$(grep -E '^(job [Cmd][^(]|CPU pressure)' run10.txt | tr '\n' '|')" \
    "job CPU        ▅██▅  0 … 2.00 cores|job memory     ▃▆█▂  0 … 300.0 MiB|job disk I/O   ████  0 … 512 B/s|CPU pressure   ▃▅█▁  0 … 40.0 % of the time (some)|"
check "text: processes grouped by name, with parent pids" \
    "$(sed -n '/^  name /,/^$/p' run10.txt | sed 1d | tr -s ' ' | tr '\n' '|')" \
    " cc1 ×3 5.00 ≤200.0 MiB each - - cc1 -quiet -O2 -…| make 0.40 2.00 MiB 200 1 make -j2||"

# --- the host: "shared" only on evidence of other work (issue 36) --------------------------------
# run 10's system used 2.5 cores on average beside the job's 1.5: 1.00 core of other work, at
# least 0.25 -> shared, naming the CPU. Run 12 is an idle VM's small job: the system's CPU is the
# job's own (1, 3), its memory 1 GiB beside the job's 300 MiB (the OS's own, which the rule of
# system mean > job x 1.5 took for other work) -> dedicated.
check "host: other work named (JSON)" \
    "$("$RTRACK" summary --db fx.db --run 10 --format json | python3 -c 'import json, sys; j = json.load(sys.stdin); b = j["allocation_basis"]; print(j["allocation"], b["resource"], b["others_cores"])')" \
    "shared cpu 1"
check "host: other work named (text)" "$(grep -c '^host  *shared: other processes used 1.00 cores beside the job.s 1.50$' run10.txt)" 1
"$RTRACK" summary --db fx.db --run 12 >run12.txt
check "host: the OS's own memory is no other work (JSON)" \
    "$("$RTRACK" summary --db fx.db --run 12 --format json | python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["allocation"], j["allocation_basis"]["resource"])')" \
    "dedicated None"
check "host: the OS's own memory is no other work (text)" \
    "$(grep -c '^host  *dedicated: other processes used 0.00 cores and 2.00 KiB of disk I/O$' run12.txt)" 1

# --- run 11: a killed job says so, its command quoted as a shell takes it ----------------------
"$RTRACK" summary --db fx.db --run 11 >run11.txt
check "killed: the status line" "$(head -1 run11.txt)" "run 11: killed by SIGKILL"
check "killed: the command, quoted" "$(grep '^command ' run11.txt)" \
    "command      python3 train.py --name 'it'\\''s here'"
check "killed: no 'exit code 137' nor 'signaled'" "$(grep -c -e 137 -e signaled run11.txt)" 0
# its ten processes of a 15-character name: cut to 14 so that " ×10" fits the 18 columns
check "killed: a long name's group in its columns" "$(grep '^  avery' run11.txt)" \
    "  averyveryveryl ×10    0.00 -$(printf '%23s' -)       -  -"

# --- --compare 10 12: each figure, the change, the change in % of the first ---------------------
# run 12 by hand: 2 s; CPU 3 + 1 = 4 s; cores 1, 3: mean 2, max 3; PSS 200, 400: mean 300, peak
# max(400 sampled, 100 kernel) = 400; wrote nothing; 2 vCPUs (round-half-even 2), 480 -> 512 MiB.
# changes: 2 - 4 = -2 s (-50 %), 4 - 6 = -2 s (-33.3 %), +0.5 (+33.3 %), +1 (+50 %),
# 300 - 162.5 = +137.5 MiB (+84.6 %), +100 MiB (+33.3 %), 0 B, -2 KiB (-100 %)
"$RTRACK" summary --db fx.db --compare 10 12 >cmp.txt
check "compare: exit 0" "$?" 0
check "compare: the two runs" "$(head -2 cmp.txt | tr '\n' '|')" \
    "compare      run 10 · build: finished, exit 0; make -j2|and          run 12 · build: finished, exit 0; make -j2|"
check "compare: the figures side by side, with the changes" "$(sed -n '/ change$/,/^$/p' cmp.txt)" \
    "                        run 10        run 12  change
  wall time             4.00 s        2.00 s  -2.00 s (-50.0 %)
  CPU time              6.00 s        4.00 s  -2.00 s (-33.3 %)
  cores mean              1.50          2.00  +0.50 (+33.3 %)
  cores max               2.00          3.00  +1.00 (+50.0 %)
  memory mean        162.5 MiB     300.0 MiB  +137.5 MiB (+84.6 %)
  peak memory        300.0 MiB     400.0 MiB  +100.0 MiB (+33.3 %)
  disk read                0 B           0 B  ±0 B
  disk written        2.00 KiB           0 B  -2.00 KiB (-100 %)"
check "compare: what each recommends" "$(tail -2 cmp.txt | tr '\n' '|')" \
    "next time    run 10: 2 vCPUs, 512 MiB memory|             run 12: 2 vCPUs, 512 MiB memory|"
check "compare: no line over 80 columns" "$(narrow cmp.txt)" yes
"$RTRACK" summary --db fx.db --compare 10 >/dev/null 2>cmp1.err
check "compare: one run only: exit 2" "$?:$(grep -c 'needs two runs' cmp1.err)" "2:1"
"$RTRACK" summary --db fx.db --compare 10 99 >/dev/null 2>cmp99.err
check "compare: an unknown run: exit 2" "$?:$(grep -c 'no run 99' cmp99.err)" "2:1"
"$RTRACK" summary --db fx.db --run 10 --compare 10 12 >/dev/null 2>cmpr.err
check "compare: with --run: exit 2" "$?" 2

# --format json: the same hand figures (above) for programs; the per cent rounded to 1 dp here
"$RTRACK" summary --db fx.db --compare 10 12 --format json >cmp.json
check "compare, json: exit 0" "$?" 0
check "compare, json: the runs, their status and recommendations" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print("|".join("%s %s %s: %s" % (r["run"]["id"], r["run"]["status"], r["run"]["exit_code"],
                                 r["recommendation"]["text"]) for r in d["runs"]))' cmp.json)" \
    "10 finished 0: 2 vCPUs, 512 MiB memory|12 finished 0: 2 vCPUs, 512 MiB memory"
check "compare, json: each figure of both, the delta and the delta in %" "$(python3 -c '
import json, sys
n = lambda x: "null" if x is None else "%g" % round(x, 1)
for k, f in json.load(open(sys.argv[1]))["figures"].items():
    print(k, *map(n, f["values"]), n(f["delta"]), n(f["delta_pct"]))' cmp.json)" \
    "wall_time_s 4 2 -2 -50
cpu_time_s 6 4 -2 -33.3
cores_mean 1.5 2 0.5 33.3
cores_max 2 3 1 50
memory_mean_mib 162.5 300 137.5 84.6
peak_memory_mib 300 400 100 33.3
disk_read_bytes 0 0 0 null
disk_write_bytes 2048 0 -2048 -100
gpu_usage_mean null null null null
vram_max_mib null null null null"
"$RTRACK" summary --db fx.db --compare 10 12 --format markdown >cmp.md
check "compare, markdown: the memory row" "$(grep -F '| memory mean |' cmp.md)" \
    "| memory mean | 162.5 MiB | 300.0 MiB | +137.5 MiB (+84.6 %) |"

# --- --job build: how runs 10, 12 and 13 spread ------------------------------------------------
# run 13 by hand: 6 s; CPU 2 s; cores 1, 1, 1; PSS 100 MiB x 3; peak max(100, 500 kernel) = 500.
# wall 4, 2, 6: mean 4, σ = sqrt((0 + 4 + 4) / 2) = 2; CPU 6, 4, 2: the same; cores mean (CPU
# time / wall time) 6/4 = 1.5, 4/2 = 2, 2/6 = 0.33: mean 1.28, σ = sqrt((0.222² + 0.722² +
# 0.944²) / 2) = 0.86; cores max 2, 3, 1: 2 ± 1; memory mean 162.5,
# 300, 100: mean 187.5, σ = sqrt((25² + 112.5² + 87.5²) / 2) = 102.3; peak 300, 400, 500: 400 ±
# 100; read 0; written 2048, 0, 0: mean 682.7 -> 683 B, σ = sqrt((1365.3² + 2 x 682.7²) / 2) =
# 1182.4 B = 1.15 KiB
"$RTRACK" summary --db fx.db --job build >job.txt
check "job: exit 0" "$?" 0
check "job: the spread over the runs" "$(sed -n '/^spread over/,$p' job.txt)" \
    "spread over 3 runs

                                 mean ± σ  min … max
  wall time               4.00 s ± 2.00 s  2.00 s … 6.00 s
  CPU time                4.00 s ± 2.00 s  2.00 s … 6.00 s
  cores mean                  1.28 ± 0.86  0.33 … 2.00
  cores max                   2.00 ± 1.00  1.00 … 3.00
  memory mean       187.5 MiB ± 102.3 MiB  100.0 MiB … 300.0 MiB
  peak memory       400.0 MiB ± 100.0 MiB  300.0 MiB … 500.0 MiB
  disk read                     0 B ± 0 B  0 B … 0 B
  disk written           683 B ± 1.15 KiB  0 B … 2.00 KiB"
"$RTRACK" summary --db fx.db --job build --format markdown >job.md
check "job, markdown: the spread's rows" "$(grep -c '^| \(wall time\|peak memory\) |' job.md):$(grep -F '| peak memory | 400.0 MiB ± 100.0 MiB | 300.0 MiB … 500.0 MiB |' job.md)" \
    "2:| peak memory | 400.0 MiB ± 100.0 MiB | 300.0 MiB … 500.0 MiB |"

# --format json: the same hand figures (above); the σ rounded to 1 dp here
"$RTRACK" summary --db fx.db --job build --format json >job.json
check "job, json: exit 0" "$?" 0
check "job, json: the spread over 3 runs: n, mean, sd, min, max of each figure" "$(python3 -c '
import json, sys
n = lambda x: "null" if x is None else "%g" % round(x, 1)
s = json.load(open(sys.argv[1]))["spread"]
print("runs", s["runs"])
for k, f in s["figures"].items():
    print(k, f["n"], n(f["mean"]), n(f["sd"]), n(f["min"]), n(f["max"]))' job.json)" \
    "runs 3
wall_time_s 3 4 2 2 6
cpu_time_s 3 4 2 2 6
cores_mean 3 1.3 0.9 0.3 2
cores_max 3 2 1 1 3
memory_mean_mib 3 187.5 102.3 100 300
peak_memory_mib 3 400 100 300 500
disk_read_bytes 3 0 0 0 0
disk_write_bytes 3 682.7 1182.4 0 2048
gpu_usage_mean 0 null null null null
vram_max_mib 0 null null null null"
# the keys of one run's document stay as they were: --job's adds "spread", last, and only it
"$RTRACK" summary --db fx.db --run 13 --format json >run13.json
check "job, json: the document's keys are one run's and then \"spread\"" "$(python3 -c '
import json, sys
one, job = (list(json.load(open(f))) for f in sys.argv[1:])
print(job == one + ["spread"])' run13.json job.json)" True
# a job of one run (run 11, 11002 - 11000 = 2 s, named in a copy): the spread of that run alone,
# its sd null (n < 2); the text shows no spread
cp fx.db one.db
q one.db "UPDATE runs SET job_name = 'train' WHERE id = 11"
"$RTRACK" summary --db one.db --job train --format json >train.json
check "job of one run, json: n 1, the run's value, sd null" "$(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["spread"]
w = s["figures"]["wall_time_s"]
print(s["runs"], w["n"], w["mean"], w["sd"], w["min"], w["max"])' train.json)" "1 1 2 None 2 2"
check "job of one run, text: no spread" "$("$RTRACK" summary --db one.db --job train | grep -c '^spread over')" 0

# the text is read from the JSON: each figure of the compare table and of the spread, read back
# from the text (3 significant digits), is the JSON's figure
agree() { # TEXT JSON compare|spread
    python3 - "$@" <<'PY'
import json, re, sys
text, doc, kind = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
labels = {"wall time": ("wall_time_s", "s"), "CPU time": ("cpu_time_s", "s"),
          "cores mean": ("cores_mean", ""), "cores max": ("cores_max", ""),
          "memory mean": ("memory_mean_mib", "MiB"), "peak memory": ("peak_memory_mib", "MiB"),
          "disk read": ("disk_read_bytes", "B"), "disk written": ("disk_write_bytes", "B")}
scale = {"B": {"B": 1, "KiB": 1024, "MiB": 2**20}, "MiB": {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024},
         "s": {"s": 1}, "": {"": 1}}
num = r"[-+±]?[0-9.]+(?: (?:B|KiB|MiB|GiB|s))?"
def val(t, unit):
    m = re.fullmatch(r"([-+±]?)([0-9.]+) ?(\S*)", t)
    return (-1 if m[1] == "-" else 1) * float(m[2]) * scale[unit][m[3]]
def same(t, j, unit):
    return j is not None and abs(val(t, unit) - j) <= max(abs(j) * 0.005, 0.005)
rows = 0
for label, (key, unit) in labels.items():
    m = re.search(r"^  %s +(.*)$" % label, text.split("spread over")[-1], re.M)
    cells = re.findall(num, m[1])
    if kind == "compare":
        f = doc["figures"][key]
        pct = re.search(r"\(([-+]?[0-9.]+) %\)", m[1])
        ok = all(same(c, v, unit) for c, v in zip(cells[:3], f["values"] + [f["delta"]]))
        ok = ok and (pct is None and f["delta_pct"] is None or same(pct[1], f["delta_pct"], ""))
    else:
        f = doc["spread"]["figures"][key]
        ok = all(same(c, f[k], unit) for c, k in zip(cells, ("mean", "sd", "min", "max")))
    rows += ok
print(rows)
PY
}
check "compare: the text's figures are the JSON's (8 rows)" "$(agree cmp.txt cmp.json compare)" 8
check "job: the text's spread is the JSON's (8 rows)" "$(agree job.txt job.json spread)" 8

# --- runs: filters, quoting, width ---------------------------------------------------------------
ids() { awk 'NR > 1 { printf "%s ", $1 }'; }
check "runs: all" "$("$RTRACK" runs --db fx.db | ids)" "10 11 12 13 "
check "runs: --job build" "$("$RTRACK" runs --db fx.db --job build | ids)" "10 12 13 "
check "runs: --last 2 (the newest two)" "$("$RTRACK" runs --db fx.db --last 2 | ids)" "12 13 "
check "runs: --job build --last 1" "$("$RTRACK" runs --db fx.db --job build -n 1 | ids)" "13 "
check "runs: --status killed" "$("$RTRACK" runs --db fx.db --status killed | ids)" "11 "
check "runs: --status failed (killed included)" "$("$RTRACK" runs --db fx.db --status failed | ids)" "11 "
check "runs: --status finished,killed" "$("$RTRACK" runs --db fx.db --status finished,killed | ids)" "10 11 12 13 "
check "runs: --status running (none)" "$("$RTRACK" runs --db fx.db --status running | wc -l)" 1
# 1970-01-01T05:00Z is 18000 s: runs 12 (20000) and 13 (30000) started since
check "runs: --since a UTC date and time" "$("$RTRACK" runs --db fx.db --since 1970-01-01T05:00 | ids)" "12 13 "
check "runs: --since a date (midnight)" "$("$RTRACK" runs --db fx.db --since 1970-01-01 | ids)" "10 11 12 13 "
check "runs: --since 2h (the fixture is from 1970: none)" "$("$RTRACK" runs --db fx.db --since 2h | wc -l)" 1
check "runs: csv keeps the filters" "$("$RTRACK" runs --db fx.db --job build --last 2 --format csv | cut -d, -f1 | tr '\n' ' ')" "id 12 13 "
check "runs: jsonl keeps the filters" \
    "$("$RTRACK" runs --db fx.db --status killed --format jsonl | python3 -c 'import json, sys; print([json.loads(l)["id"] for l in sys.stdin])')" "[11]"
for bad in "--last 0" "--last x" "--since yesterday" "--since -2h" "--status done" "--status ,"; do
    # shellcheck disable=SC2086
    "$RTRACK" runs --db fx.db $bad >bad.out 2>bad.err
    check "runs: bad $bad: exit 2, a message, nothing on stdout" "$?:$(grep -c . bad.err):$(wc -c <bad.out)" "2:1:0"
done
check "runs: the killed run's exit and status" "$("$RTRACK" runs --db fx.db --status killed | awk 'NR == 2 { print $7, $8 }')" "SIGKILL killed"
check "runs: the wall time through the one formatter" "$("$RTRACK" runs --db fx.db --last 1 | awk 'NR == 2 { print $4, $5 }')" "6.00 s"
# the command quoted as a shell takes it: read back, it is the argv that was run
cmd=$("$RTRACK" runs --db fx.db --status killed | awk 'NR == 2' | cut -c84-) # after 83 columns
eval "set -- $cmd"
check "runs: the command, copied into a shell, is the argv that ran" "$#|$1|$2|$3|$4" "4|python3|train.py|--name|it's here"
# the width: a pipe gets the whole command; COLUMNS=100 fits it: 83 columns before the command,
# 17 for it: its start (9), " … " and its last word (5, at most a third of 17)
long="sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do :; done; true'"
"$RTRACK" run --quiet --db fx.db -- sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do :; done; true'
check "runs: a pipe gets the whole command" "$("$RTRACK" runs --db fx.db --last 1 | awk 'NR == 2' | grep -cF -- "$long")" 1
COLUMNS=100 "$RTRACK" runs --db fx.db >w100.txt
check "runs: COLUMNS=100: no line over 100 columns" "$(narrow w100.txt 100)" yes
check "runs: COLUMNS=100: the long command shortened in the middle" \
    "$(awk 'NR == 6' w100.txt | sed 's/.*  //')" "sh -c 'fo … true'"

# --- interrupted: the recorder kill -9'ed ------------------------------------------------------
"$RTRACK" record --quiet --db i.db --interval 0.1 &
rec=$!
wait_samples i.db 3 || fail "interrupted: no samples within 10 s"
"$RTRACK" record --quiet --db i.db --interval 0.1 --duration 0.3
check "interrupted: while the recorder lives, run 1 is running" "$("$RTRACK" runs --db i.db --status running | ids)" "1 "
kill -KILL $rec
wait $rec 2>/dev/null
sleep 2.6 # 3 intervals and 2 s without a sample
check "interrupted: --status interrupted" "$("$RTRACK" runs --db i.db --status interrupted | ids)" "1 "
check "interrupted: --status running: none" "$("$RTRACK" runs --db i.db --status running | wc -l)" 1
check "interrupted: --status finished" "$("$RTRACK" runs --db i.db --status finished | ids)" "2 "

# --- the end-of-run line ------------------------------------------------------------------------
"$RTRACK" run --db e.db -- sh -c 'exit 3' 2>e3.err
check "end line: exit 3" "$?" 3
check "end line: a failed job" \
    "$(grep -cE "^rtrack: run 1 \"sh -c 'exit 3'\" exited 3 after [0-9.]+ s · [0-9.]+ cores \(max [0-9.]+\) · peak [0-9.]+ MiB · [0-9]+ samples · rtrack summary --db e.db --run 1$" e3.err)" 1
"$RTRACK" run --db e.db -- sh -c 'kill -KILL $$' 2>e9.err
check "end line: killed by SIGKILL, no exit code" \
    "$(grep -c "^rtrack: run 2 \"sh -c 'kill -KILL \$\$'\" killed by SIGKILL after " e9.err):$(grep -c 137 e9.err)" "1:0"
# figures from first principles: python holds 200 MiB (bytearray zero-fills every page) while it
# sleeps, on one core at most
"$RTRACK" run --db e.db --interval 0.1 -- python3 -c 'b = bytearray(200 << 20); import time; time.sleep(0.8)' 2>e.err
line=$(cat e.err)
# a command with a single quote goes in double quotes; cut at 40 columns (its last word is
# longer than a third of them)
check "end line: one line, the command in double quotes, cut" \
    "$(wc -l <e.err):$(grep -cF "rtrack: run 3 \"python3 -c 'b = bytearray(200 << 20); i…\" exited 0 after " e.err)" "1:1"
peak=$(sed -n 's/.* · peak \([0-9.]*\) MiB · .*/\1/p' <<<"$line")
check_range "end line: the peak is the 200 MiB held (MiB)" "${peak:-0}" 200 260
maxc=$(sed -n 's/.* cores (max \([0-9.]*\)) · .*/\1/p' <<<"$line")
check_range "end line: one core at most (max cores; sampling jitter of 0.1 s intervals allowed)" "${maxc:-9}" 0 1.6
# the figures of an end line (its text on stdin): cores, their max, the peak
line_figures() { sed -n 's/.* · \([0-9.]*\) cores (max \([0-9.]*\)) · peak \([0-9.]*\) MiB · .*/\1 \2 \3/p'; }
# the same figures of summary's JSON of run $1, as the line prints them
summary_figures() {
    "$RTRACK" summary --db e.db --run "$1" --format json | python3 -c '
import json, sys
j = json.load(sys.stdin)
def sig3(v):  # fmt.h: 3 significant digits
    return "%.*f" % (2 if abs(v) < 9.995 else 1 if abs(v) < 99.95 else 0, v)
def mib(v):
    return "%.*f" % (2 if abs(v) < 10 else 1, v)
c = j["process"]["cpu_cores"]
print(sig3(c["mean"]), sig3(c["max"]), mib(j["recommendation"]["memory_basis"]["peak_mib"]))'
}
# the line's figures are the summary's (the line works them out without the process table)
check "end line: cores, max and peak are summary's figures of run 3" \
    "$(line_figures <<<"$line")" "$(summary_figures 3)"
"$RTRACK" run --quiet --summary --db e.db -- true >sum.out 2>sum.err
check "--summary: the summary on stdout, nothing on stderr (--quiet)" \
    "$(head -1 sum.out):$(grep -c '^next time ' sum.out):$(wc -c <sum.err)" "run 4: finished, exit 0:1:0"
RTRACK_SUMMARY=1 "$RTRACK" run --db e.db -- true >sum2.out 2>sum2.err
check "RTRACK_SUMMARY=1: the summary, and the end line" \
    "$(head -1 sum2.out):$(grep -c '^rtrack: run 5 ' sum2.err)" "run 5: finished, exit 0:1"
# (with the summary the line takes its figures from the summary's own computation)
check "RTRACK_SUMMARY=1: the end line's figures are summary's of run 5" \
    "$(line_figures <sum2.err)" "$(summary_figures 5)"
# both quotes in the command: shown as it is, quoted as a shell takes it
"$RTRACK" run --db e.db -- sh -c 'echo "'"'"'" >/dev/null' 2>both.err
check "end line: a command with both quotes, not quoted again" \
    "$(grep -cF "rtrack: run 6 sh -c 'echo \"'\\''\" >/dev/null' exited 0 after " both.err)" 1
"$RTRACK" run --db rtrack.db -- true 2>def.err
check "end line: the default database is not named" "$(grep -c ' · rtrack summary --run 1$' def.err)" 1
# a run with GPU rows (two fake GPUs): the line reads no GPU column, its figures are still
# summary's, which reads them all
if [ -n "${RT_FAKE_NVML:-}" ]; then
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=2 "$RTRACK" run --db e.db --interval 0.1 -- \
        python3 -c 'b = bytearray(60 << 20); import time; time.sleep(0.6)' 2>gpu.err
    check "end line of a run with GPU rows: its figures are summary's of run 7" \
        "$(q e.db "SELECT count(*) > 0 FROM gpu_samples g JOIN samples s ON s.id = g.sample_id WHERE s.run_id = 7"):$(line_figures <gpu.err)" \
        "1:$(summary_figures 7)"
else
    skip "end line of a run with GPU rows: RT_FAKE_NVML not set"
fi
finish
