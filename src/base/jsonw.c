/* jsonw.c - the JSON writer (jsonw.h): the separators and quotes in one place, so that the
 * summary, the cluster view and every other document rtrack writes are well formed by
 * construction rather than by each caller's care. */
#include "rtrack/base/jsonw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/pyfmt.h"

/* A misuse is a bug in rtrack, never a property of the data: stop at once, loudly. */
static void jw_misuse(const char *what)
{
    fprintf(stderr, "rtrack: internal error: JSON writer: %s\n", what);
    abort();
}

void rt_jw_init(struct rt_jw *w, struct rt_buf *out)
{
    memset(w, 0, sizeof(*w));
    w->out = out;
}

/* Before any value: the separator an array's element needs; a value in an object needs its
 * key first. */
static void jw_value(struct rt_jw *w)
{
    if (w->depth == 0) {
        if (w->top++)
            jw_misuse("a second value at the top");
        return;
    }
    int d = w->depth - 1;
    if (w->kind[d] == '{') {
        if (!w->keyed)
            jw_misuse("a member without a key");
        w->keyed = 0;
        return;
    }
    if (w->members[d]++)
        rt_buf_puts(w->out, w->compact ? "," : ", ");
}

static void jw_open(struct rt_jw *w, char kind)
{
    jw_value(w);
    if (w->depth + 1 >= RT_JW_DEPTH)
        jw_misuse("nested too deep");
    w->kind[w->depth] = kind;
    w->members[w->depth] = 0;
    w->depth++;
    rt_buf_append(w->out, &kind, 1);
}

void rt_jw_object(struct rt_jw *w)
{
    jw_open(w, '{');
}

void rt_jw_array(struct rt_jw *w)
{
    jw_open(w, '[');
}

void rt_jw_end(struct rt_jw *w)
{
    if (w->depth == 0 || w->keyed)
        jw_misuse(w->keyed ? "a key without its value" : "an end without a beginning");
    w->depth--;
    rt_buf_puts(w->out, w->kind[w->depth] == '{' ? "}" : "]");
}

void rt_jw_key(struct rt_jw *w, const char *key)
{
    int d = w->depth - 1;
    if (d < 0 || w->kind[d] != '{' || w->keyed)
        jw_misuse("a key outside an object, or two keys");
    if (w->members[d]++)
        rt_buf_puts(w->out, w->compact ? "," : ", ");
    rt_buf_json_string(w->out, key, strlen(key));
    rt_buf_puts(w->out, w->compact ? ":" : ": ");
    w->keyed = 1;
}

void rt_jw_str(struct rt_jw *w, const char *s)
{
    jw_value(w);
    if (s)
        rt_buf_json_string(w->out, s, strlen(s));
    else
        rt_buf_puts(w->out, "null");
}

void rt_jw_num(struct rt_jw *w, double x)
{
    jw_value(w);
    if (isnan(x) || isinf(x)) {
        rt_buf_puts(w->out, "null");
        return;
    }
    char t[RT_PYFLOAT_MAX];
    /* whole numbers as integers ("3", not Python's "3.0"): counts, ids, MiB figures */
    if (x == floor(x) && fabs(x) < 9e15)
        snprintf(t, sizeof(t), "%.0f", x);
    else
        rt_py_repr(x, t);
    rt_buf_puts(w->out, t);
}

void rt_jw_int(struct rt_jw *w, int64_t v)
{
    jw_value(w);
    char t[24];
    snprintf(t, sizeof(t), "%lld", (long long)v);
    rt_buf_puts(w->out, t);
}

void rt_jw_bool(struct rt_jw *w, int b)
{
    jw_value(w);
    rt_buf_puts(w->out, b ? "true" : "false");
}

void rt_jw_null(struct rt_jw *w)
{
    jw_value(w);
    rt_buf_puts(w->out, "null");
}

void rt_jw_raw(struct rt_jw *w, const char *json)
{
    jw_value(w);
    rt_buf_puts(w->out, json ? json : "null");
}

void rt_jw_kv_str(struct rt_jw *w, const char *key, const char *s)
{
    rt_jw_key(w, key);
    rt_jw_str(w, s);
}

void rt_jw_kv_num(struct rt_jw *w, const char *key, double x)
{
    rt_jw_key(w, key);
    rt_jw_num(w, x);
}

void rt_jw_kv_int(struct rt_jw *w, const char *key, int64_t v)
{
    rt_jw_key(w, key);
    rt_jw_int(w, v);
}

void rt_jw_kv_bool(struct rt_jw *w, const char *key, int b)
{
    rt_jw_key(w, key);
    rt_jw_bool(w, b);
}

void rt_jw_kv_null(struct rt_jw *w, const char *key)
{
    rt_jw_key(w, key);
    rt_jw_null(w);
}

void rt_jw_kv_raw(struct rt_jw *w, const char *key, const char *json)
{
    rt_jw_key(w, key);
    rt_jw_raw(w, json);
}

void rt_jw_kv_object(struct rt_jw *w, const char *key)
{
    rt_jw_key(w, key);
    rt_jw_object(w);
}

void rt_jw_kv_array(struct rt_jw *w, const char *key)
{
    rt_jw_key(w, key);
    rt_jw_array(w);
}

void rt_jw_compact(struct rt_jw *w, int on)
{
    w->compact = on;
}

int rt_jw_done(const struct rt_jw *w)
{
    return w->depth == 0 && !w->keyed && w->top == 1;
}
