#!/usr/bin/env bash
# rtrack report: a real recorded run written as one HTML page, checked for what a reader and a
# browser get: nothing fetched from elsewhere, strings from the database escaped, one SVG chart
# per metric (or its line of text when nothing was recorded) with one point per sample (at most
# 600: longer runs are bucketed by time), GPU charts only when the run has GPU rows, bad input
# and unwritable output, a 100 000-sample run that still gives a small page, and the page
# rendered by headless Chromium. What the page shows is checked against known values in
# test_report_page.sh.
MOCK=$(cd "$(dirname "$0")/../helpers" && pwd)/keeper_mock.py
. "$(dirname "$0")/lib.sh" "$1"
PY=${PYTHON:-/usr/bin/python3}
unset RTRACK_NVML_LIBRARY FAKE_NVML_GPUS FAKE_NVML_PROC_FILE RTRACK_KEEPER_URL
TREE_CHARTS=chart-cpu,chart-memory,chart-memory-processes,chart-process-io,chart-disk-io
BASE_CHARTS=$TREE_CHARTS,chart-network,chart-disk-space
SYS_CHARTS=chart-cpu,chart-memory,chart-process-io,chart-disk-io,chart-network,chart-disk-space
GPU_CHARTS=$BASE_CHARTS,chart-gpu,chart-vram

# check_charts.py HTML POINTS CHART_IDS [system-only] [MEMORY-VERTICES]: the charts of a page
# (the file, or the DOM Chromium dumped), by Python's own HTML parser: the ids in order (a
# chart folded into a line of text counts, with nothing more to check), data-points on each, as
# many vertices in every polyline (the process memory line: MEMORY-VERTICES, when given: the
# final sample of a reaped tree has no memory and is left out), and the process and system
# lines where both were recorded. The stacked chart of the processes has no polyline.
cat >check_charts.py <<'EOF'
import sys
from html.parser import HTMLParser
path, want_n, want_ids = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(",")
system_only = len(sys.argv) > 4 and sys.argv[4] == "system-only"
mem_n = int(sys.argv[5]) if len(sys.argv) > 5 else want_n

class Charts(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.cur = [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag == "svg" and "chart" in classes:
            self.cur = {"id": a.get("id"), "n": a.get("data-points"), "series": {},
                        "skip": "stacked" in classes}
            self.charts.append(self.cur)
        elif tag == "p" and "folded" in classes:
            self.charts.append({"id": a.get("id"), "skip": True})
        elif tag == "polyline" and "series" in classes and self.cur is not None:
            self.cur["series"][a.get("data-series")] = len(a.get("points", "").split())
    def handle_endtag(self, tag):
        if tag == "svg":
            self.cur = None

p = Charts()
p.feed(open(path, encoding="utf-8").read())
problems = []
ids = [c["id"] for c in p.charts]
if ids != want_ids:
    problems.append("charts %s" % ids)
for c in p.charts:
    if c["skip"]:
        continue
    if c["n"] != str(want_n):
        problems.append("%s data-points=%s" % (c["id"], c["n"]))
    if not c["series"]:
        problems.append("%s has no line" % c["id"])
    for name, n in c["series"].items():
        if n != (mem_n if (c["id"], name) == ("chart-memory", "process") else want_n):
            problems.append("%s/%s: %d points" % (c["id"], name, n))
    if c["id"] in ("chart-cpu", "chart-memory", "chart-gpu", "chart-vram"):
        want = ["system"] if system_only else ["process", "system"]
        if sorted(c["series"]) != want:
            problems.append("%s series %s" % (c["id"], sorted(c["series"])))
print("ok" if not problems else "; ".join(problems[:8]))
EOF
charts() { "$PY" check_charts.py "$@"; }
# samples after the baseline, and what a chart should hold for them
nsamples() { q "$1" "SELECT count(*) FROM samples WHERE run_id = ${2:-1} AND kind <> 'baseline'"; }
npoints() { local n; n=$(nsamples "$@"); echo $((n < 600 ? n : 600)); }
# the samples after the baseline with the tree's memory (not the final one of a reaped tree)
nmem() { q "$1" "SELECT count(process_memory_mib) FROM sample_metrics WHERE run_id = 1 AND seq > 0"; }
# nfiles DIR [find tests...]: how many entries DIR holds (that match)
nfiles() { local d=$1; shift; find "$d" -mindepth 1 -maxdepth 1 "$@" | wc -l; }

# --- a short real run: some CPU, a file written ----------------------------------------------
"$RTRACK" run --quiet --db r.db --interval 0.1 --job-name '<script>x</script>' --tag 'k=a&b' -- \
    sh -c "$RT_HELPERS/rt_spin 0.8; head -c 8000000 /dev/zero >out.bin; sync; sleep 0.2"
check "record a run" "$?" 0
"$RTRACK" report --db r.db -o report.html 2>report.err
check "report: exit 0" "$?" 0
check "report: nothing on stderr" "$(cat report.err)" ""
check_cmd "report: the file exists and is not empty" test -s report.html
check "report: an HTML document" "$(head -c 15 report.html)" "<!DOCTYPE html>"
check "report: no temporary file left" "$(nfiles . -name 'report.html.tmp*')" 0
check "report: no http:// or https:// reference" "$(grep -c -i -E 'https?://' report.html)" 0
check "report: nothing loaded (no src=, href=, url(, @import)" \
    "$(grep -c -i -E 'src=|href=|url\(|@import' report.html)" 0
check "report: no script at all" "$(grep -c -i '<script' report.html)" 0
check "report: a Content-Security-Policy that forbids fetching" \
    "$(grep -c "default-src 'none'" report.html)" 1
check "report: seven charts without a GPU (drawn or folded)" \
    "$(grep -o -E '<svg class="chart|<p class="folded' report.html | wc -l)" 7
N=$(nsamples r.db)
check_range "samples after the baseline" "$N" 3 600
check "report: charts, data-points and vertices ($N samples)" \
    "$(charts report.html "$(npoints r.db)" "$BASE_CHARTS" - "$(nmem r.db)")" ok
check "report: job name escaped" \
    "$(grep -c '<tr><th>job</th><td>&lt;script&gt;x&lt;/script&gt;</td></tr>' report.html)" 1
check "report: the raw job name is absent" "$(grep -c '<script>x</script>' report.html)" 0
check "report: a tag escaped" "$(grep -c 'k=a&amp;b' report.html)" 1
check "report: the recommendation's Metaflow line" \
    "$(grep -c '<pre class="metaflow"><code>@resources(cpu=' report.html)" 1
for s in Run Recommendation Usage 'Top processes' 'Over time'; do
    check "report: section '$s'" "$(grep -c "<h2>$s</h2>" report.html)" 1
done
# the start's whole second (strftime would round X.9996 up to the next one first)
started=$(q r.db "SELECT strftime('%Y-%m-%d %H:%M:%S', CAST(started_at AS INTEGER), 'unixepoch') FROM runs")
check "report: the start in UTC" "$(grep -c "<th>started</th><td>$started UTC" report.html)" 1
# runs, summary and report show the same whole second for a start 0.4 ms before the next one
q r.db "VACUUM INTO 'late.db'"
q late.db "UPDATE runs SET started_at = 1795710610.9996"
"$RTRACK" report --db late.db -o late.html
check "start at .9996 s: report" "$(grep -c '<th>started</th><td>2026-11-26 16:30:10 UTC' late.html)" 1
check "start at .9996 s: summary" "$("$RTRACK" summary --db late.db | grep -c '^started      2026-11-26 16:30:10 UTC')" 1
check "start at .9996 s: runs" "$("$RTRACK" runs --db late.db --format csv | grep -c ',2026-11-26T16:30:10Z,')" 1
check "report: the exit status" "$(grep -c 'finished, exit code 0 (exited)' report.html)" 1
check "report: the sample count" "$(grep -c "<td>$N after the baseline, every 0.1 s" report.html)" 1
check "report: no GPU rows in the stats" "$(grep -c 'GPU usage' report.html)" 0
check "report: the summary's figures (the stats table has the CPU row)" \
    "$(grep -c '<tr><th>CPU (cores)</th>' report.html)" 1
"$RTRACK" report --db r.db --run 1 --output - >stdout.html
grep -v '^<footer>' stdout.html >a.html
grep -v '^<footer>' report.html >b.html
check "report -o -: the same page on stdout (but the footer's time)" \
    "$(cmp -s a.html b.html && echo same)" same

# --- bad input: exit 2 and a message, no file --------------------------------------------------
"$RTRACK" report --db r.db --run 99 -o bad.html 2>err.txt
check "unknown run: exit 2" "$?" 2
check "unknown run: says so" "$(grep -c 'no run 99' err.txt)" 1
check "unknown run: no file" "$(nfiles . -name 'bad.html*')" 0
"$RTRACK" report --db r.db --run abc -o bad.html 2>err.txt
check "invalid run: exit 2" "$?" 2
"$RTRACK" report --db r.db 2>err.txt
check "missing -o: exit 2" "$?" 2
check "missing -o: says so" "$(grep -c -- '-o FILE' err.txt)" 1
"$RTRACK" report --db r.db --bogus -o bad.html 2>err.txt
check "unknown option: exit 2" "$?" 2
"$RTRACK" report --db r.db -o bad.html extra 2>err.txt
check "extra argument: exit 2" "$?" 2
"$RTRACK" report --db missing.db -o bad.html 2>err.txt
check "missing database: exit 2" "$?" 2
check "missing database: not created" "$(nfiles . -name 'missing.db*')" 0
"$RTRACK" report --help >help.txt
check "--help: exit 0" "$?" 0
check "--help: usage" "$(head -n 1 help.txt)" "usage: rtrack report [options] -o FILE"

# --- output that cannot be written: exit 1, no partial file -----------------------------------
"$RTRACK" report --db r.db -o nodir/report.html 2>err.txt
check "missing directory: exit 1" "$?" 1
check "missing directory: says which file" "$(grep -c "cannot write 'nodir/report.html'" err.txt)" 1
mkdir adir
"$RTRACK" report --db r.db -o adir 2>err.txt
check "output is a directory: exit 1" "$?" 1
check "output is a directory: no partial file left" "$(nfiles . -name 'adir.tmp*')" 0
check "output is a directory: untouched" "$(nfiles adir)" 0
if [ "$(id -u)" -ne 0 ]; then
    mkdir ro && chmod 555 ro
    "$RTRACK" report --db r.db -o ro/report.html 2>err.txt
    check "read-only directory: exit 1" "$?" 1
    check "read-only directory: nothing written" "$(nfiles ro)" 0
else
    skip "read-only directory: running as root, permissions do not apply"
fi

# --- the Keeper server (a local mock of the API), and no server when it is offline ------------
"$PY" "$MOCK" "$T/keeper.log" >mock.port &
mock=$!
for _ in $(seq 50); do [ -s mock.port ] && break; sleep 0.1; done
port=$(head -n 1 mock.port)
RTRACK_KEEPER_URL=http://127.0.0.1:$port "$RTRACK" report --db r.db --recommend-server -o srv.html
check "--recommend-server: exit 0" "$?" 0
check "--recommend-server: the server's section" \
    "$(grep -c '<h3>Cheapest matching server (Spare Cores Keeper)</h3>' srv.html)" 1
check "--recommend-server: the cheapest one, its price" \
    "$(grep -c -e '<td>CAX11 — Ampere</td>' -e '<td>[$]0.0059 per hour</td>' srv.html)" 2
check "--recommend-server: still no address in the page" "$(grep -c -i -E 'https?://' srv.html)" 0
kill "$mock" 2>/dev/null
wait "$mock" 2>/dev/null
RTRACK_KEEPER_URL=http://127.0.0.1:$port "$RTRACK" report --db r.db --recommend-server \
    -o off.html 2>off.err
check "--recommend-server offline: still a page" "$?" 0
check "--recommend-server offline: no server section" "$(grep -c 'Cheapest matching' off.html)" 0
check "--recommend-server offline: says why" \
    "$(grep -c '<p class="muted">No server recommendation: ' off.html)" 1

# --- a system-only recording: the process lines are absent, the page says why ----------------
"$RTRACK" record --quiet --db sys.db --interval 0.1 --duration 0.6
check "record (system only)" "$?" 0
"$RTRACK" report --db sys.db -o sys.html
check "system only: exit 0" "$?" 0
check "system only: charts with system lines only" \
    "$(charts sys.html "$(npoints sys.db)" "$SYS_CHARTS" system-only)" ok
check "system only: says so" "$(grep -c 'A system-only recording' sys.html)" 1

# --- GPUs (the fake NVML library): two more charts ---------------------------------------------
if [ -n "${RT_FAKE_NVML:-}" ] && [ -e "$RT_FAKE_NVML" ]; then
    : >gpu.procs
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=1 FAKE_NVML_PROC_FILE=$T/gpu.procs \
        "$RTRACK" run --quiet --db gpu.db --interval 0.1 -- \
        sh -c 'echo "0 $$ 1024 50 10 C" >>gpu.procs; sleep 0.8'
    check "gpu run" "$?" 0
    "$RTRACK" report --db gpu.db -o gpu.html
    check "gpu: exit 0" "$?" 0
    check "gpu: nine charts (drawn or folded)" \
        "$(grep -o -E '<svg class="chart|<p class="folded' gpu.html | wc -l)" 9
    check "gpu: charts, data-points and vertices" \
        "$(charts gpu.html "$(npoints gpu.db)" "$GPU_CHARTS" - "$(nmem gpu.db)")" ok
    check "gpu: the GPU rows of the stats" "$(grep -c '<tr><th>GPU usage (GPUs)</th>' gpu.html)" 1
    # a run without GPUs beside it in the same database: whether a run has GPU rows is asked of
    # its own samples, so its page has the seven charts of a run without a GPU
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=0 \
        "$RTRACK" run --quiet --db gpu.db --interval 0.1 -- sleep 0.5
    check "gpu db, a run without GPUs" "$?" 0
    "$RTRACK" report --db gpu.db --run 2 -o nogpu.html
    check "gpu db, a run without GPUs: seven charts, none of GPUs" \
        "$(grep -o -E '<svg class="chart|<p class="folded' nogpu.html | wc -l):$(grep -c -E 'id="chart-(gpu|vram)"' nogpu.html)" \
        "7:0"
else
    skip "gpu report: RT_FAKE_NVML does not name the fake NVML library (run under ctest)"
fi

# --- a long run: 100 000 samples give 600 points per line and a page under 2 MB ----------------
# A real recording at 10 ms, then its samples and their process rows copied after its end in
# SQL (seq and both clocks shifted) until there are 100 000, the way bench/export.sh grows a run.
# (a tree of five: the stacked chart of the processes' memory has its five layers to read)
"$RTRACK" run --quiet --db big.db --interval 0.01 -- \
    sh -c "$RT_HELPERS/rt_spin 0.5 & sleep 0.5 & sleep 0.5 & sleep 0.5 & wait"
check "record the run to grow" "$?" 0
n0=$(nsamples big.db)
cols=$(q big.db "SELECT group_concat(name, ', ') FROM pragma_table_info('samples')
                 WHERE name NOT IN ('id', 'seq', 'ts', 'mono', 'kind')")
scols=$(q big.db "SELECT group_concat('s.' || name, ', ') FROM pragma_table_info('samples')
                  WHERE name NOT IN ('id', 'seq', 'ts', 'mono', 'kind')")
pcols=$(q big.db "SELECT group_concat(name, ', ') FROM pragma_table_info('process_samples')
                  WHERE name <> 'sample_id'")
pscols=$(q big.db "SELECT group_concat('ps.' || name, ', ') FROM pragma_table_info('process_samples')
                   WHERE name <> 'sample_id'")
copies=$(((100000 + n0 - 1) / n0 - 1))
"$SQLITE" big.db "
UPDATE samples SET kind = 'periodic' WHERE run_id = 1 AND kind = 'final';
CREATE TEMP TABLE g AS SELECT max(seq) AS seqs, max(mono) - min(mono) + avg(interval_s) AS span
    FROM samples WHERE run_id = 1 AND kind <> 'baseline';
WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < $copies)
INSERT INTO samples (seq, ts, mono, kind, $cols)
SELECT s.seq + k.i * g.seqs, s.ts + k.i * g.span, s.mono + k.i * g.span, 'periodic', $scols
FROM samples s, k, g WHERE s.run_id = 1 AND s.kind <> 'baseline';
INSERT INTO process_samples (sample_id, $pcols)
SELECT n.id, $pscols FROM g, samples n
JOIN samples o ON o.run_id = 1 AND o.seq = n.seq - ((n.seq - 1) / g.seqs) * g.seqs
JOIN process_samples ps ON ps.sample_id = o.id
WHERE n.run_id = 1 AND n.seq > g.seqs;
UPDATE runs SET ended_at = (SELECT max(ts) FROM samples WHERE run_id = 1) WHERE id = 1;"
NBIG=$(nsamples big.db)
check_range "grown run: samples" "$NBIG" 100000 100600
check_range "grown run: process rows, one or more per sample" \
    "$(q big.db "SELECT count(*) FROM process_samples")" "$NBIG" 10000000
start=$(date +%s.%N)
"$RTRACK" report --db big.db -o big.html
check "big run: exit 0" "$?" 0
secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
echo "     report of $NBIG samples: $secs s, $(wc -c <big.html) bytes"
# (about 0.5 s here; a query plan that read every process row once per point took 12 s: no
# timing bound here on a shared machine, bench/export.sh LAYOUTS=report-html measures it)
check_range "big run: page under 2 MB" "$(wc -c <big.html)" 1000 2000000
check "big run: 600 points per chart and line" "$(charts big.html 600 "$BASE_CHARTS")" ok
check "big run: says how it was drawn" "$(grep -c "$NBIG samples drawn as 600 points" big.html)" 1
# the bucket's maximum is drawn: the peak of the CPU line is the run's peak
check "big run: the CPU peak survives the downsampling" "$("$PY" - big.html big.db <<'EOF'
import re, sqlite3, sys
html = open(sys.argv[1]).read()
svg = re.search(r'<svg class="chart" id="chart-cpu".*?</svg>', html, re.S).group(0)
top = float(re.search(r'viewBox="0 0 (\d+) (\d+)"', svg).group(2))
pts = re.search(r'data-series="process"[^>]*points="([^"]*)"', svg).group(1).split()
ymin_px = min(float(p.split(",")[1]) for p in pts)
peak = sqlite3.connect(sys.argv[2]).execute(
    "SELECT max(process_cpu_usage) FROM python_combined WHERE run_id = 1").fetchone()[0]
# the axis label at the top of the plot, and the pixel rows of the plot (48 .. 270-36)
label = re.findall(r'text-anchor="end">([0-9.e+]+)</text>', svg)[-1]
want = 48 + (270 - 48 - 36) * (1 - peak / float(label))
print("ok" if abs(ymin_px - want) < 0.11 else "peak at y=%s, want %.1f" % (ymin_px, want))
EOF
)" ok

# --- a real browser: headless Chromium renders the page and sees the same charts --------------
if command -v chromium >/dev/null 2>&1; then
    start=$(date +%s.%N)
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --screenshot="$T/shot.png" --window-size=1200,3000 "file://$T/report.html" \
        >chromium.out 2>&1
    check "chromium --screenshot: exit 0" "$?" 0
    check "screenshot: a PNG" "$(head -c 8 shot.png | od -An -tx1 | tr -d ' \n')" 89504e470d0a1a0a
    check_range "screenshot: not blank (bytes)" "$(wc -c <shot.png)" 20000 100000000
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --dump-dom "file://$T/report.html" >dom.html 2>chromium.err
    check "chromium --dump-dom: exit 0" "$?" 0
    check "chromium DOM: charts, data-points and vertices" \
        "$(charts dom.html "$(npoints r.db)" "$BASE_CHARTS" - "$(nmem r.db)")" ok
    check "chromium DOM: the job name is text, not a script element" \
        "$(grep -c '<script' dom.html)" 0
    timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chromium" \
        --dump-dom "file://$T/big.html" >bigdom.html 2>>chromium.err
    check "chromium DOM of the big run: 600 points" "$(charts bigdom.html 600 "$BASE_CHARTS")" ok
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "     chromium: $secs s for a screenshot and two DOM dumps"
else
    skip_req chromium "headless chromium: 'chromium' is not on PATH (scripts/bootstrap.sh installs it)"
fi

finish
