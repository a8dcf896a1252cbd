/* fuzz_mounts.c - /proc/mounts (read when there is no mountinfo) through the mount collector,
 * two samples (octal unescaping, skipped virtual trees, duplicate mount points, the disk behind
 * a /dev source). Input: the first sample's file, NUL, the second's (without a NUL both read the
 * same). statvfs is faked (fuzz_common.h). A "zfs" line makes the collector run `zpool`, which
 * is not found here: fuzz_zpool covers that path. */
#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_mount_disks();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/mounts", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_mount, &env, &cfg, files, data, size, s);
    return 0;
}
