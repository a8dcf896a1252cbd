/* test_util.c - parsing helpers, the hash map, whole-file reads. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtrack/base/util.h"
#include "testlib.h"

static void test_parse_bool(void **state)
{
    (void)state;
    const char *yes[] = {"1", "true", "TRUE", "yes", "On"};
    const char *no[] = {"0", "false", "No", "off", "OFF"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(rt_parse_bool(yes[i]), 1);
        assert_int_equal(rt_parse_bool(no[i]), 0);
    }
    assert_int_equal(rt_parse_bool("maybe"), -1);
    assert_int_equal(rt_parse_bool(""), -1);
    assert_int_equal(rt_parse_bool("2"), -1);
}

static void test_parse_numbers(void **state)
{
    (void)state;
    double d;
    assert_int_equal(rt_parse_double("0.05", &d), 0);
    assert_true(d == 0.05);
    assert_int_equal(rt_parse_double("1e3", &d), 0);
    assert_true(d == 1000.0);
    assert_int_not_equal(rt_parse_double("abc", &d), 0);
    assert_int_not_equal(rt_parse_double("1.5s", &d), 0);
    assert_int_not_equal(rt_parse_double("", &d), 0);
    assert_int_not_equal(rt_parse_double(" 1", &d), 0);
    assert_int_not_equal(rt_parse_double("nan", &d), 0);
    assert_int_not_equal(rt_parse_double("inf", &d), 0);
    /* decimal only: strtod's other forms are refused (-i 0x10 was 16 s) */
    static const char *const bad[] = {"0x10", "0X1p4",    "0x1p-3", "-0x1", "infinity", "-inf",
                                      "NAN",  "nan(123)", "1e400",  "1 ",   ".",        "+",
                                      "-",    "e5",       "1e",     "1e+",  "1.2.3",    "--1",
                                      "+-1",  "1,5",      "\t1"};
    for (size_t k = 0; k < RT_ARRAY_LEN(bad); k++)
        if (rt_parse_double(bad[k], &d) == 0)
            fail_msg("rt_parse_double accepted '%s' (%g)", bad[k], d);
    static const struct {
        const char *s;
        double v;
    } good[] = {{".5", 0.5},  {"5.", 5},        {"+2", 2},       {"-2.5", -2.5},
                {"1E2", 100}, {"2.5e-1", 0.25}, {"1e+20", 1e20}, {"007", 7}};
    for (size_t k = 0; k < RT_ARRAY_LEN(good); k++) {
        assert_int_equal(rt_parse_double(good[k].s, &d), 0);
        assert_true(d == good[k].v);
    }
    int64_t i;
    assert_int_equal(rt_parse_i64("-42", &i), 0);
    assert_int_equal(i, -42);
    assert_int_not_equal(rt_parse_i64("42x", &i), 0);
    assert_int_not_equal(rt_parse_i64("99999999999999999999", &i), 0);
    uint64_t u;
    const char *rest = rt_parse_u64("  18446744073709551615 7", &u);
    assert_non_null(rest);
    assert_true(u == UINT64_MAX);
    assert_string_equal(rest, " 7");
    assert_null(rt_parse_u64("  x", &u));
    /* one more than UINT64_MAX used to wrap around to 0 */
    assert_null(rt_parse_u64("18446744073709551616", &u));
    assert_null(rt_parse_u64("99999999999999999999999", &u));
}

static void test_unescape_octal(void **state)
{
    (void)state;
    char a[] = "/media/usb\\040disk";
    rt_unescape_octal(a);
    assert_string_equal(a, "/media/usb disk");
    char b[] = "/a\\011b\\012c\\134d";
    rt_unescape_octal(b);
    assert_string_equal(b, "/a\tb\nc\\d");
    char c[] = "/not\\8escape\\04";
    rt_unescape_octal(c);
    assert_string_equal(c, "/not\\8escape\\04");
}

static void test_json_string(void **state)
{
    (void)state;
    struct rt_buf b = {0};
    const char s[] = "a\"b\\c\nd\x01";
    rt_buf_json_string(&b, s, sizeof(s) - 1);
    assert_string_equal(b.p, "\"a\\\"b\\\\c\\u000ad\\u0001\"");
    rt_buf_free(&b);
}

static void test_map(void **state)
{
    (void)state;
    struct rt_map m;
    rt_map_init(&m, 4);
    for (uint64_t k = 1; k <= 10000; k++)
        rt_map_put(&m, k * 7919, (int64_t)k);
    assert_int_equal(m.used, 10000);
    int64_t v;
    for (uint64_t k = 1; k <= 10000; k++) {
        assert_int_equal(rt_map_get(&m, k * 7919, &v), 1);
        assert_int_equal(v, (int64_t)k);
    }
    assert_int_equal(rt_map_get(&m, 3, &v), 0);
    rt_map_put(&m, 7919, -5);
    assert_int_equal(rt_map_get(&m, 7919, &v), 1);
    assert_int_equal(v, -5);
    assert_int_equal(m.used, 10000);
    rt_map_clear(&m);
    assert_int_equal(rt_map_get(&m, 7919, &v), 0);
    rt_map_free(&m);
}

/* /proc/stat of the busy 8-core case has a 4184-byte intr line: reads must not stop at 4 KiB */
static void test_read_large_file(void **state)
{
    (void)state;
    char path[1024];
    snprintf(path, sizeof(path), "%s/parity/02-busy-8core/a/proc/stat", RT_FIXTURES);
    struct rt_buf b = {0};
    ssize_t n = rt_read_file(path, &b);
    assert_true(n > 4184);
    assert_int_equal((size_t)n, strlen(b.p));
    assert_non_null(strstr(b.p, "\nctxt "));
    assert_int_equal(rt_read_file("/nonexistent/file", &b), -2);
    rt_buf_free(&b);
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* rt_pread(RT_READ_RECORDS) saves the read that returns 0 only when the first read ended short of a
 * page: it must still read every record of a file over a page, and all of a regular file */
static void test_pread_records(void **state)
{
    (void)state;
    char path[1024];
    struct rt_buf a = {0}, b = {0};
    snprintf(path, sizeof(path), "%s/parity/02-busy-8core/a/proc/stat", RT_FIXTURES);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_true(rt_pread(fd, &a, RT_READ_RECORDS) > 4184);
    assert_int_equal(rt_pread(fd, &b, RT_READ_TO_EOF), a.len);
    assert_string_equal(a.p, b.p);
    close(fd);
    /* seq_files of records, small and over a page (maps: a record per mapping; 120 more that
     * cannot merge, as their protections alternate, take it well past one) */
    void *maps[120];
    long pg = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < 120; i++) {
        maps[i] = mmap(NULL, (size_t)pg, i % 2 ? PROT_READ : PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        assert_true(maps[i] != MAP_FAILED);
    }
    const char *files[] = {"/proc/self/maps", "/proc/self/mountinfo", "/proc/net/dev",
                           "/proc/diskstats"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        fd = open(files[i], O_RDONLY);
        if (fd < 0)
            continue;
        rt_buf_reserve(&a, 1 << 16); /* no new mapping while maps is read twice */
        rt_buf_reserve(&b, 1 << 16);
        ssize_t na = rt_pread(fd, &a, RT_READ_RECORDS), nb = rt_pread(fd, &b, RT_READ_TO_EOF);
        close(fd);
        assert_true(na > 0 && nb > 0);
        if (lines(a.p) != lines(b.p))
            fail_msg("%s: %zu lines read as records, %zu to EOF", files[i], lines(a.p), lines(b.p));
        if (strcmp(files[i], "/proc/self/maps") == 0)
            assert_true(a.len > 4096); /* the case of a record that did not fit the first page */
    }
    for (int i = 0; i < 120; i++)
        munmap(maps[i], (size_t)pg);
    /* a task's children: three of them */
    pid_t kids[3];
    for (int i = 0; i < 3; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            pause();
            _exit(0);
        }
    }
    snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
    fd = open(path, O_RDONLY);
    if (fd >= 0) {
        char want[64];
        snprintf(want, sizeof(want), "%d %d %d ", (int)kids[0], (int)kids[1], (int)kids[2]);
        assert_true(rt_pread(fd, &a, RT_READ_RECORDS) > 0);
        assert_string_equal(a.p, want);
        close(fd);
    }
    for (int i = 0; i < 3; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    rt_buf_free(&a);
    rt_buf_free(&b);
}

static void test_strerror_lowercase(void **state)
{
    (void)state;
    assert_string_equal(rt_strerror(2), "no such file or directory");
    assert_string_equal(rt_strerror(13), "permission denied");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_unescape_octal),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_read_large_file),
        cmocka_unit_test(test_pread_records),
        cmocka_unit_test(test_strerror_lowercase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
