/* spawn.c - process creation with posix_spawn: glibc reports exec failures synchronously
 * (CLONE_VFORK), which gives the 126/127 distinction without a status pipe; why a start failed,
 * said as shells say it; and dying of the job's signal. */
#include "rtrack/base/spawn.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/base/log.h"

extern char **environ;

/* The child starts with nothing blocked (rtrack blocks the signals it waits for) and every
 * signal at its default (rtrack ignores SIGPIPE), but those in keep_ignored: a job must not
 * silently ignore Ctrl-C or a closed pipe because of rtrack, nor lose the immunity nohup gave
 * it. */
static void job_signals(posix_spawnattr_t *attr, const sigset_t *keep_ignored)
{
    sigset_t none, dfl;
    sigemptyset(&none);
    sigfillset(&dfl);
    sigdelset(&dfl, SIGKILL);
    sigdelset(&dfl, SIGSTOP);
    for (int sig = 1; keep_ignored && sig < NSIG; sig++)
        if (sigismember(keep_ignored, sig) == 1)
            sigdelset(&dfl, sig);
    posix_spawnattr_setsigmask(attr, &none);
    posix_spawnattr_setsigdefault(attr, &dfl);
    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
}

int rt_spawn_job(char *const argv[], char *const envp[], const sigset_t *keep_ignored, pid_t *pid)
{
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    job_signals(&attr, keep_ignored);
    int rc = posix_spawnp(pid, argv[0], NULL, &attr, argv, envp ? envp : environ);
    posix_spawnattr_destroy(&attr);
    return rc;
}

static void *spawn_thread(void *arg)
{
    struct rt_spawn_async *a = arg;
    a->err = rt_spawn_job(a->argv, a->envp, a->keep_ignored, &a->pid);
    return NULL;
}

void rt_spawn_job_start(struct rt_spawn_async *a, char *const argv[], char *const envp[],
                        const sigset_t *keep_ignored)
{
    *a = (struct rt_spawn_async){.argv = argv, .envp = envp, .keep_ignored = keep_ignored};
    pthread_attr_t at;
    int have_attr = pthread_attr_init(&at) == 0;
    /* posix_spawn gives the job a stack of its own: this thread needs little */
    if (have_attr)
        pthread_attr_setstacksize(&at, 256 << 10);
    a->threaded = pthread_create(&a->th, have_attr ? &at : NULL, spawn_thread, a) == 0;
    if (have_attr)
        pthread_attr_destroy(&at);
    if (!a->threaded)
        spawn_thread(a);
}

int rt_spawn_job_finish(struct rt_spawn_async *a, pid_t *pid)
{
    if (a->threaded) {
        pthread_join(a->th, NULL);
        /* The thread may have taken the task the job needed (a cgroup's pids.max, the user's
         * RLIMIT_NPROC, both counting threads): the job is started here once it is gone. The
         * kernel lets go of a thread's task just after its join returns: a few tries. */
        for (int i = 0; a->err == EAGAIN && i < 20; i++) {
            struct timespec ms = {0, 1000000};
            if (i)
                nanosleep(&ms, NULL);
            spawn_thread(a);
        }
    }
    a->threaded = 0;
    if (a->err == 0)
        *pid = a->pid;
    return a->err;
}

int rt_spawn_exit_code(int err)
{
    return err == ENOENT ? RT_EXIT_NOTFOUND : RT_EXIT_NOEXEC;
}

/* --- why a start failed ----------------------------------------------------------------------- */

/* The PATH posix_spawnp searched (rtrack's, which envp has too), else glibc's default. */
static const char *job_path(char *const envp[])
{
    for (char *const *e = envp ? envp : environ; e && *e; e++)
        if (strncmp(*e, "PATH=", 5) == 0)
            return *e + 5;
    return "/bin:/usr/bin";
}

/* The file the start tried: argv0 when it names a path, else the first regular file of that
 * name on PATH (the first executable one, which is the one execvp stops at). 0 when found. */
static int find_file(const char *argv0, char *const envp[], char *out, size_t n, int *on_path)
{
    struct stat st;
    *on_path = 0;
    if (strchr(argv0, '/'))
        return snprintf(out, n, "%s", argv0) < (int)n && stat(out, &st) == 0 ? 0 : -1;
    out[0] = '\0';
    for (const char *p = job_path(envp);; p++) {
        const char *end = strchr(p, ':');
        int len = end ? (int)(end - p) : (int)strlen(p);
        char cand[4096];
        /* an empty PATH entry is the current directory */
        int k = snprintf(cand, sizeof(cand), "%.*s%s%s", len, p, len ? "/" : "", argv0);
        if (k > 0 && (size_t)k < sizeof(cand) && stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            int x = access(cand, X_OK) == 0;
            if (x || !out[0])
                snprintf(out, n, "%s", cand);
            if (x)
                break;
        }
        if (!end)
            break;
        p = end;
    }
    *on_path = out[0] != '\0';
    return out[0] ? 0 : -1;
}

int rt_spawn_findable(const char *argv0)
{
    char path[4096];
    int on_path;
    return *argv0 && find_file(argv0, NULL, path, sizeof(path), &on_path) == 0;
}

/* The first bytes of a regular file (what the kernel looks at: 256 bytes); -1 if unreadable. */
static ssize_t file_head(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got >= 0)
        buf[got] = '\0';
    return got;
}

/* The interpreter a '#!' line names (its first word); "" when it names none. */
static void shebang_interp(const char *head, char *out, size_t n)
{
    const char *p = head + 2;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t len = strcspn(p, " \t\r\n");
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), p);
}

/* The loader (PT_INTERP) of an ELF file of this machine's byte order; "" when none is found. */
static void elf_loader(const char *path, char *out, size_t n)
{
    out[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return;
    const uint16_t one = 1;
    int native = *(const unsigned char *)&one == 1 ? ELFDATA2LSB : ELFDATA2MSB;
    unsigned char id[EI_NIDENT];
    uint64_t phoff = 0, off = 0, size = 0;
    unsigned phnum = 0, phentsize = 0;
    int cls = 0;
    if (pread(fd, id, sizeof(id), 0) == (ssize_t)sizeof(id) && id[EI_DATA] == native)
        cls = id[EI_CLASS];
    if (cls == ELFCLASS64) {
        Elf64_Ehdr eh;
        if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh))
            phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
    } else if (cls == ELFCLASS32) {
        Elf32_Ehdr eh;
        if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh))
            phoff = eh.e_phoff, phnum = eh.e_phnum, phentsize = eh.e_phentsize;
    }
    for (unsigned i = 0; i < phnum && i < 256 && !size; i++) {
        uint64_t at = phoff + (uint64_t)i * phentsize;
        if (cls == ELFCLASS64) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof(ph), (off_t)at) == (ssize_t)sizeof(ph) &&
                ph.p_type == PT_INTERP)
                off = ph.p_offset, size = ph.p_filesz;
        } else {
            Elf32_Phdr ph;
            if (pread(fd, &ph, sizeof(ph), (off_t)at) == (ssize_t)sizeof(ph) &&
                ph.p_type == PT_INTERP)
                off = ph.p_offset, size = ph.p_filesz;
        }
    }
    if (size > 0 && size < n) {
        ssize_t got = pread(fd, out, (size_t)size, (off_t)off);
        out[got > 0 ? got : 0] = '\0';
        out[strnlen(out, n - 1)] = '\0';
    }
    close(fd);
}

void rt_spawn_why(const char *argv0, char *const envp[], int err, char *why, size_t n)
{
    char path[4096], head[256], interp[256];
    int on_path;
    struct stat st;
    if (find_file(argv0, envp, path, sizeof(path), &on_path) != 0 || stat(path, &st) != 0) {
        snprintf(why, n, "%s", err == ENOENT ? "command not found" : rt_strerror(err));
        return;
    }
    ssize_t got = S_ISREG(st.st_mode) ? file_head(path, head, sizeof(head)) : -1;
    int script = got >= 2 && head[0] == '#' && head[1] == '!';
    int elf = got >= SELFMAG && memcmp(head, ELFMAG, SELFMAG) == 0;
    if (script)
        shebang_interp(head, interp, sizeof(interp));
    int k = -1;
    if (S_ISDIR(st.st_mode) && err == EACCES) {
        k = snprintf(why, n, "it is a directory");
    } else if (script && !interp[0]) {
        k = snprintf(why, n, "its '#!' line names no interpreter");
    } else if (script && err != ENOEXEC && stat(interp, &st) != 0 && errno == ENOENT) {
        k = snprintf(why, n, "its interpreter '%s' was not found", interp);
    } else if (script && (err != EACCES || access(path, X_OK) == 0)) {
        /* the script itself is fine (executable): what failed is starting its interpreter */
        k = snprintf(why, n, "its interpreter '%s' cannot be executed: %s", interp,
                     stat(interp, &st) == 0 && S_ISDIR(st.st_mode) ? "it is a directory"
                                                                   : rt_strerror(err));
    } else if (elf && err == ENOENT) {
        elf_loader(path, interp, sizeof(interp));
        if (interp[0])
            k = snprintf(why, n,
                         "its loader '%s' was not found (a binary built for another system?)",
                         interp);
        else
            k = snprintf(why, n, "its loader was not found (a binary built for another system?)");
    } else if (elf && err == ENOEXEC) {
        k = snprintf(why, n, "it is a binary this system cannot run (exec format error)");
    } else if (err == ENOEXEC) {
        k = snprintf(why, n,
                     "it is not a binary and has no '#!' line naming its interpreter (exec format "
                     "error): add one (e.g. '#!/bin/sh') or run it with its interpreter ('sh %s')",
                     path);
    } else {
        k = snprintf(why, n, "%s", rt_strerror(err));
    }
    if (on_path && k >= 0 && (size_t)k < n)
        snprintf(why + k, n - (size_t)k, " (the command is %s)", path);
}

/* --- helpers ---------------------------------------------------------------------------------- */

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
    job_signals(&attr, NULL); /* a helper starts afresh */
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

/* --- ending as the job ended ------------------------------------------------------------------ */

void rt_die_of_signal(int sig)
{
    /* a job cannot die of these (their default is to stop, continue or nothing); raising them
     * would stop rtrack or do nothing */
    if (sig <= 0 || sig >= NSIG || sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
        sig == SIGTTOU || sig == SIGCONT || sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH)
        return;
    /* a process that is not dumpable dumps nothing, also where core_pattern pipes cores to a
     * program (systemd-coredump, apport) that may not heed RLIMIT_CORE; RLIMIT_CORE 0 is the
     * fallback where the prctl fails */
    struct rlimit none = {0, 0};
    int off = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0;
    off |= setrlimit(RLIMIT_CORE, &none) == 0;
    if (!off)
        return;
    signal(sig, SIG_DFL); /* (SIGKILL's cannot be changed, nor needs to be) */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

const char *rt_signal_name(int sig, char *buf, size_t n)
{
    /* by name: the numbers differ between architectures */
    static const char *const names[] = {
        [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",   [SIGQUIT] = "SIGQUIT",
        [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP", [SIGABRT] = "SIGABRT",
        [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",   [SIGKILL] = "SIGKILL",
        [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV", [SIGUSR2] = "SIGUSR2",
        [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM", [SIGTERM] = "SIGTERM",
        [SIGCHLD] = "SIGCHLD",     [SIGCONT] = "SIGCONT", [SIGSTOP] = "SIGSTOP",
        [SIGTSTP] = "SIGTSTP",     [SIGTTIN] = "SIGTTIN", [SIGTTOU] = "SIGTTOU",
        [SIGURG] = "SIGURG",       [SIGXCPU] = "SIGXCPU", [SIGXFSZ] = "SIGXFSZ",
        [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF", [SIGWINCH] = "SIGWINCH",
        [SIGIO] = "SIGIO",         [SIGPWR] = "SIGPWR",   [SIGSYS] = "SIGSYS",
    };
    if (sig > 0 && (size_t)sig < RT_ARRAY_LEN(names) && names[sig])
        snprintf(buf, n, "%s", names[sig]);
    else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
        snprintf(buf, n, "SIGRTMIN+%d", sig - SIGRTMIN);
    else
        snprintf(buf, n, "signal %d", sig);
    return buf;
}
