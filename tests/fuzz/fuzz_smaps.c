/* fuzz_smaps.c - the tree's memory: rt_parse_smaps_pss on each part, then the process-tree
 * collector reading the parts (fz_tree_file: a root and a child it reaps between the two
 * samples) twice: as /proc/PID/smaps_rollup (4.14+), then as /proc/PID/smaps with no
 * smaps_rollup, the fallback of older kernels that sums the Pss of every mapping.
 * Input: the root's file in the first sample, NUL, in the second, NUL, the child's in the first
 * (a missing part leaves the file out). */
#include <stdio.h>
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
    static const char *const names[] = {"smaps_rollup", "smaps"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        fz_tree_file(&env, names[i], check, data, size);
        /* the next pass (and input) starts without this one's files */
        for (size_t j = 0; j < sizeof(names) / sizeof(names[0]); j++) {
            char rel[64];
            snprintf(rel, sizeof(rel), "proc/100/%s", names[j]);
            fz_remove(rel);
            snprintf(rel, sizeof(rel), "proc/101/%s", names[j]);
            fz_remove(rel);
        }
    }
    return 0;
}
