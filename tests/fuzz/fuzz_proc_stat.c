/* fuzz_proc_stat.c - /proc/stat: rt_parse_proc_stat_line on every line, then the cpu collector
 * (aggregate and per-core ticks, ctxt, btime, processes, procs_*, busy shares) over two samples.
 * Input: the first sample's file, NUL, the second's (without a NUL both samples read the same). */
#include <stdlib.h>
#include <string.h>

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
    char *text = fz_strndup(data, size);
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        struct rt_cpu_ticks t;
        rt_parse_proc_stat_line(line, &t);
        line = nl ? nl + 1 : NULL;
    }
    free(text);

    static const char *const files[] = {"proc/stat", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_cpu, &env, &cfg, files, data, size, s);
    return 0;
}
