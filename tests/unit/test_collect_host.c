/* test_collect_host.c - src/collect/host.c: the host's facts, on a fixture tree and live. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/base/util.h"
#include "testlib.h"

/* One CPU's block of /proc/cpuinfo, its flags line as long as a modern x86's (~1.5 KiB). */
static void cpuinfo_block(struct rt_buf *b, int cpu)
{
    char head[256];
    snprintf(head, sizeof(head),
             "processor\t: %d\nvendor_id\t: TestVendor\nmodel name\t: Test CPU %s @ 2.00GHz\n"
             "cpu MHz\t\t: 2000.000\nflags\t\t:",
             cpu, cpu == 0 ? "first" : "other");
    rt_buf_puts(b, head);
    for (int i = 0; i < 150; i++) {
        char flag[16];
        snprintf(flag, sizeof(flag), " flag%03d", i);
        rt_buf_puts(b, flag);
    }
    rt_buf_puts(b, "\n\n");
}

/* The CPU model is the first block's, the count the online list's; without the list (a
 * fixture tree without it) the blocks of the whole file are counted. The fixture's cpuinfo
 * lists 4 CPUs and is longer than one read of it (1 KiB), the online list 6: the count must
 * follow the list. */
static void test_host_cpus(void **state)
{
    (void)state;
    char root[] = "/tmp/rtrack-fx.XXXXXX";
    assert_non_null(mkdtemp(root));
    struct rt_sysenv env = {0};
    env.root = root;
    struct rt_buf b = {0};
    for (int cpu = 0; cpu < 4; cpu++)
        cpuinfo_block(&b, cpu);
    assert_true(b.len > 4096);
    fx_write(root, "proc/cpuinfo", b.p);
    struct rt_host_info h;
    rt_host_info_read(&env, &h);
    assert_string_equal(h.cpu_model, "Test CPU first @ 2.00GHz");
    assert_int_equal(h.vcpus, 4);
    rt_host_info_free(&h);
    fx_write(root, "sys/devices/system/cpu/online", "0-3,6-7\n");
    rt_host_info_read(&env, &h);
    assert_string_equal(h.cpu_model, "Test CPU first @ 2.00GHz");
    assert_int_equal(h.vcpus, 6);
    rt_host_info_free(&h);
    /* an unreadable list falls back to the blocks */
    fx_write(root, "sys/devices/system/cpu/online", "garbage\n");
    rt_host_info_read(&env, &h);
    assert_int_equal(h.vcpus, 4);
    rt_host_info_free(&h);
    rt_buf_free(&b);
    fx_rmtree(root);

    /* the live host: the same count and model as the whole of /proc/cpuinfo says */
    rt_sysenv_live(&env);
    rt_host_info_read(&env, &h);
    struct rt_buf all = {0};
    assert_true(rt_read_file("/proc/cpuinfo", &all) > 0);
    int64_t n = 0;
    const char *model = NULL;
    for (const char *l = all.p; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        n += strncmp(l, "processor", 9) == 0;
        if (!model && strncmp(l, "model name", 10) == 0)
            model = l;
    }
    assert_int_equal(h.vcpus, n);
    if (model) { /* the value after ": ", its trailing blanks trimmed */
        const char *v = strchr(model, ':') + 1, *e = strchr(v, '\n');
        while (*v == ' ' || *v == '\t')
            v++;
        while (e > v && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        assert_non_null(h.cpu_model);
        assert_int_equal(strlen(h.cpu_model), (size_t)(e - v));
        assert_memory_equal(h.cpu_model, v, (size_t)(e - v));
    }
    rt_buf_free(&all);
    rt_host_info_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_host_cpus),
    };
    return cmocka_run_group_tests_name("host facts", tests, NULL, NULL);
}
