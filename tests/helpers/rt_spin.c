/* rt_spin SECONDS [CHILDREN [THREADS [REPORT [hold]]]] - burn CPU: CHILDREN busy-loop child
 * processes (default 0, the process itself spins then) for SECONDS of wall time, then exit 0.
 *
 * THREADS (default 1) threads spin in each spinning process, its main thread one of them. With
 * REPORT (and no children), what the kernel says of the process's threads is written there
 * once they stop spinning: "RUN_NS WAIT_NS WALL_NS PID", their schedstat run and wait times
 * summed (each thread reads its own as it stops) and the wall time of the spin: a many-threaded
 * job's demand, measured by itself (tests/cli/test_rightsizing.sh). With "hold" the threads then
 * block instead of exiting, and the process waits for SIGTERM to exit 0: nothing of it runs or
 * waits any more, so its threads' files can be read while they say what they will say. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(double secs)
{
    volatile unsigned long x = 0;
    double end = now() + secs;
    while (now() < end)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
}

static double secs;
static int hold;
static pthread_barrier_t stopped;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long run_sum, wait_sum;

/* spin, then add this thread's schedstat to the sums; arg: NULL in the main thread */
static void *spinner(void *arg)
{
    spin(secs);
    unsigned long long r = 0, w = 0;
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f || fscanf(f, "%llu %llu", &r, &w) != 2)
        abort();
    fclose(f);
    pthread_mutex_lock(&mu);
    run_sum += r;
    wait_sum += w;
    pthread_mutex_unlock(&mu);
    pthread_barrier_wait(&stopped);
    while (hold && arg)
        pause(); /* SIGTERM is blocked here: the main thread waits for it */
    return NULL;
}

/* THREADS threads spin, the main thread one of them; REPORT as the top of this file says */
static int spin_threads(int threads, const char *report)
{
    pthread_t *t = calloc((size_t)threads, sizeof(*t));
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    pthread_barrier_init(&stopped, NULL, (unsigned)threads);
    double t0 = now();
    for (int i = 1; i < threads; i++)
        if (pthread_create(&t[i], NULL, spinner, &hold) != 0)
            return 1;
    spinner(NULL);
    double wall = now() - t0;
    if (!hold)
        for (int i = 1; i < threads; i++)
            pthread_join(t[i], NULL);
    if (report) {
        FILE *f = fopen(report, "w");
        if (!f ||
            fprintf(f, "%llu %llu %llu %d\n", run_sum, wait_sum, (unsigned long long)(wall * 1e9),
                    (int)getpid()) < 0 ||
            fclose(f) != 0)
            return 1;
    }
    if (hold) {
        int sig;
        sigwait(&term, &sig);
    }
    return 0;
}

int main(int argc, char **argv)
{
    secs = argc > 1 ? atof(argv[1]) : 1.0;
    int n = argc > 2 ? atoi(argv[2]) : 0;
    int threads = argc > 3 ? atoi(argv[3]) : 1;
    const char *report = argc > 4 ? argv[4] : NULL;
    hold = argc > 5 && !strcmp(argv[5], "hold");
    if (threads < 1)
        threads = 1;
    if (n <= 0) {
        if (threads == 1 && !report) {
            spin(secs);
            return 0;
        }
        return spin_threads(threads, report);
    }
    for (int i = 0; i < n; i++)
        if (fork() == 0) {
            if (threads == 1) {
                spin(secs);
                _exit(0);
            }
            _exit(spin_threads(threads, NULL));
        }
    while (wait(NULL) > 0)
        ;
    return 0;
}
