/* cmd_upload.c - `rtrack upload`: recorded runs to Spare Cores Sentinel, after the fact. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/fmt.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/store/uploads.h"
#include "rtrack/upload/upload.h"
#include "rtrack/upload/upload_run.h"
#include "rtrack/base/util.h"

struct upload_opts {
    int all, dry_run;
    struct rt_upload_opts up; /* from the environment (upload_check) */
};

static const struct rt_opt upload_opts[] = {
    CMD_OPT_DB("database (default rtrack.db); again, or a glob, for several: with --all, "
               "each in turn"),
    CMD_OPT_RUN("the run (default latest)"),
    CMD_OPT_EXTERNAL_RUN_ID,
    OPT_BOOL("all", 'a', "every finished run not uploaded yet", struct upload_opts, all),
    OPT_BOOL("dry-run", 'n', "say what would be sent; no network", struct upload_opts, dry_run),
    OPT_END,
};

static int upload_check(struct cmd_ctx *c);
static int cmd_upload(struct cmd_ctx *c);

const struct cmd_def cmd_upload_def = {
    .name = "upload",
    .fn = cmd_upload,
    .summary = "send recorded runs to Spare Cores Sentinel (gzip CSV on S3)",
    .synopsis = "[--db FILE]... [--run ID|latest | --external-run-id ID |\n"
                " --all] [--dry-run]",
    .description =
        "Send recorded runs to Spare Cores Sentinel: register each run, upload its\n"
        "samples as gzip CSV batches to the S3 location Sentinel assigns, and finish it.\n"
        "Progress is kept in the database: an interrupted upload resumes where it\n"
        "stopped, a finished run is not sent again.",
    .opts = upload_opts,
    .opts_size = sizeof(struct upload_opts),
    .check = upload_check,
    /* upload keeps its progress in the database: opened for writing, never made */
    .db = CMD_DB_WRITE,
    .db_flags = CMD_DB_EACH | CMD_DB_EXISTING,
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

/* What goes with what, and the environment's values, before any database is opened: the token
 * goes over TLS, or no further than this machine. */
static int upload_check(struct cmd_ctx *c)
{
    struct upload_opts *o = c->opts;
    const struct rt_env *env = c->env;
    if (c->run && o->all) {
        rt_err("upload: %s and --all cannot be used together", c->run_opt);
        return RT_EXIT_USAGE;
    }
    /* a run id or "latest" names a run of one database */
    if (!o->all && cmd_dbs_count() > 1) {
        rt_err("upload: %s names a run of one database, and --db gave %d (with --all, each is "
               "uploaded in turn)",
               c->run ? c->run_opt : "the latest run", cmd_dbs_count());
        return RT_EXIT_USAGE;
    }
    c->run = o->all ? NULL : c->run ? c->run : "latest";
    if (rt_env_check_http(env, "upload") != 0)
        return RT_EXIT_USAGE;
    o->up = (struct rt_upload_opts){.batch_rows = 10000,
                                    .inline_max = 64 * 1024,
                                    .dry_run = o->dry_run,
                                    .s3_endpoint = env->s3_endpoint,
                                    .s3_region = env->s3_region};
    const char *br = env->upload_batch_rows;
    if (br && (rt_parse_i64(br, &o->up.batch_rows) != 0 || o->up.batch_rows < 1)) {
        rt_err("upload: invalid RTRACK_UPLOAD_BATCH_ROWS '%s': expected a positive number", br);
        return RT_EXIT_USAGE;
    }
    if (rt_env_inline_max(env, "upload", &o->up.inline_max) != 0)
        return RT_EXIT_USAGE;
    if (!o->dry_run && !(env->sentinel_token && *env->sentinel_token)) {
        rt_err("upload: SENTINEL_API_TOKEN is not set (the Sentinel API token; see docs/usage.md)");
        return RT_EXIT_USAGE;
    }
    char err[512];
    if (!o->dry_run && rt_sentinel_url_check(env->sentinel_url, err, sizeof(err)) != 0) {
        rt_err("upload: %s", err);
        return RT_EXIT_USAGE;
    }
    return 0;
}

/* Run `id` sent (or, dry, counted): said on stdout (dry) or stderr; an exit code. */
static int upload_one(struct cmd_ctx *c, struct rt_sentinel *s, int64_t id)
{
    const struct upload_opts *o = c->opts;
    struct rt_upload_result r;
    char err[512];
    /* the dry run's lines (stdout) and the notes (stderr) in run order, also in a file */
    fflush(stdout);
    if (rt_upload_run(c->store, id, s, &o->up, &r, err, sizeof(err)) != 0) {
        if (r.skipped) {
            rt_note("upload: run %lld skipped: %s", (long long)id, err);
            return RT_EXIT_OK;
        }
        if (r.in_doubt) {
            /* only the user can tell whether Sentinel has it: how to say "it has not" */
            char *sql = rt_store_upload_doubt_sql(id);
            char *argv[] = {"sqlite3", (char *)c->db_path, sql};
            char *cmd = rt_fmt_argv(argv, 3);
            rt_err("upload: run %lld: %s; if sentinel has no such run, clear the doubt with %s "
                   "and upload again",
                   (long long)id, err, cmd);
            free(cmd);
            free(sql);
            return RT_EXIT_FAILURE;
        }
        rt_err("upload: run %lld: %s; what was sent is kept, 'rtrack upload' again resumes",
               (long long)id, err);
        return r.bad_input ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    }
    if (r.already)
        rt_note("upload: run %lld was uploaded before; nothing to do", (long long)id);
    else if (o->dry_run) {
        printf("run %lld: %lld sample%s to upload\n", (long long)id, (long long)r.pending_rows,
               r.pending_rows == 1 ? "" : "s");
        if (cmd_stdout_check() != 0) /* said why; the dry run's answer is lost */
            return -RT_EXIT_FAILURE;
    } else if (r.inline_data)
        rt_note("upload: run %lld -> sentinel run %s: %lld sample%s, %lld bytes of CSV "
                "inline with finish (no S3 object)",
                (long long)id, r.remote_run_id, (long long)r.rows, r.rows == 1 ? "" : "s",
                (long long)r.bytes);
    else
        rt_note("upload: run %lld -> sentinel run %s: %lld sample%s in %lld batch%s, %lld "
                "bytes",
                (long long)id, r.remote_run_id, (long long)r.rows, r.rows == 1 ? "" : "s",
                (long long)r.batches, r.batches == 1 ? "" : "es", (long long)r.bytes);
    return RT_EXIT_OK;
}

/* The runs of the database open in c sent: --run's (or the latest), or with --all every one not
 * sent yet. */
static int cmd_upload(struct cmd_ctx *c)
{
    const struct upload_opts *o = c->opts;
    int64_t *ids = NULL;
    int nids = 0, cap = 0;
    if (c->ndbs > 1)
        rt_note("upload: database '%s'", c->db_path);
    if (!o->all) {
        *RT_PUSH(ids, nids, cap) = c->run_id;
    } else if (rt_store_upload_pending(c->store, &ids, &nids) != 0) {
        rt_err("upload: cannot read '%s': %s", c->db_path, rt_store_error(c->store));
        return RT_EXIT_FAILURE;
    } else if (nids == 0) {
        rt_note("upload: nothing to upload in '%s'", c->db_path);
    }
    struct rt_sentinel s;
    memset(&s, 0, sizeof(s));
    if (!o->dry_run)
        rt_sentinel_init(&s, c->env->sentinel_token, c->env->sentinel_url); /* checked */
    int rc = RT_EXIT_OK;
    for (int i = 0; i < nids; i++) {
        int r = upload_one(c, &s, ids[i]);
        if (r < 0) { /* stdout is gone: no more */
            rc = -r;
            break;
        }
        rc = r != RT_EXIT_OK ? r : rc;
    }
    free(ids);
    rt_sentinel_free(&s);
    return rc;
}
