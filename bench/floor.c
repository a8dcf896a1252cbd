/* bench/floor.c - the least that any SQLite-backed recorder or job wrapper does, measured by
 * bench/floor.sh beside rtrack: what rtrack spends beyond these programs is its own, what they
 * spend is the floor of the design (Debian's shared libc and SQLite, a WAL database that is
 * whole again when the program exits) on the machine at hand.
 *
 *   rt_floor record DB SAMPLES INTERVAL_S
 *       opens DB as rtrack's recorder does (lookaside off, 128 KiB page cache, WAL,
 *       synchronous=NORMAL), then SAMPLES times: reads /proc/stat with pread from a kept file
 *       descriptor and commits one row holding its first 256 bytes; sleeps INTERVAL_S between
 *       samples; closes (checkpoint). Prints "VmHWM RssAnon RssFile" (KiB) of itself before
 *       closing.
 *   rt_floor run DB CMD [ARG...]
 *       opens DB, commits a row, spawns CMD, waits for it, commits a row, closes (the
 *       checkpoint and the removal of -wal and -shm, as rtrack's close does). Exits with CMD's
 *       status.
 *
 * Both create their one table (floor_samples) when missing. Given a copy of an rtrack database,
 * they also pay for SQLite reading rtrack's schema, which every connection parses on its first
 * statement; given a new file, only for SQLite itself. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *const setup =
    "PRAGMA cache_size = -128; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; "
    "CREATE TABLE IF NOT EXISTS floor_samples (id INTEGER PRIMARY KEY, ts REAL NOT NULL, "
    "data BLOB)";

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "rt_floor: %s: %s\n", what, db ? sqlite3_errmsg(db) : "cannot open");
    return 2;
}

/* the database set up, and the prepared insert of a row in *st */
static sqlite3 *open_db(const char *path, sqlite3_stmt **st)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        fail(db, path);
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_db_config(db, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0);
    if (sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO floor_samples (ts, data) VALUES (?1, ?2)", -1, st,
                           NULL) != SQLITE_OK) {
        fail(db, "setup");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* one row in its own transaction */
static int insert(sqlite3 *db, sqlite3_stmt *st, const void *data, int len)
{
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return -1;
    sqlite3_bind_double(st, 1, now_s());
    sqlite3_bind_blob(st, 2, data, len, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

static void print_mem(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long hwm = -1, anon = -1, file = -1;
    while (f && fgets(line, sizeof(line), f)) {
        sscanf(line, "VmHWM: %ld", &hwm);
        sscanf(line, "RssAnon: %ld", &anon);
        sscanf(line, "RssFile: %ld", &file);
    }
    if (f)
        fclose(f);
    printf("%ld %ld %ld\n", hwm, anon, file);
    fflush(stdout);
}

static int record(const char *path, long samples, double interval)
{
    sqlite3_stmt *st = NULL;
    sqlite3 *db = open_db(path, &st);
    if (!db)
        return 2;
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        perror("rt_floor: /proc/stat");
        return 2;
    }
    char buf[16384];
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long i = 0; i < samples; i++) {
        ssize_t n = pread(fd, buf, sizeof(buf), 0);
        if (n <= 0 || insert(db, st, buf, n < 256 ? (int)n : 256) != 0)
            return fail(db, "sample");
        long ns = next.tv_nsec + (long)(interval * 1e9);
        next.tv_sec += ns / 1000000000L;
        next.tv_nsec = ns % 1000000000L;
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
    }
    print_mem();
    close(fd);
    sqlite3_finalize(st);
    return sqlite3_close(db) == SQLITE_OK ? 0 : fail(db, "close");
}

static int run(const char *path, char **cmd)
{
    sqlite3_stmt *st = NULL;
    sqlite3 *db = open_db(path, &st);
    if (!db)
        return 2;
    if (insert(db, st, "start", 5) != 0)
        return fail(db, "start row");
    pid_t pid;
    int err = posix_spawnp(&pid, cmd[0], NULL, NULL, cmd, environ);
    if (err != 0) {
        fprintf(stderr, "rt_floor: cannot run %s: %s\n", cmd[0], strerror(err));
        return 127;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (insert(db, st, "end", 3) != 0)
        return fail(db, "end row");
    sqlite3_finalize(st);
    if (sqlite3_close(db) != SQLITE_OK)
        return fail(db, "close");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "record") == 0)
        return record(argv[2], atol(argv[3]), atof(argv[4]));
    if (argc >= 4 && strcmp(argv[1], "run") == 0)
        return run(argv[2], argv + 3);
    fprintf(stderr, "usage: rt_floor record DB SAMPLES INTERVAL_S\n"
                    "       rt_floor run DB CMD [ARG...]\n");
    return 2;
}
