/* json.h - reading a JSON document (an HTTP answer: Keeper's servers, Sentinel's runs and
 * credentials, the clouds' instance metadata) with SQLite's JSON functions.
 *
 * rtrack does not hand-write a JSON parser: SQLite has one built in, tested far beyond what a
 * project of this size could test its own. A document is opened once (an in-memory connection
 * and the document bound to a prepared statement) and then asked for the type and value at
 * SQLite JSON paths ("$.upload_credentials.access_key", "$[0]", "$.\"instance-v2-id\""). This
 * is the only file outside src/store/ that calls sqlite3_*. */
#ifndef RTRACK_BASE_JSON_H
#define RTRACK_BASE_JSON_H

#include <stddef.h>

/* What is at a path. The negative ones say that nothing could be read there at all. */
enum rt_json_type {
    RT_JSON_ERROR = -2,   /* SQLite failed (a malformed path, out of memory): rt_json_errmsg() */
    RT_JSON_INVALID = -1, /* the document is not JSON (then every path answers this) */
    RT_JSON_ABSENT = 0,   /* the document is JSON, but nothing is at the path */
    RT_JSON_NULL,
    RT_JSON_TRUE,
    RT_JSON_FALSE,
    RT_JSON_INTEGER,
    RT_JSON_REAL,
    RT_JSON_TEXT,
    RT_JSON_ARRAY,
    RT_JSON_OBJECT,
};

struct rt_json;

/* Open the len bytes at text (text may be NULL when len is 0) as a document. The bytes are not
 * copied (no copy of a secret is left behind): they must stay as they are until rt_json_close().
 * A document that is not JSON opens fine and answers RT_JSON_INVALID. NULL, with SQLite's reason
 * in err, only when SQLite itself fails (out of memory). */
struct rt_json *rt_json_open(const char *text, size_t len, char *err, size_t errlen);
void rt_json_close(struct rt_json *j); /* j may be NULL */

/* The type of the value at path and, when value is not NULL, in *value a malloc'd copy of it as
 * SQLite's json_extract() gives it: a string unescaped, a number in SQLite's spelling ("1.5",
 * "1.0e+300"), true and false as "1" and "0", an object or array as compact JSON text.
 * *value is NULL for a JSON null and whenever the type is not a value (absent, invalid, error). */
enum rt_json_type rt_json_get(struct rt_json *j, const char *path, char **value);

/* The number at path as a double, exactly as SQLite holds it (an integer converted): *v is set
 * for RT_JSON_INTEGER and RT_JSON_REAL only; the type is returned as rt_json_get() says it. */
enum rt_json_type rt_json_num(struct rt_json *j, const char *path, double *v);

/* Each element of the array, or member of the object, at path, in the document's order: fn gets
 * the member's name (NULL for an array's element), its type, and its value as rt_json_get()
 * gives it (NULL for a JSON null). A non-zero return of fn stops the walk. Returns how many were
 * visited (0 when nothing, or a scalar, is at path), -1 when SQLite failed or the document is not
 * JSON. */
int rt_json_each(struct rt_json *j, const char *path,
                 int (*fn)(void *ud, const char *key, enum rt_json_type type, const char *value),
                 void *ud);

/* Whether the array (or object) at path has an element that is an object holding, at each of the
 * n member paths match[i][0] (relative to the element: "$.type"), the string match[i][1]:
 * 1 yes, 0 no (also when path is absent or the document is not JSON), -1 when SQLite failed. */
int rt_json_find(struct rt_json *j, const char *path, const char *const (*match)[2], size_t n);

/* SQLite's message for the last RT_JSON_ERROR (or -1) of j. */
const char *rt_json_errmsg(const struct rt_json *j);

#endif
