/* fuzz_smaps.c - /proc/PID/smaps_rollup: rt_parse_smaps_pss on each part, then the process-tree
 * collector reading it (fz_tree_file: a root and a child it reaps between the two samples).
 * Input: the root's smaps_rollup in the first sample, NUL, in the second, NUL, the child's in
 * the first (a missing part leaves the file out). */
#include <stdlib.h>

#include "fuzz_common.h"

static struct rt_sysenv env;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

/* what the parser lets through stays within the bound proc.c's arithmetic relies on */
static void check(const char *text)
{
    int64_t pss = rt_parse_smaps_pss(text);
    if (pss != RT_NA && (pss < 0 || pss > RT_PROC_MAX_COUNTER))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_tree_file(&env, "smaps_rollup", check, data, size);
    return 0;
}
