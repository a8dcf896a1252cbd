/* cmd_dbs.c - the readers' databases: one as it is, several (or one Slurm job's runs) merged
 * into a private temporary database first (cmd.h). */
#include <errno.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/store/merge.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/cluster.h"

static struct {
    char *paths[256];
    int n;
    const char *slurm_job; /* --slurm-job, or NULL */
    int globbed;           /* a --db was a pattern */
    int cleanup;           /* done_at_exit registered */
    char *dir, *merged;    /* the private database and its directory */
} dbs;

static void done_at_exit(void)
{
    for (int i = 0; i < dbs.n; i++)
        free(dbs.paths[i]);
    dbs.n = 0;
    if (dbs.merged) {
        static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
        for (size_t i = 0; i < RT_ARRAY_LEN(suffix); i++) {
            char *f = xasprintf("%s%s", dbs.merged, suffix[i]);
            unlink(f);
            free(f);
        }
    }
    if (dbs.dir)
        rmdir(dbs.dir);
    free(dbs.merged);
    free(dbs.dir);
    dbs.merged = dbs.dir = NULL;
}

/* The merged copy's files by name, ready for a signal handler (no allocation there): a reader
 * stopped by a signal (SIGPIPE from `| head`, Ctrl-C, a scheduler's SIGTERM, a hang-up) left its
 * copy in TMPDIR, 51 MB of it seen. */
static char gone_paths[5][4096];
static const int gone_signals[] = {SIGHUP,  SIGINT,    SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1,
                                   SIGUSR2, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGXCPU, SIGXFSZ};

static void gone_on_signal(int sig)
{
    int e = errno;
    for (int i = 0; i < 4; i++)
        if (gone_paths[i][0])
            unlink(gone_paths[i]);
    if (gone_paths[4][0])
        rmdir(gone_paths[4]);
    errno = e;
    /* then the signal's own end, as without the handler (SA_RESETHAND: the default again) */
    raise(sig);
}

/* The handler for each signal that would end the process (not those ignored at start: an
 * ignored SIGPIPE is an EPIPE, and the ordinary end removes the copy), set before the copy is
 * made, so no moment leaves it behind. */
static void remove_on_signals(const char *dir, const char *merged)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (int i = 0; i < 4; i++)
        snprintf(gone_paths[i], sizeof(gone_paths[i]), "%s%s", merged, suffix[i]);
    snprintf(gone_paths[4], sizeof(gone_paths[4]), "%s", dir);
    for (size_t i = 0; i < RT_ARRAY_LEN(gone_signals); i++) {
        struct sigaction sa, old;
        if (sigaction(gone_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = gone_on_signal;
        sa.sa_flags = SA_RESETHAND;
        sigfillset(&sa.sa_mask);
        sigaction(gone_signals[i], &sa, NULL);
    }
}

static void keep(const char *path)
{
    if (!dbs.cleanup)
        atexit(done_at_exit);
    dbs.cleanup = 1;
    dbs.paths[dbs.n++] = xstrdup(path);
}

int cmd_dbs_add(const char *cmd, const char *value)
{
    size_t max = RT_ARRAY_LEN(dbs.paths);
    struct stat st;
    if (!strpbrk(value, "*?[") || stat(value, &st) == 0) {
        if ((size_t)dbs.n == max) {
            rt_err("%s: more than %zu databases (gather them with rtrack merge)", cmd, max);
            return -1;
        }
        keep(value);
        return 0;
    }
    glob_t g;
    if (glob(value, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
        rt_err("%s: no database matches '%s'", cmd, value);
        globfree(&g);
        return -1;
    }
    dbs.globbed = 1;
    int rc = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) {
        if ((size_t)dbs.n == max) {
            rt_err("%s: '%s' matches more than %zu databases (gather them with rtrack merge)", cmd,
                   value, max);
            rc = -1;
        } else {
            keep(g.gl_pathv[i]);
        }
    }
    globfree(&g);
    return rc;
}

void cmd_dbs_slurm_job(const char *id)
{
    dbs.slurm_job = id;
}

const char *cmd_dbs_slurm(void)
{
    return dbs.slurm_job;
}

int cmd_dbs_count(void)
{
    return dbs.n;
}

const char *const *cmd_dbs_list(const struct rt_env *env, int *n)
{
    if (dbs.n == 0)
        keep(rt_env_db(env));
    *n = dbs.n;
    return (const char *const *)dbs.paths;
}

const char *cmd_dbs_path(const char *cmd, const struct rt_env *env)
{
    if (dbs.slurm_job && !*dbs.slurm_job) {
        rt_err("%s: --slurm-job needs a job id", cmd);
        return NULL;
    }
    if (dbs.n == 0)
        keep(rt_env_db(env));
    if (dbs.n == 1 && !dbs.globbed && !dbs.slurm_job)
        return dbs.paths[0];
    const char *tmp = env->tmpdir ? env->tmpdir : "/tmp";
    char *dir = xasprintf("%s/rtrack-merge.XXXXXX", tmp);
    if (strlen(dir) + sizeof("/merged.db-journal") > sizeof(gone_paths[0])) {
        rt_err("%s: TMPDIR '%s' is too long a path", cmd, tmp);
        free(dir);
        return NULL;
    }
    /* no signal between the directory made and its handlers set */
    sigset_t block, was;
    sigemptyset(&block);
    for (size_t i = 0; i < RT_ARRAY_LEN(gone_signals); i++)
        sigaddset(&block, gone_signals[i]);
    sigprocmask(SIG_BLOCK, &block, &was);
    if (!mkdtemp(dir)) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &was, NULL);
        rt_err("%s: cannot make a temporary directory in '%s' to read several databases: %s", cmd,
               tmp, rt_strerror(e));
        free(dir);
        return NULL;
    }
    dbs.dir = dir;
    dbs.merged = xasprintf("%s/merged.db", dir);
    remove_on_signals(dbs.dir, dbs.merged);
    sigprocmask(SIG_SETMASK, &was, NULL);
    struct rt_store *out;
    char err[600];
    if (rt_store_open(dbs.merged, RT_STORE_WRITE, &out, err, sizeof(err)) != 0) {
        rt_err("%s: %s", cmd, err);
        return NULL;
    }
    int64_t runs = 0;
    for (int i = 0; i < dbs.n; i++) {
        struct rt_merge_count n;
        if (rt_store_merge(out, dbs.paths[i], dbs.slurm_job, &n) != 0) {
            rt_err("%s: %s", cmd, rt_store_error(out));
            rt_store_close(out);
            return NULL;
        }
        runs += n.added + n.updated;
    }
    rt_store_close(out);
    if (runs == 0) {
        if (dbs.slurm_job)
            rt_err("%s: no run of Slurm job %s in the %d database%s given", cmd, dbs.slurm_job,
                   dbs.n, dbs.n > 1 ? "s" : "");
        else
            rt_err("%s: the %d databases given hold no run", cmd, dbs.n);
        return NULL;
    }
    return dbs.merged;
}

int cmd_cluster_summary(struct rt_store *store, const char *slurm_job, int fmt)
{
    char err[512];
    int bad = 0, rc;
    if (fmt == 1) {
        struct rt_buf json = {0};
        rc = rt_cluster_json(store, slurm_job, &json, &bad, err, sizeof(err));
        if (rc == 0) {
            fwrite(json.p, 1, json.len, stdout);
            putchar('\n');
        }
        rt_buf_free(&json);
    } else {
        rc = rt_cluster_print(store, slurm_job, stdout, fmt == 2, &bad, err, sizeof(err));
    }
    if (rc != 0) {
        rt_err("summary: %s", err);
        return bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    }
    return cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE;
}
