/* test_opt.c - the option table (include/rtrack/cli/opt.h): one getopt builder sized from the
 * table (the old one kept 24 entries and dropped the options past them without a word), values
 * set by a row's type, refused with the row's words, faces, and the lines help and
 * `rtrack help --options` print from the same rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/cli/opt.h"
#include "testlib.h"

struct many {
    char *s[30];
};

#define S(i) OPT_STRING("opt-" #i, 0, "V", "a string", struct many, s[i])

/* 30 rows: more than any fixed array of getopt entries the builder once had */
static const struct rt_opt many_opts[] = {
    S(0),  S(1),  S(2),  S(3),  S(4),  S(5),  S(6),  S(7),  S(8),    S(9),  S(10),
    S(11), S(12), S(13), S(14), S(15), S(16), S(17), S(18), S(19),   S(20), S(21),
    S(22), S(23), S(24), S(25), S(26), S(27), S(28), S(29), OPT_END,
};

/* Every option of argv applied through its row; the first status that is not 0. */
static int parse(const struct rt_opt *tbl, unsigned face, void *opts, int argc, char **argv)
{
    struct rt_opt_getopt g;
    struct rt_opt_ctx c = {.cmd = "t", .prefix = "t: ", .face = face, .opts = opts, .where = ""};
    rt_opt_getopt_begin(&g, "t", tbl, face, argc, argv);
    const struct rt_opt *o;
    const char *v;
    int k;
    while ((k = rt_opt_getopt_next(&g, &o, &v)) == 0) {
        c.src = o->name;
        if (rt_opt_set(&c, o, v) != 0) {
            k = -100;
            break;
        }
    }
    rt_opt_getopt_end(&g);
    return k == RT_GETOPT_DONE ? 0 : k;
}

static void test_many_rows(void **state)
{
    (void)state;
    char *argv[62] = {"t"};
    char names[30][16], vals[30][8];
    for (int i = 0; i < 30; i++) {
        snprintf(names[i], sizeof(names[i]), "--opt-%d", i);
        snprintf(vals[i], sizeof(vals[i]), "v%d", i);
        argv[1 + 2 * i] = names[i];
        argv[2 + 2 * i] = vals[i];
    }
    struct many m = {{0}};
    assert_int_equal(parse(many_opts, 0, &m, 61, argv), 0);
    for (int i = 0; i < 30; i++)
        assert_string_equal(m.s[i], vals[i]);
    rt_opt_free(many_opts, &m);
    assert_null(m.s[29]);
}

struct typed {
    char *name;
    int64_t n;
    double secs;
    int flag, fmt;
    char *meta;
};

static int nonempty(const char *v)
{
    return *v != '\0';
}

static const struct rt_opt typed_opts[] = {
    {RT_OPT_ROW("name", 'N', "NAME", "a name"), .type = RT_OPT_STRING,
     .off = offsetof(struct typed, name), .accept = nonempty, .expect = "a file name",
     .faces = RT_FACE_RUN},
    OPT_INT("count", 'c', "N", "a count", struct typed, n, 1, 10, "1 to 10"),
    {RT_OPT_ROW("secs", 0, "S", "seconds"), .type = RT_OPT_DOUBLE,
     .off = offsetof(struct typed, secs), .min = 0, .max = 5, .flags = RT_OPT_ABOVE_MIN,
     .expect = "seconds above 0"},
    OPT_BOOL("flag", 'F', "a flag", struct typed, flag),
    OPT_ENUM("format", 'f', "a|b|c", "a format", struct typed, fmt, "format", "alpha", "beta|b",
             "gamma"),
    {RT_OPT_ROW("meta", 0, "M", "metadata"), .type = RT_OPT_STRING,
     .off = offsetof(struct typed, meta), .flags = RT_OPT_UTF8 | RT_OPT_EMPTY_NULL},
    {RT_OPT_ROW("version", 'V', NULL, "print the version"), .type = RT_OPT_VERSION,
     .faces = RT_FACE_DROPIN},
    OPT_END,
};

static int set(struct typed *t, const char *name, const char *val)
{
    struct rt_opt_ctx c = {.cmd = "t", .prefix = "", .opts = t, .src = name, .where = ""};
    for (const struct rt_opt *o = typed_opts; o->name; o++)
        if (!strcmp(o->name, name))
            return rt_opt_set(&c, o, val);
    fail_msg("no row %s", name);
    return -1;
}

static void test_types(void **state)
{
    (void)state;
    struct typed t = {0};
    assert_int_equal(set(&t, "count", "7"), 0);
    assert_int_equal(t.n, 7);
    assert_int_equal(set(&t, "count", "0"), -1);
    assert_int_equal(set(&t, "count", "11"), -1);
    assert_int_equal(set(&t, "count", "3x"), -1);
    assert_int_equal(t.n, 7);
    assert_int_equal(set(&t, "secs", "0.5"), 0);
    assert_true(t.secs == 0.5);
    assert_int_equal(set(&t, "secs", "0"), -1); /* above min, not at it */
    assert_int_equal(set(&t, "secs", "5.5"), -1);
    assert_int_equal(set(&t, "flag", NULL), 0); /* the flag given */
    assert_int_equal(t.flag, 1);
    assert_int_equal(set(&t, "flag", "off"), 0); /* a variable's value */
    assert_int_equal(t.flag, 0);
    assert_int_equal(set(&t, "flag", "maybe"), -1);
    assert_int_equal(set(&t, "format", "gamma"), 0);
    assert_int_equal(t.fmt, 2);
    assert_int_equal(set(&t, "format", "b"), 0); /* another name of beta */
    assert_int_equal(t.fmt, 1);
    assert_int_equal(set(&t, "format", "delta"), -1);
    assert_int_equal(set(&t, "name", ""), -1);
    assert_int_equal(set(&t, "name", "x.db"), 0);
    assert_string_equal(t.name, "x.db");
    assert_int_equal(set(&t, "meta", "job"), 0);
    assert_string_equal(t.meta, "job");
    assert_int_equal(set(&t, "meta", ""), 0); /* '' unsets */
    assert_null(t.meta);
    assert_int_equal(set(&t, "meta", "\xff"), -1);
    rt_opt_free(typed_opts, &t);
    assert_null(t.name);

    char list[64];
    rt_opt_values_text(&typed_opts[4], list, sizeof(list));
    assert_string_equal(list, "alpha, beta or gamma");
}

/* A row of one face is no option of another; --help is every face's */
static void test_faces(void **state)
{
    (void)state;
    struct typed t = {0};
    char *run[] = {"t", "-N", "a", "-c", "2", "--", "job"};
    assert_int_equal(parse(typed_opts, RT_FACE_RUN, &t, 7, run), 0);
    assert_string_equal(t.name, "a");
    assert_int_equal(t.n, 2);
    assert_int_equal(optind, 6); /* the job's argv after -- */
    char *rec[] = {"t", "--name", "a"};
    assert_int_equal(parse(typed_opts, RT_FACE_RECORD, &t, 3, rec), RT_GETOPT_BAD);
    char *ver[] = {"t", "-V"};
    assert_int_equal(parse(typed_opts, RT_FACE_RUN, &t, 2, ver), RT_GETOPT_BAD);
    struct rt_opt_getopt g;
    const struct rt_opt *o;
    const char *v;
    rt_opt_getopt_begin(&g, "t", typed_opts, RT_FACE_DROPIN, 2, ver);
    assert_int_equal(rt_opt_getopt_next(&g, &o, &v), 0);
    assert_int_equal(o->type, RT_OPT_VERSION);
    rt_opt_getopt_end(&g);
    char *help[] = {"t", "-c", "3", "--help"};
    assert_int_equal(parse(typed_opts, RT_FACE_RECORD, &t, 4, help), RT_GETOPT_HELP);
    char *missing[] = {"t", "--count"};
    assert_int_equal(parse(typed_opts, 0, &t, 2, missing), RT_GETOPT_BAD);
    rt_opt_free(typed_opts, &t);
}

/* The help's lines and the list for the completions, in one order: the face's rows, --help,
 * --version. */
static void test_help_and_list(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    rt_opt_list(f, typed_opts, RT_FACE_DROPIN);
    fclose(f);
    assert_string_equal(text, "--count\t-c\tN\t\n"
                              "--secs\t\tS\t\n"
                              "--flag\t-F\t\t\n"
                              "--format\t-f\ta|b|c\talpha beta gamma\n"
                              "--meta\t\tM\t\n"
                              "--help\t-h\t\t\n"
                              "--version\t-V\t\t\n");
    free(text);
    f = open_memstream(&text, &len);
    rt_opt_help(f, typed_opts, RT_FACE_RUN);
    fclose(f);
    assert_string_equal(text, "  -N, --name NAME              a name\n"
                              "  -c, --count N                a count\n"
                              "      --secs S                 seconds\n"
                              "  -F, --flag                   a flag\n"
                              "  -f, --format a|b|c           a format\n"
                              "      --meta M                 metadata\n"
                              "  -h, --help                   show this help\n");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_rows),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_faces),
        cmocka_unit_test(test_help_and_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
