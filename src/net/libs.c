/* libs.c - libcurl, libcrypto and zlib loaded at first use (see include/rtrack/net/libs.h). */
#include "rtrack/net/libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- stand-ins: what every function does when libcurl could not be loaded ------------------ */

static CURLcode no_global_init(long flags)
{
    (void)flags;
    return CURLE_FAILED_INIT;
}
static CURL *no_easy_init(void)
{
    return NULL;
}
static CURLcode no_easy_setopt(CURL *h, CURLoption opt, ...)
{
    (void)h;
    (void)opt;
    return CURLE_FAILED_INIT;
}
static CURLcode no_easy_perform(CURL *h)
{
    (void)h;
    return CURLE_FAILED_INIT;
}
static CURLcode no_easy_getinfo(CURL *h, CURLINFO info, ...)
{
    (void)h;
    (void)info;
    return CURLE_FAILED_INIT;
}
static void no_easy_cleanup(CURL *h)
{
    (void)h;
}
static const char *no_easy_strerror(CURLcode rc)
{
    (void)rc;
    return "libcurl could not be loaded";
}
static struct curl_slist *no_slist_append(struct curl_slist *l, const char *s)
{
    (void)l;
    (void)s;
    return NULL;
}
static void no_slist_free_all(struct curl_slist *l)
{
    (void)l;
}
static void no_free(void *p)
{
    (void)p;
}
static CURLU *no_url(void)
{
    return NULL;
}
static void no_url_cleanup(CURLU *u)
{
    (void)u;
}
static CURLUcode no_url_get(const CURLU *u, CURLUPart what, char **part, unsigned int flags)
{
    (void)u;
    (void)what;
    (void)flags;
    if (part)
        *part = NULL;
    return CURLUE_OUT_OF_MEMORY;
}
static CURLUcode no_url_set(CURLU *u, CURLUPart what, const char *part, unsigned int flags)
{
    (void)u;
    (void)what;
    (void)part;
    (void)flags;
    return CURLUE_OUT_OF_MEMORY;
}
static curl_version_info_data *no_version_info(CURLversion v)
{
    (void)v;
    return NULL;
}

static const struct rt_curl_api stand_ins = {
    no_global_init,  no_easy_init,     no_easy_setopt,  no_easy_perform,   no_easy_getinfo,
    no_easy_cleanup, no_easy_strerror, no_slist_append, no_slist_free_all, no_free,
    no_url,          no_url_cleanup,   no_url_get,      no_url_set,        no_version_info,
};

static struct rt_curl_api api;
static const struct rt_curl_api *table = &stand_ins;
static char load_err[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* dlsym into a function pointer: the object-to-function cast POSIX guarantees, without the
 * pedantic warning; a missing symbol says which library lacks it in ERR and leaves the loader */
#define SYM_OR_FAIL(err, what, lib, dst, name)                                                     \
    do {                                                                                           \
        void *p_ = dlsym(lib, name);                                                               \
        if (!p_) {                                                                                 \
            snprintf(err, sizeof(err), "%s has no %s", what, name);                                \
            return;                                                                                \
        }                                                                                          \
        memcpy(&(dst), &p_, sizeof(p_));                                                           \
    } while (0)
#define SYM(lib, dst, name) SYM_OR_FAIL(load_err, "libcurl", lib, dst, name)

static const char *curl_name; /* rt_libs_set_curl_name() */

void rt_libs_set_curl_name(const char *name)
{
    curl_name = name;
}

static void load(void)
{
    /* the same library the build linked against: Debian's libcurl4 (OpenSSL flavour) or the
     * GnuTLS one; the CLI may name another (RTRACK_LIBCURL: tests of a missing library) */
    const char *names[] = {curl_name, "libcurl.so.4", "libcurl-gnutls.so.4"};
    void *lib = NULL;
    const char *why = NULL;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !lib; i++) {
        if (!names[i] || (i > 0 && names[0]))
            continue;
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
            why = dlerror();
    }
    if (!lib) {
        snprintf(load_err, sizeof(load_err), "cannot load libcurl: %s", why ? why : "not found");
        return;
    }
    SYM(lib, api.global_init, "curl_global_init");
    SYM(lib, api.easy_init, "curl_easy_init");
    SYM(lib, api.easy_setopt, "curl_easy_setopt");
    SYM(lib, api.easy_perform, "curl_easy_perform");
    SYM(lib, api.easy_getinfo, "curl_easy_getinfo");
    SYM(lib, api.easy_cleanup, "curl_easy_cleanup");
    SYM(lib, api.easy_strerror, "curl_easy_strerror");
    SYM(lib, api.slist_append, "curl_slist_append");
    SYM(lib, api.slist_free_all, "curl_slist_free_all");
    SYM(lib, api.free, "curl_free");
    SYM(lib, api.url, "curl_url");
    SYM(lib, api.url_cleanup, "curl_url_cleanup");
    SYM(lib, api.url_get, "curl_url_get");
    SYM(lib, api.url_set, "curl_url_set");
    SYM(lib, api.version_info, "curl_version_info");
    load_err[0] = '\0';
    table = &api;
}

const struct rt_curl_api *rt_curl(void)
{
    pthread_once(&once, load);
    return table;
}

const char *rt_curl_load_error(void)
{
    pthread_once(&once, load);
    return table == &api ? NULL : load_err;
}

/* --- libcrypto: SHA-256 for S3 payload hashes ------------------------------------------------ */

struct evp_md;
static int (*evp_digest)(const void *, size_t, unsigned char *, unsigned int *,
                         const struct evp_md *, void *);
static const struct evp_md *(*evp_sha256)(void);
static const char *(*openssl_version)(int);
static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;

static void crypto_load(void)
{
    void *lib = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return;
    void *d = dlsym(lib, "EVP_Digest"), *s = dlsym(lib, "EVP_sha256"),
         *v = dlsym(lib, "OpenSSL_version");
    if (!d || !s)
        return;
    memcpy(&evp_digest, &d, sizeof(d));
    memcpy(&evp_sha256, &s, sizeof(s));
    if (v)
        memcpy(&openssl_version, &v, sizeof(v));
}

int rt_sha256(const void *data, size_t len, unsigned char out[32])
{
    pthread_once(&crypto_once, crypto_load);
    unsigned int n = 0;
    if (!evp_digest || evp_digest(len ? data : "", len, out, &n, evp_sha256(), NULL) != 1 ||
        n != 32)
        return -1;
    return 0;
}

const char *rt_crypto_version(void)
{
    pthread_once(&crypto_once, crypto_load);
    /* OPENSSL_VERSION_STRING (6): "3.0.11" without the "OpenSSL " prefix and the date */
    return openssl_version ? openssl_version(6) : NULL;
}

/* --- zlib: gzip of upload batches ------------------------------------------------------------ */

static struct rt_zlib_api zlib_api;
static const struct rt_zlib_api *zlib_table;
static char zlib_err[256];
static pthread_once_t zlib_once = PTHREAD_ONCE_INIT;

#define ZSYM(lib, dst, name) SYM_OR_FAIL(zlib_err, "zlib", lib, dst, name)

static void zlib_load(void)
{
    /* libcurl links the same libz.so.1, so after an upload's first request this finds it loaded */
    void *lib = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(zlib_err, sizeof(zlib_err), "cannot load zlib: %s", why ? why : "not found");
        return;
    }
    ZSYM(lib, zlib_api.deflate_init2, "deflateInit2_");
    ZSYM(lib, zlib_api.deflate_bound, "deflateBound");
    ZSYM(lib, zlib_api.deflate, "deflate");
    ZSYM(lib, zlib_api.deflate_end, "deflateEnd");
    ZSYM(lib, zlib_api.version, "zlibVersion");
    zlib_table = &zlib_api;
}

const struct rt_zlib_api *rt_zlib(void)
{
    pthread_once(&zlib_once, zlib_load);
    return zlib_table;
}

const char *rt_zlib_load_error(void)
{
    pthread_once(&zlib_once, zlib_load);
    return zlib_table ? NULL : zlib_err;
}
