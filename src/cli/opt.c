/* opt.c - option tables (opt.h): the one getopt builder, values applied by a row's type, and
 * the option lines of the help and of `rtrack help --options`. Every command reads its
 * arguments here, run's and record's too (config.c adds their environment and config file), so
 * an option is parsed, refused and shown one way. */
#include "rtrack/cli/opt.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"

int rt_opt_in_face(const struct rt_opt *o, unsigned face)
{
    return !face || !o->faces || (o->faces & face);
}

/* The rows of a table in the order help lists them: the options of the face but -V, then
 * -h/--help (row NULL), then -V; calls each(row, ud) and returns how many. */
static size_t each_row(const struct rt_opt *tbl, unsigned face,
                       void (*each)(const struct rt_opt *o, void *ud), void *ud)
{
    size_t n = 0;
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) {
            each(NULL, ud);
            n++;
            continue;
        }
        for (const struct rt_opt *o = tbl; o->name; o++)
            if (rt_opt_in_face(o, face) && (o->type == RT_OPT_VERSION) == (pass == 2)) {
                each(o, ud);
                n++;
            }
    }
    return n;
}

/* --- the getopt builder ------------------------------------------------------------------------
 */

/* getopt_long's value for row i, and for --help */
enum { KEY_ROW = 1000, KEY_HELP = 0x100000 };

struct build {
    struct rt_opt_getopt *g;
    size_t nl, ns;
};

static void build_one(const struct rt_opt *o, void *ud)
{
    struct build *b = ud;
    if (!o) {
        b->g->lopts[b->nl++] = (struct option){"help", no_argument, NULL, KEY_HELP};
        b->g->shorts[b->ns++] = 'h';
        return;
    }
    b->g->lopts[b->nl++] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
                                           KEY_ROW + (int)(o - b->g->tbl)};
    if (o->short_opt) {
        b->g->shorts[b->ns++] = (char)o->short_opt;
        if (o->arg)
            b->g->shorts[b->ns++] = ':';
    }
}

void rt_opt_getopt_begin(struct rt_opt_getopt *g, const char *cmd, const struct rt_opt *tbl,
                         unsigned face, int argc, char **argv)
{
    size_t n = 0;
    while (tbl[n].name)
        n++;
    *g = (struct rt_opt_getopt){.tbl = tbl, .cmd = cmd, .face = face, .argc = argc, .argv = argv};
    g->lopts = xcalloc(n + 2, sizeof(*g->lopts)); /* and --help, and the NULL row */
    g->shorts = xcalloc(2 * n + 5, 1);            /* "+:", "h", a letter and ':' a row, NUL */
    /* '+': stop at the first argument that is not an option; ':': a missing value is ':' */
    struct build b = {g, 0, 2};
    memcpy(g->shorts, "+:", 2);
    each_row(tbl, face, build_one, &b);
    opterr = 0;
    optind = 0; /* glibc: 0 also resets getopt's internal state */
}

int rt_opt_getopt_next(struct rt_opt_getopt *g, const struct rt_opt **row, const char **val)
{
    *row = NULL;
    *val = NULL;
    int c = getopt_long(g->argc, g->argv, g->shorts, g->lopts, NULL);
    if (c == -1)
        return RT_GETOPT_DONE;
    if (c == KEY_HELP || c == 'h')
        return RT_GETOPT_HELP;
    const struct rt_opt *o = NULL;
    if (c >= KEY_ROW && c < KEY_HELP)
        o = &g->tbl[c - KEY_ROW];
    for (const struct rt_opt *r = g->tbl; !o && c != ':' && c != '?' && r->name; r++)
        if (r->short_opt == c && rt_opt_in_face(r, g->face))
            o = r;
    if (!o) {
        cmd_option_error(g->cmd, c == ':' ? ':' : '?', g->argv, g->lopts);
        return RT_GETOPT_BAD;
    }
    *row = o;
    *val = o->arg ? optarg : NULL;
    return 0;
}

void rt_opt_getopt_end(struct rt_opt_getopt *g)
{
    free(g->lopts);
    free(g->shorts);
    g->lopts = NULL;
    g->shorts = NULL;
}

/* --- values -------------------------------------------------------------------------------------
 */

static void *field(const struct rt_opt_ctx *c, const struct rt_opt *o)
{
    return (char *)c->opts + o->off;
}

static int refuse(const struct rt_opt_ctx *c, const char *val, const char *expect)
{
    rt_err("%s%sinvalid value '%s' for %s: expected %s", c->prefix ? c->prefix : "",
           c->where ? c->where : "", val, c->src, expect);
    return -1;
}

int rt_opt_check_utf8(const struct rt_opt_ctx *c, const char *s, const char *what)
{
    size_t n = strlen(s), bad = rt_utf8_check(s, n);
    if (bad == n)
        return 0;
    rt_err("%s%sinvalid %s for %s: not valid UTF-8 (byte %zu is 0x%02x)",
           c->prefix ? c->prefix : "", c->where ? c->where : "", what, c->src, bad + 1,
           (unsigned char)s[bad]);
    return -1;
}

/* The index of v among an ENUM's values (each "name|other|..."), or -1. */
static int enum_index(const struct rt_opt *o, const char *v)
{
    for (int i = 0; o->values[i]; i++)
        for (const char *p = o->values[i]; *p;) {
            size_t k = strcspn(p, "|");
            if (strlen(v) == k && !strncmp(p, v, k))
                return i;
            p += k;
            p += *p == '|';
        }
    return -1;
}

void rt_opt_values_text(const struct rt_opt *o, char *out, size_t outlen)
{
    size_t n = 0, len = 0;
    while (o->values && o->values[n])
        n++;
    out[0] = '\0';
    for (size_t i = 0; i < n && len < outlen; i++) {
        int k = snprintf(out + len, outlen - len, "%s%.*s",
                         !i          ? ""
                         : i + 1 < n ? ", "
                                     : " or ",
                         (int)strcspn(o->values[i], "|"), o->values[i]);
        len += k > 0 ? (size_t)k : 0;
    }
}

static int set_string(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val)
{
    if ((o->flags & RT_OPT_UTF8) && rt_opt_check_utf8(c, val, "value") != 0)
        return -1;
    if (o->accept && !o->accept(val))
        return refuse(c, val, o->expect);
    char **f = field(c, o);
    free(*f);
    *f = (o->flags & RT_OPT_EMPTY_NULL) && !*val ? NULL : xstrdup(val);
    return 0;
}

static int in_range(const struct rt_opt *o, double v)
{
    return v >= o->min && v <= o->max && !((o->flags & RT_OPT_ABOVE_MIN) && v <= o->min);
}

static int set_enum(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val)
{
    int i = enum_index(o, val);
    if (i >= 0) {
        *(int *)field(c, o) = i;
        return 0;
    }
    char list[256];
    rt_opt_values_text(o, list, sizeof(list));
    if (o->noun) {
        rt_err("%s: unknown %s '%s' (%s)", c->cmd, o->noun, val, list);
        return -1;
    }
    return refuse(c, val, list);
}

int rt_opt_set(struct rt_opt_ctx *c, const struct rt_opt *o, const char *val)
{
    double d;
    int64_t i;
    int b;
    switch (o->type) {
    case RT_OPT_STRING:
        return set_string(c, o, val);
    case RT_OPT_INT:
        if (rt_parse_i64(val, &i) != 0 || !in_range(o, (double)i))
            return refuse(c, val, o->expect);
        *(int64_t *)field(c, o) = i;
        return 0;
    case RT_OPT_DOUBLE:
        if (rt_parse_double(val, &d) != 0 || !in_range(o, d))
            return refuse(c, val, o->expect);
        *(double *)field(c, o) = d;
        return 0;
    case RT_OPT_BOOL:
        if (val && (b = rt_parse_bool(val)) < 0)
            return refuse(c, val, "1/0, true/false, yes/no or on/off");
        *(int *)field(c, o) = val ? b : 1;
        return 0;
    case RT_OPT_ENUM:
        return set_enum(c, o, val);
    case RT_OPT_CALLBACK:
        return o->fn(c, o, val);
    case RT_OPT_VERSION:
        return 0;
    }
    return 0;
}

void rt_opt_free(const struct rt_opt *tbl, void *opts)
{
    for (const struct rt_opt *o = tbl; o->name; o++) {
        int shared = 0;
        for (const struct rt_opt *p = tbl; p < o && !shared; p++)
            shared = p->type == RT_OPT_STRING && p->off == o->off;
        if (o->type != RT_OPT_STRING || shared)
            continue;
        char **f = (char **)((char *)opts + o->off);
        free(*f);
        *f = NULL;
    }
}

/* --- help and the list -------------------------------------------------------------------------
 */

/* An option's description starts at column 31 and wraps at 80, words whole. */
enum { HELP_INDENT = 30, HELP_WIDTH = 80 };

static int help_word(FILE *out, int col, const char *w, int n)
{
    if (col > HELP_INDENT && col + 1 + n > HELP_WIDTH) {
        fprintf(out, "\n%*s", HELP_INDENT, "");
        col = HELP_INDENT;
    }
    fprintf(out, " %.*s", n, w);
    return col + 1 + n;
}

void rt_opt_help_line(FILE *out, int short_opt, const char *name, const char *arg, const char *help,
                      const char *env)
{
    char flag[96];
    int n = short_opt ? snprintf(flag, sizeof(flag), "  -%c, --%s%s%s", short_opt, name,
                                 arg ? " " : "", arg ? arg : "")
                      : snprintf(flag, sizeof(flag), "      --%s%s%s", name, arg ? " " : "",
                                 arg ? arg : "");
    int col = n;
    fputs(flag, out);
    if (col < HELP_INDENT) {
        fprintf(out, "%*s", HELP_INDENT - col, "");
        col = HELP_INDENT;
    } else { /* a long option and value: the description on the next line */
        fprintf(out, "\n%*s", HELP_INDENT, "");
        col = HELP_INDENT;
    }
    for (const char *p = help; *p;) {
        int k = (int)strcspn(p, " ");
        if (k)
            col = help_word(out, col, p, k);
        p += k;
        p += *p == ' ';
    }
    /* "[env NAME]" for each of the names (separated by blanks) */
    for (const char *p = env; p && *p;) {
        int k = (int)strcspn(p, " ");
        if (k) {
            char w[96];
            int wn = snprintf(w, sizeof(w), "[env %.*s]", k, p);
            col = help_word(out, col, w, wn);
        }
        p += k;
        p += *p == ' ';
    }
    fputc('\n', out);
}

struct show {
    FILE *out;
    unsigned face;
};

static void help_one(const struct rt_opt *o, void *ud)
{
    const struct show *s = ud;
    if (!o)
        rt_opt_help_line(s->out, 'h', "help", NULL, "show this help", NULL);
    else
        rt_opt_help_line(s->out, o->short_opt, o->name, o->arg, o->help,
                         s->face & RT_FACE_DROPIN ? o->env_rust : o->env);
}

void rt_opt_help(FILE *out, const struct rt_opt *tbl, unsigned face)
{
    struct show s = {out, face};
    each_row(tbl, face, help_one, &s);
}

static void list_one(const struct rt_opt *o, void *ud)
{
    const struct show *s = ud;
    if (!o) {
        fprintf(s->out, "--help\t-h\t\t\n");
        return;
    }
    fprintf(s->out, "--%s\t", o->name);
    if (o->short_opt)
        fprintf(s->out, "-%c", o->short_opt);
    fprintf(s->out, "\t%s\t", o->arg ? o->arg : "");
    for (int i = 0; o->values && o->values[i]; i++)
        fprintf(s->out, "%s%.*s", i ? " " : "", (int)strcspn(o->values[i], "|"), o->values[i]);
    fputc('\n', s->out);
}

void rt_opt_list(FILE *out, const struct rt_opt *tbl, unsigned face)
{
    struct show s = {out, face};
    each_row(tbl, face, list_one, &s);
}
