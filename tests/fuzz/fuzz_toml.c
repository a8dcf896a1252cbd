/* fuzz_toml.c - the config file: rt_toml_parse on the input, then the same text as the
 * --config file of `rtrack record` and of `rtrack run` through rt_config_load (known tables and
 * keys, value types, every option's own checks). An input that parses must free cleanly and
 * give line numbers within the text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "rtrack/cli/config.h"
#include "rtrack/cli/toml.h"

static char path[512];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    snprintf(path, sizeof(path), "%s/rtrack.toml", fz_root());
    /* nothing from the caller's environment may mix in */
    extern char **environ;
    for (char **e = environ; *e;) {
        if (!strncmp(*e, "RTRACK_", 7) || !strncmp(*e, "TRACKER_", 8) ||
            !strncmp(*e, "SENTINEL_", 9)) {
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
            unsetenv(name);
            e = environ;
        } else {
            e++;
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_strndup(data, size);
    int lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    struct rt_toml_doc doc;
    char err[256];
    if (rt_toml_parse(text, &doc, err, sizeof(err)) == 0) {
        for (size_t i = 0; i < doc.n; i++)
            if (doc.kv[i].line < 1 || doc.kv[i].line > lines || !doc.kv[i].key ||
                !doc.kv[i].table || !doc.kv[i].str)
                abort();
        rt_toml_free(&doc);
    } else if (doc.n || doc.kv || doc.tables) {
        abort(); /* a failed parse leaves an empty doc */
    }
    free(text);

    fz_write("rtrack.toml", data, size);
    struct rt_config cfg;
    char *rec[] = {"record", "--config", path, NULL};
    if (rt_config_load(&cfg, RT_CMD_RECORD, 3, rec) == 0)
        rt_config_free(&cfg);
    char *run[] = {"run", "--config", path, "--", "true", NULL};
    if (rt_config_load(&cfg, RT_CMD_RUN, 5, run) == 0)
        rt_config_free(&cfg);
    return 0;
}
