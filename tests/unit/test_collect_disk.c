/* test_collect_disk.c - src/collect/disk.c on fixture trees built here: whole disks versus
 * partitions, 512-byte sectors, identity from sysfs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static void test_partition_rule(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    const char *disks[] = {"vda",   "xvda", "nvme0n1", "mmcblk0", "md0", "sda",
                           "loop0", "nbd0", "dm-0",    "zram0",   "hda"};
    char rel[256];
    for (size_t i = 0; i < sizeof(disks) / sizeof(disks[0]); i++) {
        snprintf(rel, sizeof(rel), "sys/block/%s/size", disks[i]);
        fx_write(g.root, rel, "100\n");
    }
    fx_write(g.root, "sys/class/block/oddname/partition", "1\n");
    const char *parts[] = {"vda1",  "xvda1",   "nvme0n1p1", "mmcblk0p1", "md0p1",  "sda1",
                           "sda12", "loop0p1", "nbd0p1",    "hda1",      "oddname"};
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        if (!rt_disk_is_partition(&g.env, parts[i]))
            fail_msg("%s should be a partition", parts[i]);
    const char *whole[] = {"vda", "nvme0n1", "nvme10n1", "md0", "dm-0", "zram0", "loop0", "sdb12"};
    for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
        if (rt_disk_is_partition(&g.env, whole[i]))
            fail_msg("%s should be a whole disk", whole[i]);
    /* the collector, which lists /sys/block once for every name of /proc/diskstats, keeps
     * exactly the whole disks, in their order */
    struct rt_buf ds = {0};
    char line[128];
    size_t nw = sizeof(whole) / sizeof(whole[0]), np = sizeof(parts) / sizeof(parts[0]);
    for (size_t i = 0; i < nw || i < np; i++) /* whole disks and partitions interleaved */
        for (int k = 0; k < 2; k++)
            if (i < (k ? np : nw)) {
                snprintf(line, sizeof(line), " 8 %zu %s 1 0 8 1 0 0 0 0 0 1 1\n", 2 * i + k,
                         k ? parts[i] : whole[i]);
                rt_buf_puts(&ds, line);
            }
    rt_buf_append(&ds, "", 1);
    fx_write(g.root, "proc/diskstats", ds.p);
    rt_buf_free(&ds);
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->ndisks, (int)nw);
    for (int i = 0; i < s->ndisks; i++)
        assert_string_equal(s->disks[i].ident->name, whole[i]);
    fx_gen_free(&g);
}

/* diskstats counts 512-byte sectors whatever the device's sector size */
static void test_disk_4096_sectors_and_identity(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "sys/block/nvme0n1/queue/hw_sector_size", "4096\n");
    fx_write(g.root, "sys/block/nvme0n1/queue/rotational", "0\n");
    fx_write(g.root, "sys/block/nvme0n1/size", "1953525168\n");
    fx_write(g.root, "sys/block/nvme0n1/device/model", "Samsung SSD 980   \n");
    fx_write(g.root, "sys/block/nvme0n1/device/serial", "S64DNX0R\n");
    fx_write(g.root, "sys/block/nvme0n1/nvme0n1p1/partition", "1\n");
    fx_write(g.root, "sys/block/sda/queue/rotational", "1\n");
    fx_write(g.root, "sys/block/sda/size", "0\n");
    fx_write(g.root, "sys/block/sda/device/wwid", "naa.5000\n");
    const char *a = " 259 0 nvme0n1 10 0 800 5 20 0 1600 9 0 10 14 0 0 0 0 0 0\n"
                    " 259 1 nvme0n1p1 10 0 800 5 20 0 1600 9 0 10 14 0 0 0 0 0 0\n"
                    "   8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n";
    const char *b = " 259 0 nvme0n1 20 0 1824 5 40 0 3648 9 0 10 14 0 0 0 0 0 0\n"
                    " 259 1 nvme0n1p1 20 0 1824 5 40 0 3648 9 0 10 14 0 0 0 0 0 0\n"
                    "   8 0 sda 1 0 8 1 0 0 0 0 0 1 1\n";
    fx_write(g.root, "proc/diskstats", a);
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->ndisks, 2);
    assert_true(s->disk_read_bytes == RT_NA);
    fx_write(g.root, "proc/diskstats", b);
    s = fx_gen_sample(&g);
    assert_int_equal(s->ndisks, 2); /* the partition is not a disk */
    const struct rt_disk_sample *nv = &s->disks[0];
    assert_string_equal(nv->ident->name, "nvme0n1");
    assert_int_equal(nv->read_bytes, (1824 - 800) * 512);
    assert_int_equal(nv->write_bytes, (3648 - 1600) * 512);
    assert_int_equal(s->disk_read_bytes, 1024 * 512);
    assert_int_equal(s->disk_write_bytes, 2048 * 512);
    assert_string_equal(nv->ident->model, "Samsung SSD 980");
    assert_string_equal(nv->ident->serial, "S64DNX0R");
    assert_string_equal(nv->ident->type, "nvme");
    assert_int_equal(nv->ident->hw_sector_size, 4096);
    assert_int_equal(nv->ident->capacity_bytes, 1953525168LL * 512);
    assert_int_equal(nv->ident->major, 259);
    const struct rt_disk_sample *sd = &s->disks[1];
    assert_string_equal(sd->ident->type, "hdd");
    assert_string_equal(sd->ident->serial, "naa.5000"); /* wwid fallback */
    assert_true(sd->ident->capacity_bytes == RT_NA);    /* 0 sectors is unknown, not 0 */
    assert_null(sd->ident->model);
    assert_int_equal(sd->f[RT_DS_READS], 1);
    fx_gen_free(&g);
}

/* A disk idle since boot is sampled (its identity read only once it does I/O): its first active
 * interval counts from the zero counters of the sample before. */
static void test_disk_idle_then_active(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "sys/block/loop0/queue/rotational", "0\n");
    fx_write(g.root, "sys/block/loop0/size", "2048\n");
    fx_write(g.root, "proc/diskstats", "   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0\n");
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->ndisks, 1);
    assert_true(s->disks[0].ident->capacity_bytes == RT_NA); /* not read while idle */
    fx_write(g.root, "proc/diskstats", "   7 0 loop0 4 0 64 1 0 0 0 0 0 1 1\n");
    s = fx_gen_sample(&g);
    assert_int_equal(s->disk_read_bytes, 64 * 512);
    assert_int_equal(s->disks[0].read_bytes, 64 * 512);
    assert_int_equal(s->disks[0].ident->capacity_bytes, 2048 * 512);
    assert_string_equal(s->disks[0].ident->type, "ssd");
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_partition_rule),
        cmocka_unit_test(test_disk_4096_sectors_and_identity),
        cmocka_unit_test(test_disk_idle_then_active),
    };
    return cmocka_run_group_tests_name("disks", tests, NULL, NULL);
}
