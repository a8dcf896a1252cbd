/* test_stats.c - the summary's statistics of a series and its sparkline text (src/summary/stats.c,
 * private: internal.h). summary_stat4 gives every metric of the document its mean, p50, p95 and
 * max: nearest rank found by selection on floats, so the rank's arithmetic, the selection on
 * unsorted values and ties, and the float's way back to a short decimal each get a case here.
 * summary_spark_text draws the sparklines of the JSON and the text: its eight levels, its blanks
 * and its scale. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/summary/internal.h"
#include "testlib.h"

/* --- summary_stat4 -----------------------------------------------------------------------------
 */

/* A series of n values as the pass builds it: floats for the selection, sum and max exact. */
static struct series series_of(const double *v, size_t n)
{
    struct series s = {0};
    s.v = calloc(n ? n : 1, sizeof(float));
    s.n = s.cap = n;
    for (size_t i = 0; i < n; i++) {
        s.v[i] = (float)v[i];
        s.sum += v[i];
        s.max = i ? fmax(s.max, v[i]) : v[i];
    }
    return s;
}

static struct rt_stat4 stat4(const double *v, size_t n)
{
    struct series s = series_of(v, n);
    struct rt_stat4 t;
    memset(&t, 0x5a, sizeof(t));
    summary_stat4(&s, &t);
    free(s.v);
    return t;
}

static void test_stat4_one_to_twenty(void **state)
{
    (void)state;
    /* 1..20 shuffled: the selection must not depend on the order it finds them in */
    static const double v[20] = {7,  19, 3,  12, 20, 1, 15, 9,  4, 18,
                                 11, 2,  16, 8,  13, 5, 17, 10, 6, 14};
    struct rt_stat4 t = stat4(v, 20);
    assert_int_equal(t.ok, 1);
    assert_true(t.mean == 10.5); /* 210 / 20 */
    assert_true(t.max == 20);
    /* nearest rank: p50 at ceil(0.50 x 20) = 10 -> 10; p95 at ceil(0.95 x 20) = 19 -> 19 */
    assert_true(t.p50 == 10);
    assert_true(t.p95 == 19);
}

static void test_stat4_small_counts(void **state)
{
    (void)state;
    /* one value: every statistic is it */
    static const double one[] = {4.25};
    struct rt_stat4 t = stat4(one, 1);
    assert_int_equal(t.ok, 1);
    assert_true(t.mean == 4.25 && t.p50 == 4.25 && t.p95 == 4.25 && t.max == 4.25);
    /* two: p50 at ceil(1) = 1 -> the smaller, p95 at ceil(1.9) = 2 -> the larger */
    static const double two[] = {9, 3};
    t = stat4(two, 2);
    assert_true(t.p50 == 3);
    assert_true(t.p95 == 9);
    assert_true(t.mean == 6);
    /* five: p50 at ceil(2.5) = 3, p95 at ceil(4.75) = 5 */
    static const double five[] = {50, 10, 40, 20, 30};
    t = stat4(five, 5);
    assert_true(t.p50 == 30);
    assert_true(t.p95 == 50);
    /* 21: p95 at ceil(19.95) = 20 -> the 20th of 21, below the max */
    double many[21];
    for (int i = 0; i < 21; i++)
        many[i] = 21 - i; /* 21 .. 1, descending */
    t = stat4(many, 21);
    assert_true(t.p50 == 11); /* ceil(10.5) = 11 */
    assert_true(t.p95 == 20);
    assert_true(t.max == 21);
}

static void test_stat4_ties(void **state)
{
    (void)state;
    /* sorted 2 2 2 2 9: p50 at 3 -> 2, p95 at 5 -> 9 */
    static const double a[] = {2, 9, 2, 2, 2};
    struct rt_stat4 t = stat4(a, 5);
    assert_true(t.p50 == 2);
    assert_true(t.p95 == 9);
    assert_true(t.mean == 3.4); /* 17 / 5 */
    /* sorted 1 1 1 3 3 3: p50 at 3 -> 1, p95 at ceil(5.7) = 6 -> 3 */
    static const double b[] = {3, 1, 3, 1, 3, 1};
    t = stat4(b, 6);
    assert_true(t.p50 == 1);
    assert_true(t.p95 == 3);
    /* all the same */
    static const double c[] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    t = stat4(c, 7);
    assert_true(t.p50 == 0.5 && t.p95 == 0.5 && t.max == 0.5 && t.mean == 0.5);
    /* zeros and one spike: the median is 0, p95 of 10 values at ceil(9.5) = 10 -> the spike */
    static const double d[] = {0, 0, 0, 0, 100, 0, 0, 0, 0, 0};
    t = stat4(d, 10);
    assert_true(t.p50 == 0);
    assert_true(t.p95 == 100);
    assert_true(t.mean == 10);
}

static void test_stat4_float_round_trip(void **state)
{
    (void)state;
    /* 0.1 is kept as the float 0.100000001490116...; the statistic is the shortest decimal of
     * that float (7 significant digits), 0.1, the same double the JSON's reader gets from "0.1" */
    static const double v[] = {0.1, 0.1, 0.1};
    struct rt_stat4 t = stat4(v, 3);
    assert_true(t.p50 == 0.1);
    assert_true(t.p95 == 0.1);
    assert_true((double)(float)0.1 != 0.1); /* what it would be without the round trip */
    /* 1234.567 as a float is 1234.5670166...: back as 1234.567 */
    static const double w[] = {1234.567, 1, 2};
    t = stat4(w, 3);
    assert_true(t.p95 == 1234.567);
    assert_true(t.p50 == 2);
    /* negative values (a counter gone backwards gives none, but the code must not mind) */
    static const double neg[] = {-0.3, -0.1, -0.2};
    t = stat4(neg, 3);
    assert_true(t.p50 == -0.2);
    assert_true(t.p95 == -0.1);
}

static void test_stat4_p95_not_above_max(void **state)
{
    (void)state;
    /* 1.23456749: the float nearest is 1.23456752..., whose 7 digits are 1.234568, above the
     * exact max: the percentiles are capped at the max */
    static const double v[] = {1.23456749};
    struct rt_stat4 t = stat4(v, 1);
    char seven[32];
    snprintf(seven, sizeof(seven), "%.7g", (double)(float)v[0]);
    assert_string_equal(seven, "1.234568"); /* the premise */
    assert_true(t.max == 1.23456749);
    assert_true(t.p95 == 1.23456749);
    assert_true(t.p50 == 1.23456749);
    assert_true(t.p95 <= t.max);
}

static void test_stat4_empty(void **state)
{
    (void)state;
    struct rt_stat4 t = stat4(NULL, 0);
    assert_int_equal(t.ok, 0);
    assert_true(t.mean == 0 && t.p50 == 0 && t.p95 == 0 && t.max == 0);
}

/* 100003 values in random order: the selection's p50 and p95 are the sort's. */
static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void test_stat4_matches_sort(void **state)
{
    (void)state;
    size_t n = 100003;
    double *v = malloc(n * sizeof(double));
    unsigned seed = 12345;
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        /* many ties (65536 values over 100003), each exact in 7 significant digits */
        v[i] = (double)(seed >> 8 & 0xffff) / 4;
    }
    struct series s = series_of(v, n);
    float *sorted = malloc(n * sizeof(float));
    memcpy(sorted, s.v, n * sizeof(float));
    qsort(sorted, n, sizeof(float), cmp_float);
    struct rt_stat4 t;
    summary_stat4(&s, &t);
    /* ranks ceil(0.5 n) = 50002 and ceil(0.95 n) = 95003 (1-based) */
    assert_true(t.p50 == sorted[50001]);
    assert_true(t.p95 == sorted[95002]);
    assert_true(t.max == sorted[n - 1]);
    free(sorted);
    free(s.v);
    free(v);
}

/* --- summary_spark_text ------------------------------------------------------------------------
 */

#define B1 "\u2581"
#define B2 "\u2582"
#define B3 "\u2583"
#define B4 "\u2584"
#define B5 "\u2585"
#define B6 "\u2586"
#define B7 "\u2587"
#define B8 "\u2588"

static void test_spark_eight_levels(void **state)
{
    (void)state;
    /* 0..7 of a top of 7: level = v / 7 x 7 + 0.5, truncated: v itself */
    static const double v[] = {0, 1, 2, 3, 4, 5, 6, 7};
    static const int has[] = {1, 1, 1, 1, 1, 1, 1, 1};
    char out[SPARK_TEXT_MAX];
    double max;
    assert_int_equal(summary_spark_text(v, has, 8, out, &max), 1);
    assert_string_equal(out, B1 B2 B3 B4 B5 B6 B7 B8);
    assert_true(max == 7);
}

static void test_spark_rounding(void **state)
{
    (void)state;
    /* top 14, level = v / 14 x 7 + 0.5 truncated: 0.9 -> 0.95 -> 0; 1.1 -> 1.05 -> 1; 12.9 ->
     * 6.95 -> 6; 13.1 -> 7.05 -> 7 */
    static const double v[] = {0.9, 1.1, 12.9, 13.1, 14};
    static const int has[] = {1, 1, 1, 1, 1};
    char out[SPARK_TEXT_MAX];
    double max;
    summary_spark_text(v, has, 5, out, &max);
    assert_string_equal(out, B1 B2 B7 B8 B8);
    assert_true(max == 14);
}

static void test_spark_blanks(void **state)
{
    (void)state;
    /* a stretch without a sample is a blank, and its value (999) is not the top */
    static const double v[] = {1, 999, 2, 0};
    static const int has[] = {1, 0, 1, 0};
    char out[SPARK_TEXT_MAX];
    double max;
    assert_int_equal(summary_spark_text(v, has, 4, out, &max), 1);
    /* top 2: 1 -> 3.5 + 0.5 = 4 -> level 4 */
    assert_string_equal(out, B5 " " B8 " ");
    assert_true(max == 2);
}

static void test_spark_zeros_and_negatives(void **state)
{
    (void)state;
    char out[SPARK_TEXT_MAX];
    double max;
    /* all zeros: a top of 0, every stretch the lowest block (not a division by zero) */
    static const double z[] = {0, 0, 0};
    static const int has3[] = {1, 1, 1};
    assert_int_equal(summary_spark_text(z, has3, 3, out, &max), 1);
    assert_string_equal(out, B1 B1 B1);
    assert_true(max == 0);
    /* a negative value is drawn as the lowest block; the scale starts at 0 */
    static const double n[] = {-5, 10, 5};
    summary_spark_text(n, has3, 3, out, &max);
    assert_string_equal(out, B1 B8 B5); /* 5: 3.5 + 0.5 = 4 -> level 4 */
    assert_true(max == 10);
    /* all negative: the top is 0, not the largest negative value */
    static const double allneg[] = {-1, -2, -3};
    summary_spark_text(allneg, has3, 3, out, &max);
    assert_string_equal(out, B1 B1 B1);
    assert_true(max == 0);
}

static void test_spark_none(void **state)
{
    (void)state;
    static const double v[] = {5, 6};
    static const int has[] = {0, 0};
    char out[SPARK_TEXT_MAX] = "junk";
    double max = 1;
    assert_int_equal(summary_spark_text(v, has, 2, out, &max), 0);
    assert_string_equal(out, "");
    assert_true(isnan(max));
    assert_int_equal(summary_spark_text(v, has, 0, out, &max), 0);
}

static void test_spark_capped_at_forty(void **state)
{
    (void)state;
    /* more stretches than a line has: RT_SPARK_N blocks (3 bytes each), no more */
    double v[RT_SPARK_N + 5];
    int has[RT_SPARK_N + 5];
    for (int i = 0; i < RT_SPARK_N + 5; i++) {
        v[i] = i % 2 ? 8 : 4;
        has[i] = 1;
    }
    char out[SPARK_TEXT_MAX];
    double max;
    assert_int_equal(summary_spark_text(v, has, RT_SPARK_N + 5, out, &max), 1);
    assert_int_equal(strlen(out), RT_SPARK_N * 3);
    /* 4 of 8: 3.5 + 0.5 = 4 -> level 4; 8 -> level 7 */
    assert_memory_equal(out, B5 B8 B5 B8, 12);
    assert_memory_equal(out + (RT_SPARK_N - 1) * 3, B8, 3);
    assert_true(max == 8);
    /* exactly RT_SPARK_N: the buffer's full size */
    assert_int_equal(summary_spark_text(v, has, RT_SPARK_N, out, &max), 1);
    assert_int_equal(strlen(out), RT_SPARK_N * 3);
    assert_int_equal(SPARK_TEXT_MAX, RT_SPARK_N * 3 + 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stat4_one_to_twenty),
        cmocka_unit_test(test_stat4_small_counts),
        cmocka_unit_test(test_stat4_ties),
        cmocka_unit_test(test_stat4_float_round_trip),
        cmocka_unit_test(test_stat4_p95_not_above_max),
        cmocka_unit_test(test_stat4_empty),
        cmocka_unit_test(test_stat4_matches_sort),
        cmocka_unit_test(test_spark_eight_levels),
        cmocka_unit_test(test_spark_rounding),
        cmocka_unit_test(test_spark_blanks),
        cmocka_unit_test(test_spark_zeros_and_negatives),
        cmocka_unit_test(test_spark_none),
        cmocka_unit_test(test_spark_capped_at_forty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
