#!/usr/bin/env bash
# rtrack as `resource-tracker` when things go wrong (issue 31): its private database (a directory
# of its own under $TMPDIR) is kept, and said where, when anything was not sent to Sentinel, and
# removed on every other end, signals included (a SIGTERM in its first ~100 ms, USR1, ALRM, ... left
# it behind); a TMPDIR it cannot use is "could not record", 125, not the job's 1; SIGALRM and the
# other signals that end a process by default are forwarded to the job or end a system recording.
# Sentinel is the mock API of tests/helpers/.
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"
unset TRACKER_INTERVAL TRACKER_OUTPUT TRACKER_DB RTRACK_DB

ln -s "$RTRACK" resource-tracker
RT=$PWD/resource-tracker
mkdir tmp
export TMPDIR=$T/tmp
left() { ls -A "$TMPDIR" | tr '\n' ' '; }
# "${DFL[@]}" CMD: every signal at its default (a background job of a script starts with SIGINT
# and SIGQUIT ignored)
DFL=(env --default-signal)

TOKEN=tok-$RANDOM-dropin-faults
: >"$T/api.log"
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
mock=$!
trap 'kill $mock 2>/dev/null; rt_exit' EXIT
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
API=http://127.0.0.1:$(head -n 1 mock.port)
export RTRACK_CLOUD_DISCOVERY=0
posts() { grep -c '"path": "/runs"' "$T/api.log"; }

# --- 1. a TMPDIR it cannot use (item 17): "could not record", 125 as for `rtrack run` ---------
: >not-a-dir
for d in "$T/no-such-dir" "$T/not-a-dir"; do
    TMPDIR=$d "$RT" -q -- touch ran.marker 2>t.err
    check "TMPDIR=${d#"$T"/}: exit 125, not the job's" "$?:$(ls ran.marker 2>/dev/null)" "125:"
    check "TMPDIR=${d#"$T"/}: says why" "$(grep -c "cannot create a temporary database in '$d'" t.err)" 1
done
"$RT" -q -- sh -c 'exit 1'
check "the job's own exit 1 stays 1 (the control)" "$?" 1
check "nothing left" "$(left)" ""

# --- 2. streaming that did not finish (item 3): the private database is kept, and said where ----
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=http://127.0.0.1:1 RTRACK_UPLOAD_WAIT=5 \
    "$RT" -q -i 0.1 -- sleep 0.3 2>s1.err
check "API unreachable: the job's exit status" "$?" 0
kept=$(sed -n "s/.*the samples not sent to sentinel are kept in '\([^']*\)'.*/\1/p" s1.err)
check "API unreachable: says where the unsent samples are" "$([ -n "$kept" ] && echo said)" said
check "API unreachable: the database is there, under TMPDIR" "$(case $kept in "$TMPDIR"/*) test -s "$kept" && echo kept ;; esac)" kept
check "API unreachable: it holds the run's samples" "$(q "$kept" 'SELECT count(*) > 2 FROM samples')" 1
# what it says to do works: the upload sends the run
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" upload --db "$kept" >up.out 2>up.err
check "API unreachable: 'rtrack upload --db' of it completes the run" \
    "$?:$(grep -c 'upload: run 1 -> sentinel run' up.err)" "0:1"
rm -rf "$(dirname "$kept")"
# a hung API, and the scheduler's SIGTERM in the end-of-run wait
mock_ctl "$T/api.log" '{"faults": {"start": {"count": -1, "sleep": 60}}}'
before=$(posts)
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_UPLOAD_WAIT=60 \
    "${DFL[@]}" "$RT" -q -i 0.1 -- true 2>s2.err &
pid=$!
for _ in $(seq 400); do [ "$(posts)" -gt "$before" ] && break; sleep 0.05; done
check "hung API: the registration was tried" "$(posts)" "$((before + 1))"
kill -TERM "$pid"
wait_exit "$pid" 20
check "hung API + SIGTERM: ends with the job's status" "$RC" 0
kept=$(sed -n "s/.*the samples not sent to sentinel are kept in '\([^']*\)'.*/\1/p" s2.err)
check "hung API + SIGTERM: the database is kept, said where" "$(test -s "$kept" && echo kept)" kept
rm -rf "$(dirname "$kept")"
mock_ctl "$T/api.log" '{}'
# the control: a streamed run finished on Sentinel leaves nothing
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RT" -q -i 0.1 -- sleep 0.3 2>s3.err
check "streamed and finished: exit 0, nothing said" "$?:$(cat s3.err)" "0:"
check "streamed and finished: nothing left" "$(left)" ""

# --- 3. signals (item 16) ---------------------------------------------------------------------
# a SIGTERM early in its life, at a range of moments (the code before left its directory for
# kills 10 to 60 ms after the start: between the directory made and the signals waited for)
n=0
for d in 0 0.005 0.01 0.015 0.02 0.03 0.04 0.05 0.06 0.08 0.1 0.15; do
    "${DFL[@]}" "$RT" -q -i 0.1 --duration 10 2>/dev/null &
    pid=$!
    sleep "$d"
    kill -TERM "$pid"
    wait_exit "$pid" 20
    [ -z "$(left)" ] || n=$((n + 1))
    rm -rf "${TMPDIR:?}"/*
done
check "SIGTERM 0 to 150 ms after the start, 12 times: nothing left" "$n" 0
# a system recording stopped by any signal whose default would end it: exit 0, nothing left
for sig in TERM INT HUP USR1 USR2 ALRM VTALRM PROF IO PWR; do
    "${DFL[@]}" "$RT" -i 0.1 -o "sys.$sig" --duration 30 2>/dev/null &
    pid=$!
    wait_file "sys.$sig" 20 || fail "SIG$sig: no sample came"
    kill -s "$sig" "$pid"
    wait_exit "$pid" 20
    check "system recording, SIG$sig: ends it, exit 0" "$RC" 0
    check "system recording, SIG$sig: nothing left" "$(left)" ""
    rm -rf "${TMPDIR:?}"/*
done
# a wrapped job: the signal is forwarded; the job dies of it, so does resource-tracker, after
# removing its database; no job is left running (SIGALRM ended it at once and orphaned the job)
for sig in ALRM USR1 TERM; do
    "${DFL[@]}" "$RT" -q -i 0.1 -- sh -c 'echo $$ >job.pid; exec sleep 60' 2>/dev/null &
    pid=$!
    wait_file job.pid 20 || fail "SIG$sig: the job did not start"
    job=$(cat job.pid)
    kill -s "$sig" "$pid"
    wait_exit "$pid" 20
    check "wrapped job, SIG$sig: resource-tracker dies of it after the job" "$RC" "$((128 + $(kill -l "$sig")))"
    check "wrapped job, SIG$sig: the job is gone" "$(kill -0 "$job" 2>/dev/null && echo running || echo gone)" gone
    check "wrapped job, SIG$sig: nothing left" "$(left)" ""
    kill -KILL "$job" 2>/dev/null
    rm -rf "${TMPDIR:?}"/* job.pid
done

finish
