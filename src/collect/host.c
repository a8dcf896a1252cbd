/* host.c - host facts recorded once per run. */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"

static char *read_str(const struct rt_sysenv *env, const char *file)
{
    char path[4096], val[512];
    if (rt_path(env, path, sizeof(path), "%s", file) || rt_read_small(path, val, sizeof(val)) <= 0)
        return NULL;
    return xstrdup(val);
}

/* Value of the first "key<sep>value" line of a text, trimmed, quotes removed. */
static char *find_value(const char *text, const char *key, char sep)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, kl) != 0)
            continue;
        const char *p = l + kl;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != sep)
            continue;
        p++;
        while (*p == ' ' || *p == '\t' || *p == '"')
            p++;
        const char *e = strchr(p, '\n');
        if (!e)
            e = p + strlen(p);
        while (e > p && (e[-1] == ' ' || e[-1] == '"' || e[-1] == '\t'))
            e--;
        return e > p ? xstrndup(p, (size_t)(e - p)) : NULL;
    }
    return NULL;
}

void rt_host_info_read(const struct rt_sysenv *env, struct rt_host_info *h)
{
    memset(h, 0, sizeof(*h));
    h->vcpus = h->memory_kib = RT_NA;
    h->boot_time = RT_NAN;
    struct rt_buf b = {0};
    char path[4096];

    h->hostname = read_str(env, "/proc/sys/kernel/hostname");
    if (!h->hostname && !*env->root) {
        char name[256];
        if (gethostname(name, sizeof(name)) == 0) {
            name[sizeof(name) - 1] = '\0';
            h->hostname = xstrdup(name);
        }
    }
    h->machine_id = read_str(env, "/etc/machine-id");
    if (!h->machine_id)
        h->machine_id = read_str(env, "/var/lib/dbus/machine-id");
    h->kernel = read_str(env, "/proc/sys/kernel/osrelease");
    if (!h->kernel && !*env->root) {
        struct utsname u;
        if (uname(&u) == 0)
            h->kernel = xstrdup(u.release);
    }
    if (!rt_path(env, path, sizeof(path), "/etc/os-release") && rt_read_file(path, &b) > 0)
        h->os = find_value(b.p, "PRETTY_NAME", '=');
    /* The model from the first CPU's block of /proc/cpuinfo (its first lines: x86's fifth), the
     * count from the online list. The kernel formats cpuinfo one CPU at a time, only as far as a
     * read asks, and each block looks up that CPU's current frequency (on some kernels and
     * cpufreq drivers by an interrupt to the CPU): one read of 1 KiB formats the first block
     * only, on 2 CPUs as on 192, where the whole file costs about 11 us more per CPU on this
     * project's machine (bench/start_costs.sh). Without the online list (a fixture tree
     * without it) the "processor" blocks of the whole file are counted, as before; both count
     * the online CPUs. */
    char cpu0[1024], online[512];
    if (!rt_path(env, path, sizeof(path), "/proc/cpuinfo") &&
        rt_read_small(path, cpu0, sizeof(cpu0)) > 0)
        h->cpu_model = find_value(cpu0, "model name", ':');
    if (!rt_path(env, path, sizeof(path), "/sys/devices/system/cpu/online") &&
        rt_read_small(path, online, sizeof(online)) > 0)
        h->vcpus = rt_cpuset_count(online);
    if (h->vcpus == RT_NA && !rt_path(env, path, sizeof(path), "/proc/cpuinfo") &&
        rt_read_file(path, &b) > 0) {
        int64_t n = 0;
        for (const char *l = b.p; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
            if (strncmp(l, "processor", 9) == 0 && (l[9] == ' ' || l[9] == '\t' || l[9] == ':'))
                n++;
        if (n > 0)
            h->vcpus = n;
    }
    if (h->vcpus == RT_NA && !*env->root)
        h->vcpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (!rt_path(env, path, sizeof(path), "/proc/meminfo") && rt_read_file(path, &b) > 0) {
        char *v = find_value(b.p, "MemTotal", ':');
        uint64_t kib;
        if (v && rt_parse_u64(v, &kib))
            h->memory_kib = (int64_t)kib;
        free(v);
    }
    if (!rt_path(env, path, sizeof(path), "/proc/stat") && rt_read_file(path, &b) > 0) {
        const char *bt = strstr(b.p, "\nbtime ");
        uint64_t v;
        if (bt && rt_parse_u64(bt + 7, &v))
            h->boot_time = (double)v;
    }
    rt_buf_free(&b);
}

void rt_host_info_free(struct rt_host_info *h)
{
    free(h->hostname);
    free(h->machine_id);
    free(h->cpu_model);
    free(h->kernel);
    free(h->os);
    memset(h, 0, sizeof(*h));
}
