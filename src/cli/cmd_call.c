/* cmd_call.c - what every command does alike before its function runs, in one place: its
 * options read by its table (opt.h), its own checks, and for the readers the database: the
 * files --db and --slurm-job name taken as they are or merged (cmd_dbs.c), an output that would
 * overwrite them refused, the database opened and --run resolved. So a command's function
 * starts with everything it was asked for checked and its run found, and the readers cannot
 * differ in how they find a database or a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/store/store.h"

/* --- the readers' shared rows ------------------------------------------------------------------
 */

int cmd_opt_db(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    return cmd_dbs_add(c->cmd, v);
}

int cmd_opt_slurm_job(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)c;
    (void)o;
    cmd_dbs_slurm_job(v);
    return 0;
}

int cmd_opt_run(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    struct cmd_ctx *cc = c->shared;
    if (cc->external_run) {
        rt_err("%s: --run and --external-run-id cannot be used together", c->cmd);
        return -1;
    }
    cc->run = v;
    return 0;
}

int cmd_opt_external_run_id(struct rt_opt_ctx *c, const struct rt_opt *o, const char *v)
{
    (void)o;
    struct cmd_ctx *cc = c->shared;
    if (!*v) {
        rt_err("%s: --external-run-id needs an id", c->cmd);
        return -1;
    }
    if (cc->run && !cc->external_run) {
        rt_err("%s: --run and --external-run-id cannot be used together", c->cmd);
        return -1;
    }
    cc->run = v;
    cc->run_opt = "--external-run-id";
    cc->external_run = 1;
    return 0;
}

/* --- the phases ---------------------------------------------------------------------------------
 */

enum { GO_ON = -1 };

/* The options, by the command's table: GO_ON, or the exit code (0 after --help). */
static int call_options(struct cmd_ctx *c)
{
    const struct cmd_def *d = c->def;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "%s: ", d->name);
    struct rt_opt_ctx oc = {.cmd = d->name,
                            .prefix = prefix,
                            .face = d->face,
                            .opts = c->opts,
                            .shared = c,
                            .from = RT_OPT_FROM_CLI,
                            .where = "",
                            .argc = c->argc,
                            .argv = c->argv};
    struct rt_opt_getopt g;
    rt_opt_getopt_begin(&g, d->name, d->opts, d->face, c->argc, c->argv);
    const struct rt_opt *o;
    const char *v;
    int rc = GO_ON, k;
    while (rc == GO_ON && (k = rt_opt_getopt_next(&g, &o, &v)) != RT_GETOPT_DONE) {
        char src[64];
        if (k == RT_GETOPT_HELP) {
            cmd_help(d, stdout);
            rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* the help was written */
        } else if (k == RT_GETOPT_BAD) {
            rc = RT_EXIT_USAGE;
        } else {
            snprintf(src, sizeof(src), "--%s", o->name);
            oc.src = src;
            if (rt_opt_set(&oc, o, v) != 0)
                rc = RT_EXIT_USAGE;
        }
    }
    rt_opt_getopt_end(&g);
    c->optind = optind;
    if (rc == GO_ON && optind < c->argc && !d->operands) {
        rt_err("%s: unexpected argument '%s'", d->name, c->argv[optind]);
        rc = RT_EXIT_USAGE;
    }
    return rc;
}

/* The database at c->db_path opened, c->run resolved, the function run, the database closed. */
static int call_open(struct cmd_ctx *c)
{
    const struct cmd_def *d = c->def;
    if ((d->db_flags & CMD_DB_EXISTING) && access(c->db_path, F_OK) != 0) {
        rt_err("%s: no database '%s'", d->name, c->db_path);
        return RT_EXIT_USAGE;
    }
    c->run_id = 0;
    c->started = 0;
    c->store = cmd_open_db(c->db_path, d->db == CMD_DB_WRITE ? RT_STORE_WRITE : RT_STORE_READ,
                           c->external_run ? NULL : c->run, &c->run_id, &c->started);
    if (!c->store)
        return RT_EXIT_USAGE;
    if (c->run && c->external_run &&
        !(c->run_id = cmd_find_external_run(c->store, c->db_path, c->run, &c->started))) {
        rt_store_close(c->store);
        c->store = NULL;
        return RT_EXIT_USAGE;
    }
    int rc = d->fn(c);
    rt_store_close(c->store);
    c->store = NULL;
    return rc;
}

/* Every database given in turn (upload): the worst exit code of them. */
static int call_each(struct cmd_ctx *c)
{
    const char *const *paths = cmd_dbs_list(c->env, &c->ndbs);
    int rc = RT_EXIT_OK;
    for (int i = 0; i < c->ndbs; i++) {
        c->db_path = paths[i];
        int r = call_open(c);
        rc = r > rc ? r : rc;
    }
    return rc;
}

/* The database: the one given, or the private merge of those given (an output that is one of
 * them refused first), opened; then the function. */
static int call_with_db(struct cmd_ctx *c)
{
    const struct cmd_def *d = c->def;
    if (d->db == CMD_DB_NONE)
        return d->fn(c);
    if (d->db_flags & CMD_DB_EACH)
        return call_each(c);
    c->ndbs = 1;
    if (!(c->db_path = cmd_dbs_path(d->name, c->env)))
        return RT_EXIT_USAGE;
    /* an output that is the database (or its -wal, -shm, -journal) would destroy it */
    if ((d->db_flags & CMD_DB_OUTPUT) && cmd_out_check_db(d->name, c->output, c->db_path) != 0)
        return RT_EXIT_USAGE;
    return call_open(c);
}

int cmd_call(const struct cmd_def *d, int argc, char **argv, const struct rt_env *env)
{
    struct cmd_ctx c = {.def = d, .env = env, .argc = argc, .argv = argv, .run_opt = "--run"};
    if (d->layered) /* run, record: rt_config_load reads argv, the environment and the file */
        return d->fn(&c);
    c.opts = xcalloc(1, d->opts_size ? d->opts_size : 1);
    if (d->defaults)
        memcpy(c.opts, d->defaults, d->opts_size);
    int rc = call_options(&c);
    if (rc == GO_ON) {
        if ((d->db_flags & CMD_DB_RUN) && !c.run)
            c.run = "latest";
        rc = d->check ? d->check(&c) : 0;
        if (rc == 0)
            rc = call_with_db(&c);
    }
    rt_opt_free(d->opts, c.opts);
    free(c.opts);
    return rc;
}
