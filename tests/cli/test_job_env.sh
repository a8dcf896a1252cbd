#!/usr/bin/env bash
# rtrack run: the job's environment is rtrack's without SENTINEL_API_TOKEN (the job and its
# children never see the token rtrack streams with), unless RTRACK_KEEP_TOKEN_IN_JOB=1; every
# other variable reaches the job unchanged (RTRACK_RUN_ID and RTRACK_RUN_DB added); rtrack itself still streams with the token (the mock
# Sentinel API, tests/helpers/sentinel_mock.py: a short run is finished with its CSV inline, so
# no S3 is needed).
HERE=$(cd "$(dirname "$0")" && pwd)
MOCK=$HERE/../helpers/sentinel_mock.py
. "$HERE/lib.sh" "$1"

TOKEN=tok-$RANDOM$RANDOM-job-env-secret
: >"$T/api.log"
python3 "$MOCK" "$T/api.log" "$TOKEN" >mock.port &
mock=$!
trap 'kill $mock 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -s mock.port ] && break; sleep 0.05; done
API=http://127.0.0.1:$(head -n 1 mock.port)
# (S3 refused at once where a batch would go: see "no warning" below)
export RTRACK_CLOUD_DISCOVERY=0 RTRACK_UPLOAD_WAIT=10 SENTINEL_API_URL=$API RTRACK_S3_ENDPOINT=http://127.0.0.1:1
requests() { mock_requests "$T/api.log" "$1" "$TOKEN"; } # PATH-REGEX: count, with the token

# the job, and a child of the job, write their environments
job='env >job.env; sh -c "env >child.env; cat /proc/\$\$/environ >child.environ"'

# --- the token is not in the job's environment, nor in its children's; rtrack streams with it
SENTINEL_API_TOKEN=$TOKEN "$RTRACK" run --quiet --db st.db -- sh -c "$job" 2>st.err
check "default: the job's exit code" "$?" 0
# (no S3 here: a first streaming round that a loaded machine delays until samples are committed
# tries to send them to S3 and warns; the finish then sends them inline)
check "default: no warning" "$(grep -v 'streaming paused: cannot reach s3' st.err)" ""
check "default: the job does not see SENTINEL_API_TOKEN" "$(grep -c '^SENTINEL_API_TOKEN=' job.env)" 0
check "default: nor does its child" "$(grep -c '^SENTINEL_API_TOKEN=' child.env)" 0
check "default: the token is nowhere in the child's /proc/PID/environ" \
    "$(tr '\0' '\n' <child.environ | grep -c -- "$TOKEN")" 0
check "default: the job still sees SENTINEL_API_URL" "$(grep -c "^SENTINEL_API_URL=$API\$" job.env)" 1
check "default: rtrack registered the run with the token" "$(requests /runs)" "1 1"
check "default: and finished it with the token" "$(requests '/runs/[^/]+/finish')" "1 1"
check "default: the run is finished on Sentinel" "$(q st.db "SELECT finished_at IS NOT NULL FROM uploads")" 1

# --- every other variable reaches the job unchanged (bash's $_ names the command it ran)
export RT_JOB_ENV_PROBE='a value with spaces = and "quotes"'
SENTINEL_API_TOKEN=$TOKEN env | grep -v '^_=' | grep -v '^SENTINEL_API_TOKEN=' | sort >direct.env
SENTINEL_API_TOKEN=$TOKEN RTRACK_UPLOAD_WAIT=0 SENTINEL_API_URL=http://127.0.0.1:1 \
    "$RTRACK" run --quiet --db other.db -- env 2>/dev/null | grep -v '^_=' | sort >viartrack.env
# (RTRACK_UPLOAD_WAIT and SENTINEL_API_URL differ by design: set for this one command; rtrack
# adds RTRACK_RUN_ID and RTRACK_RUN_DB, the run that records the job: test_ci.sh)
check "the rest of the environment is unchanged" \
    "$(diff <(grep -v '^RTRACK_UPLOAD_WAIT=\|^SENTINEL_API_URL=' direct.env) \
            <(grep -v '^RTRACK_UPLOAD_WAIT=\|^SENTINEL_API_URL=\|^RTRACK_RUN_ID=\|^RTRACK_RUN_DB=' viartrack.env))" ""
check "rtrack adds the run's id and database" \
    "$(grep '^RTRACK_RUN_ID=\|^RTRACK_RUN_DB=' viartrack.env | tr '\n' ' ')" \
    "RTRACK_RUN_DB=$T/other.db RTRACK_RUN_ID=$(q other.db 'SELECT max(id) FROM runs') "
check "the probe variable reached the job" "$(grep -c '^RT_JOB_ENV_PROBE=a value with spaces' viartrack.env)" 1
unset RT_JOB_ENV_PROBE

# --- RTRACK_KEEP_TOKEN_IN_JOB=1 keeps it (a job that talks to Sentinel itself); 0 is the default
rm -f job.env child.env
SENTINEL_API_TOKEN=$TOKEN RTRACK_KEEP_TOKEN_IN_JOB=1 "$RTRACK" run --quiet --db keep.db -- sh -c "$job"
check "keep=1: the job's exit code" "$?" 0
check "keep=1: the job sees the token" "$(grep -c "^SENTINEL_API_TOKEN=$TOKEN\$" job.env)" 1
check "keep=1: and its child" "$(grep -c "^SENTINEL_API_TOKEN=$TOKEN\$" child.env)" 1
check "keep=1: rtrack streamed" "$(q keep.db "SELECT finished_at IS NOT NULL FROM uploads")" 1
rm -f job.env
SENTINEL_API_TOKEN=$TOKEN RTRACK_KEEP_TOKEN_IN_JOB=0 "$RTRACK" run --quiet --db keep0.db -- sh -c "$job"
check "keep=0: the job does not see the token" "$(grep -c '^SENTINEL_API_TOKEN=' job.env)" 0

# --- an invalid value is a usage error before anything starts
rm -f job.env
SENTINEL_API_TOKEN=$TOKEN RTRACK_KEEP_TOKEN_IN_JOB=yes "$RTRACK" run --db bad.db -- sh -c "$job" 2>bad.err
check "keep=yes: exit 2" "$?" 2
check "keep=yes: says why" "$(cat bad.err)" \
    "rtrack: run: invalid RTRACK_KEEP_TOKEN_IN_JOB 'yes': expected 1 (keep SENTINEL_API_TOKEN in the job's environment) or 0"
check "keep=yes: the job did not start" "$([ -e job.env ] && echo started || echo no)" no
check "keep=yes: no database created" "$([ -e bad.db ] && echo created || echo no)" no

# --- without a token nothing changes, and record (no job) ignores the variable
"$RTRACK" run --quiet --db none.db -- sh -c 'env >none.env'
check "no token: exit 0" "$?" 0
check "no token: no token in the job's environment" "$(grep -c '^SENTINEL_API_TOKEN=' none.env)" 0
RTRACK_KEEP_TOKEN_IN_JOB=1 "$RTRACK" record --quiet --db rec.db --duration 0.2 --interval 0.1
check "record: the variable is accepted (no job to give it to)" "$?" 0

finish
