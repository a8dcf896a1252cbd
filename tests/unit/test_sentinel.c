/* test_sentinel.c - the Sentinel API client against a local mock of the API
 * (tests/helpers/sentinel_mock.py): the exact requests it sends, what it reads from the
 * answers, each way a call fails, and that no secret ever reaches an error message. */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
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

#include "rtrack/cli/env.h"
#include "rtrack/net/http.h"
#include "rtrack/upload/upload.h"
#include "rtrack/version.h"
#include "testlib.h"

#define MOCK_SCRIPT RT_FIXTURES "/../helpers/sentinel_mock.py"

#define TOKEN      "tok-Bearer-5ecret-9f8e7d"
#define S3_KEY     "AKIATESTKEY0123"
#define S3_SECRET  "s3-SECRET-abc123xyz"
#define FAR_FUTURE 4102444800.0

static pid_t mock_pid = -1;
static int mock_port;
static char log_path[64], ctl_path[80];
static char base[64];
static struct rt_sentinel api;

/* The process's HTTP time limit in milliseconds (0: the clients' defaults), as the library takes
 * it. The CLI reads it from RTRACK_HTTP_TIMEOUT_S and refuses a value that is not seconds before
 * any request (tests/cli/test_validation.sh). */
static void timeout_ms(long ms)
{
    rt_http_set_timeout_ms(ms);
}

static int setup(void **state)
{
    (void)state;
    /* The mock is on 127.0.0.1: a proxy from the environment must not get in between. */
    setenv("NO_PROXY", "*", 1);
    setenv("no_proxy", "*", 1);
    timeout_ms(0);

    snprintf(log_path, sizeof(log_path), "/tmp/rt_sentinel_log_XXXXXX");
    int lfd = mkstemp(log_path);
    if (lfd < 0)
        return -1;
    close(lfd);
    snprintf(ctl_path, sizeof(ctl_path), "%s.ctl", log_path);

    setenv("MOCK_S3_KEY", S3_KEY, 1);
    setenv("MOCK_S3_SECRET", S3_SECRET, 1);
    unsetenv("MOCK_S3_TOKEN");
    unsetenv("MOCK_CRED_TTL");
    setenv("MOCK_CONTROL", ctl_path, 1);
    mock_port = fx_python_mock(MOCK_SCRIPT, log_path, TOKEN, &mock_pid);
    if (mock_port <= 0)
        return -1;
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", mock_port);
    api.base = xstrdup(base);
    api.token = xstrdup(TOKEN);
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
    unlink(ctl_path);
    rt_sentinel_free(&api);
    return 0;
}

static void assert_jnull(const char *json, const char *path)
{
    char *got = fx_jget(json, path);
    if (got)
        fail_msg("%s: '%s', want nothing", path, got);
}

/* The control file, written whole and renamed into place as the mock reads it per request. */
static void ctl_set(const char *json)
{
    char tmp[96];
    snprintf(tmp, sizeof(tmp), "%s.new", ctl_path);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(json, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, ctl_path), 0);
}

static void log_reset(void)
{
    assert_int_equal(truncate(log_path, 0), 0);
}

/* The one request the mock recorded since log_reset(). */
static char *log_one(void)
{
    char *s = fx_slurp(log_path);
    assert_non_null(s);
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += *p == '\n';
    if (n != 1)
        fail_msg("the mock recorded %zu requests, want 1:\n%s", n, s);
    return s;
}

/* No secret in an error message, ever. */
static void assert_clean(const char *err)
{
    static const char *const secrets[] = {TOKEN, S3_KEY, S3_SECRET, "session-run-", "5ecret"};
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
    for (size_t i = 0; i < RT_ARRAY_LEN(secrets); i++)
        if (strstr(err, secrets[i]))
            fail_msg("error message carries a secret (%s): %s", secrets[i], err);
}

static void start_ok(struct rt_sentinel_run *r)
{
    char err[512] = "";
    if (rt_sentinel_start_run(&api, "{\"job_name\":\"j\"}", NULL, r, err, sizeof(err)) != 0)
        fail_msg("start_run: %s", err);
}

/* --- rt_parse_iso8601_utc --------------------------------------------------------------- */

static void test_iso8601(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        double want;
    } ok[] = {
        {"1970-01-01T00:00:00Z", 0},
        {"2100-01-01T00:00:00Z", FAR_FUTURE},
        {"2024-02-29T12:34:56Z", 1709210096},
        {"2024-02-29T12:34:56+00:00", 1709210096},
        {"2024-02-29T12:34:56-00:00", 1709210096},
        {"2024-02-29T12:34:56+0000", 1709210096},
        {"2024-02-29T12:34:56", 1709210096},
        {"2024-02-29t12:34:56z", 1709210096},
        {"2024-02-29 12:34:56Z", 1709210096},
        {"2024-02-29T12:34:56.25Z", 1709210096.25},
        {"2024-02-29T12:34:56.250000+00:00", 1709210096.25},
        {"2024-02-29T12:34:56,5Z", 1709210096.5},
        {"2024-02-29T14:34:56+02:00", 1709210096},
        {"2024-02-29T07:04:56-05:30", 1709210096},
        {"2026-04-01T00:00:00Z", 1775001600},
        {"2038-01-19T03:14:08Z", 2147483648.0},
        {"1999-12-31T23:59:59Z", 946684799},
        {"2000-02-29T00:00:00Z", 951782400},
        {"2000-03-01T00:00:00Z", 951868800},
        {"1999-12-31T23:59:60Z", 946684800}, /* a leap second reads as the next second */
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(ok); i++) {
        double got = rt_parse_iso8601_utc(ok[i].s);
        if (fabs(got - ok[i].want) > 1e-6)
            fail_msg("%s: %.6f, want %.6f", ok[i].s, got, ok[i].want);
    }
    static const char *const bad[] = {
        "",
        "garbage",
        "2024-02-29",
        "2024-02-29T12:34Z",
        "2024-02-29T12:34:56Zjunk",
        "2024-02-29T12:34:56 ",
        " 2024-02-29T12:34:56Z",
        "2024-02-29T12:34:56.Z",
        "2024-02-29T12:34:56+2",
        "2024-02-29T12:34:56+25:00",
        "2023-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-00-01T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T23:60:00Z",
        "2024-01-01T23:59:61Z",
        "2024-1-01T00:00:00Z",
        "24-01-01T00:00:00Z",
        "2024/01/01T00:00:00Z",
        "2024-01-01X00:00:00Z",
        "1704067200",
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++)
        if (rt_parse_iso8601_utc(bad[i]) != 0)
            fail_msg("'%s' parsed as %.3f, want 0", bad[i], rt_parse_iso8601_utc(bad[i]));
    assert_true(rt_parse_iso8601_utc(NULL) == 0);
}

/* --- the environment -------------------------------------------------------------------- */

/* s as the CLI makes it: SENTINEL_API_TOKEN and SENTINEL_API_URL through the environment table
 * (src/cli/env.c) */
static int from_env(struct rt_sentinel *s)
{
    struct rt_env e;
    rt_env_load(&e);
    return rt_sentinel_init(s, e.sentinel_token, e.sentinel_url);
}

static void test_from_env(void **state)
{
    (void)state;
    struct rt_sentinel s;
    unsetenv("SENTINEL_API_TOKEN");
    unsetenv("SENTINEL_API_URL");
    assert_int_equal(from_env(&s), -1);
    assert_null(s.token);
    assert_null(s.base);
    setenv("SENTINEL_API_TOKEN", "", 1);
    assert_int_equal(from_env(&s), -1);
    assert_null(s.token);

    setenv("SENTINEL_API_TOKEN", "t0k", 1);
    assert_int_equal(from_env(&s), 0);
    assert_string_equal(s.token, "t0k");
    assert_string_equal(s.base, "https://api.sentinel.sparecores.net");
    rt_sentinel_free(&s);
    assert_null(s.token);
    assert_null(s.base);
    rt_sentinel_free(&s); /* twice is harmless */

    setenv("SENTINEL_API_URL", "http://127.0.0.1:9/api//", 1);
    assert_int_equal(from_env(&s), 0);
    assert_string_equal(s.base, "http://127.0.0.1:9/api");
    rt_sentinel_free(&s);
    setenv("SENTINEL_API_URL", "", 1);
    assert_int_equal(from_env(&s), 0);
    assert_string_equal(s.base, "https://api.sentinel.sparecores.net");
    rt_sentinel_free(&s);
    unsetenv("SENTINEL_API_TOKEN");
    unsetenv("SENTINEL_API_URL");
}

/* --- start_run ------------------------------------------------------------------------- */

static void test_start_run(void **state)
{
    (void)state;
    ctl_set("{}");
    log_reset();
    static const char body[] = "{\"job_name\":\"train\",\"tags\":[\"a=b\"],"
                               "\"command\":\"[\\\"python\\\",\\\"t.py\\\"]\","
                               "\"host_vcpus\":8,\"cloud_vendor_id\":null,\"team\":\"\xc3\xa9\"}";
    struct rt_sentinel_run r;
    char err[512] = "";
    double t0 = fx_wall_s();
    assert_int_equal(rt_sentinel_start_run(&api, body, NULL, &r, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    assert_non_null(r.run_id);
    assert_true(strncmp(r.run_id, "run-", 4) == 0);
    assert_string_equal(r.upload_uri_prefix, "s3://test-bucket/sentinel/org-test");
    assert_string_equal(r.creds.access_key, S3_KEY);
    assert_string_equal(r.creds.secret_key, S3_SECRET);
    char want[64];
    snprintf(want, sizeof(want), "session-%s-1", r.run_id);
    assert_string_equal(r.creds.session_token, want);
    /* the mock's default: an hour from now, to the second */
    assert_true(r.expires_at > t0 + 3600 - 5 && r.expires_at < t0 + 3600 + 5);

    char *log = log_one();
    fx_assert_jget(log, "$.method", "POST");
    fx_assert_jget(log, "$.path", "/runs");
    fx_assert_jget(log, "$.headers.authorization", "Bearer " TOKEN);
    fx_assert_jget(log, "$.headers.content-type", "application/json");
    fx_assert_jget(log, "$.headers.accept", "application/json");
    fx_assert_jget(log, "$.headers.user-agent", "rtrack/" RTRACK_VERSION);
    char len[32];
    snprintf(len, sizeof(len), "%zu", strlen(body));
    fx_assert_jget(log, "$.headers.content-length", len);
    assert_jnull(log, "$.headers.expect");
    assert_jnull(log, "$.headers.content-encoding");
    fx_assert_jget(log, "$.body", body); /* byte for byte what the caller gave */
    free(log);
    rt_sentinel_run_free(&r);
    assert_null(r.run_id);
    assert_null(r.creds.secret_key);
    rt_sentinel_run_free(&r); /* twice is harmless */
}

static void expect_expiry(const char *ctl, double want, double slack)
{
    ctl_set(ctl);
    struct rt_sentinel_run r;
    start_ok(&r);
    if (fabs(r.expires_at - want) > slack)
        fail_msg("control %s: expires_at %.3f, want %.3f", ctl, r.expires_at, want);
    rt_sentinel_run_free(&r);
}

static void test_expiration(void **state)
{
    (void)state;
    expect_expiry("{\"expiration\": \"2030-01-01T00:00:00Z\"}", 1893456000, 1e-6);
    expect_expiry("{\"expiration\": \"2030-01-01T00:00:00+00:00\"}", 1893456000, 1e-6);
    expect_expiry("{\"expiration\": \"2030-01-01T00:00:00.123456+00:00\"}", 1893456000.123456,
                  1e-5);
    expect_expiry("{\"expiration\": \"2030-01-01T00:00:00.5Z\"}", 1893456000.5, 1e-6);
    /* the older key name */
    expect_expiry("{\"expiration_key\": \"expires_at\", \"expiration\": \"2030-01-01T00:00:00Z\"}",
                  1893456000, 1e-6);
    /* none: the credentials do not expire */
    expect_expiry("{\"expiration\": null}", FAR_FUTURE, 0);
    expect_expiry("{\"expiration_key\": \"expires_at\", \"expiration\": null}", FAR_FUTURE, 0);
    /* unreadable: long expired, so the caller refreshes at once */
    expect_expiry("{\"expiration\": \"next tuesday\"}", 0, 0);
    expect_expiry("{\"expiration\": 1893456000}", 0, 0);
    expect_expiry("{\"expiration\": \"\"}", 0, 0);
    /* a TTL from the mock's environment-or-control */
    expect_expiry("{\"ttl\": 120}", fx_wall_s() + 120, 5);
    ctl_set("{}");
}

static void test_run_id_number(void **state)
{
    (void)state;
    ctl_set("{\"run_id\": 42}");
    struct rt_sentinel_run r;
    start_ok(&r);
    assert_string_equal(r.run_id, "42");
    ctl_set("{}");
    char err[512] = "";
    log_reset();
    assert_int_equal(rt_sentinel_finish(&api, r.run_id,
                                        "{\"exit_code\":0,\"run_status\":\"finished\","
                                        "\"finished_at\":\"2026-04-01T00:00:00Z\","
                                        "\"data_source\":\"s3\",\"data_uris\":[\"s3://b/k\"]}",
                                        err, sizeof(err)),
                     0);
    char *log = log_one();
    fx_assert_jget(log, "$.path", "/runs/42/finish");
    free(log);
    rt_sentinel_run_free(&r);
}

/* A 2xx /runs answer the mock is told to give instead of its own. */
static void expect_start_error(const char *ctl, const char *want)
{
    ctl_set(ctl);
    struct rt_sentinel_run r;
    memset(&r, 0x5a, sizeof(r)); /* start_run owns r: it is reset even on failure */
    char err[512] = "";
    log_reset();
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r, err, sizeof(err)), -1);
    if (strcmp(err, want) != 0)
        fail_msg("control %s:\n error '%s'\n want  '%s'", ctl, err, want);
    assert_clean(err);
    assert_null(r.run_id);
    assert_null(r.upload_uri_prefix);
    assert_null(r.creds.access_key);
    assert_null(r.creds.secret_key);
    assert_null(r.creds.session_token);
    free(log_one()); /* exactly one request: no retry */
}

#define FAULT_START(status, body)                                                                  \
    "{\"faults\": {\"start\": {\"status\": " #status ", \"body\": " body "}}}"
#define CREDS_NO_SECRET "{\"access_key\": \"" S3_KEY "\", \"session_token\": \"session-run-x\"}"

static void test_start_errors(void **state)
{
    (void)state;
    const char *what = "POST /runs";
    char want[512];
    /* the mock's own validation: 401 and FastAPI's 422, quoted */
    struct rt_sentinel bad = {.base = base, .token = "wrong-token"};
    struct rt_sentinel_run r;
    char err[512] = "";
    ctl_set("{}");
    assert_int_equal(rt_sentinel_start_run(&bad, "{}", NULL, &r, err, sizeof(err)), -1);
    assert_string_equal(
        err, "sentinel answered HTTP 401 for POST /runs: {\"detail\": \"Invalid or missing API "
             "token\"}");
    assert_clean(err);
    assert_int_equal(rt_sentinel_start_run(&api, "{\"pid\": 12}", NULL, &r, err, sizeof(err)), -1);
    assert_string_equal(err, "sentinel answered HTTP 422 for POST /runs: {\"detail\": [{\"type\": "
                             "\"extra_forbidden\", \"loc\": [\"body\", \"pid\"], \"msg\": \"Extra "
                             "inputs are not permitted\"}]}");
    assert_clean(err);

    expect_start_error(FAULT_START(500, "\"upstream\\r\\n  down\\tnow\""),
                       "sentinel answered HTTP 500 for POST /runs: upstream down now");
    expect_start_error(FAULT_START(503, "\"\""), "sentinel answered HTTP 503 for POST /runs");
    /* an error answer that echoes the token is not quoted */
    expect_start_error(FAULT_START(400, "{\"detail\": \"bad token " TOKEN "\"}"),
                       "sentinel answered HTTP 400 for POST /runs");
    /* nor its beginning, as an answer cut short would echo it: 8 bytes or more become *** */
    expect_start_error(
        FAULT_START(400, "{\"detail\": \"bad token tok-Bearer-5e\"}"),
        "sentinel answered HTTP 400 for POST /runs: {\"detail\": \"bad token ***\"}");
    expect_start_error(
        FAULT_START(400, "{\"detail\": \"bad token tok-Bear\"}"),
        "sentinel answered HTTP 400 for POST /runs: {\"detail\": \"bad token ***\"}");
    expect_start_error(FAULT_START(400, "{\"detail\": \"bad token tok-Bea\"}"),
                       "sentinel answered HTTP 400 for POST /runs: {\"detail\": \"bad token "
                       "tok-Bea\"}");
    /* a redirect is not followed */
    expect_start_error(FAULT_START(302, "\"\""), "sentinel answered HTTP 302 for POST /runs");

    /* 2xx answers are never quoted: they carry credentials */
    snprintf(want, sizeof(want), "sentinel's answer to %s is not JSON", what);
    expect_start_error(FAULT_START(200, "\"<html>" S3_SECRET "</html>\""), want);
    snprintf(want, sizeof(want), "sentinel's answer to %s is not a JSON object", what);
    expect_start_error(FAULT_START(200, "[\"" S3_SECRET "\"]"), want);
    snprintf(want, sizeof(want), "sentinel's answer to %s has no run_id", what);
    expect_start_error(FAULT_START(201, "{\"upload_uri_prefix\": \"s3://b/p\"}"), want);
    expect_start_error(FAULT_START(200, "{\"run_id\": \"\"}"), want);
    expect_start_error(FAULT_START(200, "{\"run_id\": true}"), want);
    expect_start_error(FAULT_START(200, "{\"run_id\": {\"id\": 1}}"), want);
    snprintf(want, sizeof(want), "sentinel's answer to %s has no upload_uri_prefix", what);
    expect_start_error(FAULT_START(200, "{\"run_id\": \"r1\"}"), want);
    expect_start_error(FAULT_START(200, "{\"run_id\": \"r1\", \"upload_uri_prefix\": 7}"), want);
    snprintf(want, sizeof(want), "sentinel's answer to %s has no upload_credentials.access_key",
             what);
    expect_start_error(
        FAULT_START(200, "{\"run_id\": \"r1\", \"upload_uri_prefix\": \"s3://b/p\"}"), want);
    snprintf(want, sizeof(want), "sentinel's answer to %s has no upload_credentials.secret_key",
             what);
    expect_start_error(FAULT_START(200, "{\"run_id\": \"r1\", \"upload_uri_prefix\": \"s3://b/p\", "
                                        "\"upload_credentials\": " CREDS_NO_SECRET "}"),
                       want);
    snprintf(want, sizeof(want), "sentinel's answer to %s has no upload_credentials.session_token",
             what);
    expect_start_error(FAULT_START(200, "{\"run_id\": \"r1\", \"upload_uri_prefix\": \"s3://b/p\", "
                                        "\"upload_credentials\": {\"access_key\": \"" S3_KEY
                                        "\", \"secret_key\": \"" S3_SECRET
                                        "\", \"session_token\": null}}"),
                       want);
    ctl_set("{}");
}

static void test_long_error_body(void **state)
{
    (void)state;
    /* a 1000-byte error answer: 200 bytes of it, cut before a UTF-8 sequence it would split */
    char ctl[2048];
    char body[1100];
    size_t n = 0;
    for (; n < 199; n++)
        body[n] = 'x';
    memcpy(body + n, "\xc3\xa9", 2); /* straddles byte 200 */
    n += 2;
    for (; n < 1000; n++)
        body[n] = 'y';
    body[n] = '\0';
    snprintf(ctl, sizeof(ctl), "{\"faults\": {\"start\": {\"status\": 422, \"body\": \"%s\"}}}",
             body);
    ctl_set(ctl);
    struct rt_sentinel_run r;
    char err[1024] = "";
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r, err, sizeof(err)), -1);
    static const char prefix[] = "sentinel answered HTTP 422 for POST /runs: ";
    assert_true(strncmp(err, prefix, strlen(prefix)) == 0);
    const char *ex = err + strlen(prefix);
    assert_int_equal(strlen(ex), 199);
    assert_null(strchr(ex, 'y'));
    assert_clean(err);

    /* a short err buffer is cut, still NUL-terminated */
    ctl_set(ctl);
    char small[32];
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r, small, sizeof(small)), -1);
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_true(strncmp(small, prefix, sizeof(small) - 1) == 0);
    /* and err may be NULL */
    ctl_set(ctl);
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r, NULL, 0), -1);
    ctl_set("{}");
}

/* --- refresh ---------------------------------------------------------------------------- */

static void test_refresh(void **state)
{
    (void)state;
    ctl_set("{}");
    struct rt_sentinel_run r;
    start_ok(&r);
    char *old_session = r.creds.session_token;
    char want[128];
    snprintf(want, sizeof(want), "session-%s-1", r.run_id);
    assert_string_equal(old_session, want);

    ctl_set("{\"ttl\": 600}");
    log_reset();
    char err[512] = "";
    double t0 = fx_wall_s();
    assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    snprintf(want, sizeof(want), "session-%s-2", r.run_id);
    assert_string_equal(r.creds.session_token, want);
    assert_string_equal(r.creds.access_key, S3_KEY);
    assert_string_equal(r.creds.secret_key, S3_SECRET);
    assert_true(r.expires_at > t0 + 600 - 5 && r.expires_at < t0 + 600 + 5);
    assert_true(strncmp(r.run_id, "run-", 4) == 0); /* the rest of the run is untouched */
    assert_string_equal(r.upload_uri_prefix, "s3://test-bucket/sentinel/org-test");

    char *log = log_one();
    fx_assert_jget(log, "$.method", "POST");
    snprintf(want, sizeof(want), "/runs/%s/refresh-credentials", r.run_id);
    fx_assert_jget(log, "$.path", want);
    fx_assert_jget(log, "$.headers.authorization", "Bearer " TOKEN);
    fx_assert_jget(log, "$.headers.user-agent", "rtrack/" RTRACK_VERSION);
    fx_assert_jget(log, "$.body", "");
    fx_assert_jget(log, "$.headers.content-length", "0");
    assert_jnull(log, "$.headers.content-type");
    assert_jnull(log, "$.headers.transfer-encoding");
    free(log);

    /* an answer without expiration: never expires */
    ctl_set("{\"expiration\": null}");
    assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), 0);
    assert_true(r.expires_at == FAR_FUTURE);
    snprintf(want, sizeof(want), "session-%s-3", r.run_id);
    assert_string_equal(r.creds.session_token, want);

    /* failures keep the old credentials and never quote the answer */
    r.expires_at = 1234;
    static const char answered[] = "sentinel answered HTTP ", answer[] = "sentinel's answer to ";
    static const struct {
        const char *ctl, *head, *tail; /* err = head "POST /runs/ID/refresh-credentials" tail */
    } fails[] = {
        {"{\"faults\": {\"refresh\": {\"status\": 500, \"body\": {\"secret_key\": \"" S3_SECRET
         "\"}}}}",
         "500 for ", ""},
        {"{\"faults\": {\"refresh\": {\"status\": 403, \"body\": \"forbidden\"}}}", "403 for ", ""},
        {"{\"faults\": {\"refresh\": {\"status\": 200, \"body\": \"" S3_SECRET "\"}}}", NULL,
         " is not JSON"},
        {"{\"faults\": {\"refresh\": {\"status\": 200, \"body\": {\"credentials\": {}}}}}", NULL,
         " has no upload_credentials.access_key"},
        {"{\"faults\": {\"refresh\": {\"status\": 200, \"body\": {\"upload_credentials\": "
         "{\"access_key\": \"" S3_KEY "\", \"secret_key\": \"" S3_SECRET "\"}}}}}",
         NULL, " has no upload_credentials.session_token"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(fails); i++) {
        ctl_set(fails[i].ctl);
        log_reset();
        char *before = r.creds.session_token;
        assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), -1);
        char w[256];
        snprintf(w, sizeof(w), "%s%sPOST /runs/%s/refresh-credentials%s",
                 fails[i].head ? answered : answer, fails[i].head ? fails[i].head : "", r.run_id,
                 fails[i].tail);
        assert_string_equal(err, w);
        assert_clean(err);
        assert_ptr_equal(r.creds.session_token, before);
        assert_string_equal(r.creds.secret_key, S3_SECRET);
        assert_true(r.expires_at == 1234);
        free(log_one());
    }

    /* an unknown run: 404, not quoted either */
    ctl_set("{}");
    char *id = r.run_id;
    r.run_id = "run-999";
    assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), -1);
    assert_string_equal(err,
                        "sentinel answered HTTP 404 for POST /runs/run-999/refresh-credentials");
    r.run_id = id;
    /* no run at all */
    struct rt_sentinel_run none = {0};
    assert_int_equal(rt_sentinel_refresh(&api, &none, err, sizeof(err)), -1);
    assert_string_equal(err, "no sentinel run to refresh credentials for");
    rt_sentinel_run_free(&r);
}

/* --- finish ----------------------------------------------------------------------------- */

static void test_finish(void **state)
{
    (void)state;
    ctl_set("{}");
    struct rt_sentinel_run r;
    start_ok(&r);
    char path[128], want[512], err[512] = "";
    snprintf(path, sizeof(path), "/runs/%s/finish", r.run_id);

    static const char s3[] =
        "{\"exit_code\":0,\"run_status\":\"finished\","
        "\"finished_at\":\"2026-04-01T12:00:00Z\",\"data_source\":\"s3\","
        "\"data_uris\":[\"s3://test-bucket/sentinel/org-test/r/000000.csv.gz\"]}";
    log_reset();
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, s3, err, sizeof(err)), 0);
    assert_string_equal(err, "");
    char *log = log_one();
    fx_assert_jget(log, "$.method", "POST");
    fx_assert_jget(log, "$.path", path);
    fx_assert_jget(log, "$.headers.authorization", "Bearer " TOKEN);
    fx_assert_jget(log, "$.headers.content-type", "application/json");
    fx_assert_jget(log, "$.headers.user-agent", "rtrack/" RTRACK_VERSION);
    assert_jnull(log, "$.headers.content-encoding");
    assert_jnull(log, "$.headers.expect");
    fx_assert_jget(log, "$.body", s3);
    free(log);

    /* inline, with a body large enough that curl would otherwise ask 100-continue */
    struct rt_buf inl = {0};
    rt_buf_puts(&inl, "{\"exit_code\":3,\"run_status\":\"failed\","
                      "\"finished_at\":\"2026-04-01T12:00:00Z\",\"data_source\":\"inline\","
                      "\"data_csv\":\"timestamp,cpu\\n");
    for (int i = 0; i < 100000; i++)
        rt_buf_puts(&inl, "1775044800.0,0.5\\n");
    rt_buf_puts(&inl, "\"}");
    log_reset();
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, inl.p, err, sizeof(err)), 0);
    log = log_one();
    char *got = fx_jget(log, "$.body");
    assert_non_null(got);
    assert_int_equal(strlen(got), inl.len);
    assert_string_equal(got, inl.p);
    free(got);
    assert_jnull(log, "$.headers.expect");
    free(log);
    rt_buf_free(&inl);

    /* the mock's contract check: run_id in the body, a bad status, a missing key */
    log_reset();
    assert_int_equal(
        rt_sentinel_finish(&api, r.run_id,
                           "{\"run_id\":\"x\",\"exit_code\":0,\"run_status\":\"finished\","
                           "\"finished_at\":\"2026-04-01T12:00:00Z\",\"data_source\":\"s3\","
                           "\"data_uris\":[\"s3://b/k\"]}",
                           err, sizeof(err)),
        -1);
    snprintf(
        want, sizeof(want),
        "sentinel answered HTTP 422 for POST %s: {\"detail\": [{\"type\": \"extra_forbidden\", "
        "\"loc\": [\"body\", \"run_id\"], \"msg\": \"Extra inputs are not permitted\"}]}",
        path);
    assert_string_equal(err, want);
    assert_clean(err);
    free(log_one());
    assert_int_equal(rt_sentinel_finish(&api, r.run_id,
                                        "{\"exit_code\":0,\"run_status\":\"done\","
                                        "\"finished_at\":\"2026-04-01 12:00:00\","
                                        "\"data_source\":\"inline\"}",
                                        err, sizeof(err)),
                     -1);
    snprintf(want, sizeof(want), "sentinel answered HTTP 422 for POST %s: ", path);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_non_null(strstr(err, "HTTP 422"));
    assert_true(strlen(err) <= strlen(want) + 200);
    assert_clean(err);

    /* only 200 will do */
    ctl_set("{\"faults\": {\"finish\": {\"status\": 500, \"body\": {\"detail\": \"db down\"}}}}");
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, s3, err, sizeof(err)), -1);
    snprintf(want, sizeof(want),
             "sentinel answered HTTP 500 for POST %s: {\"detail\": \"db down\"}", path);
    assert_string_equal(err, want);
    assert_clean(err);
    ctl_set("{\"faults\": {\"finish\": {\"status\": 202, \"body\": {\"queued\": true}}}}");
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, s3, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "sentinel answered HTTP 202 for POST %s", path);
    assert_string_equal(err, want);
    ctl_set("{\"faults\": {\"finish\": {\"status\": 204, \"body\": \"\"}}}");
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, s3, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "sentinel answered HTTP 204 for POST %s", path);
    assert_string_equal(err, want);
    /* an error answer echoing the token is not quoted */
    ctl_set("{\"faults\": {\"finish\": {\"status\": 401, \"body\": \"Bearer " TOKEN "\"}}}");
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, s3, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "sentinel answered HTTP 401 for POST %s", path);
    assert_string_equal(err, want);
    assert_clean(err);

    /* a run id made of the token (quoted in the path of the next call): redacted (fuzz_sentinel
     * found it, corpus regress-token-in-run-id) */
    assert_int_equal(rt_sentinel_finish(&api, TOKEN, s3, err, sizeof(err)), -1);
    assert_string_equal(err, "sentinel answered HTTP 404 for POST /runs/***/finish: {\"detail\": "
                             "\"Run not found\"}");
    assert_clean(err);

    /* an unknown run, and a run id that needs escaping in the path */
    ctl_set("{}");
    log_reset();
    assert_int_equal(rt_sentinel_finish(&api, "a b/c?d", s3, err, sizeof(err)), -1);
    assert_string_equal(err, "sentinel answered HTTP 404 for POST /runs/a%20b%2Fc%3Fd/finish: "
                             "{\"detail\": \"Run not found\"}");
    log = log_one();
    fx_assert_jget(log, "$.path", "/runs/a%20b%2Fc%3Fd/finish");
    free(log);
    assert_int_equal(rt_sentinel_finish(&api, "", s3, err, sizeof(err)), -1);
    assert_string_equal(err, "no sentinel run to finish");
    rt_sentinel_run_free(&r);
}

/* --- transport failures ----------------------------------------------------------------- */

static double elapsed(const struct timespec *a)
{
    struct timespec b;
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

static void test_timeout(void **state)
{
    (void)state;
    ctl_set("{}");
    struct rt_sentinel_run r;
    start_ok(&r);
    char err[512] = "", want[512];
    struct timespec a;

    timeout_ms(1000);
    ctl_set("{\"faults\": {\"start\": {\"sleep\": 3}}}");
    struct rt_sentinel_run r2;
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r2, err, sizeof(err)), -1);
    assert_true(elapsed(&a) < 2.5);
    snprintf(want, sizeof(want), "sentinel api %s did not answer POST /runs within 1 s", base);
    assert_string_equal(err, want);
    assert_clean(err);

    timeout_ms(500);
    ctl_set("{\"faults\": {\"refresh\": {\"sleep\": 3}}}");
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), -1);
    assert_true(elapsed(&a) < 2.0);
    snprintf(want, sizeof(want),
             "sentinel api %s did not answer POST /runs/%s/refresh-credentials within 0.5 s", base,
             r.run_id);
    assert_string_equal(err, want);
    assert_clean(err);

    ctl_set("{\"faults\": {\"finish\": {\"sleep\": 3}}}");
    clock_gettime(CLOCK_MONOTONIC, &a);
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, "{}", err, sizeof(err)), -1);
    assert_true(elapsed(&a) < 2.0);
    assert_non_null(strstr(err, "did not answer POST /runs/"));
    assert_clean(err);

    /* no limit set (0) or one that is none (negative): the 30 s default holds, and a quick
     * answer is fine */
    static const long ignored[] = {0, -3, -3000, LONG_MIN};
    ctl_set("{\"faults\": {\"refresh\": {\"sleep\": 0.2, \"count\": -1}}}");
    for (size_t i = 0; i < RT_ARRAY_LEN(ignored); i++) {
        timeout_ms(ignored[i]);
        assert_int_equal(rt_http_timeout_ms(30000), 30000);
        if (rt_sentinel_refresh(&api, &r, err, sizeof(err)) != 0)
            fail_msg("time limit %ld ms: %s", ignored[i], err);
    }
    timeout_ms(0);
    ctl_set("{}");
    rt_sentinel_run_free(&r);
}

static void test_closed(void **state)
{
    (void)state;
    ctl_set("{}");
    struct rt_sentinel_run r;
    start_ok(&r);
    char err[512] = "", want[512];
    ctl_set("{\"faults\": {\"start\": {\"close\": true}}}");
    struct rt_sentinel_run r2;
    assert_int_equal(rt_sentinel_start_run(&api, "{}", NULL, &r2, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "sentinel api %s gave no complete answer to POST /runs: ", base);
    assert_true(strncmp(err, want, strlen(want)) == 0);
    assert_clean(err);
    /* "any" applies to every endpoint */
    ctl_set("{\"faults\": {\"any\": {\"close\": true, \"count\": 2}}}");
    assert_int_equal(rt_sentinel_refresh(&api, &r, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "gave no complete answer to POST /runs/"));
    assert_clean(err);
    assert_int_equal(rt_sentinel_finish(&api, r.run_id, "{}", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "gave no complete answer to POST /runs/"));
    assert_clean(err);
    ctl_set("{}");
    rt_sentinel_run_free(&r);
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
    char dead[128], want[256];
    /* user:password in the URL stays out of the message too */
    snprintf(dead, sizeof(dead), "http://user:" TOKEN "@127.0.0.1:%d", ntohs(sa.sin_port));
    struct rt_sentinel off = {.base = dead, .token = TOKEN};
    snprintf(want, sizeof(want),
             "cannot reach sentinel api http://127.0.0.1:%d: couldn't connect to server",
             ntohs(sa.sin_port));

    struct rt_sentinel_run r;
    char err[512] = "";
    assert_int_equal(rt_sentinel_start_run(&off, "{}", NULL, &r, err, sizeof(err)), -1);
    assert_string_equal(err, want);
    assert_clean(err);
    struct rt_sentinel_run fake = {.run_id = "run-1"};
    assert_int_equal(rt_sentinel_refresh(&off, &fake, err, sizeof(err)), -1);
    assert_string_equal(err, want);
    assert_clean(err);
    assert_int_equal(rt_sentinel_finish(&off, "run-1", "{}", err, sizeof(err)), -1);
    assert_string_equal(err, want);
    assert_clean(err);
    close(s);

    /* TLS to a plain-HTTP server: the handshake fails before any request goes out */
    char tls[64];
    snprintf(tls, sizeof(tls), "https://127.0.0.1:%d", mock_port);
    struct rt_sentinel https = {.base = tls, .token = TOKEN};
    snprintf(want, sizeof(want), "cannot reach sentinel api %s: ", tls);
    assert_int_equal(rt_sentinel_start_run(&https, "{}", NULL, &r, err, sizeof(err)), -1);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("error '%s', want '%s...'", err, want);
    assert_clean(err);

    /* no token: nothing is sent */
    struct rt_sentinel notok = {.base = base, .token = ""};
    log_reset();
    assert_int_equal(rt_sentinel_start_run(&notok, "{}", NULL, &r, err, sizeof(err)), -1);
    assert_string_equal(err, "no sentinel api token");
    char *log = fx_slurp(log_path);
    assert_string_equal(log, "");
    free(log);
}

/* --- one registration: the key, the doubt ---------------------------------------------------- */

/* The run's key goes as an Idempotency-Key header, the same each time; none without a key, and
 * none that could break the header line. */
static void test_idempotency_key(void **state)
{
    (void)state;
    ctl_set("{}");
    static const char key[] = "0b7c5d1e-1f2a-4c3b-9d8e-7f6a5b4c3d2e";
    struct rt_sentinel_run r;
    char err[512] = "";
    for (int i = 0; i < 2; i++) {
        log_reset();
        assert_int_equal(rt_sentinel_start_run(&api, "{}", key, &r, err, sizeof(err)), 0);
        char *log = log_one();
        fx_assert_jget(log, "$.headers.idempotency-key", key);
        free(log);
        rt_sentinel_run_free(&r);
    }
    static const char *const none[] = {NULL, "", "a\r\nX-Evil: 1"};
    for (size_t i = 0; i < RT_ARRAY_LEN(none); i++) {
        log_reset();
        assert_int_equal(rt_sentinel_start_run(&api, "{}", none[i], &r, err, sizeof(err)), 0);
        char *log = log_one();
        assert_jnull(log, "$.headers.idempotency-key");
        assert_jnull(log, "$.headers.x-evil");
        free(log);
        rt_sentinel_run_free(&r);
    }
}

/* r.in_doubt after a start that fails under the mock's control ctl */
static int start_doubt(const char *ctl, const char *want_err)
{
    ctl_set(ctl);
    struct rt_sentinel_run r;
    memset(&r, 0x5a, sizeof(r));
    char err[512] = "";
    assert_int_equal(rt_sentinel_start_run(&api, "{}", "k", &r, err, sizeof(err)), -1);
    if (want_err && !strstr(err, want_err))
        fail_msg("control %s: error '%s', want '%s' in it", ctl, err, want_err);
    assert_clean(err);
    assert_null(r.run_id);
    assert_null(r.creds.secret_key);
    ctl_set("{}");
    return r.in_doubt;
}

/* Only a POST that went out and got no usable answer may have registered the run. */
static void test_start_in_doubt(void **state)
{
    (void)state;
    /* the server said no, or nothing was sent: certainly not registered */
    assert_int_equal(start_doubt(FAULT_START(500, "\"\""), "HTTP 500"), 0);
    assert_int_equal(start_doubt(FAULT_START(503, "\"\""), "HTTP 503"), 0);
    assert_int_equal(start_doubt(FAULT_START(422, "\"\""), "HTTP 422"), 0);
    assert_int_equal(start_doubt(FAULT_START(302, "\"\""), "HTTP 302"), 0);
    /* a gateway's 502 or 504 says nothing of the API behind it */
    assert_int_equal(start_doubt(FAULT_START(502, "\"\""), "HTTP 502"), 1);
    assert_int_equal(start_doubt(FAULT_START(504, "\"\""), "HTTP 504"), 1);
    /* a 2xx that cannot be used: the run was made */
    assert_int_equal(start_doubt(FAULT_START(200, "\"<html>\""), "is not JSON"), 1);
    assert_int_equal(
        start_doubt(FAULT_START(201, "{\"upload_uri_prefix\": \"s3://b/p\"}"), "has no run_id"), 1);
    /* no answer at all: the server may or may not have acted */
    assert_int_equal(
        start_doubt("{\"faults\": {\"start\": {\"close\": true}}}", "gave no complete answer"), 1);
    assert_int_equal(
        start_doubt("{\"faults\": {\"start\": {\"lose\": true}}}", "gave no complete answer"), 1);
    timeout_ms(1000);
    assert_int_equal(start_doubt("{\"faults\": {\"start\": {\"sleep\": 2}}}", "did not answer"), 1);
    timeout_ms(0);
    /* a run id or prefix that carries a secret is made, and not used */
    assert_int_equal(start_doubt("{\"run_id\": \"" TOKEN "\"}",
                                 "carries the api token or an s3 credential in its run_id; not "
                                 "used"),
                     1);
    assert_int_equal(start_doubt("{\"run_id\": \"x-tok-Bearer-5e\"}", "in its run_id; not used"),
                     1);
    assert_int_equal(start_doubt("{\"run_id\": \"r-" S3_SECRET "\"}", "in its run_id; not used"),
                     1);
    assert_int_equal(start_doubt("{\"org\": \"" TOKEN "\"}", "in its upload_uri_prefix; not used"),
                     1);

    /* never sent: refused before or at the connection */
    struct rt_sentinel_run r;
    char err[512] = "";
    struct rt_sentinel plain = {.base = "http://192.0.2.1:9", .token = TOKEN};
    assert_int_equal(rt_sentinel_start_run(&plain, "{}", NULL, &r, err, sizeof(err)), -1);
    assert_int_equal(r.in_doubt, 0);
    assert_string_equal(err, "cannot use sentinel api 'http://192.0.2.1:9': plain http would "
                             "send the api token unencrypted; use https:// (plain http only to "
                             "127.0.0.0/8, ::1 or localhost)");
}

/* The token goes over TLS, or no further than this machine. */
static void test_url_check(void **state)
{
    (void)state;
    static const char *const ok[] = {
        NULL,
        "",
        "https://api.sentinel.sparecores.net",
        "HTTPS://example.com/x",
        "http://127.0.0.1:9",
        "http://127.200.3.4/api",
        "http://localhost",
        "http://LocalHost:8080/x?y",
        "http://[::1]:8080",
        "http://[::1]",
        "http://user:pw@127.0.0.1:9",
    };
    char err[512];
    for (size_t i = 0; i < RT_ARRAY_LEN(ok); i++)
        if (rt_sentinel_url_check(ok[i], err, sizeof(err)) != 0)
            fail_msg("'%s' refused: %s", ok[i] ? ok[i] : "(null)", err);
    static const char *const plain[] = {
        "http://example.com",
        "http://10.0.0.1:80",
        "http://128.0.0.1",
        "http://127.0.0.1.nip.io",
        "http://localhost.example.com",
        "http://127.1",
        "http://[::2]:80",
        "http://[::ffff:10.0.0.1]",
        "http://127.0.0.1@example.com",
        "http://example.com/@127.0.0.1",
        "http://",
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(plain); i++) {
        err[0] = '\0';
        if (rt_sentinel_url_check(plain[i], err, sizeof(err)) == 0)
            fail_msg("'%s' allowed", plain[i]);
        if (!strstr(err, "plain http would send the api token unencrypted"))
            fail_msg("'%s': %s", plain[i], err);
    }
    assert_int_equal(rt_sentinel_url_check("http://u:" TOKEN "@example.com", err, sizeof(err)), -1);
    assert_string_equal(err, "cannot use sentinel api 'http://example.com': plain http would "
                             "send the api token unencrypted; use https:// (plain http only to "
                             "127.0.0.0/8, ::1 or localhost)");
    assert_int_equal(rt_sentinel_url_check("ftp://example.com", err, sizeof(err)), -1);
    assert_string_equal(err, "cannot use sentinel api 'ftp://example.com': not an http(s):// url");
}

/* Messages that leave the upload room lose every stretch of a secret. */
static void test_redact(void **state)
{
    (void)state;
    struct rt_sentinel_run r;
    start_ok(&r); /* its credentials are remembered */
    char text[256];
    snprintf(text, sizeof(text),
             "a " TOKEN " b tok-Bearer-5e c tok-Bea d " S3_KEY " e s3-SECRET-ab f %s g",
             r.creds.session_token);
    rt_sentinel_redact(&api, text, sizeof(text));
    assert_string_equal(text, "a *** b *** c tok-Bea d *** e *** f *** g");
    rt_sentinel_run_free(&r);
    snprintf(text, sizeof(text), "no secret here");
    rt_sentinel_redact(NULL, text, sizeof(text));
    assert_string_equal(text, "no secret here");
    char where[128];
    struct rt_sentinel userinfo = {.base = "https://u:" TOKEN "@h.example/api?t=" TOKEN,
                                   .token = TOKEN};
    rt_sentinel_where(&userinfo, where, sizeof(where));
    assert_string_equal(where, "https://h.example/api?t=***");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_iso8601),         cmocka_unit_test(test_from_env),
        cmocka_unit_test(test_start_run),       cmocka_unit_test(test_expiration),
        cmocka_unit_test(test_run_id_number),   cmocka_unit_test(test_start_errors),
        cmocka_unit_test(test_long_error_body), cmocka_unit_test(test_refresh),
        cmocka_unit_test(test_finish),          cmocka_unit_test(test_timeout),
        cmocka_unit_test(test_closed),          cmocka_unit_test(test_refused),
        cmocka_unit_test(test_idempotency_key), cmocka_unit_test(test_start_in_doubt),
        cmocka_unit_test(test_url_check),       cmocka_unit_test(test_redact),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
