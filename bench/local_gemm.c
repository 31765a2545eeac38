/* build/bench/local_gemm: tpgemm's shipped TP = 1 kernels (through the public API, i.e. the op's CUDA graph)
 * against cuBLASLt on the local GEMM of each problem, one GPU, one process, the same A/B buffers.
 * Method (measured-anchors.md, "The power cap"): the card holds 1980 MHz only in bursts and sits at its
 * 700 W cap under sustained load, so variants are never timed one cold and one hot:
 *   burst:     one unmeasured window after a longer idle, then REPS x every variant { sleep cool_s; one short
 *              window } (rotated order), median per variant. Every window follows the same idle and another
 *              burst: timing the variants back to back after one cool-down made the first one the coolest, and
 *              the ratios followed the order (the 2026-11-30 runs: cuBLAS first in two of three repetitions,
 *              every tpgemm config lower the later it ran). A short window's first event waits behind a
 *              device-side delay while the host queues its calls (WINDOW_DELAY_US), so it holds no launch latency.
 *   sustained: one unmeasured heat window, then ROUNDS x { every variant >= sustained_s of back-to-back
 *              calls, no idle between windows }: median of the chunk rates, with joules per call from
 *              the power fitted while the window ran (energy.c says why not a before/after delta).
 * Flow per (problem, dtype): alloc + fill (tpg_fill, seeded hash, never zeros) -> plans -> check (poisoned
 * outputs; cuBLAS vs the fp32 reference, each tpgemm kernel vs cuBLAS) -> warm-up -> burst -> sustained ->
 * recheck (each tpgemm D against cuBLAS's again) -> the config published (bench_publish: the runtime's pick). */
#define _POSIX_C_SOURCE 200809L
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "reference.h"

struct bench_env {
    const bench_args *a;
    tpg_ctx *tpg;
    cudaStream_t s;
    cudaEvent_t ev[BENCH_CHUNKS + 1];
    int late_windows; /* delayed windows whose delay ended before the host had queued their calls (this record) */
};
typedef struct bench_env env;

typedef struct impl { /* device objects of one variant: cuBLASLt plan or tpgemm op, and its own D */
    lt_gemm *lt;
    tpg_op *op;
    void *d;
    int ok;
} impl;

static void sleep_s(double s) {
    struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&t, &t)) {}
}

static int cmp_d(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(const double *v, int n) { /* of the finite values; NAN if none */
    double t[BENCH_CHUNKS * BENCH_ROUNDS + BENCH_BURST_REPS];
    int m = 0;
    if (n > (int)(sizeof t / sizeof t[0])) n = (int)(sizeof t / sizeof t[0]);
    for (int i = 0; i < n; i++)
        if (isfinite(v[i])) t[m++] = v[i];
    if (!m) return NAN;
    qsort(t, (size_t)m, sizeof t[0], cmp_d);
    return m % 2 ? t[m / 2] : 0.5 * (t[m / 2 - 1] + t[m / 2]);
}

static int cuda_err(char *err, size_t cap, const char *what, cudaError_t e) {
    snprintf(err, cap, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

static int launch(env *E, impl *im, int calls, char *err, size_t cap) {
    for (int i = 0; i < calls; i++) {
        if (im->lt) {
            int s = lt_run(im->lt, E->s);
            if (s) return snprintf(err, cap, "cublasLtMatmul: status %d", s), -1;
        } else {
            tpg_status st = tpg_op_run(im->op, &E->s);
            if (st) return snprintf(err, cap, "tpg_op_run: %s: %s", tpg_status_string(st), tpg_last_error(E->tpg)), -1;
        }
    }
    return 0;
}

/* Waits for the stream; for tpgemm also asks the op whether a device-side wait timed out. */
static int finish(env *E, impl *im, char *err, size_t cap) {
    cudaError_t e = cudaStreamSynchronize(E->s);
    if (e != cudaSuccess) return cuda_err(err, cap, "cudaStreamSynchronize", e);
    tpg_status st = im->op ? tpg_op_sync(im->op) : TPG_OK;
    if (st) return snprintf(err, cap, "tpg_op_sync: %s: %s", tpg_status_string(st), tpg_last_error(E->tpg)), -1;
    return 0;
}

/* A short window's first event waits on the device this long (bench_device_delay) while the host queues its calls
 * (at most 20 of ~2-10 us each): otherwise the window held the first call's host launch latency, 4-8% of a window at
 * decode sizes. */
#define WINDOW_DELAY_US 500.0
#define BURST_MAX_CALLS 20 /* a burst window's calls: ~burst_ms of cuBLAS's, 3..this */

/* `calls` back-to-back calls split into `chunks` event-timed chunks. rate[c] = TFLOP/s of chunk c. With
 * clk != NULL, reads SM clock and power while the last chunk still runs (the state under load); with one
 * chunk, right after the calls are queued, i.e. while they run. delayed: the first event behind WINDOW_DELAY_US on
 * the device (short windows; a sustained one lasts >= 1 s and follows the previous one without idle). Returns the
 * chunks timed, or -1. */
static int timed_calls(env *E, impl *im, int calls, int chunks, int delayed, double flops, double *rate, double *secs,
                       unsigned *clk, double *pw, char *err, size_t cap) {
    if (chunks > calls) chunks = calls;
    cudaError_t e = delayed ? (cudaError_t)bench_device_delay(E->s, WINDOW_DELAY_US) : cudaSuccess;
    if (e != cudaSuccess) return cuda_err(err, cap, "bench_device_delay", e);
    e = cudaEventRecord(E->ev[0], E->s);
    int done = 0, n[BENCH_CHUNKS];
    for (int c = 0; c < chunks && e == cudaSuccess; c++) {
        int upto = (int)((long long)calls * (c + 1) / chunks);
        n[c] = upto - done, done = upto;
        if (launch(E, im, n[c], err, cap)) return -1;
        e = cudaEventRecord(E->ev[c + 1], E->s);
    }
    if (e != cudaSuccess) return cuda_err(err, cap, "cudaEventRecord", e);
    if (delayed && cudaEventQuery(E->ev[0]) == cudaSuccess) E->late_windows++; /* the window holds host latency */
    if (clk) { /* the last chunk running (one chunk: its calls, past the delay) */
        if ((chunks > 1 || delayed) && (e = cudaEventSynchronize(E->ev[chunks > 1 ? chunks - 1 : 0])) != cudaSuccess)
            return cuda_err(err, cap, "cudaEventSynchronize", e);
        if (nvml_sm_clock_mhz(clk)) *clk = 0;
        if (nvml_power_w(pw)) *pw = NAN;
    }
    if (finish(E, im, err, cap)) return -1;
    *secs = 0;
    for (int c = 0; c < chunks; c++) {
        float ms = 0;
        if ((e = cudaEventElapsedTime(&ms, E->ev[c], E->ev[c + 1])) != cudaSuccess)
            return cuda_err(err, cap, "cudaEventElapsedTime", e);
        rate[c] = flops * n[c] / (ms * 1e-3) / 1e12;
        *secs += ms * 1e-3;
    }
    return chunks;
}

/* timed_calls, and with watts != NULL the average power while they ran (energy.c), past the window's first
 * tenth (the GPU busy, its clock settled); NAN when NVML gave too few counter steps. */
static int window(env *E, impl *im, int calls, int chunks, double flops, double *rate, double *secs, unsigned *clk,
                  double *pw, double *watts, char *err, size_t cap) {
    const int sampling = watts && !bench_energy_start();
    const double t0 = bench_now_s();
    /* delayed: the short windows (burst, sizing), not the heat window (unmeasured; thousands of calls, which no delay
     * would cover) nor the sustained ones (several chunks) */
    const int short_window = chunks == 1 && calls <= BURST_MAX_CALLS;
    const int rc = timed_calls(E, im, calls, chunks, short_window, flops, rate, secs, clk, pw, err, cap);
    if (watts) {
        const bench_energy_step *steps = NULL;
        const int n = sampling ? bench_energy_stop(&steps) : 0;
        const double t1 = bench_now_s(), w = n ? bench_fit_power(steps, n, t0 + 0.1 * (t1 - t0), t1) : -1.0;
        *watts = w > 0 ? w : NAN;
    }
    return rc;
}

/* Plans every variant on shared A/B; each variant writes its own D. var[0] is cuBLASLt. */
static int setup(env *E, bench_record *r, impl *im, void *A, void *B) {
    const bench_problem *p = r->p;
    char *err = r->error;
    const size_t cap = sizeof r->error, nd = (size_t)(p->m * p->n) * tpg_dtype_size(tpg_output_dtype(r->dtype));
    for (int v = 0; v < r->nvar; v++) {
        cudaError_t e = cudaMalloc(&im[v].d, nd);
        if (e != cudaSuccess) return cuda_err(err, cap, "cudaMalloc(D)", e);
    }
    if (lt_create(r->dtype, p->m, p->n, p->k, A, B, im[0].d, E->a->precise_fp8, &im[0].lt, err, cap)) return -1;
    snprintf(r->cublas_algo, sizeof r->cublas_algo, "%s", lt_describe(im[0].lt));
    im[0].ok = 1;
    for (int v = 1; v < r->nvar; v++) {
        bench_variant *V = &r->var[v];
        if (V->control) { /* --aa: the same cuBLASLt plan again, into its own D */
            if (lt_create(r->dtype, p->m, p->n, p->k, A, B, im[v].d, E->a->precise_fp8, &im[v].lt, V->error,
                          sizeof V->error))
                continue;
            im[v].ok = 1;
            continue;
        }
        if (V->lt_best_of) { /* --lt-algos: cuBLASLt's fastest of N, into its own D (checked against the top one's) */
            if (lt_create_best_of(r->dtype, p->m, p->n, p->k, A, B, im[v].d, E->a->precise_fp8, V->lt_best_of, E->s,
                                  &im[v].lt, V->error, sizeof V->error))
                continue;
            snprintf(V->kernel, sizeof V->kernel, "%s", lt_describe(im[v].lt));
            V->lt_trial_n = lt_trial_times(im[v].lt, V->lt_trial_us, LT_MAX_ALGOS);
            im[v].ok = 1;
            continue;
        }
        int cfg;
        tpg_shard_shape sh;
        tpg_status st = tpg_config_find(V->config, NULL, 1, r->dtype, &cfg);
        tpg_op_desc od = {.config = cfg, .m = p->m, .n = p->n, .k = p->k, .l = 1, .alpha = 1.0f, .beta = 0.0f};
        if (!st) st = tpg_op_create(E->tpg, &od, &im[v].op);
        if (!st) st = tpg_op_shard_shape(im[v].op, 0, &sh);
        if (!st && V->pdl) st = tpg_op_set_pdl(im[v].op, 1);
        if (st) {
            snprintf(V->error, sizeof V->error, "%s: %s", tpg_status_string(st), tpg_last_error(E->tpg));
            continue; /* the other variants still run */
        }
        /* TP = 1: the one shard is the whole problem, so A/B/D are the buffers cuBLAS uses. */
        if (sh.a_rows != p->m || sh.a_cols != p->k || sh.b_rows != p->n || sh.d_rows != p->m || sh.d_cols != p->n) {
            snprintf(V->error, sizeof V->error, "TP = 1 shard is not the whole problem");
            continue;
        }
        tpg_tensors t = {.a = A, .b = B, .c = NULL, .d = im[v].d};
        if ((st = tpg_op_set_tensors(im[v].op, 0, &t))) {
            snprintf(V->error, sizeof V->error, "tpg_op_set_tensors: %s: %s", tpg_status_string(st),
                     tpg_last_error(E->tpg));
            continue;
        }
        im[v].ok = 1;
    }
    return 0;
}

/* Variant v's D against cuBLAS's (bench_compare's metric, the CLI's), merged into its check (bench_merge_check: a
 * check failure, not a variant error - exit 1, not 5). -1 when the comparison itself could not run (r->error). */
static int compare_with_cublas(env *E, bench_record *r, impl *im, int v, int first, const char *when) {
    bench_variant *V = &r->var[v];
    const size_t nel = (size_t)(r->p->m * r->p->n);
    double err, rms;
    unsigned long long bad;
    if (bench_compare(tpg_output_dtype(r->dtype), im[v].d, im[0].d, nel, E->s, &err, &rms, &bad, r->error,
                      sizeof r->error))
        return -1;
    bench_merge_check(V, err, rms, bad, r->eps, first, when);
    return 0;
}

/* Poisoned outputs; cuBLAS against the fp32 reference (validates the layout derivation in lt.c), then every
 * tpgemm kernel against cuBLAS's output: max |d - ref| / max(|ref|, rms(ref)) <= eps, no non-finite element. */
static int check(env *E, bench_record *r, impl *im) {
    const bench_problem *p = r->p;
    const tpg_dtype cd = tpg_output_dtype(r->dtype); /* D: bf16 for fp8 operands */
    const size_t nel = (size_t)(p->m * p->n), nd = nel * tpg_dtype_size(cd);
    for (int v = 0; v < r->nvar; v++) {
        bench_variant *V = &r->var[v];
        if (!im[v].ok) continue;
        /* A variant's own launch failure drops that variant; anything else stops the run (r->error). */
        char *err = v ? V->error : r->error;
        const size_t cap = v ? sizeof V->error : sizeof r->error;
        tpg_status st = tpg_poison(im[v].d, nd, E->s);
        if (st) return snprintf(r->error, sizeof r->error, "tpg_poison: %s", tpg_reference_last_error()), -1;
        if (launch(E, &im[v], 1, err, cap) || finish(E, &im[v], err, cap)) {
            if (!v) return -1;
            im[v].ok = 0;
            continue;
        }
        if (!v) {
            tpg_ref_problem rp = {.dtype_ab = r->dtype, .dtype_cd = cd, .m = p->m, .n = p->n, .k = p->k, .l = 1,
                                  .alpha = 1.0f, .beta = 0.0f, .seed = r->seed};
            tpg_ref_shard sh = {.d = im[0].d, .rows = p->m, .cols = p->n, .ld = p->n, .batch_stride = p->m * p->n};
            tpg_ref_result rr;
            if ((st = tpg_reference_check(&rp, &sh, r->seed * 31u, E->s, &rr)))
                return snprintf(err, cap, "tpg_reference_check: %s", tpg_reference_last_error()), -1;
            r->cublas_ref_error = rr.max_error;
            r->cublas_ref_check = rr.nonfinite == 0 && rr.max_error <= r->eps;
            continue;
        }
        if (compare_with_cublas(E, r, im, v, 1, "first call")) return -1;
    }
    return 0;
}

/* Every D again after the sustained rounds (thousands of calls since the check): the same values, or the check fails.
 * cuBLAS's own D was rewritten as often; the two are compared as after the first call. */
static int recheck(env *E, bench_record *r, impl *im) {
    if (!im[0].ok) return 0;
    for (int v = 1; v < r->nvar; v++)
        if (im[v].ok && r->var[v].check == 1 && compare_with_cublas(E, r, im, v, 0, "after the sustained rounds"))
            return -1;
    return 0;
}

/* A variant that failed is dropped from the remaining windows; without cuBLAS there is no comparison. */
static void failed(bench_record *r, impl *im, int v) {
    im[v].ok = 0;
    if (!v && !r->error[0]) snprintf(r->error, sizeof r->error, "cuBLAS: %.200s", r->var[0].error);
}

static void measure(env *E, bench_record *r, impl *im) {
    const bench_args *a = E->a;
    const double flops = 2.0 * (double)r->p->m * (double)r->p->n * (double)r->p->k;
    double rate[BENCH_CHUNKS], secs, burst[BENCH_MAX_VARIANTS][BENCH_BURST_REPS];
    double later[BENCH_MAX_VARIANTS][BENCH_CHUNKS * BENCH_ROUNDS];
    int nlater[BENCH_MAX_VARIANTS] = {0};
#define VERR(v) r->var[v].error, sizeof r->var[v].error
#define FAILED(v) failed(r, im, (v))
    for (int v = 0; v < r->nvar; v++) /* warm-up: module load, graph upload, first-touch, clocks up */
        if (im[v].ok && (launch(E, &im[v], 2, VERR(v)) || finish(E, &im[v], VERR(v)))) FAILED(v);
    if (!im[0].ok || window(E, &im[0], 3, 1, flops, rate, &secs, NULL, NULL, NULL, VERR(0)) < 0) {
        FAILED(0);
        return;
    }
    /* One burst length for every variant, from cuBLAS's speed: ~burst_ms, 3..20 calls. */
    r->burst_calls = (int)lround(a->burst_ms * 1e-3 / (secs / 3));
    r->burst_calls = r->burst_calls < 3 ? 3 : r->burst_calls > BURST_MAX_CALLS ? BURST_MAX_CALLS : r->burst_calls;
    /* After the previous problem's sustained rounds a longer idle, then one unmeasured burst window: every measured
     * window then follows cool_s of idle after another burst window, the first one (cuBLAS's) included. */
    sleep_s(2 * a->cool_s);
    for (int v = r->nvar - 1; v >= 0; v--) {
        if (!im[v].ok) continue;
        if (window(E, &im[v], r->burst_calls, 1, flops, rate, &secs, NULL, NULL, NULL, VERR(v)) < 0) FAILED(v);
        break;
    }
    for (int rep = 0; rep < BENCH_BURST_REPS; rep++) {
        for (int j = 0; j < r->nvar; j++) {
            const int v = (j + rep) % r->nvar; /* rotated, though every window starts from the same idle */
            bench_variant *V = &r->var[v];
            double pw;
            burst[v][rep] = NAN;
            if (!im[v].ok) continue;
            sleep_s(a->cool_s); /* the card idles (every window ends synchronized): power and clock recover */
            if (window(E, &im[v], r->burst_calls, 1, flops, rate, &secs, &V->burst_clock_mhz[rep], &pw, NULL,
                       VERR(v)) < 0)
                FAILED(v);
            else
                burst[v][rep] = rate[0];
        }
    }
    for (int v = 0; v < r->nvar; v++) r->var[v].burst_tflops = median(burst[v], BENCH_BURST_REPS);
    /* Heat: one unmeasured window of the last variant (BENCH_HEAT_WINDOWS long), so the first measured window
     * starts at the cap and temperature every later one does (a whole discarded round cost as much again). */
    for (int v = r->nvar - 1; v >= 0; v--) {
        if (!im[v].ok || !isfinite(r->var[v].burst_tflops)) continue;
        int calls = (int)ceil(BENCH_HEAT_WINDOWS * a->sustained_s * r->var[v].burst_tflops * 1e12 / flops);
        if (window(E, &im[v], calls < 1 ? 1 : calls > 200000 ? 200000 : calls, 1, flops, rate, &secs, NULL, NULL, NULL,
                   VERR(v)) < 0)
            FAILED(v);
        break;
    }
    for (int round = 0; round < BENCH_ROUNDS; round++) {
        for (int j = 0; j < r->nvar; j++) { /* A B C C B A (bench.h): each window follows another's, no idle gap */
            const int v = round % 2 ? r->nvar - 1 - j : j;
            bench_variant *V = &r->var[v];
            if (!im[v].ok || !isfinite(V->burst_tflops)) continue;
            /* Sized from the burst rate (+5%): the hot card is slower, so the window lasts >= sustained_s. */
            int calls = (int)ceil(1.05 * a->sustained_s * V->burst_tflops * 1e12 / flops);
            calls = calls < BENCH_CHUNKS ? BENCH_CHUNKS : calls > 200000 ? 200000 : calls;
            double watts = NAN;
            if (nvml_temperature_c(&V->round_temp_c[round][0])) V->round_temp_c[round][0] = 0;
            int nc = window(E, &im[v], calls, BENCH_CHUNKS, flops, rate, &secs, &V->round_clock_mhz[round],
                            &V->round_power_w[round], &watts, VERR(v));
            if (nc < 0) {
                FAILED(v);
                continue;
            }
            if (nvml_temperature_c(&V->round_temp_c[round][1])) V->round_temp_c[round][1] = 0;
            V->round_calls[round] = calls, V->round_seconds[round] = secs;
            V->round_tflops[round] = median(rate, nc);
            V->round_watts[round] = watts;
            V->round_joules[round] = watts * secs / calls; /* NAN when the power could not be fitted */
            for (int c = 0; c < nc; c++) later[v][nlater[v]++] = rate[c];
        }
    }
    for (int v = 0; v < r->nvar; v++) {
        bench_variant *V = &r->var[v];
        double js = 0;
        int nj = 0;
        V->sustained_tflops = median(later[v], nlater[v]);
        for (int round = 0; round < BENCH_ROUNDS; round++)
            if (isfinite(V->round_joules[round])) js += V->round_joules[round], nj++;
        V->joules = nj ? js / nj : NAN;
    }
#undef VERR
#undef FAILED
}

void bench_run_one(env *E, bench_record *r) {
    const bench_problem *p = r->p;
    const size_t es = tpg_dtype_size(r->dtype);
    impl im[BENCH_MAX_VARIANTS];
    void *A = NULL, *B = NULL;
    cudaError_t e;
    memset(im, 0, sizeof im);
    r->error[0] = '\0';
    if ((e = cudaMalloc(&A, (size_t)(p->m * p->k) * es)) != cudaSuccess ||
        (e = cudaMalloc(&B, (size_t)(p->n * p->k) * es)) != cudaSuccess) {
        cuda_err(r->error, sizeof r->error, "cudaMalloc(A/B)", e);
        goto out;
    }
    if (tpg_fill(r->dtype, A, p->m, p->k, p->k, 1, p->m * p->k, 0, 0, r->seed, E->s) ||
        tpg_fill(r->dtype, B, p->n, p->k, p->k, 1, p->n * p->k, 0, 0, r->seed + 1, E->s)) {
        snprintf(r->error, sizeof r->error, "tpg_fill: %s", tpg_reference_last_error());
        goto out;
    }
    if (setup(E, r, im, A, B) || check(E, r, im)) goto out;
    E->late_windows = 0;
    measure(E, r, im);
    r->late_windows = E->late_windows;
    (void)recheck(E, r, im); /* a failed comparison is in r->error */
out:
    bench_publish(r);
    for (int v = 0; v < r->nvar; v++) {
        if (im[v].op) tpg_op_destroy(im[v].op);
        lt_destroy(im[v].lt);
        cudaFree(im[v].d);
    }
    cudaFree(A);
    cudaFree(B);
    (void)cudaGetLastError(); /* a failure above is recorded; let the next problem start clean if it can */
}

/* main() (command line, records, GPU checks, JSON, table) lives in bench/main.c. */
bench_env *bench_env_new(const bench_args *a, tpg_ctx *tpg, char *err, size_t cap) {
    env *E = calloc(1, sizeof *E);
    cudaError_t e = E ? cudaStreamCreateWithFlags(&E->s, cudaStreamNonBlocking) : cudaErrorMemoryAllocation;
    for (int i = 0; i <= BENCH_CHUNKS && e == cudaSuccess; i++) e = cudaEventCreate(&E->ev[i]);
    if (e != cudaSuccess) {
        cuda_err(err, cap, "stream/event creation", e);
        free(E);
        return NULL;
    }
    E->a = a, E->tpg = tpg;
    return E;
}

void bench_env_free(bench_env *E) {
    if (!E) return;
    for (int i = 0; i <= BENCH_CHUNKS; i++)
        if (E->ev[i]) cudaEventDestroy(E->ev[i]);
    if (E->s) cudaStreamDestroy(E->s);
    free(E);
}
