/* fuzz_drm_fdinfo.c - DRM fdinfo (/proc/PID/fdinfo/FD, drm-usage-stats) through the amdgpu
 * backend: driver, client id, pdev, memory sizes with units, engine busy time, and the
 * per-client utilisation over two readings. The same text is the fdinfo of fds 3 and 4 of the
 * tracked pid 100 (dup'ed fds share a client) and of fd 3 of pid 101.
 * Input: the first reading's text, NUL, the second's (without a NUL both read the same). */
#include "fuzz_common.h"

static struct rt_sysenv env;
static struct fz_part part[2];
static const char *const files[] = {"proc/100/fdinfo/3", "proc/100/fdinfo/4", "proc/101/fdinfo/3"};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_amd_card();
    return 0;
}

static void put(const struct fz_part *p)
{
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        fz_write_part(files[i], p);
}

static void second(void *ud)
{
    (void)ud;
    put(part[1].p ? &part[1] : &part[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_split(data, size, part, 2);
    put(&part[0]);
    static const pid_t pids[] = {100, 101};
    fz_amd_read2(&env, pids, 2, second, NULL);
    return 0;
}
