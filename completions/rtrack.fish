# fish completion for rtrack. Install as rtrack.fish in a directory on
# $fish_complete_path (for example share/fish/vendor_completions.d), or source it.
# resource-tracker.fish, beside it, completes rtrack's second name with its functions.

# __rtrack_using CMD... : the subcommand on the line (the word after rtrack) is one of CMD
function __rtrack_using
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and contains -- $tokens[2] $argv
end

# options whose value is the next word
function __rtrack_takes_value
    contains -- $argv[1] -i --interval -d --db -c --config -p --pid --cgroup --duration -n --job-name \
        --project-name --stage-name --task-name --team --env --language --orchestrator \
        --executor --external-run-id --container-image -t --tag -o --output -f --format \
        -r --run --table --since --until --upload-interval --sentinel-url -j --job \
        --summary-format --run-id-file
end

# `rtrack run`: print the position (among the words before the cursor plus the word being
# typed) where the job's command line starts: after `--`, or at the first word that is neither
# an option nor an option's value. Fails while still in rtrack's own options.
function __rtrack_job_start
    set -l tokens (commandline -opc)
    set -l i 3
    # resource-tracker (rtrack's second name): the job may start at the first word
    if test (path basename -- $tokens[1]) = resource-tracker
        set i 2
    else
        test (count $tokens) -ge 2; and test "$tokens[2]" = run; or return 1
    end
    set -l n (count $tokens)
    while test $i -le $n
        set -l t $tokens[$i]
        if test "$t" = --
            echo (math $i + 1)
            return 0
        else if string match -q -- '-*' $t
            __rtrack_takes_value $t; and set i (math $i + 1)
        else
            echo $i
            return 0
        end
        set i (math $i + 1)
    end
    # the word being typed: the command, unless it is an option or an option's value
    test $i -eq (math $n + 1); or return 1
    string match -q -- '-*' (commandline -ct); and return 1
    echo $i
end

function __rtrack_in_job
    __rtrack_job_start >/dev/null
end

# complete the job's command line like any other: its command name first, then whatever
# that command's completion offers (files for most)
function __rtrack_complete_job
    set -l start (__rtrack_job_start); or return
    set -l tokens (commandline -opc)
    set -l line
    if test $start -le (count $tokens)
        set line (string escape -- $tokens[$start..-1])
    end
    complete -C (string join -- ' ' $line (commandline -ct))
end

# the database named on the line (--db/-d), else $RTRACK_DB, else rtrack.db
function __rtrack_db
    set -l tokens (commandline -opc)
    set -l db rtrack.db
    set -q RTRACK_DB; and test -n "$RTRACK_DB"; and set db $RTRACK_DB
    set -l n (count $tokens)
    for i in (seq 1 $n)
        switch $tokens[$i]
            case --db -d
                test $i -lt $n; and set db $tokens[(math $i + 1)]
            case '--db=*'
                set db (string replace -- --db= '' $tokens[$i])
            case '-d?*'
                set db (string sub -s 3 -- $tokens[$i])
        end
    end
    string replace -r -- '^~' $HOME $db
end

# __rtrack_query SQL : its rows from that database, read-only (nothing when it is not there)
function __rtrack_query
    set -l db (__rtrack_db)
    test -r "$db"; and command -q sqlite3; or return 0
    sqlite3 -readonly "$db" $argv[1] 2>/dev/null
end

# run ids in that database, plus `latest`
function __rtrack_run_ids
    printf '%s\t%s\n' latest 'the latest run'
    __rtrack_query 'SELECT id FROM runs'
end

# files ending in SUFFIX, and directories, for the word being typed
function __rtrack_files -a suffix
    set -l cur (string replace -r -- '^~' $HOME (commandline -ct))
    for f in $cur*
        if test -d $f
            echo $f/
        else if string match -q -- "*$suffix" $f
            echo $f
        end
    end
end

complete -c rtrack -f

# subcommands
set -l __rtrack_cmds run record export runs summary report upload merge help
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a run -d 'run a command, record it, its process tree and the system'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a record -d 'record the system (and optionally a process tree) to SQLite'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a export -d 'write a run as Python-parity CSV or Rust-compatible JSON Lines'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a runs -d 'list the runs in a database'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a summary -d 'what a run used and what to request next time'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a report -d 'write a run as a self-contained HTML page with charts'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a upload -d 'send recorded runs to Spare Cores Sentinel (gzip CSV on S3)'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a merge -d 'copy the runs of several databases into one'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -a help -d "describe a command's options"
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -s h -l help -d 'show help'
complete -c rtrack -n "not __fish_seen_subcommand_from $__rtrack_cmds" -l version -d 'print the version'

# help TOPIC
complete -c rtrack -n '__rtrack_using help; and test (count (commandline -opc)) -eq 2' \
    -a 'run record export runs summary report upload merge'

# run and record (run: only before the job's command line starts); the same options for
# resource-tracker (resource-tracker.fish): __rtrack_live_options COMMAND CONDITION
function __rtrack_live_options --argument-names cmd live
    complete -c $cmd -n $live -s i -l interval -x -d 'seconds between samples'
    complete -c $cmd -n $live -s d -l db -x -a '(__rtrack_files .db)' -d 'database to record into'
    complete -c $cmd -n $live -s c -l config -x -a '(__rtrack_files .toml)' -d 'TOML config file'
    complete -c $cmd -n $live -s q -l quiet -d 'no metric lines and no end-of-run note'
    complete -c $cmd -n $live -s o -l output -r -F -d 'also write each sample as a line to FILE (- = stdout)'
    complete -c $cmd -n $live -s f -l format -x -a 'json csv rust-csv python-csv system-csv' -d 'format of --output lines'
    complete -c $cmd -n $live -l upload-interval -x -d 'seconds between uploads to Sentinel'
    complete -c $cmd -n $live -l sentinel-url -x -d 'Sentinel API URL'
    complete -c $cmd -n $live -l cloud-discovery -d 'ask the cloud metadata services while recording'
    complete -c $cmd -n $live -s n -l job-name -x -d 'job name'
    complete -c $cmd -n $live -l project-name -x -d 'project name'
    complete -c $cmd -n $live -l stage-name -x -d 'stage name'
    complete -c $cmd -n $live -l task-name -x -d 'task name'
    complete -c $cmd -n $live -l team -x -d team
    complete -c $cmd -n $live -l env -x -d 'environment (prod, staging, ...)'
    complete -c $cmd -n $live -l language -x -d 'language of the job'
    complete -c $cmd -n $live -l orchestrator -x -d 'orchestrator (airflow, slurm, ...)'
    complete -c $cmd -n $live -l executor -x -d executor
    complete -c $cmd -n $live -l external-run-id -x -d 'id of the run in another system'
    complete -c $cmd -n $live -l container-image -x -d 'container image of the job'
    complete -c $cmd -n $live -s t -l tag -x -d 'tag KEY=VALUE, repeatable'
    complete -c $cmd -n $live -s h -l help -d 'show help'
end
__rtrack_live_options rtrack '__rtrack_using run record; and not __rtrack_in_job'
complete -c rtrack -n '__rtrack_using run; and not __rtrack_in_job' -l summary -d "print the run's summary when the job has ended"
complete -c rtrack -n '__rtrack_using run; and not __rtrack_in_job' -l summary-format -x -a 'text json markdown' -d 'the format of --summary (implies it)'
complete -c rtrack -n '__rtrack_using run record; and not __rtrack_in_job' -l run-id-file -r -F -d "write the run's id to FILE as soon as it is known"
complete -c rtrack -n '__rtrack_using record' -s p -l pid -x -a '(__fish_complete_pids)' -d 'track this process and its descendants'
complete -c rtrack -n '__rtrack_using record' -l cgroup -x -d "with --pid: the job's own cgroup"
complete -c rtrack -n '__rtrack_using record' -l duration -x -d 'stop after this many seconds'
# run: the job's command, then its arguments
complete -c rtrack -n __rtrack_in_job -x -a '(__rtrack_complete_job)'

# export, runs, summary, report, upload
set -l stored '__rtrack_using export runs summary report upload'
complete -c rtrack -n $stored -s d -l db -x -a '(__rtrack_files .db)' -d 'database (default rtrack.db)'
complete -c rtrack -n $stored -s h -l help -d 'show help'
complete -c rtrack -n '__rtrack_using export summary report upload' -s r -l run -x -a '(__rtrack_run_ids)' -d 'the run (default latest)'
complete -c rtrack -n $stored -l external-run-id -x -a '(__rtrack_query "SELECT DISTINCT external_run_id FROM runs WHERE external_run_id IS NOT NULL ORDER BY 1")' -d 'the run(s) recorded with --external-run-id ID'

complete -c rtrack -n '__rtrack_using export' -s f -l format -x -a 'csv jsonl' -d 'output format'
complete -c rtrack -n '__rtrack_using export' -s t -l table -x -a 'combined system process' -d 'CSV layout'
complete -c rtrack -n '__rtrack_using export report' -s o -l output -r -F -d 'write to FILE (- = stdout)'
complete -c rtrack -n '__rtrack_using export' -l since -x -d 'samples at or after T (epoch, ISO 8601, +SECONDS)'
complete -c rtrack -n '__rtrack_using export' -l until -x -d 'samples at or before T (epoch, ISO 8601, +SECONDS)'

complete -c rtrack -n '__rtrack_using runs' -s f -l format -x -a 'table csv jsonl' -d 'output format'
complete -c rtrack -n '__rtrack_using export runs summary report' -l slurm-job -x -a '(__rtrack_query "SELECT DISTINCT slurm_job_id FROM runs WHERE slurm_job_id IS NOT NULL ORDER BY 1")' -d 'the runs of this Slurm job'

# merge OUT IN...
complete -c rtrack -n '__rtrack_using merge' -l slurm-job -x -d 'only the runs of this Slurm job'
complete -c rtrack -n '__rtrack_using merge' -s q -l quiet -d 'say nothing on success'
complete -c rtrack -n '__rtrack_using merge' -s h -l help -d 'show help'
complete -c rtrack -n '__rtrack_using merge' -a '(__rtrack_files .db)'
complete -c rtrack -n '__rtrack_using runs' -s j -l job -x -a '(__rtrack_query "SELECT DISTINCT job_name FROM runs WHERE job_name IS NOT NULL ORDER BY 1")' -d 'only the runs of this job name'
complete -c rtrack -n '__rtrack_using runs' -s n -l last -x -d 'only the newest N runs'
complete -c rtrack -n '__rtrack_using runs' -l since -x -d 'only runs started since WHEN (2h, 3d, 2026-11-27)'
complete -c rtrack -n '__rtrack_using runs' -l status -x -a 'finished failed killed running interrupted' -d 'only runs with these statuses'

complete -c rtrack -n '__rtrack_using summary' -s j -l job -x -a '(__rtrack_query "SELECT DISTINCT job_name FROM runs WHERE job_name IS NOT NULL ORDER BY 1")' -d 'every run of this job name together'
complete -c rtrack -n '__rtrack_using summary' -l compare -x -a '(__rtrack_run_ids)' -d 'two runs side by side'
complete -c rtrack -n '__rtrack_using summary' -s f -l format -x -a 'text json markdown' -d 'output format'
complete -c rtrack -n '__rtrack_using summary report' -l recommend-server -d 'cheapest cloud server that fits (Spare Cores Keeper)'

complete -c rtrack -n '__rtrack_using upload' -s a -l all -d 'every finished run not uploaded yet'
complete -c rtrack -n '__rtrack_using upload' -s n -l dry-run -d 'say what would be sent; no network'
