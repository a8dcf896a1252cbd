/* fuzz_psi.c - /proc/pressure/{cpu,memory,io} through the psi collector, two samples (stall
 * shares). Input: the first sample's text (written to all three files), NUL, the second's
 * (without a NUL both samples read the same). */
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
    static const char *const files[] = {"proc/pressure/cpu", "proc/pressure/memory",
                                        "proc/pressure/io", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_psi, &env, &cfg, files, data, size, s);
    return 0;
}
