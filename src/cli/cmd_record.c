/* cmd_record.c - `rtrack record [options]`: sample the system, and with --pid a process tree,
 * until SIGINT/SIGTERM/SIGHUP (not one nohup ignored)/SIGQUIT, until --duration has passed, or
 * until the tree is gone. The recording itself is record/loop.h's; this file turns the options
 * into it and says how it ended. */
#include "cmd_recording.h"
#include "rtrack/base/log.h"
#include "rtrack/cli/cmd.h"

static int cmd_record(struct cmd_ctx *cc);

const struct cmd_def cmd_record_def = {
    .name = "record",
    .fn = cmd_record,
    .summary = "record the system (and optionally a process tree) to SQLite",
    .synopsis = "[options]",
    .description = "Record the system (and with --pid a process tree) until SIGINT/SIGTERM,\n"
                   "--duration, or until the tracked tree is gone.",
    .opts = rt_config_opts,
    .face = RT_FACE_RECORD,
    .layered = 1,
    .epilog = rt_config_epilog,
};

static int cmd_record(struct cmd_ctx *cc)
{
    const struct rt_env *env = cc->env;
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_RECORD, cc->argc, cc->argv);
    if (rc != 0)
        return rc < 0 ? RT_EXIT_OK : rc;
    rt_log_quiet(cfg.quiet);

    struct cmd_recording c;
    int exit_code = RT_EXIT_FAILURE;
    if (cmd_recording_check(&c, &cfg, env, "record") != 0)
        exit_code = RT_EXIT_USAGE;
    else if (cmd_recording_open(&c, &cfg, env, "record", NULL, cfg.pid) == 0) {
        struct rt_record_result res;
        rt_record(&c.loop, &res);
        cmd_recording_finish(&c, env);
        exit_code = res.failed ? RT_EXIT_FAILURE : RT_EXIT_OK;
        rt_note("run %lld: recorded %lld samples over %.2f s in %s (%s)", (long long)c.run_id,
                (long long)res.stored, res.elapsed, cfg.db, res.reason);
    }
    cmd_recording_close(&c);
    rt_config_free(&cfg);
    return exit_code;
}
