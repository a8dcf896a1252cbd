-- Schema version 13: how the kernel let a run's figures be read, where it lacks a file rtrack
-- prefers (docs/portability.md, "Old kernels"): facts of the kernel, the same all run long,
-- written by the recorder once its samples know them, so a reader can say what it could not
-- know and why. NULL: not known (no process tree tracked, or a run of an older rtrack).
-- proc_memory_source: where the tree's memory comes from: 'smaps_rollup' (4.14+), 'smaps'
--   (older kernels: the Pss of every mapping summed), 'rss' (neither file: PSS unknown,
--   proc_pss_kib NULL, the tree's memory is proc_rss_kib, which counts shared pages again in
--   every process that maps them).
-- cpu_wait_source: 'schedstat' when the tree's CPU wait (proc_cpu_wait_s, the demand beyond
--   usage) was read; cpu_wait_missing says why it was not: 'no-schedstat' (no
--   /proc/PID/schedstat: a kernel without CONFIG_SCHEDSTATS, CONFIG_SCHED_INFO from 4.2) or
--   'schedstat-off' (it reads "0 0 0": not accounted, 4.2 to 5.13 without CONFIG_SCHEDSTATS and
--   with delay accounting off).
-- psi_missing: why the samples' psi_* columns are NULL: 'no-pressure' (no /proc/pressure:
--   before 4.20, or no CONFIG_PSI), 'psi-off' (there but unreadable: PSI disabled at boot, as
--   RHEL 8's unless booted with psi=1); NULL when pressure was read.
ALTER TABLE runs ADD COLUMN proc_memory_source TEXT;
ALTER TABLE runs ADD COLUMN cpu_wait_source TEXT;
ALTER TABLE runs ADD COLUMN cpu_wait_missing TEXT;
ALTER TABLE runs ADD COLUMN psi_missing TEXT;
