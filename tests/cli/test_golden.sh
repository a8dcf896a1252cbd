#!/usr/bin/env bash
# The readers' outputs, byte for byte: every case of tests/golden/make.sh (summary in text,
# markdown and json, --run, --job, --compare, --slurm-job, errors; the report) over the fixture
# databases, against tests/golden/expected/ (written by the binary before the readers were
# restructured; an output changed on purpose is written again in the commit that changes it:
# `bash tests/golden/make.sh build/rtrack tests/golden/expected`).
G=$(cd "$(dirname "$0")/../golden" && pwd)
. "$(dirname "$0")/lib.sh" "$1"

bash "$G/make.sh" "$RTRACK" got >make.log 2>&1
check "make.sh: exit 0" "$?:$(tail -n 3 make.log)" "0:"
for want in "$G"/expected/*; do
    name=${want##*/}
    if cmp -s "$want" "got/$name"; then
        pass "$name"
    else
        fail "$name differs from tests/golden/expected/$name:"
        diff -u "$want" "got/$name" | head -n 40
    fi
done
check "no case without its golden" \
    "$(cd got && for f in *; do [ -e "$G/expected/$f" ] || echo "$f"; done)" ""
finish
