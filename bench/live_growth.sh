#!/usr/bin/env bash
# bench/live_growth.sh - what a live output line costs as a run with GPUs grows.
#
# rt_hotloop records N samples back to back with the GPU collector on the fake NVML (GPUS
# devices, the tracked tree's two processes on them), writes the live output of each sample
# (JSON Lines, or the combined CSV with FORMAT=csv) and prints the line's CPU time per sample
# over every W samples. A line is for one sample: its cost must not grow with the samples
# recorded before it. With two builds (A B), each window's figures side by side and B/A.
#
# usage: bench/live_growth.sh HOTLOOP [HOTLOOP_B]   (rt_hotloop of each build)
#   N=10000 W=1000 GPUS=2 FORMAT=jsonl|csv RT_FAKE_NVML=path (tests/fake_nvml's library)
set -eu
A=${1:?usage: bench/live_growth.sh HOTLOOP [HOTLOOP_B]}
B=${2:-}
N=${N:-10000}
W=${W:-1000}
GPUS=${GPUS:-2}
FORMAT=${FORMAT:-jsonl}
LIB=${RT_FAKE_NVML:?RT_FAKE_NVML names the fake NVML library (tests/fake_nvml)}
DIR=$(mktemp -d "${TMPDIR:-/tmp}/rtrack-live-growth.XXXXXX")
kids=
trap 'kill $kids "$tree" 2>/dev/null; rm -rf "$DIR"' EXIT

sh -c 'sleep 1000 & sleep 1000 & wait' >/dev/null 2>&1 &
tree=$!
sleep 0.3
read -r kids <"/proc/$tree/task/$tree/children" || true # no newline at its end
i=0
for c in $kids; do
    echo "$((i % GPUS)) $c 512 30 5 C" >>"$DIR/gpu.procs"
    i=$((i + 1))
done

run() { # HOTLOOP OUT
    local flag=
    [ "$FORMAT" = csv ] && flag=-f
    RTRACK_NVML_LIBRARY=$LIB FAKE_NVML_GPUS=$GPUS FAKE_NVML_PROC_FILE="$DIR/gpu.procs" \
        "$1" -n "$N" -p "$tree" -g -w "$W" -d "$DIR/h.db" -o "$DIR/live.out" $flag >"$2"
    rm -f "$DIR/h.db"*
}
run "$A" "$DIR/a.txt"
[ -n "$B" ] && run "$B" "$DIR/b.txt"

if [ -n "$B" ]; then
    printf '| samples | A µs/line | B µs/line | B/A |\n|---:|---:|---:|---:|\n'
    join <(awk '/^live@/ { sub("live@", "", $1); print $1, $2 }' "$DIR/a.txt") \
        <(awk '/^live@/ { sub("live@", "", $1); print $1, $2 }' "$DIR/b.txt") |
        awk '{ printf "| %d | %.1f | %.1f | %.2f |\n", $1, $2, $3, ($2 > 0 ? $3 / $2 : 0) }'
    echo
    echo "A:"; grep -v '^live@' "$DIR/a.txt"
    echo "B:"; grep -v '^live@' "$DIR/b.txt"
else
    cat "$DIR/a.txt"
fi
