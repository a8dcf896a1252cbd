#!/usr/bin/env bash
# A full disk loses nothing: the samples of the transaction that failed and those taken while
# the database's filesystem is full wait in memory and are written, oldest first, when space
# comes back; the run's end is tried again for a moment when the job ends on a full disk; a
# database that cannot be created on a full filesystem leaves no file behind. The job is never
# affected and rtrack exits with its code. Needs root (a small tmpfs).
. "$(dirname "$0")/lib.sh" "$1"

[ "$(id -u)" = 0 ] || skip_all root "disk full suite: needs root to mount a small tmpfs (running as uid $(id -u))"
MNT=$T/mnt
mkdir "$MNT"
mount -t tmpfs -o size=1m tmpfs "$MNT" 2>mount.err ||
    skip_all tmpfs "disk full suite: cannot mount a tmpfs: $(cat mount.err)"
helper=
trap '[ -n "$helper" ] && kill "$helper" 2>/dev/null; umount "$MNT" 2>/dev/null; rm -rf "$T"' EXIT
DB=$MNT/r.db
# run_end DB: status,exit_code,end_reason,ended (1 when ended_at is set)
run_end() { q "$1" "SELECT status || ',' || coalesce(exit_code, '') || ',' || coalesce(end_reason, '') || ',' || (ended_at IS NOT NULL) FROM runs"; }
# no_hole DB [WHERE]: 1 when the samples are seq 0..n-1 (none lost in between)
no_hole() { q "$1" "SELECT max(seq) + 1 = count(*) FROM samples ${2:-}"; }
# left: the files on the tmpfs other than the one that fills it
left() { (cd "$MNT" && for f in * .*; do [ -f "$f" ] && [ "$f" != fill ] && printf '%s ' "$f"; done); }
noted() { sed -n "s/^rtrack: run 1 .* \([0-9][0-9]*\) samples*\( .*\)*$/\1/p" "$1"; }

# --- the filesystem fills up a second into a 0.05 s run and is freed two seconds later (at
# least one commit, about once a second, falls in between): the batch that was being committed
# when it failed and every sample taken while it was full are recorded (before: the batch, ~20
# samples, was lost, often the second before the disk filled)
timeout 20 "$RTRACK" run --interval 0.05 --db "$DB" -- sh -c '
    sleep 1; date +%s.%N >fill.t
    dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null
    sleep 2; rm "$0/fill"; date +%s.%N >free.t
    sleep 1; exit 7' "$MNT" >fill.out 2>fill.err
check "fill and free: rtrack exits with the job's code" "$?" 7
check "fill and free: one warning, saying the disk is full" \
    "$(grep -c warning fill.err):$(grep -c '^rtrack: warning: recording failed: .*no space left on device' fill.err)" "1:1"
check "fill and free: nothing on stdout" "$(wc -c <fill.out)" 0
check "fill and free: the run ended with the job's code" "$(run_end "$DB")" "failed,7,exited,1"
fill_t=$(cat fill.t) free_t=$(cat free.t)
check "fill and free: the samples taken before the disk filled have no hole" "$(no_hole "$DB" "WHERE ts < $fill_t")" 1
check_range "fill and free: the samples of the second before the disk filled are recorded" \
    "$(q "$DB" "SELECT count(*) FROM samples WHERE ts < $fill_t")" 10 25
check "fill and free: no sample lost at all (seq 0..n-1 without a hole)" "$(no_hole "$DB")" 1
check_range "fill and free: samples taken while the disk was full are recorded" \
    "$(q "$DB" "SELECT count(*) FROM samples WHERE ts > $fill_t + 0.1 AND ts < $free_t")" 10 60
check "fill and free: the last sample is the final one" "$(q "$DB" "SELECT kind FROM samples ORDER BY seq DESC LIMIT 1")" final
check "fill and free: the end-of-run note counts the samples the database holds" "$(noted fill.err)" "$(q "$DB" "SELECT count(*) FROM samples")"
check "fill and free: integrity_check" "$(q "$DB" "PRAGMA integrity_check")" ok
check "fill and free: foreign keys consistent" "$(q "$DB" "PRAGMA foreign_key_check" | wc -l)" 0
check "fill and free: the job's pid is recorded" "$(q "$DB" "SELECT pid > 0 FROM runs")" 1
check "fill and free: every process row of a sample is the run's" \
    "$(q "$DB" "SELECT count(*) FROM process_samples ps JOIN processes p ON p.id = ps.process_id WHERE p.run_id <> 1")" 0
check "fill and free: the samples kept while the disk was full have their process rows" \
    "$(q "$DB" "SELECT count(*) FROM samples s WHERE ts > $fill_t + 0.1 AND ts < $free_t AND NOT EXISTS (SELECT 1 FROM process_samples WHERE sample_id = s.id)")" 0

# --- the job ends while the disk is full, and space comes back 0.3 s later: the run's end is
# tried again, and it and every sample waiting go in (before: the run stayed 'running')
rm -f "$DB" "$DB-wal" "$DB-shm" exited.t
(while [ ! -e exited.t ]; do sleep 0.02; done; sleep 0.3; rm -f "$MNT/fill") &
helper=$!
timeout 20 "$RTRACK" run --interval 0.05 --db "$DB" -- sh -c '
    sleep 0.5; dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null; sleep 0.5
    date +%s.%N >exited.t; exit 3' "$MNT" >late.out 2>late.err
rc=$?
end_t=$(now)
wait "$helper"
helper=
check "space back after the job: rtrack exits with the job's code" "$rc" 3
check "space back after the job: the run's end is written" "$(run_end "$DB")" "failed,3,exited,1"
check "space back after the job: no sample lost" "$(no_hole "$DB")" 1
check "space back after the job: the last sample is the final one" "$(q "$DB" "SELECT kind FROM samples ORDER BY seq DESC LIMIT 1")" final
check "space back after the job: the note counts the samples the database holds" "$(noted late.err)" "$(q "$DB" "SELECT count(*) FROM samples")"
check_range "space back after the job: rtrack exited soon after the job (s)" "$(awk -v a="$(cat exited.t)" -v b="$end_t" 'BEGIN { print b - a }')" 0 2.5

# --- the disk stays full: rtrack tries the end for a moment only, then exits with the job's
# code, having said it once
rm -f "$DB" "$DB-wal" "$DB-shm" "$MNT/fill" exited.t
timeout 20 "$RTRACK" run --interval 0.05 --db "$DB" -- sh -c '
    sleep 0.5; dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null; sleep 0.3
    date +%s.%N >exited.t; exit 4' "$MNT" >stay.out 2>stay.err
rc=$?
end_t=$(now)
check "stays full: rtrack exits with the job's code" "$rc" 4
check "stays full: one warning" "$(grep -c warning stay.err)" 1
check_range "stays full: rtrack exits within the end's bounded wait (s)" "$(awk -v a="$(cat exited.t)" -v b="$end_t" 'BEGIN { print b - a }')" 0 3.5
check "stays full: the note counts the samples the database holds" "$(noted stay.err)" "$(q "$DB" "SELECT count(*) FROM samples")"
rm -f "$MNT/fill"
check "stays full: integrity_check after freeing space" "$(q "$DB" "PRAGMA integrity_check")" ok

# --- a new database on a full filesystem: refused before the job starts, and no file is left
# (before: an empty r.db stayed, against the docs)
rm -f "$MNT"/*
dd if=/dev/zero of="$MNT/fill" bs=64k 2>/dev/null
timeout 20 "$RTRACK" run --db "$MNT/new.db" -- touch new.marker 2>new.err
check "full, new db: run exits 125" "$?" 125
check "full, new db: the job did not start" "$([ -e new.marker ] && echo ran || echo not-run)" not-run
check "full, new db: the message names the cause" "$(grep -c "'$MNT/new.db'.*no space left on device" new.err)" 1
check "full, new db: no file left" "$(left)" ""
timeout 20 "$RTRACK" record --db "$MNT/new.db" --duration 0.1 2>new2.err
check "full, new db: record exits 1" "$?" 1
check "full, new db: record leaves no file" "$(left)" ""
# with a little room (the schema fits, or the run's row does not): a database either holds the
# run, or is not there at all
bad=0 refused=0
for kib in 64 128 144 160 176 192 224; do
    rm -f "$MNT"/*
    dd if=/dev/zero of="$MNT/fill" bs=1k count=$((1024 - kib)) 2>/dev/null
    timeout 20 "$RTRACK" run --quiet --db "$MNT/n.db" -- true 2>room.err
    rc=$?
    files=$(left)
    if [ "$rc" = 125 ]; then
        refused=$((refused + 1))
        [ -z "$files" ] || { bad=$((bad + 1)); echo "# $kib KiB free: refused, left: $files"; }
    elif [ "$rc" != 0 ] || [ "$(q "$MNT/n.db" "SELECT count(*) FROM runs")" != 1 ]; then
        bad=$((bad + 1))
        echo "# $kib KiB free: exit $rc, left: $files: $(cat room.err)"
    fi
done
check "a little room: a refused new database leaves no file, a made one holds the run" "$bad" 0
check_range "a little room: some were refused" "$refused" 1 7

umount "$MNT"
finish
