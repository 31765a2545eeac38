/* GPU test (1 device): the closing barrier's give-up notice (runtime/src/barrier.cu) against its epoch at the points
 * where 32-bit epochs go wrong, two ranks on two streams of one GPU, each case from a fresh state:
 *
 *   1. epoch 5, notices 0                       -> both pass clean, notices left alone (not stale yet)
 *   2. epoch 0x80000001, notices 0              -> both pass clean (a signed difference called 0 "ahead": every call
 *                                                  failed from the 2^31st on), each notice moved up to the epoch - 1
 *   3. epoch 0 (the wrap), notices 0xfffffff0   -> both pass clean
 *   4. epoch 5, rank 0 gave up in this launch   -> rank 0 raises rank 1's notice to 5, rank 1 reports PEER_GAVE_UP
 *   5. epoch 3 after the wrap, rank 1's notice 0xfffffff0, rank 0 gave up
 *                                               -> the notice is raised to 3 (an unsigned max kept 0xfffffff0 and
 *                                                  rank 1 returned a clean call), rank 1 reports PEER_GAVE_UP
 * and in every case the give-up word after the closing barrier, which leaves it alone; then the start barrier of one
 * rank (as over NCCL, which has no closing one) and the give-up word (templates/kernels/epoch.h):
 *   6. epoch 0x80000000, give-up word 0        -> moved up to 0x7fffffff (left alone, the initial 0 would read as
 *                                                  the give-up of the launch 2^32 later)
 *   7. epoch 0x7fffffff, give-up word 0        -> left alone (2^31 - 1 behind)
 *   8. epoch 6, give-up word 6 (the GEMM beside the barrier gave up first) -> kept
 * The give-up words before each case are ones the protocol can leave: 1 .. 2^31 launches behind the epoch, or at it.
 * Case 2's notice of 0 is the state the old signed test failed on; the closing barrier now moves a notice up long
 * before it gets that far behind.
 * Run: build/tests/gpu_barrier_epochs. Exit 0 on success, 1 on a failed case, 3 without a GPU. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "barrier.h"

enum { TP = 2 };

/* Per rank: epoch, counter, status, gave_up, notice (a word each). */
typedef struct rank_words {
    unsigned int epoch, counter, status, gave_up, notice;
} rank_words;

/* Runs the END barrier of both ranks at once from *h (counters one arrival short of the target), reads back. */
static int run(rank_words *d, rank_words *h, cudaStream_t *s) {
    /* synchronized: the kernels' non-blocking streams do not wait for the legacy stream's copy */
    if (cudaMemcpy(d, h, TP * sizeof *h, cudaMemcpyHostToDevice) != cudaSuccess || cudaDeviceSynchronize()) return 1;
    for (int r = 0; r < TP; r++) {
        tpg_barrier_params p;
        memset(&p, 0, sizeof p);
        p.mode = TPG_BARRIER_END;
        p.tp = TP;
        p.rank = r;
        p.epoch = &d[r].epoch;
        p.counter = &d[r].counter;
        p.status = &d[r].status;
        p.gave_up_epoch = &d[r].gave_up;
        for (int q = 0; q < TP; q++) {
            p.peer_counter[q] = &d[q].counter;
            p.gave_up_notice[q] = &d[q].notice;
        }
        p.timeout_ns = 2000000000ull; /* a hang would be a failure, not a stuck test */
        void *args[1] = {&p};
        if (cudaLaunchKernel(tpg_barrier_kernel_entry(), (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s[r]) !=
            cudaSuccess)
            return 1;
    }
    if (cudaDeviceSynchronize() != cudaSuccess) return 1;
    return cudaMemcpy(h, d, TP * sizeof *h, cudaMemcpyDeviceToHost) != cudaSuccess;
}

static void fill(rank_words *h, unsigned int epoch, unsigned int notice, unsigned int gave_up) {
    for (int r = 0; r < TP; r++) {
        memset(&h[r], 0, sizeof h[r]);
        h[r].epoch = epoch;
        h[r].counter = epoch * (TP - 1) - 1u; /* the peer's arrival makes the target */
        h[r].notice = notice;
        h[r].gave_up = gave_up;
    }
}

/* The start barrier of one rank (tp = 1, as over NCCL) from an epoch word of `epoch - 1`; returns its give-up word. */
static int run_start(rank_words *d, unsigned int epoch, unsigned int gave_up, unsigned int *left) {
    rank_words h;
    memset(&h, 0, sizeof h);
    h.epoch = epoch - 1u;
    h.gave_up = gave_up;
    if (cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice) != cudaSuccess) return 1;
    tpg_barrier_params p;
    memset(&p, 0, sizeof p);
    p.mode = TPG_BARRIER_START;
    p.tp = 1;
    p.epoch = &d->epoch;
    p.counter = &d->counter;
    p.peer_counter[0] = &d->counter;
    p.status = &d->status;
    p.gave_up_epoch = &d->gave_up;
    p.timeout_ns = 2000000000ull;
    void *args[1] = {&p};
    if (cudaLaunchKernel(tpg_barrier_kernel_entry(), (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, 0) != cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess || cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 1;
    *left = h.gave_up;
    return h.epoch != epoch || h.status != 0;
}

static int expect_start(unsigned int epoch, unsigned int gave_up, unsigned int want, rank_words *d) {
    unsigned int left = 0;
    const int ok = !run_start(d, epoch, gave_up, &left) && left == want;
    printf("start barrier at epoch 0x%08x, give-up word 0x%08x           %s (left 0x%x)\n", epoch, gave_up,
           ok ? "ok" : "FAILED", left);
    return !ok;
}

static int gave_up_words(const rank_words *h, unsigned int w0, unsigned int w1) {
    return h[0].gave_up == w0 && h[1].gave_up == w1;
}

/* Each rank's counter at its target: the peer arrived (one add) - a barrier that neither arrives nor waits would
 * pass every other expectation of a clean case. Arrivals come before any wait or give-up, so in every case. */
static int arrived(const rank_words *h) {
    for (int r = 0; r < TP; r++)
        if (h[r].counter != h[r].epoch * (TP - 1)) return 0;
    return 1;
}

static int expect(int ok, const char *name, const rank_words *h) {
    ok = ok && arrived(h);
    printf("%-52s %s (status 0x%x / 0x%x, notice 0x%x / 0x%x, gave_up 0x%x / 0x%x, counter 0x%x / 0x%x)\n", name,
           ok ? "ok" : "FAILED", h[0].status, h[1].status, h[0].notice, h[1].notice, h[0].gave_up, h[1].gave_up,
           h[0].counter, h[1].counter);
    return !ok;
}

int main(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "gpu_barrier_epochs: no CUDA device\n");
        return 3;
    }
    rank_words *d = NULL, h[TP];
    cudaStream_t s[TP];
    if (cudaMalloc((void **)&d, TP * sizeof *d) != cudaSuccess) return 1;
    for (int r = 0; r < TP; r++)
        if (cudaStreamCreateWithFlags(&s[r], cudaStreamNonBlocking) != cudaSuccess) return 1;
    int bad = 0;

    fill(h, 5u, 0u, 0u);
    bad |= run(d, h, s) || expect(!h[0].status && !h[1].status && !h[0].notice && !h[1].notice &&
                                      gave_up_words(h, 0u, 0u),
                                  "epoch 5, notices 0: clean", h);
    fill(h, 0x80000001u, 0u, 0x80000000u);
    bad |= run(d, h, s) || expect(!h[0].status && !h[1].status && h[0].notice == 0x80000000u &&
                                      h[1].notice == 0x80000000u && gave_up_words(h, 0x80000000u, 0x80000000u),
                                  "epoch 0x80000001, notices 0: clean, moved up", h);
    fill(h, 0u, 0xfffffff0u, 0xfffffff0u);
    bad |= run(d, h, s) || expect(!h[0].status && !h[1].status && gave_up_words(h, 0xfffffff0u, 0xfffffff0u),
                                  "epoch 0 after the wrap: clean", h);
    fill(h, 5u, 0u, 0u);
    h[0].gave_up = 5u;
    bad |= run(d, h, s) || expect(h[1].status == TPG_DEVICE_PEER_GAVE_UP && h[1].notice == 5u &&
                                      gave_up_words(h, 5u, 0u),
                                  "rank 0 gave up: rank 1 hears of it", h);
    fill(h, 3u, 0xfffffff0u, 0xfffffff0u);
    h[0].gave_up = 3u;
    bad |= run(d, h, s) || expect(h[1].status == TPG_DEVICE_PEER_GAVE_UP && h[1].notice == 3u &&
                                      gave_up_words(h, 3u, 0xfffffff0u),
                                  "rank 0 gave up after the wrap: rank 1 hears of it", h);
    bad |= expect_start(0x80000000u, 0u, 0x7fffffffu, d);
    bad |= expect_start(0x7fffffffu, 0u, 0u, d);
    bad |= expect_start(6u, 6u, 6u, d);

    for (int r = 0; r < TP; r++) cudaStreamDestroy(s[r]);
    cudaFree(d);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_barrier_epochs: CUDA error %s\n", cudaGetErrorString(e));
        bad = 1;
    }
    printf(bad ? "FAILED\n" : "PASSED\n");
    return bad;
}
