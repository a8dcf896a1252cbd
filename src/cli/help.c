/* help.c - every command's help printed one way, from its row of the command table, and its
 * options parsed from the same row: what `rtrack NAME --help` lists is what the command takes.
 * The option lines of run and record come from config.c's table through cmd_help_opt(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/log.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"

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

void cmd_help_opt(FILE *out, int short_opt, const char *name, const char *arg, const char *help,
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

void cmd_help(const struct cmd_def *d, FILE *out)
{
    /* continuation lines of the synopsis line up under its first word */
    int lead = fprintf(out, "usage: rtrack %s ", d->name);
    for (const char *p = d->synopsis; *p; p++) {
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%*s", lead, "");
    }
    fprintf(out, "\n\n%s\n\noptions:\n", d->description);
    if (d->opts) {
        for (const struct cmd_opt *o = d->opts; o->name; o++)
            cmd_help_opt(out, o->short_opt, o->name, o->arg, o->help, o->env);
        cmd_help_opt(out, 'h', "help", NULL, "show this help", NULL);
    } else {
        d->print_opts(out);
    }
    if (d->epilog)
        fprintf(out, "\n%s", d->epilog);
}

const struct cmd_def *cmd_find(const char *name)
{
    for (const struct cmd_def *const *c = cmd_table; *c; c++)
        if (!strcmp((*c)->name, name))
            return *c;
    return NULL;
}

/* --- parsing ---------------------------------------------------------------------------------- */

enum { KEY_HELP = 0x10000 };

void cmd_parse_begin(struct cmd_parse *p, const struct cmd_def *d, int argc, char **argv)
{
    memset(p, 0, sizeof(*p));
    p->cmd = d;
    p->argc = argc;
    p->argv = argv;
    size_t n = 0;
    while (d->opts[n].name && n + 2 < RT_ARRAY_LEN(p->lopts))
        n++;
    /* '+': stop at the first argument that is not an option; ':': a missing value is ':' */
    size_t ns = 0;
    p->shorts[ns++] = '+';
    p->shorts[ns++] = ':';
    for (size_t i = 0; i < n; i++) {
        const struct cmd_opt *o = &d->opts[i];
        p->lopts[i] =
            (struct option){o->name, o->arg ? required_argument : no_argument, NULL, o->key};
        if (o->short_opt && ns + 3 < sizeof(p->shorts)) {
            p->shorts[ns++] = (char)o->short_opt;
            if (o->arg)
                p->shorts[ns++] = ':';
        }
    }
    p->lopts[n] = (struct option){"help", no_argument, NULL, KEY_HELP};
    p->shorts[ns++] = 'h';
    p->shorts[ns] = '\0';
    opterr = 0;
    optind = 0; /* glibc: 0 also resets getopt's internal state */
}

int cmd_parse_next(struct cmd_parse *p, const char **val)
{
    *val = NULL;
    int c = getopt_long(p->argc, p->argv, p->shorts, p->lopts, NULL);
    if (c == -1) {
        if (optind < p->argc && !p->cmd->operands) {
            rt_err("%s: unexpected argument '%s'", p->cmd->name, p->argv[optind]);
            return CMD_PARSE_BAD;
        }
        return CMD_PARSE_DONE;
    }
    if (c == KEY_HELP || c == 'h') {
        cmd_help(p->cmd, stdout);
        return CMD_PARSE_HELP;
    }
    if (c == ':' || c == '?') {
        cmd_option_error(p->cmd->name, c, p->argv, p->lopts);
        return CMD_PARSE_BAD;
    }
    for (const struct cmd_opt *o = p->cmd->opts; o->name; o++)
        if (c == o->key || (o->short_opt && c == o->short_opt)) {
            *val = o->arg ? optarg : NULL;
            return o->key;
        }
    cmd_option_error(p->cmd->name, '?', p->argv, p->lopts);
    return CMD_PARSE_BAD;
}

int cmd_parse_exit(int rc)
{
    if (rc != CMD_PARSE_HELP)
        return RT_EXIT_USAGE;
    return cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* the help was written */
}
