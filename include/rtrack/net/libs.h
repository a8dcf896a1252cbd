/* libs.h - libcurl, libcrypto and zlib, loaded with dlopen the first time rtrack needs them.
 *
 * Recording never needs HTTP or TLS; only upload, streaming, cloud discovery and the Keeper
 * query do. Linking libcurl made every `rtrack run` load about 30 shared libraries (libcurl's
 * TLS, LDAP, Kerberos, SSH, RTMP dependencies), which cost milliseconds of start-up and about
 * 6 MiB of resident memory (relocated data, library constructors). So rtrack includes the
 * Debian packages' headers for the types and resolves the few functions it calls from
 * libcurl.so.4 and libcrypto.so.3 at first use. The functions keep their libcurl names
 * through the macros below; before loading, or when a library cannot be loaded, they are
 * stand-ins that fail (curl_easy_init() returns NULL, curl_global_init() an error), so every
 * caller's existing error path reports it. zlib (gzip of upload batches) is loaded the same
 * way: recording never compresses, and libz mapped in a recorder was about 90 KiB of its
 * resident memory (bench/rss.sh, docs/performance.md). */
#ifndef RTRACK_NET_LIBS_H
#define RTRACK_NET_LIBS_H

#define CURL_DISABLE_TYPECHECK 1 /* the typecheck macros would call the names defined below */
#include <curl/curl.h>
#include <stddef.h>
#include <zlib.h>

struct rt_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
    CURLcode (*easy_perform)(CURL *h);
    CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
    void (*easy_cleanup)(CURL *h);
    const char *(*easy_strerror)(CURLcode rc);
    struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
    void (*slist_free_all)(struct curl_slist *l);
    void (*free)(void *p);
    CURLU *(*url)(void);
    void (*url_cleanup)(CURLU *u);
    CURLUcode (*url_get)(const CURLU *u, CURLUPart what, char **part, unsigned int flags);
    CURLUcode (*url_set)(CURLU *u, CURLUPart what, const char *part, unsigned int flags);
    curl_version_info_data *(*version_info)(CURLversion v);
};

/* Load this file instead of libcurl.so.4 (NULL: the default); before the first rt_curl(). */
void rt_libs_set_curl_name(const char *name);

/* The table: libcurl's functions once loaded, stand-ins that fail otherwise. Loads on first
 * call (thread-safe). */
const struct rt_curl_api *rt_curl(void);
/* NULL when libcurl is loaded, else why not ("cannot load libcurl.so.4: ..."). */
const char *rt_curl_load_error(void);

/* SHA-256 of data (libcrypto's EVP_Digest): 0, or -1 when libcrypto cannot be loaded. */
int rt_sha256(const void *data, size_t len, unsigned char out[32]);
/* libcrypto's version ("3.0.11"), NULL when it cannot be loaded. */
const char *rt_crypto_version(void);

/* The zlib functions upload's gzip calls. deflate_init2 is deflateInit2_, what zlib.h's
 * deflateInit2() macro calls: pass ZLIB_VERSION and sizeof(z_stream) as that macro does. */
struct rt_zlib_api {
    int (*deflate_init2)(z_streamp z, int level, int method, int window_bits, int mem_level,
                         int strategy, const char *version, int stream_size);
    uLong (*deflate_bound)(z_streamp z, uLong source_len);
    int (*deflate)(z_streamp z, int flush);
    int (*deflate_end)(z_streamp z);
    const char *(*version)(void);
};

/* zlib's functions, loaded on first call (thread-safe); NULL when libz.so.1 cannot be loaded. */
const struct rt_zlib_api *rt_zlib(void);
/* NULL when zlib is loaded, else why not ("cannot load zlib: ..."). */
const char *rt_zlib_load_error(void);

#undef curl_easy_setopt /* curl.h's argument-count macros */
#undef curl_easy_getinfo
#define curl_global_init    (rt_curl()->global_init)
#define curl_easy_init      (rt_curl()->easy_init)
#define curl_easy_setopt    (rt_curl()->easy_setopt)
#define curl_easy_perform   (rt_curl()->easy_perform)
#define curl_easy_getinfo   (rt_curl()->easy_getinfo)
#define curl_easy_cleanup   (rt_curl()->easy_cleanup)
#define curl_easy_strerror  (rt_curl()->easy_strerror)
#define curl_slist_append   (rt_curl()->slist_append)
#define curl_slist_free_all (rt_curl()->slist_free_all)
#define curl_free           (rt_curl()->free)
#define curl_url            (rt_curl()->url)
#define curl_url_cleanup    (rt_curl()->url_cleanup)
#define curl_url_get        (rt_curl()->url_get)
#define curl_url_set        (rt_curl()->url_set)
#define curl_version_info   (rt_curl()->version_info)

#endif
