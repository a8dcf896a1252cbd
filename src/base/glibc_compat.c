/* glibc_compat.c - the glibc functions rtrack calls that are newer than glibc 2.17, for the
 * portable binary only (RTRACK_PORTABLE, docs/portability.md).
 *
 * The release binary must run on glibc 2.17 (RHEL 7, the manylinux2014 floor), so every
 * versioned symbol it imports must be <= GLIBC_2.17; the toolchain links against glibc 2.17's
 * symbol list and a call to a newer function is an undefined symbol there. Defined here, under
 * their own names, the callers stay as they are: explicit_bzero (glibc 2.25), getrandom
 * (2.25), getdents64 (2.30). The last two are thin system calls; on a kernel that lacks
 * getrandom (< 3.17) it fails with ENOSYS, which its caller already handles.
 *
 * And the stat family. glibc 2.33 turned stat, lstat, fstat and fstatat from inline wrappers
 * of __xstat and friends into real functions; for an older glibc, Zig 0.11 compiles them from
 * glibc's sources into the program, where their system call sets an errno of their own, not
 * the C library's: a failing stat() returned -1 with errno unchanged, and rtrack read an old
 * value (`report -o new.html` failed with "invalid argument", the errno of an earlier
 * readlink, instead of finding that the file does not exist yet). Defined here, they are
 * the system calls through syscall(), which sets the C library's errno; the programs' own
 * definitions are linked before Zig's, so those are never used. newfstatat and fstat exist
 * on every 64-bit kernel rtrack runs on, and the kernel's struct stat is glibc's on x86_64 and
 * aarch64 (glibc's own fstatat hands the caller's buffer to the kernel there too). */
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

void explicit_bzero(void *p, size_t n);
ssize_t getrandom(void *buf, size_t len, unsigned int flags);
ssize_t getdents64(int fd, void *buf, size_t len);
int stat64(const char *path, struct stat64 *st);
int lstat64(const char *path, struct stat64 *st);
int fstat64(int fd, struct stat64 *st);
int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags);

void explicit_bzero(void *p, size_t n)
{
    memset(p, 0, n);
    /* the compiler must assume the memory is read here, so the memset cannot be dropped as a
     * store to memory that is freed next (what the wrapper exists for) */
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

ssize_t getrandom(void *buf, size_t len, unsigned int flags)
{
    return syscall(SYS_getrandom, buf, len, flags);
}

ssize_t getdents64(int fd, void *buf, size_t len)
{
    return syscall(SYS_getdents64, fd, buf, len);
}

int fstatat(int dirfd, const char *path, struct stat *st, int flags)
{
    return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}

int stat(const char *path, struct stat *st)
{
    return fstatat(AT_FDCWD, path, st, 0);
}

int lstat(const char *path, struct stat *st)
{
    return fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int fstat(int fd, struct stat *st)
{
    return (int)syscall(SYS_fstat, fd, st);
}

/* (on 64-bit targets struct stat64 is struct stat: the same calls) */
int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags)
{
    return (int)syscall(SYS_newfstatat, dirfd, path, st, flags);
}

int stat64(const char *path, struct stat64 *st)
{
    return fstatat64(AT_FDCWD, path, st, 0);
}

int lstat64(const char *path, struct stat64 *st)
{
    return fstatat64(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

int fstat64(int fd, struct stat64 *st)
{
    return (int)syscall(SYS_fstat, fd, st);
}
