#!/usr/bin/env bash
# `cmake --install` and the .deb that `cpack` makes from the build tree of the rtrack under test:
# the binary, the man page and the completions land in the standard places, the package
# declares its library dependencies, and the installed / unpacked binary runs. The .deb is
# installed with dpkg twice: into a fresh root (`dpkg --root`, any user), and, as root, into
# this machine (`dpkg -i`), where `/usr/bin/rtrack run -- true` must work before `dpkg -r`
# removes it again. See "dpkg -i" below for how that leaves the machine as it was.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
SRC=$(cd "$HERE/../.." && pwd)
BUILD=$(dirname "$RTRACK")
version=$("$RTRACK" --version)

if [ ! -f "$BUILD/cmake_install.cmake" ]; then
    skip "$BUILD is not a CMake build tree: install not checked"
    finish
fi

# files_in ROOT LABEL : the three files under ROOT/usr, and the binary runs
files_in() {
    local root=$1 label=$2
    check_cmd "$label: usr/bin/rtrack is executable" test -x "$root/usr/bin/rtrack"
    check_cmd "$label: usr/share/man/man1/rtrack.1 is docs/rtrack.1" \
        cmp -s "$root/usr/share/man/man1/rtrack.1" "$SRC/docs/rtrack.1"
    check_cmd "$label: usr/share/bash-completion/completions/rtrack is completions/rtrack.bash" \
        cmp -s "$root/usr/share/bash-completion/completions/rtrack" "$SRC/completions/rtrack.bash"
    check "$label: the binary runs" "$("$root/usr/bin/rtrack" --version 2>&1)" "$version"
    # the Rust tool's name: a relative link beside rtrack, which takes its command line
    check "$label: usr/bin/resource-tracker links to rtrack" "$(readlink "$root/usr/bin/resource-tracker")" rtrack
    check "$label: resource-tracker -V" "$("$root/usr/bin/resource-tracker" -V 2>&1 | head -1)" \
        "resource-tracker $(awk 'NR == 1 { print $2 }' <<<"$version")"
}

# --- cmake --install -----------------------------------------------------------------------------
if cmake --install "$BUILD" --prefix "$T/root/usr" >install.log 2>&1; then
    pass "cmake --install into a temporary prefix"
    files_in "$T/root" "cmake --install"
    plugin=""
    [ -f "$BUILD/spank_rtrack.so" ] && plugin="./usr/lib/rtrack/spank_rtrack.so " # (src/slurm/)
    check "cmake --install: nothing else is installed" \
        "$(cd "$T/root" && find . -type f | sort | tr '\n' ' ')" \
        "./usr/bin/rtrack ${plugin}./usr/share/bash-completion/completions/resource-tracker ./usr/share/bash-completion/completions/rtrack ./usr/share/fish/vendor_completions.d/resource-tracker.fish ./usr/share/fish/vendor_completions.d/rtrack.fish ./usr/share/man/man1/rtrack.1 ./usr/share/zsh/vendor-completions/_rtrack "
    # the installed completion works from its installed name
    check "installed completion registers _rtrack" \
        "$(bash -c ". '$T/root/usr/share/bash-completion/completions/rtrack' && complete -p rtrack")" \
        "complete -F _rtrack rtrack"
    check "installed completion of resource-tracker registers _rtrack" \
        "$(bash -c ". '$T/root/usr/share/bash-completion/completions/resource-tracker' && complete -p resource-tracker")" \
        "complete -F _rtrack resource-tracker"
else
    fail "cmake --install: $(cat install.log)"
fi

# --- the .deb ------------------------------------------------------------------------------------
if ! command -v cpack >/dev/null || ! command -v dpkg-deb >/dev/null; then
    skip "cpack or dpkg-deb missing: the .deb not checked"
    finish
fi
if [ ! -f "$BUILD/CPackConfig.cmake" ]; then
    fail "$BUILD/CPackConfig.cmake exists (include(CPack) in CMakeLists.txt)"
    finish
fi
if cpack --config "$BUILD/CPackConfig.cmake" -B "$T/pkg" >cpack.log 2>&1; then
    pass "cpack makes a package"
else
    fail "cpack: $(tail -5 cpack.log)"
    finish
fi
debs=("$T"/pkg/rtrack_*.deb)
check "cpack makes one .deb of rtrack" "${#debs[@]}" 1
# with the Slurm plugin built (src/slurm/), its own package beside it: rtrack-slurm
if [ -f "$BUILD/spank_rtrack.so" ]; then
    sdebs=("$T"/pkg/rtrack-slurm_*.deb)
    check "cpack makes the rtrack-slurm .deb too" "$(find "$T/pkg" -maxdepth 1 -name '*.deb' | wc -l) ${#sdebs[@]}" "2 1"
    check "rtrack-slurm depends on this rtrack and slurmd" \
        "$(dpkg-deb -f "${sdebs[0]}" Depends)" "libc6, rtrack (= $(awk 'NR == 1 { print $2 }' <<<"$version")), slurmd"
    check "rtrack-slurm holds the plugin only" "$(dpkg-deb -c "${sdebs[0]}" | awk '$NF !~ /\/$/ { print $NF }')" \
        "./usr/lib/rtrack/spank_rtrack.so"
else
    check "no Slurm plugin built: one .deb" "$(find "$T/pkg" -maxdepth 1 -name '*.deb' | wc -l)" 1
fi
deb=${debs[0]}
pkgversion=$(awk 'NR == 1 { print $2 }' <<<"$version")
check ".deb file name" "$(basename "$deb")" "rtrack_${pkgversion}_$(dpkg --print-architecture).deb"
check "Package" "$(dpkg-deb -f "$deb" Package)" "rtrack"
check "Version" "$(dpkg-deb -f "$deb" Version)" "$pkgversion"
check "Maintainer" "$(dpkg-deb -f "$deb" Maintainer)" "rtrack maintainers"
check "Architecture" "$(dpkg-deb -f "$deb" Architecture)" "$(dpkg --print-architecture)"
depends=$(dpkg-deb -I "$deb" | sed -n 's/^ *Depends: //p')
# SQLite is a library of the distribution's build, and compiled into the release binary
# (scripts/release.sh, docs/portability.md): there the package must not depend on it
libs="libc6 libsqlite3-0 libcurl4 zlib1g libssl3"
sofiles="libsqlite3.so libcurl.so libcrypto.so libz.so"
if ! ldd "$RTRACK" 2>/dev/null | grep -q libsqlite3; then
    libs=${libs/libsqlite3-0 /}
    sofiles=${sofiles/libsqlite3.so /}
    [[ ", $depends, " == *", libsqlite3-0, "* ]] && fail "Depends '$depends' has libsqlite3-0, compiled in" ||
        pass "SQLite compiled in: Depends has no libsqlite3-0"
fi
for lib in $libs; do
    [[ ", $depends, " == *", $lib, "* ]] && pass "Depends has $lib" || fail "Depends '$depends' lacks $lib"
done
# every package providing a library rtrack uses is in Depends (or is libc6's): those it links
# (ldd), and those it loads with dlopen when it first needs them (libcurl and libcrypto, by the
# soname the binary holds; include/rtrack/net/libs.h)
LDCONFIG=$(command -v ldconfig || echo /sbin/ldconfig)
if command -v ldd >/dev/null && command -v dpkg >/dev/null; then
    for lib in $sofiles; do
        path=$(ldd "$RTRACK" | awk -v l="$lib" 'index($1, l) == 1 { print $3 }')
        if [ -z "$path" ]; then
            soname=$(grep -a -o -m1 "$lib\.[0-9][0-9.]*" "$RTRACK" | head -1)
            [ -n "$soname" ] &&
                path=$("$LDCONFIG" -p 2>/dev/null | awk -v s="$soname" '$1 == s { print $NF; exit }')
        fi
        [ -n "$path" ] || { fail "rtrack links or loads $lib"; continue; }
        pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
        [ -n "$pkg" ] || pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
        if [ -z "$pkg" ]; then skip "no Debian package owns $path"; continue; fi
        [[ ", $depends, " == *", $pkg, "* ]] && pass "$lib ($pkg) is in Depends" ||
            fail "$lib comes from $pkg, not in Depends '$depends'"
    done
fi
contents=$(dpkg-deb -c "$deb" | awk '{ print $NF }')
for f in ./usr/bin/rtrack ./usr/share/man/man1/rtrack.1 ./usr/share/bash-completion/completions/rtrack \
    ./usr/share/zsh/vendor-completions/_rtrack ./usr/share/fish/vendor_completions.d/rtrack.fish; do
    grep -qx -- "$f" <<<"$contents" && pass ".deb holds $f" || fail ".deb lacks $f"
done
if dpkg -x "$deb" "$T/deb" 2>dpkg.log; then
    pass "dpkg -x unpacks the .deb"
    files_in "$T/deb" ".deb"
else
    fail "dpkg -x: $(cat dpkg.log)"
fi

PKG_FILES="/usr/bin/rtrack /usr/bin/resource-tracker /usr/share/man/man1/rtrack.1 /usr/share/bash-completion/completions/rtrack
    /usr/share/bash-completion/completions/resource-tracker /usr/share/zsh/vendor-completions/_rtrack
    /usr/share/fish/vendor_completions.d/rtrack.fish /usr/share/fish/vendor_completions.d/resource-tracker.fish"

# job_runs LABEL BINARY : `BINARY run -- true` in a fresh directory records one finished run
job_runs() {
    local label=$1 bin=$2 dir
    dir=$(mktemp -d "$T/job.XXXXXX")
    (cd "$dir" && "$bin" run -- true) >"$dir/out" 2>"$dir/err"
    check "$label: 'rtrack run -- true' exits 0" "$?" 0
    check "$label: nothing on stdout" "$(wc -c <"$dir/out")" 0
    check "$label: the end-of-run note" "$(grep -c "^rtrack: run 1 'true' exited 0 after" "$dir/err")" 1
    check "$label: one finished run recorded" \
        "$(q "$dir/rtrack.db" "SELECT count(*), min(status), min(exit_code), min(samples) FROM runs,
             (SELECT count(*) AS samples FROM samples)")" "1|finished|0|2"
    check "$label: 'rtrack runs' reads it" "$("$bin" runs --db "$dir/rtrack.db" --format csv | wc -l)" 2
}

# --- dpkg --root: the .deb installed into a fresh root, run, removed -------------------------------
# The fresh root has no packages, so its dependencies are forced there; that they are met is
# checked on this machine, whose libraries the unpacked binary then runs with.
for dep in $(dpkg-deb -f "$deb" Depends | tr -d ' ' | tr ',' ' '); do
    st=$(dpkg-query -W -f='${Status}' "${dep%%(*}" 2>/dev/null)
    check "Depends: $dep is installed on this machine" "$st" "install ok installed"
done
R=$T/dpkgroot
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates" "$R/var/log"
: >"$R/var/lib/dpkg/status"
rdpkg() { dpkg --root="$R" --log="$R/var/log/dpkg.log" --force-not-root "$@"; }
if rdpkg --force-depends -i "$deb" >rdpkg.log 2>&1; then
    pass "dpkg --root -i installs the .deb into a fresh root"
    check "dpkg --root: rtrack is installed there" \
        "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status} ${Version}' rtrack)" \
        "install ok installed $pkgversion"
    check "dpkg --root: the package's files" \
        "$(dpkg-query --admindir="$R/var/lib/dpkg" -L rtrack | while read -r f; do
               [ -f "$R$f" ] && echo "$f"; done | sort | tr '\n' ' ')" \
        "$(tr -s ' \n' '\n\n' <<<"$PKG_FILES" | grep . | sort | tr '\n' ' ')"
    files_in "$R" "dpkg --root"
    job_runs "dpkg --root" "$R/usr/bin/rtrack"
    if rdpkg -r rtrack >>rdpkg.log 2>&1; then
        pass "dpkg --root -r removes it"
        check "dpkg --root -r: no file of it is left" "$(find "$R/usr" -type f 2>/dev/null | wc -l)" 0
        check "dpkg --root -r: not installed any more" \
            "$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status}' rtrack 2>/dev/null)" ""
    else
        fail "dpkg --root -r: $(tail -5 rdpkg.log)"
    fi
else
    fail "dpkg --root -i: $(tail -5 rdpkg.log)"
fi

# --- dpkg -i: the .deb installed into this machine, run from /usr/bin, removed ---------------------
# Only as root, and only when no rtrack is installed here yet (neither the package nor a file it
# would overwrite): the machine is left as it was found. RTRACK_TEST_NO_DPKG_INSTALL=1 skips it.
# - Removed even when a check fails or the test is interrupted (trap). If the test was killed
#   (SIGKILL, a ctest timeout) while the package was in, a marker file says so, and the next run
#   of this test removes it first.
# - Two copies of this test (two build trees, a parallel ctest) take turns on a lock file;
#   dpkg's own lock, when apt or another dpkg holds it, is waited for up to two minutes.
# - Nothing else runs the installed binary: every other test runs its build tree's rtrack by
#   path, and the completion tests keep installed completion files out of the shells' paths.
LOCK=${TMPDIR:-/tmp}/rtrack-test-dpkg.lock
MARK=${TMPDIR:-/tmp}/rtrack-test-dpkg.installed
installed() { dpkg-query -W -f='${Status}' rtrack 2>/dev/null | grep -q ' installed$'; }
# dpkg_wait ARGS... : dpkg ARGS, retried while dpkg's lock is held by someone else
dpkg_wait() {
    local i
    for i in $(seq 120); do
        dpkg "$@" >dpkg-sys.log 2>&1 && return 0
        grep -q 'lock' dpkg-sys.log || return 1
        sleep 1
    done
    return 1
}
remove_pkg() {
    if dpkg-query -W rtrack >/dev/null 2>&1; then dpkg_wait --purge rtrack; fi
    rm -f "$MARK"
}
if [ -n "${RTRACK_TEST_NO_DPKG_INSTALL:-}" ]; then
    skip "dpkg -i into this machine: RTRACK_TEST_NO_DPKG_INSTALL is set"
elif [ "$(id -u)" -ne 0 ]; then
    skip_req root "dpkg -i into this machine: not root (the fresh-root install above still ran)"
elif ! command -v flock >/dev/null; then
    skip "dpkg -i into this machine: flock (util-linux) is missing"
else
    exec 9>"$LOCK"
    if ! flock -w 180 9; then
        fail "dpkg -i: the lock $LOCK was not free within 3 minutes"
        finish
    fi
    if [ -e "$MARK" ] && installed; then
        # a previous run of this test was killed with the package in
        remove_pkg && pass "dpkg -i: removed the rtrack a killed earlier run left installed" ||
            fail "dpkg -i: cannot remove the rtrack a killed earlier run left: $(tail -3 dpkg-sys.log)"
    fi
    rm -f "$MARK"
    clash=""
    for f in $PKG_FILES; do [ -e "$f" ] && clash="$clash $f"; done
    if installed || dpkg-query -W rtrack >/dev/null 2>&1; then
        skip "dpkg -i into this machine: a package rtrack is installed here already; left alone"
    elif [ -n "$clash" ]; then
        skip "dpkg -i into this machine: these files exist and would be overwritten:$clash"
    else
        : >"$MARK"
        trap 'remove_pkg; rm -rf "$T"' EXIT
        trap 'exit 130' INT TERM HUP
        if dpkg_wait -i "$deb"; then
            pass "dpkg -i installs the .deb into this machine"
            check "dpkg -i: rtrack is installed" \
                "$(dpkg-query -W -f='${Status} ${Version}' rtrack)" "install ok installed $pkgversion"
            # dpkg may be told to leave out documentation (path-exclude, as in container images)
            excl=$(cat /etc/dpkg/dpkg.cfg /etc/dpkg/dpkg.cfg.d/* 2>/dev/null | sed -n 's/^path-exclude[= ]//p')
            for f in $PKG_FILES; do
                excluded=0
                while read -r p; do [ -n "$p" ] && [[ $f == $p ]] && excluded=1; done <<<"$excl"
                if [ -f "$f" ]; then
                    check "dpkg -i: $f is the package's" "$(cmp -s "$f" "$T/deb$f" && echo same)" same
                elif [ $excluded = 1 ]; then
                    skip "dpkg -i: $f is left out by dpkg's path-exclude"
                else
                    fail "dpkg -i: $f is not installed"
                fi
            done
            check "dpkg -i: /usr/bin/rtrack --version" "$(/usr/bin/rtrack --version 2>&1)" "$version"
            job_runs "dpkg -i" /usr/bin/rtrack
            if command -v man >/dev/null && [ -f /usr/share/man/man1/rtrack.1 ]; then
                check "dpkg -i: man finds the page" "$(man -w rtrack 2>/dev/null)" /usr/share/man/man1/rtrack.1
            fi
        else
            fail "dpkg -i: $(tail -5 dpkg-sys.log)"
        fi
        if dpkg_wait -r rtrack; then
            pass "dpkg -r removes it"
        else
            fail "dpkg -r: $(tail -5 dpkg-sys.log)"
        fi
        remove_pkg
        trap 'rm -rf "$T"' EXIT
        trap - INT TERM HUP
        check "dpkg -r: the package is gone" "$(dpkg-query -W -f='${Status}' rtrack 2>/dev/null)" ""
        left=""
        for f in $PKG_FILES; do [ -e "$f" ] && left="$left $f"; done
        check "dpkg -r: none of its files is left" "$left" ""
        check "dpkg -r: no rtrack on the default PATH" \
            "$(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin sh -c 'command -v rtrack')" ""
    fi
    flock -u 9
    exec 9>&-
fi
finish
