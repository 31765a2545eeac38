/* build/tpgemm: runs, checks and times one generated tensor-parallel GEMM config (see --help).
 * Flow: parse -> [--model: model.c] -> select config -> validate shape -> [--dry-run: plan] -> enough
 * GPUs? -> the GPU run (run.c). */
#define _POSIX_C_SOURCE 200112L /* setenv, lstat under -std=c11 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../copy_plan.h"
#include "../plan.h"
#include "../shapes.h"
#include "../tables.h"
#include "run.h"

static char g_msg[1536];

/* Default TP: --devices count, else the largest generated TP that fits the visible GPUs (with none visible, as
 * for --dry-run here, 2 GPUs: the largest of TP 1 and 2 generated for the dtype; e5m2 has TP 1 only). */
static int default_tp(const tpg_cli_args *a, int visible) {
    if (a->num_devices) return a->num_devices;
    if (visible < 1) visible = 2;
    const char *sched = a->schedule ? a->schedule : TPG_CLI_DEFAULT_SCHEDULE;
    int best = 0;
    for (int i = 0; i < tpg_num_configs; i++) {
        const tpg_config_desc *c = &tpg_configs[i];
        if (!strcmp(c->schedule->name, sched) && c->kernel->dtype_ab == a->dtype && c->schedule->tp <= visible &&
            c->schedule->tp > best)
            best = c->schedule->tp;
    }
    return best ? best : visible;
}

/* Whether the folder of path (the working directory for a bare name) exists and can take a new file. */
static int trace_folder_writable(const char *path) {
    char folder[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) return access(".", W_OK) == 0;
    const size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" is in "/" */
    if (n >= sizeof folder) return 1; /* not judged here: opening the file says what is wrong */
    memcpy(folder, path, n);
    folder[n] = '\0';
    struct stat st;
    return stat(folder, &st) == 0 && S_ISDIR(st.st_mode) && access(folder, W_OK) == 0;
}

/* One of the four schedules the generator knows (schedules.yaml may generate no config of it). */
static int known_schedule(const char *name) {
    static const char *const known[] = {"AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB",
                                        "ReduceScatter1D_TilingA_RotatingC", "ReduceScatter1D_TilingB_RotatingC"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(name, known[i])) return 1;
    return 0;
}

/* The CLI's way to run a config that is never a default pick (by_name, fp16 sums, fp32 partials, ...), where one of
 * schedule / tp / dtype is generated. */
static const char *by_name_hint(const char *schedule, int tp, tpg_dtype dtype) {
    for (int i = 0; i < tpg_num_configs; i++)
        if (strcmp(tpg_configs[i].schedule->name, schedule) == 0 && tpg_configs[i].schedule->tp == tp &&
            tpg_configs[i].kernel->dtype_ab == dtype)
            return " (one that is never a default pick runs with --config NAME)";
    return "";
}

static int select_config(const tpg_cli_args *a, int visible, int *index) {
    if (a->config) {
        if (tpg_config_find(a->config, NULL, 0, a->dtype, index) != TPG_OK) {
            snprintf(g_msg, sizeof g_msg, "tpgemm: unknown config '%s'; run `tpgemm --list` to see the generated configs",
                     a->config);
            return EXIT_USAGE;
        }
        int tp = tpg_configs[*index].schedule->tp;
        if ((a->tp && a->tp != tp) || (a->num_devices && a->num_devices != tp)) {
            snprintf(g_msg, sizeof g_msg, "tpgemm: config '%s' runs on tp = %d devices, but %s %d were asked for",
                     a->config, tp, a->tp ? "--tp" : "--devices", a->tp ? a->tp : a->num_devices);
            return EXIT_USAGE;
        }
        return 0;
    }
    const char *sched = a->schedule ? a->schedule : TPG_CLI_DEFAULT_SCHEDULE;
    int tp = a->tp ? a->tp : default_tp(a, visible);
    if (tpg_config_find(NULL, sched, 0, a->dtype, index) != TPG_OK &&
        tpg_config_find(NULL, sched, 0, TPG_DTYPE_BF16, index) != TPG_OK &&
        tpg_config_find(NULL, sched, 0, TPG_DTYPE_FP16, index) != TPG_OK) {
        snprintf(g_msg, sizeof g_msg, "tpgemm: %s '%s'; run `tpgemm --list` to see the generated configs",
                 known_schedule(sched) ? "no generated config runs schedule" : "unknown schedule", sched);
        return EXIT_USAGE;
    }
    /* a plain shape tuned for this N, K, schedule, tp and dtype (`python3 -m generator tune --shape`: the dispatch
     * rows of model "") within TPG_TUNED_M_REACH of this M first; tpg_config_pick never reads tuned choices */
    tpg_dispatch_entry row;
    if (tpg_dispatch_find("", "", a->m, a->n, a->k, a->dtype, sched, tp, &row) == TPG_OK && row.tuned) {
        *index = row.config;
        return 0;
    }
    /* the schedule's default for this problem (schedules.yaml prefer_from_local_k) */
    if (tpg_config_pick(sched, tp, a->dtype, a->m, a->n, a->k, index) != TPG_OK) {
        snprintf(g_msg, sizeof g_msg, "tpgemm: %s; run `tpgemm --list` to see the generated configs%s",
                 tpg_last_error(NULL), by_name_hint(sched, tp, a->dtype));
        return EXIT_USAGE;
    }
    return 0;
}

int main(int argc, char **argv) {
    tpg_cli_args a;
    char msg[512];
    int cfg, rc;
    tpg_args_defaults(&a);
    if (tpg_args_parse(argc, argv, &a, msg, sizeof msg)) {
        fprintf(stderr, "%s\n", msg);
        return EXIT_USAGE;
    }
    if (a.help) {
        fputs(tpg_args_usage(), stdout);
        return 0;
    }
    /* Ranks sharing a GPU run copy-engine partials only with 32 hardware queues, which CUDA reads from the environment
     * as it starts (runtime/src/ce_partials.c): before any CUDA call, ask for them unless the environment chose */
    if (a.share_device) setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    if (a.list) {
        tpg_report_list(stdout, a.json);
        return 0;
    }
#ifndef TPG_TRACE
    if (a.trace) {
        fprintf(stderr, "tpgemm: --trace needs the trace build, which records timestamps in the kernels: run "
                        "build/trace/tpgemm (plain `ninja` builds it with the tests; `ninja trace` builds it alone)\n");
        return EXIT_USAGE;
    }
#endif
    if (a.model && a.scale_set) {
        fprintf(stderr, "tpgemm: --scale-a / --scale-b apply to one fp8 GEMM (--config or --schedule --dtype e4m3|e5m2), "
                        "not to a --model preset's layers\n");
        return EXIT_USAGE;
    }
    if (a.model) return tpg_cli_model(&a);
    /* The only CUDA call before the GPU run, and only when needed: the default TP or the GPU check. */
    int need_count = !a.dry_run || (!a.config && !a.tp && !a.num_devices);
    int visible = need_count ? tpg_cli_visible_devices() : 0;
    if ((rc = select_config(&a, visible, &cfg))) {
        fprintf(stderr, "%s\n", g_msg);
        return rc;
    }
    const tpg_config_desc *c = &tpg_configs[cfg];
    tpg_shapes shapes;
    if (tpg_shapes_init_for(c, a.m, a.n, a.k, a.l, &shapes, msg, sizeof msg) != TPG_OK) {
        fprintf(stderr, "tpgemm: shape: %s\n", msg);
        return EXIT_USAGE;
    }
    if (tpg_cli_check_scales(&a, cfg, msg, sizeof msg)) {
        fprintf(stderr, "%s\n", msg);
        return EXIT_USAGE;
    }
    if (a.copy_chunks > 1 && !tpg_schedule_copies(c->schedule)) {
        fprintf(stderr, "tpgemm: --copy-chunks %d: config %s copies nothing (%s); drop --copy-chunks\n", a.copy_chunks,
                c->name, c->schedule->tp < 2 ? "TP = 1" : "reduce-scatter moves partials from the GEMM's epilogue");
        return EXIT_USAGE;
    }
    /* each changes one walk of one route only: named with a config of the other route (or TP = 1) it would change
     * nothing, which a run's result would not show (--model's layers mix routes, so there it stays a no-op) */
    if (a.gather_copy_engine && !tpg_schedule_copies(c->schedule)) {
        fprintf(stderr, "tpgemm: --gather-copy-engine: config %s %s; drop --gather-copy-engine\n", c->name,
                c->schedule->tp < 2 ? "gathers nothing (TP = 1)" : "is a reduce-scatter: it gathers no shards");
        return EXIT_USAGE;
    }
    if (a.rs_ring && (c->schedule->tp < 2 || c->schedule->comm != TPG_COMM_REDUCE_SCATTER)) {
        fprintf(stderr, "tpgemm: --rs-ring: config %s %s; drop --rs-ring\n", c->name,
                c->schedule->tp < 2 ? "has no ring (TP = 1)" : "is an all-gather: it has no reduce-scatter walk");
        return EXIT_USAGE;
    }
    if (a.overlap_barriers && (c->schedule->tp < 2 || c->kernel->cluster_m * c->kernel->cluster_n > 1)) {
        fprintf(stderr, "tpgemm: --overlap-barriers: config %s %s; drop --overlap-barriers\n", c->name,
                c->schedule->tp < 2 ? "has no barriers (TP = 1)"
                                    : "runs its kernel in clusters, beside which a barrier kernel gets no SM");
        return EXIT_USAGE;
    }
    struct stat trace_st;
    if (a.trace && !a.dry_run && stat(a.trace, &trace_st) == 0 && S_ISDIR(trace_st.st_mode)) {
        fprintf(stderr, "tpgemm: --trace: '%s' is a directory: name the file to write (e.g. '%s/trace.json')\n",
                a.trace, a.trace);
        return EXIT_USAGE;
    }
    if (a.trace && !a.dry_run && !trace_folder_writable(a.trace)) { /* before the run, not after its minutes */
        fprintf(stderr, "tpgemm: --trace: cannot write '%s': its folder does not exist or is not writable\n", a.trace);
        return EXIT_USAGE;
    }
    /* a run that fails at any step must not leave an older run's trace file as this one's: a regular file is removed
     * before anything runs (not a device, a link's target or a directory), once the folder is known to be writable */
    if (a.trace && !a.dry_run && lstat(a.trace, &trace_st) == 0 && S_ISREG(trace_st.st_mode) && remove(a.trace) != 0) {
        fprintf(stderr, "tpgemm: --trace: cannot replace '%s': %s\n", a.trace, strerror(errno));
        return EXIT_RUNTIME;
    }
    if (a.dry_run) {
        if (a.trace) fprintf(stderr, "tpgemm: --trace: no call runs with --dry-run, so no trace is written\n");
        tpg_plan_write(stdout, c, a.m, a.n, a.k, a.l, a.copy_chunks, tpg_cli_plan_modes(&a, c), a.json);
        return 0;
    }
    const int need = a.share_device ? tpg_cli_shared_gpus(&a) : c->schedule->tp; /* GPUs */
    if (visible < need) {
        tpg_plan_write(stdout, c, a.m, a.n, a.k, a.l, a.copy_chunks, tpg_cli_plan_modes(&a, c), a.json);
        fflush(stdout);
        fprintf(stderr,
                "tpgemm: this run needs %d Hopper (sm_90) GPU%s; %d CUDA device%s visible. Use --dry-run to print "
                "only the plan.\n",
                need, need == 1 ? "" : "s", visible, visible == 1 ? " is" : "s are");
        return EXIT_NO_GPU;
    }
    tpg_cli_result res;
    rc = tpg_cli_run(&a, cfg, &res);
    tpg_report_result(stdout, &res, a.json);
    fflush(stdout);
    if (res.error) fprintf(stderr, "%s\n", res.error);
    return rc;
}
