/* planted for check_rooms.sh (tests/layout/test_check_rooms.sh): a collector that reads the
 * environment itself. The getenv() in this comment must not count. */
#include <stdlib.h>

const char *planted_env(void);
const char *planted_env(void)
{
    return getenv("RTRACK_PLANTED"); // this line counts
}
