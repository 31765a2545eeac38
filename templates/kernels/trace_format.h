/* Layout of the per-device timeline trace buffer (TPG_TRACE builds, `ninja trace`). Plain C: the kernel
 * (trace.cuh), the barrier kernel, the runtime (runtime/src/trace.c) and the CLI's JSON writer
 * (runtime/src/cli/trace_json.c) include the same definition. Normal builds include this header too
 * (the JSON writer and its unit test are built everywhere), but nothing in them writes a trace: the
 * pointers that reach the buffer (tpg_gemm_params.trace, tpg_barrier_params.trace) exist only under
 * TPG_TRACE.
 *
 * One buffer per device, one launch (the runtime zeroes it before the traced call):
 *
 *   tpg_trace_header                        TPG_TRACE_HEADER_BYTES (256)
 *   ctas x { tpg_trace_cta                  TPG_TRACE_CTA_BYTES (64)
 *            TPG_TRACE_LANES x cap x tpg_trace_rec (64 bytes each) }
 *
 * Lanes of a CTA: 0 = the producer thread (stage-flag waits), 1 + w = consumer warpgroup w (its thread
 * 0 writes one record per tile). Each lane has exactly one writer thread, so appending is a plain
 * read-increment-store of the lane's count, no atomics. Bounded: a record is written only when its
 * index is < cap; the count keeps counting, so count - cap (when positive) is the number dropped. A CTA
 * with blockIdx.x >= ctas writes nothing and raises header.ctas_dropped.
 *
 * All times are %globaltimer nanoseconds of the device that wrote them (0 = never written), except the
 * producer's ring-full figures (TPG_TRACE_REC_LOADS t[3], t[4]: SM clock cycles). Resolution
 * is whatever the GPU's global timer gives (documented as ns, updated at ~32 ns to 1 us depending on the
 * GPU and driver); tiles last tens of microseconds, so it is enough to see the overlap.
 */
#ifndef TPG_TRACE_FORMAT_H
#define TPG_TRACE_FORMAT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TPG_TRACE_MAGIC 0x54475054u /* "TPGT" little-endian */
#define TPG_TRACE_VERSION 1u
#define TPG_TRACE_LANES 4           /* producer + up to 3 consumer warpgroups */
#define TPG_TRACE_HEADER_BYTES 256
#define TPG_TRACE_CTA_BYTES 64
#define TPG_TRACE_DEFAULT_CAP 512   /* records per lane */

/* tpg_trace_rec.kind */
#define TPG_TRACE_REC_TILE 1u       /* t[0] mainloop start, t[1] epilogue start, t[2] end,
                                       t[3] / t[4] partial-flag wait start / end (flag bit 1),
                                       t[5] ping-pong: every store issued, so t[5] - t[4 or 1] is
                                       the sources' loads + arithmetic + store issue and t[2] - t[5]
                                       a signal flag's flush (0 in cooperative kernels) */
#define TPG_TRACE_REC_STAGE_WAIT 2u /* producer: t[0] wait start, t[1] flag seen (+ proxy fence) */
#define TPG_TRACE_REC_LOADS 3u      /* producer, one per unit: t[0] its loads start (the first k-block's
                                       empty-slot wait), t[1] k-block 0 issued, t[2] the last issued;
                                       t[3], t[4] in SM clock cycles, not ns: the waits for a free slot
                                       of k-blocks 1.. (the ring full), and t[0] .. t[2] */

/* tpg_trace_rec.flags */
#define TPG_TRACE_F_NOT_STORED 1u   /* cluster partner tile past the edge: computed, not stored */
#define TPG_TRACE_F_PARTIAL 2u      /* t[3], t[4] hold a partial-flag wait (reduce-scatter) */
#define TPG_TRACE_F_SK_CONTRIB 4u   /* stream-K: the record's k-blocks were a contribution to a split tile, which
                                       its finisher stores (the contributor's epilogue only adds to its count) */
#define TPG_TRACE_F_SK_FINISH 8u    /* stream-K: the finisher of a split tile (its epilogue waits for and adds the
                                       contributions, then stores) */
#define TPG_TRACE_F_GAVE_UP 16u     /* the record's flag wait (a stage wait, or a tile's partial wait) did not see its
                                       flag: it timed out, or an earlier wait of the thread or launch had (sync.cuh) */

typedef struct tpg_trace_rec {
    uint32_t kind;
    int32_t stage;
    int32_t tile;    /* canonical tile index inside the stage (docs/ARCHITECTURE.md), -1 for waits */
    uint32_t flags;
    uint64_t t[6];
} tpg_trace_rec; /* 64 bytes */

typedef struct tpg_trace_cta {
    uint64_t t_start;                    /* kernel entry of this CTA (thread 0) */
    uint32_t smid;                       /* %smid */
    uint32_t written;                    /* TPG_TRACE_MAGIC once the CTA started */
    uint32_t count[TPG_TRACE_LANES];     /* records appended per lane (may exceed cap) */
    uint64_t lane_end[TPG_TRACE_LANES];  /* the lane's writer finished its walk */
} tpg_trace_cta; /* 64 bytes */

typedef struct tpg_trace_header {
    /* host-written before the launch */
    uint32_t magic, version;
    uint32_t ctas;                       /* CTA blocks that follow */
    uint32_t cap;                        /* records per lane */
    /* barrier kernels: [TPG_BARRIER_START / END][entry, arrived at peers, exit] */
    uint64_t barrier[2][3];
    /* GEMM, written by CTA 0 thread 0 */
    uint32_t grid, tiles_m, tiles_n, k_blocks;
    uint32_t total_units, num_stages, ctas_dropped, kernel_written; /* kernel_written = TPG_TRACE_MAGIC */
    uint32_t bm, bn, cluster, pingpong;
    uint32_t pulls; /* 1: the GEMM pulled the gathered walk's shards itself (pull_shards.cuh), its stage wait theirs */
    /* barrier kernels, at their exit: [TPG_BARRIER_START / END] 1 where the barrier gave up (it timed out, or a wait
     * of the launch before it had), else 0 */
    uint32_t barrier_gave_up[2];
    uint32_t reserved[33];
} tpg_trace_header; /* 256 bytes */

/* every offset of the kernel's writes, the runtime's reads and trace_json.c's walk depends on these sizes */
#ifdef __cplusplus
#define TPG_TRACE_SIZE_CHECK static_assert
#else
#define TPG_TRACE_SIZE_CHECK _Static_assert
#endif
TPG_TRACE_SIZE_CHECK(sizeof(tpg_trace_rec) == 64 && sizeof(tpg_trace_cta) == TPG_TRACE_CTA_BYTES &&
                         sizeof(tpg_trace_header) == TPG_TRACE_HEADER_BYTES,
                     "trace_format.h: a record 64 bytes, a CTA block and the header their TPG_TRACE_*_BYTES");

#ifdef __CUDACC__
#define TPG_TRACE_HD __host__ __device__
#else
#define TPG_TRACE_HD
#endif

/* Bytes of one CTA block and of a whole buffer. */
static inline TPG_TRACE_HD uint64_t tpg_trace_cta_bytes(uint32_t cap)
{
    return (uint64_t)TPG_TRACE_CTA_BYTES + (uint64_t)TPG_TRACE_LANES * cap * sizeof(tpg_trace_rec);
}
static inline TPG_TRACE_HD uint64_t tpg_trace_bytes(uint32_t ctas, uint32_t cap)
{
    return (uint64_t)TPG_TRACE_HEADER_BYTES + (uint64_t)ctas * tpg_trace_cta_bytes(cap);
}

/* A node of the traced call's graph beside the GEMM - a copy, a flag's copy, the one-hop walk's REDUCE, a copy-engine
 * partial's band and its flags - timed on the host side by CUDA event nodes (runtime/src/trace_events.c), not by the
 * kernel: ns after the completion of the start barrier's node (the event that follows it). begin_ns: when the node's
 * dependencies were done - another timed node's end (a band's copy: the end of its wait for the band's tile rows), or
 * with from_start (its one dependency the start barrier) 0, which the JSON writer places at the barrier's own exit; -1
 * where one of them is untimed (the GEMM: the REDUCE's begin is its end). */
#define TPG_TRACE_NODE_COPY 1u   /* a piece of a peer's shard into this rank's slot (all-gather) */
#define TPG_TRACE_NODE_FLAG 2u   /* the 4-byte copy that raises a stage's flag after its copy */
#define TPG_TRACE_NODE_OWN 3u    /* the gathered walk's copy of the rank's own shard into its block */
#define TPG_TRACE_NODE_REDUCE 4u /* the one-hop walk's REDUCE kernel, after the GEMM */
/* copy-engine partials (runtime/src/ce_partials.c): a band of a sending stage's partial carried into the receiver's
 * slot (peer: the receiver, piece: the band), begun when its tile rows were all counted; then the band's tile flags */
#define TPG_TRACE_NODE_CE_COPY 5u
#define TPG_TRACE_NODE_CE_FLAGS 6u
/* timed nodes a rank: above the most a graph has (7 peer stages x 32 pieces x copy and flag = 448, or the gathered
 * walk's 7 shards x 32 pieces x 2 + its own shard; copy-engine partials: 7 stages x 16 bands x the wait's end, copy
 * and flags = 336); a graph with more would time its first ones */
#define TPG_TRACE_MAX_NODES 512
typedef struct tpg_trace_node_time {
    uint32_t kind; /* TPG_TRACE_NODE_* */
    int32_t stage, peer, piece;
    uint32_t from_start; /* its dependencies: the start barrier only */
    double begin_ns, end_ns;
} tpg_trace_node_time;

#ifdef __cplusplus
}
#endif

#endif /* TPG_TRACE_FORMAT_H */
