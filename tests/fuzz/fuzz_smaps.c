/* fuzz_smaps.c - /proc/PID/smaps_rollup: rt_parse_smaps_pss on each part, then the process-tree
 * collector reading it. The tree: the root (pid 100) and a child (101) in the first sample; in
 * the second the child has exited and was reaped by the root.
 * Input: the root's smaps_rollup in the first sample, NUL, in the second, NUL, the child's in
 * the first (a missing part leaves the file out). */
#include <stdlib.h>

#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];
static struct fz_part part[3];

#define ROOT_A                                                                                     \
    "100 (job) S 1 100 100 0 -1 4194304 100 0 0 0 50 10 0 0 20 0 1 0 5000 10000000 300 "           \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
#define ROOT_B                                                                                     \
    "100 (job) S 1 100 100 0 -1 4194304 100 0 0 0 60 12 20 5 20 0 1 0 5000 10000000 310 "          \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
#define CHILD_A                                                                                    \
    "101 (worker) R 100 100 100 0 -1 4194304 100 0 0 0 18 4 0 0 20 0 1 0 5100 10000000 200 "       \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

static void second(void *ud)
{
    (void)ud;
    fz_remove("proc/101");
    fz_write_str("proc/100/stat", ROOT_B);
    fz_write_part("proc/100/smaps_rollup", &part[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_split(data, size, part, 3);
    for (int i = 0; i < 3; i++) {
        if (!part[i].p)
            continue;
        char *text = fz_strndup(part[i].p, part[i].n);
        int64_t pss = rt_parse_smaps_pss(text);
        /* what the parser lets through stays within the bound proc.c's arithmetic relies on */
        if (pss != RT_NA && (pss < 0 || pss > RT_PROC_MAX_COUNTER))
            abort();
        free(text);
    }
    fz_write_str("proc/100/stat", ROOT_A);
    fz_write_str("proc/101/stat", CHILD_A);
    fz_write_part("proc/100/smaps_rollup", &part[0]);
    fz_write_part("proc/101/smaps_rollup", &part[2]);
    struct rt_collect_cfg cfg = {100, 0, 1.0};
    fz_collect2(&rt_collector_proc, &env, &cfg, second, NULL, s);
    return 0;
}
