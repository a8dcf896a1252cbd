/* rt_sql DB ARG... - the few things of `sqlite3 -batch -noheader DB ARG...` the tests' SQL
 * oracles use, with the SQLite that the portable build compiles into rtrack (cmake/Portable.cmake;
 * the distribution's sqlite3 shell has its own, older SQLite, whose json_object() writes
 * floating-point numbers with fewer digits). -batch and -noheader are taken and change nothing.
 * Each ARG is ".read FILE" or SQL; the rows of each
 * statement are printed with '|' between columns, NULL as nothing, as the shell's list mode
 * does. `rt_sql -version` prints the SQLite version, as `sqlite3 -version` begins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

static int print_row(void *unused, int n, char **vals, char **names)
{
    (void)unused;
    (void)names;
    for (int i = 0; i < n; i++)
        printf("%s%s", i ? "|" : "", vals[i] ? vals[i] : "");
    putchar('\n');
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0, n;
    char *buf = malloc(cap);
    while (buf) {
        if (len + 1 == cap && !(buf = realloc(buf, cap *= 2)))
            break;
        if (!(n = fread(buf + len, 1, cap - len - 1, f)))
            break;
        len += n;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "-version")) {
        printf("%s %s\n", sqlite3_libversion(), sqlite3_sourceid());
        return 0;
    }
    /* the shell's options the oracles pass: this output has no header and no prompt anyway */
    while (argc > 1 && (!strcmp(argv[1], "-batch") || !strcmp(argv[1], "-noheader"))) {
        argv++;
        argc--;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: rt_sql [-batch] [-noheader] DB [.read FILE | SQL]...\n");
        return 2;
    }
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "rt_sql: cannot open '%s': %s\n", argv[1], sqlite3_errmsg(db));
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        char *sql = NULL, *err = NULL;
        if (!strncmp(argv[i], ".read ", 6) && !(sql = slurp(argv[i] + 6))) {
            fprintf(stderr, "rt_sql: cannot read '%s'\n", argv[i] + 6);
            return 1;
        }
        if (sqlite3_exec(db, sql ? sql : argv[i], print_row, NULL, &err) != SQLITE_OK) {
            fprintf(stderr, "rt_sql: %s\n", err ? err : "error");
            return 1;
        }
        free(sql);
    }
    sqlite3_close(db);
    return 0;
}
