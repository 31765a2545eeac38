/* The copy-engine route of a reduce-scatter push on one GPU (`kernel_selftest --rs-far`, variant "ce chain"): the
 * ring's sending stage stores its partial locally and raises its tile flags as always; a side stream, per band of
 * tiles (one tile row), waits until the band's flags reach the call's epoch (stream memory operations: no SM
 * polls), copies the band's rows into host memory with the copy engine, and then writes the receiving stage's own
 * flags for the band - which that stage waits on before it adds the partial. So the receiver sees a band only after
 * the copy engine has carried it over the host link, as a peer would see it across NVLink, and the GEMM's SMs issue
 * no bulk store over the link at all.
 *
 * Why: the SM-issued push over a slow link holds up the pushing tiles' operand loads (+10% mainloop on the far
 * ring, docs/perf_notes/2026-12-04-c.md), while a copy-engine copy of the same bytes beside the call cost the GEMM
 * nothing ("far ce", 2026-12-04 06:52Z). This chain adds what the real route needs besides the copy - the per-band
 * waits and flag writes, and the receiver's dependence on them - before any of it is built into the runtime's graph
 * (docs/PERF_NOTES.md "Next": such waits as graph nodes need care; here they are plain stream operations).
 * Timing only: the copy reads the slot the receiver also reads locally. */
#include "selftest_ce_chain.h"

#include <cuda.h>
#include <string.h>

#include "selftest_util.cuh"

typedef CUresult (*batch_mem_op_fn)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);
static batch_mem_op_fn g_batch;
enum { MAX_OPS = 255 }; /* the most operations one batch holds (the driver's limit: fewer than 256) */

bool ce_chain_available()
{
    if (g_batch) return true;
    g_batch = (batch_mem_op_fn)driver_symbol("cuStreamBatchMemOp");
    return g_batch != nullptr;
}

/* One batch of `n` waits (flags[t] >= value, t in [t0, t0 + n)) or writes (flags[t] = value) on `s`; n <= MAX_OPS. */
static void flag_batch(cudaStream_t s, const unsigned int *flags, int t0, int n, unsigned int value, bool wait)
{
    CUstreamBatchMemOpParams ops[MAX_OPS];
    memset(ops, 0, sizeof ops);
    for (int i = 0; i < n; ++i) {
        const CUdeviceptr a = (CUdeviceptr)(uintptr_t)(flags + t0 + i);
        if (wait) {
            ops[i].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
            ops[i].waitValue.address = a;
            ops[i].waitValue.value = value;
            ops[i].waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
        } else {
            ops[i].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
            ops[i].writeValue.address = a;
            ops[i].writeValue.value = value;
            ops[i].writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT; /* after the copy before it, in stream order */
        }
    }
    const CUresult r = g_batch((CUstream)s, (unsigned int)n, ops, 0);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuStreamBatchMemOp failed (%d)\n", (int)r);
        exit(2);
    }
}

void ce_chain_enqueue(const ce_chain &c, unsigned int epoch)
{
    const int tiles_m = (c.m + c.bm - 1) / c.bm, tiles_n = (c.n + c.bn - 1) / c.bn;
    const size_t row_bytes = (size_t)c.n * c.elem_bytes;
    for (int b = 0; b < tiles_m; ++b) { /* band b: tile row b, tiles b * tiles_n ... (tpg_tile_index, batch 0) */
        for (int t = 0; t < tiles_n; t += MAX_OPS)
            flag_batch(c.stream, c.sent, b * tiles_n + t, tiles_n - t < MAX_OPS ? tiles_n - t : MAX_OPS, epoch, true);
        const int rows = c.m - b * c.bm < c.bm ? c.m - b * c.bm : c.bm;
        const size_t at = (size_t)b * c.bm * row_bytes;
        CK(cudaMemcpyAsync((char *)c.dst + at, (const char *)c.src + at, (size_t)rows * row_bytes,
                           cudaMemcpyDeviceToHost, c.stream));
        for (int t = 0; t < tiles_n; t += MAX_OPS)
            flag_batch(c.stream, c.arrived, b * tiles_n + t, tiles_n - t < MAX_OPS ? tiles_n - t : MAX_OPS, epoch,
                       false);
    }
}

void ce_chain_enqueue_counted(const ce_chain &c)
{
    const int tiles_m = (c.m + c.bm - 1) / c.bm, tiles_n = (c.n + c.bn - 1) / c.bn;
    const size_t row_bytes = (size_t)c.n * c.elem_bytes;
    for (int b = 0; b < tiles_m; ++b) {
        flag_batch(c.stream, c.counts, b, 1, (unsigned int)tiles_n, true);
        flag_batch(c.stream, c.counts, b, 1, 0u, false); /* the next call counts from 0 (it starts after this one) */
        const int rows = c.m - b * c.bm < c.bm ? c.m - b * c.bm : c.bm;
        const size_t at = (size_t)b * c.bm * row_bytes;
        CK(cudaMemcpyAsync((char *)c.dst + at, (const char *)c.src + at, (size_t)rows * row_bytes,
                           cudaMemcpyDeviceToHost, c.stream));
    }
}
