#!/usr/bin/env bash
# rtrack in CI (docs/usage.md, "In CI and scripts"): which run did a step just record, without
# reading stderr? --run-id-file (written 0600 before the job starts, there even when the job is
# killed, refused where it would overwrite the database, an error before the job when it cannot
# be written), RTRACK_RUN_ID and RTRACK_RUN_DB in the job's environment (the id `rtrack runs`
# shows, the database's absolute path; resource-tracker's private database gives neither),
# run --summary-format json (summary --format json's object, after the job's own output), and
# the readers' --external-run-id (summary, export, report, upload; runs as a filter), with an
# error naming the runs when none or several match.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
export RTRACK_CLOUD_DISCOVERY=0

# --- --run-id-file --------------------------------------------------------------------------
# the job reads the file while it runs: it is written before the job starts
umask 022
"$RTRACK" run --quiet --db ci.db --run-id-file run.id -- sh -c 'cat run.id >seen.id'
check "run-id-file: the job's exit code" "$?" 0
check "run-id-file: the id, as runs shows it" "$(cat run.id)" "$("$RTRACK" runs --db ci.db --format csv | awk -F, 'NR == 2 { print $1 }')"
check "run-id-file: one line" "$(wc -l <run.id)" 1
check "run-id-file: mode 0600 whatever the umask" "$(stat -c %a run.id)" 600
check "run-id-file: already there while the job ran" "$(cat seen.id 2>/dev/null)" "$(cat run.id)"
# a job killed by a signal (a CI timeout): the file holds its run
"$RTRACK" run --quiet --db ci.db --run-id-file killed.id -- sh -c 'kill -KILL $$'
check "killed job: rtrack dies of the job's signal" "$?" 137
check "killed job: the id file names the run" "$(cat killed.id)" "$(q ci.db 'SELECT max(id) FROM runs')"
check "killed job: and that run was killed" "$(q ci.db "SELECT exit_signal FROM runs WHERE id = $(cat killed.id)")" 9
# a file the user named again is replaced (asked for), keeping its mode
chmod 640 run.id
"$RTRACK" run --quiet --db ci.db --run-id-file run.id -- true
check "run-id-file again: the new run's id" "$(cat run.id)" "$(q ci.db 'SELECT max(id) FROM runs')"
check "run-id-file again: the replaced file's mode kept" "$(stat -c %a run.id)" 640
# record writes it too
"$RTRACK" record --quiet --db ci.db --duration 0.2 --interval 0.1 --run-id-file rec.id
check "record: the id file names its run" "$(cat rec.id)" "$(q ci.db "SELECT max(id) FROM runs WHERE mode = 'record'")"
# the environment and the config file name it as the option does
RTRACK_RUN_ID_FILE=env.id "$RTRACK" run --quiet --db ci.db -- true
check "RTRACK_RUN_ID_FILE" "$(cat env.id)" "$(q ci.db 'SELECT max(id) FROM runs')"
# the database is never overwritten
before=$(md5sum <ci.db)
"$RTRACK" run --db ci.db --run-id-file ci.db -- touch ran.marker 2>db.err
check "run-id-file = the database: exit 2" "$?" 2
check "run-id-file = the database: says so" "$(cat db.err)" \
    "rtrack: run: the output 'ci.db' is the database 'ci.db'; refusing to write over it"
check "run-id-file = the database: the job did not start" "$([ -e ran.marker ] && echo ran || echo no)" no
check "run-id-file = the database: left as it was" "$(md5sum <ci.db)" "$before"
"$RTRACK" run --db ci.db --run-id-file ci.db-wal -- touch ran.marker 2>/dev/null
check "run-id-file = the database's -wal: exit 2" "$?" 2
# a file that cannot be written: an error before the job starts (exit 125), no run recorded
runs=$(q ci.db 'SELECT count(*) FROM runs')
"$RTRACK" run --db ci.db --run-id-file no/such/dir/run.id -- touch ran.marker 2>nodir.err
check "run-id-file in a missing directory: exit 125" "$?" 125
check "run-id-file in a missing directory: says which" "$(grep -c "no/such/dir/run.id" nodir.err)" 1
check "run-id-file in a missing directory: the job did not start" "$([ -e ran.marker ] && echo ran || echo no)" no
check "run-id-file in a missing directory: no run recorded" "$(q ci.db 'SELECT count(*) FROM runs')" "$runs"
"$RTRACK" run --db new.db --run-id-file no/such/dir/run.id -- true 2>/dev/null
check "run-id-file in a missing directory: no database made" "$([ -e new.db ] && echo made || echo no)" no
"$RTRACK" run --db ci.db --run-id-file '' -- true 2>empty.err
check "run-id-file '': exit 2" "$?" 2

# --- RTRACK_RUN_ID and RTRACK_RUN_DB in the job's environment --------------------------------
mkdir sub
(cd sub && "$RTRACK" run --quiet --db ../ci.db -- sh -c 'printf "%s\n%s\n" "$RTRACK_RUN_ID" "$RTRACK_RUN_DB" >job.vars')
check "RTRACK_RUN_ID: the id runs shows for the job's run" "$(sed -n 1p sub/job.vars)" \
    "$("$RTRACK" runs --db ci.db --format csv | awk -F, 'END { print $1 }')"
check "RTRACK_RUN_DB: the database's absolute path" "$(sed -n 2p sub/job.vars)" "$T/ci.db"
# a nested run names its own run; values inherited from elsewhere are replaced
RTRACK_RUN_ID=424242 RTRACK_RUN_DB=/elsewhere.db "$RTRACK" run --quiet --db ci.db -- \
    sh -c 'env | grep -c "^RTRACK_RUN_ID=" >n.ids; printf "%s %s\n" "$RTRACK_RUN_ID" "$RTRACK_RUN_DB" >job.vars'
check "inherited RTRACK_RUN_ID, RTRACK_RUN_DB: replaced by this run's" "$(cat job.vars)" \
    "$(q ci.db 'SELECT max(id) FROM runs') $T/ci.db"
check "inherited RTRACK_RUN_ID: one left" "$(cat n.ids)" 1
# resource-tracker: with a database of yours, as run; with its private one, neither
ln -s "$RTRACK" resource-tracker
./resource-tracker --quiet --db dropin.db -- sh -c 'printf "%s %s\n" "$RTRACK_RUN_ID" "$RTRACK_RUN_DB" >dropin.vars'
check "resource-tracker --db: RTRACK_RUN_ID and RTRACK_RUN_DB" "$(cat dropin.vars)" \
    "$(q dropin.db 'SELECT max(id) FROM runs') $T/dropin.db"
RTRACK_RUN_ID=7 RTRACK_RUN_DB=/x.db ./resource-tracker --quiet -- sh -c 'env | grep -c "^RTRACK_RUN_" >private.n'
check "resource-tracker's private database: the job gets neither" "$(cat private.n)" 0

# --- run --summary-format json --------------------------------------------------------------
"$RTRACK" run --quiet --db ci.db --external-run-id ci-json --summary-format json -- sh -c 'echo job-output; exit 3' >sum.out
check "summary json: the job's exit code" "$?" 3
check "summary json: the job's output first" "$(head -1 sum.out)" job-output
check "summary json: then one line" "$(wc -l <sum.out)" 2
id=$(q ci.db 'SELECT max(id) FROM runs')
check "summary json: the run, its status, exit code and external id" \
    "$(tail -1 sum.out | python3 -c 'import json, sys; r = json.load(sys.stdin)["run"]; print(r["id"], r["status"], r["exit_code"], r["external_run_id"])')" \
    "$id failed 3 ci-json"
check "summary json: the object summary --format json prints" \
    "$(tail -1 sum.out | python3 -c 'import json, sys; d = json.load(sys.stdin); print(sorted(d))')" \
    "$("$RTRACK" summary --db ci.db --run "$id" --format json | python3 -c 'import json, sys; d = json.load(sys.stdin); print(sorted(d))')"
check "summary json: the same recommendation as summary's" \
    "$(tail -1 sum.out | python3 -c 'import json, sys; print(json.load(sys.stdin)["recommendation"]["text"])')" \
    "$("$RTRACK" summary --db ci.db --run "$id" --format json | python3 -c 'import json, sys; print(json.load(sys.stdin)["recommendation"]["text"])')"
"$RTRACK" run --quiet --db ci.db --summary-format markdown -- true >sum.md
check "summary markdown: a markdown table" "$(grep -c '^|' sum.md | awk '{ print ($1 > 0) }')" 1
RTRACK_SUMMARY_FORMAT=json "$RTRACK" run --quiet --db ci.db -- true >sum.env
check "RTRACK_SUMMARY_FORMAT=json: JSON" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["status"])' sum.env)" finished
"$RTRACK" run --db ci.db --summary-format yaml -- touch ran.marker 2>fmt.err
check "summary-format yaml: exit 2" "$?" 2
check "summary-format yaml: says the formats" "$(cat fmt.err)" \
    "rtrack: invalid value 'yaml' for --summary-format: expected text, json or markdown"
check "summary-format yaml: the job did not start" "$([ -e ran.marker ] && echo ran || echo no)" no

# --- the readers' --external-run-id ---------------------------------------------------------
"$RTRACK" run --quiet --db ext.db --external-run-id build-1 -- true
"$RTRACK" run --quiet --db ext.db --external-run-id build-2 -- sh -c 'exit 4'
"$RTRACK" run --quiet --db ext.db --external-run-id build-2 -- true
"$RTRACK" run --quiet --db ext.db -- true
check "summary --external-run-id: that run" \
    "$("$RTRACK" summary --db ext.db --external-run-id build-1 --format json | python3 -c 'import json, sys; r = json.load(sys.stdin)["run"]; print(r["id"], r["external_run_id"])')" \
    "1 build-1"
check "export --external-run-id: that run's samples" \
    "$("$RTRACK" export --db ext.db --external-run-id build-1 --format jsonl | md5sum)" \
    "$("$RTRACK" export --db ext.db --run 1 --format jsonl | md5sum)"
"$RTRACK" report --db ext.db --external-run-id build-1 -o r.html
check "report --external-run-id: exit 0" "$?" 0
check "report --external-run-id: that run's page" "$(grep -c 'build-1' r.html | awk '{ print ($1 > 0) }')" 1
check "upload --external-run-id --dry-run: that run" \
    "$("$RTRACK" upload --db ext.db --external-run-id build-1 --dry-run)" "run 1: 1 sample to upload"
check "runs --external-run-id: the runs recorded with it" \
    "$("$RTRACK" runs --db ext.db --external-run-id build-2 --format csv | cut -d, -f1 | tr '\n' ' ')" "id 2 3 "
check "runs --format jsonl: each run's external_run_id" \
    "$("$RTRACK" runs --db ext.db --format jsonl | python3 -c 'import json, sys; print([json.loads(l)["external_run_id"] for l in sys.stdin])')" \
    "['build-1', 'build-2', 'build-2', None]"
# none, several: an error naming them, exit 2, nothing on stdout
"$RTRACK" summary --db ext.db --external-run-id nope >none.out 2>none.err
check "no such external run id: exit 2, nothing on stdout" "$?:$(wc -c <none.out)" "2:0"
check "no such external run id: says so" "$(cat none.err)" \
    "rtrack: no run with external run id 'nope' in 'ext.db' (run and record store it with --external-run-id; 'rtrack runs --format jsonl' shows each run's)"
"$RTRACK" export --db ext.db --external-run-id build-2 >two.out 2>two.err
check "two runs with that id: exit 2, nothing on stdout" "$?:$(wc -c <two.out)" "2:0"
check "two runs with that id: names them" "$(cat two.err)" \
    "rtrack: 2 runs in 'ext.db' have external run id 'build-2' (runs 2, 3): choose one with --run ID"
"$RTRACK" summary --db ext.db --run 1 --external-run-id build-1 2>both.err
check "--run with --external-run-id: exit 2" "$?" 2
check "--run with --external-run-id: says so" "$(cat both.err)" \
    "rtrack: summary: --run and --external-run-id cannot be used together"
"$RTRACK" summary --db ext.db --external-run-id build-1 --job x 2>job.err
check "--external-run-id with --job: says so" "$?:$(cat job.err)" \
    "2:rtrack: summary: --external-run-id and --job cannot be used together"
"$RTRACK" upload --db ext.db --external-run-id build-1 --all --dry-run 2>all.err
check "--external-run-id with --all: says so" "$?:$(cat all.err)" \
    "2:rtrack: upload: --external-run-id and --all cannot be used together"
finish
