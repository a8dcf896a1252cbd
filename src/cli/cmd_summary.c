/* cmd_summary.c - `rtrack summary`: what a run used and what to request next time.
 *
 * The figures are rt_summary_json()'s (summary.c); text and markdown are read back from that
 * JSON (base/json.h), so the three formats can never disagree. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/base/json.h"
#include "rtrack/base/log.h"
#include "rtrack/store/store.h"
#include "rtrack/summary/summary.h"
#include "rtrack/base/utf8.h"
#include "rtrack/base/util.h"

/* Reading values back from the summary JSON. */
struct jr {
    struct rt_json *doc;
    char buf[16][256];
    int next;
};

/* The value at path as text (rt_json_get()), or NULL for null/absent. The text lives until
 * sixteen more calls (enough for one printf's arguments). */
static const char *jt(struct jr *r, const char *path)
{
    char *v = NULL;
    if (rt_json_get(r->doc, path, &v) <= RT_JSON_NULL || !v) {
        free(v);
        return NULL;
    }
    char *out = r->buf[r->next++ & 15];
    snprintf(out, sizeof(r->buf[0]), "%s", v);
    free(v);
    rt_utf8_printable(out, 0); /* job, command and process names are the job's text */
    return out;
}

static double jd(struct jr *r, const char *path)
{
    const char *t = jt(r, path);
    return t ? strtod(t, NULL) : RT_NAN;
}

static const char *or_dash(const char *s)
{
    return s ? s : "-";
}

/* A value in its unit, for people. */
static void human(char *out, size_t n, double v, const char *unit)
{
    if (isnan(v)) {
        snprintf(out, n, "-");
    } else if (!strcmp(unit, "B/s") || !strcmp(unit, "B")) {
        static const char *const u[] = {"", "Ki", "Mi", "Gi", "Ti"};
        int k = 0;
        while (fabs(v) >= 1024 && k < 4) {
            v /= 1024;
            k++;
        }
        snprintf(out, n, k ? "%.1f %s%s" : "%.0f %s%s", v, u[k], unit);
    } else if (!strcmp(unit, "MiB")) {
        snprintf(out, n, "%.1f", v);
    } else {
        snprintf(out, n, "%.2f", v);
    }
}

static const struct {
    const char *key, *label, *unit;
} metrics[] = {
    {"cpu_cores", "CPU cores", "cores"},
    {"memory_mib", "memory MiB", "MiB"},
    {"disk_read_bytes_per_s", "disk read", "B/s"},
    {"disk_write_bytes_per_s", "disk write", "B/s"},
    {"net_recv_bytes_per_s", "net in", "B/s"},
    {"net_sent_bytes_per_s", "net out", "B/s"},
    {"gpu_usage", "GPUs busy", "gpus"},
    {"gpu_vram_mib", "VRAM MiB", "MiB"},
    {"gpus_used", "GPUs used", "gpus"},
};

static void stats_table(struct jr *r, const char *side, int md)
{
    static const char *const st[] = {"mean", "p50", "p95", "max"};
    char path[128], cell[4][32];
    for (size_t m = 0; m < RT_ARRAY_LEN(metrics); m++) {
        snprintf(path, sizeof(path), "$.%s.%s", side, metrics[m].key);
        if (!jt(r, path))
            continue; /* no such values (no GPU, no network for the tree) */
        for (int k = 0; k < 4; k++) {
            snprintf(path, sizeof(path), "$.%s.%s.%s", side, metrics[m].key, st[k]);
            human(cell[k], sizeof(cell[k]), jd(r, path), metrics[m].unit);
        }
        if (md)
            printf("| %s %s | %s | %s | %s | %s |\n", side, metrics[m].label, cell[0], cell[1],
                   cell[2], cell[3]);
        else
            printf("  %-12s %12s %12s %12s %12s\n", metrics[m].label, cell[0], cell[1], cell[2],
                   cell[3]);
    }
}

static void print_summary(struct jr *r, int md)
{
    char a[64], b[64], c[64], d[64];
    const char *h = md ? "## " : "";
    printf("%srun %s%s%s: %s%s", h, jt(r, "$.run.id"), jt(r, "$.run.job_name") ? " · " : "",
           jt(r, "$.run.job_name") ? jt(r, "$.run.job_name") : "", or_dash(jt(r, "$.run.status")),
           !strcmp(or_dash(jt(r, "$.run.in_progress")), "1") ? " (in progress)" : "");
    if (jt(r, "$.run.exit_code"))
        printf(", exit %s", jt(r, "$.run.exit_code"));
    printf("\n\n");
    double runs = jd(r, "$.run.runs");
    if (runs > 1)
        printf("%d runs of job '%s' together (the newest run's facts below)\n", (int)runs,
               or_dash(jt(r, "$.run.job_name")));
    const char *cmd = jt(r, "$.run.command");
    if (cmd)
        printf("%scommand:  %s\n", md ? "- " : "", cmd);
    char when[32] = "-";
    double t0 = jd(r, "$.run.started_at");
    if (!isnan(t0)) {
        time_t tt = (time_t)t0;
        struct tm tm;
        if (gmtime_r(&tt, &tm))
            strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    }
    printf("%sstarted:  %s, %.2f s, %s samples every %s s\n", md ? "- " : "", when,
           jd(r, "$.run.duration_s"), or_dash(jt(r, "$.run.samples")),
           or_dash(jt(r, "$.run.interval_s")));
    human(a, sizeof(a), jd(r, "$.host.memory_mib") * 1048576.0, "B");
    printf("%shost:     %s, %s vCPUs (%s), %s memory", md ? "- " : "",
           or_dash(jt(r, "$.host.hostname")), or_dash(jt(r, "$.host.vcpus")),
           or_dash(jt(r, "$.host.cpu_model")), a);
    if (jt(r, "$.host.gpu_count")) {
        human(b, sizeof(b), jd(r, "$.host.gpu_memory_mib") * 1048576.0, "B");
        printf(", %s x %s (%s VRAM)", jt(r, "$.host.gpu_count"), or_dash(jt(r, "$.host.gpu_model")),
               b);
    }
    printf("\n\n");

    if (md)
        printf("| metric | mean | p50 | p95 | max |\n|---|---|---|---|---|\n");
    else
        printf("  %-12s %12s %12s %12s %12s\n", "", "mean", "p50", "p95", "max");
    if (jt(r, "$.process")) {
        if (!md)
            printf("process tree\n");
        stats_table(r, "process", md);
    }
    if (!md)
        printf("system\n");
    stats_table(r, "system", md);
    human(a, sizeof(a), jd(r, "$.system.disk_read_bytes"), "B");
    human(b, sizeof(b), jd(r, "$.system.disk_write_bytes"), "B");
    human(c, sizeof(c), jd(r, "$.system.net_recv_bytes"), "B");
    human(d, sizeof(d), jd(r, "$.system.net_sent_bytes"), "B");
    printf("\n%stotals:   system disk read %s, written %s; network in %s, out %s\n", md ? "- " : "",
           a, b, c, d);
    if (jt(r, "$.process")) {
        human(a, sizeof(a), jd(r, "$.process.disk_read_bytes"), "B");
        human(b, sizeof(b), jd(r, "$.process.disk_write_bytes"), "B");
        printf("%sprocess tree disk read %s, written %s\n", md ? "- " : "          ", a, b);
    }
    if (jt(r, "$.memory_peak")) {
        printf("%speak:     %.1f MiB sampled at +%.1f s, held by", md ? "- " : "",
               jd(r, "$.memory_peak.mib"), jd(r, "$.memory_peak.at_s"));
        for (int i = 0; i < 5; i++) {
            char path[64];
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pid", i);
            if (!jt(r, path))
                break;
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].name", i);
            const char *name = or_dash(jt(r, path));
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pid", i);
            const char *pid = jt(r, path);
            snprintf(path, sizeof(path), "$.memory_peak.processes[%d].pss_mib", i);
            printf("%s %s (%s) %.1f MiB", i ? "," : "", name, pid, jd(r, path));
        }
        if (jd(r, "$.memory_peak.others.count") > 0)
            printf(", %.0f more %.1f MiB", jd(r, "$.memory_peak.others.count"),
                   jd(r, "$.memory_peak.others.pss_mib"));
        printf("\n");
    }
    if (jt(r, "$.kernel")) {
        human(a, sizeof(a), jd(r, "$.kernel.maxrss_mib") * 1048576.0, "B");
        printf("%skernel:   largest resident set of one process %s; CPU time %.2f s user, "
               "%.2f s system",
               md ? "- " : "", a, jd(r, "$.kernel.user_s"), jd(r, "$.kernel.sys_s"));
        if (jt(r, "$.kernel.cgroup_peak_mib")) {
            human(b, sizeof(b), jd(r, "$.kernel.cgroup_peak_mib") * 1048576.0, "B");
            printf("; the job's cgroup peaked at %s (page cache included)", b);
        }
        printf("\n");
    }

    printf("\n%srecommendation\n\n", md ? "### " : "");
    printf("%snext time: %s (for 95 %% of the intervals: %s vCPUs)\n", md ? "- " : "",
           or_dash(jt(r, "$.recommendation.text")), or_dash(jt(r, "$.recommendation.cpu_p95")));
    const char *starved = jt(r, "$.cpu_demand.starved");
    if (starved && (!strcmp(starved, "1") || !strcmp(starved, "true")))
        printf("%scpu:       CPU-starved: the tree waited for a CPU %.0f %% of the time it wanted "
               "one; it used %.2f cores and would have used ~%.2f\n",
               md ? "- " : "", jd(r, "$.cpu_demand.wait_pct"), jd(r, "$.cpu_demand.usage_cores"),
               jd(r, "$.cpu_demand.demand_cores"));
    if (jt(r, "$.recommendation.caveat.text"))
        printf("%scaveat:    %s\n", md ? "- " : "", jt(r, "$.recommendation.caveat.text"));
    printf("%smemory:    %s\n", md ? "- " : "",
           or_dash(jt(r, "$.recommendation.memory_basis.arithmetic")));
    printf("%smetaflow:  %s%s%s\n", md ? "- " : "", md ? "`" : "",
           or_dash(jt(r, "$.recommendation.metaflow")), md ? "`" : "");
    printf("%sused of the host: CPU %s %%, memory %s %%", md ? "- " : "",
           or_dash(jt(r, "$.efficiency.cpu_pct")), or_dash(jt(r, "$.efficiency.memory_pct")));
    if (jt(r, "$.efficiency.gpu_pct"))
        printf(", GPU %s %%, VRAM %s %%", jt(r, "$.efficiency.gpu_pct"),
               or_dash(jt(r, "$.efficiency.vram_pct")));
    printf("; server looks %s\n", or_dash(jt(r, "$.allocation")));
    if (jt(r, "$.allocated")) {
        /* seff's figures: what the job was given, and how much of it it used */
        printf("%sallocated: ", md ? "- " : "");
        const char *sep = "";
        if (jt(r, "$.allocated.cpus")) {
            printf("%s vCPUs (%s)", jt(r, "$.allocated.cpus"),
                   or_dash(jt(r, "$.allocated.cpus_from")));
            sep = ", ";
        }
        if (jt(r, "$.allocated.memory_mib")) {
            printf("%s%s MiB memory (%s)", sep, jt(r, "$.allocated.memory_mib"),
                   or_dash(jt(r, "$.allocated.memory_from")));
            sep = ", ";
        }
        if (jt(r, "$.allocated.gpus")) {
            printf("%s%s GPUs", sep, jt(r, "$.allocated.gpus"));
            sep = ", ";
        }
        if (jt(r, "$.allocated.slurm_job_id"))
            printf("%sSlurm job %s", sep, jt(r, "$.allocated.slurm_job_id"));
        printf("; used of it: CPU %s %%, memory %s %%\n",
               or_dash(jt(r, "$.efficiency.cpu_alloc_pct")),
               or_dash(jt(r, "$.efficiency.memory_alloc_pct")));
    }
    if (jt(r, "$.server"))
        printf("%scheapest fitting server: %s (%s), %s per hour on demand\n", md ? "- " : "",
               or_dash(jt(r, "$.server.display_name")), or_dash(jt(r, "$.server.vendor_id")),
               or_dash(jt(r, "$.server.min_price_ondemand")));
    else if (jt(r, "$.server_error"))
        printf("%sno server recommendation: %s\n", md ? "- " : "", jt(r, "$.server_error"));

    static const char *const tops[2][3] = {{"$.top_processes.by_cpu", "by CPU time", "cpu_s"},
                                           {"$.top_processes.by_pss", "by peak PSS", "pss_mib"}};
    for (int k = 0; k < 2; k++) {
        char path[96];
        snprintf(path, sizeof(path), "%s[0]", tops[k][0]);
        if (!jt(r, path))
            continue;
        printf("%stop processes %s:", md ? "- " : "", tops[k][1]);
        for (int i = 0; i < 5; i++) {
            snprintf(path, sizeof(path), "%s[%d].pid", tops[k][0], i);
            if (!jt(r, path))
                break;
            char name[96], val[96];
            snprintf(path, sizeof(path), "%s[%d].name", tops[k][0], i);
            snprintf(name, sizeof(name), "%s", or_dash(jt(r, path)));
            snprintf(path, sizeof(path), "%s[%d].%s", tops[k][0], i, tops[k][2]);
            snprintf(val, sizeof(val), "%s", or_dash(jt(r, path)));
            snprintf(path, sizeof(path), "%s[%d].pid", tops[k][0], i);
            printf("%s %s (%s) %s %s", i ? "," : "", name, jt(r, path), val, k ? "MiB" : "s");
        }
        printf("\n");
    }

    static const char *const sparks[4][2] = {{"cpu_cores", "CPU"},
                                             {"memory_mib", "memory"},
                                             {"disk_io_bytes_per_s", "disk I/O"},
                                             {"gpu_usage", "GPU"}};
    printf("\n%s", md ? "```\n" : "");
    for (int k = 0; k < 4; k++) {
        char path[64];
        snprintf(path, sizeof(path), "$.sparklines.%s", sparks[k][0]);
        const char *s = jt(r, path);
        if (s)
            printf("%-9s %s\n", sparks[k][1], s);
    }
    printf("%s", md ? "```\n" : "");
}

enum { OPT_SERVER = 1, OPT_SLURM_JOB };

static const struct cmd_opt summary_opts[] = {
    {"db", 'd', "FILE", "database (default rtrack.db); again, or a glob, to read several as one",
     "RTRACK_DB", 'd'},
    {"slurm-job", 0, "ID",
     "this Slurm job across its nodes: a row per node, the job, sbatch options", NULL,
     OPT_SLURM_JOB},
    {"run", 'r', "ID|latest", "the run (default latest)", NULL, 'r'},
    {"job", 'j', "NAME",
     "every run of this job name together (mean of means, max of maxes; default: one run)", NULL,
     'j'},
    {"format", 'f', "text|json|markdown", "output format (default text)", NULL, 'f'},
    {"recommend-server", 0, NULL,
     "ask the Spare Cores Keeper API for the cheapest server that fits", "RTRACK_KEEPER_URL",
     OPT_SERVER},
    {NULL, 0, NULL, NULL, NULL, 0},
};

static int cmd_summary(int argc, char **argv, const struct rt_env *env);

const struct cmd_def cmd_summary_def = {
    .name = "summary",
    .fn = cmd_summary,
    .summary = "what a run used and what to request next time",
    .synopsis = "[--db FILE]... [--run ID|latest | --job NAME]\n"
                "[--slurm-job ID] [--format text|json|markdown]\n"
                "[--recommend-server]",
    .description =
        "What a recorded run used (process tree and system: mean, p50, p95, max), what to\n"
        "request next time, how much of the host it used, its top processes.",
    .opts = summary_opts,
};

static int cmd_summary(int argc, char **argv, const struct rt_env *env)
{
    const char *db_path, *run = NULL, *format = "text";
    struct rt_summary_opts o = {0, NULL, 0, NULL};
    struct cmd_parse p;
    cmd_parse_begin(&p, &cmd_summary_def, argc, argv);
    const char *v;
    int c;
    while ((c = cmd_parse_next(&p, &v)) >= 0) {
        switch (c) {
        case 'd':
            if (cmd_dbs_add("summary", v) != 0)
                return RT_EXIT_USAGE;
            break;
        case OPT_SLURM_JOB:
            cmd_dbs_slurm_job(v);
            break;
        case 'r':
            run = v;
            break;
        case 'j':
            o.job = v;
            break;
        case 'f':
            format = v;
            break;
        case OPT_SERVER:
            o.recommend_server = 1;
            break;
        }
    }
    if (c != CMD_PARSE_DONE)
        return cmd_parse_exit(c);
    if (o.recommend_server && rt_env_check_http(env, "summary") != 0)
        return RT_EXIT_USAGE;
    int fmt = !strcmp(format, "text")                                ? 0
              : !strcmp(format, "json")                              ? 1
              : !strcmp(format, "markdown") || !strcmp(format, "md") ? 2
                                                                     : -1;
    if (fmt < 0) {
        rt_err("summary: unknown format '%s' (text, json or markdown)", format);
        return RT_EXIT_USAGE;
    }
    if (run && o.job) {
        rt_err("summary: --run and --job cannot be used together");
        return RT_EXIT_USAGE;
    }
    if (o.job && !*o.job) {
        rt_err("summary: --job needs a job name");
        return RT_EXIT_USAGE;
    }
    o.keeper_url = env->keeper_url;
    if (!(db_path = cmd_dbs_path("summary", env)))
        return RT_EXIT_USAGE;
    if (cmd_dbs_slurm() && !run && !o.job)
        return cmd_cluster_summary(db_path, cmd_dbs_slurm(), fmt);

    const char *which = o.job ? NULL : (run ? run : "latest"); /* --job: no one run */
    struct rt_store *store = cmd_open_db(db_path, RT_STORE_READ, which, &o.run_id, NULL);
    if (!store)
        return RT_EXIT_USAGE;
    int rc = RT_EXIT_USAGE;
    char err[512];
    struct rt_buf json = {0};
    int bad = 0;
    if (rt_summary_json(store, &o, &json, &bad, err, sizeof(err)) != 0) {
        rt_err("summary: %s", err);
        rc = bad ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
        rt_buf_free(&json);
        goto out;
    }
    if (fmt == 1) {
        fwrite(json.p, 1, json.len, stdout);
        putchar('\n');
    } else {
        struct jr r = {NULL, {{0}}, 0};
        char why[256];
        if (!(r.doc = rt_json_open(json.p, json.len, why, sizeof(why)))) {
            rt_err("summary: %s", why);
            rc = RT_EXIT_FAILURE;
            rt_buf_free(&json);
            goto out;
        }
        print_summary(&r, fmt == 2);
        rt_json_close(r.doc);
    }
    rt_buf_free(&json);
    rc = cmd_stdout_check() == 0 ? RT_EXIT_OK : RT_EXIT_FAILURE; /* said why */
out:
    rt_store_close(store);
    return rc;
}
