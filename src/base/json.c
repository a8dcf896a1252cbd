/* json.c - a JSON document read through SQLite's JSON functions (see include/rtrack/base/json.h).
 *
 * One in-memory connection per document, the document bound once to the statement that every
 * rt_json_get() steps again with another path. json_type() and json_extract() raise an error on
 * malformed JSON, so validity is asked once, at open, and an invalid document is never handed to
 * them. */
#include "rtrack/base/json.h"

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"

struct rt_json {
    sqlite3 *db;
    sqlite3_stmt *get; /* json_type and value at ?2 of the document ?1 */
    const char *text;
    int len;
    int valid; /* json_valid(): JSON as RFC 8259 has it */
};

/* An object or array as compact JSON (json() of the extract), a scalar as json_extract() has
 * it: the text a caller stores (Keeper's server object) or reads (a credential). */
static const char get_sql[] = "SELECT json_type(?1, ?2),"
                              " CASE WHEN json_type(?1, ?2) IN ('object', 'array')"
                              " THEN json(json_extract(?1, ?2)) ELSE json_extract(?1, ?2) END";

static void json_reason(sqlite3 *db, char *err, size_t errlen)
{
    if (err && errlen)
        snprintf(err, errlen, "%s", db ? sqlite3_errmsg(db) : "out of memory");
}

/* json_valid() of the bound document: 1, 0, or -1 when SQLite failed. */
static int json_check_valid(struct rt_json *j)
{
    sqlite3_stmt *st = NULL;
    int valid = -1;
    if (sqlite3_prepare_v2(j->db, "SELECT json_valid(?1)", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, j->text, j->len, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        valid = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    return valid;
}

struct rt_json *rt_json_open(const char *text, size_t len, char *err, size_t errlen)
{
    if (len > INT_MAX) { /* what sqlite3_bind_text() can take */
        if (err && errlen)
            snprintf(err, errlen, "document too large");
        return NULL;
    }
    struct rt_json *j = xcalloc(1, sizeof(*j));
    j->text = text ? text : "";
    j->len = (int)len;
    if (sqlite3_open_v2(":memory:", &j->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, NULL) !=
            SQLITE_OK ||
        (j->valid = json_check_valid(j)) < 0 ||
        sqlite3_prepare_v2(j->db, get_sql, -1, &j->get, NULL) != SQLITE_OK ||
        sqlite3_bind_text(j->get, 1, j->text, j->len, SQLITE_STATIC) != SQLITE_OK) {
        json_reason(j->db, err, errlen);
        rt_json_close(j);
        return NULL;
    }
    return j;
}

void rt_json_close(struct rt_json *j)
{
    if (!j)
        return;
    sqlite3_finalize(j->get);
    sqlite3_close(j->db);
    free(j);
}

static enum rt_json_type json_type_of(const char *name)
{
    static const struct {
        const char *name;
        enum rt_json_type type;
    } types[] = {
        {"null", RT_JSON_NULL},       {"true", RT_JSON_TRUE},     {"false", RT_JSON_FALSE},
        {"integer", RT_JSON_INTEGER}, {"real", RT_JSON_REAL},     {"text", RT_JSON_TEXT},
        {"array", RT_JSON_ARRAY},     {"object", RT_JSON_OBJECT},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(types); i++)
        if (strcmp(name, types[i].name) == 0)
            return types[i].type;
    return RT_JSON_ERROR; /* a type this SQLite would be the first to have */
}

enum rt_json_type rt_json_get(struct rt_json *j, const char *path, char **value)
{
    if (value)
        *value = NULL;
    if (!j->valid)
        return RT_JSON_INVALID;
    sqlite3_reset(j->get);
    if (sqlite3_bind_text(j->get, 2, path, -1, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_step(j->get) != SQLITE_ROW)
        return RT_JSON_ERROR;
    const char *name = (const char *)sqlite3_column_text(j->get, 0);
    if (!name)
        return RT_JSON_ABSENT;
    enum rt_json_type t = json_type_of(name);
    if (value && t > RT_JSON_NULL && sqlite3_column_type(j->get, 1) != SQLITE_NULL) {
        const char *v = (const char *)sqlite3_column_text(j->get, 1);
        *value = xstrndup(v ? v : "", (size_t)sqlite3_column_bytes(j->get, 1));
    }
    return t;
}

enum rt_json_type rt_json_num(struct rt_json *j, const char *path, double *v)
{
    enum rt_json_type t = rt_json_get(j, path, NULL);
    /* the statement still holds the row of that path: json_extract()'s number as SQLite has it */
    if (t == RT_JSON_INTEGER || t == RT_JSON_REAL)
        *v = sqlite3_column_double(j->get, 1);
    return t;
}

int rt_json_each(struct rt_json *j, const char *path,
                 int (*fn)(void *ud, const char *key, enum rt_json_type type, const char *value),
                 void *ud)
{
    if (!j->valid)
        return -1;
    sqlite3_stmt *st = NULL;
    int n = -1;
    if (sqlite3_prepare_v2(j->db,
                           "SELECT CASE WHEN typeof(key) = 'text' THEN key END, type,"
                           " CASE WHEN type IN ('object', 'array') THEN json(value) ELSE value END"
                           " FROM json_each(?1, ?2)",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_bind_text(st, 1, j->text, j->len, SQLITE_STATIC) != SQLITE_OK ||
        sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc;
    for (n = 0; (rc = sqlite3_step(st)) == SQLITE_ROW;) {
        n++;
        const char *type = (const char *)sqlite3_column_text(st, 1);
        if (fn(ud, (const char *)sqlite3_column_text(st, 0), json_type_of(type ? type : ""),
               (const char *)sqlite3_column_text(st, 2)))
            break;
    }
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        n = -1;
    sqlite3_finalize(st);
    return n;
}

int rt_json_find(struct rt_json *j, const char *path, const char *const (*match)[2], size_t n)
{
    if (!j->valid)
        return 0;
    /* one EXISTS over json_each(), a condition per member: SQLite walks the elements */
    struct rt_buf sql = {0};
    rt_buf_puts(&sql, "SELECT EXISTS(SELECT 1 FROM json_each(?1, ?2) WHERE type = 'object'");
    for (size_t i = 0; i < n; i++) {
        char cond[64];
        snprintf(cond, sizeof(cond), " AND json_extract(value, ?%zu) = ?%zu", 3 + 2 * i, 4 + 2 * i);
        rt_buf_puts(&sql, cond);
    }
    rt_buf_puts(&sql, ")");
    sqlite3_stmt *st = NULL;
    int found = -1;
    int ok = sqlite3_prepare_v2(j->db, sql.p, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_bind_text(st, 1, j->text, j->len, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC) == SQLITE_OK;
    for (size_t i = 0; ok && i < n; i++)
        ok = sqlite3_bind_text(st, (int)(3 + 2 * i), match[i][0], -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_text(st, (int)(4 + 2 * i), match[i][1], -1, SQLITE_STATIC) == SQLITE_OK;
    if (ok && sqlite3_step(st) == SQLITE_ROW)
        found = sqlite3_column_int(st, 0) != 0;
    sqlite3_finalize(st);
    rt_buf_free(&sql);
    return found;
}

const char *rt_json_errmsg(const struct rt_json *j)
{
    return sqlite3_errmsg(j->db);
}
