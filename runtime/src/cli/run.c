/* The GPU run of one config on one problem (see run.h): context, op, shards filled from the hash ->
 * check (poisoned output, reference, 3-run determinism) -> warm-up -> timing. Moved out of main.c so
 * that model.c runs each layer of a preset through exactly the same path. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include "run.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../copy_plan.h"
#include "../plan.h"
#include "../reference.h"
#include "../tables.h"
#ifdef TPG_TRACE
#include <stdlib.h>

#include "../trace.h"
#include "trace_format.h"
#include "trace_json.h"
#endif

typedef struct run_state {
    tpg_ctx *ctx;
    tpg_op *op;
    int tp;
    cudaStream_t stream[TPG_CLI_MAX_DEVICES];
    void *a[TPG_CLI_MAX_DEVICES], *b[TPG_CLI_MAX_DEVICES], *c[TPG_CLI_MAX_DEVICES], *d[TPG_CLI_MAX_DEVICES];
    float *scales[TPG_CLI_MAX_DEVICES]; /* --scale-a, --scale-b on the device (fp8), or NULL */
    size_t d_bytes[TPG_CLI_MAX_DEVICES];
    tpg_shard_shape shape[TPG_CLI_MAX_DEVICES];
    cudaEvent_t start[TPG_CLI_MAX_DEVICES], stop[TPG_CLI_MAX_DEVICES];
} run_state;

static char g_msg[1536]; /* the failed step's message, "" if none */

/* Records a failed step in g_msg and returns its exit code. */
static int step_failed(const char *what, tpg_status st, const char *detail) {
    snprintf(g_msg, sizeof g_msg, "tpgemm: %s: %s%s%s", what, tpg_status_string(st), detail && *detail ? ": " : "",
             detail ? detail : "");
    return tpg_cli_exit_code(st);
}

static int cuda_failed(const char *what, cudaError_t e) {
    snprintf(g_msg, sizeof g_msg, "tpgemm: %s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    return EXIT_RUNTIME;
}

#define STEP(what, expr, detail)                                                                     \
    do {                                                                                             \
        tpg_status st_ = (expr);                                                                     \
        if (st_ != TPG_OK) return step_failed((what), st_, (detail));                                \
    } while (0)
#define CUDA_STEP(what, expr)                                                                        \
    do {                                                                                             \
        cudaError_t e_ = (expr);                                                                     \
        if (e_ != cudaSuccess) return cuda_failed((what), e_);                                       \
    } while (0)

int tpg_cli_check_scales(const tpg_cli_args *a, int cfg_index, char *msg, size_t cap) {
    const tpg_config_desc *c = &tpg_configs[cfg_index];
    if (!a->scale_set) return 0;
    if (tpg_dtype_size(c->kernel->dtype_ab) != 1) {
        snprintf(msg, cap, "tpgemm: --scale-a / --scale-b apply to fp8 configs only; %s has %s operands", c->name,
                 tpg_dtype_name(c->kernel->dtype_ab));
        return -1;
    }
    /* the kernel multiplies alpha by both scales in f32: the product must be a finite float too */
    if (!isfinite(a->alpha * a->scale_a * a->scale_b)) {
        snprintf(msg, cap, "tpgemm: alpha x scale_a x scale_b = %g x %g x %g overflows a float", (double)a->alpha,
                 (double)a->scale_a, (double)a->scale_b);
        return -1;
    }
    return 0;
}

int tpg_cli_visible_devices(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

int tpg_cli_shared_gpus(const tpg_cli_args *a) {
    int need = 1;
    for (int i = 0; i < a->num_devices; i++)
        if (a->devices[i] + 1 > need) need = a->devices[i] + 1;
    return need;
}

/* ---- the GPU run ----------------------------------------------------------------------------------- */

static int setup(run_state *s, const tpg_cli_args *a, int cfg_index) {
    tpg_ctx_config cc = TPG_CTX_CONFIG_INIT;
    cc.tp = s->tp;
    cc.devices = a->num_devices ? a->devices : NULL;
    cc.timeout_ns = (uint64_t)a->timeout_ms * 1000000ull;
    cc.share_devices = a->share_device;
    STEP("tpg_ctx_create", tpg_ctx_create(&cc, &s->ctx), tpg_last_error(NULL));

    tpg_op_desc od = {cfg_index, a->m, a->n, a->k, a->l, a->alpha, a->beta};
    STEP("tpg_op_create", tpg_op_create(s->ctx, &od, &s->op), tpg_last_error(s->ctx));
    /* --copy-chunks: main.c refused it for a single config that copies nothing; a --model run applies it to
     * the all-gather layers */
    if (a->copy_chunks && tpg_schedule_copies(tpg_configs[cfg_index].schedule))
        STEP("tpg_op_set_copy_chunks", tpg_op_set_copy_chunks(s->op, a->copy_chunks), tpg_last_error(s->ctx));
    /* --overlap-barriers: main.c refused it for a single config without barriers or in clusters; a --model run
     * applies it to every layer whose kernel allows it (the report says per layer) */
    const tpg_kernel_desc *ok = tpg_configs[cfg_index].kernel;
    if (a->overlap_barriers && tpg_configs[cfg_index].schedule->tp > 1 && ok->cluster_m * ok->cluster_n == 1)
        STEP("tpg_op_set_overlap_barriers", tpg_op_set_overlap_barriers(s->op, 1), tpg_last_error(s->ctx));
    if (a->gather_copy_engine) /* only changes an op whose walk is gathered (tpgemm.h) */
        STEP("tpg_op_set_gather_copy_engine", tpg_op_set_gather_copy_engine(s->op, 1), tpg_last_error(s->ctx));
    if (a->rs_ring) /* only changes an op whose walk is one-hop (tpgemm.h) */
        STEP("tpg_op_set_rs_ring", tpg_op_set_rs_ring(s->op, 1), tpg_last_error(s->ctx));

    const tpg_kernel_desc *kd = tpg_configs[cfg_index].kernel;
    const size_t sab = tpg_dtype_size(kd->dtype_ab), scd = tpg_dtype_size(kd->dtype_cd);
    if (tpg_cli_check_scales(a, cfg_index, g_msg, sizeof g_msg)) return EXIT_USAGE;
    for (int r = 0; r < s->tp; r++) {
        tpg_shard_shape *sh = &s->shape[r];
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        CUDA_STEP("cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&s->stream[r], cudaStreamNonBlocking));
        CUDA_STEP("cudaEventCreate", cudaEventCreate(&s->start[r]));
        CUDA_STEP("cudaEventCreate", cudaEventCreate(&s->stop[r]));
        STEP("tpg_op_shard_shape", tpg_op_shard_shape(s->op, r, sh), tpg_last_error(s->ctx));
        const int64_t L = a->l;
        s->d_bytes[r] = (size_t)(sh->d_rows * sh->d_cols * L) * scd;
        CUDA_STEP("cudaMalloc(A shard)", cudaMalloc(&s->a[r], (size_t)(sh->a_rows * sh->a_cols * L) * sab));
        CUDA_STEP("cudaMalloc(B shard)", cudaMalloc(&s->b[r], (size_t)(sh->b_rows * sh->b_cols * L) * sab));
        CUDA_STEP("cudaMalloc(D shard)", cudaMalloc(&s->d[r], s->d_bytes[r]));
        if (a->beta != 0.0f) CUDA_STEP("cudaMalloc(C shard)", cudaMalloc(&s->c[r], s->d_bytes[r]));
        if (a->scale_set) {
            const float sc[2] = {a->scale_a, a->scale_b};
            CUDA_STEP("cudaMalloc(scales)", cudaMalloc((void **)&s->scales[r], sizeof sc));
            CUDA_STEP("cudaMemcpy(scales)", cudaMemcpy(s->scales[r], sc, sizeof sc, cudaMemcpyHostToDevice));
        }
        void *st = s->stream[r];
        STEP("tpg_fill(A)", tpg_fill(kd->dtype_ab, s->a[r], sh->a_rows, sh->a_cols, sh->a_cols, L,
                                     sh->a_rows * sh->a_cols, sh->a_row0, sh->a_col0, a->seed, st),
             tpg_reference_last_error());
        STEP("tpg_fill(B)", tpg_fill(kd->dtype_ab, s->b[r], sh->b_rows, sh->b_cols, sh->b_cols, L,
                                     sh->b_rows * sh->b_cols, sh->b_row0, sh->b_col0, a->seed + 1, st),
             tpg_reference_last_error());
        if (s->c[r])
            STEP("tpg_fill(C)", tpg_fill(kd->dtype_cd, s->c[r], sh->d_rows, sh->d_cols, sh->d_cols, L,
                                         sh->d_rows * sh->d_cols, sh->d_row0, sh->d_col0, a->seed + 2, st),
                 tpg_reference_last_error());
        CUDA_STEP("cudaStreamSynchronize(fill)", cudaStreamSynchronize(s->stream[r]));
    }
    for (int r = 0; r < s->tp; r++) {
        tpg_tensors t = {s->a[r], s->b[r], s->c[r], s->d[r], s->scales[r], s->scales[r] ? s->scales[r] + 1 : NULL};
        STEP("tpg_op_set_tensors", tpg_op_set_tensors(s->op, r, &t), tpg_last_error(s->ctx));
    }
    return 0;
}

/* Runs the op `times` times and waits for every device (TPG_ERR_TIMEOUT -> exit 4). */
static int run_and_sync(run_state *s, int times, const tpg_cli_args *a) {
    for (int i = 0; i < times; i++)
        STEP("tpg_op_run", tpg_op_run(s->op, s->stream), tpg_last_error(s->ctx));
    for (int r = 0; r < s->tp; r++) {
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        CUDA_STEP("cudaStreamSynchronize", cudaStreamSynchronize(s->stream[r]));
    }
    tpg_status st = tpg_op_sync(s->op);
    if (st == TPG_ERR_TIMEOUT) {
        snprintf(g_msg, sizeof g_msg,
                 "tpgemm: a device waited longer than the timeout (%lld ms) for a peer; check that every rank runs "
                 "and that peer access works: %s",
                 a->timeout_ms ? (long long)a->timeout_ms : (long long)(TPG_DEFAULT_TIMEOUT_NS / 1000000ull),
                 tpg_last_error(s->ctx));
        return EXIT_TIMEOUT;
    }
    STEP("tpg_op_sync", st, tpg_last_error(s->ctx));
    return 0;
}

static int poison_all(run_state *s) {
    for (int r = 0; r < s->tp; r++) {
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        STEP("tpg_poison", tpg_poison(s->d[r], s->d_bytes[r], s->stream[r]), tpg_reference_last_error());
    }
    return 0;
}

static int checksum_all(run_state *s, uint64_t *sums) {
    for (int r = 0; r < s->tp; r++) {
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        STEP("tpg_checksum", tpg_checksum(s->d[r], s->d_bytes[r], s->stream[r], &sums[r]), tpg_reference_last_error());
    }
    return 0;
}

/* The reference check's negative control (tests/test_gpu.py): TPG_CLI_DIAG_CORRUPT_D=<rank> overwrites the first 16
 * bytes of that rank's D after the checked call, before its check, which must then fail - and, where the shard has 64
 * rows or more, its rows 32..63 whole: a sampled check (one row of every 32-row band) reads one of them, where it may
 * never read row 0. */
static int corrupt_for_a_test(run_state *s, int r, int64_t rows, int64_t l) {
    const char *env = getenv("TPG_CLI_DIAG_CORRUPT_D");
    char *end = NULL;
    const long rank = env ? strtol(env, &end, 10) : -1; /* a rank number, whole: "x" is no rank 0 */
    if (!env || end == env || *end || rank != r) return 0;
    fprintf(stderr, "tpgemm: TPG_CLI_DIAG_CORRUPT_D=%s: rank %d's D is overwritten before its check (a test)\n", env, r);
    CUDA_STEP("cudaMemsetAsync(corrupt D)", cudaMemsetAsync(s->d[r], 0x7b, 16, s->stream[r]));
    if (rows >= 64) {
        const size_t row_bytes = s->d_bytes[r] / (size_t)(rows * l);
        CUDA_STEP("cudaMemsetAsync(corrupt D rows)",
                  cudaMemsetAsync((char *)s->d[r] + 32 * row_bytes, 0x7b, 32 * row_bytes, s->stream[r]));
    }
    CUDA_STEP("cudaStreamSynchronize(corrupt D)", cudaStreamSynchronize(s->stream[r]));
    return 0;
}

/* Poisoned run + reference check on every rank, then two more poisoned runs compared bitwise. */
static int check(run_state *s, const tpg_cli_args *a, const tpg_kernel_desc *kd, tpg_cli_result *res) {
    int rc;
    uint64_t first[TPG_CLI_MAX_DEVICES], again[TPG_CLI_MAX_DEVICES];
    if ((rc = poison_all(s)) || (rc = run_and_sync(s, 1, a))) return rc;
    /* the kernel computes alpha * scale_a * scale_b * (A . B^T): the reference folds the scales into alpha */
    tpg_ref_problem p = {kd->dtype_ab, kd->dtype_cd, a->m, a->n, a->k, a->l, a->alpha * a->scale_a * a->scale_b,
                         a->beta, a->seed};
    res->max_error = 0.0;
    res->rms_ref = 0.0;
    res->full_check = 1;
    for (int r = 0; r < s->tp; r++) {
        const tpg_shard_shape *sh = &s->shape[r];
        tpg_ref_shard shard = {s->d[r], sh->d_rows, sh->d_cols, sh->d_cols, sh->d_rows * sh->d_cols, sh->d_row0,
                               sh->d_col0};
        tpg_ref_result rr;
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        if ((rc = corrupt_for_a_test(s, r, sh->d_rows, a->l))) return rc;
        STEP("tpg_reference_check", tpg_reference_check(&p, &shard, a->seed * 31u + (uint64_t)r, s->stream[r], &rr),
             tpg_reference_last_error());
        if (!(rr.max_error <= res->max_error)) res->max_error = rr.max_error;
        if (rr.rms_ref > res->rms_ref) res->rms_ref = rr.rms_ref;
        res->nonfinite += rr.nonfinite;
        res->checked_elements += rr.checked;
        res->full_check &= rr.full;
    }
    if ((rc = checksum_all(s, first))) return rc;
    res->deterministic = 1;
    for (int run = 0; run < 2; run++) {
        if ((rc = poison_all(s)) || (rc = run_and_sync(s, 1, a)) || (rc = checksum_all(s, again))) return rc;
        for (int r = 0; r < s->tp; r++)
            if (again[r] != first[r]) res->deterministic = 0;
    }
    res->check = tpg_cli_check_verdict(res);
    return 0;
}

static double host_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int by_value(const void *x, const void *y) {
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The 10th percentile of n host times (sorts them): what one call's launches cost the host when it did not
 * wait for a full launch queue, as the later calls of a long loop do once the device is behind. */
static double low_decile(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, by_value);
    return t[n / 10];
}

/* Start event per device, `iterations` runs, stop events; runtime = max over devices / iterations. */
static int time_runs(run_state *s, const tpg_cli_args *a, tpg_cli_result *res) {
    int rc;
    if ((rc = run_and_sync(s, 0, a))) return rc;
    for (int r = 0; r < s->tp; r++) {
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        CUDA_STEP("cudaEventRecord", cudaEventRecord(s->start[r], s->stream[r]));
    }
    double *host = malloc(sizeof *host * (size_t)a->iterations); /* each call's launch time on the host */
    tpg_status st = TPG_OK;
    for (int i = 0; i < a->iterations && st == TPG_OK; i++) {
        const double h0 = host_ms();
        st = tpg_op_run(s->op, s->stream);
        if (host) host[i] = host_ms() - h0;
    }
    res->host_launch_ms = host && st == TPG_OK ? low_decile(host, a->iterations) : NAN;
    free(host);
    STEP("tpg_op_run", st, tpg_last_error(s->ctx));
    for (int r = 0; r < s->tp; r++) {
        CUDA_STEP("cudaSetDevice", cudaSetDevice(tpg_ctx_device(s->ctx, r)));
        CUDA_STEP("cudaEventRecord", cudaEventRecord(s->stop[r], s->stream[r]));
    }
    if ((rc = run_and_sync(s, 0, a))) return rc;
    float worst = 0.0f;
    for (int r = 0; r < s->tp; r++) {
        float ms = 0.0f;
        CUDA_STEP("cudaEventElapsedTime", cudaEventElapsedTime(&ms, s->start[r], s->stop[r]));
        if (ms > worst) worst = ms;
    }
    res->avg_ms = worst / a->iterations;
    res->tflops_per_gpu = 2.0 * (double)a->m * (double)a->n * (double)a->k * (double)a->l / s->tp /
                          (res->avg_ms * 1e-3) / 1e12;
    res->timed = 1;
    return 0;
}

#ifdef TPG_TRACE
/* --trace FILE (trace build): after the timed calls, TRACE_WARM_CALLS traced calls and one more, whose
 * timeline is kept (the records are zeroed in stream order just before it, so the kept call runs right
 * behind other calls, as in steady state, not after an idle host-side pause), written as trace-event
 * JSON (trace_json.h). Prints where it went and the start barriers' exit offsets between devices.
 * The buffer holds --trace-cap records per CTA lane; without it TPG_TRACE_DEFAULT_CAP, and where a lane's walk
 * asked for more (its count keeps counting past the cap) the whole is traced once more with room for what it asked
 * (tpg_trace_cap_for: at most TPG_CLI_MAX_TRACE_CAP); where that second buffer cannot be had, the first trace is
 * written as it is, its dropped records said. */
#define TRACE_WARM_CALLS 3

/* Traces one call into the buffers tpg__trace_enable made and copies every rank's into host[r] (the caller frees
 * them); *read = 1 once every rank's is there. A call that timed out (EXIT_TIMEOUT, kept: the trace run fails) is
 * read too - its waits ended (every spin is bounded) and the trace marks those that gave up - and where that read
 * fails, stderr says so beside the timeout's message. */
static int traced_call(run_state *s, const tpg_cli_args *a, void *host[], tpg_trace_device dev[], int *read) {
    *read = 0;
    for (int i = 0; i < TRACE_WARM_CALLS; i++)
        STEP("tpg_op_run", tpg_op_run(s->op, s->stream), tpg_last_error(s->ctx));
    for (int r = 0; r < s->tp; r++)
        STEP("trace: rearm", tpg__trace_rearm(s->op, r, s->stream[r]), tpg_last_error(s->ctx));
    const int rc = run_and_sync(s, 1, a);
    if (rc && rc != EXIT_TIMEOUT) return rc;
    for (int r = 0; r < s->tp; r++) {
        size_t bytes = 0; /* a multiple of 64: the timed nodes follow the buffer in one allocation */
        tpg_status st = tpg__trace_read(s->op, r, NULL, &bytes);
        const size_t node_bytes = TPG_TRACE_MAX_NODES * sizeof(tpg_trace_node_time);
        if (st == TPG_OK && !(host[r] = malloc(bytes + node_bytes))) st = TPG_ERR_OUT_OF_MEMORY;
        if (st == TPG_OK) st = tpg__trace_read(s->op, r, host[r], &bytes);
        tpg_trace_node_time *nodes = st == TPG_OK ? (tpg_trace_node_time *)((char *)host[r] + bytes) : NULL;
        tpg_trace_nodes_info ni = {0, 0, -1.0};
        if (st == TPG_OK) st = tpg__trace_nodes(s->op, r, nodes, TPG_TRACE_MAX_NODES, &ni);
        if (st != TPG_OK && rc == EXIT_TIMEOUT) {
            fprintf(stderr, "tpgemm: trace: rank %d's trace of the timed-out call not read (%s: %s); none written\n",
                    r, tpg_status_string(st), tpg_last_error(s->ctx));
            return rc;
        }
        if (st != TPG_OK) return step_failed("trace: read", st, tpg_last_error(s->ctx));
        dev[r] = (tpg_trace_device){r, tpg_ctx_device(s->ctx, r), host[r], bytes, nodes, ni.count, ni.skipped,
                                    ni.gemm_end_ns};
    }
    *read = 1;
    return rc;
}

static void free_hosts(void *host[], int n) {
    for (int r = 0; r < n; r++) free(host[r]), host[r] = NULL;
}

/* Where the first trace dropped records and no --trace-cap was given: the call traced again into buffers with room
 * for them, which replace host / dev / *cap; 0, or the CLI's exit code of a call or read that failed. A buffer that
 * cannot be had leaves the first trace (said on stderr). The second call's trace replaces the first where it timed
 * out too; *read = 0 where host / dev no longer hold the trace of the call that ended the run. */
static int trace_again(run_state *s, const tpg_cli_args *a, void *host[], tpg_trace_device dev[], uint32_t *cap,
                       int *read) {
    const uint32_t need = a->trace_cap ? 0 : tpg_trace_cap_for(dev, s->tp, *cap, TPG_CLI_MAX_TRACE_CAP);
    if (!need) return 0;
    fprintf(a->json ? stderr : stdout, "Trace: a lane's walk asked for more than %u records; traced again with "
            "--trace-cap %u\n", *cap, need);
    const tpg_status st = tpg__trace_enable(s->op, need);
    if (st != TPG_OK) {
        fprintf(stderr, "tpgemm: trace: no buffer of %u records a lane (%s: %s); the first trace is written\n", need,
                tpg_status_string(st), tpg_last_error(s->ctx));
        return 0;
    }
    void *again[TPG_CLI_MAX_DEVICES] = {0};
    tpg_trace_device dev2[TPG_CLI_MAX_DEVICES];
    const int rc = traced_call(s, a, again, dev2, read);
    if (!*read) {
        free_hosts(again, s->tp);
        return rc;
    }
    free_hosts(host, s->tp);
    for (int r = 0; r < s->tp; r++) host[r] = again[r], dev[r] = dev2[r];
    *cap = need;
    return rc;
}

static int trace_run(run_state *s, const tpg_cli_args *a, int cfg_index) {
    const tpg_config_desc *c = &tpg_configs[cfg_index];
    void *host[TPG_CLI_MAX_DEVICES] = {0};
    tpg_trace_device dev[TPG_CLI_MAX_DEVICES];
    uint32_t cap = a->trace_cap ? (uint32_t)a->trace_cap : TPG_TRACE_DEFAULT_CAP;
    const tpg_status on = tpg__trace_enable(s->op, cap);
    if (on != TPG_OK) return step_failed("trace: enable", on, tpg_last_error(s->ctx));
    int read = 0;
    int rc = traced_call(s, a, host, dev, &read);
    if (!rc) rc = trace_again(s, a, host, dev, &cap, &read);
    const int timed_out = rc == EXIT_TIMEOUT; /* written all the same, its waits that gave up marked */
    const tpg_status st = tpg__trace_disable(s->op);
    if (!rc && st != TPG_OK) rc = step_failed("trace: disable", st, tpg_last_error(s->ctx));
    if (read && (!rc || timed_out)) {
        tpg_trace_meta meta = {c->name, c->schedule->name, c->kernel->name, s->tp, a->m, a->n, a->k, a->l};
        tpg_trace_summary sum;
        char msg[512] = "";
        FILE *f = fopen(a->trace, "w");
        if (!f && timed_out) { /* the timeout stays the run's message and status */
            fprintf(stderr, "tpgemm: --trace: cannot write '%s': %s\n", a->trace, strerror(errno));
        } else if (!f) {
            snprintf(g_msg, sizeof g_msg, "tpgemm: --trace: cannot write '%s': %s", a->trace, strerror(errno));
            rc = EXIT_RUNTIME;
        } else {
            int bad = tpg_trace_write_json(f, &meta, dev, s->tp, &sum, msg, sizeof msg);
            if (fclose(f) != 0 && !bad) {
                snprintf(msg, sizeof msg, "closing the file failed: %s", strerror(errno));
                bad = 1;
            }
            if (bad && timed_out) {
                fprintf(stderr, "tpgemm: --trace %s: %s\n", a->trace, msg);
            } else if (bad) {
                snprintf(g_msg, sizeof g_msg, "tpgemm: --trace %s: %s", a->trace, msg);
                rc = EXIT_RUNTIME;
            } else {
                FILE *o = a->json ? stderr : stdout; /* --json keeps stdout one object */
                fprintf(o, "Trace: %s (%lld records, %lld dropped past the per-lane cap, %lld incomplete, span %.1f us)\n",
                        a->trace, sum.records, sum.dropped, sum.incomplete, sum.span_us);
                fprintf(o, "Trace: start-barrier exit minus rank 0's (simultaneous by construction; %%globaltimer "
                           "skew + polling latency):");
                for (int r = 0; r < s->tp; r++) {
                    if (sum.has_offset[r]) fprintf(o, " rank %d %+.3f us", r, sum.start_exit_offset_us[r]);
                    else fprintf(o, " rank %d n/a", r);
                }
                fputc('\n', o);
                if (sum.dropped)
                    fprintf(stderr, "tpgemm: trace: %lld records past a lane's cap of %u were not recorded: the "
                                    "timeline lacks the last units of those lanes (%s)\n", sum.dropped, cap,
                            cap < TPG_CLI_MAX_TRACE_CAP ? "a larger --trace-cap keeps them" : "the largest cap");
                if (sum.silent_kernels || sum.ctas_dropped)
                    fprintf(stderr, "tpgemm: trace: %d device(s) recorded no GEMM launch, %lld CTA(s) had no trace "
                                    "block; was every kernel built with -DTPG_TRACE (ninja trace)?\n",
                            sum.silent_kernels, sum.ctas_dropped);
                if (timed_out && sum.gave_up)
                    fprintf(stderr, "tpgemm: trace: the traced call timed out; %lld of its waits and barriers gave "
                                    "up, marked \"gave up\" in %s\n", sum.gave_up, a->trace);
                else if (timed_out) /* the warm calls run unsynchronized before it, and a sync reports them all */
                    fprintf(stderr, "tpgemm: trace: a call of the trace run timed out, but no wait of the traced one "
                                    "gave up: an earlier call's did (%s shows the traced call)\n", a->trace);
            }
        }
    }
    free_hosts(host, s->tp);
    return rc;
}
#endif

static void teardown(run_state *s) {
    if (s->op) tpg_op_destroy(s->op);
    for (int r = 0; s->ctx && r < s->tp; r++) {
        if (cudaSetDevice(tpg_ctx_device(s->ctx, r)) != cudaSuccess) continue;
        cudaFree(s->a[r]);
        cudaFree(s->b[r]);
        cudaFree(s->c[r]);
        cudaFree(s->d[r]);
        cudaFree(s->scales[r]);
        if (s->start[r]) cudaEventDestroy(s->start[r]);
        if (s->stop[r]) cudaEventDestroy(s->stop[r]);
        if (s->stream[r]) cudaStreamDestroy(s->stream[r]);
    }
    if (s->ctx) tpg_ctx_destroy(s->ctx);
}

static int run_gpu(const tpg_cli_args *a, int cfg_index, tpg_cli_result *res) {
    run_state s;
    memset(&s, 0, sizeof s);
    s.tp = tpg_configs[cfg_index].schedule->tp;
    if (a->check) res->check = TPG_CHECK_NOT_RUN; /* until check() says passed or failed */
    int rc = setup(&s, a, cfg_index);
    /* the check first: its call is the op's first, so every receive slot (shard or partial) still holds the
     * zeros tpg_op_create left there, and a tile that read its rows before they landed would be caught (after
     * a warm-up the slots would hold the same values again) */
    if (!rc && a->check) rc = check(&s, a, tpg_configs[cfg_index].kernel, res);
    if (!rc && a->warmup) rc = run_and_sync(&s, a->warmup, a);
    if (!rc) rc = time_runs(&s, a, res);
#ifdef TPG_TRACE
    if (!rc && a->trace) rc = trace_run(&s, a, cfg_index);
#endif
    if (s.ctx) { /* the ranks' devices, for the report */
        static int devs[TPG_CLI_MAX_DEVICES];
        for (int r = 0; r < s.tp; r++) devs[r] = tpg_ctx_device(s.ctx, r);
        res->devices = devs;
        res->num_devices = s.tp;
    }
    teardown(&s);
    return tpg_cli_run_exit(rc, res->check);
}

/* ---- entry ------------------------------------------------------------------------------------------- */

static void fill_result(tpg_cli_result *res, const tpg_cli_args *a, int cfg_index) {
    const tpg_config_desc *c = &tpg_configs[cfg_index];
    tpg_plan_shape ps = {0};
    tpg_report_init(res);
    res->config = c->name;
    res->schedule = c->schedule->name;
    res->kernel = c->kernel->name;
    res->dtype = c->kernel->dtype_ab;
    res->tp = c->schedule->tp;
    res->m = a->m, res->n = a->n, res->k = a->k, res->l = a->l;
    res->alpha = a->alpha, res->beta = a->beta;
    res->scale_a = a->scale_a, res->scale_b = a->scale_b;
    res->iterations = a->iterations, res->warmup = a->warmup;
    res->devices = a->devices, res->num_devices = a->num_devices;
    res->shared_device = a->share_device;
    res->seed = a->seed;
    if (tpg__plan_compute_ring(c, a->m, a->n, a->k, a->l, a->copy_chunks, a->rs_ring, &ps) == TPG_OK)
        res->stage_m = ps.stage_m, res->stage_n = ps.stage_n, res->stage_k = ps.stage_k, res->copy_chunks = ps.copy_chunks;
    /* rounded partials: a reduce-scatter ring's tp - 1, one-hop's tp (each rank's, the own too, rounded once before
     * the fp32 sum), none where they move in fp32 (reference.h) */
    const int partials = c->schedule->comm == TPG_COMM_REDUCE_SCATTER && c->kernel->dtype_partial != TPG_DTYPE_FP32
                             ? c->schedule->tp - 1 + ps.one_hop : 0;
    res->eps = a->eps_set ? a->eps : tpg_reference_eps_for(c->kernel->dtype_ab, c->kernel->dtype_acc, a->k,
                                                               c->kernel->fp8_promote, partials);
    res->overlap_barriers = (tpg_cli_plan_modes(a, c) & TPG_PLAN_OVERLAP) != 0;
    res->gemm_pulls = tpg_gather_pulls(ps.gathered, ps.copy_chunks, res->overlap_barriers, a->gather_copy_engine);
    res->one_hop = ps.one_hop;
}

int tpg_cli_plan_modes(const tpg_cli_args *a, const tpg_config_desc *c) {
    const int overlap = a->overlap_barriers && c->schedule->tp > 1 && c->kernel->cluster_m * c->kernel->cluster_n == 1;
    return (overlap ? TPG_PLAN_OVERLAP : 0) | (a->gather_copy_engine ? TPG_PLAN_COPY_ENGINE : 0) |
           (a->rs_ring ? TPG_PLAN_RS_RING : 0);
}

int tpg_cli_run(const tpg_cli_args *a, int cfg_index, tpg_cli_result *res) {
    fill_result(res, a, cfg_index);
    g_msg[0] = '\0';
    int rc = run_gpu(a, cfg_index, res);
    res->exit_code = rc;
    res->error = g_msg[0] ? g_msg : NULL;
    return rc;
}
