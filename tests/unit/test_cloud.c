/* test_cloud.c - cloud discovery against local impersonations of each vendor's metadata
 * service (tests/helpers/imds_mock.py): the exact fields per vendor, the AWS look-alike guard,
 * the time budget, precedence, the off switch, and probes run inline when no thread can be
 * created. */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/config.h"
#include "rtrack/cli/env.h"
#include "rtrack/collect/cloud.h"
#include "testlib.h"

#define MOCK_SCRIPT RT_FIXTURES "/../helpers/imds_mock.py"
/* Nothing listens on port 1: connection refused at once. */
#define CLOSED "http://127.0.0.1:1"

static const char *const imds_env[] = {
    "RTRACK_IMDS_AWS",     "RTRACK_IMDS_GCP",   "RTRACK_IMDS_AZURE",    "RTRACK_IMDS_HETZNER",
    "RTRACK_IMDS_UPCLOUD", "RTRACK_IMDS_VULTR", "RTRACK_IMDS_ALICLOUD", "RTRACK_IMDS_OVH",
};

/* --- pthread_create that can be made to fail, as under a full pids.max ------------------- */

static volatile int fail_threads;

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    static create_fn real;
    if (fail_threads)
        return EAGAIN;
    if (!real) {
        void *sym = dlsym(RTLD_NEXT, "pthread_create");
        memcpy(&real, &sym, sizeof(real));
    }
    return real ? real(th, attr, fn, arg) : EAGAIN;
}

/* --- mocks ------------------------------------------------------------------------------- */

struct mock {
    const char *vendor;
    pid_t pid;
    int port;
    int out; /* read end of its stdout, until the port is read */
    char url[64];
    char log[64];
};

/* One mock per vendor mode, all started at once by the group setup (a python3 start costs
 * about half a second) and stopped by the group teardown. */
static struct mock mocks[] = {
    {.vendor = "aws"},     {.vendor = "aws-lookalike"}, {.vendor = "gcp"},   {.vendor = "azure"},
    {.vendor = "hetzner"}, {.vendor = "upcloud"},       {.vendor = "vultr"}, {.vendor = "alicloud"},
    {.vendor = "ovh"},     {.vendor = "slow"},          {.vendor = "none"},
};

static int mock_spawn(struct mock *m)
{
    snprintf(m->log, sizeof(m->log), "/tmp/rt_imds_log_XXXXXX");
    int lfd = mkstemp(m->log);
    if (lfd < 0) {
        m->log[0] = '\0';
        return -1;
    }
    close(lfd);
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    m->pid = fork();
    if (m->pid < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (m->pid == 0) {
        /* Gone with the test even if it crashes: a leftover mock would hold ctest's output
         * pipe open. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(pfd[1], STDOUT_FILENO);
        close(pfd[0]);
        close(pfd[1]);
        execlp("python3", "python3", MOCK_SCRIPT, m->vendor, m->log, (char *)NULL);
        fprintf(stderr, "test_cloud: cannot run python3: %s\n", strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    m->out = pfd[0];
    return 0;
}

/* The port is the first line; give a cold python3 ten seconds to print it. */
static int mock_port(struct mock *m)
{
    char line[32] = "";
    size_t n = 0;
    while (n < sizeof(line) - 1 && !strchr(line, '\n')) {
        struct pollfd p = {.fd = m->out, .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t r = read(m->out, line + n, sizeof(line) - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        line[n] = '\0';
    }
    close(m->out);
    m->out = -1;
    m->port = atoi(line);
    if (m->port <= 0) {
        fprintf(stderr, "test_cloud: imds_mock.py %s printed no port (%s)\n", m->vendor, line);
        return -1;
    }
    snprintf(m->url, sizeof(m->url), "http://127.0.0.1:%d/", m->port);
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    for (size_t i = 0; i < RT_ARRAY_LEN(mocks); i++) {
        struct mock *m = &mocks[i];
        if (m->out >= 0)
            close(m->out);
        m->out = -1;
        if (m->pid > 0) {
            kill(m->pid, SIGTERM);
            waitpid(m->pid, NULL, 0);
        }
        m->pid = 0;
        if (m->log[0])
            unlink(m->log);
        m->log[0] = '\0';
    }
    return 0;
}

static int group_setup(void **state)
{
    /* A proxy in the environment must be ignored for metadata requests (CURLOPT_NOPROXY):
     * this one leads nowhere, so any request that used it would fail. */
    setenv("http_proxy", CLOSED, 1);
    setenv("HTTP_PROXY", CLOSED, 1);
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    unsetenv("RTRACK_CLOUD_DISCOVERY");
    for (size_t i = 0; i < RT_ARRAY_LEN(mocks); i++)
        mocks[i].out = -1;
    int rc = 0;
    for (size_t i = 0; i < RT_ARRAY_LEN(mocks) && rc == 0; i++)
        rc = mock_spawn(&mocks[i]);
    for (size_t i = 0; i < RT_ARRAY_LEN(mocks) && rc == 0; i++)
        rc = mock_port(&mocks[i]);
    if (rc != 0)
        group_teardown(state);
    return rc;
}

static int test_teardown(void **state)
{
    (void)state;
    fail_threads = 0;
    return 0;
}

/* The mock for a vendor mode, its request log emptied. */
static const struct mock *imds(const char *vendor)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(mocks); i++) {
        if (strcmp(mocks[i].vendor, vendor) == 0) {
            assert_int_equal(truncate(mocks[i].log, 0), 0);
            return &mocks[i];
        }
    }
    fail_msg("no mock for %s", vendor);
    return NULL;
}

/* The mock's request log, one JSON line per request; *nlines set. */
static char *mock_log(const struct mock *m, size_t *nlines)
{
    char *s = fx_slurp(m->log);
    assert_non_null(s);
    *nlines = 0;
    for (const char *p = s; *p; p++)
        *nlines += *p == '\n';
    return s;
}

/* Discovery as a recording runs it (src/cli/cmd_recording.c): RTRACK_CLOUD_DISCOVERY read as
 * record's --cloud-discovery option (0: never), the RTRACK_IMDS_* variables the test set
 * through the environment table (src/cli/env.c). */
static void discover(struct rt_cloud *c, double budget)
{
    struct rt_env e;
    rt_env_load(&e);
    struct rt_config cfg;
    char *argv[] = {"record", NULL};
    assert_int_equal(rt_config_load(&cfg, RT_CMD_RECORD, 1, argv), 0);
    struct rt_cloud_opts o;
    rt_env_cloud_opts(&e, &o);
    o.off = cfg.cloud_discovery == 0;
    rt_config_free(&cfg);
    rt_cloud_discover(c, &o, budget);
}

static void point_all(const char *url)
{
    for (size_t i = 0; i < RT_ARRAY_LEN(imds_env); i++)
        setenv(imds_env[i], url, 1);
}

#define assert_field(got, want)                                                                    \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        if (!w_) {                                                                                 \
            if (g_)                                                                                \
                fail_msg("%s: expected NULL, got \"%s\"", #got, g_);                               \
        } else {                                                                                   \
            if (!g_)                                                                               \
                fail_msg("%s: expected \"%s\", got NULL", #got, w_);                               \
            assert_string_equal(g_, w_);                                                           \
        }                                                                                          \
    } while (0)

static void assert_all_null(const struct rt_cloud *c)
{
    assert_field(c->vendor_id, NULL);
    assert_field(c->account_id, NULL);
    assert_field(c->region_id, NULL);
    assert_field(c->zone_id, NULL);
    assert_field(c->instance_type, NULL);
}

/* --- each vendor ------------------------------------------------------------------------- */

static const struct vendor_case {
    const char *mock, *env;
    const char *vendor, *account, *region, *zone, *type;
} vendor_cases[] = {
    {"aws", "RTRACK_IMDS_AWS", "aws", "123456789012", "eu-west-1", "eu-west-1b", "m5.large"},
    {"gcp", "RTRACK_IMDS_GCP", "gcp", "123456789012", "europe-west3", "europe-west3-c",
     "e2-standard-4"},
    {"azure", "RTRACK_IMDS_AZURE", "azure", "8d10da13-8125-4ba9-a717-bf7490507b3d", "westeurope",
     "2", "Standard_D2s_v3"},
    /* Hetzner's metadata has no server type. */
    {"hetzner", "RTRACK_IMDS_HETZNER", "hcloud", NULL, "eu-central", "fsn1-dc14", NULL},
    {"upcloud", "RTRACK_IMDS_UPCLOUD", "upcloud", NULL, "de-fra1", "de-fra1", NULL},
    {"vultr", "RTRACK_IMDS_VULTR", "vultr", NULL, "ams", NULL, NULL},
    {"alicloud", "RTRACK_IMDS_ALICLOUD", "alicloud", "1234567890123456", "cn-hangzhou",
     "cn-hangzhou-h", "ecs.g7.large"},
    {"ovh", "RTRACK_IMDS_OVH", "ovh", NULL, "eu-west-par-a", NULL, "b2-7"},
};

static void check_case(const struct vendor_case *vc, const struct rt_cloud *c)
{
    assert_field(c->vendor_id, vc->vendor);
    assert_field(c->account_id, vc->account);
    assert_field(c->region_id, vc->region);
    assert_field(c->zone_id, vc->zone);
    assert_field(c->instance_type, vc->type);
}

static void test_vendors(void **state)
{
    (void)state;
    for (size_t i = 0; i < RT_ARRAY_LEN(vendor_cases); i++) {
        const struct vendor_case *vc = &vendor_cases[i];
        const struct mock *m = imds(vc->mock);
        struct rt_cloud c;

        /* Only this vendor's variable at the mock, the others at a closed port. */
        point_all(CLOSED);
        setenv(vc->env, m->url, 1);
        double t0 = fx_mono_s();
        discover(&c, 3.0);
        print_message("%s alone: %.3f s\n", vc->mock, fx_mono_s() - t0);
        check_case(vc, &c);
        rt_cloud_free(&c);
        assert_null(c.vendor_id);

        /* Every vendor's probe at the same mock: the others must not claim it. */
        point_all(m->url);
        discover(&c, 3.0);
        check_case(vc, &c);
        rt_cloud_free(&c);

        size_t n;
        char *log = mock_log(m, &n);
        assert_true(n > 0);
        if (strcmp(vc->mock, "aws") == 0) {
            /* IMDSv2: the token first, then the domain guard. */
            assert_non_null(strstr(log, "{\"method\": \"PUT\", \"path\": \"/latest/api/token\""));
            assert_non_null(strstr(log, "\"x-aws-ec2-metadata-token-ttl-seconds\": \"21600\""));
            assert_non_null(strstr(log, "\"path\": \"/latest/meta-data/services/domain\""));
            assert_non_null(
                strstr(log, "\"path\": \"/latest/dynamic/instance-identity/document\""));
        } else if (strcmp(vc->mock, "alicloud") == 0) {
            assert_non_null(strstr(log, "\"x-aliyun-ecs-metadata-token-ttl-seconds\": \"21600\""));
        }
        free(log);
    }
}

/* EC2-compatible metadata of another cloud: token, instance type, placement all answer, but
 * services/domain is not amazonaws.com. */
static void test_aws_lookalike(void **state)
{
    (void)state;
    const struct mock *m = imds("aws-lookalike");
    struct rt_cloud c;
    point_all(CLOSED);
    setenv("RTRACK_IMDS_AWS", m->url, 1);
    discover(&c, 3.0);
    assert_all_null(&c);
    rt_cloud_free(&c);

    point_all(m->url);
    discover(&c, 3.0);
    assert_all_null(&c);
    rt_cloud_free(&c);

    size_t n;
    char *log = mock_log(m, &n);
    assert_non_null(strstr(log, "\"path\": \"/latest/meta-data/services/domain\""));
    /* Nothing past the guard was read. */
    assert_null(strstr(log, "instance-identity"));
    free(log);
}

/* A metadata service that never answers in time: discovery keeps to its budget. */
static void test_slow(void **state)
{
    (void)state;
    const struct mock *m = imds("slow");
    point_all(m->url);
    struct rt_cloud c;
    double t0 = fx_mono_s();
    discover(&c, 1.0);
    double dt = fx_mono_s() - t0;
    print_message("slow: %.3f s\n", dt);
    assert_true(dt < 1.5);
    assert_all_null(&c);
    rt_cloud_free(&c);
    size_t n;
    free(mock_log(m, &n));
    assert_true(n >= 8); /* every probe tried */
    usleep(200000);      /* the abandoned probes end at the deadline */
}

static void test_none(void **state)
{
    (void)state;
    const struct mock *m = imds("none");
    point_all(m->url);
    struct rt_cloud c;
    double t0 = fx_mono_s();
    discover(&c, 3.0);
    assert_true(fx_mono_s() - t0 < 1.0);
    assert_all_null(&c);
    rt_cloud_free(&c);
    size_t n;
    free(mock_log(m, &n));
    assert_true(n >= 8);

    /* Nothing listening anywhere. */
    point_all(CLOSED);
    t0 = fx_mono_s();
    discover(&c, 3.0);
    assert_true(fx_mono_s() - t0 < 1.0);
    assert_all_null(&c);
    rt_cloud_free(&c);
}

static void test_disabled(void **state)
{
    (void)state;
    const struct mock *m = imds("aws");
    point_all(m->url);
    struct rt_cloud c;
    static const char *const off[] = {"0", "false", "off"};
    for (size_t i = 0; i < RT_ARRAY_LEN(off); i++) {
        setenv("RTRACK_CLOUD_DISCOVERY", off[i], 1);
        double t0 = fx_mono_s();
        discover(&c, 3.0);
        assert_true(fx_mono_s() - t0 < 0.05);
        assert_all_null(&c);
        rt_cloud_free(&c);
    }
    size_t n;
    free(mock_log(m, &n));
    assert_int_equal(n, 0);

    /* A zero budget: nothing either. */
    unsetenv("RTRACK_CLOUD_DISCOVERY");
    discover(&c, 0.0);
    assert_all_null(&c);
    free(mock_log(m, &n));
    assert_int_equal(n, 0);

    /* On again. */
    setenv("RTRACK_CLOUD_DISCOVERY", "1", 1);
    discover(&c, 3.0);
    assert_field(c.vendor_id, "aws");
    rt_cloud_free(&c);
    unsetenv("RTRACK_CLOUD_DISCOVERY");
}

/* Two vendors answer: the one earlier in AWS, GCP, Azure, Hetzner, UpCloud, Vultr, AliCloud,
 * OVH wins, whichever answers first. */
static void test_precedence(void **state)
{
    (void)state;
    const struct mock *a, *b;
    struct rt_cloud c;

    a = imds("azure");
    b = imds("gcp");
    point_all(CLOSED);
    setenv("RTRACK_IMDS_AZURE", a->url, 1);
    setenv("RTRACK_IMDS_GCP", b->url, 1);
    discover(&c, 3.0);
    assert_field(c.vendor_id, "gcp");
    assert_field(c.instance_type, "e2-standard-4");
    rt_cloud_free(&c);

    a = imds("ovh");
    b = imds("hetzner");
    point_all(CLOSED);
    setenv("RTRACK_IMDS_OVH", a->url, 1);
    setenv("RTRACK_IMDS_HETZNER", b->url, 1);
    discover(&c, 3.0);
    assert_field(c.vendor_id, "hcloud");
    assert_field(c.region_id, "eu-central");
    rt_cloud_free(&c);

    /* AWS found: discovery does not wait for the slower vendors after it. */
    a = imds("slow");
    const struct mock *aws = imds("aws");
    point_all(a->url);
    setenv("RTRACK_IMDS_AWS", aws->url, 1);
    double t0 = fx_mono_s();
    discover(&c, 3.0);
    double dt = fx_mono_s() - t0;
    print_message("aws before slow ones: %.3f s\n", dt);
    assert_true(dt < 0.9);
    assert_field(c.vendor_id, "aws");
    rt_cloud_free(&c);

    /* A vendor earlier in the order still pending at the deadline does not hold back one
     * that was found. */
    point_all(CLOSED);
    setenv("RTRACK_IMDS_AWS", a->url, 1);
    setenv("RTRACK_IMDS_HETZNER", b->url, 1);
    t0 = fx_mono_s();
    discover(&c, 1.0);
    dt = fx_mono_s() - t0;
    print_message("hetzner behind a slow aws: %.3f s\n", dt);
    assert_true(dt < 1.5);
    assert_field(c.vendor_id, "hcloud");
    rt_cloud_free(&c);
    usleep(200000);
}

/* No thread can be created (pids.max reached): the probes run on the caller, still within
 * the budget, and still find the vendor. */
static void test_no_threads(void **state)
{
    (void)state;
    const struct mock *m = imds("alicloud");
    const struct mock *slow = imds("slow");
    struct rt_cloud c;

    point_all(CLOSED);
    setenv("RTRACK_IMDS_ALICLOUD", m->url, 1);
    fail_threads = 1;
    discover(&c, 3.0);
    fail_threads = 0;
    assert_field(c.vendor_id, "alicloud");
    assert_field(c.region_id, "cn-hangzhou");
    assert_field(c.instance_type, "ecs.g7.large");
    rt_cloud_free(&c);

    point_all(slow->url);
    setenv("RTRACK_IMDS_ALICLOUD", m->url, 1);
    fail_threads = 1;
    double t0 = fx_mono_s();
    discover(&c, 1.0);
    double dt = fx_mono_s() - t0;
    fail_threads = 0;
    print_message("inline with slow ones: %.3f s\n", dt);
    assert_true(dt < 1.5);
    /* AWS (first, inline) used the whole budget: AliCloud never got its turn. */
    assert_all_null(&c);
    rt_cloud_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_vendors, test_teardown),
        cmocka_unit_test_teardown(test_aws_lookalike, test_teardown),
        cmocka_unit_test_teardown(test_slow, test_teardown),
        cmocka_unit_test_teardown(test_none, test_teardown),
        cmocka_unit_test_teardown(test_disabled, test_teardown),
        cmocka_unit_test_teardown(test_precedence, test_teardown),
        cmocka_unit_test_teardown(test_no_threads, test_teardown),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
