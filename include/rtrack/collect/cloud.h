/* cloud.h - which cloud this host runs on, from the vendors' instance metadata services:
 * Sentinel's cloud_vendor_id, cloud_account_id, cloud_region_id, cloud_zone_id and
 * cloud_instance_type.
 *
 * They are facts of the recording, like the host's: asked while recording (off the sampling
 * thread, src/record/facts.c) and stored with the run, so an upload later, or from another
 * machine, sends what was true where the job ran. Nothing here connects anywhere unless
 * rt_cloud_discover() is called: the caller decides (when streaming to Sentinel, or when asked
 * with --cloud-discovery). */
#ifndef RTRACK_CLOUD_H
#define RTRACK_CLOUD_H

#include "rtrack/sample/run.h" /* struct rt_cloud */

/* The vendors, in precedence order. */
enum rt_cloud_vendor {
    RT_CLOUD_AWS,
    RT_CLOUD_GCP,
    RT_CLOUD_AZURE,
    RT_CLOUD_HETZNER,
    RT_CLOUD_UPCLOUD,
    RT_CLOUD_VULTR,
    RT_CLOUD_ALICLOUD,
    RT_CLOUD_OVH,
    RT_CLOUD_NVENDORS
};

struct rt_cloud_opts {
    int off;                             /* no request at all: every field NULL */
    const char *base[RT_CLOUD_NVENDORS]; /* a vendor's base URL instead of its own (tests) */
};

/* Probe the metadata services of AWS, GCP, Azure, Hetzner, UpCloud, Vultr, AliCloud and OVH
 * in parallel (one thread each; a probe whose thread cannot be created runs on the caller) and
 * fill *out from the first vendor found in that order; all NULL when none answers. Each
 * request has a 1 s connect and a 1 s total timeout, and the whole discovery returns within
 * budget_s seconds (probes still running then are abandoned; they finish on their own, each
 * request cut at the budget). Never fails, never blocks longer than budget_s.
 *
 * o->off returns all NULL without any request; o->base[v] replaces vendor v's base URL (the
 * CLI takes them from RTRACK_CLOUD_DISCOVERY and RTRACK_IMDS_AWS, _GCP, ...; defaults
 * http://169.254.169.254, http://metadata.google.internal for GCP, http://100.100.100.200 for
 * AliCloud). o may be NULL: every vendor at its own address. */
void rt_cloud_discover(struct rt_cloud *out, const struct rt_cloud_opts *o, double budget_s);

/* Free the fields and set them to NULL (c may be NULL). */
void rt_cloud_free(struct rt_cloud *c);

#endif
