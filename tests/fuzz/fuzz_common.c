/* fuzz_common.c - the fixture root, input splitting and the two-sample driver of fuzz_common.h. */
#include "fuzz_common.h"

#include "rtrack/collect/gpu.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

size_t fz_split(const uint8_t *data, size_t size, struct fz_part *parts, size_t max)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i < max; i++)
        parts[i] = (struct fz_part){NULL, 0};
    if (max == 0)
        return 0;
    for (size_t i = 0; i < size && n + 1 < max; i++)
        if (data[i] == '\0') {
            parts[n++] = (struct fz_part){(const char *)data + start, i - start};
            start = i + 1;
        }
    parts[n++] = (struct fz_part){(const char *)data + start, size - start};
    return n;
}

char *fz_strndup(const void *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    if (n)
        memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rm_root(void)
{
    if (root[0])
        nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_root(void)
{
    if (!root[0]) {
        /* every input rewrites files here: tmpfs (/dev/shm) unless TMPDIR says otherwise */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(root, sizeof(root), "%s/rtrack-fuzz.XXXXXX", tmp);
        if (!mkdtemp(root)) {
            perror("rtrack fuzz: mkdtemp");
            abort();
        }
        atexit(rm_root);
    }
    return root;
}

static void mkdirs(char *path)
{
    for (char *p = path + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(path, 0755);
            *p = '/';
        }
    mkdir(path, 0755);
}

void fz_write(const char *rel, const void *data, size_t n)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", fz_root(), rel);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        mkdirs(path);
        *slash = '/';
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (fd < 0) {
        perror("rtrack fuzz: open");
        abort();
    }
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, (const char *)data + off, n - off);
        if (w <= 0) {
            perror("rtrack fuzz: write");
            abort();
        }
        off += (size_t)w;
    }
    close(fd);
}

void fz_write_str(const char *rel, const char *text)
{
    fz_write(rel, text, strlen(text));
}

void fz_write_part(const char *rel, const struct fz_part *part)
{
    if (part->p)
        fz_write(rel, part->p, part->n);
    else
        fz_remove(rel);
}

void fz_remove(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", fz_root(), rel);
    struct stat sb;
    if (lstat(path, &sb) != 0)
        return;
    if (S_ISDIR(sb.st_mode))
        nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    else
        unlink(path);
}

static int fake_statvfs(void *ud, const char *path, struct rt_fsstat *out)
{
    (void)ud;
    size_t n = strlen(path);
    if (n >= 4 && strcmp(path + n - 4, "gone") == 0)
        return -ENOENT;
    out->frsize = 4096;
    out->blocks = n >= 5 && strcmp(path + n - 5, "empty") == 0 ? 0 : 262144000; /* 1000 GiB */
    out->bfree = out->blocks / 2;
    out->bavail = out->blocks / 3;
    return 0;
}

void fz_sysenv(struct rt_sysenv *env)
{
    memset(env, 0, sizeof(*env));
    env->root = fz_root();
    env->statvfs_fn = fake_statvfs;
    env->clk_tck = 100;
    env->page_size = 4096;
}

void fz_quiet(void)
{
    FILE *null = fopen("/dev/null", "w");
    if (null)
        stderr = null;
}

int fz_collect2(const struct rt_collector *c, const struct rt_sysenv *env,
                const struct rt_collect_cfg *cfg, void (*between)(void *ud), void *ud,
                struct rt_sample s[2])
{
    void *st = c->open(env, cfg);
    if (!st)
        return -1;
    rt_sample_begin(&s[0], NULL, RT_SAMPLE_BASELINE, 1000.0, 100.0);
    c->collect(st, env, &s[0], NULL);
    if (between)
        between(ud);
    rt_sample_begin(&s[1], &s[0], RT_SAMPLE_PERIODIC, 1001.0, 101.0);
    c->collect(st, env, &s[1], &s[0]);
    c->close(st);
    return 0;
}

struct files_ud {
    const char *const *rels;
    const struct fz_part *part;
};

static void write_files(const char *const *rels, const struct fz_part *part)
{
    for (size_t i = 0; rels[i]; i++)
        fz_write_part(rels[i], part);
}

static void second_files(void *ud)
{
    const struct files_ud *f = ud;
    write_files(f->rels, f->part);
}

int fz_files_collect2(const struct rt_collector *c, const struct rt_sysenv *env,
                      const struct rt_collect_cfg *cfg, const char *const *rels,
                      const uint8_t *data, size_t size, struct rt_sample s[2])
{
    struct fz_part part[2];
    fz_split(data, size, part, 2);
    write_files(rels, &part[0]);
    struct files_ud ud = {rels, part[1].p ? &part[1] : &part[0]};
    return fz_collect2(c, env, cfg, second_files, &ud, s);
}

#define TREE_ROOT_A                                                                                \
    "100 (job) S 1 100 100 0 -1 4194304 100 0 0 0 50 10 0 0 20 0 1 0 5000 10000000 300 "           \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
#define TREE_ROOT_B                                                                                \
    "100 (job) S 1 100 100 0 -1 4194304 100 0 0 0 60 12 20 5 20 0 1 0 5000 10000000 310 "          \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
#define TREE_CHILD_A                                                                               \
    "101 (worker) R 100 100 100 0 -1 4194304 100 0 0 0 18 4 0 0 20 0 1 0 5100 10000000 200 "       \
    "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"

struct tree_ud {
    const char *name;
    const struct fz_part *second;
};

static void tree_second(void *p)
{
    const struct tree_ud *ud = p;
    char rel[64];
    fz_remove("proc/101");
    fz_write_str("proc/100/stat", TREE_ROOT_B);
    snprintf(rel, sizeof(rel), "proc/100/%s", ud->name);
    fz_write_part(rel, ud->second);
}

void fz_tree_file(const struct rt_sysenv *env, const char *name, void (*check)(const char *text),
                  const uint8_t *data, size_t size)
{
    static struct rt_sample s[2];
    struct fz_part part[3];
    char rel[64];
    fz_split(data, size, part, 3);
    for (int i = 0; i < 3; i++) {
        if (!part[i].p)
            continue;
        char *text = fz_strndup(part[i].p, part[i].n);
        check(text);
        free(text);
    }
    fz_write_str("proc/100/stat", TREE_ROOT_A);
    fz_write_str("proc/101/stat", TREE_CHILD_A);
    snprintf(rel, sizeof(rel), "proc/100/%s", name);
    fz_write_part(rel, &part[0]);
    snprintf(rel, sizeof(rel), "proc/101/%s", name);
    fz_write_part(rel, &part[2]);
    struct rt_collect_cfg cfg = {100, 0, 1.0};
    struct tree_ud ud = {name, &part[1]};
    fz_collect2(&rt_collector_proc, env, &cfg, tree_second, &ud, s);
}

void fz_mount_disks(void)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/no-such-bin", fz_root());
    setenv("PATH", path, 1);
    fz_write_str("sys/block/vda/size", "100\n");
    fz_write_str("sys/block/sda/size", "100\n");
    fz_write_str("sys/block/nvme0n1/size", "100\n");
    fz_write_str("sys/class/block/sda1/partition", "1\n");
    fz_write_str("sys/class/block/nvme0n1p2/partition", "2\n");
    fz_write_str("sys/devices/virtual/block/vda/dev", "254:0\n");
    fz_write_str("sys/devices/pci0000:00/block/sda/sda1/dev", "8:1\n");
    fz_write_str("sys/dev/block/.keep", "");
    char target[512];
    snprintf(path, sizeof(path), "%s/sys/dev/block/254:0", fz_root());
    snprintf(target, sizeof(target), "../../devices/virtual/block/vda");
    if (symlink(target, path) != 0)
        abort();
    snprintf(path, sizeof(path), "%s/sys/dev/block/8:1", fz_root());
    snprintf(target, sizeof(target), "../../devices/pci0000:00/block/sda/sda1");
    if (symlink(target, path) != 0)
        abort();
}

void fz_amd_card(void)
{
    fz_write_str("sys/module/amdgpu/version", "6.8.5\n");
    fz_write_str("sys/class/drm/card0/dev", "226:0\n");
    fz_write_str("sys/class/drm/card0/device/vendor", "0x1002\n");
    fz_write_str("sys/class/drm/card0/device/device", "0x744c\n");
    fz_write_str("sys/class/drm/card0/device/revision", "0xc8\n");
    fz_write_str("sys/class/drm/card0/device/uevent",
                 "DRIVER=amdgpu\nPCI_CLASS=30000\nPCI_SLOT_NAME=0000:03:00.0\n");
    fz_write_str("sys/class/drm/card0/device/mem_info_vram_total", "25753026560\n");
    fz_write_str("sys/class/drm/card0/device/mem_info_vram_used", "1073741824\n");
    fz_write_str("sys/class/drm/card0/device/gpu_busy_percent", "37\n");
    fz_write_str("sys/class/drm/card0/device/hwmon/hwmon3/name", "amdgpu\n");
}

int fz_amd_read2(const struct rt_sysenv *env, const pid_t *pids, int npids,
                 void (*between)(void *ud), void *ud)
{
    void *st = rt_gpu_amd.open(env);
    if (!st)
        return -1;
    struct rt_gpu_reading r = {0};
    rt_gpu_amd.read(st, env, pids, npids, 100.0, &r);
    if (between)
        between(ud);
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, env, pids, npids, 101.0, &r);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
    return 0;
}
