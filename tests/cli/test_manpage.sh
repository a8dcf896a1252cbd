#!/usr/bin/env bash
# docs/rtrack.1: renders without a groff warning, and its OPTIONS agree with `rtrack CMD --help`
# both ways. The page writes options as \-\-long\-name (every hyphen escaped) in the heading line
# of a .TP entry, under one ".SS" per command in OPTIONS: "run and record" (both), "record only",
# "export", "runs", "summary", "report", "upload", and "all commands" (--help, --version).
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
PAGE=${RT_MANPAGE:-$HERE/../../docs/rtrack.1}
# the command table (src/cli/commands.c), as `rtrack --help` lists it
COMMANDS=$("$RTRACK" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' | xargs)
[ -n "$COMMANDS" ] && pass "rtrack --help lists commands: $COMMANDS" || fail "rtrack --help lists commands"

if [ ! -f "$PAGE" ]; then
    fail "docs/rtrack.1 exists"
    finish
fi

# --- rendering -----------------------------------------------------------------------------------
if command -v groff >/dev/null; then
    err=$(groff -man -Tutf8 -ww -z "$PAGE" 2>&1 >/dev/null)
    check "groff -man -ww renders without warnings" "$err" ""
    out=$(groff -man -Tutf8 "$PAGE" 2>/dev/null | sed 's/\x1b\[[0-9;]*m//g; s/.\x08//g')
    case $out in
        *"--interval SECS"*) pass "rendered page shows '--interval SECS'" ;;
        *) fail "rendered page shows '--interval SECS'" ;;
    esac
else
    skip "groff not installed (apt-get install groff-base): rendering not checked"
fi
if command -v man >/dev/null && command -v groff >/dev/null; then
    err=$(MANWIDTH=80 man --warnings -l "$PAGE" 2>&1 >/dev/null)
    check "man --warnings -l renders without warnings" "$err" ""
else
    skip "man not installed: man -l not checked"
fi

# --- the page's structure --------------------------------------------------------------------------
# "TITLE<TAB>--option" for every option in a .TP heading line under OPTIONS
man_opts=$(awk '
    /^\.SH/ { in_opts = ($0 ~ /^\.SH +"?OPTIONS"?$/); next }
    !in_opts { next }
    /^\.SS/ { title = $0; sub(/^\.SS +/, "", title); gsub(/"/, "", title); next }
    /^\.TP/ { heading = 1; next }
    heading {
        heading = 0
        line = $0
        while (match(line, /\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*/)) {
            opt = substr(line, RSTART, RLENGTH); gsub(/\\/, "", opt)
            print title "\t" opt
            line = substr(line, RSTART + RLENGTH)
        }
    }' "$PAGE")
[ -n "$man_opts" ] && pass "OPTIONS has option entries" || fail "OPTIONS has option entries"

# every subsection belongs to a command (a misspelt title would hide its options from the checks)
while IFS= read -r title; do
    ok=0
    for cmd in $COMMANDS; do
        [[ " $title " == *" $cmd "* ]] && ok=1
    done
    [ "$title" = "all commands" ] && ok=1
    if [ $ok = 1 ]; then pass "OPTIONS subsection '$title' names a command"
    else fail "OPTIONS subsection '$title' names no command"; fi
done < <(cut -f1 <<<"$man_opts" | sort -u)

all_cmds=$(awk -F'\t' '$1 == "all commands" { print $2 }' <<<"$man_opts" | sort -u | tr '\n' ' ')
check "'all commands' has --help and --version" "$all_cmds" "--help --version "

# --- options: help <-> page, per command ---------------------------------------------------------
for cmd in $COMMANDS; do
    help=$("$RTRACK" "$cmd" --help 2>&1) || { fail "rtrack $cmd --help exits 0"; continue; }
    # every long option the help mentions (option lines, usage line and descriptions), and --help,
    # which every command takes
    help_opts=$( { grep -oE -- '--[a-z0-9]+(-[a-z0-9]+)*' <<<"$help"; echo --help; } | sort -u)
    page_opts=$( { awk -F'\t' -v cmd="$cmd" '
        { n = split($1, w, " "); for (i = 1; i <= n; i++) if (w[i] == cmd) { print $2; next } }
        ' <<<"$man_opts"; echo --help; } | sort -u)
    missing=$(comm -23 <(echo "$help_opts") <(echo "$page_opts") | tr '\n' ' ')
    extra=$(comm -13 <(echo "$help_opts") <(echo "$page_opts") | tr '\n' ' ')
    check "$cmd: every option of 'rtrack $cmd --help' is in the page's OPTIONS for $cmd" "$missing" ""
    check "$cmd: every option in the page's OPTIONS for $cmd is in 'rtrack $cmd --help'" "$extra" ""
    # the command is described in COMMANDS and has a SYNOPSIS line
    grep -qx "\.B $cmd" <(sed -n '/^\.SH COMMANDS/,/^\.SH /p' "$PAGE") &&
        pass "$cmd in COMMANDS" || fail "$cmd in COMMANDS"
    grep -qx "\.SY \"rtrack $cmd\"" "$PAGE" && pass "$cmd in SYNOPSIS" || fail "$cmd in SYNOPSIS"
    # the page's synopsis names the options of the table's usage line (the first lines of
    # --help); where that says [options], any of the command's options
    usage_lines=$("$RTRACK" "$cmd" --help | sed -n '1,/^$/p')
    table_syn=$(grep -oE -- '--[a-z0-9]+(-[a-z0-9]+)*' <<<"$usage_lines" | sort -u | tr '\n' ' ')
    page_syn=$(sed -n "/^\.SY \"rtrack $cmd\"/,/^\.YS/p" "$PAGE" | grep -oE -- '\\-\\-[a-z0-9]+(\\-[a-z0-9]+)*' |
        tr -d '\\' | sort -u | tr '\n' ' ')
    if grep -q '\[options\]' <<<"$usage_lines"; then
        all_opts=$("$RTRACK" "$cmd" --help | grep -oE -- '--[a-z0-9]+(-[a-z0-9]+)*' | sort -u)
        extra=$(comm -23 <(tr ' ' '\n' <<<"$page_syn" | grep .) <(echo "$all_opts") | tr '\n' ' ')
        check "$cmd: SYNOPSIS names only options the command has" "$extra" ""
    else
        check "$cmd: SYNOPSIS has the options of the usage line" "$page_syn" "$table_syn"
    fi
done

# the commands `rtrack --help` lists are the page's
top_cmds=$("$RTRACK" --help 2>&1 | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' | sort | tr '\n' ' ')
check "rtrack --help lists the commands the page checks" "$top_cmds" \
    "$(tr ' ' '\n' <<<"$COMMANDS" | sort | tr '\n' ' ')"

# --- environment ---------------------------------------------------------------------------------
env_section=$(sed -n '/^\.SH ENVIRONMENT/,/^\.SH /p' "$PAGE")
envs=$( { for cmd in $COMMANDS; do "$RTRACK" "$cmd" --help 2>&1; done |
          grep -oE '\b(RTRACK|TRACKER|SENTINEL)_[A-Z0-9_]*[A-Z0-9]\b'
          printf '%s\n' SENTINEL_API_TOKEN RTRACK_NVML_LIBRARY RTRACK_KEEPER_URL RTRACK_S3_ENDPOINT \
              RTRACK_S3_REGION RTRACK_UPLOAD_BATCH_ROWS RTRACK_UPLOAD_INLINE_MAX RTRACK_UPLOAD_WAIT \
              RTRACK_CLOUD_DISCOVERY; } | sort -u)
missing=""
for e in $envs; do
    grep -qw -- "$e" <<<"$env_section" || missing="$missing $e"
done
check "ENVIRONMENT names every variable of the help texts and the docs" "$missing" ""

# --- the words of the screen (issue 36): every word `summary --help` defines is defined in the
# man page's "Words used on the screen" and in docs/usage.md's section of that name
USAGE=${RT_USAGE_MD:-$HERE/../../docs/usage.md}
words=$("$RTRACK" summary --help | awk '/^words/ { on = 1; next } on && /^  [^ ]/ { sub(/^  /, ""); sub(/  .*/, ""); print }')
check_range "summary --help defines words" "$(grep -c . <<<"$words")" 8 30
man_words=$(sed -n '/^\.SS Words used on the screen/,/^\.S[HS]/p' "$PAGE" | sed 's/\\-/-/g')
doc_words=$(sed -n '/^## Words used on the screen/,/^## /p' "$USAGE")
missing=""
while read -r w; do
    first=${w%% *} # "kernel peak" -> kernel, "shared host" -> shared
    grep -qi -- "$first" <<<"$man_words" || missing="$missing man:$w"
    grep -qi -- "\*\*$first" <<<"$doc_words" || missing="$missing usage.md:$w"
done <<<"$words"
check "the words of summary --help, defined in the man page and docs/usage.md" "$missing" ""

# --- the other sections, and the version ---------------------------------------------------------
for s in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -qxE "\.SH \"?$s\"?" "$PAGE" && pass "section $s" || fail "section $s"
done
version=$("$RTRACK" --version | awk 'NR == 1 { print $2 }')
grep -q "^\.TH RTRACK 1 [^ ]* \"rtrack $version\"" "$PAGE" &&
    pass ".TH carries the version $version" || fail ".TH does not carry 'rtrack $version'"
finish
