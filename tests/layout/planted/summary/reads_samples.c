/* planted: the summary reading a table itself instead of through a named query */
const char *planted_summary_sql(void);
const char *planted_summary_sql(void)
{
    return "SELECT max(ts) FROM samples WHERE run_id = ?1";
}
