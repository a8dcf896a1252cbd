/* cmd_common.c - helpers the subcommands share. */
#include <getopt.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/config.h"
#include "rtrack/cli/env.h"
#include "rtrack/collect/collect.h"
#include "rtrack/base/log.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/upload/stream.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"

struct rt_store *cmd_open_store(const struct rt_config *cfg)
{
    struct rt_store *store;
    char err[512];
    if (rt_store_open(cfg->db, RT_STORE_WRITE, &store, err, sizeof(err)) != 0) {
        rt_err("%s", err);
        return NULL;
    }
    return store;
}

void cmd_run_desc(struct rt_run_desc *d, const struct rt_config *cfg, const char *mode,
                  const char *command_json, pid_t pid, const struct rt_host_info *host,
                  const struct rt_sysenv *env)
{
    memset(d, 0, sizeof(*d));
    d->mode = mode;
    d->command_json = command_json;
    d->pid = pid;
    d->interval = cfg->interval;
    d->started_at = rt_clock_s(CLOCK_REALTIME);
    for (int i = 0; i < RT_META_N; i++)
        d->meta[i] = cfg->meta[i];
    d->tags = cfg->tags;
    d->ntags = cfg->ntags;
    d->host = host;
    d->clk_tck = env->clk_tck;
    d->page_size = env->page_size;
}

int cmd_option_error(const char *cmd, int c, char **argv)
{
    if (c == ':')
        rt_err("%s: option '%s' needs a value", cmd, argv[optind - 1]);
    else if (optopt > ' ' && optopt < 127)
        rt_err("%s: unknown option '-%c' (see 'rtrack %s --help')", cmd, optopt, cmd);
    else
        rt_err("%s: unknown option '%s' (see 'rtrack %s --help')", cmd, argv[optind - 1], cmd);
    return RT_EXIT_USAGE;
}

/* The id of `arg` ("latest" or a number) and its start time; 0 after printing why not. */
static int64_t resolve_run(struct rt_store *store, const char *db_path, const char *arg,
                           double *started)
{
    int64_t id = 0, found;
    if (strcmp(arg, "latest") != 0 && (rt_parse_i64(arg, &id) != 0 || id <= 0)) {
        rt_err("invalid run '%s': expected a run id or 'latest'", arg);
        return 0;
    }
    if (rt_store_find_run(store, id, &found, started) != 0) {
        rt_err("cannot read database '%s': %s", db_path, rt_store_error(store));
        return 0;
    }
    if (!found) {
        if (id > 0)
            rt_err("no run %lld in '%s' (see 'rtrack runs')", (long long)id, db_path);
        else
            rt_err("'%s' has no runs yet", db_path);
    }
    return found;
}

struct rt_store *cmd_open_db(const char *db_path, enum rt_store_mode mode, const char *run,
                             int64_t *run_id, double *started)
{
    struct rt_store *store;
    char err[600];
    if (rt_store_open(db_path, mode, &store, err, sizeof(err)) != 0) {
        rt_err("%s", err);
        return NULL;
    }
    if (run && !(*run_id = resolve_run(store, db_path, run, started))) {
        rt_store_close(store);
        return NULL;
    }
    return store;
}

/* An output file is written beside its final name and renamed at the end, so a failed export
 * or report never leaves half a file under the name asked for. */
int cmd_out_open(struct cmd_out *o, const char *path)
{
    memset(o, 0, sizeof(*o));
    if (!path || !strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    o->path = xstrdup(path);
    o->tmp = xasprintf("%s.tmp-%d", path, (int)getpid());
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        rt_err("cannot write '%s': %s", path, rt_strerror(errno));
        free(o->path);
        free(o->tmp);
        return -1;
    }
    return 0;
}

int cmd_out_close(struct cmd_out *o, int ok)
{
    int rc = 0;
    if (o->f == stdout) {
        if (fflush(stdout) != 0 && ok) {
            rt_err("cannot write the output: %s", rt_strerror(errno));
            rc = -1;
        }
        return rc;
    }
    if (fclose(o->f) != 0 && ok) {
        rt_err("cannot write '%s': %s", o->path, rt_strerror(errno));
        rc = -1;
        ok = 0;
    }
    if (ok && rename(o->tmp, o->path) != 0) {
        rt_err("cannot write '%s': %s", o->path, rt_strerror(errno));
        rc = -1;
        ok = 0;
    }
    if (!ok)
        unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    return rc;
}
