/* util.h - allocation wrappers, whole-file reads, parsing helpers, a small hash map. */
#ifndef RTRACK_UTIL_H
#define RTRACK_UTIL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* "Not available": the value a collector could not read. Stored as SQL NULL. */
#define RT_NA  INT64_MIN
#define RT_NAN ((double)NAN)

#define RT_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* a + b for counters that cannot be negative, saturated at INT64_MAX instead of overflowing
 * (a sum over many processes or devices of values read from files) */
static inline int64_t rt_sat_add(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

/* Allocation wrappers abort with a message: a tracker that cannot get a few KiB has nothing
 * sensible left to do, and the job itself is unaffected (it is a separate process). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer, reused from sample to sample so steady-state sampling allocates
 * nothing. `p` is always NUL-terminated. */
struct rt_buf {
    char *p;
    size_t len;
    size_t cap;
};
void rt_buf_reserve(struct rt_buf *b, size_t cap);
void rt_buf_free(struct rt_buf *b);

/* Read a whole file (procfs files report size 0, so read until EOF). Returns the length, or
 * -errno. The buffer grows as needed. */
ssize_t rt_read_file(const char *path, struct rt_buf *b);
ssize_t rt_read_fileat(int dirfd, const char *rel, struct rt_buf *b);
/* Read a small file into a fixed buffer, trailing whitespace stripped. -errno on error. */
ssize_t rt_read_small(const char *path, char *out, size_t cap);
ssize_t rt_read_smallat(int dirfd, const char *rel, char *out, size_t cap);
/* Read an open file from offset 0 to EOF with pread. Returns the length, or -errno. */
ssize_t rt_pread_all(int fd, struct rt_buf *b);
/* The same for a file the kernel generates with a single show() (single_open: /proc/stat,
 * meminfo, /proc/PID/stat, io, smaps_rollup, a cgroup's cpu.stat): a read that does not fill
 * the buffer has returned all of it, so the read that would return 0 is saved. Not for files
 * made of records (diskstats, net/dev, mountinfo, children): those may stop at a page. */
ssize_t rt_pread_single(int fd, struct rt_buf *b);
/* The same for a file made of records that the kernel's seq_file fills one by one into a
 * buffer of a page (diskstats, net/dev, a task's children): the first read stops only at the
 * end, when the reader's buffer is full, or when the next record does not fit into that page.
 * A first read shorter than a page less RT_SEQ_RECORD_MAX (the longest record expected) can
 * therefore only have stopped at the end, and the read that would return 0 is saved. */
#define RT_SEQ_RECORD_MAX 512
ssize_t rt_pread_records(int fd, struct rt_buf *b);

/* A file read every sample through one descriptor kept open (pread from offset 0) instead of
 * open + read + close each time. Zero-initialised = not open yet; opened on first read; on a
 * read error it is closed and opened again next time. */
enum { RT_KFILE_ANY, RT_KFILE_SINGLE, RT_KFILE_RECORDS };
struct rt_kfile {
    int fd_plus1; /* 0: not open (so that a zeroed struct is a closed file, even as fd 0) */
    int single;   /* RT_KFILE_SINGLE (rt_pread_single), RT_KFILE_RECORDS (rt_pread_records) */
};
ssize_t rt_kfile_read(struct rt_kfile *f, const char *path, struct rt_buf *b);
ssize_t rt_kfile_read_small(struct rt_kfile *f, const char *path, char *out, size_t cap);
void rt_kfile_close(struct rt_kfile *f);

/* Number parsing: skip blanks, parse an unsigned decimal; returns pointer past it, or NULL. */
const char *rt_parse_u64(const char *s, uint64_t *out);
/* strtod with full-string and range checks. 0 on success. */
int rt_parse_double(const char *s, double *out);
/* Decimal int64 with full-string check. 0 on success. */
int rt_parse_i64(const char *s, int64_t *out);
/* 1/0 for true/false/yes/no/on/off/1/0 (any case), -1 otherwise. */
int rt_parse_bool(const char *s);

/* Decode the octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) that the kernel
 * uses in /proc/mounts and mountinfo, in place. */
void rt_unescape_octal(char *s);

/* Append a JSON string literal (with quotes) for `s` to b. */
void rt_buf_json_string(struct rt_buf *b, const char *s, size_t n);
void rt_buf_append(struct rt_buf *b, const char *s, size_t n);
void rt_buf_puts(struct rt_buf *b, const char *s);

/* strerror() text with a lowercase first letter, for rtrack's lowercase messages. */
const char *rt_strerror(int err);

/* Seconds as a double from the given clock. */
double rt_clock_s(int clockid);

/* Open-addressing hash map from uint64 keys to int64 values. Key 0 is reserved. */
struct rt_map {
    uint64_t *keys;
    int64_t *vals;
    size_t cap; /* power of two */
    size_t used;
};
void rt_map_init(struct rt_map *m, size_t cap_hint);
void rt_map_free(struct rt_map *m);
void rt_map_clear(struct rt_map *m);
void rt_map_put(struct rt_map *m, uint64_t key, int64_t val);
/* 1 and *val if present, 0 otherwise. */
int rt_map_get(const struct rt_map *m, uint64_t key, int64_t *val);

#endif
