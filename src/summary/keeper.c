/* keeper.c - the Spare Cores Keeper API: the cheapest server that fits a recommendation.
 *
 * One GET with libcurl, the answer's first element picked out with SQLite's JSON functions.
 * Differences from the Python reference (keeper.py), on purpose:
 * - memory_min and gpu_memory_total are sent in GB as Keeper documents them, rounded up so the
 *   server has at least what was asked (the reference rounds memory to the nearest GB and sends
 *   VRAM in MiB);
 * - an offline or failing Keeper is an error with a reason, not a crash. */
#include "rtrack/net/libs.h"
#include "rtrack/summary/keeper.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/net/http.h"
#include "rtrack/version.h"

#define KEEPER_TIMEOUT_MS         3000L
#define KEEPER_CONNECT_TIMEOUT_MS 2000L
#define KEEPER_MAX_BODY           (4L * 1024 * 1024)

struct keeper_body {
    struct rt_buf buf;
    int too_large;
};

static size_t keeper_write(char *data, size_t size, size_t nmemb, void *ud)
{
    struct keeper_body *b = ud;
    size_t n = size * nmemb;
    if (b->buf.len + n > (size_t)KEEPER_MAX_BODY) {
        b->too_large = 1;
        return 0; /* makes curl stop with CURLE_WRITE_ERROR */
    }
    rt_buf_append(&b->buf, data, n);
    return n;
}

/* MiB to GB, rounded up: Keeper's memory filters are in GB and "at least" filters. */
static long long mib_to_gb_ceil(int mib)
{
    return ((long long)mib + 1023) / 1024;
}

/* The host of base_url, for "HOST not reachable" messages. */
static void keeper_host(const char *base_url, char *host, size_t cap)
{
    snprintf(host, cap, "keeper");
    CURLU *u = curl_url();
    if (!u)
        return;
    char *h = NULL;
    if (curl_url_set(u, CURLUPART_URL, base_url, CURLU_GUESS_SCHEME) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK && h && *h)
        snprintf(host, cap, "%s", h);
    curl_free(h);
    curl_url_cleanup(u);
}

/* Append body[0] (a JSON object) to out. 0, or -1 with err. */
static int keeper_first_server(const struct rt_buf *body, struct rt_buf *out, char *err,
                               size_t errlen)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = -1;
    if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
        SQLITE_OK) {
        rt_set_err(err, errlen, "cannot parse keeper's answer: %s",
                   db ? sqlite3_errmsg(db) : "out of memory");
        goto out;
    }
    /* CASE evaluates lazily, so json_type() never sees malformed text (it would raise). */
    static const char sql[] = "SELECT json_valid(?1),"
                              " CASE WHEN json_valid(?1) THEN json_type(?1) END,"
                              " CASE WHEN json_valid(?1) THEN json_type(?1, '$[0]') END,"
                              " CASE WHEN json_valid(?1) THEN json(json_extract(?1, '$[0]')) END";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, body->p ? body->p : "", (int)body->len, SQLITE_STATIC) !=
            SQLITE_OK ||
        sqlite3_step(st) != SQLITE_ROW) {
        rt_set_err(err, errlen, "cannot parse keeper's answer: %s", sqlite3_errmsg(db));
        goto out;
    }
    const char *type = (const char *)sqlite3_column_text(st, 1);
    const char *first_type = (const char *)sqlite3_column_text(st, 2);
    if (!sqlite3_column_int(st, 0)) {
        rt_set_err(err, errlen, "keeper answered something that is not JSON");
    } else if (!type || strcmp(type, "array") != 0) {
        rt_set_err(err, errlen, "keeper answered JSON that is not a list of servers");
    } else if (!first_type) {
        rt_set_err(err, errlen, "no server matches");
    } else if (strcmp(first_type, "object") != 0) {
        rt_set_err(err, errlen, "keeper answered JSON that is not a list of servers");
    } else {
        const char *obj = (const char *)sqlite3_column_text(st, 3);
        rt_buf_append(out, obj, (size_t)sqlite3_column_bytes(st, 3));
        rc = 0;
    }
out:
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc;
}

int rt_keeper_cheapest(const char *base_url, const struct rt_keeper_query *q, struct rt_buf *out,
                       char *err, size_t errlen)
{
    if (!q || !out || q->vcpus < 0 || q->memory_mib < 0 || q->gpus < 0 || q->vram_mib < 0) {
        rt_set_err(err, errlen, "invalid keeper query");
        return -1;
    }
    if (!base_url || !*base_url)
        base_url = RT_KEEPER_URL;
    if (rt_http_init(err, errlen) != 0)
        return -1;

    size_t blen = strlen(base_url);
    while (blen > 0 && base_url[blen - 1] == '/')
        blen--;
    struct rt_buf url = {0};
    rt_buf_append(&url, base_url, blen);
    char tmp[160];
    snprintf(tmp, sizeof(tmp),
             "/servers?vcpus_min=%d&memory_min=%lld&order_by=min_price_ondemand&order_dir=asc"
             "&limit=1",
             q->vcpus, mib_to_gb_ceil(q->memory_mib));
    rt_buf_puts(&url, tmp);
    if (q->gpus > 0) {
        snprintf(tmp, sizeof(tmp), "&gpu_min=%d", q->gpus);
        rt_buf_puts(&url, tmp);
    }
    if (q->vram_mib > 0) {
        snprintf(tmp, sizeof(tmp), "&gpu_memory_total=%lld", mib_to_gb_ceil(q->vram_mib));
        rt_buf_puts(&url, tmp);
    }

    int rc = -1;
    struct keeper_body body = {{0}, 0};
    struct curl_slist *hdr = NULL;
    CURL *c = curl_easy_init();
    if (!c) {
        rt_set_err(err, errlen, "cannot initialise libcurl");
        goto out;
    }
    hdr = curl_slist_append(hdr, "X-Application-ID: rtrack");
    hdr = curl_slist_append(hdr, "Accept: application/json");
    if (!hdr) {
        rt_set_err(err, errlen, "cannot initialise libcurl");
        goto out;
    }
    curl_easy_setopt(c, CURLOPT_URL, url.p);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "rtrack/" RTRACK_VERSION);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    /* A report must not hang on an unreachable Keeper: the whole exchange is bounded. */
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, KEEPER_TIMEOUT_MS);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, KEEPER_CONNECT_TIMEOUT_MS);
    /* No SIGALRM-based resolver timeouts: rtrack has its own signal handling and threads. */
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)KEEPER_MAX_BODY);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keeper_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);

    CURLcode cr = curl_easy_perform(c);
    char why[128];
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (cr == CURLE_OPERATION_TIMEDOUT) {
        curl_off_t connect_us = 0;
        curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us);
        if (connect_us > 0) {
            rt_set_err(err, errlen, "keeper did not answer within %ld s", KEEPER_TIMEOUT_MS / 1000);
        } else {
            char host[256];
            keeper_host(base_url, host, sizeof(host));
            rt_set_err(err, errlen, "%s not reachable: no connection within %ld s", host,
                       KEEPER_CONNECT_TIMEOUT_MS / 1000);
        }
    } else if (body.too_large || cr == CURLE_FILESIZE_EXCEEDED) {
        rt_set_err(err, errlen, "keeper's answer is larger than %ld MiB",
                   KEEPER_MAX_BODY / (1024 * 1024));
    } else if (cr != CURLE_OK && status == 0) {
        /* Nothing came back: DNS, connect or TLS failure. curl_easy_strerror() is short and
         * fixed; the error buffer would repeat the address and timings. */
        char host[256];
        keeper_host(base_url, host, sizeof(host));
        rt_set_err(err, errlen, "%s not reachable: %s", host,
                   rt_curl_reason(cr, NULL, why, sizeof(why)));
    } else if (cr != CURLE_OK) {
        rt_set_err(err, errlen, "keeper answer broke off: %s",
                   rt_curl_reason(cr, NULL, why, sizeof(why)));
    } else if (status < 200 || status > 299) {
        /* 3xx included: redirects are not followed, and their body is not the answer. */
        rt_set_err(err, errlen, "keeper answered HTTP %ld", status);
    } else {
        rc = keeper_first_server(&body.buf, out, err, errlen);
    }

out:
    if (c)
        curl_easy_cleanup(c);
    curl_slist_free_all(hdr);
    rt_buf_free(&body.buf);
    rt_buf_free(&url);
    return rc;
}
