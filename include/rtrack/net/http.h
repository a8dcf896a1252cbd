/* http.h - what the HTTP clients (keeper.c, upload/s3.c, upload/sentinel.c) share. */
#ifndef RTRACK_HTTP_H
#define RTRACK_HTTP_H

#include <stddef.h>

/* curl_global_init, once per process, from any thread. 0, or -1 with the reason in err. */
int rt_http_init(char *err, size_t errlen);

/* The total time limit of one request: the one set for the process (the CLI sets it from
 * RTRACK_HTTP_TIMEOUT_S; the tests set it low to bound hung servers quickly), else dflt_ms.
 * Set it before any request is made (it is read without a lock). */
void rt_http_set_timeout_ms(long ms); /* 0: the clients' defaults */
long rt_http_timeout_ms(long dflt_ms);

/* curl's reason for a failed transfer in rtrack's lowercase style, in buf: `detail` (curl's
 * error buffer, trailing newline dropped) when it holds something, else curl_easy_strerror(code).
 * A first word that is a capitalised plain word is lowercased ("Couldn't resolve host name" ->
 * "couldn't resolve host name"); "SSL ...", "OpenSSL/3.0: ..." stay as they are. */
const char *rt_curl_reason(int code, const char *detail, char *buf, size_t cap);

/* snprintf into err (which may be NULL), for the clients' one-line error messages. */
void rt_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
