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
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
/* ... and what tells it from a process that got its pid after it ended (the job's user may end
 * it, and the step's end signals it as root): a pidfd where the kernel has them, else its start
 * time (/proc/PID/stat) */
static int recorder_fd = -1;
static unsigned long long recorder_start;

static int pidfd_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* A process's start time (clock ticks after boot, field 22 of /proc/PID/stat), 0 when there is
 * no such process (or it is a zombie: its pid is not free yet, but it is no recorder either). */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *rp = strrchr(buf, ')');
    if (!rp || rp[1] != ' ' || rp[2] == 'Z' || rp[2] == 'X')
        return 0;
    unsigned long long v = 0;
    char *q = rp + 2;
    for (int field = 3; field < 22 && q; field++) /* q is at field 3, the state */
        q = strchr(q + 1, ' ');
    if (q)
        v = strtoull(q + 1, NULL, 10);
    return v;
}

/* A number of seconds from plugstack.conf, range-checked: strtod alone took "-1", "1e12", "inf"
 * and "nan" (start_wait=-1 held every step's start until its recorder was ready, for ever if it
 * never was) and hex; "abc" said "the default stays" and set 0. A refused value keeps the
 * default and says so. */
static void seconds_arg(const char *a, const char *v, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double d = strtod(v, &end);
    if (!*v || end == v || *end || errno || !isfinite(d) || d < lo || d > hi ||
        strpbrk(v, "xXpP")) {
        slurm_info("rtrack: error: '%s' in plugstack.conf is not a number of seconds from %g to "
                   "%g; the default %g stays",
                   a, lo, hi, *out);
        return;
    }
    *out = d;
}

/* A yes or no of plugstack.conf: 1, 0, or -1 (said, the default stays). */
static int flag_arg(const char *a, const char *v, const char *yes, const char *no)
{
    if (!strcmp(v, yes) || (!strcmp(yes, "1") && (!strcmp(v, "on") || !strcmp(v, "yes"))))
        return 1;
    if (!strcmp(v, no) || (!strcmp(no, "0") && (!strcmp(v, "off") || !strcmp(v, "no"))))
        return 0;
    slurm_info("rtrack: error: '%s' in plugstack.conf: expected %s or %s; the default stays", a,
               yes, no);
    return -1;
}

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
        int f;
        if (k == 2 && !strncmp(a, "db", k))
            snprintf(cfg.db, sizeof(cfg.db), "%s", v);
        else if (k == 6 && !strncmp(a, "rtrack", k))
            snprintf(cfg.rtrack, sizeof(cfg.rtrack), "%s", v);
        else if (k == 3 && !strncmp(a, "log", k))
            snprintf(cfg.log, sizeof(cfg.log), "%s", v);
        else if (k == 8 && !strncmp(a, "interval", k))
            seconds_arg(a, v, 0.001, 86400, &cfg.interval); /* rtrack's own range */
        else if (k == 5 && !strncmp(a, "min_s", k))
            seconds_arg(a, v, 0, 86400, &cfg.min_s);
        else if (k == 9 && !strncmp(a, "stop_wait", k))
            seconds_arg(a, v, 0, 60, &cfg.stop_wait); /* the step's end waits this long */
        else if (k == 10 && !strncmp(a, "start_wait", k))
            seconds_arg(a, v, 0, 60, &cfg.start_wait); /* the step's start waits this long */
        else if (k == 6 && !strncmp(a, "upload", k)) {
            if ((f = flag_arg(a, v, "1", "0")) >= 0)
                cfg.upload = f;
        } else if (k == 2 && !strncmp(a, "as", k)) {
            if ((f = flag_arg(a, v, "root", "user")) >= 0)
                cfg.as_root = f;
        } else
            slurm_info("rtrack: error: unknown argument '%s' in plugstack.conf (ignored)", a);
    }
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
    /* The node's name from slurmstepd's own environment (slurmd sets SLURMD_NODENAME there),
     * never from the job's (spank_getenv): the job's environment is its user's to set, and
     * %n names paths root may create (n/../../../x did). Else the host's name. */
    const char *node = getenv("SLURMD_NODENAME");
    if (node && *node)
        snprintf(f->node, sizeof(f->node), "%s", node);
    else {
        if (gethostname(f->node, sizeof(f->node)) != 0)
            snprintf(f->node, sizeof(f->node), "unknown");
        f->node[sizeof(f->node) - 1] = '\0';
        f->node[strcspn(f->node, ".")] = '\0';
    }
}

/* Whether a fact may stand in a path: not empty, no '/', no "..", no control character (a
 * name with them could lead the path anywhere, or into a log's lines). */
static int safe_value(const char *v)
{
    if (!*v || strchr(v, '/') || strstr(v, ".."))
        return 0;
    for (const unsigned char *p = (const unsigned char *)v; *p; p++)
        if (*p < 0x20 || *p == 0x7f)
            return 0;
    return 1;
}

/* Whether an expanded path is absolute and none of its parts is "." or "..". */
static int clean_path(const char *p)
{
    if (*p != '/')
        return 0;
    for (const char *c = p; *c;) {
        while (*c == '/')
            c++;
        size_t l = strcspn(c, "/");
        if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
            return 0;
        c += l;
    }
    return 1;
}

/* The pattern with the step's facts in place of %j, %a, %t, %s, %n, %u; -1 when too long, -2
 * when a fact is no safe part of a path (safe_value) or the path is not clean (clean_path). */
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
            if (put != one && strcmp(put, "%") != 0 && !safe_value(put))
                return -2;
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
    return clean_path(out) ? 0 : -2;
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

/* --- the recorder's paths, walked as root ------------------------------------------------------
 *
 * The database's and the log's directories are opened one by one from "/", never through a
 * symbolic link (O_NOFOLLOW), and each must be root's or (as the job's user) the user's, and
 * writable by nobody else unless sticky (/tmp): then nobody but root and the user can change
 * where the path leads while the recorder uses it. A missing directory is made by the owner of
 * the one it goes into (root's: by root, then the last one given to the user; the user's: as the
 * user), so another user can never have made it first: /tmp/rtrack-%u made by someone else
 * (0777, with a database planted in it) is refused, not recorded into. */

struct who {
    uid_t uid; /* the recorder's user: its files, and root's, are trusted */
    gid_t gid;
    int root; /* the recorder runs as root (as=root): only root's will do */
};

/* This process (root) acting as the user for one call, and back */
static int become(const struct who *w, int user)
{
    if (user)
        return setegid(w->gid) != 0 || seteuid(w->uid) != 0 ? -1 : 0;
    return seteuid(0) != 0 || setegid(0) != 0 ? -1 : 0;
}

/* A directory or file's owner is one the recorder may trust */
static int owner_ok(const struct who *w, uid_t u)
{
    return u == 0 || u == w->uid;
}

/* The directory `path` leads to through dirs that owner_ok() and nobody else may write (sticky
 * ones aside), made where missing: an open descriptor of the last one and, in *name, where the
 * last part of path starts; -1 with why in err. */
static int walk_to(const char *path, const struct who *w, const char **name, char *err, size_t n)
{
    char p[1024];
    snprintf(p, sizeof(p), "%s", path);
    char *last = strrchr(p, '/');
    if (!last || !last[1]) {
        snprintf(err, n, "'%s' is no absolute path of a file", path);
        return -1;
    }
    *name = path + (last - p) + 1;
    *last = '\0';
    int dfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char at[1024] = "";
    for (char *c = p, *next; dfd >= 0; c = next) {
        struct stat st;
        if (fstat(dfd, &st) != 0 || !owner_ok(w, st.st_uid) ||
            ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))) {
            snprintf(err, n,
                     "directory '%s/' is %s; refusing to record there (its owner, or everyone "
                     "who may write it, could lead the path elsewhere)",
                     at, !owner_ok(w, st.st_uid) ? "another user's" : "writable by others");
            close(dfd);
            return -1;
        }
        while (*c == '/')
            c++;
        if (!*c)
            return dfd;
        next = c + strcspn(c, "/");
        int more = *next == '/';
        *next = '\0';
        if (more)
            next++;
        size_t al = strlen(at), cl = strlen(c);
        if (al + cl + 2 <= sizeof(at)) { /* (p is no longer than at: it always fits) */
            at[al] = '/';
            memcpy(at + al + 1, c, cl + 1);
        }
        int fd = openat(dfd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) {
            /* made by the owner of the directory it goes into; the last one is the recorder's */
            int user = !w->root && st.st_uid == w->uid, lastdir = !more, rc;
            mode_t mode = lastdir ? 0700 : 0755;
            if (user && become(w, 1) == 0) {
                rc = mkdirat(dfd, c, mode);
                become(w, 0);
            } else {
                rc = mkdirat(dfd, c, mode);
                if (rc == 0 && lastdir && !w->root)
                    rc = fchownat(dfd, c, w->uid, w->gid, AT_SYMLINK_NOFOLLOW);
                else if (rc != 0 && (errno == EACCES || errno == EPERM) && !w->root &&
                         become(w, 1) == 0) {
                    rc = mkdirat(dfd, c, mode); /* a root_squash'd NFS: as the user */
                    become(w, 0);
                }
            }
            if (rc != 0 && errno != EEXIST) {
                snprintf(err, n, "cannot make the directory '%s': %s", at, strerror(errno));
                close(dfd);
                return -1;
            }
            fd = openat(dfd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0)
            snprintf(err, n, "cannot open the directory '%s': %s", at,
                     errno == ELOOP || errno == ENOTDIR ? "not a directory (a symbolic link?)"
                                                        : strerror(errno));
        close(dfd);
        dfd = fd;
    }
    return -1;
}

/* The database's file, and SQLite's files beside it, where they exist: regular files of the
 * recorder's user (a database or -wal planted there would collect, or feed, its recording). */
static int db_ok(int dfd, const char *name, const struct who *w, char *err, size_t n)
{
    static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof(sfx) / sizeof(*sfx); i++) {
        char f[300];
        struct stat st;
        snprintf(f, sizeof(f), "%s%s", name, sfx[i]);
        if (fstatat(dfd, f, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISREG(st.st_mode) || st.st_uid != w->uid) {
            snprintf(err, n, "'%s' is %s; refusing to record into it", f,
                     !S_ISREG(st.st_mode) ? "not a regular file" : "another user's");
            return -1;
        }
    }
    return 0;
}

/* The log, opened as the recorder: appended to, never through a symbolic link, and only a file
 * of the recorder's own with no other name (a hard link to a root-only file). -1 with why when
 * something else is there; -2 when it cannot be made (a directory the recorder may not write:
 * then there is no log, as before). */
static int open_log(int dfd, const char *name, const struct who *w, char *err, size_t n)
{
    struct stat ln;
    /* (looked at first: in a sticky directory the kernel's protected_symlinks answers EACCES
     * for another user's link, which would read as "no log") */
    if (fstatat(dfd, name, &ln, AT_SYMLINK_NOFOLLOW) == 0 &&
        (S_ISLNK(ln.st_mode) || !S_ISREG(ln.st_mode) || ln.st_uid != w->uid)) {
        snprintf(err, n, "the log '%s' is %s; refusing it", name,
                 S_ISLNK(ln.st_mode)    ? "a symbolic link"
                 : !S_ISREG(ln.st_mode) ? "not a regular file"
                                        : "another user's");
        return -1;
    }
    int fd = openat(dfd, name,
                    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
                    0600);
    struct stat st;
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == EROFS))
        return -2;
    if (fd < 0) {
        snprintf(err, n, "cannot open the log '%s': %s", name,
                 errno == ELOOP ? "a symbolic link" : strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != w->uid) {
        snprintf(err, n, "the log '%s' is not a file of the recorder's own; refusing it", name);
        close(fd);
        return -1;
    }
    return fd;
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
    /* user_init runs with the job's user's effective ids: root again, for the cgroups, the
     * paths, and to become the user for good */
    if (getuid() == 0 && (setresgid(0, 0, 0) != 0 || setresuid(0, 0, 0) != 0)) {
        dprintf(report_fd, "cannot take root back: %s", strerror(errno));
        _exit(126);
    }
    leave_cgroups();
    /* the recorder's user: the job's, or root (as=root; or slurmstepd's own where it is none) */
    int as_job = !cfg.as_root && getuid() == 0 && f->uid != (uid_t)-1 && f->uid != 0;
    struct who w = {as_job ? f->uid : getuid(), as_job ? f->gid : getgid(), 0};
    w.root = w.uid == 0;
    /* the paths, as root: directories checked (and made) from "/" down */
    char err[1400];
    const char *dbname, *logname = NULL;
    int dbdir = walk_to(db, &w, &dbname, err, sizeof(err)), logdir = -1;
    if (dbdir < 0 || db_ok(dbdir, dbname, &w, err, sizeof(err)) != 0 ||
        (*log && (logdir = walk_to(log, &w, &logname, err, sizeof(err))) < 0)) {
        dprintf(report_fd, "%s", err);
        _exit(126);
    }
    if (as_job) {
        if (setgroups(0, NULL) != 0 || setgid(f->gid) != 0 || setuid(f->uid) != 0) {
            dprintf(report_fd, "cannot become user %s: %s", f->user, strerror(errno));
            _exit(126);
        }
    }
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = logdir >= 0 ? open_log(logdir, logname, &w, err, sizeof(err)) : -1;
    if (out == -1 && logdir >= 0) {
        dprintf(report_fd, "%s", err);
        _exit(126);
    }
    if (out < 0)
        out = open("/dev/null", O_WRONLY | O_CLOEXEC);
    close(dbdir);
    if (logdir >= 0)
        close(logdir);
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
    int e = expand(cfg.db, &f, db, sizeof(db));
    if (e == 0 && *cfg.log)
        e = expand(cfg.log, &f, log, sizeof(log));
    if (e != 0) {
        slurm_info("rtrack: error: job %s step %s: %s; not recorded", f.job, f.step,
                   e == -1 ? "the database or log path is too long"
                           : "a fact of the step is no safe part of a path (a '/', '..' or a "
                             "control character), or the path is not absolute and clean");
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
    int p[2] = {-1, -1}, ready[2] = {-1, -1}, go[2] = {-1, -1};
    pid_t root = getpid(), child = -1;
    if (pipe2(ready, O_CLOEXEC) != 0 || pipe2(p, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0 ||
        (child = fork()) < 0) {
        slurm_info("rtrack: error: job %s step %s: cannot start the recorder: %s; not recorded",
                   f.job, f.step, strerror(errno));
        goto out;
    }
    if (child == 0) {
        close(p[0]);
        close(ready[0]);
        close(go[1]);
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
        close(p[1]);
        /* held until the parent has its pidfd: until this process ends, the grandchild's pid
         * is the grandchild's, alive or a zombie of this one's */
        char c;
        while (read(go[0], &c, 1) < 0 && errno == EINTR) {
        }
        _exit(g < 0 ? 1 : 0);
    }
    close(p[1]);
    close(ready[1]);
    close(go[0]);
    p[1] = ready[1] = go[0] = -1;
    int32_t gp = -1;
    ssize_t r = read(p[0], &gp, sizeof(gp));
    int gfd = -1;
    unsigned long long gstart = 0;
    if (r == (ssize_t)sizeof(gp) && gp > 0 && (gfd = pidfd_of(gp)) < 0)
        gstart = start_time(gp);
    close(go[1]);
    go[1] = -1;
    char why[1500] = "";
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
        recorder_fd = gfd;
        recorder_start = gstart;
        gfd = -1;
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
    if (gfd >= 0)
        close(gfd);
out:
    for (int i = 0; i < 2; i++) {
        if (p[i] >= 0)
            close(p[i]);
        if (ready[i] >= 0)
            close(ready[i]);
        if (go[i] >= 0)
            close(go[i]);
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

/* The recorder still there (not a process that got its pid since: recorder_fd/_start) */
static int alive(void)
{
    if (recorder_fd >= 0) {
        struct pollfd pf = {recorder_fd, POLLIN, 0};
        return poll(&pf, 1, 0) == 0; /* (readable once it has ended) */
    }
    return recorder_start && start_time(recorder) == recorder_start;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!spank_remote(sp) || recorder <= 0)
        return ESPANK_SUCCESS;
    /* SIGTERM, with how the step ended, to the recorder only: as root, to a pid its user may
     * have freed (by ending it) and had another process take */
    int rc = 0;
    if (recorder_fd >= 0 || alive())
        rc = rt_spank_stop(sp, recorder, recorder_fd);
    if (rc != 0 && errno != ESRCH)
        slurm_info("rtrack: error: cannot stop the recorder (pid %d): %s", (int)recorder,
                   strerror(errno));
    /* its last sample and the run's end are written before the step is done */
    for (double waited = 0; waited < cfg.stop_wait && alive(); waited += 0.02) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (alive())
        slurm_info("rtrack: the recorder (pid %d) is still writing after %g s; left to finish",
                   (int)recorder, cfg.stop_wait);
    if (recorder_fd >= 0)
        close(recorder_fd);
    recorder_fd = -1;
    recorder = 0;
    return ESPANK_SUCCESS;
}
