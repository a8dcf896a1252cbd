#!/usr/bin/env bash
# Without an NVIDIA driver (no /proc/driver/nvidia, /dev/nvidiactl or /dev/dxg) a recording does
# not look for libnvidia-ml at all: the dynamic loader's search of every library directory was a
# part of each `rtrack run`'s start (docs/performance.md), and no GPU thread is started. Asked
# for by name (RTRACK_NVML_LIBRARY) it is still loaded, driver or not, on its thread.
. "$(dirname "$0")/lib.sh" "$1"

unset RTRACK_NVML_LIBRARY
for f in /proc/driver/nvidia /dev/nvidiactl /dev/dxg; do
    [ -e "$f" ] && skip_all - "an NVIDIA driver is here ($f): nothing to check"
done
# the loader reports each library it looks for with LD_DEBUG=libs
LD_DEBUG=libs "$RTRACK" run --quiet --db a.db -- true 2>ld.log
check "run: exit 0" "$?" 0
check "run: libnvidia-ml not looked for" "$(grep -c 'find library=libnvidia-ml' ld.log)" 0
# (the first library the binary links: libsqlite3 in a distribution's build, a part of glibc in
# the release binary, which has SQLite compiled in)
first=$(readelf -d "$RTRACK" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | head -1)
check "run: the loader's report was read ($first is found through it)" \
    "$(grep -c "find library=$first" ld.log)" 1
# no GPU driver of any vendor (nor amdgpu's module): no GPU thread is started either (strace
# sees every thread rtrack makes: clone3 with CLONE_THREAD; the job itself is no thread, and the
# thread that starts it, the one whose clone3 has CLONE_VFORK, is not counted)
# threads DB [ENV...] : the threads one `rtrack run -- true` starts, but the job's starter
threads() {
    local db=$1
    shift
    env "$@" strace -f -e trace=clone,clone3 -o "$db.strace" "$RTRACK" run --quiet --db "$db" -- true
    awk 'NR == 1 { main = $1 } /CLONE_THREAD/ { t++ } /CLONE_VFORK/ && $1 != main { s++ }
        END { print t - s }' "$db.strace"
}
if ! command -v strace >/dev/null; then
    fail "strace is needed for this test (scripts/bootstrap.sh installs it)"
elif [ -e /sys/module/amdgpu ]; then
    skip "the amdgpu module is here: a GPU thread is expected"
else
    check "run: no GPU thread without a driver (threads started)" \
        "$(threads t.db RTRACK_CLOUD_DISCOVERY=0)" 0
    if [ -n "${RT_FAKE_NVML:-}" ]; then
        check "RTRACK_NVML_LIBRARY: the GPUs are opened on a thread of their own" \
            "$(threads t2.db RTRACK_CLOUD_DISCOVERY=0 RTRACK_NVML_LIBRARY="$RT_FAKE_NVML")" 1
    fi
fi

if [ -n "${RT_FAKE_NVML:-}" ]; then
    # a job of a second: the GPUs are opened on a thread of their own, after the job started,
    # and `true` could end before (under ASan it did)
    RTRACK_NVML_LIBRARY=$RT_FAKE_NVML FAKE_NVML_GPUS=1 "$RTRACK" run --quiet --db b.db \
        --interval 0.2 -- sleep 1
    check "RTRACK_NVML_LIBRARY: loaded without a driver, its GPU recorded" \
        "$(q b.db "SELECT count(*) FROM gpus")" 1
else
    skip "RT_FAKE_NVML not set: the named library is not tried"
fi
finish
