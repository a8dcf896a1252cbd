/* test_collect_proc.c - src/collect/proc.c on fixture trees built here: the parser of
 * /proc/PID/stat and the process tree.
 *
 * The process-tree scenarios are the cases where a tracker that sums utime+cutime over the
 * tree can go wrong: a child reaped by its tracked parent, a cascade of reaps within one
 * interval, a child nobody tracked reaped, a pid reused, a stat file that cannot be read. Each
 * runs twice: the tree found by the full scan of /proc, then through children files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

#define P(...) (&(struct fx_proc){__VA_ARGS__})

/* The process rows of a sample add up to the tree's totals. */
static void assert_rows_sum(const struct rt_sample *s)
{
    double u = 0, st = 0;
    int64_t r = 0, w = 0;
    int rk = 0, wk = 0; /* rows with a known figure: none, and the tree's is unknown too */
    for (int i = 0; i < s->nprocs; i++) {
        const struct rt_proc_sample *p = &s->procs[i];
        if (isnan(p->cpu_utime_s))
            continue;
        u += p->cpu_utime_s;
        st += p->cpu_stime_s;
        r += p->read_bytes == RT_NA ? 0 : p->read_bytes;
        w += p->write_bytes == RT_NA ? 0 : p->write_bytes;
        rk += p->read_bytes != RT_NA;
        wk += p->write_bytes != RT_NA;
    }
    if (!rk)
        r = RT_NA;
    if (!wk)
        w = RT_NA;
    if (fabs(u - s->proc_utime_s) > 1e-9 || fabs(st - s->proc_stime_s) > 1e-9 ||
        r != s->proc_read_bytes || w != s->proc_write_bytes)
        fail_msg("rows sum to u %g s %g r %lld w %lld, tree has %g %g %lld %lld", u, st,
                 (long long)r, (long long)w, s->proc_utime_s, s->proc_stime_s,
                 (long long)s->proc_read_bytes, (long long)s->proc_write_bytes);
}

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

/* Grandchild reaped by child, child reaped by root, both within one interval. */
static void test_tree_cascade_reap(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
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
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
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
    s = fx_gen_sample(&g);
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
    const struct rt_proc_sample *r = fx_find_proc(s, 10);
    assert_non_null(r);
    assert_true(fabs(r->cpu_utime_s - 0.21) < 1e-9);
    assert_true(fabs(r->cpu_stime_s - 0.02) < 1e-9);
    assert_int_equal(r->read_bytes, 80);
    assert_int_equal(r->write_bytes, 75);
    assert_int_equal(r->first_seen, 0);
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* A child that vanishes while its tracked parent's cutime does not grow (auto-reaped, or
 * reaped elsewhere) took nothing with it: nothing may be subtracted (the Rust reference
 * subtracts it anyway and undercounts). What could not be taken back is carried to the next
 * sample only, and dropped after it. */
static void test_tree_vanished_not_reaped_by_tree(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .stime = 30,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 2000));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .stime = 20,
                            .starttime = 2, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    /* the child is gone; the root's cutime, cstime and io did not take it in: its own +7 user
     * and +4 system ticks, no I/O */
    fx_remove_proc(g.root, 11);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 107, .stime = 34,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 2000));
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.07) < 1e-9);
    assert_true(fabs(s->proc_stime_s - 0.04) < 1e-9); /* not 4 - 20 ticks */
    assert_int_equal(s->proc_read_bytes, 0);          /* not 0 - 5000 */
    assert_int_equal(s->proc_write_bytes, 0);         /* not 0 - 700 */
    const struct rt_proc_sample *r = fx_find_proc(s, 10);
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
    s = fx_gen_sample(&g);
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
    s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.31) < 1e-9); /* 1 + 30 */
    assert_true(fabs(s->proc_stime_s - 0.08) < 1e-9); /* 1 + 7 */
    assert_int_equal(s->proc_read_bytes, 400);
    assert_int_equal(s->proc_write_bytes, 90);
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* The scan is not atomic: the parent's stat can be read just before it reaps a child whose stat
 * is then gone. The child's lifetime reaches the parent's cutime only in the next sample; the
 * correction follows it there instead of being lost (which would count the child twice). */
static void test_tree_reap_between_reads(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .stime = 10,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .stime = 20,
                            .starttime = 2, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    fx_remove_proc(g.root, 11);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 101, .stime = 12,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    struct rt_sample *s = fx_gen_sample(&g);
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
    s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.11) < 1e-9); /* root +1, the child's last 60 - 50 */
    assert_true(fabs(s->proc_stime_s - 0.05) < 1e-9); /* root +1, the child's last 24 - 20 */
    assert_int_equal(s->proc_read_bytes, 1000);       /* 6000 - 5000 */
    assert_int_equal(s->proc_write_bytes, 200);       /* 900 - 700 */
    const struct rt_proc_sample *r = fx_find_proc(s, 10);
    assert_true(fabs(r->cpu_stime_s - 0.05) < 1e-9);
    assert_int_equal(r->write_bytes, 200);
    assert_rows_sum(s);
    /* carried once only: later growth is counted in full */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 102, .stime = 13,
                            .cutime = 90, .cstime = 31, .starttime = 1, .pss_kib = 1,
                            .read_bytes = 6400, .write_bytes = 1000));
    s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.30) < 1e-9);
    assert_true(fabs(s->proc_stime_s - 0.07) < 1e-9);
    assert_int_equal(s->proc_read_bytes, 400);
    assert_int_equal(s->proc_write_bytes, 100);
    fx_gen_free(&g);
}

/* Born during the interval: counted from zero; born and reaped within it: only through the
 * parent's cutime. */
static void test_tree_births(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    /* one child born and reaped in the interval (25 user, 6 system ticks, 1000 bytes read and
     * 300 written, all now the root's), one born and still there */
    fx_write_proc(g.root,
                  P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .cutime = 25, .cstime = 6,
                    .starttime = 1, .pss_kib = 1, .read_bytes = 1000, .write_bytes = 300));
    fx_write_proc(g.root,
                  P(.pid = 20, .ppid = 10, .comm = "new", .utime = 12, .stime = 3, .starttime = 150,
                    .pss_kib = 1, .read_bytes = 4096, .write_bytes = 512));
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.37) < 1e-9); /* 25 via cutime + 12 */
    assert_true(fabs(s->proc_stime_s - 0.09) < 1e-9); /* 6 via cstime + 3 */
    assert_int_equal(s->proc_read_bytes, 1000 + 4096);
    assert_int_equal(s->proc_write_bytes, 300 + 512);
    const struct rt_proc_sample *n = fx_find_proc(s, 20);
    assert_non_null(n);
    assert_int_equal(n->first_seen, 1);
    assert_true(fabs(n->cpu_utime_s - 0.12) < 1e-9);
    assert_true(fabs(n->cpu_stime_s - 0.03) < 1e-9);
    assert_int_equal(n->read_bytes, 4096);
    assert_int_equal(n->write_bytes, 512);
    assert_string_equal(n->cmdline_json, "[\"new\"]");
    const struct rt_proc_sample *r = fx_find_proc(s, 10);
    assert_true(fabs(r->cpu_utime_s - 0.25) < 1e-9);
    assert_true(fabs(r->cpu_stime_s - 0.06) < 1e-9);
    assert_int_equal(r->read_bytes, 1000);
    assert_int_equal(r->write_bytes, 300);
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* A process first seen inside its exec has its new name but no arguments yet: its command
 * line is read again at the next sample, and the row updated (renamed). */
static void test_tree_cmdline_late(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "job", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write(g.root, "proc/10/cmdline", "");
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_null(fx_find_proc(s, 10)->cmdline_json);
    fx_write(g.root, "proc/10/cmdline", "job");
    s = fx_gen_sample(&g);
    const struct rt_proc_sample *p = fx_find_proc(s, 10);
    assert_int_equal(p->renamed, 1);
    assert_string_equal(p->cmdline_json, "[\"job\"]");
    s = fx_gen_sample(&g); /* known now: not read again */
    assert_int_equal(fx_find_proc(s, 10)->renamed, 0);
    assert_null(fx_find_proc(s, 10)->cmdline_json);
    fx_gen_free(&g);
}

/* A pid reused within one interval is a new process: the old one is corrected away as reaped,
 * the new one counted from birth. */
static void test_tree_pid_reuse(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root,
                  P(.pid = 77, .ppid = 10, .comm = "old", .utime = 50, .stime = 20,
                    .starttime = 500, .pss_kib = 1, .read_bytes = 5000, .write_bytes = 700));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    /* old ended at 55 user, 26 system ticks, 5500 bytes read, 800 written: the root reaped it */
    fx_write_proc(g.root,
                  P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .cutime = 55, .cstime = 26,
                    .starttime = 1, .pss_kib = 1, .read_bytes = 5500, .write_bytes = 800));
    fx_write_proc(g.root, P(.pid = 77, .ppid = 10, .comm = "new", .utime = 3, .stime = 1,
                            .starttime = 900, .pss_kib = 1, .read_bytes = 40, .write_bytes = 0));
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.08) < 1e-9); /* old's last 5 + new's 3 */
    assert_true(fabs(s->proc_stime_s - 0.07) < 1e-9); /* old's last 6 + new's 1 */
    assert_int_equal(s->proc_read_bytes, 500 + 40);   /* old's last 5500 - 5000, new's 40 */
    assert_int_equal(s->proc_write_bytes, 100);       /* old's last 800 - 700 */
    const struct rt_proc_sample *r = fx_find_proc(s, 10);
    assert_true(fabs(r->cpu_stime_s - 0.06) < 1e-9);
    assert_int_equal(r->read_bytes, 500);
    assert_int_equal(r->write_bytes, 100);
    const struct rt_proc_sample *n = fx_find_proc(s, 77);
    assert_int_equal(n->starttime, 900);
    assert_int_equal(n->first_seen, 1);
    assert_true(fabs(n->cpu_stime_s - 0.01) < 1e-9);
    assert_int_equal(n->read_bytes, 40);
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* A stat file that cannot be read is "unknown", not "exited": no correction, no double count
 * when it reads again. */
static void test_tree_transient_miss(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 100, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 50, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    fx_write(g.root, "proc/11/stat", "garbled");
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 104, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.04) < 1e-9);
    assert_null(fx_find_proc(s, 11));
    assert_int_equal(s->processes, 2); /* still listed */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 60, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    s = fx_gen_sample(&g);
    /* back, but its delta over the gap is unknown: nothing counted rather than 60 ticks */
    assert_true(fabs(s->proc_utime_s - 0.0) < 1e-9);
    assert_true(isnan(fx_find_proc(s, 11)->cpu_utime_s));
    fx_gen_free(&g);
}

/* Sticky membership: re-parented to init, still the job's. In run mode (subreaper set) our
 * own children are the job's orphans; rtrack itself is never part of the tree; zombies are not
 * live. */
static void test_tree_sticky_and_subreaper(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
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
    fx_gen_open(&g, 10, 5);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->proc_count, 3);
    assert_int_equal(s->proc_pss_kib, 70);
    assert_null(fx_find_proc(s, 5));
    assert_null(fx_find_proc(s, 30));
    /* (the first interval of a run counts from zero: test_tree_run_counts_from_spawn) */
    s = fx_gen_sample(&g);
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
    s = fx_gen_sample(&g);
    assert_non_null(fx_find_proc(s, 12));
    assert_non_null(fx_find_proc(s, 13));
    assert_non_null(fx_find_proc(s, 11));
    assert_int_equal(s->proc_count, 3);    /* job, daemon, orphan: the zombie is not live */
    assert_int_equal(s->proc_children, 2); /* daemon and orphan */
    assert_int_equal(s->proc_pss_kib, 10 + 40 + 5);
    assert_true(fabs(s->proc_utime_s - 0.08) < 1e-9); /* worker 2 + daemon 5 + orphan 1 */
    assert_rows_sum(s);
    /* the root gone: the tree is what is left of it */
    fx_remove_proc(g.root, 10);
    fx_remove_proc(g.root, 11);
    s = fx_gen_sample(&g);
    assert_int_equal(s->proc_count, 2);
    assert_int_equal(s->proc_children, 2);
    fx_gen_free(&g);
}

/* In run mode rtrack started the job just before the baseline: what the tree did before the
 * baseline was read is the job's too, so the first interval counts from zero (CI saw a 50 MB
 * dd with 20 MB written before the baseline, and the run missing them). In record mode the
 * tree existed before the recording: its first interval counts from the baseline. */
static void test_tree_run_counts_from_spawn(void **state)
{
    (void)state;
    for (int run_mode = 0; run_mode < 2; run_mode++) {
        struct fx_gen g;
        fx_gen_init(&g);
        fx_write_proc(g.root, P(.pid = 5, .ppid = 1, .comm = "rtrack", .utime = 7, .starttime = 1,
                                .pss_kib = 1000, .read_bytes = 0, .write_bytes = 0));
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 30, .stime = 4, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 8192));
        fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "sh", .utime = 5, .starttime = 3,
                                .pss_kib = 10, .read_bytes = 100, .write_bytes = 0));
        fx_gen_open(&g, 10, run_mode ? 5 : 0);
        struct rt_sample *s = fx_gen_sample(&g);
        assert_int_equal(s->proc_count, 2);
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 40, .stime = 6, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 20480));
        fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "sh", .utime = 7, .starttime = 3,
                                .pss_kib = 10, .read_bytes = 300, .write_bytes = 0));
        s = fx_gen_sample(&g);
        if (run_mode) { /* everything since the spawn */
            assert_true(fabs(s->proc_utime_s - 0.47) < 1e-9);
            assert_true(fabs(s->proc_stime_s - 0.06) < 1e-9);
            assert_int_equal(s->proc_write_bytes, 20480);
            assert_int_equal(s->proc_read_bytes, 300);
            assert_true(fabs(fx_find_proc(s, 10)->cpu_utime_s - 0.40) < 1e-9);
        } else { /* since the baseline */
            assert_true(fabs(s->proc_utime_s - 0.12) < 1e-9);
            assert_true(fabs(s->proc_stime_s - 0.02) < 1e-9);
            assert_int_equal(s->proc_write_bytes, 20480 - 8192);
            assert_int_equal(s->proc_read_bytes, 200);
            assert_true(fabs(fx_find_proc(s, 10)->cpu_utime_s - 0.10) < 1e-9);
        }
        assert_int_equal(fx_find_proc(s, 10)->renamed, 0);
        assert_rows_sum(s);
        /* from then on, both count from the previous sample */
        fx_write_proc(g.root,
                      P(.pid = 10, .ppid = 5, .comm = "dd", .utime = 41, .stime = 6, .starttime = 2,
                        .pss_kib = 10, .read_bytes = 0, .write_bytes = 24576));
        s = fx_gen_sample(&g);
        assert_true(fabs(s->proc_utime_s - 0.01) < 1e-9);
        assert_int_equal(s->proc_write_bytes, 4096);
        assert_rows_sum(s);
        fx_gen_free(&g);
    }
}

/* A tree whose /proc/PID/io cannot be read (a kernel without CONFIG_TASK_IO_ACCOUNTING,
 * another user's processes) has unknown I/O, not none: NULL, never a sum of nothing. With one
 * member readable, the tree's figure is that member's. */
static void test_tree_io_unknown(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 100, .read_bytes = -1));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 5, .starttime = 2,
                            .pss_kib = 50, .read_bytes = -1));
    fx_gen_open(&g, 10, 0);
    fx_gen_sample(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 20, .starttime = 1,
                            .pss_kib = 100, .read_bytes = -1));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 8, .starttime = 2,
                            .pss_kib = 50, .read_bytes = -1));
    struct rt_sample *s = fx_gen_sample(&g);
    assert_true(fabs(s->proc_utime_s - 0.13) < 1e-9);
    assert_true(s->proc_read_bytes == RT_NA);
    assert_true(s->proc_write_bytes == RT_NA);
    assert_true(fx_find_proc(s, 10)->read_bytes == RT_NA);
    assert_true(fx_find_proc(s, 11)->read_total == RT_NA);
    assert_rows_sum(s);
    /* the root's io becomes readable: its first reading has nothing to count from, the next
     * one's delta is the tree's */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 20, .starttime = 1,
                            .pss_kib = 100, .read_bytes = 1000, .write_bytes = 10));
    s = fx_gen_sample(&g);
    assert_true(s->proc_read_bytes == RT_NA);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 20, .starttime = 1,
                            .pss_kib = 100, .read_bytes = 1500, .write_bytes = 10));
    s = fx_gen_sample(&g);
    assert_int_equal(s->proc_read_bytes, 500);
    assert_int_equal(s->proc_write_bytes, 0); /* known, and none: 0 */
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* The time a process waited for a CPU: /proc/PID/schedstat's second field (ns), summed over the
 * threads of a multi-threaded one (task/TID/schedstat). A kernel that does not account it
 * (sched_info off: CONFIG_SCHEDSTATS unset and delay accounting off, 4.2 to 5.13) prints
 * "0 0 0" for every task: unknown, not a wait of 0 - a process that has run a tick has a
 * non-zero first field wherever the kernel counts. */
static void test_tree_cpu_wait(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "threads", .utime = 50, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0, .threads = 2));
    fx_write(g.root, "proc/10/schedstat", "100000000 2000000 10\n");
    fx_write(g.root, "proc/11/task/11/schedstat", "300000000 5000000 30\n");
    fx_write(g.root, "proc/11/task/12/schedstat", "200000000 1000000 20\n");
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->sched_wait_ns, 2000000);
    assert_int_equal(fx_find_proc(s, 11)->sched_wait_ns, 6000000);
    assert_true(isnan(s->proc_cpu_wait_s)); /* the baseline: no interval */
    /* its threads ran 150 ms: its CPU time (the process's clock) says so too */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "threads", .utime = 65, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0, .threads = 2));
    fx_write(g.root, "proc/10/schedstat", "110000000 2500000 12\n");
    fx_write(g.root, "proc/11/task/11/schedstat", "400000000 9000000 40\n");
    fx_write(g.root, "proc/11/task/12/schedstat", "250000000 3000000 25\n");
    s = fx_gen_sample(&g);
    assert_true(fabs(fx_find_proc(s, 10)->cpu_wait_s - 0.0005) < 1e-12);
    assert_true(fabs(fx_find_proc(s, 11)->cpu_wait_s - 0.006) < 1e-12);
    assert_true(fabs(s->proc_cpu_wait_s - 0.0065) < 1e-12);
    assert_string_equal(s->cpu_wait_source, "schedstat");
    assert_null(s->cpu_wait_missing);
    /* accounting off: every task reads "0 0 0" (and the threads ran: they are read) */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "threads", .utime = 70, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0, .threads = 2));
    fx_write(g.root, "proc/10/schedstat", "0 0 0\n");
    fx_write(g.root, "proc/11/task/11/schedstat", "0 0 0\n");
    fx_write(g.root, "proc/11/task/12/schedstat", "0 0 0\n");
    s = fx_gen_sample(&g);
    assert_true(fx_find_proc(s, 10)->sched_wait_ns == RT_NA);
    assert_true(fx_find_proc(s, 11)->sched_wait_ns == RT_NA);
    assert_true(isnan(fx_find_proc(s, 10)->cpu_wait_s));
    assert_true(isnan(s->proc_cpu_wait_s));
    s = fx_gen_sample(&g);
    assert_true(isnan(s->proc_cpu_wait_s));
    fx_gen_free(&g);
}

/* 3.10's smaps: two mappings of a process, Pss 20 and 33 KiB (a 4.14+ file has more lines per
 * mapping, Pss_Anon, SwapPss... of which only Pss counts) */
static const char smaps_310[] =
    "00400000-0040b000 r-xp 00000000 fd:00 1049088                            /usr/bin/sleep\n"
    "Size:                 44 kB\nRss:                  20 kB\nPss:                  20 kB\n"
    "Shared_Clean:          0 kB\nShared_Dirty:          0 kB\nPrivate_Clean:        20 kB\n"
    "Private_Dirty:         0 kB\nReferenced:           20 kB\nAnonymous:             0 kB\n"
    "AnonHugePages:         0 kB\nSwap:                  0 kB\nKernelPageSize:        4 kB\n"
    "MMUPageSize:           4 kB\nLocked:                0 kB\nVmFlags: rd ex mr mw me dw sd \n"
    "7f1e2a9e1000-7f1e2a9e5000 rw-p 00000000 00:00 0 \n"
    "Size:                 16 kB\nRss:                 16 kB\nPss:                 33 kB\n"
    "Shared_Clean:          0 kB\nShared_Dirty:          0 kB\nPrivate_Clean:         0 kB\n"
    "Private_Dirty:        16 kB\nReferenced:           16 kB\nAnonymous:            16 kB\n"
    "AnonHugePages:         0 kB\nSwap:                  0 kB\nKernelPageSize:        4 kB\n"
    "MMUPageSize:           4 kB\nLocked:                0 kB\nVmFlags: rd wr mr mw me ac sd \n";

static void test_smaps_pss_sum(void **state)
{
    (void)state;
    assert_int_equal(rt_parse_smaps_pss(smaps_310), 53);
    /* a newer mapping's other Pss-like lines are not Pss */
    assert_int_equal(rt_parse_smaps_pss("Rss: 8 kB\nPss: 5 kB\nPss_Dirty: 4 kB\nSwapPss: 9 kB\n"
                                        "Pss_Anon: 3 kB\nPss: 7 kB\n"),
                     12);
    assert_true(rt_parse_smaps_pss("Rss: 8 kB\nSwapPss: 9 kB\n") == RT_NA);
    assert_true(rt_parse_smaps_pss("") == RT_NA);
    /* one line no kernel prints makes the whole unknown, and so does a sum past the bound */
    assert_true(rt_parse_smaps_pss("Pss: 5 kB\nPss: x kB\n") == RT_NA);
    assert_true(rt_parse_smaps_pss("Pss: 1125899906842624 kB\nPss: 1 kB\n") == RT_NA);
}

/* Where memory comes from, by what the kernel has: smaps_rollup (4.14+); the Pss of every
 * mapping in smaps (3.10); neither (no CONFIG_PROC_PAGE_MONITOR): RSS alone, PSS unknown. A
 * member whose file cannot be read (here: one gone between its stat and its memory) decides
 * nothing. */
static void test_tree_memory_source(void **state)
{
    (void)state;
    struct fx_gen g;
    /* 4.14 and later */
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 1, .starttime = 1,
                            .rss_pages = 30, .pss_kib = 100, .read_bytes = 0));
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->proc_pss_kib, 100);
    assert_string_equal(s->proc_memory_source, "smaps_rollup");
    fx_gen_free(&g);
    /* 3.10: smaps only */
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 1, .starttime = 1,
                            .rss_pages = 30, .pss_kib = -1, .read_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "child", .utime = 1, .starttime = 2,
                            .rss_pages = 9, .pss_kib = -1, .read_bytes = 0));
    fx_write(g.root, "proc/10/smaps", smaps_310);
    fx_write(g.root, "proc/11/smaps",
             "00400000-00401000 r-xp 00000000 fd:00 1 /bin/x\n"
             "Size: 4 kB\nRss: 4 kB\nPss: 2 kB\n");
    fx_gen_open(&g, 10, 0);
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->pss_kib, 53);
    assert_int_equal(fx_find_proc(s, 11)->pss_kib, 2);
    assert_int_equal(s->proc_pss_kib, 55);
    assert_int_equal(s->proc_rss_kib, (30 + 9) * 4);
    assert_string_equal(s->proc_memory_source, "smaps");
    s = fx_gen_sample(&g);
    assert_int_equal(s->proc_pss_kib, 55);
    assert_string_equal(s->proc_memory_source, "smaps");
    fx_gen_free(&g);
    /* neither: the tree's PSS is unknown (NULL, not 0), its RSS known */
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 1, .starttime = 1,
                            .rss_pages = 30, .pss_kib = -1, .read_bytes = 0));
    fx_gen_open(&g, 10, 0);
    s = fx_gen_sample(&g);
    assert_true(fx_find_proc(s, 10)->pss_kib == RT_NA);
    assert_true(s->proc_pss_kib == RT_NA);
    assert_int_equal(s->proc_rss_kib, 30 * 4);
    assert_string_equal(s->proc_memory_source, "rss");
    s = fx_gen_sample(&g);
    assert_true(s->proc_pss_kib == RT_NA);
    assert_string_equal(s->proc_memory_source, "rss");
    fx_gen_free(&g);
    /* a system-only recording says nothing of a tree */
    fx_gen_init(&g);
    fx_gen_open(&g, 0, 0);
    s = fx_gen_sample(&g);
    assert_null(s->proc_memory_source);
    assert_null(s->cpu_wait_source);
    assert_null(s->cpu_wait_missing);
    fx_gen_free(&g);
}

/* Why there is no CPU wait, as the kernel shows it: no schedstat file for a live process, or
 * "0 0 0" from one that has run. Once any member's wait was read, schedstat is the source. */
static void test_tree_cpu_wait_source(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0));
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_null(s->cpu_wait_source);
    assert_string_equal(s->cpu_wait_missing, "no-schedstat");
    fx_gen_free(&g);

    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "threads", .utime = 50, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .threads = 2));
    fx_write(g.root, "proc/10/schedstat", "0 0 0\n");
    fx_write(g.root, "proc/11/task/11/schedstat", "0 0 0\n");
    fx_write(g.root, "proc/11/task/12/schedstat", "0 0 0\n");
    fx_gen_open(&g, 10, 0);
    s = fx_gen_sample(&g);
    assert_null(s->cpu_wait_source);
    assert_string_equal(s->cpu_wait_missing, "schedstat-off");
    s = fx_gen_sample(&g);
    assert_true(isnan(s->proc_cpu_wait_s));
    assert_string_equal(s->cpu_wait_missing, "schedstat-off");
    /* a member whose wait reads (a kernel cannot do both: here, the fixture changed) settles
     * it: schedstat */
    fx_write(g.root, "proc/10/schedstat", "100000000 2000000 10\n");
    s = fx_gen_sample(&g);
    assert_string_equal(s->cpu_wait_source, "schedstat");
    assert_null(s->cpu_wait_missing);
    fx_gen_free(&g);
}

static void test_schedstat_parse(void **state)
{
    (void)state;
    struct rt_schedstat ss;
    assert_int_equal(rt_parse_schedstat("2952745 2251271 3\n", &ss), 0);
    assert_int_equal(ss.run_ns, 2952745);
    assert_int_equal(ss.wait_ns, 2251271);
    assert_int_equal(ss.slices, 3);
    /* not accounted: every task reads 0 0 0 (unknown, not a wait of 0) */
    assert_int_equal(rt_parse_schedstat("0 0 0\n", &ss), 1);
    /* a task that has not run yet: a wait of 0 is known */
    assert_int_equal(rt_parse_schedstat("0 12 1\n", &ss), 0);
    assert_int_equal(ss.wait_ns, 12);
    const char *bad[] = {"",          "1 2",      "1 2 x\n",
                         "-1 2 3\n",  "1  2 3\n", "9223372036854775808 1 1\n",
                         "1 2 3 4\n", "garbage\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        if (rt_parse_schedstat(bad[i], &ss) != -1)
            fail_msg("accepted: '%s'", bad[i]);
}

/* A single-threaded member that has not run since the previous sample (its schedstat's run time
 * and its count of times put on a CPU unchanged, and not running now) cannot have read, written
 * or forked: its io and, walking the tree, its children file are not read again. The fixture
 * changes them while the schedstat stays, which no kernel does: a row that keeps the earlier
 * figures shows the file was not read. */
static void test_tree_quiet_member(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 100, .write_bytes = 10));
    fx_write(g.root, "proc/10/schedstat", "5000000 100 4\n");
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 200, .write_bytes = 20));
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 100);
    assert_int_equal(fx_find_proc(s, 10)->write_total, 10);
    assert_int_equal(s->proc_read_bytes, 0);
    assert_int_equal(fx_find_proc(s, 10)->sched_wait_ns, 100);
    /* a child appears under it (no kernel would): walking, it is not looked for */
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "kid", .utime = 1, .starttime = 900,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 100);
    if (fx_walk_mode)
        assert_null(fx_find_proc(s, 11));
    fx_remove_proc(g.root, 11);
    /* running now: read, though its schedstat has not moved yet */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .state = 'R', .utime = 10,
                            .starttime = 1, .pss_kib = 1, .read_bytes = 200, .write_bytes = 20));
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 200);
    assert_int_equal(s->proc_read_bytes, 100);
    /* put on a CPU once more, no whole ns of run time to show for it: it ran, read */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 300, .write_bytes = 20));
    fx_write(g.root, "proc/10/schedstat", "5000000 100 5\n");
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 300);
    /* it ran: read */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 11, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 400, .write_bytes = 20));
    fx_write(g.root, "proc/10/schedstat", "15000000 300 6\n");
    s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 400);
    assert_true(fabs(s->proc_cpu_wait_s - 200e-9) < 1e-15);
    assert_rows_sum(s);
    fx_gen_free(&g);
}

/* thread TID of process 10: run and wait in ms, times on a CPU */
static void thr(struct fx_gen *g, int tid, long run_ms, long wait_ms)
{
    char rel[64], text[64];
    snprintf(rel, sizeof(rel), "proc/10/task/%d/schedstat", tid);
    snprintf(text, sizeof(text), "%ld %ld 1\n", run_ms * 1000000, wait_ms * 1000000);
    fx_write(g->root, rel, text);
}

/* process 10 with `threads` threads and utime ticks (its CPU clock in a fixture tree) */
static void thr_proc(struct fx_gen *g, long utime, long threads)
{
    fx_write_proc(g->root, P(.pid = 10, .ppid = 1, .comm = "pool", .utime = utime, .starttime = 1,
                             .pss_kib = 1, .read_bytes = 0, .write_bytes = 0, .threads = threads));
}

static void assert_wait_ms(const struct rt_sample *s, double total, double interval)
{
    const struct rt_proc_sample *p = fx_find_proc(s, 10);
    if (fabs((double)p->sched_wait_ns / 1e6 - total) > 1e-9 ||
        fabs(p->cpu_wait_s * 1e3 - interval) > 1e-9)
        fail_msg("wait %g ms, %g ms in the interval; expected %g, %g",
                 (double)p->sched_wait_ns / 1e6, p->cpu_wait_s * 1e3, total, interval);
}

/* A many-threaded member's wait (proc_threads.c): its threads are read as far as its CPU clock
 * (here its stat's utime, 10 ms a tick) says they ran. The fixture also changes what it says is
 * not read, which shows it is not. */
static void test_tree_threads_wait(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    thr_proc(&g, 100, 4);
    thr(&g, 10, 400, 1);
    thr(&g, 11, 300, 2);
    thr(&g, 12, 200, 3);
    thr(&g, 13, 100, 4);
    fx_gen_open(&g, 10, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(fx_find_proc(s, 10)->sched_wait_ns, 10000000); /* the sum: 1+2+3+4 ms */
    /* quiet: the clock has not moved, no thread ran: nothing is read */
    thr(&g, 11, 300, 9);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 10, 0);
    /* thread 11 ran 20 ms and waited 5: 20 ms beyond what the hot threads (none yet) account
     * for: every thread is read */
    thr_proc(&g, 102, 4);
    thr(&g, 11, 320, 7);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 15, 5);
    /* quiet again: 11, hot now, is not read, nor the process's io */
    thr(&g, 11, 320, 99);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "pool", .utime = 102, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 4096, .write_bytes = 0, .threads = 4));
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 15, 0);
    assert_int_equal(fx_find_proc(s, 10)->read_total, 0);
    thr(&g, 11, 320, 7);
    /* 11 is hot: read alone while it accounts for the clock within 10 ms; 12 ran 5 ms and
     * waited 2, counted later */
    thr_proc(&g, 104, 4);
    thr(&g, 11, 335, 8);
    thr(&g, 12, 205, 5);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 16, 1);
    /* 12 runs 10 ms more, waits 3: now 15 ms beyond 11's since every thread was read: read */
    thr_proc(&g, 106, 4);
    thr(&g, 11, 345, 8);
    thr(&g, 12, 215, 8);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 21, 5);
    /* a new thread (the count changed), though the clock's growth is within 10 ms of the hot
     * threads': every thread is read, the new one's whole wait counts */
    thr_proc(&g, 107, 5);
    thr(&g, 11, 350, 8);
    thr(&g, 14, 5, 6);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 27, 6);
    /* 13 exits: what was counted of it stays (a sum over the live threads would drop by its
     * 4 ms, and say 0 for the interval); 11's 1 ms counts */
    char path[512];
    snprintf(path, sizeof(path), "%s/proc/10/task/13", g.root);
    fx_rmtree(path);
    thr_proc(&g, 108, 4);
    thr(&g, 11, 360, 9);
    s = fx_gen_sample(&g);
    assert_wait_ms(s, 28, 1);
    /* 10 ran a little (under the 10 ms) and waited 2 ms: its wait is counted at the latest
     * when every thread is read again, 10 samples (10 s) after the last time */
    thr(&g, 10, 401, 3);
    for (int i = 1; i <= 10; i++) {
        thr_proc(&g, 108 + i, 4);
        thr(&g, 11, 360 + 10 * i, 9);
        s = fx_gen_sample(&g);
        /* every thread was last read when 13 exited (the count changed), the sample before */
        assert_wait_ms(s, i < 10 ? 28 : 30, i == 10 ? 2 : 0);
    }
    assert_string_equal(s->cpu_wait_source, "schedstat");
    fx_gen_free(&g);
}

/* A tree with more threads than the host has processes is found by one scan of /proc (each
 * process's stat) instead of every thread's children file; a smaller one by the children
 * files. The fixture's children file of the root does not name its child (no kernel's would
 * not): only the scan finds it. Walk mode only (the full scan always finds it). */
static void test_tree_scan_many_threads(void **state)
{
    (void)state;
    if (!fx_walk_mode)
        return;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_write_proc(g.root, P(.pid = 11, .ppid = 10, .comm = "kid", .utime = 1, .starttime = 2,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0));
    fx_gen_open(&g, 10, 0); /* the children files as a kernel's, and the probe: walk mode */
    fx_walk_mode = 0;       /* from here the test writes them */
    fx_write(g.root, "proc/10/task/10/children", "");
    struct rt_sample *s = fx_gen_sample(&g);
    assert_non_null(fx_find_proc(s, 10));
    assert_null(fx_find_proc(s, 11)); /* 1 thread, 2 processes: the children files */
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "root", .utime = 10, .starttime = 1,
                            .pss_kib = 1, .read_bytes = 0, .write_bytes = 0, .threads = 500));
    s = fx_gen_sample(&g);
    assert_non_null(fx_find_proc(s, 11)); /* 500 threads, 2 processes: the scan */
    fx_walk_mode = 1;
    fx_gen_free(&g);
}

/* The process count comes from listing /proc, which is not listed again while no task was
 * created (/proc/stat's forks since boot) and as many exist (/proc/loadavg's total) as at the
 * last listing. The fixture adds processes without telling either, which no kernel does: a
 * count that stays shows /proc was not listed. */
static void test_proc_listing_unchanged(void **state)
{
    (void)state;
    struct fx_gen g;
    fx_gen_init(&g);
    fx_write(g.root, "proc/stat", "cpu  100 0 50 1000 0 0 0 0 0 0\nprocesses 5000\n");
    fx_write(g.root, "proc/loadavg", "0.10 0.20 0.30 1/90 4321\n");
    fx_write_proc(g.root, P(.pid = 10, .ppid = 1, .comm = "a", .starttime = 1, .pss_kib = 1));
    fx_gen_open(&g, 0, 0);
    struct rt_sample *s = fx_gen_sample(&g);
    assert_int_equal(s->processes, 1);
    fx_write_proc(g.root, P(.pid = 11, .ppid = 1, .comm = "b", .starttime = 2, .pss_kib = 1));
    s = fx_gen_sample(&g);
    assert_int_equal(s->processes, 1);
    /* a task more */
    fx_write(g.root, "proc/loadavg", "0.10 0.20 0.30 1/91 4322\n");
    s = fx_gen_sample(&g);
    assert_int_equal(s->processes, 2);
    /* a fork (and an exit: as many tasks) */
    fx_write_proc(g.root, P(.pid = 12, .ppid = 1, .comm = "c", .starttime = 3, .pss_kib = 1));
    fx_write(g.root, "proc/stat", "cpu  100 0 50 1000 0 0 0 0 0 0\nprocesses 5001\n");
    s = fx_gen_sample(&g);
    assert_int_equal(s->processes, 3);
    /* without loadavg, listed every sample */
    char path[512];
    snprintf(path, sizeof(path), "%s/proc/loadavg", g.root);
    unlink(path);
    fx_write_proc(g.root, P(.pid = 13, .ppid = 1, .comm = "d", .starttime = 4, .pss_kib = 1));
    s = fx_gen_sample(&g);
    assert_int_equal(s->processes, 4);
    fx_gen_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pid_stat_parse),
        cmocka_unit_test(test_smaps_pss_sum),
        cmocka_unit_test(test_tree_cascade_reap),
        cmocka_unit_test(test_tree_vanished_not_reaped_by_tree),
        cmocka_unit_test(test_tree_reap_between_reads),
        cmocka_unit_test(test_tree_births),
        cmocka_unit_test(test_tree_cmdline_late),
        cmocka_unit_test(test_tree_pid_reuse),
        cmocka_unit_test(test_tree_transient_miss),
        cmocka_unit_test(test_tree_sticky_and_subreaper),
        cmocka_unit_test(test_tree_run_counts_from_spawn),
        cmocka_unit_test(test_tree_io_unknown),
        cmocka_unit_test(test_tree_cpu_wait),
        cmocka_unit_test(test_tree_memory_source),
        cmocka_unit_test(test_tree_cpu_wait_source),
        cmocka_unit_test(test_schedstat_parse),
        cmocka_unit_test(test_tree_quiet_member),
        cmocka_unit_test(test_tree_threads_wait),
        cmocka_unit_test(test_proc_listing_unchanged),
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
        cmocka_unit_test(test_tree_io_unknown),
        cmocka_unit_test(test_tree_cpu_wait),
        cmocka_unit_test(test_tree_memory_source),
        cmocka_unit_test(test_tree_cpu_wait_source),
        cmocka_unit_test(test_tree_quiet_member),
        cmocka_unit_test(test_tree_threads_wait),
        cmocka_unit_test(test_tree_scan_many_threads),
    };
    int failed = cmocka_run_group_tests_name("full scan", tests, NULL, NULL);
    fx_walk_mode = 1;
    return failed + cmocka_run_group_tests_name("children files", walk, NULL, NULL);
}
