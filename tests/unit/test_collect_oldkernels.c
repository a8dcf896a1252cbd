/* test_collect_oldkernels.c - the /proc and /sys of a 3.10 (RHEL 7), a 4.14 (Amazon Linux 2)
 * and a 4.18 (RHEL 8) machine (tests/fixtures/kernels/, README.md there) recorded through every
 * collector into a real database, as `rtrack run` records: every column of every row a sample
 * writes, and the run's, is the value the fixture's files give or NULL where the kernel lacks
 * the file, as docs/portability.md says - never a silent 0.
 *
 * One file for the three machines rather than a part in each collector's test: a machine is
 * recorded by all collectors at once, and only the whole row, column by column, can show that
 * no column was forgotten (a column added to the schema later fails here until its value on
 * these kernels is written down below). The collectors' own tests hold each fallback alone. */
#include <math.h>
#include <stddef.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rtrack/collect/collect.h"
#include "rtrack/store/store.h"
#include "testlib.h"
/* the store's connection, to read back every column (as test_store.c does) */
#include "../../src/store/internal.h"

/* --- a row against its expectation ------------------------------------------------------------ */

/* The value of `name` in `want` ("name=value name=value ...", value: NULL; * for any value but
 * NULL; 'text' (spaces allowed); a number), into val; 0 when found. */
static int want_get(const char *want, const char *name, char *val, size_t cap)
{
    size_t nl = strlen(name);
    for (const char *p = want; *p;) {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        const char *v = eq + 1, *end;
        if (*v == '\'') {
            end = strchr(v + 1, '\'');
            assert_non_null(end);
            end++;
        } else {
            end = v + strcspn(v, " ");
        }
        if ((size_t)(eq - p) == nl && strncmp(p, name, nl) == 0) {
            snprintf(val, cap, "%.*s", (int)(end - v), v);
            return 0;
        }
        p = end;
    }
    return -1;
}

static int want_count(const char *want)
{
    int n = 0;
    char name[128], val[256];
    for (const char *p = want; *p;) {
        while (*p == ' ')
            p++;
        const char *eq = strchr(p, '=');
        if (!eq)
            break;
        snprintf(name, sizeof(name), "%.*s", (int)(eq - p), p);
        assert_int_equal(want_get(p, name, val, sizeof(val)), 0);
        p = eq + 1 + strlen(val);
        n++;
    }
    return n;
}

/* The one row `sql` returns is `want`: every column of it named there, and nothing else. */
static void check_row(sqlite3 *db, const char *what, const char *sql, const char *want)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        fail_msg("%s: bad query %s: %s", what, sql, sqlite3_errmsg(db));
    if (sqlite3_step(st) != SQLITE_ROW)
        fail_msg("%s: no row for %s", what, sql);
    int n = sqlite3_column_count(st), bad = 0;
    char val[256];
    for (int i = 0; i < n; i++) {
        const char *col = sqlite3_column_name(st, i);
        int type = sqlite3_column_type(st, i);
        const char *got = (const char *)sqlite3_column_text(st, i);
        if (want_get(want, col, val, sizeof(val)) != 0) {
            print_error("%s.%s = %s: not in the expectation\n", what, col, got ? got : "NULL");
            bad++;
            continue;
        }
        int ok;
        if (!strcmp(val, "NULL"))
            ok = type == SQLITE_NULL;
        else if (!strcmp(val, "*"))
            ok = type != SQLITE_NULL;
        else if (val[0] == '\'')
            ok = type == SQLITE_TEXT && strlen(got) == strlen(val) - 2 &&
                 strncmp(got, val + 1, strlen(val) - 2) == 0;
        else {
            double w = strtod(val, NULL), g = sqlite3_column_double(st, i);
            ok = (type == SQLITE_INTEGER || type == SQLITE_FLOAT) &&
                 fabs(g - w) <= 1e-9 * (fabs(w) > 1 ? fabs(w) : 1);
        }
        if (!ok) {
            print_error("%s.%s = %s, expected %s\n", what, col, got ? got : "NULL", val);
            bad++;
        }
    }
    if (want_count(want) != n) {
        print_error("%s: %d columns, the expectation names %d\n", what, n, want_count(want));
        bad++;
    }
    sqlite3_finalize(st);
    if (bad)
        fail_msg("%s: %d column(s) differ", what, bad);
}

/* --- one machine, recorded ------------------------------------------------------------------- */

struct machine {
    char dir[256], db[300];
    struct fx_case c; /* the two samples and the environment (fx_case's fields) */
    pid_t self;       /* rtrack's pid in the tree (its /proc/self) */
    struct rt_store *s;
};

static void load_meta(struct machine *m)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/meta", m->c.dir);
    char *text = fx_slurp(path);
    assert_non_null(text);
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (!strncmp(line, "time_a=", 7))
            m->c.time_a = strtod(line + 7, NULL);
        else if (!strncmp(line, "time_b=", 7))
            m->c.time_b = strtod(line + 7, NULL);
        else if (!strncmp(line, "pid=", 4))
            m->c.pid = (pid_t)atoi(line + 4);
        else if (!strncmp(line, "self=", 5))
            m->self = (pid_t)atoi(line + 5);
    }
    free(text);
}

static void snapshot(struct machine *m, const char *which, double t, struct rt_sample *s,
                     const struct rt_sample *prev)
{
    char path[1300];
    snprintf(m->c.root, sizeof(m->c.root), "%s/%s", m->c.dir, which);
    snprintf(path, sizeof(path), "%s/statvfs.tsv", m->c.root);
    fx_statvfs_free(&m->c.sv);
    assert_int_equal(fx_statvfs_load(&m->c.sv, path), 0);
    rt_sample_begin(s, prev, prev ? RT_SAMPLE_FINAL : RT_SAMPLE_BASELINE, t, t);
    rt_collectors_sample(m->c.col, s, prev);
}

/* Record the machine `ver` as `rtrack run` would (its job is the tree's root; rtrack is the
 * tree's /proc/self): the run's facts (host, allocation), a baseline on snapshot a, the final
 * sample on b, the run's end (the OOM kills and the cgroup's peak over the two snapshots), into
 * a database of its own. walk: the tree found through the children files (rtrack's probe for
 * them written into the copy), else by the full scan. `edit`, when given, changes the copy
 * before it is read. */
static void record(struct machine *m, const char *ver, int walk,
                   void (*edit)(const struct machine *m))
{
    memset(m, 0, sizeof(*m));
    assert_int_equal(fx_tmpdir(m->dir, sizeof(m->dir), m->db, sizeof(m->db)), 0);
    char src[600], path[1300];
    snprintf(src, sizeof(src), "%s/kernels/%s", RT_FIXTURES, ver);
    snprintf(m->c.dir, sizeof(m->c.dir), "%s/tree", m->dir);
    fx_copytree(src, m->c.dir);
    load_meta(m);
    snprintf(m->c.root, sizeof(m->c.root), "%s/a", m->c.dir);
    if (walk) {
        snprintf(path, sizeof(path), "proc/self/task/%d/children", (int)getpid());
        fx_write(m->c.root, path, "");
    }
    if (edit)
        edit(m);
    struct rt_sysenv *env = &m->c.env;
    env->root = m->c.root;
    env->statvfs_fn = fx_statvfs_fn;
    env->statvfs_ud = &m->c.sv;
    env->clk_tck = 100;
    env->page_size = 4096;

    /* what `run` reads before the job starts */
    struct rt_host_info h;
    rt_host_info_read(env, &h);
    struct rt_alloc alloc = rt_alloc_none();
    rt_cgroup_alloc_read(env, &alloc);
    int64_t oom0 = rt_oom_kills(env);
    struct rt_cgroup_peak peak;
    int peak_ok = rt_cgroup_peak_open(env, m->self, &peak);

    struct rt_collect_cfg cc = {m->c.pid, 0, m->c.time_b - m->c.time_a, 0, NULL};
    m->c.col = rt_collectors_open(env, &cc);
    snapshot(m, "a", m->c.time_a, &m->c.a, NULL);
    snapshot(m, "b", m->c.time_b, &m->c.b, &m->c.a);

    char err[512];
    assert_int_equal(rt_store_open(m->db, RT_STORE_WRITE, &m->s, err, sizeof(err)), 0);
    struct rt_run_desc rs = {.mode = "run",
                             .command_json = "[\"sbatch-step\",\"./train.sh\"]",
                             .pid = m->c.pid,
                             .interval = m->c.time_b - m->c.time_a,
                             .started_at = m->c.time_a,
                             .host = &h,
                             .clk_tck = env->clk_tck,
                             .page_size = env->page_size,
                             .alloc = &alloc};
    int64_t run;
    assert_int_equal(rt_store_begin_run(m->s, &rs, &run), 0);
    assert_int_equal(rt_store_add_sample(m->s, &m->c.a), 0);
    assert_int_equal(rt_store_add_sample(m->s, &m->c.b), 0);

    /* the run's end: what the kernel says at b (the peak file grown to b's value) */
    struct rt_run_end e = rt_run_end_none(m->c.time_b);
    e.status = "finished";
    e.exit_code = 0;
    e.end_reason = "exited";
    int64_t oom1 = rt_oom_kills(&(struct rt_sysenv){.root = m->c.root});
    if (oom0 != RT_NA && oom1 != RT_NA)
        e.oom_kills = oom1 - oom0;
    if (peak_ok == 0) {
        char grown_path[5200], *grown;
        /* the same file in b: past "DIR/a" */
        snprintf(grown_path, sizeof(grown_path), "%s/b%s", m->c.dir,
                 peak.path + strlen(m->c.dir) + 2);
        assert_non_null(grown = fx_slurp(grown_path));
        FILE *f = fopen(peak.path, "w");
        assert_non_null(f);
        fputs(grown, f);
        fclose(f);
        free(grown);
        e.cgroup_peak_bytes = rt_cgroup_peak_end(&peak);
    }
    assert_int_equal(rt_store_end_run(m->s, &e), 0);
    rt_host_info_free(&h);
}

static void machine_free(struct machine *m)
{
    rt_store_close(m->s);
    fx_case_free(&m->c);
    fx_rmtree(m->dir);
}

/* --- what each machine's rows are ------------------------------------------------------------ */

#define PSI_NULL                                                                                   \
    "psi_cpu_some_us=NULL psi_cpu_full_us=NULL psi_memory_some_us=NULL psi_memory_full_us=NULL "   \
    "psi_io_some_us=NULL psi_io_full_us=NULL psi_cpu_some_pct=NULL psi_cpu_full_pct=NULL "         \
    "psi_memory_some_pct=NULL psi_memory_full_pct=NULL psi_io_some_pct=NULL "                      \
    "psi_io_full_pct=NULL "

/* the same four CPUs (/proc/stat at b, and over the two seconds) on 3.10 and 4.14 */
#define CPU_4                                                                                      \
    "cpu_user=4044807 cpu_nice=4346 cpu_system=886744 cpu_idle=34283051 cpu_iowait=44450 "         \
    "cpu_irq=9612 cpu_softirq=65126 cpu_steal=14271 cpu_guest=0 cpu_guest_nice=0 "                 \
    "cpu_utime_s=3.66 cpu_stime_s=0.8 cpu_usage=2.23 cpu_busy_cores=2.27 ncores=4 "

/* the same tree, the same two seconds of it, on every machine: its CPU, I/O and RSS */
#define TREE_COMMON                                                                                \
    "proc_count=3 proc_children=2 proc_utime_s=2.1 proc_stime_s=0.15 proc_cpu_usage=1.125 "        \
    "proc_rss_kib=210800 proc_read_bytes=5242880 proc_write_bytes=2097152 "                        \
    "proc_utime_total=13115 proc_stime_total=938 "

#define SAMPLE_HEAD                                                                                \
    "id=* run_id=* seq=1 kind='final' ts=1700000002.25 mono=1700000002.25 interval_s=2 "           \
    "processes=6 procs_running=3 procs_blocked=1 forks_total=3456801 ctxt_total=1876566666 "       \
    "cgroup_usage_us=140620000 cgroup_cpu_s=2.12 net_rx_bytes=1048576 net_tx_bytes=65536 "

/* Of every sample on these kernels: no PSI (no /proc/pressure), no CPU wait (no schedstat, or
 * one that reads "0 0 0") - NULL, not 0. */
static const char sample_310[] = SAMPLE_HEAD CPU_4 PSI_NULL TREE_COMMON
    "cgroup_limit_cores=NULL "
    "mem_total_kib=7990060 mem_free_kib=400049 mem_available_kib=NULL mem_used_kib=2210897 "
    "mem_buffers_kib=2108 mem_cached_kib=5125926 mem_sreclaimable_kib=251080 "
    "mem_shmem_kib=9172 mem_active_kib=3915129 mem_inactive_kib=2804713 "
    "swap_total_kib=2097148 swap_free_kib=2041340 "
    "disk_read_bytes=2097152 disk_write_bytes=4194304 disk_space_total_bytes=59019100160 "
    "disk_space_used_bytes=12983205888 disk_space_free_bytes=46035894272 "
    "proc_root_pid=23456 proc_pss_kib=199896 proc_cpu_wait_s=NULL";

static const char sample_414[] = SAMPLE_HEAD CPU_4 PSI_NULL TREE_COMMON
    "cgroup_limit_cores=1.5 "
    "mem_total_kib=16006832 mem_free_kib=821984 mem_available_kib=11261660 "
    "mem_used_kib=4745172 mem_buffers_kib=2108 mem_cached_kib=10256660 "
    "mem_sreclaimable_kib=251080 mem_shmem_kib=9172 mem_active_kib=7843347 "
    "mem_inactive_kib=5610583 swap_total_kib=2097148 swap_free_kib=2041340 "
    "disk_read_bytes=4194304 disk_write_bytes=8388608 disk_space_total_bytes=25767686144 "
    "disk_space_used_bytes=9221943296 disk_space_free_bytes=16545742848 "
    "proc_root_pid=3125 proc_pss_kib=199902 proc_cpu_wait_s=NULL";

static const char sample_418[] = SAMPLE_HEAD PSI_NULL TREE_COMMON
    "cpu_user=8093614 cpu_nice=8692 cpu_system=1773488 cpu_idle=68570102 cpu_iowait=88900 "
    "cpu_irq=19224 cpu_softirq=130252 cpu_steal=28542 cpu_guest=0 cpu_guest_nice=0 "
    "cpu_utime_s=7.32 cpu_stime_s=1.6 cpu_usage=4.46 cpu_busy_cores=4.54 ncores=8 "
    "cgroup_limit_cores=2 "
    "mem_total_kib=32617196 mem_free_kib=1696214 mem_available_kib=22766523 "
    "mem_used_kib=9850673 mem_buffers_kib=2108 mem_cached_kib=20887293 "
    "mem_sreclaimable_kib=251080 mem_shmem_kib=9172 mem_active_kib=15982426 "
    "mem_inactive_kib=11424210 swap_total_kib=2097148 swap_free_kib=2041340 "
    "disk_read_bytes=4194304 disk_write_bytes=2097152 disk_space_total_bytes=80469819392 "
    "disk_space_used_bytes=13994885120 disk_space_free_bytes=66474934272 "
    "proc_root_pid=98010 proc_pss_kib=199902 proc_cpu_wait_s=NULL";

/* The run: its host, what it was allocated (cgroup v1 only), its end, and how the kernel let
 * it be read. No OOM count before 4.13 (no vmstat oom_kill). */
#define RUN_HEAD                                                                                   \
    "id=* uuid=* mode='run' command='[\"sbatch-step\",\"./train.sh\"]' job_name=NULL "             \
    "project_name=NULL stage_name=NULL task_name=NULL team=NULL env=NULL language=NULL "           \
    "orchestrator=NULL executor=NULL external_run_id=NULL container_image=NULL "                   \
    "requested_interval_s=2 started_at=1700000000.25 ended_at=1700000002.25 status='finished' "    \
    "exit_code=0 exit_signal=NULL end_reason='exited' host_boot_time=1699000000 clk_tck=100 "      \
    "page_size=4096 rtrack_version=* cloud_vendor_id=NULL cloud_account_id=NULL "                  \
    "cloud_region_id=NULL cloud_zone_id=NULL cloud_instance_type=NULL job_maxrss_kib=NULL "        \
    "job_utime_s=NULL job_stime_s=NULL slurm_job_id=NULL slurm_cpus_on_node=NULL "                 \
    "slurm_mem_per_node_mib=NULL slurm_mem_per_cpu_mib=NULL cuda_visible_devices=NULL "            \
    "alloc_gpus=NULL slurm_array_job_id=NULL slurm_array_task_id=NULL slurm_step_id=NULL "         \
    "slurm_job_user=NULL slurm_job_partition=NULL slurm_nodename=NULL slurm_job_num_nodes=NULL "   \
    "slurm_ntasks=NULL slurm_cpus_per_task=NULL slurm_gpus_on_node=NULL slurm_job_gpus=NULL "      \
    "slurm_time_limit_s=NULL cgroup_memory_peak_bytes=939524096 cpu_wait_source=NULL "             \
    "psi_missing='no-pressure' cgroup_path=NULL cgroup_oom_kills=NULL slurm_job_state=NULL "

static const char run_310[] =
    RUN_HEAD "pid=23456 host_hostname='hpc-node07.example.com' "
             "host_machine_id='8f3c1b2a4d5e6f708192a3b4c5d6e7f8' host_vcpus=4 "
             "host_cpu_model='Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz' host_memory_kib=7990060 "
             "host_kernel='3.10.0-1160.el7.x86_64' host_os='CentOS Linux 7 (Core)' "
             "host_oom_kills=NULL cgroup_cpu_quota_cores=NULL cgroup_cpuset_cpus=2 "
             "cgroup_memory_limit_bytes=4294967296 proc_memory_source='smaps' "
             "cpu_wait_missing='no-schedstat'";

static const char run_414[] =
    RUN_HEAD "pid=3125 host_hostname='ip-10-0-1-23.ec2.internal' "
             "host_machine_id='ec2f0a1b2c3d4e5f60718293a4b5c6d7' host_vcpus=4 "
             "host_cpu_model='Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz' "
             "host_memory_kib=16006832 host_kernel='4.14.336-257.562.amzn2.x86_64' "
             "host_os='Amazon Linux 2' host_oom_kills=1 cgroup_cpu_quota_cores=1.5 "
             "cgroup_cpuset_cpus=4 cgroup_memory_limit_bytes=2147483648 "
             "proc_memory_source='smaps_rollup' cpu_wait_missing='no-schedstat'";

static const char run_418[] =
    RUN_HEAD "pid=98010 host_hostname='batch-03.lab.example.org' "
             "host_machine_id='5a6b7c8d9e0f10213243546576879809' host_vcpus=8 "
             "host_cpu_model='AMD EPYC 7742 64-Core Processor' host_memory_kib=32617196 "
             "host_kernel='4.18.0-553.el8_10.x86_64' "
             "host_os='Red Hat Enterprise Linux 8.10 (Ootpa)' host_oom_kills=1 "
             "cgroup_cpu_quota_cores=2 cgroup_cpuset_cpus=8 cgroup_memory_limit_bytes=8589934592 "
             "proc_memory_source='smaps_rollup' cpu_wait_missing='schedstat-off'";

/* The tree's processes at b: the shell, the python with three threads, gzip. PSS: the sum of
 * smaps' lines on 3.10, smaps_rollup's (a KiB or so off that sum: the file read shows) on 4.14
 * and 4.18; no CPU wait. */
#define PROC_ROOT(ppid, pss)                                                                       \
    "sample_id=* process_id=* ppid=" #ppid " state='S' threads=1 utime=5 stime=3 cutime=0 "        \
    "cstime=0 rss_kib=3152 pss_kib=" #pss " read_bytes_total=1048576 write_bytes_total=4096 "      \
    "cpu_utime_s=0 cpu_stime_s=0 read_bytes=0 write_bytes=0 sched_wait_ns=NULL cpu_wait_s=NULL"
#define PROC_CHILD(ppid, pss)                                                                      \
    "sample_id=* process_id=* ppid=" #ppid " state='R' threads=3 utime=12150 stime=810 cutime=0 "  \
    "cstime=0 rss_kib=206848 pss_kib=" #pss " read_bytes_total=57671680 write_bytes_total=0 "      \
    "cpu_utime_s=1.5 cpu_stime_s=0.1 read_bytes=5242880 write_bytes=0 sched_wait_ns=NULL "         \
    "cpu_wait_s=NULL"
#define PROC_GRAND(ppid, pss)                                                                      \
    "sample_id=* process_id=* ppid=" #ppid " state='R' threads=1 utime=960 stime=125 cutime=0 "    \
    "cstime=0 rss_kib=800 pss_kib=" #pss " read_bytes_total=0 write_bytes_total=12582912 "         \
    "cpu_utime_s=0.6 cpu_stime_s=0.05 read_bytes=0 write_bytes=2097152 sched_wait_ns=NULL "        \
    "cpu_wait_s=NULL"

/* Identity rows: the tree's processes (start times from stat), the disk, the NIC and the root
 * mount of each machine, and their rows at b. */
#define PROCESS(pid, start, ppid, name, cmd)                                                       \
    "id=* run_id=* pid=" #pid " starttime=" #start " ppid=" #ppid " name='" name "' cmdline='" cmd \
    "' first_seq=0"

/* the tree's three processes: rtrack started the shell, which started python, which gzip */
#define TREE(rtrack, root, child, grand)                                                           \
    {                                                                                              \
        PROCESS(root, 99990025, rtrack, "slurm_script",                                            \
                "[\"/bin/bash\",\"/var/spool/slurmd/job/slurm_script\"]"),                         \
            PROCESS(child, 99990125, root, "python3",                                              \
                    "[\"python3\",\"train.py\",\"--epochs\",\"3\"]"),                              \
            PROCESS(grand, 99999525, child, "gzip", "[\"gzip\",\"-9\"]")                           \
    }

struct kernel_case {
    const char *ver;
    const char *sample, *run;
    pid_t pids[3];
    const char *procs[3];    /* process_samples at b */
    const char *identity[3]; /* processes */
    const char *core0;       /* cpu_core_samples of core 0 at b */
    const char *disk, *disk_b;
    const char *nic, *nic_b;
    const char *mount, *mount_b;
};

#define CORE0_B                                                                                    \
    "sample_id=* core=0 user=812385 nice=1203 system=201246 idle=8801378 iowait=10236 irq=2345 "   \
    "softirq=15679 steal=3457 guest=0 guest_nice=0 busy_pct=27"
#define NIC_B                                                                                      \
    "sample_id=* nic_id=* rx_bytes_total=9877591786 rx_packets_total=8766232 rx_errors_total=3 "   \
    "rx_dropped_total=12 tx_bytes_total=1234633426 tx_packets_total=2346078 tx_errors_total=1 "    \
    "tx_dropped_total=2 rx_bytes=1048576 tx_bytes=65536 operstate='up'"

static const struct kernel_case cases[] = {
    {"3.10",
     sample_310,
     run_310,
     {23456, 23460, 23470},
     {PROC_ROOT(23450, 748), PROC_CHILD(23456, 198528), PROC_GRAND(23460, 620)},
     TREE(23450, 23456, 23460, 23470),
     CORE0_B,
     "id=* run_id=* name='sda' major=8 minor=0 model='Virtual disk' vendor='VMware' serial=NULL "
     "type='hdd' capacity_bytes=107374182400 hw_sector_size=512",
     "sample_id=* disk_id=* reads=123712 reads_merged=2345 sectors_read=9878591 read_ms=456789 "
     "writes=235079 writes_merged=34567 sectors_written=19880639 write_ms=1234567 in_flight=0 "
     "io_ms=345678 weighted_io_ms=1691234 read_bytes=1048576 write_bytes=2097152",
     "id=* run_id=* name='ens192' mac='00:50:56:a1:2b:3c' driver='vmxnet3' mtu=1500 "
     "speed_mbps=10000",
     NIC_B,
     "id=* run_id=* mount_point='/' fstype='xfs' source='/dev/mapper/centos-root' disk='dm-0'",
     "sample_id=* mount_id=* total_bytes=53660876800 used_bytes=12701925376 "
     "available_bytes=40958951424 free_bytes=40958951424"},
    {"4.14",
     sample_414,
     run_414,
     {3125, 3130, 3140},
     {PROC_ROOT(3120, 750), PROC_CHILD(3125, 198531), PROC_GRAND(3130, 621)},
     TREE(3120, 3125, 3130, 3140),
     CORE0_B,
     "id=* run_id=* name='nvme0n1' major=259 minor=0 "
     "model='Amazon Elastic Block Store' vendor=NULL serial='vol0123456789abcdef0' type='nvme' "
     "capacity_bytes=21474836480 hw_sector_size=512",
     "sample_id=* disk_id=* reads=346702 reads_merged=123 sectors_read=23464981 read_ms=234567 "
     "writes=458837 writes_merged=234 sectors_written=45695285 write_ms=567890 in_flight=0 "
     "io_ms=456789 weighted_io_ms=802457 read_bytes=4194304 write_bytes=8388608",
     "id=* run_id=* name='eth0' mac='0e:1f:2a:3b:4c:5d' driver='ena' mtu=9001 speed_mbps=NULL",
     NIC_B,
     "id=* run_id=* mount_point='/' fstype='xfs' source='/dev/nvme0n1p1' disk='nvme0n1'",
     "sample_id=* mount_id=* total_bytes=21472718848 used_bytes=9185767424 "
     "available_bytes=12286951424 free_bytes=12286951424"},
    {"4.18",
     sample_418,
     run_418,
     {98010, 98020, 98030},
     {PROC_ROOT(98001, 750), PROC_CHILD(98010, 198531), PROC_GRAND(98020, 621)},
     TREE(98001, 98010, 98020, 98030),
     CORE0_B,
     "id=* run_id=* name='vda' major=252 minor=0 model=NULL vendor=NULL serial=NULL type='hdd' "
     "capacity_bytes=42949672960 hw_sector_size=512",
     "sample_id=* disk_id=* reads=235079 reads_merged=3456 sectors_read=12349774 read_ms=345678 "
     "writes=345934 writes_merged=45678 sectors_written=23458837 write_ms=2345678 in_flight=2 "
     "io_ms=456789 weighted_io_ms=2691356 read_bytes=2097152 write_bytes=1048576",
     "id=* run_id=* name='ens3' mac='52:54:00:6e:7f:80' driver='virtio_net' mtu=1500 "
     "speed_mbps=NULL",
     NIC_B,
     "id=* run_id=* mount_point='/' fstype='xfs' source='/dev/mapper/rhel-root' disk='dm-0'",
     "sample_id=* mount_id=* total_bytes=75111596032 used_bytes=13672644608 "
     "available_bytes=61438951424 free_bytes=61438951424"},
};

static void check_machine(const struct kernel_case *k, int walk)
{
    struct machine m;
    record(&m, k->ver, walk, NULL);
    sqlite3 *db = rt_store_db(m.s);
    char what[128], sql[512];
    snprintf(what, sizeof(what), "%s%s samples", k->ver, walk ? " (children files)" : "");
    check_row(db, what, "SELECT * FROM samples WHERE seq = 1", k->sample);
    snprintf(what, sizeof(what), "%s runs", k->ver);
    check_row(db, what, "SELECT * FROM runs", k->run);
    for (int i = 0; i < 3; i++) {
        snprintf(what, sizeof(what), "%s process_samples of %d", k->ver, (int)k->pids[i]);
        snprintf(sql, sizeof(sql),
                 "SELECT ps.* FROM process_samples ps JOIN processes p ON p.id = ps.process_id "
                 "JOIN samples s ON s.id = ps.sample_id WHERE s.seq = 1 AND p.pid = %d",
                 (int)k->pids[i]);
        check_row(db, what, sql, k->procs[i]);
        snprintf(what, sizeof(what), "%s processes %d", k->ver, (int)k->pids[i]);
        snprintf(sql, sizeof(sql), "SELECT * FROM processes WHERE pid = %d", (int)k->pids[i]);
        check_row(db, what, sql, k->identity[i]);
    }
    /* only the tree: rtrack itself, pid 1 and kthreadd are not in it */
    check_row(db, "processes", "SELECT count(*) FROM processes", "count(*)=3");
    /* one row of each identity table and of its rows at b: core 0, the first disk, the NIC,
     * the root mount */
    static const struct {
        const char *table, *sql;
        size_t want; /* offset of the expectation in struct kernel_case */
    } rows[] = {
        {"cpu_core_samples",
         "SELECT c.* FROM cpu_core_samples c JOIN samples s ON s.id = c.sample_id WHERE "
         "s.seq = 1 AND c.core = 0",
         offsetof(struct kernel_case, core0)},
        {"disks", "SELECT * FROM disks ORDER BY id", offsetof(struct kernel_case, disk)},
        {"disk_samples",
         "SELECT d.* FROM disk_samples d JOIN samples s ON s.id = d.sample_id WHERE s.seq = 1 "
         "ORDER BY d.disk_id",
         offsetof(struct kernel_case, disk_b)},
        {"nics", "SELECT * FROM nics", offsetof(struct kernel_case, nic)},
        {"nic_samples",
         "SELECT n.* FROM nic_samples n JOIN samples s ON s.id = n.sample_id WHERE s.seq = 1",
         offsetof(struct kernel_case, nic_b)},
        {"mounts", "SELECT * FROM mounts WHERE mount_point = '/'",
         offsetof(struct kernel_case, mount)},
        {"mount_samples",
         "SELECT ms.* FROM mount_samples ms JOIN samples s ON s.id = ms.sample_id JOIN mounts mt "
         "ON mt.id = ms.mount_id WHERE s.seq = 1 AND mt.mount_point = '/'",
         offsetof(struct kernel_case, mount_b)},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        snprintf(what, sizeof(what), "%s %s", k->ver, rows[i].table);
        check_row(db, what, rows[i].sql,
                  *(const char *const *)(const void *)((const char *)k + rows[i].want));
    }
    machine_free(&m);
}

static void test_rhel7_310(void **state)
{
    (void)state;
    check_machine(&cases[0], 0);
}

static void test_al2_414(void **state)
{
    (void)state;
    check_machine(&cases[1], 0);
    check_machine(&cases[1], 1);
}

static void test_rhel8_418(void **state)
{
    (void)state;
    check_machine(&cases[2], 0);
    check_machine(&cases[2], 1);
}

/* RHEL 7's 3.10 has MemAvailable (backported from 3.14): with it, it is the available memory
 * and used is total less it; everything else of the 3.10 machine stays as it was. */
static void add_memavailable(const struct machine *m)
{
    for (int i = 0; i < 2; i++) {
        char path[1300];
        snprintf(path, sizeof(path), "%s/%c/proc/meminfo", m->c.dir, "ab"[i]);
        char *text = fx_slurp(path), *nl = strchr(text, '\n');
        nl = strchr(nl + 1, '\n'); /* after MemFree */
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fprintf(f, "%.*sMemAvailable:    5400000 kB%s", (int)(nl + 1 - text), text, nl);
        fclose(f);
        free(text);
    }
}

static void test_rhel7_memavailable(void **state)
{
    (void)state;
    struct machine m;
    record(&m, "3.10", 0, add_memavailable);
    assert_int_equal(m.c.b.mem_available, 5400000);
    assert_int_equal(m.c.b.mem_used, 7990060 - 5400000);
    assert_int_equal(m.c.b.proc_pss_kib, 199896);
    machine_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rhel7_310),
        cmocka_unit_test(test_al2_414),
        cmocka_unit_test(test_rhel8_418),
        cmocka_unit_test(test_rhel7_memavailable),
    };
    return cmocka_run_group_tests_name("old kernels", tests, NULL, NULL);
}
