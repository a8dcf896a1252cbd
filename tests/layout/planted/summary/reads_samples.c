/* planted: the summary still reads the tables until its SQL is named queries (it joins the
 * check's list of rooms then) */
const char *planted_summary_sql(void);
const char *planted_summary_sql(void)
{
    return "SELECT max(ts) FROM samples WHERE run_id = ?1";
}
