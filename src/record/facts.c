/* facts.c - the cloud of a recording, asked on a thread of its own and stored with the run (see
 * include/rtrack/record/facts.h). */
#include "rtrack/record/facts.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/store/store.h"

/* what discovery may take (collect/cloud.h cuts every request to what is left of it) */
#define CLOUD_BUDGET_S 2.0

struct rt_cloud_job {
    char *db_path;
    int64_t run;
    struct rt_cloud_opts o;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
};

static void *cloud_thread(void *arg)
{
    struct rt_cloud_job *j = arg;
    struct rt_cloud c;
    rt_cloud_discover(&c, &j->o, CLOUD_BUDGET_S);
    struct rt_store *s = NULL;
    char err[512];
    /* nothing found (not on a cloud): nothing to store, the columns stay NULL */
    if (c.vendor_id) {
        if (rt_store_open(j->db_path, RT_STORE_WRITE, &s, err, sizeof(err)) != 0)
            rt_warn("cloud: cannot store what the metadata service said: %s", err);
        else if (rt_store_set_run_cloud(s, j->run, &c) != 0)
            rt_warn("cloud: cannot store what the metadata service said: %s", rt_store_error(s));
        rt_store_close(s);
    }
    rt_cloud_free(&c);
    pthread_mutex_lock(&j->mu);
    j->done = 1;
    pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return NULL;
}

struct rt_cloud_job *rt_cloud_job_start(const char *db_path, int64_t run,
                                        const struct rt_cloud_opts *o)
{
    struct rt_cloud_job *j = xcalloc(1, sizeof(*j));
    j->db_path = xstrdup(db_path);
    j->run = run;
    j->o = *o;
    pthread_mutex_init(&j->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&j->cv, &ca);
    pthread_condattr_destroy(&ca);
    /* the recorder's signals stay with the recorder (its signalfd) */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&j->th, NULL, cloud_thread, j);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        rt_warn("cloud: cannot start the discovery thread; the run is recorded without its "
                "cloud");
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->cv);
        free(j->db_path);
        free(j);
        return NULL;
    }
    return j;
}

int rt_cloud_job_wait(struct rt_cloud_job *j, double timeout)
{
    if (!j)
        return 0;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    double d = (double)dl.tv_sec + (double)dl.tv_nsec / 1e9 + timeout;
    dl.tv_sec = (time_t)d;
    dl.tv_nsec = (long)((d - (double)dl.tv_sec) * 1e9);
    pthread_mutex_lock(&j->mu);
    while (!j->done)
        if (pthread_cond_timedwait(&j->cv, &j->mu, &dl) != 0)
            break;
    int done = j->done;
    pthread_mutex_unlock(&j->mu);
    return done ? 0 : -1;
}

void rt_cloud_job_finish(struct rt_cloud_job *j)
{
    if (!j)
        return;
    pthread_join(j->th, NULL);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j->db_path);
    free(j);
}
