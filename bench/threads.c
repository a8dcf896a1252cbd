/* rt_threads - the workload of bench/threads.sh: a process with many threads, or a tree of
 * such processes, that a recorder tracks (issue 32: the cost per sample grew with threads).
 *
 * usage: rt_threads [-p PROCS] [-t THREADS] [-b BUSY] [-r READY_FILE]
 *        rt_threads -F PID -i INTERVAL_S
 *
 * PROCS processes (default 1: the first one, whose pid is written to READY_FILE, forks the
 * others as its children), each with THREADS threads, the main thread included (default 10).
 * Every thread blocks on a condition variable that is never signalled: a pool waiting for work,
 * as the Python threads waiting on an event. BUSY of the first process's threads
 * (default 0) work instead, 5 ms of spinning every 50 ms each: a pool where a few threads run
 * (a JVM's collector and compiler threads, a server's busy workers). READY_FILE is written once
 * every thread of every process has started. It runs until it is killed (the bench kills its
 * process group). Threads get 64 KiB stacks, so 10 000 of them fit in little memory.
 *
 * -F: the floor beside a recorder of PID, the least any tracker that reports its tree's memory
 * as PSS and its CPU time reads: the stat and smaps_rollup of PID and of its children (found
 * once: the workload's tree does not change), each through a descriptor kept open, one pread
 * each every INTERVAL_S on absolute deadlines, nothing stored, until killed. The kernel
 * sums a stat over every thread, and smaps_rollup walks every mapping, each thread's stack
 * too: what this costs a sample grows with threads for any such tracker. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *idle(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mu);
    for (;;)
        pthread_cond_wait(&never, &mu);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *busy(void *arg)
{
    (void)arg;
    volatile unsigned long x = 0;
    for (;;) {
        double end = now() + 0.005;
        while (now() < end)
            for (int i = 0; i < 1000; i++)
                x += (unsigned long)i;
        struct timespec d = {0, 45000000};
        nanosleep(&d, NULL);
    }
    return NULL;
}

/* THREADS - 1 more threads in this process, nbusy of them busy; 0 when all started */
static int start_threads(int threads, int nbusy)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 64 * 1024);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    for (int i = 1; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, i <= nbusy ? busy : idle, NULL) != 0) {
            perror("rt_threads: pthread_create");
            return -1;
        }
    }
    pthread_attr_destroy(&a);
    return 0;
}

/* -F: PID and its children (the workload's tree, which does not change), their stat and
 * smaps_rollup read every interval, until killed */
static int floor_reader(int pid, double interval)
{
    static char buf[1 << 20];
    static int fds[2 * 1024];
    int nfd = 0;
    DIR *d = opendir("/proc");
    struct dirent *de;
    while (d && (de = readdir(d)) && nfd + 2 <= (int)(sizeof(fds) / sizeof(fds[0]))) {
        int p = atoi(de->d_name), ppid = 0;
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/stat", p);
        FILE *f = p > 0 ? fopen(path, "r") : NULL;
        if (!f)
            continue;
        /* the ppid after the last ')' (rt_threads' names have none inside) */
        if (fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) != 1)
            ppid = 0;
        fclose(f);
        if (p != pid && ppid != pid)
            continue;
        fds[nfd++] = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", p);
        fds[nfd++] = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (d)
        closedir(d);
    if (nfd == 0 || interval <= 0) {
        fprintf(stderr, "rt_threads -F: no process %d, or no interval\n", pid);
        return 1;
    }
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (;;) {
        for (int i = 0; i < nfd; i++)
            if (fds[i] < 0 || pread(fds[i], buf, sizeof(buf), 0) <= 0)
                return 0; /* gone */
        long ns = next.tv_nsec + (long)(interval * 1e9);
        next.tv_sec += ns / 1000000000;
        next.tv_nsec = ns % 1000000000;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
}

int main(int argc, char **argv)
{
    int procs = 1, threads = 10, nbusy = 0, floor_pid = 0, c;
    double interval = 1.0;
    const char *ready = NULL;
    while ((c = getopt(argc, argv, "p:t:b:r:F:i:")) != -1) {
        switch (c) {
        case 'F':
            floor_pid = atoi(optarg);
            break;
        case 'i':
            interval = atof(optarg);
            break;
        case 'p':
            procs = atoi(optarg);
            break;
        case 't':
            threads = atoi(optarg);
            break;
        case 'b':
            nbusy = atoi(optarg);
            break;
        case 'r':
            ready = optarg;
            break;
        default:
            fprintf(stderr, "usage: rt_threads [-p PROCS] [-t THREADS] [-b BUSY] [-r READY]\n"
                            "       rt_threads -F PID -i INTERVAL_S\n");
            return 2;
        }
    }
    if (floor_pid > 0)
        return floor_reader(floor_pid, interval);
    if (procs < 1 || threads < 1 || nbusy < 0 || nbusy >= threads) {
        fprintf(stderr, "rt_threads: PROCS >= 1, THREADS >= 1, 0 <= BUSY < THREADS\n");
        return 2;
    }
    /* each child says it has started its threads by closing its end of a pipe */
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    for (int i = 1; i < procs; i++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            close(fds[0]);
            if (start_threads(threads, 0) != 0)
                _exit(1);
            close(fds[1]);
            idle(NULL);
        }
    }
    close(fds[1]);
    if (start_threads(threads, nbusy) != 0)
        return 1;
    char b;
    while (read(fds[0], &b, 1) > 0)
        ; /* end of file: every child has started its threads (or died) */
    if (ready) {
        FILE *f = fopen(ready, "w");
        if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
            return 1;
    }
    idle(NULL);
    return 0;
}
