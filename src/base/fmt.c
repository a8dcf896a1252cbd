/* fmt.c - sizes, durations and counts written for people (see fmt.h). */
#include "rtrack/base/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/json.h"
#include "rtrack/base/utf8.h"
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
    size_t len = strlen(noun);
    const char *plural = len && strchr("sx", noun[len - 1]) ? "es" : "s";
    if (!isfinite(v))
        snprintf(b, n, "- %s%s", noun, plural);
    else if (v == floor(v))
        snprintf(b, n, "%.0f %s%s", v, noun, v == 1 ? "" : plural);
    else
        snprintf(b, n, "%.2f %s%s", v, noun, plural);
    return b;
}

const char *rt_fmt_plain(char *b, size_t n, double v, int digits)
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
    snprintf(b, n, "%s %s%s", rt_fmt_plain(num, sizeof(num), v / unit, 2), units[u], suffix);
    return b;
}
/* %.2f below 10, %.1f below 100, %.0f from there: three significant digits */
static int sig3(double v)
{
    double a = fabs(v);
    return a < 9.995 ? 2 : a < 99.95 ? 1 : 0;
}

/* v to 3 significant digits (sig3) and `suffix`; "-" alone for NaN or an infinity */
static const char *fmt_sig3(char *b, size_t n, double v, const char *suffix)
{
    if (!isfinite(v))
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.*f%s", sig3(v), v, suffix);
    return b;
}

const char *rt_fmt_num(char *b, size_t n, double v)
{
    return fmt_sig3(b, n, v, "");
}

const char *rt_fmt_pct(char *b, size_t n, double v)
{
    return fmt_sig3(b, n, v, " %");
}

static int quote_arg(void *ud, const char *key, enum rt_json_type type, const char *value)
{
    (void)key;
    struct rt_buf *b = ud;
    const char *v = value ? value : "";
    if (b->len)
        rt_buf_puts(b, " ");
    if (type == RT_JSON_TEXT && *v &&
        strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789_@%+=:,./-") == strlen(v)) {
        rt_buf_puts(b, v);
        return 0;
    }
    int ctl = 0;
    for (const char *p = v; *p; p++)
        ctl |= (unsigned char)*p < 0x20 || *p == 0x7f;
    if (!ctl) {
        rt_buf_puts(b, "'");
        for (const char *p = v; *p; p++)
            if (*p == '\'')
                rt_buf_puts(b, "'\\''");
            else
                rt_buf_append(b, p, 1);
        rt_buf_puts(b, "'");
        return 0;
    }
    /* control characters (a script's newlines): bash's $'...', one line that a shell reads
     * back as it was */
    rt_buf_puts(b, "$'");
    for (const char *p = v; *p; p++) {
        unsigned char c = (unsigned char)*p;
        char esc[8];
        if (c == '\n' || c == '\t' || c == '\\' || c == '\'')
            snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : (char)c);
        else if (c < 0x20 || c == 0x7f)
            snprintf(esc, sizeof(esc), "\\x%02x", c);
        else
            snprintf(esc, sizeof(esc), "%c", (char)c);
        rt_buf_puts(b, esc);
    }
    rt_buf_puts(b, "'");
    return 0;
}

char *rt_fmt_argv(char *const *argv, int n)
{
    struct rt_buf b = {0};
    for (int i = 0; i < n; i++)
        quote_arg(&b, NULL, RT_JSON_TEXT, argv[i]);
    return b.p ? b.p : xstrdup("");
}

char *rt_fmt_command(const char *argv_json)
{
    if (!argv_json)
        return NULL;
    char err[128];
    struct rt_json *j = rt_json_open(argv_json, strlen(argv_json), err, sizeof(err));
    if (!j)
        return NULL;
    struct rt_buf b = {0};
    int ok = rt_json_get(j, "$", NULL) == RT_JSON_ARRAY && rt_json_each(j, "$", quote_arg, &b) >= 0;
    rt_json_close(j);
    if (!ok) {
        rt_buf_free(&b);
        return NULL;
    }
    if (!b.p)
        return xstrdup("");
    return b.p;
}

size_t rt_fmt_shorten(char *s, size_t size, size_t cols)
{
    size_t w = rt_utf8_printable(s, 0);
    if (w <= cols)
        return w;
    if (cols < 8)
        return rt_utf8_printable(s, cols);
    const char *last = strrchr(s, ' ');
    char *tail = last ? xstrdup(last + 1) : NULL;
    size_t tw = tail ? rt_utf8_printable(tail, 0) : 0;
    size_t hw;
    if (tail && tw && tw <= cols / 3) {
        hw = rt_utf8_printable(s, cols - tw - 3);
        size_t len = strlen(s);
        snprintf(s + len, size - len, " \u2026 %s", tail);
        hw += 3 + tw;
    } else {
        hw = rt_utf8_printable(s, cols - 1);
        size_t len = strlen(s);
        snprintf(s + len, size - len, "\u2026");
        hw += 1;
    }
    free(tail);
    return hw;
}
