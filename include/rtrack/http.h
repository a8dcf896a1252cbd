/* http.h - what the HTTP clients (keeper.c, upload/s3.c, upload/sentinel.c) share. */
#ifndef RTRACK_HTTP_H
#define RTRACK_HTTP_H

#include <stddef.h>

/* curl_global_init, once per process, from any thread. 0, or -1 with the reason in err. */
int rt_http_init(char *err, size_t errlen);

/* snprintf into err (which may be NULL), for the clients' one-line error messages. */
void rt_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
