/* cmd_report.c - `rtrack report`: a recorded run as one self-contained HTML page (report.h). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/log.h"
#include "rtrack/summary/report.h"
#include "rtrack/store/read.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/summary.h"
#include "rtrack/base/util.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: rtrack report [options] -o FILE\n\n"
                 "Write a recorded run as one HTML page: the run, what it used, what to ask for\n"
                 "next time, the busiest processes and charts over time. The page is\n"
                 "self-contained (no scripts, fonts or images to fetch) and prints well.\n\n"
                 "options:\n"
                 "  -d, --db FILE              database (default rtrack.db) [env RTRACK_DB]\n"
                 "  -r, --run ID|latest        run to report (default latest)\n"
                 "  -o, --output FILE          the HTML file to write (required; - = stdout)\n"
                 "      --recommend-server     add the cheapest matching cloud server from the\n"
                 "                             Spare Cores Keeper API [env RTRACK_KEEPER_URL]\n"
                 "  -h, --help                 show this help\n");
}

/* The page, through the write-then-rename output export uses too. */
static int write_file(const char *path, const struct rt_buf *page)
{
    struct cmd_out o;
    if (cmd_out_open(&o, path) != 0)
        return -1;
    int ok = fwrite(page->p, 1, page->len, o.f) == page->len;
    if (!ok)
        rt_err("cannot write '%s': %s", path, rt_strerror(errno));
    return cmd_out_close(&o, ok) == 0 && ok ? 0 : -1;
}

int cmd_report(int argc, char **argv, const struct rt_env *env)
{
    static const struct option lopts[] = {
        {"db", required_argument, NULL, 'd'},     {"run", required_argument, NULL, 'r'},
        {"output", required_argument, NULL, 'o'}, {"recommend-server", no_argument, NULL, 1},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    const char *db_path = rt_env_db(env);
    const char *run = "latest", *output = NULL;
    int server = 0;
    int c;
    opterr = 0;
    optind = 0;
    while ((c = getopt_long(argc, argv, "+:d:r:o:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'd':
            db_path = optarg;
            break;
        case 'r':
            run = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 1:
            server = 1;
            break;
        case 'h':
            usage(stdout);
            return RT_EXIT_OK;
        default:
            return cmd_option_error("report", c, argv);
        }
    }
    if (optind < argc) {
        rt_err("report: unexpected argument '%s'", argv[optind]);
        return RT_EXIT_USAGE;
    }
    if (!output || !*output) {
        rt_err("report: which file? give -o FILE (the HTML page to write)");
        return RT_EXIT_USAGE;
    }

    int64_t run_id;
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, run, &run_id, NULL);
    if (!store)
        return RT_EXIT_USAGE;
    int rc;
    char err[600];
    struct rt_buf summary = {0}, page = {0};
    struct rt_summary_opts so = {
        .run_id = run_id,
        .recommend_server = server,
        .keeper_url = env->keeper_url,
    };
    /* one read snapshot: the summary and the charts see the same samples even while a
     * recorder is still writing the run */
    rt_store_read_begin(store);
    int bad_input = 0;
    err[0] = '\0';
    if (rt_summary_json(store, &so, &summary, &bad_input, err, sizeof(err)) != 0) {
        rt_err("%s", err[0] ? err : "report: cannot summarize the run");
        rc = bad_input ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
    } else if (rt_report_html(store, run_id, summary.p ? summary.p : "", &page, err, sizeof(err)) !=
               0) {
        rt_err("%s", err);
        rc = RT_EXIT_FAILURE;
    } else {
        rc = RT_EXIT_OK;
    }
    rt_store_read_end(store);
    if (rc == RT_EXIT_OK && write_file(output, &page) != 0)
        rc = RT_EXIT_FAILURE;
    rt_buf_free(&summary);
    rt_buf_free(&page);
    rt_store_close(store);
    return rc;
}
