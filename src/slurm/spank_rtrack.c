/* spank_rtrack.c - a Slurm SPANK plugin that records every job step with `rtrack record`.
 *
 * Not a room of rtrack (docs/architecture.md): it links nothing of rtrack and only starts the
 * rtrack binary, so the recorder is the same program as everywhere else and a crash of it can
 * never reach slurmstepd. Loaded by slurmstepd (plugstack.conf, docs/cluster.md):
 *
 *   optional /usr/lib/rtrack/spank_rtrack.so db=/shared/rtrack/%u/%j.%n.db interval=1
 *
 * slurm_spank_user_init, once per step and node, before its tasks start (in slurmstepd): a
 * recorder is started for the tree of that slurmstepd (every task of the step on this node),
 * detached from it (a process of its own session, moved out of the step's cgroups where it may)
 * so that the step's end does not kill it first, as the job's user (or root: as=root), with the
 * step's facts in the SLURM_* variables that rtrack stores (schema.md); the tasks start once it
 * has taken its baseline (RTRACK_READY_FD), or after start_wait seconds. slurm_spank_exit (the
 * step's end): SIGTERM to the recorder, which writes its last sample and ends the run.
 *
 * The job must never fail because of this plugin: every callback returns success, whatever
 * happened; what went wrong is logged to slurmd's log (slurm_info, "rtrack: error: ...":
 * slurm_error in slurmstepd would also write to the job's stderr, and the job's output must
 * stay its own) and the step runs on unrecorded. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "spank_step.h"

SPANK_PLUGIN(rtrack, 1);

#define ENV_MAX 48
#ifndef RTRACK_BIN
#define RTRACK_BIN "/usr/bin/rtrack"
#endif

/* plugstack.conf's arguments */
static struct {
    char db[1024];     /* db=PATTERN: %j job, %a array job, %t array task, %s step, %n node,
                          %u user, %% a % */
    char rtrack[1024]; /* rtrack=PATH */
    char log[1024];    /* log=PATTERN: the recorder's stderr (default: none) */
    double interval;   /* interval=SECONDS */
    double min_s;      /* min_s=SECONDS: start recording only after the step ran this long */
    int upload;        /* upload=1: stream to Sentinel with the job's SENTINEL_API_TOKEN */
    int as_root;       /* as=root: the recorder runs as root (default: as the job's user) */
    double stop_wait;  /* stop_wait=SECONDS: how long the step's end waits for the recorder */
    double start_wait; /* start_wait=SECONDS: how long the step's start waits for its baseline */
} cfg = {"/tmp/rtrack-%u/%j.%n.db", RTRACK_BIN, "", 1.0, 0, 0, 0, 3.0, 2.0};

static pid_t recorder;     /* in this slurmstepd: the recorder of its step, 0 none */
static char step_cg[1024]; /* the step's cgroup (spank_step.h), "" none */

static int parse_args(int ac, char **av)
{
    for (int i = 0; i < ac; i++) {
        const char *a = av[i], *eq = strchr(a, '=');
        if (!eq) {
            slurm_info("rtrack: error: unknown argument '%s' in plugstack.conf (ignored)", a);
            continue;
        }
        size_t k = (size_t)(eq - a);
        const char *v = eq + 1;
        char *end = NULL;
        if (k == 2 && !strncmp(a, "db", k))
            snprintf(cfg.db, sizeof(cfg.db), "%s", v);
        else if (k == 6 && !strncmp(a, "rtrack", k))
            snprintf(cfg.rtrack, sizeof(cfg.rtrack), "%s", v);
        else if (k == 3 && !strncmp(a, "log", k))
            snprintf(cfg.log, sizeof(cfg.log), "%s", v);
        else if (k == 8 && !strncmp(a, "interval", k))
            cfg.interval = strtod(v, &end);
        else if (k == 5 && !strncmp(a, "min_s", k))
            cfg.min_s = strtod(v, &end);
        else if (k == 9 && !strncmp(a, "stop_wait", k))
            cfg.stop_wait = strtod(v, &end);
        else if (k == 10 && !strncmp(a, "start_wait", k))
            cfg.start_wait = strtod(v, &end);
        else if (k == 6 && !strncmp(a, "upload", k))
            cfg.upload = !strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "yes");
        else if (k == 2 && !strncmp(a, "as", k))
            cfg.as_root = !strcmp(v, "root");
        else
            slurm_info("rtrack: error: unknown argument '%s' in plugstack.conf (ignored)", a);
        if (end && (*end || end == v)) {
            slurm_info("rtrack: error: '%s' is not a number of seconds (the default stays)", a);
            cfg.interval = cfg.interval > 0 ? cfg.interval : 1.0;
        }
    }
    if (!(cfg.interval > 0))
        cfg.interval = 1.0;
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    if (spank_remote(sp))
        parse_args(ac, av);
    return ESPANK_SUCCESS;
}

/* --- the step's facts ------------------------------------------------------------------------ */

struct facts {
    char job[32], array_job[32], array_task[32], step[32], node[256], user[64];
    uid_t uid;
    gid_t gid;
};

static void step_name(uint32_t step, char *out, size_t n)
{
    if (step == SLURM_BATCH_SCRIPT)
        snprintf(out, n, "batch");
    else if (step == SLURM_EXTERN_CONT)
        snprintf(out, n, "extern");
    else if (step == SLURM_INTERACTIVE_STEP)
        snprintf(out, n, "interactive");
    else
        snprintf(out, n, "%u", step);
}

static void read_facts(spank_t sp, struct facts *f)
{
    memset(f, 0, sizeof(*f));
    uint32_t v = 0;
    if (spank_get_item(sp, S_JOB_ID, &v) == ESPANK_SUCCESS)
        snprintf(f->job, sizeof(f->job), "%u", v);
    if (spank_get_item(sp, S_JOB_STEPID, &v) == ESPANK_SUCCESS)
        step_name(v, f->step, sizeof(f->step));
    /* (a job that is no array's task has NO_VAL as its task id) */
    uint32_t task = NO_VAL;
    if (spank_get_item(sp, S_JOB_ARRAY_ID, &v) == ESPANK_SUCCESS && v && v < NO_VAL &&
        spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &task) == ESPANK_SUCCESS && task < NO_VAL - 1) {
        snprintf(f->array_job, sizeof(f->array_job), "%u", v);
        snprintf(f->array_task, sizeof(f->array_task), "%u", task);
    }
    f->uid = (uid_t)-1;
    f->gid = (gid_t)-1;
    spank_get_item(sp, S_JOB_UID, &f->uid);
    spank_get_item(sp, S_JOB_GID, &f->gid);
    struct passwd pw, *pp = NULL;
    char buf[4096];
    if (getpwuid_r(f->uid, &pw, buf, sizeof(buf), &pp) == 0 && pp)
        snprintf(f->user, sizeof(f->user), "%s", pp->pw_name);
    else
        snprintf(f->user, sizeof(f->user), "%u", (unsigned)f->uid);
    rt_spank_node_name(sp, f->node, sizeof(f->node));
}

/* The pattern with the step's facts in place of %j, %a, %t, %s, %n, %u; -1 when too long. */
static int expand(const char *pat, const struct facts *f, char *out, size_t n)
{
    size_t o = 0;
    for (const char *p = pat; *p; p++) {
        const char *put = NULL;
        char one[2] = {*p, 0};
        if (*p == '%' && p[1]) {
            p++;
            switch (*p) {
            case 'j':
                put = f->job;
                break;
            case 'a':
                put = *f->array_job ? f->array_job : f->job;
                break;
            case 't':
                put = *f->array_task ? f->array_task : "0";
                break;
            case 's':
                put = f->step;
                break;
            case 'n':
                put = f->node;
                break;
            case 'u':
                put = f->user;
                break;
            case '%':
                put = "%";
                break;
            default:
                one[0] = *p;
                put = one;
                break;
            }
        } else {
            put = one;
        }
        size_t l = strlen(put);
        if (o + l >= n)
            return -1;
        memcpy(out + o, put, l);
        o += l;
    }
    out[o] = '\0';
    return 0;
}

/* --- starting the recorder ------------------------------------------------------------------- */

/* The variables the recorder reads the step's facts from (rtrack's env.c), from the job's
 * environment, with the ids from Slurm's own items. */
static const char *const passed[] = {
    "SLURM_JOB_PARTITION",  "SLURM_CPUS_ON_NODE", "SLURM_MEM_PER_NODE",  "SLURM_MEM_PER_CPU",
    "SLURM_CPUS_PER_TASK",  "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS",      "CUDA_VISIBLE_DEVICES",
    "SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
};
static const char *const passed_upload[] = {"SENTINEL_API_TOKEN", "SENTINEL_API_URL",
                                            "RTRACK_S3_ENDPOINT", "RTRACK_S3_REGION"};

static void add_env(char **env, int *n, const char *name, const char *value)
{
    if (*n < ENV_MAX - 1 && value && *value && asprintf(&env[*n], "%s=%s", name, value) >= 0)
        (*n)++;
}

static void build_env(spank_t sp, const struct facts *f, char **env)
{
    int n = 0;
    char buf[1024];
    /* (this node's CPUs, not the job's environment's: srun passes the batch node's on) */
    int own_cpus = rt_spank_cpus_on_node(sp, buf, sizeof(buf)) == 0;
    if (own_cpus)
        add_env(env, &n, "SLURM_CPUS_ON_NODE", buf);
    for (size_t i = 0; i < sizeof(passed) / sizeof(*passed); i++)
        if ((!own_cpus || strcmp(passed[i], "SLURM_CPUS_ON_NODE")) &&
            spank_getenv(sp, passed[i], buf, sizeof(buf)) == ESPANK_SUCCESS)
            add_env(env, &n, passed[i], buf);
    for (size_t i = 0; cfg.upload && i < sizeof(passed_upload) / sizeof(*passed_upload); i++)
        if (spank_getenv(sp, passed_upload[i], buf, sizeof(buf)) == ESPANK_SUCCESS)
            add_env(env, &n, passed_upload[i], buf);
    uint32_t v;
    uint64_t mem;
    if (spank_getenv(sp, "SLURM_MEM_PER_NODE", buf, sizeof(buf)) != ESPANK_SUCCESS &&
        spank_getenv(sp, "SLURM_MEM_PER_CPU", buf, sizeof(buf)) != ESPANK_SUCCESS &&
        spank_get_item(sp, S_JOB_ALLOC_MEM, &mem) == ESPANK_SUCCESS && mem > 0) {
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)mem);
        add_env(env, &n, "SLURM_MEM_PER_NODE", buf);
    }
    /* (the batch step's items count its own node and task only) */
    if (spank_getenv(sp, "SLURM_JOB_NUM_NODES", buf, sizeof(buf)) != ESPANK_SUCCESS &&
        spank_get_item(sp, S_JOB_NNODES, &v) == ESPANK_SUCCESS && v > 0) {
        snprintf(buf, sizeof(buf), "%u", v);
        add_env(env, &n, "SLURM_JOB_NUM_NODES", buf);
    }
    if (spank_getenv(sp, "SLURM_NTASKS", buf, sizeof(buf)) != ESPANK_SUCCESS &&
        spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &v) == ESPANK_SUCCESS && v > 0) {
        snprintf(buf, sizeof(buf), "%u", v);
        add_env(env, &n, "SLURM_NTASKS", buf);
    }
    add_env(env, &n, "SLURM_JOB_ID", f->job);
    add_env(env, &n, "SLURM_STEP_ID", f->step);
    add_env(env, &n, "SLURM_ARRAY_JOB_ID", f->array_job);
    add_env(env, &n, "SLURM_ARRAY_TASK_ID", f->array_task);
    add_env(env, &n, "SLURM_JOB_USER", f->user);
    add_env(env, &n, "SLURMD_NODENAME", f->node);
    add_env(env, &n, "PATH", "/usr/local/bin:/usr/bin:/bin");
    add_env(env, &n, "RTRACK_READY_FD", "3");
    env[n] = NULL;
}

/* mkdir -p of the path's directory, as whoever runs this */
static int make_parents(const char *path)
{
    char d[1024];
    snprintf(d, sizeof(d), "%s", path);
    char *slash = strrchr(d, '/');
    if (!slash || slash == d)
        return 0;
    *slash = '\0';
    for (char *p = d + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(d, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(d, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* Out of the step's cgroups (each hierarchy's root), so that the step's end does not kill the
 * recorder before it wrote its last sample, and its memory is not charged to the job: best
 * effort (proctrack/linuxproc needs none of it: the session of its own is enough). */
static void leave_cgroups(void)
{
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return;
    char line[1024], path[1200];
    while (fgets(line, sizeof(line), f)) {
        char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
        if (!b)
            continue;
        *b = '\0';
        const char *ctl = a + 1;
        if (!*ctl)
            snprintf(path, sizeof(path), "/sys/fs/cgroup/cgroup.procs");
        else if (!strncmp(ctl, "name=", 5))
            snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", ctl + 5);
        else
            snprintf(path, sizeof(path), "/sys/fs/cgroup/%s/cgroup.procs", ctl);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (write(fd, "0", 1) < 0) { /* "0": the writing process */
            }
            close(fd);
        }
    }
    fclose(f);
}

/* The grandchild: becomes the recorder. Never returns. */
static void exec_recorder(const struct facts *f, char **env, const char *db, const char *log,
                          pid_t root, int report_fd, int ready_fd, const char *job_name)
{
    setsid();
    /* user_init runs with the job's user's effective ids: root again, for the cgroups and to
     * become the user for good */
    if (getuid() == 0 && (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)) {
        dprintf(report_fd, "cannot take root back: %s", strerror(errno));
        _exit(126);
    }
    leave_cgroups();
    if (!cfg.as_root && getuid() == 0 && f->uid != (uid_t)-1 && f->uid != 0) {
        if (setgroups(0, NULL) != 0 || setgid(f->gid) != 0 || setuid(f->uid) != 0) {
            dprintf(report_fd, "cannot become user %s: %s", f->user, strerror(errno));
            _exit(126);
        }
    }
    if (make_parents(db) != 0) {
        dprintf(report_fd, "cannot make the directory of '%s': %s", db, strerror(errno));
        _exit(126);
    }
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = *log ? open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600) : -1;
    if (out < 0)
        out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    /* the descriptor the recorder says "baseline taken" on: 3, inherited (RTRACK_READY_FD) */
    if (ready_fd >= 0 && (ready_fd == 3 ? fcntl(3, F_SETFD, 0) : dup2(ready_fd, 3)) < 0)
        _exit(126);
    if (in >= 0)
        dup2(in, 0);
    if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
    }
    char interval[32], pid[32], ext[80], quiet[] = "--quiet";
    snprintf(interval, sizeof(interval), "%g", cfg.interval);
    snprintf(pid, sizeof(pid), "%d", (int)root);
    snprintf(ext, sizeof(ext), "%s.%s", f->job, f->step);
    char *argv[] = {cfg.rtrack,   "record",
                    "--db",       (char *)db,
                    "--pid",      pid,
                    "--interval", interval,
                    quiet,        "--orchestrator",
                    "slurm",      "--external-run-id",
                    ext,          NULL,
                    NULL,         NULL,
                    NULL,         NULL};
    int a = 13;
    if (*job_name) {
        argv[a++] = "--job-name";
        argv[a++] = (char *)job_name;
    }
    if (*step_cg) { /* proctrack/cgroup, task/cgroup: the step's own cgroup */
        argv[a++] = "--cgroup";
        argv[a++] = step_cg;
    }
    if (cfg.min_s > 0) {
        /* the step goes on meanwhile: slurmstepd waits for the report only until here */
        close(report_fd);
        struct timespec ts = {(time_t)cfg.min_s,
                              (long)((cfg.min_s - (double)(time_t)cfg.min_s) * 1e9)};
        nanosleep(&ts, NULL);
        if (kill(root, 0) != 0)
            _exit(0); /* a step shorter than min_s: not recorded */
        close(3);     /* the step started long ago: nobody waits */
    }
    execve(cfg.rtrack, argv, env);
    dprintf(report_fd, "cannot start '%s': %s", cfg.rtrack, strerror(errno));
    _exit(127);
}

static void start(spank_t sp)
{
    struct facts f;
    read_facts(sp, &f);
    if (!strcmp(f.step, "extern"))
        return;
    char db[1024], log[1024] = "";
    if (expand(cfg.db, &f, db, sizeof(db)) != 0 ||
        (*cfg.log && expand(cfg.log, &f, log, sizeof(log)) != 0)) {
        slurm_info("rtrack: error: job %s step %s: the database path is too long; not recorded",
                   f.job, f.step);
        return;
    }
    if (access(cfg.rtrack, X_OK) != 0) {
        slurm_info("rtrack: error: job %s step %s: cannot run '%s': %s; not recorded", f.job,
                   f.step, cfg.rtrack, strerror(errno));
        return;
    }
    char *env[ENV_MAX], job_name[256] = "";
    if (rt_spank_step_cgroup(f.job, f.step, step_cg, sizeof(step_cg)) != 0)
        step_cg[0] = '\0';
    build_env(sp, &f, env);
    if (spank_getenv(sp, "SLURM_JOB_NAME", job_name, sizeof(job_name)) != ESPANK_SUCCESS)
        job_name[0] = '\0';
    /* the grandchild's pid, or its reason for not starting, comes back through a pipe that
     * closes on a successful exec */
    int p[2] = {-1, -1}, ready[2] = {-1, -1};
    pid_t root = getpid(), child = -1;
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(p, O_CLOEXEC) != 0 || (child = fork()) < 0) {
        slurm_info("rtrack: error: job %s step %s: cannot start the recorder: %s; not recorded",
                   f.job, f.step, strerror(errno));
        goto out;
    }
    if (child == 0) {
        close(p[0]);
        close(ready[0]);
        /* no signal handler or mask of slurmstepd's for the recorder */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
            signal(s, SIG_DFL);
        pid_t g = fork();
        if (g == 0)
            exec_recorder(&f, env, db, log, root, p[1], ready[1], job_name);
        int32_t gp = (int32_t)g;
        if (write(p[1], &gp, sizeof(gp)) < 0) { /* (the parent then logs no pid) */
        }
        _exit(g < 0 ? 1 : 0);
    }
    close(p[1]);
    close(ready[1]);
    p[1] = ready[1] = -1;
    int32_t gp = -1;
    ssize_t r = read(p[0], &gp, sizeof(gp));
    char why[512] = "";
    ssize_t w = read(p[0], why, sizeof(why) - 1); /* empty at the exec: the pipe closed */
    int st;
    while (waitpid(child, &st, 0) < 0 && errno == EINTR) {
    }
    if (r != (ssize_t)sizeof(gp) || gp <= 0) {
        slurm_info("rtrack: error: job %s step %s: cannot start the recorder; not recorded", f.job,
                   f.step);
    } else if (w > 0) {
        why[w] = '\0';
        slurm_info("rtrack: error: job %s step %s: %s; not recorded", f.job, f.step, why);
    } else {
        recorder = gp;
        slurm_info("rtrack: job %s step %s on %s recorded into %s (recorder pid %d)", f.job, f.step,
                   f.node, db, (int)gp);
        /* the tasks start once the recorder's baseline is stored, so that all their CPU time
         * counts (bounded: a slow start costs the record the step's first moments only) */
        struct pollfd pf = {ready[0], POLLIN, 0};
        if (cfg.min_s <= 0 && poll(&pf, 1, (int)(cfg.start_wait * 1000)) == 0)
            slurm_info("rtrack: job %s step %s: no baseline from the recorder within %g s; the "
                       "step starts meanwhile",
                       f.job, f.step, cfg.start_wait);
    }
out:
    for (int i = 0; i < 2; i++) {
        if (p[i] >= 0)
            close(p[i]);
        if (ready[i] >= 0)
            close(ready[i]);
    }
    for (int i = 0; env[i]; i++)
        free(env[i]);
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    /* once per step and node, in its slurmstepd, before the tasks */
    if (spank_remote(sp) && !recorder)
        start(sp);
    return ESPANK_SUCCESS;
}

/* A recorder still there, not a zombie of it (it is init's child, reaped later). */
static int alive(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp) || recorder <= 0)
        return ESPANK_SUCCESS;
    if (rt_spank_stop(sp, recorder) != 0 && errno != ESRCH)
        slurm_info("rtrack: error: cannot stop the recorder (pid %d): %s", (int)recorder,
                   strerror(errno));
    /* its last sample and the run's end are written before the step is done */
    for (double waited = 0; waited < cfg.stop_wait && alive(recorder); waited += 0.02) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (alive(recorder))
        slurm_info("rtrack: the recorder (pid %d) is still writing after %g s; left to finish",
                   (int)recorder, cfg.stop_wait);
    recorder = 0;
    return ESPANK_SUCCESS;
}
