/* stats.c - a metric's statistics and a sparkline's text (internal.h): pure functions of the
 * values the pass collected, tested on their own (tests/unit/test_stats.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* k-th smallest (0-based) of v[0..n), reordering v (Hoare's selection). */
static float select_k(float *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        float pivot = v[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                float t = v[i];
                v[i] = v[j];
                v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The value at rank ceil(p * n), back as the shortest decimal of its float (0.1, not
 * 0.10000000149). */
static double nearest_rank(struct series *s, double p)
{
    size_t r = (size_t)ceil(p * (double)s->n);
    if (r < 1)
        r = 1;
    char t[32];
    snprintf(t, sizeof(t), "%.7g", (double)select_k(s->v, s->n, r - 1));
    return strtod(t, NULL);
}

void summary_stat4(struct series *s, struct rt_stat4 *t)
{
    memset(t, 0, sizeof(*t));
    if (s->n == 0)
        return;
    t->ok = 1;
    t->mean = s->sum / (double)s->n;
    t->max = s->max;
    t->p50 = fmin(nearest_rank(s, 0.50), t->max);
    t->p95 = fmin(nearest_rank(s, 0.95), t->max);
}

int summary_spark_text(const double *v, const int *has, size_t n, char *out, double *max)
{
    static const char *const blocks[8] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                          "\u2585", "\u2586", "\u2587", "\u2588"};
    int any = 0;
    *max = RT_NAN;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        if (has[i]) {
            *max = any ? fmax(*max, v[i]) : fmax(0, v[i]);
            any = 1;
        }
    if (!any)
        return 0;
    char *p = out;
    for (size_t i = 0; i < n && i < RT_SPARK_N; i++) {
        if (!has[i]) {
            *p++ = ' ';
            continue;
        }
        int lvl = *max > 0 ? (int)(v[i] / *max * 7.0 + 0.5) : 0;
        const char *b = blocks[lvl < 0 ? 0 : lvl > 7 ? 7 : lvl];
        memcpy(p, b, 3);
        p += 3;
    }
    *p = '\0';
    return 1;
}
