/* cmd_upload.c - `rtrack upload`: recorded runs to Spare Cores Sentinel, after the fact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/store/uploads.h"
#include "rtrack/upload/upload.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"

static const struct cmd_opt upload_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db)", "RTRACK_DB", 'd'},
    {"run", 'r', "ID|latest", "the run (default latest)", NULL, 'r'},
    {"all", 'a', NULL, "every finished run not uploaded yet", NULL, 'a'},
    {"dry-run", 'n', NULL, "say what would be sent; no network", NULL, 'n'},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_upload(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_upload_def = {
    .name = "upload",
    .fn = cmd_upload,
    .summary = "send recorded runs to Spare Cores Sentinel (gzip CSV on S3)",
    .synopsis = "[--db FILE] [--run ID|latest | --all] [--dry-run]",
    .description =
        "Send recorded runs to Spare Cores Sentinel: register each run, upload its\n"
        "samples as gzip CSV batches to the S3 location Sentinel assigns, and finish it.\n"
        "Progress is kept in the database: an interrupted upload resumes where it\n"
        "stopped, a finished run is not sent again.",
    .opts = upload_opts,
    .epilog = "environment:\n"
              "  SENTINEL_API_TOKEN           the API token (required; never stored or printed)\n"
              "  SENTINEL_API_URL             the API (default\n"
              "                               https://api.sentinel.sparecores.net)\n"
              "  RTRACK_S3_ENDPOINT, RTRACK_S3_REGION\n"
              "                               an S3-compatible store instead of AWS\n"
              "  RTRACK_UPLOAD_BATCH_ROWS     samples per S3 object (default 10000)\n"
              "  RTRACK_UPLOAD_INLINE_MAX     bytes of CSV sent inline with the finish call\n"
              "                               instead of S3 (default 65536)\n",
};

/* s in single quotes for a shell command the user may paste (a ' inside becomes '\''). */
static void shell_quote(const char *s, char *out, size_t cap)
{
    struct rt_buf b = {0};
    rt_buf_puts(&b, "'");
    for (; *s; s++)
        if (*s == '\'')
            rt_buf_puts(&b, "'\\''");
        else
            rt_buf_append(&b, s, 1);
    rt_buf_puts(&b, "'");
    snprintf(out, cap, "%s", b.p);
    rt_buf_free(&b);
}

static int cmd_upload(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path = rt_env_db(env), *run = NULL;
    int all = 0;
    struct rt_upload_opts o = {.batch_rows = 10000, .inline_max = 64 * 1024};
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_upload_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        switch (c) {
        case 'd':
            db_path = v;
            break;
        case 'r':
            run = v;
            break;
        case 'a':
            all = 1;
            break;
        case 'n':
            o.dry_run = 1;
            break;
        }
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    if (run && all) {
        rt_err("upload: --run and --all cannot be used together");
        return RT_EXIT_USAGE;
    }
    if (rt_env_check_http(env, "upload") != 0)
        return RT_EXIT_USAGE;
    const char *br = env->upload_batch_rows;
    if (br && (rt_parse_i64(br, &o.batch_rows) != 0 || o.batch_rows < 1)) {
        rt_err("upload: invalid RTRACK_UPLOAD_BATCH_ROWS '%s': expected a positive number", br);
        return RT_EXIT_USAGE;
    }
    if (rt_env_inline_max(env, "upload", &o.inline_max) != 0)
        return RT_EXIT_USAGE;
    struct rt_sentinel s;
    memset(&s, 0, sizeof(s));
    o.s3_endpoint = env->s3_endpoint;
    o.s3_region = env->s3_region;
    if (!o.dry_run && rt_sentinel_init(&s, env->sentinel_token, env->sentinel_url) != 0) {
        rt_err("upload: SENTINEL_API_TOKEN is not set (the Sentinel API token; see docs/usage.md)");
        return RT_EXIT_USAGE;
    }
    /* the token goes over TLS, or no further than this machine */
    char err[512];
    if (!o.dry_run && rt_sentinel_url_check(env->sentinel_url, err, sizeof(err)) != 0) {
        rt_err("upload: %s", err);
        rt_sentinel_free(&s);
        return RT_EXIT_USAGE;
    }
    if (access(db_path, F_OK) != 0) {
        rt_err("upload: no database '%s'", db_path);
        rt_sentinel_free(&s);
        return RT_EXIT_USAGE;
    }
    /* upload keeps its progress in the database: opened for writing */
    int64_t id = 0;
    const char *which = all ? NULL : (run ? run : "latest");
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_WRITE, which, &id, NULL);
    if (!store) {
        rt_sentinel_free(&s);
        return RT_EXIT_USAGE;
    }
    int rc = RT_EXIT_OK;
    /* the runs to send */
    int64_t *ids = NULL;
    int nids = 0, cap = 0;
    if (all) {
        if (rt_store_upload_pending(store, &ids, &nids) != 0) {
            rt_err("upload: cannot read '%s': %s", db_path, rt_store_error(store));
            rc = RT_EXIT_FAILURE;
            goto out;
        }
        if (nids == 0)
            rt_note("upload: nothing to upload in '%s'", db_path);
    } else {
        *RT_PUSH(ids, nids, cap) = id;
    }
    for (int i = 0; i < nids; i++) {
        struct rt_upload_result r;
        /* the dry run's lines (stdout) and the notes (stderr) in run order, also in a file */
        fflush(stdout);
        if (rt_upload_run(store, ids[i], &s, &o, &r, err, sizeof(err)) != 0) {
            if (r.skipped) {
                rt_note("upload: run %lld skipped: %s", (long long)ids[i], err);
                continue;
            }
            if (r.in_doubt) {
                /* only the user can tell whether Sentinel has it: how to say "it has not" */
                char qdb[1024];
                shell_quote(db_path, qdb, sizeof(qdb));
                rt_err("upload: run %lld: %s; if sentinel has no such run, clear the doubt with "
                       "sqlite3 %s \"DELETE FROM uploads WHERE run_id = %lld AND remote_run_id "
                       "IS NULL\" and upload again",
                       (long long)ids[i], err, qdb, (long long)ids[i]);
                rc = RT_EXIT_FAILURE;
                continue;
            }
            rt_err("upload: run %lld: %s; what was sent is kept, 'rtrack upload' again resumes",
                   (long long)ids[i], err);
            rc = r.bad_input ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
            continue;
        }
        if (r.already)
            rt_note("upload: run %lld was uploaded before; nothing to do", (long long)ids[i]);
        else if (o.dry_run) {
            printf("run %lld: %lld sample%s to upload\n", (long long)ids[i],
                   (long long)r.pending_rows, r.pending_rows == 1 ? "" : "s");
            if (cmd_stdout_check() != 0) { /* said why; the dry run's answer is lost */
                rc = RT_EXIT_FAILURE;
                break;
            }
        } else if (r.inline_data)
            rt_note("upload: run %lld -> sentinel run %s: %lld sample%s, %lld bytes of CSV "
                    "inline with finish (no S3 object)",
                    (long long)ids[i], r.remote_run_id, (long long)r.rows, r.rows == 1 ? "" : "s",
                    (long long)r.bytes);
        else
            rt_note("upload: run %lld -> sentinel run %s: %lld sample%s in %lld batch%s, %lld "
                    "bytes",
                    (long long)ids[i], r.remote_run_id, (long long)r.rows, r.rows == 1 ? "" : "s",
                    (long long)r.batches, r.batches == 1 ? "" : "es", (long long)r.bytes);
    }
out:
    free(ids);
    rt_store_close(store);
    rt_sentinel_free(&s);
    return rc;
}
