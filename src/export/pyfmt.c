/* pyfmt.c - Python's float repr and round() with glibc's correctly rounded printf/strtod. */
#include "rtrack/pyfmt.h"

#include <math.h>
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

double rt_py_round_repr(double x, int ndigits, char out[RT_PYFLOAT_MAX], size_t *len)
{
    /* "%.nf" is Python's round() as text (glibc rounds the exact binary value half-to-even).
     * With trailing zeros stripped it is also the shortest text of the rounded double -
     * repr() - when it has at most 15 significant digits (no two decimals of <= 15 digits map
     * to the same double) and lies where repr() writes positional notation. */
    char s[400];
    int n = snprintf(s, sizeof(s), "%.*f", ndigits, x);
    double r = strtod(s, NULL);
    if (n > 0 && n < RT_PYFLOAT_MAX && isfinite(r) &&
        (r == 0 || (fabs(r) >= 1e-4 && fabs(r) < 1e16))) {
        int end = n;
        char *dot = strchr(s, '.');
        if (dot) {
            while (end > (int)(dot - s) + 2 && s[end - 1] == '0')
                end--;
        } else {
            s[end++] = '.';
            s[end++] = '0';
        }
        s[end] = '\0';
        int sig = 0, lead = 1;
        for (const char *p = s; *p; p++) {
            if (*p < '0' || *p > '9')
                continue;
            if (*p != '0')
                lead = 0;
            sig += !lead;
        }
        if (sig <= 15) {
            memcpy(out, s, (size_t)end + 1);
            *len = (size_t)end;
            return r;
        }
    }
    *len = rt_py_repr(r, out);
    return r;
}
