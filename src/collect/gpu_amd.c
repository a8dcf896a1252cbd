/* gpu_amd.c - AMD GPUs through sysfs (/sys/class/drm/cardN/device) and DRM fdinfo.
 *
 * No library: the amdgpu driver publishes everything rtrack needs as files. Device values come
 * from sysfs and hwmon, refined by the binary gpu_metrics table where the chip has one;
 * per-process values come from /proc/PID/fdinfo of the tracked processes' DRM file descriptors
 * (Documentation/gpu/drm-usage-stats.rst). Paths are resolved once at open: read() opens
 * files relative to directory descriptors held for the backend's lifetime, and allocates
 * nothing in steady state beyond the reading's arrays. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "rtrack/collect/gpu.h"
#include "rtrack/base/util.h"

enum { DRM_MAJOR = 226 };

enum {
    AMD_MEM_BUSY = 1 << 0, /* mem_busy_percent (absent on APUs) */
    AMD_SCLK = 1 << 1,     /* pp_dpm_sclk */
    AMD_MCLK = 1 << 2,     /* pp_dpm_mclk */
    AMD_METRICS = 1 << 3,  /* gpu_metrics (Vega12+ dGPUs, Renoir+ APUs) */
    AMD_TEMP = 1 << 4,     /* hwmon temp1_input (edge) */
    AMD_PAVG = 1 << 5,     /* hwmon power1_average */
    AMD_PINPUT = 1 << 6,   /* hwmon power1_input (some chips have only this one) */
    AMD_FREQ = 1 << 7,     /* hwmon freq1_input (sclk, Hz) */
};

struct amd_card {
    struct rt_gpu_ident id;
    int devfd;   /* <root>/sys/class/drm/cardN/device */
    int hwmonfd; /* device/hwmon/hwmonM, -1 when there is none */
    unsigned has;
    long pci_device, pci_revision; /* for the marketing name; -1 unknown */
};

/* One DRM client (an open of the device node, shared by dup'ed and inherited fds) seen in a
 * reading. The client id is unique across the whole DRM subsystem for the life of the open. */
struct amd_client {
    uint64_t id;
    int card;
    int64_t vram, gtt; /* bytes, RT_NA unknown */
    int64_t gfx_ns;    /* cumulative gfx engine busy time, -1 unknown */
    double util_pct;   /* over the interval since the previous reading, NAN unknown */
};

struct amd_state {
    struct amd_card *cards;
    int ncards;
    /* clients of this reading and of the previous one (swapped after each reading) */
    struct amd_client *cur, *prev;
    int ncur, nprev, cur_cap, prev_cap;
    double prev_mono; /* NAN before the first reading */
    _Alignas(8) char dents[8192];
    char text[8192];             /* one fdinfo or sysfs file */
    unsigned char metrics[4097]; /* gpu_metrics: 3360 bytes for the largest known layout */
};

/* --- small readers ------------------------------------------------------------------------- */

static int read_i64_at(int dirfd, const char *name, int64_t *out)
{
    char val[64];
    if (dirfd < 0 || rt_read_smallat(dirfd, name, val, sizeof(val)) <= 0)
        return -1;
    return rt_parse_i64(val, out);
}

static char *read_str_at(int dirfd, const char *name)
{
    char val[256];
    if (rt_read_smallat(dirfd, name, val, sizeof(val)) <= 0)
        return NULL;
    char *s = val;
    while (*s == ' ' || *s == '\t' || *s == '\n')
        s++;
    return *s ? xstrdup(s) : NULL;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The current level of a pp_dpm_* table ("1: 1800Mhz *"; also "S: 19Mhz *" for deep sleep). */
static int64_t dpm_current(int dirfd, const char *name, char *buf, size_t cap)
{
    if (rt_read_smallat(dirfd, name, buf, cap) <= 0)
        return RT_NA;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *colon = strchr(line, ':');
        uint64_t mhz;
        if (colon && strchr(colon, '*') && rt_parse_u64(colon + 1, &mhz))
            return (int64_t)mhz;
        line = nl ? nl + 1 : NULL;
    }
    return RT_NA;
}

/* --- gpu_metrics -------------------------------------------------------------------------------
 *
 * The binary table of drivers/gpu/drm/amd/include/kgd_pp_interface.h: a header {u16
 * structure_size; u8 format_revision; u8 content_revision}, then a struct gpu_metrics_vF_C in
 * the kernel's native (x86-64: natural alignment, little-endian) layout. The kernel fills the
 * table with 0xFF before setting what the chip provides, so all-ones means "not available".
 * Offsets below are those of the C structs (checked with offsetof on the transcribed structs and
 * independently by tests/fixtures/amd/make_gpu_metrics.py). A table is used only when its
 * revision is known and structure_size equals that layout's sizeof.
 *
 * Units differ by family (the header comments say so from v1.4 and v2.4 on; for the older
 * revisions the drivers copy the SMU firmware's fields, whose units the same drivers' hwmon
 * code converts):
 *   v1.x (dGPUs): temperatures degrees C, activity %, power W, clocks MHz.
 *   v2.x (APUs):  temperatures centi-degrees C, activity centi-%, power mW, clocks MHz.
 * The Rust reference divides temperatures by 1000 when above 1000, which is right for no
 * revision. v1.4+ (MI300 class) has no edge sensor: its hotspot temperature is used only when
 * hwmon gave no edge temperature. v2 socket power is used only when hwmon has none, since
 * Renoir firmware changed that field's unit without a new revision (the driver's hwmon path
 * tells them apart by firmware version). v3.0 is not parsed: its header documents activity as
 * % [0-100] while the driver divides the same field by 100 for gpu_busy_percent. */
enum { GM_TEMP_EDGE, GM_TEMP_HOTSPOT };

struct gm_layout {
    uint8_t frev, crev;
    uint16_t size;
    uint16_t temp, gfx, power, gfxclk; /* offsets */
    uint8_t temp_kind;
    uint8_t nclk;  /* current_gfxclk instances (v1.4+: one per XCC) */
    uint8_t centi; /* v2 units */
};

static const struct gm_layout gm_layouts[] = {
    {1, 0, 80, 16, 28, 34, 54, GM_TEMP_EDGE, 1, 0},
    {1, 1, 96, 4, 16, 22, 54, GM_TEMP_EDGE, 1, 0},
    {1, 2, 104, 4, 16, 22, 54, GM_TEMP_EDGE, 1, 0},
    {1, 3, 120, 4, 16, 22, 54, GM_TEMP_EDGE, 1, 0},
    {1, 4, 288, 4, 12, 10, 240, GM_TEMP_HOTSPOT, 8, 0},
    {1, 5, 360, 4, 12, 10, 312, GM_TEMP_HOTSPOT, 8, 0},
    {1, 6, 1664, 4, 12, 10, 264, GM_TEMP_HOTSPOT, 8, 0},
    {1, 7, 2208, 4, 12, 10, 296, GM_TEMP_HOTSPOT, 8, 0},
    {1, 8, 3360, 4, 12, 10, 296, GM_TEMP_HOTSPOT, 8, 0},
    {2, 0, 120, 16, 40, 44, 80, GM_TEMP_EDGE, 1, 1},
    {2, 1, 120, 4, 28, 40, 76, GM_TEMP_EDGE, 1, 1},
    {2, 2, 128, 4, 28, 40, 76, GM_TEMP_EDGE, 1, 1},
    {2, 3, 152, 4, 28, 40, 76, GM_TEMP_EDGE, 1, 1},
    {2, 4, 168, 4, 28, 40, 76, GM_TEMP_EDGE, 1, 1},
};

static uint16_t gm_u16(const unsigned char *b, size_t off)
{
    uint16_t v;
    memcpy(&v, b + off, sizeof(v));
    return v;
}

static ssize_t read_bin_at(int dirfd, const char *name, unsigned char *buf, size_t cap)
{
    int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t len = 0;
    while (len < cap) {
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    return (ssize_t)len;
}

static void metrics_apply(struct amd_state *st, const struct amd_card *c, struct rt_gpu_sample *d)
{
    ssize_t len = read_bin_at(c->devfd, "gpu_metrics", st->metrics, sizeof(st->metrics));
    if (len < 4)
        return;
    const unsigned char *b = st->metrics;
    uint16_t size = gm_u16(b, 0);
    const struct gm_layout *l = NULL;
    for (size_t i = 0; i < RT_ARRAY_LEN(gm_layouts); i++)
        if (gm_layouts[i].frev == b[2] && gm_layouts[i].crev == b[3])
            l = &gm_layouts[i];
    if (!l || size != l->size || len < (ssize_t)size)
        return;
    const uint16_t na = 0xFFFF;
    uint16_t v = gm_u16(b, l->gfx);
    if (v != na)
        d->util_pct = l->centi ? v / 100.0 : v;
    v = gm_u16(b, l->temp);
    if (v != na && (l->temp_kind == GM_TEMP_EDGE || isnan(d->temperature_c)))
        d->temperature_c = l->centi ? v / 100.0 : v;
    v = gm_u16(b, l->power);
    if (v != na && (!l->centi || isnan(d->power_w)))
        d->power_w = l->centi ? v / 1000.0 : v;
    for (int i = 0; i < l->nclk; i++) {
        v = gm_u16(b, l->gfxclk + 2 * (size_t)i);
        if (v != na) {
            d->clock_graphics_mhz = v;
            break;
        }
    }
}

/* --- devices ------------------------------------------------------------------------------- */

static void card_read(struct amd_state *st, const struct amd_card *c, struct rt_gpu_sample *d)
{
    int64_t v;
    /* the total is fixed for the device's life: read once at open */
    d->vram_total_bytes = c->id.vram_total_bytes;
    if (read_i64_at(c->devfd, "mem_info_vram_used", &v) == 0 && v >= 0)
        d->vram_used_bytes = v;
    if (read_i64_at(c->devfd, "gpu_busy_percent", &v) == 0 && v >= 0)
        d->util_pct = (double)v;
    if ((c->has & AMD_MEM_BUSY) && read_i64_at(c->devfd, "mem_busy_percent", &v) == 0 && v >= 0)
        d->mem_util_pct = (double)v;
    if ((c->has & AMD_TEMP) && read_i64_at(c->hwmonfd, "temp1_input", &v) == 0)
        d->temperature_c = v / 1000.0;
    if ((c->has & AMD_PAVG) && read_i64_at(c->hwmonfd, "power1_average", &v) == 0 && v >= 0)
        d->power_w = v / 1e6;
    else if ((c->has & AMD_PINPUT) && read_i64_at(c->hwmonfd, "power1_input", &v) == 0 && v >= 0)
        d->power_w = v / 1e6;
    if (c->has & AMD_SCLK)
        d->clock_graphics_mhz = dpm_current(c->devfd, "pp_dpm_sclk", st->text, sizeof(st->text));
    if (d->clock_graphics_mhz == RT_NA && (c->has & AMD_FREQ) &&
        read_i64_at(c->hwmonfd, "freq1_input", &v) == 0 && v >= 0)
        d->clock_graphics_mhz = v / 1000000 + (v % 1000000 >= 500000); /* no overflow */
    if (c->has & AMD_MCLK)
        d->clock_mem_mhz = dpm_current(c->devfd, "pp_dpm_mclk", st->text, sizeof(st->text));
    if (c->has & AMD_METRICS)
        metrics_apply(st, c, d);
}

/* "cardN" exactly (not "card0-DP-1" connectors, not renderD*). */
static int card_index(const char *name, int *idx)
{
    if (strncmp(name, "card", 4) != 0 || !name[4])
        return 0;
    long n = 0;
    for (const char *p = name + 4; *p; p++) {
        if (*p < '0' || *p > '9' || n > 1000000)
            return 0;
        n = n * 10 + (*p - '0');
    }
    *idx = (int)n;
    return 1;
}

static int has_file(int dirfd, const char *name)
{
    return dirfd >= 0 && faccessat(dirfd, name, F_OK, 0) == 0;
}

static int open_hwmon(int devfd)
{
    int fd = openat(devfd, "hwmon", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return -1;
    }
    int out = -1;
    struct dirent *de;
    while (out < 0 && (de = readdir(d)))
        if (strncmp(de->d_name, "hwmon", 5) == 0)
            out = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    closedir(d);
    return out;
}

static long read_hex_at(int dirfd, const char *name)
{
    char val[32];
    if (rt_read_smallat(dirfd, name, val, sizeof(val)) <= 0)
        return -1;
    char *end;
    long v = strtol(val, &end, 16);
    return end != val && !*end ? v : -1;
}

static char *pci_slot_from_uevent(int devfd, char *buf, size_t cap)
{
    if (rt_read_smallat(devfd, "uevent", buf, cap) <= 0)
        return NULL;
    for (char *line = buf; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        if (strncmp(line, "PCI_SLOT_NAME=", 14) == 0 && line[14])
            return xstrdup(line + 14);
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

static void card_probe(struct amd_state *st, int *cap, const struct rt_sysenv *env,
                       const char *name, int idx, const char *driver_version)
{
    char path[4096], link[4096];
    if (rt_path(env, path, sizeof(path), "/sys/class/drm/%s/device", name))
        return;
    int devfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (devfd < 0)
        return;
    ssize_t n = readlinkat(devfd, "driver", link, sizeof(link) - 1);
    if (n > 0) {
        link[n] = '\0';
        if (strcmp(base_name(link), "amdgpu") != 0) {
            close(devfd);
            return;
        }
    } else if (read_hex_at(devfd, "vendor") != 0x1002) {
        close(devfd);
        return;
    }
    if (st->ncards == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        st->cards = xrealloc(st->cards, (size_t)*cap * sizeof(*st->cards));
    }
    struct amd_card *c = &st->cards[st->ncards++];
    memset(c, 0, sizeof(*c));
    c->devfd = devfd;
    c->id.vendor = "amd";
    c->id.index = idx;
    n = readlink(path, link, sizeof(link) - 1);
    if (n > 0) {
        link[n] = '\0';
        c->id.pci_bus_id = xstrdup(base_name(link));
    } else {
        c->id.pci_bus_id = pci_slot_from_uevent(devfd, st->text, sizeof(st->text));
    }
    c->id.name = read_str_at(devfd, "product_name");
    c->id.uuid = read_str_at(devfd, "unique_id");
    c->id.driver_version = driver_version ? xstrdup(driver_version) : NULL;
    c->id.core_count = RT_NA; /* compute units are not in sysfs */
    int64_t v;
    c->id.vram_total_bytes =
        read_i64_at(devfd, "mem_info_vram_total", &v) == 0 && v >= 0 ? v : RT_NA;
    c->pci_device = read_hex_at(devfd, "device");
    c->pci_revision = read_hex_at(devfd, "revision");
    c->hwmonfd = open_hwmon(devfd);
    static const struct {
        int hwmon;
        const char *file;
        unsigned bit;
    } probes[] = {
        {0, "mem_busy_percent", AMD_MEM_BUSY}, {0, "pp_dpm_sclk", AMD_SCLK},
        {0, "pp_dpm_mclk", AMD_MCLK},          {0, "gpu_metrics", AMD_METRICS},
        {1, "temp1_input", AMD_TEMP},          {1, "power1_average", AMD_PAVG},
        {1, "power1_input", AMD_PINPUT},       {1, "freq1_input", AMD_FREQ},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(probes); i++)
        if (has_file(probes[i].hwmon ? c->hwmonfd : devfd, probes[i].file))
            c->has |= probes[i].bit;
}

/* Marketing names from libdrm's amdgpu.ids ("744C,\tC8,\tAMD Radeon RX 7900 XTX"), the table
 * amdgpu_top and Mesa use, for cards without a product_name (only boards with a FRU EEPROM,
 * mostly Instinct, have one). */
static void names_from_ids(struct amd_state *st, const struct rt_sysenv *env)
{
    int need = 0;
    for (int i = 0; i < st->ncards; i++)
        if (!st->cards[i].id.name && st->cards[i].pci_device >= 0)
            need = 1;
    char path[4096];
    if (!need || rt_path(env, path, sizeof(path), "/usr/share/libdrm/amdgpu.ids"))
        return;
    struct rt_buf b = {0};
    if (rt_read_file(path, &b) > 0) {
        for (char *line = b.p; line && *line;) {
            char *nl = strchr(line, '\n');
            if (nl)
                *nl = '\0';
            char *cur = line;
            line = nl ? nl + 1 : NULL;
            if (*cur == '#' || !*cur)
                continue;
            char *end;
            long did = strtol(cur, &end, 16);
            if (end == cur || *end != ',')
                continue;
            cur = end + 1;
            long rid = strtol(cur, &end, 16);
            if (end == cur || *end != ',')
                continue;
            cur = end + 1;
            while (*cur == ' ' || *cur == '\t')
                cur++;
            size_t len = strlen(cur);
            while (len > 0 && (cur[len - 1] == ' ' || cur[len - 1] == '\t' || cur[len - 1] == '\r'))
                len--;
            if (!len)
                continue;
            for (int i = 0; i < st->ncards; i++) {
                struct amd_card *c = &st->cards[i];
                if (!c->id.name && c->pci_device == did && c->pci_revision == rid)
                    c->id.name = xstrndup(cur, len);
            }
        }
    }
    rt_buf_free(&b);
}

static int card_cmp(const void *a, const void *b)
{
    const struct amd_card *x = a, *y = b;
    return (x->id.index > y->id.index) - (x->id.index < y->id.index);
}

static void amd_close(void *state);

/* Without the module there is nothing to read (and libamdgpu_top, which the Rust reference
 * uses, panicked there). */
static int amd_present(const struct rt_sysenv *env)
{
    char path[4096];
    struct stat sb;
    return !rt_path(env, path, sizeof(path), "/sys/module/amdgpu") && stat(path, &sb) == 0;
}

static void *amd_open(const struct rt_sysenv *env)
{
    char path[4096];
    if (!amd_present(env))
        return NULL;
    char *driver_version = NULL;
    if (!rt_path(env, path, sizeof(path), "/sys/module/amdgpu/version")) {
        char val[128];
        if (rt_read_small(path, val, sizeof(val)) > 0)
            driver_version = xstrdup(val);
    }
    if (rt_path(env, path, sizeof(path), "/sys/class/drm")) {
        free(driver_version);
        return NULL;
    }
    DIR *d = opendir(path);
    if (!d) {
        free(driver_version);
        return NULL;
    }
    struct amd_state *st = xcalloc(1, sizeof(*st));
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        int idx;
        if (card_index(de->d_name, &idx))
            card_probe(st, &cap, env, de->d_name, idx, driver_version);
    }
    closedir(d);
    free(driver_version);
    if (st->ncards == 0) {
        amd_close(st);
        return NULL;
    }
    /* readdir order is arbitrary; the contract wants the same order every time */
    qsort(st->cards, (size_t)st->ncards, sizeof(*st->cards), card_cmp);
    names_from_ids(st, env);
    st->prev_mono = RT_NAN;
    return st;
}

/* --- processes ----------------------------------------------------------------------------- */

/* "1024 KiB", "3 MiB", "4096" (drm-usage-stats: bytes unless a unit follows). */
static int64_t parse_mem(const char *v)
{
    uint64_t n;
    const char *p = rt_parse_u64(v, &n);
    if (!p)
        return RT_NA;
    while (*p == ' ' || *p == '\t')
        p++;
    uint64_t mul;
    if (!*p)
        mul = 1;
    else if (!strcmp(p, "KiB"))
        mul = 1024;
    else if (!strcmp(p, "MiB"))
        mul = 1024 * 1024;
    else if (!strcmp(p, "GiB"))
        mul = 1024 * 1024 * 1024;
    else
        return RT_NA;
    if (n > (uint64_t)INT64_MAX / mul)
        return RT_NA;
    return (int64_t)(n * mul);
}

static const struct amd_client *prev_client(const struct amd_state *st, uint64_t id, int card)
{
    for (int i = 0; i < st->nprev; i++)
        if (st->prev[i].id == id && st->prev[i].card == card)
            return &st->prev[i];
    return NULL;
}

static void scan_fd(struct amd_state *st, int infofd, const char *name, double dt)
{
    if (rt_read_smallat(infofd, name, st->text, sizeof(st->text)) <= 0)
        return;
    int amd = 0, have_id = 0;
    uint64_t id = 0;
    const char *pdev = NULL;
    int64_t vram = RT_NA, vram_res = RT_NA, gtt = RT_NA, gtt_res = RT_NA, gfx = -1;
    for (char *line = st->text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *key = line;
        line = nl ? nl + 1 : NULL;
        char *colon = strchr(key, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *val = colon + 1;
        while (*val == ' ' || *val == '\t')
            val++;
        size_t len = strlen(val);
        while (len > 0 && (val[len - 1] == ' ' || val[len - 1] == '\t'))
            val[--len] = '\0';
        if (strncmp(key, "drm-", 4) != 0)
            continue;
        key += 4;
        if (!strcmp(key, "driver")) {
            if (strcmp(val, "amdgpu") != 0)
                return;
            amd = 1;
        } else if (!strcmp(key, "client-id")) {
            const char *end = rt_parse_u64(val, &id);
            have_id = end && !*end;
        } else if (!strcmp(key, "pdev")) {
            pdev = val;
        } else if (!strcmp(key, "memory-vram")) {
            vram = parse_mem(val);
        } else if (!strcmp(key, "resident-vram")) {
            vram_res = parse_mem(val);
        } else if (!strcmp(key, "memory-gtt")) {
            gtt = parse_mem(val);
        } else if (!strcmp(key, "resident-gtt")) {
            gtt_res = parse_mem(val);
        } else if (!strcmp(key, "engine-gfx")) {
            uint64_t ns;
            const char *end = rt_parse_u64(val, &ns);
            if (end && !strcmp(end, " ns") && ns <= (uint64_t)INT64_MAX)
                gfx = (int64_t)ns;
        }
    }
    if (!amd || !have_id || !pdev)
        return;
    int card = -1;
    for (int i = 0; i < st->ncards && card < 0; i++)
        if (st->cards[i].id.pci_bus_id && !strcmp(st->cards[i].id.pci_bus_id, pdev))
            card = i;
    if (card < 0)
        return;
    /* dup'ed and inherited fds share the client: count it once, for the first pid seen */
    for (int i = 0; i < st->ncur; i++)
        if (st->cur[i].id == id && st->cur[i].card == card)
            return;
    struct amd_client *c = RT_PUSH(st->cur, st->ncur, st->cur_cap);
    c->id = id;
    c->card = card;
    /* kernels since 6.11 print drm-resident-* through the common DRM helper; drm-memory-* is
     * the older amdgpu name, kept as an alias of resident */
    c->vram = vram != RT_NA ? vram : vram_res;
    c->gtt = gtt != RT_NA ? gtt : gtt_res;
    c->gfx_ns = gfx;
    c->util_pct = RT_NAN;
    /* Not clamped to 100: the kernel sums a client's busy time over all its gfx rings, so a
     * client using several at once can exceed 100 %, and the few microseconds between this
     * read and the caller's clock cannot move a real value by more than noise. Clamping per
     * client would hide the first case; consumers see the raw share. */
    const struct amd_client *p = prev_client(st, id, card);
    if (p && gfx >= 0 && p->gfx_ns >= 0 && gfx >= p->gfx_ns && dt > 0)
        c->util_pct = (double)(gfx - p->gfx_ns) * 100.0 / (dt * 1e9);
}

static void scan_pid(struct amd_state *st, const struct rt_sysenv *env, pid_t pid, double dt)
{
    char path[4096];
    if (rt_path(env, path, sizeof(path), "/proc/%d/fdinfo", (int)pid))
        return;
    int infofd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (infofd < 0)
        return; /* exited, or not ours to read: both normal */
    int fdfd = -1;
    if (!rt_path(env, path, sizeof(path), "/proc/%d/fd", (int)pid))
        fdfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (;;) {
        ssize_t n = getdents64(infofd, st->dents, sizeof(st->dents));
        if (n <= 0)
            break;
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(void *)(st->dents + off);
            off += de->d_reclen;
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            /* A DRM fd links to a character device of major 226 under /dev. Sockets,
             * pipes and regular files (most of a big job's fds) are skipped with one
             * readlink, which unlike stat never touches the file's filesystem, so a hung
             * network mount cannot stall the reading; a /dev path is then stat'ed (devtmpfs)
             * to skip /dev/null and friends. Whatever cannot be checked is read. */
            if (fdfd >= 0) {
                char link[64];
                ssize_t l = readlinkat(fdfd, de->d_name, link, sizeof(link));
                if (l > 0 && (l < 5 || memcmp(link, "/dev/", 5) != 0))
                    continue;
                struct stat sb;
                if (l > 0 && fstatat(fdfd, de->d_name, &sb, 0) == 0 &&
                    !(S_ISCHR(sb.st_mode) && major(sb.st_rdev) == DRM_MAJOR))
                    continue;
            }
            scan_fd(st, infofd, de->d_name, dt);
        }
    }
    if (fdfd >= 0)
        close(fdfd);
    close(infofd);
}

/* One rt_gpu_proc per (pid, device), summing the pid's clients [from, ncur). Memory sums what
 * is known; utilization sums the clients with a rate (a client seen for the first time has
 * none yet), NAN when none has. */
static void procs_add(struct amd_state *st, pid_t pid, int from, int base, struct rt_gpu_reading *r)
{
    for (int card = 0; card < st->ncards; card++) {
        struct rt_gpu_proc *p = NULL;
        for (int i = from; i < st->ncur; i++) {
            const struct amd_client *c = &st->cur[i];
            if (c->card != card)
                continue;
            if (!p)
                p = rt_gpu_reading_add_proc(r, pid, base + card);
            if (c->vram != RT_NA)
                p->vram_bytes = (p->vram_bytes == RT_NA ? 0 : p->vram_bytes) + c->vram;
            if (c->gtt != RT_NA)
                p->gtt_bytes = (p->gtt_bytes == RT_NA ? 0 : p->gtt_bytes) + c->gtt;
            if (!isnan(c->util_pct))
                p->util_pct = (isnan(p->util_pct) ? 0 : p->util_pct) + c->util_pct;
        }
    }
}

static void amd_read(void *state, const struct rt_sysenv *env, const pid_t *pids, int npids,
                     double mono, struct rt_gpu_reading *r)
{
    struct amd_state *st = state;
    int base = r->ndev;
    for (int i = 0; i < st->ncards; i++)
        card_read(st, &st->cards[i], rt_gpu_reading_add_dev(r, &st->cards[i].id));

    double dt = mono - st->prev_mono; /* NAN on the first reading */
    st->ncur = 0;
    for (int i = 0; i < npids; i++) {
        int from = st->ncur;
        scan_pid(st, env, pids[i], dt);
        procs_add(st, pids[i], from, base, r);
    }
    /* this reading's clients become the previous ones; clients gone are forgotten */
    struct amd_client *t = st->prev;
    st->prev = st->cur;
    st->cur = t;
    int tc = st->prev_cap;
    st->prev_cap = st->cur_cap;
    st->cur_cap = tc;
    st->nprev = st->ncur;
    st->ncur = 0;
    st->prev_mono = mono;
}

static void amd_close(void *state)
{
    struct amd_state *st = state;
    if (!st)
        return;
    for (int i = 0; i < st->ncards; i++) {
        struct amd_card *c = &st->cards[i];
        rt_gpu_ident_free(&c->id);
        if (c->devfd >= 0)
            close(c->devfd);
        if (c->hwmonfd >= 0)
            close(c->hwmonfd);
    }
    free(st->cards);
    free(st->cur);
    free(st->prev);
    free(st);
}

const struct rt_gpu_backend rt_gpu_amd = {"amd", amd_present, amd_open, amd_read, amd_close};
