/* cmd_record.c - `rtrack record [options]`: sample the system, and with --pid a process tree,
 * until SIGINT/SIGTERM/SIGHUP/SIGQUIT, until --duration has passed, or until the tree is gone. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "rtrack/cli/cmd.h"
#include "rtrack/cli/env.h"
#include "rtrack/cli/config.h"
#include "rtrack/export/export.h"
#include "rtrack/base/log.h"
#include "rtrack/record/sampler.h"
#include "rtrack/upload/stream.h"
#include "rtrack/store/store.h"

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

int cmd_record(int argc, char **argv, const struct rt_env *env)
{
    struct rt_config cfg;
    int rc = rt_config_load(&cfg, RT_CMD_RECORD, argc, argv);
    if (rc != 0)
        return rc < 0 ? RT_EXIT_OK : rc;
    rt_log_quiet(cfg.quiet);

    struct rt_sysenv sys;
    rt_sysenv_live(&sys);
    sys.nvml_library = env->nvml_library;
    struct rt_store *store = cmd_open_store(&cfg);
    if (!store) {
        rt_config_free(&cfg);
        return RT_EXIT_FAILURE;
    }
    struct rt_live *live = NULL;
    struct rt_host_info host;
    rt_host_info_read(&sys, &host);
    struct rt_run_desc rs;
    cmd_run_desc(&rs, &cfg, "record", NULL, cfg.pid, &host, &sys);
    int64_t run_id;
    int exit_code = RT_EXIT_FAILURE;
    if (rt_store_begin_run(store, &rs, &run_id) != 0) {
        rt_err("%s", rt_store_error(store));
        goto out_store;
    }
    if (cfg.output && !(live = rt_live_open(store, cfg.output, cfg.output_csv)))
        goto out_store;
    int sfd = rt_signals_open(stop_signals, (int)RT_ARRAY_LEN(stop_signals));
    if (sfd < 0) {
        rt_err("cannot wait for signals: %s", rt_strerror(errno));
        goto out_store;
    }
    struct rt_streamer *stream = cmd_stream_start(&cfg, env, run_id);

    struct rt_sampler smp;
    struct rt_collect_cfg cc = {cfg.pid, 0, cfg.interval, rt_env_full_scan(env)};
    rt_sampler_open(&smp, &sys, &cc, store, cfg.interval);
    smp.live = live;
    double t0 = rt_clock_s(CLOCK_MONOTONIC);
    struct rt_sample *s = rt_sampler_collect(&smp, RT_SAMPLE_BASELINE);
    const char *reason = NULL;
    if (cfg.pid > 0 && s->proc_count == 0) {
        s->kind = RT_SAMPLE_FINAL;
        reason = "tree-gone";
    }
    rt_sampler_store(&smp);

    struct rt_ticker tk;
    double stop_at = cfg.duration > 0 ? smp.prev->mono + cfg.duration : 0;
    rt_ticker_open(&tk, smp.prev->mono, cfg.interval, stop_at);
    while (!reason) {
        rt_ticker_arm(&tk);
        struct pollfd pf[2] = {{tk.fd, POLLIN, 0}, {sfd, POLLIN, 0}};
        int n = poll(pf, 2, -1);
        if (n < 0 && errno != EINTR)
            break;
        enum rt_sample_kind kind = RT_SAMPLE_PERIODIC;
        if (pf[1].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                ;
            kind = RT_SAMPLE_FINAL;
            reason = "interrupted";
        } else if (!(pf[0].revents & POLLIN)) {
            continue;
        }
        if (!reason && stop_at > 0 && rt_clock_s(CLOCK_MONOTONIC) >= stop_at - 1e-6) {
            kind = RT_SAMPLE_FINAL;
            reason = "duration";
        }
        s = rt_sampler_collect(&smp, kind);
        if (!reason && cfg.pid > 0 && s->proc_count == 0) {
            s->kind = RT_SAMPLE_FINAL;
            reason = "tree-gone";
        }
        rt_sampler_store(&smp);
    }
    if (!reason)
        reason = "interrupted";
    double elapsed = rt_clock_s(CLOCK_MONOTONIC) - t0;
    struct rt_run_end e = {rt_clock_s(CLOCK_REALTIME), smp.failed ? "failed" : "finished", RT_NA,
                           RT_NA, reason};
    if (rt_sampler_end(&smp, &e) != 0 && !smp.warned)
        rt_warn("recording failed: %s", rt_store_error(store));
    rt_streamer_finish(stream, rt_env_upload_wait(env));
    exit_code = smp.failed ? RT_EXIT_FAILURE : RT_EXIT_OK;
    rt_note("run %lld: recorded %lld samples over %.2f s in %s (%s)", (long long)run_id,
            (long long)smp.stored, elapsed, cfg.db, reason);
    rt_ticker_close(&tk);
    rt_sampler_close(&smp);
    close(sfd);
out_store:
    rt_live_close(live);
    rt_host_info_free(&host);
    rt_store_close(store);
    rt_config_free(&cfg);
    return exit_code;
}
