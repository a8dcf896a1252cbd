-- Schema version 6: one uploader per run, and registrations whose outcome is unknown.
-- 1. A run's uploads row is reserved before POST /runs (owner_*: the rtrack uploading the run
--    now, taken in a write transaction), so a second `rtrack upload` (or a streaming recorder)
--    sees it and does not register the run again; the row exists before the run has a
--    Sentinel id, so remote_run_id, upload_uri_prefix and registered_at may be NULL now.
-- 2. register_sent_at is set, and committed, before POST /runs goes out, and cleared when its
--    answer is stored or said no. Set with no live owner, the registration is in doubt (the
--    answer was lost, or the sender died): Sentinel may hold the run, and rtrack does not post
--    it again by itself (docs/sentinel.md).
-- SQLite cannot drop a NOT NULL: the table is rebuilt, every row kept.
CREATE TABLE uploads_v6 (
    run_id            INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    api_url           TEXT NOT NULL,   -- the API the run is (being) registered with
    remote_run_id     TEXT,            -- Sentinel's id of the run; NULL: not registered
    upload_uri_prefix TEXT,            -- s3://bucket/prefix the API assigned (with remote_run_id)
    registered_at     REAL,            -- epoch seconds (with remote_run_id)
    last_seq          INTEGER NOT NULL DEFAULT 0,  -- samples up to this seq are in uploaded batches
    finished_at       REAL,            -- when /finish was accepted; NULL = not finished
    register_sent_at  REAL,            -- POST /runs went out then, its answer not stored yet
    register_error    TEXT,            -- why that answer is unknown (NULL: the sender stopped)
    owner_host        TEXT,            -- the rtrack uploading the run now: its host name,
    owner_pid         INTEGER,         -- its process id (NULL: nobody),
    owner_until       REAL,            -- and until when, unless it renews (epoch seconds)
    CHECK ((remote_run_id IS NULL) = (upload_uri_prefix IS NULL))
) STRICT;
INSERT INTO uploads_v6 (run_id, api_url, remote_run_id, upload_uri_prefix, registered_at,
                        last_seq, finished_at)
    SELECT run_id, api_url, remote_run_id, upload_uri_prefix, registered_at, last_seq, finished_at
    FROM uploads;
DROP TABLE uploads;
ALTER TABLE uploads_v6 RENAME TO uploads;
