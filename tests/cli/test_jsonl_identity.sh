#!/usr/bin/env bash
# JSON Lines on this machine's live recordings, byte for byte the lines of the rust_sample view
# of rtrack 47d1eed with the changes made on purpose since (tests/fixtures/jsonl/rust_sample_v2.sql:
# that view, frozen, and each change named; SQLite's json_object()
# decides every byte): a process tree, a system-only recording, a long run (export on two
# threads), a tree on two GPUs of the fake NVML with processes on them, the live output (-o) of
# each, and the selections export takes (--run, --since/--until). tests/unit/test_jsonl_identity.c does the same for the
# parity cases and the values a live machine does not give.
. "$(dirname "$0")/lib.sh" "$1"

ORACLE=${RT_FIXTURES:?RT_FIXTURES names tests/fixtures}/jsonl/rust_sample_v2.sql
FAKE=${RT_FAKE_NVML:?RT_FAKE_NVML names the fake libnvidia-ml.so.1}
SPIN=$RT_HELPERS/rt_spin
unset RTRACK_NVML_LIBRARY FAKE_NVML_GPUS FAKE_NVML_PROC_FILE

# The view runs in a SQLite of rtrack's own version, which decides every byte: Debian's sqlite3
# shell (3.40) writes a double with 15 significant digits, the SQLite compiled into the release
# binary (3.53, cmake/Portable.cmake) with as many as it takes to read back the same double.
# Against the release binary the oracle is tests/helpers/rt_sql.c built with its SQLite
# (RT_RTRACK_SQL, tests/CMakeLists.txt).
ORACLE_SQL=${RT_RTRACK_SQL:-$SQLITE}
check "the oracle's SQLite is rtrack's ($ORACLE_SQL)" "$("$ORACLE_SQL" -version | awk '{ print $1 }')" \
    "$("$RTRACK" --version | sed -n 's/^sqlite: \([0-9.]*\).*/\1/p')"
oracle() { # DB WHERE : the view's lines, in seq order
    "$ORACLE_SQL" -batch -noheader "$1" ".read $ORACLE" \
        "SELECT json FROM rust_sample_v2 WHERE $2 ORDER BY seq"
}
same() { # NAME FILE_A FILE_B : byte-identical and not empty
    if [ -s "$2" ] && cmp -s "$2" "$3"; then
        pass "$1 ($(wc -l <"$2") lines)"
    else
        fail "$1: $(cmp "$2" "$3" 2>&1 | head -1)"
        diff <(tr ',' '\n' <"$2") <(tr ',' '\n' <"$3") | head -10
    fi
}

# a tree: the root, a spinning child, a sleeping grandchild
"$RTRACK" run --db t.db --interval 0.1 --output t.live.jsonl -- \
    sh -c "\"$SPIN\" 1 & sh -c 'sleep 1.2' & wait"
"$RTRACK" export --db t.db -f jsonl >t.jsonl
oracle t.db "run_id = 1" >t.want
same "tree: export equals the view" t.jsonl t.want
same "tree: live output equals the view" t.live.jsonl t.want

# system only, a second run in the same database
"$RTRACK" record --db t.db --interval 0.1 --duration 0.6 --output s.live.jsonl
"$RTRACK" export --db t.db --run 2 -f jsonl >s.jsonl
oracle t.db "run_id = 2" >s.want
same "system only: export equals the view" s.jsonl s.want
same "system only: live output equals the view" s.live.jsonl s.want

# a time window of run 1
mid=$(q t.db "SELECT ts FROM samples WHERE run_id = 1 AND seq = 4")
end=$(q t.db "SELECT ts FROM samples WHERE run_id = 1 AND seq = 7")
"$RTRACK" export --db t.db --run 1 --since "$mid" --until "$end" -f jsonl >time.jsonl
oracle t.db "run_id = 1 AND timestamp >= $mid AND timestamp <= $end" >time.want
same "--since/--until: export equals the view" time.jsonl time.want

# a long run: export reads more than two stretches of 32 samples on two threads
# (src/export/export.c), and the lines still come out in order, each once, as one thread writes them
"$RTRACK" run --db l.db --interval 0.002 -- sh -c "\"$SPIN\" 1 & sleep 1"
n=$(q l.db "SELECT count(*) FROM samples WHERE run_id = 1 AND seq > 0")
[ "$n" -ge 70 ] && pass "long: $n samples, more than two stretches" || fail "long: $n samples"
"$RTRACK" export --db l.db -f jsonl >l.jsonl
oracle l.db "run_id = 1" >l.want
same "long: export equals the view" l.jsonl l.want
mid=$(q l.db "SELECT ts FROM samples WHERE run_id = 1 AND seq = 7")
end=$(q l.db "SELECT ts FROM samples WHERE run_id = 1 AND seq = $((n - 9))")
"$RTRACK" export --db l.db --since "$mid" --until "$end" -f jsonl >lt.jsonl
oracle l.db "run_id = 1 AND timestamp >= $mid AND timestamp <= $end" >lt.want
same "long, --since/--until: export equals the view" lt.jsonl lt.want
# the same run with its seqs far apart after the 50th (as a hand-made or merged file may have
# them): still every line once, in order, and at once (stretches are of rows, not of seqs)
cp l.db sparse.db
q sparse.db "UPDATE samples SET seq = seq * 1000000000000 WHERE run_id = 1 AND seq > 50"
timeout 60 "$RTRACK" export --db sparse.db -f jsonl >sp.jsonl
check "sparse seqs: export exits 0 in time" "$?" 0
oracle sparse.db "run_id = 1" >sp.want
same "sparse seqs: export equals the view" sp.jsonl sp.want
timeout 60 "$RTRACK" summary --db sparse.db --format json >sp.json
check "sparse seqs: summary exits 0 in time, every sample counted" \
    "$?/$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["run"]["samples"])' sp.json)" "0/$n"

# two fake GPUs, the job and its child on them (as in test_gpu.sh), an outsider on GPU 0
cat >job.sh <<'EOF'
sleep 1.2 &
child=$!
{
    echo "0 $$ 1024 50 10 C"
    echo "1 $$ 512 30 5 CG"
    echo "1 $child 256 20 2 G"
} >>"$1"
wait
EOF
echo "0 $$ 4096 70 20 C" >g.procs
RTRACK_NVML_LIBRARY=$FAKE FAKE_NVML_GPUS=2 FAKE_NVML_PROC_FILE="$T/g.procs" \
    "$RTRACK" run --db g.db --interval 0.2 --output g.live.jsonl -- sh job.sh "$T/g.procs"
check "gpus: both recorded with samples" \
    "$(q g.db "SELECT count(DISTINCT gpu_id) FROM gpu_samples") $(q g.db "SELECT count(*) > 0 FROM gpu_process_samples")" "2 1"
"$RTRACK" export --db g.db -f jsonl >g.jsonl
oracle g.db "run_id = 1" >g.want
same "gpus: export equals the view" g.jsonl g.want
same "gpus: live output equals the view" g.live.jsonl g.want

finish
