/* http.c - what the HTTP clients share: libcurl's one-time setup and error text. */
#include "rtrack/net/libs.h"
#include "rtrack/net/http.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"

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
