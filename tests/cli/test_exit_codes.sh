#!/usr/bin/env bash
# rtrack run: exit status mapping, the runs row describing how the job ended, and that the job's
# stdin/stdout/stderr pass through untouched while rtrack writes only its one note to stderr.
. "$(dirname "$0")/lib.sh" "$1"

# run_job NAME ARGS... : rtrack run ARGS with stdout -> NAME.out, stderr -> NAME.err; sets RC
run_job() {
    local name=$1; shift
    "$RTRACK" run "$@" >"$name.out" 2>"$name.err" </dev/null
    RC=$?
}
# last run's column
col() { q rtrack.db "SELECT $1 FROM runs ORDER BY id DESC LIMIT 1"; }

# --- exit 0: status finished, end_reason exited, no signal
run_job ok -- true
check "exit 0: rtrack exit status" "$RC" 0
check "exit 0: runs.status" "$(col status)" finished
check "exit 0: runs.exit_code" "$(col exit_code)" 0
check "exit 0: runs.exit_signal is NULL" "$(col 'exit_signal IS NULL')" 1
check "exit 0: runs.end_reason" "$(col end_reason)" exited
check "exit 0: runs.ended_at >= started_at" "$(col 'ended_at >= started_at')" 1

# --- a non-zero exit code is passed through and recorded as a failure
run_job three -- sh -c 'exit 3'
check "exit 3: rtrack exit status" "$RC" 3
check "exit 3: runs.status" "$(col status)" failed
check "exit 3: runs.exit_code" "$(col exit_code)" 3
check "exit 3: runs.end_reason" "$(col end_reason)" exited
run_job x255 -- sh -c 'exit 255'
check "exit 255: rtrack exit status" "$RC" 255
check "exit 255: runs.exit_code" "$(col exit_code)" 255

# --- killed by a signal: 128+N, exit_signal N, end_reason signaled
run_job kill9 -- sh -c 'kill -KILL $$'
check "SIGKILL: rtrack exit status 137" "$RC" 137
check "SIGKILL: runs.exit_code" "$(col exit_code)" 137
check "SIGKILL: runs.exit_signal" "$(col exit_signal)" 9
check "SIGKILL: runs.status" "$(col status)" failed
check "SIGKILL: runs.end_reason" "$(col end_reason)" signaled
check "SIGKILL: note names the signal" "$(grep -c "^rtrack: run [0-9]* \"sh -c 'kill -KILL \\\$\\\$'\" killed by SIGKILL after" kill9.err)" 1
run_job kill15 -- sh -c 'kill -TERM $$'
check "SIGTERM: rtrack exit status 143" "$RC" 143
check "SIGTERM: runs.exit_code" "$(col exit_code)" 143
check "SIGTERM: runs.exit_signal" "$(col exit_signal)" 15
check "SIGTERM: runs.status" "$(col status)" failed
check "SIGTERM: runs.end_reason" "$(col end_reason)" signaled

# --- command not found: 127, a run row with end_reason spawn-failed, no samples
run_job nf -- rtrack-no-such-command-xyz arg
check "missing command: exit 127" "$RC" 127
check "missing command: stderr says not found" "$(grep -c 'command not found' nf.err)" 1
check "missing command: runs.status" "$(col status)" failed
check "missing command: runs.exit_code" "$(col exit_code)" 127
check "missing command: runs.end_reason" "$(col end_reason)" spawn-failed
check "missing command: runs.command" "$(col command)" '["rtrack-no-such-command-xyz","arg"]'
check "missing command: no samples" \
    "$(q rtrack.db "SELECT count(*) FROM samples WHERE run_id = (SELECT max(id) FROM runs)")" 0
run_job nfpath -- ./no-such-file
check "missing ./path: exit 127" "$RC" 127

# --- found but not executable: 126
printf '#!/bin/sh\ntouch ran.marker\n' >noexec.sh
chmod 644 noexec.sh
run_job ne -- ./noexec.sh
check "not executable: exit 126" "$RC" 126
check "not executable: runs.status" "$(col status)" failed
check "not executable: runs.exit_code" "$(col exit_code)" 126
check "not executable: runs.end_reason" "$(col end_reason)" spawn-failed
check "not executable: job did not run" "$([ -e ran.marker ] && echo ran || echo not-run)" not-run
mkdir adir
run_job dir -- ./adir
check "a directory as command: exit 126" "$RC" 126

# --- stdout passes through byte for byte, rtrack adds nothing to stdout
run_job pf -- printf 'a\nb'
check "stdout: exit 0" "$RC" 0
check "stdout: printf 'a\\nb' passes through exactly" "$(od -An -c pf.out | tr -s ' ')" "$(printf 'a\nb' | od -An -c | tr -s ' ')"
check "stdout: byte count" "$(wc -c <pf.out)" 3
head -c 300000 /dev/urandom >rand.bin
run_job bin -- cat rand.bin
check_cmd "stdout: 300 kB of binary data pass through unchanged" cmp -s rand.bin bin.out
run_job empty --quiet -- true
check "stdout: nothing on stdout for a silent job" "$(wc -c <empty.out)" 0

# --- stdin passes through
out=$(echo hi | "$RTRACK" run --quiet -- cat 2>/dev/null)
check "stdin: echo hi | rtrack run -- cat" "$out" hi
out=$(cat rand.bin | "$RTRACK" run --quiet -- sha256sum 2>/dev/null | cut -d' ' -f1)
check "stdin: binary stdin reaches the job intact" "$out" "$(sha256sum <rand.bin | cut -d' ' -f1)"

# --- the job's stderr passes through; --quiet leaves nothing else on stderr
run_job se --quiet -- sh -c 'printf "to-err\n" >&2; printf "to-out\n"'
check "stderr: job's stderr passes through, --quiet adds nothing" "$(cat se.err)" to-err
check "stderr: job's stdout stays on stdout" "$(cat se.out)" to-out
run_job qok --quiet -- true
check "--quiet: empty stderr for a clean run" "$(wc -c <qok.err)" 0
run_job qfail --quiet -- sh -c 'exit 4'
check "--quiet: empty stderr for a failing job too" "$(wc -c <qfail.err)" 0
check "--quiet: exit status still the job's" "$RC" 4

# --- without --quiet: exactly one end-of-run line
run_job note -- true
check "note: exactly one line on stderr" "$(wc -l <note.err)" 1
check "note: ends with a newline" "$(tail -c1 note.err | od -An -c | tr -d ' ')" '\n'
# the end-of-run line (src/cli/run_end.c): the run, its command, how it ended, its figures, the
# samples and the command that summarizes it
check "note: names the run id and exit" \
    "$(grep -cE "^rtrack: run $(col id) 'true' exited 0 after [0-9.]+ s · [0-9.]+ cores \(max [0-9.]+\) · peak [0-9.]+ MiB · [0-9]+ samples? · rtrack summary --run $(col id)$" note.err)" 1

# --- arguments reach the job unchanged and are recorded as a JSON array
run_job args --quiet -- printf '%s|' 'a b' '"q"' '' 'x\y' 'é'
check "argv: special arguments reach the job unchanged" "$(cat args.out)" 'a b|"q"||x\y|é|'
check "argv: runs.command is the JSON argv" \
    "$(q rtrack.db "SELECT json_array_length(command) || ':' || json_extract(command, '\$[1]') || ':' || json_extract(command, '\$[2]') || ':' || json_extract(command, '\$[3]') || ':' || json_extract(command, '\$[4]') || ':' || json_extract(command, '\$[5]') || ':' || json_extract(command, '\$[6]') FROM runs ORDER BY id DESC LIMIT 1")" \
    '7:%s|:a b:"q"::x\y:é'
# options after the command (or after --) belong to the job, not to rtrack
run_job after --quiet echo --interval 0 --db
check "argv: options after the command belong to the job" "$(cat after.out)" '--interval 0 --db'
check "argv: ... and rtrack accepted them (exit 0)" "$RC" 0
run_job after2 --quiet -- echo --quiet
check "argv: '--' ends rtrack's options" "$(cat after2.out)" '--quiet'

# --- the command is found through PATH
out=$(PATH="$RT_HELPERS:$PATH" "$RTRACK" run --quiet -- rt_spin 0.1 2>&1)
check "PATH lookup: helper found by name" "$?:$out" "0:"
check "PATH lookup: recorded argv[0] as given" "$(col command)" '["rt_spin","0.1"]'

finish
