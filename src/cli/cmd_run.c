/* cmd_run.c - `rtrack run [options] -- CMD [ARGS...]`: start the job, track its whole tree,
 * record, exit with the job's status.
 *
 * rtrack waits on one poll() for the deadline timer and a signalfd (SIGCHLD and the signals it
 * forwards), so the final sample is taken the moment the job exits: while the job is still a
 * zombie (waitid WNOWAIT), its last CPU counters are readable, and only then is it reaped.
 * rtrack is the job's child subreaper: orphaned descendants come back to it instead of init,
 * stay in the tracked tree, and are reaped by it after each sample has counted them. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/cli/config.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/record/sampler.h"
#include "rtrack/upload/stream.h"
#include "rtrack/base/spawn.h"
#include "rtrack/store/store.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

static char *argv_json(char **argv, int n)
{
    struct rt_buf b = {0};
    rt_buf_puts(&b, "[");
    for (int i = 0; i < n; i++) {
        if (i)
            rt_buf_puts(&b, ",");
        rt_buf_json_string(&b, argv[i], strlen(argv[i]));
    }
    rt_buf_puts(&b, "]");
    return b.p;
}

/* Reap our zombie children other than the job: orphans re-parented to us, already counted by
 * the sample that saw them as zombies. */
static void reap_orphans(const struct rt_sample *smp, pid_t self, pid_t job)
{
    for (int i = 0; i < smp->nprocs; i++) {
        const struct rt_proc_sample *p = &smp->procs[i];
        if (p->ppid == self && p->pid != job && p->state == 'Z')
            waitpid(p->pid, NULL, WNOHANG);
    }
}

/* rtrack's pids (its own, the job's) are those of its PID namespace, but /proc may belong to
 * another one (`unshare --pid` without --mount-proc, a container given the host's /proc): there
 * the same numbers name other processes (1 and 2 are the host's init and kthreadd), and
 * following them would record the whole host as the job's tree. */
static int proc_is_ours(const struct rt_sysenv *env)
{
    char path[4096], buf[32];
    if (rt_path(env, path, sizeof(path), "/proc/self") != 0)
        return 0;
    ssize_t n = readlink(path, buf, sizeof(buf) - 1);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    return strtol(buf, NULL, 10) == (long)getpid();
}

static int job_exited(pid_t job)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    return waitid(P_PID, (id_t)job, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == job;
}

int cmd_run(int argc, char **argv, const struct rt_env *env)
{
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_RUN, argc, argv);
    if (rc != 0)
        return rc < 0 ? RT_EXIT_OK : rc;
    rt_log_quiet(cfg.quiet);

    struct rt_sysenv sys;
    rt_sysenv_live(&sys);
    sys.nvml_library = env->nvml_library;
    struct rt_store *store = cmd_open_store(&cfg);
    if (!store) {
        rt_config_free(&cfg);
        return RT_EXIT_RUN_FAILED;
    }
    struct rt_host_info host;
    rt_host_info_read(&sys, &host);
    char *cmd_json = argv_json(cfg.command, cfg.ncommand);
    struct rt_run_desc rs;
    cmd_run_desc(&rs, &cfg, "run", cmd_json, 0, &host, &sys);
    int64_t run_id;
    int exit_code = RT_EXIT_RUN_FAILED;
    if (rt_store_begin_run(store, &rs, &run_id) != 0) {
        rt_err("%s", rt_store_error(store));
        goto out_store;
    }

    struct rt_live *live = NULL;
    if (cfg.output && !(live = rt_live_open(store, cfg.output, cfg.output_csv)))
        goto out_store;
    /* with SENTINEL_API_TOKEN: registered and streamed by a thread, never holding up the job */
    struct rt_streamer *stream = cmd_stream_start(&cfg, env, run_id);

    int sigs[RT_ARRAY_LEN(forwarded) + 1];
    memcpy(sigs, forwarded, sizeof(forwarded));
    sigs[RT_ARRAY_LEN(forwarded)] = SIGCHLD;
    int sfd = rt_signals_open(sigs, (int)RT_ARRAY_LEN(sigs));
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    pid_t job;
    double t0 = rt_clock_s(CLOCK_MONOTONIC);
    int err = rt_spawn_job(cfg.command, &job);
    if (err != 0) {
        exit_code = err == ENOENT ? RT_EXIT_NOTFOUND : RT_EXIT_NOEXEC;
        rt_err("cannot run '%s': %s", cfg.command[0],
               err == ENOENT ? "command not found" : rt_strerror(err));
        struct rt_run_end e = {rt_clock_s(CLOCK_REALTIME), "failed", exit_code, RT_NA,
                               "spawn-failed"};
        if (rt_store_end_run(store, &e) != 0)
            rt_warn("%s", rt_store_error(store));
        rt_streamer_finish(stream, rt_env_upload_wait(env));
        goto out_sig;
    }
    if (sfd < 0)
        rt_warn("cannot wait for signals (%s); signals will not be forwarded", rt_strerror(errno));

    if (rt_store_set_run_pid(store, job) != 0)
        rt_warn("recording failed: %s; the job is not affected", rt_store_error(store));
    struct rt_sampler smp;
    struct rt_collect_cfg cc = {job, getpid(), cfg.interval, rt_env_full_scan(env)};
    if (!proc_is_ours(&sys)) {
        rt_warn("/proc is not of rtrack's PID namespace (give it its own: unshare --pid --fork "
                "--mount-proc); the job's processes are not recorded, only the system");
        cc.root_pid = 0;
        cc.subreaper = 0;
    }
    rt_sampler_open(&smp, &sys, &cc, store, cfg.interval);
    smp.live = live;
    rt_sampler_collect(&smp, RT_SAMPLE_BASELINE);
    rt_sampler_store(&smp);

    struct rt_ticker tk;
    rt_ticker_open(&tk, smp.prev->mono, cfg.interval, 0);
    int exited = job_exited(job);
    while (!exited) {
        rt_ticker_arm(&tk);
        struct pollfd pf[2] = {{tk.fd, POLLIN, 0}, {sfd, POLLIN, 0}};
        int n = poll(pf, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 100);
        if (n < 0 && errno != EINTR)
            break;
        if (sfd >= 0 && (pf[1].revents & POLLIN)) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
                /* A terminal's Ctrl-C already reached the job (same process group, sent by
                 * the kernel); forward only what was sent to rtrack itself. */
                if (si.ssi_signo != SIGCHLD && si.ssi_code != SI_KERNEL)
                    kill(job, (int)si.ssi_signo);
            }
        }
        if ((exited = job_exited(job)))
            break;
        if (pf[0].revents & POLLIN) {
            rt_sampler_collect(&smp, RT_SAMPLE_PERIODIC);
            rt_sampler_store(&smp);
            reap_orphans(smp.prev, cc.subreaper, job);
        }
    }

    /* the job is a zombie now: its final counters are still readable */
    rt_sampler_collect(&smp, RT_SAMPLE_FINAL);
    rt_sampler_store(&smp);
    int status = 0;
    while (waitpid(job, &status, 0) < 0 && errno == EINTR)
        ;
    reap_orphans(smp.prev, cc.subreaper, job);
    double elapsed = rt_clock_s(CLOCK_MONOTONIC) - t0;
    int64_t sig = RT_NA;
    if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
        exit_code = 128 + (int)sig;
    } else {
        exit_code = WEXITSTATUS(status);
    }
    struct rt_run_end e = {rt_clock_s(CLOCK_REALTIME), exit_code == 0 ? "finished" : "failed",
                           exit_code, sig, sig != RT_NA ? "signaled" : "exited"};
    if (rt_sampler_end(&smp, &e) != 0 && !smp.warned)
        rt_warn("recording failed: %s", rt_store_error(store));
    rt_streamer_finish(stream, rt_env_upload_wait(env));
    if (sig != RT_NA)
        rt_note("run %lld: '%s' killed by signal %d after %.2f s; %lld samples in %s",
                (long long)run_id, cfg.command[0], (int)sig, elapsed, (long long)smp.stored,
                cfg.db);
    else
        rt_note("run %lld: '%s' exited with %d after %.2f s; %lld samples in %s", (long long)run_id,
                cfg.command[0], exit_code, elapsed, (long long)smp.stored, cfg.db);
    rt_ticker_close(&tk);
    rt_sampler_close(&smp);
out_sig:
    if (sfd >= 0)
        close(sfd);
    rt_live_close(live);
out_store:
    free(cmd_json);
    rt_host_info_free(&host);
    rt_store_close(store);
    rt_config_free(&cfg);
    return exit_code;
}
