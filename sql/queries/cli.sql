-- The command line's statements (src/cli/): named here, asked for as RT_Q_CLI_NAME
-- (include/rtrack/store/query.h). ?1, ?2, ... are bound by the command.

-- name: run_ends
-- every run's start (epoch) and the signal that ended it, in id order: beside the rows of
-- rt_store_runs(), for `rtrack runs`' filters
SELECT id, started_at, exit_signal FROM runs ORDER BY id
