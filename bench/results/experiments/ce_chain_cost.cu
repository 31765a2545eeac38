/* What a copy-engine chain of runtime/src/ce_partials.c costs besides its bytes, on one GPU (2026-12-04 13:50Z).
 *
 * Question: per band, the chain is four graph nodes in a row - a batch mem-op wait on the band's tile flags, a copy of
 * the band's bytes, a copy of its flags, a batch mem-op reset. If each copy-engine operation costs ~2-3 us whatever
 * its size (the all-gather proxy's host-to-device copies, docs/perf_notes/2026-12-01-b.md), 16 bands of a small
 * stage could add up to more than the stage's GEMM time, and the receiver would wait. Across GPUs the copies are
 * peer-to-peer; here they go device -> pinned host (a copy engine over PCIe: the fixed cost is what is measured, the
 * bytes run at PCIe's rate) and device -> device (which CUDA runs as a kernel on one GPU: a control).
 *
 * Graphs captured like ce_partials.c's chain (one stream, nodes in a row), flags raised beforehand and the "reset"
 * writing 1 so that every replay's waits pass at once. Variants per band: full (wait, data, flags, reset), copies
 * (data, flags), data (data only), memops (wait, reset). Each graph replayed back to back; time per replay from CUDA
 * events over 50 replays after 10 warm-up, median of 5 such windows.
 *
 * With two GPUs (2026-12-04 15:15Z, for x2) a third destination: device 1's memory, peer access on - the copies then
 * peer-to-peer as the chains' are across GPUs, which sets the band floor (TPG_CE_RS_BAND_BYTES, nccl_plan.h).
 *
 * Build: nvcc -O2 -arch=sm_90a -o ce_chain_cost ce_chain_cost.cu -lcuda
 * Run:   ./ce_chain_cost   (the table of chains), ./ce_chain_cost ops (the mem-op nodes alone, by operations a node) */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CKD(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
    fprintf(stderr, "%s:%d %s: CUresult %d\n", __FILE__, __LINE__, #x, (int)r_); exit(1); } } while (0)

enum Variant { FULL, COPIES, DATA, MEMOPS };
static const char *kVariantName[] = {"full", "copies", "data", "memops"};
static const int kTilesPerBand = 8;

static void flag_ops(CUstream s, unsigned int *flags, int n, bool wait) {
    std::vector<CUstreamBatchMemOpParams> ops(n);
    memset(ops.data(), 0, sizeof(ops[0]) * n);
    for (int i = 0; i < n; i++) {
        if (wait) {
            ops[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
            ops[i].waitValue.address = (CUdeviceptr)(flags + i);
            ops[i].waitValue.value = 0xFFFFFFFFu;
            ops[i].waitValue.flags = CU_STREAM_WAIT_VALUE_AND;
        } else {
            ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
            ops[i].writeValue.address = (CUdeviceptr)(flags + i);
            ops[i].writeValue.value = 1; /* not 0: the next replay's waits must pass */
        }
    }
    CKD(cuStreamBatchMemOp(s, (unsigned)n, ops.data(), 0));
}

/* A graph of `bands` bands of `bytes` each from src to dst, variant v. */
static cudaGraphExec_t chain(int bands, size_t bytes, Variant v, const char *src, char *dst, unsigned int *flags,
                             unsigned int *flags_dst, cudaStream_t s) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    for (int b = 0; b < bands; b++) {
        unsigned int *f = flags + b * kTilesPerBand;
        if (v == FULL || v == MEMOPS) flag_ops((CUstream)s, f, kTilesPerBand, true);
        if (v != MEMOPS) CK(cudaMemcpyAsync(dst + b * bytes, src + b * bytes, bytes, cudaMemcpyDefault, s));
        if (v == FULL || v == COPIES)
            CK(cudaMemcpyAsync(flags_dst + b * kTilesPerBand, f, kTilesPerBand * 4, cudaMemcpyDefault, s));
        if (v == FULL || v == MEMOPS) flag_ops((CUstream)s, f, kTilesPerBand, false);
    }
    CK(cudaStreamEndCapture(s, &g));
    cudaGraphExec_t e;
    CK(cudaGraphInstantiate(&e, g, 0));
    CK(cudaGraphDestroy(g));
    return e;
}

/* Median over 5 windows of the time per replay (us). */
static double time_us(cudaGraphExec_t e, cudaStream_t s) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; i++) CK(cudaGraphLaunch(e, s));
    double w[5];
    for (int k = 0; k < 5; k++) {
        CK(cudaEventRecord(a, s));
        for (int i = 0; i < 50; i++) CK(cudaGraphLaunch(e, s));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        w[k] = ms * 1000.0 / 50;
    }
    std::sort(w, w + 5);
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return w[2];
}

/* The mem-op nodes alone: 16 bands of n operations each, waits only, writes only, both - per operation or per node? */
static void ops_table(unsigned int *flags, cudaStream_t s) {
    printf("| ops a node | waits us a band | writes us a band | both us a band |\n|---|---|---|---|\n");
    for (int n : {1, 8, 64, 255}) {
        double t[3];
        for (int k = 0; k < 3; k++) {
            cudaGraph_t g;
            CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
            for (int b = 0; b < 16; b++) {
                if (k != 1) flag_ops((CUstream)s, flags, n, true);
                if (k != 0) flag_ops((CUstream)s, flags, n, false);
            }
            CK(cudaStreamEndCapture(s, &g));
            cudaGraphExec_t e;
            CK(cudaGraphInstantiate(&e, g, 0));
            CK(cudaGraphDestroy(g));
            t[k] = time_us(e, s) / 16;
            CK(cudaGraphExecDestroy(e));
        }
        printf("| %d | %.2f | %.2f | %.2f |\n", n, t[0], t[1], t[2]);
        fflush(stdout);
    }
}

int main(int argc, char **argv) {
    CK(cudaSetDevice(0));
    CKD(cuInit(0));
    const size_t kMax = 64ull << 20;
    const int kMaxBands = 64; /* x kTilesPerBand = 512 flags, enough for the ops table's 255 too */
    char *src, *dev_dst, *host_dst;
    unsigned int *flags, *flags_dev_dst, *flags_host_dst;
    CK(cudaMalloc(&src, kMax));
    CK(cudaMalloc(&dev_dst, kMax));
    CK(cudaMallocHost(&host_dst, kMax));
    CK(cudaMalloc(&flags, kMaxBands * kTilesPerBand * 4));
    CK(cudaMalloc(&flags_dev_dst, kMaxBands * kTilesPerBand * 4));
    CK(cudaMallocHost(&flags_host_dst, kMaxBands * kTilesPerBand * 4));
    int gpus = 0;
    CK(cudaGetDeviceCount(&gpus));
    char *peer_dst = nullptr;
    unsigned int *flags_peer_dst = nullptr;
    if (gpus > 1) { /* the chains' copies across GPUs: device 0 -> device 1, peer access both ways as the runtime has */
        CK(cudaDeviceEnablePeerAccess(1, 0));
        CK(cudaSetDevice(1));
        CK(cudaDeviceEnablePeerAccess(0, 0));
        CK(cudaMalloc(&peer_dst, kMax));
        CK(cudaMalloc(&flags_peer_dst, kMaxBands * kTilesPerBand * 4));
        CK(cudaSetDevice(0));
    }
    std::vector<unsigned int> ones(kMaxBands * kTilesPerBand, 1u), noise(kMax / 4);
    for (size_t i = 0; i < noise.size(); i++) noise[i] = (unsigned)rand() * 2654435761u;
    CK(cudaMemcpy(src, noise.data(), kMax, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(flags, ones.data(), ones.size() * 4, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    if (argc > 1 && !strcmp(argv[1], "ops")) {
        ops_table(flags, s);
        return 0;
    }
    const int band_counts[] = {1, 4, 16, 64};
    const size_t band_bytes[] = {64u << 10, 1u << 20};
    printf("| dst | band bytes | variant | 1 band us | 4 | 16 | 64 | us a band (16->64) |\n|---|---|---|---|---|---|---|---|\n");
    char *dsts[] = {host_dst, dev_dst, peer_dst};
    unsigned int *flag_dsts[] = {flags_host_dst, flags_dev_dst, flags_peer_dst};
    const char *dst_names[] = {"pinned host", "device", "peer (device 1)"};
    for (int d = 0; d < (peer_dst ? 3 : 2); d++)
        for (size_t bytes : band_bytes)
            for (int v = FULL; v <= MEMOPS; v++) {
                double t[4];
                for (int i = 0; i < 4; i++) {
                    cudaGraphExec_t e = chain(band_counts[i], bytes, (Variant)v, src, dsts[d], flags, flag_dsts[d], s);
                    t[i] = time_us(e, s);
                    CK(cudaGraphExecDestroy(e));
                }
                printf("| %s | %zu KiB | %s | %.1f | %.1f | %.1f | %.1f | %.2f |\n", dst_names[d],
                       bytes >> 10, kVariantName[v], t[0], t[1], t[2], t[3], (t[3] - t[2]) / 48.0);
                fflush(stdout);
            }
    CK(cudaStreamSynchronize(s));
    return 0;
}
