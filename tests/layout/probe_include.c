/* probe_include.c - a collector that includes a store header: built as a room that may use
 * only collect (tests/CMakeLists.txt, layout_forbidden_include), it must fail to compile with
 * "rtrack/store/store.h: No such file or directory". */
#include "rtrack/collect/collect.h"
#include "rtrack/store/store.h"

int probe_include(void);
int probe_include(void)
{
    return rt_store_schema_version();
}
