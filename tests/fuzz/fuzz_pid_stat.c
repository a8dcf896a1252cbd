/* fuzz_pid_stat.c - /proc/PID/stat: rt_parse_pid_stat on the whole text and on every line, then
 * the process-tree collector (proc.c: the /proc listing, the walk down the children files or the
 * scan of every stat, tree membership, the exited-children correction) over two samples.
 *
 * Input: the first sample's processes, NUL, the second's (without a NUL both samples see the
 * same). Each line is one of
 *   PID (comm) S PPID ...   a process's stat file; the number it starts with names its /proc
 *                           directory (1..4194304; repeats and lines past the 32nd are
 *                           skipped)
 *   task PID TID TEXT       TEXT is /proc/PID/task/TID/children (children pids, space-separated)
 * With any "task" line in the first sample the collector finds the tree through the children
 * files (it sees /proc/self/task/SELF/children, as on a kernel with CONFIG_PROC_CHILDREN);
 * without, it scans every stat for its ppid. The first process of the first sample is the
 * tracked root. An input of odd length runs in `run` mode with pid 1 as rtrack (the
 * subreaper), an even one in `record` mode. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"

#define MAXP    32
#define MAXMADE 72

static struct rt_sysenv env;
static struct rt_sample s[2];
static struct fz_part part[2];
static long pids[MAXP];
static int npids;
static char made[MAXMADE][16]; /* entries written under proc/ */
static int nmade;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

static void parse_all(const struct fz_part *p)
{
    char *text = fz_strndup(p->p, p->n);
    struct rt_pid_stat st;
    rt_parse_pid_stat(text, &st);
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        rt_parse_pid_stat(line, &st);
        line = nl ? nl + 1 : NULL;
    }
    free(text);
}

/* Remove what the previous sample put under proc/ (not proc/ itself: the collector holds it). */
static void clear_procs(void)
{
    for (int i = 0; i < nmade; i++) {
        char rel[64];
        snprintf(rel, sizeof(rel), "proc/%s", made[i]);
        fz_remove(rel);
    }
    nmade = 0;
}

static void made_add(const char *name)
{
    for (int i = 0; i < nmade; i++)
        if (strcmp(made[i], name) == 0)
            return;
    if (nmade < MAXMADE)
        snprintf(made[nmade++], sizeof(made[0]), "%s", name);
}

/* Write one sample's processes; returns the first pid (0 when there is none). */
static long write_procs(const struct fz_part *p)
{
    clear_procs();
    npids = 0;
    if (!p->p)
        return 0;
    char *text = fz_strndup(p->p, p->n);
    for (char *line = text; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *end, rel[128];
        if (strncmp(line, "task ", 5) == 0) {
            long pid = strtol(line + 5, &end, 10), tid = 0;
            char *t = end;
            if (end != line + 5)
                tid = strtol(t, &end, 10);
            if (end != t && pid >= 1 && pid <= 4194304 && tid >= 1 && tid <= 4194304 &&
                nmade < MAXMADE - 1) {
                if (*end == ' ')
                    end++;
                snprintf(rel, sizeof(rel), "proc/%ld/task/%ld/children", pid, tid);
                fz_write(rel, end, strlen(end));
                snprintf(rel, sizeof(rel), "%ld", pid);
                made_add(rel);
                /* the collector walks the children files where it finds its own */
                snprintf(rel, sizeof(rel), "proc/self/task/%d/children", (int)getpid());
                fz_write_str(rel, "");
                made_add("self");
            }
        } else if (npids < MAXP) {
            long pid = strtol(line, &end, 10);
            int dup = 0;
            for (int i = 0; i < npids; i++)
                dup |= pids[i] == pid;
            struct rt_pid_stat st;
            /* what the parser accepts stays within the bounds proc.c's arithmetic relies on */
            if (rt_parse_pid_stat(line, &st) == 0) {
                const int64_t c[] = {st.utime,  st.stime,   st.cutime,
                                     st.cstime, st.threads, st.starttime};
                for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
                    if (c[i] < 0 || c[i] > RT_PROC_MAX_COUNTER)
                        abort();
                if (st.rss_pages < 0 || st.rss_pages > RT_PROC_MAX_PAGES || st.ppid < 0)
                    abort();
            }
            if (end != line && pid >= 1 && pid <= 4194304 && !dup) {
                snprintf(rel, sizeof(rel), "proc/%ld/stat", pid);
                size_t n = strlen(line);
                line[n] = '\n'; /* the kernel ends the line */
                fz_write(rel, line, n + 1);
                line[n] = '\0';
                pids[npids++] = pid;
                snprintf(rel, sizeof(rel), "%ld", pid);
                made_add(rel);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return npids ? pids[0] : 0;
}

static void second(void *ud)
{
    (void)ud;
    write_procs(part[1].p ? &part[1] : &part[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_split(data, size, part, 2);
    parse_all(&part[0]);
    if (part[1].p)
        parse_all(&part[1]);

    long root = write_procs(&part[0]);
    struct rt_collect_cfg cfg = {root ? (pid_t)root : 1, size % 2 ? 1 : 0, 1.0};
    fz_collect2(&rt_collector_proc, &env, &cfg, second, NULL, s);
    return 0;
}
