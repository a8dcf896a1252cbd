/* test_utf8.c - UTF-8 validation and repair (utf8.h): well-formed text passes untouched, each
 * kind of ill-formed sequence is found at its first byte and repaired the way Python's
 * bytes.decode("utf-8", "replace") does (one U+FFFD per maximal subpart). */
#include <stdlib.h>
#include <string.h>

#include "rtrack/utf8.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_invalid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
