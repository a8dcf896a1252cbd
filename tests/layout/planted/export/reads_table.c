/* planted: an exporter that names a table in its SQL (FROM runs in a comment does not count) */
const char *planted_span(void);
const char *planted_span(void)
{
    return "SELECT min(seq) FROM "
           "samples WHERE run_id = ?1"; /* joined as C joins them */
}

/* over a view, and a URL (no comment in a string): not reported */
const char *planted_view(void);
const char *planted_view(void)
{
    return "SELECT * FROM sample_metrics WHERE run_id = ?1 -- https://example.org/runs";
}
