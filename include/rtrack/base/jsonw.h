/* jsonw.h - the one way rtrack writes JSON: a writer that knows where it is (git's
 * json-writer.h shape), so no caller writes a brace, a comma or a quote of its own.
 *
 *   struct rt_jw w;
 *   rt_jw_init(&w, &buf);
 *   rt_jw_object(&w);                      {
 *   rt_jw_key(&w, "run"); rt_jw_object(&w);  "run": {
 *   rt_jw_kv_int(&w, "id", 3);                 "id": 3
 *   rt_jw_end(&w);                           }
 *   rt_jw_kv_str(&w, "mode", NULL);          , "mode": null
 *   rt_jw_end(&w);                         }
 *
 * The text is the one the summary has always had: ", " between members, ": " after a key;
 * numbers as Python's repr (rt_py_repr; whole numbers without ".0"), NAN and infinities as null;
 * strings escaped as JSON requires (rt_buf_json_string); NULL strings as null. rt_jw_raw()
 * copies a value that is already JSON (a command or tags stored as JSON in the database, an
 * answer from an API) as it is. A misuse (a member without a key, a key outside an object, an
 * end too many) is a programming error and aborts. */
#ifndef RTRACK_JSONW_H
#define RTRACK_JSONW_H

#include <stdint.h>

#include "rtrack/base/util.h"

#define RT_JW_DEPTH 16

struct rt_jw {
    struct rt_buf *out;
    int depth;
    int keyed;                     /* a key was written, its value is next */
    int top;                       /* values written at the top (one makes a document) */
    int compact;                   /* "," and ":" without blanks (rt_jw_compact) */
    char kind[RT_JW_DEPTH];        /* '{' or '[' per open level */
    unsigned members[RT_JW_DEPTH]; /* members written so far per open level */
};

void rt_jw_init(struct rt_jw *w, struct rt_buf *out);

/* Values: at the top, after a key, or as the next element of an array. */
void rt_jw_object(struct rt_jw *w);
void rt_jw_array(struct rt_jw *w);
void rt_jw_end(struct rt_jw *w); /* closes the innermost object or array */
void rt_jw_str(struct rt_jw *w, const char *s);
void rt_jw_num(struct rt_jw *w, double x);
void rt_jw_int(struct rt_jw *w, int64_t v);
void rt_jw_bool(struct rt_jw *w, int b);
void rt_jw_null(struct rt_jw *w);
void rt_jw_raw(struct rt_jw *w, const char *json); /* NULL: null */

/* A member's key (in an object); its value comes next. */
void rt_jw_key(struct rt_jw *w, const char *key);

/* A key and its value in one call. */
void rt_jw_kv_str(struct rt_jw *w, const char *key, const char *s);
void rt_jw_kv_num(struct rt_jw *w, const char *key, double x);
void rt_jw_kv_int(struct rt_jw *w, const char *key, int64_t v);
void rt_jw_kv_bool(struct rt_jw *w, const char *key, int b);
void rt_jw_kv_null(struct rt_jw *w, const char *key);
void rt_jw_kv_raw(struct rt_jw *w, const char *key, const char *json);
void rt_jw_kv_object(struct rt_jw *w, const char *key); /* "key": { ... rt_jw_end() */
void rt_jw_kv_array(struct rt_jw *w, const char *key);  /* "key": [ ... rt_jw_end() */

/* From here on, separators without blanks ("," and ":", as SQLite's JSON functions write
 * them) until turned off again: summary --compare's runs and recommendations have always been
 * written so. */
void rt_jw_compact(struct rt_jw *w, int on);

/* 1 when every object and array is closed (the document is whole). */
int rt_jw_done(const struct rt_jw *w);

#endif
