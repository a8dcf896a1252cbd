/* test_toml.c - the strict TOML subset parser. */
#include <stdlib.h>
#include <string.h>

#include "rtrack/cli/toml.h"
#include "testlib.h"

static void test_valid(void **state)
{
    (void)state;
    const char *text = "# rtrack config\n"
                       "top = 'x'\n"
                       "[job]\n"
                       "name = \"train \\\"big\\\" \\u00e9\" # trailing comment\n"
                       "pid = 1234\n"
                       "\"quoted key\" = 'C:\\path'\n"
                       "\n"
                       "[tracker]\r\n"
                       "interval_secs = 0.5\n"
                       "quiet = true\n"
                       "big = 1_000\n"
                       "neg = -3e-2\n";
    struct rt_toml_doc doc;
    char err[256];
    assert_int_equal(rt_toml_parse(text, &doc, err, sizeof(err)), 0);
    struct rt_toml_kv *kv = doc.kv;
    assert_int_equal(doc.n, 8);
    assert_int_equal(doc.ntables, 2);
    assert_string_equal(doc.tables[0].name, "job");
    assert_int_equal(doc.tables[0].line, 3);
    assert_string_equal(doc.tables[1].name, "tracker");
    assert_int_equal(doc.tables[1].line, 8);
    assert_string_equal(kv[0].table, "");
    assert_string_equal(kv[0].key, "top");
    assert_string_equal(kv[0].str, "x");
    assert_string_equal(kv[1].table, "job");
    assert_int_equal(kv[1].type, RT_TOML_STRING);
    assert_string_equal(kv[1].str, "train \"big\" \xc3\xa9");
    assert_int_equal(kv[1].line, 4);
    assert_int_equal(kv[2].type, RT_TOML_INT);
    assert_int_equal(kv[2].i, 1234);
    assert_string_equal(kv[3].key, "quoted key");
    assert_string_equal(kv[3].str, "C:\\path");
    assert_string_equal(kv[4].table, "tracker");
    assert_int_equal(kv[4].type, RT_TOML_FLOAT);
    assert_true(kv[4].d == 0.5);
    assert_string_equal(kv[4].str, "0.5");
    assert_int_equal(kv[5].type, RT_TOML_BOOL);
    assert_int_equal(kv[5].b, 1);
    assert_int_equal(kv[6].i, 1000);
    assert_true(kv[7].d == -0.03);
    assert_int_equal(kv[7].line, 12);
    rt_toml_free(&doc);
}

struct bad {
    const char *text;
    const char *err; /* expected "LINE: message" prefix */
};

static void test_errors(void **state)
{
    (void)state;
    static const struct bad cases[] = {
        {"a = 1\nb = \n", "2: expected a value"},
        {"name = unquoted\n", "1: invalid value 'unquoted'"},
        {"[job]\nname = \"x\"\nname = \"y\"\n", "3: duplicate key (first set on line 2)"},
        {"[job]\n[job]\n", "2: table [job] defined twice (first on line 1)"},
        {"a = [1, 2]\n", "1: arrays are not supported"},
        {"a = {b = 1}\n", "1: inline tables are not supported"},
        {"[[x]]\n", "1: arrays of tables are not supported"},
        {"[a.b]\n", "1: dotted table names are not supported"},
        {"a.b = 1\n", "1: dotted keys are not supported"},
        {"a = \"open\n", "1: unterminated string"},
        {"a = \"\"\"x\"\"\"\n", "1: multi-line strings are not supported"},
        {"a = \"bad \\q\"\n", "1: bad escape '\\q' in string"},
        {"a = 1 2\n", "1: unexpected '2' after value"},
        {"\n\n= 3\n", "3: expected a key"},
        {"a 3\n", "1: expected '=' after key"},
        {"a = 1.\n", "1: invalid number '1.'"},
        {"a = 0x1.8p1\n", "1: invalid number '0x1.8p1'"}, /* a hexadecimal float (strtod's) */
        {"a = 1979-05-27\n", "1: invalid value '1979-05-27'"},
        {"a = \"\\ud800\"\n", "1: bad unicode escape"},
        {"[job\n", "1: expected ']'"},
        /* found by fuzz_toml: a '\' or a short \u escape at the very end of the file made the
         * parser read past the terminating NUL */
        {"a = \"x\\", "1: bad escape '\\ ' in string"},
        {"a = \"\\u12", "1: bad \\u escape"},
        /* a byte order mark anywhere but at the start */
        {"a = 1\n\xEF\xBB\xBF"
         "b = 2\n",
         "2: a UTF-8 byte order mark (U+FEFF) belongs only at the start"},
        {"\xEF\xBB\xBF\xEF\xBB\xBF"
         "a = 1\n",
         "1: a UTF-8 byte order mark"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct rt_toml_doc doc;
        char err[256] = "";
        char *text = strdup(cases[i].text); /* on the heap: ASan sees a read past its end */
        int rc = rt_toml_parse(text, &doc, err, sizeof(err));
        free(text);
        if (rc == 0 || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
            fail_msg("case %zu: rc %d, err '%s', expected '%s'", i, rc, err, cases[i].err);
        assert_null(doc.kv);
        assert_int_equal(doc.n, 0);
        assert_int_equal(doc.ntables, 0);
    }
}

/* A UTF-8 byte order mark at the start of the file (Windows editors write one) is skipped; the
 * lines keep their numbers. */
static void test_bom(void **state)
{
    (void)state;
    struct rt_toml_doc doc;
    char err[256] = "";
    assert_int_equal(rt_toml_parse("\xEF\xBB\xBF[job]\nname = \"x\"\n", &doc, err, sizeof(err)), 0);
    assert_int_equal(doc.ntables, 1);
    assert_string_equal(doc.tables[0].name, "job");
    assert_int_equal(doc.n, 1);
    assert_string_equal(doc.kv[0].key, "name");
    assert_int_equal(doc.kv[0].line, 2);
    rt_toml_free(&doc);
    assert_int_equal(rt_toml_parse("\xEF\xBB\xBF", &doc, err, sizeof(err)), 0);
    assert_int_equal(doc.n, 0);
    rt_toml_free(&doc);
    /* U+FEFF inside a string is text like any other */
    assert_int_equal(rt_toml_parse("a = \"\xEF\xBB\xBFx\"\n", &doc, err, sizeof(err)), 0);
    assert_string_equal(doc.kv[0].str, "\xEF\xBB\xBFx");
    rt_toml_free(&doc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_bom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
