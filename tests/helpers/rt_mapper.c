/* rt_mapper FILE WORKERS SECONDS - WORKERS processes each map FILE read-only and shared, touch
 * every page, then sleep SECONDS. The parent waits. Sum of RSS counts the file WORKERS times,
 * sum of PSS about once. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rt_mapper FILE WORKERS SECONDS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double secs = atof(argv[3]);
    for (int i = 0; i < n; i++) {
        if (fork() != 0)
            continue;
        int fd = open(argv[1], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0)
            _exit(1);
        volatile const unsigned char *p =
            mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            _exit(1);
        unsigned long sum = 0;
        for (off_t o = 0; o < st.st_size; o += 4096)
            sum += p[o];
        (void)sum;
        usleep((useconds_t)(secs * 1e6));
        _exit(0);
    }
    int status, rc = 0;
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rc = 1;
    return rc;
}
