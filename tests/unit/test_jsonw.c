/* test_jsonw.c - the JSON writer (base/jsonw.h): separators, nesting, every kind of value as the
 * summary writes it (numbers as Python's repr, whole ones without ".0", NAN as null), strings
 * escaped, raw values copied, compact stretches (rt_jw_compact) inside a spaced document, and the
 * document read back by the JSON reader (base/json.h). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtrack/base/json.h"
#include "rtrack/base/jsonw.h"
#include "rtrack/base/util.h"
#include "testlib.h"

static char *doc(void (*write)(struct rt_jw *w))
{
    struct rt_buf b = {0};
    struct rt_jw w;
    rt_jw_init(&w, &b);
    write(&w);
    assert_true(rt_jw_done(&w));
    rt_buf_puts(&b, ""); /* NUL-terminated even when empty */
    return b.p;
}

static void write_nested(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_kv_object(w, "run");
    rt_jw_kv_int(w, "id", 3);
    rt_jw_kv_str(w, "mode", NULL);
    rt_jw_kv_bool(w, "in_progress", 0);
    rt_jw_end(w);
    rt_jw_kv_array(w, "list");
    rt_jw_num(w, 1.5);
    rt_jw_object(w);
    rt_jw_end(w);
    rt_jw_array(w);
    rt_jw_end(w);
    rt_jw_str(w, "x");
    rt_jw_end(w);
    rt_jw_kv_null(w, "none");
    rt_jw_kv_raw(w, "command", "[\"sh\",\"-c\"]");
    rt_jw_kv_raw(w, "tags", NULL);
    rt_jw_end(w);
}

static void test_nested(void **state)
{
    (void)state;
    char *s = doc(write_nested);
    assert_string_equal(s, "{\"run\": {\"id\": 3, \"mode\": null, \"in_progress\": false}, "
                           "\"list\": [1.5, {}, [], \"x\"], \"none\": null, "
                           "\"command\": [\"sh\",\"-c\"], \"tags\": null}");
    /* and the reader takes it back */
    char err[128];
    struct rt_json *j = rt_json_open(s, strlen(s), err, sizeof(err));
    assert_non_null(j);
    double v;
    assert_int_equal(rt_json_num(j, "$.list[0]", &v), RT_JSON_REAL);
    assert_true(v == 1.5);
    assert_int_equal(rt_json_get(j, "$.command[1]", NULL), RT_JSON_TEXT);
    rt_json_close(j);
    free(s);
}

static void write_numbers(struct rt_jw *w)
{
    rt_jw_array(w);
    const double xs[] = {0, -0.0, 3, 1e15, 9e15, 0.1, 1.0 / 3, 1e-5, 1.5e16, -2.25, NAN, INFINITY};
    for (size_t i = 0; i < RT_ARRAY_LEN(xs); i++)
        rt_jw_num(w, xs[i]);
    rt_jw_int(w, INT64_MIN);
    rt_jw_end(w);
}

static void test_numbers(void **state)
{
    (void)state;
    char *s = doc(write_numbers);
    /* whole numbers below 9e15 as integers, the rest as Python's repr (positional below 1e16),
     * no number for NAN/inf */
    assert_string_equal(
        s, "[0, -0, 3, 1000000000000000, 9000000000000000.0, 0.1, 0.3333333333333333, 1e-05, "
           "1.5e+16, -2.25, null, null, -9223372036854775808]");
    free(s);
}

static void write_strings(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_kv_str(w, "q\"uote", "a\"b\\c\n\t\x01 \xc3\xa9");
    rt_jw_kv_str(w, "", "");
    rt_jw_end(w);
}

static void test_strings(void **state)
{
    (void)state;
    char *s = doc(write_strings);
    /* (control characters as \u00XX, the summary's text since its first version) */
    assert_string_equal(s, "{\"q\\\"uote\": \"a\\\"b\\\\c\\u000a\\u0009\\u0001 \xc3\xa9\", "
                           "\"\": \"\"}");
    free(s);
}

static void write_scalar(struct rt_jw *w)
{
    rt_jw_str(w, "alone");
}

static void test_top_scalar(void **state)
{
    (void)state;
    char *s = doc(write_scalar);
    assert_string_equal(s, "\"alone\"");
    free(s);
}

/* rt_jw_compact: "," and ":" without blanks while on, as summary --compare writes each run's
 * objects; the separator goes with the value after it, so the document around keeps ", " and
 * ": " for what is written while it is off. */
static void write_compact(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_key(w, "run"); /* written before: "run": */
    rt_jw_compact(w, 1);
    rt_jw_object(w);
    rt_jw_kv_int(w, "id", 42);
    rt_jw_kv_str(w, "text", "a, b: c"); /* a string's own ", " and ": " untouched */
    rt_jw_kv_array(w, "list");
    rt_jw_num(w, 1.5);
    rt_jw_null(w);
    rt_jw_end(w);
    rt_jw_kv_object(w, "empty");
    rt_jw_end(w);
    rt_jw_end(w);
    rt_jw_compact(w, 0);
    rt_jw_kv_array(w, "values");
    rt_jw_int(w, 1);
    rt_jw_compact(w, 1);
    rt_jw_array(w); /* its separator from the first element: "," */
    rt_jw_int(w, 2);
    rt_jw_int(w, 3);
    rt_jw_end(w);
    rt_jw_compact(w, 0);
    rt_jw_int(w, 4); /* ", " again */
    rt_jw_end(w);
    rt_jw_kv_bool(w, "last", 1);
    rt_jw_end(w);
}

static void test_compact(void **state)
{
    (void)state;
    char *s = doc(write_compact);
    assert_string_equal(s, "{\"run\": {\"id\":42,\"text\":\"a, b: c\",\"list\":[1.5,null],"
                           "\"empty\":{}}, \"values\": [1,[2,3], 4], \"last\": true}");
    char err[128];
    struct rt_json *j = rt_json_open(s, strlen(s), err, sizeof(err));
    assert_non_null(j);
    double v;
    assert_int_equal(rt_json_num(j, "$.values[1][1]", &v), RT_JSON_INTEGER);
    assert_true(v == 3);
    assert_int_equal(rt_json_get(j, "$.run.list[1]", NULL), RT_JSON_NULL);
    rt_json_close(j);
    free(s);
}

/* A whole document compact: nothing but the values' own text. */
static void write_all_compact(struct rt_jw *w)
{
    rt_jw_compact(w, 1);
    rt_jw_array(w);
    rt_jw_object(w);
    rt_jw_kv_str(w, "k", NULL);
    rt_jw_kv_num(w, "n", NAN);
    rt_jw_end(w);
    rt_jw_str(w, "x");
    rt_jw_end(w);
}

static void test_compact_whole(void **state)
{
    (void)state;
    char *s = doc(write_all_compact);
    assert_string_equal(s, "[{\"k\":null,\"n\":null},\"x\"]");
    free(s);
}

/* A misuse aborts (a bug of the caller, never of the data): each in a child process. */
static void misuse_member_without_key(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_int(w, 1);
}
static void misuse_key_in_array(struct rt_jw *w)
{
    rt_jw_array(w);
    rt_jw_key(w, "k");
}
static void misuse_end_too_many(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_end(w);
    rt_jw_end(w);
}
static void misuse_key_without_value(struct rt_jw *w)
{
    rt_jw_object(w);
    rt_jw_key(w, "k");
    rt_jw_end(w);
}
static void misuse_two_documents(struct rt_jw *w)
{
    rt_jw_null(w);
    rt_jw_null(w);
}

static void test_misuse_aborts(void **state)
{
    (void)state;
    void (*const cases[])(struct rt_jw *) = {misuse_member_without_key, misuse_key_in_array,
                                             misuse_end_too_many, misuse_key_without_value,
                                             misuse_two_documents};
    for (size_t i = 0; i < RT_ARRAY_LEN(cases); i++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            if (!freopen("/dev/null", "w", stderr))
                _exit(2);
            struct rt_buf b = {0};
            struct rt_jw w;
            rt_jw_init(&w, &b);
            cases[i](&w);
            _exit(0); /* not reached when the writer aborts */
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
            fail_msg("misuse case %zu did not abort (status %d)", i, st);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nested),        cmocka_unit_test(test_numbers),
        cmocka_unit_test(test_strings),       cmocka_unit_test(test_top_scalar),
        cmocka_unit_test(test_misuse_aborts), cmocka_unit_test(test_compact),
        cmocka_unit_test(test_compact_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
