#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# bench/rss.sh - peak resident memory of `rtrack record` over a long run, and database bytes
# per sample.
#
# usage: bench/rss.sh [RTRACK_BINARY]     (default: $RTRACK, else build/rtrack)
#
# Two runs of SAMPLES samples each at INTERVAL seconds: system only, and with a 5-process tree
# (sh + 4 sleeps, passed with --pid). While each runs, VmHWM (peak RSS), VmRSS, RssAnon and
# RssFile are read from /proc/PID/status when the database holds 100, 1 000, 2 000, 5 000 and
# 10 000 samples (scaled if SAMPLES differs): a flat VmHWM means no growth. At the last
# checkpoint /proc/PID/smaps is summed per mapped file (file-backed and anonymous KiB: where the
# RSS is). After rtrack has stopped (SIGTERM), the database size (file plus -wal) and PRAGMA
# page_count * page_size are divided by the number of samples stored.
#
# If the sample count stops growing for STALL_S (10) seconds while rtrack is alive, the run is
# reported as STALLED and abandoned (rtrack stopped sampling: a bug, fixed in 132c2b0).
#
# Environment knobs: SAMPLES (10000), INTERVAL (0.01), STALL_S (10), RSS_RUNS ("system tree5":
# which recordings to make), BENCH_OUT (directory to keep the raw TSV in), BENCH_KEEP=1 (keep
# the scratch databases), BENCH_MAX_BUSY and BENCH_QUIET_WAIT (wait for an idle machine first:
# see common.sh).
#
# Prints progress on stderr and a markdown report on stdout.
set -euo pipefail
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { sed -n '3,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0; }
bench_init "${1:-}"
command -v sqlite3 >/dev/null || die "sqlite3 CLI not found"
SAMPLES=${SAMPLES:-10000}
STALL_S=${STALL_S:-10}
RSS_RUNS=${RSS_RUNS:-system tree5}
INTERVAL=${INTERVAL:-0.01}
RAW=$BENCH_TMP/rss.tsv
SIZES=$BENCH_TMP/db_size.tsv
SMAPS=$BENCH_TMP/smaps.tsv
# checkpoints, as fractions of SAMPLES: 100, 1000, 2000, 5000, 10000 of 10000
CHECKS=$("$PY" -c "import sys; n=int(sys.argv[1]); print(*sorted({max(1, n*k//10000) for k in (100,1000,2000,5000,10000)}))" "$SAMPLES")
interval_us=$("$PY" -c "import sys; print(round(float(sys.argv[1])*1e6))" "$INTERVAL")

# smaps_by_file PID NAME: one line per mapped object (file basename, [heap], [stack], [anon]...)
# with the KiB of its resident pages that are file-backed (Rss - Anonymous) and anonymous
# (Anonymous: heap, stacks, and the copied-on-write data pages of the libraries). The columns
# add up to RssFile and RssAnon of /proc/PID/status, give or take the [vdso] page.
smaps_by_file() {
    awk -v run="$2" '
        /^[0-9a-f]+-[0-9a-f]+ / { name = NF >= 6 ? $6 : "[anon]"; sub(/.*\//, "", name); next }
        /^Rss:/ { rss[name] += $2 }
        /^Anonymous:/ { anon[name] += $2 }
        END { for (n in rss) if (rss[n] > 0) printf "%s\t%s\t%d\t%d\n", run, n, rss[n] - anon[n], anon[n] }
    ' /proc/"$1"/smaps
}

count_samples() { sqlite3 "$1" "SELECT count(*) FROM samples" 2>/dev/null || echo 0; }

# run_one NAME TREE(0|1)
run_one() {
    local name=$1 tree=$2 db=$BENCH_TMP/$1.db pidopt=()
    wait_quiet
    if ((tree)); then
        start_tree
        pidopt=(--pid "$TREE_PID")
    fi
    local t0 rpid
    t0=$(now_us)
    "$RTRACK" record --db "$db" --interval "$INTERVAL" --quiet "${pidopt[@]}" </dev/null &
    rpid=$!
    BENCH_PIDS=("$rpid")
    local n got last stalled
    for n in $CHECKS; do
        # sleep until the n-th sample is due, then until the database shows it (rows are
        # committed about once a second); a count that stops growing for STALL_S seconds
        # while rtrack lives means rtrack stopped sampling: reported, and the run abandoned
        sleep_until_us $((t0 + n * interval_us))
        last=-1 stalled=0
        while got=$(count_samples "$db"); ((got < n)); do
            [[ -d /proc/$rpid ]] || die "rtrack exited early ($name, $got samples)"
            if ((got == last)); then
                stalled=$((stalled + 1))
                if ((stalled * 2 >= STALL_S)); then
                    local tfd
                    tfd=$( (grep -l '^it_value:' /proc/"$rpid"/fdinfo/* 2>/dev/null || true) | head -1)
                    note "ERROR: rtrack stopped sampling at $got samples (no new row for ${STALL_S}s;" \
                        "state $(awk '/^State:/ {print $2}' /proc/"$rpid"/status)," \
                        "timer ${tfd:+$(grep it_value "$tfd")})"
                    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$got" STALLED "" "" "" \
                        "$(($(now_us) - t0))" >>"$RAW"
                    break 2
                fi
            else
                last=$got stalled=0
            fi
            sleep 0.5
        done
        local hwm rss anon filerss
        read -r hwm rss anon filerss <<<"$(mem_kib "$rpid")"
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$got" "$hwm" "$rss" "$anon" \
            "$filerss" "$(($(now_us) - t0))" >>"$RAW"
        note "$name: $got samples, VmHWM $hwm KiB, VmRSS $rss KiB (anon $anon, file $filerss)"
        if [[ $n == "${CHECKS##* }" ]]; then smaps_by_file "$rpid" "$name" >>"$SMAPS"; fi
    done
    kill -TERM "$rpid"
    local rc=0
    wait "$rpid" || rc=$?
    ((rc == 0)) || note "warning: rtrack record exited with $rc ($name)"
    BENCH_PIDS=()
    ((tree)) && stop_tree
    local file wal pages psize freel nsamp procs
    file=$(stat -c %s "$db")
    wal=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
    IFS='|' read -r pages psize freel nsamp procs <<<"$(sqlite3 "$db" \
        "SELECT (SELECT page_count FROM pragma_page_count), (SELECT page_size FROM pragma_page_size),
                (SELECT freelist_count FROM pragma_freelist_count), count(*),
                ifnull(round(avg(proc_count), 2), '-') FROM samples")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$nsamp" "$file" "$wal" "$pages" "$psize" \
        "$freel" "$procs" >>"$SIZES"
}

printf 'run\ttarget\tsamples\thwm_kib\trss_kib\tanon_kib\tfile_kib\telapsed_us\n' >"$RAW"
printf 'run\tmapping\tfile_kib\tanon_kib\n' >"$SMAPS"
printf 'run\tsamples\tfile_bytes\twal_bytes\tpage_count\tpage_size\tfreelist\tprocs\n' >"$SIZES"
for r in $RSS_RUNS; do
    case $r in
    system) run_one system 0 ;;
    tree5) run_one tree5 1 ;;
    *) die "unknown run '$r' (system, tree5)" ;;
    esac
done
if [[ -n ${BENCH_OUT:-} ]]; then
    mkdir -p "$BENCH_OUT"
    cp "$RAW" "$BENCH_OUT/rss.tsv"
    cp "$SIZES" "$BENCH_OUT/db_size.tsv"
    cp "$SMAPS" "$BENCH_OUT/smaps.tsv"
fi

echo "## Peak RSS of rtrack record and database bytes per sample"
echo
machine_info
echo "- $SAMPLES samples per run at --interval $INTERVAL"
echo
"$PY" - "$RAW" "$SIZES" "$SMAPS" <<'PY'
import csv, sys

rss = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
sizes = list(csv.DictReader(open(sys.argv[2]), delimiter="\t"))
smaps = list(csv.DictReader(open(sys.argv[3]), delimiter="\t"))
desc = {"system": "system only", "tree5": "5-process tree"}
runs = [s["run"] for s in sizes]
print("### VmHWM (peak RSS) and VmRSS while recording")
print()
print("The database count lags the sampler by up to a second (rows are committed about once a second).")
print()
print("| run | checkpoint | samples in database | elapsed s | VmHWM KiB | VmRSS KiB | RssAnon KiB | RssFile KiB |")
print("|---|---|---|---|---|---|---|---|")
for run in runs:
    for x in (r for r in rss if r["run"] == run):
        if x["hwm_kib"] == "STALLED":
            print(f"| {desc[run]} | {x['target']} | {x['samples']} | {int(x['elapsed_us']) / 1e6:.1f} | "
                  "**rtrack stopped sampling** | | | |")
            continue
        print(f"| {desc[run]} | {x['target']} | {x['samples']} | {int(x['elapsed_us']) / 1e6:.1f} | "
              f"{x['hwm_kib']} | {x['rss_kib']} | {x['anon_kib']} | {x['file_kib']} |")
for run in runs:
    xs = [r for r in rss if r["run"] == run and r["hwm_kib"] != "STALLED"]
    first, last = xs[0], xs[-1]
    growth = int(last["hwm_kib"]) - int(first["hwm_kib"])
    print(f"\n{desc[run]}: peak {int(last['hwm_kib']) / 1024:.2f} MiB after {last['samples']} samples; "
          f"VmHWM change from {first['samples']} to {last['samples']} samples: {growth:+d} KiB")
print()
print("### Where the resident memory is (/proc/PID/smaps at the last checkpoint)")
print()
print("File-backed: pages of the binary and shared libraries (RssFile; shared with other processes "
      "that map the same files). Anonymous: heap, stacks, and the libraries' copied-on-write data "
      "pages (RssAnon).")
print()
print("| run | mapping | file-backed KiB | anonymous KiB |")
print("|---|---|---|---|")
for run in runs:
    xs = sorted((r for r in smaps if r["run"] == run),
                key=lambda r: -(int(r["file_kib"]) + int(r["anon_kib"])))
    for x in xs:
        print(f"| {desc[run]} | {x['mapping']} | {x['file_kib']} | {x['anon_kib']} |")
    if xs:
        print(f"| {desc[run]} | **total** | **{sum(int(x['file_kib']) for x in xs)}** "
              f"| **{sum(int(x['anon_kib']) for x in xs)}** |")
print()
print("### Database bytes per sample (after rtrack stopped)")
print()
print("| run | samples | tree procs | file + -wal bytes | bytes/sample | page_count x page_size | bytes/sample | free pages |")
print("|---|---|---|---|---|---|---|---|")
for s in sizes:
    n = int(s["samples"])
    disk = int(s["file_bytes"]) + int(s["wal_bytes"])
    pages = int(s["page_count"]) * int(s["page_size"])
    print(f"| {desc[s['run']]} | {n} | {s['procs']} | {disk} | {disk / n:.0f} | {pages} | {pages / n:.0f} | {s['freelist']} |")
PY
