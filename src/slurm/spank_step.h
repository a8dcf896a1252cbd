/* spank_step.h - what the SPANK plugin learns of a step on a node with several slurmd, cgroups
 * and accounting (src/slurm/spank_step.c): private to src/slurm/. */
#ifndef RTRACK_SPANK_STEP_H
#define RTRACK_SPANK_STEP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <slurm/spank.h>

/* The CPUs of the job on this node (S_JOB_NCPUS) into out as text: 0, or -1 when unknown. The
 * job's SLURM_CPUS_ON_NODE, like SLURMD_NODENAME, may be the batch node's. */
int rt_spank_cpus_on_node(spank_t sp, char *out, size_t n);
/* slurmstepd's cgroup of the step, as /proc/self/cgroup names it, cut after ".../job_J/step_S"
 * (the same path in every v1 hierarchy; v2's slurmstepd sits in step_S/slurm): 0, or -1 when
 * the step has none (proctrack/linuxproc, task/none). */
int rt_spank_step_cgroup(const char *job, const char *step, char *out, size_t n);
/* The step's end told to its recorder: SIGTERM, sent with sigqueue and the value
 * RT_STEP_END_MAGIC << 28 | state << 24 | OOM kills << 16 | signal << 8 | exit code
 * (include/rtrack/record/loop.h) once the step's tasks have ended (slurm_spank_task_exit saw
 * them, and read the OOM kills of the step's cgroup then, before Slurm removes its task
 * cgroups): the largest exit code, the signal that killed one, and when one was, the job's
 * state as slurmctld has it (CANCELLED by scancel, TIMEOUT at the time limit). Sent through
 * PIDFD (pidfd_send_signal) when it is not -1, so a pid freed and taken since gets nothing.
 * 0, or -1 with errno as kill(2). */
int rt_spank_stop(spank_t sp, pid_t recorder, int pidfd);

#endif
