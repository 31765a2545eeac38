/* The copy-engine route of a reduce-scatter push on one GPU ("ce chain" of `kernel_selftest --rs-far`;
 * selftest_ce_chain.cu says what and why). */
#ifndef TPG_SELFTEST_CE_CHAIN_H
#define TPG_SELFTEST_CE_CHAIN_H

#include <cuda_runtime.h>
#include <stddef.h>

/* One sending stage's partial (m x n, row-major, elem_bytes an element, in tiles of bm x bn) and its flags */
struct ce_chain {
    cudaStream_t stream;          /* the side stream the chain runs on (not the GEMM's) */
    const void *src;              /* the partial as the sending stage stored it (device) */
    void *dst;                    /* where the copy engine carries it (host memory) */
    const unsigned int *sent;     /* the sending stage's tile flags (raised by the GEMM) */
    unsigned int *arrived;        /* the receiving stage's tile flags (written by the chain) */
    unsigned int *counts;         /* graph form: the tile-row counts (tpg_gemm_params.row_counts) */
    int m, n, bm, bn, elem_bytes;
};

/* Whether the driver has stream memory operations (cuStreamBatchMemOp); fetched once. */
bool ce_chain_available();
/* On c.stream, per band (one tile row): wait for its sent flags >= epoch, copy its rows, write its arrived flags. */
void ce_chain_enqueue(const ce_chain &c, unsigned int epoch);
/* The graph form, values that repeat every call: per band wait until its counter reaches the band's tiles, write 0
 * back, copy its rows (no arrived flags: the receiver keeps waiting on the sent ones). For stream capture. */
void ce_chain_enqueue_counted(const ce_chain &c);

#endif
