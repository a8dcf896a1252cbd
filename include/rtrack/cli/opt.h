/* opt.h - the one option table type of every command (git's parse-options.h shape): a row per
 * option says its flag, value, help, environment variables, config-file key, type and the
 * field it sets (offsetof into the command's options struct). One getopt builder reads argv by
 * a table (sized from it), the help prints it (cmd_help), `rtrack help --options CMD` lists it
 * for the completions' test, and run's and record's config file and environment are applied by
 * the same rows (config.c), so what a command takes, says and completes cannot drift apart. */
#ifndef RTRACK_OPT_H
#define RTRACK_OPT_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

enum rt_opt_type {
    RT_OPT_STRING,   /* char *, a copy (rt_opt_free); `accept` may refuse a value */
    RT_OPT_INT,      /* int64_t within [min, max] */
    RT_OPT_DOUBLE,   /* double within [min, max] (RT_OPT_ABOVE_MIN: min itself refused) */
    RT_OPT_BOOL,     /* int: 1 for the flag; 1/0, true/false, yes/no, on/off from a variable */
    RT_OPT_ENUM,     /* int: the index of the value among `values` */
    RT_OPT_CALLBACK, /* `fn` takes the value */
    RT_OPT_VERSION,  /* -V: the caller prints the version */
};

/* A row's faces: the commands of one table it belongs to (run's, record's and
 * resource-tracker's share config.c's); 0: every command that reads the table. */
#define RT_FACE_RUN    1u
#define RT_FACE_RECORD 2u
#define RT_FACE_DROPIN 4u /* rtrack as resource-tracker: the Rust tool's variables in its help */

/* A row's flags. */
#define RT_OPT_UTF8       1u /* STRING: valid UTF-8 (it goes into JSON); the value is not echoed */
#define RT_OPT_EMPTY_NULL 2u /* STRING: '' unsets it */
#define RT_OPT_ABOVE_MIN  4u /* INT, DOUBLE: min is not in the range */
#define RT_OPT_FIRST      8u /* read before the other sources (--config: it names one of them) */

/* Where a value comes from: the command line, a variable, the config file. */
enum rt_opt_source { RT_OPT_FROM_CLI, RT_OPT_FROM_ENV, RT_OPT_FROM_FILE };

/* What a value is applied with. */
struct rt_opt_ctx {
    const char *cmd;    /* the command: "export", "run", "resource-tracker" */
    const char *prefix; /* before a refused value's message: "runs: ", or "" (run and record
                         * name the source instead) */
    unsigned face;
    void *opts;   /* the command's options: where a row's offset points */
    void *shared; /* what the shared rows' callbacks fill (struct cmd_ctx: cmd.h) */
    enum rt_opt_source from;
    const char *src;   /* the value's name as given: --interval, RTRACK_INTERVAL, interval_secs */
    const char *where; /* "FILE:LINE: " for the config file, else "" */
    const char *key;   /* FILE: the key (a [tags] key is the tag's) */
    int argc;          /* CLI: getopt's vector, for a callback that takes a second value */
    char **argv;
};

struct rt_opt {
    const char *name;     /* long name; NULL ends a table */
    int short_opt;        /* 0: none */
    const char *arg;      /* the value's name in --help; NULL: a flag */
    const char *help;     /* what it does, its default in parentheses */
    const char *env;      /* rtrack's variable (RTRACK_...), shown as [env NAME]; NULL: none.
                           * Read for run, record and resource-tracker (config.c); elsewhere the
                           * variable the command reads beside it (rt_env: RTRACK_DB) */
    const char *env_rust; /* the Rust tool's name for it (TRACKER_..., SENTINEL_API_URL): read
                           * too (RTRACK_... wins), shown by resource-tracker's help */
    const char *toml_table, *toml_key; /* [table] key of the config file; key NULL: any key of
                                        * the table (tags) */
    enum rt_opt_type type;
    size_t off;                /* offsetof the field it sets in the command's options */
    const char *const *values; /* ENUM: its values, NULL-terminated; "jsonl|json": json is
                                * another name for jsonl. CALLBACK: the words it takes (the
                                * completions offer them) */
    const char *expect;        /* what a refused value should have been ("seconds between ...") */
    const char *noun;          /* ENUM: a refused value is "unknown NOUN 'V' (a, b or c)" */
    double min, max;           /* INT, DOUBLE */
    int (*accept)(const char *v); /* STRING: 0 refuses v */
    int (*fn)(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val); /* CALLBACK: 0, or
                                                                               * -1 said why */
    unsigned faces;
    unsigned flags;
};

/* Rows, as git writes them: OPT_STRING(long, short, ARG, help, struct, field) ... */
#define RT_OPT_ROW(l, s, a, h) .name = l, .short_opt = s, .arg = a, .help = h
#define OPT_STRING(l, s, a, h, st, f)                                                              \
    {                                                                                              \
        RT_OPT_ROW(l, s, a, h), .type = RT_OPT_STRING, .off = offsetof(st, f)                      \
    }
#define OPT_BOOL(l, s, h, st, f)                                                                   \
    {                                                                                              \
        RT_OPT_ROW(l, s, NULL, h), .type = RT_OPT_BOOL, .off = offsetof(st, f)                     \
    }
#define OPT_INT(l, s, a, h, st, f, lo, hi, exp)                                                    \
    {                                                                                              \
        RT_OPT_ROW(l, s, a, h), .type = RT_OPT_INT, .off = offsetof(st, f), .min = lo, .max = hi,  \
                                .expect = exp                                                      \
    }
/* the values after the noun: OPT_ENUM(..., "format", "csv", "jsonl|json") */
#define OPT_ENUM(l, s, a, h, st, f, nn, ...)                                                       \
    {                                                                                              \
        RT_OPT_ROW(l, s, a, h), .type = RT_OPT_ENUM, .off = offsetof(st, f), .noun = nn,           \
                                .values = (const char *const[])                                    \
        {                                                                                          \
            __VA_ARGS__, NULL                                                                      \
        }                                                                                          \
    }
#define OPT_CALLBACK(l, s, a, h, f)                                                                \
    {                                                                                              \
        RT_OPT_ROW(l, s, a, h), .type = RT_OPT_CALLBACK, .fn = f                                   \
    }
#define OPT_END                                                                                    \
    {                                                                                              \
        .name = NULL                                                                               \
    }

/* Whether row o belongs to `face` (a row of faces 0 to every one). */
int rt_opt_in_face(const struct rt_opt *o, unsigned face);

/* --- reading argv: the one getopt builder ----------------------------------------------------- */

/* getopt_long over the rows of tbl in `face` and -h/--help, its arrays sized from the table.
 * It stops at the first argument that is not an option (run's job starts there). */
struct rt_opt_getopt {
    const struct rt_opt *tbl;
    const char *cmd; /* messages' prefix */
    unsigned face;
    int argc;
    char **argv;
    struct option *lopts; /* the rows', then help's; NULL name at the end */
    char *shorts;
};
enum { RT_GETOPT_DONE = -1, RT_GETOPT_HELP = -2, RT_GETOPT_BAD = -3 };
void rt_opt_getopt_begin(struct rt_opt_getopt *g, const char *cmd, const struct rt_opt *tbl,
                         unsigned face, int argc, char **argv);
/* The next option: 0, its row in *row and its value in *val (NULL for a flag); RT_GETOPT_DONE
 * at the end (optind: the first argument that is not an option); RT_GETOPT_HELP for -h/--help
 * (nothing printed: the caller's help); RT_GETOPT_BAD after saying what is wrong (an unknown
 * option, with the nearest one; a missing value). */
int rt_opt_getopt_next(struct rt_opt_getopt *g, const struct rt_opt **row, const char **val);
void rt_opt_getopt_end(struct rt_opt_getopt *g);

/* --- values ----------------------------------------------------------------------------------- */

/* Apply val (NULL: the flag given) to o's field in c->opts by o's type: 0, or -1 after saying
 * why ("[FILE:LINE: ]invalid value 'V' for SRC: expected ..."; an ENUM with a noun: "CMD:
 * unknown NOUN 'V' (a, b or c)"). c->src names the value's source in the message. */
int rt_opt_set(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val);
/* 0 when s is valid UTF-8, else -1 after saying "[WHERE]invalid WHAT for SRC: not valid UTF-8
 * (byte N is 0xHH)" (the value itself is not echoed: it may be anything) */
int rt_opt_check_utf8(const struct rt_opt_ctx *c, const char *s, const char *what);
/* The STRING fields of tbl in opts freed (a field two rows share, once). */
void rt_opt_free(const struct rt_opt *tbl, void *opts);
/* An ENUM's values as a message lists them: "a, b or c" (other names left out). */
void rt_opt_values_text(const struct rt_opt *o, char *out, size_t outlen);

/* --- what people and the tests read ----------------------------------------------------------- */

/* The option lines of a command's help: the rows of `face` in table order ("  -i, --interval
 * SECS" then the help, wrapped at 80 columns, each variable as "[env NAME]": rtrack's, the
 * Rust tool's for RT_FACE_DROPIN), then -h/--help, then -V/--version where the face has it. */
void rt_opt_help(FILE *out, const struct rt_opt *tbl, unsigned face);
/* One option line of a help text (what rt_opt_help prints for each row). */
void rt_opt_help_line(FILE *out, int short_opt, const char *name, const char *arg, const char *help,
                      const char *env);
/* `rtrack help --options CMD`: a line per option of the face, as rt_opt_help orders them:
 * "--LONG<TAB>-S<TAB>ARG<TAB>VALUES" (empty fields where there is none; VALUES the words an
 * ENUM or a CALLBACK takes, blank-separated, other names left out). What the completions'
 * test holds the completion files to. */
void rt_opt_list(FILE *out, const struct rt_opt *tbl, unsigned face);

#endif
