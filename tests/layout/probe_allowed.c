/* probe_allowed.c - the control of the two probes beside it: the same room (it may use
 * collect), with an include and a call it is allowed, builds and links (layout_allowed). */
#include <stdlib.h>

#include "rtrack/base/util.h"
#include "rtrack/collect/collect.h"

int probe_allowed(void);
int probe_allowed(void)
{
    struct rt_sysenv env;
    rt_sysenv_live(&env);
    char *s = xstrdup("ok");
    int n = (int)env.clk_tck + s[0];
    free(s);
    return n;
}
