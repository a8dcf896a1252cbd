/* utf8.c - UTF-8 validation and repair (utf8.h). */
#include "rtrack/base/utf8.h"

#include <string.h>

#include "rtrack/base/util.h"

/* Length of the well-formed sequence at s (of at most n bytes), or 0 when it is ill-formed;
 * *sub is then the length of its maximal valid prefix (at least 1), replaced by one U+FFFD. */
static size_t seq_len(const unsigned char *s, size_t n, size_t *sub)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the allowed range of the second byte */
    *sub = 1;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* overlong */
        else if (c == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90; /* overlong */
        else if (c == 0xF4)
            hi = 0x8F; /* above U+10FFFF */
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        unsigned char b = i < n ? s[i] : 0;
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
            return 0;
        *sub = i + 1;
    }
    return len;
}

size_t rt_utf8_check(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, sub;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t l = seq_len(u + i, n - i, &sub);
        if (!l)
            return i;
        i += l;
    }
    return n;
}

size_t rt_utf8_printable(char *s, size_t maxchars)
{
    unsigned char *u = (unsigned char *)s;
    size_t n = strlen(s), i = 0, o = 0, chars = 0, sub;
    while (i < n && (!maxchars || chars < maxchars)) {
        size_t l = u[i] < 0x80 ? 1 : seq_len(u + i, n - i, &sub);
        if (!l) {
            if (sub == n - i && u[i] >= 0xC2 && u[i] <= 0xF4)
                break; /* the start of a sequence the buffer cut off */
            u[o++] = '?';
            i += sub;
        } else if (u[i] < 0x20 || u[i] == 0x7f || (l == 2 && u[i] == 0xC2 && u[i + 1] < 0xA0)) {
            u[o++] = '?'; /* C0, DEL, C1 (U+0080..U+009F) */
            i += l;
        } else {
            memmove(u + o, u + i, l);
            o += l;
            i += l;
        }
        chars++;
    }
    u[o] = '\0';
    return chars;
}

char *rt_utf8_repair(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    struct rt_buf b = {0};
    rt_buf_reserve(&b, n + 16);
    b.p[0] = '\0';
    size_t i = 0, sub;
    while (i < n) {
        size_t ok = rt_utf8_check(s + i, n - i);
        rt_buf_append(&b, s + i, ok);
        i += ok;
        if (i < n) {
            rt_buf_append(&b, "\xEF\xBF\xBD", 3);
            seq_len(u + i, n - i, &sub);
            i += sub;
        }
    }
    return b.p;
}
