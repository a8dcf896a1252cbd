/* test_fmt.c - the one formatter (fmt.h) of summary, report, runs and the end-of-run line:
 * figures to three significant digits, binary units, "1 vCPU" / "2 vCPUs", commands quoted as
 * a shell takes them back, lines shortened in the middle. Every expected string is written
 * out by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "testlib.h"

static void test_figures(void **state)
{
    (void)state;
    char b[64];
    /* three significant digits; the 9.995 and 99.95 edges round up into the next width */
    assert_string_equal(rt_fmt_num(b, sizeof(b), 0.8149), "0.81");
    assert_string_equal(rt_fmt_num(b, sizeof(b), 1.98), "1.98");
    assert_string_equal(rt_fmt_num(b, sizeof(b), 9.996), "10.0");
    assert_string_equal(rt_fmt_num(b, sizeof(b), 35.49), "35.5");
    assert_string_equal(rt_fmt_num(b, sizeof(b), 99.96), "100");
    assert_string_equal(rt_fmt_num(b, sizeof(b), 205.4), "205");
    assert_string_equal(rt_fmt_num(b, sizeof(b), -0.5), "-0.50");
    assert_string_equal(rt_fmt_num(b, sizeof(b), NAN), "-");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), 0.4712), "0.47 %");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), 41.57), "41.6 %");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), 100), "100 %");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), NAN), "-");
    /* a percentage takes the same widths by its size, sign aside (--compare's change in per
     * cent falls as well as rises), and an infinity is no figure either */
    assert_string_equal(rt_fmt_pct(b, sizeof(b), 9.996), "10.0 %");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), -12.34), "-12.3 %");
    assert_string_equal(rt_fmt_pct(b, sizeof(b), -INFINITY), "-");
    assert_string_equal(rt_fmt_num(b, sizeof(b), INFINITY), "-");
    /* the one MiB figure of summary and report: 805.999 is 806.0 in both */
    assert_string_equal(rt_fmt_mib(b, sizeof(b), 805.999), "806.0 MiB");
    assert_string_equal(rt_fmt_mib(b, sizeof(b), 1536), "1.50 GiB");
    assert_string_equal(rt_fmt_bytes(b, sizeof(b), 2048, "/s"), "2.00 KiB/s");
    assert_string_equal(rt_fmt_duration(b, sizeof(b), 239), "3m59s");
}

static void test_count(void **state)
{
    (void)state;
    char b[64];
    assert_string_equal(rt_fmt_count(b, sizeof(b), 1, "vCPU"), "1 vCPU");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 2, "vCPU"), "2 vCPUs");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 0, "GPU"), "0 GPUs");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 0.5, "vCPU"), "0.50 vCPUs");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 1, "process"), "1 process");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 12, "process"), "12 processes");
    assert_string_equal(rt_fmt_count(b, sizeof(b), 1195, "sample"), "1195 samples");
}

static void test_command(void **state)
{
    (void)state;
    static const struct {
        const char *json, *out;
    } cases[] = {
        {"[\"make\",\"-j2\"]", "make -j2"},
        {"[\"sh\",\"-c\",\"exit 3\"]", "sh -c 'exit 3'"},
        {"[\"echo\",\"it's\"]", "echo 'it'\\''s'"},
        {"[\"a\",\"\"]", "a ''"},
        {"[\"x=1,y:2@h%/p+q.-_\"]", "x=1,y:2@h%/p+q.-_"},
        {"[\"$HOME\",\"a*b\",\"~\"]", "'$HOME' 'a*b' '~'"},
        {"[\"日本\"]", "'日本'"},
        /* a script's newline and tab, a quote and a backslash beside them, ESC */
        {"[\"sh\",\"-c\",\"a &\\n\\tb 'c' \\\\\\u001b\"]", "sh -c $'a &\\n\\tb \\'c\\' \\\\\\x1b'"},
        {"[]", ""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *q = rt_fmt_command(cases[i].json);
        assert_non_null(q);
        assert_string_equal(q, cases[i].out);
        free(q);
    }
    assert_null(rt_fmt_command(NULL));
    assert_null(rt_fmt_command("{\"a\": 1}"));
    assert_null(rt_fmt_command("not json"));
}

/* The job's argv in memory, quoted as rt_fmt_command quotes its JSON array (the cases above) */
static void test_argv(void **state)
{
    (void)state;
    char *script[] = {"sh", "-c", "a &\n\tb 'c' \\\x1b"};
    char *mixed[] = {"echo", "it's", "", "x=1,y:2@h%/p+q.-_", "$HOME", "日本"};
    static const struct {
        int n;
        const char *out;
    } cases[] = {
        {3, "sh -c $'a &\\n\\tb \\'c\\' \\\\\\x1b'"},
        {6, "echo 'it'\\''s' '' x=1,y:2@h%/p+q.-_ '$HOME' '日本'"},
        {0, ""},
    };
    char **argvs[] = {script, mixed, NULL};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *q = rt_fmt_argv(argvs[i], cases[i].n);
        assert_string_equal(q, cases[i].out);
        free(q);
    }
}

static void test_shorten(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t cols;
        const char *out;
        size_t width;
    } cases[] = {
        {"make -j2", 20, "make -j2", 8},
        /* 38 columns into 24: the last word (8) fits a third (8): 13 + " … " + 8 */
        {"cc1 -quiet -O2 -o /tmp/cc1.s src/f9.c", 24, "cc1 -quiet -O \u2026 src/f9.c", 24},
        /* no space: the start and "…" */
        {"abcdefghijklmnopqrstuvwxyz", 10, "abcdefghi\u2026", 10},
        /* a last word longer than a third: the start and "…" */
        {"run a-very-long-last-argument", 12, "run a-very-\u2026", 12},
        /* wide characters counted as two columns */
        {"日本語日本語日本語", 9, "日本語日\u2026", 9},
        /* control characters made printable first */
        {"a\tb", 10, "a?b", 3},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", cases[i].in);
        size_t w = rt_fmt_shorten(buf, strlen(buf) + 8, cases[i].cols);
        assert_string_equal(buf, cases[i].out);
        if (w != cases[i].width)
            fail_msg("case %zu: width %zu, expected %zu", i, w, cases[i].width);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_figures), cmocka_unit_test(test_count),
        cmocka_unit_test(test_command), cmocka_unit_test(test_argv),
        cmocka_unit_test(test_shorten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
