#!/usr/bin/env bash
# `cmake --install` and the .deb that `cpack` makes from the build tree of the rtrack under test:
# the binary, the man page and the bash completion land in the standard places, the package
# declares its library dependencies, and the installed / unpacked binary runs.
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
}

# --- cmake --install -----------------------------------------------------------------------------
if cmake --install "$BUILD" --prefix "$T/root/usr" >install.log 2>&1; then
    pass "cmake --install into a temporary prefix"
    files_in "$T/root" "cmake --install"
    check "cmake --install: nothing else is installed" \
        "$(cd "$T/root" && find . -type f | sort | tr '\n' ' ')" \
        "./usr/bin/rtrack ./usr/share/bash-completion/completions/rtrack ./usr/share/fish/vendor_completions.d/rtrack.fish ./usr/share/man/man1/rtrack.1 ./usr/share/zsh/vendor-completions/_rtrack "
    # the installed completion works from its installed name
    check "installed completion registers _rtrack" \
        "$(bash -c ". '$T/root/usr/share/bash-completion/completions/rtrack' && complete -p rtrack")" \
        "complete -F _rtrack rtrack"
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
debs=("$T"/pkg/*.deb)
check "cpack makes one .deb" "${#debs[@]}" 1
deb=${debs[0]}
pkgversion=$(awk '{ print $2 }' <<<"$version")
check ".deb file name" "$(basename "$deb")" "rtrack_${pkgversion}_$(dpkg --print-architecture).deb"
check "Package" "$(dpkg-deb -f "$deb" Package)" "rtrack"
check "Version" "$(dpkg-deb -f "$deb" Version)" "$pkgversion"
check "Maintainer" "$(dpkg-deb -f "$deb" Maintainer)" "rtrack maintainers"
check "Architecture" "$(dpkg-deb -f "$deb" Architecture)" "$(dpkg --print-architecture)"
depends=$(dpkg-deb -I "$deb" | sed -n 's/^ *Depends: //p')
for lib in libc6 libsqlite3-0 libcurl4 zlib1g libssl3; do
    [[ ", $depends, " == *", $lib, "* ]] && pass "Depends has $lib" || fail "Depends '$depends' lacks $lib"
done
# every package providing a library the binary links is in Depends (or is libc6's)
if command -v ldd >/dev/null && command -v dpkg >/dev/null; then
    for lib in libsqlite3.so libcurl.so libcrypto.so libz.so; do
        path=$(ldd "$RTRACK" | awk -v l="$lib" 'index($1, l) == 1 { print $3 }')
        [ -n "$path" ] || { fail "rtrack links $lib"; continue; }
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
finish
