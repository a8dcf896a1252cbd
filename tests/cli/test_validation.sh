#!/usr/bin/env bash
# One validation per value, whatever its source: numbers are decimal (no hex, no inf/nan) from
# the command line, the environment and the config file alike; export's dates are real dates;
# RTRACK_HTTP_TIMEOUT_S, set but invalid, is an error for the commands that make HTTP
# requests; tag keys follow one rule from --tag, TRACKER_TAGS and [tags]; the documented
# [sentinel] table and a UTF-8 byte order mark are read; `runs` lines up its columns by display
# width (an emoji or a CJK character takes two columns).
. "$(dirname "$0")/lib.sh" "$1"

# refused NAME WANT_STDERR_SUBSTRING CMD... : CMD (an rtrack command, env VAR=... allowed) must
# exit 2 with one 'rtrack: ' line that holds WANT, create no bad.db and not run the job (it
# would touch ran.marker)
refused() {
    local name=$1 want=$2
    shift 2
    "$@" >v.out 2>v.err
    local rc=$?
    check "$name: exit 2" "$rc" 2
    check "$name: one message naming what is wrong" \
        "$(grep -c '^rtrack: ' v.err):$(grep -cF -- "$want" v.err)" "1:1"
    check "$name: no database created, job not run" \
        "$(ls bad.db bad.db-wal ran.marker 2>/dev/null | wc -l)" 0
    [ "$rc" = 2 ] || sed 's/^/    /' v.err
    rm -f bad.db bad.db-wal bad.db-shm ran.marker
}
RUN=(--db bad.db -- touch ran.marker)

# --- numbers: decimal only, one rule for --interval, --duration, --upload-interval, their
# variables and the file
for v in 0x10 0X1p4 0x1p-3 infinity -inf nan 1e400 ' 1' '1 '; do
    refused "--interval '$v'" "invalid value '$v' for --interval: expected seconds" \
        "$RTRACK" run --interval "$v" "${RUN[@]}"
done
refused "record --duration 0x10" "invalid value '0x10' for --duration" \
    "$RTRACK" record --db bad.db --duration 0x10
refused "--upload-interval 0x3c" "invalid value '0x3c' for --upload-interval" \
    "$RTRACK" run --upload-interval 0x3c "${RUN[@]}"
refused "RTRACK_INTERVAL=0x10" "invalid value '0x10' for RTRACK_INTERVAL" \
    env RTRACK_INTERVAL=0x10 "$RTRACK" run "${RUN[@]}"
refused "RTRACK_DURATION=0x10" "invalid value '0x10' for RTRACK_DURATION" \
    env RTRACK_DURATION=0x10 "$RTRACK" record --db bad.db
printf '[tracker]\ninterval_secs = 0x10\n' >hex.toml
refused "TOML interval_secs = 0x10" "hex.toml:2: " "$RTRACK" run --config hex.toml "${RUN[@]}"
printf '[tracker]\ninterval_secs = 0x1.8p1\n' >hexf.toml
refused "TOML interval_secs = 0x1.8p1" "hexf.toml:2: invalid number '0x1.8p1'" \
    "$RTRACK" run --config hexf.toml "${RUN[@]}"
# what stays valid: fractions, a leading dot, exponents, a sign
for v in 0.25 .25 2.5e-1 +0.25; do
    "$RTRACK" run --quiet --db ok.db --interval "$v" -- true
    check "--interval '$v' accepted" "$?:$(q ok.db 'SELECT requested_interval_s FROM runs ORDER BY id DESC LIMIT 1')" 0:0.25
done

# --- export --since/--until: a date that does not exist is refused, not rolled over
"$RTRACK" run --quiet --db r.db --interval 0.05 -- sleep 0.2
for t in 2026-02-30T00:00:00Z 2026-02-29 2026-04-31T12:00:00Z 2026-02-28T24:00:00Z \
    '2026-06-31 10:00' 0x10 +0x10 ++5 inf; do
    "$RTRACK" export --db r.db --since "$t" >v.out 2>v.err
    check "export --since '$t': exit 2, named, nothing written" \
        "$?:$(cat v.err):$(wc -c <v.out)" "2:rtrack: export: invalid time '$t' for --since:0"
done
"$RTRACK" export --db r.db --until 2025-02-29T00:00:00Z >v.out 2>v.err
check "export --until 2025-02-29 (not a leap year): exit 2" "$?" 2
for t in 2024-02-29T00:00:00Z 2026-02-28T23:59:59.999Z 2026-12-31 '2026-01-31 10:00+01:00' \
    1700000000 +0.5; do
    "$RTRACK" export --db r.db --since "$t" >v.out 2>v.err
    check "export --since '$t' accepted" "$?:$(cat v.err)" "0:"
done

# --- runs --since reads times as export does (issue 31 item 12): it took hex, a '+', a day the
# month does not have and a 61st second that export refuses
for t in 0x10s +5m 2026-02-30 2026-12-05T07:19:61 1e3s -5m 5 2026-02-28T24:00 '2026-06-31 10:00' \
    2026-12-05T07:60 2026-12-05T07:19:59+25:00; do
    "$RTRACK" runs --db r.db --since "$t" >v.out 2>v.err
    check "runs --since '$t': exit 2, named, nothing written" "$?:$(grep -c "invalid --since '$t'" v.err):$(wc -c <v.out)" "2:1:0"
done
# the dates both take, and both refuse, are the same; runs' durations stay
for t in 2024-02-29T00:00:00Z 2026-02-28T23:59:59.999Z 2026-12-31 '2026-01-31 10:00+01:00' \
    2026-12-05T07:19:59 2026-02-30 2026-12-05T07:19:61 2025-02-29; do
    "$RTRACK" runs --db r.db --since "$t" >/dev/null 2>&1
    r=$?
    "$RTRACK" export --db r.db --since "$t" >/dev/null 2>&1
    check "runs and export agree on '$t'" "$r" "$?"
done
for t in 90s 1.5h 3d 1w .5m; do
    "$RTRACK" runs --db r.db --since "$t" >v.out 2>v.err
    check "runs --since '$t' accepted" "$?:$(cat v.err)" "0:"
done
check "runs --since a date with an offset: 10:00+01:00 is 09:00Z" \
    "$("$RTRACK" runs --db r.db --since '2026-01-31 10:00+01:00' --format csv | wc -l):$("$RTRACK" runs --db r.db --since 2026-01-31T09:00Z --format csv | wc -l)" "2:2"

# --- the config file: a regular file of at most 16 MiB, parsed in one pass (issue 31 item 14).
# `-c /dev/zero` grew without limit (1.9 GB in 10 s), `-c FIFO` blocked forever; 40 000 [tags]
# keys took 19 s and 300 000 unknown tables more than 20 s before the job started (each key
# and table compared with every one before it)
mkfifo cfg.fifo
refused "-c /dev/zero" "cannot read config file '/dev/zero': not a regular file (a character device)" \
    timeout 60 "$RTRACK" run -c /dev/zero "${RUN[@]}"
refused "-c FIFO" "cannot read config file 'cfg.fifo': not a regular file (a named pipe)" \
    timeout 60 "$RTRACK" run -c cfg.fifo "${RUN[@]}"
refused "RTRACK_CONFIG=FIFO" "cannot read config file 'cfg.fifo': not a regular file (a named pipe)" \
    env RTRACK_CONFIG=cfg.fifo timeout 60 "$RTRACK" record --db bad.db --duration 0.1
head -c $((16 * 1024 * 1024 + 1)) /dev/zero | tr '\0' '#' >huge.toml
refused "a config file of 16 MiB and a byte" "cannot read config file 'huge.toml': larger than 16 MiB" \
    timeout 60 "$RTRACK" run -c huge.toml "${RUN[@]}"
ln -s "$RTRACK" resource-tracker
timeout 60 ./resource-tracker -q -c cfg.fifo -- touch ran.marker 2>v.err
check "resource-tracker -c FIFO: ignored with a warning, the job runs" \
    "$?:$(grep -c "cannot read config file 'cfg.fifo': not a regular file (a named pipe); it is ignored" v.err):$(ls ran.marker)" "0:1:ran.marker"
rm -f ran.marker
# linear: ten times the keys cost about ten times the CPU (a pass over every key before each
# was a hundred times: 0.13 s for 4 000 tags, 10 s for 40 000); CPU seconds, not wall-clock
TIMEFORMAT=%3U
python3 -c 'print("[tags]"); print("\n".join("k%d = \"v%d\"" % (i, i) for i in range(4000)))' >t4k.toml
python3 -c 'print("[tags]"); print("\n".join("k%d = \"v%d\"" % (i, i) for i in range(40000)))' >t40k.toml
cpu_of() { { time "$@" >/dev/null 2>&1; } 2>&1 | tail -1; }
small=$(cpu_of timeout 60 "$RTRACK" run --quiet -c t4k.toml --db t4k.db -- true)
big=$(cpu_of timeout 60 "$RTRACK" run --quiet -c t40k.toml --db t40k.db -- true)
check "40 000 [tags] keys: every one stored" "$(q t40k.db 'SELECT count(*) FROM run_tags')" 40000
check_range "40 000 [tags] keys: CPU against 4 000 ($big s / $small s)" \
    "$(awk -v a="$big" -v b="$small" 'BEGIN { printf "%.1f", a / (b > 0.01 ? b : 0.01) }')" 0 30
python3 -c 'print("\n".join("[t%d]" % i for i in range(30000)))' >t30k.toml
python3 -c 'print("\n".join("[t%d]" % i for i in range(300000)))' >t300k.toml
small=$(cpu_of timeout 60 ./resource-tracker -q -c t30k.toml -- true)
big=$(cpu_of timeout 60 ./resource-tracker -q -c t300k.toml -- touch ran.marker)
check "300 000 unknown tables (resource-tracker): the job ran" "$(ls ran.marker 2>/dev/null)" ran.marker
check_range "300 000 unknown tables: CPU against 30 000 ($big s / $small s)" \
    "$(awk -v a="$big" -v b="$small" 'BEGIN { printf "%.1f", a / (b > 0.01 ? b : 0.01) }')" 0 30
./resource-tracker -q -c t300k.toml -- true 2>v.err
check "300 000 unknown tables: the warning names 20 and counts the rest" \
    "$(grep -c '\[t19\] and 299980 more$' v.err)" 1
rm -f ran.marker
unset TIMEFORMAT

# --- RTRACK_HTTP_TIMEOUT_S: set but invalid is an error where rtrack makes HTTP requests
export RTRACK_KEEPER_URL=http://127.0.0.1:9 SENTINEL_API_URL=http://127.0.0.1:9 RTRACK_UPLOAD_WAIT=1
for v in 0 -1 nan inf abc 0x10 1s 86401; do
    want="invalid value '$v' for RTRACK_HTTP_TIMEOUT_S: expected seconds between 0.001 and 86400"
    refused "upload, RTRACK_HTTP_TIMEOUT_S='$v'" "upload: $want" \
        env RTRACK_HTTP_TIMEOUT_S="$v" SENTINEL_API_TOKEN=tok-validation-42 "$RTRACK" upload --db r.db
    refused "run streaming, RTRACK_HTTP_TIMEOUT_S='$v'" "run: $want" \
        env RTRACK_HTTP_TIMEOUT_S="$v" SENTINEL_API_TOKEN=tok-validation-42 "$RTRACK" run "${RUN[@]}"
done
refused "record streaming, RTRACK_HTTP_TIMEOUT_S=abc" "record: invalid value 'abc' for RTRACK_HTTP_TIMEOUT_S" \
    env RTRACK_HTTP_TIMEOUT_S=abc SENTINEL_API_TOKEN=tok-validation-42 "$RTRACK" record --db bad.db --duration 0.1
refused "run streaming, RTRACK_UPLOAD_WAIT=0x10" "run: invalid value '0x10' for RTRACK_UPLOAD_WAIT" \
    env RTRACK_UPLOAD_WAIT=0x10 SENTINEL_API_TOKEN=tok-validation-42 "$RTRACK" run "${RUN[@]}"
refused "summary --recommend-server, RTRACK_HTTP_TIMEOUT_S=abc" \
    "summary: invalid value 'abc' for RTRACK_HTTP_TIMEOUT_S" \
    env RTRACK_HTTP_TIMEOUT_S=abc "$RTRACK" summary --db r.db --recommend-server
refused "report --recommend-server, RTRACK_HTTP_TIMEOUT_S=abc" \
    "report: invalid value 'abc' for RTRACK_HTTP_TIMEOUT_S" \
    env RTRACK_HTTP_TIMEOUT_S=abc "$RTRACK" report --db r.db --recommend-server -o page.html
check "report --recommend-server, RTRACK_HTTP_TIMEOUT_S=abc: no page written" \
    "$(ls page.html 2>/dev/null | wc -l)" 0
# where no request is made the variable does not matter; a valid value is taken
RTRACK_HTTP_TIMEOUT_S=abc "$RTRACK" summary --db r.db >v.out 2>v.err
check "summary without --recommend-server ignores RTRACK_HTTP_TIMEOUT_S" "$?:$(cat v.err)" "0:"
RTRACK_HTTP_TIMEOUT_S=abc "$RTRACK" run --quiet --db nostream.db -- true 2>v.err
check "run without streaming ignores RTRACK_HTTP_TIMEOUT_S" "$?:$(cat v.err)" "0:"
RTRACK_HTTP_TIMEOUT_S=2.5 SENTINEL_API_TOKEN=tok-validation-42 "$RTRACK" upload --db r.db --dry-run >v.out 2>v.err
check "upload --dry-run with RTRACK_HTTP_TIMEOUT_S=2.5" "$?:$(grep -c HTTP_TIMEOUT v.err)" "0:0"
unset RTRACK_KEEPER_URL SENTINEL_API_URL RTRACK_UPLOAD_WAIT

# --- tags: one rule for --tag, TRACKER_TAGS and [tags]: a key is not empty, holds no '=' and
# no blank at its ends; blanks around the items of TRACKER_TAGS are not part of them
tags() { q "$1" "SELECT group_concat('[' || key || ']=[' || value || ']', ';') FROM (SELECT key, value FROM run_tags WHERE run_id = (SELECT max(id) FROM runs) ORDER BY position)"; }
TRACKER_TAGS='a=1, b=2 ,  c = x' "$RTRACK" run --quiet --db t.db -- true 2>v.err
check "TRACKER_TAGS 'a=1, b=2 , c = x': exit 2 (blank in the key 'c ')" "$?" 2
TRACKER_TAGS='a=1, b=2 ,	c=x y' "$RTRACK" run --quiet --db t.db -- true 2>v.err
check "TRACKER_TAGS 'a=1, b=2 ,<tab>c=x y': items trimmed" "$?:$(tags t.db)" "0:[a]=[1];[b]=[2];[c]=[x y]"
printf '[tags]\n"a=b" = "1"\n' >eqkey.toml
refused "[tags] key 'a=b'" "eqkey.toml:2: invalid tag key 'a=b' in [tags]" \
    "$RTRACK" run --config eqkey.toml "${RUN[@]}"
printf '[tags]\nok = "1"\n"" = "2"\n' >emptykey.toml
refused "[tags] key ''" "emptykey.toml:3: invalid tag key '' in [tags]" \
    "$RTRACK" run --config emptykey.toml "${RUN[@]}"
printf '[tags]\n" b" = "2"\n' >blankkey.toml
refused "[tags] key ' b'" "blankkey.toml:2: invalid tag key ' b' in [tags]" \
    "$RTRACK" run --config blankkey.toml "${RUN[@]}"
refused "--tag ' b=2'" "invalid tag key ' b' in --tag" "$RTRACK" run --tag ' b=2' "${RUN[@]}"
refused "--tag '=2'" "invalid tag key '' in --tag" "$RTRACK" run --tag '=2' "${RUN[@]}"
refused "TRACKER_TAGS 'a=1,,b=2'" "invalid tag '' in TRACKER_TAGS" \
    env TRACKER_TAGS='a=1,,b=2' "$RTRACK" run "${RUN[@]}"

# --- the config file: [sentinel] is read, unknown tables still are not, a BOM is skipped
printf '# streaming\n[sentinel]\nupload_interval_secs = 30\napi_url = "http://127.0.0.1:9"\n' >s.toml
"$RTRACK" run --quiet --db s.db --config s.toml -- touch s.marker 2>v.err
check "[sentinel] table accepted, job run" "$?:$(cat v.err):$(ls s.marker 2>/dev/null)" "0::s.marker"
printf '[sentinel]\nupload_interval_secs = 0.5\n' >s2.toml
refused "[sentinel] upload_interval_secs = 0.5" "s2.toml:2: invalid value '0.5' for upload_interval_secs" \
    "$RTRACK" run --config s2.toml "${RUN[@]}"
printf '[sentinel]\napi_url = "ftp://x"\n' >s3.toml
refused "[sentinel] api_url ftp://" "s3.toml:2: invalid value 'ftp://x' for api_url" \
    "$RTRACK" run --config s3.toml "${RUN[@]}"
printf '[sentinel]\ntoken = "t"\n' >s4.toml
refused "[sentinel] unknown key" "s4.toml:2: unknown key 'token' in [sentinel]" \
    "$RTRACK" run --config s4.toml "${RUN[@]}"
printf '[sentinels]\n' >s5.toml
refused "unknown table [sentinels]" "s5.toml:1: unknown table [sentinels] (rtrack reads [job], [tracker], [sentinel] and [tags])" \
    "$RTRACK" run --config s5.toml "${RUN[@]}"
printf '\xef\xbb\xbf[job]\nname = "bom"\n' >bom.toml
"$RTRACK" run --quiet --db bom.db --config bom.toml -- true 2>v.err
check "a UTF-8 byte order mark at the start is skipped" "$?:$(cat v.err):$(q bom.db 'SELECT job_name FROM runs')" "0::bom"
printf '[job]\n\xef\xbb\xbfname = "bom"\n' >bom2.toml
refused "a byte order mark elsewhere" "bom2.toml:2: a UTF-8 byte order mark" \
    "$RTRACK" run --config bom2.toml "${RUN[@]}"

# --- runs: columns line up by display width (wc -L measures it as a terminal does)
for n in 'plain' '日本語🚀' 'e'$'\xcc\x81''tude' '日本語日本語日本語日本語' 'a日本語日本語日本語' \
    '🚀🚀🚀🚀🚀🚀🚀🚀🚀'; do
    "$RTRACK" run --quiet --db w.db --job-name "$n" -- true
done
"$RTRACK" runs --db w.db >runs.out
# the width of each line up to the 'started' column: id (4), two blanks, the job (16)
widths=$(sed -E 's/ (started|[0-9]{4}-[0-9]{2}-[0-9]{2}T).*//' runs.out |
    while IFS= read -r l; do printf '%s' "$l" | LC_ALL=C.UTF-8 wc -L; done | sort -u | tr '\n' ' ')
check "runs: the job column is 16 columns wide on every line (emoji, CJK, combining)" "$widths" "22 "
check "runs: a wide name is cut at 16 columns" \
    "$(grep -c '  日本語日本語日本 2' runs.out):$(grep -c '日本語日本語日本語日本語' runs.out)" 1:0
check "runs: a wide character that would pass column 16 is left out, the column padded" \
    "$(grep -c '  a日本語日本語日  2' runs.out):$(grep -c '  🚀🚀🚀🚀🚀🚀🚀🚀 2' runs.out)" 1:1
# 'étude' is 5 columns: 11 blanks of padding, one before the next column
grep -q "  e"$'\xcc\x81'"tude$(printf '%12s' '')2" runs.out
check "runs: a combining mark takes no column" "$?" 0

# --- a config file in the working directory that another user put there (issue 31 item 7): as
# root in a 1777 directory, another user's resource-tracker.toml made `resource-tracker -- true`
# truncate a root-owned file (output=), and an rtrack.toml chose root's database (db=). A default
# file not owned by the user or root, or writable by others, is ignored with a warning.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    mkdir -m 1777 shared
    printf 'root only\n' >secret.txt
    chmod 600 secret.txt
    before=$(sha256sum <secret.txt)
    (
        cd shared || exit 1
        printf '[tracker]\noutput = "%s"\n' "$T/secret.txt" >resource-tracker.toml
        printf '[tracker]\ndb = "%s"\n' "$T/secret.txt" >rtrack.toml
        chown nobody resource-tracker.toml rtrack.toml
        ln -s "$RTRACK" resource-tracker
        ./resource-tracker -- true 2>"$T/own1.err" >/dev/null
        echo "$?" >"$T/own1.rc"
        "$RTRACK" run --quiet -- true 2>"$T/own2.err"
        echo "$?" >"$T/own2.rc"
        # root's own file, writable by everyone: the same
        chown root rtrack.toml
        chmod 666 rtrack.toml
        "$RTRACK" run --quiet -- true 2>"$T/own3.err"
        echo "$?" >"$T/own3.rc"
        # a link of another user's to a file of root's
        rm rtrack.toml
        printf '[tracker]\ndb = "%s"\n' "$T/secret.txt" >"$T/root.toml"
        ln -s "$T/root.toml" rtrack.toml
        chown -h nobody rtrack.toml
        "$RTRACK" run --quiet -- true 2>"$T/own4.err"
        echo "$?" >"$T/own4.rc"
    )
    check "another user's resource-tracker.toml: the job runs (exit 0)" "$(cat own1.rc)" 0
    check "another user's resource-tracker.toml: ignored, saying so" \
        "$(grep -c "ignoring config file 'resource-tracker.toml': it belongs to user $(id -u nobody), not to you or root" own1.err)" 1
    check "another user's rtrack.toml: ignored, saying so" \
        "$(cat own2.rc):$(grep -c "ignoring config file 'rtrack.toml': it belongs to user $(id -u nobody)" own2.err)" "0:1"
    check "root's rtrack.toml writable by others: ignored, saying so" \
        "$(cat own3.rc):$(grep -c "ignoring config file 'rtrack.toml': others can write it (mode 0666" own3.err)" "0:1"
    check "another user's link to a file of root's: ignored, saying so" \
        "$(cat own4.rc):$(grep -c "ignoring config file 'rtrack.toml': it is a symbolic link of user" own4.err)" "0:1"
    check "the root-owned file is untouched" "$(sha256sum <secret.txt)" "$before"
    check "the recordings went to the default database" "$(q shared/rtrack.db 'SELECT count(*) FROM runs')" 3
    # named with --config, the file is the user's choice; the user's own default file is read
    printf '[job]\nname = "mine"\n' >shared/own.toml
    chown nobody shared/own.toml
    (cd shared && "$RTRACK" run --quiet --config own.toml --db named.db -- true)
    check "another user's file named with --config: read" "$(q shared/named.db 'SELECT job_name FROM runs')" mine
    mkdir mine && printf '[job]\nname = "default"\n' >mine/rtrack.toml && chmod 644 mine/rtrack.toml
    (cd mine && "$RTRACK" run --quiet -- true)
    check "the user's own rtrack.toml: read" "$(q mine/rtrack.db 'SELECT job_name FROM runs')" default
else
    skip_req root "a config file of another user: needs root and a user nobody"
fi

finish
