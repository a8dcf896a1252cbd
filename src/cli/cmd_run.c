/* cmd_run.c - `rtrack run [options] -- CMD [ARGS...]`: start the job, track its whole tree,
 * record, exit with the job's status. The recording itself is record/loop.h's; this file turns
 * the options into it and says how the job ended. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_recording.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/cli/cmd.h"

/* How the job ended, on stderr (one that could not start was said so already). */
static void run_note(const struct cmd_recording *c, const struct rt_config *cfg,
                     const struct rt_record_result *res)
{
    if (res->signal != RT_NA)
        rt_note("run %lld: '%s' killed by signal %d after %.2f s; %lld samples in %s",
                (long long)c->run_id, cfg->command[0], (int)res->signal, res->elapsed,
                (long long)res->stored, cfg->db);
    else
        rt_note("run %lld: '%s' exited with %d after %.2f s; %lld samples in %s",
                (long long)c->run_id, cfg->command[0], res->exit_code, res->elapsed,
                (long long)res->stored, cfg->db);
}

static int cmd_run(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_run_def = {
    .name = "run",
    .fn = cmd_run,
    .summary = "run a command, record it, its process tree and the system",
    .synopsis = "[options] [--] CMD [ARGS...]",
    .description = "Run CMD, track its whole process tree and the system, record every sample\n"
                   "into a SQLite database, and exit with CMD's exit status.",
    .print_opts = rt_config_print_run_opts,
    .epilog = rt_config_epilog,
};

static int cmd_run(int argc, char **argv, const struct rt_env *env)
{
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_RUN, argc, argv);
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
            run_note(&c, &cfg, &res);
    }
    cmd_recording_close(&c);
    free(cmd_json);
    rt_config_free(&cfg);
    /* The job died of a signal: so does rtrack, everything stored, closed and written, so that
     * its parent sees what the job's would have (a shell stops its loop on Ctrl-C only when the
     * child died of SIGINT, not when it exited 130). 128+N where that cannot be done. */
    if (job_signal) {
        fflush(stdout);
        fflush(stderr);
        rt_die_of_signal(job_signal);
    }
    return exit_code;
}
