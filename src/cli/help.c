/* help.c - every command's help printed one way, from its row of the command table: the
 * option lines from its option table (opt.c prints them; the same table parses its arguments),
 * so what `rtrack NAME --help` lists is what the command takes. */
#include <stdio.h>
#include <string.h>

#include "rtrack/cli/cmd.h"

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
    rt_opt_help(out, d->opts, d->face);
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
