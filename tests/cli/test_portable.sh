#!/usr/bin/env bash
# The release tarballs of scripts/release.sh (docs/portability.md), as a cluster user gets them.
#
# 1. Each tarball (amd64, arm64): its .sha256 matches; it holds the binary, the
#    resource-tracker link, the man page, the completions, README.md and LICENSE, the same
#    files as the source tree's; the binary is the build tree's (the one the CLI suites ran,
#    scripts/test.sh), for the right machine, stripped, at most 2 MiB, needing no library but
#    glibc's (NEEDED: libc, libm, libdl, libpthread, the loader) and no symbol version above
#    GLIBC_2.17.
# 2. The same smoke job recorded by the x86_64 binary, natively, and by the arm64 binary under
#    qemu-user (`qemu-aarch64 -L /usr/aarch64-linux-gnu`: Debian's qemu-user and
#    libc6-arm64-cross), held to the same bounds: the CPU seconds against the kernel's own
#    count (bash's `times` in the job), the memory peak against a known mapping, the Python
#    CSV's headers against the Python reference's own (tests/fixtures/parity), the JSON Lines
#    parsed and byte for byte those of the frozen view of tests/fixtures/jsonl, the summary's
#    JSON figures, the HTML report.
#    Under qemu-user only rtrack is emulated: the job it starts is a program of this machine
#    (bash, rt_spin, rt_mapper), and an exec of a native program leaves the emulator, so the
#    job's CPU and memory are real ones, read by the arm64 binary from this machine's /proc
#    (qemu passes /proc through, but /proc/self: rtrack never reads its own).
#
# RT_PORTABLE_DIR names scripts/release.sh's output (tests/CMakeLists.txt: RTRACK_PORTABLE_DIR,
# which scripts/test.sh's normal stage sets). A build that names none (the asan stage's, a
# developer's) skips the suite; one that names it requires it whole ('portable' in
# RTRACK_TEST_REQUIRE: .ci/run requires all).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
SRC=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
DIR=${RT_PORTABLE_DIR:-}
if [ -z "$DIR" ]; then
    skip_all - "RT_PORTABLE_DIR is not set: this build checks no release tarballs (scripts/test.sh normal does)"
elif [ ! -d "$DIR/dist" ]; then
    skip_all portable "no release tarballs: $DIR/dist does not exist (scripts/release.sh $DIR)"
fi
version=$(sed -n 's/^project(rtrack VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
sqlite_version=$(sed -n 's/^set(RTRACK_SQLITE_VERSION \(.*\))$/\1/p' "$SRC/cmake/Portable.cmake")
MAX_BYTES=$((2 * 1024 * 1024))

# --- 1. the tarballs -----------------------------------------------------------------------------
# tarball DEB ARCH MACHINE LOADER : the checks of one architecture's tarball; leaves it
# extracted under x/DEB
tarball() {
    local deb=$1 arch=$2 machine=$3 loader=$4
    local name=rtrack-$version-linux-$deb
    local tgz=$DIR/dist/$name.tar.gz
    if [ ! -f "$tgz" ]; then
        fail "$deb: $name.tar.gz was not built"
        return
    fi
    check "$deb: the .sha256 beside the tarball matches it" \
        "$(cd "$DIR/dist" && sha256sum -c "$name.tar.gz.sha256" 2>&1)" "$name.tar.gz: OK"
    check "$deb: the .sha256 is the tarball's" "$(awk '{ print $1 }' "$tgz.sha256")" \
        "$(sha256sum <"$tgz" | awk '{ print $1 }')"
    local n=$name/ want
    want="${n}LICENSE ${n}README.md ${n}bin/resource-tracker ${n}bin/rtrack"
    want="$want ${n}share/bash-completion/completions/resource-tracker"
    want="$want ${n}share/bash-completion/completions/rtrack"
    want="$want ${n}share/fish/vendor_completions.d/resource-tracker.fish"
    want="$want ${n}share/fish/vendor_completions.d/rtrack.fish ${n}share/man/man1/rtrack.1"
    want="$want ${n}share/zsh/vendor-completions/_rtrack"
    check "$deb: the tarball's files" "$(tar tzf "$tgz" | grep -v '/$' | sort | tr '\n' ' ')" "$want "
    mkdir -p "x/$deb"
    tar xzf "$tgz" -C "x/$deb" || fail "$deb: tar xzf"
    local top=x/$deb/$name bin=x/$deb/$name/bin/rtrack
    check "$deb: bin/resource-tracker links to rtrack" "$(readlink "$top/bin/resource-tracker")" rtrack
    local f got src
    for f in "README.md README.md" "LICENSE LICENSE" "share/man/man1/rtrack.1 docs/rtrack.1" \
        "share/bash-completion/completions/rtrack completions/rtrack.bash" \
        "share/bash-completion/completions/resource-tracker completions/rtrack.bash" \
        "share/zsh/vendor-completions/_rtrack completions/_rtrack" \
        "share/fish/vendor_completions.d/rtrack.fish completions/rtrack.fish" \
        "share/fish/vendor_completions.d/resource-tracker.fish completions/resource-tracker.fish"; do
        read -r got src <<<"$f"
        check "$deb: $got is the source tree's $src" "$(cmp -s "$top/$got" "$SRC/$src" && echo same)" same
    done
    check "$deb: bin/rtrack is the build tree's ($DIR/$arch/rtrack)" \
        "$(cmp -s "$bin" "$DIR/$arch/rtrack" && echo same)" same
    check "$deb: an executable for $machine" \
        "$(readelf -h "$bin" | sed -n 's/^ *Machine: *//p') $(readelf -h "$bin" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')" \
        "$machine EXEC"
    # NEEDED: glibc's own libraries only
    local needed bad=""
    needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
    for f in $needed; do
        case $f in libc.so.6 | libm.so.6 | libdl.so.2 | libpthread.so.0 | "$loader") ;; *) bad="$bad $f" ;; esac
    done
    check "$deb: NEEDED is glibc's only ($needed)" "$bad" ""
    check "$deb: libc.so.6 is NEEDED" "$(grep -c 'libc\.so\.6' <<<"$needed")" 1
    # every versioned symbol it imports: GLIBC_2.17 at most, and no other library's versions
    local versions top_version
    versions=$(objdump -T "$bin" | grep -oE '\((GLIBC|[A-Z_]+)_[^)]*\)' | tr -d '()' | sort -u)
    check "$deb: only GLIBC_ symbol versions" "$(grep -vc '^GLIBC_' <<<"$versions")" 0
    top_version=$(sed 's/^GLIBC_//' <<<"$versions" | sort -V | tail -1)
    check "$deb: the newest symbol version ($top_version) is at most 2.17" \
        "$(printf '%s\n2.17\n' "$top_version" | sort -V | tail -1)" 2.17
    check "$deb: every imported function has a version" \
        "$(objdump -T "$bin" | awk '$3 == "DF" && $4 == "*UND*" && $6 !~ /GLIBC_/' | wc -l)" 0
    check "$deb: stripped (no .symtab)" "$(readelf -S "$bin" | grep -c ' \.symtab ')" 0
    local size
    size=$(stat -c %s "$bin")
    check_range "$deb: stripped size in bytes at most 2 MiB" "$size" 1 "$MAX_BYTES"
    printf '# %s: rtrack %s bytes (%.2f MiB), tarball %s bytes, symbol versions up to GLIBC_%s\n' \
        "$deb" "$size" "$(awk -v s="$size" 'BEGIN { print s / 1048576 }')" "$(stat -c %s "$tgz")" "$top_version"
}
tarball amd64 x86_64 "Advanced Micro Devices X86-64" ld-linux-x86-64.so.2
tarball arm64 aarch64 AArch64 ld-linux-aarch64.so.1

X86=x/amd64/rtrack-$version-linux-amd64/bin/rtrack
ARM=x/arm64/rtrack-$version-linux-arm64/bin/rtrack
# the CLI suites checked the binary that ships: scripts/test.sh points them at the build tree's
if cmp -s "$RTRACK" "$DIR/x86_64/rtrack"; then
    pass "the CLI suites run the release binary ($RTRACK)"
else
    skip_req portable "the CLI suites run $RTRACK, not the release binary (RTRACK_CLI_BINARY)"
fi

# --- 2. the smoke job, x86_64 natively and arm64 under qemu-user ---------------------------------
SPIN=$RT_HELPERS/rt_spin
MAPPER=$RT_HELPERS/rt_mapper
QEMU=$(command -v qemu-aarch64 || true)
ARMLIBS=/usr/aarch64-linux-gnu
PARITY=${RT_FIXTURES:?RT_FIXTURES names tests/fixtures}/parity/03-process-tree
ORACLE=$RT_FIXTURES/jsonl/rust_sample_v2.sql
MAP_MIB=64
# the frozen view of the JSON Lines runs in a SQLite of the release binary's version (its
# json_object() decides every byte; test_jsonl_identity.sh): tests/helpers/rt_sql.c built with
# it, which scripts/test.sh makes in the x86_64 build tree (both binaries have the same SQLite)
ORACLE_SQL=${RT_RTRACK_SQL:-$DIR/x86_64/rt_sql}
[ -x "$ORACLE_SQL" ] && check "the oracle's SQLite is the release's" \
    "$("$ORACLE_SQL" -version | awk '{ print $1 }')" "$sqlite_version"
dd if=/dev/urandom of=map.bin bs=1M count=$MAP_MIB status=none

# CPU seconds of the job's bash and of the children it waited for, from its `times` output
times_total() { awk '{ for (i = 1; i <= NF; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] } } END { print s }' "$1"; }
# close_to NAME VALUE REF ABS REL: |VALUE - REF| <= ABS + REL * REF
close_to() {
    check_range "$1 (the kernel says $3)" "$2" "$(awk -v r="$3" -v a="$4" -v p="$5" 'BEGIN { print r - a - p * r }')" \
        "$(awk -v r="$3" -v a="$4" -v p="$5" 'BEGIN { print r + a + p * r }')"
}
# json FILE EXPR : a value of the summary's JSON (a Python expression on d)
json() { "$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# smoke LABEL RTRACK... : the job recorded and read back by the rtrack that RTRACK... runs
smoke() {
    local l=$1
    shift
    local d=$T/smoke-$l
    mkdir -p "$d"
    (
        cd "$d" || exit 1
        # 1.2 s of CPU, then one process mapping and touching the 64 MiB file for 1.5 s
        "$@" run --quiet --db s.db --interval 0.3 -- \
            bash -c '"$0" 1.2; "$1" "$2" 1 1.5; times >job.times' "$SPIN" "$MAPPER" "$T/map.bin"
    )
    check "$l: the job recorded, exit 0" "$?" 0
    local db=$d/s.db truth
    truth=$(times_total "$d/job.times")
    close_to "$l: the samples' CPU seconds of the tree" \
        "$(q "$db" "SELECT round(sum(proc_utime_s + proc_stime_s), 3) FROM samples")" "$truth" 0.15 0.03
    check_range "$l: the tree's peak PSS in the samples (KiB)" "$(q "$db" "SELECT max(proc_pss_kib) FROM samples")" \
        $((MAP_MIB * 1024 * 9 / 10)) $(((MAP_MIB + 40) * 1024))
    local ns
    ns=$(q "$db" "SELECT count(*) FROM samples WHERE kind <> 'baseline'")
    check_range "$l: periodic and final samples" "$ns" 3 20

    # the Python reference's CSV: its headers, parsed by Python's csv module, one row a sample
    (cd "$d" && "$@" export --db s.db --table system -o system.csv && "$@" export --db s.db --table process -o process.csv &&
        "$@" export --db s.db -o combined.csv)
    check "$l: export --table system, process and combined" "$?" 0
    check "$l: the system CSV's header is the Python reference's" "$(head -1 "$d/system.csv")" "$(head -1 "$PARITY/expected-system.csv")"
    check "$l: the process CSV's header is the Python reference's" "$(head -1 "$d/process.csv")" "$(head -1 "$PARITY/expected-process.csv")"
    check "$l: the CSVs as Python reads them (rows, and the process rows' CPU seconds)" "$("$PY" - "$d" <<'EOF'
import csv, sys
d = sys.argv[1]
rows = {t: list(csv.DictReader(open(f"{d}/{t}.csv", newline=""))) for t in ("system", "process", "combined")}
cpu = sum(float(r["utime"]) + float(r["stime"]) for r in rows["process"])
print(len(rows["system"]), len(rows["process"]), len(rows["combined"]), round(cpu, 1))
EOF
)" "$ns $ns $ns $(q "$db" "SELECT round(sum(proc_utime_s + proc_stime_s), 1) FROM samples WHERE kind <> 'baseline'")"

    # the Rust reference's JSON Lines: parsed, and byte for byte the frozen view's
    (cd "$d" && "$@" export --db s.db --format jsonl -o s.jsonl)
    check "$l: export --format jsonl" "$?" 0
    check "$l: every JSON line parses, with the Rust reference's keys" "$("$PY" - "$d/s.jsonl" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
keys = {"timestamp", "interval_s", "cpu", "memory", "network", "disk", "gpu"}
print(len(lines), all(keys <= set(l) for l in lines), sum(1 for l in lines if l["cpu"]["process_utime_secs"] is not None))
EOF
)" "$ns True $ns"
    if [ -x "$ORACLE_SQL" ]; then
        "$ORACLE_SQL" "$db" ".read $ORACLE" "SELECT json FROM rust_sample_v2 ORDER BY seq" >"$d/oracle.jsonl"
        check "$l: the JSON Lines are the frozen view's, byte for byte" \
            "$(cmp -s "$d/s.jsonl" "$d/oracle.jsonl" && echo same)" same
    else
        skip_req portable "$l: no $ORACLE_SQL: the JSON Lines not compared with the frozen view"
    fi

    # the summary's figures
    (cd "$d" && "$@" summary --db s.db --format json >summary.json)
    check "$l: summary --format json" "$?" 0
    check "$l: summary: the run finished, exit 0" "$(json "$d/summary.json" 'd["run"]["status"], d["run"]["exit_code"]')" "('finished', 0)"
    close_to "$l: summary: CPU time of the reaped job (s)" "$(json "$d/summary.json" 'd["cpu_time"]["total_s"]')" "$truth" 0.02 0.01
    check_range "$l: summary: the sampled memory peak (MiB)" "$(json "$d/summary.json" 'd["memory_peak"]["mib"]')" \
        $((MAP_MIB * 9 / 10)) $((MAP_MIB + 40))
    check "$l: summary: rt_mapper's worker holds the peak" \
        "$(json "$d/summary.json" 'max(d["memory_peak"]["processes"], key=lambda p: p["pss_mib"])["name"]')" rt_mapper
    check_range "$l: summary: the kernel's peak resident set (MiB)" "$(json "$d/summary.json" 'd["kernel"]["maxrss_mib"]')" \
        "$MAP_MIB" $((MAP_MIB + 40))
    check "$l: summary: the samples" "$(json "$d/summary.json" 'd["run"]["samples"]')" "$ns"

    # the report
    (cd "$d" && "$@" report --db s.db -o report.html)
    check "$l: report -o report.html" "$?" 0
    check "$l: the report is an HTML page with its charts" \
        "$(head -c 15 "$d/report.html") $(grep -c '<svg' "$d/report.html" | awk '{ print ($1 > 0) }')" "<!DOCTYPE html> 1"
    # a stat() that fails sets errno (docs/portability.md: Zig's stat for glibc 2.17 did not)
    (cd "$d" && "$@" summary --db no-such.db >/dev/null 2>nodb.err)
    check "$l: a missing database is named as missing" "$(grep -c 'no-such.db.*\(no such file\|does not exist\)' "$d/nodb.err")" 1
}

ver_x86=$("$X86" --version)
check "x86_64: --version names the target" "$(grep '^target: ' <<<"$ver_x86")" "target: x86_64-linux-gnu, glibc >= 2.17"
check "x86_64: --version names the SQLite compiled in" "$(grep '^sqlite: ' <<<"$ver_x86")" "sqlite: $sqlite_version"
smoke x86_64 "$T/$X86"

if [ -z "$QEMU" ] || [ ! -e "$ARMLIBS/lib/ld-linux-aarch64.so.1" ]; then
    skip_req portable "arm64: qemu-aarch64 or $ARMLIBS missing (Debian: qemu-user libc6-arm64-cross)"
    finish
fi
arm() { "$QEMU" -L "$ARMLIBS" "$T/$ARM" "$@"; }
ver_arm=$(arm --version)
check "arm64: --version under qemu names the target" "$(grep '^target: ' <<<"$ver_arm")" "target: aarch64-linux-gnu, glibc >= 2.17"
check "arm64: --version names the SQLite compiled in" "$(grep '^sqlite: ' <<<"$ver_arm")" "sqlite: $sqlite_version"
# no arm64 libcurl here: what a machine without it is told
check "arm64: without libcurl, upload says why" \
    "$(grep -c '^upload: built in (Sentinel API and S3); not available: cannot load libcurl: ' <<<"$ver_arm")" 1
smoke arm64 arm
finish
