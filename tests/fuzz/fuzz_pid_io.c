/* fuzz_pid_io.c - /proc/PID/io: rt_parse_pid_io on each part, then the process-tree collector
 * reading it (fz_tree_file: a root and a child it reaps between the two samples): per-process
 * I/O deltas and the exited-children correction, which takes a reaped child's I/O back out of
 * its parent's.
 * Input: the root's io in the first sample, NUL, in the second, NUL, the child's in the first
 * (a missing part leaves the file out). */
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
    int64_t rd, wr;
    rt_parse_pid_io(text, &rd, &wr);
    if ((rd != RT_NA && (rd < 0 || rd > RT_PROC_MAX_IO_BYTES)) ||
        (wr != RT_NA && (wr < 0 || wr > RT_PROC_MAX_IO_BYTES)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_tree_file(&env, "io", check, data, size);
    return 0;
}
