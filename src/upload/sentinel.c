/* sentinel.c - the Spare Cores Sentinel API: start a run, refresh its upload credentials,
 * finish it.
 *
 * One POST per call (net/http.h), answers read with base/json.h (SQLite's JSON functions).
 * The contract is the one resource-tracker-rs validated against the live API:
 * - POST {base}/runs, a flat JSON object (never `pid`), answers run_id, upload_uri_prefix and
 *   upload_credentials{access_key, secret_key, session_token, expiration | expires_at};
 * - POST {base}/runs/{id}/refresh-credentials, an empty body without Content-Type, answers
 *   {"upload_credentials": {...}};
 * - POST {base}/runs/{id}/finish, a JSON body without run_id; HTTP 200 exactly.
 * No call is retried here: the caller decides. A POST /runs that went out and got no usable
 * answer (a timeout, a lost connection, a gateway's 502/504, a 2xx that cannot be read) may
 * have registered the run all the same: r->in_doubt says so, and upload.c never sends it blindly
 * again. The run's stable key goes with it as an Idempotency-Key header, which the contract
 * leaves room for (RunCreate forbids extra body fields; headers it ignores).
 *
 * The token goes over TLS only, or to the loopback interface (127.0.0.0/8, ::1, localhost: the
 * tests, a local tunnel): a plain http:// URL elsewhere is refused before anything is sent.
 *
 * Secrets: the token and the credentials never reach an error message. An answer that may
 * carry credentials (any 2xx of /runs, any answer of refresh) is never quoted; other error
 * answers are quoted (200 bytes at most, one line) because FastAPI's 422 says which field was
 * wrong, unless the answer contains the token. Buffers that held secrets are zeroed before
 * they are freed. */
#include "rtrack/net/libs.h"
#include "rtrack/upload/upload.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rtrack/base/json.h"
#include "rtrack/net/http.h"

#define SENTINEL_DEFAULT_URL        "https://api.sentinel.sparecores.net"
#define SENTINEL_CONNECT_TIMEOUT_MS 10000L
#define SENTINEL_TIMEOUT_MS         30000L
#define SENTINEL_MAX_BODY           (4L * 1024 * 1024)
#define SENTINEL_EXCERPT            200
/* 2100-01-01T00:00:00Z: "never refresh" when the API gives no expiration. */
#define SENTINEL_FAR_FUTURE 4102444800.0

static void wipe_str(char *s)
{
    if (s) {
        explicit_bzero(s, strlen(s));
        free(s);
    }
}

static void wipe_buf(struct rt_buf *b)
{
    if (b->p)
        explicit_bzero(b->p, b->cap ? b->cap : b->len);
    rt_buf_free(b);
}

static void creds_free(struct rt_s3_creds *c)
{
    wipe_str(c->access_key);
    wipe_str(c->secret_key);
    wipe_str(c->session_token);
    memset(c, 0, sizeof(*c));
}

/* The S3 credentials Sentinel handed out in this process (the last few sets): an error answer
 * that quotes one of them (a server echoing what it issued) is not quoted in a message, the way
 * one quoting the token is not. Evicted copies are wiped. */
#define SEEN_MAX 24
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char *seen[SEEN_MAX];
static size_t nseen;

static void remember_creds(const struct rt_s3_creds *c)
{
    const char *v[] = {c->access_key, c->secret_key, c->session_token};
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < RT_ARRAY_LEN(v); i++) {
        if (!v[i] || !*v[i])
            continue;
        if (nseen == SEEN_MAX) {
            wipe_str(seen[0]);
            memmove(seen, seen + 1, (SEEN_MAX - 1) * sizeof(seen[0]));
            nseen--;
        }
        seen[nseen++] = xstrdup(v[i]);
    }
    pthread_mutex_unlock(&seen_lock);
}

static int quotes_creds(const struct rt_buf *body)
{
    int found = 0;
    pthread_mutex_lock(&seen_lock);
    for (size_t i = 0; i < nseen && !found; i++)
        found = memmem(body->p, body->len, seen[i], strlen(seen[i])) != NULL;
    pthread_mutex_unlock(&seen_lock);
    return found;
}

/* How many bytes at p are the secret or its beginning, when they are 8 or more (the whole secret
 * when it is shorter); else 0. The beginning counts: an answer cut short by a length limit (an
 * excerpt, a column) still carries what it kept of the secret. */
static size_t secret_at(const char *p, const char *secret)
{
    size_t k = 0;
    while (secret[k] && p[k] == secret[k])
        k++;
    size_t len = strlen(secret), min = len < 8 ? len : 8;
    return k > 0 && k >= min ? k : 0;
}

/* The longest secret stretch at p: the token, or an S3 credential handed out in this process
 * (under seen_lock). */
static size_t any_secret_at(const char *p, const char *token)
{
    size_t k = token && *token ? secret_at(p, token) : 0;
    for (size_t i = 0; i < nseen; i++) {
        size_t m = secret_at(p, seen[i]);
        if (m > k)
            k = m;
    }
    return k;
}

/* Whether text holds a secret stretch (any_secret_at) anywhere. */
static int holds_secret(const char *text, const char *token)
{
    int found = 0;
    pthread_mutex_lock(&seen_lock);
    for (const char *p = text; p && *p && !found; p++)
        found = any_secret_at(p, token) > 0;
    pthread_mutex_unlock(&seen_lock);
    return found;
}

/* Each secret stretch of text (any_secret_at) becomes "***", in place (cap: text's size). */
static void redact(char *text, size_t cap, const char *token)
{
    if (!text || !cap)
        return;
    struct rt_buf out = {0};
    pthread_mutex_lock(&seen_lock);
    for (const char *p = text; *p;) {
        size_t k = any_secret_at(p, token);
        if (k) {
            rt_buf_puts(&out, "***");
            p += k;
        } else {
            rt_buf_append(&out, p, 1);
            p++;
        }
    }
    pthread_mutex_unlock(&seen_lock);
    snprintf(text, cap, "%s", out.p ? out.p : "");
    rt_buf_free(&out);
}

void rt_sentinel_redact(const struct rt_sentinel *s, char *text, size_t cap)
{
    redact(text, cap, s ? s->token : NULL);
}

/* --- token and address ----------------------------------------------------------------- */

int rt_sentinel_init(struct rt_sentinel *s, const char *tok, const char *url)
{
    memset(s, 0, sizeof(*s));
    if (!tok || !*tok)
        return -1;
    if (!url || !*url)
        url = SENTINEL_DEFAULT_URL;
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    s->base = xstrndup(url, n);
    s->token = xstrdup(tok);
    return 0;
}

void rt_sentinel_free(struct rt_sentinel *s)
{
    if (!s)
        return;
    wipe_str(s->token);
    free(s->base);
    s->token = s->base = NULL;
}

void rt_sentinel_run_free(struct rt_sentinel_run *r)
{
    if (!r)
        return;
    free(r->run_id);
    free(r->upload_uri_prefix);
    creds_free(&r->creds);
    memset(r, 0, sizeof(*r));
}

/* --- ISO 8601 --------------------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
    y -= m <= 2;
    long long era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (long long)doe - 719468;
}

/* Exactly n decimal digits at *p; advances *p. -1 when they are not there. */
static int digits(const char **p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    return v;
}

double rt_parse_iso8601_utc(const char *s)
{
    if (!s)
        return 0;
    const char *p = s;
    int y = digits(&p, 4);
    if (y < 0 || *p++ != '-')
        return 0;
    int mo = digits(&p, 2);
    if (mo < 1 || mo > 12 || *p++ != '-')
        return 0;
    int d = digits(&p, 2);
    static const int mdays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d < 1 || d > mdays[mo - 1] + (mo == 2 && leap))
        return 0;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return 0;
    p++;
    int h = digits(&p, 2);
    if (h < 0 || h > 23 || *p++ != ':')
        return 0;
    int mi = digits(&p, 2);
    if (mi < 0 || mi > 59 || *p++ != ':')
        return 0;
    int sec = digits(&p, 2);
    if (sec < 0 || sec > 60) /* 60: a leap second, counted as the next one */
        return 0;
    double frac = 0, scale = 0.1;
    if (*p == '.' || *p == ',') {
        p++;
        if (*p < '0' || *p > '9')
            return 0;
        for (; *p >= '0' && *p <= '9'; p++, scale /= 10)
            frac += (*p - '0') * scale;
    }
    long off = 0; /* seconds east of UTC */
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1;
        int oh = digits(&p, 2), om = 0;
        if (oh < 0 || oh > 23)
            return 0;
        if (*p == ':')
            p++;
        if (*p >= '0' && *p <= '9') {
            om = digits(&p, 2);
            if (om < 0 || om > 59)
                return 0;
        }
        off = sign * (oh * 3600L + om * 60L);
    }
    /* no zone at all: read as UTC, which is what the API means */
    if (*p)
        return 0;
    long long days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    return (double)(days * 86400 + h * 3600 + mi * 60 + sec - off) + frac;
}

/* --- HTTP ------------------------------------------------------------------------------- */

/* The base URL for messages: without any user:password@ it may carry. */
static void display_base(const char *base, char *out, size_t cap)
{
    const char *auth = strstr(base, "://");
    auth = auth ? auth + 3 : base;
    size_t alen = strcspn(auth, "/?#");
    const char *at = NULL;
    for (const char *q = auth; q < auth + alen; q++)
        if (*q == '@')
            at = q;
    if (at)
        snprintf(out, cap, "%.*s%s", (int)(auth - base), base, at + 1);
    else
        snprintf(out, cap, "%s", base);
}

void rt_sentinel_where(const struct rt_sentinel *s, char *out, size_t cap)
{
    display_base(s && s->base ? s->base : SENTINEL_DEFAULT_URL, out, cap);
    rt_sentinel_redact(s, out, cap);
}

/* 127.0.0.0/8, ::1 or localhost: a connection that never leaves the machine. */
static int loopback_host(const char *host)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (strcasecmp(host, "localhost") == 0)
        return 1;
    if (inet_pton(AF_INET, host, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    return inet_pton(AF_INET6, host, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6);
}

int rt_sentinel_url_check(const char *url, char *err, size_t errlen)
{
    const char *u = url && *url ? url : SENTINEL_DEFAULT_URL;
    char shown[512];
    display_base(u, shown, sizeof(shown));
    if (strncasecmp(u, "https://", 8) == 0)
        return 0;
    if (strncasecmp(u, "http://", 7) != 0) {
        rt_set_err(err, errlen, "cannot use sentinel api '%s': not an http(s):// url", shown);
        return -1;
    }
    /* the host: after any user:password@, before the port; [v6] in brackets */
    const char *auth = u + 7, *h = auth;
    size_t alen = strcspn(auth, "/?#");
    for (const char *q = auth; q < auth + alen; q++)
        if (*q == '@')
            h = q + 1;
    size_t hl = (size_t)(auth + alen - h);
    char host[256] = "";
    if (hl > 0 && *h == '[') {
        const char *e = memchr(h, ']', hl);
        if (e && (size_t)(e - h - 1) < sizeof(host))
            snprintf(host, sizeof(host), "%.*s", (int)(e - h - 1), h + 1);
    } else {
        const char *colon = memchr(h, ':', hl);
        size_t n = colon ? (size_t)(colon - h) : hl;
        if (n < sizeof(host))
            snprintf(host, sizeof(host), "%.*s", (int)n, h);
    }
    if (host[0] && loopback_host(host))
        return 0;
    rt_set_err(err, errlen,
               "cannot use sentinel api '%s': plain http would send the api token unencrypted; "
               "use https:// (plain http only to 127.0.0.0/8, ::1 or localhost)",
               shown);
    return -1;
}

/* Percent-encode one path segment (the run id comes from the server). */
static void encode_segment(struct rt_buf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '.' || *p == '_' || *p == '~') {
            rt_buf_append(b, (const char *)p, 1);
        } else {
            char e[3] = {'%', hex[*p >> 4], hex[*p & 15]};
            rt_buf_append(b, e, 3);
        }
    }
}

/* Append up to SENTINEL_EXCERPT bytes of an error answer as ": excerpt", on one line. Nothing
 * when the answer is empty or contains the token (a server echoing the request back) or S3
 * credentials it handed out. */
static void append_excerpt(char *err, size_t errlen, const struct rt_buf *body, const char *token)
{
    if (!err || !errlen || !body->len)
        return;
    if (token && *token && memmem(body->p, body->len, token, strlen(token)))
        return;
    if (quotes_creds(body))
        return;
    char ex[SENTINEL_EXCERPT + 1];
    size_t n = body->len < SENTINEL_EXCERPT ? body->len : SENTINEL_EXCERPT;
    /* do not cut a UTF-8 sequence in two */
    if (n < body->len)
        while (n > 0 && ((unsigned char)body->p[n] & 0xC0) == 0x80)
            n--;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)body->p[i];
        if (c < 0x20 || c == 0x7f)
            c = ' ';
        if (c == ' ' && (o == 0 || ex[o - 1] == ' '))
            continue; /* one line: runs of blanks and control characters become one space */
        ex[o++] = (char)c;
    }
    while (o > 0 && ex[o - 1] == ' ')
        o--;
    ex[o] = '\0';
    if (!o)
        return;
    size_t have = strlen(err);
    if (have < errlen - 1)
        snprintf(err + have, errlen - have, ": %s", ex);
}

/* POST base+path with body (NULL: an empty body without Content-Type) and one more header line
 * (NULL: none). On a transport failure fills err and returns -1 (*status: what status line came
 * before it broke, if any); otherwise 0 with *status and the answer in out. *sent: the request
 * went out (the server may have acted on it), whatever came back. */
static int sentinel_post(const struct rt_sentinel *s, const char *path, const char *body,
                         const char *header, long *status, struct rt_buf *out, int *sent, char *err,
                         size_t errlen)
{
    *status = 0;
    *sent = 0;
    if (!s || !s->base || !s->token || !*s->token) {
        rt_set_err(err, errlen, "no sentinel api token");
        return -1;
    }
    if (rt_sentinel_url_check(s->base, err, errlen) != 0 || rt_http_init(err, errlen) != 0)
        return -1;
    char where[512];
    display_base(s->base, where, sizeof(where));

    int rc = -1;
    struct rt_buf url = {0}, auth = {0};
    rt_buf_puts(&url, s->base);
    rt_buf_puts(&url, path);
    rt_buf_reserve(&auth, strlen(s->token) + 32); /* one allocation: nothing left behind */
    rt_buf_puts(&auth, "Authorization: Bearer ");
    rt_buf_puts(&auth, s->token);

    /* RTRACK_HTTP_TIMEOUT_S, when a positive number, replaces the 30 s total limit (and caps
     * the connect limit) */
    const struct rt_http_req req = {
        .url = url.p,
        .timeout_ms = SENTINEL_TIMEOUT_MS,
        .connect_timeout_ms = SENTINEL_CONNECT_TIMEOUT_MS,
        .process_limit = 1,
        .max_body = SENTINEL_MAX_BODY,
    };
    /* "Content-Type:" with no value removes curl's x-www-form-urlencoded default; "Expect:"
     * saves a 100-continue round trip for a large inline finish body */
    const char *ctype = body ? "Content-Type: application/json" : "Content-Type:";
    struct rt_http h;
    int ready = rt_http_open(&h, &req) == 0 && rt_http_add_header(&h, auth.p) == 0 &&
                rt_http_add_header(&h, "Accept: application/json") == 0 &&
                rt_http_add_header(&h, ctype) == 0 && rt_http_add_header(&h, "Expect:") == 0 &&
                (!header || rt_http_add_header(&h, header) == 0);
    wipe_buf(&auth);
    if (!ready) {
        rt_set_err(err, errlen, "cannot initialise libcurl");
        goto out;
    }
    /* room for any credentials answer up front: a realloc would leave a copy behind */
    rt_buf_reserve(&h.body, 16384);
    curl_easy_setopt(h.curl, CURLOPT_POST, 1L);
    curl_easy_setopt(h.curl, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(h.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? strlen(body) : 0));

    rt_http_perform(&h);
    *status = h.status;
    *sent = h.request_size > 0 || h.status != 0;
    char why[128];
    if (h.too_large) {
        rt_set_err(err, errlen, "sentinel's answer to POST %s is larger than %ld MiB", path,
                   SENTINEL_MAX_BODY / (1024 * 1024));
    } else if (h.code != CURLE_OK && h.request_size <= 0 && h.status == 0) {
        /* "Reached" means the request went out: a refused or timed-out connect and a failed
         * TLS handshake (certificate included) all leave the request size at 0.
         * curl_easy_strerror() is short and fixed; curl's error buffer would repeat the
         * address and timings. */
        rt_set_err(err, errlen, "cannot reach sentinel api %s: %s", where,
                   rt_curl_reason(h.code, NULL, why, sizeof(why)));
    } else if (h.code == CURLE_OPERATION_TIMEDOUT) {
        rt_set_err(err, errlen, "sentinel api %s did not answer POST %s within %g s", where, path,
                   (double)h.timeout_ms / 1000.0);
    } else if (h.code != CURLE_OK) {
        rt_set_err(err, errlen, "sentinel api %s gave no complete answer to POST %s: %s", where,
                   path, rt_curl_reason(h.code, NULL, why, sizeof(why)));
    } else {
        rc = 0;
        *out = h.body;
        h.body = (struct rt_buf){0};
    }
out:
    rt_http_close(&h); /* zeroes the token's header and the answer */
    rt_buf_free(&url);
    return rc;
}

/* --- reading the answers ------------------------------------------------------------------ */

/* No value to read at a path: nothing there, a JSON null, or no JSON at all. */
static int no_value(enum rt_json_type t)
{
    return t == RT_JSON_ERROR || t == RT_JSON_INVALID || t == RT_JSON_ABSENT || t == RT_JSON_NULL;
}

/* upload_credentials at `at` ("$.upload_credentials") into c and *expires. 0, or -1 with err
 * naming what is missing (never a value). */
static int read_creds(struct rt_json *j, const char *what, struct rt_s3_creds *c, double *expires,
                      char *err, size_t errlen)
{
    static const char *const keys[] = {"access_key", "secret_key", "session_token"};
    char *vals[3] = {NULL, NULL, NULL};
    char path[64];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "$.upload_credentials.%s", keys[i]);
        if (rt_json_get(j, path, &vals[i]) != RT_JSON_TEXT || !vals[i][0]) {
            rt_set_err(err, errlen, "sentinel's answer to %s has no upload_credentials.%s", what,
                       keys[i]);
            for (size_t k = 0; k <= i; k++)
                wipe_str(vals[k]);
            return -1;
        }
    }
    /* `expiration` is what the live API sends; `expires_at` is the older name. Missing means
     * the credentials do not expire; present but unreadable means refresh at once. */
    char *exp = NULL;
    enum rt_json_type t = rt_json_get(j, "$.upload_credentials.expiration", &exp);
    if (no_value(t)) {
        free(exp);
        exp = NULL;
        t = rt_json_get(j, "$.upload_credentials.expires_at", &exp);
    }
    if (no_value(t))
        *expires = SENTINEL_FAR_FUTURE;
    else if (t == RT_JSON_TEXT)
        *expires = rt_parse_iso8601_utc(exp);
    else
        *expires = 0;
    free(exp);
    c->access_key = vals[0];
    c->secret_key = vals[1];
    c->session_token = vals[2];
    remember_creds(c);
    return 0;
}

/* An answer that must be a JSON object: the open document, or NULL with err. */
static struct rt_json *open_object(const struct rt_buf *body, const char *what, char *err,
                                   size_t errlen)
{
    char why[256];
    struct rt_json *j = rt_json_open(body->p, body->len, why, sizeof(why));
    if (!j) {
        rt_set_err(err, errlen, "cannot read sentinel's answer to %s: %s", what, why);
        return NULL;
    }
    enum rt_json_type t = rt_json_get(j, "$", NULL);
    if (t == RT_JSON_ERROR || t == RT_JSON_INVALID)
        rt_set_err(err, errlen, "sentinel's answer to %s is not JSON", what);
    else if (t != RT_JSON_OBJECT)
        rt_set_err(err, errlen, "sentinel's answer to %s is not a JSON object", what);
    else
        return j;
    rt_json_close(j);
    return NULL;
}

/* --- the calls -------------------------------------------------------------------------- */

/* The secrets out of an error message, whatever carried them there: a run id Sentinel made of
 * the token (quoted in the path of the next call), an answer echoing it, cut short by the
 * excerpt's limit. Each stretch that is the token or an S3 credential handed out in this
 * process, or its beginning, 8 bytes or more (the whole secret when it is shorter), becomes
 * "***". */
static int sentinel_failed(const struct rt_sentinel *s, char *err, size_t errlen)
{
    redact(err, errlen, s ? s->token : NULL);
    return -1;
}

int rt_sentinel_start_run(const struct rt_sentinel *s, const char *body, const char *key,
                          struct rt_sentinel_run *r, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    static const char what[] = "POST /runs";
    long status;
    int sent;
    struct rt_buf resp = {0};
    /* a key that could break the header line is not sent: it is an optimisation only */
    char header[192], *hdr = NULL;
    if (key && *key && strlen(key) <= 128 && !strpbrk(key, "\r\n")) {
        snprintf(header, sizeof(header), "Idempotency-Key: %s", key);
        hdr = header;
    }
    if (sentinel_post(s, "/runs", body ? body : "{}", hdr, &status, &resp, &sent, err, errlen) !=
        0) {
        /* went out, and what came back (if anything) does not say no */
        r->in_doubt = sent && (status == 0 || (status >= 200 && status <= 299) || status == 502 ||
                               status == 504);
        return sentinel_failed(s, err, errlen);
    }
    int rc = -1;
    struct rt_json *j = NULL;
    char *run_id = NULL, *prefix = NULL;
    if (status < 200 || status > 299) {
        /* 3xx included: redirects are not followed. No credentials in an error answer. A
         * gateway's 502 or 504 says nothing of what the API behind it did. */
        rt_set_err(err, errlen, "sentinel answered HTTP %ld for %s", status, what);
        append_excerpt(err, errlen, &resp, s->token);
        r->in_doubt = status == 502 || status == 504;
        goto out;
    }
    /* 2xx: the run was registered, whatever follows */
    if (!(j = open_object(&resp, what, err, errlen)))
        goto out;
    enum rt_json_type t = rt_json_get(j, "$.run_id", &run_id);
    if ((t != RT_JSON_TEXT && t != RT_JSON_INTEGER && t != RT_JSON_REAL) || !run_id[0]) {
        rt_set_err(err, errlen, "sentinel's answer to %s has no run_id", what);
        goto out;
    }
    if (rt_json_get(j, "$.upload_uri_prefix", &prefix) != RT_JSON_TEXT || !prefix[0]) {
        rt_set_err(err, errlen, "sentinel's answer to %s has no upload_uri_prefix", what);
        goto out;
    }
    if (read_creds(j, what, &r->creds, &r->expires_at, err, errlen) != 0)
        goto out;
    /* both are stored, printed and put in S3 keys: never with a secret in them */
    if (holds_secret(run_id, s->token) || holds_secret(prefix, s->token)) {
        rt_set_err(err, errlen,
                   "sentinel's answer to %s carries the api token or an s3 credential in its %s; "
                   "not used",
                   what, holds_secret(run_id, s->token) ? "run_id" : "upload_uri_prefix");
        creds_free(&r->creds);
        goto out;
    }
    r->run_id = run_id;
    r->upload_uri_prefix = prefix;
    run_id = prefix = NULL;
    rc = 0;
out:
    if (rc != 0 && status >= 200 && status <= 299)
        r->in_doubt = 1;
    free(run_id);
    free(prefix);
    rt_json_close(j);
    wipe_buf(&resp);
    return rc == 0 ? 0 : sentinel_failed(s, err, errlen);
}

static void run_path(struct rt_buf *p, const char *run_id, const char *tail)
{
    rt_buf_puts(p, "/runs/");
    encode_segment(p, run_id);
    rt_buf_puts(p, tail);
}

int rt_sentinel_refresh(const struct rt_sentinel *s, struct rt_sentinel_run *r, char *err,
                        size_t errlen)
{
    if (!r || !r->run_id || !*r->run_id) {
        rt_set_err(err, errlen, "no sentinel run to refresh credentials for");
        return -1;
    }
    struct rt_buf path = {0}, what = {0}, resp = {0};
    run_path(&path, r->run_id, "/refresh-credentials");
    rt_buf_puts(&what, "POST ");
    rt_buf_puts(&what, path.p);
    int rc = -1;
    long status;
    int sent;
    struct rt_json *j = NULL;
    if (sentinel_post(s, path.p, NULL, NULL, &status, &resp, &sent, err, errlen) != 0)
        goto out;
    if (status < 200 || status > 299) {
        /* never quoted: this endpoint's answers carry credentials */
        rt_set_err(err, errlen, "sentinel answered HTTP %ld for %s", status, what.p);
        goto out;
    }
    if (!(j = open_object(&resp, what.p, err, errlen)))
        goto out;
    struct rt_s3_creds c = {0};
    double exp;
    if (read_creds(j, what.p, &c, &exp, err, errlen) != 0)
        goto out;
    creds_free(&r->creds);
    r->creds = c;
    r->expires_at = exp;
    rc = 0;
out:
    rt_json_close(j);
    wipe_buf(&resp);
    rt_buf_free(&what);
    rt_buf_free(&path);
    return rc == 0 ? 0 : sentinel_failed(s, err, errlen);
}

int rt_sentinel_finish(const struct rt_sentinel *s, const char *run_id, const char *body, char *err,
                       size_t errlen)
{
    if (!run_id || !*run_id || !body) {
        rt_set_err(err, errlen, "no sentinel run to finish");
        return -1;
    }
    struct rt_buf path = {0}, resp = {0};
    run_path(&path, run_id, "/finish");
    long status;
    int rc = -1, sent;
    if (sentinel_post(s, path.p, body, NULL, &status, &resp, &sent, err, errlen) != 0)
        goto out;
    if (status != 200) {
        rt_set_err(err, errlen, "sentinel answered HTTP %ld for POST %s", status, path.p);
        if (status < 200 || status > 299)
            append_excerpt(err, errlen, &resp, s->token);
        goto out;
    }
    rc = 0;
out:
    wipe_buf(&resp);
    rt_buf_free(&path);
    return rc == 0 ? 0 : sentinel_failed(s, err, errlen);
}
