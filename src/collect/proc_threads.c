/* proc_threads.c - the CPU wait of a many-threaded process without reading every thread's
 * schedstat every sample (issue 32: 2 000 threads cost ~50 ms a sample, half of it these files).
 *
 * The kernel keeps the wait for a CPU per thread (schedstat's second field, run_delay). What
 * sums it over a thread group is taskstats by TGID, which needs CAP_NET_ADMIN (an ordinary user
 * gets EPERM); a job's cgroup has cpu.pressure, a share of wall time, not a sum over threads. So
 * the threads' files it is, read only as far as they can have changed:
 *  - a thread's run_delay grows when the thread is put on a CPU (the wait since it was queued is
 *    added then) or taken off a run queue it waited on (a migration), never while it sleeps,
 *    and its run time (the first field) grows only while it runs;
 *  - the process's CPU clock (clock_gettime of the pid's CPU clock: the run time of all its
 *    threads, exited ones' included; one system call, allowed for any process) says whether and
 *    how much they ran.
 * Each sample the process is read:
 *  - quiet: its clock has not moved since the previous sample: no thread ran, so no thread's
 *    wait grew; nothing is read. An idle pool of 10 000 threads costs one clock reading.
 *  - hot threads, those whose run time grew at a reading of the last HOT_SAMPLES samples, are
 *    read every sample the process ran (their files kept open, within the budget);
 *  - every thread (the task directory listed: new threads found, gone ones dropped) at the first
 *    reading, when the thread count changed, when the clock grew more than
 *    RT_THREADS_RESIDUE_NS beyond what the hot threads' run times account for since the last
 *    such reading (a cold thread woke up, or a new one ran), and at least every full_every
 *    samples.
 * The price in accuracy, said in docs/performance.md and docs/schema.md: a thread idle at its
 * last reading that then ran for less than RT_THREADS_RESIDUE_NS in all has its wait counted at
 * the next reading of every thread (at most RT_THREADS_FULL_S later), not in the interval it
 * waited in: the run's total and the demand's mean stay, a sample's figure moves; one that
 * exits before then takes that part with it. The clock sees a thread running on another CPU up
 * to its last scheduler tick, so a thread that began to run less than a tick before the reading
 * can be read one sample late.
 *
 * The wait is counted thread by thread: the first reading's sum, then each thread's growth. A
 * sum over the live threads (before) dropped by an exiting thread's whole wait, which took the
 * other threads' growth of that interval with it (a negative growth reads as 0). */
#include "proc_threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

/* A thread whose run time grew at a reading within this many samples is hot: read every
 * sample the process runs. A pool's busy workers stay hot; one that ran once cools down. */
#define HOT_SAMPLES 8u

struct thr {
    pid_t tid;
    int fd;            /* its schedstat kept open while it is hot, -1 */
    int64_t run, wait; /* at its last reading, ns; wait RT_NA before a figure */
    unsigned read_gen; /* the sample of its last reading, 0 never */
    unsigned ran_gen;  /* the sample of the last reading that saw its run time grow */
    unsigned listed;   /* the sample of the last listing that had it */
    int gone;          /* its file is gone: exited */
};

struct rt_threads {
    struct thr *t;
    size_t n, cap;
    struct rt_map idx;  /* tid -> index in t */
    int64_t clock;      /* the process's CPU clock at the previous sample, -1 */
    int64_t clock_full; /* at the last reading of every thread */
    int64_t run_sum;    /* every thread's run time at its last reading, gone ones' included */
    int64_t run_full;   /* run_sum after the last reading of every thread */
    int64_t wait;       /* the wait counted so far */
    int known;          /* some thread's file gave a figure */
    int64_t threads;    /* the stat's thread count at the last reading of every thread */
    unsigned full_gen;  /* the sample of that reading, 0 never */
};

static void thr_close(struct thr *h, struct rt_fd_budget *fds)
{
    if (h->fd >= 0) {
        close(h->fd);
        h->fd = -1;
        fds->n--;
    }
}

/* Read h's schedstat and count its growth. 0 when read (with a figure or not); -1 when its file
 * is gone (the thread exited); -2 when it could not be read this time. */
static int thr_read(struct rt_threads *T, struct thr *h, int task_fd, unsigned gen,
                    struct rt_fd_budget *fds, struct rt_buf *buf, struct rt_threads_seen *seen)
{
    ssize_t n;
    int fd = h->fd;
    seen->tried = 1;
    if (fd < 0) {
        char rel[32];
        snprintf(rel, sizeof(rel), "%d/schedstat", (int)h->tid);
        fd = openat(task_fd, rel, O_RDONLY | O_CLOEXEC);
        n = fd < 0 ? -errno : rt_pread(fd, buf, RT_READ_SINGLE);
    } else {
        n = rt_pread(fd, buf, RT_READ_SINGLE);
    }
    if (n <= 0) {
        if (fd >= 0 && fd != h->fd)
            close(fd);
        thr_close(h, fds);
        if (n == -ENOENT || n == -ESRCH || n == 0) {
            h->gone = 1;
            return -1;
        }
        return -2;
    }
    /* Its run time grew since its last reading: it ran. One new since the table's first
     * reading was born since, so it ran recently too; at the first reading nothing says who
     * ran lately (the next reading of every thread finds the busy ones). */
    int was_read = h->read_gen != 0, fresh = !was_read && T->full_gen != 0;
    h->read_gen = gen;
    seen->read++;
    struct rt_schedstat s;
    int rc = rt_parse_schedstat(buf->p, &s);
    if (rc == 0) {
        seen->known++;
        if (s.run_ns < h->run) {
            /* less than it had run: another thread with the tid of one that exited */
            T->run_sum -= h->run;
            h->run = 0;
            h->wait = RT_NA;
        }
        if (s.run_ns > h->run && (was_read || fresh))
            h->ran_gen = gen;
        T->run_sum += s.run_ns - h->run;
        int64_t grew = h->wait == RT_NA ? s.wait_ns : s.wait_ns > h->wait ? s.wait_ns - h->wait : 0;
        T->wait = rt_sat_add(T->wait, grew);
        T->known = 1;
        h->run = s.run_ns;
        h->wait = s.wait_ns;
    } else {
        seen->off += rc == 1;
    }
    int hot = h->ran_gen && gen - h->ran_gen < HOT_SAMPLES;
    if (fd != h->fd) {
        if (hot && fds->keep && fds->n < fds->max) {
            h->fd = fd;
            fds->n++;
        } else {
            close(fd);
        }
    } else if (!hot) {
        thr_close(h, fds);
    }
    return 0;
}

static struct thr *thr_find_or_add(struct rt_threads *T, pid_t tid)
{
    int64_t i;
    if (rt_map_get(&T->idx, (uint64_t)tid, &i))
        return &T->t[i];
    struct thr *h = RT_PUSH(T->t, T->n, T->cap);
    *h = (struct thr){.tid = tid, .fd = -1, .wait = RT_NA};
    rt_map_put(&T->idx, (uint64_t)tid, (int64_t)(T->n - 1));
    return h;
}

/* Every thread: list the task directory, read each thread not read yet this sample, drop the
 * ones gone. -1 when the directory cannot be read (the table is left as it was). */
static int read_all(struct rt_threads *T, int task_fd, unsigned gen, struct rt_fd_budget *fds,
                    struct rt_buf *buf, struct rt_threads_seen *seen)
{
    if (lseek(task_fd, 0, SEEK_SET) < 0)
        return -1;
    char dents[16384];
    ssize_t n;
    while ((n = getdents64(task_fd, dents, sizeof(dents))) > 0) {
        for (ssize_t off = 0; off < n;) {
            const struct dirent64 *de = (const struct dirent64 *)(dents + off);
            off += de->d_reclen;
            char *end;
            long tid = strtol(de->d_name, &end, 10);
            if (*end || end == de->d_name || tid <= 0 || tid >= 1L << 30)
                continue;
            struct thr *h = thr_find_or_add(T, (pid_t)tid);
            h->listed = gen;
            if (h->read_gen != gen && !h->gone)
                thr_read(T, h, task_fd, gen, fds, buf, seen);
        }
    }
    if (n < 0)
        return -1;
    /* the threads not listed, or whose file is gone, have exited: dropped (their run time stays
     * in run_sum, as it stays in the process's clock) */
    size_t j = 0;
    rt_map_clear(&T->idx);
    for (size_t i = 0; i < T->n; i++) {
        struct thr *h = &T->t[i];
        if (h->gone || h->listed != gen) {
            thr_close(h, fds);
            continue;
        }
        T->t[j] = *h;
        rt_map_put(&T->idx, (uint64_t)T->t[j].tid, (int64_t)j);
        j++;
    }
    T->n = j;
    return 0;
}

int64_t rt_threads_wait(struct rt_threads **tp, int task_fd, int64_t clock_ns, int64_t threads,
                        unsigned gen, unsigned full_every, struct rt_fd_budget *fds,
                        struct rt_buf *buf, struct rt_threads_seen *seen)
{
    *seen = (struct rt_threads_seen){0, 0, 0, 0, 0};
    if (!*tp) {
        *tp = xcalloc(1, sizeof(**tp));
        rt_map_init(&(*tp)->idx, 64);
        (*tp)->clock = (*tp)->clock_full = -1;
    }
    struct rt_threads *T = *tp;
    /* quiet: none of its threads ran since the previous sample, so none waited */
    if (T->full_gen && clock_ns >= 0 && clock_ns == T->clock) {
        seen->quiet = 1;
        return T->known ? T->wait : RT_NA;
    }
    for (size_t i = 0; T->full_gen && i < T->n; i++) {
        struct thr *h = &T->t[i];
        if (!h->gone && h->ran_gen && gen - h->ran_gen < HOT_SAMPLES)
            thr_read(T, h, task_fd, gen, fds, buf, seen);
        else
            thr_close(h, fds); /* cooled down: its descriptor goes back to the budget */
    }
    /* what the clock counts beyond the hot threads' growth since every thread was read: the
     * cold threads' and new threads' run time (give or take a tick of a running thread) */
    int64_t residue = clock_ns - T->clock_full - (T->run_sum - T->run_full);
    if (!T->full_gen || clock_ns < 0 || T->clock_full < 0 || threads != T->threads ||
        residue > RT_THREADS_RESIDUE_NS || gen - T->full_gen >= full_every) {
        if (read_all(T, task_fd, gen, fds, buf, seen) == 0) {
            T->clock_full = clock_ns;
            T->run_full = T->run_sum;
            T->full_gen = gen;
            T->threads = threads;
        }
    }
    T->clock = clock_ns;
    /* every file read said "0 0 0": the kernel does not account it (any more), the wait is
     * unknown */
    if (seen->off && !seen->known)
        T->known = 0;
    return T->known ? T->wait : RT_NA;
}

void rt_threads_free(struct rt_threads **tp, struct rt_fd_budget *fds)
{
    struct rt_threads *T = *tp;
    if (!T)
        return;
    for (size_t i = 0; i < T->n; i++)
        thr_close(&T->t[i], fds);
    free(T->t);
    rt_map_free(&T->idx);
    free(T);
    *tp = NULL;
}
