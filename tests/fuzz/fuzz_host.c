/* fuzz_host.c - the host facts read once per run (rt_host_info_read): hostname, machine id,
 * kernel release, PRETTY_NAME of os-release, CPU model and count from /proc/cpuinfo, MemTotal,
 * btime. Input, parts separated by NUL (a missing part leaves its file out): /proc/cpuinfo,
 * /etc/os-release, /proc/meminfo, /proc/stat, /proc/sys/kernel/hostname, /etc/machine-id,
 * /proc/sys/kernel/osrelease, /sys/devices/system/cpu/online (the CPU count; without it, the
 * "processor" blocks of cpuinfo). */
#include "fuzz_common.h"

static struct rt_sysenv env;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fz_quiet();
    fz_sysenv(&env);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[] = {"proc/cpuinfo",
                                        "etc/os-release",
                                        "proc/meminfo",
                                        "proc/stat",
                                        "proc/sys/kernel/hostname",
                                        "etc/machine-id",
                                        "proc/sys/kernel/osrelease",
                                        "sys/devices/system/cpu/online"};
    struct fz_part part[sizeof(files) / sizeof(files[0])];
    fz_split(data, size, part, sizeof(files) / sizeof(files[0]));
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        fz_write_part(files[i], &part[i]);
    struct rt_host_info h;
    rt_host_info_read(&env, &h);
    rt_host_info_free(&h);
    return 0;
}
