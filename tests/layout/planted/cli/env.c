/* planted: the one file that may read the environment */
#include <stdlib.h>

const char *planted_cli_env(void);
const char *planted_cli_env(void)
{
    return getenv("RTRACK_PLANTED");
}
