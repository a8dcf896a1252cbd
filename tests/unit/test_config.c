/* test_config.c - option layering: CLI > environment > TOML file > defaults, and the errors. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/config.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "testlib.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/rtrack-config.XXXXXX");
    if (!mkdtemp(tmpdir) || chdir(tmpdir) != 0)
        return -1;
    static const char *const vars[] = {
        "RTRACK_DB",     "RTRACK_INTERVAL",  "RTRACK_CONFIG",    "RTRACK_DURATION",
        "TRACKER_QUIET", "TRACKER_TAGS",     "TRACKER_JOB_NAME", "TRACKER_PROJECT_NAME",
        "TRACKER_TEAM",  "TRACKER_INTERVAL", "TRACKER_PID",      "TRACKER_FORMAT",
        "RTRACK_OUTPUT", "TRACKER_OUTPUT",   "TRACKER_CONFIG",   "RTRACK_QUIET",
        "RTRACK_FORMAT", "TRACKER_DB",       "RTRACK_TAGS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
        unsetenv(vars[i]);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink("rtrack.toml");
    unlink("other.toml");
    unlink("resource-tracker.toml");
    unlink("stderr.txt");
    if (chdir("/") != 0 || rmdir(tmpdir) != 0)
        return -1;
    return 0;
}

static void write_file(const char *name, const char *text)
{
    FILE *f = fopen(name, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* rt_config_load keeps pointers into argv (the job's command), so the argument vector must
 * outlive the config: it lives here until the next load. */
static char *load_argv[32];

static int load(struct rt_config *cfg, enum rt_cmd_kind kind, ...)
{
    va_list ap;
    va_start(ap, kind);
    int n = 0;
    char *a;
    while ((a = va_arg(ap, char *)) && n < 31)
        load_argv[n++] = a;
    va_end(ap);
    load_argv[n] = NULL;
    return rt_config_load(cfg, kind, n, load_argv);
}
#define LOAD(cfg, kind, ...) load((cfg), (kind), __VA_ARGS__, (char *)NULL)

static void test_defaults(void **state)
{
    (void)state;
    struct rt_config c;
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_true(c.interval == 1.0);
    assert_string_equal(c.db, "rtrack.db");
    assert_int_equal(c.quiet, 0);
    assert_int_equal(c.pid, 0);
    assert_null(c.config_file);
    for (int i = 0; i < RT_META_N; i++)
        assert_null(c.meta[i]);
    assert_int_equal(c.ntags, 0);
    rt_config_free(&c);
}

static void test_precedence(void **state)
{
    (void)state;
    write_file("rtrack.toml", "[job]\nname = \"file\"\nteam = \"file-team\"\n"
                              "project_name = \"file-proj\"\n"
                              "[tracker]\ninterval_secs = 3\ndb = \"file.db\"\n");
    setenv("TRACKER_JOB_NAME", "env", 1);
    setenv("TRACKER_TEAM", "env-team", 1);
    setenv("RTRACK_INTERVAL", "2", 1);
    struct rt_config c;
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--job-name", "cli", "-i", "0.25", "--", "true"),
                     0);
    assert_string_equal(c.meta[RT_META_JOB_NAME], "cli");           /* CLI beats env and file */
    assert_string_equal(c.meta[RT_META_TEAM], "env-team");          /* env beats file */
    assert_string_equal(c.meta[RT_META_PROJECT_NAME], "file-proj"); /* file beats default */
    assert_true(c.interval == 0.25);
    assert_string_equal(c.db, "file.db");
    assert_string_equal(c.config_file, "rtrack.toml");
    assert_int_equal(c.ncommand, 1);
    assert_string_equal(c.command[0], "true");
    rt_config_free(&c);

    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "true"), 0);
    assert_true(c.interval == 2.0); /* env beats file */
    rt_config_free(&c);
    unsetenv("TRACKER_JOB_NAME");
    unsetenv("TRACKER_TEAM");
    unsetenv("RTRACK_INTERVAL");
}

static void test_tags_merge(void **state)
{
    (void)state;
    write_file("rtrack.toml", "[tags]\na = \"1\"\nb = \"2\"\nn = 5\n");
    setenv("TRACKER_TAGS", "b=3,c=4", 1);
    struct rt_config c;
    assert_int_equal(
        LOAD(&c, RT_CMD_RECORD, "record", "--tag", "c=5", "-t", "d=x=y", "--tag", "e="), 0);
    const char *want[][2] = {{"a", "1"}, {"b", "3"},   {"n", "5"},
                             {"c", "5"}, {"d", "x=y"}, {"e", ""}};
    assert_int_equal(c.ntags, 6);
    for (size_t i = 0; i < c.ntags; i++) {
        assert_string_equal(c.tags[i].key, want[i][0]);
        assert_string_equal(c.tags[i].value, want[i][1]);
    }
    rt_config_free(&c);
    unsetenv("TRACKER_TAGS");
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--tag", "novalue"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--tag", "=v"), RT_EXIT_USAGE);
}

/* RTRACK_TAGS is a list as TRACKER_TAGS is (docs/usage.md: `k=v,k2=v2` for both; it was one
 * tag, "a=1,b=2" the value of a), and where both set a key, rtrack's wins. */
static void test_rtrack_tags(void **state)
{
    (void)state;
    setenv("RTRACK_TAGS", "a=1, b=2", 1);
    setenv("TRACKER_TAGS", "a=0,c=3", 1);
    struct rt_config c;
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    const char *want[][2] = {{"a", "1"}, {"c", "3"}, {"b", "2"}};
    assert_int_equal(c.ntags, 3);
    for (size_t i = 0; i < c.ntags; i++) {
        assert_string_equal(c.tags[i].key, want[i][0]);
        assert_string_equal(c.tags[i].value, want[i][1]);
    }
    rt_config_free(&c);
    unsetenv("RTRACK_TAGS");
    unsetenv("TRACKER_TAGS");
}

/* One rule for a tag key from every source: not empty, no '=', no blank at either end; blanks
 * around the items of TRACKER_TAGS are not part of them. */
static void test_tags_one_rule(void **state)
{
    (void)state;
    struct rt_config c;
    setenv("TRACKER_TAGS", " a=1, b=2 ,\tc=x y ", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    const char *want[][2] = {{"a", "1"}, {"b", "2"}, {"c", "x y"}};
    assert_int_equal(c.ntags, 3);
    for (size_t i = 0; i < c.ntags; i++) {
        assert_string_equal(c.tags[i].key, want[i][0]);
        assert_string_equal(c.tags[i].value, want[i][1]);
    }
    rt_config_free(&c);
    static const char *const bad_env[] = {"a =1", "a=1,,b=2", "a=1,", "=1", " =1"};
    for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
        setenv("TRACKER_TAGS", bad_env[i], 1);
        if (LOAD(&c, RT_CMD_RECORD, "record") != RT_EXIT_USAGE)
            fail_msg("TRACKER_TAGS='%s' was accepted", bad_env[i]);
    }
    unsetenv("TRACKER_TAGS");
    static const char *const bad_cli[] = {" b=2", "b =2", "\tb=2", "=2"};
    for (size_t i = 0; i < sizeof(bad_cli) / sizeof(bad_cli[0]); i++)
        if (LOAD(&c, RT_CMD_RECORD, "record", "--tag", (char *)bad_cli[i]) != RT_EXIT_USAGE)
            fail_msg("--tag '%s' was accepted", bad_cli[i]);
    static const char *const bad_file[] = {"[tags]\n\"a=b\" = \"1\"\n", "[tags]\n\"\" = \"1\"\n",
                                           "[tags]\n\" b\" = \"1\"\n", "[tags]\n'b ' = \"1\"\n"};
    for (size_t i = 0; i < sizeof(bad_file) / sizeof(bad_file[0]); i++) {
        write_file("rtrack.toml", bad_file[i]);
        if (LOAD(&c, RT_CMD_RECORD, "record") != RT_EXIT_USAGE)
            fail_msg("config %zu was accepted: %s", i, bad_file[i]);
    }
    /* a quoted key that follows the rule is fine */
    write_file("rtrack.toml", "[tags]\n\"dotted.key\" = \"1\"\n");
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_string_equal(c.tags[0].key, "dotted.key");
    rt_config_free(&c);
}

/* [sentinel] is documented (help, usage.md, the man page): its keys are read like the others. */
static void test_sentinel_table(void **state)
{
    (void)state;
    struct rt_config c;
    write_file("rtrack.toml",
               "[sentinel]\nupload_interval_secs = 30\napi_url = \"http://127.0.0.1:9\"\n");
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "true"), 0);
    assert_true(c.upload_interval == 30);
    assert_string_equal(c.sentinel_url, "http://127.0.0.1:9");
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--upload-interval", "90"), 0);
    assert_true(c.upload_interval == 90); /* the command line beats the file */
    rt_config_free(&c);
    static const char *const bad[] = {"[sentinel]\nupload_interval_secs = 0.5\n",
                                      "[sentinel]\napi_url = \"ftp://x\"\n",
                                      "[sentinel]\ntoken = \"t\"\n", "[sentinels]\n"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file("rtrack.toml", bad[i]);
        if (LOAD(&c, RT_CMD_RECORD, "record") != RT_EXIT_USAGE)
            fail_msg("config %zu was accepted: %s", i, bad[i]);
    }
}

static void test_bool_env(void **state)
{
    (void)state;
    struct rt_config c;
    const char *on[] = {"1", "true", "yes", "on", "TRUE"}, *off[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 5; i++) {
        setenv("TRACKER_QUIET", on[i], 1);
        assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
        assert_int_equal(c.quiet, 1);
        rt_config_free(&c);
    }
    for (size_t i = 0; i < 4; i++) {
        setenv("TRACKER_QUIET", off[i], 1);
        assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
        assert_int_equal(c.quiet, 0);
        rt_config_free(&c);
    }
    setenv("TRACKER_QUIET", "maybe", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), RT_EXIT_USAGE);
    unsetenv("TRACKER_QUIET");
    write_file("rtrack.toml", "[tracker]\nquiet = true\n");
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_int_equal(c.quiet, 1);
    rt_config_free(&c);
}

static void test_bad_values(void **state)
{
    (void)state;
    struct rt_config c;
    const char *bad[] = {"0", "-1", "abc", "0.0009", "1e9", "", "nan", "1s"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--interval", (char *)bad[i], "true"),
                         RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--interval", "0.05", "true"), 0);
    assert_true(c.interval == 0.05);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--interval", "0.001", "true"), 0);
    assert_true(c.interval == 0.001);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--bogus", "true"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "-Z", "true"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--interval"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--pid", "1", "true"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "extra"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--duration", "0"), RT_EXIT_USAGE);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--pid", "x"), RT_EXIT_USAGE);
    setenv("RTRACK_INTERVAL", "fast", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), RT_EXIT_USAGE);
    unsetenv("RTRACK_INTERVAL");
}

static void test_pid(void **state)
{
    (void)state;
    struct rt_config c;
    char self[32];
    snprintf(self, sizeof(self), "%d", (int)getpid());
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--pid", self), 0);
    assert_int_equal(c.pid, getpid());
    rt_config_free(&c);
    pid_t gone = 4194000;
    while (kill(gone, 0) == 0)
        gone--;
    char g[32];
    snprintf(g, sizeof(g), "%d", (int)gone);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "-p", g), RT_EXIT_USAGE);
    /* [job] pid from the file counts for record, is ignored by run (it tracks its job) */
    char text[64];
    snprintf(text, sizeof(text), "[job]\npid = %d\n", (int)getpid());
    write_file("rtrack.toml", text);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_int_equal(c.pid, getpid());
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "true"), 0);
    assert_int_equal(c.pid, 0);
    rt_config_free(&c);
}

static void test_config_file_errors(void **state)
{
    (void)state;
    struct rt_config c;
    /* a missing default file is fine, a missing explicit one is not */
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "--config", "missing.toml"), RT_EXIT_USAGE);
    setenv("RTRACK_CONFIG", "missing.toml", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), RT_EXIT_USAGE);
    unsetenv("RTRACK_CONFIG");
    write_file("other.toml", "[job]\nname = \"other\"\n");
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record", "-c", "other.toml"), 0);
    assert_string_equal(c.meta[RT_META_JOB_NAME], "other");
    rt_config_free(&c);

    const char *bad[] = {
        "[job]\nname = \"x\"\nbogus = 1\n",      /* unknown key */
        "[nope]\nx = 1\n",                       /* unknown table */
        "toplevel = 1\n",                        /* key outside a table */
        "[tracker]\ninterval_secs = \"fast\"\n", /* wrong type */
        "[tracker]\nquiet = 1\n",                /* bool expected */
        "[job]\npid = 1.5\n",                    /* integer expected */
        "[tracker]\ninterval_secs = 0\n",        /* out of range */
        "[job]\nname = \"x\"\n\n[job\n",         /* syntax */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_file("rtrack.toml", bad[i]);
        if (LOAD(&c, RT_CMD_RECORD, "record") != RT_EXIT_USAGE)
            fail_msg("config %zu was accepted: %s", i, bad[i]);
    }
    /* duration only means something to record; run ignores it from a shared file */
    write_file("rtrack.toml", "[tracker]\nduration_secs = 5\n");
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "true"), 0);
    assert_true(c.duration == 0);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_true(c.duration == 5);
    rt_config_free(&c);
}

static void test_run_command(void **state)
{
    (void)state;
    struct rt_config c;
    /* options stop at the command: its own options are left alone */
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "-q", "ls", "-l", "--interval", "x"), 0);
    assert_int_equal(c.ncommand, 4);
    assert_string_equal(c.command[0], "ls");
    assert_string_equal(c.command[3], "x");
    assert_null(c.command[4]);
    assert_int_equal(c.quiet, 1);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--", "-dash"), 0);
    assert_string_equal(c.command[0], "-dash");
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "--help"), -1);
}

/* What a call wrote to stderr (at most 1 KiB): stderr goes to a file meanwhile. */
static char captured[1024];
static int load_capturing(struct rt_config *cfg, enum rt_cmd_kind kind, char **argv, int argc)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    FILE *f = fopen("stderr.txt", "w+");
    assert_non_null(f);
    dup2(fileno(f), STDERR_FILENO);
    int rc = rt_config_load(cfg, kind, argc, argv);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(f);
    size_t n = fread(captured, 1, sizeof(captured) - 1, f);
    captured[n] = '\0';
    fclose(f);
    return rc;
}

/* "did you mean": the keys of the table nearest the one typed (by hand: one edit, a prefix),
 * none when nothing is within two edits, the tables for a table's name. */
static void test_suggest_key(void **state)
{
    (void)state;
    char near[256];
    assert_int_equal(rt_config_suggest_key("tracker", "intervl_secs", near, sizeof(near)), 1);
    assert_string_equal(near, "'interval_secs'");
    assert_int_equal(rt_config_suggest_key("job", "nmae", near, sizeof(near)), 1);
    assert_string_equal(near, "'name'"); /* a swap: two edits */
    assert_int_equal(rt_config_suggest_key("job", "projec", near, sizeof(near)), 1);
    assert_string_equal(near, "'project_name'"); /* a prefix */
    assert_int_equal(rt_config_suggest_key("sentinel", "api_ur", near, sizeof(near)), 1);
    assert_string_equal(near, "'api_url'");
    /* keys of another table are not offered: interval_secs is [tracker]'s */
    assert_int_equal(rt_config_suggest_key("job", "interval_secs", near, sizeof(near)), 0);
    assert_string_equal(near, "");
    assert_int_equal(rt_config_suggest_key("tracker", "colour", near, sizeof(near)), 0);
    assert_int_equal(rt_config_suggest_key(NULL, "trackr", near, sizeof(near)), 1);
    assert_string_equal(near, "'tracker'");
    /* all the equally near ones */
    static const char *const names[] = {"record", "report", "run"};
    assert_int_equal(cmd_nearest("re", names, 3, "", near, sizeof(near)), 1);
    assert_string_equal(near, "'record' or 'report'");
    assert_int_equal(cmd_nearest("rn", names, 3, "--", near, sizeof(near)), 1);
    assert_string_equal(near, "'--run'");
    assert_int_equal(cmd_nearest("xyzzy", names, 3, "", near, sizeof(near)), 0);
}

/* The strict file of rtrack names the nearest key; a mistyped option the nearest option. */
static void test_did_you_mean(void **state)
{
    (void)state;
    struct rt_config c;
    write_file("rtrack.toml", "[tracker]\nintervl_secs = 2\n");
    char *argv[] = {"record", NULL};
    assert_int_equal(load_capturing(&c, RT_CMD_RECORD, argv, 1), RT_EXIT_USAGE);
    assert_string_equal(captured, "rtrack: rtrack.toml:2: unknown key 'intervl_secs' in [tracker]; "
                                  "did you mean 'interval_secs'?\n");
    unlink("rtrack.toml");
    char *argv2[] = {"record", "--intervl", "2", NULL};
    assert_int_equal(load_capturing(&c, RT_CMD_RECORD, argv2, 3), RT_EXIT_USAGE);
    assert_string_equal(captured,
                        "rtrack: record: unknown option '--intervl'; did you mean '--interval'?\n");
}

/* As resource-tracker: the Rust tool's defaults and its lenient config file. */
static void test_dropin(void **state)
{
    (void)state;
    struct rt_config c;
    /* no command, no database (the caller's temporary one), metric lines to stderr */
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker"), 0);
    assert_null(c.db);
    assert_null(c.command);
    assert_string_equal(c.output, "/dev/stderr");
    rt_config_free(&c);
    /* a command with or without --; -f csv is the Rust tool's CSV */
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker", "-f", "csv", "sleep", "1"), 0);
    assert_int_equal(c.ncommand, 2);
    assert_int_equal(c.output_csv, RT_LIVE_RUST_CSV);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "-f", "csv", "true"), 0);
    assert_int_equal(c.output_csv, RT_LIVE_PYTHON_CSV); /* rtrack's csv stays Python's */
    rt_config_free(&c);
    /* --quiet: no output at all, even one asked for */
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker", "--quiet", "-o", "x.jsonl"), 0);
    assert_null(c.output);
    rt_config_free(&c);
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "-q", "-o", "x.jsonl", "true"), 0);
    assert_null(c.output);
    rt_config_free(&c);
    /* resource-tracker.toml: read; an unknown key warned about once, the rest applied */
    write_file("resource-tracker.toml",
               "[job]\nname = \"rt\"\n[tracker]\nintervl_secs = 9\ninterval_secs = 3\n");
    char *argv[] = {"resource-tracker", NULL};
    assert_int_equal(load_capturing(&c, RT_CMD_DROPIN, argv, 1), 0);
    assert_string_equal(c.meta[RT_META_JOB_NAME], "rt");
    assert_true(c.interval == 3.0);
    assert_string_equal(captured, "rtrack: warning: resource-tracker.toml: ignoring what "
                                  "resource-tracker does not read either: 'intervl_secs' in "
                                  "[tracker]\n");
    rt_config_free(&c);
    /* a value of the wrong type: the whole file ignored (the Rust tool's serde) */
    write_file("resource-tracker.toml", "[job]\nname = \"rt\"\n[tracker]\ninterval_secs = \"x\"\n");
    assert_int_equal(load_capturing(&c, RT_CMD_DROPIN, argv, 1), 0);
    assert_null(c.meta[RT_META_JOB_NAME]);
    assert_true(c.interval == 1.0);
    rt_config_free(&c);
    /* rtrack is not lenient: the same file named by --config is an error */
    assert_int_equal(LOAD(&c, RT_CMD_RUN, "run", "-c", "resource-tracker.toml", "true"),
                     RT_EXIT_USAGE);
    /* a missing --config file is no error as resource-tracker */
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker", "-c", "nowhere.toml"), 0);
    rt_config_free(&c);
    /* -V and -h are the caller's to print */
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker", "-V"), -2);
    assert_int_equal(LOAD(&c, RT_CMD_DROPIN, "resource-tracker", "-h"), -1);
}

/* Both names of each variable; rtrack's wins where both are set; an invalid one is named. */
static void test_tracker_env(void **state)
{
    (void)state;
    struct rt_config c;
    setenv("TRACKER_INTERVAL", "4", 1);
    setenv("TRACKER_PID", "1", 1);
    setenv("TRACKER_FORMAT", "system-csv", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_true(c.interval == 4.0);
    assert_int_equal(c.pid, 1);
    assert_int_equal(c.output_csv, RT_LIVE_SYSTEM_CSV);
    rt_config_free(&c);
    setenv("RTRACK_INTERVAL", "0.5", 1);
    assert_int_equal(LOAD(&c, RT_CMD_RECORD, "record"), 0);
    assert_true(c.interval == 0.5);
    rt_config_free(&c);
    unsetenv("RTRACK_INTERVAL");
    setenv("TRACKER_INTERVAL", "soon", 1);
    char *argv[] = {"record", NULL};
    assert_int_equal(load_capturing(&c, RT_CMD_RECORD, argv, 1), RT_EXIT_USAGE);
    assert_non_null(strstr(captured, "invalid value 'soon' for TRACKER_INTERVAL"));
    unsetenv("TRACKER_INTERVAL");
    unsetenv("TRACKER_PID");
    unsetenv("TRACKER_FORMAT");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tags_merge, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tags_one_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rtrack_tags, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sentinel_table, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bool_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_config_file_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_run_command, setup, teardown),
        cmocka_unit_test_setup_teardown(test_suggest_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_did_you_mean, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dropin, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tracker_env, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
