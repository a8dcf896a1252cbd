/* hotloop.c - the hot path back to back: N samples of every collector (and the store), CPU time
 * per sample in total and per collector. A regression benchmark, not a test: a change that
 * slows the sampling loop shows up here without waiting for the interval.
 *
 * usage: rt_hotloop [-n N] [-t K | -p PID] [-d DB | -d ''] [-c K] [-r ROOT] [-o FILE [-f]]
 *                   [-g] [-w K]
 *   -n N     samples (default 2000)
 *   -t K     spawn a tree of K processes (sh + K-1 sleeps) and track it (default 5; 0 = none)
 *   -p PID   track this existing process tree instead
 *   -d DB    database to store into (default hotloop.db, removed first; '' = no store)
 *   -c K     commit every K samples (default 1: what rtrack does at a 1 s interval)
 *   -r ROOT  read /proc and /sys under ROOT (a fixture tree) instead of the live system
 *   -o FILE  also write the live output (`rtrack run -o FILE`: a JSON Lines line per sample, as
 *            the sampler writes it after storing the sample, before the commit), timed as the
 *            part "live"
 *   -f       the live output as CSV instead
 *   -g       also read the GPUs (the GPU collector, as rtrack does: RTRACK_NVML_LIBRARY names
 *            the library, e.g. the fake NVML of tests/fake_nvml), timed as the part "gpu"
 *   -w K     with -o: also print the live line's CPU time per sample over each K samples
 *            ("live@SEQ": samples SEQ-K+1..SEQ), to see whether a line costs more the longer
 *            the run is
 *   -i SECS  sleep this long between samples (default 0: back to back). With the interval of a
 *            real recording the caches are as cold as there, so the parts show where the time of
 *            a recorder goes; CPU time excludes the sleep.
 *
 * CPU time is CLOCK_THREAD_CPUTIME_ID (user + system) around each collector and the store call;
 * the wall time per sample is printed too. GPUs only with -g (see also bench/gpu_cpu.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"
#include "rtrack/collect/gpu.h"
#include "rtrack/export/export.h"
#include "rtrack/store/store.h"

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t spawn_tree(int k)
{
    char script[256];
    snprintf(script, sizeof(script), "for i in $(seq %d); do sleep 1000 & done; wait", k - 1);
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    usleep(200000); /* let the sleeps start */
    return pid;
}

int main(int argc, char **argv)
{
    long n = 2000, commit_every = 1;
    double interval = 0;
    int tree = 5;
    pid_t pid = 0;
    const char *db = "hotloop.db", *root = "", *live_path = NULL;
    int o, live_csv = 0, gpus = 0;
    long window = 0;
    while ((o = getopt(argc, argv, "n:t:p:d:c:r:i:o:fgw:h")) != -1) {
        switch (o) {
        case 'n':
            n = atol(optarg);
            break;
        case 't':
            tree = atoi(optarg);
            break;
        case 'p':
            pid = (pid_t)atoi(optarg), tree = 0;
            break;
        case 'd':
            db = optarg;
            break;
        case 'c':
            commit_every = atol(optarg);
            break;
        case 'r':
            root = optarg;
            break;
        case 'i':
            interval = atof(optarg);
            break;
        case 'o':
            live_path = optarg;
            break;
        case 'f':
            live_csv = 1;
            break;
        case 'g':
            gpus = 1;
            break;
        case 'w':
            window = atol(optarg);
            break;
        default:
            fprintf(stderr,
                    "usage: rt_hotloop [-n N] [-t K | -p PID] [-d DB] [-c K] [-r ROOT] [-i SECS] "
                    "[-o FILE [-f]] [-g] [-w K]\n");
            return 2;
        }
    }
    if (live_path && !*db) {
        fprintf(stderr, "rt_hotloop: -o needs a database (-d)\n");
        return 2;
    }
    if (n < 2 || commit_every < 1) {
        fprintf(stderr, "rt_hotloop: -n must be >= 2 and -c >= 1\n");
        return 2;
    }
    pid_t spawned = 0;
    if (tree > 0)
        pid = spawned = spawn_tree(tree);

    struct rt_sysenv env;
    rt_sysenv_live(&env);
    env.root = root;
    /* as rtrack takes it from its environment (src/cli/env.c) */
    env.nvml_library = getenv("RTRACK_NVML_LIBRARY");
    /* RTRACK_PROC_SCAN=full: the tree through the /proc scan, as rtrack itself reads it */
    const char *scan = getenv("RTRACK_PROC_SCAN");
    struct rt_collect_cfg cc = {pid, 0, 1.0, scan && strcmp(scan, "full") == 0, NULL};
    void *st[RT_NCOLLECTORS];
    for (size_t i = 0; i < RT_NCOLLECTORS; i++)
        st[i] = rt_collectors_all[i]->open(&env, &cc);
    struct rt_gpu *gpu = gpus ? rt_gpu_open(&env) : NULL;
    if (gpu) {
        /* the backends open on the GPU worker: wait (2 s at most) for a first reading */
        struct rt_sample probe;
        memset(&probe, 0, sizeof(probe));
        for (int t = 0; t < 200 && probe.gpu_state != RT_GPU_OK; t++) {
            usleep(10000);
            rt_sample_begin(&probe, NULL, RT_SAMPLE_BASELINE, now(CLOCK_REALTIME),
                            now(CLOCK_MONOTONIC));
            rt_gpu_start(gpu, &probe);
            rt_gpu_finish(gpu, &probe, 2.0);
        }
        if (probe.gpu_state != RT_GPU_OK) {
            rt_gpu_close(gpu);
            gpu = NULL;
        }
        rt_sample_free(&probe);
    }
    if (gpus && !gpu) {
        fprintf(stderr, "rt_hotloop: -g: no GPU (RTRACK_NVML_LIBRARY names the library)\n");
        return 1;
    }

    struct rt_store *store = NULL;
    if (*db) {
        char err[256];
        unlink(db);
        if (rt_store_open(db, RT_STORE_WRITE, &store, err, sizeof(err)) != 0) {
            fprintf(stderr, "rt_hotloop: %s\n", err);
            return 1;
        }
        struct rt_host_info host;
        rt_host_info_read(&env, &host);
        struct rt_run_desc rs = {.mode = "record",
                                 .pid = pid,
                                 .started_at = now(CLOCK_REALTIME),
                                 .host = &host,
                                 .clk_tck = env.clk_tck,
                                 .page_size = env.page_size};
        int64_t run_id;
        if (rt_store_begin_run(store, &rs, &run_id) != 0) {
            fprintf(stderr, "rt_hotloop: %s\n", rt_store_error(store));
            return 1;
        }
        rt_host_info_free(&host);
    }
    struct rt_live *live = NULL;
    if (live_path && !(live = rt_live_open(store, live_path, live_csv)))
        return 1;

    struct rt_sample buf[2];
    memset(buf, 0, sizeof(buf));
    struct rt_sample *prev = NULL;
    double cpu[RT_NCOLLECTORS + 3] = {0}; /* the collectors, the store, live output, GPUs */
    double live_window = 0;
    long warm = n / 10 > 0 ? n / 10 : 1; /* not counted: first scans, cache warm-up */
    double w0 = 0, c0 = 0;
    struct rusage ru0;
    for (long k = 0; k < n + warm; k++) {
        if (k == warm) {
            w0 = now(CLOCK_MONOTONIC);
            c0 = now(CLOCK_THREAD_CPUTIME_ID);
            getrusage(RUSAGE_SELF, &ru0);
            memset(cpu, 0, sizeof(cpu));
        }
        struct rt_sample *s = &buf[k & 1];
        rt_sample_begin(s, prev, prev ? RT_SAMPLE_PERIODIC : RT_SAMPLE_BASELINE,
                        now(CLOCK_REALTIME), now(CLOCK_MONOTONIC));
        for (size_t i = 0; i < RT_NCOLLECTORS; i++) {
            if (!st[i])
                continue;
            double t = now(CLOCK_THREAD_CPUTIME_ID);
            rt_collectors_all[i]->collect(st[i], &env, s, prev);
            cpu[i] += now(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        if (gpu) {
            /* started and waited for at once: its reading's CPU time is on the worker */
            double t = now(CLOCK_THREAD_CPUTIME_ID);
            rt_gpu_start(gpu, s);
            rt_gpu_finish(gpu, s, 2.0);
            cpu[RT_NCOLLECTORS + 2] += now(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        if (store) {
            double t = now(CLOCK_THREAD_CPUTIME_ID);
            if (rt_store_add_sample(store, s) != 0) {
                fprintf(stderr, "rt_hotloop: %s\n", rt_store_error(store));
                return 1;
            }
            cpu[RT_NCOLLECTORS] += now(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        /* the line is written inside the open transaction, before the commit, as the sampler
         * does (add_kept in src/record/sampler.c): its reads need no transaction of their own */
        if (live && prev) {
            double t = now(CLOCK_THREAD_CPUTIME_ID);
            rt_live_write(live, rt_store_last_sample_id(store));
            double dt = now(CLOCK_THREAD_CPUTIME_ID) - t;
            cpu[RT_NCOLLECTORS + 1] += dt;
            live_window += dt;
            if (window > 0 && (k + 1) % window == 0) {
                printf("live@%-6ld %8.1f us/line\n", k + 1, live_window / (double)window * 1e6);
                live_window = 0;
            }
        }
        if (store && (k + 1) % commit_every == 0) {
            double t = now(CLOCK_THREAD_CPUTIME_ID);
            if (rt_store_commit(store) != 0) {
                fprintf(stderr, "rt_hotloop: %s\n", rt_store_error(store));
                return 1;
            }
            cpu[RT_NCOLLECTORS] += now(CLOCK_THREAD_CPUTIME_ID) - t;
        }
        prev = s;
        if (interval > 0) {
            struct timespec ts = {(time_t)interval,
                                  (long)((interval - (double)(time_t)interval) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    double wall = now(CLOCK_MONOTONIC) - w0, total = now(CLOCK_THREAD_CPUTIME_ID) - c0;
    struct rusage ru1;
    getrusage(RUSAGE_SELF, &ru1);
    rt_live_close(live);
    if (store) {
        rt_store_commit(store);
        rt_store_close(store);
    }

    printf("samples %ld (after %ld warm-up), tree %d processes (last sample), %lld processes "
           "on the host\n",
           n, warm, prev->has_tree ? (int)prev->proc_count : 0, (long long)prev->processes);
    printf("%-8s %10s\n", "part", "us/sample");
    for (size_t i = 0; i <= RT_NCOLLECTORS; i++) {
        if (i < RT_NCOLLECTORS && !st[i])
            continue;
        if (i == RT_NCOLLECTORS && !store)
            continue;
        printf("%-8s %10.1f\n", i < RT_NCOLLECTORS ? rt_collectors_all[i]->name : "store",
               cpu[i] / (double)n * 1e6);
    }
    if (gpu)
        printf("%-8s %10.1f\n", "gpu", cpu[RT_NCOLLECTORS + 2] / (double)n * 1e6);
    if (live)
        printf("%-8s %10.1f\n", "live", cpu[RT_NCOLLECTORS + 1] / (double)n * 1e6);
    printf("%-8s %10.1f\n", "total", total / (double)n * 1e6);
    printf("%-8s %10.1f\n", "wall", wall / (double)n * 1e6);
    printf("maxrss_kib %ld\n", ru1.ru_maxrss);

    rt_gpu_close(gpu);
    for (size_t i = 0; i < RT_NCOLLECTORS; i++)
        if (st[i])
            rt_collectors_all[i]->close(st[i]);
    rt_sample_free(&buf[0]);
    rt_sample_free(&buf[1]);
    if (spawned > 0) {
        kill(-spawned, SIGTERM);
        waitpid(spawned, NULL, 0);
    }
    return 0;
}
