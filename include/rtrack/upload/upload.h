/* upload.h - shipping runs to Spare Cores Sentinel: its HTTP API and gzip CSV batches on S3.
 *
 * Secrets (the API token, S3 credentials) live only in memory: they are never written to the
 * database, never printed, and never part of an error message; response bodies that carry
 * credentials are never logged. Every network call has a bounded timeout. */
#ifndef RTRACK_UPLOAD_H
#define RTRACK_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/base/util.h"

/* --- S3 ----------------------------------------------------------------------------------- */

struct rt_s3_creds {
    char *access_key, *secret_key, *session_token; /* session_token may be NULL */
};

/* Where objects go. From an upload_uri_prefix "s3://bucket/key/prefix", an endpoint (the CLI's
 * RTRACK_S3_ENDPOINT, e.g. "http://127.0.0.1:9000": path-style http(s)://endpoint/bucket/key,
 * for S3-compatible stores and the tests) and a region (RTRACK_S3_REGION; else the bucket's
 * x-amz-bucket-region header, else us-east-1 for an endpoint / eu-central-1 for AWS). */
struct rt_s3_target {
    char *bucket, *prefix; /* prefix without leading/trailing '/', may be "" */
    char *endpoint;        /* NULL = AWS: https://BUCKET.s3.REGION.amazonaws.com (virtual-hosted) */
    char *region;          /* NULL until known */
};

/* Parse "s3://bucket/prefix" into t; endpoint and region may be NULL or empty (AWS, the
 * bucket's region). 0 or -1 + err. */
int rt_s3_target_parse(const char *uri, const char *endpoint, const char *region,
                       struct rt_s3_target *t, char *err, size_t errlen);
void rt_s3_target_free(struct rt_s3_target *t);

/* PUT one object: key is relative to the target's prefix ("<run>/<seq:06>.csv.gz"), body is
 * sent with Content-Type: application/gzip, x-amz-content-sha256 = SHA-256 of the body,
 * SigV4-signed by libcurl (x-amz-security-token when the credentials have a session token).
 * Fills in t->region on first use. On success writes "s3://bucket/prefix/key" to uri_out.
 * 0 on success; -1 with a one-line reason in err (HTTP status and S3's error code, never the
 * credentials). */
int rt_s3_put(struct rt_s3_target *t, const struct rt_s3_creds *c, const char *key,
              const void *body, size_t len, char *uri_out, size_t uri_cap, char *err,
              size_t errlen);

/* Lowercase hex SHA-256 of data (65 bytes with the NUL). */
void rt_sha256_hex(const void *data, size_t len, char out[65]);
/* Percent-encode an S3 key for the URL and the canonical request: every byte outside
 * A-Za-z0-9-._~ except '/'. Appends to b. */
void rt_s3_encode_key(struct rt_buf *b, const char *key);

/* --- the Sentinel API ------------------------------------------------------------------------ */

struct rt_sentinel {
    char *base; /* SENTINEL_API_URL or https://api.sentinel.sparecores.net, no trailing '/' */
    char *token;
};

struct rt_sentinel_run {
    char *run_id;            /* Sentinel's id of the run */
    char *upload_uri_prefix; /* s3://bucket/prefix */
    struct rt_s3_creds creds;
    double expires_at; /* epoch seconds; far future when the API gives none */
    /* After a failed start: the request went out and no usable answer came back (a timeout, a
     * lost connection, a gateway's 502 or 504, a 2xx that cannot be used), so Sentinel may have
     * registered the run all the same. 0: it certainly did not (never sent, or refused). */
    int in_doubt;
};

/* POST {base}/runs with `body` (a flat JSON object: rt_store_upload_start_body()) and, when key
 * is not NULL, the header "Idempotency-Key: KEY" (the run's UUID: the same key for every
 * attempt; an API that knows the header answers a repeat with the run it made first, one that
 * does not ignores it). Fills r. 0, or -1 with a one-line reason (HTTP status, or what was
 * missing in the answer) and r->in_doubt. A run_id or upload_uri_prefix that carries a secret
 * (the token, an S3 credential) is refused. */
int rt_sentinel_start_run(const struct rt_sentinel *s, const char *body, const char *key,
                          struct rt_sentinel_run *r, char *err, size_t errlen);
/* POST {base}/runs/{id}/refresh-credentials: replaces r->creds and r->expires_at. */
int rt_sentinel_refresh(const struct rt_sentinel *s, struct rt_sentinel_run *r, char *err,
                        size_t errlen);
/* POST {base}/runs/{id}/finish with `body` ({exit_code, run_status, finished_at, data_source,
 * data_uris | data_csv}); 200 required. */
int rt_sentinel_finish(const struct rt_sentinel *s, const char *run_id, const char *body, char *err,
                       size_t errlen);
void rt_sentinel_run_free(struct rt_sentinel_run *r);

/* s from the API token (required: -1 and s zeroed when NULL or empty, which means "no Sentinel
 * traffic"; the CLI passes SENTINEL_API_TOKEN) and the API's URL (NULL or empty: the default
 * https://api.sentinel.sparecores.net; trailing '/' stripped; the CLI passes --sentinel-url or
 * SENTINEL_API_URL). Every API call above is bounded by a 10 s connect and a 30 s total limit;
 * rt_http_set_timeout_ms() replaces the total limit, for tests and slow links. 0 or -1. */
int rt_sentinel_init(struct rt_sentinel *s, const char *token, const char *url);
/* Zeroes the token before freeing it. */
void rt_sentinel_free(struct rt_sentinel *s);

/* Whether the token may be sent to url (NULL or empty: the default): https://, or plain
 * http:// to the loopback interface only (127.0.0.0/8, ::1, localhost), where nothing crosses a
 * network. 0, or -1 with "cannot use sentinel api 'URL': reason" in err. Every API call checks
 * it before anything is sent; the CLI checks it first, to refuse with a usage error. */
int rt_sentinel_url_check(const char *url, char *err, size_t errlen);

/* The API's URL as messages and the database show it: without user:password@, no secret. */
void rt_sentinel_where(const struct rt_sentinel *s, char *out, size_t cap);

/* Each stretch of text that is the token or an S3 credential Sentinel handed out in this
 * process, or the beginning of one (8 bytes or more), becomes "***", in place (cap: text's
 * size). For every message that leaves the upload room. */
void rt_sentinel_redact(const struct rt_sentinel *s, char *text, size_t cap);

/* "YYYY-MM-DDTHH:MM:SS" with optional fractional seconds and "Z", "+HH:MM" or no zone (read as
 * UTC) as epoch seconds; 0 (long expired) when s is not such a timestamp. */
double rt_parse_iso8601_utc(const char *s);

#endif
