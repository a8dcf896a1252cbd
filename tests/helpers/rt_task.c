/* rt_task CPU_SECONDS MIB HOLD_SECONDS [MORE_MIB] - a task of known CPU time and memory: touch
 * MIB MiB of anonymous memory (every page written, so it is resident), burn CPU_SECONDS of this
 * process's own CPU time (CLOCK_PROCESS_CPUTIME_ID: the same figure on a busy machine as on an
 * idle one), then hold the memory HOLD_SECONDS; with MORE_MIB, touch that much more and hold it
 * as long again; exit 0. The memory is written in 1 MiB steps: where a cgroup's limit is below
 * it, the kernel's OOM killer ends the task on the way (after the hold, with MORE_MIB: a peak
 * that samplers of any interval see first). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char **touch(long mib)
{
    char **blocks = calloc((size_t)(mib > 0 ? mib : 1), sizeof(*blocks));
    for (long i = 0; blocks && i < mib; i++)
        if ((blocks[i] = malloc(1 << 20)))
            memset(blocks[i], (int)(i & 0x7f) + 1, 1 << 20);
    return blocks;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    double cpu = atof(argv[1]), hold = atof(argv[3]);
    char **blocks = touch(atol(argv[2]));
    volatile unsigned long x = 0;
    while (cpu_now() < cpu)
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
    struct timespec ts = {(time_t)hold, (long)((hold - (double)(time_t)hold) * 1e9)};
    nanosleep(&ts, NULL);
    if (argc > 4) {
        char **more = touch(atol(argv[4]));
        nanosleep(&ts, NULL);
        return blocks && more ? 0 : 1;
    }
    return blocks ? 0 : 1;
}
