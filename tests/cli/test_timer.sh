#!/usr/bin/env bash
# The sampling timer never stalls: every read() rtrack makes is slowed down (strace fault
# injection) so deadlines pass while it works; it must keep sampling and stop at --duration.
# Regression test: the timerfd was once drained after being armed, which could swallow the
# expiry and leave rtrack waiting forever.
. "$(dirname "$0")/lib.sh" "$1"

if ! command -v strace >/dev/null; then
    fail "strace is needed for this test (scripts/bootstrap.sh installs it)"
    finish
fi
start=$(date +%s.%N)
# (LeakSanitizer cannot work under ptrace: a sanitizer build skips only its leak check here)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
    timeout 20 strace -f -o /dev/null -e trace=read -e inject=read:delay_enter=20000 \
    "$RTRACK" record --quiet --db t.db --interval 0.05 --duration 2
rc=$?
elapsed=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print e - s }')
check "slow reads: record exits by itself" "$rc" 0
check_range "slow reads: stops at --duration (s)" "$elapsed" 1.9 8
check "slow reads: ended by the duration" "$(q t.db "SELECT end_reason FROM runs")" duration
check "slow reads: periodic samples kept coming" \
    "$(q t.db "SELECT count(*) >= 2 FROM samples WHERE kind = 'periodic'")" 1

# and at the 10 ms grid with nothing slowed, 3 s give hundreds of samples, not a stall
"$RTRACK" record --quiet --db fast.db --interval 0.01 --duration 3
check "10 ms grid: exit 0" "$?" 0
check_range "10 ms grid: samples in 3 s" "$(q fast.db "SELECT count(*) FROM samples")" 100 302
finish
