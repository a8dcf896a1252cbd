/* html.h - writing HTML into a buffer (private to src/summary/): text as it is, formatted, and
 * text from the database escaped (a job name may well be `<script>`). The report and its SVG
 * charts write through these. */
#ifndef RTRACK_SUMMARY_HTML_H
#define RTRACK_SUMMARY_HTML_H

#include "rtrack/base/util.h"

void html_put(struct rt_buf *b, const char *s);
void html_putf(struct rt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text or attribute value: the five characters HTML gives a meaning, as entities. */
void html_esc(struct rt_buf *b, const char *s);

#endif
