/* test_utf8.c - UTF-8 validation and repair (utf8.h): well-formed text passes untouched, each
 * kind of ill-formed sequence is found at its first byte and repaired the way Python's
 * bytes.decode("utf-8", "replace") does (one U+FFFD per maximal subpart). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/base/utf8.h"
#include "testlib.h"

#define FFFD "\xEF\xBF\xBD"

static void test_valid(void **state)
{
    (void)state;
    static const char *const ok[] = {
        "",
        "plain ascii, \t\r\n \x01 \x7f",
        "\xC2\x80 \xDF\xBF",                      /* 2-byte ends */
        "\xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80", /* around the surrogates */
        "\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF",      /* U+10000, U+10FFFF */
        "ünï 日本 🚀",
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        size_t n = strlen(ok[i]);
        assert_int_equal(rt_utf8_check(ok[i], n), n);
        char *r = rt_utf8_repair(ok[i], n);
        assert_string_equal(r, ok[i]);
        free(r);
    }
}

static void test_invalid(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t bad;
        const char *repaired;
    } cases[] = {
        {"ab\xFF", 2, "ab" FFFD},
        {"\x80x", 0, FFFD "x"},                       /* lone continuation */
        {"\xC0\xAF", 0, FFFD FFFD},                   /* overlong '/' */
        {"\xC1\xBF", 0, FFFD FFFD},                   /* overlong */
        {"\xE0\x80\xAF", 0, FFFD FFFD FFFD},          /* overlong 3-byte */
        {"\xED\xA0\x80", 0, FFFD FFFD FFFD},          /* surrogate U+D800 */
        {"\xF0\x80\x80\xAF", 0, FFFD FFFD FFFD FFFD}, /* overlong 4-byte */
        {"\xF4\x90\x80\x80", 0, FFFD FFFD FFFD FFFD}, /* above U+10FFFF */
        {"\xF5\x80", 0, FFFD FFFD},                   /* no such lead byte */
        {"x\xE6\x97", 1, "x" FFFD},                   /* truncated at the end: one */
        {"\xE6\x97x\xF0\x9F\x9A", 0, FFFD "x" FFFD},  /* truncated, then again */
        {"\xC3(", 0, FFFD "("},                       /* lead byte, then ASCII */
        {"ok\xF0\x9F\x9A\x80\xFE", 6, "ok\xF0\x9F\x9A\x80" FFFD},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        size_t n = strlen(cases[i].in);
        if (rt_utf8_check(cases[i].in, n) != cases[i].bad)
            fail_msg("case %zu: first bad byte %zu, expected %zu", i, rt_utf8_check(cases[i].in, n),
                     cases[i].bad);
        char *r = rt_utf8_repair(cases[i].in, n);
        if (strcmp(r, cases[i].repaired) != 0)
            fail_msg("case %zu: repaired differently", i);
        assert_int_equal(rt_utf8_check(r, strlen(r)), strlen(r));
        free(r);
    }
    /* a length shorter than the string: the sequence cut by it is ill-formed */
    assert_int_equal(rt_utf8_check("\xC3\xA9", 1), 0);
    char *r = rt_utf8_repair("a\xC3\xA9", 2);
    assert_string_equal(r, "a" FFFD);
    free(r);
}

/* text for a terminal: controls replaced, columns cut and counted by display width (libc's
 * wcwidth in C.UTF-8): wide characters and emoji 2, combining marks 0 */
static void test_printable(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t max;
        const char *out;
        size_t cols;
    } cases[] = {
        {"train", 0, "train", 5},
        {"a\x1b[2Jb", 0, "a?[2Jb", 6},             /* ESC: no screen clearing */
        {"\x1b]0;title\x07", 0, "?]0;title?", 10}, /* OSC, BEL */
        {"tab\there\r\n\x7f", 0, "tab?here???", 11},
        {"c1\xC2\x9B"
         "31m",
         0, "c1?31m", 6},                       /* U+009B CSI */
        {"\xC2\xA0nbsp", 0, "\xC2\xA0nbsp", 5}, /* U+00A0 is printable */
        {"caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC", 0, "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC", 9},
        {"bad\xFF"
         "byte",
         0, "bad?byte", 8},
        {"cut\xE6\x97", 0, "cut", 3}, /* a sequence truncated at the end */
        {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 4, "\xE6\x97\xA5\xE6\x9C\xAC", 4},
        {"abcdefghijklmnopqrstuvwxyz", 16, "abcdefghijklmnop", 16},
        {"", 0, "", 0},
        /* emoji: two columns */
        {"\xF0\x9F\x9A\x80 go", 0, "\xF0\x9F\x9A\x80 go", 5},
        /* a CJK character that would pass the last column is left out whole */
        {"a\xE6\x97\xA5\xE6\x9C\xAC", 4, "a\xE6\x97\xA5", 3},
        {"\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 5, "\xE6\x97\xA5\xE6\x9C\xAC", 4},
        {"\xF0\x9F\x9A\x80\xF0\x9F\x9A\x80", 3, "\xF0\x9F\x9A\x80", 2},
        /* a combining mark (U+0301) takes no column and stays with its letter at the cut */
        {"e\xCC\x81tude", 0, "e\xCC\x81tude", 5},
        {"ab\xCC\x81zz", 2, "ab\xCC\x81", 2},
        /* fullwidth forms and Hangul are wide too; a zero width space is not */
        {"\xEF\xBC\xA1\xEA\xB0\x80", 0, "\xEF\xBC\xA1\xEA\xB0\x80", 4},
        {"a\xE2\x80\x8Bz", 0, "a\xE2\x80\x8Bz", 2},
        /* what replaces a control takes its one column */
        {"\x1b\xE6\x97\xA5", 2, "?", 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%s", cases[i].in);
        size_t n = rt_utf8_printable(buf, cases[i].max);
        assert_string_equal(buf, cases[i].out);
        if (n != cases[i].cols)
            fail_msg("case %zu ('%s'): %zu columns, expected %zu", i, cases[i].in, n,
                     cases[i].cols);
    }
}

/* Whether this process has locale data mapped (glibc maps a loaded locale's LC_CTYPE file). */
static int locale_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    int found = 0;
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, "/locale/") != NULL;
    if (f)
        fclose(f);
    return found;
}

/* The child's side of the test below, in a new process (nothing loaded a locale yet): 0 when
 * ASCII text did not load C.UTF-8 and a CJK text did (where the system has it), else 1 or 2. */
static int ascii_child(void)
{
    char ascii[] = "run 'make -j8' exited 0\t!";
    if (rt_utf8_printable(ascii, 0) != 25 || strcmp(ascii, "run 'make -j8' exited 0?!") != 0 ||
        locale_mapped())
        return 1;
    char wide[] = "\xE6\x97\xA5\xE6\x9C\xAC";
    size_t cols = rt_utf8_printable(wide, 0);
    if (access("/usr/lib/locale/C.utf8/LC_CTYPE", R_OK) == 0 && (cols != 4 || !locale_mapped()))
        return 2;
    return 0;
}

/* ASCII text is made printable without loading C.UTF-8 (its files read and mapped: some 60 us
 * of every end-of-run line); the first wider character loads it. This test binary runs again
 * as the child, so that no earlier test's locale is there already. */
static void test_printable_ascii_loads_no_locale(void **state)
{
    (void)state;
    int st = fx_rerun_self("RT_TEST_UTF8_CHILD");
    if (st == 1)
        fail_msg("ASCII text loaded the C.UTF-8 locale");
    if (st == 2)
        fail_msg("a CJK text was not measured in C.UTF-8");
    assert_int_equal(st, 0);
}

int main(void)
{
    if (getenv("RT_TEST_UTF8_CHILD"))
        return ascii_child();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_printable),
        cmocka_unit_test(test_printable_ascii_loads_no_locale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
