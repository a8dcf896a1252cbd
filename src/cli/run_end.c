/* run_end.c - the end-of-run line and `run --summary` (run_end.h). */
#include "run_end.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/util.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/summary/render.h"
#include "rtrack/summary/summary.h"

static void put(struct rt_buf *b, char *s) /* appends s and frees it */
{
    rt_buf_puts(b, s);
    free(s);
}

/* The line, after "rtrack: ". f: the run's summary figures, NULL when it has none (too few
 * samples). */
static void end_line(struct rt_buf *b, const struct rt_summary_line *f, int64_t run_id,
                     const struct rt_config *cfg, const struct rt_record_result *res)
{
    char x[64], y[64], z[64];
    char *cmd = rt_fmt_argv(cfg->command, cfg->ncommand);
    size_t len = strlen(cmd);
    cmd = xrealloc(cmd, len + 8);
    rt_fmt_shorten(cmd, len + 8, 40);
    /* in single quotes, as `time` shows a command; in double quotes when it has some; as it is
     * when it has both */
    const char *q = !strchr(cmd, '\'') ? "'" : !strchr(cmd, '"') ? "\"" : "";
    put(b, xasprintf("run %lld %s%s%s ", (long long)run_id, q, cmd, q));
    free(cmd);
    if (res->signal != RT_NA)
        put(b, xasprintf("killed by %s", rt_signal_name((int)res->signal, x, sizeof(x))));
    else
        put(b, xasprintf("exited %d", res->exit_code));
    put(b, xasprintf(" after %s", rt_fmt_duration(x, sizeof(x), res->elapsed)));
    if (f) /* the tree's figures; the system's for a run without a tree */
        put(b, xasprintf(" \u00b7 %s cores (max %s) \u00b7 peak %s",
                         rt_fmt_num(x, sizeof(x), f->cores_mean),
                         rt_fmt_num(y, sizeof(y), f->cores_max),
                         rt_fmt_mib(z, sizeof(z), f->peak_mib)));
    put(b, xasprintf(" \u00b7 %s", rt_fmt_count(x, sizeof(x), (double)res->stored, "sample")));
    if (f) {
        rt_buf_puts(b, " \u00b7 rtrack summary ");
        if (strcmp(cfg->db, "rtrack.db") != 0) {
            char *db = cfg->db;
            put(b, xasprintf("--db %s ", cmd = rt_fmt_argv(&db, 1)));
            free(cmd);
        }
        put(b, xasprintf("--run %lld", (long long)run_id));
    }
}

void cmd_run_end(struct rt_store *store, int64_t run_id, const struct rt_config *cfg,
                 const struct rt_record_result *res)
{
    if (cfg->quiet && !cfg->summary)
        return; /* nothing to say: no summary to work out (1.7 ms of a short run) */
    /* the line needs the run's figures only (no document); --summary prints all of it */
    struct rt_summary_opts o = {.run_id = run_id, .figures_only = !cfg->summary};
    struct rt_summary s;
    struct rt_summary_line fig;
    char err[512];
    int bad = 0;
    int ok = rt_summary_compute(store, &o, &s, &bad, err, sizeof(err)) == 0;
    if (ok)
        rt_summary_line_of(&s, &fig);
    if (!cfg->quiet) {
        struct rt_buf line = {0};
        end_line(&line, ok ? &fig : NULL, run_id, cfg, res);
        rt_note("%s", line.p);
        rt_buf_free(&line);
    }
    if (cfg->summary && !ok)
        rt_warn("run %lld: no summary: %s", (long long)run_id, err);
    else if (cfg->summary) /* --summary-format: text 0, json 1, markdown 2 (-1: text) */
        cmd_summary_print(&s, cfg->summary_format < 0 ? 0 : cfg->summary_format,
                          cmd_text_width(NULL));
    rt_summary_free(&s);
}
