/* stream.c - streaming a run to Sentinel while it is recorded.
 *
 * A thread with its own database connection registers the run, then every upload interval
 * sends the samples committed since the last batch (rt_upload_send: the same batches as
 * `rtrack upload`, read back from the database, so nothing grows in memory with the run).
 * When the run has ended it sends the rest and finishes, within a bounded time; whatever does
 * not get through stays pending in the database for `rtrack upload`. A failure is reported
 * once per streak and retried at the next interval: a batch is never dropped. */
#include "rtrack/upload/stream.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/store/store.h"
#include "rtrack/upload/upload.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"

struct rt_streamer {
    char *db_path;
    int64_t run;
    double interval;
    struct rt_sentinel s;
    struct rt_upload_opts o;
    void (*ready)(void *ud); /* waited for before the run is registered, or NULL */
    void *ready_ud;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* wakes the thread: stop */
    int done_fd;       /* an eventfd: readable when done (the main thread polls it with a
                        * signalfd); -1 if none could be had (then polled for every 100 ms) */
    int stop, done, ok;
    int facts;         /* rt_streamer_facts_stored() was called */
    double facts_wait; /* ... waited for at most this long */
};

static struct timespec deadline_in(double s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double d = t.tv_sec + t.tv_nsec / 1e9 + s;
    t.tv_sec = (time_t)d;
    t.tv_nsec = (long)((d - (double)t.tv_sec) * 1e9);
    return t;
}

static void *streamer(void *arg)
{
    struct rt_streamer *st = arg;
    struct rt_store *store = NULL;
    struct rt_upload_session *u = NULL;
    char err[512];
    int failing = 0, doubt = 0;
    if (rt_store_open(st->db_path, RT_STORE_WRITE, &store, err, sizeof(err)) != 0) {
        rt_warn("sentinel: cannot open '%s' for streaming: %s; 'rtrack upload' sends the run "
                "later",
                st->db_path, err);
        goto out;
    }
    u = rt_upload_open(store, st->run, &st->s, &st->o);
    if (st->ready)
        st->ready(st->ready_ud); /* the run's facts stored first: they go with the registration */
    /* and its GPUs': the Rust reference registers after reading them too (resource-tracker-rs
     * §5.1); without, a GPU run would be registered as one without GPUs */
    pthread_mutex_lock(&st->mu);
    struct timespec fdl = deadline_in(st->facts_wait);
    while (!st->facts && !st->stop)
        if (pthread_cond_timedwait(&st->cv, &st->mu, &fdl) != 0)
            break;
    pthread_mutex_unlock(&st->mu);
    for (int first = 1;; first = 0) {
        pthread_mutex_lock(&st->mu);
        if (!first) {
            struct timespec dl = deadline_in(st->interval);
            while (!st->stop)
                if (pthread_cond_timedwait(&st->cv, &st->mu, &dl) != 0)
                    break;
        }
        int stop = st->stop;
        pthread_mutex_unlock(&st->mu);
        if (stop)
            break;
        if (doubt)
            continue; /* nothing more to try: wait for the run's end */
        /* the first round only registers the run; later ones send what was committed */
        struct rt_upload_result res = {0};
        if (rt_upload_send(u, &res, err, sizeof(err)) != 0) {
            /* a registration in doubt is not retried (upload.c): saying so once is all */
            doubt = res.in_doubt;
            if (doubt)
                rt_warn("sentinel: streaming stopped: %s; recording goes on, and 'rtrack upload' "
                        "says how to clear the doubt",
                        err);
            else if (!failing)
                rt_warn("sentinel: streaming paused: %s; recording goes on, retried every %.0f s",
                        err, st->interval);
            failing = 1;
        } else if (failing) {
            rt_note("sentinel: streaming resumed");
            failing = 0;
        }
    }
    /* the run has ended: the rest, then finish (not in doubt: that was said) */
    if (doubt) {
        /* nothing sent: the run stays for 'rtrack upload' */
    } else if (rt_upload_finish(u, NULL, err, sizeof(err)) == 0) {
        st->ok = 1;
    } else {
        rt_warn("sentinel: the run was not finished: %s; what was sent is kept, 'rtrack upload' "
                "completes it",
                err);
    }
out:
    rt_upload_close(u);
    rt_store_close(store);
    pthread_mutex_lock(&st->mu);
    st->done = 1;
    pthread_mutex_unlock(&st->mu);
    if (st->done_fd >= 0) {
        uint64_t one = 1;
        while (write(st->done_fd, &one, sizeof(one)) < 0 && errno == EINTR)
            ;
    }
    return NULL;
}

struct rt_streamer *rt_streamer_start(const char *db_path, int64_t run, double interval,
                                      const char *token, const char *api_url,
                                      const struct rt_upload_opts *o, void (*ready)(void *ud),
                                      void *ready_ud, double facts_wait)
{
    struct rt_streamer *st = xcalloc(1, sizeof(*st));
    if (rt_sentinel_init(&st->s, token, api_url) != 0) {
        free(st); /* no token: no network at all */
        return NULL;
    }
    st->db_path = xstrdup(db_path);
    st->run = run;
    st->interval = interval;
    st->o = *o;
    st->ready = ready;
    st->ready_ud = ready_ud;
    st->facts_wait = facts_wait >= 0 && facts_wait < 86400 ? facts_wait : 86400;
    pthread_mutex_init(&st->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->cv, &ca);
    pthread_condattr_destroy(&ca);
    st->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&st->th, NULL, streamer, st);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        /* no thread to be had (pids.max): nothing streams, the run stays for `rtrack upload` */
        rt_warn("sentinel: cannot start the upload thread; 'rtrack upload' sends the run later");
        if (st->done_fd >= 0)
            close(st->done_fd);
        rt_sentinel_free(&st->s);
        free(st->db_path);
        free(st);
        return NULL;
    }
    return st;
}

void rt_streamer_facts_stored(struct rt_streamer *st)
{
    if (!st)
        return;
    pthread_mutex_lock(&st->mu);
    st->facts = 1;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

/* Wait for the streamer to be done, at most `budget` seconds, or until cut says stop: 1 done,
 * 0 out of time, else the signal that cut it short (negated). */
static int wait_done(struct rt_streamer *st, double budget, const struct rt_stream_cut *cut)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pthread_mutex_lock(&st->mu);
        int done = st->done;
        pthread_mutex_unlock(&st->mu);
        if (done)
            return 1;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left =
            budget - ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
        if (left <= 0)
            return 0;
        double ms = ceil(left * 1000.0);
        if (st->done_fd < 0 && ms > 100)
            ms = 100;
        struct pollfd pf[2] = {{st->done_fd, POLLIN, 0}, {cut ? cut->fd : -1, POLLIN, 0}};
        /* (poll skips a negative fd) */
        if (poll(pf, 2, ms > 86400000.0 ? 86400000 : (int)ms) > 0 && (pf[1].revents & POLLIN)) {
            int sig = cut->stop(cut->ud);
            if (sig > 0)
                return -sig;
        }
    }
}

int rt_streamer_finish(struct rt_streamer *st, double budget, const struct rt_stream_cut *cut)
{
    if (!st)
        return RT_STREAM_FINISHED;
    pthread_mutex_lock(&st->mu);
    st->stop = 1;
    pthread_cond_signal(&st->cv);
    pthread_mutex_unlock(&st->mu);
    int how = wait_done(st, budget, cut);
    if (how <= 0) {
        char name[32];
        if (how == 0)
            rt_warn("sentinel: the upload did not end within %.0f s; what was sent is kept, "
                    "'rtrack upload' completes it",
                    budget);
        else
            rt_warn("sentinel: the upload was cut short by %s; what was sent is kept, "
                    "'rtrack upload' completes it",
                    rt_signal_name(-how, name, sizeof(name)));
        pthread_detach(st->th); /* it may still be inside a network call: left to _exit() */
        rt_thread_left();
        return RT_STREAM_LEFT;
    }
    pthread_join(st->th, NULL);
    int ok = st->ok;
    if (st->done_fd >= 0)
        close(st->done_fd);
    rt_sentinel_free(&st->s);
    free(st->db_path);
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    free(st);
    return ok ? RT_STREAM_FINISHED : RT_STREAM_FAILED;
}
