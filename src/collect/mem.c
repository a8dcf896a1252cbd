/* mem.c - /proc/meminfo, and the OOM kill count of /proc/vmstat. */
#include <stdlib.h>
#include <string.h>

#include "rtrack/collect/collect.h"

struct mem_state {
    struct rt_buf buf;
    struct rt_kfile kf;
};

static void *mem_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)env;
    (void)cfg;
    struct mem_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_SINGLE; /* single_open */
    return st;
}

static void mem_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                        const struct rt_sample *prev)
{
    (void)prev;
    struct mem_state *st = state;
    char path[4096];
    if (rt_path(env, path, sizeof(path), "/proc/meminfo") ||
        rt_kfile_read(&st->kf, path, &st->buf) < 0)
        return;
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"MemTotal", offsetof(struct rt_sample, mem_total)},
        {"MemFree", offsetof(struct rt_sample, mem_free)},
        {"MemAvailable", offsetof(struct rt_sample, mem_available)},
        {"Buffers", offsetof(struct rt_sample, mem_buffers)},
        {"Cached", offsetof(struct rt_sample, mem_cached)},
        {"SReclaimable", offsetof(struct rt_sample, mem_sreclaimable)},
        {"Shmem", offsetof(struct rt_sample, mem_shmem)},
        {"Active", offsetof(struct rt_sample, mem_active)},
        {"Inactive", offsetof(struct rt_sample, mem_inactive)},
        {"SwapTotal", offsetof(struct rt_sample, swap_total)},
        {"SwapFree", offsetof(struct rt_sample, swap_free)},
    };
    for (char *line = st->buf.p; line && *line;) {
        char *nl = strchr(line, '\n');
        char *colon = strchr(line, ':');
        if (colon && (!nl || colon < nl)) {
            size_t kl = (size_t)(colon - line);
            for (size_t i = 0; i < RT_ARRAY_LEN(keys); i++) {
                uint64_t v;
                if (strlen(keys[i].key) == kl && memcmp(line, keys[i].key, kl) == 0 &&
                    rt_parse_u64(colon + 1, &v) && v <= INT64_MAX) {
                    *(int64_t *)((char *)cur + keys[i].off) = (int64_t)v;
                    break;
                }
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    if (cur->mem_total == RT_NA)
        return;
    /* used = total - available; kernels before 3.14 have no MemAvailable, there the references
     * fall back to free + buffers + cached + SReclaimable. */
    if (cur->mem_available != RT_NA) {
        cur->mem_used = cur->mem_total - cur->mem_available;
    } else {
        int64_t avail = 0;
        int64_t parts[] = {cur->mem_free, cur->mem_buffers, cur->mem_cached, cur->mem_sreclaimable};
        for (size_t i = 0; i < RT_ARRAY_LEN(parts); i++)
            if (parts[i] != RT_NA) /* saturated: values no real meminfo has, no overflow */
                avail = rt_sat_add(avail, parts[i]);
        cur->mem_used = cur->mem_total - avail;
    }
}

static void mem_close(void *state)
{
    struct mem_state *st = state;
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    free(st);
}

const struct rt_collector rt_collector_mem = {"mem", mem_open, mem_collect, mem_close};

int64_t rt_oom_kills(const struct rt_sysenv *env)
{
    char path[4096];
    struct rt_buf b = {0};
    int64_t n = RT_NA;
    if (rt_path(env, path, sizeof(path), "/proc/vmstat") == 0 && rt_read_file(path, &b) > 0) {
        for (char *line = b.p; line && *line;) {
            uint64_t v;
            if (!strncmp(line, "oom_kill ", 9) && rt_parse_u64(line + 9, &v) && v <= INT64_MAX) {
                n = (int64_t)v;
                break;
            }
            line = strchr(line, '\n');
            line = line ? line + 1 : NULL;
        }
    }
    rt_buf_free(&b);
    return n;
}
