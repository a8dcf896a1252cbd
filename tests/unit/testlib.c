/* testlib.c - fixture helpers. */
#include "testlib.h"

#include <dirent.h>
#include <errno.h>

#include <signal.h>

#include <sys/prctl.h>

#include <poll.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rtrack/base/util.h"

char *fx_slurp(const char *path)
{
    size_t len;
    return fx_slurp_n(path, &len);
}

char *fx_slurp_n(const char *path, size_t *len)
{
    struct rt_buf b = {0};
    ssize_t n = rt_read_file(path, &b);
    if (n < 0) {
        rt_buf_free(&b);
        return NULL;
    }
    *len = (size_t)n;
    return b.p;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double fx_mono_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

double fx_wall_s(void)
{
    return clock_s(CLOCK_REALTIME);
}

char *fx_jget(const char *json, const char *path)
{
    static sqlite3 *db; /* in-memory: SQLite's JSON functions read the document */
    if (!db && sqlite3_open(":memory:", &db) != SQLITE_OK)
        fail_msg("sqlite3_open(:memory:) failed");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT json_extract(?1, ?2)", -1, &st, NULL) != SQLITE_OK)
        fail_msg("prepare: %s", sqlite3_errmsg(db));
    sqlite3_bind_text(st, 1, json, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW)
        fail_msg("json_extract(%s, %s): %s", json, path, sqlite3_errmsg(db));
    const unsigned char *t = sqlite3_column_text(st, 0);
    char *r = t ? strdup((const char *)t) : NULL;
    sqlite3_finalize(st);
    return r;
}

void fx_assert_jget(const char *json, const char *path, const char *want)
{
    char *got = fx_jget(json, path);
    if (!got || strcmp(got, want) != 0)
        fail_msg("%s: '%s', want '%s'", path, got ? got : "(null)", want);
    free(got);
}

int fx_statvfs_load(struct fx_statvfs *t, const char *path)
{
    memset(t, 0, sizeof(*t));
    char *text = fx_slurp(path);
    if (!text)
        return -1;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        if (!tab)
            continue;
        *tab = '\0';
        unsigned long long fr, bl, bf, ba;
        if (sscanf(tab + 1, "%llu\t%llu\t%llu\t%llu", &fr, &bl, &bf, &ba) != 4)
            continue;
        t->mp = xrealloc(t->mp, (t->n + 1) * sizeof(*t->mp));
        t->fs = xrealloc(t->fs, (t->n + 1) * sizeof(*t->fs));
        t->mp[t->n] = xstrdup(line);
        t->fs[t->n] = (struct rt_fsstat){fr, bl, bf, ba};
        t->n++;
    }
    free(text);
    return 0;
}

void fx_statvfs_free(struct fx_statvfs *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->mp[i]);
    free(t->mp);
    free(t->fs);
    memset(t, 0, sizeof(*t));
}

int fx_statvfs_fn(void *ud, const char *path, struct rt_fsstat *out)
{
    const struct fx_statvfs *t = ud;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->mp[i], path) == 0) {
            *out = t->fs[i];
            return 0;
        }
    return -2; /* ENOENT */
}

static void load_meta(struct fx_case *c)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/meta", c->dir);
    char *text = fx_slurp(path);
    assert_non_null(text);
    c->clk_tck = 100;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char *eq = strchr(line, '=');
        if (!eq)
            continue;
        *eq = '\0';
        if (!strcmp(line, "time_a"))
            c->time_a = strtod(eq + 1, NULL);
        else if (!strcmp(line, "time_b"))
            c->time_b = strtod(eq + 1, NULL);
        else if (!strcmp(line, "clk_tck"))
            c->clk_tck = strtol(eq + 1, NULL, 10);
        else if (!strcmp(line, "pid"))
            c->pid = (pid_t)strtol(eq + 1, NULL, 10);
    }
    free(text);
}

static void snapshot(struct fx_case *c, const char *which, double t, struct rt_sample *s,
                     const struct rt_sample *prev)
{
    char path[1200];
    snprintf(c->root, sizeof(c->root), "%s/%s", c->dir, which);
    snprintf(path, sizeof(path), "%s/statvfs.tsv", c->root);
    fx_statvfs_free(&c->sv);
    assert_int_equal(fx_statvfs_load(&c->sv, path), 0);
    rt_sample_begin(s, prev, prev ? RT_SAMPLE_PERIODIC : RT_SAMPLE_BASELINE, t, t);
    rt_collectors_sample(c->col, s, prev);
}

void fx_case_run(struct fx_case *c, const char *dir, pid_t pid, pid_t subreaper)
{
    memset(c, 0, sizeof(*c));
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    load_meta(c);
    if (pid == 0)
        c->pid = 0;
    else if (pid > 0)
        c->pid = pid;
    c->env.root = c->root;
    c->env.statvfs_fn = fx_statvfs_fn;
    c->env.statvfs_ud = &c->sv;
    c->env.clk_tck = c->clk_tck;
    c->env.page_size = 4096;
    snprintf(c->root, sizeof(c->root), "%s/a", c->dir);
    struct rt_collect_cfg cc = {c->pid, subreaper, 1.0, 0, NULL};
    c->col = rt_collectors_open(&c->env, &cc);
    snapshot(c, "a", c->time_a, &c->a, NULL);
    snapshot(c, "b", c->time_b, &c->b, &c->a);
}

void fx_case_free(struct fx_case *c)
{
    rt_collectors_close(c->col);
    rt_sample_free(&c->a);
    rt_sample_free(&c->b);
    fx_statvfs_free(&c->sv);
}

static size_t split_csv(char *line, char **out, size_t max)
{
    size_t n = 0;
    for (char *p = line; n < max;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = '\0';
        size_t l = strlen(p);
        if (l >= 2 && p[0] == '"' && p[l - 1] == '"') {
            p[l - 1] = '\0';
            p++;
        }
        out[n++] = xstrdup(p);
        if (!comma)
            break;
        p = comma + 1;
    }
    return n;
}

int fx_row_load(struct fx_row *r, const char *path)
{
    memset(r, 0, sizeof(*r));
    char *text = fx_slurp(path);
    if (!text)
        return -1;
    char *nl = strchr(text, '\n');
    if (!nl) {
        free(text);
        return -1;
    }
    *nl = '\0';
    char *row = nl + 1;
    char *end = strchr(row, '\n');
    if (end)
        *end = '\0';
    r->names = xcalloc(64, sizeof(char *));
    r->values = xcalloc(64, sizeof(char *));
    r->n = split_csv(text, r->names, 64);
    size_t nv = split_csv(row, r->values, 64);
    free(text);
    return nv == r->n ? 0 : -1;
}

const char *fx_row_get(const struct fx_row *r, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (!strcmp(r->names[i], name))
            return r->values[i];
    return NULL;
}

void fx_row_free(struct fx_row *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->names[i]);
        free(r->values[i]);
    }
    free(r->names);
    free(r->values);
}

double py_round(double x, int n)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%.*f", n, x);
    return strtod(buf, NULL);
}

void fx_mkdirs(const char *path)
{
    char buf[2048];
    snprintf(buf, sizeof(buf), "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

void fx_write(const char *root, const char *rel, const char *text)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    fx_mkdirs(path);
    *slash = '/';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

void fx_symlink(const char *root, const char *rel, const char *target)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    fx_mkdirs(path);
    *slash = '/';
    unlink(path);
    assert_int_equal(symlink(target, path), 0);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

void fx_rmtree(const char *path)
{
    nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static size_t copy_from_len;
static const char *copy_to;

static int copy_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    char to[4096], link[4096];
    snprintf(to, sizeof(to), "%s%s", copy_to, p + copy_from_len);
    if (flag == FTW_D)
        return mkdir(to, 0755) == 0 || errno == EEXIST ? 0 : -1;
    if (flag == FTW_SL) {
        ssize_t n = readlink(p, link, sizeof(link) - 1);
        if (n < 0)
            return -1;
        link[n] = '\0';
        return symlink(link, to);
    }
    if (flag != FTW_F)
        return -1;
    FILE *in = fopen(p, "rb"), *out = fopen(to, "wb");
    int rc = in && out ? 0 : -1;
    char buf[8192];
    for (size_t n; rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0;)
        rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc == 0 ? chmod(to, sb->st_mode & 07777) : -1;
}

void fx_copytree(const char *src, const char *dst)
{
    copy_from_len = strlen(src);
    copy_to = dst;
    assert_int_equal(nftw(src, copy_cb, 16, FTW_PHYS), 0);
}

void fx_write_proc(const char *root, const struct fx_proc *p)
{
    char rel[256], text[1024];
    snprintf(rel, sizeof(rel), "proc/%d/stat", (int)p->pid);
    snprintf(
        text, sizeof(text),
        "%d (%s) %c %d %d %d 0 -1 4194304 100 0 0 0 %ld %ld %ld %ld 20 0 %ld 0 %ld 1000000 %ld "
        "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
        (int)p->pid, p->comm, p->state ? p->state : 'S', (int)p->ppid, (int)p->pid, (int)p->pid,
        p->utime, p->stime, p->cutime, p->cstime, p->threads ? p->threads : 1, p->starttime,
        p->rss_pages);
    fx_write(root, rel, text);
    snprintf(rel, sizeof(rel), "proc/%d/cmdline", (int)p->pid);
    snprintf(text, sizeof(text), "%s", p->comm);
    fx_write(root, rel, text);
    if (p->pss_kib >= 0) {
        snprintf(rel, sizeof(rel), "proc/%d/smaps_rollup", (int)p->pid);
        snprintf(text, sizeof(text),
                 "55d0c0000000-7ffd00000000 ---p 00000000 00:00 0 [rollup]\nRss: %ld kB\n"
                 "Pss: %ld kB\nPss_Anon: 1 kB\nSwapPss: 7 kB\n",
                 p->rss_pages * 4, p->pss_kib);
        fx_write(root, rel, text);
    } else {
        snprintf(text, sizeof(text), "%s/proc/%d/smaps_rollup", root, (int)p->pid);
        unlink(text);
    }
    if (p->read_bytes >= 0) {
        snprintf(rel, sizeof(rel), "proc/%d/io", (int)p->pid);
        snprintf(text, sizeof(text),
                 "rchar: 999\nwchar: 999\nsyscr: 1\nsyscw: 1\nread_bytes: %ld\n"
                 "write_bytes: %ld\ncancelled_write_bytes: 0\n",
                 p->read_bytes, p->write_bytes);
        fx_write(root, rel, text);
    } else {
        snprintf(text, sizeof(text), "%s/proc/%d/io", root, (int)p->pid);
        unlink(text);
    }
}

void fx_write_children(const char *root)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/proc", root);
    DIR *d = opendir(path);
    assert_non_null(d);
    pid_t pids[256], ppids[256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < 256) {
        char *end;
        long pid = strtol(de->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char rel[300];
        struct rt_buf b = {0};
        struct rt_pid_stat ps;
        snprintf(rel, sizeof(rel), "%s/proc/%ld/stat", root, pid);
        if (rt_read_file(rel, &b) > 0 && rt_parse_pid_stat(b.p, &ps) == 0) {
            pids[n] = (pid_t)pid;
            ppids[n++] = ps.ppid;
        }
        rt_buf_free(&b);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char rel[128], text[2048] = "";
        size_t len = 0;
        for (int j = 0; j < n; j++)
            if (ppids[j] == pids[i] && j != i)
                len += (size_t)snprintf(text + len, sizeof(text) - len, "%d ", (int)pids[j]);
        snprintf(rel, sizeof(rel), "proc/%d/task/%d/children", (int)pids[i], (int)pids[i]);
        fx_write(root, rel, text);
    }
    char rel[128];
    snprintf(rel, sizeof(rel), "proc/self/task/%d/children", (int)getpid());
    fx_write(root, rel, "");
}

void fx_remove_proc(const char *root, pid_t pid)
{
    char path[2048];
    snprintf(path, sizeof(path), "%s/proc/%d", root, (int)pid);
    fx_rmtree(path);
}

int fx_rerun_self(const char *var)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        setenv(var, "1", 1);
        execl("/proc/self/exe", "rerun", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int fx_tmpdir(char *dir, size_t dcap, char *dbpath, size_t pcap)
{
    snprintf(dir, dcap, "/tmp/rtrack-test.XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    snprintf(dbpath, pcap, "%s/t.db", dir);
    return 0;
}

void fx_live_sample(struct rt_collectors *col, struct rt_sample *s, const struct rt_sample *prev)
{
    rt_sample_begin(s, prev, prev ? RT_SAMPLE_PERIODIC : RT_SAMPLE_BASELINE,
                    rt_clock_s(CLOCK_REALTIME), rt_clock_s(CLOCK_MONOTONIC));
    rt_collectors_sample(col, s, prev);
}

int fx_python_mock(const char *script, const char *arg1, const char *arg2, pid_t *pid)
{
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    *pid = fork();
    if (*pid < 0)
        return -1;
    if (*pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        dup2(pfd[1], STDOUT_FILENO);
        close(pfd[0]);
        close(pfd[1]);
        execlp("python3", "python3", script, arg1, arg2, (char *)NULL);
        fprintf(stderr, "cannot run python3: %s\n", strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    /* The port is the first line; give a cold python3 ten seconds to print it. */
    char line[32] = "";
    size_t n = 0;
    while (n < sizeof(line) - 1 && !strchr(line, '\n')) {
        struct pollfd p = {.fd = pfd[0], .events = POLLIN};
        if (poll(&p, 1, 10000) <= 0)
            break;
        ssize_t r = read(pfd[0], line + n, sizeof(line) - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
        line[n] = '\0';
    }
    close(pfd[0]);
    int port = atoi(line);
    if (port <= 0) {
        fprintf(stderr, "%s printed no port (%s)\n", script, line);
        return -1;
    }
    return port;
}

/* --- a fixture root mutated between samples ----------------------------------------------------
 */

int fx_walk_mode;

static int no_statvfs(void *ud, const char *path, struct rt_fsstat *out)
{
    (void)ud;
    (void)path;
    (void)out;
    return -2;
}

void fx_gen_init(struct fx_gen *g)
{
    memset(g, 0, sizeof(*g));
    snprintf(g->root, sizeof(g->root), "/tmp/rtrack-fx.XXXXXX");
    assert_non_null(mkdtemp(g->root));
    g->env.root = g->root;
    g->env.statvfs_fn = no_statvfs;
    g->env.clk_tck = 100;
    g->env.page_size = 4096;
    g->t = 1000.0;
    fx_write(g->root, "proc/stat", "cpu  100 0 50 1000 0 0 0 0 0 0\n");
}

void fx_gen_open(struct fx_gen *g, pid_t root_pid, pid_t subreaper)
{
    if (fx_walk_mode)
        fx_write_children(g->root);
    struct rt_collect_cfg cc = {root_pid, subreaper, 1.0, 0, g->cgroup};
    g->col = rt_collectors_open(&g->env, &cc);
}

struct rt_sample *fx_gen_sample(struct fx_gen *g)
{
    struct rt_sample *s = &g->buf[g->next];
    g->next ^= 1;
    rt_sample_begin(s, g->prev, g->prev ? RT_SAMPLE_PERIODIC : RT_SAMPLE_BASELINE, g->t, g->t);
    if (fx_walk_mode)
        fx_write_children(g->root);
    rt_collectors_sample(g->col, s, g->prev);
    g->prev = s;
    g->t += 1.0;
    return s;
}

void fx_gen_free(struct fx_gen *g)
{
    rt_collectors_close(g->col);
    rt_sample_free(&g->buf[0]);
    rt_sample_free(&g->buf[1]);
    fx_statvfs_free(&g->sv);
    fx_rmtree(g->root);
}

void fx_gen_statvfs(struct fx_gen *g, const char *tsv)
{
    char path[512];
    fx_write(g->root, "statvfs.tsv", tsv);
    snprintf(path, sizeof(path), "%s/statvfs.tsv", g->root);
    fx_statvfs_free(&g->sv);
    assert_int_equal(fx_statvfs_load(&g->sv, path), 0);
    g->env.statvfs_fn = fx_statvfs_fn;
    g->env.statvfs_ud = &g->sv;
}

const struct rt_proc_sample *fx_find_proc(const struct rt_sample *s, pid_t pid)
{
    for (int i = 0; i < s->nprocs; i++)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}
