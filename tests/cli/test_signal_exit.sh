#!/usr/bin/env bash
# rtrack run and signals, as a parent sees them:
#  - a job killed by signal N: rtrack stores everything, then dies of N itself (its wait status
#    is the job's, as with env, nice or timeout --foreground), without a core dump of its own;
#    so Ctrl-C stops a shell loop of `rtrack run` (bash goes on when its child exits 130);
#  - signals ignored when rtrack started (nohup; a script's background commands) stay ignored
#    in the job and are never forwarded to it; SIGCHLD ignored does not hang rtrack;
#  - a signal after the job ended cuts the end-of-run upload wait short (a hung Sentinel API):
#    the exit status stays the job's, what was sent is kept for `rtrack upload`.
# Every rtrack started here is waited for at most a few seconds, then killed with what it started;
# lib.sh kills whatever is left in the suite's process group when it exits, and the cleanup here
# the Ctrl-C loop's session (setsid: a group of its own).
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"
export RTRACK_CLOUD_DISCOVERY=0

PGIDS=()
cleanup() {
    local g
    for g in "${PGIDS[@]}"; do kill -KILL -- "-$g" 2>/dev/null; done
    rt_exit
}
trap cleanup EXIT

# how CMD... ended, as its parent's waitpid() says: "exit N" or "signal N" (+ " core" when it
# dumped core); killed after 8 s. SIGPIPE and SIGXFSZ (ignored by Python) are reset for CMD.
how() {
    python3 -c 'import os, signal, sys
pid = os.fork()
if pid == 0:
    for s in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(s, signal.SIG_DFL)
    os.execvp(sys.argv[1], sys.argv[1:])
signal.signal(signal.SIGALRM, lambda *a: os.kill(pid, signal.SIGKILL))
signal.alarm(8)
_, st = os.waitpid(pid, 0)
if os.WIFSIGNALED(st):
    print("signal %d%s" % (os.WTERMSIG(st), " core" if os.WCOREDUMP(st) else ""))
else:
    print("exit %d" % os.WEXITSTATUS(st))' "$@"
}
last() { q "$1" "SELECT $2 FROM runs ORDER BY id DESC LIMIT 1"; }
# standard signals (1-31) of a SigIgn/SigBlk mask
std() { echo $((16#${1:-0} & 0x7fffffff)); }

# --- 8. the job killed by signal N: rtrack dies of N, after storing the run -------------------------
for sig in TERM INT HUP KILL USR1; do
    n=$(kill -l "$sig")
    got=$(how "$RTRACK" run --db die.db -- sh -c "kill -$sig \$\$" 2>"die.$sig.err")
    check "SIG$sig: rtrack dies of the job's signal" "$got" "signal $n"
    check "SIG$sig: the run was stored first" \
        "$(last die.db "exit_code || ',' || exit_signal || ',' || end_reason || ',' || status")" \
        "$((128 + n)),$n,signaled,failed"
    check "SIG$sig: the note was written first" "$(grep -c "killed by SIG$sig after" "die.$sig.err")" 1
done
check "an exit code is still an exit code" "$(how "$RTRACK" run --quiet --db die.db -- sh -c 'exit 3')" "exit 3"
check "exit 130 is not a signal" "$(how "$RTRACK" run --quiet --db die.db -- sh -c 'exit 130')" "exit 130"

# SIGQUIT and SIGABRT: rtrack dies of them without dumping core of its own (the job's own core
# is the job's business: it dumps none here)
hard=$(ulimit -H -c)
if [ "$hard" = 0 ]; then
    skip "core dumps: the hard RLIMIT_CORE is 0 here, a core could not be told from none"
else
    mkdir cores && cd cores || exit 1
    for sig in QUIT ABRT SEGV; do
        n=$(kill -l "$sig")
        got=$(ulimit -S -c "$hard" && how "$RTRACK" run --quiet --db ../core.db -- sh -c "ulimit -c 0; kill -$sig \$\$")
        check "SIG$sig: rtrack dies of it, no core dumped" "$got" "signal $n"
    done
    check "no core file left" "$(ls | wc -l)" 0
    cd .. || exit 1
    case $(cat /proc/sys/kernel/core_pattern 2>/dev/null) in
        '|'*) echo "# (core_pattern is a pipe: a core would not show as a file, only in the status)" ;;
    esac
fi

# --- 8. Ctrl-C stops a shell loop of rtrack run ------------------------------------------------------
# The loop's shell and everything it started get SIGINT, as from a terminal (here: the whole
# process group of a new session). bash ends the loop only when its child died of SIGINT.
cat >loop.sh <<'EOF'
for i in 1 2 3; do
    "$RTRACK" run --quiet --db loop.db -- sh -c 'echo $$ >"ready.$0"; exec sleep 4' "$i"
    echo "after $i" >>loop.log
done
EOF
# (a script's background commands start with SIGINT ignored: the loop's shell gets the default)
RTRACK=$RTRACK env --default-signal=INT setsid bash loop.sh &
loop=$!
PGIDS+=("$loop") # (setsid made it the leader of a group of its own: not forked, the same pid)
if wait_file ready.1; then
    pg=$(awk '{ print $5 }' "/proc/$(cat ready.1)/stat")
    kill -INT -- "-$pg"
    wait_exit "$loop" 3
    check "Ctrl-C: the loop's shell died of SIGINT" "$RC" 130
    check "Ctrl-C: the loop did not go on" "$(cat loop.log 2>/dev/null)$([ -e ready.2 ] && echo ' ready.2')" ""
    check "Ctrl-C: the run was stored" "$(last loop.db "exit_signal || ',' || end_reason")" "2,signaled"
else
    fail "Ctrl-C: the loop's first job did not start"
fi

# --- 7. signals ignored when rtrack started stay ignored in the job, and are not forwarded -----------
# nohup: SIGHUP sent to rtrack (a hangup of its terminal) does not kill the job
nohup "$RTRACK" run --quiet --db hup.db -- sh -c 'echo $$ >ready.hup; sleep 1; echo survived >hup.out' \
    >/dev/null 2>hup.err &
rt=$!
if wait_file ready.hup; then
    job=$(cat ready.hup)
    check "nohup: the job ignores SIGHUP" "$(($(std "$(awk '/^SigIgn:/ { print $2 }' "/proc/$job/status")") & 1))" 1
    kill -HUP "$rt"
    wait_exit "$rt"
    check "nohup: kill -HUP of rtrack: the job survived and rtrack exits with its code" \
        "$RC,$(cat hup.out 2>/dev/null)" "0,survived"
    check "nohup: the run ended normally" "$(last hup.db "status || ',' || end_reason")" "finished,exited"
else
    fail "nohup: the job did not start"
fi

# nohup rtrack record: the hangup is ignored too (nothing else would stop it; it is nohup's point);
# a script's kill -INT still stops a background `rtrack record &` although bash started it with
# SIGINT ignored
nohup "$RTRACK" record --quiet --db hup-rec.db --interval 0.1 >/dev/null 2>hup-rec.err &
rt=$!
if wait_file hup-rec.db; then
    sleep 0.5
    kill -HUP "$rt"
    sleep 0.5
    check "nohup record: kill -HUP: still recording" "$(kill -0 "$rt" 2>/dev/null && echo alive)" alive
    kill -INT "$rt"
    wait_exit "$rt"
    check "nohup record: kill -INT (ignored at start, as in any script) stops it, exit 0" "$RC" 0
    check "nohup record: the run ended, interrupted" "$(last hup-rec.db "status || ',' || end_reason")" \
        "finished,interrupted"
else
    fail "nohup record: it did not start"
fi

# the job's ignored signals are exactly those ignored when rtrack started (SIGPIPE included,
# although rtrack ignores it itself; this script's background commands also ignore INT and QUIT)
env --ignore-signal=USR1,PIPE,TERM "$RTRACK" run --quiet --db ign.db -- \
    sh -c 'echo $$ >ready.ign; sleep 0.5' &
rt=$!
if wait_file ready.ign; then
    job=$(cat ready.ign)
    want=$(( (1 << 9) | (1 << 12) | (1 << 14) | (1 << 1) | (1 << 2) )) # USR1 PIPE TERM INT QUIT (bit N-1)
    check "ignored at start: the job ignores exactly those" \
        "$(std "$(awk '/^SigIgn:/ { print $2 }' "/proc/$job/status")")" "$want"
    check "ignored at start: nothing blocked in the job" "$(std "$(awk '/^SigBlk:/ { print $2 }' "/proc/$job/status")")" 0
    wait_exit "$rt"
    check "ignored at start: exit 0" "$RC" 0
else
    fail "ignored at start: the job did not start"
fi

# a signal rtrack was started with ignored is not forwarded, even to a job that handles it
cat >usr1.py <<'EOF'
import signal, time
signal.signal(signal.SIGUSR1, lambda *a: open("usr1.got", "w").write("got\n"))
open("ready.usr1", "w").write("1\n")
time.sleep(1.0)
EOF
env --ignore-signal=USR1 "$RTRACK" run --quiet --db usr1.db -- python3 usr1.py &
rt=$!
if wait_file ready.usr1; then
    kill -USR1 "$rt"
    wait_exit "$rt"
    check "ignored SIGUSR1 sent to rtrack: not forwarded, rtrack goes on" \
        "$RC,$(cat usr1.got 2>/dev/null)" "0,"
else
    fail "ignored SIGUSR1: the job did not start"
fi
# ... while one rtrack was started with at its default is forwarded (the control)
rm -f ready.usr1
"$RTRACK" run --quiet --db usr1.db -- python3 usr1.py &
rt=$!
if wait_file ready.usr1; then
    kill -USR1 "$rt"
    wait_exit "$rt"
    check "SIGUSR1 at its default: forwarded to the job" "$RC,$(cat usr1.got 2>/dev/null)" "0,got"
else
    fail "default SIGUSR1: the job did not start"
fi

# SIGCHLD ignored when rtrack started: rtrack still sees its job end (it used to wait forever)
check "SIGCHLD ignored at start: rtrack ends with the job's code" \
    "$(how env --ignore-signal=CHLD "$RTRACK" run --quiet --db chld.db -- sh -c 'sleep 0.2; exit 5')" "exit 5"

# --- 9. a signal during the end-of-run upload wait cuts it short --------------------------------------
TOKEN=tok-$RANDOM-signal-wait
: >"$T/api.log"
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
API=http://127.0.0.1:$(head -n 1 mock.port)
export RTRACK_S3_ENDPOINT=http://127.0.0.1:1 # (S3 refused at once: see the orphan's check)
ctl() { mock_ctl "$T/api.log" "$1"; }
finishes() { grep -c '"/runs/[^/"]*/finish"' "$T/api.log"; }

n=0
for sig in TERM INT HUP; do
    n=$((n + 1))
    ctl '{"faults": {"finish": {"count": 1, "sleep": 20}}}'
    before=$(finishes)
    # (INT at its default: this script's background commands would ignore it)
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_UPLOAD_WAIT=30 env --default-signal=INT \
        "$RTRACK" run --db "wait$n.db" --interval 0.1 -- sh -c 'sleep 0.3; exit 3' 2>"wait$n.err" &
    rt=$!
        # the finish call has reached the (hung) API: rtrack is in its end-of-run wait
    for _ in $(seq 100); do [ "$(finishes)" -gt "$before" ] && break; sleep 0.05; done
    t0=$(date +%s.%N)
    kill -s "$sig" "$rt"
    wait_exit "$rt" 4
    took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
    check "SIG$sig in the upload wait: rtrack ends at once with the job's code" "$RC" 3
    check_range "SIG$sig in the upload wait: seconds to end" "$took" 0 2
    check "SIG$sig in the upload wait: says so" \
        "$(grep -c "sentinel: the upload was cut short by SIG$sig; what was sent is kept, 'rtrack upload' completes it" "wait$n.err")" 1
    check "SIG$sig in the upload wait: the run's end is stored" \
        "$(last "wait$n.db" "exit_code || ',' || status")" "3,failed"
    check "SIG$sig in the upload wait: not finished on Sentinel yet" \
        "$(q "wait$n.db" "SELECT finished_at IS NULL FROM uploads")" 1
    ctl '{}'
    SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API "$RTRACK" upload --db "wait$n.db" 2>"up$n.err"
    check "SIG$sig in the upload wait: rtrack upload completes the run" \
        "$?,$(q "wait$n.db" "SELECT finished_at IS NOT NULL FROM uploads")" "0,1"
done

# record: the signal that stops it ends the recording, a second one the upload wait
ctl '{"faults": {"finish": {"count": 1, "sleep": 20}}}'
before=$(finishes)
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_UPLOAD_WAIT=30 "$RTRACK" record \
    --db waitrec.db --interval 0.1 2>waitrec.err &
rt=$!
for _ in $(seq 100); do [ "$(q waitrec.db "SELECT count(*) FROM samples" 2>/dev/null)" -ge 3 ] 2>/dev/null && break; sleep 0.05; done
kill -TERM "$rt"
for _ in $(seq 100); do [ "$(finishes)" -gt "$before" ] && break; sleep 0.05; done
kill -TERM "$rt"
wait_exit "$rt" 4
check "record: a second SIGTERM ends the upload wait, exit 0" "$RC" 0
check "record: says so" "$(grep -c "cut short by SIGTERM" waitrec.err)" 1
check "record: the recording ended first" "$(last waitrec.db "end_reason || ',' || status")" "interrupted,finished"
ctl '{}'

# SIGCHLD (an orphan of the job exiting during the wait) does not cut it short
ctl '{"faults": {"finish": {"count": 1, "sleep": 1.5}}}'
SENTINEL_API_TOKEN=$TOKEN SENTINEL_API_URL=$API RTRACK_UPLOAD_WAIT=6 "$RTRACK" run --quiet \
    --db orphan.db --interval 0.1 -- sh -c '(sleep 0.6) & exit 4' 2>orphan.err &
rt=$!
wait_exit "$rt" 6
check "an orphan exiting in the wait: the job's code" "$RC" 4
# (no S3 here: a first streaming round that a loaded machine delays until samples are committed
# tries to send them to S3 and warns; the finish then sends them inline)
check "an orphan exiting in the wait: the upload was waited for" \
    "$(q orphan.db "SELECT finished_at IS NOT NULL FROM uploads"),$(grep -v 'streaming paused: cannot reach s3' orphan.err)" "1,"
ctl '{}'

finish
