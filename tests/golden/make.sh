#!/usr/bin/env bash
# make.sh RTRACK OUTDIR - every reader's output of the fixture databases, one file per case:
# `summary` (text, markdown, json; --run, --job, --compare, --slurm-job) and `report`, over the
# hand-made runs of tests/fixtures/summary (runs.sql, text.sql) and the recordings of
# tests/fixtures/golden (gpu.sql: two runs on two fake GPUs; node_a.sql and node_b.sql: two
# simulated nodes of Slurm job 77, test_slurm.sh's). tests/cli/test_golden.sh compares them
# with tests/golden/expected/, written by this script from the binary before a change that
# must not change them (the readers' restructure): `bash tests/golden/make.sh build/rtrack
# tests/golden/expected`. An output changed on purpose is written again the same way, in the
# commit that changes it.
#
# Each case's file holds stdout, then the exit status and stderr under a line of its own. The
# report's footer and generator tag (version, commit, the time it was made) are the only parts
# that are not the database's, and are written as VERSION, COMMIT and TIME.
set -u
RTRACK=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FX=$HERE/../fixtures
SQLITE=${SQLITE:-sqlite3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# databases rtrack created (the real schema and views), holding the fixture rows
mkdb() { # DB SQL...
    local db=$WORK/$1
    shift
    "$RTRACK" record --db "$db" --duration 0.05 --quiet || exit 1
    "$SQLITE" "$db" "PRAGMA foreign_keys = ON; DELETE FROM runs" || exit 1
    for f in "$@"; do "$SQLITE" "$db" <"$f" || exit 1; done
}
mkdb fx.db "$FX/summary/runs.sql" "$FX/summary/text.sql"
mkdb gpu.db "$FX/golden/gpu.sql"
mkdb a.db "$FX/golden/node_a.sql"
mkdb b.db "$FX/golden/node_b.sql"

case_() { # NAME ARGS...: run rtrack in the work directory, record stdout, status and stderr
    local name=$1
    shift
    (cd "$WORK" && "$RTRACK" "$@" >"$WORK/out" 2>"$WORK/err")
    local rc=$?
    {
        cat "$WORK/out"
        printf -- '--- exit %d, stderr:\n' "$rc"
        cat "$WORK/err"
    } | sed -E -e 's/(<meta name="generator" content="rtrack )[^"]*"/\1VERSION"/' \
        -e 's/Made by rtrack [^ ]+ \(commit [^)]*\) on [0-9-]+ [0-9:]+ UTC/Made by rtrack VERSION (commit COMMIT) on TIME/' \
        >"$OUT/$name"
}
formats() { # NAME ARGS...: a case per summary format
    local name=$1
    shift
    case_ "$name.txt" summary "$@"
    case_ "$name.md" summary "$@" --format markdown
    case_ "$name.json" summary "$@" --format json
}

for r in 1 2 3 4 10 11 12 13; do formats "fx-run$r" --db fx.db --run "$r"; done
formats fx-latest --db fx.db
for j in train build short none; do formats "fx-job-$j" --db fx.db --job "$j"; done
formats fx-compare-1-2 --db fx.db --compare 1 2
formats fx-compare-10-12 --db fx.db --compare 10 12
formats fx-compare-11-13 --db fx.db --compare 11 13
formats fx-compare-3-4 --db fx.db --compare 3 4
for r in 1 2; do formats "gpu-run$r" --db gpu.db --run "$r"; done
formats gpu-job --db gpu.db --job gpujob
formats gpu-compare --db gpu.db --compare 1 2
formats slurm-77 --db a.db --db b.db --slurm-job 77
formats slurm-77-run1 --db a.db --db b.db --slurm-job 77 --run 1
formats slurm-none --db a.db --db b.db --slurm-job 4242

for r in 1 3 10 11 13; do case_ "fx-report-run$r.html" report --db fx.db --run "$r" -o -; done
for r in 1 2; do case_ "gpu-report-run$r.html" report --db gpu.db --run "$r" -o -; done
case_ slurm-77-report.html report --db a.db --db b.db --slurm-job 77 -o -
exit 0
