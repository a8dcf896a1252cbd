#!/usr/bin/env bash
# The zsh (completions/_rtrack) and fish (completions/rtrack.fish) completions: subcommands,
# options per subcommand (exactly those of the command's option table, `rtrack help --options
# CMD`, which its --help and its parsing read too), every option's values where the table has
# them (--format, --table, --status), *.db
# files for --db, run ids and job names from the database on the line (or $RTRACK_DB), the job's
# command line after `run`. zsh is driven for real: an
# interactive zsh under zpty gets the line typed and TAB, with compadd wrapped to log every
# match it adds; fish answers `complete -C LINE`. A shell that is not installed is skipped.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh" "$1"
COMPDIR=$(cd "$HERE/../../completions" && pwd)

touch a.db b.db notes.txt c.toml; mkdir sub
"$RTRACK" record --quiet --db ids.db --duration 0.1 -n train --external-run-id ci-7 &&
    "$RTRACK" record --quiet --db ids.db --duration 0.1 -n etl --external-run-id ci-8
# table_opts CMD : the long options of CMD's table, sorted, on one line
table_opts() { "$RTRACK" help --options "$1" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'; }
# table_values CMD : "--LONG VALUE..." (sorted) for each option of CMD's table that has values
table_values() {
    "$RTRACK" help --options "$1" | awk -F'\t' '$4 != "" {
        n = split($4, v, " "); s = ""
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        for (i = 1; i <= n; i++) s = s (i > 1 ? " " : "") v[i]
        print $1 "\t" s }'
}
COMMANDS=$("$RTRACK" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
# check_tables SHELL COMPLETE : every command's options, and each option's values, as the
# function COMPLETE (a line in, the completions out) offers them, against the tables
check_tables() {
    local sh=$1 complete=$2 cmd long values
    for cmd in $COMMANDS; do
        check "$sh: $cmd: the options of its table" "$($complete "rtrack $cmd --")" "$(table_opts "$cmd")"
        while IFS=$'\t' read -r long values; do
            check "$sh: $cmd $long: the values of its table" "$($complete "rtrack $cmd $long ")" "$values"
        done < <(table_values "$cmd")
    done
}

# --- fish ---------------------------------------------------------------------------------
if command -v fish >/dev/null 2>&1; then
    check_cmd "fish: rtrack.fish parses" fish -n "$COMPDIR/rtrack.fish"
    # fish_complete LINE : the completions fish offers for LINE, sorted, on one line
    # (an rtrack.fish installed on the machine is kept out of fish's autoload path: only the
    # file under test answers)
    fish_complete() {
        fish -c 'set -l p; for d in $fish_complete_path; test -e $d/rtrack.fish; or set -a p $d; end
                 set fish_complete_path $p; source $argv[1]; complete -C $argv[2]' \
            "$COMPDIR/rtrack.fish" "$1" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'
    }
    check "fish: subcommands" "$(fish_complete 'rtrack ')" "export help merge record report run runs summary upload"
    check "fish: subcommand prefix" "$(fish_complete 'rtrack ex')" "export"
    check "fish: export formats" "$(fish_complete 'rtrack export --format ')" "csv jsonl"
    check "fish: export tables" "$(fish_complete 'rtrack export --table ')" "combined process system"
    check "fish: export options" "$(fish_complete 'rtrack export --')" \
        "--db --external-run-id --format --help --output --run --since --slurm-job --table --until"
    check "fish: summary formats" "$(fish_complete 'rtrack summary --format ')" "json markdown text"
    check "fish: runs formats" "$(fish_complete 'rtrack runs --format ')" "csv jsonl table"
    check "fish: live output formats" "$(fish_complete 'rtrack run --format ')" "csv json python-csv rust-csv system-csv"
    check "fish: upload options" "$(fish_complete 'rtrack upload --')" "--all --db --dry-run --external-run-id --help --run"
    check "fish: help topics" "$(fish_complete 'rtrack help re')" "record report"
    check "fish: record-only option" "$(fish_complete 'rtrack record --du')" "--duration"
    check "fish: run has no --pid" "$(fish_complete 'rtrack run --pi')" ""
    check "fish: no completion for a value" "$(fish_complete 'rtrack run --job-name ')" ""
    check "fish: --run completes run ids from --db" "$(fish_complete 'rtrack export --db ids.db --run ')" \
        "1 2 latest"
    check "fish: --run without --db reads rtrack.db" "$(fish_complete 'rtrack summary --run ')" "latest"
    check "fish: --run: \$RTRACK_DB" "$(RTRACK_DB=ids.db fish_complete 'rtrack export --run ')" "1 2 latest"
    check "fish: --run: --db=FILE" "$(fish_complete 'rtrack report --db=ids.db --run ')" "1 2 latest"
    check "fish: summary --job: job names from --db" "$(fish_complete 'rtrack summary -d ids.db --job ')" "etl train"
    check "fish: --external-run-id: the ids of --db" "$(fish_complete 'rtrack upload -d ids.db --external-run-id ')" "ci-7 ci-8"
    check "fish: run --summary-format values" "$(fish_complete 'rtrack run --summary-format ')" "json markdown text"
    check "fish: --run reads no missing database into being" "$(ls rtrack.db 2>/dev/null | wc -l)" 0
    check_tables fish fish_complete
    # the options that take a value, where the job's command line starts after them (run and
    # resource-tracker): exactly those with a value in the tables of run, record and
    # resource-tracker
    for cmd in run record resource-tracker; do
        while IFS=';' read -r long short arg _; do
            for o in $long $short; do
                got=$(fish -c 'source $argv[1]; __rtrack_takes_value $argv[2]; and echo value; or echo flag' \
                    "$COMPDIR/rtrack.fish" "$o")
                check "fish: $cmd $o: $([ -n "$arg" ] && echo takes a value || echo is a flag)" "$got" \
                    "$([ -n "$arg" ] && echo value || echo flag)"
            done
        done < <("$RTRACK" help --options "$cmd" | tr '\t' ';') # (tabs would merge empty fields)
    done
    check "fish: --db offers databases and directories" "$(fish_complete 'rtrack record --db ')" \
        "a.db b.db ids.db sub/"
    check "fish: --config offers .toml files" "$(fish_complete 'rtrack run --config ')" "c.toml sub/"
    check "fish: command name after --" \
        "$(fish_complete 'rtrack run -q -- bas' | grep -o -w bash | head -1)" "bash"
    check "fish: command name after options" \
        "$(fish_complete 'rtrack run --interval 0.5 -n x bas' | grep -o -w bash | head -1)" "bash"
    check "fish: files as the job's arguments" "$(fish_complete 'rtrack run cat no')" "notes.txt"
    check "fish: no rtrack options in the job" "$(fish_complete 'rtrack run -- cat --inter')" ""
    pid=$$
    check "fish: --pid offers pids" \
        "$(fish_complete "rtrack record --pid $pid" | grep -o -w "$pid" | head -1)" "$pid"
    # resource-tracker.fish, rtrack's second name, with rtrack.fish's functions
    check_cmd "fish: resource-tracker.fish parses" fish -n "$COMPDIR/resource-tracker.fish"
    rt_fish() {
        fish -c 'source $argv[1]; source $argv[2]; complete -C $argv[3]' "$COMPDIR/rtrack.fish" \
            "$COMPDIR/resource-tracker.fish" "$1" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//'
    }
    check "fish: resource-tracker --format values" "$(rt_fish 'resource-tracker -f ')" "csv json python-csv rust-csv system-csv"
    check "fish: resource-tracker --version" "$(rt_fish 'resource-tracker --vers')" "--version"
    check "fish: resource-tracker: the options of its table" "$(rt_fish 'resource-tracker --')" \
        "$(table_opts resource-tracker)"
    check "fish: resource-tracker: a command name first" \
        "$(rt_fish 'resource-tracker bas' | grep -o -w bash | head -1)" "bash"
    check "fish: resource-tracker: no options in the job" "$(rt_fish 'resource-tracker -- cat --inter')" ""
else
    skip "fish completion: fish is not installed"
fi

# --- zsh ----------------------------------------------------------------------------------
if command -v zsh >/dev/null 2>&1 && zsh -f -c 'zmodload zsh/zpty' 2>/dev/null; then
    check_cmd "zsh: _rtrack parses" zsh -n "$COMPDIR/_rtrack"
    export ZT_DIR=$T ZT_COMPDIR=$COMPDIR
    cat >zt-setup.zsh <<'ZSH'
exec 2>>$ZT_DIR/zt-stderr
PS1='' RPROMPT=''
fpath=($ZT_COMPDIR $fpath)
autoload -U compinit && compinit -u -d $ZT_DIR/zt-compdump
bindkey '^I' complete-word
zstyle ':completion:*' list-prompt ''
LISTMAX=100000
# _pids lists only the terminal's processes by default; the test's shell is not among them
zstyle ':completion:*:processes' command 'ps -e -o pid,args'
# log every match actually added (calls that only compute, with -O/-A/-D, pass through)
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a __hits
    builtin compadd -O __hits "$@"
    (( $#__hits )) && print -rl -- $__hits >>$ZT_OUT
    builtin compadd "$@"
}
_zt_done() { : >>$ZT_OUT.done; }
comppostfuncs=(_zt_done)
: >$ZT_DIR/zt-ready
ZSH
    cat >zt-drive.zsh <<'ZSH'
# zt-drive.zsh LINE : type LINE and TAB into an interactive zsh, print the matches offered
zmodload zsh/zpty || exit 2
export ZT_OUT=$ZT_DIR/zt-out
rm -f $ZT_OUT $ZT_OUT.done $ZT_DIR/zt-ready
zpty zt zsh -f -i
zpty -w zt "source ${(q)ZT_DIR}/zt-setup.zsh"
for i in {1..200}; do [[ -e $ZT_DIR/zt-ready ]] && break; sleep 0.05; done
zpty -w -n zt "$1"$'\t'
for i in {1..200}; do [[ -e $ZT_OUT.done ]] && break; sleep 0.05; done
zpty -d zt
[[ -e $ZT_OUT.done ]] || print -r -- TIMEOUT
[[ -e $ZT_OUT ]] && sort -u $ZT_OUT
rm -f $ZT_OUT $ZT_OUT.done
ZSH
    # zsh_complete LINE : the completions zsh offers for LINE, sorted, on one line
    zsh_complete() { timeout 30 zsh -f zt-drive.zsh "$1" | tr '\n' ' ' | sed 's/ $//'; }
    check "zsh: subcommands" "$(zsh_complete 'rtrack ')" "export help merge record report run runs summary upload"
    check "zsh: subcommand prefix" "$(zsh_complete 'rtrack ex')" "export"
    check "zsh: export formats" "$(zsh_complete 'rtrack export --format ')" "csv jsonl"
    check "zsh: export tables" "$(zsh_complete 'rtrack export --table ')" "combined process system"
    check "zsh: export options" "$(zsh_complete 'rtrack export --')" \
        "--db --external-run-id --format --help --output --run --since --slurm-job --table --until"
    check "zsh: summary formats" "$(zsh_complete 'rtrack summary --format ')" "json markdown text"
    check "zsh: runs formats" "$(zsh_complete 'rtrack runs --format ')" "csv jsonl table"
    check "zsh: live output formats" "$(zsh_complete 'rtrack run --format ')" "csv json python-csv rust-csv system-csv"
    check "zsh: upload options" "$(zsh_complete 'rtrack upload --')" "--all --db --dry-run --external-run-id --help --run"
    check "zsh: help topics" "$(zsh_complete 'rtrack help re')" "record report"
    check "zsh: record-only option" "$(zsh_complete 'rtrack record --du')" "--duration"
    check "zsh: run has no --pid" "$(zsh_complete 'rtrack run --pi')" ""
    check "zsh: resource-tracker --format values" "$(zsh_complete 'resource-tracker -f ')" "csv json python-csv rust-csv system-csv"
    check "zsh: resource-tracker --pid and --version" "$(zsh_complete 'resource-tracker --pi')" "--pid"
    check "zsh: no completion for a value" "$(zsh_complete 'rtrack run --job-name ')" ""
    check "zsh: --pid offers pids" \
        "$(zsh_complete "rtrack record --pid $$" | grep -o -w "$$" | head -1)" "$$"
    check "zsh: --run completes run ids from --db" "$(zsh_complete 'rtrack export --db ids.db --run ')" \
        "1 2 latest"
    check "zsh: --run without --db reads rtrack.db" "$(zsh_complete 'rtrack summary --run ')" "latest"
    check "zsh: --run: \$RTRACK_DB" "$(RTRACK_DB=ids.db zsh_complete 'rtrack export --run ')" "1 2 latest"
    check "zsh: --run: --db=FILE" "$(zsh_complete 'rtrack report --db=ids.db --run ')" "1 2 latest"
    check "zsh: summary --job: job names from --db" "$(zsh_complete 'rtrack summary -d ids.db --job ')" "etl train"
    check "zsh: --external-run-id: the ids of --db" "$(zsh_complete 'rtrack report -d ids.db --external-run-id ')" "ci-7 ci-8"
    check "zsh: run --summary-format values" "$(zsh_complete 'rtrack run --summary-format ')" "json markdown text"
    check_tables zsh zsh_complete
    check "zsh: resource-tracker: the options of its table" "$(zsh_complete 'resource-tracker --')" \
        "$(table_opts resource-tracker)"
    check "zsh: --db offers databases and directories" "$(zsh_complete 'rtrack record --db ')" \
        "a.db b.db ids.db sub"
    check "zsh: --config offers .toml files" "$(zsh_complete 'rtrack run --config ')" "c.toml sub"
    check "zsh: command name after --" \
        "$(zsh_complete 'rtrack run -q -- bas' | grep -o -w bash | head -1)" "bash"
    check "zsh: command name after options" \
        "$(zsh_complete 'rtrack run --interval 0.5 -n x bas' | grep -o -w bash | head -1)" "bash"
    check "zsh: files as the job's arguments" "$(zsh_complete 'rtrack run cat no')" "notes.txt"
    check "zsh: no errors from the completion function" "$(cat zt-stderr 2>/dev/null)" ""
else
    skip "zsh completion: zsh (with the zsh/zpty module) is not installed"
fi
finish
