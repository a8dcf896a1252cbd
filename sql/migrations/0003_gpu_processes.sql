-- Schema version 3: per-process GPU use, one row per sample, tracked process and GPU.
CREATE TABLE gpu_process_samples (
    sample_id        INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    process_id       INTEGER NOT NULL REFERENCES processes (id) ON DELETE CASCADE,
    gpu_id           INTEGER NOT NULL REFERENCES gpus (id) ON DELETE CASCADE,
    vram_used_bytes  INTEGER,  -- device memory; NULL when the driver does not say (MIG, permission)
    gtt_bytes        INTEGER,  -- AMD: system memory mapped for the GPU
    util_pct         REAL,     -- SM (NVIDIA) / gfx engine (AMD) busy % over the interval
    mem_util_pct     REAL,     -- NVIDIA: memory controller busy % over the interval
    PRIMARY KEY (sample_id, process_id, gpu_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX gpu_samples_by_gpu ON gpu_samples (gpu_id);
CREATE INDEX gpu_process_samples_by_process ON gpu_process_samples (process_id);
