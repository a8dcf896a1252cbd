# bash completion for rtrack and resource-tracker (its second name)  -*- shell-script -*-
# Install as share/bash-completion/completions/rtrack and .../resource-tracker, or source it.

_rtrack_opts_common="--interval --db --config --quiet --output --format --job-name --project-name
    --stage-name --task-name --team --env --language --orchestrator --executor --external-run-id
    --container-image --tag --upload-interval --sentinel-url --cloud-discovery --help"
_rtrack_opts_export="--db --run --external-run-id --format --table --output --since --until --slurm-job --help"

_rtrack()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    # --opt=value: '=' is a word of its own in COMP_WORDS (COMP_WORDBREAKS); complete the value
    if [[ $cur == = ]]; then
        cur=""
    elif [[ $prev == = ]] && ((COMP_CWORD > 2)); then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    # resource-tracker: the options of run and record, then the job (from the first word)
    local cmd first=2 i
    if [[ ${COMP_WORDS[0]##*/} == resource-tracker ]]; then
        cmd=resource-tracker first=1
    elif ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "run record export runs summary report upload merge help --help --version --pid" -- "$cur"))
        return
    else
        cmd=${COMP_WORDS[1]}
    fi
    if [[ $cmd == help ]]; then
        ((COMP_CWORD == 2)) && COMPREPLY=($(compgen -W "run record export runs summary report upload merge" -- "$cur"))
        return
    fi
    # run: once the command has started (after -- or the first word that is not an option or
    # an option's value), complete the command and its arguments like any other command line
    if [[ $cmd == run || $cmd == resource-tracker ]]; then
        for ((i = first; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                _rtrack_job $((i + 1))
                return
            fi
            if [[ ${COMP_WORDS[i]} != -* ]] && ! _rtrack_takes_value "${COMP_WORDS[i - 1]}"; then
                _rtrack_job "$i"
                return
            fi
        done
        if [[ $cur != -* ]] && ! _rtrack_takes_value "$prev"; then
            _rtrack_job "$COMP_CWORD"
            return
        fi
    fi
    case $prev in
    --db | -d)
        COMPREPLY=($(compgen -f -X '!*.db' -- "$cur") $(compgen -d -S / -- "$cur"))
        compopt -o nospace 2>/dev/null
        return
        ;;
    --config | -c)
        COMPREPLY=($(compgen -f -X '!*.toml' -- "$cur") $(compgen -d -S / -- "$cur"))
        compopt -o nospace 2>/dev/null
        return
        ;;
    --pid | -p)
        COMPREPLY=($(compgen -W "$(ls /proc | grep -E '^[0-9]+$')" -- "$cur"))
        return
        ;;
    --format | -f)
        case $cmd in
        export) COMPREPLY=($(compgen -W "csv jsonl" -- "$cur")) ;;
        runs) COMPREPLY=($(compgen -W "table csv jsonl" -- "$cur")) ;;
        summary) COMPREPLY=($(compgen -W "text json markdown" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "json csv rust-csv python-csv system-csv" -- "$cur")) ;;
        esac
        return
        ;;
    --table | -t)
        if [[ $cmd == export ]]; then
            COMPREPLY=($(compgen -W "combined system process" -- "$cur"))
            return
        fi
        ;;
    --status)
        [[ $cmd == runs ]] && COMPREPLY=($(compgen -W "finished failed killed running interrupted" -- "$cur"))
        return
        ;;
    --compare | --run | -r)
        # run ids from the database given on the line (or the default one)
        [[ $cmd == run || $cmd == record ]] && return
        COMPREPLY=($(compgen -W "latest $(_rtrack_query 'SELECT id FROM runs')" -- "$cur"))
        return
        ;;
    --job | -j)
        # job names recorded in that database
        if [[ $cmd == summary || $cmd == runs ]]; then
            local IFS=$'\n'
            COMPREPLY=($(compgen -W "$(_rtrack_query 'SELECT DISTINCT job_name FROM runs
                WHERE job_name IS NOT NULL ORDER BY 1')" -- "$cur"))
        fi
        return
        ;;
    --output | -o | --run-id-file)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
    --summary-format)
        COMPREPLY=($(compgen -W "text json markdown" -- "$cur"))
        return
        ;;
    --external-run-id)
        # the readers': external run ids recorded in that database (run and record: any)
        if [[ $cmd != run && $cmd != record && $cmd != resource-tracker ]]; then
            local IFS=$'\n'
            COMPREPLY=($(compgen -W "$(_rtrack_query 'SELECT DISTINCT external_run_id FROM runs
                WHERE external_run_id IS NOT NULL ORDER BY 1')" -- "$cur"))
        fi
        return
        ;;
    --slurm-job)
        COMPREPLY=($(compgen -W "$(_rtrack_query 'SELECT DISTINCT slurm_job_id FROM runs
            WHERE slurm_job_id IS NOT NULL ORDER BY 1')" -- "$cur"))
        return
        ;;
    esac
    _rtrack_takes_value "$prev" && return
    case $cmd in
    run) COMPREPLY=($(compgen -W "$_rtrack_opts_common --summary --summary-format --run-id-file" -- "$cur")) ;;
    record) COMPREPLY=($(compgen -W "$_rtrack_opts_common --pid --cgroup --duration --run-id-file" -- "$cur")) ;;
    resource-tracker) COMPREPLY=($(compgen -W "$_rtrack_opts_common --pid --duration --version" -- "$cur")) ;;
    export) COMPREPLY=($(compgen -W "$_rtrack_opts_export" -- "$cur")) ;;
    runs) COMPREPLY=($(compgen -W "--db --slurm-job --format --job --external-run-id --last --since --status --help" -- "$cur")) ;;
    summary) COMPREPLY=($(compgen -W "--db --run --external-run-id --job --compare --slurm-job --format --recommend-server --help" -- "$cur")) ;;
    upload) COMPREPLY=($(compgen -W "--db --run --external-run-id --all --dry-run --help" -- "$cur")) ;;
    report) COMPREPLY=($(compgen -W "--db --run --external-run-id --output --slurm-job --recommend-server --help" -- "$cur")) ;;
    merge)
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "--slurm-job --quiet --help" -- "$cur"))
        else
            COMPREPLY=($(compgen -f -X '!*.db' -- "$cur") $(compgen -d -S / -- "$cur"))
            compopt -o nospace 2>/dev/null
        fi
        ;;
    esac
}

# the database named on the line (--db FILE, --db=FILE, -dFILE), else $RTRACK_DB, else rtrack.db
_rtrack_db()
{
    local i w db=${RTRACK_DB:-rtrack.db}
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        if [[ $w == --db || $w == -d ]]; then
            db=${COMP_WORDS[i + 1]}
            [[ $db == = ]] && db=${COMP_WORDS[i + 2]}
        elif [[ $w == -d?* ]]; then
            db=${w#-d}
        fi
    done
    printf '%s\n' "${db/#\~/$HOME}"
}

# _rtrack_query SQL : its rows from that database, read-only (nothing when it is not there)
_rtrack_query()
{
    local db
    db=$(_rtrack_db)
    [[ -r $db ]] && command -v sqlite3 >/dev/null && sqlite3 -readonly "$db" "$1" 2>/dev/null
}

# the job's own command line: a command name first, then files
_rtrack_job()
{
    if ((COMP_CWORD == $1)); then
        COMPREPLY=($(compgen -c -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
}

_rtrack_takes_value()
{
    case $1 in
    -i | --interval | -d | --db | -c | --config | -p | --pid | --cgroup | --duration | -n | --job-name | \
        --project-name | --stage-name | --task-name | --team | --env | --language | \
        --orchestrator | --executor | --external-run-id | --container-image | -t | --tag | \
        -o | --output | -f | --format | -r | --run | --table | --since | --until | \
        --upload-interval | --sentinel-url | -j | --job | --last | --status | --compare | \
        --slurm-job | --summary-format | --run-id-file)
        return 0
        ;;
    esac
    return 1
}

complete -F _rtrack rtrack resource-tracker
