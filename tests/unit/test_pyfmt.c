/* test_pyfmt.c - Python repr() and round() of floats. The expected strings are what CPython
 * 3.11 prints for repr(x) / repr(round(x, n)). */
#include <math.h>
#include <string.h>

#include "rtrack/base/pyfmt.h"
#include "testlib.h"

struct rc {
    double x;
    const char *repr;
};

static void test_repr(void **state)
{
    (void)state;
    static const struct rc cases[] = {
        {0.0, "0.0"},
        {-0.0, "-0.0"},
        {1.0, "1.0"},
        {0.1 + 0.2, "0.30000000000000004"},
        {0.22, "0.22"},
        {23581.3125, "23581.3125"},
        {1795663099.754, "1795663099.754"},
        {1795666500.0, "1795666500.0"},
        {296.0, "296.0"},
        {1e-5, "1e-05"},
        {1.5e-7, "1.5e-07"},
        {0.0001, "0.0001"},
        {0.00012, "0.00012"},
        {123456789.125, "123456789.125"},
        {1e16, "1e+16"},
        {1.5e16, "1.5e+16"},
        {9999999999999998.0, "9999999999999998.0"},
        {100.0, "100.0"},
        {1e22, "1e+22"},
        {-2.5, "-2.5"},
        {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e+308"},
        {0.5, "0.5"},
        {2.0 / 3.0, "0.6666666666666666"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[RT_PYFLOAT_MAX];
        size_t n = rt_py_repr(cases[i].x, buf);
        if (strcmp(buf, cases[i].repr) != 0 || n != strlen(buf))
            fail_msg("repr(%.17g) = '%s', Python says '%s'", cases[i].x, buf, cases[i].repr);
    }
}

struct rr {
    double x;
    int n;
    const char *repr;
};

static void test_round(void **state)
{
    (void)state;
    static const struct rr cases[] = {
        {3072.03125, 4, "3072.0312"}, /* an exact tie goes to even */
        {136.09375, 4, "136.0938"},   /* tie, up to even */
        {2.5, 0, "2.0"},
        {3.5, 0, "4.0"},
        {0.125, 2, "0.12"},
        {0.375, 2, "0.38"},
        {2.675, 2, "2.67"},                   /* 2.675 is 2.67499999... in binary */
        {1795666500.0005, 3, "1795666500.0"}, /* stored as ...00049996 */
        {1.0 / 3.0, 6, "0.333333"},
        {0.0001, 4, "0.0001"},
        {0.00004999, 4, "0.0"},
        {0.00005, 4, "0.0001"},
        {23581.31249, 4, "23581.3125"},
        {184.884999, 2, "184.88"},
        {-0.0, 2, "-0.0"},
        {1e-7, 6, "0.0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[RT_PYFLOAT_MAX];
        rt_py_repr(rt_py_round(cases[i].x, cases[i].n), buf);
        if (strcmp(buf, cases[i].repr) != 0)
            fail_msg("round(%.17g, %d) = '%s', Python says '%s'", cases[i].x, cases[i].n, buf,
                     cases[i].repr);
    }
}

/* The one-pass repr(round()) agrees with round() then repr() on many values, including the
 * awkward ones (large magnitudes, ties, tiny values that need scientific notation). */
static void test_round_repr_agrees(void **state)
{
    (void)state;
    static const double fixed[] = {0.0,
                                   -0.0,
                                   1795663099.754,
                                   3072.03125,
                                   136.09375,
                                   1e-5,
                                   5e-5,
                                   0.00012,
                                   2.675,
                                   1234567890123456.8,
                                   9007199254740993.0,
                                   99999.99995,
                                   1e15 + 0.3,
                                   123456789.125,
                                   0.30000000000000004,
                                   4.5e-7,
                                   1e16,
                                   -2.5,
                                   1795666500.0005};
    unsigned long long seed = 88172645463325252ULL;
    for (int k = 0; k < 200000; k++) {
        double x;
        if (k < (int)(sizeof(fixed) / sizeof(fixed[0]))) {
            x = fixed[k];
        } else {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            double mant = (double)(seed >> 11) / 9007199254740992.0;
            int e = (int)(seed % 40) - 12;
            x = mant * pow(10.0, e);
        }
        for (int nd = 0; nd <= 6; nd++) {
            char a[RT_PYFLOAT_MAX], b[RT_PYFLOAT_MAX];
            size_t la;
            int sign = rt_py_round_repr(x, nd, a, &la);
            double r = rt_py_round(x, nd);
            rt_py_repr(r, b);
            if (strcmp(a, b) != 0 || la != strlen(a) || sign != (r > 0) - (r < 0))
                fail_msg("round_repr(%.17g, %d) = '%s', round then repr = '%s'", x, nd, a, b);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repr),
        cmocka_unit_test(test_round),
        cmocka_unit_test(test_round_repr_agrees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
