/* log.h - messages on stderr: "rtrack: ..." lowercase, saying what failed and why. */
#ifndef RTRACK_LOG_H
#define RTRACK_LOG_H

/* Exit codes shared by all subcommands (docs/usage.md, "exit status"). */
enum {
    RT_EXIT_OK = 0,
    RT_EXIT_FAILURE = 1,      /* runtime failure of a non-run subcommand */
    RT_EXIT_USAGE = 2,        /* bad option, bad value, bad config file */
    RT_EXIT_RUN_FAILED = 125, /* run: rtrack itself failed before the job could start */
    RT_EXIT_NOEXEC = 126,     /* run: command found but not executable */
    RT_EXIT_NOTFOUND = 127    /* run: command not found */
};

void rt_log_quiet(int quiet);
void rt_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void rt_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Informational line, suppressed by --quiet. */
void rt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
