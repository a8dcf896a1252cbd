/* keeper.h - the Spare Cores Keeper API: the cheapest server that fits a recommendation. */
#ifndef RTRACK_KEEPER_H
#define RTRACK_KEEPER_H

#include <stddef.h>

#include "rtrack/base/util.h"

#define RT_KEEPER_URL "https://keeper.sparecores.net"

struct rt_keeper_query {
    int vcpus;      /* at least this many vCPUs */
    int memory_mib; /* at least this much memory (sent in GB, rounded up) */
    int gpus;       /* 0 = no GPU requirement */
    int vram_mib;   /* 0 = none (sent in GB, rounded up) */
};

/* GET {base_url}/servers?... ordered by on-demand price; appends the first server object
 * (JSON text) to `out`. base_url NULL = RT_KEEPER_URL. 0 on success; -1 with a one-line
 * reason in err (offline, timeout, HTTP status, no server fits). Never waits longer than a
 * few seconds. */
int rt_keeper_cheapest(const char *base_url, const struct rt_keeper_query *q, struct rt_buf *out,
                       char *err, size_t errlen);

#endif
