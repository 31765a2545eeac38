/* `tpgemm --model NAME [--tokens M] [--tp N] [--dtype D]`: each GEMM of one layer of a model preset,
 * with the config that the generated dispatch table (tpg_dispatch_find) names for it, run through the
 * same path as a single GEMM (run.c) and reported as one table. `--dry-run` prints each layer's plan
 * summary and needs no GPU. Layer names and their order come from the table, not from this file. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../copy_plan.h"
#include "../json.h"
#include "../plan.h"
#include "../shapes.h"
#include "../tables.h"
#include "run.h"

#define MAX_LAYERS 16

typedef struct layer_job {
    tpg_dispatch_entry row;
    int64_t m;
    tpg_cli_result res;
    char error[512]; /* res.error's copy: run.c reuses its buffer */
} layer_job;

static const char *op_name(const tpg_config_desc *c) {
    return c->schedule->comm == TPG_COMM_ALLGATHER ? "all-gather" : "reduce-scatter";
}

/* The preset's TP degrees for the dtype, ascending (at most 8); returns how many. */
static int preset_tps(const char *model, tpg_dtype dtype, int *tps) {
    int n = 0;
    for (int i = 0; i < tpg_num_dispatch; i++) {
        const tpg_dispatch_entry *e = &tpg_dispatch[i];
        if (strcmp(e->model, model) || e->dtype != dtype) continue;
        int seen = 0;
        for (int j = 0; j < n; j++) seen |= tps[j] == e->tp;
        if (!seen && n < TPG_CLI_MAX_DEVICES) tps[n++] = e->tp;
    }
    for (int i = 1; i < n; i++) /* insertion sort: at most 8 */
        for (int j = i; j > 0 && tps[j - 1] > tps[j]; j--) {
            int t = tps[j];
            tps[j] = tps[j - 1], tps[j - 1] = t;
        }
    return n;
}

/* " bf16 fp16" ...: the dtypes of the model's dispatch rows, each once (a static buffer; "" for no such model). */
static const char *preset_dtypes(const char *model) {
    static char buf[64];
    buf[0] = '\0';
    for (int i = 0; i < tpg_num_dispatch; i++) {
        if (strcmp(tpg_dispatch[i].model, model)) continue;
        char one[16];
        snprintf(one, sizeof one, " %s", tpg_dtype_name(tpg_dispatch[i].dtype));
        if (!strstr(buf, one) && strlen(buf) + strlen(one) < sizeof buf) strcat(buf, one);
    }
    return buf;
}

static void list_models(FILE *f) {
    for (int i = 0; i < tpg_num_dispatch; i++) {
        int first = 1;
        for (int j = 0; j < i; j++) first &= strcmp(tpg_dispatch[j].model, tpg_dispatch[i].model) != 0;
        if (first && tpg_dispatch[i].model[0]) fprintf(f, " %s", tpg_dispatch[i].model);
    }
}

/* --tp, else --devices, else the largest preset degree the visible GPUs hold, else the smallest. */
static int choose_tp(const tpg_cli_args *a, const int *tps, int n, int visible) {
    if (a->tp || a->num_devices) return a->tp ? a->tp : a->num_devices;
    int tp = tps[0];
    for (int i = 0; i < n; i++)
        if (tps[i] <= visible) tp = tps[i];
    return tp;
}

/* The preset's layers at tp in table order, each resolved through tpg_dispatch_find for M (which gives an untuned
 * row the default pick for M, the generator having made it for the preset's M). */
static int collect(const tpg_cli_args *a, int tp, layer_job *jobs) {
    int n = 0;
    for (int i = 0; i < tpg_num_dispatch && n < MAX_LAYERS; i++) {
        const tpg_dispatch_entry *e = &tpg_dispatch[i];
        if (strcmp(e->model, a->model) || e->dtype != a->dtype || e->tp != tp) continue;
        int seen = 0;
        for (int j = 0; j < n; j++) seen |= !strcmp(jobs[j].row.layer, e->layer);
        if (seen) continue;
        int64_t m = a->tokens ? a->tokens : e->m;
        if (tpg_dispatch_find(a->model, e->layer, m, 0, 0, a->dtype, NULL, tp, &jobs[n].row) != TPG_OK) continue;
        jobs[n].m = a->tokens ? a->tokens : jobs[n].row.m; /* a tuned row within its reach keeps its own M */
        n++;
    }
    return n;
}

/* Width of the config column: the longest config name of the rows (tuned names run long). */
static int config_width(const layer_job *jobs, int n) {
    int w = 6; /* "config" */
    for (int i = 0; i < n; i++) {
        const int len = (int)strlen(tpg_configs[jobs[i].row.config].name);
        if (len > w) w = len;
    }
    return w;
}

/* What --overlap-barriers, --copy-chunks, --gather-copy-engine and --rs-ring changed for this layer at m rows (a
 * layer whose kernel, schedule or walk has no barriers, copies, pulls or one-hop sum keeps its plain graph): "-" when
 * nothing. */
static const char *layer_modes(const tpg_cli_args *a, const tpg_config_desc *c, int64_t m,
                               const tpg_dispatch_entry *row, char *buf, size_t cap) {
    const int overlap = (tpg_cli_plan_modes(a, c) & TPG_PLAN_OVERLAP) != 0;
    tpg_plan_shape ps;
    const int planned = tpg_plan_compute(c, m, row->n, row->k, 1, a->copy_chunks, &ps) == TPG_OK;
    /* the pieces the plan cuts (whole tiles of rows: maybe fewer than asked, one where the GEMM then pulls the shards
     * and no copy is made), not the count asked for */
    const int pulls = planned && tpg_gather_pulls(ps.gathered, ps.copy_chunks, overlap, a->gather_copy_engine);
    const int copies = planned && tpg_schedule_copies(c->schedule) && !pulls;
    const int pieces = a->copy_chunks > 1 && copies && ps.copy_chunks > 1 ? ps.copy_chunks : 0;
    const int copy_engine = a->gather_copy_engine && planned && tpg_gather_pulls(ps.gathered, ps.copy_chunks,
                                                                                overlap, 0);
    const int ring = a->rs_ring && planned && ps.one_hop;
    size_t used = 0;
    buf[0] = '\0';
    if (overlap) used += (size_t)snprintf(buf + used, cap - used, "barriers beside");
    if (pieces && used < cap)
        used += (size_t)snprintf(buf + used, cap - used, "%scopies in %d pieces", used ? ", " : "", pieces);
    if (copy_engine && used < cap)
        used += (size_t)snprintf(buf + used, cap - used, "%sshards by copy engine", used ? ", " : "");
    if (ring && used < cap) used += (size_t)snprintf(buf + used, cap - used, "%sring kept", used ? ", " : "");
    if (!used) snprintf(buf, cap, "-");
    return buf;
}

static void write_plans(FILE *f, const tpg_cli_args *a, int tp, const layer_job *jobs, int n) {
    if (a->json) {
        fprintf(f, "{\"model\": ");
        tpg__json_string(f, a->model);
        fprintf(f, ", \"tp\": %d, \"dtype\": \"%s\", \"layers\": [", tp, tpg_dtype_name(a->dtype));
        for (int i = 0; i < n; i++) {
            const tpg_config_desc *c = &tpg_configs[jobs[i].row.config];
            fprintf(f, "%s{\"layer\": \"%s\", \"op\": \"%s\", \"tuned\": %s, \"plan\": ", i ? ", " : "",
                    jobs[i].row.layer, op_name(c), jobs[i].row.tuned ? "true" : "false");
            tpg_plan_write(f, c, jobs[i].m, jobs[i].row.n, jobs[i].row.k, 1, a->copy_chunks, tpg_cli_plan_modes(a, c),
                           1);
            fputs("}", f);
        }
        fputs("]}\n", f);
        return;
    }
    const int w = config_width(jobs, n);
    fprintf(f, "Model: %s, tp %d, %s, %d layers (plan)\n", a->model, tp, tpg_dtype_name(a->dtype), n);
    fprintf(f, "%-9s %-14s %7s %7s %7s  %-*s %-12s %-20s %12s %12s  %s\n", "layer", "op", "M", "N", "K", w, "config",
            "tile", "stage GEMM", "moved/dev MB", "GFLOP/dev", "modes");
    for (int i = 0; i < n; i++) {
        const layer_job *j = &jobs[i];
        const tpg_config_desc *c = &tpg_configs[j->row.config];
        tpg_plan_shape ps;
        char tile[32], stage[48], modes[96];
        if (tpg_plan_compute(c, j->m, j->row.n, j->row.k, 1, a->copy_chunks, &ps) != TPG_OK) continue;
        snprintf(tile, sizeof tile, "%dx%dx%d", c->kernel->bm, c->kernel->bn, c->kernel->bk);
        snprintf(stage, sizeof stage, "%" PRId64 "x%" PRId64 "x%" PRId64, ps.stage_m, ps.stage_n, ps.stage_k);
        fprintf(f, "%-9s %-14s %7" PRId64 " %7" PRId64 " %7" PRId64 "  %-*s %-12s %-20s %12.1f %12.1f  %s\n",
                j->row.layer, op_name(c), j->m, j->row.n, j->row.k, w, c->name, tile, stage, ps.moved_bytes / 1e6,
                ps.flops_per_device / 1e9, layer_modes(a, c, j->m, &j->row, modes, sizeof modes));
    }
}

static void write_results(FILE *f, const tpg_cli_args *a, int tp, const layer_job *jobs, int n) {
    if (a->json) {
        fprintf(f, "{\"model\": ");
        tpg__json_string(f, a->model);
        fprintf(f, ", \"tp\": %d, \"dtype\": \"%s\", \"layers\": [", tp, tpg_dtype_name(a->dtype));
        for (int i = 0; i < n; i++) {
            fprintf(f, "%s{\"layer\": \"%s\", \"op\": \"%s\", \"result\": ", i ? ", " : "", jobs[i].row.layer,
                    op_name(&tpg_configs[jobs[i].row.config]));
            tpg_report_result(f, &jobs[i].res, 1);
            fputs("}", f);
        }
        fputs("]}\n", f);
        return;
    }
    const int w = config_width(jobs, n);
    fprintf(f, "Model: %s, tp %d, %s\n", a->model, tp, tpg_dtype_name(a->dtype));
    fprintf(f, "%-9s %-14s %7s %7s %7s  %-*s %-8s %10s %16s  %s\n", "layer", "op", "M", "N", "K", w, "config",
            "check", "ms", "TFLOP/s per GPU", "modes");
    for (int i = 0; i < n; i++) {
        const layer_job *j = &jobs[i];
        const tpg_cli_result *r = &j->res;
        const char *check = r->check == TPG_CHECK_PASSED ? "passed" : r->check == TPG_CHECK_FAILED ? "FAILED"
                            : r->check == TPG_CHECK_NOT_RUN ? "not run" : "skipped";
        char modes[96];
        fprintf(f, "%-9s %-14s %7" PRId64 " %7" PRId64 " %7" PRId64 "  %-*s %-8s %10.4f %16.1f  %s\n", j->row.layer,
                op_name(&tpg_configs[j->row.config]), j->m, j->row.n, j->row.k, w, r->config,
                r->exit_code > 1 ? "error" : check, r->avg_ms, r->tflops_per_gpu,
                layer_modes(a, &tpg_configs[j->row.config], j->m, &j->row, modes, sizeof modes));
    }
    if (a->share_device) fprintf(f, "(ranks shared a GPU: the times are not TP figures)\n");
}

int tpg_cli_model(const tpg_cli_args *a) {
    int tps[TPG_CLI_MAX_DEVICES], ntp = preset_tps(a->model, a->dtype, tps);
    if (!ntp) {
        const char *dtypes = preset_dtypes(a->model);
        if (dtypes[0]) {
            fprintf(stderr, "tpgemm: model '%s' has dispatch rows of%s only, not %s (--dtype must be the preset's: "
                    "models[].dtype, or a tuned choice's)\n", a->model, dtypes, tpg_dtype_name(a->dtype));
            return EXIT_USAGE;
        }
        fprintf(stderr, "tpgemm: no model preset '%s'; presets:", a->model);
        list_models(stderr);
        fprintf(stderr, " (schedules.yaml models:)\n");
        return EXIT_USAGE;
    }
    int visible = a->dry_run && (a->tp || a->num_devices) ? 0 : tpg_cli_visible_devices();
    int tp = choose_tp(a, tps, ntp, visible);
    layer_job jobs[MAX_LAYERS];
    memset(jobs, 0, sizeof jobs);
    int n = collect(a, tp, jobs);
    if (!n) {
        fprintf(stderr, "tpgemm: model '%s' is not dispatched at tp %d; its tp degrees:", a->model, tp);
        for (int i = 0; i < ntp; i++) fprintf(stderr, " %d", tps[i]);
        fprintf(stderr, "\n");
        return EXIT_USAGE;
    }
    for (int i = 0; i < n; i++) {
        const tpg_config_desc *c = &tpg_configs[jobs[i].row.config];
        char msg[512];
        tpg_shapes sh;
        if (tpg_shapes_init_for(c, jobs[i].m, jobs[i].row.n, jobs[i].row.k, 1, &sh, msg, sizeof msg) != TPG_OK) {
            fprintf(stderr, "tpgemm: %s layer %s: shape: %s\n", a->model, jobs[i].row.layer, msg);
            return EXIT_USAGE;
        }
    }
    const int need = a->share_device ? tpg_cli_shared_gpus(a) : tp; /* GPUs */
    if (a->dry_run || visible < need) {
        write_plans(stdout, a, tp, jobs, n);
        if (a->dry_run) return 0;
        fflush(stdout);
        fprintf(stderr, "tpgemm: this run needs %d Hopper (sm_90) GPU%s; %d CUDA device%s visible. Use --dry-run "
                        "to print only the plans.\n", need, need == 1 ? "" : "s", visible, visible == 1 ? " is" : "s are");
        return EXIT_NO_GPU;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        tpg_cli_args la = *a;
        la.m = jobs[i].m, la.n = jobs[i].row.n, la.k = jobs[i].row.k, la.l = 1;
        int r = tpg_cli_run(&la, jobs[i].row.config, &jobs[i].res);
        if (jobs[i].res.error) fprintf(stderr, "%s: %s\n", jobs[i].row.layer, jobs[i].res.error);
        if (jobs[i].res.error) {
            snprintf(jobs[i].error, sizeof jobs[i].error, "%s", jobs[i].res.error);
            jobs[i].res.error = jobs[i].error;
        }
        int stop;
        rc = tpg_cli_model_exit(rc, r, &stop);
        if (stop) n = i + 1; /* the table ends at the layer that stopped the run */
    }
    write_results(stdout, a, tp, jobs, n);
    return rc;
}
