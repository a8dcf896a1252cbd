#!/usr/bin/env bash
# A short soak (the long one is bench/soak.sh): `rtrack run --interval 0.01` of a job of five
# processes that starts a new one every second, for SOAK_SAMPLES samples (5 000) or SOAK_MAX_S
# seconds (75), whichever comes first. Asserts that rtrack's resident memory does not grow
# (the last reading at most SOAK_RSS_MARGIN_KIB, 256, above the reading at 10 % of the run,
# for VmRSS and for RssAnon), that its open descriptors do not grow (the fewest in the last
# quarter of the readings at most the fewest in the first quarter), and that every sample is
# stored (rtrack's count = rows in the database = last seq + 1). No timing thresholds.
#
# rtrack scans every process of the machine each sample and its buffers keep the size of the
# largest scan: a burst of processes elsewhere on a shared machine would look like growth. So
# the run happens in its own PID namespace (unshare --pid --mount-proc) when that is allowed;
# otherwise the margin grows by 1 KiB for each process the machine gained during the run.
if [ "${2:-}" = inner ]; then
    # --- inside: measure, write the readings to $SOAK_OUT ------------------------------------------
    set -u
    RTRACK=$1
    cd "$SOAK_OUT" || exit 1
    JOB='sleep 1000000 & a=$!; sleep 1000000 & b=$!; sleep 1000000 & c=$!
( while :; do sleep 1; done ) & d=$!
trap "kill \$a \$b \$c \$d 2>/dev/null; exit 0" TERM
wait'
    "$RTRACK" run --db soak.db --interval 0.01 -- sh -c "$JOB" </dev/null >/dev/null 2>rtrack.err &
    rpid=$!
    start=$SECONDS
    printf 'samples\tvmrss\trssanon\tfds\tprocs\n' >soak.tsv
    sleep 0.5
    while [ -d "/proc/$rpid" ]; do
        n=$(sqlite3 -readonly soak.db "SELECT coalesce((SELECT seq FROM samples ORDER BY id DESC LIMIT 1), 0)" 2>/dev/null || echo 0)
        rss=$(awk '/^VmRSS:/ {r=$2} /^RssAnon:/ {a=$2} END {print r "\t" a}' "/proc/$rpid/status" 2>/dev/null) || break
        fds=$(ls "/proc/$rpid/fd" 2>/dev/null | wc -l)
        procs=$(ls -d /proc/[0-9]* 2>/dev/null | wc -l)
        printf '%s\t%s\t%s\t%s\n' "$n" "$rss" "$fds" "$procs" >>soak.tsv
        if [ "$n" -ge "$SOAK_SAMPLES" ] || [ $((SECONDS - start)) -ge "$SOAK_MAX_S" ]; then break; fi
        sleep 1
    done
    kill -TERM "$rpid" 2>/dev/null
    # bounded: a SIGTERM not forwarded to the job would leave both running (killed after 20 s;
    # the PID namespace ends with this shell, and lib.sh kills what is left of the suite's group)
    for _ in $(seq 200); do [ -d "/proc/$rpid" ] || break; sleep 0.1; done
    if [ -d "/proc/$rpid" ]; then
        kill -KILL "$rpid"
        wait "$rpid"
        echo "timeout (rtrack did not end within 20 s of SIGTERM)" >rtrack.rc
    else
        wait "$rpid"
        echo "$?" >rtrack.rc
    fi
    exit 0
fi

SELF=$(readlink -f "$0")
. "$(dirname "$0")/lib.sh" "$1"
export SOAK_SAMPLES=${SOAK_SAMPLES:-5000} SOAK_MAX_S=${SOAK_MAX_S:-75} SOAK_OUT=$T/soak
MARGIN=${SOAK_RSS_MARGIN_KIB:-256}
mkdir "$SOAK_OUT"
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    ns=1
    unshare --pid --fork --mount-proc bash "$SELF" "$RTRACK" inner
else
    ns=0
    skip "own PID namespace: unshare not allowed here; the margin follows the machine's process count"
    bash "$SELF" "$RTRACK" inner
fi
cd "$SOAK_OUT" || exit 1
check "soak: rtrack ended by SIGTERM, the job stopped cleanly: exit 0" "$(cat rtrack.rc)" 0
said=$(sed -n 's/^rtrack: run .* \([0-9][0-9]*\) samples*\( .*\)*$/\1/p' rtrack.err)
check_range "soak: samples taken (enough for the comparison)" "${said:-0}" 500 1000000000
check "soak: every sample stored: rtrack's count = rows = last seq + 1" \
    "$(q soak.db "SELECT count(*) || ':' || (max(seq) + 1) FROM samples")" "${said:-?}:${said:-?}"
check "soak: one run, finished" "$(q soak.db "SELECT count(*) || ' ' || group_concat(status) FROM runs")" "1 finished"
read -r rss_ok anon_ok fds_ok detail < <(python3 - "$MARGIN" "$ns" <<'EOF'
import csv, sys
margin, ns = int(sys.argv[1]), sys.argv[2] == "1"
pts = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open("soak.tsv"), delimiter="\t")]
n = pts[-1]["samples"]
first = next(p for p in pts if p["samples"] >= n // 10)
last = pts[-1]
grow = 0 if ns else max(0, max(p["procs"] for p in pts) - first["procs"])  # 1 KiB per process
q = max(1, len(pts) // 4)
# the fewest descriptors of each window: a reading can catch rtrack with a /proc file open
# for a moment, a leak raises the floor
fd_first, fd_last = min(p["fds"] for p in pts[:q]), min(p["fds"] for p in pts[-q:])
print(int(last["vmrss"] <= first["vmrss"] + margin + grow), int(last["rssanon"] <= first["rssanon"] + margin + grow),
      # rtrack keeps up to 4 files open per live process of the tree, and the job starts a
      # short-lived one every second: a reading may catch it (a leak grew 51 -> 131 in 50 s)
      int(fd_last <= fd_first + 8),
      "VmRSS %d->%d KiB, RssAnon %d->%d KiB (samples %d->%d, margin %d+%d), fds %d->%d, %d readings"
      % (first["vmrss"], last["vmrss"], first["rssanon"], last["rssanon"], first["samples"], last["samples"],
         margin, grow, fd_first, fd_last, len(pts)))
EOF
)
echo "soak: $detail"
if ldd "$RTRACK" 2>/dev/null | grep -q libasan; then
    # ASan keeps freed memory in quarantine (256 MiB by default) and never hands it back: the
    # resident size of a sanitizer build grows by design; the fd and sample checks stay
    skip "soak: RSS flatness is not measured on a sanitizer build ($detail)"
else
    check "soak: VmRSS flat ($detail)" "$rss_ok" 1
    check "soak: RssAnon flat" "$anon_ok" 1
fi
check "soak: no descriptor growth" "$fds_ok" 1
finish
