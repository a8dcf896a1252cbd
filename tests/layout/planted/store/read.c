/* planted: the store may call SQLite */
#include <sqlite3.h>

int planted_store(void);
int planted_store(void)
{
    return sqlite3_threadsafe();
}
