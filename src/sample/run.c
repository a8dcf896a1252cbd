/* run.c - the runs table's metadata columns, named once for the CLI's options and the store. */
#include "rtrack/sample/run.h"

const char *const rt_meta_columns[RT_META_N] = {
    "job_name",     "project_name", "stage_name",      "task_name",       "team", "env", "language",
    "orchestrator", "executor",     "external_run_id", "container_image",
};
