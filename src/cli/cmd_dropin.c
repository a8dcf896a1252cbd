/* cmd_dropin.c - rtrack called as `resource-tracker` (a second name of the same binary, by
 * argv[0]): the command line of SpareCores' Rust resource-tracker (0.1.14), so scripts written
 * for it run unchanged. `resource-tracker [OPTIONS] [--] CMD...` wraps CMD and exits with its
 * status; with --pid it follows that tree and, the tree gone, goes on sampling the system; with
 * neither it samples the system until SIGINT or SIGTERM. Each sample is a JSON line (or a CSV
 * row, -f csv) on stderr, or in -o FILE. The options, variables and config keys are run's and
 * record's (config.c's table; the Rust tool's are a subset), read with the Rust tool's
 * defaults: resource-tracker.toml, unknown keys warned about, metric lines on stderr.
 *
 * The recording is rtrack's (cmd_recording.c): it needs a database, which the Rust tool does
 * not have. None appears where its users do not expect one: without --db (or RTRACK_DB /
 * TRACKER_DB) it is a private one under $TMPDIR, deleted at exit (docs/usage.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_recording.h"
#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/version.h"

/* The version of the Rust tool whose command line, JSON schema and CSV this one follows. */
#define DROPIN_RUST_VERSION "0.1.14"

static void dropin_help(FILE *out)
{
    fprintf(out,
            "usage: resource-tracker [options] [--] [CMD [ARGS...]]\n\n"
            "rtrack as SpareCores' resource-tracker (%s): run CMD and track it, its\n"
            "process tree and the system, and exit with CMD's status; with --pid track that\n"
            "tree (and go on with the system when it is gone); with neither, track the system\n"
            "until SIGINT or SIGTERM. Each sample is one JSON line (or CSV row) on stderr or\n"
            "in --output. Samples are recorded into a temporary database deleted at exit, or\n"
            "into --db (RTRACK_DB) when given.\n\noptions:\n",
            DROPIN_RUST_VERSION);
    rt_opt_help(out, rt_config_opts, RT_FACE_DROPIN);
    fprintf(out, "\nConfig file: resource-tracker.toml in the working directory, if present\n"
                 "([job] name, pid; [tracker] interval_secs; rtrack's other keys too; unknown\n"
                 "keys are warned about and ignored). Each TRACKER_... variable also has\n"
                 "rtrack's name, RTRACK_..., which wins where both are set. With\n"
                 "SENTINEL_API_TOKEN set, samples are streamed to Spare Cores Sentinel.\n"
                 "As rtrack: rtrack run / rtrack record. See 'coming from resource-tracker-rs'\n"
                 "in docs/usage.md and man rtrack.\n");
}

/* The private database: a directory of its own under $TMPDIR (mode 0700), removed with what
 * SQLite put there. */
struct tmpdb {
    char *dir, *path;
};

static int tmpdb_make(struct tmpdb *t, const struct rt_env *env)
{
    const char *base = env->tmpdir ? env->tmpdir : "/tmp";
    t->dir = xasprintf("%s/resource-tracker.XXXXXX", base);
    if (!mkdtemp(t->dir)) {
        rt_err("cannot create a temporary database in '%s': %s (set TMPDIR, or --db to keep "
               "one)",
               base, rt_strerror(errno));
        free(t->dir);
        t->dir = NULL;
        return -1;
    }
    t->path = xasprintf("%s/samples.db", t->dir);
    return 0;
}

static void tmpdb_remove(struct tmpdb *t)
{
    static const char *const ext[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; t->path && i < RT_ARRAY_LEN(ext); i++) {
        char *f = xasprintf("%s%s", t->path, ext[i]);
        unlink(f);
        free(f);
    }
    if (t->dir)
        rmdir(t->dir);
    free(t->path);
    free(t->dir);
    t->dir = t->path = NULL;
}

int cmd_dropin(int argc, char **argv, const struct rt_env *env)
{
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_DROPIN, argc, argv);
    if (rc == -1) {
        dropin_help(stdout);
        return RT_EXIT_OK;
    }
    if (rc == -2) {
        printf("resource-tracker %s\nrtrack %s (the Rust tool's command line, as of %s)\n",
               RTRACK_VERSION, RTRACK_VERSION, DROPIN_RUST_VERSION);
        return RT_EXIT_OK;
    }
    if (rc != 0)
        return rc;
    /* the Rust tool says nothing but its samples, warnings and errors */
    rt_log_quiet(1);

    struct tmpdb tmp = {0};
    if (!cfg.db) {
        if (tmpdb_make(&tmp, env) != 0) {
            rt_config_free(&cfg);
            return RT_EXIT_FAILURE;
        }
        cfg.db = xstrdup(tmp.path);
        cfg.db_private = 1; /* the job gets no RTRACK_RUN_ID, RTRACK_RUN_DB of it */
    }
    const char *mode = cfg.command ? "run" : "record";
    char *cmd_json = cfg.command ? cmd_argv_json(cfg.command, cfg.ncommand) : NULL;
    struct cmd_recording c;
    int exit_code = RT_EXIT_FAILURE, job_signal = 0;
    if (cmd_recording_check(&c, &cfg, env, mode) != 0)
        exit_code = RT_EXIT_USAGE;
    else if (cmd_recording_open(&c, &cfg, env, mode, cmd_json, cfg.command ? 0 : cfg.pid) == 0) {
        c.loop.keep_system = 1; /* --pid: the system is sampled on after the tree is gone */
        struct rt_record_result res;
        rt_record(&c.loop, &res);
        cmd_recording_finish(&c, env);
        if (cfg.command) {
            exit_code = res.exit_code;
            job_signal = res.signal != RT_NA ? (int)res.signal : 0;
        } else {
            exit_code = res.failed ? RT_EXIT_FAILURE : RT_EXIT_OK;
        }
    }
    cmd_recording_close(&c);
    free(cmd_json);
    tmpdb_remove(&tmp);
    rt_config_free(&cfg);
    /* as `rtrack run` (the Rust tool exits 1) */
    return cmd_exit_as_job(exit_code, job_signal);
}
