/* The one-hop reduce-scatter walk's REDUCE kernel (plan.h: TPG_WALK_ONE_HOP; params.c: one_hop_params).
 *
 * Few tokens: a ring stage of fewer rows than a tile reads all of B, fills its tiles part-way and waits, epilogue
 * after epilogue, for the previous stage's partial. The one-hop walk runs instead one GEMM of all M rows per rank
 * into the rank's own slots (slot b: block b of its partial, end to end) - raising each tile's flag to the epoch,
 * system-scope release, as a ring stage does - and then this kernel: rank d sums block d of every rank's partial,
 * read where it lies (a peer's through its mapped address), in rank order, in fp32, adds beta * C and writes its D
 * shard. One hop per partial instead of tp - 1, and no part-filled tiles.
 *
 * Work: items (tile row of the GEMM crossing block d, tile column), claimed round-robin by the CTAs. Thread 0 of a
 * CTA waits (acquire at system scope, bounded by timeout_ns) until every rank's flag of the item's tile holds the
 * epoch, then a CTA barrier passes that on to the threads, each of which sums 8 adjacent elements (16-byte loads of
 * a 16-bit partial) of every rank. A timeout sets TPG_DEVICE_TIMEOUT and the launch's gave_up_epoch (the item's
 * output is then not written; the call fails), and every later wait of the launch gives up at once.
 * The partials are read until this kernel ends; the graph's closing barrier follows it, so no rank's next GEMM
 * writes its slots before every rank has read them (copy_plan.h: tpg_graph_items_one_hop).
 */
#ifndef TPG_ONE_HOP_H
#define TPG_ONE_HOP_H

#include "gemm_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tpg_one_hop_params {
    int tp, rank;
    int rows, cols;        /* the rank's block: stage_m x stage_n, rows row0 .. row0 + rows - 1 of every GEMM */
    int row0;              /* rank * rows */
    int bm, bn, tiles_n;   /* the GEMM's tiling: the flag of tile (tm, tn) is word tm * tiles_n + tn */
    int partial_f32;       /* partials are fp32 (`partials: f32`), else the output type */
    int out_fp16;          /* D and C are fp16, else bf16 */
    const void *src[TPG_MAX_TP];                /* rank r's slot `rank`: block `rank` of r's partial, ld = cols */
    const unsigned int *src_flags[TPG_MAX_TP];  /* rank r's tile flags of its GEMM */
    void *d;               /* the rank's D shard, ld d_ld elements */
    long long d_ld;
    const void *c;         /* the rank's C shard (ld c_ld) scaled by beta; NULL: none */
    long long c_ld;
    float beta;
    const unsigned int *epoch; /* own epoch word (the start barrier advanced it) */
    unsigned int *status;
    unsigned int *gave_up_epoch;
    unsigned long long timeout_ns; /* 0 = wait forever */
} tpg_one_hop_params;

#ifdef __CUDACC__
#define TPG_ONE_HOP_HD __host__ __device__
#else
#define TPG_ONE_HOP_HD
#endif

/* Items of a launch (tile rows crossing the block x tile columns): the grid never needs more CTAs. */
static inline TPG_ONE_HOP_HD int tpg_one_hop_items(const tpg_one_hop_params *p) {
    if (p->rows < 1 || p->bm < 1) return 0;
    return ((p->row0 + p->rows - 1) / p->bm - p->row0 / p->bm + 1) * p->tiles_n;
}

/* The __global__ void(tpg_one_hop_params) function, for a graph kernel node of TPG_ONE_HOP_THREADS threads. */
const void *tpg_one_hop_kernel_entry(void);
#define TPG_ONE_HOP_THREADS 256

#ifdef __cplusplus
}
#endif

#endif /* TPG_ONE_HOP_H */
