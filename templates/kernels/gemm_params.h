/* The launch parameters of the sm90 GEMM kernel family: the one contract between the C runtime, which
 * fills them from the generated schedule tables, and the kernel, which walks them.
 *
 * Plain C (no C++), so that the runtime C sources (runtime/src) and the kernel headers (templates/kernels)
 * include the same definition.
 *
 * One launch computes every stage of one device's share of a distributed GEMM:
 *   for stage s in 0..num_stages-1, for every output tile of that stage (batches included):
 *     out = alpha * scale_a * scale_b * (A_s . B_s^T) + partial_s + beta * C_s
 *   where A_s is a (m x k) block of the stage's A map starting at row a_row0 (per batch), B_s an (n x k)
 *   block of its B map starting at b_row0, and partial_s / C_s are optional sources.
 * Operands are K-major (row-major M x K for A, row-major N x K for B, i.e. a Linear weight).
 * Batches: each map stacks L batches of `*_batch_rows` rows; batch l of a stage starts at row
 *   l * a_batch_rows + a_row0 (A) and l * b_batch_rows + b_row0 (B).
 */
#ifndef TPG_GEMM_PARAMS_H
#define TPG_GEMM_PARAMS_H

#include <cuda.h> /* CUtensorMap */

#ifdef __cplusplus
extern "C" {
#endif

/* The largest TP degree (and so the largest number of stages) a kernel launch can walk. */
#define TPG_MAX_TP 8

/* Bits of the rank's status word (tpg_gemm_params.status, tpg_barrier_params.status). 0 means no failure was
 * seen on the device. */
#define TPG_DEVICE_OK 0u
#define TPG_DEVICE_TIMEOUT 1u         /* a stage wait inside the GEMM (peer data or flag) */
#define TPG_DEVICE_BARRIER_TIMEOUT 2u /* a cross-device barrier */
#define TPG_DEVICE_PEER_GAVE_UP 4u    /* a peer gave up on this call (or a later one) while this rank was late:
                                        the peer may have reused what this rank read (closing barrier) */

typedef struct tpg_stage_params {
    CUtensorMap a_map; /* 2-D map {k, a rows}, swizzled over a box row (128B or 64B), box {BK, a_box_rows} */
    CUtensorMap b_map; /* 2-D map {k, b rows}, swizzled over a box row (128B or 64B), box {BK, BN} */
    /* Destination map (TMA store): 3-D {n, m, l} over `d` with row stride d_ld and batch stride d_batch
     * (bytes = elements * sizeof(output)), i.e. exactly the stage's true m x n extent per batch, so the
     * store clips ragged tiles; 128B swizzle, box {128 / sizeof(output), 64, 1}. `d` stays the same
     * pointer (documentation, host checks). */
    CUtensorMap d_map;
    int a_row0, b_row0;           /* first row of this stage's block inside one batch of the map */
    /* Rows of a_map's box (the bytes the producer expects per slot follow it): BM / CN, or fewer where the launch
     * has fewer rows than a tile (runtime/src/params.c, a_box_rows); 0 (parameters built by hand): BM / CN. */
    int a_box_rows;
    int a_batch_rows, b_batch_rows; /* rows of one batch in the map (batch stride in rows) */

    /* Prologue wait (all-gather): before loading a tile of this stage, the producer waits until
     * wait_flag[c] >= epoch for every chunk c up to the one holding the tile's rows of the rotating
     * operand (copy_chunks.h: B's rows when wait_b, else A's; chunk c = flat rows [c, c + 1) *
     * wait_chunk_rows). wait_chunk_rows 0: one flag for the whole stage. NULL: the stage's operands are
     * local and ready. */
    const unsigned int *wait_flag;
    int wait_chunk_rows;
    int wait_b;

    /* Destination of this stage's tiles: the user's D (local) or a partial slot: in the receiving peer's
     * memory (pushed), or in this device's own for the receiver to read (`pull_partials`).
     * Row-major, element type = output dtype, leading dimension d_ld elements, batch stride d_batch. */
    void *d;
    long long d_ld, d_batch;

    /* Received partial (reduce-scatter ring), added with coefficient 1: in this device's slot (pushed) or the
     * sender's (`pull_partials`; then partial_flags are the sender's too). NULL: none. Before reading the
     * partial of tile t the epilogue waits until partial_flags[t] >= epoch (t = tile index in stage,
     * see tpg_tile_index in scheduler.cuh). */
    const void *partial;
    long long partial_ld, partial_batch;
    const unsigned int *partial_flags;
    /* The same partial as a TMA-load map, encoded like d_map (3-D {n, m, l}, 128B or 64B swizzle, box of
     * one store unit): kernels with `tma_partials` load it into their store buffers. Unset without a
     * partial. */
    CUtensorMap partial_map;

    /* User source C, scaled by beta. NULL: no C term. */
    const void *c;
    long long c_ld, c_batch;

    /* After tile t of this stage is fully written to d, the epilogue raises signal_flags[t] = epoch
     * with system-scope release (the flags may live in a peer's memory). NULL: no signal. */
    unsigned int *signal_flags;
} tpg_stage_params;

typedef struct tpg_gemm_params {
    tpg_stage_params stage[TPG_MAX_TP];
    int num_stages;   /* 1..TPG_MAX_TP */
    /* 1: the walk takes the stages' units interleaved (uid = unit * num_stages + stage, scheduler.cuh) instead of
     * stage after stage. The runtime sets it for ping-pong reduce-scatter rings whose stages split M into one tile
     * row each, where the whole walk is one wave of the grid (the order then only places tiles) or a stage has at
     * most 64 rows and at least 32 MiB of B (reading B is then the cost) and the transport waits per tile: the
     * stages' tiles of one output position read the same B tile, and on neighbouring CTAs they read it in step;
     * and for batched all-gathers of such stages, gated: every stage waits on the last copy's flags
     * (runtime/src/params.c says when and why; docs/perf_notes/2026-12-02-b.md, 19:03Z and 21:32Z sections). 0 for
     * every other launch - an all-gather of one batch and few rows a stage is one stage of all its rows there
     * (gathered_params). */
    int stage_minor;
    int m, n, k, l;   /* per-stage output extent m x n, reduction length k, batch count l */
    float alpha, beta;
    const float *scale_a, *scale_b; /* per-tensor scales (fp8); NULL means 1 */
    /* The launch epoch. The GEMM after the start barrier reads `epoch`, the word that barrier advanced. Beside
     * it (tpg_op_set_overlap_barriers: the barrier may not have run yet) `epoch` is NULL and the GEMM takes
     * *last_epoch + 1: last_epoch holds the epoch of this device's previous GEMM launch of the op (launches of
     * the op on a device run in order and each runs the start barrier once, so the two agree). Every GEMM
     * keeps last_epoch: after the start barrier CTA 0 stores its epoch there; beside it, the last CTA to
     * count itself in epoch_readers (all CTAs have read last_epoch by then) stores it and resets the count.
     * Nothing is written by the host per launch, so a launch can be captured and replayed. Both NULL (unit
     * tests, TP = 1): epoch 0, every wait passes. */
    const unsigned int *epoch;
    unsigned int *last_epoch;
    unsigned int *epoch_readers;
    unsigned int *status;           /* TPG_DEVICE_* ; set, never cleared, by the kernel */
    /* The last launch epoch in which a cross-device wait of this rank timed out (set to it; the start barrier
     * moves a value 2^31 launches behind up to the epoch before its own: epoch.h; NULL: not kept).
     * Every other such wait of the same launch - the start barrier before or beside the GEMM, the GEMM's
     * threads, the closing barrier - gives up as soon as it reads its own epoch here, so a call with a missing
     * peer ends one timeout after it began, not one per wait in turn. Per launch, not a sticky bit: a later
     * launch still waits its full bound. Giving up means this rank's closing barrier no longer holds it until
     * a late peer has read its inputs, so the closing barrier tells every peer (tpg_barrier_params.
     * gave_up_notice), and a late peer's closing barrier reports TPG_DEVICE_PEER_GAVE_UP instead of a clean
     * call. */
    unsigned int *gave_up_epoch;
    unsigned long long timeout_ns;  /* bound on every spin-wait; 0 = wait forever */
    /* The gathered all-gather walk's copies made by this GEMM itself (runtime/src/params.c: gathered_params; NULL
     * pull_count: none, the graph's copy nodes brought the shards). Before its tiles the grid copies each shard
     * b < pull_shards - pull_src[b], a peer's A through its mapped address or the device's own - into pull_dst + b *
     * pull_bytes, in gridDim.x slices that CTAs claim from the queue *pull_next (so resident CTAs pull the slices of
     * any that are not), counting each done in *pull_count; the producer loads no tile before the count reaches
     * gridDim.x, then counts its CTA in *pull_seen, and the last one to do so resets the three words, which are thus 0
     * between launches (a launch starts after the previous one ended). The graph runs this GEMM after the start
     * barrier, so the peers' shards are this call's (templates/kernels/pull_shards.cuh). */
    const void *pull_src[TPG_MAX_TP];
    void *pull_dst;
    unsigned long long pull_bytes; /* of one shard: a multiple of 16 */
    unsigned int *pull_next;
    unsigned int *pull_count;
    unsigned int *pull_seen;
    int pull_shards;
    /* raster: hilbert kernels only: the walk order of one batch's units_m x units_n units, entry r =
     * (um << 16) | un (runtime/src/raster.h); NULL for kernels that compute their grouped raster */
    const int *tile_order;
    /* Stream-K tail (stream_k.h; one-stage launches of cooperative 1x1 kernels, else 0 / NULL): the last
     * sk_tiles tiles of the walk are split along k over all CTAs. CTA c leaves a contribution to region
     * tile t (the rows it has of BM x BN fp32 sums, gemm_sm90_fixup.cuh) at sk_partials + c * BM * BN and
     * adds 1 to sk_counts[t]; the tile's finisher waits for its count, takes it back for the next launch
     * and adds the contributions. */
    int sk_tiles;
    int sk_rounds; /* data-parallel tiles per CTA before the region: (all tiles - sk_tiles) / grid, exact */
    float *sk_partials;
    unsigned int *sk_counts; /* one a region tile: fewer than 2 x grid */
    /* Copy-engine partials (runtime/src/ce_partials.c; else NULL / 0): after raising a signal flag the epilogue adds 1
     * to that flag's tile-row count, row_counts[(flag - row_count_flags) / row_count_tiles_n] - flags lie tile row
     * after tile row, row_count_tiles_n to a row - so that the copy chain waits for a band with one mem-op wait a
     * tile row, on a value that repeats every call (the row's tiles; the chain copies zeros back), not one a tile:
     * the copy engine's front end takes ~0.2 us a wait and ~0.7 us a write (docs/perf_notes/2026-12-04-e.md). */
    unsigned int *row_counts;
    const unsigned int *row_count_flags;
    int row_count_tiles_n;
#ifdef TPG_TRACE
    /* Trace builds only (`ninja trace`, every object compiled with -DTPG_TRACE, so runtime and kernel
     * agree on the layout): the device's timeline buffer (trace_format.h), NULL = not tracing. Normal
     * builds keep the layout above unchanged. */
    void *trace;
#endif
} tpg_gemm_params;

#ifdef __cplusplus
}
#endif

#endif /* TPG_GEMM_PARAMS_H */
