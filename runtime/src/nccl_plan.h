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

/* Every rank's plan exists and at every step each send has the matching receive on its peer (and the reverse).
 * 0, or -1 with a reason in why. */
int tpg_nccl_plan_pairs(const tpg_schedule_table *t, char *why, size_t why_size);

#endif /* TPG_NCCL_PLAN_H */
