/* In-kernel timeline trace (layout: trace_format.h). Compiled in only with -DTPG_TRACE (`ninja trace`);
 * otherwise this header defines nothing but TPG_TR, which then expands to nothing, so the shipped
 * kernel's code is unchanged (checked by comparing `nvcc -cubin` output with and without the hooks).
 *
 * Usage at a hook:  TPG_TR(tpg_tr_stage_wait(p, stage, piece, t0, gave_up);)
 * Every hook is a no-op when p.trace is NULL (the normal calls of a trace build) and only the lane's one
 * writer thread calls it. Records go straight to global memory (no registers held across a mainloop
 * next to the accumulators): a tile record is opened at mainloop start and completed in place.
 */
#ifndef TPG_TRACE_CUH
#define TPG_TRACE_CUH

#ifdef TPG_TRACE
#define TPG_TR(...) __VA_ARGS__

#include <stdint.h>
#include "gemm_params.h"
#include "scheduler.cuh"
#include "trace_format.h"

__device__ __forceinline__ uint64_t tpg_tr_now()
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* This CTA's block, or NULL (tracing off, or more CTAs than the buffer holds). */
__device__ __forceinline__ tpg_trace_cta *tpg_tr_cta(const tpg_gemm_params &p)
{
    tpg_trace_header *h = static_cast<tpg_trace_header *>(p.trace);
    if (!h || blockIdx.x >= h->ctas) return nullptr;
    return reinterpret_cast<tpg_trace_cta *>(reinterpret_cast<char *>(h) + TPG_TRACE_HEADER_BYTES +
                                             (uint64_t)blockIdx.x * tpg_trace_cta_bytes(h->cap));
}

/* Record n of lane `lane`, or NULL when n is past the cap. */
__device__ __forceinline__ tpg_trace_rec *tpg_tr_rec(const tpg_gemm_params &p, tpg_trace_cta *c, int lane, uint32_t n)
{
    const uint32_t cap = static_cast<const tpg_trace_header *>(p.trace)->cap;
    if (n >= cap) return nullptr;
    return reinterpret_cast<tpg_trace_rec *>(reinterpret_cast<char *>(c) + TPG_TRACE_CTA_BYTES) + (uint64_t)lane * cap + n;
}

/* Thread 0 of every CTA, at kernel entry; CTA 0 also fills the launch description. */
__device__ __forceinline__ void tpg_tr_cta_start(const tpg_gemm_params &p, const tpg_tiling &g, int bm, int bn,
                                                 int cluster, int pingpong)
{
    if (threadIdx.x != 0 || !p.trace) return;
    const uint64_t now = tpg_tr_now();
    tpg_trace_header *h = static_cast<tpg_trace_header *>(p.trace);
    tpg_trace_cta *c = tpg_tr_cta(p);
    if (!c) {
        atomicAdd(&h->ctas_dropped, 1u);
        return;
    }
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    c->t_start = now;
    c->smid = smid;
    c->written = TPG_TRACE_MAGIC;
    if (blockIdx.x == 0) {
        h->grid = gridDim.x;
        h->tiles_m = (uint32_t)g.tiles_m;
        h->tiles_n = (uint32_t)g.tiles_n;
        h->k_blocks = (uint32_t)g.k_blocks;
        h->total_units = (uint32_t)g.total;
        h->num_stages = (uint32_t)p.num_stages;
        h->bm = (uint32_t)bm;
        h->bn = (uint32_t)bn;
        h->cluster = (uint32_t)cluster;
        h->pingpong = (uint32_t)pingpong;
        h->pulls = p.pull_count ? 1u : 0u;
        h->kernel_written = TPG_TRACE_MAGIC;
    }
}

/* Producer (lane 0): appends a record of `kind` with every time zeroed (NULL past the cap or without a
 * buffer); `now` is read before the append, so the record's first time is not late by it. */
__device__ __forceinline__ tpg_trace_rec *tpg_tr_append_producer(const tpg_gemm_params &p, uint32_t kind,
                                                                 int stage, int tile, uint64_t *now)
{
    const int lane = 0;
    tpg_trace_cta *c = tpg_tr_cta(p);
    if (!c) return nullptr;
    *now = tpg_tr_now();
    const uint32_t n = c->count[lane];
    c->count[lane] = n + 1;
    tpg_trace_rec *r = tpg_tr_rec(p, c, lane, n);
    if (!r) return nullptr;
    r->kind = kind;
    r->stage = stage;
    r->tile = tile;
    r->flags = 0;
    r->t[0] = r->t[1] = r->t[2] = r->t[3] = r->t[4] = r->t[5] = 0;
    return r;
}

/* Producer: a stage-flag wait that started at t0 has just returned, having seen the flags of the stage's
 * copy up to piece `piece` (copy_chunks.h; 0 for a whole-shard copy), kept in the record's tile field - or, with
 * gave_up (a wait returned false: sync.cuh), not seen them all. */
__device__ __forceinline__ void tpg_tr_stage_wait(const tpg_gemm_params &p, int stage, int piece, uint64_t t0,
                                                  bool gave_up)
{
    uint64_t now;
    tpg_trace_rec *r = tpg_tr_append_producer(p, TPG_TRACE_REC_STAGE_WAIT, stage, piece, &now);
    if (!r) return;
    r->t[0] = t0;
    r->t[1] = now;
    if (gave_up) r->flags |= TPG_TRACE_F_GAVE_UP;
}

/* Producer: it starts issuing unit `tile`'s loads (t[1], t[2] follow through tpg_tr_tile_mark on lane 0). */
__device__ __forceinline__ void tpg_tr_loads_begin(const tpg_gemm_params &p, int stage, int tile)
{
    uint64_t now;
    tpg_trace_rec *r = tpg_tr_append_producer(p, TPG_TRACE_REC_LOADS, stage, tile, &now);
    if (!r) return;
    r->t[0] = now;
    r->t[4] = (uint64_t)clock64(); /* tpg_tr_loads_ring turns it into the issue span */
}

/* Consumer warpgroup thread 0 (lane = 1 + warpgroup): a tile's mainloop starts. Written out, not through
 * a shared append helper like the producer's: that spilled 14 bytes in the cooperative 128x256 trace build. */
__device__ __forceinline__ void tpg_tr_tile_begin(const tpg_gemm_params &p, int lane, int stage, int tile, bool stored)
{
    tpg_trace_cta *c = tpg_tr_cta(p);
    if (!c) return;
    const uint64_t now = tpg_tr_now();
    const uint32_t n = c->count[lane];
    c->count[lane] = n + 1;
    tpg_trace_rec *r = tpg_tr_rec(p, c, lane, n);
    if (!r) return;
    r->kind = TPG_TRACE_REC_TILE;
    r->stage = stage;
    r->tile = tile;
    r->flags = stored ? 0u : TPG_TRACE_F_NOT_STORED;
    r->t[0] = now;
    r->t[1] = r->t[2] = r->t[3] = r->t[4] = r->t[5] = 0;
}

/* The open tile record of `lane` (the last one appended), or NULL. */
__device__ __forceinline__ tpg_trace_rec *tpg_tr_open(const tpg_gemm_params &p, int lane)
{
    tpg_trace_cta *c = tpg_tr_cta(p);
    if (!c || c->count[lane] == 0) return nullptr;
    return tpg_tr_rec(p, c, lane, c->count[lane] - 1);
}

/* Time slot `i` of the open tile record: 1 epilogue start, 2 end, 5 (ping-pong) every store issued, a
 * signal flag's flush next. */
__device__ __forceinline__ void tpg_tr_tile_mark(const tpg_gemm_params &p, int lane, int i)
{
    tpg_trace_rec *r = tpg_tr_open(p, lane);
    if (r) r->t[i] = tpg_tr_now();
}

/* Producer, after a unit's last k-block is issued: SM clock cycles it waited for a free slot on the unit's
 * k-blocks after the first (the ring was full: every slot loaded, in flight or held by the consumers), and cycles
 * since its loads began (TPG_TRACE_REC_LOADS t[3], t[4]; tpg_tr_loads_begin left the start clock in t[4],
 * which keeps it out of the producer's registers). Cycles, not ns: the waits are short and many. */
__device__ __forceinline__ void tpg_tr_loads_ring(const tpg_gemm_params &p, uint32_t full_cycles)
{
    tpg_trace_rec *r = tpg_tr_open(p, 0);
    if (!r) return;
    r->t[3] = full_cycles;
    r->t[4] = (uint64_t)clock64() - r->t[4];
}

/* Epilogue (reduce-scatter): the partial-flag wait of the open tile started at t0 and has returned (with gave_up:
 * without seeing the flag - the wait returned false, not merely after an earlier wait of the thread gave up). */
__device__ __forceinline__ void tpg_tr_partial_wait(const tpg_gemm_params &p, int lane, uint64_t t0, bool gave_up)
{
    tpg_trace_rec *r = tpg_tr_open(p, lane);
    if (!r) return;
    r->t[3] = t0;
    r->t[4] = tpg_tr_now();
    r->flags |= TPG_TRACE_F_PARTIAL | (gave_up ? TPG_TRACE_F_GAVE_UP : 0u);
}

/* Stage, tile and stored flag of the open tile record, when they are known only after its mainloop (the
 * cooperative walk decodes its tile there). */
__device__ __forceinline__ void tpg_tr_tile_label(const tpg_gemm_params &p, int lane, int stage, int tile, bool stored)
{
    tpg_trace_rec *r = tpg_tr_open(p, lane);
    if (!r) return;
    r->stage = stage;
    r->tile = tile;
    r->flags = stored ? 0u : TPG_TRACE_F_NOT_STORED;
}

/* Adds `flags` (TPG_TRACE_F_*) to the open tile record of `lane`. */
__device__ __forceinline__ void tpg_tr_tile_flag(const tpg_gemm_params &p, int lane, uint32_t flags)
{
    tpg_trace_rec *r = tpg_tr_open(p, lane);
    if (r) r->flags |= flags;
}

/* The lane's writer thread has finished its walk. */
__device__ __forceinline__ void tpg_tr_lane_end(const tpg_gemm_params &p, int lane)
{
    tpg_trace_cta *c = tpg_tr_cta(p);
    if (c) c->lane_end[lane] = tpg_tr_now();
}

#else
#define TPG_TR(...)
#endif /* TPG_TRACE */

#endif /* TPG_TRACE_CUH */
