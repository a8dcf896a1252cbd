/* fuzz_mountinfo.c - /proc/self/mountinfo through the mount collector, two samples (octal
 * unescaping, skipped virtual trees, duplicate mount points, the disk behind a mount from its
 * device number or its /dev source). Input: the first sample's file, NUL, the second's
 * (without a NUL both read the same). statvfs is faked (fuzz_common.h). A "zfs" line makes the
 * collector run `zpool`, which is not found here: fuzz_zpool covers that path. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
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
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/self/mountinfo", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_mount, &env, &cfg, files, data, size, s);
    return 0;
}
