#!/usr/bin/env bash
# Recording failures: when the database's filesystem fills up mid-run rtrack warns once, the job
# is not affected and its exit status is kept, the database stays intact with what was
# committed before (and the partial run can be exported and uploaded), and recording resumes
# when space comes back. A read-only database is refused before the job starts. Needs root
# (tmpfs mounts, chattr).
. "$(dirname "$0")/lib.sh" "$1"

[ "$(id -u)" = 0 ] ||
    skip_all root "recording failure suite: needs root to mount a small tmpfs (running as uid $(id -u))"
MNT=$T/mnt
mkdir "$MNT"
mount -t tmpfs -o size=1m tmpfs "$MNT" 2>mount.err ||
    skip_all tmpfs "recording failure suite: cannot mount a tmpfs: $(cat mount.err)"
trap 'umount "$MNT" 2>/dev/null; umount "$T/ro" 2>/dev/null; chattr -i "$T/imm.db" 2>/dev/null; rm -rf "$T"' EXIT
DB=$MNT/r.db

# --- the filesystem fills up and stays full until the job ends
# The job records when it starts filling (outside the tmpfs), fills it, sleeps, exits 7.
"$RTRACK" run --interval 0.1 --db "$DB" -- sh -c '
    sleep 1.5; date +%s.%N >fill.t
    dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null
    sleep 2; echo done >job.done; exit 7' "$MNT" >full.out 2>full.err
rc=$?
check "disk full: rtrack exits with the job's code" "$rc" 7
check "disk full: the job ran to its end" "$(cat job.done 2>/dev/null)" done
check "disk full: exactly one warning line" "$(grep -c 'warning' full.err)" 1
check "disk full: the warning says recording failed" "$(grep -c '^rtrack: warning: recording failed' full.err)" 1
check "disk full: the warning names the cause" "$(grep -c 'no space left on device' full.err)" 1
check "disk full: nothing on stdout" "$(wc -c <full.out)" 0
# the partial run can be read while the filesystem is still full: the header and one row per
# sample after the baseline
n=$(q "$DB" "SELECT count(*) FROM samples")
"$RTRACK" export --db "$DB" --run 1 >full.csv 2>export.err
check "disk full: export of the partial run on the full filesystem (exit, lines)" "$?:$(wc -l <full.csv)" "0:$n"
rm -f "$MNT/fill"
check "disk full: integrity_check after freeing space" "$(q "$DB" "PRAGMA integrity_check")" ok
check "disk full: foreign keys consistent" "$(q "$DB" "PRAGMA foreign_key_check" | wc -l)" 0
check "disk full: the run row is there" \
    "$(q "$DB" "SELECT count(*) || ',' || mode || ',' || json_extract(command, '\$[0]') || ',' || json_extract(command, '\$[3]') FROM runs")" "1,run,sh,$MNT"
fill_t=$(cat fill.t)
# commits happen at least once a second: what was sampled more than ~1.2 s before the disk
# filled up was committed, from seq 0 without holes
check "disk full: samples before the failure kept (baseline first)" "$(q "$DB" "SELECT kind FROM samples WHERE seq = 0")" baseline
check_range "disk full: samples from before the fill kept" \
    "$(q "$DB" "SELECT count(*) FROM samples WHERE ts < $fill_t - 1.2")" 2 12
check "disk full: committed samples before the failure are contiguous" \
    "$(q "$DB" "SELECT max(seq) + 1 = count(*) FROM samples WHERE ts < $fill_t")" 1
# the note's sample count is what the database holds
noted=$(sed -n "s/^rtrack: run 1 .* \([0-9][0-9]*\) samples*\( .*\)*$/\1/p" full.err)
check "disk full: end-of-run note counts the samples the database holds" "$noted" "$(q "$DB" "SELECT count(*) FROM samples")"

# upload --dry-run: the end of the run could not be written, so it stays 'running'; once no
# sample came for 3 intervals + 2 s it counts as abandoned and ready to send, every sample
# after the baseline (the same rows as the export)
for _ in $(seq 60); do
    dry=$("$RTRACK" upload --dry-run --db "$DB" --run 1 2>dry.err)
    rc=$?
    [ -n "$dry" ] && break
    sleep 0.1
done
check "disk full: upload --dry-run of the partial run" "$rc:$dry" "0:run 1: $((n - 1)) samples to upload"
"$RTRACK" export --db "$DB" --run 1 --format jsonl >full.jsonl
check "disk full: export as JSON Lines after freeing space: the same rows" "$?:$(wc -l <full.jsonl)" "0:$((n - 1))"

# --- the filesystem fills up, then space comes back: rtrack keeps trying and recovers
rm -f "$DB" "$DB-wal" "$DB-shm" fill.t free.t
"$RTRACK" run --quiet --interval 0.1 --db "$DB" -- sh -c '
    sleep 1.2; date +%s.%N >fill.t
    dd if=/dev/zero of="$0/fill" bs=64k 2>/dev/null
    sleep 1.5; rm "$0/fill"; date +%s.%N >free.t
    sleep 1.5; exit 7' "$MNT" 2>recover.err
check "recovery: rtrack exits with the job's code" "$?" 7
check "recovery: one warning even under --quiet" "$(grep -c '^rtrack: warning: recording failed' recover.err):$(wc -l <recover.err)" "1:1"
check "recovery: integrity_check" "$(q "$DB" "PRAGMA integrity_check")" ok
check "recovery: the run was ended properly" \
    "$(q "$DB" "SELECT status || ',' || end_reason || ',' || exit_code || ',' || (ended_at IS NOT NULL) FROM runs")" "failed,exited,7,1"
free_t=$(cat free.t)
check_range "recovery: samples taken after space came back are recorded" \
    "$(q "$DB" "SELECT count(*) FROM samples WHERE ts > $free_t + 0.2")" 5 20
check "recovery: the last sample is the final one" "$(q "$DB" "SELECT kind FROM samples ORDER BY seq DESC LIMIT 1")" final
check "recovery: process rows of later samples are linked" \
    "$(q "$DB" "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id WHERE s.ts > $free_t")" \
    "$(q "$DB" "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id JOIN processes p ON p.id = ps.process_id WHERE s.ts > $free_t AND p.run_id = 1")"
umount "$MNT"

# --- a read-only database file (chattr +i): refused before the job starts
IMM=$T/imm.db
"$RTRACK" run --quiet --db "$IMM" -- true
if chattr +i "$IMM" 2>/dev/null; then
    before=$(sha256sum <"$IMM")
    "$RTRACK" run --db "$IMM" -- touch imm.marker 2>imm.err
    check "immutable db: run exits 125" "$?" 125
    check "immutable db: the job did not start" "$([ -e imm.marker ] && echo ran || echo not-run)" not-run
    check "immutable db: message says read-only" "$(grep -c 'read-only' imm.err)" 1
    "$RTRACK" record --db "$IMM" --duration 0.2 2>imm2.err
    check "immutable db: record exits 1 saying read-only" "$?:$(grep -c 'read-only' imm2.err)" "1:1"
    check "immutable db: file unchanged" "$(sha256sum <"$IMM")" "$before"
    check "immutable db: no -wal/-shm left next to it" "$(ls "$IMM-wal" "$IMM-shm" 2>/dev/null | wc -l)" 0
    chattr -i "$IMM"
else
    skip "immutable db: chattr +i does not work on $(stat -f -c %T "$T")"
fi

# --- a database on a read-only filesystem: refused before the job starts
mkdir "$T/ro"
mount -t tmpfs -o size=1m tmpfs "$T/ro"
"$RTRACK" run --quiet --db "$T/ro/x.db" -- true
mount -o remount,ro "$T/ro"
before=$(sha256sum <"$T/ro/x.db")
"$RTRACK" run --db "$T/ro/x.db" -- touch rofs.marker 2>rofs.err
check "read-only fs, existing db: run exits 125" "$?" 125
check "read-only fs, existing db: the job did not start" "$([ -e rofs.marker ] && echo ran || echo not-run)" not-run
check "read-only fs, existing db: message says read-only" "$(grep -c 'read-only' rofs.err)" 1
check "read-only fs, existing db: file unchanged" "$(sha256sum <"$T/ro/x.db")" "$before"
"$RTRACK" run --db "$T/ro/new.db" -- touch rofs.marker 2>rofs2.err
check "read-only fs, new db: run exits 125" "$?" 125
check "read-only fs, new db: the job did not start" "$([ -e rofs.marker ] && echo ran || echo not-run)" not-run
check "read-only fs, new db: message says why" "$(grep -cE 'read-only|not writable' rofs2.err)" 1
umount "$T/ro"

finish
