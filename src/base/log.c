/* log.c - stderr messages. */
#include "rtrack/base/log.h"

#include <stdarg.h>
#include <stdio.h>

static int log_quiet;

void rt_log_quiet(int quiet)
{
    log_quiet = quiet;
}

/* (the attribute says fmt is a caller's checked format: clang warns otherwise) */
static void vmsg(const char *prefix, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
    /* One fprintf per line so concurrent writers (the job shares our stderr) do not interleave
     * inside a message. */
    char line[1024];
    vsnprintf(line, sizeof(line), fmt, ap);
    fprintf(stderr, "rtrack: %s%s\n", prefix, line);
}

void rt_err(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}

void rt_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmsg("warning: ", fmt, ap);
    va_end(ap);
}

void rt_note(const char *fmt, ...)
{
    if (log_quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vmsg("", fmt, ap);
    va_end(ap);
}
