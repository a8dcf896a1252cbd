#!/usr/bin/env bash
# tests/layout/check_rooms.sh SRC_DIR - what the include paths of the rooms cannot catch:
# calls that belong to one room only (docs/architecture.md, "How the build keeps each room in
# its place").
#   getenv          src/cli/env.c: the environment is read once, its values passed down;
#                   src/slurm/ (no room: the SPANK plugin, in slurmstepd, reads slurmstepd's)
#   sqlite3_*, a    src/store/ (the database) and src/base/json.c (JSON through SQLite's JSON
#   sqlite3 handle  functions); <sqlite3.h> likewise
#   dlopen          src/net/libs.c (libcurl, libcrypto, zlib) and src/collect/gpu_nvml.c (NVML)
# and SQL that names a table (tests/layout/check_rooms.sh SRC_DIR [SQL_DIR]): in the readers'
# rooms (export, cli, upload, summary) no C string (adjacent literals joined, as C joins them) names a table of SQL_DIR's
# schema.sql and migrations/ (default SRC_DIR/../sql) after FROM, JOIN, INTO, UPDATE or TABLE:
# their SQL over the tables is the store's named queries (sql/queries/), so a migration is
# checked by preparing those, not by a grep across the rooms.
# Comments do not count. Prints each offending line and exits 1; 0 when every call is home.
set -u
SRC=${1:?usage: check_rooms.sh SRC_DIR [SQL_DIR]}
SQL=$(cd "${2:-$SRC/../sql}" && pwd) || exit 2
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
            # (the pattern through the environment: -v would take its backslashes as escapes,
            # which gawk does and mawk does not)
            RT_WORD=$word awk -v f="$f" 'BEGIN { w = ENVIRON["RT_WORD"] }
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
check "getenv" '(^|[^_a-z])(secure_)?getenv[ \t]*\(' 'cli/env\.c$' 'slurm/'
check "sqlite3" 'sqlite3_[a-z_0-9]+|<sqlite3\.h>|(^|[^a-z_])sqlite3[ \t]*\*' 'store/' 'base/json\.c$'
check "dlopen" '(^|[^_a-z])dlopen[ \t]*\(' 'net/libs\.c$' 'collect/gpu_nvml\.c$'

# --- the tables' names in the readers' SQL ----------------------------------------------------
# The rooms held to it: the readers (a room that reads the tables joins with its name).
SQL_ROOMS="export cli upload summary"
# every table a schema or migration makes (or renames one to), lower case
tables=$(cat "$SQL/schema.sql" "$SQL"/migrations/*.sql 2>/dev/null |
    grep -oiE 'create table( if not exists)? +[a-z_0-9]+|rename to +[a-z_0-9]+' |
    awk '{ print tolower($NF) }' | sort -u | tr '\n' '|')
tables=${tables%|}
if [ -z "$tables" ]; then
    echo "check_rooms: no table found in $SQL/schema.sql and $SQL/migrations/"
    exit 2
fi
sql_out=$(for room in $SQL_ROOMS; do
    [ -d "$room" ] && find "$room" -name '*.[ch]'
done | sed 's|^\./||' | sort | while read -r f; do
    # the C strings of f (comments left out, adjacent literals joined) that name a table
    perl -e '
        my ($f, $tables) = @ARGV;
        open(my $h, "<", $f) or die "$f: $!";
        my $src = do { local $/; <$h> };
        my ($i, $line, $n) = (0, 1, length $src);
        my ($str, $at, $open) = ("", 0, 0);   # the literal being joined, its line
        my $flush = sub {
            print "$f:$at: $str\n"
                if $open && $str =~ /\b(from|join|into|update|table)\s+(main\.)?[\\"`\[]*($tables)\b/i;
            ($str, $open) = ("", 0);
        };
        while ($i < $n) {
            my $c = substr($src, $i, 1);
            my $two = substr($src, $i, 2);
            if ($two eq "/*") {
                my $e = index($src, "*/", $i + 2); $e = $n - 2 if $e < 0;
                $line += () = substr($src, $i, $e + 2 - $i) =~ /\n/g; $i = $e + 2;
            } elsif ($two eq "//") {
                my $e = index($src, "\n", $i); $e = $n if $e < 0; $i = $e;
            } elsif ($c eq "\"" || $c eq "\x27") {
                my $j = $i + 1;
                $j += substr($src, $j, 1) eq "\\" ? 2 : 1 while $j < $n && substr($src, $j, 1) ne $c;
                if ($c eq "\"") { $at = $line unless $open; $str .= substr($src, $i + 1, $j - $i - 1); $open = 1 }
                $line += () = substr($src, $i, $j + 1 - $i) =~ /\n/g; $i = $j + 1;
            } elsif ($c =~ /\s/) {
                $line++ if $c eq "\n"; $i++;
            } else {
                $flush->(); $i++;
            }
        }
        $flush->();
    ' "$f" "$tables"
done)
if [ -n "$sql_out" ]; then
    echo "check_rooms: SQL naming a table outside the store (a named query belongs in sql/queries/):"
    echo "$sql_out"
    bad=1
fi
[ $bad = 0 ] && echo "check_rooms: every getenv, sqlite3_ and dlopen call is in its room, and no reader's SQL names a table"
exit $bad
