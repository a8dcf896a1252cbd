/* export.h - turning recorded samples into the references' formats.
 *
 * CSV rows come from the views of sql/views.sql (python_system, python_process,
 * python_combined); this module only formats them: the Python reference's CSV dialect
 * (QUOTE_NONNUMERIC, repr() floats, its per-column rounding and int-0 rules). JSON Lines are
 * written from the tables by the field table of jsonl.c, value by value as SQLite's
 * json_object() writes them. Export and live output share it, so a live line and the
 * exported line of the same sample are identical. */
#ifndef RTRACK_EXPORT_H
#define RTRACK_EXPORT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

enum rt_export_format { RT_FMT_CSV, RT_FMT_JSONL };
enum rt_export_table { RT_TABLE_COMBINED, RT_TABLE_SYSTEM, RT_TABLE_PROCESS };

struct rt_export_query {
    enum rt_export_format format;
    enum rt_export_table table;
    int64_t run_id;
    double since, until;      /* epoch seconds; NAN = open */
    int64_t sample_id;        /* > 0: only this sample (live output) */
    int64_t seq_from, seq_to; /* > 0: only samples with seq in [seq_from, seq_to] (batches) */
    int rust_jsonl; /* JSON Lines exactly as the Rust tool writes them (jsonl.c: RUST_*) */
};

struct rt_exporter;
struct rt_store;

/* Prepare the read of a query on the store; NULL with a message in err on failure. Closed
 * before the store is. */
struct rt_exporter *rt_exporter_open(struct rt_store *store, const struct rt_export_query *q,
                                     char *err, size_t errlen);
/* Write the header line (CSV only; nothing for JSON Lines); -1 with errno when it cannot be
 * written. */
int rt_exporter_header(struct rt_exporter *x, FILE *out);
/* Write the matching rows; returns the number written, -1 when the database cannot be read (err
 * says after how many rows and which sample, so where the output ends), or -2 when the output
 * cannot be written (err: the system's reason, strerror). */
int64_t rt_exporter_rows(struct rt_exporter *x, FILE *out, char *err, size_t errlen);
/* Live output: rebind to one sample and write its line. */
int rt_exporter_sample(struct rt_exporter *x, int64_t sample_id, FILE *out);
void rt_exporter_close(struct rt_exporter *x);

/* --- output files: export -o, report -o and the live output --------------------------------
 *
 * What a path names decides how it is written, never whatever is there being replaced:
 * - a regular file, or a name where nothing is yet: RT_OUT_MODE_REPLACE writes a new file
 *   beside it (mkostemp: O_CREAT|O_EXCL, mode 0600, in the target's directory) and renames it
 *   over the name when complete, with the replaced file's mode and owner (a new file stays
 *   0600: command lines and tags can hold secrets); RT_OUT_MODE_TRUNCATE (the live output,
 *   which `tail -f` follows) truncates an existing file in place (its mode and owner kept) or
 *   creates a new one with O_EXCL, 0600;
 * - a character device, a FIFO or a socket (/dev/null, /dev/tty, a pipe) is opened and written
 *   as it is, never replaced, its errors reported (/dev/full fails);
 * - /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are that descriptor of rtrack's
 *   (duplicated: appends to a file stdout points at stay appends);
 * - a symbolic link is followed only when it is owned by the caller (effective uid) or by root:
 *   the kernel's protected_symlinks rule applied everywhere, so a link another user planted
 *   (in /tmp, or in a directory of theirs root writes into) is refused instead of making root
 *   write wherever it points; a link to nothing is refused too (creating a file through a link
 *   is how a program is made to write where it was not meant to). A followed link stays a
 *   link: the file it points to is what is written, as above;
 * - a directory and a block device are refused. */
enum rt_out_kind {
    RT_OUT_NEW,     /* nothing there yet */
    RT_OUT_REGULAR, /* a regular file */
    RT_OUT_DIRECT,  /* a character device, FIFO or socket: written as it is */
    RT_OUT_FD,      /* one of rtrack's descriptors */
};
struct rt_out_target {
    enum rt_out_kind kind;
    char *path;    /* what is written, after the links followed (malloc'd) */
    int fd;        /* RT_OUT_FD: the descriptor */
    int have_stat; /* st is the file found (RT_OUT_REGULAR, RT_OUT_DIRECT) */
    struct stat st;
};
/* What `path` names, by the rules above; -1 with the reason in err (a sentence naming path),
 * and t->path where the links led (a link's missing target). Freed with rt_out_target_free()
 * either way. */
int rt_out_resolve(const char *path, struct rt_out_target *t, char *err, size_t errlen);
void rt_out_target_free(struct rt_out_target *t);

enum rt_out_mode { RT_OUT_MODE_REPLACE, RT_OUT_MODE_TRUNCATE };
struct rt_outfile;
/* NULL with the reason in err ("cannot write 'P': ..."). "-" is stdout (descriptor 1). */
struct rt_outfile *rt_outfile_open(const char *path, enum rt_out_mode mode, char *err,
                                   size_t errlen);
FILE *rt_outfile_stream(struct rt_outfile *o);
/* 1 when the output is written where it goes as it is written (a device, a FIFO, a descriptor,
 * a live output file): a failure leaves what was written so far; 0 when it is a new file
 * renamed into place at the end (a failure leaves nothing). */
int rt_outfile_direct(const struct rt_outfile *o);
/* ok: flushed, checked, (RT_OUT_MODE_REPLACE) synced and renamed into place; 0, or -1 with the
 * reason in err. !ok: a replacement is discarded, nothing else done. Frees o either way. */
int rt_outfile_close(struct rt_outfile *o, int ok, char *err, size_t errlen);

/* Live output while recording: each stored sample as one line (JSON Lines, or the combined
 * CSV with its header first), flushed at once so `tail -f` follows it. A write error (a
 * closed pipe, a full disk) stops the live output with one warning; recording goes on. */
struct rt_live;
enum rt_live_format {
    RT_LIVE_JSONL,      /* JSON Lines (jsonl.c) */
    RT_LIVE_PYTHON_CSV, /* the Python reference's combined CSV (32 columns, its dialect) */
    RT_LIVE_RUST_CSV,   /* the Rust tool's CSV (32 columns, its number formats: rustcsv.c) */
    RT_LIVE_SYSTEM_CSV, /* the Python SystemTracker's 21 columns, its dialect */
    RT_LIVE_RUST_JSONL, /* JSON Lines as the Rust tool writes them (rtrack as resource-tracker) */
};
/* NULL after printing why the output cannot be opened. format: enum rt_live_format. */
struct rt_live *rt_live_open(struct rt_store *store, const char *path, int format);
void rt_live_write(struct rt_live *l, int64_t sample_id);
void rt_live_close(struct rt_live *l);

#endif
