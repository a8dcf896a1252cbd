/* cpu.c - /proc/stat: aggregate and per-core ticks, context switches, forks, run queue. */
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"

struct cpu_state {
    struct rt_buf buf;
    struct rt_kfile kf;
};

int rt_parse_proc_stat_line(const char *line, struct rt_cpu_ticks *t)
{
    const char *p = line;
    while (*p && *p != ' ')
        p++;
    int n = 0;
    for (; n < RT_CPU_NFIELDS; n++) {
        uint64_t v;
        const char *q = rt_parse_u64(p, &v);
        if (!q)
            break;
        t->v[n] = v <= INT64_MAX ? (int64_t)v : RT_NA; /* no real tick count is that large */
        p = q;
    }
    for (int i = n; i < RT_CPU_NFIELDS; i++)
        t->v[i] = RT_NA;
    return n >= 4 ? 0 : -1;
}

static int64_t tick(const struct rt_cpu_ticks *t, int i)
{
    return t->v[i] == RT_NA ? 0 : t->v[i];
}

/* Busy share the way resource-tracker-rs computes it: everything but idle and iowait counts as
 * busy (irq, softirq and steal included); guest time is already inside user. Sums in double:
 * exact for any real tick count (< 2^53), and no overflow for a file that lies. */
static int busy_share(const struct rt_cpu_ticks *a, const struct rt_cpu_ticks *b, double *share)
{
    double total = 0, idle;
    for (int i = RT_CPU_USER; i <= RT_CPU_STEAL; i++)
        total += (double)tick(b, i) - (double)tick(a, i);
    idle = (double)tick(b, RT_CPU_IDLE) - (double)tick(a, RT_CPU_IDLE) +
           (double)tick(b, RT_CPU_IOWAIT) - (double)tick(a, RT_CPU_IOWAIT);
    if (total <= 0) {
        *share = 0.0;
        return 0;
    }
    *share = (total - idle) / total;
    return 0;
}

static void *cpu_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)env;
    (void)cfg;
    struct cpu_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_SINGLE; /* single_open_size */
    return st;
}

static void cpu_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                        const struct rt_sample *prev)
{
    struct cpu_state *st = state;
    char path[4096];
    if (rt_path(env, path, sizeof(path), "/proc/stat") ||
        rt_kfile_read(&st->kf, path, &st->buf) < 0)
        return;

    cur->ncores = 0;
    for (char *line = st->buf.p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "cpu", 3) == 0) {
            if (line[3] == ' ') {
                rt_parse_proc_stat_line(line, &cur->cpu);
            } else if (line[3] >= '0' && line[3] <= '9') {
                struct rt_core_sample *c = RT_PUSH(cur->cores, cur->ncores, cur->cores_cap);
                c->core = atoi(line + 3);
                c->busy_pct = RT_NAN;
                if (rt_parse_proc_stat_line(line, &c->t) != 0)
                    cur->ncores--;
            }
        } else {
            static const struct {
                const char *key;
                size_t off;
            } keys[] = {
                {"ctxt ", offsetof(struct rt_sample, ctxt_total)},
                {"btime ", offsetof(struct rt_sample, btime)},
                {"processes ", offsetof(struct rt_sample, forks_total)},
                {"procs_running ", offsetof(struct rt_sample, procs_running)},
                {"procs_blocked ", offsetof(struct rt_sample, procs_blocked)},
            };
            for (size_t i = 0; i < RT_ARRAY_LEN(keys); i++) {
                size_t kl = strlen(keys[i].key);
                uint64_t v;
                if (strncmp(line, keys[i].key, kl) == 0 && rt_parse_u64(line + kl, &v) &&
                    v <= INT64_MAX) {
                    *(int64_t *)((char *)cur + keys[i].off) = (int64_t)v;
                    break;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }

    if (!prev || prev->cpu.v[RT_CPU_USER] == RT_NA || cur->cpu.v[RT_CPU_USER] == RT_NA)
        return;

    /* cpu_usage: the Python reference's arithmetic, operation for operation (cumulative seconds
     * as doubles, then differences), so its 4-decimal rounding matches bit for bit; sums of
     * ticks in double, exact below 2^53 and never an overflow */
    double tck = (double)env->clk_tck;
    double ua =
        ((double)tick(&prev->cpu, RT_CPU_USER) + (double)tick(&prev->cpu, RT_CPU_NICE)) / tck;
    double ub = ((double)tick(&cur->cpu, RT_CPU_USER) + (double)tick(&cur->cpu, RT_CPU_NICE)) / tck;
    double sa = (double)tick(&prev->cpu, RT_CPU_SYSTEM) / tck;
    double sb = (double)tick(&cur->cpu, RT_CPU_SYSTEM) / tck;
    /* CPU-seconds from the tick difference (no float noise; Python's 6-decimal rounding of
     * its difference of cumulative seconds gives the same text) */
    double du = (double)tick(&cur->cpu, RT_CPU_USER) + (double)tick(&cur->cpu, RT_CPU_NICE) -
                (double)tick(&prev->cpu, RT_CPU_USER) - (double)tick(&prev->cpu, RT_CPU_NICE);
    double ds = (double)tick(&cur->cpu, RT_CPU_SYSTEM) - (double)tick(&prev->cpu, RT_CPU_SYSTEM);
    cur->cpu_utime_s = du > 0 ? du / tck : 0.0;
    cur->cpu_stime_s = ds > 0 ? ds / tck : 0.0;
    if (cur->dt > 0) {
        double r = ((ub + sb) - (ua + sa)) / cur->dt;
        cur->cpu_usage = rt_cores_bound(r, cur->ncores);
    }
    double share;
    busy_share(&prev->cpu, &cur->cpu, &share);
    cur->cpu_busy_cores = share * (double)cur->ncores;

    for (int i = 0; i < cur->ncores; i++) {
        struct rt_core_sample *c = &cur->cores[i];
        const struct rt_core_sample *pc = NULL;
        if (i < prev->ncores && prev->cores[i].core == c->core)
            pc = &prev->cores[i];
        for (int j = 0; !pc && j < prev->ncores; j++)
            if (prev->cores[j].core == c->core)
                pc = &prev->cores[j];
        if (pc && busy_share(&pc->t, &c->t, &share) == 0)
            c->busy_pct = share * 100.0;
    }
}

static void cpu_close(void *state)
{
    struct cpu_state *st = state;
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    free(st);
}

const struct rt_collector rt_collector_cpu = {"cpu", cpu_open, cpu_collect, cpu_close};
