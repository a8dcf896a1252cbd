#!/usr/bin/env bash
# Options from the command line, the environment and the TOML config file: metadata and tags
# land in runs/run_tags, precedence is CLI > env > TOML > default, TRACKER_QUIET parsing, and
# config file errors are reported with FILE:LINE and exit 2.
. "$(dirname "$0")/lib.sh" "$1"

META_COLS="job_name project_name stage_name task_name team env language orchestrator executor external_run_id container_image"
# the last run's value of COLUMN in DB
runcol() { q "$1" "SELECT $2 FROM runs ORDER BY id DESC LIMIT 1"; }
# the last run's tags as key=value;... in position order
tags() { q "$1" "SELECT group_concat(key || '=' || value, ';') FROM (SELECT key, value FROM run_tags WHERE run_id = (SELECT max(id) FROM runs) ORDER BY position)"; }

# --- every metadata flag is stored in its runs column
"$RTRACK" run --quiet --db cli.db --job-name 'job one' --project-name proj --stage-name build \
    --task-name compile --team infra --env staging --language c --orchestrator airflow \
    --executor k8s --external-run-id ext-42 --container-image 'img:1.0' -- true
check "CLI metadata: exit 0" "$?" 0
i=0
for v in 'job one' proj build compile infra staging c airflow k8s ext-42 'img:1.0'; do
    i=$((i + 1))
    c=$(echo $META_COLS | cut -d' ' -f$i)
    check "CLI metadata: runs.$c" "$(runcol cli.db "$c")" "$v"
done
check "CLI metadata: short -n is --job-name" \
    "$("$RTRACK" run -q -d short.db -n shorty -- true && runcol short.db job_name)" shorty
"$RTRACK" run -q -d none.db -- true
check "no metadata given: every metadata column is NULL, no tags" \
    "$(q none.db "SELECT count(*) FROM runs WHERE $(for c in $META_COLS; do printf '%s IS NULL AND ' "$c"; done) 1"):$(q none.db "SELECT count(*) FROM run_tags")" "1:0"

# --- tags: stored in run_tags in the order given, a repeated key keeps its first position
"$RTRACK" run --quiet --db tags.db --tag zeta=1 --tag alpha=two -t 'mid=a b=c' --tag zeta=3 -- true
check "CLI tags: order, '=' in values, later value of a repeated key" "$(tags tags.db)" "zeta=3;alpha=two;mid=a b=c"
check "CLI tags: positions 0..n-1" "$(q tags.db "SELECT group_concat(position, ',') FROM (SELECT position FROM run_tags ORDER BY position)")" "0,1,2"

# --- the TRACKER_* environment
i=0
envs=""
for c in $META_COLS; do
    i=$((i + 1))
    envs="$envs TRACKER_$(echo "$c" | tr a-z A-Z)=env-$i"
done
env $envs TRACKER_TAGS='k1=v1,k2=v=2,k3=' "$RTRACK" run --quiet --db env.db -- true
check "env metadata: exit 0" "$?" 0
i=0
for c in $META_COLS; do
    i=$((i + 1))
    check "env metadata: TRACKER_$(echo "$c" | tr a-z A-Z) -> runs.$c" "$(runcol env.db "$c")" "env-$i"
done
check "env TRACKER_TAGS: comma-separated, in order" "$(tags env.db)" "k1=v1;k2=v=2;k3="
RTRACK_DB=envdb.db RTRACK_INTERVAL=0.25 "$RTRACK" run --quiet -- true
check "env RTRACK_DB: database created there" "$([ -f envdb.db ] && [ ! -e rtrack.db ] && echo yes)" yes
check "env RTRACK_INTERVAL: runs.requested_interval_s" "$(runcol envdb.db requested_interval_s)" 0.25
TRACKER_TAGS='novalue' "$RTRACK" run --quiet --db badtag.db -- true 2>badtag.err
check "env TRACKER_TAGS without '=': exit 2" "$?" 2
check "env TRACKER_TAGS without '=': names the variable" "$(grep -c TRACKER_TAGS badtag.err)" 1

# --- the TOML config file: [job], [tracker], [tags]
cat >full.toml <<'EOF'
# all sections
[job]
name = "toml-job"
project_name = 'toml-proj'
stage_name = "st\u00e9"   # unicode escape
task_name = "t"
team = "toml-team"
env = "prod"
language = "rust"
orchestrator = "slurm"
executor = "local"
external_run_id = "r-7"
container_image = "debian:12"
pid = 1            # record only: ignored by run

[tracker]
interval_secs = 0.2
db = "toml.db"
quiet = true

[tags]
first = "1"
second = "2"
EOF
"$RTRACK" run --config full.toml -- true 2>full.err
check "TOML: exit 0" "$?" 0
check "TOML [tracker] db: database created there" "$([ -f toml.db ] && echo yes)" yes
check "TOML [tracker] quiet: no note" "$(wc -c <full.err)" 0
check "TOML [tracker] interval_secs: runs.requested_interval_s" "$(runcol toml.db requested_interval_s)" 0.2
check "TOML [job]: all metadata" \
    "$(runcol toml.db "job_name || '|' || project_name || '|' || stage_name || '|' || task_name || '|' || team || '|' || env || '|' || language || '|' || orchestrator || '|' || executor || '|' || external_run_id || '|' || container_image")" \
    "toml-job|toml-proj|sté|t|toml-team|prod|rust|slurm|local|r-7|debian:12"
check "TOML [job] pid is ignored by run: runs.pid is the job" "$(runcol toml.db "pid > 1 AND pid = (SELECT DISTINCT proc_root_pid FROM samples)")" 1
check "TOML [tags]: in file order" "$(tags toml.db)" "first=1;second=2"
printf '[tracker]\ninterval_secs = 3\n' >int.toml
"$RTRACK" run --quiet --db int.db --config int.toml -- true
check "TOML integer interval_secs" "$(runcol int.db requested_interval_s)" 3.0
printf '[tracker]\ninterval_secs = 1_0\n' >under.toml
"$RTRACK" run --quiet --db under.db --config under.toml -- true 2>under.err
check "TOML number with '_' separators (1_0 = 10) accepted" "$?" 0
check "TOML number with '_' separators: runs.requested_interval_s" "$(runcol under.db requested_interval_s 2>/dev/null)" 10.0
# ./rtrack.toml is read by default, RTRACK_CONFIG names another file, --config beats both
mkdir def && (cd def && printf '[job]\nname = "from-default"\n' >rtrack.toml &&
    printf '[job]\nname = "from-env-config"\n' >other.toml &&
    printf '[job]\nname = "from-cli-config"\n' >cli.toml &&
    "$RTRACK" run -q -d d.db -- true &&
    RTRACK_CONFIG=other.toml "$RTRACK" run -q -d d.db -- true &&
    RTRACK_CONFIG=other.toml "$RTRACK" run -q -d d.db --config cli.toml -- true)
check "config: ./rtrack.toml read by default, RTRACK_CONFIG, then --config" \
    "$(q def/d.db "SELECT group_concat(job_name, ',') FROM (SELECT job_name FROM runs ORDER BY id)")" \
    "from-default,from-env-config,from-cli-config"
mkdir nodef && (cd nodef && "$RTRACK" run -q -- true)
check "config: no ./rtrack.toml is fine" "$?:$(runcol nodef/rtrack.db job_name)" "0:"

# --- precedence: CLI > env > TOML > default
cat >prec.toml <<'EOF'
[job]
name = "toml-name"
team = "toml-team"
env = "toml-env"
[tracker]
interval_secs = 0.3
[tags]
a = "toml"
b = "toml"
c = "toml"
EOF
TRACKER_JOB_NAME=env-name TRACKER_TEAM=env-team RTRACK_INTERVAL=0.4 TRACKER_TAGS='b=env,c=env,d=env' \
    "$RTRACK" run --quiet --db prec.db --config prec.toml --job-name cli-name --interval 0.5 --tag c=cli --tag e=cli -- true
check "precedence: job_name CLI > env > TOML" "$(runcol prec.db job_name)" cli-name
check "precedence: team env > TOML" "$(runcol prec.db team)" env-team
check "precedence: env TOML only" "$(runcol prec.db env)" toml-env
check "precedence: interval CLI > env > TOML" "$(runcol prec.db requested_interval_s)" 0.5
check "precedence: tags merged by key, higher precedence wins" "$(tags prec.db)" "a=toml;b=env;c=cli;d=env;e=cli"
RTRACK_INTERVAL=0.4 "$RTRACK" run --quiet --db prec2.db --config prec.toml -- true
check "precedence: interval env > TOML" "$(runcol prec2.db requested_interval_s)" 0.4
"$RTRACK" run --quiet --db prec3.db -- true
check "precedence: interval default 1" "$(runcol prec3.db requested_interval_s)" 1.0

# --- TRACKER_QUIET: 1/yes/on/true suppress the note, 0/no/off/false do not, others are errors
for v in 1 yes on true TRUE; do
    TRACKER_QUIET=$v "$RTRACK" run --db quiet.db -- true 2>q.err
    check "TRACKER_QUIET=$v: no note" "$?:$(wc -c <q.err)" "0:0"
done
for v in 0 no off false; do
    TRACKER_QUIET=$v "$RTRACK" run --db quiet.db -- true 2>q.err
    check "TRACKER_QUIET=$v: the note" "$?:$(grep -c "^rtrack: run [0-9]* 'true' exited 0" q.err)" "0:1"
done
TRACKER_QUIET=0 "$RTRACK" run --quiet --db quiet.db -- true 2>q.err
check "--quiet beats TRACKER_QUIET=0" "$(wc -c <q.err)" 0
printf '[tracker]\nquiet = true\n' >quiet.toml
TRACKER_QUIET=off "$RTRACK" run --config quiet.toml --db quiet.db -- true 2>q.err
check "TRACKER_QUIET=off beats TOML quiet = true" "$(wc -l <q.err)" 1
TRACKER_QUIET=maybe "$RTRACK" run --db quietbad.db -- touch ran.quiet 2>q.err
check "TRACKER_QUIET=maybe: exit 2" "$?" 2
check "TRACKER_QUIET=maybe: names the variable" "$(grep -c "TRACKER_QUIET" q.err)" 1
check "TRACKER_QUIET=maybe: no database, job not run" "$(ls quietbad.db ran.quiet 2>/dev/null | wc -l)" 0

# --- config file errors: exit 2, FILE:LINE on stderr, no database, job not run
# toml_error NAME LINE TOML_TEXT
toml_error() {
    printf '%b' "$3" >"$1.toml"
    "$RTRACK" run --db "$1.db" --config "$1.toml" -- touch "$1.ran" 2>"$1.err"
    check "TOML $1: exit 2" "$?" 2
    check "TOML $1: stderr names $1.toml:$2" "$(grep -c "^rtrack: .*$1.toml:$2: " "$1.err")" 1
    check "TOML $1: no database, job not run" "$(ls "$1.db" "$1.ran" 2>/dev/null | wc -l)" 0
}
toml_error syntax 3 '[job]\nname = "ok"\nteam = "unterminated\n'
toml_error noquote 2 '[job]\nname = bare\n'
toml_error unknownkey 4 '[job]\nname = "x"\n[tracker]\nintervall_secs = 1\n'
toml_error unknowntable '[23]' '# comment\n[trackr]\ninterval_secs = 1\n'
toml_error toplevel 1 'name = "x"\n'
toml_error emptytable 2 '# a misspelt table without keys is still unknown\n[trackr]\n'
toml_error wrongtype 2 '[tracker]\ninterval_secs = "fast"\n'
toml_error wrongbool 3 '[tracker]\n\nquiet = "yes"\n'
toml_error wrongstr 2 '[job]\nname = 5\n'
toml_error badinterval 2 '[tracker]\ninterval_secs = 0\n'
toml_error duplicate 3 '[job]\nname = "a"\nname = "b"\n'
toml_error array 2 '[tags]\nlist = [1, 2]\n'
"$RTRACK" run --db missing.db --config missing.toml -- touch missing.ran 2>missing.err
check "--config missing.toml: exit 2" "$?" 2
check "--config missing.toml: names the file" "$(grep -c "missing.toml" missing.err)" 1
check "--config missing.toml: no database, job not run" "$(ls missing.db missing.ran 2>/dev/null | wc -l)" 0
RTRACK_CONFIG=missing.toml "$RTRACK" run --db missing.db -- touch missing.ran 2>missing.err
check "RTRACK_CONFIG=missing.toml: exit 2" "$?" 2

# --- record stores metadata and tags the same way
TRACKER_TEAM=rec-team "$RTRACK" record --quiet --db rec.db --duration 0.2 --interval 0.1 --job-name rec --tag r=1
check "record: metadata and tags" "$(runcol rec.db "job_name || ',' || team || ',' || mode"),$(tags rec.db)" "rec,rec-team,record,r=1"

finish
