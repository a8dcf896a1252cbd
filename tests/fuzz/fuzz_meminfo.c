/* fuzz_meminfo.c - /proc/meminfo through the mem collector, two samples.
 * Input: the first sample's file, NUL, the second's (without a NUL both read the same). */
#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/meminfo", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_mem, &env, &cfg, files, data, size, s);
    return 0;
}
