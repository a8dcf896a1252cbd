#!/usr/bin/env bash
# The bash completion: subcommands, options per subcommand, value-taking options, the job's
# command line after `run`, *.db files for --db.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
. "$HERE/../../completions/rtrack.bash" || exit 1

# complete WORDS... : the completions for the last word
complete_words() {
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _rtrack
    printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' ' | sed 's/ $//'
}

check "subcommands" "$(complete_words rtrack r)" "record report run runs"
check "summary subcommand" "$(complete_words rtrack su)" "summary"
check "summary formats" "$(complete_words rtrack summary --format '')" "json markdown text"
check "summary options" "$(complete_words rtrack summary --j)" "--job"
check "export subcommand" "$(complete_words rtrack ex)" "export"
check "export formats" "$(complete_words rtrack export --format '')" "csv jsonl"
check "live output formats" "$(complete_words rtrack run --format '')" "csv json"
check "export tables" "$(complete_words rtrack export --table '')" "combined process system"
"$RTRACK" record --quiet --db ids.db --duration 0.1 && "$RTRACK" record --quiet --db ids.db --duration 0.1
check "--run completes run ids from --db" "$(complete_words rtrack export --db ids.db --run '')" "1 2 latest"
check "help topics" "$(complete_words rtrack help re)" "record report"
check "run options" "$(complete_words rtrack run --in)" "--interval"
check "record-only option" "$(complete_words rtrack record --du)" "--duration"
check "run has no --pid" "$(complete_words rtrack run --pi)" ""
check "no completion for a value" "$(complete_words rtrack run --job-name '')" ""
touch a.db b.db notes.txt; mkdir sub
check "--db offers databases and directories" "$(complete_words rtrack record --db '')" \
    "a.db b.db ids.db sub/"
check "command after --" "$(complete_words rtrack run -- trueXX)" ""
check "command name after --" "$(complete_words rtrack run -q -- bas | grep -o -w bash | head -1)" "bash"
check "command name after options" \
    "$(complete_words rtrack run --interval 0.5 -n x bas | grep -o -w bash | head -1)" "bash"
check "files as the job's arguments" "$(complete_words rtrack run sh no)" "notes.txt"
pid=$$
check "--pid offers pids" "$(complete_words rtrack record --pid "$pid" | grep -o -w "$pid" | head -1)" "$pid"
finish
