#!/usr/bin/env bash
# bench/run_breakdown.sh - where each millisecond of `rtrack run -- true` goes, beside the same
# breakdown of rt_floor run (bench/floor.c: the least any SQLite-backed job wrapper does), in
# the same minutes, alternating.
#
# usage: bench/run_breakdown.sh [RTRACK [RTRACK_B]]  (default: $RTRACK, else build/rtrack;
#                                                    rt_floor and rt_run_trace.so are taken from
#                                                    the first binary's directory, or $RT_FLOOR
#                                                    and $RT_TRACE)
#
# Each run is started with rt_run_trace.so preloaded (bench/run_trace.c), which times SQLite's
# calls (open, prepare, step/exec, close), the syncs, the spawn, the waits and dlopen from inside
# the process, and the exec itself (bash's clock just before the exec to the library's
# constructor). The databases exist beforehand (one run made them), as when a job is run again
# into its rtrack.db; rt_floor runs on a copy of an rtrack database, so it parses rtrack's
# schema as rtrack does. RTRACK_B, when given, is a second rtrack build run alternating with
# the first, on a database of its own.
#
# Knobs: RUNS (40), WARMUP (5), DIR (scratch directory, removed unless given), DB_DIR (where
# the databases are: a tmpfs such as /dev/shm takes the disk's syncs out), RUN_FLAGS (rtrack
# run's options, "--quiet" unless set; RUN_FLAGS= gives the end-of-run line a user sees).
# Prints a markdown table of medians (µs) per category on stdout.
set -eu
RTRACK=$(readlink -f "${1:-${RTRACK:-build/rtrack}}")
RTRACK_B=${2:-${RTRACK_B:-}}
[ -n "$RTRACK_B" ] && RTRACK_B=$(readlink -f "$RTRACK_B")
BIN_DIR=$(dirname "$RTRACK")
RT_FLOOR=${RT_FLOOR:-$BIN_DIR/rt_floor}
RT_TRACE=$(readlink -f "${RT_TRACE:-$BIN_DIR/rt_run_trace.so}")
RUNS=${RUNS:-40}
WARMUP=${WARMUP:-5}
[ -x "$RT_FLOOR" ] || { echo "run_breakdown: no rt_floor at $RT_FLOOR" >&2; exit 1; }
[ -f "$RT_TRACE" ] || { echo "run_breakdown: no rt_run_trace.so at $RT_TRACE" >&2; exit 1; }
if [ -n "${DIR:-}" ]; then mkdir -p "$DIR"; else DIR=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-breakdown.XXXXXX"); trap 'rm -rf "$DIR"' EXIT; fi
DB_DIR=${DB_DIR:-$DIR}
mkdir -p "$DB_DIR"
PY=${PY:-/usr/bin/python3}
read -ra run_flags <<<"${RUN_FLAGS---quiet}"

rm -f "$DB_DIR"/rt-a.db* "$DB_DIR"/rt-b.db* "$DB_DIR"/floor.db*
"$RTRACK" run --quiet --db "$DB_DIR/rt-a.db" -- true
cp "$DB_DIR/rt-a.db" "$DB_DIR/floor.db"
[ -n "$RTRACK_B" ] && "$RTRACK_B" run --quiet --db "$DB_DIR/rt-b.db" -- true

one() { # NAME CMD... : one traced run; appends "NAME wall_us <the trace line's pairs>"
    local name=$1 t0 t1 line
    shift
    t0=${EPOCHREALTIME/./}
    line=$( (RT_TRACE_EXEC_NS=${EPOCHREALTIME/./}000 LD_PRELOAD=$RT_TRACE exec "$@") 2>&1 >/dev/null |
        grep '^rt_run_trace ')
    t1=${EPOCHREALTIME/./}
    echo "$name wall_us $((t1 - t0)) ${line#rt_run_trace }" >>"$DIR/runs.txt"
}
: >"$DIR/runs.txt"
# The order turns each round (A B floor, B floor A, floor A B): a program run right after
# another is some 60 to 100 us faster than the one before it (the same binary as A and B showed
# it), so a fixed order would hand that to whichever comes second.
progs=(a)
[ -n "$RTRACK_B" ] && progs+=(b)
progs+=(floor)
for i in $(seq $((WARMUP + RUNS))); do
    [ "$i" -eq $((WARMUP + 1)) ] && : >"$DIR/runs.txt"
    for k in $(seq 0 $((${#progs[@]} - 1))); do
        case ${progs[$(((i + k) % ${#progs[@]}))]} in
        a) one rtrack "$RTRACK" run "${run_flags[@]}" --db "$DB_DIR/rt-a.db" -- true ;;
        b) one rtrack_B "$RTRACK_B" run "${run_flags[@]}" --db "$DB_DIR/rt-b.db" -- true ;;
        floor) one rt_floor "$RT_FLOOR" run "$DB_DIR/floor.db" true ;;
        esac
    done
done

"$PY" - "$DIR/runs.txt" "$RUNS" "${RUN_FLAGS---quiet}" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    d = dict(zip(f[1::2], (float(x) for x in f[2::2])))
    rows.setdefault(f[0], []).append(d)
names = [n for n in ("rtrack", "rtrack_B", "rt_floor") if n in rows]
keys = ["wall_us", "load_us", "main_us", "open_us", "prepare_us", "sql_us", "sync_us", "close_us",
        "spawn_us", "wait_us", "dlopen_us", "other_us"]
what = {"wall_us": "whole run, as the shell sees it", "load_us": "exec, dynamic loader, constructors",
        "main_us": "constructor to exit", "open_us": "sqlite3_open_v2",
        "prepare_us": "compiling SQL (the first one parses the schema)",
        "sql_us": "running statements (syncs taken out)", "sync_us": "fsync, fdatasync",
        "close_us": "sqlite3_close (syncs taken out)", "spawn_us": "posix_spawn of the job",
        "wait_us": "poll/wait (the job runs)", "dlopen_us": "libraries loaded at run time",
        "other_us": "the rest: the program's own work"}
# each rtrack's medians less rt_floor's
minus = [n for n in names if n != "rt_floor"] if "rt_floor" in names else []
print("| part | what | " + " | ".join("%s (µs)" % n for n in names) +
      "".join(" | %s − rt_floor (µs)" % n for n in minus) + " |")
print("|---|---|" + "---|" * (len(names) + len(minus)))
for k in keys:
    med = {n: statistics.median(r.get(k, 0.0) for r in rows[n]) for n in names}
    cells = " | ".join("%.0f" % med[n] for n in names)
    diff = "".join(" | %+.0f" % (med[n] - med["rt_floor"]) for n in minus)
    print("| %s | %s | %s%s |" % (k[:-3], what[k], cells, diff))
print("\nmedians of %s runs each, alternating, the order turned each round; rtrack run %s" % (sys.argv[2], sys.argv[3]))
EOF
