/* fuzz_zpool.c - the output of `zpool list -Hp -o name,size,allocated,free`, which the mount
 * collector reads when a ZFS dataset is mounted (statvfs under-reports pools). The `zpool` on
 * PATH is a link to zpool_helper, which prints the input; the mount table lists one ZFS dataset
 * and one ext4 file system. Input: the first sample's output, NUL, the second's (without a NUL
 * both the same). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];
static struct fz_part part[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    char path[512];
    snprintf(path, sizeof(path), "%s/bin", fz_root());
    setenv("PATH", path, 1);
    fz_write_str("bin/.keep", "");
    snprintf(path, sizeof(path), "%s/bin/zpool", fz_root());
    if (symlink(RT_ZPOOL_HELPER, path) != 0)
        abort();
    snprintf(path, sizeof(path), "%s/zpool.out", fz_root());
    setenv("RT_FUZZ_ZPOOL_OUT", path, 1);
    fz_write_str("proc/self/mountinfo",
                 "26 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
                 "90 26 0:50 / /tank/data rw,relatime - zfs tank/data rw,xattr,noacl\n");
    return 0;
}

static void second(void *ud)
{
    (void)ud;
    fz_write_part("zpool.out", part[1].p ? &part[1] : &part[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_split(data, size, part, 2);
    fz_write_part("zpool.out", &part[0]);
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_collect2(&rt_collector_mount, &env, &cfg, second, NULL, s);
    return 0;
}
