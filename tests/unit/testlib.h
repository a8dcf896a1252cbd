/* testlib.h - helpers for driving the real collectors over fixture trees. */
#ifndef RT_TESTLIB_H
#define RT_TESTLIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "rtrack/collect/collect.h"
#include "rtrack/sample/sample.h"

/* statvfs answers from a fixture's statvfs.tsv (mount_point frsize blocks bfree bavail). */
struct fx_statvfs {
    char **mp;
    struct rt_fsstat *fs;
    size_t n;
};
int fx_statvfs_load(struct fx_statvfs *t, const char *path);
void fx_statvfs_free(struct fx_statvfs *t);
int fx_statvfs_fn(void *ud, const char *path, struct rt_fsstat *out);

/* A parity case: meta values and two snapshots a -> b. */
struct fx_case {
    char dir[1024];
    double time_a, time_b;
    long clk_tck;
    pid_t pid;
    struct rt_sysenv env;
    struct fx_statvfs sv;
    char root[1100];
    struct rt_collectors *col;
    struct rt_sample a, b;
};
/* Load meta, take sample a (baseline) and b; pid 0 = no tree. */
void fx_case_run(struct fx_case *c, const char *dir, pid_t pid, pid_t subreaper);
void fx_case_free(struct fx_case *c);

/* A CSV header+row file as name -> value text. */
struct fx_row {
    char **names, **values;
    size_t n;
};
int fx_row_load(struct fx_row *r, const char *path);
const char *fx_row_get(const struct fx_row *r, const char *name);
void fx_row_free(struct fx_row *r);

/* Python's round(x, n): correctly rounded, ties to even (glibc printf does exactly this). */
double py_round(double x, int n);

/* Read a whole file into a malloc'd string (NULL when missing). */
char *fx_slurp(const char *path);
/* The same with its length (binary files: an S3 object, a gzip batch). */
char *fx_slurp_n(const char *path, size_t *len);
/* Seconds on the monotonic clock, and on the wall clock (epoch). */
double fx_mono_s(void);
double fx_wall_s(void);
/* json_extract(json, path) as text (malloc'd; NULL for a JSON null or nothing there): what a
 * test reads out of a JSON document rtrack wrote or a mock recorded. */
char *fx_jget(const char *json, const char *path);
/* The text at path is want (a failure names the path and both values). */
void fx_assert_jget(const char *json, const char *path, const char *want);

/* Run this test binary again, as a new process (nothing an earlier test loaded or cached is in
 * it), with the environment variable `var` set to 1: its main() runs the child's side when it
 * sees it. Returns the child's exit status (-1 when it did not exit). */
int fx_rerun_self(const char *var);

/* A fresh directory under /tmp and the path of a database in it. */
int fx_tmpdir(char *dir, size_t dcap, char *dbpath, size_t pcap);
/* One sample of the live system with the real clocks. */
void fx_live_sample(struct rt_collectors *col, struct rt_sample *s, const struct rt_sample *prev);

/* Start `python3 SCRIPT ARG1 [ARG2]` (a local mock server that prints its port as its first
 * line and dies with the test); returns the port, or -1 with the reason on stderr. */
int fx_python_mock(const char *script, const char *arg1, const char *arg2, pid_t *pid);

/* Fixture trees built by the test itself. */
void fx_mkdirs(const char *path);
void fx_write(const char *root, const char *rel, const char *text);
void fx_symlink(const char *root, const char *rel, const char *target);
void fx_rmtree(const char *path);
/* Copy the tree src to dst (a new directory): files byte for byte, directories, and symbolic
 * links as links (a case's relative b/sys -> ../a/sys keeps working in the copy). */
void fx_copytree(const char *src, const char *dst);
struct fx_proc {
    pid_t pid, ppid;
    const char *comm;
    char state;
    long utime, stime, cutime, cstime, starttime, rss_pages;
    long pss_kib;                 /* < 0: no smaps_rollup */
    long read_bytes, write_bytes; /* < 0: no io file */
    long threads;                 /* 0: 1 */
};
/* proc/PID/{stat,smaps_rollup,io,cmdline} under root */
void fx_write_proc(const char *root, const struct fx_proc *p);
void fx_remove_proc(const char *root, pid_t pid);
/* Write proc/PID/task/PID/children for every process of the fixture (from the ppids in their
 * stat files) and the probe file proc/self/task/OURPID/children, so the proc collector walks the
 * tree through children files as on a live kernel instead of scanning every stat. */
void fx_write_children(const char *root);

/* A fixture root built by a test and mutated between samples (the collectors' unit tests): a
 * fresh directory under /tmp with a /proc/stat, statvfs answering nothing (or a test's
 * fx_statvfs), CLK_TCK 100, pages of 4 KiB, the clock at 1000 s. */
struct fx_gen {
    char root[256];
    struct rt_sysenv env;
    struct fx_statvfs sv;
    struct rt_collectors *col;
    struct rt_sample buf[2];
    struct rt_sample *prev;
    int next;
    double t;
    const char *cgroup; /* record --cgroup's cgroup for fx_gen_open, NULL: none */
};
/* 1: fx_gen_open and fx_gen_sample write the children files first (fx_write_children), so the
 * process-tree tests run with them (walk mode); 0: without (the full scan). */
extern int fx_walk_mode;
void fx_gen_init(struct fx_gen *g);
/* Open every collector on the root: root_pid the tracked tree (0: none). */
void fx_gen_open(struct fx_gen *g, pid_t root_pid, pid_t subreaper);
/* The next sample (baseline first, then periodic ones a second apart), which stays valid until
 * the one after next. */
struct rt_sample *fx_gen_sample(struct fx_gen *g);
void fx_gen_free(struct fx_gen *g);
/* statvfs answers from `tsv` (fx_statvfs's lines: mount_point frsize blocks bfree bavail), as
 * the root's statvfs.tsv. */
void fx_gen_statvfs(struct fx_gen *g, const char *tsv);
/* The row of `pid` in a sample, or NULL. */
const struct rt_proc_sample *fx_find_proc(const struct rt_sample *s, pid_t pid);

#endif
