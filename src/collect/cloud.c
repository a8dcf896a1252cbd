/* cloud.c - cloud discovery from the vendors' instance metadata services, for Sentinel's
 * cloud_vendor_id, cloud_account_id, cloud_region_id, cloud_zone_id and cloud_instance_type.
 *
 * One probe per vendor, each on its own thread (on the caller when the thread cannot be
 * created: under a tight pids.max the Rust reference crashed there). The results are taken in
 * the references' precedence order AWS, GCP, Azure, Hetzner, UpCloud, Vultr, AliCloud, OVH: the
 * first vendor found wins, and discovery returns as soon as every vendor before it has said
 * no. Every request has a 1 s connect and a 1 s total timeout, both cut to what is left of the
 * caller's budget, so a probe still running at the deadline ends right after it; the caller
 * does not wait for it (the shared state is reference-counted, the last one out frees it).
 *
 * Answers are checked before a vendor is claimed, because several clouds serve look-alike
 * metadata on 169.254.169.254:
 * - AWS: services/domain must be amazonaws.com (or amazonaws.com.cn): EC2-compatible metadata
 *   of other clouds was misdetected as AWS (the references' pitfall 14);
 * - GCP: both requests must answer with the Metadata-Flavor: Google response header;
 * - Azure: a JSON object with compute.vmSize or compute.location;
 * - Hetzner: an instance-id line; UpCloud: cloud_name == "upcloud"; Vultr: instanceid or
 *   instance-v2-id; AliCloud: a region-id; OVH: a dns service at 213.186.33.99.
 * Values are kept only when they look like identifiers (printable ASCII without blanks, at most
 * 128 bytes, not "unknown"): a catch-all HTML page never becomes an instance type.
 *
 * JSON is read with base/json.h (SQLite's JSON functions); Hetzner's YAML-like `key: value`
 * lines are read line by line. */
#include "rtrack/net/libs.h"
#include "rtrack/collect/cloud.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "rtrack/base/json.h"
#include "rtrack/base/util.h"
#include "rtrack/net/http.h"

#define CLOUD_REQ_TIMEOUT_MS 1000L
#define CLOUD_MAX_BODY       (256L * 1024)
#define CLOUD_MAX_VALUE      128
#define CLOUD_MAX_TOKEN      1024

enum vendor {
    V_AWS = RT_CLOUD_AWS,
    V_GCP = RT_CLOUD_GCP,
    V_AZURE = RT_CLOUD_AZURE,
    V_HETZNER = RT_CLOUD_HETZNER,
    V_UPCLOUD = RT_CLOUD_UPCLOUD,
    V_VULTR = RT_CLOUD_VULTR,
    V_ALICLOUD = RT_CLOUD_ALICLOUD,
    V_OVH = RT_CLOUD_OVH,
    V_N = RT_CLOUD_NVENDORS
};

#define IMDS_LINK_LOCAL "http://169.254.169.254"

/* In precedence order. */
static const struct {
    const char *id;  /* cloud_vendor_id: Spare Cores' vendor id */
    const char *def; /* default base URL */
} vendors[V_N] = {
    [V_AWS] = {"aws", IMDS_LINK_LOCAL},
    [V_GCP] = {"gcp", "http://metadata.google.internal"},
    [V_AZURE] = {"azure", IMDS_LINK_LOCAL},
    [V_HETZNER] = {"hcloud", IMDS_LINK_LOCAL},
    [V_UPCLOUD] = {"upcloud", IMDS_LINK_LOCAL},
    [V_VULTR] = {"vultr", IMDS_LINK_LOCAL},
    [V_ALICLOUD] = {"alicloud", "http://100.100.100.200"},
    [V_OVH] = {"ovh", IMDS_LINK_LOCAL},
};

/* One vendor's probe: written only by the probe until it is done. */
struct probe {
    char *base;      /* without a trailing slash */
    double deadline; /* CLOCK_MONOTONIC seconds */
    struct rt_cloud res;
};

static double now_s(void)
{
    return rt_clock_s(CLOCK_MONOTONIC);
}

/* --- values ------------------------------------------------------------------------------ */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A copy of s[0..n) without surrounding blanks, or NULL when that is empty, "unknown", longer
 * than CLOUD_MAX_VALUE, or holds anything but printable ASCII without blanks. */
static char *clean_n(const char *s, size_t n)
{
    if (!s)
        return NULL;
    while (n > 0 && is_blank(*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    if (n == 0 || n > CLOUD_MAX_VALUE)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        if (s[i] <= ' ' || s[i] > '~')
            return NULL;
    }
    if (n == 7 && strncasecmp(s, "unknown", 7) == 0)
        return NULL;
    return xstrndup(s, n);
}

static char *clean(const char *s)
{
    return s ? clean_n(s, strlen(s)) : NULL;
}

/* The part after the last '/' ("projects/1/zones/europe-west3-c" -> "europe-west3-c"). */
static char *last_segment(const char *s)
{
    if (!s)
        return NULL;
    const char *slash = strrchr(s, '/');
    return clean(slash ? slash + 1 : s);
}

static void set_field(char **field, char *value)
{
    free(*field);
    *field = value;
}

/* --- HTTP -------------------------------------------------------------------------------- */

struct resp {
    long status;    /* 0: no HTTP answer */
    int connected;  /* a TCP connection was made (something listens there) */
    int gcp_flavor; /* the answer carried Metadata-Flavor: Google */
    struct rt_buf body;
};

/* Metadata-Flavor, on every answer: GCP's metadata server sends "Google". */
static void on_flavor(const char *v, size_t vn, void *ud)
{
    struct resp *r = ud;
    while (vn > 0 && is_blank(*v)) {
        v++;
        vn--;
    }
    while (vn > 0 && is_blank(v[vn - 1]))
        vn--;
    if (vn == 6 && strncmp(v, "Google", 6) == 0)
        r->gcp_flavor = 1;
}

static size_t no_upload(char *buf, size_t size, size_t nmemb, void *ud)
{
    (void)buf;
    (void)size;
    (void)nmemb;
    (void)ud;
    return 0;
}

/* One request to p->base + path. method: "GET" or "PUT" (an empty body); hdr: NULL or one
 * "Name: value" request header. 1 for a 2xx answer (its body in r->body), 0 otherwise; r is
 * filled either way and must be freed with rt_buf_free(&r->body). */
static int fetch(const struct probe *p, const char *method, const char *path, const char *hdr,
                 struct resp *r)
{
    rt_buf_free(&r->body);
    memset(r, 0, sizeof(*r));
    double left_ms = (p->deadline - now_s()) * 1000.0;
    if (!(left_ms >= 1.0))
        return 0;
    long ms = left_ms < (double)CLOUD_REQ_TIMEOUT_MS ? (long)left_ms : CLOUD_REQ_TIMEOUT_MS;

    char *url = xasprintf("%s%s", p->base, path);
    const struct rt_http_req req = {
        .url = url,
        .timeout_ms = ms,
        .connect_timeout_ms = ms,
        .max_body = CLOUD_MAX_BODY,
        .header = "Metadata-Flavor",
        .on_header = on_flavor,
        .header_ud = r,
    };
    struct rt_http h;
    int ok = 0;
    if (rt_http_open(&h, &req) != 0)
        goto out;
    if (hdr)
        rt_http_add_header(&h, hdr); /* without it when curl cannot: the answer tells */
    if (strcmp(method, "PUT") == 0) {
        curl_easy_setopt(h.curl, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h.curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)0);
        curl_easy_setopt(h.curl, CURLOPT_READFUNCTION, no_upload);
    } else {
        curl_easy_setopt(h.curl, CURLOPT_HTTPGET, 1L);
    }
    /* Link-local (and GCP's internal) addresses: a proxy from the environment must not get
     * in between, it would answer for a machine that is not this one. */
    curl_easy_setopt(h.curl, CURLOPT_NOPROXY, "*");

    rt_http_perform(&h);
    r->status = h.status;
    r->connected = h.status > 0 || h.connect_us > 0;
    r->body = h.body;
    h.body = (struct rt_buf){0};
    ok = h.code == CURLE_OK && !h.too_large && h.status >= 200 && h.status <= 299;
out:
    rt_http_close(&h);
    free(url);
    return ok;
}

/* GET a plain-text value. */
static char *get_text(const struct probe *p, const char *path, const char *hdr)
{
    struct resp r = {0};
    char *v = fetch(p, "GET", path, hdr, &r) ? clean_n(r.body.p, r.body.len) : NULL;
    rt_buf_free(&r.body);
    return v;
}

/* --- JSON ------------------------------------------------------------------------------- */

/* 1 when b holds a JSON object (then *j is open and must be closed), 0 otherwise. */
static int jdoc_open(struct rt_json **j, const struct rt_buf *b)
{
    *j = NULL;
    if (!b->p || b->len == 0 || b->len > (size_t)CLOUD_MAX_BODY)
        return 0;
    *j = rt_json_open(b->p, b->len, NULL, 0);
    if (*j && rt_json_get(*j, "$", NULL) == RT_JSON_OBJECT)
        return 1;
    rt_json_close(*j);
    *j = NULL;
    return 0;
}

/* The string (or integer) at path, cleaned; NULL when absent or of another type. */
static char *jdoc_str(struct rt_json *j, const char *path)
{
    char *v = NULL;
    enum rt_json_type t = rt_json_get(j, path, &v);
    char *c = t == RT_JSON_TEXT || t == RT_JSON_INTEGER ? clean(v) : NULL;
    free(v);
    return c;
}

/* GET a JSON object and open it; 1 on success (close *j after), 0 otherwise. */
static int get_json(const struct probe *p, const char *path, const char *hdr, struct rt_json **j,
                    struct resp *r)
{
    *j = NULL;
    return fetch(p, "GET", path, hdr, r) && jdoc_open(j, &r->body);
}

/* --- the probes: 1 and p->res filled (vendor_id last) when found, 0 otherwise ---------- */

/* The IMDSv2-style token of AWS and AliCloud: PUT {base}/latest/api/token with the TTL header.
 * *hdr becomes "<token_name>: <token>" (malloc'd) on success. Returns 1 with a token, 0 when
 * something answered without one (try IMDSv1 then), -1 when nothing is there at all. */
static int imds_token(const struct probe *p, const char *ttl_hdr, const char *token_name,
                      char **hdr)
{
    struct resp r = {0};
    *hdr = NULL;
    int rc;
    if (fetch(p, "PUT", "/latest/api/token", ttl_hdr, &r)) {
        rc = 0;
        /* The token goes into a header: reject anything that could break out of it. */
        size_t n = r.body.len;
        const char *t = r.body.p;
        while (n > 0 && is_blank(t[n - 1]))
            n--;
        int ok = n > 0 && n <= CLOUD_MAX_TOKEN;
        for (size_t i = 0; ok && i < n; i++)
            ok = t[i] > ' ' && t[i] <= '~';
        if (ok) {
            *hdr = xasprintf("%s: %.*s", token_name, (int)n, t);
            rc = 1;
        }
    } else {
        /* A token that is lost on the way (IMDSv2's hop limit of 1 seen from a container)
         * still leaves IMDSv1; no connection at all means no metadata service. */
        rc = r.connected ? 0 : -1;
    }
    if (r.body.p)
        explicit_bzero(r.body.p, r.body.len);
    rt_buf_free(&r.body);
    return rc;
}

static void free_token_hdr(char *hdr)
{
    if (hdr) {
        explicit_bzero(hdr, strlen(hdr));
        free(hdr);
    }
}

static int probe_aws(struct probe *p)
{
    char *hdr = NULL;
    if (imds_token(p, "X-aws-ec2-metadata-token-ttl-seconds: 21600", "X-aws-ec2-metadata-token",
                   &hdr) < 0)
        return 0;
    int found = 0;
    char *domain = get_text(p, "/latest/meta-data/services/domain", hdr);
    /* EC2-compatible metadata of other clouds answers the paths below too: only AWS says
     * amazonaws.com (amazonaws.com.cn in the China regions). */
    if (domain &&
        (strcmp(domain, "amazonaws.com") == 0 || strcmp(domain, "amazonaws.com.cn") == 0)) {
        found = 1;
        set_field(&p->res.instance_type, get_text(p, "/latest/meta-data/instance-type", hdr));
        set_field(&p->res.region_id, get_text(p, "/latest/meta-data/placement/region", hdr));
        set_field(&p->res.zone_id,
                  get_text(p, "/latest/meta-data/placement/availability-zone", hdr));
        struct resp r = {0};
        struct rt_json *j;
        if (get_json(p, "/latest/dynamic/instance-identity/document", hdr, &j, &r)) {
            set_field(&p->res.account_id, jdoc_str(j, "$.accountId"));
            rt_json_close(j);
        }
        rt_buf_free(&r.body);
    }
    free(domain);
    free_token_hdr(hdr);
    return found;
}

static int probe_gcp(struct probe *p)
{
    static const char hdr[] = "Metadata-Flavor: Google";
    struct resp r = {0};
    char *mt = NULL, *zone = NULL;
    /* Both answers must carry the Metadata-Flavor: Google response header: the metadata
     * server sends it on every answer, a stray web server would not. */
    if (fetch(p, "GET", "/computeMetadata/v1/instance/machine-type", hdr, &r) && r.gcp_flavor)
        mt = last_segment(r.body.p);
    if (mt && fetch(p, "GET", "/computeMetadata/v1/instance/zone", hdr, &r) && r.gcp_flavor)
        zone = last_segment(r.body.p);
    rt_buf_free(&r.body);
    if (!mt || !zone) {
        free(mt);
        free(zone);
        return 0;
    }
    p->res.instance_type = mt;
    p->res.zone_id = zone;
    /* europe-west3-c -> europe-west3 */
    const char *dash = strrchr(zone, '-');
    if (dash && dash > zone)
        p->res.region_id = xstrndup(zone, (size_t)(dash - zone));
    p->res.account_id = get_text(p, "/computeMetadata/v1/project/numeric-project-id", hdr);
    return 1;
}

static int probe_azure(struct probe *p)
{
    struct resp r = {0};
    struct rt_json *j;
    int found = 0;
    if (get_json(p, "/metadata/instance?api-version=2021-02-01", "Metadata: true", &j, &r)) {
        char *size = jdoc_str(j, "$.compute.vmSize");
        char *loc = jdoc_str(j, "$.compute.location");
        if (size || loc) {
            found = 1;
            p->res.instance_type = size;
            p->res.region_id = loc;
            /* "" when the VM is not pinned to an availability zone: NULL then. */
            p->res.zone_id = jdoc_str(j, "$.compute.zone");
            p->res.account_id = jdoc_str(j, "$.compute.subscriptionId");
        }
        rt_json_close(j);
    }
    rt_buf_free(&r.body);
    return found;
}

/* The value of a top-level `key: value` line of Hetzner's YAML-like metadata (quotes removed),
 * cleaned; NULL when absent. Nested lines are indented and so never match. */
static char *yaml_value(const char *text, const char *key)
{
    size_t kl = strlen(key);
    for (const char *line = text; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        if (n > kl && strncmp(line, key, kl) == 0 && line[kl] == ':') {
            const char *v = line + kl + 1;
            size_t vn = n - kl - 1;
            while (vn > 0 && is_blank(*v)) {
                v++;
                vn--;
            }
            while (vn > 0 && is_blank(v[vn - 1]))
                vn--;
            if (vn >= 2 && (v[0] == '\'' || v[0] == '"') && v[vn - 1] == v[0]) {
                v++;
                vn -= 2;
            }
            return clean_n(v, vn);
        }
        line = eol ? eol + 1 : NULL;
    }
    return NULL;
}

static int probe_hetzner(struct probe *p)
{
    struct resp r = {0};
    int found = 0;
    if (fetch(p, "GET", "/hetzner/v1/metadata", NULL, &r) && r.body.p) {
        char *id = yaml_value(r.body.p, "instance-id");
        if (id) {
            found = 1;
            p->res.region_id = yaml_value(r.body.p, "region");
            p->res.zone_id = yaml_value(r.body.p, "availability-zone");
            /* The metadata has no server type (cx22, cax11, ...): instance_type stays NULL.
             * The references filled it from instance-id, which is the numeric server id. */
        }
        free(id);
    }
    rt_buf_free(&r.body);
    return found;
}

static int probe_upcloud(struct probe *p)
{
    struct resp r = {0};
    struct rt_json *j;
    int found = 0;
    if (get_json(p, "/metadata/v1.json", NULL, &j, &r)) {
        char *name = jdoc_str(j, "$.cloud_name");
        if (name && strcmp(name, "upcloud") == 0) {
            found = 1;
            /* UpCloud's "region" is its zone (fi-hel2, de-fra1): both fields get it. The
             * metadata names no server plan. */
            p->res.region_id = jdoc_str(j, "$.region");
            p->res.zone_id = p->res.region_id ? xstrdup(p->res.region_id) : NULL;
        }
        free(name);
        rt_json_close(j);
    }
    rt_buf_free(&r.body);
    return found;
}

static int probe_vultr(struct probe *p)
{
    struct resp r = {0};
    struct rt_json *j;
    int found = 0;
    if (get_json(p, "/v1.json", NULL, &j, &r)) {
        char *id = jdoc_str(j, "$.instanceid");
        if (!id)
            id = jdoc_str(j, "$.\"instance-v2-id\"");
        if (id) {
            found = 1;
            /* "EWR" in the metadata; Vultr's API and Spare Cores spell region ids in lower
             * case ("ewr"). The metadata names no plan and no zone. */
            char *rc = jdoc_str(j, "$.region.regioncode");
            for (char *c = rc; c && *c; c++) {
                if (*c >= 'A' && *c <= 'Z')
                    *c = (char)(*c - 'A' + 'a');
            }
            p->res.region_id = rc;
        }
        free(id);
        rt_json_close(j);
    }
    rt_buf_free(&r.body);
    return found;
}

static int probe_alicloud(struct probe *p)
{
    char *hdr = NULL;
    if (imds_token(p, "X-aliyun-ecs-metadata-token-ttl-seconds: 21600",
                   "X-aliyun-ecs-metadata-token", &hdr) < 0)
        return 0;
    int found = 0;
    char *region = get_text(p, "/latest/meta-data/region-id", hdr);
    if (region) {
        found = 1;
        p->res.region_id = region;
        p->res.instance_type = get_text(p, "/latest/meta-data/instance/instance-type", hdr);
        p->res.zone_id = get_text(p, "/latest/meta-data/zone-id", hdr);
        p->res.account_id = get_text(p, "/latest/meta-data/owner-account-id", hdr);
    }
    free_token_hdr(hdr);
    return found;
}

static int probe_ovh(struct probe *p)
{
    struct resp r = {0};
    struct rt_json *j;
    int ovh = 0;
    /* OVH's OpenStack names its own resolver: a services[] entry {type dns, address
     * 213.186.33.99}. */
    if (get_json(p, "/openstack/latest/network_data.json", NULL, &j, &r)) {
        static const char *const dns[][2] = {{"$.type", "dns"}, {"$.address", "213.186.33.99"}};
        ovh = rt_json_find(j, "$.services", dns, 2) == 1;
        rt_json_close(j);
    }
    if (ovh) {
        if (get_json(p, "/openstack/latest/meta_data.json", NULL, &j, &r)) {
            char *az = jdoc_str(j, "$.availability_zone");
            /* "nova" is OpenStack's default zone name, not a place. */
            if (az && strcmp(az, "nova") == 0) {
                free(az);
                az = NULL;
            }
            p->res.region_id = az;
            rt_json_close(j);
        }
        /* The EC2-compatible side has the flavor. */
        p->res.instance_type = get_text(p, "/latest/meta-data/instance-type", NULL);
    }
    rt_buf_free(&r.body);
    return ovh;
}

static int (*const probe_fn[V_N])(struct probe *) = {
    [V_AWS] = probe_aws,           [V_GCP] = probe_gcp,         [V_AZURE] = probe_azure,
    [V_HETZNER] = probe_hetzner,   [V_UPCLOUD] = probe_upcloud, [V_VULTR] = probe_vultr,
    [V_ALICLOUD] = probe_alicloud, [V_OVH] = probe_ovh,
};

/* --- orchestration ----------------------------------------------------------------------- */

struct shared;
struct targ {
    struct shared *s;
    int v;
};

struct shared {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs; /* the caller + each running thread */
    int done[V_N];
    int found[V_N];
    struct probe probes[V_N];
    struct targ args[V_N];
};

static void shared_unref(struct shared *s)
{
    pthread_mutex_lock(&s->mu);
    int last = --s->refs == 0;
    pthread_mutex_unlock(&s->mu);
    if (!last)
        return;
    for (int v = 0; v < V_N; v++) {
        free(s->probes[v].base);
        rt_cloud_free(&s->probes[v].res);
    }
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    free(s);
}

static void run_probe(struct shared *s, int v)
{
    struct probe *p = &s->probes[v];
    int found = probe_fn[v](p);
    if (found) {
        p->res.vendor_id = xstrdup(vendors[v].id);
    } else {
        rt_cloud_free(&p->res);
    }
    pthread_mutex_lock(&s->mu);
    s->done[v] = 1;
    s->found[v] = found;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void *probe_thread(void *arg)
{
    struct targ *a = arg;
    struct shared *s = a->s;
    run_probe(s, a->v);
    shared_unref(s);
    return NULL;
}

/* With s->mu held: the winner's index, V_N when every vendor said no, -1 while undecided.
 * At the deadline (final) vendors still running count as "no". */
static int decide(const struct shared *s, int final)
{
    for (int v = 0; v < V_N; v++) {
        if (s->done[v] && s->found[v])
            return v;
        if (!s->done[v] && !final)
            return -1;
    }
    return V_N;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static char *base_url(const struct rt_cloud_opts *o, int v)
{
    const char *e = o ? o->base[v] : NULL;
    const char *b = e && *e ? e : vendors[v].def;
    size_t n = strlen(b);
    while (n > 0 && b[n - 1] == '/')
        n--;
    return xstrndup(b, n);
}

void rt_cloud_discover(struct rt_cloud *out, const struct rt_cloud_opts *o, double budget_s)
{
    memset(out, 0, sizeof(*out));
    if (o && o->off)
        return;
    if (!(budget_s > 0.0))
        return;
    if (rt_http_init(NULL, 0) != 0)
        return;

    struct shared *s = xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    s->refs = 1;
    double deadline = now_s() + budget_s;
    for (int v = 0; v < V_N; v++) {
        s->probes[v].base = base_url(o, v);
        s->probes[v].deadline = deadline;
        s->args[v].s = s;
        s->args[v].v = v;
    }

    pthread_attr_t at;
    int have_attr = pthread_attr_init(&at) == 0;
    if (have_attr)
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    /* All signals stay blocked in the probes: rtrack waits for them on a signalfd. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int inline_probes[V_N];
    int n_inline = 0;
    for (int v = 0; v < V_N; v++) {
        pthread_mutex_lock(&s->mu);
        s->refs++;
        pthread_mutex_unlock(&s->mu);
        pthread_t th;
        if (pthread_create(&th, have_attr ? &at : NULL, probe_thread, &s->args[v]) != 0) {
            pthread_mutex_lock(&s->mu);
            s->refs--;
            pthread_mutex_unlock(&s->mu);
            inline_probes[n_inline++] = v;
        } else if (!have_attr) {
            pthread_detach(th);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (have_attr)
        pthread_attr_destroy(&at);
    /* No thread (EAGAIN under pids.max): those probes run here, in order, each request still
     * cut at the deadline. */
    for (int i = 0; i < n_inline; i++)
        run_probe(s, inline_probes[i]);

    pthread_mutex_lock(&s->mu);
    int w;
    for (;;) {
        w = decide(s, 0);
        if (w >= 0)
            break;
        double left = deadline - now_s();
        if (left <= 0.0) {
            w = decide(s, 1);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + left;
        ts.tv_sec = (time_t)t;
        ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&s->cv, &s->mu, &ts);
    }
    if (w < V_N) {
        const struct rt_cloud *r = &s->probes[w].res;
        out->vendor_id = dup_or_null(r->vendor_id);
        out->account_id = dup_or_null(r->account_id);
        out->region_id = dup_or_null(r->region_id);
        out->zone_id = dup_or_null(r->zone_id);
        out->instance_type = dup_or_null(r->instance_type);
    }
    pthread_mutex_unlock(&s->mu);
    shared_unref(s);
}

void rt_cloud_free(struct rt_cloud *c)
{
    if (!c)
        return;
    free(c->vendor_id);
    free(c->account_id);
    free(c->region_id);
    free(c->zone_id);
    free(c->instance_type);
    memset(c, 0, sizeof(*c));
}
