/* The cross-device barrier kernel (1 block x 1 thread) at the start and end of every device's graph.
 *
 * start: epoch += 1 (own word; this kernel is its only writer), then a system-scope release add of 1 on
 *        every peer's start counter, then wait (acquire, bounded by timeout_ns) until own start counter
 *        >= epoch * (tp - 1). Counters only grow, so an early arrival for the next launch is harmless.
 * end:   the same on the end counters, with the epoch read, not advanced; first it sets its own all-gather stage
 *        flags in use (stage_flags: flag_rows x flag_pieces words at the layout's stride; 0 rows for the other ops
 *        and where the GEMM pulls the shards, which raises no flag) to the epoch. A FLAG
 *        node copies a peer's epoch word (graph.c says why), which is one ahead where that peer gave up on this
 *        call and has started its next (its start barrier bumps the word before it waits): this device's next call
 *        would pass its stage waits on that flag before its own copy landed, and read the old shard. Every FLAG
 *        node of the call precedes this barrier and those of the next follow it, and a flag at the epoch keeps
 *        any wait of this call that still polls (its GEMM beside the barriers) passing.
 * On timeout the kernel sets *status |= TPG_DEVICE_BARRIER_TIMEOUT, sets *gave_up_epoch to its epoch, tells
 * the peers (below) and returns; it returns at once (after its arrivals) when *gave_up_epoch already holds its
 * epoch (another wait of this launch timed out: gemm_params.h says why).
 * Telling the peers: a rank that gave up no longer waits in its closing barrier for a late peer to finish
 * reading its inputs (its shard, its slots, the partials it pushes next call), so before its arrivals the
 * closing barrier raises every peer's gave_up_notice to the epoch (a system-scope compare-and-swap that never
 * lowers it, wrap-aware; a timeout raises it when it fires). A late peer passes its own closing barrier on those
 * arrivals, then reads its notice: reached (epoch.h: at its epoch or a little past), it sets
 * TPG_DEVICE_PEER_GAVE_UP and its call fails (TPG_ERR_TIMEOUT) instead of returning an output that the peer may
 * have overwritten under it. A notice that no give-up raised for 2^19 calls is moved up to the epoch before the
 * owner's, so that it never wraps into the window.
 * Counters wrap after 2^32 / (tp - 1) launches; their comparisons are wrap-aware (signed difference: a counter is
 * never far from its target).
 */
#ifndef TPG_BARRIER_H
#define TPG_BARRIER_H

#include "gemm_params.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tpg_barrier_mode { TPG_BARRIER_START = 0, TPG_BARRIER_END = 1 } tpg_barrier_mode;

typedef struct tpg_barrier_params {
    int mode;                                /* tpg_barrier_mode */
    int tp, rank;
    unsigned int *epoch;                     /* own epoch word */
    unsigned int *counter;                   /* own counter of this mode */
    unsigned int *peer_counter[TPG_MAX_TP];  /* every rank's counter of this mode ([rank] unused) */
    unsigned int *status;                    /* own status word */
    unsigned int *gave_up_epoch;             /* own word: see tpg_gemm_params.gave_up_epoch (NULL: not kept) */
    unsigned int *gave_up_notice[TPG_MAX_TP]; /* every rank's notice word ([rank]: own; NULL: not kept) */
    unsigned long long timeout_ns;           /* 0 = wait forever */
    unsigned int *stage_flags;               /* end, all-gather over the peer transport: own stage flags (else NULL) */
    int flag_rows, flag_pieces;              /* the rows (stride TPG_MAX_COPY_CHUNKS) and pieces a FLAG node writes */
#ifdef TPG_TRACE
    unsigned long long *trace;               /* trace builds: 3 words (entry, arrived, exit) of the
                                                trace header's barrier[mode] (trace_format.h); NULL = off */
    unsigned int *trace_gave_up;             /* the header's barrier_gave_up[mode] (NULL = off) */
#endif
} tpg_barrier_params;

/* The __global__ void(tpg_barrier_params) function, for a graph kernel node. */
const void *tpg_barrier_kernel_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* TPG_BARRIER_H */
