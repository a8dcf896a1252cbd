/* main.c - the subcommand table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/cmd.h"
#include "rtrack/log.h"
#include "rtrack/util.h"
#include "rtrack/version.h"

struct command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
};

static const struct command commands[] = {
    {"run", cmd_run, "run a command, track its process tree and the system, record to SQLite"},
    {"record", cmd_record, "record the system (and optionally a process tree) to SQLite"},
    {"export", cmd_export, "write a run as Python-parity CSV or Rust-compatible JSON Lines"},
    {"runs", cmd_runs, "list the runs in a database"},
    {"summary", cmd_summary, "what a run used and what to request next time"},
    {"upload", cmd_upload, "send recorded runs to Spare Cores Sentinel (gzip CSV on S3)"},
    {"report", cmd_report, "write a run as a self-contained HTML page with charts"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: rtrack <command> [options]\n\n"
                 "rtrack tracks CPU, memory, disks, network and a job's whole process tree and\n"
                 "records every sample into a SQLite database.\n\ncommands:\n");
    for (size_t i = 0; i < RT_ARRAY_LEN(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'rtrack <command> --help' describes a command's options.\n"
                 "'rtrack --version' prints the version.\n");
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t *row = xcalloc(lb + 1, sizeof(*row));
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[lb];
    free(row);
    return d;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return RT_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
        usage(stdout);
        return RT_EXIT_OK;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("rtrack %s (commit %s)\n", RTRACK_VERSION, RTRACK_GIT_COMMIT);
        return RT_EXIT_OK;
    }
    if (!strcmp(name, "help")) {
        if (argc < 3) {
            usage(stdout);
            return RT_EXIT_OK;
        }
        name = argv[2];
    }
    for (size_t i = 0; i < RT_ARRAY_LEN(commands); i++) {
        if (strcmp(name, commands[i].name) != 0)
            continue;
        if (name == argv[1])
            return commands[i].fn(argc - 1, argv + 1);
        char *help_argv[] = {(char *)commands[i].name, "--help", NULL};
        return commands[i].fn(2, help_argv);
    }
    const char *best = NULL;
    size_t bestd = 3;
    for (size_t i = 0; i < RT_ARRAY_LEN(commands); i++) {
        size_t d = edit_distance(name, commands[i].name);
        if (d < bestd) {
            bestd = d;
            best = commands[i].name;
        }
    }
    if (best)
        rt_err("unknown command '%s'; did you mean '%s'?", name, best);
    else
        rt_err("unknown command '%s' (see 'rtrack --help')", name);
    return RT_EXIT_USAGE;
}
