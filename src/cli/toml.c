/* toml.c - strict parser of the TOML subset in toml.h. */
#include "rtrack/cli/toml.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"

struct parser {
    const char *p;
    int line;
    char *err;
    size_t errlen;
    struct rt_toml_kv *kv;
    size_t n, cap;
    char *table;
    struct rt_toml_table *tables;
    size_t ntables, tcap;
    /* what is defined, by a hash of its name ([table]; table NUL key), to its index: a
     * duplicate is found at once, not by a pass over all before it (40 000 [tags] keys took
     * 19 s, 300 000 tables more than 20) */
    struct rt_map table_at, key_at;
};

static uint64_t key_hash(const char *table, const char *key)
{
    return rt_hash_bytes(rt_hash_bytes(0, table, strlen(table) + 1), key, strlen(key));
}

/* The index of table `name` defined before, or -1. (A hash shared with another name: every
 * table is compared, as rare as it is.) */
static long table_find(const struct parser *ps, const char *name)
{
    int64_t i;
    if (!rt_map_get(&ps->table_at, rt_hash_bytes(0, name, strlen(name)), &i))
        return -1;
    if (!strcmp(ps->tables[i].name, name))
        return (long)i;
    for (size_t k = 0; k < ps->ntables; k++)
        if (!strcmp(ps->tables[k].name, name))
            return (long)k;
    return -1;
}

/* The index of key `key` of the current table set before, or -1. */
static long key_find(const struct parser *ps, const char *key)
{
    int64_t i;
    if (!rt_map_get(&ps->key_at, key_hash(ps->table, key), &i))
        return -1;
    if (!strcmp(ps->kv[i].table, ps->table) && !strcmp(ps->kv[i].key, key))
        return (long)i;
    for (size_t k = 0; k < ps->n; k++)
        if (!strcmp(ps->kv[k].table, ps->table) && !strcmp(ps->kv[k].key, key))
            return (long)k;
    return -1;
}

static int fail(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *ps, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "%d: %s", ps->line, msg);
    return -1;
}

static void skip_ws(struct parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t')
        ps->p++;
}

/* After a value or header: blanks, optional comment, then end of line or file. */
static int end_of_line(struct parser *ps)
{
    skip_ws(ps);
    if (*ps->p == '#') {
        while (*ps->p && *ps->p != '\n')
            ps->p++;
    }
    if (*ps->p == '\r' && ps->p[1] == '\n')
        ps->p++;
    if (*ps->p == '\n') {
        ps->p++;
        ps->line++;
        return 0;
    }
    if (!*ps->p)
        return 0;
    return fail(ps, "unexpected '%c' after value", *ps->p);
}

static int is_bare(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '-';
}

static void put_utf8(struct rt_buf *b, unsigned long cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    rt_buf_append(b, u, n);
}

/* A basic ("...") or literal ('...') single-line string; returns a malloc'd copy. */
static char *parse_string(struct parser *ps)
{
    char q = *ps->p++;
    if (ps->p[0] == q && ps->p[1] == q) {
        fail(ps, "multi-line strings are not supported");
        return NULL;
    }
    struct rt_buf b = {0};
    rt_buf_append(&b, "", 0);
    for (;;) {
        char c = *ps->p;
        if (!c || c == '\n') {
            fail(ps, "unterminated string");
            goto bad;
        }
        ps->p++;
        if (c == q)
            break;
        if ((unsigned char)c < 0x20 && c != '\t') {
            fail(ps, "control character in string");
            goto bad;
        }
        if (c != '\\' || q == '\'') {
            rt_buf_append(&b, &c, 1);
            continue;
        }
        char e = *ps->p;
        if (e) /* a '\' at the very end: the NUL is not stepped over */
            ps->p++;
        static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
        const char *f = e ? strchr(from, e) : NULL;
        if (f) {
            rt_buf_append(&b, &to[f - from], 1);
        } else if (e == 'u' || e == 'U') {
            int nd = e == 'u' ? 4 : 8;
            unsigned long cp = 0;
            for (int i = 0; i < nd; i++) {
                char h = *ps->p;
                if (!isxdigit((unsigned char)h)) {
                    fail(ps, "bad \\%c escape", e);
                    goto bad;
                }
                ps->p++;
                cp = cp * 16 +
                     (unsigned long)(isdigit((unsigned char)h) ? h - '0' : (tolower(h) - 'a' + 10));
            }
            if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                fail(ps, "bad unicode escape");
                goto bad;
            }
            put_utf8(&b, cp);
        } else {
            fail(ps, "bad escape '\\%c' in string", e ? e : ' ');
            goto bad;
        }
    }
    return b.p;
bad:
    rt_buf_free(&b);
    return NULL;
}

static char *parse_key(struct parser *ps)
{
    if (*ps->p == '"' || *ps->p == '\'')
        return parse_string(ps);
    const char *s = ps->p;
    while (is_bare(*ps->p))
        ps->p++;
    if (ps->p == s) {
        fail(ps, "expected a key");
        return NULL;
    }
    return xstrndup(s, (size_t)(ps->p - s));
}

static int parse_number(struct parser *ps, struct rt_toml_kv *kv)
{
    const char *s = ps->p;
    char num[128];
    size_t n = 0;
    int is_float = 0;
    while (*ps->p && (isalnum((unsigned char)*ps->p) || strchr("+-._", *ps->p))) {
        char c = *ps->p++;
        if (c == '_')
            continue;
        if (c == '.' || c == 'e' || c == 'E')
            is_float = 1;
        if (n + 1 >= sizeof(num))
            return fail(ps, "number too long");
        num[n++] = c;
    }
    num[n] = '\0';
    kv->str = xstrndup(s, (size_t)(ps->p - s));
    if (n == 0)
        return fail(ps, "expected a value");
    if (strcmp(num, "true") == 0 || strcmp(num, "false") == 0) {
        kv->type = RT_TOML_BOOL;
        kv->b = num[0] == 't';
        return 0;
    }
    if (!(isdigit((unsigned char)num[0]) ||
          ((num[0] == '+' || num[0] == '-') && isdigit((unsigned char)num[1]))))
        return fail(ps, "invalid value '%s' (strings need quotes)", kv->str);
    char *end;
    errno = 0;
    if (!is_float) {
        kv->type = RT_TOML_INT;
        kv->i = strtoll(num, &end, 10);
        if (*end || errno)
            return fail(ps, "invalid value '%s' (strings need quotes)", kv->str);
        return 0;
    }
    kv->type = RT_TOML_FLOAT;
    /* decimal only, as for the command line and the environment: strtod alone read
     * 0x1.8p1 as 3 */
    if (rt_parse_double(num, &kv->d) != 0 || num[0] == '.' || num[n - 1] == '.')
        return fail(ps, "invalid number '%s'", kv->str);
    return 0;
}

#define BOM "\xEF\xBB\xBF" /* U+FEFF in UTF-8 */

static int parse_line(struct parser *ps)
{
    skip_ws(ps);
    if (strncmp(ps->p, BOM, 3) == 0)
        return fail(ps, "a UTF-8 byte order mark (U+FEFF) belongs only at the start of the file");
    if (*ps->p == '#' || *ps->p == '\n' || *ps->p == '\r' || !*ps->p)
        return end_of_line(ps);
    if (*ps->p == '[') {
        ps->p++;
        if (*ps->p == '[')
            return fail(ps, "arrays of tables are not supported");
        skip_ws(ps);
        const char *s = ps->p;
        while (is_bare(*ps->p))
            ps->p++;
        if (ps->p == s)
            return fail(ps, "expected a table name");
        char *name = xstrndup(s, (size_t)(ps->p - s));
        skip_ws(ps);
        if (*ps->p != ']') {
            free(name);
            return fail(ps,
                        *ps->p == '.' ? "dotted table names are not supported" : "expected ']'");
        }
        ps->p++;
        long dup = table_find(ps, name);
        if (dup >= 0) {
            int first = ps->tables[dup].line;
            free(name);
            return fail(ps, "table [%s] defined twice (first on line %d)", ps->tables[dup].name,
                        first);
        }
        uint64_t h = rt_hash_bytes(0, name, strlen(name));
        if (!rt_map_get(&ps->table_at, h, NULL))
            rt_map_put(&ps->table_at, h, (int64_t)ps->ntables);
        *RT_PUSH(ps->tables, ps->ntables, ps->tcap) = (struct rt_toml_table){name, ps->line};
        ps->table = name;
        return end_of_line(ps);
    }
    int line = ps->line;
    char *key = parse_key(ps);
    if (!key)
        return -1;
    skip_ws(ps);
    if (*ps->p == '.') {
        free(key);
        return fail(ps, "dotted keys are not supported");
    }
    if (*ps->p != '=') {
        free(key);
        return fail(ps, "expected '=' after key");
    }
    ps->p++;
    skip_ws(ps);
    long dup = key_find(ps, key);
    if (dup >= 0) {
        int first = ps->kv[dup].line;
        free(key);
        return fail(ps, "duplicate key (first set on line %d)", first);
    }
    uint64_t h = key_hash(ps->table, key);
    if (!rt_map_get(&ps->key_at, h, NULL))
        rt_map_put(&ps->key_at, h, (int64_t)ps->n);
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? ps->cap * 2 : 16;
        ps->kv = xrealloc(ps->kv, ps->cap * sizeof(*ps->kv));
    }
    struct rt_toml_kv *kv = &ps->kv[ps->n++];
    memset(kv, 0, sizeof(*kv));
    kv->table = xstrdup(ps->table);
    kv->key = key;
    kv->line = line;
    char c = *ps->p;
    if (c == '"' || c == '\'') {
        kv->type = RT_TOML_STRING;
        if (!(kv->str = parse_string(ps)))
            return -1;
    } else if (c == '[' || c == '{') {
        return fail(ps, "%s are not supported", c == '[' ? "arrays" : "inline tables");
    } else if (parse_number(ps, kv) != 0) {
        return -1;
    }
    return end_of_line(ps);
}

int rt_toml_parse(const char *text, struct rt_toml_doc *doc, char *err, size_t errlen)
{
    struct parser ps = {.p = text, .line = 1, .err = err, .errlen = errlen, .table = ""};
    rt_map_init(&ps.table_at, 16);
    rt_map_init(&ps.key_at, 64);
    /* editors on Windows start a UTF-8 file with a byte order mark; it is no part of the text */
    if (strncmp(ps.p, BOM, 3) == 0)
        ps.p += 3;
    int rc = 0;
    while (rc == 0 && *ps.p) /* after an error ps.p may point anywhere */
        rc = parse_line(&ps);
    doc->kv = ps.kv;
    doc->n = ps.n;
    doc->tables = ps.tables;
    doc->ntables = ps.ntables;
    rt_map_free(&ps.table_at);
    rt_map_free(&ps.key_at);
    if (rc != 0) {
        rt_toml_free(doc);
        return -1;
    }
    return 0;
}

void rt_toml_free(struct rt_toml_doc *doc)
{
    for (size_t i = 0; i < doc->n; i++) {
        free(doc->kv[i].table);
        free(doc->kv[i].key);
        free(doc->kv[i].str);
    }
    free(doc->kv);
    for (size_t i = 0; i < doc->ntables; i++)
        free(doc->tables[i].name);
    free(doc->tables);
    memset(doc, 0, sizeof(*doc));
}

const char *rt_toml_type_name(enum rt_toml_type t)
{
    switch (t) {
    case RT_TOML_STRING:
        return "a string";
    case RT_TOML_INT:
        return "an integer";
    case RT_TOML_FLOAT:
        return "a float";
    case RT_TOML_BOOL:
        return "a boolean";
    }
    return "a value";
}
