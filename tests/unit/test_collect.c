/* test_collect.c - collectors on fixture trees built here (and a check on the live /proc).
 *
 * The process-tree scenarios are the cases where a tracker that sums utime+cutime over the
 * tree can go wrong: a child reaped by its tracked parent, a cascade of reaps within one
 * interval, a child nobody tracked reaped, a pid reused, a stat file that cannot be read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testlib.h"

/* --- a fixture root mutated between samples -------------------------------------------------- */

struct gen {
    char root[256];
    struct rt_sysenv env;
    struct fx_statvfs sv;
    struct rt_collectors *col;
    struct rt_sample buf[2];
    struct rt_sample *prev;
    int next;
    double t;
};

static int no_statvfs(void *ud, const char *path, struct rt_fsstat *out)
{
    (void)ud;
    (void)path;
    (void)out;
    return -2;
}

static void gen_init(struct gen *g)
{
    memset(g, 0, sizeof(*g));
    snprintf(g->root, sizeof(g->root), "/tmp/rtrack-fx.XXXXXX");
    assert_non_null(mkdtemp(g->root));
    g->env.root = g->root;
    g->env.statvfs_fn = no_statvfs;
    g->env.clk_tck = 100;
    g->env.page_size = 4096;
    g->t = 1000.0;
    fx_write(g->root, "proc/stat", "cpu  100 0 50 1000 0 0 0 0 0 0\n");
}

/* 1: the tree tests run with children files (walk mode), 0: without (the full scan) */
static int walk_mode;

static void gen_open(struct gen *g, pid_t root_pid, pid_t subreaper)
{
    if (walk_mode)
        fx_write_children(g->root);
    struct rt_collect_cfg cc = {root_pid, subreaper, 1.0, 0};
    g->col = rt_collectors_open(&g->env, &cc);
}

static struct rt_sample *gen_sample(struct gen *g)
{
    struct rt_sample *s = &g->buf[g->next];
    g->next ^= 1;
    rt_sample_begin(s, g->prev, g->prev ? RT_SAMPLE_PERIODIC : RT_SAMPLE_BASELINE, g->t, g->t);
    if (walk_mode)
        fx_write_children(g->root);
    rt_collectors_sample(g->col, s, g->prev);
    g->prev = s;
    g->t += 1.0;
    return s;
}

static void gen_free(struct gen *g)
{
    rt_collectors_close(g->col);
    rt_sample_free(&g->buf[0]);
    rt_sample_free(&g->buf[1]);
    fx_statvfs_free(&g->sv);
    fx_rmtree(g->root);
}

static const struct rt_proc_sample *find_proc(const struct rt_sample *s, pid_t pid)
{
    for (int i = 0; i < s->nprocs; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

#define P(...) (&(struct fx_proc){__VA_ARGS__})

/* The process rows of a sample add up to the tree's totals. */
static void assert_rows_sum(const struct rt_sample *s)
{
    double u = 0, st = 0;
    int64_t r = 0, w = 0;
    for (int i = 0; i < s->nprocs; i++) {
        const struct rt_proc_sample *p = &s->procs[i];
        if (isnan(p->cpu_utime_s))
            continue;
        u += p->cpu_utime_s;
        st += p->cpu_stime_s;
        r += p->read_bytes == RT_NA ? 0 : p->read_bytes;
        w += p->write_bytes == RT_NA ? 0 : p->write_bytes;
    }
    if (fabs(u - s->proc_utime_s) > 1e-9 || fabs(st - s->proc_stime_s) > 1e-9 ||
        r != s->proc_read_bytes || w != s->proc_write_bytes)
        fail_msg("rows sum to u %g s %g r %lld w %lld, tree has %g %g %lld %lld", u, st,
                 (long long)r, (long long)w, s->proc_utime_s, s->proc_stime_s,
                 (long long)s->proc_read_bytes, (long long)s->proc_write_bytes);
}

/* --- /proc/PID/stat ------------------------------------------------------------------------ */

static void test_pid_stat_parse(void **state)
{
    (void)state;
    struct rt_pid_stat st;
    const char *tmux = "20426 (tmux: srv (x)) S 1 20426 20426 0 -1 4194560 6 0 4 0 78 9 12 3 20 0 "
                       "1 0 4711 10 321 18446744073709551615\n";
    assert_int_equal(rt_parse_pid_stat(tmux, &st), 0);
    assert_string_equal(st.comm, "tmux: srv (x)");
    assert_int_equal(st.state, 'S');
    assert_int_equal(st.ppid, 1);
    assert_int_equal(st.utime, 78);
    assert_int_equal(st.stime, 9);
    assert_int_equal(st.cutime, 12);
    assert_int_equal(st.cstime, 3);
    assert_int_equal(st.threads, 1);
    assert_int_equal(st.starttime, 4711);
    assert_int_equal(st.rss_pages, 321);
    /* ") " inside the name, negative tty/tpgid/priority/nice fields */
    const char *odd = "7 (a) b) R 2 7 7 -1 -1 0 0 0 0 0 5 6 7 8 -21 -20 3 0 99 10 11\n";
    assert_int_equal(rt_parse_pid_stat(odd, &st), 0);
    assert_string_equal(st.comm, "a) b");
    assert_int_equal(st.state, 'R');
    assert_int_equal(st.utime, 5);
    assert_int_equal(st.cstime, 8);
    assert_int_equal(st.threads, 3);
    assert_int_equal(st.starttime, 99);
    assert_int_not_equal(rt_parse_pid_stat("12 (x) S 1 2 3", &st), 0);
    assert_int_not_equal(rt_parse_pid_stat("garbage", &st), 0);
    assert_int_not_equal(rt_parse_pid_stat("", &st), 0);
    /* counters no kernel prints are refused, not carried into the tree's sums */
    const char *at = "7 (a) R 2 7 7 -1 -1 0 0 0 0 0 1125899906842624 6 7 8 0 0 3 0 99 10 "
                     "1099511627776\n"; /* utime 2^50, rss 2^40 pages: the largest taken */
    assert_int_equal(rt_parse_pid_stat(at, &st), 0);
    assert_int_equal(st.utime, INT64_C(1) << 50);
    assert_int_equal(st.rss_pages, INT64_C(1) << 40);
    const char *bad[] = {
        "7 (a) R 2 7 7 -1 -1 0 0 0 0 0 1125899906842625 6 7 8 0 0 3 0 99 10 11\n", /* utime */
        "7 (a) R 2 7 7 -1 -1 0 0 0 0 0 5 6 -7 8 0 0 3 0 99 10 11\n",               /* cutime < 0 */
        "7 (a) R 2 7 7 -1 -1 0 0 0 0 0 5 6 7 8 0 0 3 0 9223372036854775807 10 11\n", /* start */
        "7 (a) R 2 7 7 -1 -1 0 0 0 0 0 5 6 7 8 0 0 3 0 99 10 1099511627777\n",       /* rss pages */
        "7 (a) R -2 7 7 -1 -1 0 0 0 0 0 5 6 7 8 0 0 3 0 99 10 11\n",                 /* ppid < 0 */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (rt_parse_pid_stat(bad[i], &st) == 0)
            fail_msg("accepted: %s", bad[i]);
    int64_t rd, wr;
    rt_parse_pid_io("read_bytes: 1152921504606846976\nwrite_bytes: 1152921504606846977\n", &rd,
                    &wr);
    assert_int_equal(rd, INT64_C(1) << 60);
    assert_true(wr == RT_NA);
    assert_int_equal(rt_parse_smaps_pss("Rss: 10 kB\nPss: 1125899906842624 kB\n"), INT64_C(1)
                                                                                       << 50);
    assert_true(rt_parse_smaps_pss("Pss: 1125899906842625 kB\n") == RT_NA);
}

/* --- disks --------------------------------------------------------------------------------- */

static void test_partition_rule(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
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
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->ndisks, (int)nw);
    for (int i = 0; i < s->ndisks; i++)
        assert_string_equal(s->disks[i].ident->name, whole[i]);
    gen_free(&g);
}

/* diskstats counts 512-byte sectors whatever the device's sector size */
static void test_disk_4096_sectors_and_identity(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
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
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->ndisks, 2);
    assert_true(s->disk_read_bytes == RT_NA);
    fx_write(g.root, "proc/diskstats", b);
    s = gen_sample(&g);
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
    gen_free(&g);
}

/* A disk idle since boot is sampled (its identity read only once it does I/O): its first active
 * interval counts from the zero counters of the sample before. */
static void test_disk_idle_then_active(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write(g.root, "sys/block/loop0/queue/rotational", "0\n");
    fx_write(g.root, "sys/block/loop0/size", "2048\n");
    fx_write(g.root, "proc/diskstats", "   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->ndisks, 1);
    assert_true(s->disks[0].ident->capacity_bytes == RT_NA); /* not read while idle */
    fx_write(g.root, "proc/diskstats", "   7 0 loop0 4 0 64 1 0 0 0 0 0 1 1\n");
    s = gen_sample(&g);
    assert_int_equal(s->disk_read_bytes, 64 * 512);
    assert_int_equal(s->disks[0].read_bytes, 64 * 512);
    assert_int_equal(s->disks[0].ident->capacity_bytes, 2048 * 512);
    assert_string_equal(s->disks[0].ident->type, "ssd");
    gen_free(&g);
}

/* --- process tree --------------------------------------------------------------------------- */

/* Grandchild reaped by child, child reaped by root, both within one interval. */
static void test_tree_cascade_reap(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .stime = 10,
                            .starttime = 100, .rss_pages = 100, .pss_kib = 300, .read_bytes = 1000,
                            .write_bytes = 2000));
    /* the child has reaped an earlier child of its own: cutime 3, cstime 2 */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .stime = 5,
                            .cutime = 3, .cstime = 2, .starttime = 200, .rss_pages = 50,
                            .pss_kib = 100, .read_bytes = 500, .write_bytes = 600));
    fx_write_proc(g.root, P(.pid = 12, .ppid = 11, .comm = "grandchild", .utime = 30, .stime = 3,
                            .starttime = 300, .rss_pages = 50, .pss_kib = 100, .read_bytes = 70,
                            .write_bytes = 80));
    fx_write_proc(g.root, P(.pid = 1, .ppid = 0, .comm = "init", .pss_kib = -1, .read_bytes = -1));
    gen_open(&g, 10, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->proc_count, 3);
    assert_int_equal(s->proc_children, 2);
    assert_true(isnan(s->proc_utime_s));
    assert_int_equal(s->proc_pss_kib, 500);
    assert_int_equal(s->proc_rss_kib, 200 * 4);
    assert_int_equal(s->processes, 4);
    /* grandchild ends at u=40 s=4 (io 90/95), child ends at u=60 s=6 (io 550/650) having
     * reaped it (cutime 3+40, cstime 2+4); root reaps the child: cutime += 60+43,
     * cstime += 6+6, io += 550+90 / 650+95; root itself +1 tick and +10 bytes each */
    fx_remove_proc(g.root, 11);
    fx_remove_proc(g.root, 12);
    fx_write_proc(g.root,
                  P(.pid = 10, .ppid = 1, .comm = "root", .utime = 101, .stime = 10, .cutime = 103,
                    .cstime = 12, .starttime = 100, .rss_pages = 100, .pss_kib = 300,
                    .read_bytes = 1000 + 10 + 640, .write_bytes = 2000 + 10 + 745));
    s = gen_sample(&g);
    assert_int_equal(s->proc_count, 1);
    assert_int_equal(s->proc_children, 0);
    /* counted: root 1, child's last 10, grandchild's last 10: root's 1 + 103 less what was
     * already counted, child 50+3 and grandchild 30 */
    assert_true(fabs(s->proc_utime_s - 0.21) < 1e-9);
    /* child +1, grandchild +1: root's cstime grew 12, less child 5+2 and grandchild 3 */
    assert_true(fabs(s->proc_stime_s - 0.02) < 1e-9);
    assert_true(fabs(s->proc_cpu_usage - 0.23) < 1e-9);
    assert_int_equal(s->proc_read_bytes, 10 + 50 + 20); /* root 10, child 50, grandchild 20 */
    assert_int_equal(s->proc_write_bytes, 10 + 50 + 15);
    /* the reaper's row carries what arrived from its reaped children beyond what was already
     * counted for them: the rows add up to the tree */
    const struct rt_proc_sample *r = find_proc(s, 10);
    assert_non_null(r);
    assert_true(fabs(r->cpu_utime_s - 0.21) < 1e-9);
    assert_true(fabs(r->cpu_stime_s - 0.02) < 1e-9);
    assert_int_equal(r->read_bytes, 80);
    assert_int_equal(r->write_bytes, 75);
    assert_int_equal(r->first_seen, 0);
    assert_rows_sum(s);
    gen_free(&g);
}

/* A child that vanishes while its tracked parent's cutime does not grow (auto-reaped, or
 * reaped elsewhere) took nothing with it: nothing may be subtracted (the Rust reference
 * subtracts it anyway and undercounts). What could not be taken back is carried to the next
 * sample only, and dropped after it. */
static void test_tree_vanished_not_reaped_by_tree(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .stime = 30,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 2000));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .stime = 20,
                            .starttime = 2, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    gen_open(&g, 10, 0);
    gen_sample(&g);
    /* the child is gone; the root's cutime, cstime and io did not take it in: its own +7 user
     * and +4 system ticks, no I/O */
    fx_remove_proc(g.root, 11);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 107, .stime = 34,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 2000));
    struct rt_sample *s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.07) < 1e-9);
    assert_true(fabs(s->proc_stime_s - 0.04) < 1e-9); /* not 4 - 20 ticks */
    assert_int_equal(s->proc_read_bytes, 0);          /* not 0 - 5000 */
    assert_int_equal(s->proc_write_bytes, 0);         /* not 0 - 700 */
    const struct rt_proc_sample *r = find_proc(s, 10);
    assert_true(fabs(r->cpu_stime_s - 0.04) < 1e-9);
    assert_int_equal(r->read_bytes, 0);
    assert_int_equal(r->write_bytes, 0);
    assert_rows_sum(s);
    /* next interval: a short child nobody saw was born and reaped (cutime +10, cstime +4,
     * io +100 / +50); root +1 user +1 system. The child carried from the last sample (50, 20,
     * 5000, 700) cannot be told from it: what it covers (10, 4, 100, 50) is taken back */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 108, .stime = 35,
                            .cutime = 10, .cstime = 4, .starttime = 1, .pss_kib = 1,
                            .read_bytes = 1100, .write_bytes = 2050));
    s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.01) < 1e-9); /* 1 + 10 - 10 */
    assert_true(fabs(s->proc_stime_s - 0.01) < 1e-9); /* 1 + 4 - 4 */
    assert_int_equal(s->proc_read_bytes, 0);          /* 100 - 100 */
    assert_int_equal(s->proc_write_bytes, 0);         /* 50 - 50 */
    assert_rows_sum(s);
    /* the rest of the carry (40, 16, 4900, 650) was dropped: another unseen child (cutime
     * +30, cstime +7, io +400 / +90) and root +1 / +1 count in full */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 109, .stime = 36,
                            .cutime = 40, .cstime = 11, .starttime = 1, .pss_kib = 1,
                            .read_bytes = 1500, .write_bytes = 2140));
    s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.31) < 1e-9); /* 1 + 30 */
    assert_true(fabs(s->proc_stime_s - 0.08) < 1e-9); /* 1 + 7 */
    assert_int_equal(s->proc_read_bytes, 400);
    assert_int_equal(s->proc_write_bytes, 90);
    assert_rows_sum(s);
    gen_free(&g);
}

/* The scan is not atomic: the parent's stat can be read just before it reaps a child whose stat
 * is then gone. The child's lifetime reaches the parent's cutime only in the next sample; the
 * correction follows it there instead of being lost (which would count the child twice). */
static void test_tree_reap_between_reads(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .stime = 10,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .stime = 20,
                            .starttime = 2, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    gen_open(&g, 10, 0);
    gen_sample(&g);
    fx_remove_proc(g.root, 11);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 101, .stime = 12,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    struct rt_sample *s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.01) < 1e-9); /* root +1, nothing taken yet */
    assert_true(fabs(s->proc_stime_s - 0.02) < 1e-9); /* root +2, not 2 - 20 */
    assert_int_equal(s->proc_read_bytes, 0);          /* not 0 - 5000 */
    assert_int_equal(s->proc_write_bytes, 0);         /* not 0 - 700 */
    assert_rows_sum(s);
    /* the child ended at 60 user and 24 system ticks, 6000 bytes read and 900 written, now in
     * the root's counters */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 102, .stime = 13,
                            .cutime = 60, .cstime = 24, .starttime = 1, .pss_kib = 1,
                            .read_bytes = 6000, .write_bytes = 900));
    s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.11) < 1e-9); /* root +1, the child's last 60 - 50 */
    assert_true(fabs(s->proc_stime_s - 0.05) < 1e-9); /* root +1, the child's last 24 - 20 */
    assert_int_equal(s->proc_read_bytes, 1000);       /* 6000 - 5000 */
    assert_int_equal(s->proc_write_bytes, 200);       /* 900 - 700 */
    const struct rt_proc_sample *r = find_proc(s, 10);
    assert_true(fabs(r->cpu_stime_s - 0.05) < 1e-9);
    assert_int_equal(r->write_bytes, 200);
    assert_rows_sum(s);
    /* carried once only: later growth is counted in full */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 102, .stime = 13,
                            .cutime = 90, .cstime = 31, .starttime = 1, .pss_kib = 1,
                            .read_bytes = 6400, .write_bytes = 1000));
    s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.30) < 1e-9);
    assert_true(fabs(s->proc_stime_s - 0.07) < 1e-9);
    assert_int_equal(s->proc_read_bytes, 400);
    assert_int_equal(s->proc_write_bytes, 100);
    gen_free(&g);
}

/* Born during the interval: counted from zero; born and reaped within it: only through the
 * parent's cutime. */
static void test_tree_births(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    gen_open(&g, 10, 0);
    gen_sample(&g);
    /* one child born and reaped in the interval (25 user, 6 system ticks, 1000 bytes read and
     * 300 written, all now the root's), one born and still there */
    fx_write_proc(g.root,
                  P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .cutime = 25, .cstime = 6,
                    .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 300));
    fx_write_proc(g.root,
                  P(.pid = 20, .ppid = 10, .comm = "new", .utime = 12, .stime = 3, .starttime = 150,
                    .pss_kib = 1, .read_bytes = 4096, .write_bytes = 512));
    struct rt_sample *s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.37) < 1e-9); /* 25 via cutime + 12 */
    assert_true(fabs(s->proc_stime_s - 0.09) < 1e-9); /* 6 via cstime + 3 */
    assert_int_equal(s->proc_read_bytes, 1000 + 4096);
    assert_int_equal(s->proc_write_bytes, 300 + 512);
    const struct rt_proc_sample *n = find_proc(s, 20);
    assert_non_null(n);
    assert_int_equal(n->first_seen, 1);
    assert_true(fabs(n->cpu_utime_s - 0.12) < 1e-9);
    assert_true(fabs(n->cpu_stime_s - 0.03) < 1e-9);
    assert_int_equal(n->read_bytes, 4096);
    assert_int_equal(n->write_bytes, 512);
    assert_string_equal(n->cmdline_json, "[\"new\"]");
    const struct rt_proc_sample *r = find_proc(s, 10);
    assert_true(fabs(r->cpu_utime_s - 0.25) < 1e-9);
    assert_true(fabs(r->cpu_stime_s - 0.06) < 1e-9);
    assert_int_equal(r->read_bytes, 1000);
    assert_int_equal(r->write_bytes, 300);
    assert_rows_sum(s);
    gen_free(&g);
}

/* A process first seen inside its exec has its new name but no arguments yet: its command
 * line is read again at the next sample, and the row updated (renamed). */
static void test_tree_cmdline_late(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "job", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write(g.root, "proc/10/cmdline", "");
    gen_open(&g, 10, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_null(find_proc(s, 10)->cmdline_json);
    fx_write(g.root, "proc/10/cmdline", "job");
    s = gen_sample(&g);
    const struct rt_proc_sample *p = find_proc(s, 10);
    assert_int_equal(p->renamed, 1);
    assert_string_equal(p->cmdline_json, "[\"job\"]");
    s = gen_sample(&g); /* known now: not read again */
    assert_int_equal(find_proc(s, 10)->renamed, 0);
    assert_null(find_proc(s, 10)->cmdline_json);
    gen_free(&g);
}

/* A pid reused within one interval is a new process: the old one is corrected away as reaped,
 * the new one counted from birth. */
static void test_tree_pid_reuse(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root,
                  P(.pid = 77, .ppid = 10, .comm = "old", .utime = 50, .stime = 20,
                    .starttime = 500, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    gen_open(&g, 10, 0);
    gen_sample(&g);
    /* old ended at 55 user, 26 system ticks, 5500 bytes read, 800 written: the root reaped it */
    fx_write_proc(g.root,
                  P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .cutime = 55, .cstime = 26,
                    .starttime = 1, .pss_kib = 1, .read_bytes = 5500, .write_bytes = 800));
    fx_write_proc(g.root, P(.pid = 77, .ppid = 10, .comm = "new", .utime = 3, .stime = 1,
                            .starttime = 900, .pss_kib = 1, .read_bytes = 40, .write_bytes = 0));
    struct rt_sample *s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.08) < 1e-9); /* old's last 5 + new's 3 */
    assert_true(fabs(s->proc_stime_s - 0.07) < 1e-9); /* old's last 6 + new's 1 */
    assert_int_equal(s->proc_read_bytes, 500 + 40);   /* old's last 5500 - 5000, new's 40 */
    assert_int_equal(s->proc_write_bytes, 100);       /* old's last 800 - 700 */
    const struct rt_proc_sample *r = find_proc(s, 10);
    assert_true(fabs(r->cpu_stime_s - 0.06) < 1e-9);
    assert_int_equal(r->read_bytes, 500);
    assert_int_equal(r->write_bytes, 100);
    const struct rt_proc_sample *n = find_proc(s, 77);
    assert_int_equal(n->starttime, 900);
    assert_int_equal(n->first_seen, 1);
    assert_true(fabs(n->cpu_stime_s - 0.01) < 1e-9);
    assert_int_equal(n->read_bytes, 40);
    assert_rows_sum(s);
    gen_free(&g);
}

/* A stat file that cannot be read is "unknown", not "exited": no correction, no double count
 * when it reads again. */
static void test_tree_transient_miss(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    gen_open(&g, 10, 0);
    gen_sample(&g);
    fx_write(g.root, "proc/11/stat", "garbled");
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 104, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    struct rt_sample *s = gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.04) < 1e-9);
    assert_null(find_proc(s, 11));
    assert_int_equal(s->processes, 2); /* still listed */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 60, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    s = gen_sample(&g);
    /* back, but its delta over the gap is unknown: nothing counted rather than 60 ticks */
    assert_true(fabs(s->proc_utime_s - 0.0) < 1e-9);
    assert_true(isnan(find_proc(s, 11)->cpu_utime_s));
    gen_free(&g);
}

/* Sticky membership: re-parented to init, still the job's. In run mode (subreaper set) our
 * own children are the job's orphans; rtrack itself is never part of the tree; zombies are not
 * live. */
static void test_tree_sticky_and_subreaper(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write_proc(g.root, P(.pid = 5, .ppid = 1, .comm = "rtrack", .utime = 7, .starttime = 1,
                            .pss_kib = 1000, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 10, .ppid = 5, .comm = "job", .utime = 10, .starttime = 2,
                            .pss_kib = 10, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "worker", .utime = 10, .starttime = 3,
                            .pss_kib = 20, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 12, .ppid = 11, .comm = "daemon", .utime = 10, .starttime = 4,
                            .pss_kib = 40, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 30, .ppid = 1, .comm = "other", .utime = 10, .starttime = 5,
                            .pss_kib = 80, .read_bytes = 0, .write_bytes = 0));
    gen_open(&g, 10, 5);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->proc_count, 3);
    assert_int_equal(s->proc_pss_kib, 70);
    assert_null(find_proc(s, 5));
    assert_null(find_proc(s, 30));
    /* (the first interval of a run counts from zero: test_tree_run_counts_from_spawn) */
    s = gen_sample(&g);
    assert_int_equal(s->proc_count, 3);
    /* worker exits unreaped (zombie); daemon double-forked away to init; a process of ours that
     * is not from the job would not exist, but an orphan re-parented to us (pid 13) is the
     * job's */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "worker", .state = 'Z', .utime = 12,
                            .starttime = 3, .pss_kib = -1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 12, .ppid = 1, .comm = "daemon", .utime = 15, .starttime = 4,
                            .pss_kib = 40, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 13, .ppid = 5, .comm = "orphan", .utime = 1, .starttime = 6,
                            .pss_kib = 5, .read_bytes = 0, .write_bytes = 0));
    s = gen_sample(&g);
    assert_non_null(find_proc(s, 12));
    assert_non_null(find_proc(s, 13));
    assert_non_null(find_proc(s, 11));
    assert_int_equal(s->proc_count, 3);    /* job, daemon, orphan: the zombie is not live */
    assert_int_equal(s->proc_children, 2); /* daemon and orphan */
    assert_int_equal(s->proc_pss_kib, 10 + 40 + 5);
    assert_true(fabs(s->proc_utime_s - 0.08) < 1e-9); /* worker 2 + daemon 5 + orphan 1 */
    assert_rows_sum(s);
    /* the root gone: the tree is what is left of it */
    fx_remove_proc(g.root, 10);
    fx_remove_proc(g.root, 11);
    s = gen_sample(&g);
    assert_int_equal(s->proc_count, 2);
    assert_int_equal(s->proc_children, 2);
    gen_free(&g);
}

/* In run mode rtrack started the job just before the baseline: what the tree did before the
 * baseline was read is the job's too, so the first interval counts from zero (CI saw a 50 MB
 * dd with 20 MB written before the baseline, and the run missing them). In record mode the
 * tree existed before the recording: its first interval counts from the baseline. */
static void test_tree_run_counts_from_spawn(void **state)
{
    (void)state;
    for (int run_mode = 0; run_mode < 2; run_mode++) {
        struct gen g;
        gen_init(&g);
        fx_write_proc(g.root, P(.pid = 5, .ppid = 1, .comm = "rtrack", .utime = 7, .starttime = 1,
                                .pss_kib = 1000, .read_bytes = 0, .write_bytes = 0));
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 30, .stime = 4, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 8192));
        fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "sh", .utime = 5, .starttime = 3,
                                .pss_kib = 10, .read_bytes = 100, .write_bytes = 0));
        gen_open(&g, 10, run_mode ? 5 : 0);
        struct rt_sample *s = gen_sample(&g);
        assert_int_equal(s->proc_count, 2);
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 40, .stime = 6, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 20480));
        fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "sh", .utime = 7, .starttime = 3,
                                .pss_kib = 10, .read_bytes = 300, .write_bytes = 0));
        s = gen_sample(&g);
        if (run_mode) { /* everything since the spawn */
            assert_true(fabs(s->proc_utime_s - 0.47) < 1e-9);
            assert_true(fabs(s->proc_stime_s - 0.06) < 1e-9);
            assert_int_equal(s->proc_write_bytes, 20480);
            assert_int_equal(s->proc_read_bytes, 300);
            assert_true(fabs(find_proc(s, 10)->cpu_utime_s - 0.40) < 1e-9);
        } else { /* since the baseline */
            assert_true(fabs(s->proc_utime_s - 0.12) < 1e-9);
            assert_true(fabs(s->proc_stime_s - 0.02) < 1e-9);
            assert_int_equal(s->proc_write_bytes, 20480 - 8192);
            assert_int_equal(s->proc_read_bytes, 200);
            assert_true(fabs(find_proc(s, 10)->cpu_utime_s - 0.10) < 1e-9);
        }
        assert_int_equal(find_proc(s, 10)->renamed, 0);
        assert_rows_sum(s);
        /* from then on, both count from the previous sample */
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 41, .stime = 6, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 24576));
        s = gen_sample(&g);
        assert_true(fabs(s->proc_utime_s - 0.01) < 1e-9);
        assert_int_equal(s->proc_write_bytes, 4096);
        assert_rows_sum(s);
        gen_free(&g);
    }
}

/* --- mounts ---------------------------------------------------------------------------------- */

static void test_mountinfo_and_zfs(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
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
    fx_write(g.root, "statvfs.tsv",
             "#mp\tfrsize\tblocks\tbfree\tbavail\n/\t4096\t1000\t600\t500\n"
             "/dev/shm\t4096\t10\t10\t10\n/data\t4096\t2000\t1000\t1000\n"
             "/media/usb disk\t4096\t1000\t600\t500\n/runner\t1024\t100\t50\t50\n"
             "/run/user/0\t4096\t10\t10\t10\n/mnt/fuse\t4096\t0\t0\t0\n"
             "/tank/home\t4096\t7\t7\t7\n");
    char path[512];
    snprintf(path, sizeof(path), "%s/statvfs.tsv", g.root);
    assert_int_equal(fx_statvfs_load(&g.sv, path), 0);
    g.env.statvfs_fn = fx_statvfs_fn;
    g.env.statvfs_ud = &g.sv;
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
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
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
    gen_free(&g);
}

/* /proc/mounts (no device numbers): the disk comes from the /dev source name */
static void test_proc_mounts_fallback(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write(g.root, "proc/mounts",
             "/dev/nvme0n1p2 / ext4 rw 0 0\n/dev/sdb /backup ext4 rw 0 0\n"
             "/dev/devel /devel ext4 rw 0 0\n");
    fx_write(g.root, "sys/block/nvme0n1/size", "1\n");
    fx_write(g.root, "sys/block/sdb/size", "1\n");
    fx_write(g.root, "statvfs.tsv",
             "/\t4096\t10\t5\t5\n/backup\t4096\t10\t5\t5\n"
             "/devel\t4096\t10\t5\t5\n");
    char path[512];
    snprintf(path, sizeof(path), "%s/statvfs.tsv", g.root);
    assert_int_equal(fx_statvfs_load(&g.sv, path), 0);
    g.env.statvfs_fn = fx_statvfs_fn;
    g.env.statvfs_ud = &g.sv;
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->nmounts, 3);
    assert_string_equal(s->mounts[0].ident->disk, "nvme0n1");
    assert_string_equal(s->mounts[1].ident->disk, "sdb");
    assert_string_equal(s->mounts[2].ident->mount_point, "/devel"); /* not under /dev */
    assert_null(s->mounts[2].ident->disk);
    gen_free(&g);
}

/* --- network, pressure, cpu ---------------------------------------------------------------- */

static void test_net_identity_and_deltas(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    const char *hdr = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n";
    char text[1024];
    snprintf(text, sizeof(text),
             "%s    lo: 100 1 0 0 0 0 0 0 100 1 0 0 0 0 0 0\n"
             "  eth0: 1000 10 1 2 0 0 0 0 500 5 3 4 0 0 0 0\n"
             "veth1:4000000000 9 0 0 0 0 0 0 7 1 0 0 0 0 0 0\n",
             hdr);
    fx_write(g.root, "proc/net/dev", text);
    fx_write(g.root, "sys/class/net/eth0/address", "52:54:00:12:34:56\n");
    fx_write(g.root, "sys/class/net/eth0/mtu", "1500\n");
    fx_write(g.root, "sys/class/net/eth0/speed", "10000\n");
    fx_write(g.root, "sys/class/net/eth0/operstate", "up\n");
    fx_symlink(g.root, "sys/class/net/eth0/device/driver",
               "../../../bus/virtio/drivers/virtio_net");
    fx_write(g.root, "sys/class/net/veth1/speed", "-1\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->nnics, 2);
    assert_true(s->net_rx_bytes == RT_NA);
    const struct rt_nic_sample *e = &s->nics[0];
    assert_string_equal(e->ident->name, "eth0");
    assert_string_equal(e->ident->mac, "52:54:00:12:34:56");
    assert_string_equal(e->ident->driver, "virtio_net");
    assert_int_equal(e->ident->mtu, 1500);
    assert_int_equal(e->ident->speed_mbps, 10000);
    assert_string_equal(e->operstate, "up");
    assert_int_equal(e->f[RT_NIC_RX_ERRS], 1);
    assert_int_equal(e->f[RT_NIC_TX_DROP], 4);
    assert_int_equal(s->nics[1].f[RT_NIC_RX_BYTES], 4000000000LL); /* glued to the colon */
    assert_true(s->nics[1].ident->speed_mbps == RT_NA);
    assert_null(s->nics[1].ident->driver);
    /* veth1 disappears, eth0 moves on: eth0's traffic is not cancelled */
    snprintf(text, sizeof(text), "%s  eth0: 1800 10 1 2 0 0 0 0 900 5 3 4 0 0 0 0\n", hdr);
    fx_write(g.root, "proc/net/dev", text);
    s = gen_sample(&g);
    assert_int_equal(s->nnics, 1);
    assert_int_equal(s->net_rx_bytes, 800);
    assert_int_equal(s->net_tx_bytes, 400);
    gen_free(&g);
}

static void test_psi(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write(g.root, "proc/pressure/cpu",
             "some avg10=1.00 avg60=0.50 avg300=0.10 total=1000000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
    fx_write(g.root, "proc/pressure/memory",
             "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=5\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->psi_us[RT_PSI_CPU][RT_PSI_SOME], 1000000);
    assert_true(isnan(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME]));
    assert_true(s->psi_us[RT_PSI_IO][RT_PSI_SOME] == RT_NA); /* file absent */
    fx_write(g.root, "proc/pressure/cpu",
             "some avg10=1.00 avg60=0.50 avg300=0.10 total=1250000\n"
             "full avg10=0.00 avg60=0.00 avg300=0.00 total=100000\n");
    s = gen_sample(&g); /* one second later */
    assert_true(fabs(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME] - 25.0) < 1e-9);
    assert_true(fabs(s->psi_pct[RT_PSI_CPU][RT_PSI_FULL] - 10.0) < 1e-9);
    assert_true(fabs(s->psi_pct[RT_PSI_MEMORY][RT_PSI_SOME] - 0.0) < 1e-9);
    gen_free(&g);
}

static void test_cpu_lines(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    /* an old kernel's 4-field lines, and two cores */
    fx_write(g.root, "proc/stat",
             "cpu  100 0 50 1000\ncpu0 50 0 25 500\ncpu1 50 0 25 500\n"
             "ctxt 10\nbtime 1700000000\nprocesses 99\n"
             "procs_running 3\nprocs_blocked 1\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->ncores, 2);
    assert_true(s->cpu.v[RT_CPU_IOWAIT] == RT_NA);
    assert_int_equal(s->ctxt_total, 10);
    assert_int_equal(s->forks_total, 99);
    assert_int_equal(s->procs_running, 3);
    assert_int_equal(s->btime, 1700000000);
    fx_write(g.root, "proc/stat", "cpu  250 0 50 1050\ncpu0 200 0 25 500\ncpu1 50 0 25 550\n");
    s = gen_sample(&g);
    assert_true(fabs(s->cpu_utime_s - 1.5) < 1e-9);
    assert_true(s->cpu_stime_s == 0.0);
    assert_true(fabs(s->cpu_usage - 1.5) < 1e-9);
    /* 150 busy of 200 ticks on 2 cores = 1.5 cores; core 0 fully busy, core 1 idle */
    assert_true(fabs(s->cpu_busy_cores - 1.5) < 1e-9);
    assert_true(fabs(s->cores[0].busy_pct - 100.0) < 1e-9);
    assert_true(fabs(s->cores[1].busy_pct - 0.0) < 1e-9);
    gen_free(&g);
}

/* --- cgroup --------------------------------------------------------------------------------- */

/* cgroup v2: rtrack's own cgroup (a Slurm job's), the limit from an ancestor's cpu.max */
static void test_cgroup_v2(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "0::/slurm/job_7/step_0\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.stat",
             "usage_usec 5000000\nuser_usec 4000000\nsystem_usec 1000000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.max", "max 100000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/cpu.max", "250000 100000\n");
    fx_write(g.root, "sys/fs/cgroup/slurm/cpu.max", "400000 100000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", "usage_usec 99999999999\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 5000000);
    assert_true(isnan(s->cgroup_cpu_s));
    assert_true(fabs(s->cgroup_limit_cores - 2.5) < 1e-9);
    fx_write(g.root, "sys/fs/cgroup/slurm/job_7/step_0/cpu.stat", "usage_usec 6750000\n");
    s = gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 1.75) < 1e-9);
    gen_free(&g);
}

/* cgroup v1: cpuacct.usage in ns, quota from the cpu controller; no quota is NULL */
static void test_cgroup_v1(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    fx_write(g.root, "proc/self/cgroup", "4:memory:/x\n3:cpu,cpuacct:/docker/abc\n0::/\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpuacct.usage", "1000000000\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1\n");
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000\n");
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_int_equal(s->cgroup_usage_us, 1000000);
    assert_true(isnan(s->cgroup_limit_cores));
    fx_write(g.root, "sys/fs/cgroup/cpu,cpuacct/docker/abc/cpuacct.usage", "1500000000\n");
    s = gen_sample(&g);
    assert_true(fabs(s->cgroup_cpu_s - 0.5) < 1e-9);
    gen_free(&g);
    /* without any cgroup file: NULL, not 0 */
    gen_init(&g);
    gen_open(&g, 0, 0);
    s = gen_sample(&g);
    assert_true(s->cgroup_usage_us == RT_NA);
    gen_free(&g);
}

/* --- the live system --------------------------------------------------------------------- */

static void burn(double secs)
{
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++)
            x += (unsigned long)i;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

static void test_live_self(void **state)
{
    (void)state;
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    struct rt_collect_cfg cc = {getpid(), 0, 1.0, 0};
    struct rt_collectors *col = rt_collectors_open(&env, &cc);
    struct rt_sample a = {0}, b = {0};
    fx_live_sample(col, &a, NULL);
    burn(0.3);
    fx_live_sample(col, &b, &a);
    assert_true(b.mem_total > 0 && b.mem_used > 0 && b.mem_used < b.mem_total);
    assert_int_equal(b.ncores, sysconf(_SC_NPROCESSORS_ONLN));
    assert_true(b.processes > 1);
    assert_int_equal(b.proc_count, 1);
    const struct rt_proc_sample *me = find_proc(&b, getpid());
    assert_non_null(me);
    assert_true(me->pss_kib > 0);
    assert_true(me->rss_kib > 0);
    assert_true(me->read_total != RT_NA);
    /* 0.3 s of CPU burnt, measured in 10 ms ticks */
    assert_true(b.proc_utime_s + b.proc_stime_s >= 0.25);
    assert_true(b.proc_utime_s + b.proc_stime_s <= b.dt + 0.05);
    assert_true(b.cpu_utime_s + b.cpu_stime_s >= 0.25);
    assert_true(b.nmounts >= 1);
    int root_mounted = 0;
    for (int i = 0; i < b.nmounts; i++)
        root_mounted |= !strcmp(b.mounts[i].ident->mount_point, "/");
    assert_true(root_mounted);
    assert_true(b.space_total > 0);
    rt_collectors_close(col);
    rt_sample_free(&a);
    rt_sample_free(&b);
}

/* --- host facts ----------------------------------------------------------------------------- */

/* One CPU's block of /proc/cpuinfo, its flags line as long as a modern x86's (~1.5 KiB). */
static void cpuinfo_block(struct rt_buf *b, int cpu)
{
    char head[256];
    snprintf(head, sizeof(head),
             "processor\t: %d\nvendor_id\t: TestVendor\nmodel name\t: Test CPU %s @ 2.00GHz\n"
             "cpu MHz\t\t: 2000.000\nflags\t\t:",
             cpu, cpu == 0 ? "first" : "other");
    rt_buf_puts(b, head);
    for (int i = 0; i < 150; i++) {
        char flag[16];
        snprintf(flag, sizeof(flag), " flag%03d", i);
        rt_buf_puts(b, flag);
    }
    rt_buf_puts(b, "\n\n");
}

/* The CPU model is the first block's, the count the online list's; without the list (a
 * fixture tree without it) the blocks of the whole file are counted. The fixture's cpuinfo
 * lists 4 CPUs and is longer than one read of it (1 KiB), the online list 6: the count must
 * follow the list. */
static void test_host_cpus(void **state)
{
    (void)state;
    char root[] = "/tmp/rtrack-fx.XXXXXX";
    assert_non_null(mkdtemp(root));
    struct rt_sysenv env = {0};
    env.root = root;
    struct rt_buf b = {0};
    for (int cpu = 0; cpu < 4; cpu++)
        cpuinfo_block(&b, cpu);
    assert_true(b.len > 4096);
    fx_write(root, "proc/cpuinfo", b.p);
    struct rt_host_info h;
    rt_host_info_read(&env, &h);
    assert_string_equal(h.cpu_model, "Test CPU first @ 2.00GHz");
    assert_int_equal(h.vcpus, 4);
    rt_host_info_free(&h);
    fx_write(root, "sys/devices/system/cpu/online", "0-3,6-7\n");
    rt_host_info_read(&env, &h);
    assert_string_equal(h.cpu_model, "Test CPU first @ 2.00GHz");
    assert_int_equal(h.vcpus, 6);
    rt_host_info_free(&h);
    /* an unreadable list falls back to the blocks */
    fx_write(root, "sys/devices/system/cpu/online", "garbage\n");
    rt_host_info_read(&env, &h);
    assert_int_equal(h.vcpus, 4);
    rt_host_info_free(&h);
    rt_buf_free(&b);
    fx_rmtree(root);

    /* the live host: the same count and model as the whole of /proc/cpuinfo says */
    rt_sysenv_live(&env);
    rt_host_info_read(&env, &h);
    struct rt_buf all = {0};
    assert_true(rt_read_file("/proc/cpuinfo", &all) > 0);
    int64_t n = 0;
    const char *model = NULL;
    for (const char *l = all.p; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        n += strncmp(l, "processor", 9) == 0;
        if (!model && strncmp(l, "model name", 10) == 0)
            model = l;
    }
    assert_int_equal(h.vcpus, n);
    if (model) { /* the value after ": ", its trailing blanks trimmed */
        const char *v = strchr(model, ':') + 1, *e = strchr(v, '\n');
        while (*v == ' ' || *v == '\t')
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        assert_non_null(h.cpu_model);
        assert_int_equal(strlen(h.cpu_model), (size_t)(e - v));
        assert_memory_equal(h.cpu_model, v, (size_t)(e - v));
    }
    rt_buf_free(&all);
    rt_host_info_free(&h);
}

/* --- counters no kernel prints (found by tests/fuzz) ----------------------------------------- */

/* Counters at and beyond INT64_MAX: a value beyond int64 is unknown (or its line malformed),
 * sums and byte counts saturate at INT64_MAX. Under the sanitizers this is also the check that
 * none of it overflows (it did in cpu.c, mem.c, disk.c, net.c, psi.c and cgroup.c). */
static void test_huge_counters(void **state)
{
    (void)state;
    struct gen g;
    gen_init(&g);
    const char *max = "9223372036854775807", *over = "18446744073709551615";
    const char *hdr = "Inter-|   Receive |  Transmit\n face |bytes packets|bytes packets\n";
    char text[1024];
    fx_write(g.root, "proc/stat", "cpu  0 0 0 0 0 0 0 0 0 0\ncpu0 0 0 0 0\n");
    snprintf(text, sizeof(text),
             "MemTotal: 1000 kB\nMemFree: %s kB\nBuffers: %s kB\nCached: %s kB\n", max, max, over);
    fx_write(g.root, "proc/meminfo", text);
    fx_write(g.root, "sys/block/sda/size", "100\n");
    fx_write(g.root, "sys/block/sdb/size", "100\n");
    fx_write(g.root, "proc/diskstats",
             "8 0 sda 0 0 0 0 0 0 0 0 0 0 0\n8 16 sdb 0 0 0 0 0 0 0 0 0 0 0\n");
    snprintf(text, sizeof(text),
             "%s  eth0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n  eth1: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
             hdr);
    fx_write(g.root, "proc/net/dev", text);
    snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%s\n", over);
    fx_write(g.root, "proc/pressure/cpu", text);
    fx_write(g.root, "proc/self/cgroup", "0::/\n");
    snprintf(text, sizeof(text), "usage_usec %s\n", over);
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", text);
    gen_open(&g, 0, 0);
    struct rt_sample *s = gen_sample(&g);
    assert_true(s->mem_cached == RT_NA);
    assert_int_equal(s->mem_free, INT64_MAX);
    assert_int_equal(s->mem_used, 1000 - INT64_MAX); /* free + buffers saturated */
    assert_true(s->psi_us[RT_PSI_CPU][RT_PSI_SOME] == RT_NA);
    assert_true(s->cgroup_usage_us == RT_NA);

    snprintf(text, sizeof(text), "cpu  %s %s 0 0 0 0 0 0 0 0\ncpu0 %s 0 %s 0\nctxt %s\n", max, max,
             over, max, over);
    fx_write(g.root, "proc/stat", text);
    snprintf(text, sizeof(text),
             "8 0 sda 0 0 %s 0 0 0 %s 0 0 0 0\n8 16 sdb 0 0 %s 0 0 0 0 0 0 0 0\n", max, max, max);
    fx_write(g.root, "proc/diskstats", text);
    snprintf(
        text, sizeof(text),
        "%s  eth0: %s 0 0 0 0 0 0 0 %s 0 0 0 0 0 0 0\n  eth1: %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        "  eth2: %s 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        hdr, max, max, max, over);
    fx_write(g.root, "proc/net/dev", text);
    snprintf(text, sizeof(text), "some avg10=0.00 avg60=0.00 avg300=0.00 total=%s\n", max);
    fx_write(g.root, "proc/pressure/cpu", text);
    snprintf(text, sizeof(text), "usage_usec %s\n", max);
    fx_write(g.root, "sys/fs/cgroup/cpu.stat", text);
    s = gen_sample(&g);
    assert_true(s->cpu_utime_s > 0 && isfinite(s->cpu_utime_s));
    assert_true(s->cpu_usage > 0 && isfinite(s->cpu_usage));
    assert_true(isfinite(s->cpu_busy_cores));
    assert_true(s->cores[0].t.v[RT_CPU_USER] == RT_NA);
    assert_true(s->ctxt_total == RT_NA);
    assert_int_equal(s->ndisks, 2);
    assert_int_equal(s->disks[0].read_bytes, INT64_MAX); /* sectors * 512, saturated */
    assert_int_equal(s->disk_read_bytes, INT64_MAX);
    assert_int_equal(s->disk_write_bytes, INT64_MAX);
    assert_int_equal(s->nnics, 2); /* eth2's counter beyond int64: its line is malformed */
    assert_int_equal(s->net_rx_bytes, INT64_MAX);
    assert_int_equal(s->net_tx_bytes, INT64_MAX);
    assert_int_equal(s->psi_us[RT_PSI_CPU][RT_PSI_SOME], INT64_MAX);
    assert_true(isnan(s->psi_pct[RT_PSI_CPU][RT_PSI_SOME])); /* no previous value */
    assert_int_equal(s->cgroup_usage_us, INT64_MAX);
    assert_true(isnan(s->cgroup_cpu_s));
    gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pid_stat_parse),
        cmocka_unit_test(test_partition_rule),
        cmocka_unit_test(test_disk_4096_sectors_and_identity),
        cmocka_unit_test(test_disk_idle_then_active),
        cmocka_unit_test(test_tree_cascade_reap),
        cmocka_unit_test(test_tree_vanished_not_reaped_by_tree),
        cmocka_unit_test(test_tree_reap_between_reads),
        cmocka_unit_test(test_tree_births),
        cmocka_unit_test(test_tree_cmdline_late),
        cmocka_unit_test(test_tree_pid_reuse),
        cmocka_unit_test(test_tree_transient_miss),
        cmocka_unit_test(test_tree_sticky_and_subreaper),
        cmocka_unit_test(test_tree_run_counts_from_spawn),
        cmocka_unit_test(test_mountinfo_and_zfs),
        cmocka_unit_test(test_proc_mounts_fallback),
        cmocka_unit_test(test_net_identity_and_deltas),
        cmocka_unit_test(test_psi),
        cmocka_unit_test(test_cpu_lines),
        cmocka_unit_test(test_cgroup_v2),
        cmocka_unit_test(test_cgroup_v1),
        cmocka_unit_test(test_host_cpus),
        cmocka_unit_test(test_huge_counters),
        cmocka_unit_test(test_live_self),
    };
    /* the process-tree scenarios once more, the tree found through children files */
    const struct CMUnitTest walk[] = {
        cmocka_unit_test(test_tree_cascade_reap),
        cmocka_unit_test(test_tree_vanished_not_reaped_by_tree),
        cmocka_unit_test(test_tree_reap_between_reads),
        cmocka_unit_test(test_tree_births),
        cmocka_unit_test(test_tree_pid_reuse),
        cmocka_unit_test(test_tree_transient_miss),
        cmocka_unit_test(test_tree_sticky_and_subreaper),
        cmocka_unit_test(test_tree_run_counts_from_spawn),
    };
    int failed = cmocka_run_group_tests_name("full scan", tests, NULL, NULL);
    walk_mode = 1;
    return failed + cmocka_run_group_tests_name("children files", walk, NULL, NULL);
}
