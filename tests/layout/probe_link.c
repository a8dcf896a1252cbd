/* probe_link.c - a collector that calls into the store, its declaration written by hand to get
 * past the include walls: the room's link check (rt_roomcheck_probe_link, layout_forbidden_link)
 * must fail with an undefined reference to rt_store_schema_version. */
#include "rtrack/collect/collect.h"

int rt_store_schema_version(void);
int probe_link(void);
int probe_link(void)
{
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    return rt_store_schema_version() + (int)env.clk_tck;
}
