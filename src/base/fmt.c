/* fmt.c - sizes, durations and counts written for people (see fmt.h). */
#include "rtrack/base/fmt.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "rtrack/base/util.h"

const char *rt_fmt_bytes(char *b, size_t n, double v, const char *suffix)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    double a = fabs(v);
    while (a >= 1024 && u + 1 < RT_ARRAY_LEN(units)) {
        a /= 1024;
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(b, n, "%.0f %s%s", v, units[u], suffix);
    else
        snprintf(b, n, "%.*f %s%s", a < 10 ? 2 : a < 100 ? 1 : 0, v, units[u], suffix);
    return b;
}

const char *rt_fmt_mib(char *b, size_t n, double mib)
{
    if (fabs(mib) >= 1024)
        snprintf(b, n, "%.*f GiB", fabs(mib) < 10240 ? 2 : 1, mib / 1024);
    else
        snprintf(b, n, "%.*f MiB", fabs(mib) < 10 ? 2 : 1, mib);
    return b;
}

const char *rt_fmt_duration(char *b, size_t n, double s)
{
    if (!isfinite(s)) {
        snprintf(b, n, "?");
        return b;
    }
    if (s < 60) {
        snprintf(b, n, "%.*f s", s < 10 ? 2 : 1, s);
        return b;
    }
    long t = lround(s);
    if (t < 3600)
        snprintf(b, n, "%ldm%02lds", t / 60, t % 60);
    else
        snprintf(b, n, "%ldh%02ldm%02lds", t / 3600, t / 60 % 60, t % 60);
    return b;
}

const char *rt_fmt_count(char *b, size_t n, double v, const char *noun)
{
    if (v == floor(v))
        snprintf(b, n, "%.0f %s%s", v, noun, v == 1 ? "" : "s");
    else
        snprintf(b, n, "%.2f %ss", v, noun);
    return b;
}

const char *rt_fmt_num(char *b, size_t n, double v, int digits)
{
    if (!isfinite(v)) {
        snprintf(b, n, "?");
        return b;
    }
    int len = snprintf(b, n, "%.*f", digits, v);
    if (digits > 0 && len > 0 && (size_t)len < n) {
        while (b[len - 1] == '0')
            b[--len] = '\0';
        if (b[len - 1] == '.')
            b[--len] = '\0';
    }
    if (!strcmp(b, "-0"))
        snprintf(b, n, "0");
    return b;
}

const char *rt_fmt_bytes_in(char *b, size_t n, double v, double unit, const char *suffix)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    size_t u = 0;
    for (double k = unit; k >= 1024 && u + 1 < RT_ARRAY_LEN(units); k /= 1024)
        u++;
    char num[64];
    snprintf(b, n, "%s %s%s", rt_fmt_num(num, sizeof(num), v / unit, 2), units[u], suffix);
    return b;
}
