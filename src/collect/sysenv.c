/* sysenv.c - the live system environment and root-prefixed paths. */
#include "rtrack/collect/collect.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

static int live_statvfs(void *ud, const char *path, struct rt_fsstat *out)
{
    (void)ud;
    struct statvfs st;
    if (statvfs(path, &st) != 0)
        return -errno;
    out->frsize = st.f_frsize ? st.f_frsize : st.f_bsize;
    out->blocks = st.f_blocks;
    out->bfree = st.f_bfree;
    out->bavail = st.f_bavail;
    return 0;
}

void rt_sysenv_live(struct rt_sysenv *env)
{
    memset(env, 0, sizeof(*env));
    env->root = "";
    env->statvfs_fn = live_statvfs;
    env->clk_tck = sysconf(_SC_CLK_TCK);
    env->page_size = sysconf(_SC_PAGESIZE);
    if (env->clk_tck <= 0)
        env->clk_tck = 100;
    if (env->page_size <= 0)
        env->page_size = 4096;
}

int rt_path(const struct rt_sysenv *env, char *buf, size_t cap, const char *fmt, ...)
{
    size_t rl = strlen(env->root);
    if (rl >= cap)
        return -1;
    memcpy(buf, env->root, rl);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + rl, cap - rl, fmt, ap);
    va_end(ap);
    return (n < 0 || (size_t)n >= cap - rl) ? -1 : 0;
}
