/* build/bench/local_gemm main: command line -> records (one per problem x dtype) -> plan and estimate ->
 * [--dry-run: JSON with null numbers, no GPU touched] -> GPU checks (exit 3 without a Hopper GPU) ->
 * NVML -> one run per record inside the time budget -> JSON -> the table, printed last. */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "reference.h"

#define MAX_RECORDS (BENCH_MAX_PROBLEMS * 2)

static void init_variant(bench_variant *v, const char *config, const char *kernel) {
    memset(v, 0, sizeof *v);
    snprintf(v->config, sizeof v->config, "%s", config);
    snprintf(v->kernel, sizeof v->kernel, "%s", kernel);
    v->burst_tflops = v->sustained_tflops = v->joules = v->max_error = NAN;
    for (int r = 0; r < BENCH_ROUNDS; r++) v->round_tflops[r] = v->round_joules[r] = v->round_seconds[r] = v->round_power_w[r] = v->round_watts[r] = NAN;
    v->check = -1;
}

/* The kernel of the problem's default config at TP = 1 (tpg_config_pick, the problem's schedule) into out, or "". */
static void picked_kernel(const bench_problem *p, tpg_dtype dt, char *out, size_t cap) {
    const char *sched = strcmp(p->op, "RS") ? "AllGather1D_TilingCD_RotatingA" : "ReduceScatter1D_TilingA_RotatingC";
    int pick = -1;
    tpg_config_info picked;
    out[0] = '\0';
    if (tpg_config_pick(sched, 1, dt, p->m, p->n, p->k, &pick) == TPG_OK && tpg_config_get(pick, &picked) == TPG_OK)
        snprintf(out, cap, "%s", picked.kernel);
}

/* A default run (no --configs) times a config with a wave_weight (a tile for few tokens, a default only through the
 * wave check) or a stream-K one (only through the split rule) only where it is the problem's default pick at TP = 1,
 * so the anchors' runs keep their length. */
static int default_variant(const bench_record *r, const tpg_config_info *ci) {
    return (!ci->wave_weight && !ci->stream_k) || !strcmp(r->pick_kernel, ci->kernel);
}

static int make_records(const bench_args *a, const bench_problem **ps, int np, bench_record *rec) {
    int n = 0;
    for (int i = 0; i < np; i++)
        for (int dt = 0; dt <= TPG_DTYPE_E4M3; dt++) {
            if (!(a->dtypes & (1 << dt))) continue;
            bench_record *r = &rec[n++];
            int cfg[BENCH_MAX_VARIANTS - 1];
            memset(r, 0, sizeof *r);
            r->p = ps[i], r->dtype = (tpg_dtype)dt;
            r->seed = a->seed + 16u * (uint64_t)i + (uint64_t)dt; /* fresh data per problem, same for all variants */
            /* bf16 2e-2, fp16 4e-3, e4m3 by K (2e-2 with --precise-fp8: promoted sums on both sides) */
            r->eps = tpg_reference_eps_for(r->dtype, TPG_DTYPE_FP32, ps[i]->k, a->precise_fp8, 0);
            r->cublas_ref_error = NAN, r->cublas_ref_check = -1;
            picked_kernel(r->p, r->dtype, r->pick_kernel, sizeof r->pick_kernel);
            init_variant(&r->var[0], "cublasLt", "cublasLt heuristic top algorithm, 32 MiB workspace");
            const int twins = a->pdl_ab ? 2 : 1;
            const int nc = bench_tp1_configs(r->dtype, a->configs, a->precise_fp8, cfg,
                                             (BENCH_MAX_VARIANTS - 1 - a->aa - (a->lt_algos > 1)) / twins);
            r->nvar = 1;
            for (int c = 0; c < nc; c++) {
                tpg_config_info ci;
                tpg_config_get(cfg[c], &ci);
                if (!a->configs && !default_variant(r, &ci)) continue;
                for (int t = 0; t < twins; t++) { /* t = 1: the --pdl-ab twin */
                    init_variant(&r->var[r->nvar], ci.name, ci.kernel);
                    r->var[r->nvar++].pdl = t;
                }
            }
            if (a->lt_algos > 1) { /* cuBLASLt's best of N beside its top one (bench.h) */
                char name[32];
                snprintf(name, sizeof name, "cublasLt_best_of_%d", a->lt_algos);
                init_variant(&r->var[r->nvar], name, "cublasLt: the fastest of its first N heuristic algorithms");
                r->var[r->nvar++].lt_best_of = a->lt_algos;
            }
            if (a->aa) { /* last in the order: the A/A control (bench.h) */
                init_variant(&r->var[r->nvar], "cublasLt_control", "cublasLt again, last in the order (--aa)");
                r->var[r->nvar++].control = 1;
            }
            bench_publish(r); /* a dry run's JSON names the config a run would publish */
            if (!nc)
                snprintf(r->error, sizeof r->error, "no shipped TP = 1 %s config%s", tpg_dtype_name(r->dtype),
                         a->configs ? " passes --configs" : "");
        }
    return n;
}

static void make_meta(bench_meta *m, const bench_args *a, int argc, char **argv) {
    memset(m, 0, sizeof *m);
    m->args = a;
    size_t len = 0;
    for (int i = 0; i < argc && len < sizeof m->command; i++)
        len += (size_t)snprintf(m->command + len, sizeof m->command - len, "%s%s", i ? " " : "", argv[i]);
    time_t t = time(NULL);
    struct tm g;
    gmtime_r(&t, &g);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &g);
}

/* Exit 3 with a message when there is no usable GPU; fills gpu / driver / cuda otherwise. */
static int gpu_checks(const bench_args *a, bench_meta *m) {
    int count = 0, rt = 0, drv = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr,
                "local_gemm: no CUDA device is visible (%s); this benchmark needs one Hopper (sm_90) GPU. "
                "--dry-run prints the plan without one.\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return BENCH_NO_GPU;
    }
    struct cudaDeviceProp p;
    if (a->device >= count || cudaGetDeviceProperties(&p, a->device) != cudaSuccess) {
        fprintf(stderr, "local_gemm: --device %d does not exist; %d CUDA device%s visible\n", a->device, count,
                count == 1 ? " is" : "s are");
        return BENCH_NO_GPU;
    }
    if (p.major != 9) {
        fprintf(stderr, "local_gemm: device %d (%s) is compute capability %d.%d; tpgemm needs Hopper (9.0)\n",
                a->device, p.name, p.major, p.minor);
        return BENCH_NO_GPU;
    }
    char pci[32] = "";
    if ((e = cudaSetDevice(a->device)) != cudaSuccess ||
        (e = cudaDeviceGetPCIBusId(pci, sizeof pci, a->device)) != cudaSuccess) {
        fprintf(stderr, "local_gemm: device %d: %s\n", a->device, cudaGetErrorString(e));
        return BENCH_NO_GPU;
    }
    nvml_open(pci, a->device);
    snprintf(m->energy_note, sizeof m->energy_note, "%s", nvml_note());
    snprintf(m->gpu, sizeof m->gpu, "%.80s (%d SMs, %.20s)", p.name, p.multiProcessorCount, pci);
    /* a version the call could not read stays 0 (the record says 0.0: unknown, not made up) */
    if (cudaRuntimeGetVersion(&rt) != cudaSuccess) rt = 0;
    if (cudaDriverGetVersion(&drv) != cudaSuccess) drv = 0;
    snprintf(m->cuda, sizeof m->cuda, "runtime %d.%d, driver API %d.%d", rt / 1000, rt % 1000 / 10, drv / 1000,
             drv % 1000 / 10);
    if (nvml_driver(m->driver, sizeof m->driver)) snprintf(m->driver, sizeof m->driver, "CUDA driver API %d", drv);
    return 0;
}

int main(int argc, char **argv) {
    static bench_record rec[MAX_RECORDS];
    const bench_problem *ps[BENCH_MAX_PROBLEMS];
    bench_args a;
    bench_meta meta;
    char msg[2048];
    bench_args_defaults(&a);
    if (bench_args_parse(argc, argv, &a, msg, sizeof msg)) return fprintf(stderr, "%s", msg), BENCH_USAGE;
    if (a.help) return fputs(bench_usage(), stdout), 0;
    const int np = bench_select(&a, ps, BENCH_MAX_PROBLEMS, msg, sizeof msg);
    if (np < 0) return fprintf(stderr, "%s", msg), BENCH_USAGE;
    if (bench_check_configs(&a, msg, sizeof msg)) return fprintf(stderr, "%s", msg), BENCH_USAGE;
    const int n = make_records(&a, ps, np, rec);
    make_meta(&meta, &a, argc, argv);

    double total = 0;
    printf("local_gemm: %d runs (problem x dtype); method: %d bursts of ~%.0f ms per variant, each after %.1f s idle, %d x %.1f s "
           "sustained windows per variant (order forward, then reversed)\n", n, BENCH_BURST_REPS, a.burst_ms, a.cool_s,
           BENCH_ROUNDS, a.sustained_s);
    for (int i = 0; i < n; i++) {
        const bench_problem *p = rec[i].p;
        double est = bench_estimate_s(&a, p, rec[i].nvar);
        total += est;
        printf("  %-10s %-4s %-4s local %6lld x %6lld x %6lld  variants %d (cublasLt", p->name, p->op,
               tpg_dtype_name(rec[i].dtype), (long long)p->m, (long long)p->n, (long long)p->k, rec[i].nvar);
        for (int v = 1; v < rec[i].nvar; v++) printf(", %s%s", rec[i].var[v].config, rec[i].var[v].pdl ? " (PDL)" : "");
        printf(")  ~%.0f s\n", est);
    }
    printf("local_gemm: estimated %.0f s (%.1f min); budget %.0f s\n", total, total / 60, a.budget_s);
    fflush(stdout);
    if (a.dry_run) {
        for (int i = 0; i < n; i++)
            if (!rec[i].error[0]) snprintf(rec[i].error, sizeof rec[i].error, "dry run: not measured");
        snprintf(meta.energy_note, sizeof meta.energy_note, "dry run");
        /* only where --out says: a plan must never replace bench/results/local_gemm.json (it once did) */
        if (a.out_given && bench_write_json(a.out, rec, n, &meta, msg, sizeof msg)) return fprintf(stderr, "%s\n", msg), BENCH_RUNTIME;
        bench_print_table(stdout, rec, n);
        return 0;
    }

    int rc = gpu_checks(&a, &meta);
    if (rc) return rc;
    tpg_ctx *ctx = NULL;
    tpg_ctx_config cc = TPG_CTX_CONFIG_INIT;
    cc.tp = 1, cc.devices = &a.device;
    tpg_status st = tpg_ctx_create(&cc, &ctx);
    if (st) {
        fprintf(stderr, "local_gemm: tpg_ctx_create: %s: %s\n", tpg_status_string(st), tpg_last_error(NULL));
        return st == TPG_ERR_NO_DEVICE || st == TPG_ERR_NOT_HOPPER ? BENCH_NO_GPU : BENCH_RUNTIME;
    }
    bench_env *E = bench_env_new(&a, ctx, msg, sizeof msg);
    if (!E) return fprintf(stderr, "local_gemm: %s\n", msg), tpg_ctx_destroy(ctx), BENCH_RUNTIME;
    printf("local_gemm: %s, driver %s, %s%s%s\n", meta.gpu, meta.driver, meta.cuda, meta.energy_note[0] ? "; " : "",
           meta.energy_note);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int errors = 0, fails = 0;
    for (int i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        if (rec[i].best < 0) continue; /* no tpgemm config of this dtype (the --aa control alone is nothing to run) */
        if (el > a.budget_s) {
            snprintf(rec[i].error, sizeof rec[i].error, "not run: the --budget-s %.0f s budget was spent", a.budget_s);
            continue;
        }
        printf("[%2d/%d %5.0f s] %-10s %s ...", i + 1, n, el, rec[i].p->name, tpg_dtype_name(rec[i].dtype));
        fflush(stdout);
        bench_run_one(E, &rec[i]);
        const bench_variant *cb = &rec[i].var[0], *tp = rec[i].best >= 0 ? &rec[i].var[rec[i].best] : NULL;
        printf(" tpgemm %.1f / %.1f, cublas %.1f / %.1f TFLOP/s (burst / sustained), J %.4g / %.4g, end MHz %u / %u, "
               "check %s%s%s\n",
               tp ? tp->burst_tflops : NAN, tp ? tp->sustained_tflops : NAN, cb->burst_tflops, cb->sustained_tflops,
               tp ? tp->joules : NAN, cb->joules, tp ? tp->round_clock_mhz[BENCH_ROUNDS - 1] : 0,
               cb->round_clock_mhz[BENCH_ROUNDS - 1], tp && tp->check == 1 ? "pass" : tp && tp->check == 0 ? "FAIL" : "-",
               rec[i].error[0] ? ": " : "", rec[i].error);
        for (int v = 1; v < rec[i].nvar; v++) {
            const bench_variant *V = &rec[i].var[v];
            if (V->error[0]) printf("    %s: %s\n", V->config, V->error);
            if (V->check_note[0]) printf("    %s: check failed, %s\n", V->config, V->check_note);
            _Static_assert(BENCH_ROUNDS >= 2, "the A/A line reads rounds 0 and 1");
            if (V->control) /* the same kernel last (round 0) and first (round 1): what the order alone does */
                printf("    A/A control / cuBLAS: sustained %.3f, joules %.3f; round 0 (control last) %.3f, round 1 "
                       "(control first) %.3f\n",
                       V->sustained_tflops / cb->sustained_tflops, V->joules / cb->joules,
                       V->round_tflops[0] / cb->round_tflops[0], V->round_tflops[1] / cb->round_tflops[1]);
            if (V->lt_best_of) /* how much a user who tunes cuBLASLt gains, and where tpgemm stands against that */
                printf("    %s / cuBLAS: burst %.3f, sustained %.3f, joules %.3f; tpgemm / it: burst %.3f, sustained "
                       "%.3f (%s)\n", V->config, V->burst_tflops / cb->burst_tflops,
                       V->sustained_tflops / cb->sustained_tflops, V->joules / cb->joules,
                       tp ? tp->burst_tflops / V->burst_tflops : NAN,
                       tp ? tp->sustained_tflops / V->sustained_tflops : NAN, V->kernel);
        }
        if (rec[i].cublas_ref_check == 0)
            printf("    cuBLAS vs the fp32 reference: error %.3g > %.3g\n", rec[i].cublas_ref_error, rec[i].eps);
        bench_tally(&rec[i], &fails, &errors);
        fflush(stdout);
        /* The records so far, after every run: a run killed at its time limit still leaves its numbers. */
        if (a.out && bench_write_json(a.out, rec, i + 1, &meta, msg, sizeof msg)) fprintf(stderr, "%s\n", msg);
    }
    bench_env_free(E);
    lt_shutdown();
    tpg_ctx_destroy(ctx);
    nvml_close();
    rc = bench_exit_status(errors, fails);
    if (a.out && bench_write_json(a.out, rec, n, &meta, msg, sizeof msg)) fprintf(stderr, "%s\n", msg), rc = BENCH_RUNTIME;
    else if (a.out) printf("local_gemm: wrote %s\n", a.out);
    bench_print_table(stdout, rec, n);
    return rc;
}
