/* sentinel.c - the Spare Cores Sentinel API: start a run, refresh its upload credentials,
 * finish it.
 *
 * One libcurl POST per call, answers read with SQLite's JSON functions (an in-memory
 * connection). The contract is the one resource-tracker-rs validated against the live API:
 * - POST {base}/runs, a flat JSON object (never `pid`), answers run_id, upload_uri_prefix and
 *   upload_credentials{access_key, secret_key, session_token, expiration | expires_at};
 * - POST {base}/runs/{id}/refresh-credentials, an empty body without Content-Type, answers
 *   {"upload_credentials": {...}};
 * - POST {base}/runs/{id}/finish, a JSON body without run_id; HTTP 200 exactly.
 * No call is retried here: the caller decides.
 *
 * Secrets: the token and the credentials never reach an error message. An answer that may
 * carry credentials (any 2xx of /runs, any answer of refresh) is never quoted; other error
 * answers are quoted (200 bytes at most, one line) because FastAPI's 422 says which field was
 * wrong, unless the answer contains the token. Buffers that held secrets are zeroed before
 * they are freed. */
#include "rtrack/net/libs.h"
#include "rtrack/upload/upload.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/net/http.h"
#include "rtrack/version.h"

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

struct sentinel_body {
    struct rt_buf buf;
    int too_large;
};

static size_t sentinel_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sentinel_body *b = ud;
    size_t n = size * nmemb;
    if (b->buf.len + n > (size_t)SENTINEL_MAX_BODY) {
        b->too_large = 1;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    rt_buf_append(&b->buf, data, n);
    return n;
}

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

/* RTRACK_HTTP_TIMEOUT_S, when a positive number, replaces the 30 s total limit (and caps the
 * connect limit); anything else is ignored. */
static long total_timeout_ms(void)
{
    return rt_http_timeout_ms(SENTINEL_TIMEOUT_MS);
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

/* POST base+path with body (NULL: an empty body without Content-Type). On a transport failure
 * fills err and returns -1; otherwise 0 with *status and the answer in out. */
static int sentinel_post(const struct rt_sentinel *s, const char *path, const char *body,
                         long *status, struct rt_buf *out, char *err, size_t errlen)
{
    *status = 0;
    if (!s || !s->base || !s->token || !*s->token) {
        rt_set_err(err, errlen, "no sentinel api token");
        return -1;
    }
    if (rt_http_init(err, errlen) != 0)
        return -1;
    char where[512];
    display_base(s->base, where, sizeof(where));

    int rc = -1;
    struct rt_buf url = {0}, auth = {0};
    struct sentinel_body resp = {{0}, 0};
    struct curl_slist *hdr = NULL, *h;
    rt_buf_puts(&url, s->base);
    rt_buf_puts(&url, path);
    rt_buf_reserve(&auth, strlen(s->token) + 32); /* one allocation: nothing left behind */
    rt_buf_puts(&auth, "Authorization: Bearer ");
    rt_buf_puts(&auth, s->token);
    /* room for any credentials answer up front: a realloc would leave a copy behind */
    rt_buf_reserve(&resp.buf, 16384);

    CURL *c = curl_easy_init();
    if (!c)
        goto nomem;
    if (!(h = curl_slist_append(hdr, auth.p)))
        goto nomem;
    hdr = h;
    if (!(h = curl_slist_append(hdr, "Accept: application/json")))
        goto nomem;
    hdr = h;
    /* "Content-Type:" with no value removes curl's x-www-form-urlencoded default */
    if (!(h = curl_slist_append(hdr, body ? "Content-Type: application/json" : "Content-Type:")))
        goto nomem;
    hdr = h;
    /* no 100-continue round trip for a large inline finish body */
    if (!(h = curl_slist_append(hdr, "Expect:")))
        goto nomem;
    hdr = h;

    long total_ms = total_timeout_ms();
    long connect_ms =
        total_ms < SENTINEL_CONNECT_TIMEOUT_MS ? total_ms : SENTINEL_CONNECT_TIMEOUT_MS;
    curl_easy_setopt(c, CURLOPT_URL, url.p);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "rtrack/" RTRACK_VERSION);
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? strlen(body) : 0));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
    /* No SIGALRM-based resolver timeouts: rtrack has its own signal handling and threads. */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)SENTINEL_MAX_BODY);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sentinel_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &resp);

    CURLcode cr = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    /* "Reached" means the request went out: a refused or timed-out connect and a failed TLS
     * handshake (certificate included) all leave the request size at 0. */
    long sent = 0;
    curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &sent);
    char why[128];
    if (resp.too_large || cr == CURLE_FILESIZE_EXCEEDED) {
        rt_set_err(err, errlen, "sentinel's answer to POST %s is larger than %ld MiB", path,
                   SENTINEL_MAX_BODY / (1024 * 1024));
    } else if (cr != CURLE_OK && sent <= 0 && *status == 0) {
        /* curl_easy_strerror() is short and fixed; curl's error buffer would repeat the
         * address and timings. */
        rt_set_err(err, errlen, "cannot reach sentinel api %s: %s", where,
                   rt_curl_reason(cr, NULL, why, sizeof(why)));
    } else if (cr == CURLE_OPERATION_TIMEDOUT) {
        rt_set_err(err, errlen, "sentinel api %s did not answer POST %s within %g s", where, path,
                   (double)total_ms / 1000.0);
    } else if (cr != CURLE_OK) {
        rt_set_err(err, errlen, "sentinel api %s gave no complete answer to POST %s: %s", where,
                   path, rt_curl_reason(cr, NULL, why, sizeof(why)));
    } else {
        rc = 0;
        *out = resp.buf;
        resp.buf = (struct rt_buf){0};
    }
    goto out;
nomem:
    rt_set_err(err, errlen, "cannot initialise libcurl");
out:
    if (c)
        curl_easy_cleanup(c);
    for (h = hdr; h; h = h->next)
        explicit_bzero(h->data, strlen(h->data));
    curl_slist_free_all(hdr);
    wipe_buf(&auth);
    wipe_buf(&resp.buf);
    rt_buf_free(&url);
    return rc;
}

/* --- reading the answers ------------------------------------------------------------------ */

struct jdoc {
    sqlite3 *db;
    sqlite3_stmt *st;
    const struct rt_buf *body;
};

static int jdoc_open(struct jdoc *j, const struct rt_buf *body)
{
    memset(j, 0, sizeof(*j));
    j->body = body;
    if (sqlite3_open_v2(":memory:", &j->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
        SQLITE_OK)
        return -1;
    /* CASE evaluates lazily, so json_type() never sees malformed text (it would raise). */
    static const char sql[] = "SELECT json_valid(?1),"
                              " CASE WHEN json_valid(?1) THEN json_type(?1, ?2) END,"
                              " CASE WHEN json_valid(?1) THEN json_extract(?1, ?2) END";
    if (sqlite3_prepare_v2(j->db, sql, -1, &j->st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(j->st, 1, body->p ? body->p : "", (int)body->len, SQLITE_STATIC) !=
            SQLITE_OK)
        return -1;
    return 0;
}

static void jdoc_close(struct jdoc *j)
{
    sqlite3_finalize(j->st);
    sqlite3_close(j->db);
    j->st = NULL;
    j->db = NULL;
}

/* The JSON type at path ("null" for a JSON null, "" when absent, NULL on an SQLite error or
 * invalid JSON) and, for scalars, a malloc'd copy of its text value in *text. */
static const char *jget(struct jdoc *j, const char *path, char **text)
{
    static const char *const types[] = {"object", "array", "text",  "integer",
                                        "real",   "true",  "false", "null"};
    if (text)
        *text = NULL;
    sqlite3_reset(j->st);
    if (sqlite3_bind_text(j->st, 2, path, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(j->st) != SQLITE_ROW || !sqlite3_column_int(j->st, 0))
        return NULL;
    const char *t = (const char *)sqlite3_column_text(j->st, 1);
    if (!t)
        return "";
    const char *type = NULL;
    for (size_t i = 0; i < RT_ARRAY_LEN(types); i++)
        if (strcmp(t, types[i]) == 0)
            type = types[i];
    if (!type)
        return NULL;
    if (text && sqlite3_column_type(j->st, 2) != SQLITE_NULL && strcmp(type, "object") != 0 &&
        strcmp(type, "array") != 0) {
        const char *v = (const char *)sqlite3_column_text(j->st, 2);
        *text = xstrndup(v ? v : "", (size_t)sqlite3_column_bytes(j->st, 2));
    }
    return type;
}

/* upload_credentials at `at` ("$.upload_credentials") into c and *expires. 0, or -1 with err
 * naming what is missing (never a value). */
static int read_creds(struct jdoc *j, const char *what, struct rt_s3_creds *c, double *expires,
                      char *err, size_t errlen)
{
    static const char *const keys[] = {"access_key", "secret_key", "session_token"};
    char *vals[3] = {NULL, NULL, NULL};
    char path[64];
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "$.upload_credentials.%s", keys[i]);
        const char *t = jget(j, path, &vals[i]);
        if (!t || strcmp(t, "text") != 0 || !vals[i][0]) {
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
    const char *t = jget(j, "$.upload_credentials.expiration", &exp);
    if (!t || !*t || strcmp(t, "null") == 0) {
        free(exp);
        exp = NULL;
        t = jget(j, "$.upload_credentials.expires_at", &exp);
    }
    if (!t || !*t || strcmp(t, "null") == 0)
        *expires = SENTINEL_FAR_FUTURE;
    else if (strcmp(t, "text") == 0)
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

/* An answer that must be a JSON object. 0, or -1 with err. */
static int open_object(struct jdoc *j, const struct rt_buf *body, const char *what, char *err,
                       size_t errlen)
{
    if (jdoc_open(j, body) != 0) {
        rt_set_err(err, errlen, "cannot read sentinel's answer to %s: %s", what,
                   j->db ? sqlite3_errmsg(j->db) : "out of memory");
        return -1;
    }
    const char *t = jget(j, "$", NULL);
    if (!t) {
        rt_set_err(err, errlen, "sentinel's answer to %s is not JSON", what);
        return -1;
    }
    if (strcmp(t, "object") != 0) {
        rt_set_err(err, errlen, "sentinel's answer to %s is not a JSON object", what);
        return -1;
    }
    return 0;
}

/* --- the calls -------------------------------------------------------------------------- */

int rt_sentinel_start_run(const struct rt_sentinel *s, const char *body, struct rt_sentinel_run *r,
                          char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    static const char what[] = "POST /runs";
    long status;
    struct rt_buf resp = {0};
    if (sentinel_post(s, "/runs", body ? body : "{}", &status, &resp, err, errlen) != 0)
        return -1;
    int rc = -1;
    struct jdoc j = {0};
    if (status < 200 || status > 299) {
        /* 3xx included: redirects are not followed. No credentials in an error answer. */
        rt_set_err(err, errlen, "sentinel answered HTTP %ld for %s", status, what);
        append_excerpt(err, errlen, &resp, s->token);
        goto out;
    }
    if (open_object(&j, &resp, what, err, errlen) != 0)
        goto out;
    char *run_id = NULL, *prefix = NULL;
    const char *t = jget(&j, "$.run_id", &run_id);
    if (!t || (strcmp(t, "text") != 0 && strcmp(t, "integer") != 0 && strcmp(t, "real") != 0) ||
        !run_id[0]) {
        rt_set_err(err, errlen, "sentinel's answer to %s has no run_id", what);
        free(run_id);
        goto out;
    }
    t = jget(&j, "$.upload_uri_prefix", &prefix);
    if (!t || strcmp(t, "text") != 0 || !prefix[0]) {
        rt_set_err(err, errlen, "sentinel's answer to %s has no upload_uri_prefix", what);
        free(run_id);
        free(prefix);
        goto out;
    }
    if (read_creds(&j, what, &r->creds, &r->expires_at, err, errlen) != 0) {
        free(run_id);
        free(prefix);
        goto out;
    }
    r->run_id = run_id;
    r->upload_uri_prefix = prefix;
    rc = 0;
out:
    jdoc_close(&j);
    wipe_buf(&resp);
    return rc;
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
    struct jdoc j = {0};
    if (sentinel_post(s, path.p, NULL, &status, &resp, err, errlen) != 0)
        goto out;
    if (status < 200 || status > 299) {
        /* never quoted: this endpoint's answers carry credentials */
        rt_set_err(err, errlen, "sentinel answered HTTP %ld for %s", status, what.p);
        goto out;
    }
    if (open_object(&j, &resp, what.p, err, errlen) != 0)
        goto out;
    struct rt_s3_creds c = {0};
    double exp;
    if (read_creds(&j, what.p, &c, &exp, err, errlen) != 0)
        goto out;
    creds_free(&r->creds);
    r->creds = c;
    r->expires_at = exp;
    rc = 0;
out:
    jdoc_close(&j);
    wipe_buf(&resp);
    rt_buf_free(&what);
    rt_buf_free(&path);
    return rc;
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
    int rc = -1;
    if (sentinel_post(s, path.p, body, &status, &resp, err, errlen) != 0)
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
    return rc;
}
