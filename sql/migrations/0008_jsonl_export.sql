-- Schema version 8: no table changes. The rust_sample view is gone (sql/views.sql drops it when
-- the views are applied after this upgrade): `rtrack export --format jsonl` and the live output
-- write JSON Lines from the tables in C (src/export/jsonl.c, one definition of each field),
-- about twice as fast as the view (docs/performance.md), and every connection stops parsing its
-- 9 KB of SQL. A file of version 8 is refused by an rtrack that would look for the view there.
SELECT 1;
