/* GPU test (2 devices): a rank that never arrives turns into TPG_ERR_TIMEOUT within the configured
 * bound, not a hang, and a fresh context afterwards runs the same op correctly.
 *
 * Only rank 0's graph is launched (tpg_op_run_rank), so rank 0's start barrier waits for a peer that
 * never comes; the call must end within the bound plus TIMEOUT_SLACK_S, whichever of its waits times out first.
 * Then rank 1 comes late to that call: it passes its waits on rank 0's arrivals, but rank 0 gave up, so rank 1's
 * call must fail too (TPG_ERR_TIMEOUT, "a peer gave up"; barrier.h), not return its output as valid. Run: build/tests/gpu_timeout [timeout_ms] [--share-device] [--overlap-barriers] [--allgather] [--few-tokens]
 * [--copy-engine-partials] [--peer-ahead].
 * With --share-device both ranks live on device 0 (tpg_ctx_config.share_devices), so one GPU is enough;
 * --overlap-barriers runs the op with its GEMM beside the start barrier (then rank 0's GEMM starts at once and
 * its own waits, on partials or on the copies the start barrier admits, must time out too); --allgather uses
 * the all-gather schedule instead of reduce-scatter (and prints whether rank 0's stage 0 wrote D before the start
 * barrier could pass: only the GEMM beside the barrier does); --few-tokens M = 128 (reduce-scatter: the one-hop walk,
 * whose only wait inside a kernel is its REDUCE's, on the peers' tile flags). Reduce-scatter runs the rs_tila_bf16
 * family with pushed partials, or with --copy-engine-partials with the partials the graph's copy chains carry
 * (tests/gpu/route_config.h finds either, whichever the default takes: the chains' mem-op waits have no timeout of
 * their own, so they must end because rank 0's GEMM raises its flags even after its waits gave up). Exit 0 on
 * success, 1 on a failed expectation, 3 when too few CUDA devices are visible (the caller reports a skip).
 * --peer-ahead (with --allgather, not --overlap-barriers): rank 0 starts its next call before rank 1's late one, and
 * rank 1's next call, after rank 0's A changed, must match the reference (peer_ahead says why).
 * Built also against the trace library (build/trace/tests/gpu_timeout), it takes --trace FILE: rank 0's lone call is
 * traced and written as the CLI's timeline JSON (runtime/src/cli/trace_json.c), its waits that gave up marked, which
 * tests/test_gpu.py reads with bench/timeline.py.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime, sigaction under -std=c11 */
#include <cuda_runtime.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buffers.h"
#include "op_internal.h" /* --peer-ahead reads the late rank's stage flags (tpg__op_read) */
#include "reference.h"
#include "route_config.h"
#include "tpgemm.h"
#ifdef TPG_TRACE
#include "cli/trace_json.h"
#include "trace.h"
#endif

/* A call whose peer never comes must end after one timeout, not before (a TIMEOUT returned at once proves nothing)
 * and not much after: at most 1.5 bounds plus TIMEOUT_SLACK_S for the launch and the host's sync, so that a call
 * taking two bounds (two waits timing out in turn) fails at every bound used here (200 ms and up). */
#define TIMEOUT_SLACK_S 0.05
#define FRESH_SEED 2002

enum { TP = 2, N = 2048, K = 1024 };
static int64_t g_m = 2048; /* --few-tokens: 128, 64 rows a stage (the one-hop reduce-scatter walk, its REDUCE's waits) */

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *what, tpg_status s, const tpg_ctx *ctx) {
    fprintf(stderr, "gpu_timeout: %s: %s (%s)\n", what, tpg_status_string(s), tpg_last_error(ctx));
    return 1;
}

static int within_bound(double waited, double timeout_s) {
    return waited >= 0.95 * timeout_s && waited <= 1.5 * timeout_s + TIMEOUT_SLACK_S;
}

/* The watchdog: a step that does not return (a timeout that never fires) ends the test with a message that says so,
 * instead of waiting for the caller's own limit. */
static const char *g_step = "";
static void watchdog(int sig) {
    (void)sig;
    static const char head[] = "gpu_timeout: still waiting, the step never returned (a device-side timeout that "
                               "never fired?): ";
    /* best effort (only async-signal-safe calls here): the exit status says the test failed either way */
    const int told = write(2, head, sizeof head - 1) >= 0 && write(2, g_step, strlen(g_step)) >= 0 &&
                     write(2, "\n", 1) >= 0;
    (void)told;
    _exit(1);
}
static void arm(const char *step, double seconds) {
    g_step = step;
    alarm((unsigned)ceil(seconds));
}

/* Creates a ctx + a reduce-scatter (or all-gather) op with (non-zero, uninitialised-free) shards on every rank. */
static int g_share, g_overlap, g_allgather, g_ce, g_ahead; /* --share-device, --overlap-barriers, --allgather,
                                                           --copy-engine-partials, --peer-ahead */

static int setup(uint64_t timeout_ns, tpg_ctx **ctx, tpg_op **op, void *bufs[TP][3]) {
    tpg_ctx_config cc = TPG_CTX_CONFIG_INIT;
    cc.tp = TP;
    cc.timeout_ns = timeout_ns;
    cc.share_devices = g_share;
    tpg_status s = tpg_ctx_create(&cc, ctx);
    if (s != TPG_OK) return fail("tpg_ctx_create", s, NULL);
    int cfg;
    const char *schedule = g_allgather ? "AllGather1D_TilingCD_RotatingA" : "ReduceScatter1D_TilingA_RotatingC";
    /* reduce-scatter: partials pushed, or carried by copy engine - whichever route the shipped default takes */
    s = g_allgather ? tpg_config_find(NULL, schedule, TP, TPG_DTYPE_BF16, &cfg)
                    : route_config(schedule, TP, g_ce ? ROUTE_CE : ROUTE_PUSH, &cfg);
    if (s != TPG_OK) return fail("the config", s, *ctx);
    tpg_op_desc d = {cfg, g_m, N, K, 1, 1.0f, 0.0f};
    if ((s = tpg_op_create(*ctx, &d, op)) != TPG_OK) return fail("tpg_op_create", s, *ctx);
    if (g_overlap && (s = tpg_op_set_overlap_barriers(*op, 1)) != TPG_OK) return fail("tpg_op_set_overlap_barriers", s, *ctx);
    for (int r = 0; r < TP; r++) {
        tpg_shard_shape sh;
        tpg_op_shard_shape(*op, r, &sh);
        size_t bytes[3] = {(size_t)(sh.a_rows * sh.a_cols * 2), (size_t)(sh.b_rows * sh.b_cols * 2),
                           (size_t)(sh.d_rows * sh.d_cols * 2)};
        cudaSetDevice(tpg_ctx_device(*ctx, r));
        for (int i = 0; i < 3; i++) {
            if (cudaMalloc(&bufs[r][i], bytes[i]) != cudaSuccess) return fail("cudaMalloc", TPG_ERR_CUDA, *ctx);
            cudaMemset(bufs[r][i], 0x3c, bytes[i]); /* bf16 0x3c3c ~ 0.0115: finite, non-zero */
        }
        if (r == 1 && !g_share) { /* rank 0's memory for rank 1, on another GPU: refused, not run over NVLink */
            tpg_tensors wrong = {bufs[0][0], bufs[1][1], NULL, bufs[1][2], NULL, NULL};
            s = tpg_op_set_tensors(*op, 1, &wrong);
            printf("rank 1 given device %d's memory -> %s: %s\n", tpg_ctx_device(*ctx, 0), tpg_status_string(s),
                   tpg_last_error(*ctx));
            if (s != TPG_ERR_INVALID_ARGUMENT) return fail("expected TPG_ERR_INVALID_ARGUMENT", s, *ctx);
        }
        tpg_tensors t = {bufs[r][0], bufs[r][1], NULL, bufs[r][2], NULL, NULL};
        if ((s = tpg_op_set_tensors(*op, r, &t)) != TPG_OK) return fail("tpg_op_set_tensors", s, *ctx);
    }
    return 0;
}

/* Rank 0 launched on a stream of rank 1's device: refused before anything runs, naming both devices. */
static int wrong_device_stream(tpg_ctx *ctx, tpg_op *op) {
    cudaStream_t other = NULL;
    cudaSetDevice(tpg_ctx_device(ctx, 1));
    if (cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking) != cudaSuccess)
        return fail("cudaStreamCreate", TPG_ERR_CUDA, ctx);
    tpg_status s = tpg_op_run_rank(op, 0, other);
    printf("rank 0 given device %d's stream -> %s: %s\n", tpg_ctx_device(ctx, 1), tpg_status_string(s),
           tpg_last_error(ctx));
    cudaStreamDestroy(other);
    if (s != TPG_ERR_INVALID_ARGUMENT) return fail("expected TPG_ERR_INVALID_ARGUMENT", s, ctx);
    return 0;
}

/* Fills every rank's A and B shards from FRESH_SEED (rank 0's A into a0_new instead: the caller copies it in later)
 * and poisons every D; synchronized. */
static int fill_fresh(tpg_ctx *ctx, tpg_op *op, void *bufs[TP][3], void *a0_new, tpg_shard_shape sh[TP]) {
    for (int r = 0; r < TP; r++) {
        tpg_op_shard_shape(op, r, &sh[r]);
        cudaSetDevice(tpg_ctx_device(ctx, r));
        tpg_status s = tpg_fill(TPG_DTYPE_BF16, r == 0 && a0_new ? a0_new : bufs[r][0], sh[r].a_rows, sh[r].a_cols,
                                sh[r].a_cols, 1, 0, sh[r].a_row0, sh[r].a_col0, FRESH_SEED, NULL);
        if (s == TPG_OK)
            s = tpg_fill(TPG_DTYPE_BF16, bufs[r][1], sh[r].b_rows, sh[r].b_cols, sh[r].b_cols, 1, 0, sh[r].b_row0,
                         sh[r].b_col0, FRESH_SEED + 1, NULL);
        if (s == TPG_OK) s = tpg_poison(bufs[r][2], (size_t)(sh[r].d_rows * sh[r].d_cols * 2), NULL);
        if (s != TPG_OK || cudaDeviceSynchronize() != cudaSuccess)
            return fail(tpg_reference_last_error(), s == TPG_OK ? TPG_ERR_CUDA : s, ctx);
    }
    return 0;
}

/* Every rank's D against the reference of FRESH_SEED's operands (what: the call's name for the report). */
static int d_matches_reference(tpg_ctx *ctx, void *bufs[TP][3], const tpg_shard_shape sh[TP], const char *what) {
    for (int r = 0; r < TP; r++) {
        cudaSetDevice(tpg_ctx_device(ctx, r));
        tpg_ref_problem p = {TPG_DTYPE_BF16, TPG_DTYPE_BF16, g_m, N, K, 1, 1.0f, 0.0f, FRESH_SEED};
        tpg_ref_shard d = {bufs[r][2], sh[r].d_rows, sh[r].d_cols, sh[r].d_cols, 0, sh[r].d_row0, sh[r].d_col0};
        tpg_ref_result res;
        tpg_status s = tpg_reference_check(&p, &d, FRESH_SEED, NULL, &res);
        if (s != TPG_OK) return fail(tpg_reference_last_error(), s, ctx);
        const double eps = tpg_reference_default_eps(TPG_DTYPE_BF16);
        printf("%s, rank %d: max error %.3e (bound %.1e), %lld checked\n", what, r, res.max_error, eps,
               (long long)res.checked);
        if (!(res.max_error <= eps && res.nonfinite == 0 && res.checked > 0))
            return fail("D does not match the reference", TPG_ERR_CUDA, ctx);
    }
    return 0;
}

/* Across GPUs, the gathered walk (--allgather --few-tokens): each GEMM pulls its peers' A shards with its SMs, and
 * memory of a pool (cudaMallocAsync's default pool grants no other GPU access) is refused by name, not left to fault;
 * then the cudaMalloc shard again. */
static int pool_shard_refused(tpg_ctx *ctx, tpg_op *op, void *bufs[TP][3]) {
    tpg_shard_shape sh;
    void *pooled = NULL;
    tpg_op_shard_shape(op, 0, &sh);
    cudaSetDevice(tpg_ctx_device(ctx, 0));
    if (cudaMallocAsync(&pooled, (size_t)(sh.a_rows * sh.a_cols * 2), 0) != cudaSuccess ||
        cudaStreamSynchronize(0) != cudaSuccess)
        return fail("cudaMallocAsync", TPG_ERR_CUDA, ctx);
    /* the driver's own answer, printed so that a run where nothing is refused says why */
    cudaMemPool_t pool = NULL;
    enum cudaMemAccessFlags access = cudaMemAccessFlagsProtNone;
    struct cudaMemLocation peer;
    memset(&peer, 0, sizeof peer);
    peer.type = cudaMemLocationTypeDevice;
    peer.id = tpg_ctx_device(ctx, 1);
    const cudaError_t q = cudaDeviceGetDefaultMemPool(&pool, tpg_ctx_device(ctx, 0)) == cudaSuccess
                              ? cudaMemPoolGetAccess(&access, pool, &peer) : cudaErrorInvalidValue;
    (void)cudaGetLastError(); /* a failed query is printed, not left for the next call */
    printf("device %d's access to device %d's default pool: %d (%s)\n", peer.id, tpg_ctx_device(ctx, 0), (int)access,
           cudaGetErrorString(q));
    tpg_tensors t = {pooled, bufs[0][1], NULL, bufs[0][2], NULL, NULL};
    tpg_status s = tpg_op_set_tensors(op, 0, &t); /* all ranks set: the pulls' parameters are built here */
    printf("rank 0's A in pool memory -> %s: %s\n", tpg_status_string(s), tpg_last_error(ctx));
    if (s != TPG_ERR_INVALID_ARGUMENT || !strstr(tpg_last_error(ctx), "may not read"))
        return fail("expected TPG_ERR_INVALID_ARGUMENT (device 1 may not read the pooled shard)", s, ctx);
    tpg_tensors back = {bufs[0][0], bufs[0][1], NULL, bufs[0][2], NULL, NULL};
    if ((s = tpg_op_set_tensors(op, 0, &back)) != TPG_OK) return fail("tpg_op_set_tensors (cudaMalloc again)", s, ctx);
    cudaFreeAsync(pooled, 0);
    return cudaStreamSynchronize(0) == cudaSuccess ? 0 : fail("cudaFreeAsync", TPG_ERR_CUDA, ctx);
}

/* A fresh context's call checked: every rank's A and B shards filled from FRESH_SEED, D poisoned, one call, then
 * each rank's D against the reference (a status of TPG_OK alone would pass a call that wrote nothing). */
static int fresh_call_matches_reference(tpg_ctx *ctx, tpg_op *op, void *bufs[TP][3]) {
    tpg_shard_shape sh[TP];
    if (fill_fresh(ctx, op, bufs, NULL, sh)) return 1;
    tpg_status s = tpg_op_run(op, NULL);
    if (s == TPG_OK) s = tpg_op_sync(op);
    if (s != TPG_OK) return fail("the checked call on a fresh context", s, ctx);
    return d_matches_reference(ctx, bufs, sh, "fresh context");
}

/* Rank 1's stage flags after its late call, against its epoch: at it (the closing barrier's reset), not past it. Read
 * on the op's own non-blocking stream once rank 1's stream is idle, into `words` (pinned before rank 0's launch:
 * pageable copies may synchronize) - epoch, then one flag a row (the copies here are whole: one piece a slot). */
static int late_flags_at_epoch(tpg_ctx *ctx, tpg_op *op, cudaStream_t late, unsigned int *words) {
    tpg_status s = cudaStreamSynchronize(late) == cudaSuccess ? TPG_OK : TPG_ERR_CUDA;
    if (s == TPG_OK) s = tpg__op_read(op, 1, tpg_buf_word(op->buffer[1], op->layout.epoch), &words[0], sizeof *words);
    for (int row = 0; row < TP && s == TPG_OK; row++)
        s = tpg__op_read(op, 1, tpg_buf_stage_flags(op->buffer[1], &op->layout, row), &words[1 + row], sizeof *words);
    if (s != TPG_OK) return fail("reading rank 1's stage flags", s, ctx);
    printf("late rank 1 after its call: epoch %u, stage flags %u %u\n", words[0], words[1], words[2]);
    for (int row = 0; row < TP; row++)
        if (words[1 + row] != words[0])
            return fail("a stage flag of the late rank is not at its epoch: past it, its next call would pass its "
                        "wait on it", TPG_ERR_INVALID_ARGUMENT, ctx);
    return 0;
}

/* --peer-ahead (all-gather): after rank 0 gave up on call e, it starts call e + 1 at once (its start barrier bumps
 * its epoch word, then waits for rank 1) before rank 1 runs the call e it is late for, then rank 1's call e + 1,
 * rank 0's A shard changed between the two on rank 1's stream. Rank 1's call e copies a stage flag from rank 0's
 * epoch word, e + 1 by then: unless its closing barrier sets its flags back to e (barrier.h), its call e + 1 passes
 * its stage wait on that flag and reads the slot before its copy of the new shard lands - a wrong D reported as
 * valid. Returns 0 when both ranks' call e + 1 matches the reference; *late_s: rank 1's two calls and the sync. */
static int peer_ahead(tpg_ctx *ctx, tpg_op *op, void *bufs[TP][3], double *late_s) {
    tpg_shard_shape sh[TP];
    void *a0_new = NULL;
    unsigned int *words = NULL; /* late_flags_at_epoch's */
    cudaStream_t st[TP] = {NULL};
    cudaSetDevice(tpg_ctx_device(ctx, 0));
    tpg_op_shard_shape(op, 0, &sh[0]);
    const size_t a0_bytes = (size_t)(sh[0].a_rows * sh[0].a_cols * 2);
    if (cudaMalloc(&a0_new, a0_bytes) != cudaSuccess || cudaMallocHost((void **)&words, (1 + TP) * sizeof *words) !=
        cudaSuccess)
        return fail("cudaMalloc", TPG_ERR_CUDA, ctx);
    if (fill_fresh(ctx, op, bufs, a0_new, sh)) return 1; /* rank 0's A keeps the old values for now */
    for (int r = 0; r < TP; r++) /* non-blocking: on one GPU the legacy stream would queue rank 1 behind rank 0 */
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
            cudaStreamCreateWithFlags(&st[r], cudaStreamNonBlocking) != cudaSuccess)
            return fail("stream setup", TPG_ERR_CUDA, ctx);
    tpg_status s = tpg_op_run_rank(op, 0, st[0]); /* call e + 1: its start barrier waits for rank 1 */
    if (s != TPG_OK) return fail("tpg_op_run_rank (rank 0's next call)", s, ctx);
    struct timespec pause = {0, 20 * 1000 * 1000}; /* its start barrier has bumped the epoch word by then */
    nanosleep(&pause, NULL);
    const double t1 = now_s();
    if ((s = tpg_op_run_rank(op, 1, st[1])) != TPG_OK) return fail("tpg_op_run_rank (late rank 1)", s, ctx);
    if (late_flags_at_epoch(ctx, op, st[1], words)) return 1; /* deterministic, where the wrong D below is a race */
    cudaSetDevice(tpg_ctx_device(ctx, 1));
    if (cudaMemcpyAsync(bufs[0][0], a0_new, a0_bytes, cudaMemcpyDefault, st[1]) != cudaSuccess)
        return fail("rank 0's new A", TPG_ERR_CUDA, ctx);
    if ((s = tpg_op_run_rank(op, 1, st[1])) != TPG_OK) return fail("tpg_op_run_rank (rank 1's next call)", s, ctx);
    s = tpg_op_sync(op); /* rank 1's late call e fails ("a peer gave up"); the status words hold no call's own */
    *late_s = now_s() - t1;
    printf("late peer: %s after %.3f s: %s\n", tpg_status_string(s), *late_s, tpg_last_error(ctx));
    if (s != TPG_ERR_TIMEOUT || !strstr(tpg_last_error(ctx), "gave up"))
        return fail("expected TPG_ERR_TIMEOUT (a peer gave up) for the late rank", s, ctx);
    for (int r = 0; r < TP; r++) cudaStreamDestroy(st[r]);
    cudaFree(a0_new);
    cudaFreeHost(words);
    return d_matches_reference(ctx, bufs, sh, "the call after the late one, rank 0's A changed");
}

#ifdef TPG_TRACE
static const char *g_trace; /* --trace FILE */

/* Rank 0's next call traced (tpg__trace_enable: every local rank's buffer). */
static int trace_on(tpg_ctx *ctx, tpg_op *op) {
    const tpg_status s = g_trace ? tpg__trace_enable(op, 0) : TPG_OK;
    return s == TPG_OK ? 0 : fail("tpg__trace_enable", s, ctx);
}

/* After rank 0's lone call: its trace (the device's buffer and timed graph nodes) written to g_trace as the CLI
 * writes its own, with the waits and barriers that gave up counted. */
static int trace_write(tpg_ctx *ctx, tpg_op *op) {
    if (!g_trace) return 0;
    size_t bytes = 0;
    tpg_status s = tpg__trace_read(op, 0, NULL, &bytes);
    const size_t node_bytes = TPG_TRACE_MAX_NODES * sizeof(tpg_trace_node_time);
    char *host = s == TPG_OK ? malloc(bytes + node_bytes) : NULL;
    if (s == TPG_OK && !host) s = TPG_ERR_OUT_OF_MEMORY;
    tpg_trace_node_time *nodes = host ? (tpg_trace_node_time *)(host + bytes) : NULL;
    tpg_trace_nodes_info ni = {0, 0, -1.0};
    if (s == TPG_OK) s = tpg__trace_read(op, 0, host, &bytes);
    if (s == TPG_OK) s = tpg__trace_nodes(op, 0, nodes, TPG_TRACE_MAX_NODES, &ni); /* the late rank 1 is traced too */
    if (s != TPG_OK) {
        free(host);
        return fail("reading rank 0's trace", s, ctx);
    }
    const tpg_trace_device dev = {0, tpg_ctx_device(ctx, 0), host, bytes, nodes, ni.count, ni.skipped,
                                  ni.gemm_end_ns};
    const tpg_trace_meta meta = {"gpu_timeout", g_allgather ? "AllGather1D_TilingCD_RotatingA"
                                                            : "ReduceScatter1D_TilingA_RotatingC",
                                 "?", TP, g_m, N, K, 1};
    tpg_trace_summary sum;
    char msg[256] = "";
    FILE *f = fopen(g_trace, "w");
    int bad = !f || tpg_trace_write_json(f, &meta, &dev, 1, &sum, msg, sizeof msg);
    if (f && fclose(f) != 0) bad = 1;
    free(host);
    if (bad) {
        fprintf(stderr, "gpu_timeout: --trace %s: not written (%s)\n", g_trace, msg[0] ? msg : "cannot write");
        return 1;
    }
    printf("trace of rank 0's call: %s, %lld records, %lld waits and barriers gave up\n", g_trace, sum.records,
           sum.gave_up);
    return 0;
}
#else
static int trace_on(tpg_ctx *ctx, tpg_op *op) { return (void)ctx, (void)op, 0; }
static int trace_write(tpg_ctx *ctx, tpg_op *op) { return (void)ctx, (void)op, 0; }
#endif

static void teardown(tpg_ctx *ctx, tpg_op *op, void *bufs[TP][3]) {
    for (int r = 0; r < TP; r++)
        for (int i = 0; i < 3; i++) cudaFree(bufs[r][i]);
    tpg_op_destroy(op);
    tpg_ctx_destroy(ctx);
}

int main(int argc, char **argv) {
    double timeout_ms = 200.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--share-device")) g_share = 1;
        else if (!strcmp(argv[i], "--overlap-barriers")) g_overlap = 1;
        else if (!strcmp(argv[i], "--allgather")) g_allgather = 1;
        else if (!strcmp(argv[i], "--few-tokens")) g_m = 128;
        else if (!strcmp(argv[i], "--copy-engine-partials")) g_ce = 1;
        else if (!strcmp(argv[i], "--peer-ahead")) g_ahead = 1;
#ifdef TPG_TRACE
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc) g_trace = argv[++i];
#endif
        else {
            char *end = NULL;
            timeout_ms = strtod(argv[i], &end);
            if (end == argv[i] || *end || !(timeout_ms >= 1.0 && timeout_ms <= 60000.0)) {
                fprintf(stderr, "gpu_timeout: '%s': give a timeout in ms (1..60000) or one of the documented flags\n",
                        argv[i]);
                return 2;
            }
        }
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watchdog;
    sigaction(SIGALRM, &sa, NULL);
    if (g_ce && g_allgather) {
        fprintf(stderr, "gpu_timeout: --copy-engine-partials is a reduce-scatter config: not with --allgather\n");
        return 2;
    }
    if (g_ahead && (!g_allgather || g_overlap)) { /* beside the barrier rank 0's GEMM would read its old A at once */
        fprintf(stderr, "gpu_timeout: --peer-ahead needs --allgather, and not --overlap-barriers\n");
        return 2;
    }
    const double timeout_s = timeout_ms * 1e-3;
    const int need = g_share ? 1 : TP;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < need) {
        fprintf(stderr, "gpu_timeout: needs %d CUDA device%s, %d visible\n", need, need == 1 ? "" : "s", count);
        return 3;
    }
    tpg_ctx *ctx;
    tpg_op *op;
    void *bufs[TP][3] = {{0}};
    if (setup((uint64_t)(timeout_s * 1e9), &ctx, &op, bufs)) return 1;

    if (!g_share && wrong_device_stream(ctx, op)) return 1;
    if (!g_share && g_allgather && tpg__op_pulls(op) && pool_shard_refused(ctx, op, bufs)) return 1; /* (copy_plan.h) */

    unsigned short *d0 = NULL; /* pinned before the launch: pageable copies and allocations may synchronize */
    cudaStream_t probe = NULL;
    cudaSetDevice(tpg_ctx_device(ctx, 0));
    if (g_allgather && (cudaMallocHost((void **)&d0, sizeof *d0) != cudaSuccess ||
                        cudaStreamCreateWithFlags(&probe, cudaStreamNonBlocking) != cudaSuccess))
        return fail("D probe setup", TPG_ERR_CUDA, ctx);
    if (trace_on(ctx, op)) return 1;
    arm("rank 0's call without rank 1, and its sync", 4.0 * timeout_s + 20.0);
    const double t0 = now_s();
    tpg_status s = tpg_op_run_rank(op, 0, NULL); /* rank 1 never arrives */
    if (s != TPG_OK) return fail("tpg_op_run_rank", s, ctx);
    if (g_allgather) { /* halfway through the wait: has stage 0 (own shard, rows block 0 of D) been written yet? */
        struct timespec half = {(time_t)(timeout_s / 2), (long)(1e9 * (timeout_s / 2 - (double)(time_t)(timeout_s / 2)))};
        nanosleep(&half, NULL);
        /* on a non-blocking stream of its own: the graph runs on the legacy stream (NULL above), which a plain
         * cudaMemcpy would wait for */
        if (cudaMemcpyAsync(d0, bufs[0][2], sizeof *d0, cudaMemcpyDeviceToHost, probe) != cudaSuccess ||
            cudaStreamSynchronize(probe) != cudaSuccess)
            return fail("D probe", TPG_ERR_CUDA, ctx);
        printf("stage 0 before the start barrier passed: %s\n", *d0 != 0x3c3c ? "yes" : "no");
    }
    s = tpg_op_sync(op);
    const double waited = now_s() - t0;
    if (g_allgather) { /* after the sync: freeing pinned memory may synchronize the device */
        cudaStreamDestroy(probe);
        cudaFreeHost(d0);
    }
    printf("missing peer: %s after %.3f s (bound %.3f s): %s\n", tpg_status_string(s), waited, timeout_s,
           tpg_last_error(ctx));
    if (s != TPG_ERR_TIMEOUT) return fail("expected TPG_ERR_TIMEOUT", s, ctx);
    if (trace_write(ctx, op)) return 1;
    /* One timeout, not one per wait: the start barrier's, the GEMM's stage wait and the closing barrier's give up
     * together once the first has timed out (gemm_params.h); and not less than one (within_bound). */
    if (!within_bound(waited, timeout_s)) {
        fprintf(stderr, "gpu_timeout: took %.3f s, outside [0.95, 1.5] x the bound %.3f s (+ %.2f s)\n", waited,
                timeout_s, TIMEOUT_SLACK_S);
        return 1;
    }
    /* The late peer: rank 1 runs the call rank 0 gave up on; its waits pass on rank 0's arrivals, or time out. */
    arm("the late rank 1's call and its sync", 4.0 * timeout_s + 20.0);
    double late = 0.0;
    if (g_ahead) {
        if (peer_ahead(ctx, op, bufs, &late)) return 1;
    } else {
        if ((s = tpg_op_run_rank(op, 1, NULL)) != TPG_OK) return fail("tpg_op_run_rank (late rank 1)", s, ctx);
        const double t1 = now_s();
        s = tpg_op_sync(op);
        late = now_s() - t1;
        printf("late peer: %s after %.3f s: %s\n", tpg_status_string(s), late, tpg_last_error(ctx));
        if (s != TPG_ERR_TIMEOUT || !strstr(tpg_last_error(ctx), "gave up"))
            return fail("expected TPG_ERR_TIMEOUT (a peer gave up) for the late rank", s, ctx);
    }
    if (late > 1.5 * timeout_s + TIMEOUT_SLACK_S)
        return fail("the late rank's call took longer than 1.5 bounds", TPG_ERR_TIMEOUT, ctx);
    teardown(ctx, op, bufs);

    /* A fresh context: both ranks run, twice (the epochs of the second call must line up too), the second call on
     * fresh operands and checked against the reference on every rank. */
    arm("the fresh context's calls", 120.0);
    if (setup(10ull * 1000000000ull, &ctx, &op, bufs)) return 1;
    if ((s = tpg_op_run(op, NULL)) != TPG_OK) return fail("tpg_op_run", s, ctx);
    if ((s = tpg_op_sync(op)) != TPG_OK) return fail("tpg_op_sync on a fresh context", s, ctx);
    if (fresh_call_matches_reference(ctx, op, bufs)) return 1;
    printf("fresh context: 2 calls completed, the second checked: %s\n", tpg_status_string(s));
    /* A third on streams of the caller's, destroyed once the call is enqueued: the op keeps none (it waits on an event
     * of its own), so the sync neither touches a dead handle nor fails */
    cudaStream_t mine[TP] = {NULL};
    for (int r = 0; r < TP; r++)
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
            cudaStreamCreateWithFlags(&mine[r], cudaStreamNonBlocking) != cudaSuccess)
            return fail("stream setup", TPG_ERR_CUDA, ctx);
    if ((s = tpg_op_run(op, mine)) != TPG_OK) return fail("tpg_op_run on the caller's streams", s, ctx);
    for (int r = 0; r < TP; r++) cudaStreamDestroy(mine[r]);
    if ((s = tpg_op_sync(op)) != TPG_OK || cudaGetLastError() != cudaSuccess)
        return fail("tpg_op_sync after the caller destroyed its streams", s, ctx);
    printf("streams destroyed after the launch: sync %s\n", tpg_status_string(s));
    teardown(ctx, op, bufs);
    alarm(0);
    printf("1 passed, 0 failed\n");
    return 0;
}
