/* spank_step.c - the SPANK plugin's knowledge of a step beyond its environment (spank_step.h):
 * the node it runs on, the step's cgroup, and how its tasks ended, which the recorder stores
 * with the step's run. Part of spank_rtrack.so; like the rest of it, never a reason for a job
 * to fail: what cannot be learnt is left out. */
#define _GNU_SOURCE
#include "spank_step.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <slurm/slurm.h>

/* rtrack/record/loop.h's: the value's tag and its states, in that order */
#define RT_STEP_END_MAGIC 0xa
enum {
    ST_NONE,
    ST_COMPLETED,
    ST_CANCELLED,
    ST_TIMEOUT,
    ST_FAILED,
    ST_OOM,
    ST_NODE_FAIL,
    ST_PREEMPTED,
    ST_BOOT_FAIL,
    ST_DEADLINE
};

/* the step's tasks as they ended on this node (slurm_spank_task_exit, in this slurmstepd) */
static struct {
    int seen, code, sig, oom;
} tasks;
static char step_cg[1024]; /* rt_spank_step_cgroup's last answer */

/* "oom_kill N" of a memory.events or memory.oom_control file, 0 when none */
static int oom_kill_of(const char *path)
{
    char line[256];
    int n = 0;
    FILE *f = fopen(path, "re");
    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "oom_kill ", 9))
            n = atoi(line + 9);
    if (f)
        fclose(f);
    return n;
}

/* The OOM kills in the step's cgroup so far: v2's memory.events counts those below it too; v1
 * counts each cgroup's own, so its task_N cgroups are added (they are gone by the step's end:
 * read as each task ends) */
static int step_oom_kills(const char *cg)
{
    char dir[2048], path[2400];
    if (!*cg)
        return 0;
    snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.events", cg);
    if (access(path, R_OK) == 0)
        return oom_kill_of(path);
    snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory%s", cg);
    snprintf(path, sizeof(path), "%s/memory.oom_control", dir);
    int n = oom_kill_of(path);
    DIR *d = opendir(dir);
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (!strncmp(de->d_name, "task_", 5) &&
            (size_t)snprintf(path, sizeof(path), "%s/%s/memory.oom_control", dir, de->d_name) <
                sizeof(path))
            n += oom_kill_of(path);
    if (d)
        closedir(d);
    return n;
}

int rt_spank_cpus_on_node(spank_t sp, char *out, size_t n)
{
    uint16_t cpus = 0;
    if (spank_get_item(sp, S_JOB_NCPUS, &cpus) != ESPANK_SUCCESS || cpus == 0)
        return -1;
    snprintf(out, n, "%u", (unsigned)cpus);
    return 0;
}

int rt_spank_step_cgroup(const char *job, const char *step, char *out, size_t n)
{
    char key[96], line[4096];
    if (!*job || !*step ||
        (size_t)snprintf(key, sizeof(key), "/job_%s/step_%s", job, step) >= sizeof(key))
        return -1;
    FILE *f = fopen("/proc/self/cgroup", "re");
    if (!f)
        return -1;
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof(line), f)) {
        char *path = strchr(line, ':');
        path = path ? strchr(path + 1, ':') : NULL;
        char *at = path ? strstr(path, key) : NULL;
        size_t end = at ? (size_t)(at - path - 1) + strlen(key) : 0;
        /* (the step's own directory: not step_1 when looking for step_10) */
        if (!at || (at[strlen(key)] != '/' && at[strlen(key)] != '\n' && at[strlen(key)]) ||
            end >= n)
            continue;
        memcpy(out, path + 1, end);
        out[end] = '\0';
        snprintf(step_cg, sizeof(step_cg), "%s", out);
        rc = 0;
    }
    fclose(f);
    return rc;
}

int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    int status = 0;
    if (!spank_remote(sp) || spank_get_item(sp, S_TASK_EXIT_STATUS, &status) != ESPANK_SUCCESS)
        return ESPANK_SUCCESS;
    tasks.seen = 1;
    if (WIFSIGNALED(status) && !tasks.sig)
        tasks.sig = WTERMSIG(status);
    else if (WIFEXITED(status) && WEXITSTATUS(status) > tasks.code)
        tasks.code = WEXITSTATUS(status);
    int oom = step_oom_kills(step_cg);
    tasks.oom = oom > tasks.oom ? oom : tasks.oom;
    return ESPANK_SUCCESS;
}

/* The job's state as slurmctld has it (asked only for a step whose task was killed: one
 * request, while slurmctld has already decided why) */
static int job_state(spank_t sp)
{
    uint32_t id = 0;
    job_info_msg_t *msg = NULL;
    if (spank_get_item(sp, S_JOB_ID, &id) != ESPANK_SUCCESS ||
        slurm_load_job(&msg, id, SHOW_ALL) != 0 || !msg)
        return ST_NONE;
    int st = ST_NONE;
    if (msg->record_count > 0) {
        static const struct {
            uint32_t slurm;
            int ours;
        } map[] = {{JOB_COMPLETE, ST_COMPLETED},
                   {JOB_CANCELLED, ST_CANCELLED},
                   {JOB_TIMEOUT, ST_TIMEOUT},
                   {JOB_FAILED, ST_FAILED},
                   {JOB_OOM, ST_OOM},
                   {JOB_NODE_FAIL, ST_NODE_FAIL},
                   {JOB_PREEMPTED, ST_PREEMPTED},
                   {JOB_BOOT_FAIL, ST_BOOT_FAIL},
                   {JOB_DEADLINE, ST_DEADLINE}};
        uint32_t base = msg->job_array[0].job_state & JOB_STATE_BASE;
        for (size_t i = 0; i < sizeof(map) / sizeof(*map); i++)
            if (map[i].slurm == base)
                st = map[i].ours;
    }
    slurm_free_job_info_msg(msg);
    return st;
}

/* A signal to the recorder: through its pidfd where there is one (its pid may have been freed and
 * taken since), else by its pid (the caller checked it is still the recorder). */
static int send_term(pid_t recorder, int pidfd, const union sigval *v)
{
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0) {
        siginfo_t si;
        memset(&si, 0, sizeof(si));
        si.si_signo = SIGTERM;
        si.si_code = SI_QUEUE;
        si.si_pid = getpid();
        si.si_uid = getuid();
        if (v)
            si.si_value = *v;
        return (int)syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, v ? &si : NULL, 0);
    }
#else
    (void)pidfd;
#endif
    return v ? sigqueue(recorder, SIGTERM, *v) : kill(recorder, SIGTERM);
}

int rt_spank_stop(spank_t sp, pid_t recorder, int pidfd)
{
    if (!tasks.seen)
        return send_term(recorder, pidfd, NULL);
    int state = tasks.sig ? job_state(sp) : ST_NONE;
    union sigval v;
    uint32_t oom = tasks.oom > 255 ? 255 : (uint32_t)tasks.oom;
    v.sival_int = (int)((uint32_t)RT_STEP_END_MAGIC << 28 | (uint32_t)state << 24 | oom << 16 |
                        (uint32_t)(tasks.sig & 0xff) << 8 | (uint32_t)(tasks.code & 0xff));
    return send_term(recorder, pidfd, &v);
}
