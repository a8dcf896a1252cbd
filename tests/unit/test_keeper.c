/* test_keeper.c - the Keeper client against a real local HTTP server
 * (tests/helpers/keeper_mock.py): the exact query it sends, its headers, the server object it
 * returns, and each way it fails. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/summary/keeper.h"
#include "rtrack/version.h"
#include "testlib.h"

#define MOCK_SCRIPT RT_FIXTURES "/../helpers/keeper_mock.py"

static pid_t mock_pid = -1;
static int mock_port;
static char log_path[64];
static sqlite3 *jdb; /* in-memory, for json_extract on what came back */

static int setup(void **state)
{
    (void)state;
    /* The mock is on 127.0.0.1: a proxy from the environment must not get in between. */
    setenv("NO_PROXY", "*", 1);
    setenv("no_proxy", "*", 1);

    snprintf(log_path, sizeof(log_path), "/tmp/rt_keeper_log_XXXXXX");
    int lfd = mkstemp(log_path);
    if (lfd < 0)
        return -1;
    close(lfd);
    if (sqlite3_open(":memory:", &jdb) != SQLITE_OK)
        return -1;

    mock_port = fx_python_mock(MOCK_SCRIPT, log_path, NULL, &mock_pid);
    if (mock_port <= 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (mock_pid > 0) {
        kill(mock_pid, SIGTERM);
        waitpid(mock_pid, NULL, 0);
        mock_pid = -1;
    }
    unlink(log_path);
    sqlite3_close(jdb);
    return 0;
}

/* The requests the mock recorded since the last log_reset(), one JSON line each. */
static void log_reset(void)
{
    assert_int_equal(truncate(log_path, 0), 0);
}

static char *log_read(size_t *nlines)
{
    char *s = fx_slurp(log_path);
    assert_non_null(s);
    *nlines = 0;
    for (const char *p = s; *p; p++)
        *nlines += *p == '\n';
    return s;
}

static int call(const char *mode, const struct rt_keeper_query *q, struct rt_buf *out, char *err,
                size_t errlen)
{
    char base[128];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/%s", mock_port, mode);
    err[0] = '\0';
    return rt_keeper_cheapest(base, q, out, err, errlen);
}

static void test_query_string(void **state)
{
    (void)state;
    static const struct {
        struct rt_keeper_query q;
        const char *want;
    } cases[] = {
        {{2, 3863, 0, 0},
         "vcpus_min=2&memory_min=4&order_by=min_price_ondemand&order_dir=asc&limit=1"},
        {{2, 1024, 0, 0},
         "vcpus_min=2&memory_min=1&order_by=min_price_ondemand&order_dir=asc&limit=1"},
        {{2, 1025, 0, 0},
         "vcpus_min=2&memory_min=2&order_by=min_price_ondemand&order_dir=asc&limit=1"},
        {{8, 65536, 1, 40960},
         "vcpus_min=8&memory_min=64&order_by=min_price_ondemand&order_dir=asc&limit=1"
         "&gpu_min=1&gpu_memory_total=40"},
        {{4, 16384, 2, 24577},
         "vcpus_min=4&memory_min=16&order_by=min_price_ondemand&order_dir=asc&limit=1"
         "&gpu_min=2&gpu_memory_total=25"},
        {{1, 0, 0, 0},
         "vcpus_min=1&memory_min=0&order_by=min_price_ondemand&order_dir=asc&limit=1"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        struct rt_buf out = {0};
        char err[256];
        log_reset();
        assert_int_equal(call("ok", &cases[i].q, &out, err, sizeof(err)), 0);
        size_t n;
        char *log = log_read(&n);
        assert_int_equal(n, 1);
        char want[256];
        snprintf(want, sizeof(want), "/ok/servers?%s", cases[i].want);
        fx_assert_jget(log, "$.path", want);
        fx_assert_jget(log, "$.headers.x-application-id", "rtrack");
        fx_assert_jget(log, "$.headers.user-agent", "rtrack/" RTRACK_VERSION);
        free(log);
        rt_buf_free(&out);
    }
}

static void test_first_server(void **state)
{
    (void)state;
    struct rt_keeper_query q = {2, 3863, 0, 0};
    struct rt_buf out = {0};
    char err[256];
    rt_buf_puts(&out, "kept|");
    assert_int_equal(call("ok", &q, &out, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    /* appended, not replaced */
    assert_memory_equal(out.p, "kept|", 5);
    const char *obj = out.p + 5;
    assert_int_equal(strlen(out.p), out.len);
    fx_assert_jget(obj, "$.api_reference", "cax11");
    fx_assert_jget(obj, "$.min_price_ondemand", "0.0059");
    fx_assert_jget(obj, "$.vcpus", "2");
    fx_assert_jget(obj, "$.display_name", "CAX11 \xe2\x80\x94 Ampere");
    fx_assert_jget(obj, "$.vendor.name", "Hetzner Cloud");
    fx_assert_jget(obj, "$.tags[1]", "shared");
    /* exactly the first object: not the array, not the second server */
    char *t = fx_jget(obj, "$[0]");
    assert_null(t);
    assert_null(strstr(obj, "t4g.medium"));
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(jdb, "SELECT json_type(?1)", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, obj, -1, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "object");
    sqlite3_finalize(st);
    rt_buf_free(&out);

    /* a trailing slash on the base URL does not double the slash */
    char base[128];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d/ok/", mock_port);
    log_reset();
    assert_int_equal(rt_keeper_cheapest(base, &q, &out, err, sizeof(err)), 0);
    size_t n;
    char *log = log_read(&n);
    assert_int_equal(n, 1);
    char *path = fx_jget(log, "$.path");
    assert_non_null(path);
    assert_true(strncmp(path, "/ok/servers?", 12) == 0);
    free(path);
    free(log);
    rt_buf_free(&out);
}

static void expect_error(const char *mode, const char *want)
{
    struct rt_keeper_query q = {2, 4096, 0, 0};
    struct rt_buf out = {0};
    char err[256];
    rt_buf_puts(&out, "untouched");
    log_reset();
    assert_int_equal(call(mode, &q, &out, err, sizeof(err)), -1);
    if (strcmp(err, want) != 0)
        fail_msg("mode %s: error '%s', want '%s'", mode, err, want);
    assert_string_equal(out.p, "untouched");
    assert_int_equal(out.len, 9);
    size_t n;
    free(log_read(&n));
    assert_int_equal(n, 1); /* one request: no retry, no redirect followed */
    rt_buf_free(&out);
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("empty", "no server matches");
    expect_error("fail", "keeper answered HTTP 500");
    expect_error("notjson", "keeper answered something that is not JSON");
    expect_error("object", "keeper answered JSON that is not a list of servers");
    expect_error("redirect", "keeper answered HTTP 302");
    expect_error("huge", "keeper's answer is larger than 4 MiB");
    expect_error("hugestream", "keeper's answer is larger than 4 MiB");
}

static void test_timeout(void **state)
{
    (void)state;
    struct rt_keeper_query q = {2, 4096, 0, 0};
    struct rt_buf out = {0};
    char err[256];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(call("slow", &q, &out, err, sizeof(err)), -1);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    assert_true(secs < 5.0);
    assert_string_equal(err, "keeper did not answer within 3 s");
    assert_int_equal(out.len, 0);
    rt_buf_free(&out);
}

static void test_refused(void **state)
{
    (void)state;
    /* A socket bound but not listening: connecting to it is refused, and no other process can
     * take the port while it is held. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = 0};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    socklen_t sl = sizeof(sa);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    char base[64];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(sa.sin_port));

    struct rt_keeper_query q = {2, 4096, 0, 0};
    struct rt_buf out = {0};
    char err[256] = "";
    assert_int_equal(rt_keeper_cheapest(base, &q, &out, err, sizeof(err)), -1);
    assert_string_equal(err, "127.0.0.1 not reachable: couldn't connect to server");
    assert_int_equal(out.len, 0);
    close(s);
    rt_buf_free(&out);
}

static void test_bad_query(void **state)
{
    (void)state;
    struct rt_keeper_query q = {-1, 4096, 0, 0};
    struct rt_buf out = {0};
    char err[256] = "";
    assert_int_equal(rt_keeper_cheapest("http://127.0.0.1:1", &q, &out, err, sizeof(err)), -1);
    assert_string_equal(err, "invalid keeper query");
    /* err may be NULL */
    assert_int_equal(rt_keeper_cheapest("http://127.0.0.1:1", &q, &out, NULL, 0), -1);
    assert_int_equal(out.len, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_string), cmocka_unit_test(test_first_server),
        cmocka_unit_test(test_errors),       cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_refused),      cmocka_unit_test(test_bad_query),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
