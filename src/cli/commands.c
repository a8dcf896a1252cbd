/* commands.c - the command table: every command of rtrack, in `rtrack --help`'s order. Each
 * row is defined beside the command's code (cmd_NAME.c: its name, function, summary, help and
 * options), the way tmux and git keep theirs; help, the man page's checks and the completions'
 * test all follow this table. */
#include <stddef.h>

#include "rtrack/cli/cmd.h"

const struct cmd_def *const cmd_table[] = {
    &cmd_run_def,    &cmd_record_def, &cmd_export_def, &cmd_runs_def, &cmd_summary_def,
    &cmd_report_def, &cmd_upload_def, &cmd_merge_def,  NULL,
};
