/* merge.h - copying runs from one database into another (`rtrack merge`, and the readers of
 * several databases, which merge them into a private one first).
 *
 * A run is known by its UUID (runs.uuid): a run the output already holds is not copied again,
 * so merging the same files twice adds nothing, and the files of a cluster's nodes can be
 * gathered in any order. Every row of a copied run comes along (samples, per-core, disk, mount,
 * NIC, GPU and process rows, tags; every table that refers to a run, found from the schema's
 * foreign keys, so a table added later is merged too) with its row ids moved past the output's
 * own; the upload progress stays with the file it was made in (uploads, upload_batches): in the
 * output, a merged run has not been uploaded. A run merged while it was still recording is
 * brought up to date by a later merge of the same file (its rows copied again, its id kept). */
#ifndef RTRACK_STORE_MERGE_H
#define RTRACK_STORE_MERGE_H

#include <stdint.h>

struct rt_store;

struct rt_merge_count {
    int64_t added;   /* runs copied */
    int64_t present; /* runs the output held already (same UUID), as they are */
    int64_t updated; /* runs the output held unfinished (merged while they were recording),
                      * brought up to date from the input */
};

/* Copy the runs of the database at in_path (opened, and upgraded when older, by the store's
 * rules) that `out` (opened RT_STORE_WRITE) does not hold yet; with slurm_job, only the runs of
 * that Slurm job (runs.slurm_job_id, or slurm_array_job_id: every task of an array). One
 * transaction: all of the file's runs or none. 0, or -1 with the reason in rt_store_error(out)
 * (the input's own error, when it cannot be opened, in that message too). */
int rt_store_merge(struct rt_store *out, const char *in_path, const char *slurm_job,
                   struct rt_merge_count *count);

#endif
