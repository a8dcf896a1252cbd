/* test_util.c - parsing helpers, the hash map, whole-file reads, starting the job on a
 * thread. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtrack/base/spawn.h"
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

/* The ppid /proc gives for pid (-1 when it cannot be read) */
static long ppid_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    long ppid = -1;
    if (!p || sscanf(p + 2, "%*c %ld", &ppid) != 1)
        return -1;
    return ppid;
}

/* rt_spawn_job_start/finish: the job is this process's child, with nothing blocked (the caller
 * blocks what rtrack waits for; the thread inherits that), its exit status ours to wait for;
 * a command that is not there is ENOENT, as rt_spawn_job says it. */
static void test_spawn_async(void **state)
{
    (void)state;
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGUSR1);
    sigaddset(&block, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    char *killed[] = {"sh", "-c", "kill -USR1 $$; exit 3", NULL};
    struct rt_spawn_async sp;
    pid_t pid = 0;
    rt_spawn_job_start(&sp, killed, NULL, NULL);
    assert_int_equal(rt_spawn_job_finish(&sp, &pid), 0);
    assert_true(pid > 0);
    assert_int_equal(ppid_of(pid), (long)getpid());
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFSIGNALED(st)); /* SIGUSR1 was not blocked in the job */
    assert_int_equal(WTERMSIG(st), SIGUSR1);
    char *exits[] = {"sh", "-c", "exit 7", NULL};
    rt_spawn_job_start(&sp, exits, NULL, NULL);
    assert_int_equal(rt_spawn_job_finish(&sp, &pid), 0);
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 7);
    char *missing[] = {"rtrack-test-no-such-command", NULL};
    pid = 12345;
    rt_spawn_job_start(&sp, missing, NULL, NULL);
    assert_int_equal(rt_spawn_job_finish(&sp, &pid), ENOENT);
    assert_int_equal(pid, 12345);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The child's side of the test below, run as a new process (no thread stack cached yet): with
 * the address space in use now and 128 KiB more (not the thread's 256 KiB stack, enough for the
 * job's own, posix_spawn's, some 36 KiB), the job is started without a thread. 0 when it was and
 * exited 5. */
static int no_thread_child(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1)
        return 10;
    fclose(f);
    struct rlimit rl = {(rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (128 << 10), RLIM_INFINITY};
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 11;
    char *exits[] = {"/bin/sh", "-c", "exit 5", NULL};
    struct rt_spawn_async sp;
    pid_t pid = 0;
    rt_spawn_job_start(&sp, exits, NULL, NULL);
    if (sp.threaded)
        return 12; /* the limit did not stop the thread: the case is not made */
    int st = 0;
    if (rt_spawn_job_finish(&sp, &pid) != 0 || waitpid(pid, &st, 0) != pid)
        return 13;
    return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 14;
}

/* Where no thread can be started, the job is started all the same, by rt_spawn_job_start
 * itself. (Not under a sanitizer, whose own mappings the limit would refuse.) */
static void test_spawn_async_without_thread(void **state)
{
    (void)state;
#if defined(__SANITIZE_ADDRESS__)
    skip();
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    skip();
#endif
#endif
    int st = fx_rerun_self("RT_TEST_SPAWN_NO_THREAD");
    if (st == 12)
        fail_msg("the address space limit did not stop the thread: the case was not made");
    assert_int_equal(st, 0);
}

int main(void)
{
    if (getenv("RT_TEST_SPAWN_NO_THREAD"))
        return no_thread_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_unescape_octal),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_map),
        cmocka_unit_test(test_read_large_file),
        cmocka_unit_test(test_pread_records),
        cmocka_unit_test(test_strerror_lowercase),
        cmocka_unit_test(test_spawn_async),
        cmocka_unit_test(test_spawn_async_without_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
