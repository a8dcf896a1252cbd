/* utf8.h - UTF-8 validation and repair of text that comes from outside rtrack.
 *
 * JSON (export, runs, summary, the Sentinel API) must be UTF-8, and SQLite's JSON functions copy
 * a string's bytes as they are: a job name, an argument or a process name with a stray byte
 * would make every JSON document that holds it unreadable. */
#ifndef RTRACK_UTF8_H
#define RTRACK_UTF8_H

#include <stddef.h>

/* Offset of the first byte of s[0..n) that does not start a well-formed UTF-8 sequence (RFC
 * 3629: no overlong forms, no surrogates, nothing above U+10FFFF), or n when all of it is. */
size_t rt_utf8_check(const char *s, size_t n);

/* A malloc'd, NUL-terminated copy of s[0..n) with each ill-formed sequence replaced by U+FFFD
 * (the "maximal subpart" practice of Unicode, as Python's errors="replace" does). */
char *rt_utf8_repair(const char *s, size_t n);

/* Make s safe to print on a terminal, in place: each C0 or C1 control character and DEL (a job
 * name or a process name may hold escape sequences) becomes '?', and so does each ill-formed
 * byte; a sequence cut short at the end (text truncated to a buffer) is dropped. Returns the
 * display width of what is left, in terminal columns, for padding a column: libc's wcwidth()
 * in C.UTF-8 (East Asian wide characters and emoji 2, combining marks 0, others 1; one per
 * code point where the system has no C.UTF-8). When `maxcols` is not 0 the text is cut to at
 * most that many columns, never inside a character (a wide one that would not fit is left out;
 * combining marks stay with the character before them). */
size_t rt_utf8_printable(char *s, size_t maxcols);

#endif
