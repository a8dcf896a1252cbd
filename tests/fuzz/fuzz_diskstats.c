/* fuzz_diskstats.c - /proc/diskstats through the disk collector, two samples (per-disk deltas,
 * whole disk versus partition, identity reads). Input: the first sample's file, NUL, the
 * second's (without a NUL both read the same). The fixture root has /sys/block entries for
 * sda (with a partition sda1) and nvme0n1, so both ways of telling a partition run. */
#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_write_str("sys/block/sda/size", "1953525168\n");
    fz_write_str("sys/block/sda/queue/rotational", "1\n");
    fz_write_str("sys/block/sda/queue/hw_sector_size", "512\n");
    fz_write_str("sys/block/sda/device/model", "Fuzz Disk  \n");
    fz_write_str("sys/block/sda/device/vendor", "ATA\n");
    fz_write_str("sys/class/block/sda1/partition", "1\n");
    fz_write_str("sys/block/nvme0n1/size", "0\n");
    fz_write_str("sys/block/nvme0n1/queue/hw_sector_size", "4096\n");
    fz_write_str("sys/block/nvme0n1/device/wwid", "eui.0025388b91c0a1b2\n");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/diskstats", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_disk, &env, &cfg, files, data, size, s);
    return 0;
}
