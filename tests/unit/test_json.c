/* test_json.c - the JSON reader (base/json.h) the HTTP clients read their answers with: values
 * and types at paths, absent paths, documents that are not JSON, bytes that are not UTF-8, a
 * large document, and the element search cloud discovery uses on OVH's services list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/json.h"
#include "rtrack/base/util.h"
#include "testlib.h"

static struct rt_json *open_str(const char *s)
{
    char err[128] = "";
    struct rt_json *j = rt_json_open(s, strlen(s), err, sizeof(err));
    if (!j)
        fail_msg("rt_json_open: %s", err);
    return j;
}

/* The type at path and its value ("<none>" when no value came back). */
static void assert_at(struct rt_json *j, const char *path, enum rt_json_type want_type,
                      const char *want_value)
{
    char *v = (char *)"junk";
    enum rt_json_type t = rt_json_get(j, path, &v);
    if (t != want_type)
        fail_msg("%s: type %d, want %d", path, (int)t, (int)want_type);
    if (!want_value) {
        if (v)
            fail_msg("%s: value '%s', want none", path, v);
    } else {
        if (!v)
            fail_msg("%s: no value, want '%s'", path, want_value);
        assert_string_equal(v, want_value);
    }
    free(v);
    /* without a value pointer: the same type */
    assert_int_equal(rt_json_get(j, path, NULL), want_type);
}

static void test_values(void **state)
{
    (void)state;
    struct rt_json *j = open_str(
        "{\"s\": \"caf\\u00e9 \\\"q\\\"\", \"i\": 42, \"neg\": -7, \"r\": 1.5, \"big\": 1.5e300,"
        " \"t\": true, \"f\": false, \"n\": null, \"empty\": \"\","
        " \"o\": {\"a\": [1, 2, {\"b\": \"deep\"}], \"x\": {}},"
        " \"instance-v2-id\": \"v2\", \"arr\": [ \"a\" , 2 ]}");
    assert_at(j, "$.s", RT_JSON_TEXT, "caf\xc3\xa9 \"q\"");
    assert_at(j, "$.i", RT_JSON_INTEGER, "42");
    assert_at(j, "$.neg", RT_JSON_INTEGER, "-7");
    assert_at(j, "$.r", RT_JSON_REAL, "1.5");
    assert_at(j, "$.big", RT_JSON_REAL, "1.5e+300");
    assert_at(j, "$.t", RT_JSON_TRUE, "1");
    assert_at(j, "$.f", RT_JSON_FALSE, "0");
    assert_at(j, "$.n", RT_JSON_NULL, NULL);
    assert_at(j, "$.empty", RT_JSON_TEXT, "");
    assert_at(j, "$.o.a[2].b", RT_JSON_TEXT, "deep");
    assert_at(j, "$.o.a[1]", RT_JSON_INTEGER, "2");
    assert_at(j, "$.\"instance-v2-id\"", RT_JSON_TEXT, "v2");
    /* objects and arrays come back as compact JSON */
    assert_at(j, "$.arr", RT_JSON_ARRAY, "[\"a\",2]");
    assert_at(j, "$.o.x", RT_JSON_OBJECT, "{}");
    assert_at(j, "$.o", RT_JSON_OBJECT, "{\"a\":[1,2,{\"b\":\"deep\"}],\"x\":{}}");
    char *whole = NULL;
    assert_int_equal(rt_json_get(j, "$", &whole), RT_JSON_OBJECT);
    assert_non_null(whole);
    assert_non_null(strstr(whole, "\"instance-v2-id\":\"v2\""));
    free(whole);
    rt_json_close(j);

    /* a top-level array and scalar */
    j = open_str("[{\"id\": 1}, {\"id\": 2}]");
    assert_at(j, "$", RT_JSON_ARRAY, "[{\"id\":1},{\"id\":2}]");
    assert_at(j, "$[0]", RT_JSON_OBJECT, "{\"id\":1}");
    assert_at(j, "$[1].id", RT_JSON_INTEGER, "2");
    rt_json_close(j);
    j = open_str("  \"just text\"  ");
    assert_at(j, "$", RT_JSON_TEXT, "just text");
    rt_json_close(j);
    rt_json_close(NULL);
}

static void test_missing(void **state)
{
    (void)state;
    struct rt_json *j = open_str("{\"a\": {\"b\": 1}, \"l\": [1]}");
    assert_at(j, "$.nope", RT_JSON_ABSENT, NULL);
    assert_at(j, "$.a.nope", RT_JSON_ABSENT, NULL);
    assert_at(j, "$.a.b.c", RT_JSON_ABSENT, NULL);
    assert_at(j, "$.l[1]", RT_JSON_ABSENT, NULL);
    assert_at(j, "$.l[0]", RT_JSON_INTEGER, "1");
    /* a malformed path is SQLite's error, with its reason */
    assert_at(j, "no dollar", RT_JSON_ERROR, NULL);
    assert_non_null(strstr(rt_json_errmsg(j), "JSON path error"));
    /* and the document still answers afterwards */
    assert_at(j, "$.a.b", RT_JSON_INTEGER, "1");
    rt_json_close(j);

    /* an empty array: nothing at [0] */
    j = open_str("[]");
    assert_at(j, "$", RT_JSON_ARRAY, "[]");
    assert_at(j, "$[0]", RT_JSON_ABSENT, NULL);
    rt_json_close(j);
}

static void test_not_json(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "",
        "   ",
        "<html><body>502 Bad Gateway</body></html>",
        "{\"a\": 1",
        "{\"a\": 1}}",
        "{a: 1}", /* JSON5, not JSON */
        "{\"a\": 1,}",
        "[1, 2] trailing",
        "nul",
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(bad); i++) {
        struct rt_json *j = open_str(bad[i]);
        assert_at(j, "$", RT_JSON_INVALID, NULL);
        assert_at(j, "$.a", RT_JSON_INVALID, NULL);
        /* an invalid path is not even looked at */
        assert_at(j, "no dollar", RT_JSON_INVALID, NULL);
        static const char *const m[][2] = {{"$.a", "1"}};
        assert_int_equal(rt_json_find(j, "$", m, 1), 0);
        rt_json_close(j);
    }
    /* no text at all */
    char err[64] = "";
    struct rt_json *j = rt_json_open(NULL, 0, err, sizeof(err));
    assert_non_null(j);
    assert_at(j, "$", RT_JSON_INVALID, NULL);
    rt_json_close(j);
    /* only len bytes are read: the rest of the buffer is not the document */
    const char *text = "{\"a\": 1}GARBAGE";
    j = rt_json_open(text, 8, err, sizeof(err));
    assert_non_null(j);
    assert_at(j, "$.a", RT_JSON_INTEGER, "1");
    rt_json_close(j);
    j = rt_json_open(text, 7, err, sizeof(err));
    assert_non_null(j);
    assert_at(j, "$", RT_JSON_INVALID, NULL);
    rt_json_close(j);
}

static void test_invalid_utf8(void **state)
{
    (void)state;
    /* SQLite's JSON parser does not check UTF-8: bytes that are not UTF-8 inside a string come
     * back as they were (a caller that needs UTF-8 checks it, as rt_utf8_check does) */
    static const char doc[] = "{\"a\": \"x\x80\xff y\", \"b\": \"\xc3\x28\", \"ok\": 1}";
    struct rt_json *j = open_str(doc);
    assert_at(j, "$.a", RT_JSON_TEXT, "x\x80\xff y");
    assert_at(j, "$.b", RT_JSON_TEXT, "\xc3\x28");
    assert_at(j, "$.ok", RT_JSON_INTEGER, "1");
    rt_json_close(j);
    /* outside a string they are not JSON */
    j = open_str("{\"a\": \x80}");
    assert_at(j, "$", RT_JSON_INVALID, NULL);
    rt_json_close(j);
    /* a NUL byte inside the document: SQLite's JSON functions read the text up to it */
    static const char nul[] = "{\"a\": 1}\0{\"b\": 2}";
    char err[64];
    j = rt_json_open(nul, sizeof(nul) - 1, err, sizeof(err));
    assert_non_null(j);
    assert_at(j, "$.a", RT_JSON_INTEGER, "1");
    assert_at(j, "$.b", RT_JSON_ABSENT, NULL);
    rt_json_close(j);
}

static void test_large(void **state)
{
    (void)state;
    /* 200 000 servers, about 9 MiB: more than any answer the clients accept (4 MiB) */
    enum { N = 200000 };
    struct rt_buf b = {0};
    rt_buf_puts(&b, "{\"servers\": [");
    for (int i = 0; i < N; i++) {
        char one[96];
        snprintf(one, sizeof(one), "%s{\"id\": %d, \"name\": \"server-%06d\", \"vcpus\": %d}",
                 i ? ", " : "", i, i, i % 64);
        rt_buf_puts(&b, one);
    }
    rt_buf_puts(&b, "], \"last\": \"end\"}");
    assert_true(b.len > 8u * 1024 * 1024);
    char err[64];
    struct rt_json *j = rt_json_open(b.p, b.len, err, sizeof(err));
    assert_non_null(j);
    assert_at(j, "$.servers[0].name", RT_JSON_TEXT, "server-000000");
    assert_at(j, "$.servers[199999].name", RT_JSON_TEXT, "server-199999");
    assert_at(j, "$.servers[199999].vcpus", RT_JSON_INTEGER, "63");
    assert_at(j, "$.servers[200000]", RT_JSON_ABSENT, NULL);
    assert_at(j, "$.last", RT_JSON_TEXT, "end");
    static const char *const m[][2] = {{"$.name", "server-199998"}};
    assert_int_equal(rt_json_find(j, "$.servers", m, 1), 1);
    /* strings only: the number 62 is not the string "62" */
    static const char *const num[][2] = {{"$.name", "server-199998"}, {"$.vcpus", "62"}};
    assert_int_equal(rt_json_find(j, "$.servers", num, 2), 0);
    char *arr = NULL;
    assert_int_equal(rt_json_get(j, "$.servers", &arr), RT_JSON_ARRAY);
    assert_true(strlen(arr) > 7u * 1024 * 1024);
    free(arr);
    rt_json_close(j);
    rt_buf_free(&b);
}

static void test_find(void **state)
{
    (void)state;
    /* OVH's network_data.json: services[] names its resolver */
    static const char *const dns[][2] = {{"$.type", "dns"}, {"$.address", "213.186.33.99"}};
    static const struct {
        const char *doc;
        int want;
    } cases[] = {
        {"{\"services\": [{\"type\": \"dns\", \"address\": \"213.186.33.99\"}]}", 1},
        {"{\"services\": [1, \"dns\", {\"type\": \"dns\", \"address\": \"8.8.8.8\"},"
         " {\"address\": \"213.186.33.99\", \"type\": \"dns\", \"extra\": [1]}]}",
         1},
        {"{\"services\": [{\"type\": \"dns\", \"address\": \"8.8.8.8\"}]}", 0},
        {"{\"services\": [{\"type\": \"ntp\", \"address\": \"213.186.33.99\"}]}", 0},
        {"{\"services\": [{\"type\": \"dns\"}]}", 0},
        /* a string, not a number or a list that holds one */
        {"{\"services\": [{\"type\": [\"dns\"], \"address\": \"213.186.33.99\"}]}", 0},
        {"{\"services\": []}", 0},
        {"{\"services\": \"dns\"}", 0},
        {"{\"other\": [{\"type\": \"dns\", \"address\": \"213.186.33.99\"}]}", 0},
        /* json_each() walks an object's members as well */
        {"{\"services\": {\"r\": {\"type\": \"dns\", \"address\": \"213.186.33.99\"}}}", 1},
    };
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        struct rt_json *j = open_str(cases[i].doc);
        if (rt_json_find(j, "$.services", dns, 2) != cases[i].want)
            fail_msg("case %zu: want %d", i, cases[i].want);
        rt_json_close(j);
    }
    /* no condition: any object element */
    struct rt_json *j = open_str("{\"l\": [1, {}], \"m\": [1, 2]}");
    assert_int_equal(rt_json_find(j, "$.l", NULL, 0), 1);
    assert_int_equal(rt_json_find(j, "$.m", NULL, 0), 0);
    /* a malformed path: SQLite's error */
    assert_int_equal(rt_json_find(j, "l", NULL, 0), -1);
    assert_non_null(strstr(rt_json_errmsg(j), "JSON path error"));
    rt_json_close(j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),   cmocka_unit_test(test_missing),
        cmocka_unit_test(test_not_json), cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_large),    cmocka_unit_test(test_find),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
