/* proc.c - process count and the tracked process tree.
 *
 * The tree is found by walking down from its members: the children of every thread of every
 * member, read from /proc/PID/task/TID/children (children of any thread: a child forked by a
 * non-main thread is listed under that thread, which the Python reference misses). Only the
 * tree's own files are read, so the cost follows the size of the tree, not the number of
 * processes on the host (a full scan of every /proc/PID/stat costs 4-13 us per process on the
 * host, every sample). Where the children files do not exist (a kernel without
 * CONFIG_PROC_CHILDREN, or a fixture tree without them) every /proc/PID/stat is scanned for its
 * ppid instead; both give the same tree. The scan is also taken when the tree has more threads
 * than the host has processes: a children file per thread then costs more than a stat per
 * process (issue 32: 2 000 threads, 26 ms a sample). /proc itself is listed every sample either
 * way: the process count is the number of its pid entries.
 *
 * What has not changed is not read again (issue 32). A member that has not run since the
 * previous sample cannot have forked, reaped, read or written: a single-threaded one (its
 * schedstat's run time and count of times on a CPU unchanged, and not running) has neither its
 * children file nor its io read again; a many-threaded one (its CPU clock unchanged) not its io
 * nor its threads' schedstat (proc_threads.c, which reads those only as far as the clock says
 * they ran). Its stat and smaps_rollup are read every sample: memory can be taken from, and
 * PSS shared with, a process that does not run.
 *
 * Memory is PSS from smaps_rollup (4.14+). Without it (ENOENT for a live process: an older
 * kernel) the Pss lines of /proc/PID/smaps are summed, one per mapping; without either (no
 * CONFIG_PROC_PAGE_MONITOR) PSS is unknown and RSS, from stat, is all there is. Which of the
 * three the kernel has is learnt from the first process that says, and kept: the sample says
 * it (proc_memory_source), as it says whether schedstat gave the CPU wait and why not
 * (cpu_wait_source, cpu_wait_missing), and the store keeps these facts on the run.
 *
 * On a live system the files read every sample (stat, io, smaps_rollup, children, schedstat; a
 * scan's stat files within half the budget) stay open and are re-read with pread. A descriptor kept
 * open belongs to one process: once that process is gone it fails with ESRCH, so a recycled pid is
 * never mistaken for it (and a process opened by path is checked against its start time).
 * Descriptors are capped at half the fd limit.
 *
 * Membership is sticky: a process that belonged to the tree stays in it while it lives, even
 * when it is re-parented to init (a daemonised grandchild is still the job's work). In run mode
 * rtrack is the job's subreaper, so such orphans come back to us and are found as our
 * children.
 *
 * CPU of the tree = sum of utime+cutime (stime+cstime), so children that are born and reaped
 * between two samples still count through their parent's cutime. When a child that was already
 * counted is reaped, its whole lifetime lands in the parent's cutime; the ticks counted for it
 * before are subtracted again (resource-tracker-rs issue #20). rtrack differs from the Rust
 * reference in three places, each a bug there:
 *  - the correction only applies to children whose nearest live ancestor in the tree is the one
 *    that reaped them, and never more than that ancestor's cutime actually grew (a child reaped
 *    by init, or an auto-reaped one, takes nothing with it), so a transient miss or a carried
 *    entry is never subtracted twice;
 *  - /proc/PID/io gets the same correction: the kernel folds reaped children's I/O into the
 *    parent's counters exactly as it does cutime;
 *  - a process born during the interval counts from zero instead of being ignored until its
 *    second sample. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "proc_threads.h"
#include "rtrack/collect/collect.h"

/* listing values besides a start time: listed but not read (or unreadable), and gone */
#define LIST_UNKNOWN (-1)
#define LIST_GONE    (-2)

struct scan_ent {
    pid_t pid;
    struct rt_pid_stat st;
    int tracked;
    int counted;                   /* its delta entered the tree's sums this sample */
    int prev_i;                    /* index in prev->procs, -1 when first seen */
    int64_t du, ds, dr, dw;        /* this interval: own + reaped children, RT_NA when unknown */
    int first_child, next_sibling; /* indices into scan, -1 = none */
    int kept;                      /* index in kept, -1 = none */
    int walked;                    /* its children were read this sample */
    int checked;                   /* a single-threaded one: its schedstat read this sample */
    int quiet;                     /* it has not run since the previous sample (member_check) */
    int64_t wait;                  /* that schedstat's wait, ns, RT_NA */
};

/* The files of one process kept open between samples (-1 = not open), and what is kept of it
 * from one sample to the next. */
struct kept {
    pid_t pid;
    int64_t starttime;
    int stat_fd, io_fd, smaps_fd, children_fd, task_fd, sched_fd;
    unsigned seen;              /* the sample it was last read in */
    struct rt_schedstat sched;  /* a single-threaded process's schedstat at sample sched_gen */
    unsigned sched_gen;         /* 0: none */
    struct rt_threads *threads; /* a many-threaded process's threads (proc_threads.c) */
};

struct reap_group {
    int64_t u, s, r, w; /* ticks / bytes of gone descendants to take back */
};

/* A correction that could not be applied yet, for one reaper. */
struct pending {
    uint64_t key; /* the reaper's (pid, starttime) */
    struct reap_group g;
};

/* Where a member's memory comes from (see the top of this file); MEM_UNKNOWN until a process
 * has told. */
enum mem_src { MEM_UNKNOWN, MEM_ROLLUP, MEM_SMAPS, MEM_RSS };
static const char *const mem_src_names[] = {NULL, "smaps_rollup", "smaps", "rss"};

/* Whether schedstat gives the CPU wait: unknown until a member's file was read (or found
 * missing); WAIT_SCHEDSTAT once any was read, whatever was seen before. */
enum wait_src { WAIT_UNKNOWN, WAIT_SCHEDSTAT, WAIT_NO_FILE, WAIT_OFF };

struct proc_state {
    struct rt_collect_cfg cfg;
    int track;
    enum mem_src mem_src;
    enum wait_src wait_src;
    struct scan_ent *scan;
    size_t nscan, capscan;
    struct reap_group *groups;
    int *queue;
    size_t capaux;
    /* pid -> starttime (-1: listed but unreadable) of the previous and the current scan */
    struct rt_map listing_prev, listing_cur;
    int have_listing_prev;
    struct rt_map scan_idx; /* pid -> index in scan */
    struct rt_map prev_idx; /* (pid, starttime) -> index in prev->procs */
    struct rt_map prev_pid; /* pid -> index in prev->procs */
    /* corrections carried to the next sample: the reaper's stat was read before it reaped */
    struct pending *pend_prev, *pend_cur;
    size_t npend_prev, npend_cur, cappend;
    struct rt_map pend_idx; /* reaper key -> index in pend_prev */
    int64_t root_starttime;
    struct rt_buf buf, cbuf;
    int procfd; /* /proc, kept open */
    int walk;   /* 1: children files; 0: scan every /proc/PID/stat */
    struct rt_fd_budget fds;
    struct kept *kept;
    size_t nkept, capkept;
    struct rt_map kept_idx; /* pid -> index in kept */
    unsigned gen;           /* sample number */
    pid_t *pids;            /* pids listed in /proc this sample */
    size_t npids, cappids;
    int *wq; /* walk queue: scan indices */
    size_t capwq;
    int64_t scan_ticks, prev_scan_ticks; /* CLOCK_BOOTTIME in clock ticks at each scan, -1 */
    /* the last listing of /proc: its count (-1: none), and the kernel's count of forks since
     * boot and of tasks when it was taken (host_unchanged) */
    int listed_count;
    int64_t listed_forks, listed_tasks;
    struct rt_kfile loadavg;
    char loadavg_path[4096];
    struct rt_cgroup_procs *cg; /* record --cgroup: its processes are members too, or NULL */
    pid_t *cgpids;              /* the cgroup's processes this sample */
    size_t ncgpids, capcgpids;
    char dents[16384];
};

static uint64_t pid_key(pid_t pid)
{
    return (uint64_t)pid + 1;
}

/* Read /proc/PID/NAME into b through the descriptor *fdp: kept from an earlier sample, or
 * opened now (and kept, on a live system, within the budget). A kept descriptor that fails is
 * closed and not replaced by a fresh open: the pid may belong to another process by now.
 * stat, io and smaps_rollup come from one show() (RT_READ_SINGLE), children is a list of
 * records (RT_READ_RECORDS), cmdline is read from the process's memory in pieces. */
static ssize_t read_pidfile(struct proc_state *st, int *fdp, pid_t pid, const char *name,
                            enum rt_read_kind kind, struct rt_buf *b)
{
    if (fdp && *fdp >= 0) {
        ssize_t n = rt_pread(*fdp, b, kind);
        if (n < 0) {
            close(*fdp);
            *fdp = -1;
            st->fds.n--;
        }
        return n;
    }
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/%s", (int)pid, name);
    int fd = openat(st->procfd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rt_buf_reserve(b, 1);
        b->len = 0;
        b->p[0] = '\0';
        return -e;
    }
    ssize_t n = rt_pread(fd, b, kind);
    if (n >= 0 && fdp && st->fds.keep && st->fds.n < st->fds.max) {
        *fdp = fd;
        st->fds.n++;
    } else {
        close(fd);
    }
    return n;
}

static struct kept *kept_of(struct proc_state *st, const struct scan_ent *e)
{
    return e->kept >= 0 ? &st->kept[e->kept] : NULL;
}

/* The process of k is still the one its kept stat belongs to: that descriptor reads. */
static int kept_alive(const struct kept *k)
{
    char b[64];
    return k && k->stat_fd >= 0 && pread(k->stat_fd, b, sizeof(b), 0) > 0;
}

/* read_pidfile of a file kept in *fdp, for a member whose stat was read this sample. A
 * descriptor can fail while its process lives on: smaps_rollup (and io) pin the address space
 * they were opened on, and an exec replaces it (ESRCH). Then the file is opened again by path,
 * within this sample, and kept only when the process's own stat descriptor still reads after
 * the open: while that process lives its pid cannot be another's. */
static ssize_t read_kept(struct proc_state *st, struct kept *k, int *fdp, pid_t pid,
                         const char *name, enum rt_read_kind kind)
{
    int had = k && *fdp >= 0;
    ssize_t n = read_pidfile(st, k ? fdp : NULL, pid, name, kind, &st->buf);
    if (n >= 0 || !had || !kept_alive(k))
        return n;
    n = read_pidfile(st, fdp, pid, name, kind, &st->buf);
    if (n >= 0 && !kept_alive(k)) {
        /* gone (or replaced) between the two reads: what was read may be another's */
        if (*fdp >= 0) {
            close(*fdp);
            *fdp = -1;
            st->fds.n--;
        }
        return -ESRCH;
    }
    return n;
}

/* Whether e's process still lives (its stat reads): then a file of it that is missing is one
 * the kernel does not have, not one gone with the process. */
static int proc_alive(const struct proc_state *st, const struct scan_ent *e)
{
    const struct kept *k = e->kept >= 0 ? &st->kept[e->kept] : NULL;
    if (k && k->stat_fd >= 0)
        return kept_alive(k);
    char rel[64];
    snprintf(rel, sizeof(rel), "%d/stat", (int)e->pid);
    return faccessat(st->procfd, rel, F_OK, 0) == 0;
}

/* A member's PSS in KiB, RT_NA when unknown: from smaps_rollup, or where the kernel has none
 * (before 4.14) the sum of smaps (one Pss line per mapping, each rounded down to a KiB; the
 * kernel formats every mapping, so a process with many costs more: docs/portability.md). The
 * descriptor kept is the file the kernel has. Neither file for a live process: RSS only. */
static int64_t pss_kib(struct proc_state *st, struct scan_ent *e)
{
    struct kept *k = kept_of(st, e);
    int *fdp = k ? &k->smaps_fd : NULL;
    ssize_t n;
    if (st->mem_src == MEM_RSS)
        return RT_NA;
    if (st->mem_src != MEM_SMAPS) {
        n = read_kept(st, k, fdp, e->pid, "smaps_rollup", RT_READ_SINGLE);
        if (n > 0) {
            st->mem_src = MEM_ROLLUP;
            return rt_parse_smaps_pss(st->buf.p);
        }
        /* EACCES (other users, pid 1 here), ESRCH and empty (zombie), ENOENT (gone) */
        if (n != -ENOENT || st->mem_src == MEM_ROLLUP)
            return RT_NA;
    }
    n = read_kept(st, k, fdp, e->pid, "smaps", RT_READ_TO_EOF);
    if (n > 0) {
        st->mem_src = MEM_SMAPS;
        return rt_parse_smaps_pss(st->buf.p);
    }
    if (n == -ENOENT && st->mem_src == MEM_UNKNOWN && proc_alive(st, e))
        st->mem_src = MEM_RSS;
    return RT_NA;
}

static void read_io(struct proc_state *st, struct scan_ent *e, int64_t *rd, int64_t *wr)
{
    struct kept *k = kept_of(st, e);
    *rd = *wr = RT_NA;
    if (read_kept(st, k, k ? &k->io_fd : NULL, e->pid, "io", RT_READ_SINGLE) <= 0)
        return;
    rt_parse_pid_io(st->buf.p, rd, wr);
}

/* argv as a JSON array, malloc'd (the sample owns it), NULL when unreadable */
static char *read_cmdline(struct proc_state *st, pid_t pid)
{
    ssize_t n = read_pidfile(st, NULL, pid, "cmdline", RT_READ_TO_EOF, &st->buf);
    if (n <= 0)
        return NULL; /* kernel thread, zombie, or gone */
    struct rt_buf j = {0};
    rt_buf_append(&j, "[", 1);
    const char *p = st->buf.p, *end = st->buf.p + n;
    if (end[-1] == '\0')
        end--;
    for (int first = 1; p <= end; first = 0) {
        size_t l = strnlen(p, (size_t)(end - p));
        if (!first)
            rt_buf_append(&j, ",", 1);
        rt_buf_json_string(&j, p, l);
        p += l + 1;
    }
    rt_buf_append(&j, "]", 1);
    return j.p;
}

static void *proc_open(const struct rt_sysenv *env, const struct rt_collect_cfg *cfg)
{
    struct proc_state *st = xcalloc(1, sizeof(*st));
    st->cfg = *cfg;
    st->track = cfg->root_pid > 0;
    st->root_starttime = -1;
    st->scan_ticks = st->prev_scan_ticks = -1;
    st->listed_count = -1;
    if (rt_path(env, st->loadavg_path, sizeof(st->loadavg_path), "/proc/loadavg"))
        st->loadavg_path[0] = '\0';
    char path[4096];
    st->procfd = -1;
    if (!rt_path(env, path, sizeof(path), "/proc"))
        st->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (st->procfd < 0) {
        free(st);
        return NULL;
    }
    /* children files: CONFIG_PROC_CHILDREN (and not in a fixture tree that has none) */
    char rel[64];
    snprintf(rel, sizeof(rel), "self/task/%d/children", (int)getpid());
    st->walk = faccessat(st->procfd, rel, R_OK, 0) == 0;
    if (cfg->full_scan)
        st->walk = 0; /* the fallback, for comparisons */
    /* Kept descriptors only on the live /proc: a fixture tree's files are replaced on disk, not
     * generated by the kernel. Half the fd limit at most, and never more than 4096. */
    st->fds.keep = env->root[0] == '\0';
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        st->fds.max = rl.rlim_cur / 2 > 64 ? (int)(rl.rlim_cur / 2 - 64) : 0;
    else
        st->fds.max = 4096;
    if (st->fds.max > 4096)
        st->fds.max = 4096;
    rt_map_init(&st->kept_idx, 64);
    rt_map_init(&st->listing_prev, 256);
    rt_map_init(&st->listing_cur, 256);
    rt_map_init(&st->scan_idx, 256);
    rt_map_init(&st->prev_idx, 64);
    rt_map_init(&st->prev_pid, 64);
    rt_map_init(&st->pend_idx, 16);
    if (cfg->cgroup && st->track) {
        st->cg = xcalloc(1, sizeof(*st->cg));
        if (rt_cgroup_procs_open(env, cfg->cgroup, st->cg) != 0) {
            free(st->cg);
            st->cg = NULL;
        }
    }
    return st;
}

/* Whether the host's processes are still those of the last listing: no task was created since
 * (the kernel's count of forks since boot, /proc/stat's "processes", read by the cpu collector
 * just before) and there are as many tasks as then (/proc/loadavg's "running/total": none
 * exited). Both count every task of the machine, threads included, so in a pid namespace too
 * they move whenever its processes could have. Listing /proc costs a dentry lookup per entry
 * and a step per thread on the host (~17 % of a sample of the 5-process tree); a quiet node
 * forks seldom. (A birth in the few microseconds between the two readings that offsets an exit
 * of the interval leaves the count one sample late: the next sample sees the fork.) */
static int host_unchanged(struct proc_state *st, const struct rt_sample *cur)
{
    char text[128];
    int64_t tasks = -1;
    ssize_t n = -1;
    if (st->loadavg_path[0] && st->fds.keep) {
        n = rt_kfile_read_small(&st->loadavg, st->loadavg_path, text, sizeof(text));
    } else if (st->loadavg_path[0] && rt_read_file(st->loadavg_path, &st->buf) > 0) {
        n = snprintf(text, sizeof(text), "%s", st->buf.p);
    }
    const char *slash = n > 0 ? strchr(text, '/') : NULL;
    uint64_t v;
    if (slash && rt_parse_u64(slash + 1, &v) && v < (uint64_t)INT64_MAX)
        tasks = (int64_t)v;
    int same = st->listed_count >= 0 && tasks >= 0 && cur->forks_total != RT_NA &&
               tasks == st->listed_tasks && cur->forks_total == st->listed_forks;
    st->listed_tasks = tasks;
    st->listed_forks = cur->forks_total;
    return same;
}

/* List /proc: the process count, and with a tree to track, the listed pids (as LIST_UNKNOWN in
 * listing_cur until read); those of the last listing when the host's tasks have not changed.
 * -1 when /proc cannot be listed. */
static int list_proc(struct proc_state *st, const struct rt_sample *cur)
{
    rt_map_clear(&st->listing_cur);
    if (host_unchanged(st, cur)) {
        for (size_t i = 0; i < st->npids; i++)
            rt_map_put(&st->listing_cur, pid_key(st->pids[i]), LIST_UNKNOWN);
        return st->listed_count;
    }
    st->npids = 0;
    st->listed_count = -1;
    if (lseek(st->procfd, 0, SEEK_SET) < 0)
        return -1;
    int count = 0;
    for (;;) {
        ssize_t n = getdents64(st->procfd, st->dents, sizeof(st->dents));
        if (n < 0)
            return -1;
        if (n == 0)
            break;
        /* the kernel stops filling only at the end or when the next entry (at most 280 bytes)
         * does not fit: with that much room left this was the end, and the call that would
         * return 0 is saved */
        int last = st->fds.keep && (size_t)n + 512 < sizeof(st->dents); /* live /proc only */
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(st->dents + off);
            off += de->d_reclen;
            const char *c = de->d_name;
            long pid = 0;
            while (*c >= '0' && *c <= '9' && pid < 1L << 30)
                pid = pid * 10 + (*c++ - '0');
            if (*c || c == de->d_name || pid <= 0)
                continue;
            count++;
            if (!st->track)
                continue;
            if (st->npids == st->cappids) {
                st->cappids = st->cappids ? st->cappids * 2 : 256;
                st->pids = xrealloc(st->pids, st->cappids * sizeof(*st->pids));
            }
            st->pids[st->npids++] = (pid_t)pid;
            rt_map_put(&st->listing_cur, pid_key((pid_t)pid), LIST_UNKNOWN);
        }
        if (last)
            break;
    }
    st->listed_count = count;
    return count;
}

static struct kept *kept_get(struct proc_state *st, pid_t pid)
{
    int64_t i;
    if (rt_map_get(&st->kept_idx, pid_key(pid), &i) && st->kept[i].pid == pid)
        return &st->kept[i];
    if (st->nkept == st->capkept) {
        st->capkept = st->capkept ? st->capkept * 2 : 64;
        st->kept = xrealloc(st->kept, st->capkept * sizeof(*st->kept));
    }
    struct kept *k = &st->kept[st->nkept];
    *k = (struct kept){.pid = pid,
                       .starttime = -1,
                       .stat_fd = -1,
                       .io_fd = -1,
                       .smaps_fd = -1,
                       .children_fd = -1,
                       .task_fd = -1,
                       .sched_fd = -1,
                       .seen = st->gen};
    rt_map_put(&st->kept_idx, pid_key(pid), (int64_t)st->nkept++);
    return k;
}

/* Close what is kept of a process: it is gone, or the pid is another's now. */
static void kept_close_fds(struct proc_state *st, struct kept *k)
{
    int *fds[] = {&k->stat_fd, &k->io_fd, &k->smaps_fd, &k->children_fd, &k->task_fd, &k->sched_fd};
    for (size_t i = 0; i < RT_ARRAY_LEN(fds); i++)
        if (*fds[i] >= 0) {
            close(*fds[i]);
            *fds[i] = -1;
            st->fds.n--;
        }
    rt_threads_free(&k->threads, &st->fds);
    k->sched_gen = 0;
}

/* After a sample: close the files of processes that were not read in it. */
static void kept_sweep(struct proc_state *st)
{
    size_t j = 0;
    rt_map_clear(&st->kept_idx);
    for (size_t i = 0; i < st->nkept; i++) {
        if (st->kept[i].seen != st->gen) {
            kept_close_fds(st, &st->kept[i]);
            continue;
        }
        st->kept[j] = st->kept[i];
        rt_map_put(&st->kept_idx, pid_key(st->kept[j].pid), (int64_t)j);
        j++;
    }
    st->nkept = j;
}

static int scan_add(struct proc_state *st, pid_t pid, const struct rt_pid_stat *ps, int kept)
{
    rt_map_put(&st->listing_cur, pid_key(pid), ps->starttime);
    if (st->nscan == st->capscan) {
        st->capscan = st->capscan ? st->capscan * 2 : 256;
        st->scan = xrealloc(st->scan, st->capscan * sizeof(*st->scan));
    }
    struct scan_ent *e = &st->scan[st->nscan];
    e->pid = pid;
    e->st = *ps;
    e->tracked = e->counted = e->walked = e->checked = e->quiet = 0;
    e->wait = RT_NA;
    e->first_child = e->next_sibling = -1;
    e->kept = kept;
    rt_map_put(&st->scan_idx, pid_key(pid), (int64_t)st->nscan);
    return (int)st->nscan++;
}

/* Read one process's stat (once per sample): its index in scan, or -1 when it is gone or
 * unreadable (then LIST_GONE / LIST_UNKNOWN in listing_cur). With kept files (walk mode). */
static int read_member(struct proc_state *st, pid_t pid, int keep)
{
    int64_t i;
    if (pid <= 0)
        return -1;
    if (rt_map_get(&st->scan_idx, pid_key(pid), &i))
        return (int)i;
    struct kept *k = keep ? kept_get(st, pid) : NULL;
    ssize_t n;
    if (k && k->stat_fd >= 0) {
        n = read_pidfile(st, &k->stat_fd, pid, "stat", RT_READ_SINGLE, &st->buf);
        if (n < 0) {
            /* that process is gone; the pid may be another's now */
            kept_close_fds(st, k);
            k->starttime = -1;
            n = read_pidfile(st, &k->stat_fd, pid, "stat", RT_READ_SINGLE, &st->buf);
        }
    } else {
        n = read_pidfile(st, k ? &k->stat_fd : NULL, pid, "stat", RT_READ_SINGLE, &st->buf);
    }
    struct rt_pid_stat ps;
    if (n == -ENOENT || n == -ESRCH) {
        /* exited (and reaped) since the directory was listed, or never there: gone */
        rt_map_put(&st->listing_cur, pid_key(pid), LIST_GONE);
        return -1;
    }
    if (n <= 0 || rt_parse_pid_stat(st->buf.p, &ps)) {
        rt_map_put(&st->listing_cur, pid_key(pid), LIST_UNKNOWN); /* there, but unknown */
        return -1;
    }
    if (k) {
        if (k->starttime != ps.starttime) {
            /* another process than the one whose files are kept (a fixture rewritten, or the
             * stat just opened by path): the other files are not its */
            int sfd = k->stat_fd;
            k->stat_fd = -1;
            kept_close_fds(st, k);
            k->stat_fd = sfd;
            k->starttime = ps.starttime;
        }
        k->seen = st->gen;
    }
    return scan_add(st, pid, &ps, k ? (int)(k - st->kept) : -1);
}

static void wq_push(struct proc_state *st, size_t *qn, int idx)
{
    if (idx < 0 || st->scan[idx].walked)
        return;
    st->scan[idx].walked = 1;
    if (*qn == st->capwq) {
        st->capwq = st->capwq ? st->capwq * 2 : 64;
        st->wq = xrealloc(st->wq, st->capwq * sizeof(*st->wq));
    }
    st->wq[(*qn)++] = idx;
}

/* /proc/PID/task open and at its start: kept in k (on a live system, within the budget) or to
 * be closed by the caller when it is not k->task_fd; -1 when it cannot be read. */
static int task_dir(struct proc_state *st, pid_t pid, struct kept *k)
{
    int tfd = k ? k->task_fd : -1;
    if (tfd < 0) {
        char rel[64];
        snprintf(rel, sizeof(rel), "%d/task", (int)pid);
        tfd = openat(st->procfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (tfd >= 0 && k && st->fds.keep && st->fds.n < st->fds.max) {
            k->task_fd = tfd;
            st->fds.n++;
        }
    } else if (lseek(tfd, 0, SEEK_SET) < 0) {
        close(tfd);
        k->task_fd = -1;
        st->fds.n--;
        return -1;
    }
    return tfd;
}

/* Read TID/name of every thread of pid (the task directory stays open in k) into st->buf and
 * hand each one that reads to each(st, ud); a thread that exits meanwhile is passed over. -1
 * when the task directory cannot be read. */
static int each_thread_file(struct proc_state *st, pid_t pid, struct kept *k, const char *name,
                            enum rt_read_kind kind, void (*each)(struct proc_state *, void *),
                            void *ud)
{
    int tfd = task_dir(st, pid, k);
    if (tfd < 0)
        return -1;
    char dents[4096], rel[64];
    ssize_t n;
    while ((n = getdents64(tfd, dents, sizeof(dents))) > 0) {
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(dents + off);
            off += de->d_reclen;
            if (de->d_name[0] < '0' || de->d_name[0] > '9')
                continue;
            snprintf(rel, sizeof(rel), "%.32s/%s", de->d_name, name);
            int fd = openat(tfd, rel, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue; /* the thread exited (its children went to another thread) */
            if (rt_pread(fd, &st->buf, kind) > 0)
                each(st, ud);
            close(fd);
        }
    }
    if (!k || k->task_fd != tfd)
        close(tfd);
    return 0;
}

/* What a member's schedstat files said of the kernel (read: files read, off: of them "0 0 0",
 * known: with a figure): schedstat once any gave a figure; else "0 0 0" from a process that has
 * run (its ticks), or no file for one that lives, say why there is none. */
static void learn_wait_src(struct proc_state *st, const struct scan_ent *e, int read, int off,
                           int known)
{
    if (known)
        st->wait_src = WAIT_SCHEDSTAT;
    else if (st->wait_src == WAIT_SCHEDSTAT)
        return;
    else if (off && e->st.utime + e->st.stime > 0)
        st->wait_src = WAIT_OFF;
    else if (!read && st->wait_src == WAIT_UNKNOWN && proc_alive(st, e))
        st->wait_src = WAIT_NO_FILE;
}

/* Read through its threads' files (proc_threads.c): a process with several threads, or one that
 * had several (its wait goes on being counted the same way). */
static int by_threads(const struct proc_state *st, const struct scan_ent *e)
{
    const struct kept *k = e->kept >= 0 ? &st->kept[e->kept] : NULL;
    return e->st.threads > 1 || (k && k->threads);
}

/* A single-threaded member's schedstat, read once a sample, before its children and io: its
 * wait, and whether it is quiet. Quiet: its run time and its count of times put on a CPU are
 * those of the previous sample, and it is not running now. Such a process has not run since
 * then, so it cannot have forked, reaped, read or written: its children files and io are not
 * read again (their previous figures stand). The stat is still read every sample: memory can
 * be taken from a process that does not run. A kernel that does not account (0 0 0) leaves
 * every process unquiet. */
static void member_check(struct proc_state *st, struct scan_ent *e)
{
    if (e->checked || by_threads(st, e))
        return;
    e->checked = 1;
    e->quiet = 0;
    e->wait = RT_NA;
    struct kept *k = kept_of(st, e);
    ssize_t n = read_kept(st, k, k ? &k->sched_fd : NULL, e->pid, "schedstat", RT_READ_SINGLE);
    struct rt_schedstat ss;
    int rc = n > 0 ? rt_parse_schedstat(st->buf.p, &ss) : -1;
    if (n > 0 || n == -ENOENT)
        learn_wait_src(st, e, n > 0, rc == 1, rc == 0);
    if (rc != 0) {
        if (k)
            k->sched_gen = 0;
        return;
    }
    e->wait = ss.wait_ns;
    if (k) {
        e->quiet = k->sched_gen && k->sched_gen == st->gen - 1 && ss.run_ns == k->sched.run_ns &&
                   ss.slices == k->sched.slices && e->st.state != 'R';
        k->sched = ss;
        k->sched_gen = st->gen;
    }
}

/* The process's CPU clock, ns: its threads' run time, exited ones' included (the kernel's
 * process CPU clock of the pid, which any process may read: glibc's MAKE_PROCESS_CPUCLOCK,
 * CPUCLOCK_SCHED, without clock_getcpuclockid's extra check). A fixture tree's processes are
 * not live: their stat's utime + stime stand for it. -1 when it cannot be read. */
static int64_t proc_cpu_clock(const struct proc_state *st, const struct rt_sysenv *env,
                              const struct scan_ent *e)
{
    if (!st->fds.keep)
        return (e->st.utime + e->st.stime) * (1000000000 / env->clk_tck);
    struct timespec ts;
    clockid_t clk = (clockid_t)((~(unsigned)e->pid << 3) | 2u);
    if (clock_gettime(clk, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Time the process's threads waited, runnable, for a CPU (schedstat's second field, ns,
 * cumulative): a single-threaded process's own file; a many-threaded one's threads', read as
 * proc_threads.c says. RT_NA when unreadable (no CONFIG_SCHEDSTATS, not accounted). Says
 * whether the process is quiet: for a many-threaded one, its CPU clock has not moved (which
 * shows a thread running on another CPU only from its last scheduler tick: its io is then read
 * a sample late; its children are still read every sample). */
static int64_t sched_wait_ns(struct proc_state *st, const struct rt_sysenv *env, struct scan_ent *e)
{
    if (!by_threads(st, e)) {
        member_check(st, e);
        return e->wait;
    }
    struct kept *k = kept_of(st, e);
    int tfd = task_dir(st, e->pid, k);
    if (tfd < 0)
        return RT_NA;
    /* a member read without a kept entry (new, found by the scan) is read whole, this once */
    struct rt_threads *once = NULL, **tp = k ? &k->threads : &once;
    double iv = st->cfg.interval > 0 ? st->cfg.interval : 1.0;
    unsigned full_every = RT_THREADS_FULL_S / iv >= 1 ? (unsigned)(RT_THREADS_FULL_S / iv) : 1;
    struct rt_threads_seen seen;
    int64_t w = rt_threads_wait(tp, tfd, proc_cpu_clock(st, env, e), e->st.threads, st->gen,
                                full_every, &st->fds, &st->buf, &seen);
    rt_threads_free(&once, &st->fds);
    if (!k || k->task_fd != tfd)
        close(tfd);
    if (seen.tried)
        learn_wait_src(st, e, seen.read, seen.off, seen.known);
    e->quiet = seen.quiet;
    return w;
}

static void add_children(struct proc_state *st, void *ud)
{
    (void)ud;
    rt_buf_append(&st->cbuf, " ", 1);
    rt_buf_append(&st->cbuf, st->buf.p, st->buf.len);
}

/* The children of every thread of scan[idx], as text of space-separated pids in st->cbuf. */
static void read_children(struct proc_state *st, int idx)
{
    struct scan_ent *e = &st->scan[idx];
    pid_t pid = e->pid;
    struct kept *k = kept_of(st, e);
    st->cbuf.len = 0;
    rt_buf_reserve(&st->cbuf, 256);
    st->cbuf.p[0] = '\0';
    if (e->st.threads <= 1) {
        char rel[64];
        snprintf(rel, sizeof(rel), "task/%d/children", (int)pid);
        if (read_pidfile(st, k ? &k->children_fd : NULL, pid, rel, RT_READ_RECORDS, &st->cbuf) < 0)
            st->cbuf.len = 0;
        st->cbuf.p[st->cbuf.len] = '\0';
        return;
    }
    /* several threads: list them (the task directory stays open), read each one's children */
    each_thread_file(st, pid, k, "children", RT_READ_RECORDS, add_children, NULL);
}

/* The processes the tree is found from, each read with its files kept: the root, rtrack itself
 * in run mode (the job's orphans come back to it), and the previous sample's members that still
 * live; pushed onto the walk queue (qn). Returns how many children files walking down from them
 * would read: one per thread. */
static int64_t read_seeds(struct proc_state *st, const struct rt_sample *prev, size_t *qn)
{
    int ri = read_member(st, st->cfg.root_pid, 1);
    if (ri >= 0 && (st->root_starttime < 0 || st->scan[ri].st.starttime == st->root_starttime))
        wq_push(st, qn, ri);
    if (st->cfg.subreaper > 0)
        wq_push(st, qn, read_member(st, st->cfg.subreaper, 1));
    for (size_t i = 0; i < st->ncgpids; i++)
        wq_push(st, qn, read_member(st, st->cgpids[i], 1));
    for (int i = 0; prev && i < prev->nprocs; i++) {
        int mi = read_member(st, prev->procs[i].pid, 1);
        if (mi >= 0 && st->scan[mi].st.starttime == prev->procs[i].starttime)
            wq_push(st, qn, mi);
    }
    int64_t files = 0;
    for (size_t h = 0; h < *qn; h++)
        files += st->scan[st->wq[h]].st.threads;
    return files;
}

/* Walk mode: the children of every thread of each queued process, recursively. A quiet
 * single-threaded member (member_check) has no child it had not at the previous sample, whose
 * walk read them: its file is not read again (its children of then are seeds themselves). */
static void walk_tree(struct proc_state *st, size_t qn)
{
    for (size_t h = 0; h < qn; h++) {
        member_check(st, &st->scan[st->wq[h]]);
        if (st->scan[st->wq[h]].quiet)
            continue;
        read_children(st, st->wq[h]);
        for (const char *c = st->cbuf.p; *c;) {
            char *end;
            long pid = strtol(c, &end, 10);
            if (end == c)
                break;
            c = end;
            if (pid > 0 && pid < 1L << 30)
                wq_push(st, &qn, read_member(st, (pid_t)pid, 1));
        }
    }
}

/* Every other listed process's stat, for its ppid: where there are no children files, and where
 * the tree has more threads than the host has processes (each thread's children file would cost
 * more than each process's stat: 2 000 threads took ~26 ms a sample, 80 processes take ~1 ms). */
static void full_scan(struct proc_state *st)
{
    /* stat files kept open, one pread each next time, within half the budget: the rest is the
     * members' */
    for (size_t i = 0; i < st->npids; i++)
        read_member(st, st->pids[i], st->fds.n < st->fds.max / 2);
}

static int scan_find(const struct proc_state *st, pid_t pid, int64_t starttime)
{
    int64_t i;
    if (!rt_map_get(&st->scan_idx, pid_key(pid), &i))
        return -1;
    if (starttime >= 0 && st->scan[i].st.starttime != starttime)
        return -1;
    return (int)i;
}

/* Root, our orphans (run mode) and every process that was in the tree and still lives, then
 * all their descendants. */
static void mark_tree(struct proc_state *st, const struct rt_sample *prev)
{
    if (st->capaux < st->nscan) {
        st->capaux = st->nscan * 2;
        st->queue = xrealloc(st->queue, st->capaux * sizeof(*st->queue));
        st->groups = xrealloc(st->groups, st->capaux * sizeof(*st->groups));
    }
    for (size_t i = 0; i < st->nscan; i++) {
        struct scan_ent *e = &st->scan[i];
        int pi = scan_find(st, e->st.ppid, -1);
        if (pi >= 0 && (size_t)pi != i) {
            e->next_sibling = st->scan[pi].first_child;
            st->scan[pi].first_child = (int)i;
        }
    }
    size_t qn = 0;
#define SEED(idx)                                                                                  \
    do {                                                                                           \
        int s_ = (idx);                                                                            \
        if (s_ >= 0 && !st->scan[s_].tracked && st->scan[s_].pid != st->cfg.subreaper) {           \
            st->scan[s_].tracked = 1;                                                              \
            st->queue[qn++] = s_;                                                                  \
        }                                                                                          \
    } while (0)
    int ri = scan_find(st, st->cfg.root_pid, st->root_starttime);
    if (ri >= 0 && st->root_starttime < 0)
        st->root_starttime = st->scan[ri].st.starttime;
    SEED(ri);
    if (st->cfg.subreaper > 0) {
        int si = scan_find(st, st->cfg.subreaper, -1);
        for (int c = si >= 0 ? st->scan[si].first_child : -1; c >= 0; c = st->scan[c].next_sibling)
            SEED(c);
    }
    for (size_t i = 0; i < st->ncgpids; i++)
        SEED(scan_find(st, st->cgpids[i], -1));
    for (int i = 0; prev && i < prev->nprocs; i++)
        SEED(scan_find(st, prev->procs[i].pid, prev->procs[i].starttime));
    for (size_t h = 0; h < qn; h++)
        for (int c = st->scan[st->queue[h]].first_child; c >= 0; c = st->scan[c].next_sibling)
            SEED(c);
#undef SEED
}

static int64_t nz(int64_t v)
{
    return v == RT_NA ? 0 : v;
}

/* What the phases of one sample share. */
struct proc_pass {
    const struct rt_sample *prev; /* the previous sample, NULL when it had no tree */
    /* What deltas are taken against: prev, or NULL in run mode's first interval. rtrack started
     * the job just before the baseline, so what the tree did before the baseline was read
     * belongs to the run too (a fast writer had 20 MB of 50 out by then): that interval counts
     * every process from zero, as if born in it (from_zero). */
    const struct rt_sample *base;
    int from_zero;
    /* the tree's sums, gathered row by row */
    int64_t tot_u, tot_s, pss, rss, live;
    int root_live, pss_known; /* pss_known: members whose smaps_rollup was read */
    double wait_s;            /* the members' CPU wait in the interval, s */
    int wait_known;           /* members with a wait figure */
};

/* A fixture tree's root may be another directory each sample, so its /proc is opened again
 * every time; the live /proc stays open. -1 when it cannot be opened. */
static int proc_reopen(struct proc_state *st, const struct rt_sysenv *env)
{
    if (st->fds.keep)
        return 0;
    char path[4096];
    if (st->procfd >= 0)
        close(st->procfd);
    st->procfd = -1;
    if (!rt_path(env, path, sizeof(path), "/proc"))
        st->procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return st->procfd < 0 ? -1 : 0;
}

/* record --cgroup: the cgroup's processes now (never rtrack itself, were it left in the cgroup:
 * its own sampling is no part of the job's work). */
static void cgroup_members(struct proc_state *st)
{
    st->ncgpids = 0;
    if (!st->cg)
        return;
    size_t n = rt_cgroup_procs_list(st->cg, &st->cgpids, &st->capcgpids);
    pid_t self = getpid();
    for (size_t i = 0; i < n; i++)
        if (st->cgpids[i] != self)
            st->cgpids[st->ncgpids++] = st->cgpids[i];
}

/* Who is in the tree now. The boot clock is read first: a process that started after the
 * previous scan's clock is known to be born since, even when that scan could not read it. Every
 * member's stat is read once (down the children files, or the full scan), the previous sample's
 * rows are indexed by key and by pid, and the members are marked. */
static void proc_find_tree(struct proc_state *st, const struct rt_sysenv *env,
                           const struct rt_sample *prev)
{
    st->prev_scan_ticks = st->scan_ticks;
    st->scan_ticks = -1;
    struct timespec bt;
    if (env->root[0] == '\0' && clock_gettime(CLOCK_BOOTTIME, &bt) == 0)
        st->scan_ticks =
            (int64_t)bt.tv_sec * env->clk_tck + (int64_t)bt.tv_nsec / (1000000000 / env->clk_tck);
    rt_map_clear(&st->scan_idx);
    st->nscan = 0;
    size_t qn = 0;
    cgroup_members(st);
    int64_t files = read_seeds(st, prev, &qn);
    if (st->walk && files <= (int64_t)st->npids)
        walk_tree(st, qn);
    else
        full_scan(st);
    rt_map_clear(&st->prev_idx);
    rt_map_clear(&st->prev_pid);
    for (int i = 0; prev && i < prev->nprocs; i++) {
        rt_map_put(&st->prev_idx, rt_proc_key(prev->procs[i].pid, prev->procs[i].starttime), i);
        rt_map_put(&st->prev_pid, pid_key(prev->procs[i].pid), i);
    }
    mark_tree(st, prev);
}

/* A member's row: its stat, Pss and io, and its name and command line when it is new or
 * renamed. Returns its index in the previous sample, -1 when it was not there. */
static int proc_fill_row(struct proc_state *st, const struct rt_sysenv *env, struct scan_ent *e,
                         struct rt_proc_sample *p, const struct rt_sample *prev)
{
    p->pid = e->pid;
    p->ppid = e->st.ppid;
    p->starttime = e->st.starttime;
    p->state = e->st.state;
    p->threads = e->st.threads;
    p->utime = e->st.utime;
    p->stime = e->st.stime;
    p->cutime = e->st.cutime;
    p->cstime = e->st.cstime;
    p->rss_kib = e->st.rss_pages * env->page_size / 1024;
    p->pss_kib = pss_kib(st, e);
    int64_t pidx;
    const struct rt_proc_sample *seen = NULL; /* its row in the previous sample */
    if (prev && rt_map_get(&st->prev_idx, rt_proc_key(p->pid, p->starttime), &pidx))
        seen = &prev->procs[pidx];
    /* a quiet member (sched_wait_ns says) has read and written nothing since the previous
     * sample */
    p->sched_wait_ns = sched_wait_ns(st, env, e);
    if (e->quiet && seen) {
        p->read_total = seen->read_total;
        p->write_total = seen->write_total;
    } else {
        read_io(st, e, &p->read_total, &p->write_total);
    }
    memcpy(p->comm, e->st.comm, sizeof(p->comm));
    p->cpu_utime_s = p->cpu_stime_s = p->cpu_wait_s = RT_NAN;
    p->read_bytes = p->write_bytes = RT_NA;
    p->cmdline_json = NULL;

    p->first_seen = seen == NULL;
    /* A child seen between its fork and its exec still has its parent's name and command
     * line: when the name changes, both are read again (and the process row updated). One
     * seen inside its exec has the new name but no arguments yet (the kernel sets them
     * last): a first command line that came back empty is read once more. */
    p->renamed =
        seen && (strcmp(seen->comm, p->comm) != 0 || (seen->first_seen && !seen->cmdline_json));
    if (p->first_seen || p->renamed)
        p->cmdline_json = read_cmdline(st, p->pid);
    return seen ? (int)pidx : -1;
}

/* Born since the previous scan (for a process new to the tree): not listed then, or listed as
 * another process, or listed but unreadable and started after that scan's clock tick. */
static int proc_born(const struct proc_state *st, const struct rt_proc_sample *p)
{
    int64_t was;
    if (!rt_map_get(&st->listing_prev, pid_key(p->pid), &was) || was == LIST_GONE)
        return 1; /* not there at the previous scan */
    if (was >= 0)
        return was != p->starttime; /* there, but another process */
    return st->prev_scan_ticks >= 0 && p->starttime >= st->prev_scan_ticks;
}

/* A member's own delta over the interval (before the exited-children correction): against
 * its previous row, or from zero when it was born in the interval. One that was there before
 * but not in the tree's previous sample has none (its past is not the interval's). */
static void proc_own_delta(const struct proc_state *st, struct scan_ent *e,
                           const struct rt_proc_sample *p, const struct rt_proc_sample *pp,
                           const struct proc_pass *ps)
{
    int born = ps->from_zero || (ps->base && st->have_listing_prev && !pp && proc_born(st, p));
    e->du = e->ds = e->dr = e->dw = RT_NA;
    if (!pp && !born)
        return;
    /* utime+cutime: children born and reaped between two samples count through their parent;
     * the correction takes back what was already counted */
    e->counted = 1;
    int64_t u = p->utime + p->cutime - (pp ? pp->utime + pp->cutime : 0);
    int64_t s = p->stime + p->cstime - (pp ? pp->stime + pp->cstime : 0);
    e->du = u > 0 ? u : 0;
    e->ds = s > 0 ? s : 0;
    int64_t r0 = pp ? pp->read_total : 0, w0 = pp ? pp->write_total : 0;
    if (p->read_total != RT_NA && r0 != RT_NA)
        e->dr = p->read_total > r0 ? p->read_total - r0 : 0;
    if (p->write_total != RT_NA && w0 != RT_NA)
        e->dw = p->write_total > w0 ? p->write_total - w0 : 0;
}

/* One row per member, with its own delta; the tree's cumulative sums and its live processes
 * are gathered on the way. */
static void proc_fill_rows(struct proc_state *st, const struct rt_sysenv *env,
                           struct rt_sample *cur, struct proc_pass *ps)
{
    cur->nprocs = 0;
    for (size_t i = 0; i < st->nscan; i++) {
        struct scan_ent *e = &st->scan[i];
        if (!e->tracked)
            continue;
        struct rt_proc_sample *p = RT_PUSH(cur->procs, cur->nprocs, cur->procs_cap);
        int pi = proc_fill_row(st, env, e, p, ps->prev);
        const struct rt_proc_sample *pp = ps->base && pi >= 0 ? &ps->base->procs[pi] : NULL;
        e->prev_i = pp ? pi : -1;
        proc_own_delta(st, e, p, pp, ps);
        /* waiting for a CPU: against its previous row, or all of it when born in the interval
         * (never taken back on a reap: the kernel does not fold it into the parent) */
        int64_t w0 = pp ? pp->sched_wait_ns : 0;
        if (e->counted && p->sched_wait_ns != RT_NA && w0 != RT_NA) {
            p->cpu_wait_s = p->sched_wait_ns > w0 ? (double)(p->sched_wait_ns - w0) / 1e9 : 0.0;
            ps->wait_s += p->cpu_wait_s;
            ps->wait_known++;
        }
        ps->tot_u = rt_sat_add(ps->tot_u, p->utime + p->cutime);
        ps->tot_s = rt_sat_add(ps->tot_s, p->stime + p->cstime);
        ps->pss = rt_sat_add(ps->pss, nz(p->pss_kib));
        ps->pss_known += p->pss_kib != RT_NA;
        ps->rss = rt_sat_add(ps->rss, p->rss_kib);
        if (p->state != 'Z' && p->state != 'X') {
            ps->live++;
            if (p->pid == st->cfg.root_pid)
                ps->root_live = 1;
        }
    }
}

/* The members of the previous sample that are gone, grouped by the nearest present ancestor in
 * the tree: the process whose cutime and io absorbed them when it reaped them. Only an ancestor
 * whose own delta was counted matters (it is what would count them twice). */
static void proc_group_reaped(struct proc_state *st, const struct rt_sample *prev)
{
    for (size_t i = 0; i < st->nscan; i++)
        st->groups[i] = (struct reap_group){0, 0, 0, 0};
    for (int i = 0; i < prev->nprocs; i++) {
        const struct rt_proc_sample *g = &prev->procs[i];
        int64_t now;
        if (rt_map_get(&st->listing_cur, pid_key(g->pid), &now) &&
            (now == LIST_UNKNOWN || now == g->starttime))
            continue; /* still there (or unreadable this time: unknown, not gone) */
        pid_t a = g->ppid;
        int ai = -1;
        for (int hops = 0; hops < 4096 && a > 0 && a != st->cfg.subreaper; hops++) {
            int si = scan_find(st, a, -1);
            int64_t pi;
            if (si >= 0) {
                /* present: it reaped the child */
                if (st->scan[si].tracked && st->scan[si].counted)
                    ai = si;
                break;
            }
            /* the ancestor is gone too: follow its last known parent */
            if (!rt_map_get(&st->prev_pid, pid_key(a), &pi))
                break;
            a = prev->procs[pi].ppid;
        }
        if (ai < 0)
            continue;
        struct reap_group *rg = &st->groups[ai];
        rg->u = rt_sat_add(rg->u, g->utime + g->cutime);
        rg->s = rt_sat_add(rg->s, g->stime + g->cstime);
        rg->r = rt_sat_add(rg->r, nz(g->read_total));
        rg->w = rt_sat_add(rg->w, nz(g->write_total));
    }
}

/* Take each group back from its ancestor's delta, capped by how much that ancestor's counters
 * actually grew, so the process rows add up to the tree's total exactly. A scan is not atomic:
 * when the parent's stat was read before it reaped the child, the child's lifetime shows up in
 * the parent's cutime only in the next sample. What could not be taken back now is carried to
 * the next sample (pend_cur), once. */
static void proc_take_back(struct proc_state *st, const struct rt_sample *cur,
                           const struct rt_sample *prev)
{
    for (int i = 0; i < cur->nprocs; i++) {
        const struct rt_proc_sample *p = &cur->procs[i];
        int si = scan_find(st, p->pid, p->starttime);
        struct scan_ent *e = &st->scan[si];
        struct reap_group now = st->groups[si], rg = now;
        int64_t pi;
        if (rt_map_get(&st->pend_idx, rt_proc_key(p->pid, p->starttime), &pi)) {
            rg.u = rt_sat_add(rg.u, st->pend_prev[pi].g.u);
            rg.s = rt_sat_add(rg.s, st->pend_prev[pi].g.s);
            rg.r = rt_sat_add(rg.r, st->pend_prev[pi].g.r);
            rg.w = rt_sat_add(rg.w, st->pend_prev[pi].g.w);
        }
        if (!e->counted || (!rg.u && !rg.s && !rg.r && !rg.w))
            continue;
        const struct rt_proc_sample *pp = e->prev_i >= 0 ? &prev->procs[e->prev_i] : NULL;
        int64_t gu = p->cutime - (pp ? pp->cutime : 0);
        int64_t gs = p->cstime - (pp ? pp->cstime : 0);
        struct reap_group take = {
            rg.u < gu ? rg.u : (gu > 0 ? gu : 0),
            rg.s < gs ? rg.s : (gs > 0 ? gs : 0),
            e->dr == RT_NA ? 0 : (rg.r < e->dr ? rg.r : e->dr),
            e->dw == RT_NA ? 0 : (rg.w < e->dw ? rg.w : e->dw),
        };
        e->du -= take.u;
        e->ds -= take.s;
        if (e->dr != RT_NA)
            e->dr -= take.r;
        if (e->dw != RT_NA)
            e->dw -= take.w;
        /* only this sample's part of the remainder is carried, and only once */
        struct reap_group left = {
            rg.u - take.u < now.u ? rg.u - take.u : now.u,
            rg.s - take.s < now.s ? rg.s - take.s : now.s,
            rg.r - take.r < now.r ? rg.r - take.r : now.r,
            rg.w - take.w < now.w ? rg.w - take.w : now.w,
        };
        if (left.u > 0 || left.s > 0 || left.r > 0 || left.w > 0) {
            if (st->npend_cur == st->cappend) {
                st->cappend = st->cappend ? st->cappend * 2 : 16;
                st->pend_cur = xrealloc(st->pend_cur, st->cappend * sizeof(*st->pend_cur));
                st->pend_prev = xrealloc(st->pend_prev, st->cappend * sizeof(*st->pend_prev));
            }
            st->pend_cur[st->npend_cur++] =
                (struct pending){rt_proc_key(p->pid, p->starttime), left};
        }
    }
}

/* The exited-children correction (see the top of this file): reaped members' lifetimes, which
 * their reaper's cutime and io now hold again, are taken back from the reaper's delta. Without
 * deltas (the baseline, run mode's first interval) there is nothing to take back from, and
 * nothing is carried. */
static void proc_correct_exited(struct proc_state *st, const struct rt_sample *cur,
                                const struct proc_pass *ps)
{
    st->npend_cur = 0;
    if (ps->base) {
        proc_group_reaped(st, ps->base);
        proc_take_back(st, cur, ps->base);
    }
    struct pending *tp = st->pend_prev;
    st->pend_prev = st->pend_cur;
    st->pend_cur = tp;
    st->npend_prev = st->npend_cur;
    rt_map_clear(&st->pend_idx);
    for (size_t i = 0; i < st->npend_prev; i++)
        rt_map_put(&st->pend_idx, st->pend_prev[i].key, (int64_t)i);
}

/* The corrected deltas into the rows, and the tree's totals into the sample. */
static void proc_sum_tree(const struct proc_state *st, const struct rt_sysenv *env,
                          struct rt_sample *cur, const struct proc_pass *ps)
{
    double tck = (double)env->clk_tck;
    int64_t du = 0, ds = 0, dr = 0, dw = 0;
    int dr_known = 0, dw_known = 0; /* members whose io was read in both samples */
    for (int i = 0; i < cur->nprocs; i++) {
        struct rt_proc_sample *p = &cur->procs[i];
        const struct scan_ent *e = &st->scan[scan_find(st, p->pid, p->starttime)];
        if (!e->counted)
            continue;
        p->cpu_utime_s = (double)e->du / tck;
        p->cpu_stime_s = (double)e->ds / tck;
        p->read_bytes = e->dr;
        p->write_bytes = e->dw;
        du = rt_sat_add(du, e->du);
        ds = rt_sat_add(ds, e->ds);
        dr = rt_sat_add(dr, nz(e->dr));
        dw = rt_sat_add(dw, nz(e->dw));
        dr_known += e->dr != RT_NA;
        dw_known += e->dw != RT_NA;
    }

    cur->has_tree = 1;
    cur->root_pid = st->cfg.root_pid;
    cur->proc_memory_source = mem_src_names[st->mem_src];
    cur->cpu_wait_source = st->wait_src == WAIT_SCHEDSTAT ? "schedstat" : NULL;
    cur->cpu_wait_missing = st->wait_src == WAIT_NO_FILE ? "no-schedstat"
                            : st->wait_src == WAIT_OFF   ? "schedstat-off"
                                                         : NULL;
    cur->proc_count = ps->live;
    cur->proc_children = ps->live - ps->root_live;
    /* A tree none of whose members' memory could be read (run's final sample: the job is a
     * zombie; another user's processes) has unknown memory, not none: stored as 0 it would read
     * as a tree that used nothing and drag every mean down (the Python and Rust layouts print
     * their 0 still: export views). */
    cur->proc_pss_kib = ps->pss_known ? ps->pss : RT_NA;
    cur->proc_rss_kib = ps->live ? ps->rss : RT_NA;
    cur->proc_cpu_wait_s = ps->prev && ps->wait_known ? ps->wait_s : RT_NAN;
    cur->proc_utime_total = ps->tot_u;
    cur->proc_stime_total = ps->tot_s;
    if (ps->prev) {
        /* cpu_usage in the Python reference's operation order (cumulative seconds as doubles,
         * then the difference), so a stable tree gives its 4-decimal value bit for bit */
        double ub = (double)ps->tot_u / tck, ua = (double)(ps->tot_u - du) / tck;
        double sb = (double)ps->tot_s / tck, sa = (double)(ps->tot_s - ds) / tck;
        cur->proc_utime_s = (double)du / tck;
        cur->proc_stime_s = (double)ds / tck;
        if (cur->dt > 0) {
            double r = ((ub + sb) - (ua + sa)) / cur->dt;
            cur->proc_cpu_usage = rt_cores_bound(r, cur->ncores);
        }
        /* none of the members' io readable (a kernel without CONFIG_TASK_IO_ACCOUNTING,
         * another user's processes): unknown, as the tree's memory */
        cur->proc_read_bytes = dr_known ? dr : RT_NA;
        cur->proc_write_bytes = dw_known ? dw : RT_NA;
    }
}

/* The process count (every pid in /proc), then with a tree to track: find it, fill its rows
 * with their own deltas, correct them for exited children, sum the tree. */
static void proc_collect(void *state, const struct rt_sysenv *env, struct rt_sample *cur,
                         const struct rt_sample *prev)
{
    struct proc_state *st = state;
    st->gen++;
    if (proc_reopen(st, env) != 0)
        return;
    int count = list_proc(st, cur);
    if (count < 0)
        return;
    cur->processes = count;
    if (!st->track)
        return;

    struct proc_pass ps = {0};
    ps.prev = prev && prev->has_tree ? prev : NULL;
    ps.from_zero = ps.prev && ps.prev->kind == RT_SAMPLE_BASELINE && st->cfg.subreaper > 0;
    ps.base = ps.from_zero ? NULL : ps.prev;
    proc_find_tree(st, env, ps.prev);
    proc_fill_rows(st, env, cur, &ps);
    proc_correct_exited(st, cur, &ps);
    proc_sum_tree(st, env, cur, &ps);

    /* last: the sweep compacts st->kept, and the scan entries hold indices into it */
    kept_sweep(st);
    struct rt_map t = st->listing_prev;
    st->listing_prev = st->listing_cur;
    st->listing_cur = t;
    st->have_listing_prev = 1;
}

static void proc_close(void *state)
{
    struct proc_state *st = state;
    free(st->scan);
    free(st->queue);
    free(st->groups);
    rt_map_free(&st->listing_prev);
    rt_map_free(&st->listing_cur);
    rt_map_free(&st->scan_idx);
    rt_map_free(&st->prev_idx);
    rt_map_free(&st->prev_pid);
    rt_map_free(&st->pend_idx);
    rt_kfile_close(&st->loadavg);
    free(st->pend_prev);
    free(st->pend_cur);
    rt_buf_free(&st->buf);
    rt_buf_free(&st->cbuf);
    for (size_t i = 0; i < st->nkept; i++)
        kept_close_fds(st, &st->kept[i]);
    free(st->kept);
    rt_map_free(&st->kept_idx);
    free(st->pids);
    free(st->wq);
    free(st->cg);
    free(st->cgpids);
    if (st->procfd >= 0)
        close(st->procfd);
    free(st);
}

const struct rt_collector rt_collector_proc = {"proc", proc_open, proc_collect, proc_close};
