/* planted: the store may name its tables */
const char *planted_store_sql(void);
const char *planted_store_sql(void)
{
    return "SELECT count(*) FROM samples JOIN runs ON runs.id = samples.run_id";
}
