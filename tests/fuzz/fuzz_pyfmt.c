/* fuzz_pyfmt.c - the CSV number formatter (src/base/pyfmt.c) for any double bit pattern,
 * checked against its contract rather than only for crashes:
 *   rt_py_repr(x): fits RT_PYFLOAT_MAX, reads back as exactly x (NaN as "nan"), has a '.' or an
 *     exponent like Python's repr, and is the shortest such text (one digit fewer does not
 *     read back);
 *   rt_py_round_repr(x, n): the same text as rt_py_repr(Python's round(x, n)), where round is
 *     the correctly rounded "%.nf" read back (CPython's algorithm), and the sign it returns is
 *     that value's.
 * Input: 8 bytes of the double (native byte order), then one byte whose value modulo 18 is n. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "rtrack/base/pyfmt.h"

static void fail(const char *what, double x, int n, const char *got, const char *want)
{
    fprintf(stdout, "pyfmt: %s for %a (%.17g), ndigits %d: got '%s', want '%s'\n", what, x, x, n,
            got, want);
    fflush(stdout);
    abort();
}

static void check_repr(double x)
{
    char out[RT_PYFLOAT_MAX + 8];
    memset(out, 'X', sizeof(out));
    size_t len = rt_py_repr(x, out);
    if (len >= RT_PYFLOAT_MAX || strlen(out) != len)
        fail("repr length", x, -1, out, "< RT_PYFLOAT_MAX");
    if (isnan(x)) {
        if (strcmp(out, "nan") != 0)
            fail("repr of nan", x, -1, out, "nan");
        return;
    }
    if (isinf(x)) {
        if (strcmp(out, x < 0 ? "-inf" : "inf") != 0)
            fail("repr of inf", x, -1, out, x < 0 ? "-inf" : "inf");
        return;
    }
    char *end;
    double back = strtod(out, &end);
    if (*end || memcmp(&back, &x, sizeof(x)) != 0)
        fail("repr does not read back", x, -1, out, "the same double");
    if (!strchr(out, '.') && !strchr(out, 'e'))
        fail("repr has neither '.' nor exponent", x, -1, out, "a float literal");
    /* shortest: with p significant digits, p - 1 never read back */
    char digits[40];
    size_t nd = 0;
    for (const char *p = out; *p && *p != 'e' && nd + 1 < sizeof(digits); p++)
        if (*p >= '0' && *p <= '9' && (nd || *p != '0'))
            digits[nd++] = *p;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    if (nd > 1) {
        char e[48];
        snprintf(e, sizeof(e), "%.*e", (int)nd - 2, x);
        if (strtod(e, NULL) == x)
            fail("repr is not the shortest", x, -1, out, e);
    }
}

static void check_round(double x, int n)
{
    /* CPython's round(x, n): the correctly rounded decimal with n places, read back */
    double want = x;
    if (isfinite(x)) {
        char big[512];
        snprintf(big, sizeof(big), "%.*f", n, x);
        want = strtod(big, NULL);
    }
    char want_s[RT_PYFLOAT_MAX], got[RT_PYFLOAT_MAX + 8];
    rt_py_repr(want, want_s);
    size_t len = 0;
    memset(got, 'X', sizeof(got));
    int sign = rt_py_round_repr(x, n, got, &len);
    if (len >= RT_PYFLOAT_MAX || strlen(got) != len)
        fail("round_repr length", x, n, got, want_s);
    if (strcmp(got, want_s) != 0)
        fail("round_repr differs from repr(round(x, n))", x, n, got, want_s);
    int want_sign = want > 0 ? 1 : want < 0 ? -1 : 0;
    if (sign != want_sign)
        fail("round_repr sign", x, n, got, want_s);
    double r = rt_py_round(x, n);
    if (memcmp(&r, &want, sizeof(r)) != 0 && !(isnan(r) && isnan(want))) {
        char rs[RT_PYFLOAT_MAX];
        rt_py_repr(r, rs);
        fail("rt_py_round differs from round(x, n)", x, n, rs, want_s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < sizeof(double))
        return 0;
    double x;
    memcpy(&x, data, sizeof(x));
    int n = size > sizeof(double) ? data[sizeof(double)] % 18 : 4;
    check_repr(x);
    check_round(x, n);
    return 0;
}
