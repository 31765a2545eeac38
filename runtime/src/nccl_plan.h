/* The NCCL transport's transfers, derived from a schedule table alone (pure; tests/c/test_nccl_plan.c).
 *
 * The peer transport moves data where and when the table's COPY nodes and the GEMM's per-tile pushes say. Over
 * NCCL the same tables become tp - 1 steps per rank, each one ncclSend and one ncclRecv in a group:
 *   all-gather, step for stage s = 1..tp-1: receive the shard that stage s consumes (entry `peer`) into slot
 *     src_slot; send the own shard to the rank whose stage s consumes it. The GEMM's stage-s tiles wait on
 *     stage flag s, raised after the receive.
 *   reduce-scatter, step for stage s = 0..tp-2: once every tile of stage s wrote its partial into the own slot
 *     dst_slot (its tile flags, polled on the device), send that slot to dst_peer, and receive the partial that
 *     stage s + 1 adds (from its entry's `peer`) into the receive bank's slot src_slot, whose tile flags are then
 *     raised for stage s + 1's tiles.
 * NCCL matches a send with a receive per pair of ranks, in issue order: step s of every rank must pair up
 * (tpg_nccl_plan_pairs checks it for every rank at once). */
#ifndef TPG_NCCL_PLAN_H
#define TPG_NCCL_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "tables.h"

typedef struct tpg_nccl_step {
    int stage;     /* all-gather: the stage whose shard arrives; reduce-scatter: the stage whose partial is sent */
    int send_peer; /* -1: nothing sent */
    int send_slot; /* reduce-scatter: own slot sent (the stage's dst_slot); all-gather: -1 (the own shard) */
    int recv_peer; /* -1: nothing received */
    int recv_slot; /* all-gather: slot received into; reduce-scatter: slot of the receive bank */
} tpg_nccl_step;

/* Rank's steps into steps[0 .. tp-2]. Returns the number of steps (tp - 1), or -1 with a reason in why
 * (why_size bytes) when the table does not have this form (several ranks consume one shard at one stage, a
 * partial that does not go to the next stage, ...). */
int tpg_nccl_plan(const tpg_schedule_table *t, int rank, tpg_nccl_step *steps, char *why, size_t why_size);

/* A reduce-scatter step moves its stage's partial in row bands, each sent as soon as the tiles that write it are
 * done (nccl_graph.c): at most this many per stage (each costs a flag wait, an NCCL group and a flag raise). */
#define TPG_NCCL_RS_BANDS 4
/* Copy-engine partials (ce_partials.c) move a stage's partial in at most this many bands, no more than the slot
 * holds TPG_CE_RS_BAND_BYTES (so bands of about that many bytes or more, in whole tile rows): the last band's copy
 * is the tail a receiver can wait on (one GPU: the ring with a chain of a band per tile row beside it ran 1.00 of
 * itself, docs/perf_notes/2026-12-04-c.md), and each band costs its waits (~0.2 us a tile row) and two copy-engine
 * operations (~3 us each from device to pinned host, whatever the size: docs/perf_notes/2026-12-04-e.md) - at 4 MiB,
 * ~10 us over NVLink, about a third of the band's time. Untuned across GPUs. */
#define TPG_CE_RS_BANDS 16
#define TPG_CE_RS_BAND_BYTES (4u << 20)

/* The rows of a reduce-scatter stage's partial as the GEMM's tiles cover them: `batches` batches of `rows` rows,
 * tiles of `tile_rows` rows and `tiles_n` tiles per tile row (tile flag t = (batch * tiles_m + tm) * tiles_n + tn),
 * `row_bytes` per row; batches follow each other in the slot. */
typedef struct tpg_nccl_rows {
    int64_t batches, rows, tile_rows, tiles_n;
    size_t row_bytes;
} tpg_nccl_rows;

/* One band: whole tile rows of the flattened (batch, tile row) index, the slot bytes they cover and their flags. */
typedef struct tpg_nccl_band {
    size_t offset, bytes;  /* in the slot */
    int64_t tile0, tiles;  /* tile flags [tile0, tile0 + tiles) */
} tpg_nccl_band;

/* Bands used for r: TPG_NCCL_RS_BANDS, or fewer when there are fewer tile rows. */
int tpg_nccl_band_count(const tpg_nccl_rows *r);
/* The same for another cap: `most`, or fewer when there are fewer tile rows (copy-engine partials cut their
 * stages' partials in the same bands: ce_partials.c). */
int tpg_nccl_band_count_at_most(const tpg_nccl_rows *r, int most);
/* Bands used by copy-engine partials for a slot of slot_bytes with rows r: TPG_CE_RS_BANDS, fewer where the slot holds
 * fewer TPG_CE_RS_BAND_BYTES (at least one), or where there are fewer tile rows. */
int tpg_ce_band_count(const tpg_nccl_rows *r, size_t slot_bytes);
/* Band i of `bands`: tile rows split as evenly as they go; the bands cover the slot and the flags once, in order. */
tpg_nccl_band tpg_nccl_band_of(const tpg_nccl_rows *r, int i, int bands);

/* Every rank's plan exists and at every step each send has the matching receive on its peer (and the reverse).
 * 0, or -1 with a reason in why. */
int tpg_nccl_plan_pairs(const tpg_schedule_table *t, char *why, size_t why_size);

/* The SMs a rank's persistent GEMM gets over NCCL on a device of `sm_count`: TPG_NCCL_FREE_SMS fewer at TP >= 2, where
 * NCCL's kernels run beside it; all of them at TP = 1, which transfers nothing. 0 where a TP >= 2 rank's device has
 * too few to leave NCCL its share and keep as many (a small MIG slice): the context is refused there. */
int tpg_nccl_gemm_sms(int sm_count, int tp);

/* How rank's launch `epoch` gave up, by its status and give-up words read while it runs (nccl_wait.c): 0 where it did
 * not (no give-up bit in the status, or the give-up word at an earlier launch's epoch), TPG_DEVICE_TIMEOUT where a
 * wait of its own
 * timed out, TPG_DEVICE_PEER_GAVE_UP where a partial it received was incomplete (its sender gave up; a rank that NCCL
 * then owes a later transfer waits for it for good). Either way every later wait of the launch returns at once, so a
 * launch still busy a while after it is stuck in NCCL and only an abort ends it. */
unsigned int tpg_nccl_launch_gave_up(unsigned int status, unsigned int gave_up, unsigned int epoch);

#endif /* TPG_NCCL_PLAN_H */
