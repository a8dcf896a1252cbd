/* fuzz_gpu_metrics.c - the binary gpu_metrics table of an AMD card (header, format and content
 * revision, per-revision field offsets and units) through the amdgpu backend, two readings.
 * Input: the table's bytes, as the driver's sysfs file would give them. */
#include "fuzz_common.h"

static struct rt_sysenv env;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_amd_card();
    /* hwmon values, which the table's values replace or complement depending on revision */
    fz_write_str("sys/class/drm/card0/device/hwmon/hwmon3/temp1_input", "45000\n");
    fz_write_str("sys/class/drm/card0/device/hwmon/hwmon3/power1_average", "95000000\n");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_write("sys/class/drm/card0/device/gpu_metrics", data, size);
    fz_amd_read2(&env, NULL, 0, NULL, NULL);
    return 0;
}
