/* bench/run_trace.c - where the milliseconds of `rtrack run -- true` go, measured from inside
 * the process without changing rtrack: an LD_PRELOAD library (built as rt_run_trace.so) that
 * times the calls the run spends its wall time in and, at exit, prints one line of totals in
 * microseconds. bench/run_breakdown.sh runs it many times and takes medians.
 *
 * Categories (each call's own time: a category's calls made inside another's are taken out of
 * the outer one, so an fsync inside sqlite3_step counts as sync, not as SQL):
 *   load     process start (the exec, the dynamic loader, the libraries' constructors) to this
 *            library's constructor; from /proc/self/stat's start time, so in clock ticks (10 ms
 *            on most kernels): the script measures exec to constructor itself instead, see there
 *   open     sqlite3_open_v2: opening the file, no SQL yet
 *   prepare  sqlite3_prepare_v2/v3: compiling SQL, and the first statement of a connection
 *            parsing the whole schema (tables, views) that sqlite_schema holds
 *   sql      sqlite3_step, sqlite3_exec: running statements (page reads and writes, WAL)
 *   sync     fsync, fdatasync: what durability costs (the commits' syncs, the checkpoint)
 *   spawn    posix_spawn, posix_spawnp: starting the job
 *   wait     poll, waitpid, waitid, pthread_join: waiting for the job, the timer, a signal or
 *            a thread (the job's own run time is in here)
 *   close    sqlite3_close, sqlite3_close_v2: the last checkpoint and the removal of -wal/-shm
 *            (their syncs counted as sync)
 *   dlopen   dlopen: libraries loaded at run time (NVML, libcurl, ...)
 *   other    the rest of the wall time from the constructor to exit: rtrack's own work (options,
 *            the collectors, building statements), and what is not wrapped here
 * Each is the main thread's: calls on other threads (the job's start, a GPU reader) are not
 * counted, the main thread's wait for them is (pthread_join: wait).
 * Printed on stderr at exit (a destructor): "rt_run_trace main_us load_us open_us ... other_us",
 * main_us being the constructor-to-exit wall time. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum cat { C_OPEN, C_PREPARE, C_SQL, C_SYNC, C_SPAWN, C_WAIT, C_CLOSE, C_DLOPEN, C_N };
static const char *const cat_names[C_N] = {"open",  "prepare", "sql",   "sync",
                                           "spawn", "wait",    "close", "dlopen"};

static double total[C_N];
static double start_wall;
static __thread double inner; /* time of wrapped calls inside the current one */
static __thread int depth;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct frame {
    double t0, saved_inner;
};

static struct frame enter(void)
{
    struct frame f = {now(), inner};
    inner = 0;
    depth++;
    return f;
}

static void leave(struct frame f, enum cat c)
{
    double spent = now() - f.t0;
    total[c] += spent - inner;
    inner = f.saved_inner + spent;
    depth--;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

/* Only the main thread's calls are counted: the categories split its wall time (the job's
 * start runs on a thread of its own while the main thread compiles, its time is the main
 * thread's pthread_join, a wait; the GPU reader and the summary's second thread likewise). */
static int on_main_thread(void)
{
    return gettid() == getpid();
}

/* `after` runs once the real call is done, before its time is counted (f: its frame) */
#define WRAP_THEN(ret, name, cat, params, args, after)                                             \
    ret name params                                                                                \
    {                                                                                              \
        static __typeof__(&name) real;                                                             \
        if (!real)                                                                                 \
            real = NEXT(name);                                                                     \
        if (!on_main_thread())                                                                     \
            return real args;                                                                      \
        struct frame f = enter();                                                                  \
        ret r = real args;                                                                         \
        after;                                                                                     \
        leave(f, cat);                                                                             \
        return r;                                                                                  \
    }
#define WRAP(ret, name, cat, params, args) WRAP_THEN(ret, name, cat, params, args, (void)f)

WRAP(int, sqlite3_open_v2, C_OPEN, (const char *file, sqlite3 **db, int flags, const char *vfs),
     (file, db, flags, vfs))
/* RT_TRACE_SQL set: each statement compiled, with its time, on stderr ("rt_trace_sql US SQL") */
static void show_sql(struct frame f, const char *sql)
{
    static int on = -1;
    if (on < 0)
        on = getenv("RT_TRACE_SQL") != NULL;
    if (on)
        fprintf(stderr, "rt_trace_sql %.0f %.70s\n", (now() - f.t0) * 1e6, sql);
}

WRAP_THEN(int, sqlite3_prepare_v2, C_PREPARE,
          (sqlite3 * db, const char *sql, int n, sqlite3_stmt **st, const char **tail),
          (db, sql, n, st, tail), show_sql(f, sql))
WRAP_THEN(int, sqlite3_prepare_v3, C_PREPARE,
          (sqlite3 * db, const char *sql, int n, unsigned flags, sqlite3_stmt **st,
           const char **tail),
          (db, sql, n, flags, st, tail), show_sql(f, sql))
WRAP(int, sqlite3_step, C_SQL, (sqlite3_stmt * st), (st))
WRAP(int, sqlite3_exec, C_SQL,
     (sqlite3 * db, const char *sql, int (*cb)(void *, int, char **, char **), void *arg,
      char **err),
     (db, sql, cb, arg, err))
WRAP(int, sqlite3_close, C_CLOSE, (sqlite3 * db), (db))
WRAP(int, sqlite3_close_v2, C_CLOSE, (sqlite3 * db), (db))
WRAP(int, fsync, C_SYNC, (int fd), (fd))
WRAP(int, fdatasync, C_SYNC, (int fd), (fd))
WRAP(int, posix_spawn, C_SPAWN,
     (pid_t * pid, const char *path, const posix_spawn_file_actions_t *fa,
      const posix_spawnattr_t *attr, char *const argv[], char *const envp[]),
     (pid, path, fa, attr, argv, envp))
WRAP(int, posix_spawnp, C_SPAWN,
     (pid_t * pid, const char *file, const posix_spawn_file_actions_t *fa,
      const posix_spawnattr_t *attr, char *const argv[], char *const envp[]),
     (pid, file, fa, attr, argv, envp))
WRAP(int, poll, C_WAIT, (struct pollfd * fds, nfds_t n, int timeout), (fds, n, timeout))
WRAP(pid_t, waitpid, C_WAIT, (pid_t pid, int *status, int options), (pid, status, options))
WRAP(int, waitid, C_WAIT, (idtype_t type, id_t id, siginfo_t *info, int options),
     (type, id, info, options))

WRAP(int, pthread_join, C_WAIT, (pthread_t th, void **ret), (th, ret))
WRAP(void *, dlopen, C_DLOPEN, (const char *file, int mode), (file, mode))

/* exec to here: the script passes the time it started the exec (CLOCK_REALTIME, ns) */
static double load_us = -1;

__attribute__((constructor)) static void trace_start(void)
{
    start_wall = now();
    const char *t = getenv("RT_TRACE_EXEC_NS");
    if (t) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double t_now = (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
        load_us = (t_now - strtod(t, NULL)) / 1e3;
    }
    /* the job is not traced: it starts with the environment rtrack was given, less these */
    unsetenv("LD_PRELOAD");
    unsetenv("RT_TRACE_EXEC_NS");
}

__attribute__((destructor)) static void trace_end(void)
{
    double main_s = now() - start_wall, known = 0;
    for (int i = 0; i < C_N; i++)
        known += total[i];
    fprintf(stderr, "rt_run_trace main_us %.0f load_us %.0f", main_s * 1e6, load_us);
    for (int i = 0; i < C_N; i++)
        fprintf(stderr, " %s_us %.0f", cat_names[i], total[i] * 1e6);
    fprintf(stderr, " other_us %.0f\n", (main_s - known) * 1e6);
}
