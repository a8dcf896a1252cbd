/* psi.c - pressure stall information, /proc/pressure/{cpu,memory,io} (kernel >= 4.20 with
 * CONFIG_PSI). Neither reference records it; the cumulative total= counters are stored so any
 * window can be computed later, plus the share of each interval spent stalled. */
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"

struct psi_state {
    char buf[512];
    struct rt_kfile kf[RT_PSI_NRES];
};

static const char *const psi_files[RT_PSI_NRES] = {"cpu", "memory", "io"};

static void *psi_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)cfg;
    char path[4096];
    char probe[512];
    if (rt_path(env, path, sizeof(path), "/proc/pressure/cpu") ||
        rt_read_small(path, probe, sizeof(probe)) < 0)
        return NULL; /* no PSI on this kernel: the columns stay NULL */
    return xcalloc(1, sizeof(struct psi_state));
}

static void psi_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                        const struct rt_sample *prev)
{
    struct psi_state *st = state;
    for (int r = 0; r < RT_PSI_NRES; r++) {
        char path[4096];
        if (rt_path(env, path, sizeof(path), "/proc/pressure/%s", psi_files[r]) ||
            rt_kfile_read_small(&st->kf[r], path, st->buf, sizeof(st->buf)) < 0)
            continue;
        for (char *line = st->buf; line && *line;) {
            char *nl = strchr(line, '\n');
            int kind = strncmp(line, "some ", 5) == 0   ? RT_PSI_SOME
                       : strncmp(line, "full ", 5) == 0 ? RT_PSI_FULL
                                                        : -1;
            char *tot = strstr(line, "total=");
            uint64_t v;
            if (kind >= 0 && tot && (!nl || tot < nl) && rt_parse_u64(tot + 6, &v) &&
                v <= INT64_MAX)
                cur->psi_us[r][kind] = (int64_t)v;
            line = nl ? nl + 1 : NULL;
        }
        for (int k = 0; prev && k < RT_PSI_NKIND; k++) {
            if (cur->psi_us[r][k] == RT_NA || prev->psi_us[r][k] == RT_NA || !(cur->dt > 0))
                continue;
            int64_t d = cur->psi_us[r][k] - prev->psi_us[r][k];
            double pct = (double)(d > 0 ? d : 0) / (cur->dt * 1e6) * 100.0;
            cur->psi_pct[r][k] = pct > 100.0 ? 100.0 : pct;
        }
    }
}

static void psi_close(void *state)
{
    struct psi_state *st = state;
    for (int r = 0; r < RT_PSI_NRES; r++)
        rt_kfile_close(&st->kf[r]);
    free(st);
}

const struct rt_collector rt_collector_psi = {"psi", psi_open, psi_collect, psi_close};
