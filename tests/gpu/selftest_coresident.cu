/* Does the barrier kernel run beside the persistent GEMM? (`kernel_selftest --coresident`)
 *
 * Why: every fused graph gates its GEMM on the START barrier kernel (runtime/src/graph.c), so each call
 * pays the barrier's cross-GPU round trip and one more graph edge before its first tile, and the END barrier
 * waits for the GEMM on every rank, so the two GPUs meet once per call. Letting the GEMM start beside the
 * barrier (or the all-gather END barrier run beside the GEMM) is safe only if the barrier kernel (1 block
 * x 1 thread, 32 registers) finds room on an SM that a GEMM CTA already holds: 384 threads x 168 registers
 * leave 1024 of the 65536 registers, and 231424 B of shared memory plus 1 KiB reserved per CTA leave 1 KiB.
 * If it does not fit, a barrier queued behind the GEMM would wait for the GEMM to end, and a GEMM that
 * waits for data behind that barrier would never end (a timeout).
 *
 * How: each listed kernel runs a long plain GEMM on one stream; ~3 ms after its launch the host launches
 * the real barrier kernel (runtime/src/barrier.cu, a START whose counter is already satisfied) on another
 * stream. Events on both streams say when the barrier finished relative to the GEMM: inside its span means
 * the two ran side by side.
 * Not a check: it prints what the hardware does; the decision it feeds is in docs/PERF_NOTES.md.
 */
#include <unistd.h>

#include "barrier.h"
#include "selftest_util.cuh"

static const int kM = 16384, kN = 16384, kK = 16384; /* ~13 ms at 700 TFLOP/s: the barrier lands mid-GEMM */
static const float kLaunchMs = 3.0f;                 /* host delay between the GEMM's launch and the barrier's */

struct coresident_row {
    float gemm_ms, barrier_ms; /* both from the event recorded just before the GEMM's launch */
    unsigned int status;
    int regs;                  /* the GEMM kernel's registers per thread */
};
static coresident_row g_rows[SELFTEST_MAX_KERNELS];
static int g_barrier_regs;

static void barrier_start_params(tpg_barrier_params *b, const ctl &c, unsigned int *words)
{
    memset(b, 0, sizeof *b);
    b->mode = TPG_BARRIER_START;
    b->tp = 2;
    b->rank = 0;
    b->epoch = &words[0];
    b->counter = &words[1]; /* preset far ahead of epoch * (tp - 1): the wait passes at once */
    b->peer_counter[1] = &words[2];
    b->status = c.status;
    b->timeout_ns = 1000000000ull;
}

static coresident_row probe_one(const kern &K, const ctl &c, void *A, void *B, void *D, unsigned int *words)
{
    tpg_gemm_params p;
    base_params(&p, c, kM, kN, kK, 1, 1);
    map_a(&p.stage[0].a_map, K, A, kM, kK);
    map_b(&p.stage[0].b_map, K, B, kN, kK);
    p.stage[0].a_batch_rows = kM;
    p.stage[0].b_batch_rows = kN;
    set_dest(&p, 0, K, D, kN, (long long)kM * kN);
    const unsigned int preset[3] = {0u, 1u << 20, 0u};
    CK(cudaMemcpy(words, preset, sizeof preset, cudaMemcpyHostToDevice));
    tpg_barrier_params b;
    barrier_start_params(&b, c, words);
    cudaStream_t gs, bs;
    CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&bs, cudaStreamNonBlocking));
    cudaEvent_t e0, e1, eb;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); CK(cudaEventCreate(&eb));
    launch(K, &p, gs); /* warm-up: clocks up, module loaded */
    CK(cudaStreamSynchronize(gs));
    CK(cudaEventRecord(e0, gs));
    launch(K, &p, gs);
    CK(cudaEventRecord(e1, gs));
    usleep((useconds_t)(kLaunchMs * 1000));
    void *args[1] = {&b};
    CK(cudaLaunchKernel(tpg_barrier_kernel_entry(), dim3(1), dim3(1), args, 0, bs));
    CK(cudaEventRecord(eb, bs));
    CK(cudaStreamSynchronize(bs));
    CK(cudaStreamSynchronize(gs));
    coresident_row r;
    CK(cudaEventElapsedTime(&r.gemm_ms, e0, e1));
    CK(cudaEventElapsedTime(&r.barrier_ms, e0, eb));
    r.status = get_status(c);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, K.fn));
    r.regs = fa.numRegs;
    CK(cudaEventDestroy(e0)); CK(cudaEventDestroy(e1)); CK(cudaEventDestroy(eb));
    CK(cudaStreamDestroy(gs)); CK(cudaStreamDestroy(bs));
    return r;
}

void coresident(const kern *ks, int nk, const ctl &c)
{
    nk = nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS;
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, tpg_barrier_kernel_entry()));
    g_barrier_regs = fa.numRegs;
    void *A[4] = {nullptr, nullptr, nullptr, nullptr}, *B[4] = {nullptr, nullptr, nullptr, nullptr};
    void *D = dalloc((size_t)kM * kN * 2);
    unsigned int *words = (unsigned int *)dalloc(3 * sizeof(unsigned int));
    for (int i = 0; i < nk; ++i) {
        const int dt = ks[i].s.dtype;
        if (!A[dt]) {
            A[dt] = dalloc((size_t)kM * kK * 2);
            B[dt] = dalloc((size_t)kN * kK * 2);
            rand_fill(ks[i], A[dt], (size_t)kM * kK, 9101);
            rand_fill(ks[i], B[dt], (size_t)kN * kK, 9102);
        }
        case_guard(ks[i].name, 60);
        set_epoch(c, 0);
        g_rows[i] = probe_one(ks[i], c, A[dt], B[dt], D, words);
    }
    for (int dt = 0; dt < 4; ++dt) {
        cudaFree(A[dt]);
        cudaFree(B[dt]);
    }
    cudaFree(D);
    cudaFree(words);
}

/* Launched kLaunchMs after the GEMM: ran beside it if it ended within 1.5 ms of that and well before the GEMM did.
 * A barrier queued behind the GEMM ends when the first CTA (or cluster) of the GEMM retires, near its end. */
static bool side_by_side(const coresident_row &r)
{
    return r.barrier_ms < kLaunchMs + 1.5f && r.barrier_ms < r.gemm_ms - 1.0f;
}

void print_coresident(const kern *ks, int nk)
{
    nk = nk < SELFTEST_MAX_KERNELS ? nk : SELFTEST_MAX_KERNELS;
    printf("\n## the barrier kernel (1 x 1 thread, %d registers) launched ~3 ms into a plain %dx%dx%d GEMM on another "
           "stream (ms from the GEMM's launch; side by side = it finished inside the GEMM's span)\n\n",
           g_barrier_regs, kM, kN, kK);
    printf("| kernel | threads | regs | smem B | cluster | GEMM ends | barrier ends | side by side | status |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < nk; ++i) {
        const coresident_row &r = g_rows[i];
        printf("| %s | %d | %d | %d | %dx%d | %.3f | %.3f | %s | %u |\n", ks[i].name, ks[i].s.threads, r.regs,
               ks[i].s.smem_bytes, ks[i].s.cluster_m, ks[i].s.cluster_n, r.gemm_ms, r.barrier_ms,
               side_by_side(r) ? "yes" : "no", r.status);
    }
}
