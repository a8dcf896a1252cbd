/* outfile.c - output files (export -o, report -o, the live output), opened by what the path
 * names (export.h says the rules and why): a regular file replaced through a temporary one
 * beside it, devices, FIFOs and rtrack's own descriptors written as they are. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/base/util.h"

/* --- what a path names ------------------------------------------------------------------------ */

/* The descriptor of rtrack's that `p` names (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, and "-" for stdout), or -1. By name, as shells do: opening /proc/self/fd/1
 * would open the file again, at offset 0, where the descriptor may be appending. */
static int fd_named(const char *p)
{
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    if (!strcmp(p, "-") || !strcmp(p, "/dev/stdout"))
        return 1;
    if (!strcmp(p, "/dev/stderr"))
        return 2;
    for (size_t i = 0; i < RT_ARRAY_LEN(dirs); i++) {
        size_t n = strlen(dirs[i]);
        if (strncmp(p, dirs[i], n) != 0 || !p[n])
            continue;
        long v = 0;
        for (const char *d = p + n; *d; d++) {
            if (*d < '0' || *d > '9' || v > INT_MAX / 10)
                return -1;
            v = v * 10 + (*d - '0');
        }
        return v <= INT_MAX ? (int)v : -1;
    }
    return -1;
}

/* What a symbolic link at `link` points to, as a path from here (relative targets are relative
 * to the link's directory); NULL with errno. */
static char *link_target(const char *link, const struct stat *st)
{
    size_t cap = st->st_size > 0 ? (size_t)st->st_size + 1 : PATH_MAX;
    char *buf = NULL;
    for (;;) {
        buf = realloc(buf, cap);
        if (!buf)
            return NULL;
        ssize_t n = readlink(link, buf, cap);
        if (n < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return NULL;
        }
        if ((size_t)n < cap) {
            buf[n] = '\0';
            break;
        }
        cap *= 2;
    }
    const char *slash = strrchr(link, '/');
    if (buf[0] == '/' || !slash)
        return buf;
    char *joined = xasprintf("%.*s/%s", (int)(slash - link), link, buf);
    free(buf);
    return joined;
}

static const char *kind_name(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISBLK(m)  ? "a block device"
           : S_ISCHR(m)  ? "a character device"
           : S_ISFIFO(m) ? "a named pipe"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int rt_out_resolve(const char *path, struct rt_out_target *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    t->fd = -1;
    if (!*path) {
        snprintf(err, errlen, "an empty output file name");
        return -1;
    }
    char *cur = xstrdup(path);
    for (int links = 0;; links++) {
        int fd = fd_named(cur);
        if (fd >= 0) {
            int fl = fcntl(fd, F_GETFL);
            if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
                snprintf(err, errlen, "cannot write '%s': descriptor %d is not open%s", path, fd,
                         fl < 0 ? "" : " for writing");
                break;
            }
            t->kind = RT_OUT_FD;
            t->fd = fd;
            t->path = cur;
            return 0;
        }
        struct stat st;
        if (lstat(cur, &st) != 0) {
            if (errno == ENOENT && links > 0)
                snprintf(err, errlen,
                         "cannot write '%s': it is a symbolic link to '%s', which does not exist "
                         "(rtrack does not create a file through a link)",
                         path, cur);
            else if (errno == ENOENT) {
                t->kind = RT_OUT_NEW;
                t->path = cur;
                return 0;
            } else
                snprintf(err, errlen, "cannot write '%s': %s", path, rt_strerror(errno));
            break;
        }
        if (S_ISLNK(st.st_mode)) {
            if (links >= 40) {
                snprintf(err, errlen, "cannot write '%s': %s", path, rt_strerror(ELOOP));
                break;
            }
            /* fs.protected_symlinks, everywhere: the link's owner decides where it points */
            if (st.st_uid != geteuid() && st.st_uid != 0) {
                snprintf(err, errlen,
                         "cannot write '%s': %s%s%s is a symbolic link owned by another user "
                         "(uid %u), which rtrack does not follow (give the file it points to)",
                         path, links ? "'" : "it", links ? cur : "", links ? "'" : "",
                         (unsigned)st.st_uid);
                break;
            }
            char *next = link_target(cur, &st);
            if (!next) {
                snprintf(err, errlen, "cannot write '%s': %s", path, rt_strerror(errno));
                break;
            }
            free(cur);
            cur = next;
            continue;
        }
        if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode) ||
            !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) ||
              S_ISSOCK(st.st_mode))) {
            snprintf(err, errlen, "cannot write '%s': %s%s%s is %s", path, links ? "'" : "it",
                     links ? cur : "", links ? "'" : "", kind_name(st.st_mode));
            break;
        }
        t->kind = S_ISREG(st.st_mode) ? RT_OUT_REGULAR : RT_OUT_DIRECT;
        t->path = cur;
        t->st = st;
        t->have_stat = 1;
        return 0;
    }
    t->path = cur; /* where it stopped: a link's missing target, say */
    return -1;
}

void rt_out_target_free(struct rt_out_target *t)
{
    free(t->path);
    t->path = NULL;
}

/* --- writing one ------------------------------------------------------------------------------ */

struct rt_outfile {
    FILE *f;
    char *name; /* as given, for messages ("stdout" for "-") */
    struct rt_out_target t;
    enum rt_out_mode mode;
    char *tmp; /* the replacement being written, renamed over t.path at the end; or NULL */
};

/* The directory of a path, for messages. */
static char *dir_of(const char *p)
{
    const char *slash = strrchr(p, '/');
    if (!slash)
        return xstrdup(".");
    if (slash == p)
        return xstrdup("/");
    return xasprintf("%.*s", (int)(slash - p), p);
}

/* The file opened is the one looked at (a swap between the two is refused, not written). */
static int same_file(int fd, const struct stat *was)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == was->st_dev && st.st_ino == was->st_ino &&
           (st.st_mode & S_IFMT) == (was->st_mode & S_IFMT);
}

static void outfile_free(struct rt_outfile *o)
{
    rt_out_target_free(&o->t);
    free(o->name);
    free(o->tmp);
    free(o);
}

struct rt_outfile *rt_outfile_open(const char *path, enum rt_out_mode mode, char *err,
                                   size_t errlen)
{
    struct rt_outfile *o = xcalloc(1, sizeof(*o));
    o->name = xstrdup(strcmp(path, "-") ? path : "stdout");
    o->mode = mode;
    if (rt_out_resolve(path, &o->t, err, errlen) != 0) {
        outfile_free(o);
        return NULL;
    }
    int fd = -1, e = 0;
    const char *why = NULL;
    switch (o->t.kind) {
    case RT_OUT_FD:
        /* a descriptor of its own: closing it leaves stdout open, and a failed write does not
         * mark stdout's stream (run's exit status stays the job's) */
        if ((fd = fcntl(o->t.fd, F_DUPFD_CLOEXEC, 3)) < 0)
            e = errno;
        break;
    case RT_OUT_DIRECT:
        /* no O_CREAT, no O_TRUNC: a device or a pipe is written, never replaced */
        fd = open(o->t.path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            e = errno;
        else if (!same_file(fd, &o->t.st))
            why = "it changed while being opened";
        break;
    case RT_OUT_REGULAR:
    case RT_OUT_NEW:
        if (mode == RT_OUT_MODE_REPLACE) {
            /* beside the target, under a name no one can guess or plant a link at; 0600
             * until it is complete */
            o->tmp = xasprintf("%s.tmp-XXXXXX", o->t.path);
            fd = mkostemp(o->tmp, O_CLOEXEC);
            if (fd < 0) {
                e = errno;
                free(o->tmp);
                o->tmp = NULL;
            } else if (fchmod(fd, 0600) != 0) {
                e = errno;
            }
        } else if (o->t.kind == RT_OUT_REGULAR) {
            /* in place (its mode and owner stay); truncated only once known to be the file */
            fd = open(o->t.path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0)
                e = errno;
            else if (!same_file(fd, &o->t.st))
                why = "it changed while being opened";
            else if (ftruncate(fd, 0) != 0)
                e = errno;
        } else {
            fd = open(o->t.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
                      0600);
            if (fd < 0)
                e = errno;
            else if (fchmod(fd, 0600) != 0) /* whatever the umask */
                e = errno;
        }
        break;
    }
    if (fd >= 0 && !e && !why && !(o->f = fdopen(fd, "w")))
        e = errno;
    if (!o->f) {
        char *d = dir_of(o->t.path);
        if (e == ENOENT && o->t.kind == RT_OUT_NEW)
            snprintf(err, errlen, "cannot write '%s': directory '%s' does not exist", o->name, d);
        else if (e && mode == RT_OUT_MODE_REPLACE && o->t.kind == RT_OUT_REGULAR && !o->tmp)
            snprintf(err, errlen, "cannot write '%s': cannot create its replacement in '%s': %s",
                     o->name, d, rt_strerror(e));
        else
            snprintf(err, errlen, "cannot write '%s': %s", o->name, why ? why : rt_strerror(e));
        free(d);
        if (fd >= 0)
            close(fd);
        if (o->tmp)
            unlink(o->tmp);
        outfile_free(o);
        return NULL;
    }
    return o;
}

FILE *rt_outfile_stream(struct rt_outfile *o)
{
    return o->f;
}

int rt_outfile_direct(const struct rt_outfile *o)
{
    return o->tmp == NULL;
}

int rt_outfile_close(struct rt_outfile *o, int ok, char *err, size_t errlen)
{
    if (!o)
        return 0;
    int e = 0;
    const char *why = NULL;
    if (ok) {
        if (fflush(o->f) != 0)
            e = errno ? errno : EIO;
        else if (ferror(o->f))
            e = EIO;
    }
    if (ok && !e && o->tmp) {
        int fd = fileno(o->f);
        /* the replaced file's owner and mode, once the content is complete */
        if (o->t.kind == RT_OUT_REGULAR) {
            const struct stat *was = &o->t.st;
            if ((was->st_uid != geteuid() || was->st_gid != getegid()) &&
                fchown(fd, was->st_uid, was->st_gid) != 0)
                (void)!fchown(fd, (uid_t)-1, was->st_gid); /* not root: the group, if ours */
            if (fchmod(fd, was->st_mode & 0777) != 0)
                e = errno;
        }
        if (!e && fsync(fd) != 0 && errno != EINVAL && errno != EROFS)
            e = errno;
    }
    if (fclose(o->f) != 0 && ok && !e)
        e = errno ? errno : EIO;
    if (ok && !e && o->tmp) {
        /* only over a regular file or onto a new name: something else put there meanwhile
         * (a device, a FIFO, a directory) is left alone */
        struct stat st;
        if (lstat(o->t.path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            why = "it is no longer a regular file";
        else if (rename(o->tmp, o->t.path) != 0)
            e = errno;
    }
    int rc = 0;
    if (ok && (e || why)) {
        snprintf(err, errlen, "cannot write '%s': %s", o->name, why ? why : rt_strerror(e));
        rc = -1;
    }
    if (o->tmp && (!ok || rc != 0))
        unlink(o->tmp);
    outfile_free(o);
    return rc;
}
