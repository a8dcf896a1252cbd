/* proc_parse.c - the per-process files of /proc as text in, figures out (collect.h): stat (its
 * comm up to the last ')'), the Pss lines of smaps_rollup or smaps, io's bytes, schedstat's
 * three figures. No file is read
 * here: proc.c reads them, the fuzzers (fuzz_pid_stat, fuzz_smaps, fuzz_pid_io) feed them. A
 * value no kernel prints is refused, so the tree's sums cannot overflow. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"

int rt_parse_pid_stat(const char *text, struct rt_pid_stat *o)
{
    /* The comm may contain spaces and parentheses ("tmux: srv (x)"): take it up to the last
     * ')' and parse the fields after that. */
    const char *lp = strchr(text, '(');
    const char *rp = strrchr(text, ')');
    if (!lp || !rp || rp < lp)
        return -1;
    size_t cl = (size_t)(rp - lp - 1);
    if (cl >= sizeof(o->comm))
        cl = sizeof(o->comm) - 1;
    memcpy(o->comm, lp + 1, cl);
    o->comm[cl] = '\0';
    const char *p = rp + 1;
    while (*p == ' ')
        p++;
    if (!*p)
        return -1;
    o->state = *p++;
    /* fields 4..24 (1-based); some are signed (tty_nr, tpgid, priority, nice) */
    long long f[25];
    int n;
    for (n = 4; n <= 24; n++) {
        char *end;
        errno = 0;
        f[n] = strtoll(p, &end, 10);
        if (end == p || errno)
            break;
        p = end;
    }
    if (n <= 24)
        return -1;
    /* Counters no kernel prints (2^50 ticks is 357 000 years of CPU; 2^40 pages are 4 PiB at
     * 4 KiB): such a line is not a process's stat, and the tree's arithmetic on it (sums of
     * ticks, pages times page size) must not overflow. */
    for (int i = 14; i <= 24; i++)
        if ((i <= 17 || i == 20 || i == 22 || i == 24) &&
            (f[i] < 0 || f[i] > (i == 24 ? RT_PROC_MAX_PAGES : RT_PROC_MAX_COUNTER)))
            return -1;
    if (f[4] < 0 || f[4] > INT32_MAX)
        return -1;
    o->ppid = (pid_t)f[4];
    o->utime = f[14];
    o->stime = f[15];
    o->cutime = f[16];
    o->cstime = f[17];
    o->threads = f[20];
    o->starttime = f[22];
    o->rss_pages = f[24];
    return 0;
}

int64_t rt_parse_smaps_pss(const char *text)
{
    /* one Pss line in smaps_rollup, one per mapping in smaps; Pss_Anon, SwapPss and the like
     * are other lines */
    int64_t sum = RT_NA;
    for (const char *l = text; l; l = strchr(l, '\n')) {
        if (*l == '\n')
            l++;
        if (strncmp(l, "Pss:", 4) != 0)
            continue;
        uint64_t v;
        if (!rt_parse_u64(l + 4, &v) || v > RT_PROC_MAX_COUNTER)
            return RT_NA; /* not a kernel's */
        sum = (sum == RT_NA ? 0 : sum) + (int64_t)v;
        if (sum > RT_PROC_MAX_COUNTER)
            return RT_NA;
    }
    return sum;
}

void rt_parse_pid_io(const char *text, int64_t *rd, int64_t *wr)
{
    *rd = *wr = RT_NA;
    for (const char *l = text; l; l = strchr(l, '\n')) {
        if (*l == '\n')
            l++;
        uint64_t v;
        if (strncmp(l, "read_bytes:", 11) == 0 && rt_parse_u64(l + 11, &v) &&
            v <= RT_PROC_MAX_IO_BYTES)
            *rd = (int64_t)v;
        else if (strncmp(l, "write_bytes:", 12) == 0 && rt_parse_u64(l + 12, &v) &&
                 v <= RT_PROC_MAX_IO_BYTES)
            *wr = (int64_t)v;
    }
}

int rt_parse_schedstat(const char *text, struct rt_schedstat *o)
{
    uint64_t v[3];
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        unsigned long long x = strtoull(p, &end, 10);
        if (errno || x > (uint64_t)INT64_MAX)
            return -1;
        v[i] = x;
        p = end;
        if (i < 2 && *p++ != ' ')
            return -1;
    }
    if (*p != '\n' && *p != '\0')
        return -1;
    if (v[0] == 0 && v[1] == 0)
        return 1;
    *o = (struct rt_schedstat){(int64_t)v[0], (int64_t)v[1], (int64_t)v[2]};
    return 0;
}
