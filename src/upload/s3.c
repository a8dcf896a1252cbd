/* s3.c - one object PUT to S3 or an S3-compatible store, SigV4-signed by libcurl.
 *
 * libcurl 7.88 (Debian 12) has CURLOPT_AWS_SIGV4 with pitfalls, each handled here:
 * - it does not add x-amz-content-sha256, which S3 requires; when the header is set, curl uses
 *   its value as the payload hash, so the body's SHA-256 goes there (a real hash, not
 *   UNSIGNED-PAYLOAD: S3 then checks the bytes it stored);
 * - it signs the raw path without URI-encoding it, so keys are percent-encoded here first
 *   (rt_s3_encode_key), or keys with '=', ':', '+' or spaces get SignatureDoesNotMatch;
 * - an "Expect:" override still lands in SignedHeaders while the header is dropped, which fails
 *   every request: the default Expect: 100-continue is left alone;
 * - it cannot infer region or service from a custom endpoint: both are given explicitly;
 * - it has no session-token option: x-amz-security-token is a custom header, which curl signs.
 * Content-Type is application/gzip and there is no Content-Encoding: gzip, with which clients
 * decompress on download (a bug resource-tracker-rs hit). */
#include "rtrack/net/libs.h"
#include "rtrack/upload/upload.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rtrack/net/http.h"

#define S3_CONNECT_TIMEOUT_MS  10000L
#define S3_TIMEOUT_MS          60000L /* per PUT: a hung endpoint never blocks longer */
#define S3_PROBE_TIMEOUT_MS    3000L
#define S3_MAX_ERROR_BODY      (64 * 1024)
#define S3_AWS_FALLBACK_REGION "eu-central-1"
#define S3_ENDPOINT_REGION     "us-east-1"
#define S3_REGION_MAX          63

static int is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static int has_ctl(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
            return 1;
    return 0;
}

/* --- SHA-256 and key encoding ------------------------------------------------------------------
 */

void rt_sha256_hex(const void *data, size_t len, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char md[32];
    if (rt_sha256(data, len, md) != 0) {
        /* libcrypto (a dependency of the package, and of libcurl) is missing, or an
         * allocation failed inside it: like xmalloc, give up. */
        fprintf(stderr, "rtrack: sha-256 failed: libcrypto.so.3 cannot be loaded or failed\n");
        abort();
    }
    for (unsigned int i = 0; i < 32; i++) {
        out[2 * i] = hex[md[i] >> 4];
        out[2 * i + 1] = hex[md[i] & 15];
    }
    out[64] = '\0';
}

void rt_s3_encode_key(struct rt_buf *b, const char *key)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(key);
    rt_buf_reserve(b, b->len + 3 * n + 1);
    char *o = b->p + b->len;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)key[i];
        if (is_alnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
            *o++ = (char)c;
        } else {
            *o++ = '%';
            *o++ = hex[c >> 4];
            *o++ = hex[c & 15];
        }
    }
    *o = '\0';
    b->len = (size_t)(o - b->p);
}

/* --- targets -----------------------------------------------------------------------------------
 */

/* AWS's rules for new buckets (3-63 of a-z 0-9 . -, alphanumeric at both ends): the name becomes
 * a host name in virtual-hosted requests. */
static int bucket_ok(const char *s, size_t n)
{
    if (n < 3 || n > 63)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
            return 0;
    }
    return is_alnum((unsigned char)s[0]) && is_alnum((unsigned char)s[n - 1]);
}

/* A region goes into curl's "aws:amz:REGION:s3" and a host name: no ':' or anything odd. */
static int region_ok(const char *s, size_t n)
{
    if (n == 0 || n > S3_REGION_MAX)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!is_alnum(c) && c != '-' && c != '_')
            return 0;
    }
    return 1;
}

/* Relative object path: non-empty, no leading or trailing '/', no empty, "." or ".." segment
 * (curl would collapse dot segments, and the signed path would no longer be the key). */
static int path_ok(const char *s)
{
    if (!*s || has_ctl(s))
        return 0;
    const char *seg = s;
    for (;;) {
        const char *e = strchr(seg, '/');
        size_t n = e ? (size_t)(e - seg) : strlen(seg);
        if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
            return 0;
        if (!e)
            return 1;
        seg = e + 1;
    }
}

/* RTRACK_S3_ENDPOINT: http(s)://host[:port][/path], without credentials, query or fragment.
 * The value is never echoed: it could carry a user:password@ part. */
static int endpoint_check(const char *v, char *err, size_t errlen)
{
    const char *rest = NULL;
    if (strncmp(v, "http://", 7) == 0)
        rest = v + 7;
    else if (strncmp(v, "https://", 8) == 0)
        rest = v + 8;
    if (!rest) {
        rt_set_err(err, errlen, "RTRACK_S3_ENDPOINT must start with http:// or https://");
        return -1;
    }
    size_t host_len = strcspn(rest, "/");
    if (host_len == 0) {
        rt_set_err(err, errlen, "RTRACK_S3_ENDPOINT has no host");
        return -1;
    }
    if (memchr(rest, '@', host_len)) {
        rt_set_err(err, errlen, "RTRACK_S3_ENDPOINT must not contain credentials");
        return -1;
    }
    if (has_ctl(v) || strpbrk(v, " ?#")) {
        rt_set_err(err, errlen, "RTRACK_S3_ENDPOINT must be a plain http(s)://host[:port] url");
        return -1;
    }
    return 0;
}

int rt_s3_target_parse(const char *uri, const char *ep, const char *region, struct rt_s3_target *t,
                       char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    if (!uri || !*uri) {
        rt_set_err(err, errlen, "empty s3 uri");
        return -1;
    }
    if (has_ctl(uri)) {
        rt_set_err(err, errlen, "s3 uri contains control characters");
        return -1;
    }
    if (strncmp(uri, "s3://", 5) != 0) {
        rt_set_err(err, errlen, "'%.200s' is not an s3 uri (expected s3://bucket[/prefix])", uri);
        return -1;
    }
    const char *b = uri + 5;
    size_t blen = strcspn(b, "/");
    if (blen == 0) {
        rt_set_err(err, errlen, "'%.200s' has no bucket name", uri);
        return -1;
    }
    if (!bucket_ok(b, blen)) {
        rt_set_err(err, errlen,
                   "'%.200s': bad bucket name (3-63 lowercase letters, digits, '.' and '-')", uri);
        return -1;
    }
    const char *p = b[blen] == '/' ? b + blen + 1 : b + blen;
    size_t plen = strlen(p);
    if (plen > 0 && p[plen - 1] == '/')
        plen--;
    char *prefix = xstrndup(p, plen);
    if (plen > 0 && !path_ok(prefix)) {
        free(prefix);
        rt_set_err(err, errlen, "'%.200s': bad prefix (empty, '.' or '..' path segment)", uri);
        return -1;
    }

    if (ep && *ep && endpoint_check(ep, err, errlen) != 0) {
        free(prefix);
        return -1;
    }
    if (region && *region && !region_ok(region, strlen(region))) {
        free(prefix);
        rt_set_err(err, errlen, "RTRACK_S3_REGION is not a region name (letters, digits, '-')");
        return -1;
    }
    t->bucket = xstrndup(b, blen);
    t->prefix = prefix;
    if (ep && *ep) {
        size_t n = strlen(ep);
        while (n > 0 && ep[n - 1] == '/')
            n--;
        t->endpoint = xstrndup(ep, n);
    }
    if (region && *region)
        t->region = xstrdup(region);
    return 0;
}

void rt_s3_target_free(struct rt_s3_target *t)
{
    if (!t)
        return;
    free(t->bucket);
    free(t->prefix);
    free(t->endpoint);
    free(t->region);
    memset(t, 0, sizeof(*t));
}

/* --- region ------------------------------------------------------------------------------------
 */

/* x-amz-bucket-region, on any answer: kept when it is a region name. */
static void on_bucket_region(const char *v, size_t n, void *ud)
{
    char *region = ud;
    if (region_ok(v, n)) {
        memcpy(region, v, n);
        region[n] = '\0';
    }
}

/* S3 names a bucket's region in x-amz-bucket-region on any answer to HEAD, 301 and 403
 * included, and without credentials. */
static char *s3_probe_region(const char *bucket)
{
    char region[S3_REGION_MAX + 1] = "";
    char *url = xasprintf("https://%s.s3.amazonaws.com/", bucket);
    const struct rt_http_req req = {
        .url = url,
        .timeout_ms = S3_PROBE_TIMEOUT_MS,
        .connect_timeout_ms = S3_PROBE_TIMEOUT_MS,
        /* no body kept (a HEAD has none), and no size limit that could end the answer
         * before its headers are read */
        .keep_reading = 1,
        .header = "x-amz-bucket-region",
        .on_header = on_bucket_region,
        .header_ud = region,
    };
    struct rt_http h;
    if (rt_http_open(&h, &req) == 0) {
        curl_easy_setopt(h.curl, CURLOPT_NOBODY, 1L);
        rt_http_perform(&h); /* any answer, or none: the header decides */
    }
    rt_http_close(&h);
    free(url);
    return xstrdup(region[0] ? region : S3_AWS_FALLBACK_REGION);
}

/* The region the request is signed for: the one given, else us-east-1 for an endpoint (what
 * S3-compatible stores expect), else the bucket's own (asked once, kept in t). */
static void s3_region(struct rt_s3_target *t)
{
    if (!t->region)
        t->region = t->endpoint ? xstrdup(S3_ENDPOINT_REGION) : s3_probe_region(t->bucket);
}

/* --- PUT ---------------------------------------------------------------------------------------
 */

struct s3_src {
    const char *p;
    size_t len, off;
};

static size_t s3_read(char *dst, size_t size, size_t nmemb, void *ud)
{
    struct s3_src *s = ud;
    size_t n = size * nmemb, left = s->len - s->off;
    if (n > left)
        n = left;
    if (n) {
        memcpy(dst, s->p + s->off, n);
        s->off += n;
    }
    return n;
}

/* curl rewinds the body when it has to send it again (a redirect, a refused 100-continue). */
static int s3_seek(void *ud, curl_off_t off, int origin)
{
    struct s3_src *s = ud;
    if (origin != SEEK_SET || off < 0 || (uint64_t)off > s->len)
        return CURL_SEEKFUNC_CANTSEEK;
    s->off = (size_t)off;
    return CURL_SEEKFUNC_OK;
}

/* What rt_s3_put() refuses before anything is sent. 0, or -1 with err. */
static int s3_put_check(const struct rt_s3_target *t, const struct rt_s3_creds *c, const char *key,
                        const void *body, size_t len, char *err, size_t errlen)
{
    if (!t || !t->bucket || !t->prefix) {
        rt_set_err(err, errlen, "no s3 target");
        return -1;
    }
    if (!c || !c->access_key || !*c->access_key || !c->secret_key || !*c->secret_key) {
        rt_set_err(err, errlen, "no s3 credentials");
        return -1;
    }
    if (has_ctl(c->access_key) || has_ctl(c->secret_key) ||
        (c->session_token && has_ctl(c->session_token))) {
        rt_set_err(err, errlen, "s3 credentials contain control characters");
        return -1;
    }
    if (!key || !path_ok(key)) {
        if (key && !has_ctl(key))
            rt_set_err(err, errlen, "bad s3 object key '%.200s'", key);
        else
            rt_set_err(err, errlen, "bad s3 object key");
        return -1;
    }
    if (!body && len) {
        rt_set_err(err, errlen, "no body to upload");
        return -1;
    }
    return 0;
}

/* The object's key (key under the target's prefix) and its "s3://bucket/key" uri. */
static void s3_object(const struct rt_s3_target *t, const char *key, struct rt_buf *objkey,
                      struct rt_buf *uri)
{
    if (t->prefix[0]) {
        rt_buf_puts(objkey, t->prefix);
        rt_buf_puts(objkey, "/");
    }
    rt_buf_puts(objkey, key);
    rt_buf_puts(uri, "s3://");
    rt_buf_puts(uri, t->bucket);
    rt_buf_puts(uri, "/");
    rt_buf_puts(uri, objkey->p);
}

/* The object's URL in url; returns its host part (malloc'd), for messages. Path-style for
 * endpoints (S3-compatible stores, the test server), virtual-hosted for AWS, which is phasing
 * path-style out. */
static char *s3_url(const struct rt_s3_target *t, const char *objkey, struct rt_buf *url)
{
    char *host;
    if (t->endpoint) {
        host = xstrdup(t->endpoint);
        rt_buf_puts(url, t->endpoint);
        rt_buf_puts(url, "/");
        rt_buf_puts(url, t->bucket);
        rt_buf_puts(url, "/");
    } else {
        host = xasprintf("https://%s.s3.%s.amazonaws.com", t->bucket, t->region);
        rt_buf_puts(url, host);
        rt_buf_puts(url, "/");
    }
    rt_s3_encode_key(url, objkey);
    return host;
}

/* The PUT of src to url in h, signed by libcurl with SigV4 for t's region (the header comment of
 * this file has the why of each header). 0, or -1 when libcurl cannot set it up. */
static int s3_signed_put(struct rt_http *h, const struct rt_s3_target *t,
                         const struct rt_s3_creds *c, const char *url, struct s3_src *src)
{
    char sha[65];
    rt_sha256_hex(src->p, src->len, sha);
    char *h_sha = xasprintf("x-amz-content-sha256: %s", sha);
    char *h_token = c->session_token && *c->session_token
                        ? xasprintf("x-amz-security-token: %s", c->session_token)
                        : NULL;
    char *sigv4 = xasprintf("aws:amz:%s:s3", t->region);
    /* RTRACK_HTTP_TIMEOUT_S replaces the total limit here too (a trickling endpoint is bounded by
     * it), and caps the connect limit. The answer's body is kept (bounded) only to pick S3's
     * error code out of it. */
    const struct rt_http_req req = {
        .url = url,
        .timeout_ms = S3_TIMEOUT_MS,
        .connect_timeout_ms = S3_CONNECT_TIMEOUT_MS,
        .process_limit = 1,
        .max_body = S3_MAX_ERROR_BODY,
        .keep_reading = 1,
    };
    int rc = -1;
    if (rt_http_open(h, &req) == 0 && rt_http_add_header(h, h_sha) == 0 &&
        (!h_token || rt_http_add_header(h, h_token) == 0) &&
        rt_http_add_header(h, "Content-Type: application/gzip") == 0) {
        CURL *cu = h->curl;
        curl_easy_setopt(cu, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(cu, CURLOPT_READFUNCTION, s3_read);
        curl_easy_setopt(cu, CURLOPT_READDATA, src);
        curl_easy_setopt(cu, CURLOPT_SEEKFUNCTION, s3_seek);
        curl_easy_setopt(cu, CURLOPT_SEEKDATA, src);
        curl_easy_setopt(cu, CURLOPT_INFILESIZE_LARGE, (curl_off_t)src->len);
        curl_easy_setopt(cu, CURLOPT_AWS_SIGV4, sigv4); /* curl keeps a copy */
        /* USERNAME/PASSWORD, not USERPWD: a secret may contain ':'. */
        curl_easy_setopt(cu, CURLOPT_USERNAME, c->access_key);
        curl_easy_setopt(cu, CURLOPT_PASSWORD, c->secret_key);
        rc = 0;
    }
    free(sigv4);
    free(h_sha);
    if (h_token) {
        explicit_bzero(h_token, strlen(h_token));
        free(h_token);
    }
    return rc;
}

/* <Code>SignatureDoesNotMatch</Code> out of S3's XML error body: a substring search for that
 * one element, not an XML parser. Anything but a plain identifier is ignored, and nothing else
 * of the body is ever shown: some bodies echo the request (StringToSign, the access key id). */
static void s3_error_code(const struct rt_buf *b, char *code, size_t cap)
{
    code[0] = '\0';
    if (!b->p)
        return;
    const char *s = strstr(b->p, "<Code>");
    if (!s)
        return;
    s += 6;
    const char *e = strstr(s, "</Code>");
    if (!e || e == s || (size_t)(e - s) >= cap)
        return;
    for (const char *q = s; q < e; q++)
        if (!is_alnum((unsigned char)*q) && *q != '.')
            return;
    memcpy(code, s, (size_t)(e - s));
    code[e - s] = '\0';
}

/* Whether text holds a credential, or its first 8 bytes or more (a server may echo what it
 * was sent, cut short). */
static int holds_cred(const char *text, const struct rt_s3_creds *c)
{
    const char *v[] = {c->access_key, c->secret_key, c->session_token};
    for (size_t i = 0; i < RT_ARRAY_LEN(v); i++) {
        size_t len = v[i] ? strlen(v[i]) : 0, min = len < 8 ? len : 8;
        for (const char *p = text; len && *p; p++) {
            size_t k = 0;
            while (k < len && p[k] == v[i][k])
                k++;
            if (k >= min)
                return 1;
        }
    }
    return 0;
}

/* Why the PUT of uri to host did not succeed, in err: S3's answer (the status and S3's error
 * code), the endpoint's silence, or curl's reason. */
static void s3_put_error(const struct rt_http *h, const struct rt_s3_creds *c, const char *host,
                         const char *uri, char *err, size_t errlen)
{
    char why[CURL_ERROR_SIZE];
    if (h->status >= 300 || h->code == CURLE_OK) {
        /* An early 403 may also cut the upload short: the status is the reason then. */
        char code[64];
        s3_error_code(&h->body, code, sizeof(code));
        if (holds_cred(code, c)) /* an identifier, and the access key is one too */
            code[0] = '\0';
        if (code[0])
            rt_set_err(err, errlen, "s3 answered HTTP %ld (%s) for %s", h->status, code, uri);
        else
            rt_set_err(err, errlen, "s3 answered HTTP %ld for %s", h->status, uri);
    } else if (h->code == CURLE_OPERATION_TIMEDOUT) {
        if (h->connect_us > 0)
            rt_set_err(err, errlen, "s3 endpoint %s did not answer within %g s for %s", host,
                       (double)h->timeout_ms / 1000.0, uri);
        else
            rt_set_err(err, errlen, "cannot reach s3 endpoint %s: no connection within %g s", host,
                       (double)h->connect_timeout_ms / 1000.0);
    } else if (h->status == 0) {
        rt_set_err(err, errlen, "cannot reach s3 endpoint %s: %s", host,
                   rt_curl_reason(h->code, h->errbuf, why, sizeof(why)));
    } else {
        rt_set_err(err, errlen, "s3 upload of %s broke off: %s", uri,
                   rt_curl_reason(h->code, h->errbuf, why, sizeof(why)));
    }
}

int rt_s3_put(struct rt_s3_target *t, const struct rt_s3_creds *c, const char *key,
              const void *body, size_t len, char *uri_out, size_t uri_cap, char *err, size_t errlen)
{
    if (s3_put_check(t, c, key, body, len, err, errlen) != 0)
        return -1;
    if (rt_http_init(err, errlen) != 0)
        return -1;

    int rc = -1;
    struct rt_buf objkey = {0}, uri = {0}, url = {0};
    struct s3_src src = {body, len, 0};
    struct rt_http h = {0};
    char *host = NULL;
    s3_object(t, key, &objkey, &uri);
    if (uri_out && uri.len >= uri_cap) {
        rt_set_err(err, errlen, "no room for the uri of %.200s", uri.p);
        goto out;
    }
    s3_region(t);
    host = s3_url(t, objkey.p, &url);
    if (s3_signed_put(&h, t, c, url.p, &src) != 0) {
        rt_set_err(err, errlen, "cannot initialise libcurl");
        goto out;
    }
    if (rt_http_perform(&h) == CURLE_OK && (h.status == 200 || h.status == 201)) {
        if (uri_out)
            memcpy(uri_out, uri.p, uri.len + 1);
        rc = 0;
    } else {
        s3_put_error(&h, c, host, uri.p, err, errlen);
    }
out:
    rt_http_close(&h);
    free(host);
    rt_buf_free(&objkey);
    rt_buf_free(&uri);
    rt_buf_free(&url);
    return rc;
}
