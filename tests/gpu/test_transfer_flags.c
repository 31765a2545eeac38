/* GPU test (1 device): the NCCL transport's flag kernel (runtime/src/transfer_flags.h) on its own, each case
 * from a fresh state, its words read back:
 *
 *   1. wait, every flag at the epoch             -> returns at once, verdict = epoch, status clean
 *   2. wait, one flag of 1000 behind              -> TPG_DEVICE_TIMEOUT within the bound (+ slack), gave_up = epoch,
 *                                                    verdict TPG_FLAGS_INCOMPLETE(epoch) (the peer must not add
 *                                                    it)
 *   3. wait, another wait of the launch gave up   -> returns at once (well inside the bound), verdict incomplete
 *   3b. wait, every flag up but the launch gave up -> verdict incomplete (a GEMM tile whose own wait gave up still
 *                                                    writes garbage and raises its flag)
 *   4. raise, verdict = epoch                     -> every flag = epoch, status clean
 *   5. raise, verdict incomplete                  -> no flag raised, TPG_DEVICE_PEER_GAVE_UP, gave_up = epoch
 *   6. epoch 2 after flags of 0xFFFFFFF0 (wrapped)  -> wait times out (unsigned >= would pass), raise, then wait
 *                                                    passes
 * Case 5 is what keeps a late rank from returning TPG_OK on a partial its sender never finished; 2 and 3 are how
 * a sender says so. Run: build/tests/gpu_transfer_flags. Exit 0 on success, 1 on a failed case, 3 without a GPU. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gemm_params.h"
#include "transfer_flags.h"

enum { COUNT = 1000 };
#define BOUND_NS 200000000ull /* 0.2 s */
#define SLACK_S 0.25

/* Device words: flags[COUNT], then epoch, status, gave_up, trailer. */
typedef struct words {
    unsigned int flags[COUNT], epoch, status, gave_up, trailer;
} words;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Sets the device words to *h, runs the kernel in `mode` (with the trailer), reads them back into *h; seconds. */
static double run(words *d, words *h, tpg_flags_mode mode) {
    cudaMemcpy(d, h, sizeof *h, cudaMemcpyHostToDevice);
    tpg_flags_params p;
    memset(&p, 0, sizeof p);
    p.mode = mode;
    p.count = COUNT;
    p.flags = d->flags;
    p.epoch = &d->epoch;
    p.status = &d->status;
    p.gave_up_epoch = &d->gave_up;
    p.timeout_ns = BOUND_NS;
    p.trailer = &d->trailer;
    void *args[1] = {&p};
    const double t0 = now_s();
    cudaLaunchKernel(tpg_flags_kernel_entry(), (dim3){1, 1, 1}, (dim3){TPG_FLAGS_THREADS, 1, 1}, args, 0, 0);
    cudaDeviceSynchronize();
    const double t = now_s() - t0;
    cudaMemcpy(h, d, sizeof *h, cudaMemcpyDeviceToHost);
    return t;
}

static void fill(words *h, unsigned int flag, unsigned int epoch, unsigned int trailer) {
    memset(h, 0, sizeof *h);
    for (int i = 0; i < COUNT; i++) h->flags[i] = flag;
    h->epoch = epoch;
    h->trailer = trailer;
}

static int all_flags(const words *h, unsigned int v) {
    for (int i = 0; i < COUNT; i++)
        if (h->flags[i] != v) return 0;
    return 1;
}

static int expect(int ok, const char *name, const words *h, double t) {
    printf("%-46s %s (%.3f s, status 0x%x, gave_up %u, verdict 0x%x)\n", name, ok ? "ok" : "FAILED", t, h->status,
           h->gave_up, h->trailer);
    return !ok;
}

int main(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "gpu_transfer_flags: no CUDA device\n");
        return 3;
    }
    words *d = NULL, h;
    if (cudaMalloc((void **)&d, sizeof *d) != cudaSuccess) return 1;
    int bad = 0;
    double t;

    fill(&h, 7, 7, 0);
    t = run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect(h.trailer == 7 && h.status == 0 && h.gave_up == 0 && t < SLACK_S, "wait, all flags at the epoch", &h, t);

    fill(&h, 7, 7, 0);
    h.flags[COUNT - 3] = 6;
    t = run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect(h.trailer == TPG_FLAGS_INCOMPLETE(7) && (h.status & TPG_DEVICE_TIMEOUT) && h.gave_up == 7 &&
                      t >= BOUND_NS * 1e-9 && t < BOUND_NS * 1e-9 + SLACK_S,
                  "wait, one flag behind: times out", &h, t);

    fill(&h, 6, 7, 0);
    h.gave_up = 7; /* another wait of this launch timed out */
    t = run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect(h.trailer == TPG_FLAGS_INCOMPLETE(7) && h.status == 0 && t < BOUND_NS * 1e-9 / 2,
                  "wait, the launch gave up: returns at once", &h, t);

    fill(&h, 7, 7, 0);
    h.gave_up = 7; /* a tile of this launch gave up, then wrote and raised its flag anyway */
    t = run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect(h.trailer == TPG_FLAGS_INCOMPLETE(7) && h.status == 0 && t < SLACK_S,
                  "wait, flags up but the launch gave up", &h, t);

    fill(&h, 3, 7, 7);
    t = run(d, &h, TPG_FLAGS_RAISE);
    bad |= expect(all_flags(&h, 7) && h.status == 0 && h.gave_up == 0, "raise, verdict = epoch", &h, t);

    fill(&h, 3, 7, TPG_FLAGS_INCOMPLETE(7));
    t = run(d, &h, TPG_FLAGS_RAISE);
    bad |= expect(all_flags(&h, 3) && h.status == TPG_DEVICE_PEER_GAVE_UP && h.gave_up == 7,
                  "raise, verdict incomplete: nothing raised", &h, t);

    fill(&h, 0xFFFFFFF0u, 2, 2); /* the epoch wrapped: 2 is after 0xFFFFFFF0 */
    t = run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect((h.status & TPG_DEVICE_TIMEOUT) && h.trailer == TPG_FLAGS_INCOMPLETE(2),
                  "wait across the wrap: behind",
                  &h, t);
    h.status = 0, h.gave_up = 0, h.trailer = 2;
    t = run(d, &h, TPG_FLAGS_RAISE);
    const int raised = all_flags(&h, 2);
    t += run(d, &h, TPG_FLAGS_WAIT);
    bad |= expect(raised && h.trailer == 2 && h.status == 0 && t < SLACK_S, "raise, then wait across the wrap", &h, t);

    cudaFree(d);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_transfer_flags: CUDA error %s\n", cudaGetErrorString(e));
        bad = 1;
    }
    printf(bad ? "FAILED\n" : "PASSED\n");
    return bad;
}
