/* planted: an exporter running SQL itself instead of through the store's read side */
#include <sqlite3.h>

int planted_sql(sqlite3 *db);
int planted_sql(sqlite3 *db)
{
    sqlite3_stmt *st;
    return sqlite3_prepare_v2(db, "SELECT 1", -1, &st, 0);
}
