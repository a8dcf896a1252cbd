/* mount.c - disk space per mount point: statvfs of the mounts a user thinks of as storage.
 *
 * The set follows the Python reference's rules with its two bugs fixed: mount points are
 * octal-unescaped (/media/usb\040disk is a real mount, not a failing path), and only /proc,
 * /sys, /dev and /run themselves and paths below them are skipped (not /devel or /runner).
 * Pseudo filesystems drop out because they report f_blocks == 0; a mount point listed twice
 * counts once; ZFS pools come from `zpool list` because statvfs under-reports them. */
#include <stdio.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"
#include "rtrack/base/spawn.h"

/* One line of the mount table, fields pointing into the (modified) line. */
struct mount_line {
    char *source, *mount_point, *fstype;
    long major, minor; /* -1 when unknown (/proc/mounts has no device numbers) */
};

struct mount_state {
    struct rt_buf buf, zbuf;
    struct rt_kfile kf;
    struct rt_mount_ident **known;
    size_t nknown, capknown;
    /* The mount table as last parsed (pointing into buf): the mounts to statvfs. On a live
     * system mountinfo is re-read only when poll() says the table changed (POLLPRI). */
    struct mount_line *lines;
    size_t nlines, caplines;
    int parsed, zfs;
};

static int skip_mount_point(const char *mp)
{
    static const char *const virt[] = {"/proc", "/sys", "/dev", "/run"};
    for (size_t i = 0; i < RT_ARRAY_LEN(virt); i++) {
        size_t l = strlen(virt[i]);
        if (strncmp(mp, virt[i], l) == 0 && (mp[l] == '\0' || mp[l] == '/'))
            return 1;
    }
    return 0;
}

static char *next_field(char **p)
{
    char *s = *p;
    while (*s == ' ')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    while (*e && *e != ' ')
        e++;
    if (*e)
        *e++ = '\0';
    *p = e;
    return s;
}

/* mountinfo: "36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw" */
static int parse_mountinfo(char *line, struct mount_line *m)
{
    char *p = line, *f[6];
    for (int i = 0; i < 6; i++)
        if (!(f[i] = next_field(&p)))
            return -1;
    char *sep;
    while ((sep = next_field(&p)) && strcmp(sep, "-") != 0)
        ;
    if (!sep || !(m->fstype = next_field(&p)) || !(m->source = next_field(&p)))
        return -1;
    m->mount_point = f[4];
    /* "major:minor"; the C library's sscanf gives no defined result for out-of-range numbers */
    uint64_t maj, min;
    const char *e = rt_parse_u64(f[2], &maj);
    if (e && *e == ':' && (e = rt_parse_u64(e + 1, &min)) && !*e && maj <= INT32_MAX &&
        min <= INT32_MAX) {
        m->major = (long)maj;
        m->minor = (long)min;
    } else {
        m->major = m->minor = -1;
    }
    return 0;
}

/* /proc/mounts: "/dev/vda / ext4 rw,relatime 0 0" */
static int parse_mounts(char *line, struct mount_line *m)
{
    char *p = line;
    if (!(m->source = next_field(&p)) || !(m->mount_point = next_field(&p)) ||
        !(m->fstype = next_field(&p)))
        return -1;
    m->major = m->minor = -1;
    return 0;
}

/* The whole disk of a device's sysfs path without a block/ directory in it (NVMe:
 * .../nvme/nvme0/nvme0n1[/nvme0n1p1], the disk a child of its controller): its last component,
 * or the one before, that /sys/block lists. NULL when neither is. */
static char *disk_of_path(const struct rt_sysenv *env, char *link)
{
    char path[4096];
    for (int up = 0; up < 2; up++) {
        char *slash = strrchr(link, '/');
        const char *name = slash ? slash + 1 : link;
        if (*name && !rt_path(env, path, sizeof(path), "/sys/block/%s", name) &&
            access(path, F_OK) == 0)
            return xstrdup(name);
        if (!slash)
            break;
        *slash = '\0';
    }
    return NULL;
}

/* The whole disk behind a mount: through the device number when mountinfo gives one
 * (/sys/dev/block/MAJ:MIN links to .../block/DISK[/PART], or for NVMe .../nvme0/DISK[/PART]),
 * else from a /dev/NAME source. */
static char *mount_disk(const struct rt_sysenv *env, const struct mount_line *m)
{
    char path[4096], link[4096];
    if (m->major > 0 &&
        !rt_path(env, path, sizeof(path), "/sys/dev/block/%ld:%ld", m->major, m->minor)) {
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n > 0) {
            link[n] = '\0';
            char *b = strstr(link, "/block/");
            if (b) {
                b += 7;
                char *slash = strchr(b, '/');
                return slash ? xstrndup(b, (size_t)(slash - b)) : xstrdup(b);
            }
            return disk_of_path(env, link);
        }
        return NULL;
    }
    if (strncmp(m->source, "/dev/", 5) != 0 || strchr(m->source + 5, '/'))
        return NULL;
    const char *name = m->source + 5;
    if (!rt_disk_is_partition(env, name)) {
        return rt_path(env, path, sizeof(path), "/sys/block/%s", name) || access(path, F_OK)
                   ? NULL
                   : xstrdup(name);
    }
    /* partition: strip digits, then an optional 'p' after a digit (nvme0n1p1, mmcblk0p1) */
    size_t l = strlen(name);
    while (l > 0 && name[l - 1] >= '0' && name[l - 1] <= '9')
        l--;
    if (l > 1 && name[l - 1] == 'p' && name[l - 2] >= '0' && name[l - 2] <= '9')
        l--;
    return l ? xstrndup(name, l) : NULL;
}

static const struct rt_mount_ident *ident_get(struct mount_state *st, const struct rt_sysenv *env,
                                              const struct mount_line *m, const char *mp)
{
    for (size_t i = 0; i < st->nknown; i++) {
        struct rt_mount_ident *k = st->known[i];
        if (strcmp(k->mount_point, mp) == 0 && strcmp(k->fstype, m->fstype) == 0 &&
            strcmp(k->source, m->source) == 0)
            return k;
    }
    if (st->nknown == st->capknown) {
        st->capknown = st->capknown ? st->capknown * 2 : 16;
        st->known = xrealloc(st->known, st->capknown * sizeof(*st->known));
    }
    struct rt_mount_ident *k = xcalloc(1, sizeof(*k));
    k->mount_point = xstrdup(mp);
    k->fstype = xstrdup(m->fstype);
    k->source = xstrdup(m->source);
    k->disk = strcmp(m->fstype, "zfs") == 0 ? NULL : mount_disk(env, m);
    st->known[st->nknown++] = k;
    return k;
}

/* Saturated sums: sizes no real file system has must not overflow. */
static void add_space(struct rt_sample *cur, struct rt_mount_sample *ms)
{
    cur->space_total = rt_sat_add(cur->space_total, ms->total_bytes);
    cur->space_used = rt_sat_add(cur->space_used, ms->used_bytes);
    cur->space_free = rt_sat_add(cur->space_free, ms->available_bytes);
}

/* ZFS pools: statvfs of a dataset reports the dataset's view, not the pool. Like both
 * references, ask `zpool list` (bounded by a short timeout so a hung pool cannot stall us). */
static void add_zfs_pools(struct mount_state *st, const struct rt_sysenv *env,
                          struct rt_sample *cur)
{
    static char *const argv[] = {"zpool", "list", "-Hp", "-o", "name,size,allocated,free", NULL};
    if (rt_capture(argv, 250, &st->zbuf) != 0)
        return;
    for (char *line = st->zbuf.p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char name[256];
        uint64_t size, alloc, fr;
        const char *tab = strchr(line, '\t'), *e = NULL;
        if (tab && tab > line && (size_t)(tab - line) < sizeof(name)) {
            memcpy(name, line, (size_t)(tab - line));
            name[tab - line] = '\0';
            /* "NAME\tSIZE\tALLOC\tFREE", the numbers as -p prints them (exact bytes) */
            if ((e = rt_parse_u64(tab + 1, &size)) && *e == '\t' &&
                (e = rt_parse_u64(e + 1, &alloc)) && *e == '\t')
                e = rt_parse_u64(e + 1, &fr);
        }
        if (e && (!*e || *e == '\t') && size <= INT64_MAX && alloc <= INT64_MAX &&
            fr <= INT64_MAX) {
            char mp[300];
            snprintf(mp, sizeof(mp), "zfs:%s", name);
            struct mount_line m = {name, mp, "zfs", -1, -1};
            struct rt_mount_sample *ms = RT_PUSH(cur->mounts, cur->nmounts, cur->mounts_cap);
            ms->ident = ident_get(st, env, &m, mp);
            ms->total_bytes = (int64_t)size;
            ms->used_bytes = (int64_t)alloc;
            ms->available_bytes = (int64_t)fr;
            ms->free_bytes = (int64_t)fr;
            add_space(cur, ms);
        }
        line = nl ? nl + 1 : NULL;
    }
}

static void *mount_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    (void)env;
    (void)cfg;
    return xcalloc(1, sizeof(struct mount_state));
}

/* Live system, table parsed before, and mountinfo's poll() reports no change since. */
static int table_unchanged(struct mount_state *st, const struct rt_sysenv *env)
{
    if (!st->parsed || env->root[0] != '\0' || st->kf.fd_plus1 <= 0)
        return 0;
    struct pollfd pfd = {st->kf.fd_plus1 - 1, POLLPRI, 0};
    return poll(&pfd, 1, 0) == 0;
}

/* Read and parse the mount table into st->lines. */
static int read_table(struct mount_state *st, const struct rt_sysenv *env)
{
    char path[4096];
    int info = 1;
    st->parsed = 0;
    if (rt_path(env, path, sizeof(path), "/proc/self/mountinfo") ||
        rt_kfile_read(&st->kf, path, &st->buf) < 0) {
        info = 0;
        if (rt_path(env, path, sizeof(path), "/proc/mounts") || rt_read_file(path, &st->buf) < 0)
            return -1;
    }
    st->nlines = 0;
    st->zfs = 0;
    for (char *line = st->buf.p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        struct mount_line m;
        int ok = info ? parse_mountinfo(line, &m) : parse_mounts(line, &m);
        line = nl ? nl + 1 : NULL;
        if (ok != 0)
            continue;
        rt_unescape_octal(m.mount_point);
        if (skip_mount_point(m.mount_point))
            continue;
        if (strcmp(m.fstype, "zfs") == 0) {
            st->zfs = 1;
            continue;
        }
        if (st->nlines == st->caplines) {
            st->caplines = st->caplines ? st->caplines * 2 : 32;
            st->lines = xrealloc(st->lines, st->caplines * sizeof(*st->lines));
        }
        st->lines[st->nlines++] = m;
    }
    st->parsed = info;
    return 0;
}

static void mount_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                          const struct rt_sample *prev)
{
    (void)prev;
    struct mount_state *st = state;
    if (!table_unchanged(st, env) && read_table(st, env) != 0)
        return;
    cur->nmounts = 0;
    cur->space_total = cur->space_used = cur->space_free = 0;
    for (size_t li = 0; li < st->nlines; li++) {
        struct mount_line m = st->lines[li];
        struct rt_fsstat fs;
        if (env->statvfs_fn(env->statvfs_ud, m.mount_point, &fs) != 0 || fs.blocks == 0)
            continue;
        /* The same mount point twice (rootfs under /, a remount): the later line is the
         * visible mount; count it once. */
        struct rt_mount_sample *ms = NULL;
        for (int i = 0; i < cur->nmounts; i++)
            if (strcmp(cur->mounts[i].ident->mount_point, m.mount_point) == 0)
                ms = &cur->mounts[i];
        if (!ms)
            ms = RT_PUSH(cur->mounts, cur->nmounts, cur->mounts_cap);
        ms->ident = ident_get(st, env, &m, m.mount_point);
        ms->total_bytes = (int64_t)(fs.blocks * fs.frsize);
        ms->used_bytes = (int64_t)((fs.blocks - fs.bavail) * fs.frsize);
        ms->available_bytes = (int64_t)(fs.bavail * fs.frsize);
        ms->free_bytes = (int64_t)(fs.bfree * fs.frsize);
    }
    for (int i = 0; i < cur->nmounts; i++)
        add_space(cur, &cur->mounts[i]);
    if (st->zfs)
        add_zfs_pools(st, env, cur);
}

static void mount_close(void *state)
{
    struct mount_state *st = state;
    for (size_t i = 0; i < st->nknown; i++) {
        free(st->known[i]->mount_point);
        free(st->known[i]->fstype);
        free(st->known[i]->source);
        free(st->known[i]->disk);
        free(st->known[i]);
    }
    free(st->known);
    free(st->lines);
    rt_kfile_close(&st->kf);
    rt_buf_free(&st->buf);
    rt_buf_free(&st->zbuf);
    free(st);
}

const struct rt_collector rt_collector_mount = {"mount", mount_open, mount_collect, mount_close};
