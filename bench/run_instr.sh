#!/usr/bin/env bash
# bench/run_instr.sh - user-space instructions of one `rtrack run -- true`, by phase, counted by
# valgrind's callgrind: the same count on every run of the same binary on the same database, so
# a change of a few tens of microseconds shows where wall and CPU times (bench/run_breakdown.sh)
# drown it in the machine's noise. The kernel's side (reading /proc and /sys, the syscalls) is
# not counted: run_breakdown.sh and strace -c show that.
#
# usage: bench/run_instr.sh [RTRACK [RTRACK_B]]  (default: $RTRACK, else build/rtrack)
#
# Each binary runs once to make its database (as when a job is run again into its rtrack.db),
# then once under callgrind. Prints a markdown table: instructions (thousands) of the whole
# process (every thread) and of the phases, inclusive.
#
# Knob: RUN_FLAGS (rtrack run's options, "--quiet" unless set; RUN_FLAGS= gives the end-of-run
# line a user sees).
set -eu
command -v valgrind >/dev/null || { echo "run_instr: needs valgrind" >&2; exit 1; }
RTRACK=$(readlink -f "${1:-${RTRACK:-build/rtrack}}")
RTRACK_B=${2:-${RTRACK_B:-}}
[ -n "$RTRACK_B" ] && RTRACK_B=$(readlink -f "$RTRACK_B")
DIR=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-instr.XXXXXX")
trap 'rm -rf "$DIR"' EXIT
PY=${PY:-/usr/bin/python3}
read -ra run_flags <<<"${RUN_FLAGS---quiet}"
names=()
for bin in "$RTRACK" ${RTRACK_B:+"$RTRACK_B"}; do
    n=${#names[@]}
    "$bin" run --quiet --db "$DIR/rt-$n.db" -- true
    valgrind --tool=callgrind --callgrind-out-file="$DIR/cg-$n.out" \
        "$bin" run "${run_flags[@]}" --db "$DIR/rt-$n.db" -- true 2>/dev/null
    callgrind_annotate --inclusive=yes --threshold=100 "$DIR/cg-$n.out" >"$DIR/an-$n.txt" 2>/dev/null
    names+=("$n")
done
"$PY" - "$DIR" "${#names[@]}" <<'PYEOF'
import re, sys
d, n = sys.argv[1], int(sys.argv[2])
phases = [("PROGRAM TOTALS", "the whole process, every thread"),
          ("cmd_recording_open", "opening the store, the run's row"),
          ("check_and_migrate", "… the first statement (the schema parsed), the checks"),
          ("rt_store_schema_fingerprint", "… … the schema's fingerprint"),
          ("rt_store_begin_run", "… the run's row, the statements compiled"),
          ("rt_record", "sampling: the baseline and final samples, the job"),
          ("rt_sampler_collect", "… reading the collectors' files"),
          ("rt_sampler_store", "… the samples' rows"),
          ("cmd_run_end", "the end-of-run line (the run's summary)"),
          ("top_scan", "… its top processes, on a thread with its own connection"),
          ("rt_store_close", "closing connections")]
cols = []
for i in range(n):
    got = {}
    for line in open("%s/an-%d.txt" % (d, i)):
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m:
            continue
        v, what = int(m.group(1).replace(",", "")), m.group(2)
        for key, _ in phases:
            if (key == "PROGRAM TOTALS" and "PROGRAM TOTALS" in what) or \
               re.search(r"[:\s]%s(\.part\.0|\.constprop\.0)? \[" % re.escape(key), what):
                got[key] = max(got.get(key, 0), v)
    cols.append(got)
hdr = ["A", "B"][:n]
print("| phase | what | " + " | ".join("%s (k instr.)" % h for h in hdr) + (" | B − A |" if n > 1 else " |"))
print("|---|---|" + "---:|" * n + ("---:|" if n > 1 else ""))
for key, what in phases:
    vals = [c.get(key, 0) for c in cols]
    diff = " | %+d" % ((vals[1] - vals[0]) // 1000) if n > 1 else ""
    print("| %s | %s | %s%s |" % (key, what, " | ".join("%d" % (v // 1000) for v in vals), diff))
PYEOF
