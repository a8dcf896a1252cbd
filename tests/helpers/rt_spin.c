/* rt_spin SECONDS [CHILDREN] - burn CPU: CHILDREN busy-loop child processes (default 0, the
 * process itself spins then) for SECONDS of wall time, then exit 0. */
#include <stdlib.h>
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

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    int n = argc > 2 ? atoi(argv[2]) : 0;
    if (n <= 0) {
        spin(secs);
        return 0;
    }
    for (int i = 0; i < n; i++)
        if (fork() == 0) {
            spin(secs);
            _exit(0);
        }
    while (wait(NULL) > 0)
        ;
    return 0;
}
