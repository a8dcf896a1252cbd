/* spawn.c - process creation with posix_spawn: glibc reports exec failures synchronously
 * (CLONE_VFORK), which gives the 126/127 distinction without a status pipe. */
#include "rtrack/base/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void fresh_signals(posix_spawnattr_t *attr)
{
    /* rtrack blocks the signals it waits for and ignores SIGPIPE; the job must start with
     * neither, or it would silently ignore Ctrl-C or a closed pipe. */
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    sigdelset(&all, SIGKILL);
    sigdelset(&all, SIGSTOP);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &all);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

int rt_spawn_job(char *const argv[], pid_t *pid)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    fresh_signals(&attr);
    int rc = posix_spawnp(pid, argv[0], NULL, &attr, argv, environ);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int rt_capture(char *const argv[], int timeout_ms, struct rt_buf *out)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    fresh_signals(&attr);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    out->len = 0;
    rt_buf_reserve(out, 4096);
    out->p[0] = '\0';
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int timed_out = 0;
    for (;;) {
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left =
            timeout_ms - ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000);
        if (left <= 0) {
            timed_out = 1;
            break;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int pr = poll(&pfd, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0) {
            timed_out = 1;
            break;
        }
        if (out->cap - out->len < 1024)
            rt_buf_reserve(out, out->cap * 2);
        ssize_t n = read(fds[0], out->p + out->len, out->cap - out->len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        out->len += (size_t)n;
        out->p[out->len] = '\0';
    }
    close(fds[0]);
    if (timed_out)
        kill(pid, SIGKILL);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
