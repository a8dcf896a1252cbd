/* zpool_helper.c - a stand-in for `zpool` in fuzz_zpool: whatever its arguments, it copies the
 * file named by RT_FUZZ_ZPOOL_OUT to stdout. Plain C without sanitizers, so that starting it
 * costs little next to the collector it feeds. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    const char *path = getenv("RT_FUZZ_ZPOOL_OUT");
    int fd = path ? open(path, O_RDONLY) : -1;
    if (fd < 0)
        return 1;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        if (write(1, buf, (size_t)n) != n)
            return 1;
    return 0;
}
