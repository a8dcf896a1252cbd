#!/usr/bin/env bash
# bench/export.sh - export speed and memory on a long run.
#
# Records a short real run (a 3-process tree at 50 ms), then grows it to N samples by doubling
# it in SQL (every sample copied with its per-core, disk, mount, network and process rows, seq
# and clocks shifted), so the exporter reads a database shaped like a long recording. Then times
# `rtrack export` for each layout to /dev/null: rows per second and peak RSS, at N and at N/10
# (RSS must not depend on the run's length), and `rtrack summary` of the same run (its target:
# under 1 s for 1 000 000 samples). Medians of REPS runs, of the wall time and of the CPU time
# (user + system: on a busy machine the steadier of the two).
#
# usage: bench/export.sh [RTRACK [RTRACK_B]] (default build/rtrack, or $RTRACK)
#   N=1000000 REPS=3 BENCH_DIR=/tmp/...    environment knobs (SUMMARY_ONLY=1: only summary rows)
#   RTRACK_B=path                          a second build, timed alternating with the first on
#                                          copies of the same databases (the "binary" column;
#                                          ratio B/A). A records, so A is the older build: B
#                                          upgrades its copies first, untimed
#   PROCS=5                                processes of the recorded tree (the shell and PROCS-1
#                                          sleeps)
#   GPUS=2 RT_FAKE_NVML=path               record under the fake NVML (tests/fake_nvml) with GPUS
#                                          GPUs and the tree on them; GPU rows are grown too
#   REUSE=1                                keep the grown databases BENCH_DIR already holds
#                                          (same N; B's copies are made again)
#   LAYOUTS="jsonl summary-json"           only these layouts (default: all; names as printed,
#                                          a space in a name written as -)
#   PAGE_SIZES="4096 1024"                 also time copies of the grown database rebuilt with
#                                          these SQLite page sizes (VACUUM), alternating per rep
set -eu
RTRACK=${1:-${RTRACK:-build/rtrack}}
RTRACK_B=${2:-${RTRACK_B:-}}
PROCS=${PROCS:-5}
GPUS=${GPUS:-0}
N=${N:-1000000}
REPS=${REPS:-3}
PY=/usr/bin/python3
DIR=${BENCH_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/rtrack-export.XXXXXX")}
mkdir -p "$DIR"

grow() { # DB TARGET : double run 1 until it has TARGET samples after the baseline
    "$PY" - "$1" "$2" <<'EOF'
import sqlite3, sys
db, target = sys.argv[1], int(sys.argv[2])
con = sqlite3.connect(db)
con.execute("PRAGMA journal_mode = OFF")
con.execute("PRAGMA synchronous = OFF")
cols = lambda t: [r[1] for r in con.execute("PRAGMA table_info(%s)" % t)]
scols = [c for c in cols("samples") if c not in ("id", "seq", "ts", "mono", "kind")]
children = {t: [c for c in cols(t) if c != "sample_id"]
            for t in ("cpu_core_samples", "disk_samples", "mount_samples", "nic_samples",
                      "process_samples", "gpu_samples", "gpu_process_samples")}
con.execute("UPDATE samples SET kind = 'periodic' WHERE run_id = 1 AND kind = 'final'")
while True:
    n, last, span = con.execute(
        "SELECT count(*), max(seq), max(mono) - min(mono) + avg(interval_s) FROM samples "
        "WHERE run_id = 1 AND kind <> 'baseline'").fetchone()
    if n >= target:
        break
    take = min(n, target - n)
    # copy the first `take` periodic samples after the current end
    con.execute("CREATE TEMP TABLE m AS SELECT id AS old, seq FROM samples WHERE run_id = 1 "
                "AND kind <> 'baseline' ORDER BY seq LIMIT ?", (take,))
    con.execute("INSERT INTO samples (seq, ts, mono, kind, %s) SELECT s.seq + ?1, s.ts + ?2, "
                "s.mono + ?2, 'periodic', %s FROM samples s JOIN m ON m.old = s.id" %
                (", ".join(scols), ", ".join("s." + c for c in scols)), (last, span))
    con.execute("CREATE TEMP TABLE map AS SELECT m.old, s.id AS new FROM m JOIN samples s "
                "ON s.run_id = 1 AND s.seq = m.seq + ?", (last,))
    for t, c in children.items():
        con.execute("INSERT INTO %s (sample_id, %s) SELECT map.new, %s FROM %s x JOIN map ON "
                    "map.old = x.sample_id" % (t, ", ".join(c), ", ".join("x." + k for k in c), t))
    con.execute("DROP TABLE m")
    con.execute("DROP TABLE map")
    con.commit()
print(con.execute("SELECT count(*) FROM samples WHERE run_id = 1 AND kind <> 'baseline'").fetchone()[0])
EOF
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

if [ "${REUSE:-0}" = 1 ] && [ -f "$DIR/run-$N.db" ]; then
    echo "reusing the databases of $DIR" >&2
else
echo "recording a short run..." >&2
rm -f "$DIR/base.db"*
tree="for i in \$(seq $((PROCS - 1))); do sleep 2 & done; wait"
if [ "$GPUS" -gt 0 ]; then
    # the tree's processes on the GPUs, as a CUDA job registers them with the driver
    : >"$DIR/gpu.procs"
    tree="for i in \$(seq $((PROCS - 1))); do sleep 2 & echo \"\$((i % $GPUS)) \$! 512 30 5 C\" >>$DIR/gpu.procs; done; wait"
    RTRACK_NVML_LIBRARY=${RT_FAKE_NVML:?GPUS needs RT_FAKE_NVML} FAKE_NVML_GPUS=$GPUS \
        FAKE_NVML_PROC_FILE="$DIR/gpu.procs" \
        "$RTRACK" run --quiet --db "$DIR/base.db" --interval 0.05 -- sh -c "$tree"
else
    "$RTRACK" run --quiet --db "$DIR/base.db" --interval 0.05 -- sh -c "$tree"
fi
for n in $((N / 10)) "$N"; do
    cp "$DIR/base.db" "$DIR/run-$n.db"
    echo "growing to $n samples..." >&2
    rows=$(grow "$DIR/run-$n.db" "$n")
    echo "size of $rows samples: $(du -m "$DIR/run-$n.db" | cut -f1) MB" >&2
done
fi

# the databases to time: the grown one as recorded ("-"), or copies rebuilt per page size
SIZES=${PAGE_SIZES:--}
for n in $((N / 10)) "$N"; do
    for p in $SIZES; do
        [ "$p" = - ] && continue
        cp "$DIR/run-$n.db" "$DIR/run-$n-p$p.db"
        sqlite3 "$DIR/run-$n-p$p.db" "PRAGMA journal_mode = DELETE; PRAGMA page_size = $p; VACUUM;" >/dev/null
        echo "page size $p: $(du -m "$DIR/run-$n-p$p.db" | cut -f1) MB" >&2
    done
done
# the grown files' pages are still being written back: timing while they are would measure the
# disk, not rtrack
sync
dbfile() { # N PAGESIZE [BINARY]
    local f
    if [ "$2" = - ]; then f="$DIR/run-$1"; else f="$DIR/run-$1-p$2"; fi
    if [ "${3:-A}" = B ]; then echo "$f-B.db"; else echo "$f.db"; fi
}
if [ -n "$RTRACK_B" ]; then
    for n in $((N / 10)) "$N"; do
        for p in $SIZES; do
            cp "$(dbfile "$n" "$p")" "$(dbfile "$n" "$p" B)"
            "$RTRACK_B" runs --db "$(dbfile "$n" "$p" B)" >/dev/null
        done
    done
    sync
fi

BINS="A"
[ -n "$RTRACK_B" ] && BINS="A B"
bin() { if [ "$1" = A ]; then echo "$RTRACK"; else echo "$RTRACK_B"; fi; }
printf '| samples | page size | database MB | layout | binary | seconds (median of %s) | CPU seconds, user + system | rows/s | peak RSS (MiB) |\n|---|---|---|---|---|---|---|---|---|\n' "$REPS"
for n in $((N / 10)) "$N"; do
    for layout in "combined csv" "system csv" "process csv" "jsonl" "summary json" "summary text" "report html"; do
        set -- $layout
        [ "${SUMMARY_ONLY:-0}" = 1 ] && [ "$1" != summary ] && continue
        if [ -n "${LAYOUTS:-}" ]; then
            case " $LAYOUTS " in *" ${layout// /-} "*) ;; *) continue ;; esac
        fi
        case $1 in
        jsonl) cmd="export --format jsonl" ;;
        summary) cmd="summary --format $2" ;;
        report) cmd="report -o /dev/null" ;;
        *) cmd="export --format csv --table $1" ;;
        esac
        declare -A secs=() rss=() cpu=()
        for _ in $(seq "$REPS"); do
            for p in $SIZES; do # alternating, so a slow minute hits every page size and binary
                for b in $BINS; do
                    out=$( { /usr/bin/time -f '%e %M %U %S' "$(bin "$b")" $cmd --db "$(dbfile "$n" "$p" "$b")" --run 1 >/dev/null; } 2>&1 | tail -1)
                    read -r w m u sy <<<"$out"
                    secs[$p$b]+="$w "
                    rss[$p$b]+="$m "
                    cpu[$p$b]+="$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }') "
                done
            done
        done
        for p in $SIZES; do
            db=$(dbfile "$n" "$p")
            ps=$(sqlite3 "$db" "PRAGMA page_size")
            for b in $BINS; do
                s=$(printf '%s\n' ${secs[$p$b]} | median)
                r=$(printf '%s\n' ${rss[$p$b]} | median)
                c=$(printf '%s\n' ${cpu[$p$b]} | median)
                [ "$b" = A ] && sa=$s && ca=$c
                awk -v n="$n" -v l="$layout" -v s="$s" -v r="$r" -v p="$ps" -v mb="$(du -m "$db" | cut -f1)" \
                    -v b="$b" -v sa="$sa" -v c="$c" -v ca="$ca" \
                    'BEGIN { printf "| %d | %d | %d | %s | %s | %.2f%s | %.2f%s | %.0f | %.1f |\n", n, p, mb, l, b, s,
                             (b == "B" && sa > 0 ? sprintf(" (%.2fx A)", s / sa) : ""), c,
                             (b == "B" && ca > 0 ? sprintf(" (%.2fx A)", c / ca) : ""), n / s, r / 1024 }'
            done
        done
        unset secs rss cpu
    done
done
[ -n "${BENCH_DIR:-}" ] || rm -rf "$DIR"
