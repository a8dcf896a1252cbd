/* test_collect_mount.c - src/collect/mount.c on fixture trees built here: which mounts count,
 * their disks, ZFS pools, and /proc/mounts where there is no mountinfo. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib.h"

static void test_mountinfo_and_zfs(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/mountinfo",
             "21 26 0:20 / /proc rw - proc proc rw\n"
             "26 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n"
             "27 26 0:22 / /dev/shm rw - tmpfs tmpfs rw\n"
             "28 26 253:0 / /data rw shared:1 master:2 - xfs /dev/mapper/vg-data rw\n"
             "29 26 254:1 /srv /media/usb\\040disk rw - ext4 /dev/vda1 rw\n"
             "30 26 0:40 / /runner rw - tmpfs tmpfs rw\n"
             "31 26 0:41 / /run/user/0 rw - tmpfs tmpfs rw\n"
             "32 26 0:42 / /tank/home rw - zfs tank/home rw\n"
             "33 26 0:43 / /mnt/fuse rw - fuse.sshfs host: rw\n"
             "34 26 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n");
    fx_symlink(g.root, "sys/dev/block/254:1",
               "../../devices/pci0000:00/0000:00:04.0/virtio1/block/vda/vda1");
    fx_symlink(g.root, "sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
    fx_gen_statvfs(&g, "#mp\tfrsize\tblocks\tbfree\tbavail\n/\t4096\t1000\t600\t500\n"
                       "/dev/shm\t4096\t10\t10\t10\n/data\t4096\t2000\t1000\t1000\n"
                       "/media/usb disk\t4096\t1000\t600\t500\n/runner\t1024\t100\t50\t50\n"
                       "/run/user/0\t4096\t10\t10\t10\n/mnt/fuse\t4096\t0\t0\t0\n"
                       "/tank/home\t4096\t7\t7\t7\n");
    /* a fake zpool on PATH */
    char bin[512], script[600];
    snprintf(bin, sizeof(bin), "%s/bin", g.root);
    fx_write(g.root, "bin/zpool", "#!/bin/sh\nprintf 'tank\\t10000\\t4000\\t6000\\n'\n");
    snprintf(script, sizeof(script), "%s/zpool", bin);
    chmod(script, 0755);
    const char *old = getenv("PATH");
    char *saved = strdup(old ? old : "/usr/bin:/bin");
    char newpath[4096];
    snprintf(newpath, sizeof(newpath), "%s:%s", bin, saved);
    setenv("PATH", newpath, 1);
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    setenv("PATH", saved, 1);
    free(saved);

    /* /, /data, /media/usb disk, /runner, zfs:tank; not /dev/shm, /run/user/0, the fuse mount
     * with 0 blocks, nor the zfs dataset itself; / listed twice counts once */
    assert_int_equal(s->nmounts, 5);
    const char *want[] = {"/", "/data", "/media/usb disk", "/runner", "zfs:tank"};
    const char *disk[] = {"vda", "dm-0", "vda", NULL, NULL};
    for (int i = 0; i < 5; i++) {
        assert_string_equal(s->mounts[i].ident->mount_point, want[i]);
        if (disk[i])
            assert_string_equal(s->mounts[i].ident->disk, disk[i]);
        else
            assert_null(s->mounts[i].ident->disk);
    }
    assert_string_equal(s->mounts[1].ident->source, "/dev/mapper/vg-data");
    assert_string_equal(s->mounts[1].ident->fstype, "xfs");
    assert_int_equal(s->mounts[0].used_bytes, (1000 - 500) * 4096);
    assert_int_equal(s->mounts[0].free_bytes, 600 * 4096);
    assert_int_equal(s->mounts[4].total_bytes, 10000);
    int64_t total = 1000 * 4096 + 2000 * 4096 + 1000 * 4096 + 100 * 1024 + 10000;
    int64_t avail = 500 * 4096 + 1000 * 4096 + 500 * 4096 + 50 * 1024 + 6000;
    assert_int_equal(s->space_total, total);
    assert_int_equal(s->space_free, avail);
    assert_int_equal(s->space_used, total - avail);
    fx_gen_free(&g);
}

/* /proc/mounts (no device numbers): the disk comes from the /dev source name */
static void test_proc_mounts_fallback(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/mounts",
             "/dev/nvme0n1p2 / ext4 rw 0 0\n/dev/sdb /backup ext4 rw 0 0\n"
             "/dev/devel /devel ext4 rw 0 0\n");
    fx_write(g.root, "sys/block/nvme0n1/size", "1\n");
    fx_write(g.root, "sys/block/sdb/size", "1\n");
    fx_gen_statvfs(&g, "/\t4096\t10\t5\t5\n/backup\t4096\t10\t5\t5\n"
                       "/devel\t4096\t10\t5\t5\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->nmounts, 3);
    assert_string_equal(s->mounts[0].ident->disk, "nvme0n1");
    assert_string_equal(s->mounts[1].ident->disk, "sdb");
    assert_string_equal(s->mounts[2].ident->mount_point, "/devel"); /* not under /dev */
    assert_null(s->mounts[2].ident->disk);
    fx_gen_free(&g);
}

/* An NVMe disk's sysfs path has no block/ directory (.../nvme/nvme0/nvme0n1/nvme0n1p1, the disk
 * a child of its controller): its mounts' disk is found all the same, from /sys/block. */
static void test_nvme_mount_disk(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/self/mountinfo",
             "39 0 259:1 / / rw,noatime shared:1 - xfs /dev/nvme0n1p1 rw,attr2\n"
             "40 39 259:3 / /data rw,noatime shared:2 - ext4 /dev/nvme1n1 rw\n");
    fx_symlink(g.root, "sys/dev/block/259:1",
               "../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1");
    fx_symlink(g.root, "sys/dev/block/259:3",
               "../../devices/pci0000:00/0000:00:1f.0/nvme/nvme1/nvme1n1");
    fx_write(g.root, "sys/block/nvme0n1/size", "41943040\n");
    fx_write(g.root, "sys/block/nvme1n1/size", "41943040\n");
    fx_gen_statvfs(&g, "/\t4096\t10\t5\t5\n/data\t4096\t10\t5\t5\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->nmounts, 2);
    assert_string_equal(s->mounts[0].ident->disk, "nvme0n1");
    assert_string_equal(s->mounts[1].ident->disk, "nvme1n1");
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mountinfo_and_zfs),
        cmocka_unit_test(test_proc_mounts_fallback),
        cmocka_unit_test(test_nvme_mount_disk),
    };
    return cmocka_run_group_tests_name("mounts", tests, NULL, NULL);
}
