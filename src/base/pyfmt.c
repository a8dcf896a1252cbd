/* pyfmt.c - Python's float repr and round() with glibc's correctly rounded printf/strtod. */
#include "rtrack/base/pyfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double rt_py_round(double x, int ndigits)
{
    /* glibc's %.*f rounds the exact binary value half-to-even, as CPython's round() does; the
     * naive floor(x * 10^n + 0.5) does not (3072.03125 -> 3072.0312, not 3072.0313) */
    if (!isfinite(x))
        return x;
    char buf[400];
    snprintf(buf, sizeof(buf), "%.*f", ndigits, x);
    return strtod(buf, NULL);
}

size_t rt_py_repr(double x, char out[RT_PYFLOAT_MAX])
{
    if (isnan(x))
        return (size_t)snprintf(out, RT_PYFLOAT_MAX, "nan");
    if (isinf(x))
        return (size_t)snprintf(out, RT_PYFLOAT_MAX, x < 0 ? "-inf" : "inf");
    /* shortest precision that round-trips: the digits and the decimal exponent */
    char e[40];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, x);
        if (strtod(e, NULL) == x)
            break;
    }
    char digits[20];
    size_t nd = 0;
    const char *s = e;
    int neg = *s == '-';
    if (neg)
        s++;
    for (; *s && *s != 'e'; s++)
        if (*s != '.')
            digits[nd++] = *s;
    int exp10 = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0') /* "%.0e" of 100 is "1e+02": keep one digit */
        nd--;
    digits[nd] = '\0';

    char *o = out;
    if (neg)
        *o++ = '-';
    if (exp10 >= -4 && exp10 < 16) {
        if (exp10 < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -exp10 - 1; i++)
                *o++ = '0';
            memcpy(o, digits, nd);
            o += nd;
        } else {
            size_t intlen = (size_t)exp10 + 1;
            for (size_t i = 0; i < intlen; i++)
                *o++ = i < nd ? digits[i] : '0';
            *o++ = '.';
            if (nd > intlen) {
                memcpy(o, digits + intlen, nd - intlen);
                o += nd - intlen;
            } else {
                *o++ = '0';
            }
        }
    } else {
        *o++ = digits[0];
        if (nd > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, nd - 1);
            o += nd - 1;
        }
        o += sprintf(o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
    *o = '\0';
    return (size_t)(o - out);
}

/* round(x * 10^nd) half-to-even, exactly, for |x * 10^nd| < 2^52: fma gives the exact error e
 * of the product p, so x * 10^nd = p + e; only when p is next to a half can e decide. */
static int round_scaled(double x, int nd, double *out)
{
    static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
    if (nd < 0 || nd >= (int)(sizeof(p10) / sizeof(p10[0])))
        return -1;
    double p = x * p10[nd];
    if (!(fabs(p) < 4503599627370496.0))
        return -1;
    double e = fma(x, p10[nd], -p);
    double k = nearbyint(p); /* ties to even */
    double up = k + 0.5, down = k - 0.5;
    double du = p - up, dd = p - down; /* exact when p is near them (Sterbenz) */
    if (du > -e || (du == -e && fmod(k, 2.0) != 0))
        k += 1;
    else if (dd < -e || (dd == -e && fmod(k, 2.0) != 0))
        k -= 1;
    *out = k;
    return 0;
}

/* the digits of round(x, nd) as "%.nf" would print them, from round_scaled */
static int fixed_text(double x, int nd, char *s, size_t cap)
{
    double k;
    if (round_scaled(x, nd, &k) != 0)
        return -1;
    /* |k| < 2^52: exact as an integer; printf's float path is the slow part of export */
    char digits[32];
    uint64_t u = (uint64_t)fabs(k);
    int nd_ = 0;
    char rev[32];
    do {
        rev[nd_++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (int i = 0; i < nd_; i++)
        digits[i] = rev[nd_ - 1 - i];
    if ((size_t)nd_ + (size_t)nd + 4 > cap)
        return -1;
    char *o = s;
    if (k < 0 || (k == 0 && signbit(x)))
        *o++ = '-';
    if (nd == 0) {
        memcpy(o, digits, (size_t)nd_);
        o += nd_;
    } else if (nd_ > nd) {
        memcpy(o, digits, (size_t)(nd_ - nd));
        o += nd_ - nd;
        *o++ = '.';
        memcpy(o, digits + nd_ - nd, (size_t)nd);
        o += nd;
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < nd - nd_; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)nd_);
        o += nd_;
    }
    *o = '\0';
    return (int)(o - s);
}

int rt_py_round_repr(double x, int ndigits, char out[RT_PYFLOAT_MAX], size_t *len)
{
    /* "%.nf" is Python's round() as text (glibc rounds the exact binary value half-to-even).
     * With trailing zeros stripped it is also the shortest text of the rounded double -
     * repr() - when it has at most 15 significant digits (no two decimals of <= 15 digits map
     * to the same double) and lies where repr() writes positional notation, 1e-4 <= |r| < 1e16
     * (or r == 0). All of that can be read off the digits: no strtod in the common case. */
    char s[400];
    int n = -1;
    if (isfinite(x) && (n = fixed_text(x, ndigits, s, sizeof(s))) < 0)
        n = snprintf(s, sizeof(s), "%.*f", ndigits, x);
    if (n > 0 && n < RT_PYFLOAT_MAX) {
        const char *p = s + (s[0] == '-');
        const char *dot = strchr(p, '.');
        int intlen = dot ? (int)(dot - p) : (int)strlen(p);
        /* significant digits, and the decimal exponent of the first non-zero digit */
        int sig = 0, exp10 = 0, zero = 1;
        for (int i = 0; p[i]; i++) {
            if (p[i] == '.')
                continue;
            if (zero && p[i] != '0') {
                zero = 0;
                exp10 = i < intlen ? intlen - 1 - i : intlen - i;
            }
            sig += !zero;
        }
        /* trailing zeros of the fraction are not significant */
        int end = n;
        if (dot) {
            while (end > (int)(dot - s) + 2 && s[end - 1] == '0') {
                end--;
                sig -= !zero;
            }
        }
        if (sig <= 15 && (zero || (exp10 >= -4 && exp10 < 16))) {
            if (dot) {
                s[end] = '\0';
            } else {
                s[end++] = '.';
                s[end++] = '0';
                s[end] = '\0';
            }
            memcpy(out, s, (size_t)end + 1);
            *len = (size_t)end;
            return zero ? 0 : (s[0] == '-' ? -1 : 1);
        }
    }
    double r = rt_py_round(x, ndigits);
    *len = rt_py_repr(r, out);
    return r > 0 ? 1 : r < 0 ? -1 : 0;
}
