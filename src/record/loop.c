/* loop.c - the one recording loop of `run` and `record` (loop.h).
 *
 * One poll() waits for the deadline timer and the signalfd together, so nothing waits for an
 * interval to pass: a signal is forwarded (run) or ends the recording (record) at once, and a
 * job's exit (SIGCHLD) gets its final sample at once. The two modes differ only in how they
 * start (spawn the job / follow a pid), what a signal does, and what ends them; the samples,
 * their kinds and the commit cadence (sampler.h) are the same code. */
#include "rtrack/record/loop.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/record/sampler.h"

/* Every signal whose default would end rtrack and that someone may send on purpose (kill,
 * `timeout -s ALRM`, a scheduler): forwarded to run's job, or the end of record's recording.
 * Left out, SIGALRM ended rtrack at once and left its job running, orphaned, and its run
 * unfinished. (SIGPIPE is ignored; SIGXCPU, SIGXFSZ and the faults are rtrack's own.) */
static const int run_signals[] = {SIGINT,  SIGTERM,   SIGHUP,  SIGQUIT, SIGUSR1, SIGUSR2,
                                  SIGALRM, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGCHLD};
static const int record_signals[] = {SIGINT,  SIGTERM,   SIGQUIT, SIGHUP, SIGUSR1, SIGUSR2,
                                     SIGALRM, SIGVTALRM, SIGPROF, SIGIO,  SIGPWR};

/* One recording in progress. */
struct rec {
    struct rt_recording *r;
    struct rt_collect_cfg cc;
    struct rt_sampler smp;
    struct rt_ticker tk;
    pid_t job;        /* run: the job; 0 in record mode */
    double t0;        /* monotonic: where elapsed counts from */
    double stop_at;   /* record with a duration: the monotonic time to stop at; 0 = none */
    const char *stop; /* why the loop ends (record: the end_reason; run: "exited"), NULL = go on */
    int64_t oom0;     /* run: the host's OOM kill count before the job started, RT_NA unknown */
    struct rt_cgroup_peak peak; /* run: rtrack's memory cgroup's peak, when the job's own;
                                 * record --cgroup: that cgroup's */
    struct rt_cgroup_oom oom;   /* record --cgroup: its OOM kills */
    int facts_said;             /* r->facts was called */
    /* record: the Slurm plugin's word on how the step ended (RT_STEP_END_MAGIC), when it came */
    int step_end;
    int64_t step_code, step_signal, step_oom;
    const char *step_state;
};

const char *const rt_step_end_states[RT_STEP_END_NSTATES] = {
    NULL,        "COMPLETED", "CANCELLED", "TIMEOUT", "FAILED", "OUT_OF_MEMORY",
    "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE"};

/* record: a SIGTERM that root sent with the plugin's value says how the step ended */
static void step_end_of(struct rec *rc, const struct signalfd_siginfo *si)
{
    uint32_t v = (uint32_t)si->ssi_int;
    if (si->ssi_signo != SIGTERM || si->ssi_code != SI_QUEUE || si->ssi_uid != 0 ||
        v >> 28 != RT_STEP_END_MAGIC)
        return;
    unsigned state = (v >> 24) & 0xf, sig = (v >> 8) & 0xff;
    rc->step_end = 1;
    rc->step_oom = (int64_t)((v >> 16) & 0xff);
    rc->step_code = (int64_t)(v & 0xff);
    rc->step_signal = sig ? (int64_t)sig : RT_NA;
    rc->step_state = state < RT_STEP_END_NSTATES ? rt_step_end_states[state] : NULL;
}

/* r->facts once the run's facts are committed (its GPUs, or none to come), or at its end */
static void rec_facts(struct rec *rc, int end)
{
    if (rc->facts_said || !rc->r->facts || (!end && !rt_sampler_gpus_settled(&rc->smp)))
        return;
    rc->facts_said = 1;
    rc->r->facts(rc->r->facts_ud);
}

/* The signals ignored when rtrack started: nohup's SIGHUP, the SIGINT and SIGQUIT of a script's
 * background command, a parent's SIGPIPE. */
static void ignored_at_start(sigset_t *set)
{
    sigemptyset(set);
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
            sa.sa_handler == SIG_IGN)
            sigaddset(set, sig);
    }
}

int rt_record_signals(struct rt_recording *r)
{
    if (r->argv) {
        /* before anything here ignores a signal of its own (SIGPIPE) */
        ignored_at_start(&r->ignored);
        if (sigismember(&r->ignored, SIGCHLD) == 1) {
            /* ignored, SIGCHLD has the kernel reap the job unseen: rtrack would wait forever */
            signal(SIGCHLD, SIG_DFL);
            sigdelset(&r->ignored, SIGCHLD);
        }
        /* an ignored signal stays ignored, by rtrack too: never queued, never forwarded */
        int sigs[RT_ARRAY_LEN(run_signals)], n = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(run_signals); i++)
            if (sigismember(&r->ignored, run_signals[i]) != 1)
                sigs[n++] = run_signals[i];
        r->sigfd = rt_signals_open(sigs, n);
    } else {
        /* record has no job to protect, and a script stops `rtrack record &` (started with
         * SIGINT and SIGQUIT ignored) with kill -INT: those and SIGTERM stop it whatever their
         * disposition. The others stop it when they were not ignored at start: a SIGHUP ignored
         * is nohup's, asking to survive the terminal. */
        sigset_t ign;
        ignored_at_start(&ign);
        int sigs[RT_ARRAY_LEN(record_signals)], n = 0;
        for (size_t i = 0; i < RT_ARRAY_LEN(record_signals); i++)
            if (i < 3 || sigismember(&ign, record_signals[i]) != 1)
                sigs[n++] = record_signals[i];
        sigemptyset(&r->ignored);
        r->sigfd = rt_signals_open(sigs, n);
    }
    r->sig_errno = r->sigfd < 0 ? errno : 0;
    if (r->sigfd < 0 && !r->argv) {
        rt_err("cannot wait for signals: %s", rt_strerror(r->sig_errno));
        return -1;
    }
    return 0;
}

int rt_record_stop_signal(struct rt_recording *r)
{
    struct signalfd_siginfo si;
    int stop = 0;
    while (r->sigfd >= 0 && read(r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
        if (!stop && si.ssi_signo != SIGCHLD)
            stop = (int)si.ssi_signo;
    return stop;
}

void rt_record_close(struct rt_recording *r)
{
    if (r->sigfd >= 0)
        close(r->sigfd);
    r->sigfd = -1;
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

/* Whether the job has exited, without reaping it: a zombie's counters are still readable. */
static int job_exited(pid_t job)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    return waitid(P_PID, (id_t)job, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == job;
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

/* run: become the subreaper of what the job leaves behind, start the job, and track its tree
 * (unless /proc is another PID namespace's). When it cannot start, the run's row says so and
 * out has the exit code (127 / 126); -1 then. */
static int rec_spawn(struct rec *rc, struct rt_record_result *out)
{
    struct rt_recording *r = rc->r;
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    rc->oom0 = rt_oom_kills(r->sys);
    /* before the job is in the cgroup: whether rtrack is alone in it */
    rt_cgroup_peak_open(r->sys, getpid(), &rc->peak);
    rc->t0 = rt_clock_s(CLOCK_MONOTONIC);
    /* While the kernel makes the job (posix_spawn waits for its exec), the statements of the
     * baseline's rows are compiled: 0.3 ms less of a short job's run (docs/performance.md). */
    struct rt_spawn_async sp;
    rt_spawn_job_start(&sp, r->argv, r->envp, &r->ignored);
    rt_store_prepare_samples(r->store);
    int err = rt_spawn_job_finish(&sp, &rc->job);
    if (err != 0) {
        rc->job = 0;
        out->exit_code = rt_spawn_exit_code(err);
        out->reason = "spawn-failed";
        char why[4608];
        rt_spawn_why(r->argv[0], r->envp, err, why, sizeof(why));
        rt_err("cannot run '%s': %s", r->argv[0], why);
        struct rt_run_end e = rt_run_end_none(rt_clock_s(CLOCK_REALTIME));
        e.status = "failed";
        e.exit_code = out->exit_code;
        e.end_reason = out->reason;
        if (rt_store_end_run(r->store, &e) != 0)
            rt_warn("%s", rt_store_error(r->store));
        return -1;
    }
    out->started = 1;
    if (r->sigfd < 0)
        rt_warn("cannot wait for signals (%s); signals will not be forwarded",
                rt_strerror(r->sig_errno));
    if (rt_store_set_run_pid(r->store, rc->job) != 0)
        rt_warn("recording failed: %s; the job is not affected", rt_store_error(r->store));
    rc->cc = (struct rt_collect_cfg){rc->job, getpid(), r->interval, r->full_scan, NULL};
    if (!proc_is_ours(r->sys)) {
        rt_warn("/proc is not of rtrack's PID namespace (give it its own: unshare --pid --fork "
                "--mount-proc); the job's processes are not recorded, only the system");
        rc->cc.root_pid = 0;
        rc->cc.subreaper = 0;
    }
    return 0;
}

/* Take a sample of this kind and store it. record: a sample that finds the tree gone ends the
 * recording (unless keep_system: it is stored, the tree's values 0) and is not stored (the tree is
 * not there to measure: its zeros would drag every mean down); the sample before it is the final
 * one. run: the orphans a periodic sample counted as zombies are reaped (the final sample's, once
 * the job is reaped). */
static void rec_sample(struct rec *rc, enum rt_sample_kind kind)
{
    struct rt_sample *s = rt_sampler_collect(&rc->smp, kind);
    if (!rc->job && rc->cc.root_pid > 0 && s->proc_count == 0 && kind != RT_SAMPLE_BASELINE &&
        !rc->r->keep_system) {
        if (!rc->stop)
            rc->stop = "tree-gone";
        rt_sampler_drop(&rc->smp);
        return;
    }
    rt_sampler_store(&rc->smp);
    rec_facts(rc, 0);
    if (!rc->job) {
        rt_cgroup_oom_poll(&rc->oom);
        rt_cgroup_peak_poll(&rc->peak);
    }
    if (rc->job > 0 && kind == RT_SAMPLE_PERIODIC)
        reap_orphans(rc->smp.prev, rc->cc.subreaper, rc->job);
}

/* The collectors opened, the baseline sample, and the deadlines counted from it. record's
 * elapsed time starts when the collectors are ready; run's started with the job. */
static void rec_baseline(struct rec *rc)
{
    struct rt_recording *r = rc->r;
    rt_sampler_open(&rc->smp, r->sys, &rc->cc, r->store, r->interval);
    rc->smp.live = r->live;
    if (!rc->job)
        rc->t0 = rt_clock_s(CLOCK_MONOTONIC);
    rec_sample(rc, RT_SAMPLE_BASELINE);
    if (r->ready_fd > 2) {
        /* (a reader that went away is no reason to stop recording) */
        if (write(r->ready_fd, "1", 1) < 0) {
        }
        close(r->ready_fd);
        r->ready_fd = -1;
    }
    double start = rc->smp.prev->mono;
    rc->stop_at = r->duration > 0 ? start + r->duration : 0;
    rt_ticker_open(&rc->tk, start, r->interval, rc->stop_at);
    if (rc->job > 0 && job_exited(rc->job))
        rc->stop = "exited";
}

enum { REC_TICK = 1, REC_SIGNAL = 2 };

/* Sleep until the next deadline or a signal: REC_TICK and/or REC_SIGNAL, 0 when woken by
 * neither, -1 when poll fails. Without a signalfd (run only) the job's exit is looked for every
 * 100 ms instead of on SIGCHLD. */
static int rec_wait(struct rec *rc)
{
    int sfd = rc->r->sigfd;
    rt_ticker_arm(&rc->tk);
    struct pollfd pf[2] = {{rc->tk.fd, POLLIN, 0}, {sfd, POLLIN, 0}};
    int n = poll(pf, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 100);
    if (n < 0 && errno != EINTR)
        return -1;
    return ((pf[0].revents & POLLIN) ? REC_TICK : 0) |
           (sfd >= 0 && (pf[1].revents & POLLIN) ? REC_SIGNAL : 0);
}

/* The queued signals. run: forwarded to the job (SIGCHLD only woke us up); record: any of
 * them ends the recording. */
static void rec_signals(struct rec *rc)
{
    struct signalfd_siginfo si;
    while (read(rc->r->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        /* A terminal's Ctrl-C already reached the job (same process group, sent by the
         * kernel); forward only what was sent to rtrack itself. */
        if (rc->job > 0 && si.ssi_signo != SIGCHLD && si.ssi_code != SI_KERNEL)
            kill(rc->job, (int)si.ssi_signo);
        if (!rc->job)
            step_end_of(rc, &si);
    }
    if (!rc->job)
        rc->stop = "interrupted";
}

/* A sample at each deadline until something ends the recording; the sample taken when it ends
 * is the final one. A failed wait ends the loop without one (run takes it after). */
static void rec_loop(struct rec *rc)
{
    while (!rc->stop) {
        int ev = rec_wait(rc);
        if (ev < 0)
            break;
        if (ev & REC_SIGNAL)
            rec_signals(rc);
        if (!rc->stop && rc->job > 0 && job_exited(rc->job))
            rc->stop = "exited";
        if (!rc->stop && !(ev & REC_TICK))
            continue;
        if (!rc->stop && rc->stop_at > 0 && rt_clock_s(CLOCK_MONOTONIC) >= rc->stop_at - 1e-6)
            rc->stop = "duration";
        rec_sample(rc, rc->stop ? RT_SAMPLE_FINAL : RT_SAMPLE_PERIODIC);
    }
}

/* run: the job has exited (or waiting failed). Its final sample is taken while it is still a
 * zombie, if the loop did not take it, then it is reaped, and the orphans with it. */
static void rec_reap_job(struct rec *rc, struct rt_record_result *out)
{
    if (rc->smp.prev->kind != RT_SAMPLE_FINAL)
        rec_sample(rc, RT_SAMPLE_FINAL);
    int status = 0;
    while (waitpid(rc->job, &status, 0) < 0 && errno == EINTR)
        ;
    reap_orphans(rc->smp.prev, rc->cc.subreaper, rc->job);
    if (WIFSIGNALED(status)) {
        out->signal = WTERMSIG(status);
        out->exit_code = 128 + (int)out->signal;
    } else {
        out->exit_code = WEXITSTATUS(status);
    }
}

/* The run's end, committed with the final sample. run: finished when the job exited 0; record:
 * finished unless samples were lost. */
static void rec_end(struct rec *rc, struct rt_record_result *out)
{
    out->elapsed = rt_clock_s(CLOCK_MONOTONIC) - rc->t0;
    struct rt_run_end e = rt_run_end_none(rt_clock_s(CLOCK_REALTIME));
    if (rc->job > 0) {
        e.status = out->exit_code == 0 ? "finished" : "failed";
        e.exit_code = out->exit_code;
        e.exit_signal = out->signal;
        e.end_reason = out->signal != RT_NA ? "signaled" : "exited";
        /* what the kernel kept of the reaped job and orphans: their CPU time and the largest
         * resident set one of them reached, a peak no sample can miss (rtrack has no other
         * child processes) */
        struct rusage ru;
        if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
            e.maxrss_kib = ru.ru_maxrss;
            e.utime_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
            e.stime_s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
        }
        /* an OOM kill anywhere on the host while the job ran: with a job killed by SIGKILL,
         * the likely killer (summary says so) */
        int64_t oom = rt_oom_kills(rc->r->sys);
        if (rc->oom0 != RT_NA && oom != RT_NA && oom >= rc->oom0)
            e.oom_kills = oom - rc->oom0;
        e.cgroup_peak_bytes = rt_cgroup_peak_end(&rc->peak);
    } else {
        e.status = rc->smp.failed ? "failed" : "finished";
        e.end_reason = rc->stop ? rc->stop : "interrupted";
        e.cgroup_peak_bytes = rt_cgroup_peak_end(&rc->peak);
        e.cgroup_oom_kills = rt_cgroup_oom_end(&rc->oom);
        if (rc->step_end) {
            if (rc->r->cgroup && (e.cgroup_oom_kills == RT_NA || rc->step_oom > e.cgroup_oom_kills))
                e.cgroup_oom_kills = rc->step_oom;
            e.exit_code = rc->step_code;
            e.exit_signal = rc->step_signal;
            e.slurm_job_state = rc->step_state;
        }
    }
    if (rt_sampler_end(&rc->smp, &e) != 0 && !rc->smp.warned)
        rt_warn("recording failed: %s", rt_store_error(rc->r->store));
    rec_facts(rc, 1);
    out->reason = e.end_reason;
    out->stored = rc->smp.stored;
    out->failed = rc->smp.failed;
}

void rt_record(struct rt_recording *r, struct rt_record_result *out)
{
    *out = (struct rt_record_result){0, 0, RT_NA, NULL, 0, 0, 0};
    struct rec rc = {.r = r};
    if (r->argv) {
        if (rec_spawn(&rc, out) != 0)
            return;
    } else {
        out->started = 1;
        rc.cc = (struct rt_collect_cfg){r->pid, 0, r->interval, r->full_scan, r->cgroup};
        /* before the baseline: what the cgroup held before the tree's work began */
        if (r->cgroup)
            rt_cgroup_peak_open_at(r->sys, r->cgroup, &rc.peak);
        rt_cgroup_oom_open(r->sys, r->cgroup, &rc.oom);
    }
    rec_baseline(&rc);
    rec_loop(&rc);
    if (rc.job > 0)
        rec_reap_job(&rc, out);
    rec_end(&rc, out);
    rt_ticker_close(&rc.tk);
    rt_sampler_close(&rc.smp);
}
