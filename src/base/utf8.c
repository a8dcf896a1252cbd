/* utf8.c - UTF-8 validation and repair (utf8.h). */
#include "rtrack/base/utf8.h"

#include <locale.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

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

/* The LC_CTYPE of C.UTF-8, in which libc's wcwidth() knows the width of every character
 * (rtrack itself runs in the C locale, where it knows none beyond ASCII); (locale_t)0 where the
 * system has no such locale. Loaded once, kept for the process. */
static locale_t utf8_ctype(void)
{
    static locale_t cached;
    static int missing;
    locale_t l = __atomic_load_n(&cached, __ATOMIC_ACQUIRE);
    if (l || __atomic_load_n(&missing, __ATOMIC_RELAXED))
        return l;
    l = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (!l) {
        __atomic_store_n(&missing, 1, __ATOMIC_RELAXED);
        return l;
    }
    locale_t none = (locale_t)0;
    if (!__atomic_compare_exchange_n(&cached, &none, l, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        freelocale(l); /* another thread was first */
        l = none;
    }
    return l;
}

/* The code point of the well-formed sequence of l bytes at u. */
static uint32_t decode(const unsigned char *u, size_t l)
{
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    uint32_t cp = u[0] & lead_mask[l];
    for (size_t i = 1; i < l; i++)
        cp = (cp << 6) | (u[i] & 0x3F);
    return cp;
}

size_t rt_utf8_printable(char *s, size_t maxcols)
{
    unsigned char *u = (unsigned char *)s;
    size_t n = strlen(s), i = 0, o = 0, cols = 0, sub;
    /* wcwidth() answers for the calling thread's locale: C.UTF-8's for this loop only, taken at
     * the first character beyond ASCII (loading it reads and maps locale files: some 60 us of
     * the end-of-run line, for a command that is ASCII) */
    locale_t loc = (locale_t)0, old = (locale_t)0;
    int looked = 0;
    while (i < n) {
        size_t l = u[i] < 0x80 ? 1 : seq_len(u + i, n - i, &sub), w = 1;
        int bad = 0;
        if (!l) {
            if (sub == n - i && u[i] >= 0xC2 && u[i] <= 0xF4)
                break; /* the start of a sequence the buffer cut off */
            bad = 1;
            l = sub;
        } else if (u[i] < 0x20 || u[i] == 0x7f || (l == 2 && u[i] == 0xC2 && u[i + 1] < 0xA0)) {
            bad = 1; /* C0, DEL, C1 (U+0080..U+009F) */
        } else if (l > 1) {
            if (!looked) {
                looked = 1;
                if ((loc = utf8_ctype()))
                    old = uselocale(loc);
            }
            /* East Asian wide characters and emoji take 2 columns, combining marks 0; a
             * character libc does not know (-1) is counted as one */
            int cw = loc ? wcwidth((wchar_t)decode(u + i, l)) : 1;
            w = cw < 0 ? 1 : (size_t)cw;
        }
        if (maxcols && cols + w > maxcols)
            break; /* a wide character that would pass the last column is left out whole */
        if (bad) {
            u[o++] = '?';
        } else {
            memmove(u + o, u + i, l);
            o += l;
        }
        i += l;
        cols += w;
    }
    if (loc)
        uselocale(old);
    u[o] = '\0';
    return cols;
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
