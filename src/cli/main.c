/* main.c - `rtrack --help`, `rtrack help CMD` and `rtrack --version` from the command table
 * (commands.c), and the way to a command's function. */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/net/libs.h"
#include "rtrack/cli/cmd.h"
#include "rtrack/cli/config.h"
#include "rtrack/cli/env.h"
#include "rtrack/collect/collect.h"
#include "rtrack/collect/gpu.h"
#include "rtrack/base/fmt.h"
#include "rtrack/base/log.h"
#include "rtrack/base/spawn.h"
#include "rtrack/base/util.h"
#include "rtrack/store/store.h"
#include "rtrack/version.h"

/* what may stand where a command goes, for the suggestions */
static const char *const top_options[] = {"--help", "--version"};

static void usage(FILE *out)
{
    fprintf(out, "usage: rtrack <command> [options]\n"
                 "       rtrack [options] -- CMD [ARGS...]   (rtrack run [options] -- CMD)\n"
                 "       rtrack --pid PID [options]          (rtrack record --pid PID)\n"
                 "       rtrack help [<command>] | rtrack --version\n\n"
                 "rtrack tracks CPU, memory, disks, network, GPUs and a job's whole process tree\n"
                 "and records every sample into a SQLite database.\n\ncommands:\n");
    for (const struct cmd_def *const *c = cmd_table; *c; c++)
        fprintf(out, "  %-10s %s\n", (*c)->name, (*c)->summary);
    fprintf(out,
            "\noptions:\n"
            "  -h, --help     show this help\n"
            "  -V, --version  print the version, the git commit and the backends built in\n"
            "\n'rtrack help <command>' or 'rtrack <command> --help' describes a command's\n"
            "options, each with its environment variables and default. Options of run before\n"
            "'--' and a command are 'rtrack run'; options with --pid are 'rtrack record'.\n"
            "Installed as 'resource-tracker' (a link to rtrack),\n"
            "rtrack takes the Rust resource-tracker's command line. The manual: man rtrack.\n");
}

/* NVML is never linked: say whether the library rtrack would dlopen is there, and which file. */
static void version_nvml(const struct rt_env *e)
{
    char why[512];
    void *lib = rt_nvml_open_library(e->nvml_library, why, sizeof(why));
    printf("nvml: built in (loaded with dlopen at run time); ");
    if (!lib) {
        if (why[0])
            printf("cannot load '%s' (RTRACK_NVML_LIBRARY): %s\n", e->nvml_library, why);
        else
            printf("libnvidia-ml.so.1 not found (no NVIDIA driver)\n");
        return;
    }
    struct link_map *lm = NULL;
    const char *path = dlinfo(lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name
                           ? lm->l_name
                           : "libnvidia-ml.so.1";
    printf("library found: %s\n", path);
    dlclose(lib);
}

/* AMD GPUs are read from sysfs: count the cards the backend would record (no driver call). */
static void version_amd(void)
{
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    int n = 0;
    void *st = rt_gpu_amd.open(&env);
    if (st) {
        struct rt_gpu_reading r;
        memset(&r, 0, sizeof(r));
        rt_gpu_amd.read(st, &env, NULL, 0, 0.0, &r);
        n = r.ndev;
        rt_gpu_reading_free(&r);
        rt_gpu_amd.close(st);
    }
    printf("amd: built in (sysfs and DRM fdinfo); %d AMD GPU%s found\n", n, n == 1 ? "" : "s");
}

static void print_version(const struct rt_env *e)
{
    /* the first line is the one for scripts: "rtrack X.Y.Z" */
    printf("rtrack %s\n", RTRACK_VERSION);
    printf("commit: %s\n", RTRACK_GIT_COMMIT);
    printf("target: %s\n", RTRACK_TARGET);
    const char *sqlite = rt_store_sqlite_version(), *built = rt_store_sqlite_built_version();
    if (strcmp(sqlite, built) != 0)
        printf("sqlite: %s (built with %s)\n", sqlite, built);
    else
        printf("sqlite: %s\n", sqlite);
    version_nvml(e);
    version_amd();
    /* libcurl, libcrypto and zlib are loaded only when needed (include/rtrack/net/libs.h): say
     * whether they can be */
    const curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
    if (!cv) {
        printf("upload: built in (Sentinel API and S3); not available: %s\n", rt_curl_load_error());
        return;
    }
    char with[160] = "";
    if (cv->ssl_version && cv->libz_version)
        snprintf(with, sizeof(with), " (%s, zlib/%s)", cv->ssl_version, cv->libz_version);
    else if (cv->ssl_version || cv->libz_version)
        snprintf(with, sizeof(with), " (%s)", cv->ssl_version ? cv->ssl_version : cv->libz_version);
    const char *crypto = rt_crypto_version();
    const struct rt_zlib_api *zl = rt_zlib();
    printf("upload: built in (Sentinel API and S3); libcurl %s%s, libcrypto %s, zlib %s\n",
           cv->version, with, crypto ? crypto : "not found", zl ? zl->version() : "not found");
    /* CURLOPT_AWS_SIGV4 signs the S3 uploads; libcurl has it since 7.75.0 */
    if (cv->version_num < 0x074b00)
        printf("upload: warning: libcurl %s is older than 7.75.0 and cannot sign S3 requests\n",
               cv->version);
}

/* An unknown command or top-level option: name the nearest ones (all those equally near, at
 * most two edits away), the way git does. */
static int unknown(const char *name)
{
    size_t max = RT_ARRAY_LEN(top_options), n = 0;
    for (const struct cmd_def *const *c = cmd_table; *c; c++)
        max++;
    for (const struct rt_opt *o = rt_config_opts; o->name; o++)
        max++;
    const char **cands = xcalloc(max, sizeof(*cands));
    int option = name[0] == '-';
    for (const struct cmd_def *const *c = cmd_table; *c && !option; c++)
        cands[n++] = (*c)->name;
    char near[256];
    if (option && name[1] == '-' && !rt_config_is_option(name)) {
        /* the top level's options and, for the shorthands, run's and record's */
        for (size_t i = 0; i < RT_ARRAY_LEN(top_options); i++)
            cands[n++] = top_options[i] + 2;
        n += rt_config_option_names(cands + n, max - n);
        char typed[128];
        snprintf(typed, sizeof(typed), "%.*s", (int)strcspn(name + 2, "="), name + 2);
        cmd_nearest(typed, cands, n, "--", near, sizeof(near));
    } else {
        cmd_nearest(name, cands, n, "", near, sizeof(near));
    }
    free(cands);
    const char *what = option ? "option" : "command";
    if (near[0])
        rt_err("unknown %s '%s'; did you mean %s?", what, name, near);
    else if (option)
        rt_err("unknown option '%s' (options go after the command: 'rtrack <command> %s'; see "
               "'rtrack --help')",
               name, name);
    else
        rt_err("unknown command '%s' (see 'rtrack --help')", name);
    return RT_EXIT_USAGE;
}

/* 1 when w is near a command's name (a typo of one: "sumary"), as unknown() would say */
static int near_command(const char *w)
{
    const char *names[32];
    size_t n = 0;
    for (const struct cmd_def *const *c = cmd_table; *c && n < RT_ARRAY_LEN(names); c++)
        names[n++] = (*c)->name;
    char near[256];
    return cmd_nearest(w, names, n, "", near, sizeof(near));
}

/* argv[1] is no command. Where the words look like a program to run (run's options before it,
 * or arguments after it, or a file or a program on PATH of that name) rather than a misspelt
 * command, say the '--' that makes them `rtrack run`'s shorthand: `rtrack python3 train.py` is
 * `rtrack -- python3 train.py`; else what unknown() says. */
static int not_a_command(int argc, char **argv)
{
    /* the word after run's and record's options: where a command or the program goes */
    int i = 1;
    while (i < argc && rt_config_is_option(argv[i]))
        i += rt_config_option_takes_value(argv[i]) ? 2 : 1;
    /* options only, or before another option or a command: "options go after the command" */
    if (i >= argc || argv[i][0] == '-' || cmd_find(argv[i]))
        return unknown(argv[1]);
    if (near_command(argv[i])) /* a misspelt command: "did you mean" */
        return unknown(argv[i]);
    if (i == 1 && argc == 2 && !rt_spawn_findable(argv[1]))
        return unknown(argv[1]); /* one word, no program of that name: "frobnicate" */
    char *opts = rt_fmt_argv(argv + 1, i - 1), *job = rt_fmt_argv(argv + i, argc - i);
    if (i == 1)
        rt_err("unknown command '%s'; to run it under rtrack, put '--' before it: rtrack -- %s",
               argv[i], job);
    else
        rt_err("unknown command '%s' after run's options; to run it under rtrack, put '--' "
               "before it: rtrack %s -- %s",
               argv[i], opts, job);
    free(opts);
    free(job);
    return RT_EXIT_USAGE;
}

/* `rtrack help --options NAME`: the options of command NAME (or of rtrack as
 * resource-tracker) as its table lists them (rt_opt_list). */
static int list_options(const char *name)
{
    const struct cmd_def *c = cmd_find(name);
    if (!strcmp(name, "resource-tracker"))
        rt_opt_list(stdout, rt_config_opts, RT_FACE_DROPIN);
    else if (c)
        rt_opt_list(stdout, c->opts, c->face);
    else
        return unknown(name);
    return RT_EXIT_OK;
}

/* What rtrack does with its arguments; main() adds stdout's check. */
static int dispatch(int argc, char **argv, const struct rt_env *env)
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
        print_version(env);
        return RT_EXIT_OK;
    }
    if (!strcmp(name, "help")) {
        /* `rtrack help CMD` is `rtrack CMD --help` */
        if (argc < 3 || !strcmp(argv[2], "help") || !strcmp(argv[2], "--help") ||
            !strcmp(argv[2], "-h")) {
            usage(stdout);
            return RT_EXIT_OK;
        }
        /* `rtrack help --options CMD`: the options of its table, a line each, for the
         * completions' test (tests/cli/test_completion.sh), not for people */
        if (!strcmp(argv[2], "--options") && argc == 4)
            return list_options(argv[3]);
        const struct cmd_def *c = cmd_find(argv[2]);
        if (!c)
            return unknown(argv[2]);
        cmd_help(c, stdout);
        return RT_EXIT_OK;
    }
    /* the shorthands: `rtrack [OPTIONS] -- CMD` is run, `rtrack --pid N [OPTIONS]` record (other
     * options before a command name are a mistake, said as one) */
    int to_run = 0, to_record = 0;
    for (int i = 1; i < argc && !to_run && rt_config_is_option(name); i++) {
        to_run = !strcmp(argv[i], "--");
        to_record |= !strcmp(argv[i], "-p") || !strncmp(argv[i], "--pid", 5);
    }
    if (!strcmp(name, "--") || to_run || to_record) {
        to_run = to_run || !strcmp(name, "--");
        char **args = xcalloc((size_t)argc + 1, sizeof(*args));
        args[0] = to_run ? "run" : "record";
        for (int i = 1; i < argc; i++)
            args[i] = argv[i];
        int rc = cmd_call(to_run ? &cmd_run_def : &cmd_record_def, argc, args, env);
        free(args);
        return rc;
    }
    const struct cmd_def *c = cmd_find(name);
    if (!c)
        return not_a_command(argc, argv);
    return cmd_call(c, argc - 1, argv + 1, env);
}

/* The name rtrack was called by, without its directory. */
static const char *called_as(const char *argv0)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    return slash ? slash + 1 : argv0 ? argv0 : "";
}

int main(int argc, char **argv)
{
    struct rt_env env;
    rt_env_load(&env);
    rt_env_apply_process_settings(&env);
    /* every command's stdout (its output, its help, --version) is checked before it exits: a
     * write that failed is said, and exit 1 where the command would have exited 0 */
    if (!strcmp(called_as(argv[0]), "resource-tracker"))
        return cmd_stdout_end(cmd_dropin(argc, argv, &env));
    return cmd_stdout_end(dispatch(argc, argv, &env));
}
