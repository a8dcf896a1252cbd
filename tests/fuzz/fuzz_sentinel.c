/* fuzz_sentinel.c - the Sentinel API client's reading of answers (src/upload/sentinel.c): the
 * real calls, over HTTP, against a server thread in this process that answers with the input.
 * Covers the JSON fields of POST /runs (run_id, upload_uri_prefix, upload_credentials and its
 * expiration in ISO 8601), refresh-credentials and finish, the quoted excerpt of an error
 * answer, and a run id from the server as a URL path segment. Also rt_parse_iso8601_utc on the
 * body itself.
 *
 * Checked, beyond crashes: the API token never appears in an error message; a secret key never
 * does either when it came in an answer that may carry credentials (any 2xx of /runs, any answer
 * of refresh-credentials); an error answer to finish that quotes credentials handed out before
 * is not quoted; a successful start gives a non-empty id, prefix and credentials.
 *
 * Input: byte 0 picks the call (0 start a run, then refresh and finish it with the id the
 * answer gave; 1 refresh; 2 finish), byte 1 the HTTP status (from a table), the rest is the
 * answer's body. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "rtrack/net/http.h"
#include "rtrack/upload/upload.h"

#define TOKEN  "tok-fz-Bearer-91c2e7"
#define SECRET "SECRET-fz-7b1e"

static const int statuses[] = {200, 201, 202, 299, 301, 400, 401,
                               403, 404, 409, 422, 429, 500, 503};

static int lfd = -1;
static struct rt_sentinel api;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int answer_status;
static const uint8_t *answer_body;
static size_t answer_len;

static int send_all(int fd, const void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = send(fd, (const char *)p + off, n - off, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* Read one request (headers, then Content-Length bytes of body) and answer it. */
static void serve(int fd)
{
    char req[65536];
    size_t have = 0;
    char *hend = NULL;
    while (!hend && have < sizeof(req) - 1) {
        ssize_t r = recv(fd, req + have, sizeof(req) - 1 - have, 0);
        if (r <= 0)
            return;
        have += (size_t)r;
        req[have] = '\0';
        hend = strstr(req, "\r\n\r\n");
    }
    if (!hend)
        return;
    size_t clen = 0;
    for (char *l = req; l && l < hend; l = strstr(l, "\r\n"), l = l ? l + 2 : NULL)
        if (!strncasecmp(l, "Content-Length:", 15))
            clen = strtoul(l + 15, NULL, 10);
    size_t got = have - (size_t)(hend + 4 - req);
    while (got < clen) {
        ssize_t r = recv(fd, req, sizeof(req), 0);
        if (r <= 0)
            return;
        got += (size_t)r;
    }
    /* the answer is copied: the input it comes from is freed once the call returns, which can
     * be before send() has returned here */
    struct rt_buf out = {0};
    pthread_mutex_lock(&mu);
    char head[256];
    int hn = snprintf(head, sizeof(head),
                      "HTTP/1.1 %d Fuzz\r\nContent-Type: application/json\r\nContent-Length: "
                      "%zu\r\nConnection: close\r\n\r\n",
                      answer_status, answer_len);
    rt_buf_append(&out, head, (size_t)hn);
    if (answer_body)
        rt_buf_append(&out, (const char *)answer_body, answer_len);
    pthread_mutex_unlock(&mu);
    send_all(fd, out.p, out.len);
    rt_buf_free(&out);
}

static void *server(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        serve(fd);
        close(fd);
    }
    return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    setenv("NO_PROXY", "*", 1);
    setenv("no_proxy", "*", 1);
    rt_http_set_timeout_ms(10000);
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof(a);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 16) != 0 ||
        getsockname(lfd, (struct sockaddr *)&a, &alen) != 0) {
        perror("fuzz_sentinel: listen");
        abort();
    }
    char base[64];
    snprintf(base, sizeof(base), "http://127.0.0.1:%d", ntohs(a.sin_port));
    api.base = xstrdup(base);
    api.token = xstrdup(TOKEN);
    pthread_t t;
    if (pthread_create(&t, NULL, server, NULL) != 0)
        abort();
    pthread_detach(t);
    return 0;
}

static void check_err(const char *err, int may_carry_creds)
{
    if (strstr(err, TOKEN)) {
        printf("fuzz_sentinel: the token reached an error message: %s\n", err);
        abort();
    }
    if (may_carry_creds && strstr(err, SECRET)) {
        printf("fuzz_sentinel: a secret from a credentials answer reached an error: %s\n", err);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int call = data[0] % 3;
    int status = statuses[data[1] % (sizeof(statuses) / sizeof(statuses[0]))];
    pthread_mutex_lock(&mu);
    answer_status = status;
    answer_body = data + 2;
    answer_len = size - 2;
    pthread_mutex_unlock(&mu);

    char *text = fz_strndup(data + 2, size - 2);
    rt_parse_iso8601_utc(text);
    free(text);

    char err[512] = "";
    int ok2xx = status >= 200 && status <= 299;
    struct rt_sentinel_run r = {0};
    if (call == 0) {
        if (rt_sentinel_start_run(&api, "{\"job_name\":\"fuzz\"}", NULL, &r, err, sizeof(err)) ==
            0) {
            if (!r.run_id || !*r.run_id || !r.upload_uri_prefix || !*r.upload_uri_prefix ||
                !r.creds.access_key || !*r.creds.access_key || !r.creds.secret_key ||
                !*r.creds.secret_key || !r.creds.session_token || !*r.creds.session_token) {
                printf("fuzz_sentinel: a started run without id, prefix or credentials\n");
                abort();
            }
            err[0] = '\0';
            rt_sentinel_refresh(&api, &r, err, sizeof(err));
            check_err(err, 1);
            err[0] = '\0';
            rt_sentinel_finish(&api, r.run_id, "{\"exit_code\":0}", err, sizeof(err));
            check_err(err, 0);
            /* an error answer quoting credentials the API handed out is not quoted either */
            const char *cred[] = {r.creds.access_key, r.creds.secret_key, r.creds.session_token};
            for (size_t i = 0; i < 3; i++)
                if (memmem(data + 2, size - 2, cred[i], strlen(cred[i])) &&
                    strstr(err, "/finish: ")) {
                    printf("fuzz_sentinel: an answer quoting issued credentials was quoted: %s\n",
                           err);
                    abort();
                }
        } else {
            check_err(err, ok2xx);
        }
    } else if (call == 1) {
        r.run_id = xstrdup("run-1");
        rt_sentinel_refresh(&api, &r, err, sizeof(err));
        check_err(err, 1);
    } else {
        rt_sentinel_finish(&api, "run-1", "{\"exit_code\":0}", err, sizeof(err));
        check_err(err, 0);
    }
    rt_sentinel_run_free(&r);
    pthread_mutex_lock(&mu);
    answer_body = NULL; /* the input is not ours after this */
    answer_len = 0;
    pthread_mutex_unlock(&mu);
    return 0;
}
