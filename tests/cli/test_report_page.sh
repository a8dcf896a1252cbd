#!/usr/bin/env bash
# rtrack report, the page as a reader sees it, checked in the DOM headless Chromium builds from
# it (values by Python's HTML parser on that DOM): the status banner of a finished, a failed
# (exit 3), a SIGKILLed, an OOM-killed and an interrupted job; tick labels in readable units,
# never an exponent; hover titles with the values of a known point; reference lines (vCPUs,
# allocation, recommendation) at the right height with their labels; empty and flat series
# folded into a line of text; the tree's memory line without the final sample (whose memory is
# NULL: the tree was reaped) instead of a drop to 0; the tree's I/O on its own scale; the
# stacked chart of the processes' memory; the GPU table of the processes. A screenshot of the
# fixture's page is kept as an artefact (RT_ARTEFACTS, else the build directory's
# test-artefacts/).
#
# The known values come from a real run whose samples are then set in SQL to round figures
# (tree PSS 500 MiB with one 1000 MiB point, system memory 600 MiB, system disk reads 1000 KiB/s,
# the tree's reads 10 KiB/s, no network, a constant disk, 1000 vCPUs and no cgroup limits: the
# allocation is Slurm's 3 CPUs and 1536 MiB on any host): every expected figure below is worked out by hand
# from those numbers.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
PY=${PYTHON:-/usr/bin/python3}
unset RTRACK_NVML_LIBRARY FAKE_NVML_GPUS FAKE_NVML_PROC_FILE RTRACK_KEEPER_URL SLURM_JOB_ID \
    SLURM_CPUS_ON_NODE SLURM_MEM_PER_NODE SLURM_MEM_PER_CPU
command -v chromium >/dev/null 2>&1 ||
    skip_all "headless chromium: 'chromium' is not on PATH (scripts/bootstrap.sh installs it)"
ART=${RT_ARTEFACTS:-$(dirname "$RTRACK")/test-artefacts}

# dom FILE.html: the DOM Chromium makes of the page, in FILE.dom
dom() {
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --dump-dom "file://$T/$1" >"${1%.html}.dom" 2>>chromium.err
}
# report DB NAME: the report of run 1 of DB as NAME.html and its DOM as NAME.dom
report() { "$RTRACK" report --db "$1" -o "$2.html" && dom "$2.html"; }

# pq FILE.dom EXPR: EXPR evaluated in Python over what the page shows: banner (its text),
# status (data-status), folded {id: text}, charts {id: {ticks: [y labels, bottom up],
# series: {name: [(x, y)]}, refs: [{ref, y, text}], off: [texts], hovers: [(x0, x1, title)],
# layers: [titles], legend: [texts]}}, gpu_rows [[cells]], arithmetic (text)
cat >page.py <<'EOF'
import sys
from html.parser import HTMLParser

class Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.banner, self.status, self.folded, self.charts = "", None, {}, {}
        self.gpu_rows, self.arithmetic = [], ""
        self.stack, self.cur, self.text_to = [], None, None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        self.stack.append((tag, cls, a))
        if tag == "div" and "banner" in cls:
            self.status, self.text_to = a.get("data-status"), ["banner"]
        elif tag == "p" and "folded" in cls:
            self.folded[a["id"][6:]] = ""
            self.text_to = ["folded", a["id"][6:]]
        elif tag == "p" and a.get("id") == "cpu-arithmetic":
            self.text_to = ["arithmetic"]
        elif tag == "svg" and "chart" in cls:
            self.cur = {"ticks": [], "series": {}, "refs": [], "off": [], "hovers": [],
                        "layers": [], "legend": []}
            self.charts[a["id"][6:]] = self.cur
        elif self.cur is not None:
            if tag == "polyline":
                self.cur["series"][a["data-series"]] = [
                    tuple(map(float, v.split(","))) for v in a["points"].split()]
            elif tag == "g" and "ref" in cls:
                line = {"ref": a["data-ref"], "text": "", "y": None}
                self.cur["refs"].append(line)
            elif tag == "line" and any("ref" in c for _, c, _ in self.stack[:-1]):
                self.cur["refs"][-1]["y"] = float(a["y1"])
            elif tag == "rect" and "hv" in cls:
                x0 = float(a["x"])
                self.cur["hovers"].append([x0, x0 + float(a["width"]), ""])
            elif tag == "polygon":
                self.cur["layers"].append("")
        if tag == "tr" and any("gpu" in c for t, c, _ in self.stack if t == "table"):
            self.gpu_rows.append([])
    def handle_endtag(self, tag):
        while self.stack:
            t, cls, a = self.stack.pop()
            if t == "div" and "banner" in cls or t == "p":
                self.text_to = None
            if t == "svg":
                self.cur = None
            if t == tag:
                break
    def handle_data(self, d):
        if self.text_to:
            if self.text_to[0] == "folded":
                self.folded[self.text_to[1]] += d
            else:
                setattr(self, self.text_to[0], getattr(self, self.text_to[0]) + d)
        if not self.stack:
            return
        tag, cls, a = self.stack[-1]
        parents = [(t, c) for t, c, _ in self.stack]
        if self.cur is not None:
            if tag == "text" and "tick" in cls and "y" in cls:
                self.cur["ticks"].append(d)
            elif tag == "text" and "off" in cls:
                self.cur["off"].append(d)
            elif tag == "text" and any(t == "g" and "ref" in c for t, c in parents):
                self.cur["refs"][-1]["text"] += d
            elif tag == "title" and any(t == "rect" and "hv" in c for t, c in parents):
                self.cur["hovers"][-1][2] += d
            elif tag == "title" and any(t == "polygon" for t, c in parents):
                self.cur["layers"][-1] += d
            elif tag == "text" and not cls and float(a.get("y", 0)) == 37:
                self.cur["legend"].append(d)
        if tag == "td" and any(t == "table" and "gpu" in c for t, c in parents):
            self.gpu_rows[-1].append(d)

p = Page()
p.feed(open(sys.argv[1], encoding="utf-8").read())
env = {k: getattr(p, k) for k in ("banner", "status", "folded", "charts", "gpu_rows",
                                  "arithmetic")}
print(eval(sys.argv[2], {}, env))
EOF
pq() { "$PY" page.py "$@"; }
# the run's samples after the baseline, and those with the tree's memory
nsamples() { q "$1" "SELECT count(*) FROM samples WHERE run_id = 1 AND kind <> 'baseline'"; }

# --- the status banner: finished, failed (exit 3), SIGKILLed, OOM-killed, interrupted ----------
SLURM_CPUS_ON_NODE=3 SLURM_MEM_PER_NODE=1536 "$RTRACK" run --quiet --db ok.db --interval 0.1 -- \
    "$RT_HELPERS/rt_spin" 1.0
check "record a finished run (allocation: 3 CPUs, 1536 MiB)" "$?" 0
"$RTRACK" run --quiet --db fail.db --interval 0.1 -- sh -c 'sleep 0.3; exit 3'
check "record a run that exits 3" "$?" 3
"$RTRACK" run --quiet --db kill.db --interval 0.1 -- sh -c 'sleep 0.3; kill -9 $$'
check "record a run killed by SIGKILL" "$?" 137
q kill.db "VACUUM INTO 'oom.db'"
q oom.db "UPDATE runs SET host_oom_kills = 1"
# a recorder that died: its run still says running, its newest sample an hour old
q ok.db "VACUUM INTO 'gone.db'"
q gone.db "UPDATE runs SET status = 'running', exit_code = NULL, ended_at = NULL, end_reason = NULL;
           UPDATE samples SET ts = ts - 3600; UPDATE runs SET started_at = started_at - 3600"
"$RTRACK" record --quiet --db sys.db --interval 0.1 --duration 0.5
check "record system-only (no job, so no exit status)" "$?" 0
for name in ok fail kill oom gone sys; do
    report "$name.db" "$name"
    check "report and DOM of the $name run" "$?" 0
done
check "banner: finished" "$(pq ok.dom 'status, banner.split(" after ")[0]')" \
    "('finished', 'finished (exit 0)')"
check "banner: failed (exit 3)" "$(pq fail.dom 'status, banner.split(" after ")[0]')" \
    "('failed', 'failed (exit 3)')"
check "banner: killed by SIGKILL" "$(pq kill.dom 'status, banner.split(" after ")[0]')" \
    "('signal', 'killed by SIGKILL')"
check "banner: OOM" "$(pq oom.dom 'status, banner.split(" after ")[0]')" \
    "('oom', 'killed by the OOM killer (SIGKILL)')"
check "banner: interrupted" "$(pq gone.dom 'status, banner.split(" · ")[0]')" \
    "('interrupted', 'interrupted: the recorder stopped before the job ended')"
check "banner: a system-only recording finished, with no exit status" \
    "$(pq sys.dom 'status, banner.split(" after ")[0]')" "('finished', 'finished')"
check "the run's status row: the signal by name, not exit 137" \
    "$(grep -c '<th>status</th><td>failed, killed by SIGKILL (signal 9)</td>' kill.html)" 1
check "the run's status row: exit 3" "$(grep -c '<th>status</th><td>failed, exit code 3 (exited)</td>' fail.html)" 1
check "banner: the duration after it" "$(pq fail.dom 'banner.split(" after ")[1][-2:]')" " s"

# --- a fixture of round figures ------------------------------------------------------------------
q ok.db "VACUUM INTO 'fx.db'"
q fx.db "UPDATE samples SET interval_s = 0.1 WHERE kind <> 'baseline';
UPDATE samples SET proc_pss_kib = CASE WHEN seq = 3 THEN 1024000 ELSE 512000 END
    WHERE kind = 'periodic';
UPDATE samples SET mem_used_kib = 614400;
UPDATE samples SET disk_read_bytes = 102400, disk_write_bytes = 0 WHERE kind <> 'baseline';
UPDATE samples SET proc_read_bytes = 1024, proc_write_bytes = 0 WHERE kind <> 'baseline';
UPDATE samples SET net_rx_bytes = 0, net_tx_bytes = 0;
UPDATE samples SET disk_space_used_bytes = 100000000000;
UPDATE runs SET cgroup_cpu_quota_cores = NULL, cgroup_cpuset_cpus = NULL,
    cgroup_memory_limit_bytes = NULL, host_vcpus = 1000;"
N=$(nsamples fx.db)
check_range "fixture: samples after the baseline" "$N" 6 100
check "fixture: the final sample has no tree memory (the tree was reaped)" \
    "$(q fx.db "SELECT kind, proc_pss_kib IS NULL FROM samples ORDER BY seq DESC LIMIT 1")" "final|1"
report fx.db fx
check "fixture: report and DOM" "$?" 0
mkdir -p "$ART" && cp fx.html "$ART/report_page.html" &&
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --screenshot="$ART/report_page.png" --window-size=1100,4200 "file://$T/fx.html" \
        >>chromium.err 2>&1
check "screenshot kept as an artefact" "$(head -c 8 "$ART/report_page.png" | od -An -tx1 | tr -d ' \n')" \
    89504e470d0a1a0a
echo "     screenshot: $ART/report_page.png"

# tick labels: memory 1000 MiB peak, the recommendation 2048 MiB (1000 x 1.2 = 1200 -> 2048, the
# next of 128/256/512/1024/2048) above it and the allocation 1536 MiB: a 2 GiB axis. System disk
# reads 102400 B per 0.1 s = 1000 KiB/s: a 1000 KiB/s axis (printed as 1e+03 by %.3g); the
# tree's 1024 B per 0.1 s = 10 KiB/s on a chart of its own.
check "ticks: memory" "$(pq fx.dom 'charts["memory"]["ticks"]')" "['0 GiB', '1 GiB', '2 GiB']"
check "ticks: system disk I/O" "$(pq fx.dom 'charts["disk-io"]["ticks"]')" \
    "['0 KiB/s', '500 KiB/s', '1000 KiB/s']"
check "ticks: the tree's disk I/O on its own scale" "$(pq fx.dom 'charts["process-io"]["ticks"]')" \
    "['0 KiB/s', '5 KiB/s', '10 KiB/s']"
for name in ok fail kill oom gone fx; do
    check "ticks: no exponent on any axis ($name)" \
        "$(pq "$name.dom" '[t for c in charts.values() for t in c["ticks"] if "e+" in t or "e-" in t]')" "[]"
done

# folded: no network traffic, a disk whose use never changed
check "folded: network" "$(pq fx.dom 'folded.get("network")')" "network: no traffic recorded"
# (the Python column's decimal GB drawn in bytes, as every other chart: 100 GB = 93.1 GiB)
check "folded: disk space (100 GB = 93.1 GiB)" "$(pq fx.dom 'folded.get("disk-space")')" \
    "disk space used: 93.1 GiB throughout the run"
check "folded: no chart drawn for them" "$(pq fx.dom '"network" in charts, "disk-space" in charts')" \
    "(False, False)"
# a disk that fills: drawn, on an axis around its values (100.1 GB .. the largest, in GiB: the
# decimal figures / 1.073741824; the top tick's label, to 4 digits, within 0.5 % of it), not from 0
q fx.db "VACUUM INTO 'fill.db'"
q fill.db "UPDATE samples SET disk_space_used_bytes = 100000000000 + seq * 100000000"
report fill.db fill
check "a filling disk: drawn" "$(pq fill.dom '"disk-space" in charts, "disk-space" in folded')" \
    "(True, False)"
check "a filling disk: the axis is not from 0, and spans 100.1 .. max" "$(pq fill.dom "
(lambda t: t[0].split()[1] == 'GiB' and 0 < float(t[0].split()[0]) <= 100.1 / 1.073741824 and float(t[-1].split()[0]) >= 0.995 * $(q fill.db "SELECT max(disk_space_used_bytes) FROM samples") / 2**30)(charts['disk-space']['ticks'])")" True

# the memory line: 500 MiB, 1000 MiB at sample 3, on the 2 GiB axis of the plot's rows 48 ..
# 234: y = 48 + 186 (1 - v / 2048): 188.6 and 143.2; the final sample left out, not drawn at 0
check "memory line: one vertex per sample with memory (N - 1)" \
    "$(pq fx.dom 'len(charts["memory"]["series"]["process"])')" "$((N - 1))"
check "memory line: its heights" "$(pq fx.dom 'sorted(set(y for x, y in charts["memory"]["series"]["process"]))')" \
    "[143.2, 188.6]"
check "memory line: does not drop to 0 at the end" \
    "$(pq fx.dom 'charts["memory"]["series"]["process"][-1][1]')" 188.6
check "system memory line: 600 MiB all along, to the final sample" \
    "$(pq fx.dom 'sorted(set(y for x, y in charts["memory"]["series"]["system"])), len(charts["memory"]["series"]["system"])')" \
    "([179.5], $N)"

# hover titles: one per point; the 1000 MiB point's says so, and lies over its vertex
check "hover: one title per point on the memory chart" "$(pq fx.dom 'len(charts["memory"]["hovers"])')" "$N"
check "hover: the 1000 MiB point" "$(pq fx.dom '[h[2].split("\n")[1:] for h in charts["memory"]["hovers"] if "1000.0" in h[2]]')" \
    "[['process tree PSS: 1000.0 MiB', 'system used: 600.0 MiB']]"
check "hover: over its vertex" "$(pq fx.dom '
[h for h in charts["memory"]["hovers"] if "1000.0" in h[2]][0][0] <= [x for x, y in charts["memory"]["series"]["process"] if y == 143.2][0] <= [h for h in charts["memory"]["hovers"] if "1000.0" in h[2]][0][1]')" True
check "hover: the final point says the tree memory was not recorded" \
    "$(pq fx.dom 'charts["memory"]["hovers"][-1][2].split("\n")[1]')" "process tree PSS: not recorded"
check "hover: the tree's reads (10.0 KiB/s)" \
    "$(pq fx.dom 'sorted(set(h[2].split("\n")[1] for h in charts["process-io"]["hovers"]))')" \
    "['read: 10.0 KiB/s']"

# reference lines: memory: allocated 1536 MiB at 48 + 186 (1 - 1536/2048) = 94.5, recommended
# 2048 MiB at the top, 48
check "references: memory" "$(pq fx.dom '[(r["ref"], r["y"], r["text"]) for r in charts["memory"]["refs"]]')" \
    "[('allocated', 94.5, 'allocated 1.50 GiB'), ('recommended', 48.0, 'recommended 2.00 GiB')]"
# cpu_refs FILE.dom: the CPU chart's reference lines (id, label, whether its height is
# 48 + 186 (1 - v / top) for its label's v and the axis' top label), then those above the scale
cpu_refs() {
    pq "$1" "(lambda c: sorted((r['ref'], r['text'], round(r['y'], 1) == round(48 + 186 * (1 -
        float(r['text'].split()[-1]) / float(c['ticks'][-1])), 1)) for r in c['refs'])
        + sorted(c['off']))(charts['cpu'])"
}
# CPU: allocated 3 and recommended 1 (rt_spin keeps one core busy for its second) drawn, each at
# 48 + 186 (1 - v / top) with top the axis' top label; the host's vCPUs, set to 1000 in the
# fixture, more than four times anything the run used: named above the scale instead
check "references: CPU" "$(cpu_refs fx.dom)" \
    "[('allocated', 'allocated 3', True), ('recommended', 'recommended 1', True), 'vCPUs 1000 (above the scale)']"
# the same with 2 vCPUs: within the scale (the run used a core or more), drawn at its height
q fx.db "VACUUM INTO 'v2.db'"
q v2.db "UPDATE runs SET host_vcpus = 2"
report v2.db v2
check "references: CPU, 2 vCPUs drawn" "$(cpu_refs v2.dom)" \
    "[('allocated', 'allocated 3', True), ('recommended', 'recommended 1', True), ('vcpus', 'vCPUs 2', True)]"
# equal reference lines are one line with both names, not two labels on each other (issue 36:
# "recommended" and "vCPUs 2" drawn over each other): 1 vCPU, recommended 1
q fx.db "VACUUM INTO 'v1.db'"
q v1.db "UPDATE runs SET host_vcpus = 1"
report v1.db v1
check "references: CPU, vCPUs = recommended: one line, both names" \
    "$(pq v1.dom "sorted((r['ref'], r['text']) for r in charts['cpu']['refs'])")" \
    "[('allocated', 'allocated 3'), ('vcpus recommended', 'vCPUs, recommended 1')]"
# the peak the memory recommendation is built on, when it is the kernel's (a peak between two
# samples: 1500 MiB above the sampled 1000), is on the memory chart, at its height
q fx.db "VACUUM INTO 'kpeak.db'"
q kpeak.db "UPDATE runs SET job_maxrss_kib = 1500 * 1024"
report kpeak.db kpeak
check "references: memory: the kernel's peak, the recommendation's basis, drawn" \
    "$(pq kpeak.dom "(lambda c: [(r['ref'], r['text'], round(r['y'], 1) == round(48 + 186 * (1 - 1500 / 1024 / float(c['ticks'][-1].split()[0])), 1)) for r in c['refs'] if r['ref'] == 'kernel-peak'])(charts['memory'])")" \
    "[('kernel-peak', 'peak (kernel) 1.46 GiB', True)]"
check "references: memory: no kernel peak where the samples' peak is the basis" \
    "$(pq fx.dom "[r['ref'] for r in charts['memory']['refs'] if r['ref'] == 'kernel-peak']")" "[]"
check "recommendation: the CPU arithmetic" "$(pq fx.dom 'arithmetic.split(" cores")[0][:9], arithmetic.split("-> ")[1]')" \
    "('CPU: mean', '1 vCPU')"

# the processes' memory, stacked: rt_spin's own PSS at the bottom, the rest of the tree's
# (fixture) PSS on top of it: the stack's top is the tree's line
check "stacked: layers" "$(pq fx.dom 'charts["memory-processes"]["layers"][0].split(" (")[0], charts["memory-processes"]["layers"][-1]')" \
    "('rt_spin', 'others')"
check "stacked: the 1000 MiB point adds up to 1000 MiB" "$(pq fx.dom "
(lambda t: round(sum(float(l.split(': ')[1].split()[0]) for l in t.split('\n')[1:]), 0))([h[2] for h in charts['memory-processes']['hovers'] if 'others: 9' in h[2]][0])")" 1000.0
check "stacked: no point for the final sample" "$(pq fx.dom 'len(charts["memory-processes"]["hovers"])')" "$((N - 1))"

# --- no two labels of a chart overlap, as Chromium lays the page out (issue 36): every page of
# this suite and the reports of the golden fixtures (tests/golden/expected, which test_golden.sh
# holds this binary to). The page is copied with label_overlaps.js added (and without the
# report's Content-Security-Policy, which forbids any script).
cat >wrap.py <<'EOF'
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
js = open(sys.argv[2], encoding="utf-8").read()
open(sys.argv[3], "w", encoding="utf-8").write(html.replace("</body>", "<script>" + js + "</script></body>"))
EOF
cat >overlaps.py <<'EOF'
import html, json, re, sys
m = re.search(r'<pre id="rt-overlaps">(.*?)</pre>', open(sys.argv[1], encoding="utf-8").read(), re.S)
j = json.loads(html.unescape(m.group(1))) if m else {"svgs": 0, "labels": 0, "overlaps": ["no result"]}
print(j["svgs"], j["labels"], json.dumps(j["overlaps"]))
EOF
pages="ok fail kill oom gone fx fill v2 v1 kpeak"
for f in "$HERE"/../golden/expected/*report*.html; do
    cp "$f" "gold-$(basename "$f")"
    pages="$pages gold-$(basename "$f" .html)"
done
for name in $pages; do
    "$PY" wrap.py "$name.html" "$HERE/../helpers/label_overlaps.js" "$name.lbl.html" && dom "$name.lbl.html"
    read -r nsvg nlabels list <<<"$("$PY" overlaps.py "$name.lbl.dom")"
    check "labels: $name: no two overlap (of $nlabels in $nsvg charts)" "$list" "[]"
    [ "${nlabels:-0}" -gt 0 ] || fail "labels: $name: the browser laid out no label"
done

# --- GPUs (the fake NVML library): the processes on the GPU ------------------------------------
if [ -n "${RT_FAKE_NVML:-}" ] && [ -e "$RT_FAKE_NVML" ]; then
    : >gpu.procs
    # the job's shell on GPU 0: 1024 MiB and 50 % SM busy for 0.5 s, then 2048 MiB and 90 %
    # (the driver's busy share is over a window: rtrack sees the 90 a few tenths later)
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=1 FAKE_NVML_PROC_FILE=$T/gpu.procs \
        "$RTRACK" run --quiet --db gpu.db --interval 0.1 -- \
        sh -c 'echo $$ >gpu.pid; echo "0 $$ 1024 50 10 C" >gpu.procs; sleep 0.5
               echo "0 $$ 2048 90 10 C" >gpu.procs; sleep 1.2'
    check "gpu run" "$?" 0
    report gpu.db gpu
    check "gpu: report and DOM" "$?" 0
    check "gpu: the process table (pid, name, GPUs, peak VRAM, peak busy)" \
        "$(pq gpu.dom 'gpu_rows[1][:4] + gpu_rows[1][5:6]')" \
        "['$(cat gpu.pid)', 'sh', '1', '2.00 GiB', '90.0 %']"
    check "gpu: the mean busy share, between the two phases' 50 and 90 %" \
        "$(pq gpu.dom '50 < float(gpu_rows[1][4].split()[0]) < 90')" True
else
    skip "gpu table: RT_FAKE_NVML does not name the fake NVML library (run under ctest)"
fi

finish
