/* help.c - every command's help printed one way, from its row of the command table: the
 * option lines from its option table (opt.c prints them; the same table parses its arguments),
 * so what `rtrack NAME --help` lists is what the command takes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"

static void help_text(const struct cmd_def *d, FILE *out)
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

/* The text is made whole, then written at once: a help longer than stdout's buffer that
 * cannot be written (>/dev/full) is said with the write's reason, which a later fflush no
 * longer knows. */
void cmd_help(const struct cmd_def *d, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        help_text(d, out);
        return;
    }
    help_text(d, mem);
    fclose(mem);
    errno = 0;
    if (fwrite(text, 1, len, out) != len && out == stdout) {
        struct cmd_out o = {.f = stdout, .name = "stdout"};
        cmd_out_failed(&o, rt_strerror(errno ? errno : EIO));
    }
    free(text);
}

const struct cmd_def *cmd_find(const char *name)
{
    for (const struct cmd_def *const *c = cmd_table; *c; c++)
        if (!strcmp((*c)->name, name))
            return *c;
    return NULL;
}
