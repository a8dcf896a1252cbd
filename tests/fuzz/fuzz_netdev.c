/* fuzz_netdev.c - /proc/net/dev through the net collector, two samples (per-interface deltas).
 * Input: the first sample's file, NUL, the second's (without a NUL both read the same). The
 * fixture root has sysfs files for eth0, so identity reads run too. */
#include "fuzz_common.h"

static struct rt_sysenv env;
static struct rt_sample s[2];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    fz_write_str("sys/class/net/eth0/address", "52:54:00:12:34:56\n");
    fz_write_str("sys/class/net/eth0/mtu", "1500\n");
    fz_write_str("sys/class/net/eth0/speed", "-1\n");
    fz_write_str("sys/class/net/eth0/operstate", "up\n");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/net/dev", NULL};
    struct rt_collect_cfg cfg = {0, 0, 1.0};
    fz_files_collect2(&rt_collector_net, &env, &cfg, files, data, size, s);
    return 0;
}
