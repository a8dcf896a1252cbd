/* bench/start_costs.c - two costs of a run's start, each alone (bench/start_costs.sh runs it).
 *
 *   rt_start_costs prepare DB SQL [N]
 *       N times (200): a new connection to DB, its first statement (SQLite parses the schema),
 *       then SQL prepared twice. Prints the medians, in µs, of the parse, of the first
 *       preparation (SQLite works out the columns of each view SQL reads, and of the views under
 *       them, for that connection) and of the second.
 *   rt_start_costs query DB SQL [N]
 *       N times (200): a new connection to DB, its first statement (the schema parsed), then
 *       SQL prepared and run to its end, every column of every row read as text (as the
 *       schema's fingerprint reads sqlite_schema). Prints the median, in µs.
 *   rt_start_costs read PATH [BYTES [N]]
 *       N times (2000): PATH opened, read (to its end; or one read of BYTES when BYTES > 0) and
 *       closed. Prints the least time, in µs (the kernel's work for that file, without the
 *       machine's noise). */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp);
    return v[n / 2];
}

/* A new read-only connection to db_path with the schema parsed (its first statement), the
 * parse's time in *parse_us; NULL (said on stderr) when it cannot be opened. */
static sqlite3 *open_parsed(const char *db_path, double *parse_us)
{
    sqlite3 *db;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "rt_start_costs: %s: %s\n", db_path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return NULL;
    }
    double t0 = now_us();
    sqlite3_exec(db, "SELECT count(*) FROM sqlite_schema", NULL, NULL, NULL);
    *parse_us = now_us() - t0;
    return db;
}

static int prepare(const char *db_path, const char *sql, int n)
{
    double *parse = calloc((size_t)n, sizeof(double)), *first = calloc((size_t)n, sizeof(double)),
           *second = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        sqlite3 *db = open_parsed(db_path, &parse[i]);
        if (!db)
            return 1;
        double t1 = now_us();
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "rt_start_costs: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        double t2 = now_us();
        sqlite3_finalize(st);
        double t3 = now_us();
        sqlite3_prepare_v2(db, sql, -1, &st, NULL);
        double t4 = now_us();
        sqlite3_finalize(st);
        sqlite3_close(db);
        first[i] = t2 - t1;
        second[i] = t4 - t3;
    }
    printf("schema parse %.1f us, first prepare %.1f us, second prepare %.1f us (medians of %d "
           "connections)\n",
           median(parse, n), median(first, n), median(second, n), n);
    free(parse);
    free(first);
    free(second);
    return 0;
}

static int query(const char *db_path, const char *sql, int n)
{
    double *t = calloc((size_t)n, sizeof(double));
    unsigned long bytes = 0;
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st;
        double parse;
        sqlite3 *db = open_parsed(db_path, &parse);
        if (!db)
            return 1;
        double t0 = now_us();
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "rt_start_costs: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        while (sqlite3_step(st) == SQLITE_ROW)
            for (int c = 0; c < sqlite3_column_count(st); c++)
                if (sqlite3_column_text(st, c))
                    bytes += (unsigned long)sqlite3_column_bytes(st, c);
        sqlite3_finalize(st);
        t[i] = now_us() - t0;
        sqlite3_close(db);
    }
    printf("prepared and run: %.1f us (median of %d connections, %lu bytes of text a run)\n",
           median(t, n), n, bytes / (unsigned long)n);
    free(t);
    return 0;
}

static int read_file(const char *path, long bytes, int n)
{
    static char buf[1 << 16];
    double best = 1e18;
    for (int i = 0; i < n; i++) {
        double t0 = now_us();
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            perror(path);
            return 1;
        }
        if (bytes > 0) {
            if (read(fd, buf, (size_t)bytes < sizeof(buf) ? (size_t)bytes : sizeof(buf)) < 0)
                perror(path);
        } else {
            while (read(fd, buf, sizeof(buf)) > 0)
                ;
        }
        close(fd);
        double t = now_us() - t0;
        if (t < best)
            best = t;
    }
    printf("%s, %s: %.1f us (the least of %d)\n", path, bytes > 0 ? "one read" : "whole", best, n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "prepare") == 0)
        return prepare(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 200);
    if (argc >= 4 && strcmp(argv[1], "query") == 0)
        return query(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 200);
    if (argc >= 3 && strcmp(argv[1], "read") == 0)
        return read_file(argv[2], argc > 3 ? atol(argv[3]) : 0, argc > 4 ? atoi(argv[4]) : 2000);
    fprintf(stderr,
            "usage: rt_start_costs prepare DB SQL [N] | query DB SQL [N] | read PATH [BYTES "
            "[N]]\n");
    return 2;
}
