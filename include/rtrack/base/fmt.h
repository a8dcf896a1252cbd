/* fmt.h - the one way sizes, durations and counts are written for people: summary, report,
 * runs and the end-of-run line all print through these, so one figure reads the same in each. */
#ifndef RTRACK_FMT_H
#define RTRACK_FMT_H

#include <stddef.h>

/* Bytes in binary units: "512 B", "1.50 KiB", "12.3 MiB", "806 GiB" (3 significant digits
 * from 1 KiB up), `suffix` appended ("/s" for rates). Returns `b`. */
const char *rt_fmt_bytes(char *b, size_t n, double v, const char *suffix);
/* MiB as the tables print memory: "805.9 MiB", "9.50 MiB", "1.25 GiB", "12.5 GiB". */
const char *rt_fmt_mib(char *b, size_t n, double mib);
/* A duration: "0.35 s", "42.1 s", "3m59s", "1h02m03s". */
const char *rt_fmt_duration(char *b, size_t n, double s);
/* A count with its noun, singular for exactly 1: "1 vCPU", "2 vCPUs". `noun` is the singular;
 * the plural adds "s" ("es" after s or x: "2 processes"); "- vCPUs" for NaN. */
const char *rt_fmt_count(char *b, size_t n, double v, const char *noun);
/* A plain number with at most `digits` decimals and no trailing zeros, never an exponent:
 * "1000", "2.5", "0.25" (digits 2). For axis ticks and other round figures. */
const char *rt_fmt_plain(char *b, size_t n, double v, int digits);
/* Bytes in the binary unit `unit` (1, 1024, 1024^2, ...: one unit for every tick of an axis),
 * as rt_fmt_plain with two decimals: "0 MiB", "500 MiB", "1.5 GiB/s", "1 KiB/s". */
const char *rt_fmt_bytes_in(char *b, size_t n, double v, double unit, const char *suffix);

/* A plain figure (cores, GPUs) to 3 significant digits: "0.81", "12.3", "205"; "-" for NaN. */
const char *rt_fmt_num(char *b, size_t n, double v);
/* A percentage: "0.47 %", "41.2 %", "100 %" (3 significant digits); "-" for NaN. */
const char *rt_fmt_pct(char *b, size_t n, double v);
/* A command (a JSON array of its arguments, as runs.command stores it) as a shell would take
 * it back: each argument that is not plain ('a-zA-Z0-9_@%+=:,./-') in single quotes, a quote
 * inside as '\''; one with control characters (a script's newlines) as bash's $'...' ($'a\nb',
 * \xHH), so the command stays one line that bash reads back as it was. A malloc'd string;
 * NULL when argv_json is NULL or not an array. */
char *rt_fmt_command(const char *argv_json);
/* The same of n arguments in memory (the job's own argv): never NULL. */
char *rt_fmt_argv(char *const *argv, int n);
/* Make s printable on a terminal (rt_utf8_printable) and, when it is wider than `cols`
 * columns, shorten it in place: its start, " … " and its last word where that fits in a
 * third of the room ("cc1 -quiet -I … f9.c"), else its start and "…". `size` is the room
 * of the buffer: strlen(s) + 8 is always enough. Returns the width. */
size_t rt_fmt_shorten(char *s, size_t size, size_t cols);

#endif
