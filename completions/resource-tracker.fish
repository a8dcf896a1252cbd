# fish completion for resource-tracker, rtrack's second name (the Rust resource-tracker's
# command line): run's and record's options, then the job's command line. Install beside
# rtrack.fish (fish loads a command's completions by its name), whose functions it uses.
if not functions -q __rtrack_live_options
    set -l here (status dirname)
    test -f $here/rtrack.fish; and source $here/rtrack.fish
end
__rtrack_live_options resource-tracker 'not __rtrack_in_job'
complete -c resource-tracker -n 'not __rtrack_in_job' -s p -l pid -x -a '(__fish_complete_pids)' -d 'track this process and its descendants'
complete -c resource-tracker -n 'not __rtrack_in_job' -l duration -x -d 'stop after this many seconds'
complete -c resource-tracker -n 'not __rtrack_in_job' -s V -l version -d 'print the version'
complete -c resource-tracker -n __rtrack_in_job -x -a '(__rtrack_complete_job)'
