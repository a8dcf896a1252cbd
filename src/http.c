/* http.c - what the HTTP clients share: libcurl's one-time setup and error text. */
#include "rtrack/curl.h"
#include "rtrack/http.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "rtrack/util.h"

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
    rt_set_err(err, errlen, "cannot initialise libcurl: %s", curl_easy_strerror(init_rc));
    return -1;
}

long rt_http_timeout_ms(long dflt_ms)
{
    const char *e = getenv("RTRACK_HTTP_TIMEOUT_S");
    double v;
    if (e && *e && rt_parse_double(e, &v) == 0 && isfinite(v) && v > 0) {
        if (v > 86400)
            v = 86400;
        long ms = (long)(v * 1000.0);
        return ms > 0 ? ms : 1;
    }
    return dflt_ms;
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
