#!/usr/bin/env bash
# tests/layout/check_rooms.sh SRC_DIR - what the include paths of the rooms cannot catch:
# calls that belong to one room only (docs/architecture.md, "How the build keeps each room in
# its place").
#   getenv          src/cli/env.c: the environment is read once, its values passed down
#   sqlite3_*, a    src/store/ (the database) and src/base/json.c (JSON through SQLite's JSON
#   sqlite3 handle  functions); <sqlite3.h> likewise
#   dlopen          src/net/libs.c (libcurl, libcrypto, zlib) and src/collect/gpu_nvml.c (NVML)
# Comments do not count. Prints each offending line and exits 1; 0 when every call is home.
set -u
SRC=${1:?usage: check_rooms.sh SRC_DIR}
cd "$SRC" || exit 2
bad=0
# the lines of C files outside the allowed ones that use WORD outside a comment
offenders() { # WORD_REGEX ALLOWED_PATH_REGEX...
    local word=$1
    shift
    local allow
    allow=$(printf '%s|' "$@")
    find . -name '*.[ch]' | sed 's|^\./||' | sort | grep -Ev "^(${allow%|})" |
        while read -r f; do
            # strip /* ... */ comments (also across lines) and // comments, keep line numbers
            awk -v w="$word" -v f="$f" '
                { line = $0; out = "" 
                  while (length(line)) {
                      if (inc) { e = index(line, "*/"); if (!e) { line = ""; break }
                                 line = substr(line, e + 2); inc = 0; continue }
                      s = index(line, "/*"); d = index(line, "//")
                      if (d && (!s || d < s)) { out = out substr(line, 1, d - 1); line = ""; break }
                      if (!s) { out = out line; line = ""; break }
                      out = out substr(line, 1, s - 1); line = substr(line, s + 2); inc = 1 }
                  if (out ~ w) printf "%s:%d: %s\n", f, NR, $0 }' "$f"
        done
}
check() { # WHAT WORD_REGEX ALLOWED...
    local what=$1
    shift
    local out
    out=$(offenders "$@")
    if [ -n "$out" ]; then
        echo "check_rooms: $what outside its room:"
        echo "$out"
        bad=1
    fi
}
check "getenv" '(^|[^_a-z])(secure_)?getenv[ \t]*\(' 'cli/env\.c$'
check "sqlite3" 'sqlite3_[a-z_0-9]+|<sqlite3\.h>|(^|[^a-z_])sqlite3[ \t]*\*' 'store/' 'base/json\.c$'
check "dlopen" '(^|[^_a-z])dlopen[ \t]*\(' 'net/libs\.c$' 'collect/gpu_nvml\.c$'
[ $bad = 0 ] && echo "check_rooms: every getenv, sqlite3_ and dlopen call is in its room"
exit $bad
