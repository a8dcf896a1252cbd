/* render.h - a computed summary (summary.h) written out, one renderer per format, each printing
 * the same struct: the JSON document (render_json.c: the documented, public output), the text
 * and markdown people read (render_text.c), and `summary --compare`'s two runs side by side in
 * each. The HTML report renders it too (report.h). None of them reads the database. */
#ifndef RTRACK_SUMMARY_RENDER_H
#define RTRACK_SUMMARY_RENDER_H

#include <stdio.h>

#include "rtrack/base/util.h"
#include "rtrack/summary/summary.h"

/* The document of summary.h, appended to out. */
void rt_summary_write_json(const struct rt_summary *s, struct rt_buf *out);
/* The summary for people (md: markdown), its lines wrapped at `width` columns in text (the
 * terminal's; 0: RT_TEXT_WIDTH); the tables' fixed columns take 70. */
#define RT_TEXT_WIDTH 80
void rt_summary_write_text(const struct rt_summary *s, FILE *f, int md, int width);

/* --compare: {"runs": [{"run", "recommendation"} x 2], "figures": {FIGURE: {"values": [a, b],
 * "delta", "delta_pct"}}} */
void rt_summary_compare_write_json(const struct rt_summary_compare *c, struct rt_buf *out);
void rt_summary_compare_write_text(const struct rt_summary_compare *c, FILE *f, int md, int width);

#endif
