/* run_end.h - what `rtrack run` says when its job has ended: private to src/cli/ (cmd_run.c). */
#ifndef RTRACK_CLI_RUN_END_H
#define RTRACK_CLI_RUN_END_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/cli/config.h"
#include "rtrack/record/loop.h"

struct rt_store;

/* The end-of-run line on stderr, as `time` and hyperfine give the result at once:
 *   rtrack: run 2 'make -j2' exited 0 after 3m59s · 0.81 cores (max 1.98) · peak 460 MiB ·
 *   1195 samples · rtrack summary --run 2
 * (the command in single quotes, in double quotes when it has single ones, as it is when it has
 * both; "killed by SIGKILL" for a job a signal ended; the figures are the summary's: the tree's
 * mean and largest cores, the peak memory its recommendation is built on; left out when the
 * run has too few samples for a summary). Not with --quiet. With --summary (cfg->summary) the
 * whole summary follows, on stdout, in --summary-format's format (text, JSON, markdown: what
 * `rtrack summary --format` prints, by the same renderers). */
/* A summary on stdout as `rtrack summary` prints it (cmd_summary.c): fmt 0 text, 1 JSON (one
 * line), 2 markdown; the text wrapped at width columns. */
struct rt_summary;
void cmd_summary_print(const struct rt_summary *s, int fmt, int width);

void cmd_run_end(struct rt_store *store, int64_t run_id, const struct rt_config *cfg,
                 const struct rt_record_result *res);

#endif
