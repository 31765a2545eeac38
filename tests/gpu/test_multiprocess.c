/* GPU test (2 devices, or 1 with --share-device; 2 processes): multi-process mode end to end, with the
 * bootstrap all-gather done through shared memory between two forked processes (what torch.distributed does
 * in a framework).
 *
 *   1. A rank whose own arguments are wrong (NULL desc) fails every rank's tpg_op_create instead of
 *      leaving its peer waiting in the all-gather.
 *   2. An all-gather op runs and matches the reference.
 *   3. New tensors replace the old ones (tpg_op_set_tensors again, different allocations and values):
 *      the op copies from the peer's NEW shard and matches the new reference; each rank then frees its
 *      old shard, which the contract allows once its call returned.
 *   4. A missing peer across processes: on a context with a short timeout, rank 0 runs a reduce-scatter
 *      call that rank 1 does not join; rank 0 gets TPG_ERR_TIMEOUT within the bound. Then rank 1 runs that
 *      call late and must get TPG_ERR_TIMEOUT ("a peer gave up"), not an output built on rank 0's stale
 *      partials. Both destroy the op and context (collective calls still agree after a timeout).
 *   5. A fresh context runs an all-gather op that matches the reference.
 *
 * Run: build/tests/gpu_multiprocess [--share-device]. With --share-device both ranks use device 0
 * (tpg_rank_config.share_devices): the processes take turns on the GPU, so this checks the multi-process
 * protocol (IPC handles, cross-process flags and barriers) on one GPU, not its speed. Exit 0 on success, 1 on
 * a failed expectation, 3 when too few CUDA devices are visible (the caller reports a skip). A rank whose
 * peer stopped (a failed step returns early) gives up in the all-gather after GATHER_WAIT_S, so the runtime
 * fails it with TPG_ERR_BOOTSTRAP; the parent kills the other child as soon as one fails; a child that hangs
 * anyway is killed after 60 s.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS under -std=c11 */
#include <cuda_runtime.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reference.h"
#include "tpgemm.h"

enum { TP = 2, M = 2048, N = 2048, K = 1024, MAX_BYTES = 4096, GATHER_WAIT_S = 30 };
#define MISSING_TIMEOUT_S 0.3 /* step 4's context: the bound on every device-side wait */
#define TIMEOUT_SLACK_S 0.25  /* launches and the host's sync on top of it (as tests/gpu/test_timeout.c) */

static int g_share; /* --share-device */

/* Shared between the two processes: one slot per rank and a round counter per rank. Round r uses
 * slots[r % 2]; a rank reuses that half only after every rank has finished round r - 1 (the wait at
 * the start of round r + 1 of everyone), so two halves are enough. */
typedef struct shared {
    _Atomic unsigned arrived[TP]; /* rounds each rank has written */
    _Atomic unsigned left[TP];    /* rounds each rank has finished reading */
    _Atomic unsigned gave_up;     /* step 4: rank 0's call has returned its timeout */
    unsigned char slots[2][TP][MAX_BYTES];
} shared;

typedef struct gather_user {
    shared *sh;
    int rank;
    unsigned round;
} gather_user;

/* Waits until *word >= want; 0 on success, 1 after GATHER_WAIT_S (the peer stopped calling). */
static int wait_at_least(_Atomic unsigned *word, unsigned want) {
    const time_t give_up = time(NULL) + GATHER_WAIT_S;
    while (atomic_load(word) < want) {
        if (time(NULL) > give_up) return 1;
        usleep(10);
    }
    return 0;
}

static int allgather(const void *send, void *recv, size_t bytes, void *user) {
    gather_user *g = user;
    if (bytes > MAX_BYTES) return 1;
    const unsigned r = g->round++, half = r % 2;
    for (int q = 0; q < TP; q++) /* half r % 2 was last read in round r - 2: wait until all are done */
        if (r >= 2 && wait_at_least(&g->sh->left[q], r - 1)) return 1;
    memcpy(g->sh->slots[half][g->rank], send, bytes);
    atomic_store(&g->sh->arrived[g->rank], r + 1);
    for (int q = 0; q < TP; q++)
        if (wait_at_least(&g->sh->arrived[q], r + 1)) return 1;
    for (int q = 0; q < TP; q++) memcpy((unsigned char *)recv + (size_t)q * bytes, g->sh->slots[half][q], bytes);
    atomic_store(&g->sh->left[g->rank], r + 1);
    return 0;
}

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

/* One call on this rank, then the reference check of its D shard. */
static int run_and_check(int rank, tpg_op *op, tpg_ctx *ctx, const tpg_shard_shape *sh, const shard_bufs *b,
                         uint64_t seed) {
    tpg_status s = tpg_op_run_rank(op, rank, NULL);
    if (s == TPG_OK) s = tpg_op_sync(op);
    if (s != TPG_OK) return fail(rank, "run", s, ctx);
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

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void free_shards(shard_bufs *b) { cudaFree(b->a), cudaFree(b->b), cudaFree(b->d); }

static int create_ctx(int rank, gather_user *g, uint64_t timeout_ns, tpg_ctx **ctx) {
    tpg_rank_config rc = TPG_RANK_CONFIG_INIT;
    rc.tp = TP, rc.rank = rank, rc.device = g_share ? 0 : rank, rc.allgather = allgather, rc.user = g;
    rc.timeout_ns = timeout_ns, rc.share_devices = g_share;
    tpg_status s = tpg_ctx_create_rank(&rc, ctx);
    return s == TPG_OK ? 0 : fail(rank, "tpg_ctx_create_rank", s, NULL);
}

/* A new op of `schedule` with this rank's shards allocated, filled for `seed` and set (collective). */
static int op_with_shards(int rank, tpg_ctx *ctx, const char *schedule, uint64_t seed, tpg_op **op,
                          tpg_shard_shape *shape, shard_bufs *b) {
    int cfg;
    tpg_status s = tpg_config_find(NULL, schedule, TP, TPG_DTYPE_BF16, &cfg);
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
    tpg_status s = tpg_config_find(NULL, "AllGather1D_TilingCD_RotatingA", TP, TPG_DTYPE_BF16, &cfg);
    if (s != TPG_OK) return fail(rank, "tpg_config_find", s, ctx);
    tpg_op_desc desc = {cfg, M, N, K, 1, 1.0f, 0.0f};
    tpg_op *op = NULL;

    /* 1: rank 1 passes no desc; both ranks must fail (and return) */
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

/* Step 4: rank 0 runs a call alone and times out; rank 1 runs it after that and must fail too. */
static int missing_then_late_peer(int rank, shared *sh, tpg_ctx *ctx) {
    tpg_op *op = NULL;
    tpg_shard_shape shape;
    shard_bufs b;
    if (op_with_shards(rank, ctx, "ReduceScatter1D_TilingA_RotatingC", 4242, &op, &shape, &b)) return 1;
    tpg_status s = TPG_OK;
    if (rank == 1 && wait_at_least(&sh->gave_up, 1)) return fail(rank, "rank 0 never reported its timeout", s, ctx);
    const double t0 = now_s();
    if ((s = tpg_op_run_rank(op, rank, NULL)) != TPG_OK) return fail(rank, "tpg_op_run_rank", s, ctx);
    s = tpg_op_sync(op);
    const double waited = now_s() - t0;
    printf("rank %d: %s -> %s after %.3f s (bound %.3f s): %s\n", rank, rank == 0 ? "missing peer" : "late peer",
           tpg_status_string(s), waited, MISSING_TIMEOUT_S, tpg_last_error(ctx));
    if (rank == 0) atomic_store(&sh->gave_up, 1);
    if (s != TPG_ERR_TIMEOUT) return fail(rank, "expected TPG_ERR_TIMEOUT", s, ctx);
    if (rank == 0 && waited > MISSING_TIMEOUT_S + TIMEOUT_SLACK_S)
        return fail(rank, "the timeout took longer than its bound plus the slack", s, ctx);
    if (rank == 1 && !strstr(tpg_last_error(ctx), "gave up"))
        return fail(rank, "expected the late rank's error to say that a peer gave up", s, ctx);
    if ((s = tpg_op_destroy(op)) != TPG_OK) return fail(rank, "tpg_op_destroy after a timeout", s, ctx);
    free_shards(&b);
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

static int rank_main(int rank, shared *sh) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < (g_share ? 1 : TP)) return 3;
    if (cudaSetDevice(g_share ? 0 : rank) != cudaSuccess) return fail(rank, "cudaSetDevice", TPG_ERR_CUDA, NULL);
    gather_user g = {sh, rank, 0};
    tpg_ctx *ctx = NULL;
    if (create_ctx(rank, &g, 0, &ctx) || bad_args_then_new_tensors(rank, ctx)) return 1;
    tpg_status s = tpg_ctx_destroy(ctx);
    if (s != TPG_OK) return fail(rank, "tpg_ctx_destroy", s, NULL);

    if (create_ctx(rank, &g, (uint64_t)(MISSING_TIMEOUT_S * 1e9), &ctx) || missing_then_late_peer(rank, sh, ctx))
        return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy after a timeout", s, NULL);

    if (create_ctx(rank, &g, 0, &ctx) || fresh_context_runs(rank, ctx)) return 1;
    if ((s = tpg_ctx_destroy(ctx)) != TPG_OK) return fail(rank, "tpg_ctx_destroy", s, NULL);
    return 0;
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--share-device")) {
            fprintf(stderr, "gpu_multiprocess: unknown argument %s (usage: gpu_multiprocess [--share-device])\n", argv[i]);
            return 1;
        }
        g_share = 1;
    }
    shared *sh = mmap(NULL, sizeof(shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) return 1;
    memset(sh, 0, sizeof *sh);
    fflush(stdout);
    pid_t pid[TP];
    for (int r = 0; r < TP; r++) { /* fork before any CUDA call: a CUDA context does not survive fork */
        pid[r] = fork();
        if (pid[r] < 0) return 1;
        if (pid[r] == 0) {
            alarm(60); /* a hang ends as SIGALRM, reported below */
            int rc = rank_main(r, sh);
            fflush(stdout);
            _exit(rc);
        }
    }
    int worst = 0, skip = 0;
    for (int done = 0; done < TP; done++) { /* in the order they end: a failed rank's peer is stopped at once */
        int status = 0;
        const pid_t p = waitpid(-1, &status, 0);
        if (p < 0) return 1;
        const int r = p == pid[0] ? 0 : 1;
        int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        if (!WIFEXITED(status)) fprintf(stderr, "gpu_multiprocess: rank %d ended by signal %d\n", r, WTERMSIG(status));
        if (rc == 3) skip = 1; /* too few devices */
        if (rc != 0 && rc != 3 && done == 0) kill(pid[1 - r], SIGKILL); /* a skip: the peer skips too */
        if (rc > worst && rc != 3) worst = rc;
    }
    if (skip) return 3;
    printf(worst ? "FAILED\n" : "PASSED\n");
    return worst ? 1 : 0;
}
