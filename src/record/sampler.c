/* sampler.c - taking and storing samples; deadlines; signals. */
#include "rtrack/record/sampler.h"

#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/export/export.h"
#include "rtrack/base/log.h"

void rt_sampler_open(struct rt_sampler *s, const struct rt_sysenv *env,
                     const struct rt_collect_cfg *cc, struct rt_store *store, double interval)
{
    memset(s, 0, sizeof(*s));
    s->env = env;
    s->col = rt_collectors_open(env, cc);
    s->store = store;
    s->interval = interval;
    s->cur = &s->buf[0];
    s->prev = NULL;
}

struct rt_sample *rt_sampler_collect(struct rt_sampler *s, enum rt_sample_kind kind)
{
    double wall = rt_clock_s(CLOCK_REALTIME);
    double mono = rt_clock_s(CLOCK_MONOTONIC);
    rt_sample_begin(s->cur, s->prev, kind, wall, mono);
    rt_collectors_sample(s->col, s->cur, s->prev);
    return s->cur;
}

void rt_sampler_store(struct rt_sampler *s)
{
    struct rt_sample *cur = s->cur;
    int rc = rt_store_add_sample(s->store, cur);
    if (rc == 0) {
        if (s->uncommitted++ == 0) {
            s->first_uncommitted = cur->mono;
            /* Another connection committed since we last looked (a second recorder into this
             * database): it waits for the write lock, which a batch holds across intervals, so
             * it would sample about once a second. While others write, commit every sample,
             * so they wait for one sample's insert at most. (Looked at once the transaction
             * is open: what they committed while we waited for the lock counts.) */
            if (rt_store_others_wrote(s->store))
                s->shared_until = cur->mono + 10.0;
        }
        if (cur->kind != RT_SAMPLE_BASELINE)
            rt_live_write(s->live, rt_store_last_sample_id(s->store));
        /* the final sample is committed with the run's end (rt_sampler_end) */
        if (cur->kind == RT_SAMPLE_BASELINE ||
            (cur->kind == RT_SAMPLE_PERIODIC &&
             (cur->mono < s->shared_until ||
              cur->mono + s->interval - s->first_uncommitted > 1.0 + 1e-3))) {
            rc = rt_store_commit(s->store);
            if (rc == 0) {
                s->stored += s->uncommitted;
                s->uncommitted = 0;
            }
        }
    }
    if (rc != 0) {
        /* the failed transaction was rolled back with every sample in it */
        s->failed += s->uncommitted + (s->uncommitted == 0);
        s->uncommitted = 0;
        if (!s->warned) {
            rt_warn("recording failed: %s; the job is not affected, rtrack keeps trying",
                    rt_store_error(s->store));
            s->warned = 1;
        }
    }
    /* Startup (schema parsing, host facts, the first scans) leaves freed heap behind that
     * glibc keeps; hand it back once, so the steady state is what the recorder holds. */
    if (cur->kind == RT_SAMPLE_BASELINE)
        malloc_trim(0);
    /* the sample just taken becomes the previous one */
    s->prev = cur;
    s->cur = cur == &s->buf[0] ? &s->buf[1] : &s->buf[0];
}

int rt_sampler_end(struct rt_sampler *s, const struct rt_run_end *e)
{
    int rc = rt_store_end_run(s->store, e);
    if (rc == 0)
        s->stored += s->uncommitted;
    else
        s->failed += s->uncommitted;
    s->uncommitted = 0;
    return rc;
}

void rt_sampler_close(struct rt_sampler *s)
{
    rt_collectors_close(s->col);
    rt_sample_free(&s->buf[0]);
    rt_sample_free(&s->buf[1]);
    s->col = NULL;
}

int rt_ticker_open(struct rt_ticker *t, double start, double interval, double stop_at)
{
    t->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    t->start = start;
    t->interval = interval;
    t->stop_at = stop_at;
    return t->fd < 0 ? -1 : 0;
}

double rt_ticker_arm(struct rt_ticker *t)
{
    double now = rt_clock_s(CLOCK_MONOTONIC);
    double k = floor((now - t->start) / t->interval) + 1;
    double next = t->start + k * t->interval;
    if (t->stop_at > 0 && t->stop_at < next)
        next = t->stop_at;
    struct itimerspec its;
    memset(&its, 0, sizeof(its));
    its.it_value.tv_sec = (time_t)next;
    its.it_value.tv_nsec = (long)((next - floor(next)) * 1e9);
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1;
    /* Setting the timer resets its expiry count, so nothing is read from the fd: reading after
     * arming could swallow an expiry that happened in between and leave the one-shot timer
     * disarmed for good (found by the benchmarks at 10 ms intervals). */
    timerfd_settime(t->fd, TFD_TIMER_ABSTIME, &its, NULL);
    return next;
}

void rt_ticker_close(struct rt_ticker *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

int rt_signals_open(const int *sigs, int nsigs)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < nsigs; i++)
        sigaddset(&set, sigs[i]);
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}
