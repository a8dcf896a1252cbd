/* test_cluster.c - `summary --slurm-job`'s rows and renderers (src/summary/cluster.c) on a struct
 * rt_cluster built by hand, as rt_cluster_compute() would leave it: rt_cluster_row_of() per node
 * and for the job (wall and CPU seconds to 2 dp, efficiencies to 1 dp as seff computes them: CPU
 * time / (cores allocated x the job's wall), memory peak / memory allocated), the text table
 * rt_cluster_write_text() prints (its exact lines, text and markdown) and the values of
 * rt_cluster_write_json()'s document, read back. A unit allocated or not, a figure known or not:
 * each reaches the page as a number, a "-" or a null. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rtrack/base/json.h"
#include "rtrack/base/util.h"
#include "rtrack/summary/cluster.h"
#include "testlib.h"

/* Job 777 on two nodes, t = 1000 .. 1120 (the job's wall: 120 s):
 *   node01: steps 0 and batch, 2 runs, 1000 .. 1100, 300.456 CPU-s, 4 CPUs and 8192 MiB
 *           allocated, a peak of 3000.123 MiB and 3.456 cores, no GPU
 *   node02 (array task 3 of 776): step 0, 1 run, 1010 .. 1120, 100 CPU-s, 4 CPUs, 8192 MiB and
 *           1 GPU allocated, a peak of 1000 MiB and 1.2 cores, 0.5 GPU used
 * and the decisions compute() takes: each node's wall of its job id (120), the recommendations
 * (3 and 1 CPUs: ceil(300.456 / 120 = 2.50) and ceil(0.83); 3000.123 x 1.2 = 3600.1 -> 4096 and
 * 1000 x 1.2 = 1200 -> 2048 MiB; 0 and 1 GPU), the totals. */
static void job_777(struct rt_cluster *c, struct rt_cluster_node n[2])
{
    memset(c, 0, sizeof(*c));
    memset(n, 0, 2 * sizeof(*n));
    snprintf(c->slurm_job, sizeof(c->slurm_job), "777");
    snprintf(n[0].job, sizeof(n[0].job), "777");
    snprintf(n[0].name, sizeof(n[0].name), "node01");
    snprintf(n[0].steps, sizeof(n[0].steps), "0,batch");
    n[0].runs = 2;
    n[0].t0 = 1000, n[0].t1 = 1100, n[0].cpu_s = 300.456;
    n[0].a_cpus = 4, n[0].a_mem = 8192, n[0].a_gpus = NAN;
    n[0].mem_peak = 3000.123, n[0].cores_peak = 3.456, n[0].gpus_used = NAN;
    n[0].ntasks = 2, n[0].num_nodes = 2, n[0].time_limit = 3600;
    n[0].job_wall = 120;
    n[0].rec_cpus = 3, n[0].rec_mem = 4096, n[0].rec_gpus = 0;

    snprintf(n[1].job, sizeof(n[1].job), "777");
    snprintf(n[1].array_job, sizeof(n[1].array_job), "776");
    snprintf(n[1].array_task, sizeof(n[1].array_task), "3");
    snprintf(n[1].name, sizeof(n[1].name), "node02");
    snprintf(n[1].steps, sizeof(n[1].steps), "0");
    n[1].runs = 1;
    n[1].t0 = 1010, n[1].t1 = 1120, n[1].cpu_s = 100;
    n[1].a_cpus = 4, n[1].a_mem = 8192, n[1].a_gpus = 1;
    n[1].mem_peak = 1000, n[1].cores_peak = 1.2, n[1].gpus_used = 0.5;
    n[1].ntasks = 2, n[1].num_nodes = 2, n[1].time_limit = 3600;
    n[1].job_wall = 120;
    n[1].rec_cpus = 1, n[1].rec_mem = 2048, n[1].rec_gpus = 1;

    c->n = n;
    c->count = 2;
    c->runs = 3;
    c->nodes_per_job = 2, c->ntasks_per_node = 1, c->cpus_per_task = 3, c->gpus = 1;
    c->t0 = 1000, c->t1 = 1120;
    c->cpu_s = 400.456;         /* 300.456 + 100 */
    c->a_cpus = 8;              /* 4 + 4 */
    c->a_mem = 16384;           /* 8192 + 8192 */
    c->a_core_s = 960;          /* 4 x 120 + 4 x 120 */
    c->mem_peak = 4000.123;     /* 3000.123 + 1000 */
    c->mem_peak_max = 3000.123; /* node01's */
    c->time_limit = 3600;
    c->wall_max = 120;
    c->memory = 4096;
    snprintf(c->sbatch, sizeof(c->sbatch),
             "--nodes=2 --ntasks-per-node=1 --cpus-per-task=3 --mem=4G --gres=gpu:1 "
             "--time=0:03:00");
}

static void test_rows(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n[2];
    struct rt_cluster_row r;
    job_777(&c, n);
    /* node01: wall 1100 - 1000 = 100; CPU 300.456 -> 300.46; CPU eff 300.456 / (4 x 120, the
     * job's wall, not the node's 100) = 62.595 % -> 62.6; memory 3000.123 -> 3000.12, of 8192 =
     * 36.62 % -> 36.6 */
    rt_cluster_row_of(&c, &n[0], &r);
    assert_true(r.wall_s == 100);
    assert_true(r.cpu_s == 300.46);
    assert_true(r.alloc_cpus == 4);
    assert_true(r.cpu_eff_pct == 62.6);
    assert_true(r.memory_peak_mib == 3000.12);
    assert_true(r.alloc_memory_mib == 8192);
    assert_true(r.memory_eff_pct == 36.6);
    /* node02: wall 110; 100 / 480 = 20.83 % -> 20.8; 1000 / 8192 = 12.21 % -> 12.2 */
    rt_cluster_row_of(&c, &n[1], &r);
    assert_true(r.wall_s == 110);
    assert_true(r.cpu_s == 100);
    assert_true(r.cpu_eff_pct == 20.8);
    assert_true(r.memory_peak_mib == 1000);
    assert_true(r.memory_eff_pct == 12.2);
    /* the job: wall 1120 - 1000 = 120; 400.456 -> 400.46 CPU-s of 960 core-s = 41.71 % -> 41.7;
     * 4000.123 -> 4000.12 MiB of 16384 = 24.41 % -> 24.4 */
    rt_cluster_row_of(&c, NULL, &r);
    assert_true(r.wall_s == 120);
    assert_true(r.cpu_s == 400.46);
    assert_true(r.alloc_cpus == 8);
    assert_true(r.cpu_eff_pct == 41.7);
    assert_true(r.memory_peak_mib == 4000.12);
    assert_true(r.alloc_memory_mib == 16384);
    assert_true(r.memory_eff_pct == 24.4);
}

/* Unknowns: no allocation, no memory peak, a job whose core-seconds are unknown (a node
 * without an allocation): NAN, never 0 % or a division by zero. */
static void test_rows_unknown(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n[2];
    struct rt_cluster_row r;
    job_777(&c, n);
    n[1].a_cpus = NAN;
    n[1].a_mem = 0; /* 0 MiB allocated is no allocation */
    n[1].mem_peak = NAN;
    c.a_core_s = NAN;
    rt_cluster_row_of(&c, &n[1], &r);
    assert_true(isnan(r.cpu_eff_pct));
    assert_true(isnan(r.alloc_cpus));
    assert_true(isnan(r.memory_peak_mib));
    assert_true(isnan(r.memory_eff_pct));
    assert_true(r.cpu_s == 100); /* what is known stays */
    rt_cluster_row_of(&c, NULL, &r);
    assert_true(isnan(r.cpu_eff_pct));
    assert_true(r.memory_eff_pct == 24.4); /* the job's own totals are as they were set */
}

/* The output of a renderer, NUL-terminated, and its lines. */
static char *render_text(const struct rt_cluster *c, int md, char **line, int maxl, int *nl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    rt_cluster_write_text(c, f, md);
    fclose(f);
    char *copy = xstrdup(buf);
    *nl = 0;
    for (char *p = copy, *e; *p && *nl < maxl; p = e + 1) {
        e = strchr(p, '\n');
        assert_non_null(e); /* every line ends */
        *e = '\0';
        line[(*nl)++] = p;
    }
    free(buf);
    return copy;
}

static void test_text(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n[2];
    job_777(&c, n);
    char *line[16];
    int nl;
    char *t = render_text(&c, 0, line, 16, &nl);
    assert_int_equal(nl, 9);
    /* 120 s is "2m00s", 3600 "1h00m00s" */
    assert_string_equal(line[0], "slurm job 777: 2 nodes, 3 runs, wall 2m00s of a 1h00m00s limit");
    assert_string_equal(line[1], "");
    assert_string_equal(line[2], "  node             steps         CPU time  cores  alloc  CPU eff "
                                 "   mem peak   mem alloc  mem eff  next");
    /* 300.456 s is "5m00s"; cores 300.456 / 120 = 2.50 -> "2.5"; 3000.123 MiB = 2.93 GiB; next
     * time 3 CPUs and 4096 MiB = 4.00 GiB */
    assert_string_equal(line[3], "  node01           0,batch          5m00s    2.5      4    62.6% "
                                 "   2.93 GiB    8.00 GiB    36.6%  3 CPUs, 4.00 GiB");
    /* the array task in brackets; 100 / 120 = 0.83 cores; 1000 MiB below 1 GiB in MiB */
    assert_string_equal(line[4], "  node02 [3]       0                1m40s   0.83      4    20.8% "
                                 " 1000.0 MiB    8.00 GiB    12.2%  1 CPU, 2.00 GiB, 1 GPU");
    /* the job: 400.456 s = "6m40s", 400.456 / 120 = 3.34 cores, 4000.123 MiB = 3.91 GiB, 16384
     * MiB = "16.0 GiB" (one decimal from 10 GiB) */
    assert_string_equal(line[5], "  job total        -                6m40s   3.34      8    41.7% "
                                 "   3.91 GiB    16.0 GiB    24.4%  -");
    assert_string_equal(line[6], "");
    assert_string_equal(line[7], "next time: sbatch --nodes=2 --ntasks-per-node=1 "
                                 "--cpus-per-task=3 --mem=4G --gres=gpu:1 --time=0:03:00");
    assert_string_equal(line[8], "(memory: the largest node peaked at 2.93 GiB; --mem is per "
                                 "node, with x1.2 headroom; --time is the longest wall time x1.5)");
    free(t);
}

static void test_markdown(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n[2];
    job_777(&c, n);
    char *line[16];
    int nl;
    char *t = render_text(&c, 1, line, 16, &nl);
    assert_int_equal(nl, 10);
    assert_string_equal(line[0],
                        "## slurm job 777: 2 nodes, 3 runs, wall 2m00s of a 1h00m00s limit");
    assert_string_equal(line[2], "| node | steps | CPU time | cores | alloc | CPU eff | mem peak | "
                                 "mem alloc | mem eff | next |");
    assert_string_equal(line[3], "|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    assert_string_equal(line[4], "| node01 | 0,batch | 5m00s | 2.5 | 4 | 62.6% | 2.93 GiB | "
                                 "8.00 GiB | 36.6% | 3 CPUs, 4.00 GiB |");
    assert_string_equal(line[6], "| job total | - | 6m40s | 3.34 | 8 | 41.7% | 3.91 GiB | 16.0 GiB "
                                 "| 24.4% | - |");
    assert_true(strncmp(line[8], "- next time: sbatch --nodes=2 ", 30) == 0);
    assert_true(strncmp(line[9], "- (memory: the largest node", 27) == 0);
    free(t);
}

/* One node, nothing allocated, no memory figure, no time limit: "-" in the table, no limit in
 * the title, no memory note. */
static void one_unknown(struct rt_cluster *c, struct rt_cluster_node *n)
{
    memset(c, 0, sizeof(*c));
    memset(n, 0, sizeof(*n));
    snprintf(c->slurm_job, sizeof(c->slurm_job), "9");
    snprintf(n->job, sizeof(n->job), "9");
    snprintf(n->name, sizeof(n->name), "node09");
    snprintf(n->steps, sizeof(n->steps), "batch");
    n->runs = 1;
    n->t0 = 0, n->t1 = 20, n->cpu_s = 12.5, n->job_wall = 20;
    n->a_cpus = n->a_mem = n->a_gpus = n->mem_peak = n->cores_peak = n->gpus_used = NAN;
    n->ntasks = n->num_nodes = n->time_limit = NAN;
    n->rec_cpus = 1; /* ceil(12.5 / 20 = 0.63) */
    c->n = n;
    c->count = 1;
    c->runs = 1;
    c->nodes_per_job = 1, c->ntasks_per_node = 1, c->cpus_per_task = 1;
    c->t0 = 0, c->t1 = 20, c->cpu_s = 12.5;
    c->a_cpus = c->a_mem = c->mem_peak = c->mem_peak_max = c->time_limit = NAN;
    c->a_core_s = NAN;
    c->wall_max = 20;
    snprintf(c->sbatch, sizeof(c->sbatch),
             "--nodes=1 --ntasks-per-node=1 --cpus-per-task=1 --time=0:01:00");
}

static void test_text_unknown(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n;
    one_unknown(&c, &n);
    char *line[16];
    int nl;
    char *t = render_text(&c, 0, line, 16, &nl);
    assert_int_equal(nl, 7); /* no memory note */
    assert_string_equal(line[0], "slurm job 9: 1 node, 1 run, wall 20.0 s");
    /* 12.5 / 20 = 0.625 cores: 2 dp ties to even, 0.62 */
    assert_string_equal(line[3], "  node09           batch           12.5 s   0.62      -        - "
                                 "          -           -        -  1 CPU, -");
    assert_string_equal(line[4], "  job total        -               12.5 s   0.62      -        - "
                                 "          -           -        -  -");
    assert_string_equal(line[6], "next time: sbatch --nodes=1 --ntasks-per-node=1 "
                                 "--cpus-per-task=1 --time=0:01:00");
    free(t);
}

/* The JSON document, read back. */
static struct rt_json *json_of(const struct rt_cluster *c, struct rt_buf *b)
{
    b->len = 0;
    rt_cluster_write_json(c, b);
    rt_buf_append(b, "", 1);
    char err[128];
    struct rt_json *j = rt_json_open(b->p, b->len - 1, err, sizeof(err));
    assert_non_null(j);
    return j;
}

static double num(struct rt_json *j, const char *path)
{
    double v = NAN;
    enum rt_json_type t = rt_json_num(j, path, &v);
    if (t != RT_JSON_INTEGER && t != RT_JSON_REAL)
        fail_msg("%s: not a number (type %d)", path, (int)t);
    return v;
}

static void is_null(struct rt_json *j, const char *path)
{
    enum rt_json_type t = rt_json_get(j, path, NULL);
    if (t != RT_JSON_NULL)
        fail_msg("%s: type %d, want null", path, (int)t);
}

static void is_text(struct rt_json *j, const char *path, const char *want)
{
    char *v = NULL;
    enum rt_json_type t = rt_json_get(j, path, &v);
    if (t != RT_JSON_TEXT || strcmp(v, want))
        fail_msg("%s: \"%s\" (type %d), want \"%s\"", path, v ? v : "(null)", (int)t, want);
    free(v);
}

static void test_json(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n[2];
    job_777(&c, n);
    struct rt_buf b = {0};
    struct rt_json *j = json_of(&c, &b);
    is_text(j, "$.slurm_job", "777");
    is_text(j, "$.nodes[0].node", "node01");
    is_text(j, "$.nodes[0].job_id", "777");
    is_null(j, "$.nodes[0].array_job_id");
    is_null(j, "$.nodes[0].array_task_id");
    is_text(j, "$.nodes[0].steps", "0,batch");
    assert_true(num(j, "$.nodes[0].runs") == 2);
    assert_true(num(j, "$.nodes[0].wall_s") == 100);
    assert_true(num(j, "$.nodes[0].cpu_s") == 300.46);
    /* 300.456 / 120 = 2.5038 -> 2.5; the peak 3.456 -> 3.46 */
    assert_true(num(j, "$.nodes[0].mean_cores") == 2.5);
    assert_true(num(j, "$.nodes[0].peak_cores") == 3.46);
    assert_true(num(j, "$.nodes[0].memory_peak_mib") == 3000.12);
    is_null(j, "$.nodes[0].gpus_used");
    is_null(j, "$.nodes[0].alloc_gpus");
    assert_true(num(j, "$.nodes[0].cpu_eff_pct") == 62.6);
    assert_true(num(j, "$.nodes[0].memory_eff_pct") == 36.6);
    assert_true(num(j, "$.nodes[0].recommended.cpus") == 3);
    assert_true(num(j, "$.nodes[0].recommended.memory_mib") == 4096);
    assert_true(num(j, "$.nodes[0].recommended.gpus") == 0);
    is_text(j, "$.nodes[1].array_job_id", "776");
    is_text(j, "$.nodes[1].array_task_id", "3");
    assert_true(num(j, "$.nodes[1].gpus_used") == 0.5);
    assert_true(num(j, "$.nodes[1].alloc_gpus") == 1);
    assert_true(num(j, "$.nodes[1].mean_cores") == 0.83); /* 100 / 120 */
    assert_true(num(j, "$.job.nodes") == 2);
    assert_true(num(j, "$.job.runs") == 3);
    assert_true(num(j, "$.job.wall_s") == 120);
    assert_true(num(j, "$.job.time_limit_s") == 3600);
    assert_true(num(j, "$.job.cpu_s") == 400.46);
    assert_true(num(j, "$.job.alloc_cpus") == 8);
    assert_true(num(j, "$.job.alloc_memory_mib") == 16384);
    assert_true(num(j, "$.job.memory_peak_mib") == 4000.12);
    assert_true(num(j, "$.job.memory_peak_max_node_mib") == 3000.12);
    assert_true(num(j, "$.job.cpu_eff_pct") == 41.7);
    assert_true(num(j, "$.job.memory_eff_pct") == 24.4);
    assert_true(num(j, "$.job.recommended.nodes") == 2);
    assert_true(num(j, "$.job.recommended.ntasks_per_node") == 1);
    assert_true(num(j, "$.job.recommended.cpus_per_task") == 3);
    assert_true(num(j, "$.job.recommended.memory_mib") == 4096);
    assert_true(num(j, "$.job.recommended.gpus") == 1);
    /* --time: the longest wall 120 s x 1.5 = 180 s, whole minutes: 180 */
    assert_true(num(j, "$.job.recommended.time_s") == 180);
    is_text(j, "$.job.sbatch", c.sbatch);
    rt_json_close(j);
    rt_buf_free(&b);
}

static void test_json_unknown(void **state)
{
    (void)state;
    struct rt_cluster c;
    struct rt_cluster_node n;
    one_unknown(&c, &n);
    struct rt_buf b = {0};
    struct rt_json *j = json_of(&c, &b);
    is_null(j, "$.nodes[0].alloc_cpus");
    is_null(j, "$.nodes[0].alloc_memory_mib");
    is_null(j, "$.nodes[0].cpu_eff_pct");
    is_null(j, "$.nodes[0].memory_eff_pct");
    is_null(j, "$.nodes[0].memory_peak_mib");
    is_null(j, "$.nodes[0].peak_cores");
    is_null(j, "$.nodes[0].recommended.memory_mib"); /* no peak: no memory figure, not 0 */
    assert_true(num(j, "$.nodes[0].mean_cores") == 0.62);
    is_null(j, "$.job.time_limit_s");
    is_null(j, "$.job.cpu_eff_pct");
    is_null(j, "$.job.memory_peak_max_node_mib");
    is_null(j, "$.job.recommended.memory_mib");
    /* 20 s x 1.5 = 30 s: a whole minute, 60 */
    assert_true(num(j, "$.job.recommended.time_s") == 60);
    rt_json_close(j);
    rt_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),         cmocka_unit_test(test_rows_unknown),
        cmocka_unit_test(test_text),         cmocka_unit_test(test_markdown),
        cmocka_unit_test(test_text_unknown), cmocka_unit_test(test_json),
        cmocka_unit_test(test_json_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
