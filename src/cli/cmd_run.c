/* cmd_run.c - `rtrack run [options] -- CMD [ARGS...]`: start the job, track its whole tree,
 * record, exit with the job's status. The recording itself is record/loop.h's; this file turns
 * the options into it and says how the job ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_recording.h"
#include "run_end.h"
#include "rtrack/base/log.h"
#include "rtrack/cli/cmd.h"

static int cmd_run(struct cmd_ctx *cc);

const struct cmd_def cmd_run_def = {
    .name = "run",
    .fn = cmd_run,
    .summary = "run a command, record it, its process tree and the system",
    .synopsis = "[options] [--] CMD [ARGS...]",
    .description = "Run CMD, track its whole process tree and the system, record every sample\n"
                   "into a SQLite database, and exit with CMD's exit status. CMD gets the run's\n"
                   "id and the database's absolute path in RTRACK_RUN_ID and RTRACK_RUN_DB.",
    .opts = rt_config_opts,
    .face = RT_FACE_RUN,
    .layered = 1,
    .epilog = rt_config_epilog,
};

static int cmd_run(struct cmd_ctx *cc)
{
    const struct rt_env *env = cc->env;
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_RUN, cc->argc, cc->argv);
    if (rc != 0)
        return rc < 0 ? RT_EXIT_OK : rc;
    rt_log_quiet(cfg.quiet);

    char *cmd_json = cmd_argv_json(cfg.command, cfg.ncommand);
    struct cmd_recording c;
    int exit_code = RT_EXIT_RUN_FAILED, job_signal = 0;
    if (cmd_recording_check(&c, &cfg, env, "run") != 0)
        exit_code = RT_EXIT_USAGE;
    else if (cmd_recording_open(&c, &cfg, env, "run", cmd_json, 0) == 0) {
        struct rt_record_result res;
        rt_record(&c.loop, &res);
        cmd_recording_finish(&c, env);
        exit_code = res.exit_code;
        job_signal = res.signal != RT_NA ? (int)res.signal : 0;
        if (res.started)
            cmd_run_end(c.store, c.run_id, &cfg, &res); /* the end-of-run line: run_end.c */
    }
    cmd_recording_close(&c);
    free(cmd_json);
    rt_config_free(&cfg);
    return cmd_exit_as_job(exit_code, job_signal);
}
