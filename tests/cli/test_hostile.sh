#!/usr/bin/env bash
# Hostile input: job metadata and tags of extreme length, with quotes, separators and control
# characters, stored byte for byte and exported as CSV and JSON that Python's csv and json
# modules read back; invalid UTF-8 in metadata and tags refused (exit 2), in a command line or a
# process name stored with U+FFFD so JSON stays valid; NUL bytes and invalid UTF-8 in the config
# file refused with file:line; databases with extra tables accepted and cut-down ones refused
# untouched; --db at a FIFO, a device, a directory, a symlink to a non-database or to nothing
# refused before the job starts, with the target byte-identical; databases created 0600.
. "$(dirname "$0")/lib.sh" "$1"
SPIN=$RT_HELPERS/rt_spin

# parse_all DB : every JSON and CSV output of the latest run parses; prints "ok" or the failure
parse_all() {
    local db=$1
    "$RTRACK" runs --db "$db" --format jsonl >p.runs.jsonl &&
        "$RTRACK" runs --db "$db" --format csv >p.runs.csv &&
        "$RTRACK" export --db "$db" --format jsonl >p.export.jsonl &&
        "$RTRACK" export --db "$db" --format csv >p.export.csv &&
        "$RTRACK" summary --db "$db" --format json >p.summary.json || { echo "an export failed"; return; }
    python3 - <<'EOF'
import csv, json, sys
csv.field_size_limit(sys.maxsize)  # a 1 MiB job name is one field
try:
    for name in ("p.runs.jsonl", "p.export.jsonl"):
        with open(name, "rb") as f:  # bytes: json.loads must do the UTF-8 decoding itself
            for line in f:
                json.loads(line)
    with open("p.summary.json", "rb") as f:
        json.loads(f.read())
    for name in ("p.runs.csv", "p.export.csv"):
        with open(name, newline="", encoding="utf-8", errors="strict") as f:
            rows = list(csv.reader(f))
        if len({len(r) for r in rows}) != 1:
            raise ValueError("%s: rows of different lengths" % name)
    print("ok")
except Exception as e:
    print("%s: %s" % (type(e).__name__, str(e)[:200]))
EOF
}

# meta DB : the latest run's job name, team and tags as they come back from every JSON output,
# each as sha256 of the UTF-8 text, one line per output; the runs CSV's job column too
meta() {
    python3 - "$1" <<'EOF'
import csv, hashlib, json, sys
csv.field_size_limit(sys.maxsize)
h = lambda s: hashlib.sha256(s.encode("utf-8", "surrogatepass")).hexdigest()[:16]
runs = [json.loads(l) for l in open("p.runs.jsonl", "rb")][-1]
rows = list(csv.reader(open("p.runs.csv", newline="", encoding="utf-8")))
exp = [json.loads(l) for l in open("p.export.jsonl", "rb")]
summ = json.loads(open("p.summary.json", "rb").read())
run = summ.get("run", summ)
print("runs.jsonl", h(runs["job_name"]))
print("runs.csv", h(rows[-1][1]))
print("export.jsonl", " ".join(sorted({h(e["job_name"]) for e in exp})))
print("summary.json", h(run["job_name"]), h(run.get("team") or ""),
      " ".join(h(k + "=" + v) for k, v in sorted(run["tags"].items())) if isinstance(run.get("tags"), dict)
      else " ".join(h(t) for t in run.get("tags") or []))
EOF
}
sha() { printf '%s' "$1" | sha256sum | cut -c1-16; }

# --- extreme length: 100 KiB on the command line and in the environment (the kernel allows at
# most 128 KiB per argument or variable), 1 MiB in the config file -------------------------------
long100=$(head -c 76800 /dev/urandom | base64 -w0)  # 102 400 characters
check "long: a 100 KiB value" "${#long100}" 102400
"$RTRACK" run --quiet --db long.db --interval 0.1 -n "J$long100" --team "T$long100" \
    -t "k=V$long100" -- "$SPIN" 0.3 1 >/dev/null 2>long.err
check "long: 100 KiB job name, team and tag on the command line: run exits 0" "$?" 0
check "long: stored byte for byte" \
    "$(q long.db "SELECT length(job_name), length(team), (SELECT length(value) FROM run_tags) FROM runs")" \
    "102401|102401|102401"
check "long: stored exactly" \
    "$(q long.db "SELECT job_name FROM runs" | sha256sum):$(q long.db "SELECT team FROM runs" | sha256sum)" \
    "$(printf '%s\n' "J$long100" | sha256sum):$(printf '%s\n' "T$long100" | sha256sum)"
check "long: every export parses" "$(parse_all long.db)" ok
meta long.db >long.meta
check "long: runs jsonl gives the name back" "$(grep -c "runs.jsonl $(sha "J$long100")" long.meta)" 1
check "long: runs csv gives the name back" "$(grep -c "runs.csv $(sha "J$long100")" long.meta)" 1
check "long: export jsonl gives the name back in every line" "$(grep -c "^export.jsonl $(sha "J$long100")\$" long.meta)" 1
check "long: summary json gives name, team and tag back" \
    "$(grep -c "^summary.json $(sha "J$long100") $(sha "T$long100") $(sha "k=V$long100")\$" long.meta)" 1
TRACKER_JOB_NAME="E$long100" TRACKER_TAGS="k=W$long100" "$RTRACK" run --quiet --db long.db -- true 2>long.err
check "long: 100 KiB job name and tag in the environment: exit 0" "$?" 0
check "long: from the environment, stored exactly" \
    "$(q long.db "SELECT job_name FROM runs WHERE id = 2" | sha256sum):$(q long.db "SELECT value FROM run_tags WHERE run_id = 2" | sha256sum)" \
    "$(printf '%s\n' "E$long100" | sha256sum):$(printf '%s\n' "W$long100" | sha256sum)"
long1m=$(head -c 786432 /dev/urandom | base64 -w0)  # 1 MiB
{ printf '[job]\nname = "%s"\n[tags]\nbig = "%s"\n' "M$long1m" "B$long1m"; } >long.toml
"$RTRACK" run --quiet --config long.toml --db long1m.db --interval 0.1 -- "$SPIN" 0.3 1 >/dev/null 2>long.err
check "long: 1 MiB job name and tag in the config file: exit 0" "$?" 0
check "long: 1 MiB values stored exactly" \
    "$(q long1m.db "SELECT length(job_name), (SELECT length(value) FROM run_tags) FROM runs"):$(q long1m.db "SELECT job_name FROM runs" | sha256sum):$(q long1m.db "SELECT value FROM run_tags" | sha256sum)" \
    "1048577|1048577:$(printf '%s\n' "M$long1m" | sha256sum):$(printf '%s\n' "B$long1m" | sha256sum)"
check "long: 1 MiB: every export parses" "$(parse_all long1m.db)" ok
meta long1m.db >long.meta
check "long: 1 MiB: summary json gives name and tag back" \
    "$(grep -c "^summary.json $(sha "M$long1m") $(sha "") $(sha "big=B$long1m")\$" long.meta)" 1

# --- quotes, separators, control characters, non-ASCII: stored as given, escaped on the way out
nasty=$'he said "hi", \\o/ \'quoted\'\ttab\r\nnew line\x01\x1b[31mred\x7f; ünï 日本 🚀 \u2028'
"$RTRACK" run --quiet --db nasty.db --interval 0.1 -n "$nasty" --team "a,b" -t "k=$nasty" \
    -t "q\"=x=y" -- "$SPIN" 0.3 1 >/dev/null 2>nasty.err
check "nasty: run exits 0" "$?" 0
check "nasty: stored byte for byte" "$(q nasty.db "SELECT hex(job_name) FROM runs")" \
    "$(printf '%s' "$nasty" | od -An -tx1 | tr -d ' \n' | tr a-f A-F)"
check "nasty: every export parses" "$(parse_all nasty.db)" ok
meta nasty.db >nasty.meta
check "nasty: runs jsonl gives the name back" "$(grep -c "runs.jsonl $(sha "$nasty")" nasty.meta)" 1
check "nasty: runs csv gives the name back (quotes, CR and LF inside a quoted field)" \
    "$(grep -c "runs.csv $(sha "$nasty")" nasty.meta)" 1
check "nasty: export jsonl gives the name back" "$(grep -c "^export.jsonl $(sha "$nasty")\$" nasty.meta)" 1
check "nasty: summary json gives name, team and tags back" \
    "$(grep -c "^summary.json $(sha "$nasty") $(sha "a,b") $(sha "k=$nasty") $(sha "q\"=x=y")\$" nasty.meta)" 1
# the text outputs are for a terminal: the name's controls (ESC, CR, LF, TAB, DEL, U+0001)
# come out as '?', nothing else of it changes, and the runs table keeps its columns
"$RTRACK" runs --db nasty.db >nasty.runs.txt
"$RTRACK" summary --db nasty.db >nasty.summary.txt
"$RTRACK" summary --db nasty.db --format md >nasty.summary.md
check "nasty: text outputs hold no control character but newlines" \
    "$(cat nasty.runs.txt nasty.summary.txt nasty.summary.md | tr -d '\n' | LC_ALL=C grep -c '[[:cntrl:]]')" 0
check "nasty: runs table: header and one line" "$(wc -l <nasty.runs.txt)" 2
check "nasty: runs table: the name's first 16 characters, controls as '?'" \
    "$(sed -n 2p nasty.runs.txt | cut -c7-23)" 'he said "hi", \o '
check "nasty: summary names the job, controls as '?'" \
    "$(grep -c -F $'he said "hi", \\o/ \'quoted\'?tab??new line??[31mred?; ünï 日本 🚀 \u2028' nasty.summary.txt)" 1

# --- invalid UTF-8 in metadata and tags: refused (exit 2), nothing created, job not run ----------
# refused_utf8 NAME WANT-IN-MESSAGE ARGS...
refused_utf8() {
    local name=$1 want=$2; shift 2
    rm -f bad.db ran.marker
    "$@" >ru.out 2>ru.err
    check "utf8: $name: exit 2" "$?" 2
    check "utf8: $name: one lowercase message naming the option" \
        "$(grep -c "^rtrack: .*$want.*not valid UTF-8" ru.err):$(wc -l <ru.err)" "1:1"
    check "utf8: $name: no database, job not run" "$(ls bad.db ran.marker 2>/dev/null | wc -l)" 0
}
refused_utf8 "--job-name" "--job-name" "$RTRACK" run --db bad.db -n $'bad\xffname' -- touch ran.marker
refused_utf8 "--team (truncated sequence)" "--team" "$RTRACK" run --db bad.db --team $'x\xc3' -- touch ran.marker
refused_utf8 "--tag value (encoded surrogate)" "--tag" "$RTRACK" run --db bad.db -t $'k=\xed\xa0\x80' -- touch ran.marker
refused_utf8 "--tag key (overlong)" "--tag" "$RTRACK" run --db bad.db -t $'\xc0\xafk=v' -- touch ran.marker
refused_utf8 "TRACKER_JOB_NAME" "TRACKER_JOB_NAME" env TRACKER_JOB_NAME=$'\xfe' "$RTRACK" run --db bad.db -- touch ran.marker
refused_utf8 "TRACKER_TAGS" "TRACKER_TAGS" env TRACKER_TAGS=$'a=b,c=\xf5\x80\x80\x80' "$RTRACK" record --db bad.db --duration 0.1
printf '[job]\nname = "ok"\n\n[tags]\nk = "a\xffb"\n' >bad.toml
"$RTRACK" run --db bad.db --config bad.toml -- touch ran.marker >/dev/null 2>ru.err
check "utf8: config file: exit 2 with file:line" "$?:$(cat ru.err)" \
    "2:rtrack: bad.toml:5: invalid UTF-8 (a TOML file is UTF-8 text)"
check "utf8: config file: no database, job not run" "$(ls bad.db ran.marker 2>/dev/null | wc -l)" 0

# --- NUL bytes in the config file: refused with the line (the parser reads C strings: the rest
# of the file would otherwise be silently dropped) --------------------------------------------------
printf '[job]\nname = "ok"\n[tracker]\ninterval_secs = 0.5\x00\ndb = "elsewhere.db"\n' >nul.toml
"$RTRACK" run --db bad.db --config nul.toml -- touch ran.marker >/dev/null 2>ru.err
check "nul: config file with a NUL byte: exit 2 with file:line" "$?:$(cat ru.err)" \
    "2:rtrack: nul.toml:4: NUL byte (a TOML file is text)"
printf '[job]\nname = "a\x00b"\n' >nul2.toml
"$RTRACK" run --db bad.db --config nul2.toml -- touch ran.marker >/dev/null 2>ru.err
check "nul: a NUL byte inside a string: exit 2 with file:line" "$?:$(cat ru.err)" \
    "2:rtrack: nul2.toml:2: NUL byte (a TOML file is text)"
check "nul: no database, job not run" "$(ls bad.db elsewhere.db ran.marker 2>/dev/null | wc -l)" 0

# --- invalid UTF-8 rtrack cannot refuse (a command line, a process name): stored with U+FFFD ------
mkdir bin && ln -s "$SPIN" "bin/$(printf 'spin\xff\xfe')"
"$RTRACK" run --quiet --db argv.db --interval 0.1 -- "bin/$(printf 'spin\xff\xfe')" 0.4 1 \
    "$(printf 'arg\xc3(')" >/dev/null 2>argv.err
check "argv: a command and a process name with invalid UTF-8: run exits 0" "$?" 0
check "argv: every export parses" "$(parse_all argv.db)" ok
check "argv: the command line with U+FFFD" "$(python3 -c '
import json; print(ascii(json.loads(open("p.runs.jsonl", "rb").readline())["command"]))')" \
    "['bin/spin\\ufffd\\ufffd', '0.4', '1', 'arg\\ufffd(']"
check "argv: the process name with U+FFFD" \
    "$(q argv.db "SELECT count(*) > 0 FROM processes WHERE name = 'spin' || char(65533, 65533)")" 1
check "argv: nothing but valid UTF-8 in the database's text" \
    "$(q argv.db "SELECT count(*) FROM processes WHERE CAST(CAST(name AS BLOB) AS TEXT) <> name")" 0

# --- databases: extra tables and columns work; cut-down ones are refused untouched ----------------
"$RTRACK" run --quiet --db base.db --interval 0.1 -- "$SPIN" 0.3 1 >/dev/null
cp base.db extra.db
sqlite3 extra.db "CREATE TABLE my_notes (run_id INTEGER, note TEXT); INSERT INTO my_notes VALUES (1, 'x');
  ALTER TABLE runs ADD COLUMN my_label TEXT DEFAULT 'mine'; ALTER TABLE samples ADD COLUMN my_flag INTEGER;
  CREATE INDEX my_ts ON samples (ts); CREATE VIEW my_view AS SELECT id FROM runs;"
"$RTRACK" run --quiet --db extra.db --interval 0.1 -- "$SPIN" 0.3 1 >/dev/null 2>extra.err
check "extra tables/columns: run exits 0, no message" "$?:$(wc -c <extra.err)" "0:0"
check "extra tables/columns: the new run is there, the extra data kept" \
    "$(q extra.db "SELECT count(*), (SELECT note FROM my_notes), max(my_label) FROM runs")" "2|x|mine"
check "extra tables/columns: every export parses" "$(parse_all extra.db)" ok
"$RTRACK" report --db extra.db -o extra.html 2>/dev/null
check "extra tables/columns: report exits 0" "$?" 0

# cut NAME SQL WANT : the cut-down copy of base.db is refused by every command, untouched
cut() {
    local name=$1 sql=$2 want=$3 before c rc
    cp base.db cut.db
    sqlite3 cut.db "$sql" || { fail "cut $name: sqlite3 failed"; return; }
    before=$(sha256sum <cut.db)
    rm -f ran.marker
    "$RTRACK" run --db cut.db -- touch ran.marker >/dev/null 2>cut.err
    check "cut $name: run exits 125, job not started" "$?:$(ls ran.marker 2>/dev/null | wc -l)" "125:0"
    check "cut $name: one message saying what is missing" \
        "$(grep -c "^rtrack: 'cut.db' is not a complete rtrack database: $want; refusing to touch it\$" cut.err):$(wc -l <cut.err)" "1:1"
    "$RTRACK" record --db cut.db --duration 0.1 >/dev/null 2>cut.err
    check "cut $name: record exits 1" "$?:$(grep -c "$want" cut.err)" "1:1"
    for c in "export" "export --format jsonl" "runs --format jsonl" "summary --format json" \
        "report -o cut.html" "upload --dry-run"; do
        # shellcheck disable=SC2086 # c holds the subcommand and its options
        SENTINEL_API_TOKEN=t SENTINEL_API_URL=http://127.0.0.1:1 "$RTRACK" $c --db cut.db >cut.out 2>cut.err
        rc=$?
        check "cut $name: $c exits 2 with the message, nothing on stdout" \
            "$rc:$(grep -c "$want" cut.err):$(wc -c <cut.out)" "2:1:0"
    done
    check "cut $name: file byte-identical, no -wal/-shm/-journal left" \
        "$(sha256sum <cut.db):$(ls cut.db-* 2>/dev/null | wc -l)" "$before:0"
}
cut "a missing table" "DROP TABLE process_samples" "table 'process_samples' is missing"
cut "a missing column" "ALTER TABLE runs DROP COLUMN team" "column 'team' of table 'runs' is missing"
cut "a missing view" "DROP VIEW python_combined" "view 'python_combined' is missing"
cut "a view replaced" "DROP VIEW python_system; CREATE VIEW python_system AS SELECT 1 AS x" \
    "column 'run_id' of view 'python_system' is missing"

# --- --db at things that are not databases: refused before the job starts, target untouched ------
# refuse_db NAME PATH WANT : run (125) and record (1) and export (2) refuse PATH, naming it
refuse_db() {
    local name=$1 db=$2 want=$3
    rm -f ran.marker
    timeout 20 "$RTRACK" run --db "$db" -- touch ran.marker >/dev/null 2>rd.err
    check "--db $name: run exits 125, job not started" "$?:$(ls ran.marker 2>/dev/null | wc -l)" "125:0"
    check "--db $name: one message naming the path and why" \
        "$(grep -cF "rtrack: cannot open database '$db': $want" rd.err):$(wc -l <rd.err)" "1:1"
    timeout 20 "$RTRACK" record --db "$db" --duration 0.1 >/dev/null 2>rd.err
    check "--db $name: record exits 1" "$?:$(grep -cF "'$db'" rd.err)" "1:1"
    timeout 20 "$RTRACK" export --db "$db" >/dev/null 2>rd.err
    check "--db $name: export exits 2" "$?:$(grep -cF "'$db'" rd.err)" "2:1"
}
mkfifo fifo.db
refuse_db "a FIFO" fifo.db "not a regular file (a named pipe)"
check "--db a FIFO: still a FIFO, nothing beside it" "$([ -p fifo.db ] && echo fifo):$(ls fifo.db-* 2>/dev/null | wc -l)" "fifo:0"
# (rtrack before this check left a /dev/null-journal behind)
devnull_before=$(stat -c '%F %a %t:%T' /dev/null):$(ls /dev/null-* 2>/dev/null | wc -l)
refuse_db "/dev/null" /dev/null "not a regular file (a character device)"
check "--db /dev/null: still the same device, no /dev/null-wal or -journal made" \
    "$(stat -c '%F %a %t:%T' /dev/null):$(ls /dev/null-* 2>/dev/null | wc -l)" "$devnull_before"
mkdir dir.db
refuse_db "a directory" dir.db "is a directory"
check "--db a directory: still empty" "$(ls -A dir.db | wc -l)" 0
# never the real /etc/passwd: a copy, and the real one is checked as well
passwd_before=$(sha256sum </etc/passwd)
cp /etc/passwd passwd.copy
copy_before=$(sha256sum <passwd.copy)
ln -s "$T/passwd.copy" link.db
rm -f ran.marker
"$RTRACK" run --db link.db -- touch ran.marker >/dev/null 2>rd.err
check "--db a symlink to a copy of /etc/passwd: run exits 125, job not started" "$?:$(ls ran.marker 2>/dev/null | wc -l)" "125:0"
check "--db a symlink to a copy of /etc/passwd: the message names the path" \
    "$(grep -c "^rtrack: 'link.db' is not an rtrack database (not a SQLite file)\$" rd.err)" 1
"$RTRACK" record --db link.db --duration 0.1 >/dev/null 2>rd.err
check "--db a symlink to a copy of /etc/passwd: record exits 1" "$?" 1
check "--db a symlink to a copy of /etc/passwd: copy byte-identical, still linked, nothing beside" \
    "$(sha256sum <passwd.copy):$([ -L link.db ] && echo link):$(ls link.db-* passwd.copy-* 2>/dev/null | wc -l)" "$copy_before:link:0"
check "--db a symlink to a copy of /etc/passwd: the real /etc/passwd untouched" "$(sha256sum </etc/passwd)" "$passwd_before"
ln -s "$T/nothing-here.db" dangling.db
"$RTRACK" run --db dangling.db -- touch ran.marker >/dev/null 2>rd.err
check "--db a dangling symlink: run exits 125, job not started" "$?:$(ls ran.marker 2>/dev/null | wc -l)" "125:0"
check "--db a dangling symlink: says so" \
    "$(grep -c "^rtrack: cannot create database 'dangling.db': it is a symbolic link to a file that does not exist\$" rd.err)" 1
check "--db a dangling symlink: its target not created" "$(ls nothing-here.db* 2>/dev/null | wc -l)" 0
# a symlink to an rtrack database is the database (documented): the run goes into the target
cp base.db target.db
ln -s target.db good-link.db
"$RTRACK" run --quiet --db good-link.db -- true 2>rd.err
check "--db a symlink to an rtrack database: accepted, the run is in the target" \
    "$?:$(q target.db "SELECT count(*) FROM runs"):$([ -L good-link.db ] && echo link)" "0:2:link"
check "--db a symlink to an rtrack database: -wal/-shm beside the target, not the link" \
    "$(ls good-link.db-* 2>/dev/null | wc -l)" 0

# --- permissions: new databases and their -wal/-shm are 0600 whatever the umask ------------------
(umask 022 && "$RTRACK" run --quiet --db perm.db -- sh -c 'stat -c %a perm.db perm.db-wal perm.db-shm | tr "\n" " " >modes')
check "mode: a new database, its -wal and -shm are 0600 (umask 022)" "$(cat modes)" "600 600 600 "
check "mode: still 0600 after the run" "$(stat -c %a perm.db)" 600
(umask 077 && "$RTRACK" run --quiet --db perm2.db -- true)
check "mode: 0600 with umask 077 too" "$(stat -c %a perm2.db)" 600
: >given.db && chmod 640 given.db
"$RTRACK" run --quiet --db given.db -- true
check "mode: an existing file keeps the mode its owner gave it" "$(stat -c %a given.db)" 640

# --- HTML and terminal escapes through the summary's markdown and --slurm-job's text (issue 31
# item 18): the markdown passed raw HTML from a job name, a command and node or step values (a
# page that renders it runs it), and `summary --slurm-job` printed node names raw (an escape
# sequence reached the terminal)
html='<img src=x onerror=alert(1)>'
env SLURM_JOB_ID=99 SLURMD_NODENAME=$'\e[31mnode<b>|x' SLURM_STEP_ID='<i>0</i>' \
    "$RTRACK" run --quiet --db html.db --interval 0.1 --job-name "$html *bold* [l](http://x)" \
    -- sh -c 'sleep 0.3' "$html" 2>/dev/null
"$RTRACK" summary --db html.db --format markdown >html.md
# (a code span shows its text as it is: the process table's commands are in one)
check "markdown: no HTML tag of the job's outside a code span" \
    "$(sed 's/`[^`]*`//g' html.md | grep -ciE '<(img|b|i)[ >]')" 0
check "markdown: the job name shown escaped" \
    "$(grep -c -F '&lt;img src=x onerror=alert(1)&gt; \*bold\* \[l\](http://x)' html.md)" 1
check "markdown: the command shown escaped" "$(grep -c -F -- "- **command**: sh -c 'sleep 0.3' '&lt;img" html.md)" 1
"$RTRACK" summary --db html.db --slurm-job 99 >html.txt
check "summary --slurm-job: no escape sequence of the node's reaches the terminal" \
    "$(tr -d '\n' <html.txt | LC_ALL=C grep -c '[[:cntrl:]]')" 0
# named in the table, the 'figures from' lines and its peaks' line: each time with its '?'
check "summary --slurm-job: the node named, controls as '?'" "$(grep -c -F '?[31mnode<b>|x' html.txt)" \
    "$(grep -c -F 'node<b>|x' html.txt)"
check "summary --slurm-job: the node named in its table row" "$(grep -c -E '^  \?\[31mnode<b>\|x ' html.txt)" 1
"$RTRACK" summary --db html.db --slurm-job 99 --format markdown >html-job.md
check "summary --slurm-job markdown: no HTML tag of the node's or step's" "$(grep -ciE '<(b|i)>' html-job.md)" 0
check "summary --slurm-job markdown: the node's row has its 10 cells (its | escaped)" \
    "$(grep -F 'node&lt;b&gt;' html-job.md | sed 's/\\|//g' | tr -cd '|' | wc -c)" 11
check "summary --slurm-job markdown: no escape sequence" "$(tr -d '\n' <html-job.md | LC_ALL=C grep -c '[[:cntrl:]]')" 0

# --- another user's database is not written (issue 31 item 9, the store's part): a database
# planted where a recorder goes (/tmp/rtrack-%u made first by another user, a 0666 database at
# the next job id) collected the job's command lines for its owner to read
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    "$RTRACK" run --quiet --db planted.db -- true
    chown nobody planted.db
    chmod 666 planted.db
    before=$(sha256sum <planted.db)
    "$RTRACK" run --quiet --db planted.db -- echo secret-command-line 2>planted.err >/dev/null
    check "another user's 0666 database: run refused (125), the file untouched" \
        "$?:$(sha256sum <planted.db)" "125:$before"
    check "another user's database: says whose it is" \
        "$(grep -c "cannot write database 'planted.db': it belongs to user $(id -u nobody), not to you" planted.err)" 1
    "$RTRACK" record --quiet --db planted.db --duration 0.2 2>/dev/null
    check "another user's database: record refused (1)" "$?" 1
    "$RTRACK" merge planted.db a-run.db 2>/dev/null
    check "another user's database: merge into it refused (2)" "$?" 2
    "$RTRACK" runs --db planted.db >/dev/null
    check "another user's database: still read" "$?" 0
else
    skip_req root "another user's database: needs root and a user nobody"
fi

finish
