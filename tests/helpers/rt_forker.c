/* rt_forker - process-creation workloads for the fault tests.
 *
 *   rt_forker storm RATE SECONDS OUT   fork RATE short-lived children per second for SECONDS
 *                                      (each spins about 100 us, then exits), reaping them as
 *                                      they go; then write "forks=N cpu=S" to OUT, S being the
 *                                      kernel's CPU seconds of this process and all its reaped
 *                                      children (getrusage SELF + CHILDREN, user + system)
 *   rt_forker chain DEPTH SECONDS OUT  a chain of DEPTH descendants (each the only child of the
 *                                      one before); the deepest writes its depth to OUT, sleeps
 *                                      SECONDS and exits; each process waits for its child
 *   rt_forker exit CODE                exit with CODE at once (a job that lives well under 1 ms) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int storm(double rate, double secs, const char *out)
{
    double t0 = now(), end = t0 + secs;
    long forks = 0, failed = 0;
    for (;;) {
        double t = now();
        if (t >= end)
            break;
        /* as many children as the schedule asks for by now (the rate holds when this process
         * was descheduled for a while), but in bursts of at most 50 and never past the end:
         * where forking is slower than RATE, the storm still lasts SECONDS */
        long due = (long)((t - t0) * rate) + 1;
        for (int burst = 0; forks < due && burst < 50; burst++) {
            pid_t pid = fork();
            if (pid == 0) {
                double stop = now() + 100e-6;
                while (now() < stop)
                    ;
                _exit(0);
            }
            if (pid < 0) {
                failed++;
                break;
            }
            forks++;
        }
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
        struct timespec nap = {0, 200000};
        nanosleep(&nap, NULL);
    }
    while (wait(NULL) > 0)
        ;
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    FILE *f = fopen(out, "w");
    if (!f)
        return 1;
    fprintf(f, "forks=%ld failed=%ld cpu=%.6f\n", forks, failed,
            tv_s(self.ru_utime) + tv_s(self.ru_stime) + tv_s(kids.ru_utime) + tv_s(kids.ru_stime));
    return fclose(f) == 0 ? 0 : 1;
}

static int chain(int depth, double secs, const char *out)
{
    int level = 0;
    while (level < depth) {
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0) {
            int status;
            while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                    return 1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        }
        level++;
    }
    FILE *f = fopen(out, "w");
    if (!f)
        return 1;
    fprintf(f, "%d\n", level);
    fclose(f);
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "storm") == 0)
        return storm(atof(argv[2]), atof(argv[3]), argv[4]);
    if (argc == 5 && strcmp(argv[1], "chain") == 0)
        return chain(atoi(argv[2]), atof(argv[3]), argv[4]);
    if (argc == 3 && strcmp(argv[1], "exit") == 0)
        return atoi(argv[2]);
    fprintf(stderr, "usage: rt_forker storm RATE SECONDS OUT | chain DEPTH SECONDS OUT | "
                    "exit CODE\n");
    return 2;
}
