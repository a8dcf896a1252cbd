#!/usr/bin/env bash
# What the recommendation is built on (issue 16): no sample of a live tree with an empty memory
# reading.
. "$(dirname "$0")/lib.sh" "$1"

# --- a process that execs keeps its memory reading in the sample right after the exec: the
# smaps_rollup kept open pins the old address space and fails (ESRCH) after an exec; it is
# opened again within the same sample. 'sh -c "sleep 1.2; exec sleep 2"' at 0.5 s: the exec
# falls between the samples at 1.0 and 1.5 s.
DB=exec.db
"$RTRACK" run --quiet --db $DB --interval 0.5 -- sh -c 'sleep 1.2; exec sleep 2'
check "exec: exit 0" "$?" 0
check_range "exec: periodic samples" "$(q $DB "SELECT count(*) FROM samples WHERE kind = 'periodic'")" 5 8
check "exec: no periodic sample with the tree's memory 0 or unknown" \
    "$(q $DB "SELECT count(*) FROM samples WHERE kind = 'periodic' AND coalesce(proc_pss_kib, 0) = 0")" 0
check "exec: no live process row without its memory" \
    "$(q $DB "SELECT count(*) FROM process_samples ps JOIN samples s ON s.id = ps.sample_id
              WHERE s.kind = 'periodic' AND ps.state NOT IN ('Z', 'X') AND coalesce(ps.pss_kib, 0) = 0")" 0
# the exec is seen: the job's process now runs sleep 2
check "exec: the job's process after the exec" \
    "$(q $DB "SELECT name || ' ' || cmdline FROM processes WHERE pid = (SELECT pid FROM runs)")" \
    'sleep ["sleep","2"]'
finish
