/* fuzz_amd_sysfs.c - the amdgpu backend's text files in sysfs: the pp_dpm_sclk/pp_dpm_mclk
 * clock tables, uevent (the PCI slot), libdrm's amdgpu.ids (marketing names, read when the card
 * has no product_name) and the hwmon and device values, two readings.
 * Input, parts separated by NUL (a missing part leaves its file out): pp_dpm_sclk, pp_dpm_mclk,
 * uevent, amdgpu.ids, hwmon temp1_input, power1_average, power1_input, freq1_input,
 * mem_busy_percent, mem_info_vram_total. */
#include "fuzz_common.h"

#define DEV   "sys/class/drm/card0/device/"
#define HWMON DEV "hwmon/hwmon3/"

static struct rt_sysenv env;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_amd_card();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {DEV "pp_dpm_sclk",      DEV "pp_dpm_mclk",
                                        DEV "uevent",           "usr/share/libdrm/amdgpu.ids",
                                        HWMON "temp1_input",    HWMON "power1_average",
                                        HWMON "power1_input",   HWMON "freq1_input",
                                        DEV "mem_busy_percent", DEV "mem_info_vram_total"};
    struct fz_part part[sizeof(files) / sizeof(files[0])];
    fz_split(data, size, part, sizeof(files) / sizeof(files[0]));
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        fz_write_part(files[i], &part[i]);
    static const pid_t pids[] = {100};
    fz_amd_read2(&env, pids, 1, NULL, NULL);
    return 0;
}
