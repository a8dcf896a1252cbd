-- Schema version 4: upload progress to Spare Cores Sentinel, so an interrupted upload resumes
-- where it stopped and a finished one is never sent twice. Credentials are never stored: a
-- resumed upload asks the API for fresh ones.
CREATE TABLE uploads (
    run_id            INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    api_url           TEXT NOT NULL,
    remote_run_id     TEXT NOT NULL,   -- Sentinel's id of the run
    upload_uri_prefix TEXT NOT NULL,   -- s3://bucket/prefix the API assigned
    registered_at     REAL NOT NULL,   -- epoch seconds
    last_seq          INTEGER NOT NULL DEFAULT 0,  -- samples up to this seq are in uploaded batches
    finished_at       REAL             -- when /finish was accepted; NULL = not finished
) STRICT;

CREATE TABLE upload_batches (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    batch       INTEGER NOT NULL,      -- 0, 1, 2 ... (the object's <seq:06>)
    uri         TEXT NOT NULL,         -- s3://bucket/key
    first_seq   INTEGER NOT NULL,
    last_seq    INTEGER NOT NULL,
    rows        INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,      -- gzip size
    uploaded_at REAL NOT NULL,
    PRIMARY KEY (run_id, batch)
) STRICT, WITHOUT ROWID;
