/* The per-op symmetric allocation: one per device, the same layout on every device, so that a peer's
 * section is (peer's base from the peer table) + (the same offset).
 *
 *   slots        [(tp-1) x slot_bytes]   receive buffers; slot s-1 feeds stage s (reduce-scatter with
 *                                        pull_partials or the NCCL transport: send buffers, slot s written by
 *                                        own stage s); the gathered all-gather walk has tp end to end, slot b
 *                                        holding A's block b (params.c: gathered_params), the one-hop
 *                                        reduce-scatter walk too, slot b holding block b of the rank's partial
 *                x banks                 banks = 2: a receive bank after them (reduce-scatter over NCCL:
 *                                        slot tpg_buf_recv_slot(s) receives what slot s of the sender held), or
 *                                        a send bank (copy-engine partials: slot tpg_buf_send_slot(s) holds what
 *                                        the copy chain carries into the receiver's slot s; ce_partials.c)
 *   stage_flags  [tp x 32] u32           all-gather: a FLAG node writes the epoch when chunk c of slot s-1
 *                                        landed (flag s * TPG_MAX_COPY_CHUNKS + c; copy_chunks.h)
 *   tile_flags   [slots x tiles] u32     reduce-scatter: per-tile "partial in slot s-1 is complete" (one-hop: the
 *                                        flags of the rank's one GEMM, tile t at word t)
 *                x banks                 (pull_partials: raised by the owner, polled by the receiver; NCCL:
 *                                        the receive bank's raised after the receive, nccl_graph.c; copy-engine
 *                                        partials: the send bank's raised by the GEMM and counted by tile row
 *                                        in row_counts, which the copy chain waits on and zeroes)
 *   epoch        u32                     launch counter; the start barrier is its only writer
 *   last_epoch   u32                     the epoch of the rank's previous GEMM launch (the GEMM's own word:
 *                                        tpg_gemm_params.epoch says why); equals epoch when the device is idle
 *   epoch_readers u32                    GEMM CTAs of the running launch that have read last_epoch (beside the
 *                                        start barrier only; the last one resets it: 0 when the device is idle)
 *   start, end   u32 each                barrier arrival counters (peers add, owner waits)
 *   status       u32                     TPG_DEVICE_* bits, set by the kernels, read by tpg_op_sync
 *   gave_up      u32                     the last launch epoch in which a cross-device wait timed out
 *                                        (tpg_gemm_params.gave_up_epoch; set to it; the start barrier moves a
 *                                        value 2^31 launches behind up: epoch.h)
 *   gave_up_notice u32                   the last epoch in which a *peer* gave up (peers raise it, wrap-aware,
 *                                        the closing barrier reads it and keeps it near its epoch; barrier.h)
 *   transfers_done u32                   the NCCL transport: the epoch whose transfers all completed (the last
 *                                        step raises it, a wait after the GEMM bounds the transfers: nccl_graph.c)
 *   pull_next, pull_count, pull_seen      u32 each: the gathered walk's GEMM when it pulls the shards: the next
 *                                        slice to claim, the slices done, the CTAs whose producer saw them all
 *                                        (tpg_gemm_params.pull_count: 0 between launches; own memory only)
 *   row_counts   [rows] u32            copy-engine partials only (tpg_buffer_layout_add_row_counts): per tile row of
 *                                        every slot's flags (both banks), the tiles the GEMM raised there this call
 *                                        (tpg_gemm_params.row_counts; only the send bank's count), which the copy
 *                                        chain waits on and then copies host zeros over (ce_partials.c)
 * Each section starts on a 256-byte boundary; everything is zeroed at creation.
 */
#ifndef TPG_BUFFERS_H
#define TPG_BUFFERS_H

#include <stddef.h>

#include "copy_chunks.h"
#include "tpgemm.h"

typedef struct tpg_buffer_layout {
    int tp;
    int banks;              /* 1, or 2 with a receive bank (see above) */
    int num_slots;          /* slots of a bank: tp - 1, or tp (end to end: gathered or one-hop) */
    int64_t tiles_per_stage;
    size_t slot_bytes;      /* slot stride (rounded up to 256 B; end to end: the bytes used) */
    size_t slot_bytes_used; /* bytes of data in a slot (what a COPY moves) */
    size_t slots, stage_flags, tile_flags, epoch, last_epoch, epoch_readers, start_counter, end_counter, status, gave_up,
        gave_up_notice, transfers_done, pull_next, pull_count, pull_seen, row_counts; /* byte offsets */
    int64_t row_count_rows; /* tile rows counted (0: no row_counts section) */
    size_t total;
} tpg_buffer_layout;

/* end_to_end: tp slots end to end (one A of tp blocks under one TMA map: params.c, gathered_params; or one partial
 * of tp blocks: one_hop_params), else tp - 1 slots (per bank), each on a 256-byte boundary. Tile flags: tiles_per_stage
 * for each slot (end to end: enough for one GEMM of all tp blocks' rows). */
void tpg_buffer_layout_init(tpg_buffer_layout *b, int tp, size_t slot_bytes, int64_t tiles_per_stage, int banks,
                            int end_to_end);

/* Copy-engine partials: a row_counts section after the rest, a count for each of the tile flags' rows of tiles_n
 * flags (tiles_per_stage is a whole number of rows). */
void tpg_buffer_layout_add_row_counts(tpg_buffer_layout *b, int64_t tiles_n);

/* Allocates and zeroes the symmetric buffer on rank's device (made current here). */
tpg_status tpg_buffers_alloc(tpg_ctx *ctx, int rank, const tpg_buffer_layout *b, void **out);

/* Fills `bytes` of device memory p (current device) from host memory, or with zeros where host is NULL, done before
 * anything launched afterwards on any stream: on a private non-blocking stream, waited for. A plain cudaMemset, or a
 * cudaMemcpy from pageable memory, goes to the legacy stream, which the context's and a framework's non-blocking
 * streams do not wait for, and may still run when it returns; cudaDeviceSynchronize would also wait for every op in
 * flight on the device - one waiting for a peer that has not launched yet among them. */
tpg_status tpg__device_fill(tpg_ctx *ctx, void *p, const void *host, size_t bytes);
void tpg_buffers_free(void *base);

/* Addresses inside a buffer whose base is `base` (own or a peer's). */
static inline void *tpg_buf_slot(void *base, const tpg_buffer_layout *b, int slot) {
    return (char *)base + b->slots + (size_t)slot * b->slot_bytes;
}
static inline unsigned int *tpg_buf_word(void *base, size_t offset) {
    return (unsigned int *)((char *)base + offset);
}
/* Flag of chunk 0 of stage s's copy (chunk c: + c). */
static inline unsigned int *tpg_buf_stage_flags(void *base, const tpg_buffer_layout *b, int stage) {
    return tpg_buf_word(base, b->stage_flags) + (size_t)stage * TPG_MAX_COPY_CHUNKS;
}
/* Index of the receive bank's slot paired with slot s (banks = 2). */
static inline int tpg_buf_recv_slot(const tpg_buffer_layout *b, int slot) { return slot + b->num_slots; }
/* Index of the send bank's slot paired with slot s (banks = 2, copy-engine partials: the second bank is where a
 * sending stage writes, and the first receives as under the push, as the one-hop walk's flags are the first bank's;
 * only the ring's GEMM counts its flags into row_counts, the one-hop walk's has none). */
static inline int tpg_buf_send_slot(const tpg_buffer_layout *b, int slot) { return slot + b->num_slots; }
static inline unsigned int *tpg_buf_tile_flags(void *base, const tpg_buffer_layout *b, int slot) {
    return tpg_buf_word(base, b->tile_flags) + (size_t)slot * (size_t)b->tiles_per_stage;
}
/* Count of tile row `row` of the tile flags (row r holds flags r * tiles_n ..; the first of slot s: s *
 * tiles_per_stage / tiles_n). */
static inline unsigned int *tpg_buf_row_count(void *base, const tpg_buffer_layout *b, int64_t row) {
    return tpg_buf_word(base, b->row_counts) + row;
}

#endif /* TPG_BUFFERS_H */
