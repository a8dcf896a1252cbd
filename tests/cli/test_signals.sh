#!/usr/bin/env bash
# rtrack run forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM,
# SIGPROF, SIGIO and SIGPWR sent to it (kill) to the job, keeps running while the job lives, and
# exits with the job's status.
#
# rtrack is started in the background of this (non-interactive) shell and the signals go to its
# pid only, so the test shell is never signalled. Every wait is bounded (3 s for what a signal
# should end at once): a signal that is not forwarded fails its check within seconds, and
# wait_exit kills the rtrack and the job it left running (lib.sh kills whatever else is left in
# the suite's process group when it exits). Bash starts background commands with SIGINT
# and SIGQUIT ignored, and a signal ignored when rtrack starts stays ignored in the job and is
# not forwarded (test_signal_exit.sh checks that): rtrack is started here with both at their
# defaults (DFL), as a terminal or a scheduler starts it. The job starts with nothing blocked
# and nothing ignored, although rtrack blocks the signals it forwards and ignores SIGPIPE.
. "$(dirname "$0")/lib.sh" "$1"

# "${DFL[@]}" CMD...: CMD with SIGINT and SIGQUIT at their defaults (env execs CMD: $! is its pid)
DFL=(env --default-signal=INT,QUIT)

# A job that traps SIG, writes its name to marker.SIG and exits with CODE.
cat >job.sh <<'EOF'
sig=$1 code=$2
trap 'echo "$sig" >"marker.$sig"; exit "$code"' "$sig"
echo $$ >"ready.$sig"
while :; do sleep 0.05; done
EOF

# --- each forwarded signal reaches the job, which handles it; rtrack exits with its code
code=31
# (ALRM, VTALRM, PROF, IO, PWR: issue 31 item 16; SIGALRM ended rtrack and orphaned the job)
for sig in INT TERM HUP QUIT USR1 USR2 ALRM VTALRM PROF IO PWR; do
    "${DFL[@]}" "$RTRACK" run --quiet --db sig.db -- bash job.sh "$sig" "$code" 2>"err.$sig" &
    rt=$!
    if ! wait_file "ready.$sig"; then
        fail "SIG$sig: job did not start"
        kill -KILL "$rt" 2>/dev/null
        continue
    fi
    kill -s "$sig" "$rt"
    if wait_file "marker.$sig" 3; then
        wait_exit "$rt" 3
    else
        fail "SIG$sig: the job did not get it within 3 s: not forwarded"
        wait_exit "$rt" 0
    fi
    check "SIG$sig: rtrack exits with the job's code" "$RC" "$code"
    check "SIG$sig: the job received it (marker)" "$(cat "marker.$sig" 2>/dev/null)" "$sig"
    check "SIG$sig: runs row: job exited with its code" \
        "$(q sig.db "SELECT exit_code || ',' || end_reason || ',' || status FROM runs ORDER BY id DESC LIMIT 1")" \
        "$code,exited,failed"
    check "SIG$sig: rtrack printed nothing under --quiet" "$(wc -c <"err.$sig")" 0
    code=$((code + 1))
done

# --- an untrapped SIGTERM forwarded kills the job: rtrack exits 143 and records the signal
"${DFL[@]}" "$RTRACK" run --quiet --db term.db -- sh -c 'echo $$ >ready.term; exec sleep 30' &
rt=$!
if wait_file ready.term; then
    job=$(cat ready.term)
    # the job starts with nothing blocked or ignored, although rtrack blocks these signals and
    # ignores SIGPIPE
    check "job's signal mask is empty" "$(awk '/^SigBlk:/ { print $2 }' "/proc/$job/status")" 0000000000000000
    # (standard signals 1-31 only: glibc's posix_spawn ignores its internal signals 32 and 33)
    ign=$(awk '/^SigIgn:/ { print $2 }' "/proc/$job/status")
    check "job ignores no standard signal (SigIgn $ign)" "$(( 16#${ign:-1} & 0x7fffffff ))" 0
    kill -s TERM "$rt"
    wait_exit "$rt" 3
    check "untrapped SIGTERM: rtrack exits 143" "$RC" 143
    check "untrapped SIGTERM: runs.exit_signal/end_reason" \
        "$(q term.db "SELECT exit_signal || ',' || end_reason FROM runs")" "15,signaled"
    check "untrapped SIGTERM: the job is gone" "$(kill -0 "$job" 2>/dev/null && echo alive || echo gone)" gone
else
    fail "untrapped SIGTERM: job did not start"
    kill -KILL "$rt" 2>/dev/null
fi

# --- untrapped SIGINT: the job dies of it (130)
"${DFL[@]}" "$RTRACK" run --quiet --db int.db -- sh -c 'echo $$ >ready.int; exec sleep 30' &
rt=$!
if wait_file ready.int; then
    kill -s INT "$rt"
    wait_exit "$rt" 3
    check "untrapped SIGINT: rtrack exits 130" "$RC" 130
    check "untrapped SIGINT: runs.exit_signal" "$(q int.db "SELECT exit_signal FROM runs")" 2
else
    fail "untrapped SIGINT: job did not start"
    kill -KILL "$rt" 2>/dev/null
fi

# --- a signal the job handles without exiting leaves rtrack running; it ends with the job
cat >survive.sh <<'EOF'
trap 'echo got >usr1.marker' USR1
echo $$ >ready.survive
while [ ! -e go ]; do sleep 0.05; done
exit 0
EOF
"${DFL[@]}" "$RTRACK" run --quiet --db survive.db -- bash survive.sh &
rt=$!
if wait_file ready.survive; then
    kill -s USR1 "$rt"
    wait_file usr1.marker 5
    check "handled SIGUSR1: job got it" "$(cat usr1.marker 2>/dev/null)" got
    sleep 0.3
    check "handled SIGUSR1: rtrack is still running" "$(kill -0 "$rt" 2>/dev/null && echo alive || echo gone)" alive
    touch go
    wait_exit "$rt" 3
    check "handled SIGUSR1: rtrack exits 0 when the job does" "$RC" 0
    check "handled SIGUSR1: run finished normally" \
        "$(q survive.db "SELECT status || ',' || end_reason || ',' || exit_code FROM runs")" "finished,exited,0"
else
    fail "handled SIGUSR1: job did not start"
    kill -KILL "$rt" 2>/dev/null
fi

finish
