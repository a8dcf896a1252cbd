/* test_s3.c - the S3 half of upload.h: SHA-256, key encoding, targets, and PUTs against the local
 * SigV4-verifying server that tests/s3/with-s3.sh starts (S3_ENDPOINT, S3_DATA_DIR, ...).
 *
 * The server accepts unsigned requests (shared reference test-infrastructure §1), so signing is
 * proven by the wrong-secret case. It checks x-amz-content-sha256 against the body as S3 does
 * (tests/s3/s3-server.js), which test_payload_hash shows with requests of this test's own
 * libcurl client, so an rtrack PUT whose hash is not its body's fails every test_put_* case. The
 * AWS (virtual-hosted) path is checked without a network through a fake https proxy that records
 * the CONNECT lines and hangs up. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <zlib.h>

#include "rtrack/cli/env.h"
#include "rtrack/collect/collect.h"
#include "rtrack/store/store.h"
#include "rtrack/upload/upload.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"
#include "testlib.h"

/* SHA-256 of "", "ab" and "abc" (FIPS 180-2's vector; the others by sha256sum) */
#define EMPTY_SHA "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define AB_SHA    "fb8e20fc2e4c3f248c60c39bd652f3c1347298bb977b8b4d5903b85055620603"
#define ABC_SHA   "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

/* --- helpers -----------------------------------------------------------------------------------
 */

/* The 1 MiB test buffer: bytes of a 32-bit LCG (x = x * 1103515245 + 12345, seed 1, top byte). */
static unsigned char *lcg_bytes(size_t n)
{
    unsigned char *b = xmalloc(n);
    uint32_t x = 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        b[i] = (unsigned char)(x >> 24);
    }
    return b;
}

static void gzip_buf(const void *in, size_t n, struct rt_buf *out)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(
        deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    out->len = 0;
    rt_buf_reserve(out, deflateBound(&z, (uLong)n) + 1);
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = (Bytef *)out->p;
    z.avail_out = (uInt)(out->cap - 1);
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    out->len = z.total_out;
    deflateEnd(&z);
}

static const char *need_env(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set: run this test under tests/s3/with-s3.sh", name);
    return v;
}

/* rt_s3_target_parse as the CLI calls it: RTRACK_S3_ENDPOINT and RTRACK_S3_REGION through the
 * environment table (src/cli/env.c) */
static int target_parse(const char *uri, struct rt_s3_target *t, char *err, size_t errlen)
{
    struct rt_env e;
    rt_env_load(&e);
    return rt_s3_target_parse(uri, e.s3_endpoint, e.s3_region, t, err, errlen);
}

static struct rt_s3_creds test_creds(const char *token)
{
    struct rt_s3_creds c = {(char *)need_env("S3_TEST_KEY"), (char *)need_env("S3_TEST_SECRET"),
                            (char *)token};
    return c;
}

/* Point rtrack at the local server, as RTRACK_S3_ENDPOINT. */
static void use_local_s3(struct rt_s3_target *t, const char *uri)
{
    char err[256] = "";
    setenv("RTRACK_S3_ENDPOINT", need_env("S3_ENDPOINT"), 1);
    unsetenv("RTRACK_S3_REGION");
    if (target_parse(uri, t, err, sizeof(err)) != 0)
        fail_msg("parse %s: %s", uri, err);
}

/* An error message is one line and carries no credentials. */
static void assert_clean_err(const char *err)
{
    assert_true(err[0] != '\0');
    assert_null(strchr(err, '\n'));
    assert_null(strstr(err, "testsecret"));
    assert_null(strstr(err, "AKIDTEST"));
    assert_null(strstr(err, "wrongsecret"));
    assert_null(strstr(err, "TOKEN-"));
    assert_null(strstr(err, "Credential"));
    assert_null(strstr(err, "StringToSign"));
}

static void assert_prefix(const char *s, const char *prefix)
{
    if (strncmp(s, prefix, strlen(prefix)) != 0)
        fail_msg("'%s' does not start with '%s'", s, prefix);
}

static char *object_path(const char *objkey)
{
    return xasprintf("%s/%s/%s._S3rver_object", need_env("S3_DATA_DIR"), need_env("S3_BUCKET"),
                     objkey);
}

/* The object as stored by the server must equal body byte for byte. */
static void assert_stored(const char *objkey, const void *body, size_t len)
{
    char *path = object_path(objkey);
    size_t got_len = 0;
    unsigned char *got = (unsigned char *)fx_slurp_n(path, &got_len);
    if (!got)
        fail_msg("object not stored: %s", path);
    assert_int_equal(got_len, len);
    assert_memory_equal(got, body, len);
    free(got);
    free(path);
}

struct get_result {
    long status;
    char content_type[128];
    int has_content_encoding;
    struct rt_buf body;
};

static size_t get_write(char *data, size_t size, size_t nmemb, void *ud)
{
    rt_buf_append(ud, data, size * nmemb);
    return size * nmemb;
}

static size_t get_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct get_result *r = ud;
    if (size * nmemb >= 17 && strncasecmp(data, "content-encoding:", 17) == 0)
        r->has_content_encoding = 1;
    return size * nmemb;
}

struct put_src {
    const char *p;
    size_t len, off;
};

static size_t put_read(char *dst, size_t size, size_t nmemb, void *ud)
{
    struct put_src *s = ud;
    size_t n = size * nmemb, left = s->len - s->off;
    if (n > left)
        n = left;
    memcpy(dst, s->p + s->off, n);
    s->off += n;
    return n;
}

/* method on the object objkey with this test's own libcurl client, not rtrack's code: signed
 * with SigV4 by libcurl when sign is set (libcurl takes x-amz-content-sha256 from the headers
 * given as the payload hash it signs), the headers as given; a PUT sends body. */
static void s3_request(const char *method, const char *objkey, const char *body, size_t len,
                       struct curl_slist *h, int sign, struct get_result *r)
{
    memset(r, 0, sizeof(*r));
    struct rt_buf url = {0};
    rt_buf_puts(&url, need_env("S3_ENDPOINT"));
    rt_buf_puts(&url, "/");
    rt_buf_puts(&url, need_env("S3_BUCKET"));
    rt_buf_puts(&url, "/");
    rt_s3_encode_key(&url, objkey);
    CURL *c = curl_easy_init();
    assert_non_null(c);
    struct put_src src = {body, len, 0};
    curl_easy_setopt(c, CURLOPT_URL, url.p);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, put_read);
        curl_easy_setopt(c, CURLOPT_READDATA, &src);
        curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);
    } else if (strcmp(method, "GET") != 0) {
        fail_msg("s3_request: %s", method);
    }
    if (sign) {
        curl_easy_setopt(c, CURLOPT_AWS_SIGV4, "aws:amz:us-east-1:s3");
        curl_easy_setopt(c, CURLOPT_USERNAME, need_env("S3_TEST_KEY"));
        curl_easy_setopt(c, CURLOPT_PASSWORD, need_env("S3_TEST_SECRET"));
    }
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, get_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, get_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    char *ct = NULL;
    curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
    snprintf(r->content_type, sizeof(r->content_type), "%s", ct ? ct : "");
    rt_buf_append(&r->body, "", 0); /* a string, also when empty */
    curl_easy_cleanup(c);
    rt_buf_free(&url);
}

/* A signed GET with libcurl, as any S3 client would read the object back. */
static void s3_get(const char *objkey, struct get_result *r)
{
    struct curl_slist *h = curl_slist_append(NULL, "x-amz-content-sha256: " EMPTY_SHA);
    s3_request("GET", objkey, NULL, 0, h, 1, r);
    curl_slist_free_all(h);
}

/* PUT body under key, then check the answer, the stored bytes, a GET and the stored metadata. */
static void put_and_check(const char *uri, const char *key, const char *token, const void *body,
                          size_t len)
{
    struct rt_s3_target t;
    use_local_s3(&t, uri);
    struct rt_s3_creds c = test_creds(token);
    char out[512] = "", err[512] = "";
    int rc = rt_s3_put(&t, &c, key, body, len, out, sizeof(out), err, sizeof(err));
    if (rc != 0)
        fail_msg("put %s: %s", key, err);
    char *objkey = t.prefix[0] ? xasprintf("%s/%s", t.prefix, key) : xstrdup(key);
    char *want = xasprintf("s3://%s/%s", t.bucket, objkey);
    assert_string_equal(out, want);
    assert_non_null(t.region);
    assert_string_equal(t.region, "us-east-1"); /* an endpoint without RTRACK_S3_REGION */

    assert_stored(objkey, body, len);
    struct get_result g;
    s3_get(objkey, &g);
    assert_int_equal(g.status, 200);
    assert_string_equal(g.content_type, "application/gzip");
    assert_int_equal(g.has_content_encoding, 0);
    assert_int_equal(g.body.len, len);
    if (len)
        assert_memory_equal(g.body.p, body, len);
    rt_buf_free(&g.body);

    char *meta_path = xasprintf("%s/%s/%s._S3rver_metadata.json", need_env("S3_DATA_DIR"),
                                need_env("S3_BUCKET"), objkey);
    char *meta = fx_slurp(meta_path);
    assert_non_null(meta);
    assert_non_null(strstr(meta, "\"content-type\": \"application/gzip\""));
    assert_null(strstr(meta, "content-encoding"));
    free(meta);
    free(meta_path);
    free(want);
    free(objkey);
    rt_s3_target_free(&t);
}

/* A port on 127.0.0.1 that nobody listens on (bound, then closed). */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    socklen_t al = sizeof(a);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* --- SHA-256 and key encoding ------------------------------------------------------------------
 */

static void test_sha256_vectors(void **state)
{
    (void)state;
    char hex[65];
    rt_sha256_hex("", 0, hex);
    assert_string_equal(hex, EMPTY_SHA);
    rt_sha256_hex(NULL, 0, hex);
    assert_string_equal(hex, EMPTY_SHA);
    rt_sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    rt_sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");

    char *a = xmalloc(1000000);
    memset(a, 'a', 1000000);
    rt_sha256_hex(a, 1000000, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);

    /* sha256sum of the same 1 MiB, written out by a separate program */
    unsigned char *mib = lcg_bytes(1 << 20);
    assert_int_equal(mib[0], 0x41);
    assert_int_equal(mib[1], 0x96);
    rt_sha256_hex(mib, 1 << 20, hex);
    assert_string_equal(hex, "73cda0e476bc2aa22f0f4434af1933b187b60ce8ee94a58b18774ac61e35688e");
    free(mib);
}

static void test_encode_key(void **state)
{
    (void)state;
    struct rt_buf b = {0};
    rt_s3_encode_key(&b, "a b:c+d=e/f~g.h_i-j");
    assert_string_equal(b.p, "a%20b%3Ac%2Bd%3De/f~g.h_i-j");
    assert_int_equal(b.len, strlen(b.p));

    /* appends; UTF-8 bytes one by one, upper-case hex */
    rt_s3_encode_key(&b, "/\xc3\xa9t\xc3\xa9/\xe2\x82\xac");
    assert_string_equal(b.p, "a%20b%3Ac%2Bd%3De/f~g.h_i-j/%C3%A9t%C3%A9/%E2%82%AC");
    rt_buf_free(&b);

    rt_s3_encode_key(&b, "");
    assert_non_null(b.p);
    assert_string_equal(b.p, "");
    rt_s3_encode_key(&b, "AZaz09?#&%\"'\\*");
    assert_string_equal(b.p, "AZaz09%3F%23%26%25%22%27%5C%2A");
    rt_buf_free(&b);

    rt_s3_encode_key(&b, "run/000001.csv.gz");
    assert_string_equal(b.p, "run/000001.csv.gz");
    rt_buf_free(&b);
}

/* --- targets -----------------------------------------------------------------------------------
 */

static void test_target_parse_good(void **state)
{
    (void)state;
    unsetenv("RTRACK_S3_ENDPOINT");
    unsetenv("RTRACK_S3_REGION");
    static const struct {
        const char *uri, *bucket, *prefix;
    } good[] = {
        {"s3://bucket", "bucket", ""},
        {"s3://bucket/", "bucket", ""},
        {"s3://bucket/a/b/", "bucket", "a/b"},
        {"s3://bucket/a/b", "bucket", "a/b"},
        {"s3://my.bucket-01/sentinel/runs", "my.bucket-01", "sentinel/runs"},
        {"s3://abc/dt=2026-11-26/x y", "abc", "dt=2026-11-26/x y"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(good); i++) {
        struct rt_s3_target t;
        char err[256] = "";
        if (target_parse(good[i].uri, &t, err, sizeof(err)) != 0)
            fail_msg("%s: %s", good[i].uri, err);
        assert_string_equal(t.bucket, good[i].bucket);
        assert_string_equal(t.prefix, good[i].prefix);
        assert_null(t.endpoint);
        assert_null(t.region);
        rt_s3_target_free(&t);
        assert_null(t.bucket);
        rt_s3_target_free(&t); /* twice is harmless */
    }

    struct rt_s3_target t;
    char err[256] = "";
    setenv("RTRACK_S3_ENDPOINT", "http://127.0.0.1:9000//", 1);
    setenv("RTRACK_S3_REGION", "eu-west-3", 1);
    assert_int_equal(target_parse("s3://bucket/p", &t, err, sizeof(err)), 0);
    assert_string_equal(t.endpoint, "http://127.0.0.1:9000");
    assert_string_equal(t.region, "eu-west-3");
    rt_s3_target_free(&t);
    setenv("RTRACK_S3_ENDPOINT", "https://s3.example.org/store", 1);
    setenv("RTRACK_S3_REGION", "", 1); /* empty = unset */
    assert_int_equal(target_parse("s3://bucket", &t, err, sizeof(err)), 0);
    assert_string_equal(t.endpoint, "https://s3.example.org/store");
    assert_null(t.region);
    rt_s3_target_free(&t);
    unsetenv("RTRACK_S3_ENDPOINT");
    unsetenv("RTRACK_S3_REGION");
}

static void test_target_parse_bad(void **state)
{
    (void)state;
    unsetenv("RTRACK_S3_ENDPOINT");
    unsetenv("RTRACK_S3_REGION");
    static const struct {
        const char *uri, *want;
    } bad[] = {
        {"", "empty"},
        {"bucket/prefix", "not an s3 uri"},
        {"http://bucket/prefix", "not an s3 uri"},
        {"S3://bucket", "not an s3 uri"},
        {"s3:/bucket", "not an s3 uri"},
        {"s3://", "no bucket"},
        {"s3:///prefix", "no bucket"},
        {"s3://ab", "bad bucket name"},
        {"s3://Bucket/x", "bad bucket name"},
        {"s3://bu_cket", "bad bucket name"},
        {"s3://bucket-/x", "bad bucket name"},
        {"s3://bucket:9000/x", "bad bucket name"},
        {"s3://user@bucket/x", "bad bucket name"},
        {"s3://bucket//a", "bad prefix"},
        {"s3://bucket/a//b", "bad prefix"},
        {"s3://bucket/a/b//", "bad prefix"},
        {"s3://bucket/a/../b", "bad prefix"},
        {"s3://bucket/./a", "bad prefix"},
        {"s3://bucket/a\nb", "control characters"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        struct rt_s3_target t;
        char err[256] = "";
        if (target_parse(bad[i].uri, &t, err, sizeof(err)) == 0)
            fail_msg("accepted '%s'", bad[i].uri);
        if (!strstr(err, bad[i].want))
            fail_msg("'%s': '%s' lacks '%s'", bad[i].uri, err, bad[i].want);
        assert_null(strchr(err, '\n'));
        assert_null(t.bucket);
        assert_null(t.prefix);
        rt_s3_target_free(&t);
    }
    struct rt_s3_target t;
    char err[256] = "";
    assert_int_equal(target_parse(NULL, &t, err, sizeof(err)), -1);

    /* the environment is checked too, and an endpoint's password is never echoed */
    static const char *bad_ep[] = {"ftp://host", "127.0.0.1:9000", "http://",
                                   "http://user:pw-SECRET@host:9000", "http://host/?x=1"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad_ep); i++) {
        setenv("RTRACK_S3_ENDPOINT", bad_ep[i], 1);
        err[0] = '\0';
        if (target_parse("s3://bucket", &t, err, sizeof(err)) == 0)
            fail_msg("accepted endpoint '%s'", bad_ep[i]);
        assert_non_null(strstr(err, "RTRACK_S3_ENDPOINT"));
        assert_null(strstr(err, "SECRET"));
        rt_s3_target_free(&t);
    }
    unsetenv("RTRACK_S3_ENDPOINT");
    static const char *bad_region[] = {"us-east-1:s3", "eu west", "a/b"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad_region); i++) {
        setenv("RTRACK_S3_REGION", bad_region[i], 1);
        assert_int_equal(target_parse("s3://bucket", &t, err, sizeof(err)), -1);
        assert_non_null(strstr(err, "RTRACK_S3_REGION"));
    }
    unsetenv("RTRACK_S3_REGION");
}

/* --- against the local server ------------------------------------------------------------------
 */

static void test_put_gzip(void **state)
{
    (void)state;
    struct rt_buf csv = {0}, gz = {0};
    rt_buf_puts(&csv, "timestamp,processes,utime,stime,cpu_usage,memory_free\n");
    for (int i = 0; i < 5000; i++) {
        char row[128];
        snprintf(row, sizeof(row), "%d.5,%d,%d.25,0.5,%d.125,%d\n", 1764000000 + i, i % 7, i % 100,
                 i % 400, 1000000 - i);
        rt_buf_puts(&csv, row);
    }
    gzip_buf(csv.p, csv.len, &gz);
    assert_true(gz.len > 1000);
    assert_true((unsigned char)gz.p[0] == 0x1f && (unsigned char)gz.p[1] == 0x8b);
    put_and_check("s3://test-bucket/rtrack/tests/", "run-1/000000.csv.gz", NULL, gz.p, gz.len);
    put_and_check("s3://test-bucket", "run-1/000001.csv.gz", NULL, gz.p, gz.len);
    rt_buf_free(&csv);
    rt_buf_free(&gz);
}

static void test_put_session_token(void **state)
{
    (void)state;
    struct rt_buf gz = {0};
    const char text[] = "a,b\n1,2\n";
    gzip_buf(text, sizeof(text) - 1, &gz);
    put_and_check("s3://test-bucket/sts", "run-2/000000.csv.gz",
                  "TOKEN-FQoGZXIvYXdzEJr//////////wEaDM+/=abc", gz.p, gz.len);
    rt_buf_free(&gz);
}

static void test_put_odd_keys(void **state)
{
    (void)state;
    struct rt_buf gz = {0};
    gzip_buf("x\n", 2, &gz);
    static const char *keys[] = {
        "dt=2026-11-26/a b:c+d.csv.gz",
        "2026-11-26T08:00:00+00:00/000000.csv.gz",
        "caf\xc3\xa9/r\xc3\xa9sum\xc3\xa9 (1)&x;y,z@w!$'*.csv.gz",
        "tilde~/under_score/dash-dot.gz",
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(keys); i++)
        put_and_check("s3://test-bucket/odd keys=1", keys[i], NULL, gz.p, gz.len);
    rt_buf_free(&gz);
}

static void test_put_large_and_empty(void **state)
{
    (void)state;
    /* over 1 MiB: curl sends Expect: 100-continue (left alone, it is signed correctly) */
    size_t n = 3 * (1 << 20) / 2;
    unsigned char *big = lcg_bytes(n);
    put_and_check("s3://test-bucket/big", "000000.csv.gz", NULL, big, n);
    free(big);
    put_and_check("s3://test-bucket/big", "empty.csv.gz", NULL, NULL, 0);
}

static void test_put_wrong_secret(void **state)
{
    (void)state;
    struct rt_s3_target t;
    use_local_s3(&t, "s3://test-bucket/neg");
    struct rt_s3_creds good = test_creds(NULL);
    struct rt_s3_creds c = {good.access_key, "wrongsecret", NULL};
    char out[256] = "", err[512] = "";
    assert_int_equal(
        rt_s3_put(&t, &c, "x/000000.csv.gz", "abc", 3, out, sizeof(out), err, sizeof(err)), -1);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "SignatureDoesNotMatch"));
    assert_string_equal(err, "s3 answered HTTP 403 (SignatureDoesNotMatch) for "
                             "s3://test-bucket/neg/x/000000.csv.gz");
    assert_clean_err(err);
    char *path = object_path("neg/x/000000.csv.gz");
    assert_int_equal(access(path, F_OK), -1);
    free(path);

    /* with a session token too: the token does not leak either */
    c.session_token = "TOKEN-secret-session";
    assert_int_equal(
        rt_s3_put(&t, &c, "x/000001.csv.gz", "abc", 3, out, sizeof(out), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "SignatureDoesNotMatch"));
    assert_clean_err(err);

    /* an unknown key id */
    struct rt_s3_creds unknown = {"AKIDUNKNOWN", good.secret_key, NULL};
    assert_int_equal(
        rt_s3_put(&t, &unknown, "x/000002.csv.gz", "abc", 3, out, sizeof(out), err, sizeof(err)),
        -1);
    assert_non_null(strstr(err, "HTTP 403 (InvalidAccessKeyId)"));
    assert_null(strstr(err, "AKIDUNKNOWN"));
    assert_clean_err(err);
    rt_s3_target_free(&t);
}

/* The answer is S3's error XML with this status and <Code>. */
static void assert_s3_error(const struct get_result *r, long status, const char *code)
{
    char *want = xasprintf("<Code>%s</Code>", code);
    if (r->status != status || !strstr(r->body.p, want))
        fail_msg("HTTP %ld, want %ld with %s: %s", r->status, status, want, r->body.p);
    free(want);
}

static void assert_not_stored(const char *objkey)
{
    char *path = object_path(objkey);
    if (access(path, F_OK) == 0)
        fail_msg("stored although refused: %s", path);
    free(path);
}

/* The server checks x-amz-content-sha256 against the body as S3 does: requests signed
 * correctly by libcurl (which signs the hash it is given) with a hash that is not the body's
 * get 400 XAmzContentSHA256Mismatch and store nothing; the body's own hash gets 200. */
static void test_payload_hash(void **state)
{
    (void)state;
    struct get_result r;
    struct curl_slist *h;
    static const struct {
        const char *name, *claimed;
    } wrong[] = {
        {"the body minus its last byte", "x-amz-content-sha256: " AB_SHA},
        {"the empty string", "x-amz-content-sha256: " EMPTY_SHA},
        {"the right hash in upper case", "x-amz-content-sha256: "
                                         "BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61"
                                         "F20015AD"},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(wrong); i++) {
        h = curl_slist_append(NULL, wrong[i].claimed);
        s3_request("PUT", "hash/wrong.csv.gz", "abc", 3, h, 1, &r);
        curl_slist_free_all(h);
        if (r.status != 400 || !strstr(r.body.p, "<Code>XAmzContentSHA256Mismatch</Code>"))
            fail_msg("PUT of 'abc' with the hash of %s: HTTP %ld: %s", wrong[i].name, r.status,
                     r.body.p);
        /* what S3 computed, and what the client claimed, as S3 reports them */
        assert_non_null(
            strstr(r.body.p, "<S3ComputedContentSHA256>" ABC_SHA "</S3ComputedContentSHA256>"));
        char *claimed = xasprintf("<ClientComputedContentSHA256>%s</ClientComputedContentSHA256>",
                                  wrong[i].claimed + strlen("x-amz-content-sha256: "));
        assert_non_null(strstr(r.body.p, claimed));
        free(claimed);
        rt_buf_free(&r.body);
        assert_not_stored("hash/wrong.csv.gz");
    }

    /* the body's hash: stored */
    h = curl_slist_append(NULL, "x-amz-content-sha256: " ABC_SHA);
    s3_request("PUT", "hash/right.csv.gz", "abc", 3, h, 1, &r);
    curl_slist_free_all(h);
    if (r.status != 200)
        fail_msg("PUT of 'abc' with its hash: HTTP %ld: %s", r.status, r.body.p);
    rt_buf_free(&r.body);
    assert_stored("hash/right.csv.gz", "abc", 3);

    /* a big body (curl sends Expect: 100-continue) one byte short of what was hashed */
    size_t n = 3 * (1 << 20) / 2;
    unsigned char *big = lcg_bytes(n);
    char hex[65], *hdr;
    rt_sha256_hex(big, n, hex);
    hdr = xasprintf("x-amz-content-sha256: %s", hex);
    h = curl_slist_append(NULL, hdr);
    s3_request("PUT", "hash/big.csv.gz", (const char *)big, n - 1, h, 1, &r);
    curl_slist_free_all(h);
    assert_s3_error(&r, 400, "XAmzContentSHA256Mismatch");
    rt_buf_free(&r.body);
    assert_not_stored("hash/big.csv.gz");
    free(hdr);
    free(big);

    /* reads are checked too: a GET's body is empty */
    h = curl_slist_append(NULL, "x-amz-content-sha256: " ABC_SHA);
    s3_request("GET", "hash/right.csv.gz", NULL, 0, h, 1, &r);
    curl_slist_free_all(h);
    assert_s3_error(&r, 400, "XAmzContentSHA256Mismatch");
    rt_buf_free(&r.body);
    h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    s3_request("GET", "hash/right.csv.gz", NULL, 0, h, 1, &r);
    curl_slist_free_all(h);
    assert_int_equal(r.status, 200); /* as S3: reads may leave the payload unsigned */
    assert_int_equal(r.body.len, 3);
    assert_memory_equal(r.body.p, "abc", 3);
    rt_buf_free(&r.body);

    /* the test server's own rule: a PUT must carry the body's hash, not UNSIGNED-PAYLOAD (S3
     * would take it; rtrack never sends it) */
    h = curl_slist_append(NULL, "x-amz-content-sha256: UNSIGNED-PAYLOAD");
    s3_request("PUT", "hash/unsigned.csv.gz", "abc", 3, h, 1, &r);
    curl_slist_free_all(h);
    assert_s3_error(&r, 400, "InvalidRequest");
    rt_buf_free(&r.body);
    assert_not_stored("hash/unsigned.csv.gz");

    /* a signed request without the header is refused as S3 does (before the signature is
     * looked at, so this one is written by hand and not signed for real) */
    char date[32], auth[256];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(date, sizeof(date), "x-amz-date: %Y%m%dT%H%M%SZ", &tm);
    snprintf(auth, sizeof(auth),
             "Authorization: AWS4-HMAC-SHA256 Credential=%s/%.8s/us-east-1/s3/aws4_request, "
             "SignedHeaders=host;x-amz-date, Signature=%064d",
             need_env("S3_TEST_KEY"), date + strlen("x-amz-date: "), 0);
    h = curl_slist_append(NULL, date);
    h = curl_slist_append(h, auth);
    s3_request("PUT", "hash/missing.csv.gz", "abc", 3, h, 0, &r);
    curl_slist_free_all(h);
    assert_s3_error(&r, 400, "InvalidRequest");
    assert_non_null(strstr(r.body.p, "Missing required header for this request: "
                                     "x-amz-content-sha256"));
    rt_buf_free(&r.body);
    assert_not_stored("hash/missing.csv.gz");

    /* and rtrack's own PUT of the same bytes goes through (its hash is the body's) */
    put_and_check("s3://test-bucket/hash", "rtrack.csv.gz", NULL, "abc", 3);
}

static void test_put_no_bucket(void **state)
{
    (void)state;
    struct rt_s3_target t;
    use_local_s3(&t, "s3://no-such-bucket/p");
    struct rt_s3_creds c = test_creds(NULL);
    char err[512] = "";
    assert_int_equal(rt_s3_put(&t, &c, "k.gz", "abc", 3, NULL, 0, err, sizeof(err)), -1);
    assert_string_equal(err, "s3 answered HTTP 404 (NoSuchBucket) for s3://no-such-bucket/p/k.gz");
    rt_s3_target_free(&t);
}

static void test_put_bad_arguments(void **state)
{
    (void)state;
    struct rt_s3_target t;
    use_local_s3(&t, "s3://test-bucket/args");
    struct rt_s3_creds c = test_creds(NULL);
    char out[64] = "", err[512] = "";
    static const char *bad_keys[] = {"", "/abs", "a//b", "a/", "a/../b", ".", "a\r\nb"};
    for (size_t i = 0; i < RT_ARRAY_LEN(bad_keys); i++) {
        assert_int_equal(
            rt_s3_put(&t, &c, bad_keys[i], "abc", 3, out, sizeof(out), err, sizeof(err)), -1);
        assert_non_null(strstr(err, "bad s3 object key"));
        assert_null(strchr(err, '\n'));
    }
    struct rt_s3_creds none = {"", "", NULL};
    assert_int_equal(rt_s3_put(&t, &none, "k", "abc", 3, out, sizeof(out), err, sizeof(err)), -1);
    assert_string_equal(err, "no s3 credentials");
    struct rt_s3_creds ctl = {c.access_key, c.secret_key, "tok\r\nx-evil: 1"};
    assert_int_equal(rt_s3_put(&t, &ctl, "k", "abc", 3, out, sizeof(out), err, sizeof(err)), -1);
    assert_string_equal(err, "s3 credentials contain control characters");

    /* no room for the uri: refused before anything is sent */
    char tiny[16];
    assert_int_equal(
        rt_s3_put(&t, &c, "tiny.csv.gz", "abc", 3, tiny, sizeof(tiny), err, sizeof(err)), -1);
    char *path = object_path("args/tiny.csv.gz");
    assert_int_equal(access(path, F_OK), -1);
    free(path);
    rt_s3_target_free(&t);
}

static void test_put_unreachable(void **state)
{
    (void)state;
    int port = free_port();
    char ep[64];
    snprintf(ep, sizeof(ep), "http://127.0.0.1:%d", port);
    setenv("RTRACK_S3_ENDPOINT", ep, 1);
    struct rt_s3_target t;
    char err[512] = "";
    assert_int_equal(target_parse("s3://test-bucket/p", &t, err, sizeof(err)), 0);
    struct rt_s3_creds c = {"AKIDTEST", "testsecret", "TOKEN-x"};
    double t0 = fx_mono_s();
    assert_int_equal(rt_s3_put(&t, &c, "k.csv.gz", "abc", 3, NULL, 0, err, sizeof(err)), -1);
    double dt = fx_mono_s() - t0;
    assert_true(dt < 5.0);
    char *want = xasprintf("cannot reach s3 endpoint %s: ", ep);
    assert_prefix(err, want);
    assert_clean_err(err);
    free(want);
    rt_s3_target_free(&t);
    unsetenv("RTRACK_S3_ENDPOINT");
}

/* --- the rows of an uploaded object against the Python reference's -----------------------------
 */

#define SENTINEL_MOCK RT_FIXTURES "/../helpers/sentinel_mock.py"
#define MOCK_TOKEN    "tok-s3-parity"

/* gunzip of a whole gzip member, as a string */
static char *gunzip_text(const unsigned char *gz, size_t len)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
    struct rt_buf out = {0};
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    int rc;
    do {
        rt_buf_reserve(&out, out.len + 65536 + 1);
        z.next_out = (Bytef *)out.p + out.len;
        z.avail_out = 65536;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            fail_msg("the object is not gzip (inflate %d)", rc);
        out.len = z.total_out;
    } while (rc != Z_STREAM_END);
    assert_int_equal(z.avail_in, 0); /* one member, nothing after it */
    inflateEnd(&z);
    out.p[out.len] = '\0';
    return out.p;
}

/* A golden file of the case (the *-fixed one where rtrack corrects a Python bug), NULL when the
 * case has none (no tracked process). */
static char *golden(const char *cname, const char *what)
{
    char *path = xasprintf("%s/parity/%s/expected-%s-fixed.csv", RT_FIXTURES, cname, what);
    char *t = fx_slurp(path);
    free(path);
    if (!t) {
        path = xasprintf("%s/parity/%s/expected-%s.csv", RT_FIXTURES, cname, what);
        t = fx_slurp(path);
        free(path);
    }
    return t;
}

/* The combined CSV (Python's get_combined_metrics(), the Sentinel batch layout) of one golden
 * case, put together from the reference's two files by hand: the system header with system_
 * before each name but the timestamp, the process header's names after its timestamp with
 * process_; the row likewise, the process fields "" where the case tracks no process. */
static char *golden_combined(const char *cname)
{
    char *sys = golden(cname, "system"), *proc = golden(cname, "process");
    assert_non_null(sys);
    struct rt_buf b = {0};
    char *sys_row = strchr(sys, '\n') + 1;
    *strchr(sys, '\n') = '\0';
    rt_buf_puts(&b, "\"timestamp\"");
    for (char *f = strchr(sys, ','); f; f = strchr(f + 1, ',')) {
        rt_buf_puts(&b, ",\"system_");
        rt_buf_append(&b, f + 2, strcspn(f + 1, ",") - 1);
    }
    char *proc_row = NULL;
    if (proc) {
        proc_row = strchr(proc, '\n') + 1;
        *strchr(proc, '\n') = '\0';
    }
    /* the process header of a case without a tree: the same names as any case's */
    char *any = proc ? NULL : golden("03-process-tree", "process");
    if (any)
        *strchr(any, '\n') = '\0';
    const char *ph = proc ? proc : any;
    for (const char *f = strchr(ph, ','); f; f = strchr(f + 1, ',')) {
        rt_buf_puts(&b, ",\"process_");
        rt_buf_append(&b, f + 2, strcspn(f + 1, ",") - 1);
    }
    rt_buf_puts(&b, "\n");
    *strchr(sys_row, '\n') = '\0';
    rt_buf_puts(&b, sys_row);
    if (proc_row) {
        proc_row[strcspn(proc_row, "\n")] = '\0';
        rt_buf_puts(&b, strchr(proc_row, ','));
    } else {
        for (int i = 0; i < 11; i++)
            rt_buf_puts(&b, ",\"\"");
    }
    rt_buf_puts(&b, "\n");
    free(sys);
    free(proc);
    free(any);
    return b.p;
}

/* Record the case a -> b into the database as a finished run; its id. */
static int64_t record_case(struct rt_store *st, const char *cname)
{
    struct fx_case c;
    char *cdir = xasprintf("%s/parity/%s", RT_FIXTURES, cname);
    fx_case_run(&c, cdir, -1, 0);
    free(cdir);
    struct rt_host_info h;
    rt_host_info_read(&c.env, &h);
    struct rt_run_desc rs = {.mode = "record",
                             .pid = c.pid,
                             .interval = 1.0,
                             .started_at = c.time_a,
                             .host = &h,
                             .clk_tck = c.env.clk_tck,
                             .page_size = c.env.page_size};
    int64_t run;
    assert_int_equal(rt_store_begin_run(st, &rs, &run), 0);
    rt_host_info_free(&h);
    if (rt_store_add_sample(st, &c.a) != 0 || rt_store_add_sample(st, &c.b) != 0)
        fail_msg("%s: %s", cname, rt_store_error(st));
    assert_int_equal(rt_store_commit(st), 0);
    struct rt_run_end e = rt_run_end_none(c.time_b);
    e.status = "finished";
    e.exit_code = 0;
    e.end_reason = "exited";
    assert_int_equal(rt_store_end_run(st, &e), 0);
    fx_case_free(&c);
    return run;
}

/* rtrack's upload of parity cases (the real collectors over the a and b snapshots, the store,
 * the uploader, against the mock Sentinel API and this S3): each object, read back from the
 * server's disk and gunzipped, holds exactly the header and the row the Python reference wrote
 * for that case (values and their text), put together from its expected-*.csv files. Case 10's
 * row is rtrack's own (test_export.c derives it), so it is left out here. */
static void test_upload_parity_rows(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "01-idle-2core",     "02-busy-8core",   "03-process-tree",    "04-zero-deltas",
        "05-sector-4096",    "06-partitions",   "07-no-memavailable", "08-comm-spaces",
        "09-rounding-edges", "11-mount-quirks",
    };
    char dir[256], dbpath[300], logp[320];
    assert_int_equal(fx_tmpdir(dir, sizeof(dir), dbpath, sizeof(dbpath)), 0);
    snprintf(logp, sizeof(logp), "%s/api.log", dir);
    setenv("MOCK_S3_KEY", need_env("S3_TEST_KEY"), 1);
    setenv("MOCK_S3_SECRET", need_env("S3_TEST_SECRET"), 1);
    setenv("MOCK_ORG", "parity", 1);
    setenv("NO_PROXY", "*", 1);
    setenv("no_proxy", "*", 1);
    pid_t mock = -1;
    int port = fx_python_mock(SENTINEL_MOCK, logp, MOCK_TOKEN, &mock);
    assert_true(port > 0);
    char url[64];
    snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
    struct rt_sentinel api;
    assert_int_equal(rt_sentinel_init(&api, MOCK_TOKEN, url), 0);

    struct rt_store *st;
    char err[512] = "";
    if (rt_store_open(dbpath, RT_STORE_WRITE, &st, err, sizeof(err)) != 0)
        fail_msg("open %s: %s", dbpath, err);
    const struct rt_upload_opts o = {.batch_rows = 100, .s3_endpoint = need_env("S3_ENDPOINT")};
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        int64_t run = record_case(st, cases[i]);
        struct rt_upload_result res;
        if (rt_upload_run(st, run, &api, &o, &res, err, sizeof(err)) != 0)
            fail_msg("%s: upload: %s", cases[i], err);
        assert_int_equal(res.batches, 1);
        assert_int_equal(res.rows, 1);
        char *objkey = xasprintf("sentinel/parity/%s/000000.csv.gz", res.remote_run_id);
        char *path = object_path(objkey);
        size_t len = 0;
        unsigned char *gz = (unsigned char *)fx_slurp_n(path, &len);
        if (!gz)
            fail_msg("%s: no object %s", cases[i], path);
        char *got = gunzip_text(gz, len);
        char *want = golden_combined(cases[i]);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "the object holds\n%sthe reference's rows are\n%s", got, want);
            fail_msg("%s: the uploaded object is not the reference's row", cases[i]);
        }
        free(want);
        free(got);
        free(gz);
        free(path);
        free(objkey);
    }
    rt_store_close(st);
    rt_sentinel_free(&api);
    kill(mock, SIGTERM);
    waitpid(mock, NULL, 0);
    unsetenv("MOCK_ORG");
    fx_rmtree(dir);
}

/* --- AWS addressing, through a fake https proxy ------------------------------------------------
 */

struct fake_proxy {
    int fd;
    int port;
    int want; /* connections to take */
    char lines[4][256];
    int n;
    char all[8192]; /* everything the client sent, to check no credential went to the proxy */
    size_t all_len;
    pthread_t th;
};

/* Take `want` connections: record each request head, then hang up without an answer, so the
 * client sees a failed tunnel and no TLS is needed. */
static void *fake_proxy_main(void *arg)
{
    struct fake_proxy *p = arg;
    while (p->n < p->want) {
        struct pollfd pf = {.fd = p->fd, .events = POLLIN};
        if (poll(&pf, 1, 10000) <= 0)
            break;
        int cfd = accept(p->fd, NULL, NULL);
        if (cfd < 0)
            break;
        char head[2048];
        size_t len = 0;
        while (len < sizeof(head) - 1) {
            struct pollfd cf = {.fd = cfd, .events = POLLIN};
            if (poll(&cf, 1, 5000) <= 0)
                break;
            ssize_t r = read(cfd, head + len, sizeof(head) - 1 - len);
            if (r <= 0)
                break;
            len += (size_t)r;
            head[len] = '\0';
            if (strstr(head, "\r\n\r\n"))
                break;
        }
        head[len] = '\0';
        if (p->all_len + len < sizeof(p->all)) {
            memcpy(p->all + p->all_len, head, len);
            p->all_len += len;
            p->all[p->all_len] = '\0';
        }
        size_t l = strcspn(head, "\r\n");
        snprintf(p->lines[p->n], sizeof(p->lines[p->n]), "%.*s", (int)l, head);
        p->n++;
        close(cfd);
    }
    return NULL;
}

static void fake_proxy_start(struct fake_proxy *p, int want)
{
    memset(p, 0, sizeof(*p));
    p->want = want;
    p->fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(p->fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(p->fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(p->fd, 4), 0);
    socklen_t al = sizeof(a);
    assert_int_equal(getsockname(p->fd, (struct sockaddr *)&a, &al), 0);
    p->port = ntohs(a.sin_port);
    assert_int_equal(pthread_create(&p->th, NULL, fake_proxy_main, p), 0);
    char proxy[64];
    snprintf(proxy, sizeof(proxy), "http://127.0.0.1:%d", p->port);
    setenv("https_proxy", proxy, 1);
    unsetenv("HTTPS_PROXY");
    unsetenv("no_proxy");
    unsetenv("NO_PROXY");
    unsetenv("all_proxy");
    unsetenv("ALL_PROXY");
}

static void fake_proxy_stop(struct fake_proxy *p)
{
    pthread_join(p->th, NULL);
    close(p->fd);
    unsetenv("https_proxy");
}

static void test_aws_virtual_hosted(void **state)
{
    (void)state;
    unsetenv("RTRACK_S3_ENDPOINT");
    struct rt_s3_creds c = {"AKIDTEST", "testsecret", "TOKEN-sts"};
    char err[512] = "";
    struct rt_s3_target t;

    /* RTRACK_S3_REGION given: no probe, one PUT to the regional virtual-hosted name */
    setenv("RTRACK_S3_REGION", "ap-south-1", 1);
    assert_int_equal(target_parse("s3://test-bucket/a b", &t, err, sizeof(err)), 0);
    struct fake_proxy p;
    fake_proxy_start(&p, 1);
    assert_int_equal(rt_s3_put(&t, &c, "r/000000.csv.gz", "abc", 3, NULL, 0, err, sizeof(err)), -1);
    fake_proxy_stop(&p);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.lines[0], "CONNECT test-bucket.s3.ap-south-1.amazonaws.com:443 HTTP/1.1");
    assert_prefix(err,
                  "cannot reach s3 endpoint https://test-bucket.s3.ap-south-1.amazonaws.com: ");
    assert_clean_err(err);
    assert_null(strstr(p.all, "testsecret"));
    assert_null(strstr(p.all, "TOKEN-"));
    rt_s3_target_free(&t);

    /* no region: HEAD https://BUCKET.s3.amazonaws.com/ first; no answer, so eu-central-1 */
    unsetenv("RTRACK_S3_REGION");
    assert_int_equal(target_parse("s3://test-bucket", &t, err, sizeof(err)), 0);
    fake_proxy_start(&p, 2);
    double t0 = fx_mono_s();
    assert_int_equal(rt_s3_put(&t, &c, "r/000000.csv.gz", "abc", 3, NULL, 0, err, sizeof(err)), -1);
    double dt = fx_mono_s() - t0;
    fake_proxy_stop(&p);
    assert_true(dt < 5.0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.lines[0], "CONNECT test-bucket.s3.amazonaws.com:443 HTTP/1.1");
    assert_string_equal(p.lines[1],
                        "CONNECT test-bucket.s3.eu-central-1.amazonaws.com:443 HTTP/1.1");
    assert_string_equal(t.region, "eu-central-1");
    assert_non_null(strstr(err, "https://test-bucket.s3.eu-central-1.amazonaws.com"));
    assert_clean_err(err);
    assert_null(strstr(p.all, "testsecret"));

    /* the region is kept for the run: the next PUT does not probe again */
    fake_proxy_start(&p, 1);
    assert_int_equal(rt_s3_put(&t, &c, "r/000001.csv.gz", "abc", 3, NULL, 0, err, sizeof(err)), -1);
    fake_proxy_stop(&p);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.lines[0],
                        "CONNECT test-bucket.s3.eu-central-1.amazonaws.com:443 HTTP/1.1");
    rt_s3_target_free(&t);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),     cmocka_unit_test(test_encode_key),
        cmocka_unit_test(test_target_parse_good),  cmocka_unit_test(test_target_parse_bad),
        cmocka_unit_test(test_put_gzip),           cmocka_unit_test(test_put_session_token),
        cmocka_unit_test(test_put_odd_keys),       cmocka_unit_test(test_put_large_and_empty),
        cmocka_unit_test(test_put_wrong_secret),   cmocka_unit_test(test_payload_hash),
        cmocka_unit_test(test_put_no_bucket),      cmocka_unit_test(test_put_bad_arguments),
        cmocka_unit_test(test_put_unreachable),    cmocka_unit_test(test_aws_virtual_hosted),
        cmocka_unit_test(test_upload_parity_rows),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
