/* planted: a command writing a table itself, in lower case */
const char *planted_tag(void);
const char *planted_tag(void)
{
    // "insert into run_tags" in a comment does not count
    return "insert into run_tags (run_id, key, value) values (?1, ?2, ?3)";
}
