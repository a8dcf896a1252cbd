/* util.c - allocation wrappers, file reads, parsing helpers, hash map. */
#include "rtrack/base/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static void oom(size_t n)
{
    fprintf(stderr, "rtrack: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *p = NULL;
    int n = vasprintf(&p, fmt, ap);
    va_end(ap);
    if (n < 0)
        oom(strlen(fmt));
    return p;
}

void rt_buf_reserve(struct rt_buf *b, size_t cap)
{
    if (b->cap >= cap)
        return;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < cap)
        ncap *= 2;
    b->p = xrealloc(b->p, ncap);
    b->cap = ncap;
}

void rt_buf_free(struct rt_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void rt_buf_append(struct rt_buf *b, const char *s, size_t n)
{
    rt_buf_reserve(b, b->len + n + 1);
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void rt_buf_json_string(struct rt_buf *b, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    rt_buf_append(b, "\"", 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[7];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            rt_buf_append(b, esc, 2);
        } else if (c < 0x20) {
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            rt_buf_append(b, esc, 6);
        } else {
            rt_buf_append(b, (const char *)&c, 1);
        }
    }
    rt_buf_append(b, "\"", 1);
}

/* Read to EOF. Positional reads start at offset 0, so the same fd can be read again next sample
 * (procfs and sysfs files are generated anew by a read at offset 0); sequential reads work on
 * pipes and FIFOs too (a config file may be one). */
static ssize_t read_to_eof(int fd, struct rt_buf *b, int positional, enum rt_read_kind kind)
{
    b->len = 0;
    rt_buf_reserve(b, 4096);
    for (;;) {
        if (b->cap - b->len < 1024)
            rt_buf_reserve(b, b->cap * 2);
        size_t room = b->cap - b->len - 1;
        ssize_t n = positional ? pread(fd, b->p + b->len, room, (off_t)b->len)
                               : read(fd, b->p + b->len, room);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            b->len = 0;
            b->p[0] = '\0';
            return -e;
        }
        if (n == 0)
            break;
        b->len += (size_t)n;
        if (kind == RT_READ_SINGLE && (size_t)n < room)
            break; /* one show() and it fitted: that was all of it */
        if (kind == RT_READ_RECORDS && b->len == (size_t)n && (size_t)n < room &&
            (size_t)n + RT_SEQ_RECORD_MAX < 4096)
            break; /* the records ended before the first page was full (4096: the smallest) */
    }
    b->p[b->len] = '\0';
    return (ssize_t)b->len;
}

ssize_t rt_pread(int fd, struct rt_buf *b, enum rt_read_kind kind)
{
    return read_to_eof(fd, b, 1, kind);
}

ssize_t rt_read_fileat(int dirfd, const char *rel, struct rt_buf *b)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        rt_buf_reserve(b, 1);
        b->len = 0;
        b->p[0] = '\0';
        return -e;
    }
    ssize_t n = read_to_eof(fd, b, 0, 0);
    close(fd);
    return n;
}

ssize_t rt_read_file(const char *path, struct rt_buf *b)
{
    return rt_read_fileat(AT_FDCWD, path, b);
}

/* One read of a small file into out (pread from offset 0 for a kept descriptor, read
 * otherwise: the file may be a pipe), trailing whitespace stripped; -errno. */
static ssize_t read_small(int fd, char *out, size_t cap, int positional)
{
    ssize_t n;
    do
        n = positional ? pread(fd, out, cap - 1, 0) : read(fd, out, cap - 1);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
        n = -errno;
        out[0] = '\0';
        return n;
    }
    while (n > 0 && isspace((unsigned char)out[n - 1]))
        n--;
    out[n] = '\0';
    return n;
}

ssize_t rt_read_smallat(int dirfd, const char *rel, char *out, size_t cap)
{
    int fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        out[0] = '\0';
        return -errno;
    }
    ssize_t n = read_small(fd, out, cap, 0);
    close(fd);
    return n;
}

ssize_t rt_read_small(const char *path, char *out, size_t cap)
{
    return rt_read_smallat(AT_FDCWD, path, out, cap);
}

/* The kept descriptor, opened now when it is not open yet; -errno when it cannot be. */
static int kfile_fd(struct rt_kfile *f, const char *path)
{
    if (f->fd_plus1 > 0)
        return f->fd_plus1 - 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    f->fd_plus1 = fd + 1;
    return fd;
}

/* Kept open only on the live system: a fixture tree's files (tests, whose root changes from
 * sample to sample) are replaced on disk, not generated anew by the kernel at each read. */
static int kfile_keeps(const char *path)
{
    return strncmp(path, "/proc/", 6) == 0 || strncmp(path, "/sys/", 5) == 0;
}

ssize_t rt_kfile_read(struct rt_kfile *f, const char *path, struct rt_buf *b)
{
    int fd = kfile_fd(f, path);
    ssize_t n = fd < 0 ? fd : read_to_eof(fd, b, 1, f->kind);
    if (n < 0 || !kfile_keeps(path))
        rt_kfile_close(f); /* on an error: the device went away, open it again next time */
    if (n < 0) {
        rt_buf_reserve(b, 1);
        b->len = 0;
        b->p[0] = '\0';
    }
    return n;
}

ssize_t rt_kfile_read_small(struct rt_kfile *f, const char *path, char *out, size_t cap)
{
    int fd = kfile_fd(f, path);
    ssize_t n = fd;
    if (fd >= 0)
        n = read_small(fd, out, cap, 1);
    else
        out[0] = '\0';
    if (n < 0 || !kfile_keeps(path))
        rt_kfile_close(f);
    return n;
}

void rt_kfile_close(struct rt_kfile *f)
{
    if (f->fd_plus1 > 0)
        close(f->fd_plus1 - 1);
    f->fd_plus1 = 0;
}

const char *rt_parse_u64(const char *s, uint64_t *out)
{
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s < '0' || *s > '9')
        return NULL;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return NULL; /* beyond 2^64 - 1: not a number the kernel prints (was: wrapped) */
        v = v * 10 + d;
        s++;
    }
    *out = v;
    return s;
}

/* Length of the decimal number at s ([+-] digits [. digits] [e [+-] digits], at least one digit
 * before the exponent), 0 when there is none. strtod also reads hexadecimal ("0x10" is 16),
 * "inf", "nan" and "infinity": none of them is a number of seconds anyone means to give. */
static size_t decimal_len(const char *s)
{
    size_t i = 0, digits = 0;
    if (s[i] == '+' || s[i] == '-')
        i++;
    for (; isdigit((unsigned char)s[i]); i++)
        digits++;
    if (s[i] == '.')
        for (i++; isdigit((unsigned char)s[i]); i++)
            digits++;
    if (!digits)
        return 0;
    if (s[i] == 'e' || s[i] == 'E') {
        size_t e = i + 1;
        if (s[e] == '+' || s[e] == '-')
            e++;
        if (!isdigit((unsigned char)s[e]))
            return 0;
        while (isdigit((unsigned char)s[e]))
            e++;
        i = e;
    }
    return i;
}

int rt_parse_double(const char *s, double *out)
{
    if (!s || !*s || decimal_len(s) != strlen(s))
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int rt_parse_i64(const char *s, int64_t *out)
{
    if (!s || !*s || isspace((unsigned char)*s))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

int rt_parse_bool(const char *s)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < RT_ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

void rt_unescape_octal(char *s)
{
    char *w = s;
    for (char *r = s; *r;) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
            r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)(((r[1] - '0') << 6) | ((r[2] - '0') << 3) | (r[3] - '0'));
            r += 4;
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

double rt_clock_s(int clockid)
{
    struct timespec ts;
    clock_gettime(clockid, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static atomic_int threads_left;

void rt_thread_left(void)
{
    atomic_store(&threads_left, 1);
}

int rt_threads_left(void)
{
    return atomic_load(&threads_left);
}

int rt_usable_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* --- hash map ------------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

void rt_map_init(struct rt_map *m, size_t cap_hint)
{
    size_t cap = 16;
    while (cap < cap_hint * 2)
        cap *= 2;
    m->keys = xcalloc(cap, sizeof(*m->keys));
    m->vals = xcalloc(cap, sizeof(*m->vals));
    m->cap = cap;
    m->used = 0;
}

void rt_map_free(struct rt_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

void rt_map_clear(struct rt_map *m)
{
    memset(m->keys, 0, m->cap * sizeof(*m->keys));
    m->used = 0;
}

static void map_grow(struct rt_map *m)
{
    struct rt_map n;
    rt_map_init(&n, m->cap);
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i])
            rt_map_put(&n, m->keys[i], m->vals[i]);
    rt_map_free(m);
    *m = n;
}

void rt_map_put(struct rt_map *m, uint64_t key, int64_t val)
{
    if ((m->used + 1) * 4 > m->cap * 3)
        map_grow(m);
    size_t mask = m->cap - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            m->vals[i] = val;
            return;
        }
        if (m->keys[i] == 0) {
            m->keys[i] = key;
            m->vals[i] = val;
            m->used++;
            return;
        }
    }
}

uint64_t rt_hash_bytes(uint64_t h, const void *p, size_t n)
{
    if (!h)
        h = 1469598103934665603ull;
    for (const unsigned char *c = p; n--; c++)
        h = (h ^ *c) * 1099511628211ull;
    return h ? h : 1;
}

int rt_map_get(const struct rt_map *m, uint64_t key, int64_t *val)
{
    if (!m->cap)
        return 0;
    size_t mask = m->cap - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            if (val)
                *val = m->vals[i];
            return 1;
        }
        if (m->keys[i] == 0)
            return 0;
    }
}

void rt_buf_puts(struct rt_buf *b, const char *s)
{
    rt_buf_append(b, s, strlen(s));
}

const char *rt_strerror(int err)
{
    static __thread char buf[128];
    snprintf(buf, sizeof(buf), "%s", strerror(err));
    if (buf[0] >= 'A' && buf[0] <= 'Z' && !(buf[1] >= 'A' && buf[1] <= 'Z'))
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}
