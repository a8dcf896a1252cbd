/* html.c - writing HTML into a buffer (html.h). */
#include "html.h"

#include <stdarg.h>
#include <stdio.h>

void html_put(struct rt_buf *b, const char *s)
{
    rt_buf_puts(b, s);
}

void html_putf(struct rt_buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof(small)) {
        rt_buf_append(b, small, (size_t)n);
        return;
    }
    rt_buf_reserve(b, b->len + (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void html_esc(struct rt_buf *b, const char *s)
{
    const char *run = s;
    for (; *s; s++) {
        const char *rep;
        switch (*s) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            continue;
        }
        rt_buf_append(b, run, (size_t)(s - run));
        rt_buf_puts(b, rep);
        run = s + 1;
    }
    rt_buf_append(b, run, (size_t)(s - run));
}
