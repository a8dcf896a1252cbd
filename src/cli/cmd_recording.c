/* cmd_recording.c - what `run` and `record` do alike around the recording loop (record/loop.h):
 * open the database, write the run's row, open the live output, block the signals, start
 * streaming, and undo it all after. The calls into export's live output and upload's streamer
 * for a recording are here and nowhere else. */
#include "cmd_recording.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/export/export.h"
#include "rtrack/record/facts.h"
#include "rtrack/store/store.h"
#include "rtrack/upload/stream.h"
#include "rtrack/upload/upload.h"
#include "rtrack/upload/upload_run.h"

/* The streamer registers the run only once its cloud is stored (or discovery gave up). */
static void cloud_stored(void *job)
{
    rt_cloud_job_wait(job, 5.0);
}

/* The recorder has committed the run's GPUs (or there are none, or the run ended): the
 * streamer's registration goes with them. */
static void facts_stored(void *stream)
{
    rt_streamer_facts_stored(stream);
}

/* With SENTINEL_API_TOKEN: registered and streamed by a thread, never holding up the job. */
static struct rt_streamer *stream_start(const struct cmd_recording *c, const struct rt_config *cfg,
                                        const struct rt_env *env)
{
    /* an API the token may not go to is said once, before any thread or request; the job and
     * the recording go on (streaming never changes them) */
    char err[512];
    if (env->sentinel_token && rt_sentinel_url_check(cfg->sentinel_url, err, sizeof(err)) != 0) {
        rt_warn("sentinel: not streaming: %s; recording goes on", err);
        return NULL;
    }
    /* big batches: a streamed run sends what a whole upload interval committed at once */
    struct rt_upload_opts o = {.batch_rows = 100000,
                               .inline_max = c->inline_max,
                               .s3_endpoint = env->s3_endpoint,
                               .s3_region = env->s3_region};
    /* the GPUs come with the first sample after their driver answers: at a long interval, one
     * more interval away */
    return rt_streamer_start(cfg->db, c->run_id, cfg->upload_interval, env->sentinel_token,
                             cfg->sentinel_url, &o, c->cloud ? cloud_stored : NULL, c->cloud,
                             RT_STREAM_FACTS_WAIT_S + 2 * cfg->interval);
}

/* The cloud is a fact of the recording: asked when it will be sent (streaming) or when asked
 * for (--cloud-discovery), never when turned off (RTRACK_CLOUD_DISCOVERY=0). */
static struct rt_cloud_job *cloud_start(const struct cmd_recording *c, const struct rt_config *cfg,
                                        const struct rt_env *env)
{
    if (cfg->cloud_discovery == 0 || (cfg->cloud_discovery < 0 && !env->sentinel_token))
        return NULL;
    struct rt_cloud_opts o;
    rt_env_cloud_opts(env, &o);
    return rt_cloud_job_start(cfg->db, c->run_id, &o);
}

int cmd_recording_check(struct cmd_recording *c, const struct rt_config *cfg,
                        const struct rt_env *env, const char *mode)
{
    memset(c, 0, sizeof(*c));
    c->loop.sigfd = -1;
    /* a live output that is the database (or its -wal, -shm, -journal) would destroy it:
     * refused before the database, the output or a job is opened or started */
    if (cfg->output && cmd_out_check_db(mode, cfg->output, cfg->db) != 0)
        return -1;
    if (cfg->run_id_file && cmd_out_check_db(mode, cfg->run_id_file, cfg->db) != 0)
        return -1;
    if (env->sentinel_token && rt_env_check_streaming(env, mode) != 0)
        return -1;
    const char *keep = env->keep_token_in_job;
    if (!strcmp(mode, "run") && keep && strcmp(keep, "1") != 0 && strcmp(keep, "0") != 0) {
        rt_err("%s: invalid RTRACK_KEEP_TOKEN_IN_JOB '%s': expected 1 (keep SENTINEL_API_TOKEN in "
               "the job's environment) or 0",
               mode, keep);
        return -1;
    }
    return rt_env_inline_max(env, mode, &c->inline_max);
}

extern char **environ;

/* The job's environment: rtrack's without SENTINEL_API_TOKEN (every copy of it), unless
 * RTRACK_KEEP_TOKEN_IN_JOB=1. The token is rtrack's to stream with; the job, its children and
 * whatever they run (a third-party tool, a core dump, a `ps e`, a log of the environment) have
 * no business with it. And the run that records it: RTRACK_RUN_ID and RTRACK_RUN_DB (add, each
 * "NAME=VALUE" or NULL), in place of any the environment has (an rtrack inside another's job
 * names its own run). The strings are environ's own and add's: only the array is new. */
static char **job_environ(const struct rt_env *env, char *const add[2])
{
    static const char name[] = "SENTINEL_API_TOKEN=";
    int keep = env->keep_token_in_job && !strcmp(env->keep_token_in_job, "1");
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **e = xcalloc(n + 3, sizeof(*e));
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if ((keep || strncmp(environ[i], name, sizeof(name) - 1) != 0) &&
            strncmp(environ[i], "RTRACK_RUN_ID=", 14) != 0 &&
            strncmp(environ[i], "RTRACK_RUN_DB=", 14) != 0)
            e[k++] = environ[i];
    for (int i = 0; i < 2; i++)
        if (add[i])
            e[k++] = add[i];
    return e;
}

/* RTRACK_RUN_ID=ID and RTRACK_RUN_DB=the database's absolute path, for the job: not for
 * resource-tracker's private database, which no one else can read (docs/usage.md) */
static void job_vars(struct cmd_recording *c, const struct rt_config *cfg)
{
    if (cfg->db_private)
        return;
    c->job_vars[0] = xasprintf("RTRACK_RUN_ID=%lld", (long long)c->run_id);
    char *abs = realpath(cfg->db, NULL);
    if (abs || cfg->db[0] == '/')
        c->job_vars[1] = xasprintf("RTRACK_RUN_DB=%s", abs ? abs : cfg->db);
    free(abs);
}

/* --run-id-file: opened (as export's -o: a new file 0600, written beside and renamed) before
 * the database, so a file that cannot be written stops the run before anything is made */
static int run_id_file_open(struct cmd_out *o, const struct rt_config *cfg)
{
    memset(o, 0, sizeof(*o));
    return cfg->run_id_file ? cmd_out_open(o, cfg->run_id_file) : 0;
}

/* ... and written the moment the run's row is: what a CI step reads even if the job is killed */
static int run_id_file_write(struct cmd_out *o, int64_t run_id)
{
    if (!o->f)
        return 0;
    int ok = fprintf(o->f, "%lld\n", (long long)run_id) > 0;
    if (!ok)
        cmd_out_failed(o, rt_strerror(errno));
    return cmd_out_close(o, ok) == 0 && ok ? 0 : -1;
}

int cmd_recording_open(struct cmd_recording *c, const struct rt_config *cfg,
                       const struct rt_env *env, const char *mode, const char *command_json,
                       pid_t pid)
{
    int64_t inline_max = c->inline_max; /* cmd_recording_check's */
    memset(c, 0, sizeof(*c));
    c->inline_max = inline_max;
    c->loop.sigfd = -1;
    rt_sysenv_live(&c->sys);
    c->sys.nvml_library = env->nvml_library;
    struct cmd_out idf;
    if (run_id_file_open(&idf, cfg) != 0)
        return -1;
    if (!(c->store = cmd_open_store(cfg))) {
        cmd_out_close(&idf, 0);
        return -1;
    }
    rt_host_info_read(&c->sys, &c->host);
    struct rt_run_desc rs;
    cmd_run_desc(&rs, cfg, mode, command_json, pid, &c->host, &c->sys);
    /* what the job is allocated: the cgroup rtrack runs in (the job's too), Slurm, CUDA */
    struct rt_alloc alloc = rt_alloc_none();
    const char *cg = cfg->cgroup;
    char dir[4096];
    if (cg && rt_cgroup_dir(&c->sys, cg, "memory", dir, sizeof(dir)) != 0 &&
        rt_cgroup_dir(&c->sys, cg, NULL, dir, sizeof(dir)) != 0) {
        rt_warn("%s: cgroup '%s' is in no hierarchy under /sys/fs/cgroup: the tree is recorded "
                "without it",
                mode, cg);
        cg = NULL;
    }
    rt_cgroup_alloc_read_at(&c->sys, cg, &alloc);
    alloc.cgroup_path = cg;
    rt_env_alloc(env, &alloc);
    rs.alloc = &alloc;
    if (rt_store_begin_run(c->store, &rs, &c->run_id) != 0) {
        rt_err("%s", rt_store_error(c->store));
        cmd_out_close(&idf, 0);
        return -1;
    }
    if (run_id_file_write(&idf, c->run_id) != 0)
        return -1;
    if (cfg->output && !(c->live = rt_live_open(c->store, cfg->output, cfg->output_csv)))
        return -1;
    if (cfg->command) {
        job_vars(c, cfg);
        c->job_env = job_environ(env, c->job_vars);
    }
    c->loop = (struct rt_recording){.store = c->store,
                                    .sys = &c->sys,
                                    .full_scan = rt_env_full_scan(env),
                                    .interval = cfg->interval,
                                    .duration = cfg->duration,
                                    .live = c->live,
                                    .argv = cfg->command, /* run's job; NULL in record */
                                    .envp = c->job_env,
                                    .pid = pid,
                                    .cgroup = cg,
                                    .ready_fd = rt_env_ready_fd(env, mode),
                                    .sigfd = -1};
    /* before streaming starts: a recording that cannot wait for its signals ends here, before
     * anything is sent */
    if (rt_record_signals(&c->loop) != 0)
        return -1;
    c->cloud = cloud_start(c, cfg, env);
    c->stream = stream_start(c, cfg, env);
    if (c->stream) {
        c->loop.facts = facts_stored;
        c->loop.facts_ud = c->stream;
    }
    return 0;
}

/* The end-of-run wait is cut short by a signal that came after the loop (SIGCHLD aside): a
 * scheduler's SIGTERM or a second Ctrl-C must not wait out a hung API. */
static int stop_signal(void *loop)
{
    return rt_record_stop_signal(loop);
}

int cmd_recording_finish(struct cmd_recording *c, const struct rt_env *env)
{
    struct rt_stream_cut cut = {c->loop.sigfd, stop_signal, &c->loop};
    int how =
        rt_streamer_finish(c->stream, rt_env_upload_wait(env), c->loop.sigfd >= 0 ? &cut : NULL);
    c->stream = NULL;
    if (how == RT_STREAM_LEFT) {
        /* the streamer's thread may still wait for the cloud's (its ready()): both are left to
         * the process's end (an _exit: rt_thread_left()) */
        c->cloud = NULL;
        return how;
    }
    rt_cloud_job_finish(c->cloud); /* after the streamer, which may still wait for it */
    c->cloud = NULL;
    return how;
}

void cmd_recording_close(struct cmd_recording *c)
{
    rt_cloud_job_finish(c->cloud); /* a recording that failed before its loop */
    rt_record_close(&c->loop);
    rt_live_close(c->live);
    rt_host_info_free(&c->host);
    rt_store_close(c->store);
    free(c->job_env);
    free(c->job_vars[0]);
    free(c->job_vars[1]);
    memset(c, 0, sizeof(*c));
}

int cmd_exit_as_job(int exit_code, int job_signal)
{
    if (job_signal) {
        fflush(stdout);
        fflush(stderr);
        rt_die_of_signal(job_signal);
    }
    return exit_code;
}
