/* test_gpu_amd.c - the AMD backend (sysfs, gpu_metrics, DRM fdinfo) over fixture trees.
 *
 * tests/fixtures/amd/two-cards: card0 is an Intel iGPU (skipped), card1 a navi31-like board
 * whose `device` is a symlink (PCI id from its target) with a v1.3 gpu_metrics table, card10 an
 * MI210-like board whose `device` is a plain directory without a driver link (accepted by
 * vendor 0x1002, PCI id from uevent). proc/100 and proc/101 hold the tracked processes' fdinfo;
 * proc/102 is outside the tree. The binary tables come from make_gpu_metrics.py. */
#include "testlib.h"

#include <dirent.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/collect/gpu.h"
#include "rtrack/base/util.h"

#define AMD_FX RT_FIXTURES "/amd"

#define CARD1_DEV  "sys/devices/pci0000:00/0000:03:00.0"
#define CARD10_DEV "sys/class/drm/card10/device"

static void dbl_eq(double got, double want, const char *what, int line)
{
    if (!(got == want))
        fail_msg("line %d: %s = %.17g, want %.17g", line, what, got, want);
}
#define assert_dbl(got, want) dbl_eq((got), (want), #got, __LINE__)
#define assert_nan(x)                                                                              \
    do {                                                                                           \
        if (!isnan(x))                                                                             \
            fail_msg("line %d: %s = %.17g, want NAN", __LINE__, #x, (double)(x));                  \
    } while (0)
#define assert_na(x) assert_true((x) == RT_NA)

static void env_for(struct rt_sysenv *env, const char *root)
{
    memset(env, 0, sizeof(*env));
    env->root = root;
    env->clk_tck = 100;
    env->page_size = 4096;
}

/* --- a writable copy of a fixture tree ----------------------------------------------------- */

static const char *copy_from, *copy_to;

static void copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    assert_non_null(in);
    FILE *out = fopen(dst, "wb");
    assert_non_null(out);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        assert_int_equal(fwrite(buf, 1, n, out), n);
    fclose(in);
    fclose(out);
}

static int copy_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    char dst[2048];
    snprintf(dst, sizeof(dst), "%s%s", copy_to, p + strlen(copy_from));
    if (flag == FTW_D) {
        mkdir(dst, 0755);
    } else if (flag == FTW_SL || flag == FTW_SLN) {
        char target[4096];
        ssize_t n = readlink(p, target, sizeof(target) - 1);
        assert_true(n > 0);
        target[n] = '\0';
        assert_int_equal(symlink(target, dst), 0);
    } else if (flag == FTW_F) {
        copy_file(p, dst);
    }
    return 0;
}

/* mkdtemp + a copy of fixtures/amd/NAME into it */
static void tree_copy(char *root, size_t cap, const char *name)
{
    snprintf(root, cap, "/tmp/rtrack-amd.XXXXXX");
    assert_non_null(mkdtemp(root));
    char src[1024];
    snprintf(src, sizeof(src), "%s/%s", AMD_FX, name);
    copy_from = src;
    copy_to = root;
    assert_int_equal(nftw(src, copy_cb, 16, FTW_PHYS), 0);
}

static const struct rt_gpu_proc *find_proc(const struct rt_gpu_reading *r, pid_t pid, int dev)
{
    const struct rt_gpu_proc *found = NULL;
    for (int i = 0; i < r->nproc; i++)
        if (r->procs[i].pid == pid && r->procs[i].dev == dev) {
            assert_null(found); /* one row per (pid, device) */
            found = &r->procs[i];
        }
    return found;
}

/* --- probing ------------------------------------------------------------------------------- */

static void test_no_module(void **state)
{
    (void)state;
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/no-module");
    assert_null(rt_gpu_amd.open(&env));
}

static void test_empty_root(void **state)
{
    (void)state;
    char root[64] = "/tmp/rtrack-amd.XXXXXX";
    assert_non_null(mkdtemp(root));
    struct rt_sysenv env;
    env_for(&env, root);
    assert_null(rt_gpu_amd.open(&env));
    /* the module without a drm class, then with only a non-AMD card */
    fx_write(root, "sys/module/amdgpu/initstate", "live\n");
    assert_null(rt_gpu_amd.open(&env));
    fx_write(root, "sys/class/drm/card0/device/vendor", "0x8086\n");
    fx_symlink(root, "sys/class/drm/card0/device/driver", "../../../../bus/pci/drivers/i915");
    fx_write(root, "sys/class/drm/renderD128/device/vendor", "0x1002\n");
    assert_null(rt_gpu_amd.open(&env));
    /* an AMD vendor id does not count when the driver link names another driver */
    fx_write(root, "sys/class/drm/card1/device/vendor", "0x1002\n");
    fx_symlink(root, "sys/class/drm/card1/device/driver", "../../../../bus/pci/drivers/vfio-pci");
    assert_null(rt_gpu_amd.open(&env));
    fx_rmtree(root);
}

/* --- devices ------------------------------------------------------------------------------- */

static void test_identities(void **state)
{
    (void)state;
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/two-cards");
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_reading r = {0};
    rt_gpu_amd.read(st, &env, NULL, 0, 100.0, &r);
    assert_int_equal(r.ndev, 2); /* card0 (i915), card1-DP-1 and renderD* skipped */
    assert_int_equal(r.nproc, 0);

    const struct rt_gpu_ident *a = r.dev[0].ident; /* sorted by N: card1 before card10 */
    assert_string_equal(a->vendor, "amd");
    assert_int_equal(a->index, 1);
    assert_string_equal(a->pci_bus_id, "0000:03:00.0");     /* basename of the device link */
    assert_string_equal(a->name, "AMD Radeon RX 7900 XTX"); /* amdgpu.ids 744C,C8 */
    assert_null(a->uuid);
    assert_string_equal(a->driver_version, "6.8.5");
    assert_int_equal(a->vram_total_bytes, 25753026560);
    assert_na(a->core_count);

    const struct rt_gpu_ident *b = r.dev[1].ident;
    assert_string_equal(b->vendor, "amd");
    assert_int_equal(b->index, 10);
    assert_string_equal(b->pci_bus_id, "0000:83:00.0"); /* PCI_SLOT_NAME from uevent */
    assert_string_equal(b->name, "AMD Instinct MI210"); /* product_name */
    assert_string_equal(b->uuid, "a1b2c3d4e5f60718");
    assert_string_equal(b->driver_version, "6.8.5");
    assert_int_equal(b->vram_total_bytes, 68702699520);
    assert_na(b->core_count);

    /* same devices, same order, same identities on the next reading */
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, NULL, 0, 101.0, &r);
    assert_int_equal(r.ndev, 2);
    assert_ptr_equal(r.dev[0].ident, a);
    assert_ptr_equal(r.dev[1].ident, b);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
}

static void test_device_values(void **state)
{
    (void)state;
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/two-cards");
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_reading r = {0};
    for (int round = 0; round < 2; round++) {
        rt_gpu_reading_clear(&r);
        rt_gpu_amd.read(st, &env, NULL, 0, 100.0 + round, &r);
        assert_int_equal(r.ndev, 2);
        /* card1: sysfs, overridden by gpu_metrics v1.3 where the table has a value */
        const struct rt_gpu_sample *a = &r.dev[0];
        assert_dbl(a->util_pct, 55);     /* average_gfx_activity; sysfs says 40 */
        assert_dbl(a->mem_util_pct, 12); /* mem_busy_percent */
        assert_int_equal(a->vram_used_bytes, 1073741824);
        assert_int_equal(a->vram_total_bytes, 25753026560);
        assert_dbl(a->temperature_c, 61); /* temperature_edge (degrees C); hwmon says 60.000 */
        assert_dbl(a->power_w, 212.5);    /* table has 0xFFFF: hwmon power1_average stands */
        assert_int_equal(a->clock_graphics_mhz, 2345); /* current_gfxclk; pp_dpm_sclk says 1800 */
        assert_na(a->clock_sm_mhz);
        assert_int_equal(a->clock_mem_mhz, 1249); /* the '*' line of pp_dpm_mclk */

        /* card10: sysfs only, several files absent */
        const struct rt_gpu_sample *b = &r.dev[1];
        assert_dbl(b->util_pct, 7);
        assert_nan(b->mem_util_pct); /* no mem_busy_percent */
        assert_int_equal(b->vram_used_bytes, 536870912);
        assert_int_equal(b->vram_total_bytes, 68702699520);
        assert_nan(b->temperature_c); /* no temp1_input, no gpu_metrics */
        assert_dbl(b->power_w, 90);   /* power1_input when power1_average is absent */
        assert_int_equal(b->clock_graphics_mhz,
                         1700); /* hwmon freq1_input (Hz) without pp_dpm_sclk */
        assert_na(b->clock_sm_mhz);
        assert_na(b->clock_mem_mhz); /* no pp_dpm_mclk */
    }
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
}

/* A file that disappears after open (a device going away) reads as unknown, not 0. */
static void test_device_files_vanish(void **state)
{
    (void)state;
    char root[64];
    tree_copy(root, sizeof(root), "two-cards");
    struct rt_sysenv env;
    env_for(&env, root);
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    const char *gone[] = {"gpu_busy_percent",
                          "mem_busy_percent",
                          "mem_info_vram_used",
                          "pp_dpm_sclk",
                          "pp_dpm_mclk",
                          "gpu_metrics",
                          "hwmon/hwmon3/temp1_input",
                          "hwmon/hwmon3/power1_average",
                          "hwmon/hwmon3/power1_input",
                          "hwmon/hwmon3/freq1_input"};
    for (size_t i = 0; i < RT_ARRAY_LEN(gone); i++) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s/%s", root, CARD1_DEV, gone[i]);
        assert_int_equal(unlink(path), 0);
    }
    struct rt_gpu_reading r = {0};
    rt_gpu_amd.read(st, &env, NULL, 0, 100.0, &r);
    const struct rt_gpu_sample *a = &r.dev[0];
    assert_nan(a->util_pct);
    assert_nan(a->mem_util_pct);
    assert_na(a->vram_used_bytes);
    assert_int_equal(a->vram_total_bytes, 25753026560); /* identity, read at open */
    assert_nan(a->temperature_c);
    assert_nan(a->power_w);
    assert_na(a->clock_graphics_mhz);
    assert_na(a->clock_mem_mhz);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
    fx_rmtree(root);
}

/* --- gpu_metrics revisions ------------------------------------------------------------------ */

struct metrics_case {
    const char *file;
    int card;       /* 0: card1 (has hwmon edge temperature), 1: card10 (has none) */
    int drop_power; /* remove card10's hwmon power1_input first */
    double util, temp, power;
    int64_t clock;
};

static void test_metrics_revisions(void **state)
{
    (void)state;
    static const struct metrics_case cases[] = {
        /* v1.0-1.3: edge temperature C, activity %, socket power W, current_gfxclk MHz */
        {"v1_0.bin", 1, 0, 33, 50, 150, 1500},
        {"v1_1.bin", 1, 0, 34, 51, 151, 1501},
        {"v1_2.bin", 1, 0, 35, 52, 152, 1502},
        {"v1_3.bin", 1, 0, 36, 53, 153, 1503},
        /* v1.4-1.8 (MI300 class): no edge sensor, hotspot used when hwmon has no edge either;
         * current_socket_power W; first valid current_gfxclk instance (v1.5: instance 1) */
        {"v1_4.bin", 1, 0, 44, 84, 554, 2104},
        {"v1_5.bin", 1, 0, 45, 85, 555, 2105},
        {"v1_6.bin", 1, 0, 46, 86, 556, 2106},
        {"v1_7.bin", 1, 0, 47, 87, 557, 2107},
        {"v1_8.bin", 1, 0, 48, 88, 558, 2108},
        /* with an edge temperature from hwmon, the hotspot does not replace it */
        {"v1_5.bin", 0, 0, 45, 60, 555, 2105},
        /* v2.x (APUs): centi-degrees, centi-percent, mW (power only where hwmon has none) */
        {"v2_0.bin", 1, 1, 25.75, 45.5, 15, 800},
        {"v2_1.bin", 1, 1, 26.75, 46.5, 16, 801},
        {"v2_2.bin", 1, 1, 27.75, 47.5, 17, 802},
        {"v2_3.bin", 1, 1, 28.75, 48.5, 18, 803},
        {"v2_4.bin", 1, 1, 29.75, 49.5, 19, 804},
        {"v2_4.bin", 1, 0, 29.75, 49.5, 90, 804},
        /* not parsed: sysfs values stand */
        {"bad_size.bin", 1, 0, 7, NAN, 90, 1700},
        {"truncated.bin", 1, 0, 7, NAN, 90, 1700},
        {"unknown_rev.bin", 1, 0, 7, NAN, 90, 1700},
        {"v3_0.bin", 1, 0, 7, NAN, 90, 1700},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        const struct metrics_case *c = &cases[i];
        char root[64], src[1024], dst[1024];
        tree_copy(root, sizeof(root), "two-cards");
        snprintf(src, sizeof(src), "%s/metrics/%s", AMD_FX, c->file);
        snprintf(dst, sizeof(dst), "%s/%s/gpu_metrics", root, c->card ? CARD10_DEV : CARD1_DEV);
        copy_file(src, dst);
        if (c->drop_power) {
            snprintf(dst, sizeof(dst), "%s/%s/hwmon/hwmon5/power1_input", root, CARD10_DEV);
            assert_int_equal(unlink(dst), 0);
        }
        struct rt_sysenv env;
        env_for(&env, root);
        void *st = rt_gpu_amd.open(&env);
        assert_non_null(st);
        struct rt_gpu_reading r = {0};
        rt_gpu_amd.read(st, &env, NULL, 0, 100.0, &r);
        assert_int_equal(r.ndev, 2);
        const struct rt_gpu_sample *d = &r.dev[c->card];
        print_message("case %zu: %s on card %d\n", i, c->file, c->card);
        assert_dbl(d->util_pct, c->util);
        if (isnan(c->temp))
            assert_nan(d->temperature_c);
        else
            assert_dbl(d->temperature_c, c->temp);
        assert_dbl(d->power_w, c->power);
        assert_int_equal(d->clock_graphics_mhz, c->clock);
        rt_gpu_reading_free(&r);
        rt_gpu_amd.close(st);
        fx_rmtree(root);
    }
}

/* --- processes ------------------------------------------------------------------------------ */

static void test_procs_memory(void **state)
{
    (void)state;
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/two-cards");
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_reading r = {0};
    const pid_t tree[] = {100, 101, 4242 /* gone */};
    rt_gpu_amd.read(st, &env, tree, 3, 100.0, &r);
    assert_int_equal(r.nproc, 3);
    /* pid 100 on card1: client 7 (fds 5 and 6: counted once) 1024 KiB + 2 MiB GTT, client 12
     * 512 KiB without GTT; fd 11 (a socket per its fd link) and pid 102 are not counted */
    const struct rt_gpu_proc *p = find_proc(&r, 100, 0);
    assert_non_null(p);
    assert_int_equal(p->vram_bytes, (1024 + 512) * 1024);
    assert_int_equal(p->gtt_bytes, 2 * 1024 * 1024);
    assert_nan(p->util_pct); /* first sight: no interval yet */
    assert_nan(p->mem_util_pct);
    assert_int_equal(p->starttime, 0);
    /* pid 100 on card10: client 9, newer keys (drm-resident-*), plain bytes for GTT */
    p = find_proc(&r, 100, 1);
    assert_non_null(p);
    assert_int_equal(p->vram_bytes, 3 * 1024 * 1024);
    assert_int_equal(p->gtt_bytes, 4096);
    assert_nan(p->util_pct);
    /* pid 101: client 7 is inherited and already counted for 100; client 20 2 GiB, GTT 0 */
    p = find_proc(&r, 101, 0);
    assert_non_null(p);
    assert_int_equal(p->vram_bytes, 2147483648);
    assert_int_equal(p->gtt_bytes, 0);
    assert_nan(p->util_pct);
    assert_null(find_proc(&r, 101, 1));
    for (int i = 0; i < r.nproc; i++)
        assert_true(r.procs[i].pid == 100 || r.procs[i].pid == 101);

    /* a shared client belongs to the first tracked pid that holds it */
    const pid_t only101[] = {101};
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, only101, 1, 101.0, &r);
    assert_int_equal(r.nproc, 1);
    p = find_proc(&r, 101, 0);
    assert_non_null(p);
    assert_int_equal(p->vram_bytes, 2147483648 + 1024 * 1024);
    assert_int_equal(p->gtt_bytes, 2 * 1024 * 1024);

    /* no tree: devices only */
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, NULL, 0, 102.0, &r);
    assert_int_equal(r.ndev, 2);
    assert_int_equal(r.nproc, 0);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
}

/* Another backend's devices come first in a reading: process rows index the whole array. */
static void test_procs_after_other_devices(void **state)
{
    (void)state;
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/two-cards");
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_ident other = {.vendor = "nvidia", .index = 0};
    struct rt_gpu_reading r = {0};
    rt_gpu_reading_add_dev(&r, &other);
    rt_gpu_reading_add_proc(&r, 999, 0);
    const pid_t tree[] = {100, 101};
    rt_gpu_amd.read(st, &env, tree, 2, 100.0, &r);
    assert_int_equal(r.ndev, 3);
    assert_ptr_equal(r.dev[0].ident, &other);
    assert_int_equal(r.dev[1].ident->index, 1);
    assert_int_equal(r.dev[2].ident->index, 10);
    assert_int_equal(r.nproc, 4);
    assert_non_null(find_proc(&r, 999, 0));
    assert_int_equal(find_proc(&r, 100, 1)->vram_bytes, (1024 + 512) * 1024);
    assert_int_equal(find_proc(&r, 100, 2)->vram_bytes, 3 * 1024 * 1024);
    assert_int_equal(find_proc(&r, 101, 1)->vram_bytes, 2147483648);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
}

static void write_client7(const char *root, const char *rel, long long gfx_ns)
{
    char text[1024];
    snprintf(text, sizeof(text),
             "pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1043\ndrm-driver:\tamdgpu\n"
             "drm-client-id:\t7\ndrm-pdev:\t0000:03:00.0\npasid:\t32770\n"
             "drm-memory-vram:\t1024 KiB\ndrm-memory-gtt: \t2 MiB\ndrm-memory-cpu: \t0 KiB\n"
             "drm-engine-gfx:\t%lld ns\ndrm-engine-compute:\t0 ns\n",
             gfx_ns);
    fx_write(root, rel, text);
}

static void write_client7_everywhere(const char *root, long long gfx_ns)
{
    /* one client seen through three fds: all show the same counters */
    write_client7(root, "proc/100/fdinfo/5", gfx_ns);
    write_client7(root, "proc/100/fdinfo/6", gfx_ns);
    write_client7(root, "proc/101/fdinfo/3", gfx_ns);
}

static void write_client12(const char *root, long long gfx_ns)
{
    char text[512];
    snprintf(text, sizeof(text),
             "pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1043\ndrm-driver:\tamdgpu\n"
             "drm-client-id:\t12\ndrm-pdev:\t0000:03:00.0\ndrm-memory-vram:\t512 KiB\n"
             "drm-engine-gfx:\t%lld ns\n",
             gfx_ns);
    fx_write(root, "proc/100/fdinfo/10", text);
}

static void test_procs_util(void **state)
{
    (void)state;
    char root[64];
    tree_copy(root, sizeof(root), "two-cards");
    struct rt_sysenv env;
    env_for(&env, root);
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_reading r = {0};
    const pid_t tree[] = {100, 101};

    rt_gpu_amd.read(st, &env, tree, 2, 100.0, &r);
    assert_nan(find_proc(&r, 100, 0)->util_pct);
    assert_nan(find_proc(&r, 100, 1)->util_pct);

    /* 0.5 s later: client 7 +250 ms busy (50 %), client 12 +125 ms (25 %), client 9 +0 */
    write_client7_everywhere(root, 1250000000);
    write_client12(root, 625000000);
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, tree, 2, 100.5, &r);
    assert_int_equal(r.nproc, 3);
    assert_dbl(find_proc(&r, 100, 0)->util_pct, 50.0 + 25.0);
    assert_dbl(find_proc(&r, 100, 1)->util_pct, 0.0); /* idle is 0, not unknown */
    assert_nan(find_proc(&r, 101, 0)->util_pct);      /* client 20 has no drm-engine-gfx */

    /* client 12 closes; client 7 +100 ms over 0.5 s */
    write_client7_everywhere(root, 1350000000);
    char path[1024];
    snprintf(path, sizeof(path), "%s/proc/100/fdinfo/10", root);
    assert_int_equal(unlink(path), 0);
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, tree, 2, 101.0, &r);
    assert_dbl(find_proc(&r, 100, 0)->util_pct, 20.0);
    assert_int_equal(find_proc(&r, 100, 0)->vram_bytes, 1024 * 1024);

    /* client 12 reappears with a far larger counter: it was forgotten, so it has no rate yet
     * (a stale previous value would give 1675 %); client 7 idle */
    write_client12(root, 9000000000);
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, tree, 2, 101.5, &r);
    assert_dbl(find_proc(&r, 100, 0)->util_pct, 0.0);
    assert_int_equal(find_proc(&r, 100, 0)->vram_bytes, (1024 + 512) * 1024);

    /* and the interval after that counts it: +1 s busy over 2 s */
    write_client12(root, 10000000000);
    rt_gpu_reading_clear(&r);
    rt_gpu_amd.read(st, &env, tree, 2, 103.5, &r);
    assert_dbl(find_proc(&r, 100, 0)->util_pct, 50.0);

    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
    fx_rmtree(root);
}

/* --- resources ------------------------------------------------------------------------------ */

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    assert_non_null(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

static void test_no_fd_leak(void **state)
{
    (void)state;
    int before = count_fds();
    struct rt_sysenv env;
    env_for(&env, AMD_FX "/two-cards");
    void *st = rt_gpu_amd.open(&env);
    assert_non_null(st);
    struct rt_gpu_reading r = {0};
    const pid_t tree[] = {100, 101, 102};
    for (int i = 0; i < 5; i++) {
        rt_gpu_reading_clear(&r);
        rt_gpu_amd.read(st, &env, tree, 3, 100.0 + i, &r);
    }
    assert_int_equal(r.nproc, 4); /* 102 passed here: its client 30 on card1 */
    assert_int_equal(find_proc(&r, 102, 0)->vram_bytes, 7 * 1024 * 1024);
    rt_gpu_reading_free(&r);
    rt_gpu_amd.close(st);
    assert_int_equal(count_fds(), before);
    env_for(&env, AMD_FX "/no-module");
    assert_null(rt_gpu_amd.open(&env));
    assert_int_equal(count_fds(), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_module),
        cmocka_unit_test(test_empty_root),
        cmocka_unit_test(test_identities),
        cmocka_unit_test(test_device_values),
        cmocka_unit_test(test_device_files_vanish),
        cmocka_unit_test(test_metrics_revisions),
        cmocka_unit_test(test_procs_memory),
        cmocka_unit_test(test_procs_after_other_devices),
        cmocka_unit_test(test_procs_util),
        cmocka_unit_test(test_no_fd_leak),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
