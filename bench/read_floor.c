/* read_floor.c - what SQLite alone costs a reader: each statement given is stepped to its end
 * and every column of every row read once (its type, and its number or its text's bytes), with
 * nothing formatted or written. A reader of the same rows (export, summary, report) cannot take
 * less than this on the same build of SQLite; bench/read_floor.sh runs it beside rtrack.
 *
 * usage: rt_read_floor DB RUN SQL...   (?1 in a statement is bound to RUN)
 * Prints, per statement and in total: rows, values, CPU seconds (user + system of the process). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rt_read_floor DB RUN SQL...\n");
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        fprintf(stderr, "read_floor: cannot open %s\n", argv[1]);
        return 1;
    }
    long long run = atoll(argv[2]), rows_all = 0, values_all = 0;
    double sum = 0, t_all = 0;
    sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
    for (int a = 3; a < argc; a++) {
        sqlite3_stmt *st;
        double t0 = cpu_s();
        if (sqlite3_prepare_v2(db, argv[a], -1, &st, NULL) != SQLITE_OK) {
            fprintf(stderr, "read_floor: %s\n", sqlite3_errmsg(db));
            return 1;
        }
        if (sqlite3_bind_parameter_count(st) >= 1)
            sqlite3_bind_int64(st, 1, run);
        long long rows = 0, values = 0;
        int n = sqlite3_column_count(st);
        while (sqlite3_step(st) == SQLITE_ROW) {
            rows++;
            for (int c = 0; c < n; c++) {
                sqlite3_value *v = sqlite3_column_value(st, c);
                switch (sqlite3_value_type(v)) {
                case SQLITE_INTEGER:
                case SQLITE_FLOAT:
                    sum += sqlite3_value_double(v);
                    break;
                case SQLITE_TEXT:
                    sum += sqlite3_value_bytes(v);
                    break;
                default:
                    break;
                }
            }
            values += n;
        }
        sqlite3_finalize(st);
        double t = cpu_s() - t0;
        printf("statement %d: %lld rows, %lld values, %.3f s\n", a - 2, rows, values, t);
        rows_all += rows;
        values_all += values;
        t_all += t;
    }
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(db);
    printf("total: %lld rows, %lld values, %.3f s (checksum %g)\n", rows_all, values_all, t_all,
           sum);
    return 0;
}
