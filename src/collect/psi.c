/* psi.c - pressure stall information, /proc/pressure/{cpu,memory,io} (kernel >= 4.20 with
 * CONFIG_PSI). Neither reference records it; the cumulative total= counters are stored so any
 * window can be computed later, plus the share of each interval spent stalled. Without it the
 * columns stay NULL and each sample says why (psi_missing): no /proc/pressure at all (before
 * 4.20, or no CONFIG_PSI), or files that cannot be read (EOPNOTSUPP: PSI disabled at boot, as
 * RHEL 8's backport is unless booted with psi=1). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"

struct psi_state {
    char buf[512];
    struct rt_kfile kf[RT_PSI_NRES];
    const char *missing; /* why there is no PSI (sample.h), NULL when there is */
};

static const char *const psi_files[RT_PSI_NRES] = {"cpu", "memory", "io"};

static void *psi_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)cfg;
    char path[4096];
    char probe[512];
    struct psi_state *st = xcalloc(1, sizeof(*st));
    ssize_t n = rt_path(env, path, sizeof(path), "/proc/pressure/cpu")
                    ? -ENOENT
                    : rt_read_small(path, probe, sizeof(probe));
    if (n < 0)
        st->missing = n == -ENOENT ? "no-pressure" : "psi-off";
    return st;
}

static void psi_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                        const struct rt_sample *prev)
{
    struct psi_state *st = state;
    if (st->missing) {
        cur->psi_missing = st->missing; /* the columns stay NULL */
        return;
    }
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
