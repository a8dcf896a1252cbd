/* fuzz_common.h - what the libFuzzer harnesses in tests/fuzz share.
 *
 * Most harnesses drive a real collector: the input is written as the file it reads into a
 * fixture root (a directory made once per process, removed at exit), the collector is opened
 * on that root, takes a baseline and a periodic sample (so the per-interval code runs too) and
 * is closed. An input is split at NUL bytes into parts - no /proc or /sys text file holds a NUL -
 * so one input can give the two samples (or several files) different contents. */
#ifndef RT_FUZZ_COMMON_H
#define RT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "rtrack/collect/collect.h"
#include "rtrack/sample/sample.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A piece of an input, not NUL-terminated. */
struct fz_part {
    const char *p;
    size_t n;
};

/* Split at NUL bytes into at most `max` parts (the last one keeps any further NULs); parts
 * past the end of the input are empty with p == NULL. Returns how many parts the input has. */
size_t fz_split(const uint8_t *data, size_t size, struct fz_part *parts, size_t max);

/* A malloc'd NUL-terminated copy. */
char *fz_strndup(const void *p, size_t n);

/* The fixture root (no trailing '/'). */
const char *fz_root(void);
/* Write a file under the root (directories made as needed), replacing what was there. */
void fz_write(const char *rel, const void *data, size_t n);
void fz_write_str(const char *rel, const char *text);
/* Write a part, or remove the file when the part is absent (p == NULL). */
void fz_write_part(const char *rel, const struct fz_part *part);
/* Remove a file or a whole directory under the root; a missing one is fine. */
void fz_remove(const char *rel);

/* An environment on the fixture root. statvfs answers a fixed, plausible file system for
 * every path except those whose name ends in "empty" (0 blocks, as pseudo file systems) or
 * "gone" (-ENOENT). */
void fz_sysenv(struct rt_sysenv *env);

/* rtrack's own messages (rt_err, rt_warn on stderr) go to /dev/null; libFuzzer's and the
 * sanitizers' reports still reach file descriptor 2. */
void fz_quiet(void);

/* Open `c` on env with cfg, take a baseline sample into s[0], call between(ud) (which rewrites
 * files for the second sample; may be NULL), take a periodic sample one second later into s[1],
 * close. The caller keeps `s` from input to input, as the sampler keeps its two samples: their
 * arrays are reused. Returns 0, or -1 when the collector does not open on this root. */
int fz_collect2(const struct rt_collector *c, const struct rt_sysenv *env,
                const struct rt_collect_cfg *cfg, void (*between)(void *ud), void *ud,
                struct rt_sample s[2]);

/* The usual case: the input gives the files `rels` (NULL-terminated; all get the same text)
 * for the first sample, NUL, for the second (without a NUL both samples read the same), and
 * collector `c` reads them. Returns fz_collect2's value. */
int fz_files_collect2(const struct rt_collector *c, const struct rt_sysenv *env,
                      const struct rt_collect_cfg *cfg, const char *const *rels,
                      const uint8_t *data, size_t size, struct rt_sample s[2]);

/* The harness of a per-process file of the tree (fuzz_pid_io, fuzz_smaps): the root (pid 100)
 * and a child (101) in the first sample; in the second the child has exited and was reaped by
 * the root. The input is the root's file `name` in the first sample, NUL, in the second, NUL,
 * the child's in the first (a missing part leaves the file out). `check` gets each part's
 * text first (it aborts when the parser lets a value past its bound); then the process-tree
 * collector reads the files over the two samples. env: from fz_sysenv. */
void fz_tree_file(const struct rt_sysenv *env, const char *name, void (*check)(const char *text),
                  const uint8_t *data, size_t size);

/* Disks for the mount collector's harnesses (fuzz_mountinfo, fuzz_mounts): vda, sda (with a
 * partition sda1) and nvme0n1 (with nvme0n1p2), /sys/dev/block links for 254:0 and 8:1, and a
 * PATH where no `zpool` is found. */
void fz_mount_disks(void);

/* An AMD card for the amdgpu backend under the fixture root: the amdgpu module, card0 with
 * vendor 0x1002, PCI slot 0000:03:00.0 (from uevent: its device directory is no symlink), VRAM,
 * busy percent and an hwmon directory. Harnesses add or replace files after this. */
void fz_amd_card(void);
/* Open the amdgpu backend on env, read once (monotonic time 100 s), call between(ud) (may be
 * NULL), read again at 101 s, close. `pids` is the tracked tree whose fdinfo is scanned.
 * Returns 0, or -1 when the backend finds no card. */
int fz_amd_read2(const struct rt_sysenv *env, const pid_t *pids, int npids,
                 void (*between)(void *ud), void *ud);

#endif
