/* GPU test (TP devices, or 1 with --share-device; TP processes, TP = 2 unless --tp N): multi-process mode end to
 * end, with the bootstrap all-gather done through shared memory between forked processes (what torch.distributed
 * does in a framework).
 *
 *   1. A rank whose own arguments are wrong (NULL desc) fails every rank's tpg_op_create instead of
 *      leaving its peer waiting in the all-gather.
 *   2. An all-gather op runs and matches the reference; tpg_op_set_rs_ring with rank 1 choosing otherwise fails on
 *      every rank (a collective whose choice must agree), alike it passes; so does tpg_op_set_copy_chunks over
 *      NCCL, where the peer transport lets the ranks cut their copies differently.
 *   3. New tensors replace the old ones (tpg_op_set_tensors again, different allocations and values):
 *      the op copies from the peer's NEW shard and matches the new reference; each rank then frees its
 *      old shard, which the contract allows once its call returned.
 *   4. A missing peer across processes: on a context with a short timeout, rank 0 runs a reduce-scatter
 *      call that the other ranks do not join; rank 0 gets TPG_ERR_TIMEOUT within the bound. Then they run that
 *      call late and must get TPG_ERR_TIMEOUT ("a peer gave up"), not an output built on rank 0's stale
 *      partials. All destroy the op and context (collective calls still agree after a timeout).
 *   4b. Two ops behind one another on the context's stream, rank 0 alone: it syncs the second op only, whose launch
 *      waits behind the first one's; the sync must end in TPG_ERR_TIMEOUT within two bounds (over NCCL plus the
 *      abort's grace: the first op's receive from the missing peer holds its launch, and so the second's, until the
 *      second op's wait aborts the communicator for the first one's timeout - its error says so).
 *   4c. The bootstrap all-gather fails on every rank in tpg_op_create (a framework's store gone): every create fails
 *      with TPG_ERR_BOOTSTRAP naming the callback, and the context is still destroyed. Over the peer transport the
 *      error says that the op's memory was left allocated (a peer may still map it: nothing agreed that none does);
 *      over NCCL no peer maps it, so it is freed and the error says nothing of it.
 *   5. A fresh context runs an all-gather op that matches the reference.
 * With --share-device, step 0 first: a context whose ranks name one GPU without share_devices fails on every rank;
 * with --nccl, step 0 is a context that one rank's environment (NCCL_MIN_CTAS) refuses: it fails on every rank.
 * With --nccl every context uses the NCCL transport (tpg_rank_config.transport; step 0 is skipped: over NCCL
 * ranks on other nodes may report equal bus ids, so nothing compares them); step 4's calls then end by the
 * abort of the NCCL communicator once the GEMM's wait timed out (tpgemm.h), within the bound plus
 * TPG_NCCL_ABORT_GRACE_S. The late rank may then still receive rank 0's partial (complete: rank 0 sent it before
 * giving up) from NCCL's buffers: its TPG_OK must then come with a D that matches the reference; otherwise its
 * TPG_ERR_TIMEOUT must name NCCL. With --share-device
 * too, each rank names its own NCCL host (NCCL_HOSTID) and NCCL's sockets carry the data on loopback.
 *
 * Run: build/tests/gpu_multiprocess [--tp N] [--share-device] [--nccl]. With --share-device every rank uses device 0
 * (tpg_rank_config.share_devices): the processes take turns on the GPU, so this checks the multi-process
 * protocol (IPC handles, cross-process flags and barriers) on one GPU, not its speed. Exit 0 on success, 1 on
 * a failed expectation, 3 when too few CUDA devices are visible (the caller reports a skip). A rank whose
 * peer stopped (a failed step returns early) gives up in the all-gather after MP_GATHER_WAIT_S (mp_harness.h),
 * so the runtime fails it with TPG_ERR_BOOTSTRAP; the harness kills the other children as soon as one fails; a
 * child that hangs anyway is killed after HANG_S.
 */
#define _DEFAULT_SOURCE /* clock_gettime under -std=c11 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mp_harness.h"
#include "reference.h"
#include "tpgemm.h"

enum { M = 2048, N = 2048, K = 1024, HANG_S = 60 };
#define MISSING_TIMEOUT_S 0.3 /* step 4's context: the bound on every device-side wait */
#define TIMEOUT_SLACK_S 0.05  /* launches and the host's sync on top of 1.5 bounds (as tests/gpu/test_timeout.c) */
#define GAVE_UP signal[0]     /* step 4: rank 0's call has returned its timeout */
#define QUEUED_DONE signal[1] /* step 4b: rank 0's sync of the second op has returned */
#define NCCL_ABORT_GRACE_S 1.0 /* --nccl: runtime/src/nccl_graph.c, TPG_NCCL_ABORT_GRACE_S */
/* --nccl: the grace, then NCCL's kernels seeing the abort and the polls (1.31-1.46 s in all measured at 0.3 s) */
#define NCCL_ABORT_WAIT_S (NCCL_ABORT_GRACE_S + 0.25)

static int g_tp = 2;  /* --tp N */
static int g_share; /* --share-device */
static int g_nccl;  /* --nccl */

static int fail(int rank, const char *what, tpg_status s, const tpg_ctx *ctx) {
    fprintf(stderr, "gpu_multiprocess rank %d: %s: %s (%s)\n", rank, what, tpg_status_string(s), tpg_last_error(ctx));
    return 1;
}

typedef struct shard_bufs {
    void *a, *b, *d;
} shard_bufs;

/* Allocates this rank's shards and fills A and B with the global matrices' values for `seed`. */
static int make_shards(int rank, const tpg_shard_shape *sh, uint64_t seed, shard_bufs *out) {
    if (cudaMalloc(&out->a, (size_t)(sh->a_rows * sh->a_cols * 2)) != cudaSuccess ||
        cudaMalloc(&out->b, (size_t)(sh->b_rows * sh->b_cols * 2)) != cudaSuccess ||
        cudaMalloc(&out->d, (size_t)(sh->d_rows * sh->d_cols * 2)) != cudaSuccess)
        return fail(rank, "cudaMalloc", TPG_ERR_OUT_OF_MEMORY, NULL);
    tpg_status s = tpg_fill(TPG_DTYPE_BF16, out->a, sh->a_rows, sh->a_cols, sh->a_cols, 1, 0, sh->a_row0, sh->a_col0,
                            seed, NULL);
    if (s == TPG_OK)
        s = tpg_fill(TPG_DTYPE_BF16, out->b, sh->b_rows, sh->b_cols, sh->b_cols, 1, 0, sh->b_row0, sh->b_col0,
                     seed + 1, NULL);
    if (s == TPG_OK) s = tpg_poison(out->d, (size_t)(sh->d_rows * sh->d_cols * 2), NULL);
    if (s == TPG_OK && cudaDeviceSynchronize() != cudaSuccess) s = TPG_ERR_CUDA;
    return s == TPG_OK ? 0 : fail(rank, "fill", s, NULL);
}

/* The reference check of this rank's D shard after a call. */
static int check_d(int rank, tpg_ctx *ctx, const tpg_shard_shape *sh, const shard_bufs *b, uint64_t seed) {
    tpg_status s;
    tpg_ref_problem p = {TPG_DTYPE_BF16, TPG_DTYPE_BF16, M, N, K, 1, 1.0f, 0.0f, seed};
    tpg_ref_shard d = {b->d, sh->d_rows, sh->d_cols, sh->d_cols, 0, sh->d_row0, sh->d_col0};
    tpg_ref_result res;
    if ((s = tpg_reference_check(&p, &d, seed, NULL, &res)) != TPG_OK)
        return fail(rank, tpg_reference_last_error(), s, ctx);
    const double eps = tpg_reference_default_eps(TPG_DTYPE_BF16);
    printf("rank %d seed %llu: max error %.3e (bound %.1e), %lld checked\n", rank, (unsigned long long)seed,
           res.max_error, eps, (long long)res.checked);
    return res.max_error <= eps && res.nonfinite == 0 ? 0 : 1;
}

/* One call on this rank, then the reference check of its D shard. */
static int run_and_check(int rank, tpg_op *op, tpg_ctx *ctx, const tpg_shard_shape *sh, const shard_bufs *b,
                         uint64_t seed) {
    tpg_status s = tpg_op_run_rank(op, rank, NULL);
    if (s == TPG_OK) s = tpg_op_sync(op);
    if (s != TPG_OK) return fail(rank, "run", s, ctx);
    return check_d(rank, ctx, sh, b, seed);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void free_shards(shard_bufs *b) { cudaFree(b->a), cudaFree(b->b), cudaFree(b->d); }

static tpg_status create_ctx_sharing(int rank, mp_rank *g, uint64_t timeout_ns, int share, tpg_ctx **ctx) {
    tpg_rank_config rc = TPG_RANK_CONFIG_INIT;
    rc.tp = g_tp, rc.rank = rank, rc.device = g_share ? 0 : rank, rc.allgather = mp_allgather, rc.user = g;
    rc.timeout_ns = timeout_ns, rc.share_devices = share;
    rc.transport = g_nccl ? TPG_TRANSPORT_NCCL : TPG_TRANSPORT_PEER;
    return tpg_ctx_create_rank(&rc, ctx);
}

static int create_ctx(int rank, mp_rank *g, uint64_t timeout_ns, tpg_ctx **ctx) {
    tpg_status s = create_ctx_sharing(rank, g, timeout_ns, g_share, ctx);
    return s == TPG_OK ? 0 : fail(rank, "tpg_ctx_create_rank", s, NULL);
}

/* Step 0 (--share-device): ranks on one GPU without share_devices are refused, on every rank, by name. */
static int same_gpu_needs_share_devices(int rank, mp_rank *g) {
    tpg_ctx *ctx = NULL;
    tpg_status s = create_ctx_sharing(rank, g, 0, 0, &ctx);
    printf("rank %d: one GPU without share_devices -> %s: %s\n", rank, tpg_status_string(s), tpg_last_error(NULL));
    if (s == TPG_OK || ctx) return fail(rank, "ranks on one GPU without share_devices were accepted", s, NULL);
    return 0;
}

/* A new op of `schedule` with this rank's shards allocated, filled for `seed` and set (collective). */
static int op_with_shards(int rank, tpg_ctx *ctx, const char *schedule, uint64_t seed, tpg_op **op,
                          tpg_shard_shape *shape, shard_bufs *b) {
    int cfg;
    tpg_status s = tpg_config_find(NULL, schedule, g_tp, TPG_DTYPE_BF16, &cfg);
    if (s != TPG_OK) return fail(rank, "tpg_config_find", s, ctx);
    tpg_op_desc desc = {cfg, M, N, K, 1, 1.0f, 0.0f};
    if ((s = tpg_op_create(ctx, &desc, op)) != TPG_OK) return fail(rank, "tpg_op_create", s, ctx);
    tpg_op_shard_shape(*op, rank, shape);
    if (make_shards(rank, shape, seed, b)) return 1;
    tpg_tensors t = {b->a, b->b, NULL, b->d, NULL, NULL};
    s = tpg_op_set_tensors(*op, rank, &t);
    return s == TPG_OK ? 0 : fail(rank, "tpg_op_set_tensors", s, ctx);
}

/* Steps 1-3 on one context. */
static int bad_args_then_new_tensors(int rank, tpg_ctx *ctx) {
    int cfg;
    tpg_status s = tpg_config_find(NULL, "AllGather1D_TilingCD_RotatingA", g_tp, TPG_DTYPE_BF16, &cfg);
    if (s != TPG_OK) return fail(rank, "tpg_config_find", s, ctx);
    tpg_op_desc desc = {cfg, M, N, K, 1, 1.0f, 0.0f};
    tpg_op *op = NULL;

    /* 1: rank 1 passes no desc; every rank must fail (and return) */
    s = tpg_op_create(ctx, rank == 1 ? NULL : &desc, &op);
    if (s == TPG_OK || op) return fail(rank, "tpg_op_create with a peer's NULL desc succeeded", s, ctx);
    printf("rank %d: a NULL desc on rank 1 -> %s\n", rank, tpg_status_string(s));

    /* 2: a correct op */
    if ((s = tpg_op_create(ctx, &desc, &op)) != TPG_OK) return fail(rank, "tpg_op_create", s, ctx);
    tpg_shard_shape shape;
    tpg_op_shard_shape(op, rank, &shape);
    shard_bufs first, second;
    if (make_shards(rank, &shape, 7, &first)) return 1;
    tpg_tensors t = {first.a, first.b, NULL, first.d, NULL, NULL};
    if ((s = tpg_op_set_tensors(op, rank, &t)) != TPG_OK) return fail(rank, "tpg_op_set_tensors", s, ctx);
    if (run_and_check(rank, op, ctx, &shape, &first, 7)) return 1;
    /* 2b: tpg_op_set_rs_ring is collective, the choice one for every rank: rank 1 asking otherwise fails every rank */
    s = tpg_op_set_rs_ring(op, rank == 1);
    printf("rank %d: tpg_op_set_rs_ring with rank 1 asking otherwise -> %s\n", rank, tpg_status_string(s));
    if (s != TPG_ERR_INVALID_ARGUMENT) return fail(rank, "expected TPG_ERR_INVALID_ARGUMENT", s, ctx);
    if ((s = tpg_op_set_rs_ring(op, 1)) != TPG_OK) return fail(rank, "tpg_op_set_rs_ring (alike)", s, ctx);
    /* 2c: copies in pieces. Over NCCL each piece is a message, so the call is collective: rank 1 cutting otherwise
     * fails every rank, alike it holds. Over the peer transport a rank's cut is its own: ranks may differ. Step 3
     * runs with the cut. */
    s = tpg_op_set_copy_chunks(op, rank == 1 ? 2 : g_nccl ? 4 : 3);
    printf("rank %d: tpg_op_set_copy_chunks with rank 1 cutting otherwise -> %s\n", rank, tpg_status_string(s));
    if (s != (g_nccl ? TPG_ERR_INVALID_ARGUMENT : TPG_OK))
        return fail(rank, g_nccl ? "expected TPG_ERR_INVALID_ARGUMENT over NCCL" : "expected TPG_OK", s, ctx);
    if (g_nccl && (s = tpg_op_set_copy_chunks(op, 2)) != TPG_OK)
        return fail(rank, "tpg_op_set_copy_chunks (alike)", s, ctx);

    /* 3: new allocations with new values replace the old ones; then the old ones are freed */
    if (make_shards(rank, &shape, 1001, &second)) return 1;
    tpg_tensors t2 = {second.a, second.b, NULL, second.d, NULL, NULL};
    if ((s = tpg_op_set_tensors(op, rank, &t2)) != TPG_OK) return fail(rank, "tpg_op_set_tensors (new)", s, ctx);
    free_shards(&first);
    if (run_and_check(rank, op, ctx, &shape, &second, 1001)) return 1;

    if ((s = tpg_op_destroy(op)) != TPG_OK) return fail(rank, "tpg_op_destroy", s, ctx);
    free_shards(&second);
    return 0;
}

/* Step 4: rank 0 runs a call alone and times out; the other ranks run it after that and must fail too. */
static int missing_then_late_peer(int rank, mp_shared *sh, tpg_ctx *ctx) {
    tpg_op *op = NULL;
    tpg_shard_shape shape;
    shard_bufs b;
    if (op_with_shards(rank, ctx, "ReduceScatter1D_TilingA_RotatingC", 4242, &op, &shape, &b)) return 1;
    tpg_status s = TPG_OK;
    if (rank != 0 && mp_wait_at_least(&sh->GAVE_UP, 1)) return fail(rank, "rank 0 never reported its timeout", s, ctx);
    const double t0 = now_s();
    if ((s = tpg_op_run_rank(op, rank, NULL)) != TPG_OK) return fail(rank, "tpg_op_run_rank", s, ctx);
    s = tpg_op_sync(op);
    const double waited = now_s() - t0;
    printf("rank %d: %s -> %s after %.3f s (bound %.3f s): %s\n", rank, rank == 0 ? "missing peer" : "late peer",
           tpg_status_string(s), waited, MISSING_TIMEOUT_S, tpg_last_error(ctx));
    if (rank == 0) atomic_store(&sh->GAVE_UP, 1);
    /* over NCCL rank 0 sent its (complete) partial before it gave up, and a late rank may still receive it from
     * the transport's buffers: then its call is valid, and must match the reference */
    if (g_nccl && rank != 0 && s == TPG_OK) {
        if (check_d(rank, ctx, &shape, &b, 4242)) return fail(rank, "the late rank's TPG_OK output is wrong", s, ctx);
    } else if (s != TPG_ERR_TIMEOUT) {
        return fail(rank, "expected TPG_ERR_TIMEOUT", s, ctx);
    }
    /* one bound, not less (a TIMEOUT at once proves nothing) and not two (two waits timing out in turn) */
    if (rank == 0 && (waited < 0.95 * MISSING_TIMEOUT_S ||
                      waited > 1.5 * MISSING_TIMEOUT_S + TIMEOUT_SLACK_S + (g_nccl ? NCCL_ABORT_WAIT_S : 0.0)))
        return fail(rank, "the timeout took less than its bound, or more than 1.5 bounds plus the slack", s, ctx);
    if (rank != 0 && s != TPG_OK && !strstr(tpg_last_error(ctx), g_nccl ? "NCCL" : "gave up"))
        return fail(rank, g_nccl ? "expected the late rank's error to name NCCL"
                                 : "expected the late rank's error to say that a peer gave up", s, ctx);
    if ((s = tpg_op_destroy(op)) != TPG_OK) return fail(rank, "tpg_op_destroy after a timeout", s, ctx);
    free_shards(&b);
    return 0;
}

/* Step 4b: rank 0 runs two ops alone on the context's stream and syncs the second only; the other ranks make the
 * collective calls (create, set tensors, destroy) and no run. */
static int queued_behind_a_timed_out_op(int rank, mp_shared *sh, tpg_ctx *ctx) {
    tpg_op *first = NULL, *second = NULL;
    tpg_shard_shape shape1, shape2;
    shard_bufs b1, b2;
    if (op_with_shards(rank, ctx, "ReduceScatter1D_TilingA_RotatingC", 5151, &first, &shape1, &b1) ||
        op_with_shards(rank, ctx, "ReduceScatter1D_TilingA_RotatingC", 5252, &second, &shape2, &b2))
        return 1;
    tpg_status s = TPG_OK;
    if (rank == 0) {
        const double t0 = now_s();
        if ((s = tpg_op_run_rank(first, 0, NULL)) != TPG_OK || (s = tpg_op_run_rank(second, 0, NULL)) != TPG_OK)
            return fail(rank, "tpg_op_run_rank", s, ctx);
        s = tpg_op_sync(second);
        const double waited = now_s() - t0;
        printf("rank 0: second op queued behind a timed-out one -> %s after %.3f s (bound %.3f s): %s\n",
               tpg_status_string(s), waited, MISSING_TIMEOUT_S, tpg_last_error(ctx));
        atomic_store(&sh->QUEUED_DONE, 1);
        if (s != TPG_ERR_TIMEOUT) return fail(rank, "expected TPG_ERR_TIMEOUT from the second op's sync", s, ctx);
        /* bounded is the point (it spun for good): two device timeouts, over NCCL the abort's grace and its drain */
        if (waited > 2 * (1.5 * MISSING_TIMEOUT_S + TIMEOUT_SLACK_S) + (g_nccl ? 2 * NCCL_ABORT_WAIT_S : 0.0))
            return fail(rank, "the second op's sync took more than two bounds plus the slack", s, ctx);
        if (g_nccl && !strstr(tpg_last_error(ctx), "another op"))
            return fail(rank, "expected the error to name the other op's timed-out launch", s, ctx);
    } else if (mp_wait_at_least(&sh->QUEUED_DONE, 1)) {
        return fail(rank, "rank 0's sync of the second op never returned", s, ctx);
    }
    /* collective; over NCCL the context is aborted: the ops go without an error of their own (destroy is quiet) */
    if ((s = tpg_op_destroy(second)) != TPG_OK || (s = tpg_op_destroy(first)) != TPG_OK)
        return fail(rank, "tpg_op_destroy after the queued timeout", s, ctx);
    free_shards(&b1), free_shards(&b2);
    return 0;
}

/* Step 4c: every rank's bootstrap all-gather fails in tpg_op_create; over the peer transport the op's memory is left
 * allocated, and said so. */
static int broken_exchange_in_create(int rank, mp_rank *g, tpg_ctx *ctx) {
    int cfg;
    tpg_status s = tpg_config_find(NULL, "AllGather1D_TilingCD_RotatingA", g_tp, TPG_DTYPE_BF16, &cfg);
    if (s != TPG_OK) return fail(rank, "tpg_config_find", s, ctx);
    tpg_op_desc desc = {cfg, M, N, K, 1, 1.0f, 0.0f};
    tpg_op *op = NULL;
    g->fail_next = 1;
    s = tpg_op_create(ctx, &desc, &op);
    printf("rank %d: bootstrap all-gather failed in tpg_op_create -> %s: %s\n", rank, tpg_status_string(s),
           tpg_last_error(ctx));
    if (s != TPG_ERR_BOOTSTRAP || op) return fail(rank, "expected TPG_ERR_BOOTSTRAP and no op", s, ctx);
    if (!strstr(tpg_last_error(ctx), "callback returned"))
        return fail(rank, "expected the error to name the bootstrap all-gather callback", s, ctx);
    const int left_allocated = strstr(tpg_last_error(ctx), "left allocated") != NULL;
    if (left_allocated == g_nccl)
        return fail(rank, g_nccl ? "over NCCL the op's memory is freed (no peer maps it), but the error says otherwise"
                                 : "expected the error to say the op's memory was left allocated", s, ctx);
    return 0;
}

/* Step 0 (--nccl): NCCL_MIN_CTAS above the transport's CTA cap on rank 1 alone, which NCCL would refuse at once
 * while the other ranks wait in ncclCommInitRank for rank 1 without a bound: rank 1 refuses before the agreement to
 * join, and every rank's tpg_ctx_create_rank fails instead of hanging (runtime/src/ctx_rank.c, join_nccl). */
static int nccl_refused_on_one_rank(int rank, mp_rank *g) {
    if (rank == 1) setenv("NCCL_MIN_CTAS", "64", 1);
    tpg_ctx *ctx = NULL;
    const tpg_status s = create_ctx_sharing(rank, g, 0, g_share, &ctx);
    if (rank == 1) unsetenv("NCCL_MIN_CTAS");
    printf("rank %d: NCCL_MIN_CTAS=64 on rank 1 -> %s\n", rank, tpg_status_string(s));
    if (s == TPG_OK) {
        tpg_ctx_destroy(ctx);
        return fail(rank, "a context with NCCL_MIN_CTAS=64 on rank 1 was created", s, NULL);
    }
    return 0;
}

/* Step 5: a fresh context's all-gather matches the reference. */
static int fresh_context_runs(int rank, tpg_ctx *ctx) {
    tpg_op *op = NULL;
    tpg_shard_shape shape;
    shard_bufs b;
    if (op_with_shards(rank, ctx, "AllGather1D_TilingCD_RotatingA", 2002, &op, &shape, &b)) return 1;
    tpg_status s;
    if (run_and_check(rank, op, ctx, &shape, &b, 2002)) return 1;
    if ((s = tpg_op_destroy(op)) != TPG_OK) return fail(rank, "tpg_op_destroy", s, ctx);
    free_shards(&b);
    return 0;
}

static int rank_main(mp_rank *g, void *arg) {
    (void)arg;
    const int rank = g->rank;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < (g_share ? 1 : g_tp)) return 3;
    if (cudaSetDevice(g_share ? 0 : rank) != cudaSuccess) return fail(rank, "cudaSetDevice", TPG_ERR_CUDA, NULL);
    if (g_nccl && g_share) { /* one NCCL host per rank on one GPU: loopback sockets (header comment) */
        char host[32];
        snprintf(host, sizeof host, "tpgemm-test-rank-%d", rank);
        setenv("NCCL_HOSTID", host, 0);
        setenv("NCCL_SOCKET_IFNAME", "lo", 0);
        setenv("NCCL_IB_DISABLE", "1", 0);
    }
    if (g_share && !g_nccl && same_gpu_needs_share_devices(rank, g)) return 1;
    if (g_nccl && nccl_refused_on_one_rank(rank, g)) return 1;
    tpg_ctx *ctx = NULL;
    if (create_ctx(rank, g, 0, &ctx) || bad_args_then_new_tensors(rank, ctx)) return 1;
    tpg_status s = tpg_ctx_destroy(ctx);
    if (s != TPG_OK) return fail(rank, "tpg_ctx_destroy", s, NULL);

    if (create_ctx(rank, g, (uint64_t)(MISSING_TIMEOUT_S * 1e9), &ctx) || missing_then_late_peer(rank, g->sh, ctx))
        return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy after a timeout", s, NULL);

    if (create_ctx(rank, g, (uint64_t)(MISSING_TIMEOUT_S * 1e9), &ctx) ||
        queued_behind_a_timed_out_op(rank, g->sh, ctx))
        return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy after the queued timeout", s, NULL);

    if (create_ctx(rank, g, 0, &ctx) || broken_exchange_in_create(rank, g, ctx)) return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy after a broken exchange", s, NULL);

    if (create_ctx(rank, g, 0, &ctx) || fresh_context_runs(rank, ctx)) return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy", s, NULL);
    return 0;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--share-device")) {
            g_share = 1;
        } else if (!strcmp(argv[i], "--nccl")) {
            g_nccl = 1;
        } else if (!strcmp(argv[i], "--tp") && i + 1 < argc &&
                   (!strcmp(argv[i + 1], "2") || !strcmp(argv[i + 1], "4") || !strcmp(argv[i + 1], "8"))) {
            g_tp = atoi(argv[++i]); /* the TP degrees schedules.yaml builds configs for */
        } else {
            fprintf(stderr, "gpu_multiprocess: bad argument %s (usage: gpu_multiprocess [--tp 2|4|8] [--share-device] [--nccl])\n",
                    argv[i]);
            return 1;
        }
    }
    const int rc = mp_run(g_tp, HANG_S, rank_main, NULL);
    if (rc != 3) printf(rc ? "FAILED\n" : "PASSED\n");
    return rc;
}
