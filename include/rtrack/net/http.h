/* http.h - what the HTTP clients (summary/keeper.c, upload/sentinel.c, upload/s3.c,
 * upload/cloud.c) share: libcurl's one-time setup, one exchange set up and run the same way for
 * all of them, and rtrack's wording of curl's errors. */
#ifndef RTRACK_HTTP_H
#define RTRACK_HTTP_H

#include <stddef.h>

#include "rtrack/base/util.h"
#include "rtrack/net/libs.h"

/* curl_global_init, once per process, from any thread. 0, or -1 with the reason in err. */
int rt_http_init(char *err, size_t errlen);

/* The total time limit of one request: the one set for the process (the CLI sets it from
 * RTRACK_HTTP_TIMEOUT_S; the tests set it low to bound hung servers quickly), else dflt_ms.
 * Set it before any request is made (it is read without a lock). */
void rt_http_set_timeout_ms(long ms); /* 0: the clients' defaults */
long rt_http_timeout_ms(long dflt_ms);

/* --- one exchange ------------------------------------------------------------------------------
 *
 *   struct rt_http h;
 *   if (rt_http_open(&h, &(struct rt_http_req){.url = ..., .timeout_ms = ...}) != 0 ||
 *       rt_http_add_header(&h, "Accept: application/json") != 0)
 *       ... "cannot initialise libcurl"
 *   curl_easy_setopt(h.curl, ...);    the client's own options: POST, SigV4, NOPROXY, ...
 *   rt_http_perform(&h);              then h.code, h.status, h.body, ...
 *   rt_http_close(&h);
 *
 * Every exchange has rtrack's user agent, its time limits, no signals (rtrack has its own signal
 * handling and threads), no redirects followed (a redirect would carry a token or a signed
 * request elsewhere, and its body is not the answer), http and https only, TLS peers verified,
 * and the answer's body collected into h.body up to a cap. */

/* What one exchange asks for. Zero is "not used" for every field but url. */
struct rt_http_req {
    const char *url;
    long timeout_ms;         /* the whole exchange */
    long connect_timeout_ms; /* the connection */
    /* rt_http_set_timeout_ms()'s limit, when set, replaces timeout_ms and caps the connect limit
     * (a trickling endpoint is bounded by it too) */
    int process_limit;
    size_t max_body; /* the answer's body is kept up to this many bytes */
    /* Beyond max_body: 0 stops the transfer (h.too_large; curl's CURLOPT_MAXFILESIZE stops an
     * announced one before it starts); 1 drops the rest and lets the transfer go on, for an
     * answer whose body is only looked into (S3's error code). */
    int keep_reading;
    /* A response header (its name, any case, without the ':'), handed to on_header for every
     * answer that has it, the value without the blanks around it. */
    const char *header;
    void (*on_header)(const char *value, size_t len, void *ud);
    void *header_ud;
};

struct rt_http {
    CURL *curl; /* for the client's own curl_easy_setopt() calls */
    struct rt_http_req req;
    struct curl_slist *headers; /* rt_http_add_header()'s */
    long timeout_ms;            /* the limits in effect (for messages) */
    long connect_timeout_ms;
    char errbuf[CURL_ERROR_SIZE]; /* curl's detail of a failure (rt_curl_reason) */
    /* the outcome, from rt_http_perform() */
    CURLcode code;
    long status;           /* the HTTP status; 0: no answer */
    curl_off_t connect_us; /* 0: no connection was made */
    long request_size;     /* 0: the request never went out */
    int too_large;         /* the body was larger than req.max_body (not with keep_reading) */
    struct rt_buf body;    /* the answer's body; the client may take it over */
};

/* A handle with the common options for req (copied; the strings in it must outlive the
 * exchange). h must stay where it is until rt_http_close(): curl's callbacks write into it.
 * 0, or -1 when libcurl cannot give a handle (h can still be closed). */
int rt_http_open(struct rt_http *h, const struct rt_http_req *req);
/* One "Name: value" request header (curl copies it). 0, or -1 when curl cannot. */
int rt_http_add_header(struct rt_http *h, const char *line);
/* Run the exchange and fill in its outcome (also returned as h->code). */
CURLcode rt_http_perform(struct rt_http *h);
/* Free the handle, the headers and the body; headers and body are zeroed first (tokens,
 * credentials). */
void rt_http_close(struct rt_http *h);

/* curl's reason for a failed transfer in rtrack's lowercase style, in buf: `detail` (curl's
 * error buffer, trailing newline dropped) when it holds something, else curl_easy_strerror(code).
 * A first word that is a capitalised plain word is lowercased ("Couldn't resolve host name" ->
 * "couldn't resolve host name"); "SSL ...", "OpenSSL/3.0: ..." stay as they are. */
const char *rt_curl_reason(int code, const char *detail, char *buf, size_t cap);

/* snprintf into err (which may be NULL), for the clients' one-line error messages. */
void rt_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
