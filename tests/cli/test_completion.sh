#!/usr/bin/env bash
# The bash completion: subcommands, options per subcommand (exactly those of the command's option
# table, as `rtrack help --options CMD` lists them: the table the help and the parsing read),
# each option's values where the table has them, the options that take a value,
# --format values per subcommand, the job's command line after `run`, *.db files for --db, run
# ids and job names from the database on the line (--db FILE, --db=FILE, -dFILE, $RTRACK_DB),
# and --opt=value forms.
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
check "live output formats" "$(complete_words rtrack run --format '')" "csv json python-csv rust-csv system-csv"
check "export tables" "$(complete_words rtrack export --table '')" "combined process system"
check "runs formats" "$(complete_words rtrack runs --format '')" "csv jsonl table"
check "--format=VALUE" "$(complete_words rtrack export --format = '')" "csv jsonl"
check "--format=PREFIX" "$(complete_words rtrack summary --format = m)" "markdown"
check "options again after a flag" "$(complete_words rtrack summary --recommend-server --f)" "--format"
# a real database: two runs of job train, one of etl
"$RTRACK" record --quiet --db ids.db --duration 0.1 -n train --external-run-id ci-7 &&
    "$RTRACK" record --quiet --db ids.db --duration 0.1 -n etl --external-run-id ci-8 &&
    "$RTRACK" record --quiet --db ids.db --duration 0.1 -n train
check "recorded three runs" "$(q ids.db 'SELECT count(*) FROM runs')" 3
check "--run completes run ids from --db" "$(complete_words rtrack export --db ids.db --run '')" "1 2 3 latest"
check "--run: ids of that prefix" "$(complete_words rtrack report --db ids.db --run 2)" "2"
check "--run: --db=FILE" "$(complete_words rtrack summary --db = ids.db --run '')" "1 2 3 latest"
check "--run: -dFILE" "$(complete_words rtrack upload -dids.db -r '')" "1 2 3 latest"
check "--run: no database, only latest" "$(complete_words rtrack export --run '')" "latest"
check "--run: no database file is created" "$(ls rtrack.db 2>/dev/null | wc -l)" 0
check "--run: \$RTRACK_DB" "$(RTRACK_DB=ids.db complete_words rtrack export --run '')" "1 2 3 latest"
check "--run: --db wins over \$RTRACK_DB" "$(RTRACK_DB=nothere.db complete_words rtrack export -d ids.db --run '')" "1 2 3 latest"
check "summary --job: job names from --db" "$(complete_words rtrack summary --db ids.db --job '')" "etl train"
check "summary -j: prefix" "$(complete_words rtrack summary -d ids.db -j t)" "train"
check "--external-run-id: the ids of --db" "$(complete_words rtrack export --db ids.db --external-run-id '')" "ci-7 ci-8"
check "runs --external-run-id: the ids of --db" "$(complete_words rtrack runs --db ids.db --external-run-id ci-)" "ci-7 ci-8"
check "run --external-run-id: any id, none offered" "$(complete_words rtrack run --db ids.db --external-run-id '')" ""
check "run --summary-format values" "$(complete_words rtrack run --summary-format '')" "json markdown text"
check "help topics" "$(complete_words rtrack help re)" "record report"
check "run options" "$(complete_words rtrack run --in)" "--interval"
check "record-only option" "$(complete_words rtrack record --du)" "--duration"
check "run has no --pid" "$(complete_words rtrack run --pi)" ""
check "no completion for a value" "$(complete_words rtrack run --job-name '')" ""
touch a.db b.db notes.txt; mkdir sub
check "--db offers databases and directories" "$(complete_words rtrack record --db '')" \
    "a.db b.db ids.db sub/"
check "--db=FILE offers databases" "$(complete_words rtrack export --db = a)" "a.db"
check "run --run-id-file offers files" "$(complete_words rtrack run --run-id-file not)" "notes.txt"
check "command after --" "$(complete_words rtrack run -- trueXX)" ""
check "command name after --" "$(complete_words rtrack run -q -- bas | grep -o -w bash | head -1)" "bash"
check "command name after options" \
    "$(complete_words rtrack run --interval 0.5 -n x bas | grep -o -w bash | head -1)" "bash"
check "files as the job's arguments" "$(complete_words rtrack run sh no)" "notes.txt"
pid=$$
check "--pid offers pids" "$(complete_words rtrack record --pid "$pid" | grep -o -w "$pid" | head -1)" "$pid"

# --- against the option tables: `rtrack help --options CMD` lists each option as
# "--LONG<TAB>-S<TAB>ARG<TAB>VALUES" (src/cli/opt.c, rt_opt_list) ------------------------------
# table_opts CMD : the long options of CMD's table, sorted, on one line
table_opts() { "$RTRACK" help --options "$1" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'; }
# table_rows CMD : its rows, the fields separated by ';' (a tab is blank to read, which would
# merge the empty fields)
table_rows() { "$RTRACK" help --options "$1" | tr '\t' ';'; }
ln -s "$RTRACK" resource-tracker
COMMANDS=$("$RTRACK" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
for cmd in $COMMANDS resource-tracker; do
    want=$(table_opts "$cmd")
    [ -n "$want" ] && pass "$cmd: its table lists options" || fail "$cmd: its table lists options"
    if [ "$cmd" = resource-tracker ]; then
        check "$cmd: the options of its table" "$(complete_words resource-tracker --)" "$want"
    else
        check "$cmd: the options of its table" "$(complete_words rtrack "$cmd" --)" "$want"
    fi
    # each option's values (an enum's, a list's words), exactly; and every option that takes a
    # value is known as one (a flag is not), so what follows it is not taken for the job
    while IFS=';' read -r long short arg values; do
        if [ -n "$values" ]; then
            want=$(tr ' ' '\n' <<<"$values" | sort | tr '\n' ' ' | sed 's/ $//')
            if [ "$cmd" = resource-tracker ]; then
                got=$(complete_words resource-tracker "$long" '')
            else
                got=$(complete_words rtrack "$cmd" "$long" '')
            fi
            check "$cmd $long: the values of its table" "$got" "$want"
        fi
        if [ -n "$arg" ]; then
            _rtrack_takes_value "$long" && pass "$cmd $long takes a value" ||
                fail "$cmd $long takes a value: not in _rtrack_takes_value"
        else
            _rtrack_takes_value "$long" && fail "$cmd $long is a flag: in _rtrack_takes_value" ||
                pass "$cmd $long is a flag"
        fi
    done < <(table_rows "$cmd")
done
# resource-tracker, rtrack's second name: the job from the first word
check "resource-tracker: --format values" "$(complete_words resource-tracker -f '')" "csv json python-csv rust-csv system-csv"
check "resource-tracker: a command name first" "$(complete_words resource-tracker bas | grep -o -w bash | head -1)" "bash"
check "resource-tracker: a command name after --" \
    "$(complete_words /usr/bin/resource-tracker -i 2 -- bas | grep -o -w bash | head -1)" "bash"
check "resource-tracker: the job's arguments are files" "$(complete_words resource-tracker sh no)" "notes.txt"
check "rtrack --pid at the top" "$(complete_words rtrack --pi)" "--pid"
finish
