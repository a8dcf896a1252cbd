/* disk.c - /proc/diskstats per whole disk, identity from /sys/block.
 *
 * /proc/diskstats counts sectors in 512-byte units whatever the device's sector size (the
 * kernel's sector_t unit); both references multiply by hw_sector_size and over-count 8x on 4Kn
 * devices. rtrack uses 512. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

struct disk_known {
    char name[64];
    int is_partition;
    int loaded;                  /* ident_load() done */
    struct rt_disk_ident *ident; /* whole disks only */
};

struct disk_state {
    struct rt_buf buf;
    struct rt_kfile kf;
    struct disk_known *known;
    size_t nknown, capknown;
    struct rt_buf blocks; /* the names /sys/block lists (list_blocks), once blocks_listed */
    int blocks_listed;    /* 1 listed, -1 could not be, 0 not yet */
};

static int path_exists(const struct rt_sysenv *env, const char *dir, const char *name,
                       const char *suffix)
{
    char path[4096];
    if (rt_path(env, path, sizeof(path), "%s/%s%s", dir, name, suffix))
        return 0;
    return access(path, F_OK) == 0;
}

/* The names /sys/block lists, NUL-separated in *out (a list ending in an empty name): 0, or -1
 * when it cannot be listed. */
static int list_blocks(const struct rt_sysenv *env, struct rt_buf *out)
{
    char path[4096];
    DIR *d = rt_path(env, path, sizeof(path), "/sys/block") ? NULL : opendir(path);
    if (!d)
        return -1;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            rt_buf_append(out, de->d_name, strlen(de->d_name) + 1);
    rt_buf_append(out, "", 1);
    closedir(d);
    return 0;
}

/* Not a whole disk (not in /sys/block): a partition when /sys/class/block/NAME/partition
 * exists; without that file (fixture trees, odd kernels) when the name is a /sys/block entry
 * followed by an optional 'p' and digits. `blocks`: that listing, NULL to list it here. */
static int unlisted_is_partition(const struct rt_sysenv *env, const char *name, const char *blocks)
{
    if (path_exists(env, "/sys/class/block", name, "/partition"))
        return 1;
    struct rt_buf own = {0};
    if (!blocks) {
        if (list_blocks(env, &own) != 0)
            return 0;
        blocks = own.p;
    }
    int part = 0;
    for (const char *b = blocks; !part && *b; b += strlen(b) + 1) {
        size_t el = strlen(b);
        if (strncmp(name, b, el) != 0)
            continue;
        const char *rest = name + el;
        if (*rest == 'p')
            rest++;
        if (!*rest)
            continue;
        while (isdigit((unsigned char)*rest))
            rest++;
        part = *rest == '\0';
    }
    rt_buf_free(&own);
    return part;
}

/* A name is a whole disk when /sys/block lists it (sysfs lists exactly the gendisks there), a
 * partition when /sys/class/block/NAME/partition exists. Without either (fixture trees, odd
 * kernels) fall back to the name: a /sys/block entry followed by an optional 'p' and digits.
 * Unlike the Python reference's sd/nvme/mmcblk regex this is right for vda1, xvda1, md0p1,
 * nbd0p1 and loop0p1. */
int rt_disk_is_partition(const struct rt_sysenv *env, const char *name)
{
    if (path_exists(env, "/sys/block", name, ""))
        return 0;
    return unlisted_is_partition(env, name, NULL);
}

/* rt_disk_is_partition() for the collector, which meets every name of /proc/diskstats in its
 * first sample: /sys/block is listed once (st->blocks) instead of looked up name by name. */
static int known_is_partition(struct disk_state *st, const struct rt_sysenv *env, const char *name)
{
    if (!st->blocks_listed)
        st->blocks_listed = list_blocks(env, &st->blocks) == 0 ? 1 : -1;
    if (st->blocks_listed < 0)
        return rt_disk_is_partition(env, name);
    for (const char *b = st->blocks.p; *b; b += strlen(b) + 1)
        if (strcmp(b, name) == 0)
            return 0;
    return unlisted_is_partition(env, name, st->blocks.p);
}

static char *sysfs_str(const struct rt_sysenv *env, const char *name, const char *file)
{
    char path[4096], val[256];
    if (rt_path(env, path, sizeof(path), "/sys/block/%s/%s", name, file) ||
        rt_read_small(path, val, sizeof(val)) <= 0)
        return NULL;
    char *s = val;
    while (isspace((unsigned char)*s))
        s++;
    return *s ? xstrdup(s) : NULL;
}

static int64_t sysfs_int(const struct rt_sysenv *env, const char *name, const char *file)
{
    char *s = sysfs_str(env, name, file);
    int64_t v;
    if (!s || rt_parse_i64(s, &v) != 0)
        v = RT_NA;
    free(s);
    return v;
}

/* Model, serial, type and size: several sysfs reads, done once a disk has shown any I/O (an
 * idle loop device is never stored, and a run starts quicker without reading them). */
static void ident_load(const struct rt_sysenv *env, struct rt_disk_ident *id)
{
    const char *name = id->name;
    id->model = sysfs_str(env, name, "device/model");
    id->vendor = sysfs_str(env, name, "device/vendor");
    id->serial = sysfs_str(env, name, "device/serial");
    if (!id->serial)
        id->serial = sysfs_str(env, name, "device/wwid");
    int64_t rot = sysfs_int(env, name, "queue/rotational");
    id->type = strncmp(name, "nvme", 4) == 0 ? "nvme" : rot == 0 ? "ssd" : rot == 1 ? "hdd" : NULL;
    int64_t sectors = sysfs_int(env, name, "size");
    id->capacity_bytes = sectors > 0 ? sectors * 512 : RT_NA;
    id->hw_sector_size = sysfs_int(env, name, "queue/hw_sector_size");
}

static struct disk_known *known_get(struct disk_state *st, const struct rt_sysenv *env,
                                    const char *name, int64_t major, int64_t minor)
{
    for (size_t i = 0; i < st->nknown; i++)
        if (strcmp(st->known[i].name, name) == 0)
            return &st->known[i];
    if (strlen(name) >= sizeof(st->known[0].name))
        return NULL;
    if (st->nknown == st->capknown) {
        st->capknown = st->capknown ? st->capknown * 2 : 16;
        st->known = xrealloc(st->known, st->capknown * sizeof(*st->known));
    }
    struct disk_known *k = &st->known[st->nknown++];
    memset(k, 0, sizeof(*k));
    strcpy(k->name, name);
    k->is_partition = known_is_partition(st, env, name);
    if (!k->is_partition) {
        k->ident = xcalloc(1, sizeof(*k->ident));
        k->ident->name = xstrdup(name);
        k->ident->major = major;
        k->ident->minor = minor;
        k->ident->capacity_bytes = k->ident->hw_sector_size = RT_NA;
    }
    return k;
}

/* Bytes between two readings of a sector counter (>= 0): 0 when it went backwards (device
 * re-created), saturated rather than overflowing for counters no real disk reaches. */
static int64_t sector_bytes(int64_t now, int64_t before)
{
    int64_t b;
    if (now <= before)
        return 0;
    return __builtin_mul_overflow(now - before, (int64_t)512, &b) ? INT64_MAX : b;
}

static void *disk_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)env;
    (void)cfg;
    struct disk_state *st = xcalloc(1, sizeof(*st));
    st->kf.kind = RT_READ_RECORDS; /* seq_file, a record per disk */
    return st;
}

static void disk_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                         const struct rt_sample *prev)
{
    struct disk_state *st = state;
    char path[4096];
    if (rt_path(env, path, sizeof(path), "/proc/diskstats") ||
        rt_kfile_read(&st->kf, path, &st->buf) < 0)
        return;
    cur->ndisks = 0;
    for (char *line = st->buf.p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        uint64_t major, minor, v;
        char name[64];
        const char *p = rt_parse_u64(line, &major);
        if (p)
            p = rt_parse_u64(p, &minor);
        int n = 0;
        if (p) {
            while (*p == ' ' || *p == '\t')
                p++;
            while (p[n] && p[n] != ' ' && p[n] != '\t' && n < (int)sizeof(name) - 1) {
                name[n] = p[n];
                n++;
            }
            name[n] = '\0';
            p += n;
        }
        int64_t f[RT_DS_NFIELDS];
        int nf = 0;
        /* a counter beyond int64 (no real disk's) makes the line malformed */
        while (p && nf < RT_DS_NFIELDS && (p = rt_parse_u64(p, &v)) && v <= INT64_MAX)
            f[nf++] = (int64_t)v;
        line = nl ? nl + 1 : NULL;
        if (n == 0 || nf < RT_DS_NFIELDS) /* the references ignore lines with < 14 fields */
            continue;
        struct disk_known *k = known_get(st, env, name, (int64_t)major, (int64_t)minor);
        if (!k || k->is_partition)
            continue;
        if (!k->loaded) {
            int64_t any = 0;
            for (int i = 0; i < nf; i++)
                any |= f[i];
            if (any) {
                ident_load(env, k->ident);
                k->loaded = 1;
            }
        }
        struct rt_disk_sample *d = RT_PUSH(cur->disks, cur->ndisks, cur->disks_cap);
        d->ident = k->ident;
        memcpy(d->f, f, sizeof(f));
        d->read_bytes = d->write_bytes = RT_NA;
    }
    if (!prev)
        return;
    int64_t rd = 0, wr = 0;
    for (int i = 0; i < cur->ndisks; i++) {
        struct rt_disk_sample *d = &cur->disks[i];
        const struct rt_disk_sample *pd = NULL;
        if (i < prev->ndisks && prev->disks[i].ident == d->ident)
            pd = &prev->disks[i];
        for (int j = 0; !pd && j < prev->ndisks; j++)
            if (prev->disks[j].ident == d->ident)
                pd = &prev->disks[j];
        if (!pd)
            continue;
        /* Clamped per device: a counter that went backwards (device re-created) says nothing
         * about the others. */
        d->read_bytes = sector_bytes(d->f[RT_DS_SECTORS_READ], pd->f[RT_DS_SECTORS_READ]);
        d->write_bytes = sector_bytes(d->f[RT_DS_SECTORS_WRITTEN], pd->f[RT_DS_SECTORS_WRITTEN]);
        rd = rt_sat_add(rd, d->read_bytes);
        wr = rt_sat_add(wr, d->write_bytes);
    }
    cur->disk_read_bytes = rd;
    cur->disk_write_bytes = wr;
}

static void disk_close(void *state)
{
    struct disk_state *st = state;
    for (size_t i = 0; i < st->nknown; i++) {
        struct rt_disk_ident *id = st->known[i].ident;
        if (!id)
            continue;
        free(id->name);
        free(id->model);
        free(id->vendor);
        free(id->serial);
        free(id);
    }
    free(st->known);
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    rt_buf_free(&st->blocks);
    free(st);
}

const struct rt_collector rt_collector_disk = {"disk", disk_open, disk_collect, disk_close};
