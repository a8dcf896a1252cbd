/* net.c - /proc/net/dev per interface (lo excluded), identity from /sys/class/net. */
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

struct net_state {
    struct rt_buf buf;
    struct rt_kfile kf;
    struct rt_nic_ident **known;
    struct rt_kfile *operstate; /* per known interface */
    size_t nknown, capknown;
};

static size_t ident_get(struct net_state *st, const struct rt_sysenv *env, const char *name)
{
    for (size_t i = 0; i < st->nknown; i++)
        if (strcmp(st->known[i]->name, name) == 0)
            return i;
    if (st->nknown == st->capknown) {
        st->capknown = st->capknown ? st->capknown * 2 : 8;
        st->known = xrealloc(st->known, st->capknown * sizeof(*st->known));
        st->operstate = xrealloc(st->operstate, st->capknown * sizeof(*st->operstate));
    }
    struct rt_nic_ident *id = xcalloc(1, sizeof(*id));
    id->name = xstrdup(name);
    char path[4096], val[256];
    if (!rt_path(env, path, sizeof(path), "/sys/class/net/%s/address", name) &&
        rt_read_small(path, val, sizeof(val)) > 0)
        id->mac = xstrdup(val);
    if (!rt_path(env, path, sizeof(path), "/sys/class/net/%s/device/driver", name)) {
        char link[4096];
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            id->driver = xstrdup(basename(link));
        }
    }
    int64_t v;
    id->mtu = id->speed_mbps = RT_NA;
    if (!rt_path(env, path, sizeof(path), "/sys/class/net/%s/mtu", name) &&
        rt_read_small(path, val, sizeof(val)) > 0 && rt_parse_i64(val, &v) == 0)
        id->mtu = v;
    /* speed: EINVAL for virtual interfaces, -1 when unknown; both are NULL here */
    if (!rt_path(env, path, sizeof(path), "/sys/class/net/%s/speed", name) &&
        rt_read_small(path, val, sizeof(val)) > 0 && rt_parse_i64(val, &v) == 0 && v >= 0)
        id->speed_mbps = v;
    st->operstate[st->nknown].fd_plus1 = 0;
    st->known[st->nknown] = id;
    return st->nknown++;
}

static void *net_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)env;
    (void)cfg;
    struct net_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_RECORDS; /* seq_file, a record per interface */
    return st;
}

static void net_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                        const struct rt_sample *prev)
{
    struct net_state *st = state;
    char path[4096];
    if (rt_path(env, path, sizeof(path), "/proc/net/dev") ||
        rt_kfile_read(&st->kf, path, &st->buf) < 0)
        return;
    cur->nnics = 0;
    int lineno = 0;
    for (char *line = st->buf.p; line && *line; lineno++) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *colon = strchr(line, ':');
        char *cur_line = line;
        line = nl ? nl + 1 : NULL;
        if (lineno < 2 || !colon) /* two header lines */
            continue;
        *colon = '\0';
        char *name = cur_line;
        while (*name == ' ')
            name++;
        if (strcmp(name, "lo") == 0 || !*name)
            continue;
        /* rx: bytes packets errs drop fifo frame compressed multicast; tx: bytes packets errs
         * drop fifo colls carrier compressed. A large counter may touch the colon. */
        uint64_t n[16];
        const char *p = colon + 1;
        int k = 0;
        /* a counter beyond int64 (no real interface's) makes the line malformed */
        while (k < 16 && (p = rt_parse_u64(p, &n[k])) && n[k] <= INT64_MAX)
            k++;
        if (k < 16)
            continue;
        struct rt_nic_sample *s = RT_PUSH(cur->nics, cur->nnics, cur->nics_cap);
        size_t ki = ident_get(st, env, name);
        s->ident = st->known[ki];
        static const int map[RT_NIC_NFIELDS] = {0, 1, 2, 3, 8, 9, 10, 11};
        for (int i = 0; i < RT_NIC_NFIELDS; i++)
            s->f[i] = (int64_t)n[map[i]];
        s->rx_bytes = s->tx_bytes = RT_NA;
        s->operstate[0] = '\0';
        if (!rt_path(env, path, sizeof(path), "/sys/class/net/%s/operstate", name))
            rt_kfile_read_small(&st->operstate[ki], path, s->operstate, sizeof(s->operstate));
    }
    if (!prev)
        return;
    /* Per interface, clamped per interface, over interfaces present in both samples: an
     * interface that disappears (a container's veth) must not cancel everyone else's traffic,
     * which the Python reference's sum-then-difference does. */
    int64_t rx = 0, tx = 0;
    for (int i = 0; i < cur->nnics; i++) {
        struct rt_nic_sample *s = &cur->nics[i];
        const struct rt_nic_sample *ps = NULL;
        if (i < prev->nnics && prev->nics[i].ident == s->ident)
            ps = &prev->nics[i];
        for (int j = 0; !ps && j < prev->nnics; j++)
            if (prev->nics[j].ident == s->ident)
                ps = &prev->nics[j];
        if (!ps)
            continue;
        int64_t r = s->f[RT_NIC_RX_BYTES] - ps->f[RT_NIC_RX_BYTES];
        int64_t t = s->f[RT_NIC_TX_BYTES] - ps->f[RT_NIC_TX_BYTES];
        s->rx_bytes = r > 0 ? r : 0;
        s->tx_bytes = t > 0 ? t : 0;
        rx = rt_sat_add(rx, s->rx_bytes); /* saturated, never an overflow */
        tx = rt_sat_add(tx, s->tx_bytes);
    }
    cur->net_rx_bytes = rx;
    cur->net_tx_bytes = tx;
}

static void net_close(void *state)
{
    struct net_state *st = state;
    for (size_t i = 0; i < st->nknown; i++) {
        free(st->known[i]->name);
        free(st->known[i]->mac);
        free(st->known[i]->driver);
        free(st->known[i]);
        rt_kfile_close(&st->operstate[i]);
    }
    free(st->known);
    free(st->operstate);
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    free(st);
}

const struct rt_collector rt_collector_net = {"net", net_open, net_collect, net_close};
