-- Schema version 2 introduced the views `rtrack export` reads. Views hold no data, so they
-- live in sql/views.sql, which is applied after every upgrade (dropping and recreating each
-- view); this migration only marks the version.
SELECT 1;
