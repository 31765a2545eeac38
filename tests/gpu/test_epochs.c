/* GPU test: calls back to back with new operands every call, each checked against a host reference, for every
 * schedule, across changes of the op's graphs between calls.
 *
 * Why: the CLI and tier 2 check an op's first call against the reference and its later calls only for bitwise
 * identity, on the same operands. A later call whose flags or epochs were stale (a GEMM that took the previous
 * call's flags for this call's) would read the previous call's slots - identical bytes there, so nothing would
 * see it. Here every call has its own A and B, written on the rank's stream right after the previous call (the
 * closing barrier makes that legal), and its D is copied out on the same stream; the host syncs only at the end.
 * Between calls the op switches the barriers beside the GEMM on (tpg_op_set_overlap_barriers) and off, and cuts
 * the all-gather copies into pieces (tpg_op_set_copy_chunks), each of which rebuilds the graphs. Every schedule's
 * default config, and the reduce-scatter configs with pulled or copy-engine partials.
 *
 * Operands are multiples of 1/8 in [-1, 1], so the fp32 host reference is exact (sums of at most K = 256 products
 * of 1/64 steps); D is bf16 (reduce-scatter adds bf16-rounded partials), hence the bound.
 * Run: build/tests/gpu_epochs [tp] [--share-device] [--processes [--nccl]] [--capture]. Exit 0 on success, 1 on a
 * failed check or call, 3 when too few CUDA devices are visible (the caller reports a skip). With --share-device in
 * one process the copy-engine configs' runs need CUDA_DEVICE_MAX_CONNECTIONS=32, and are skipped without (said).
 *
 * --processes runs one process per rank (multi-process mode, tests/gpu/mp_harness.h), each checking its own
 * rank's D. Odd ranks then make each change one call later than even ranks, so for a call or two the ranks run
 * in different modes, which the API allows ("ranks may differ"). With --share-device the processes take turns
 * on one GPU.
 *
 * --nccl (with --processes): the contexts use the NCCL transport (tpg_rank_config.transport), which has no barriers
 * beside the GEMM: between calls the op's graphs are updated in place instead (tpg_op_set_scalars, which keeps the
 * captured transfers), and the all-gather copies are cut into pieces on every rank before the same call (the pieces
 * are NCCL messages, which both sides must cut alike); reduce-scatter partials move in row bands. NCCL refuses two
 * ranks on one GPU of one host, so with --share-device each process names its own host (NCCL_HOSTID, unless set)
 * and the ranks talk over NCCL's socket transport on the loopback interface: the data path of ranks on different
 * nodes, on one GPU. TPG_NCCL_LIBRARY names the library when libnccl.so.2 is not on the loader's path.
 *
 * --capture records each call (operand copies, tpg_op_run, D's copy back) into a CUDA graph per rank by stream
 * capture, as a framework's graph capture would, and launches that graph instead; after the checks every
 * captured graph is launched once more, in order, on new operands (the host rewrites the pinned buffers the
 * graphs copy from), and checked again: the graphs of the table's mode and of the barriers beside the GEMM then
 * run after the op itself has changed mode, so every epoch must come from the device, not from the launch. With
 * --nccl one captured graph outlives the context, whose destroy must return within DESTROY_BOUND_S all the same.
 */
#define _POSIX_C_SOURCE 200112L /* setenv under -std=c11 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "mp_harness.h"
#include "route_config.h"
#include "tpgemm.h"

/* M big enough that 3 pieces asked cut every all-gather shard at TP = 2 and 4 into 2 or 3 (whole tiles); the gathered
 * walk's run takes 64 rows a stage instead (run_all_schedules) */
enum { M_DEFAULT = 1024, N = 1536, K = 256, CALLS = 6, MAX_TP = 8 };
static int M = M_DEFAULT;

static int fail(const char *what, tpg_status s, const tpg_ctx *ctx) {
    fprintf(stderr, "gpu_epochs: %s: %s (%s)\n", what, tpg_status_string(s), tpg_last_error(ctx));
    return 1;
}

static uint16_t to_bf16(float f) { /* exact for the operands here (multiples of 1/8); round to nearest even */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

static float from_bf16(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Operands of one call: A (M x K) and B (N x K), values k/8, k in -8..8, from a per-call seed. */
static void make_operands(unsigned seed, float *a, float *b) {
    uint32_t x = seed * 2654435761u + 12345u;
    for (int i = 0; i < M * K + N * K; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        const float v = (float)((int)(x % 17u) - 8) / 8.0f;
        if (i < M * K) a[i] = v;
        else b[i - M * K] = v;
    }
}

/* Host pointers of one call for rank r: its A and B shards (bf16) and where its D comes back. */
typedef struct call_buffers {
    uint16_t *a[MAX_TP], *b[MAX_TP], *d[MAX_TP];
} call_buffers;

/* rows x cols block at (row0, col0) of a row-major matrix with `ld` columns, as bf16 */
static void block_bf16(const float *src, int64_t ld, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
                       uint16_t *dst) {
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) dst[i * cols + j] = to_bf16(src[(row0 + i) * ld + col0 + j]);
}

/* max |D_r - ref| / max |ref| over rank r's block of the call's D = A . B^T */
static double block_error(const float *a, const float *b, const tpg_shard_shape *sh, const uint16_t *d) {
    double worst = 0.0, scale = 0.0;
    for (int64_t i = 0; i < sh->d_rows; i++)
        for (int64_t j = 0; j < sh->d_cols; j++) {
            const float *ar = a + (sh->d_row0 + i) * K, *br = b + (sh->d_col0 + j) * K;
            float ref = 0.0f;
            for (int k = 0; k < K; k++) ref += ar[k] * br[k];
            const double got = from_bf16(d[i * sh->d_cols + j]);
            if (!isfinite(got)) return INFINITY;
            worst = fmax(worst, fabs(got - ref));
            scale = fmax(scale, fabs(ref));
        }
    return worst / fmax(scale, 1e-30);
}

/* What changes before call c (each rebuilds the graphs, so calls on both sides of it are checked); `late`
 * (0 or 1) delays the first two changes by that many calls. The gathered walk's op also switches between its GEMM
 * pulling the shards (calls 0 and 5) and copy-engine nodes (1: asked for, 2-4: the barriers beside the GEMM); the
 * one-hop walk's between one-hop (0 and 4-5) and its ring (1-3; every rank alike before the same call: tpgemm.h). */
static tpg_status change_before(tpg_op *op, int c, int allgather, int late, int nccl, int few_rows) {
    if (few_rows && (c == 1 || c == 4))
        return allgather ? tpg_op_set_gather_copy_engine(op, c == 1) : tpg_op_set_rs_ring(op, c == 1);
    if (nccl) { /* no barriers beside the GEMM over NCCL (tpgemm.h): an update in place instead; the copy pieces are
                   NCCL messages, so every rank cuts them before the same call */
        if (c == 2) return tpg_op_set_scalars(op, 1.0f, 0.0f);
        if (c == 3 && allgather) return tpg_op_set_copy_chunks(op, 3);
        return c == 5 ? tpg_op_sync(op) : TPG_OK;
    }
    if (c == 2 + late) return tpg_op_set_overlap_barriers(op, 1);
    if (c == 3 + late && allgather) return tpg_op_set_copy_chunks(op, 3);
    if (c == 5) { /* sync while the mode is on: it also compares each rank's start-barrier epoch with its GEMM's */
        tpg_status st = tpg_op_sync(op);
        return st != TPG_OK ? st : tpg_op_set_overlap_barriers(op, 0);
    }
    return TPG_OK;
}

/* The local ranks' device buffers, streams and shard shapes of one op. */
typedef struct rank_set {
    int r0, r1;
    tpg_shard_shape sh[MAX_TP];
    void *dev[MAX_TP][3]; /* A, B, D */
    cudaStream_t s[MAX_TP];
} rank_set;

static size_t bytes_of(const rank_set *rs, int r, int i) {
    const tpg_shard_shape *h = &rs->sh[r];
    return (size_t)(i == 0 ? h->a_rows * h->a_cols : i == 1 ? h->b_rows * h->b_cols : h->d_rows * h->d_cols) * 2;
}

/* Call c on each local rank's stream: its operands in, the op, its D out. */
static tpg_status enqueue_call(tpg_op *op, tpg_ctx *ctx, const rank_set *rs, const call_buffers *cb) {
    for (int r = rs->r0; r < rs->r1; r++) /* on the rank's stream, after its previous call's closing barrier */
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
            cudaMemcpyAsync(rs->dev[r][0], cb->a[r], bytes_of(rs, r, 0), cudaMemcpyHostToDevice, rs->s[r]) != cudaSuccess ||
            cudaMemcpyAsync(rs->dev[r][1], cb->b[r], bytes_of(rs, r, 1), cudaMemcpyHostToDevice, rs->s[r]) != cudaSuccess)
            return TPG_ERR_CUDA;
    tpg_status st = tpg_op_run(op, rs->s);
    if (st != TPG_OK) return fail("tpg_op_run", st, ctx), st;
    for (int r = rs->r0; r < rs->r1; r++)
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
            cudaMemcpyAsync(cb->d[r], rs->dev[r][2], bytes_of(rs, r, 2), cudaMemcpyDeviceToHost, rs->s[r]) != cudaSuccess)
            return TPG_ERR_CUDA;
    return TPG_OK;
}

/* enqueue_call recorded by stream capture on every local rank's stream, one graph per rank (exec[r]), then
 * launched there. */
static tpg_status capture_call(tpg_op *op, tpg_ctx *ctx, const rank_set *rs, const call_buffers *cb,
                               cudaGraphExec_t *exec) {
    for (int r = rs->r0; r < rs->r1; r++)
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
            cudaStreamBeginCapture(rs->s[r], cudaStreamCaptureModeRelaxed) != cudaSuccess)
            return TPG_ERR_CUDA;
    tpg_status st = enqueue_call(op, ctx, rs, cb);
    for (int r = rs->r0; r < rs->r1; r++) { /* every capture ends, also after a failure */
        cudaGraph_t g = NULL;
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess || cudaStreamEndCapture(rs->s[r], &g) != cudaSuccess ||
            (st == TPG_OK && cudaGraphInstantiate(&exec[r], g, 0) != cudaSuccess))
            st = st == TPG_OK ? TPG_ERR_CUDA : st;
        if (g) cudaGraphDestroy(g);
    }
    return st;
}

/* A call with only the first local rank's stream captured must be refused (the ranks would fall out of step);
 * returns 1 if it was not. Needs two local ranks. */
static int mixed_capture_refused(tpg_op *op, tpg_ctx *ctx, const rank_set *rs) {
    cudaGraph_t g = NULL;
    if (cudaSetDevice(tpg_ctx_device(ctx, rs->r0)) != cudaSuccess ||
        cudaStreamBeginCapture(rs->s[rs->r0], cudaStreamCaptureModeRelaxed) != cudaSuccess)
        return 1;
    const tpg_status st = tpg_op_run(op, rs->s);
    const int ended = cudaStreamEndCapture(rs->s[rs->r0], &g) == cudaSuccess;
    if (g) cudaGraphDestroy(g);
    printf("half-captured call: %s (%s)\n", tpg_status_string(st), tpg_last_error(ctx));
    return st != TPG_ERR_INVALID_ARGUMENT || !ended;
}

/* Ranks on one device (share_devices) given one stream, or the legacy default stream beside a blocking one, would run
 * a call's graphs one after the other, the first rank's start barrier waiting for the second until the timeout:
 * refused before anything is launched (the op stays in step: the calls after it run). */
static int ordered_streams_refused(tpg_op *op, tpg_ctx *ctx, const rank_set *rs) {
    if (rs->r1 - rs->r0 < 2 || tpg_ctx_device(ctx, rs->r0) != tpg_ctx_device(ctx, rs->r0 + 1)) return 0;
    cudaStream_t same[MAX_TP] = {0}, legacy[MAX_TP] = {0};
    for (int r = rs->r0; r < rs->r1; r++) same[r] = rs->s[rs->r0];
    cudaStream_t blocking = NULL;
    if (cudaSetDevice(tpg_ctx_device(ctx, rs->r0)) != cudaSuccess || cudaStreamCreate(&blocking) != cudaSuccess)
        return 1;
    legacy[rs->r0 + 1] = blocking; /* rank r0 on the legacy stream (0), the next on a blocking one */
    const tpg_status st1 = tpg_op_run(op, same);
    printf("one stream for ranks on one device: %s (%s)\n", tpg_status_string(st1), tpg_last_error(ctx));
    const tpg_status st2 = tpg_op_run(op, legacy);
    printf("the legacy stream beside a blocking one: %s (%s)\n", tpg_status_string(st2), tpg_last_error(ctx));
    cudaStreamDestroy(blocking);
    return st1 != TPG_ERR_INVALID_ARGUMENT || st2 != TPG_ERR_INVALID_ARGUMENT;
}

static tpg_status launch_captured(tpg_ctx *ctx, const rank_set *rs, cudaGraphExec_t *exec) {
    for (int r = rs->r0; r < rs->r1; r++)
        if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess || cudaGraphLaunch(exec[r], rs->s[r]) != cudaSuccess)
            return TPG_ERR_CUDA;
    return TPG_OK;
}

/* Pinned buffers of every call, rank's blocks of that call's operands written (the stream's earlier work that read
 * them has finished); pass 1 gives new operands to the same buffers. */
static void stage_operands(const rank_set *rs, int pass, int c, float *ac, float *bc, call_buffers *cb) {
    make_operands(1000u * (unsigned)(pass + 1) + (unsigned)c, ac, bc);
    for (int r = rs->r0; r < rs->r1; r++) {
        const tpg_shard_shape *h = &rs->sh[r];
        block_bf16(ac, K, h->a_row0, h->a_col0, h->a_rows, h->a_cols, cb->a[r]);
        block_bf16(bc, K, h->b_row0, h->b_col0, h->b_rows, h->b_cols, cb->b[r]);
    }
}

/* Allocates rank r's device buffers, stream and pinned buffers, and gives the op its tensors. */
static int setup_rank(tpg_op *op, tpg_ctx *ctx, rank_set *rs, int r, call_buffers *calls) {
    tpg_status st = tpg_op_shard_shape(op, r, &rs->sh[r]);
    if (st != TPG_OK) return fail("tpg_op_shard_shape", st, ctx);
    /* non-blocking, as a framework's streams: nothing here waits for them implicitly (tpg_op_sync waits for the
     * op's launches on them; the test synchronizes them itself before reading D) */
    if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess ||
        cudaStreamCreateWithFlags(&rs->s[r], cudaStreamNonBlocking) != cudaSuccess)
        return 1;
    for (int i = 0; i < 3; i++)
        if (cudaMalloc(&rs->dev[r][i], bytes_of(rs, r, i)) != cudaSuccess) return 1;
    for (int c = 0; c < CALLS; c++)
        if (cudaMallocHost((void **)&calls[c].a[r], bytes_of(rs, r, 0)) != cudaSuccess ||
            cudaMallocHost((void **)&calls[c].b[r], bytes_of(rs, r, 1)) != cudaSuccess ||
            cudaMallocHost((void **)&calls[c].d[r], bytes_of(rs, r, 2)) != cudaSuccess)
            return 1;
    tpg_tensors t = {rs->dev[r][0], rs->dev[r][1], NULL, rs->dev[r][2], NULL, NULL};
    if ((st = tpg_op_set_tensors(op, r, &t)) != TPG_OK) return fail("tpg_op_set_tensors", st, ctx);
    return 0;
}

/* Every call of one pass checked against the host reference; returns 1 if any fails. */
static int check_pass(const rank_set *rs, int tp, const char *label, int pass, int allgather, const float *a,
                      const float *b, const call_buffers *calls, int me) {
    int rc = 0;
    for (int c = 0; c < CALLS; c++) {
        double worst = 0.0;
        for (int r = rs->r0; r < rs->r1; r++)
            worst = fmax(worst, block_error(a + (size_t)c * M * K, b + (size_t)c * N * K, &rs->sh[r], calls[c].d[r]));
        /* all-gather: D rounded to bf16 once; reduce-scatter: tp - 1 bf16 partials too (runtime/src/reference.cu) */
        const int ok = worst <= (allgather ? 1e-2 : 2e-2 * sqrt((double)tp));
        if (me >= 0) printf("rank %d: ", me);
        printf("%s call %d%s: max error %.2e %s\n", label, c, pass ? " (captured, launched again)" : "", worst,
               ok ? "ok" : "FAILED");
        rc |= !ok;
    }
    return rc;
}

/* Runs that passed, counted as they end: the summary line reports these, not the planned count less the failures,
 * so a run_all_schedules that ran nothing reads "0 passed" (and main checks the sum against schedules_run). */
static int runs_passed;
/* --capture --nccl: one captured call's graph outlives its op and the context, as a framework's graph object left to
 * its garbage collector does: NCCL's destroy waits for every graph holding one of its plans, tpg_ctx_destroy must not
 * (rank_main times it, then destroys this graph). */
static cudaGraphExec_t outliving_graph;
enum { DESTROY_BOUND_S = 5 };

/* A destroy that waits for the graph (destroyed only after it) would never return: say so, and fail the rank. */
static void destroy_hung(int sig) {
    (void)sig;
    static const char msg[] = "gpu_epochs: tpg_ctx_destroy did not return with a captured call's graph alive (it must "
                              "not wait for the caller's graphs)\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(1);
    _exit(1);
}

/* config: a name, or NULL for the schedule's default */
static int run_schedule(tpg_ctx *ctx, int tp, const char *schedule, const char *config, int allgather, int capture,
                        int nccl) {
    const int few_rows = M != M_DEFAULT; /* run_all_schedules' last runs: gathered or one-hop */
    int cfg, rc = 1;
    tpg_op *op = NULL;
    rank_set rs;
    call_buffers calls[CALLS];
    cudaGraphExec_t exec[CALLS][MAX_TP];
    memset(&rs, 0, sizeof rs);
    memset(calls, 0, sizeof calls);
    memset(exec, 0, sizeof exec);
    float *a = malloc(sizeof(float) * M * K * CALLS), *b = malloc(sizeof(float) * N * K * CALLS);
    const int me = tpg_ctx_rank(ctx);
    rs.r0 = me < 0 ? 0 : me, rs.r1 = me < 0 ? tp : me + 1; /* the local ranks */
    tpg_status st = tpg_config_find(config, schedule, tp, TPG_DTYPE_BF16, &cfg);
    tpg_op_desc desc = {cfg, M, N, K, 1, 1.0f, 0.0f};
    if (st == TPG_OK) st = tpg_op_create(ctx, &desc, &op);
    if (st != TPG_OK || !a || !b) {
        fail(st != TPG_OK ? "op setup" : "host allocation", st != TPG_OK ? st : TPG_ERR_OUT_OF_MEMORY, ctx);
        goto done;
    }
    for (int r = rs.r0; r < rs.r1; r++)
        if (setup_rank(op, ctx, &rs, r, calls)) goto cuda;
    if (capture && rs.r1 - rs.r0 > 1 && mixed_capture_refused(op, ctx, &rs)) {
        fprintf(stderr, "gpu_epochs: %s: a call with one rank's stream captured was not refused\n", schedule);
        goto done;
    }
    if (ordered_streams_refused(op, ctx, &rs)) {
        fprintf(stderr, "gpu_epochs: %s: streams that order one rank's launch behind another's were not refused\n",
                schedule);
        goto done;
    }
    rc = 0;
    for (int pass = 0; pass < 1 + capture && !rc; pass++) {
        for (int c = 0; c < CALLS; c++) {
            stage_operands(&rs, pass, c, a + (size_t)c * M * K, b + (size_t)c * N * K, &calls[c]);
            if (pass == 0 && (st = change_before(op, c, allgather, me < 0 ? 0 : me % 2, nccl, few_rows)) != TPG_OK) {
                char what[160];
                snprintf(what, sizeof what, "%s: changing the op before call %d", config ? config : schedule, c);
                fail(what, st, ctx);
                rc = 1;
                goto done;
            }
            if (pass == 0)
                st = capture ? capture_call(op, ctx, &rs, &calls[c], exec[c]) : enqueue_call(op, ctx, &rs, &calls[c]);
            if (st == TPG_OK && capture) st = launch_captured(ctx, &rs, exec[c]);
            if (st != TPG_OK) {
                rc = 1;
                goto cuda;
            }
        }
        if ((st = tpg_op_sync(op)) != TPG_OK) {
            fail("tpg_op_sync", st, ctx);
            rc = 1;
            goto done;
        }
        for (int r = rs.r0; r < rs.r1; r++)
            if (cudaSetDevice(tpg_ctx_device(ctx, r)) != cudaSuccess || cudaStreamSynchronize(rs.s[r]) != cudaSuccess) {
                rc = 1;
                goto cuda;
            }
        rc = check_pass(&rs, tp, config ? config : schedule, pass, allgather, a, b, calls, me);
    }
    goto done;
cuda:
    fprintf(stderr, "gpu_epochs: %s: CUDA error: %s\n", schedule, cudaGetErrorString(cudaGetLastError()));
done:
    runs_passed += !rc;
    if (op) tpg_op_destroy(op);
    for (int c = 0; c < CALLS; c++)
        for (int r = rs.r0; r < rs.r1; r++)
            if (exec[c][r] && capture && nccl && !outliving_graph) outliving_graph = exec[c][r];
            else if (exec[c][r]) cudaGraphExecDestroy(exec[c][r]);
    for (int r = rs.r0; r < rs.r1; r++) {
        for (int i = 0; i < 3; i++) cudaFree(rs.dev[r][i]);
        for (int c = 0; c < CALLS; c++) cudaFreeHost(calls[c].a[r]), cudaFreeHost(calls[c].b[r]), cudaFreeHost(calls[c].d[r]);
        if (rs.s[r]) cudaStreamDestroy(rs.s[r]);
    }
    free(a);
    free(b);
    return rc;
}

/* The four defaults, then each reduce-scatter default's family on the two routes of partials it does not take
 * (tests/gpu/route_config.h: pushed, pulled, carried by copy engine): pulled, the receiver reads the sender's slot,
 * whose next call's write only the closing barrier keeps from overtaking the read; carried (copy_engine_partials), the
 * graph's copy chains wait on the sender's tile-row counts and zero them every call (a stale count would let a band go
 * before its tiles wrote it; over NCCL the config runs as NCCL moves any partial); then the gathered all-gather walk
 * (64 rows a stage), whose GEMM reads the peers' shards itself unless the copy engine brings them, and the one-hop
 * reduce-scatter walk (64 rows a stage), whose REDUCE reads every rank's slots, pushing and carried, the carried
 * config's chains coming and going as its ring does (none of these over NCCL, which runs stage after stage). Every
 * route runs whichever the defaults take, so the count of runs is fixed (schedules_run). Returns the number of
 * failed schedules. */
/* Copy-engine partials with every rank on one GPU in one process need 32 hardware queues (runtime/src/ce_partials.c),
 * which CUDA takes from CUDA_DEVICE_MAX_CONNECTIONS at its start; without them tpg_op_create refuses such an op (a
 * test of its own in tests/test_gpu.py). Here those runs are then skipped, said on stderr, and counted apart. */
static int carried_skipped;

static int carried_runs_skip(int share_one_process) {
    const char *q = getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    return share_one_process && !(q && atoi(q) >= 32); /* the runtime's test (ce_partials.c) */
}

/* run_schedule of the config of schedule's default family on `route`, or its skip (carried_runs_skip) where its
 * partials go by copy engine. */
static int run_routed(tpg_ctx *ctx, int tp, const char *schedule, partial_route route, int capture, int nccl,
                      int skip) {
    int index;
    tpg_config_info c;
    tpg_status st = route_config(schedule, tp, route, &index);
    if (st == TPG_OK) st = tpg_config_get(index, &c);
    if (st != TPG_OK) {
        char what[160];
        snprintf(what, sizeof what, "%s at TP = %d: the config on route %d", schedule, tp, (int)route);
        return fail(what, st, NULL);
    }
    if (!(skip && c.copy_engine_partials)) return run_schedule(ctx, tp, schedule, c.name, 0, capture, nccl);
    fprintf(stderr, "gpu_epochs: %s (M = %d) skipped: copy-engine partials with every rank on one GPU need "
            "CUDA_DEVICE_MAX_CONNECTIONS=32 in the environment (tests/test_gpu.py sets it)\n", c.name, M);
    carried_skipped++;
    return 0;
}

static int run_all_schedules(tpg_ctx *ctx, int tp, int capture, int nccl, int skip_carried) {
    static const char *const schedules[] = {"AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB",
                                            "ReduceScatter1D_TilingA_RotatingC", "ReduceScatter1D_TilingB_RotatingC"};
    static const partial_route routes[] = {ROUTE_PUSH, ROUTE_PULL, ROUTE_CE};
    int failed = 0;
    for (int i = 0; i < 2; i++) failed += run_schedule(ctx, tp, schedules[i], NULL, 1, capture, nccl);
    for (int i = 2; i < 4; i++) { /* the default's own route first, as a default call runs it */
        int def;
        tpg_config_info c;
        tpg_status st = tpg_config_find(NULL, schedules[i], tp, TPG_DTYPE_BF16, &def);
        if (st == TPG_OK) st = tpg_config_get(def, &c);
        if (st != TPG_OK) return failed + fail(schedules[i], st, NULL);
        failed += run_routed(ctx, tp, schedules[i], route_of(&c), capture, nccl, skip_carried);
        for (int r = 0; r < 3; r++)
            if (routes[r] != route_of(&c))
                failed += run_routed(ctx, tp, schedules[i], routes[r], capture, nccl, skip_carried);
    }
    if (!nccl) {
        M = 64 * tp;
        failed += run_schedule(ctx, tp, schedules[0], NULL, 1, capture, nccl);
        failed += run_routed(ctx, tp, schedules[2], ROUTE_PUSH, capture, nccl, skip_carried);
        failed += run_routed(ctx, tp, schedules[2], ROUTE_CE, capture, nccl, skip_carried);
        M = M_DEFAULT;
    }
    return failed;
}

#define WAIT_TIMEOUT_NS 5000000000ull /* the context's bound on every device-side wait */
enum { HANG_S = 240 };

typedef struct options {
    int tp, share, capture, nccl;
} options;

static int schedules_run(const options *o) { return o->nccl ? 8 : 11; }

/* The summary line; 1 where a run failed or the runs that ended do not add up to the planned ones. */
static int report(const options *o, int rank, int failed) {
    if (rank >= 0) printf("rank %d: ", rank);
    printf("%d passed, %d failed", runs_passed, failed);
    if (carried_skipped) printf(", %d skipped (copy-engine partials: see above)", carried_skipped);
    printf("\n");
    if (runs_passed + failed + carried_skipped != schedules_run(o)) {
        fprintf(stderr, "gpu_epochs: %d runs ended (passed, failed or skipped), %d planned\n",
                runs_passed + failed + carried_skipped, schedules_run(o));
        return 1;
    }
    return failed ? 1 : 0;
}

/* --nccl --share-device: one NCCL "host" per rank process, talking over loopback sockets (header comment). */
static void nccl_one_gpu_env(int rank) {
    char host[32];
    snprintf(host, sizeof host, "tpgemm-test-rank-%d", rank);
    setenv("NCCL_HOSTID", host, 0);
    setenv("NCCL_SOCKET_IFNAME", "lo", 0);
    setenv("NCCL_IB_DISABLE", "1", 0);
}

static int rank_main(mp_rank *g, void *arg) {
    const options *o = arg;
    const int rank = g->rank, dev = o->share ? 0 : rank;
    if (o->nccl && o->share) nccl_one_gpu_env(rank);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < (o->share ? 1 : o->tp)) return 3;
    if (cudaSetDevice(dev) != cudaSuccess) return fail("cudaSetDevice", TPG_ERR_CUDA, NULL);
    tpg_rank_config rc = TPG_RANK_CONFIG_INIT;
    rc.tp = o->tp, rc.rank = rank, rc.device = dev, rc.timeout_ns = WAIT_TIMEOUT_NS;
    rc.allgather = mp_allgather, rc.user = g, rc.share_devices = o->share;
    rc.transport = o->nccl ? TPG_TRANSPORT_NCCL : TPG_TRANSPORT_PEER;
    tpg_ctx *ctx;
    tpg_status st = tpg_ctx_create_rank(&rc, &ctx);
    if (st != TPG_OK) return fail("tpg_ctx_create_rank", st, NULL);
    const int failed = run_all_schedules(ctx, o->tp, o->capture, o->nccl, 0);
    struct timespec t0, t1;
    if (outliving_graph) {
        signal(SIGALRM, destroy_hung);
        alarm(2 * DESTROY_BOUND_S);
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    tpg_ctx_destroy(ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    alarm(0);
    const double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    int late = 0;
    if (outliving_graph) {
        late = took > DESTROY_BOUND_S;
        if (late)
            fprintf(stderr, "gpu_epochs: rank %d: tpg_ctx_destroy took %.1f s with a captured call's graph alive (it "
                    "must not wait for the caller's graphs)\n", rank, took);
        else
            printf("rank %d: tpg_ctx_destroy returned in %.3f s with a captured call's graph alive\n", rank, took);
        cudaGraphExecDestroy(outliving_graph);
        /* the library's thread now tears NCCL's communicator down: let it end before the process does */
        const struct timespec settle = {1, 0};
        nanosleep(&settle, NULL);
    }
    return report(o, rank, failed) || late;
}

int main(int argc, char **argv) {
    options o = {2, 0, 0, 0};
    int processes = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--share-device")) o.share = 1;
        else if (!strcmp(argv[i], "--processes")) processes = 1;
        else if (!strcmp(argv[i], "--capture")) o.capture = 1;
        else if (!strcmp(argv[i], "--nccl")) o.nccl = 1;
        else o.tp = atoi(argv[i]);
    }
    if (o.tp < 2 || o.tp > MAX_TP) {
        fprintf(stderr, "gpu_epochs: tp must be 2..%d\n", MAX_TP);
        return 1;
    }
    if (o.nccl && !processes) {
        fprintf(stderr, "gpu_epochs: --nccl needs --processes (the NCCL transport is multi-process only)\n");
        return 1;
    }
    if (processes) return mp_run(o.tp, HANG_S, rank_main, &o); /* no CUDA call before the fork */
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < (o.share ? 1 : o.tp)) {
        fprintf(stderr, "gpu_epochs: needs %d CUDA device(s), %d visible\n", o.share ? 1 : o.tp, count);
        return 3;
    }
    tpg_ctx_config cc = TPG_CTX_CONFIG_INIT;
    cc.tp = o.tp;
    cc.share_devices = o.share;
    cc.timeout_ns = WAIT_TIMEOUT_NS;
    tpg_ctx *ctx;
    tpg_status st = tpg_ctx_create(&cc, &ctx);
    if (st != TPG_OK) return fail("tpg_ctx_create", st, NULL);
    const int failed = run_all_schedules(ctx, o.tp, o.capture, 0, carried_runs_skip(o.share));
    tpg_ctx_destroy(ctx);
    return report(&o, -1, failed);
}
