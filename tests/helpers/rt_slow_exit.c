/* rt_slow_exit.c - an LD_PRELOAD library for tests: the process's exit() takes
 * RT_SLOW_EXIT_S seconds longer, after every other exit handler has run. Its constructor
 * registers its handler first, so it runs last, after the libraries' own clean-ups
 * (libcrypto's among them): a thread still running then finds them undone. _exit() and a
 * fatal signal skip it. Used by tests/cli/test_upload_faults.sh. */
#include <stdlib.h>
#include <time.h>

static double secs;

static void slow(void)
{
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

__attribute__((constructor)) static void init(void)
{
    const char *s = getenv("RT_SLOW_EXIT_S");
    secs = s ? strtod(s, NULL) : 0;
    if (secs > 0 && secs < 3600)
        atexit(slow);
    /* the process's own exit only: not its children's (the job) */
    unsetenv("RT_SLOW_EXIT_S");
    unsetenv("LD_PRELOAD");
}
