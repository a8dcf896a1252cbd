/* keeper.c - the Spare Cores Keeper API: the cheapest server that fits a recommendation.
 *
 * One GET (net/http.h), the answer's first element picked out with base/json.h.
 * Differences from the Python reference (keeper.py), on purpose:
 * - memory_min and gpu_memory_total are sent in GB as Keeper documents them, rounded up so the
 *   server has at least what was asked (the reference rounds memory to the nearest GB and sends
 *   VRAM in MiB);
 * - an offline or failing Keeper is an error with a reason, not a crash. */
#include "rtrack/net/libs.h"
#include "rtrack/summary/keeper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/json.h"
#include "rtrack/net/http.h"

#define KEEPER_TIMEOUT_MS         3000L
#define KEEPER_CONNECT_TIMEOUT_MS 2000L
#define KEEPER_MAX_BODY           (4L * 1024 * 1024)

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
    char why[256];
    struct rt_json *j = rt_json_open(body->p, body->len, why, sizeof(why));
    if (!j) {
        rt_set_err(err, errlen, "cannot parse keeper's answer: %s", why);
        return -1;
    }
    int rc = -1;
    char *obj = NULL;
    enum rt_json_type type = rt_json_get(j, "$", NULL);
    enum rt_json_type first = type == RT_JSON_ARRAY ? rt_json_get(j, "$[0]", &obj) : RT_JSON_ABSENT;
    if (type == RT_JSON_ERROR || first == RT_JSON_ERROR) {
        rt_set_err(err, errlen, "cannot parse keeper's answer: %s", rt_json_errmsg(j));
    } else if (type == RT_JSON_INVALID) {
        rt_set_err(err, errlen, "keeper answered something that is not JSON");
    } else if (type != RT_JSON_ARRAY) {
        rt_set_err(err, errlen, "keeper answered JSON that is not a list of servers");
    } else if (first == RT_JSON_ABSENT) {
        rt_set_err(err, errlen, "no server matches");
    } else if (first != RT_JSON_OBJECT) {
        rt_set_err(err, errlen, "keeper answered JSON that is not a list of servers");
    } else {
        rt_buf_puts(out, obj);
        rc = 0;
    }
    free(obj);
    rt_json_close(j);
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
    /* A report must not hang on an unreachable Keeper: the whole exchange is bounded. */
    const struct rt_http_req req = {
        .url = url.p,
        .timeout_ms = KEEPER_TIMEOUT_MS,
        .connect_timeout_ms = KEEPER_CONNECT_TIMEOUT_MS,
        .max_body = KEEPER_MAX_BODY,
    };
    struct rt_http h;
    if (rt_http_open(&h, &req) != 0 || rt_http_add_header(&h, "X-Application-ID: rtrack") != 0 ||
        rt_http_add_header(&h, "Accept: application/json") != 0) {
        rt_set_err(err, errlen, "cannot initialise libcurl");
        goto out;
    }
    curl_easy_setopt(h.curl, CURLOPT_HTTPGET, 1L);

    rt_http_perform(&h);
    char why[128];
    if (h.code == CURLE_OPERATION_TIMEDOUT) {
        if (h.connect_us > 0) {
            rt_set_err(err, errlen, "keeper did not answer within %ld s", KEEPER_TIMEOUT_MS / 1000);
        } else {
            char host[256];
            keeper_host(base_url, host, sizeof(host));
            rt_set_err(err, errlen, "%s not reachable: no connection within %ld s", host,
                       KEEPER_CONNECT_TIMEOUT_MS / 1000);
        }
    } else if (h.too_large) {
        rt_set_err(err, errlen, "keeper's answer is larger than %ld MiB",
                   KEEPER_MAX_BODY / (1024 * 1024));
    } else if (h.code != CURLE_OK && h.status == 0) {
        /* Nothing came back: DNS, connect or TLS failure. curl_easy_strerror() is short and
         * fixed; the error buffer would repeat the address and timings. */
        char host[256];
        keeper_host(base_url, host, sizeof(host));
        rt_set_err(err, errlen, "%s not reachable: %s", host,
                   rt_curl_reason(h.code, NULL, why, sizeof(why)));
    } else if (h.code != CURLE_OK) {
        rt_set_err(err, errlen, "keeper answer broke off: %s",
                   rt_curl_reason(h.code, NULL, why, sizeof(why)));
    } else if (h.status < 200 || h.status > 299) {
        /* 3xx included: redirects are not followed, and their body is not the answer. */
        rt_set_err(err, errlen, "keeper answered HTTP %ld", h.status);
    } else {
        rc = keeper_first_server(&h.body, out, err, errlen);
    }

out:
    rt_http_close(&h);
    rt_buf_free(&url);
    return rc;
}
