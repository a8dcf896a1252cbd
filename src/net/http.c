/* http.c - what the HTTP clients share: libcurl's one-time setup, one exchange set up the same
 * way for all of them (the options every client set on its own before, one body collector, one
 * response header reader), and rtrack's wording of curl's errors. */
#include "rtrack/net/libs.h"
#include "rtrack/net/http.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rtrack/base/util.h"
#include "rtrack/version.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static CURLcode init_rc = CURLE_FAILED_INIT;

static void init(void)
{
    init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int rt_http_init(char *err, size_t errlen)
{
    pthread_once(&once, init);
    if (init_rc == CURLE_OK)
        return 0;
    char why[128];
    rt_set_err(err, errlen, "cannot initialise libcurl: %s",
               rt_curl_reason(init_rc, NULL, why, sizeof(why)));
    return -1;
}

static long timeout_ms; /* 0: each client's own default */

void rt_http_set_timeout_ms(long ms)
{
    timeout_ms = ms > 0 ? ms : 0;
}

long rt_http_timeout_ms(long dflt_ms)
{
    return timeout_ms > 0 ? timeout_ms : dflt_ms;
}

/* --- one exchange -------------------------------------------------------------------------- */

/* The answer's body, up to the cap: returning less than n makes curl stop with
 * CURLE_WRITE_ERROR. */
static size_t http_body(char *data, size_t size, size_t nmemb, void *ud)
{
    struct rt_http *h = ud;
    size_t n = size * nmemb;
    size_t room = h->body.len < h->req.max_body ? h->req.max_body - h->body.len : 0;
    if (n > room && !h->req.keep_reading) {
        h->too_large = 1;
        return 0;
    }
    if (room > 0)
        rt_buf_append(&h->body, data, n < room ? n : room);
    return n;
}

/* One header line ("Name: value\r\n") of any answer; req.header's value goes to on_header. */
static size_t http_header(char *data, size_t size, size_t nmemb, void *ud)
{
    struct rt_http *h = ud;
    size_t n = size * nmemb;
    size_t nl = strlen(h->req.header);
    if (n > nl + 1 && strncasecmp(data, h->req.header, nl) == 0 && data[nl] == ':') {
        const char *v = data + nl + 1, *e = data + n;
        while (v < e && (*v == ' ' || *v == '\t'))
            v++;
        while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
            e--;
        h->req.on_header(v, (size_t)(e - v), h->req.header_ud);
    }
    return n;
}

int rt_http_open(struct rt_http *h, const struct rt_http_req *req)
{
    memset(h, 0, sizeof(*h));
    h->req = *req;
    h->timeout_ms = req->timeout_ms;
    h->connect_timeout_ms = req->connect_timeout_ms;
    if (req->process_limit) {
        h->timeout_ms = rt_http_timeout_ms(req->timeout_ms);
        if (h->connect_timeout_ms > h->timeout_ms)
            h->connect_timeout_ms = h->timeout_ms;
    }
    CURL *c = h->curl = curl_easy_init();
    if (!c)
        return -1;
    curl_easy_setopt(c, CURLOPT_URL, req->url);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "rtrack/" RTRACK_VERSION);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, h->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, h->connect_timeout_ms);
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
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, h);
    if (!req->keep_reading)
        curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)req->max_body);
    if (req->header && req->on_header) {
        curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_header);
        curl_easy_setopt(c, CURLOPT_HEADERDATA, h);
    }
    return 0;
}

int rt_http_add_header(struct rt_http *h, const char *line)
{
    struct curl_slist *l = curl_slist_append(h->headers, line);
    if (!l)
        return -1;
    h->headers = l;
    return 0;
}

CURLcode rt_http_perform(struct rt_http *h)
{
    if (h->headers)
        curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, h->headers);
    h->code = curl_easy_perform(h->curl);
    curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, &h->status);
    curl_easy_getinfo(h->curl, CURLINFO_CONNECT_TIME_T, &h->connect_us);
    curl_easy_getinfo(h->curl, CURLINFO_REQUEST_SIZE, &h->request_size);
    if (h->code == CURLE_FILESIZE_EXCEEDED) /* announced larger than the cap */
        h->too_large = 1;
    return h->code;
}

void rt_http_close(struct rt_http *h)
{
    if (h->curl)
        curl_easy_cleanup(h->curl);
    for (struct curl_slist *l = h->headers; l; l = l->next)
        explicit_bzero(l->data, strlen(l->data));
    curl_slist_free_all(h->headers);
    if (h->body.p)
        explicit_bzero(h->body.p, h->body.cap ? h->body.cap : h->body.len);
    rt_buf_free(&h->body);
    h->curl = NULL;
    h->headers = NULL;
}

/* --- rtrack's words ------------------------------------------------------------------------ */

const char *rt_curl_reason(int code, const char *detail, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", detail && *detail ? detail : curl_easy_strerror((CURLcode)code));
    size_t n = strlen(buf);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    size_t w = 1;
    while (buf[0] && buf[w] >= 'a' && buf[w] <= 'z')
        w++;
    if (buf[0] >= 'A' && buf[0] <= 'Z' && (buf[w] == ' ' || buf[w] == '\'' || buf[w] == '\0'))
        buf[0] = (char)(buf[0] - 'A' + 'a');
    return buf;
}

void rt_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
