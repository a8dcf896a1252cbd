/* toml.h - a strict parser for the TOML subset rtrack's config file uses.
 *
 * Debian packages no C TOML library. Supported: comments, [table] headers with bare names,
 * `key = value` with bare or quoted keys, and basic strings, literal strings, integers, floats
 * and booleans as values; a UTF-8 byte order mark at the start of the text is skipped. Anything
 * else (arrays, inline tables, dates, multi-line strings, dotted keys) is rejected with file:line,
 * never silently ignored. */
#ifndef RTRACK_TOML_H
#define RTRACK_TOML_H

#include <stddef.h>
#include <stdint.h>

enum rt_toml_type { RT_TOML_STRING, RT_TOML_INT, RT_TOML_FLOAT, RT_TOML_BOOL };

struct rt_toml_kv {
    char *table; /* "" for keys before the first header */
    char *key;
    enum rt_toml_type type;
    char *str; /* decoded string, or the literal text of a number/bool */
    int64_t i;
    double d;
    int b;
    int line;
};

struct rt_toml_table {
    char *name;
    int line;
};

struct rt_toml_doc {
    struct rt_toml_kv *kv;
    size_t n;
    struct rt_toml_table *tables; /* every [header], so an empty unknown table is seen too */
    size_t ntables;
};

/* 0 on success; -1 with "LINE: message" in err (and an empty doc). */
int rt_toml_parse(const char *text, struct rt_toml_doc *doc, char *err, size_t errlen);
void rt_toml_free(struct rt_toml_doc *doc);
const char *rt_toml_type_name(enum rt_toml_type t);

#endif
