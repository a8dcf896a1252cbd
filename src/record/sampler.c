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

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/export/export.h"

/* A sample and what the sampler knows of it. The sample comes first: a slot is found from
 * its sample's address. */
struct rt_slot {
    struct rt_sample smp;
    size_t bytes; /* its memory, while kept */
    int kept;     /* in s->kept: not committed yet */
    int lived;    /* its live output line was written */
};

static struct rt_slot *slot_of(struct rt_sample *m)
{
    return (struct rt_slot *)(void *)m;
}

/* The memory a sample holds: what bounds the samples kept. */
static size_t sample_bytes(const struct rt_sample *m)
{
    size_t b = sizeof(struct rt_slot) + (size_t)m->cores_cap * sizeof(*m->cores) +
               (size_t)m->disks_cap * sizeof(*m->disks) +
               (size_t)m->mounts_cap * sizeof(*m->mounts) + (size_t)m->nics_cap * sizeof(*m->nics) +
               (size_t)m->procs_cap * sizeof(*m->procs) + (size_t)m->gpus_cap * sizeof(*m->gpus) +
               (size_t)m->gpu_procs_cap * sizeof(*m->gpu_procs);
    for (int i = 0; i < m->nprocs; i++)
        if (m->procs[i].cmdline_json)
            b += strlen(m->procs[i].cmdline_json) + 1;
    return b;
}

static void slot_free(struct rt_slot *sl)
{
    if (!sl)
        return;
    rt_sample_free(&sl->smp);
    free(sl);
}

/* A slot that is neither kept nor the current or previous sample is free for a new sample. */
static void slot_release(struct rt_sampler *s, struct rt_slot *sl)
{
    if (!sl || sl->kept || &sl->smp == s->cur || &sl->smp == s->prev)
        return;
    *RT_PUSH(s->spare, s->nspare, s->spare_cap) = sl;
}

static struct rt_slot *kept_at(const struct rt_sampler *s, int i)
{
    return s->kept[(s->kept_head + i) % s->kept_cap];
}

static void kept_push(struct rt_sampler *s, struct rt_slot *sl, size_t bytes)
{
    if (s->nkept == s->kept_cap) {
        /* grow, unwrapping the ring */
        int cap = s->kept_cap ? s->kept_cap * 2 : 8;
        struct rt_slot **k = xcalloc((size_t)cap, sizeof(*k));
        for (int i = 0; i < s->nkept; i++)
            k[i] = kept_at(s, i);
        free(s->kept);
        s->kept = k;
        s->kept_cap = cap;
        s->kept_head = 0;
    }
    s->kept[(s->kept_head + s->nkept++) % s->kept_cap] = sl;
    sl->kept = 1;
    sl->bytes = bytes;
    s->kept_bytes += bytes;
}

/* Take the n oldest kept samples off the queue: committed (counted stored) or lost. */
static void kept_pop(struct rt_sampler *s, int n, int committed)
{
    for (int i = 0; i < n; i++) {
        struct rt_slot *sl = kept_at(s, 0);
        s->kept_head = (s->kept_head + 1) % s->kept_cap;
        s->nkept--;
        s->kept_bytes -= sl->bytes;
        sl->kept = 0;
        if (committed && sl->smp.ngpus > 0)
            s->gpus_committed = 1;
        slot_release(s, sl);
    }
    if (committed)
        s->stored += n;
    else
        s->failed += n;
    s->added = s->added > n ? s->added - n : 0;
}

/* After the database took every waiting sample: the slots that held them go back to the
 * system; the steady state needs few. */
static void spare_trim(struct rt_sampler *s)
{
    for (int i = 0; i < s->nspare; i++)
        slot_free(s->spare[i]);
    s->nspare = 0;
    malloc_trim(0);
}

void rt_sampler_open(struct rt_sampler *s, const struct rt_sysenv *env,
                     const struct rt_collect_cfg *cc, struct rt_store *store, double interval)
{
    memset(s, 0, sizeof(*s));
    s->env = env;
    s->col = rt_collectors_open(env, cc);
    s->store = store;
    s->interval = interval;
    s->keep_bytes = RT_SAMPLER_KEEP_BYTES;
}

struct rt_sample *rt_sampler_collect(struct rt_sampler *s, enum rt_sample_kind kind)
{
    if (!s->cur) {
        struct rt_slot *sl = s->nspare ? s->spare[--s->nspare] : xcalloc(1, sizeof(*sl));
        sl->lived = 0;
        s->cur = &sl->smp;
    }
    double wall = rt_clock_s(CLOCK_REALTIME);
    double mono = rt_clock_s(CLOCK_MONOTONIC);
    rt_sample_begin(s->cur, s->prev, kind, wall, mono);
    rt_collectors_sample(s->col, s->cur, s->prev);
    return s->cur;
}

/* A write failed and the store rolled its transaction back: every kept sample waits now. */
static void write_failed(struct rt_sampler *s, double now)
{
    s->added = 0;
    s->catching_up = 0;
    s->retry_at = now + RT_SAMPLER_RETRY_S;
    /* a deleted database takes nothing ever again: keep nothing for it */
    if (!rt_store_retryable(s->store))
        kept_pop(s, s->nkept, 0);
    if (!s->warned) {
        rt_warn("recording failed: %s; the job is not affected, rtrack keeps trying",
                rt_store_error(s->store));
        s->warned = 1;
    }
}

/* Add kept sample i to the open transaction (opened on demand), with its live output line. */
static int add_kept(struct rt_sampler *s, int i)
{
    struct rt_slot *sl = kept_at(s, i);
    if (rt_store_add_sample(s->store, &sl->smp) != 0)
        return -1;
    s->added++;
    if (!sl->lived && sl->smp.kind != RT_SAMPLE_BASELINE)
        rt_live_write(s->live, rt_store_last_sample_id(s->store));
    sl->lived = 1;
    return 0;
}

/* Add up to n of the waiting samples, oldest first, to the open transaction; committed when
 * asked (on success the committed ones leave the queue). */
static int write_waiting(struct rt_sampler *s, int n, int commit)
{
    for (int k = 0; k < n && s->added < s->nkept; k++)
        if (add_kept(s, s->added) != 0)
            return -1;
    if (!commit)
        return 0;
    if (rt_store_commit(s->store) != 0)
        return -1;
    kept_pop(s, s->added, 1);
    return 0;
}

/* Samples wait: once it is time, the oldest is tried alone (a full disk costs one sample's
 * inserts a second), then, while writes succeed, up to this many a sample. */
#define CATCH_UP_MAX 256
static void catch_up(struct rt_sampler *s, double now)
{
    if (!s->catching_up && now < s->retry_at)
        return;
    if (write_waiting(s, s->catching_up ? CATCH_UP_MAX : 1, 1) != 0) {
        write_failed(s, now);
        return;
    }
    s->catching_up = s->nkept > 0;
    if (!s->nkept)
        spare_trim(s);
}

/* Nothing waits: the sample goes into the open transaction, which commits at the cadence. */
static void store_in_tx(struct rt_sampler *s, struct rt_sample *cur, size_t bytes)
{
    kept_push(s, slot_of(cur), bytes);
    if (add_kept(s, s->nkept - 1) != 0) {
        write_failed(s, cur->mono);
        return;
    }
    if (s->added == 1) {
        s->first_uncommitted = cur->mono;
        /* Another connection committed since we last looked (a second recorder into this
         * database): it waits for the write lock, which a batch holds across intervals, so
         * it would sample about once a second. While others write, commit every sample,
         * so they wait for one sample's insert at most. (Looked at once the transaction
         * is open: what they committed while we waited for the lock counts.) */
        if (rt_store_others_wrote(s->store))
            s->shared_until = cur->mono + 10.0;
    }
    /* the final sample is committed with the run's end (rt_sampler_end) */
    if (cur->kind == RT_SAMPLE_BASELINE ||
        (cur->kind == RT_SAMPLE_PERIODIC &&
         (cur->mono < s->shared_until || s->kept_bytes > RT_SAMPLER_BATCH_BYTES ||
          cur->mono + s->interval - s->first_uncommitted > 1.0 + 1e-3))) {
        if (write_waiting(s, 0, 1) != 0)
            write_failed(s, cur->mono);
    }
}

int rt_sampler_gpus_settled(struct rt_sampler *s)
{
    return s->gpus_committed || rt_collectors_gpu_none(s->col);
}

void rt_sampler_store(struct rt_sampler *s)
{
    struct rt_sample *cur = s->cur;
    /* Samples wait: the oldest go first, when it is time to try (the final sample is written
     * with the run's end, rt_sampler_end). */
    if (s->added < s->nkept && cur->kind != RT_SAMPLE_FINAL)
        catch_up(s, cur->mono);
    size_t bytes = sample_bytes(cur);
    if (s->added == s->nkept) {
        store_in_tx(s, cur, bytes);
    } else if (s->kept_bytes + bytes <= s->keep_bytes) {
        kept_push(s, slot_of(cur), bytes);
    } else {
        /* the oldest are kept; this one is lost */
        s->failed++;
        if (!s->warned_full) {
            rt_warn("recording has failed for too long: %d samples (%zu KiB) wait in memory for "
                    "the database; later samples are lost until it takes them",
                    s->nkept, s->kept_bytes >> 10);
            s->warned_full = 1;
        }
    }
    /* Startup (schema parsing, host facts, the first scans) leaves freed heap behind that
     * glibc keeps; hand it back once, so the steady state is what the recorder holds. */
    if (cur->kind == RT_SAMPLE_BASELINE)
        malloc_trim(0);
    /* the sample just taken becomes the previous one */
    struct rt_sample *old = s->prev;
    s->prev = cur;
    s->cur = NULL;
    if (old)
        slot_release(s, slot_of(old));
}

void rt_sampler_drop(struct rt_sampler *s)
{
    struct rt_sample *cur = s->cur;
    s->cur = NULL;
    if (cur)
        slot_release(s, slot_of(cur));
    s->last_final = 1;
}

int rt_sampler_end(struct rt_sampler *s, const struct rt_run_end *e)
{
    double give_up = rt_clock_s(CLOCK_MONOTONIC) + RT_SAMPLER_END_WAIT_S;
    double pause = 0.1;
    for (;;) {
        /* what waits goes first, oldest first; the last of it is committed with the end */
        int rc = 0;
        while (rc == 0 && s->nkept - s->added > CATCH_UP_MAX)
            rc = write_waiting(s, CATCH_UP_MAX, 1);
        if (rc == 0)
            rc = write_waiting(s, s->nkept, 0);
        if (rc == 0 && s->last_final)
            rc = rt_store_last_is_final(s->store);
        if (rc == 0)
            rc = rt_store_end_run(s->store, e);
        if (rc == 0) {
            kept_pop(s, s->added, 1);
            return 0;
        }
        /* the store rolled the transaction back */
        s->added = 0;
        double now = rt_clock_s(CLOCK_MONOTONIC);
        if (!rt_store_retryable(s->store) || now + pause > give_up)
            break;
        /* a disk that fills up as the job ends may have room again a moment later */
        usleep((useconds_t)(pause * 1e6));
        pause *= 2;
    }
    kept_pop(s, s->nkept, 0);
    return -1;
}

void rt_sampler_close(struct rt_sampler *s)
{
    rt_collectors_close(s->col);
    s->col = NULL;
    struct rt_slot *cur = s->cur ? slot_of(s->cur) : NULL;
    struct rt_slot *prev = s->prev ? slot_of(s->prev) : NULL;
    if (cur && !cur->kept)
        slot_free(cur);
    if (prev && prev != cur && !prev->kept)
        slot_free(prev);
    for (int i = 0; i < s->nkept; i++)
        slot_free(kept_at(s, i));
    for (int i = 0; i < s->nspare; i++)
        slot_free(s->spare[i]);
    free(s->kept);
    free(s->spare);
    s->cur = s->prev = NULL;
    s->kept = s->spare = NULL;
    s->nkept = s->nspare = s->kept_cap = s->spare_cap = 0;
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
