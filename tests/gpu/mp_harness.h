/* Forked ranks for the multi-process GPU tests: one process per rank, and the bootstrap all-gather
 * (tpg_allgather_fn) done through shared memory between them, as torch.distributed does it for a framework.
 * Fork happens before any CUDA call (a CUDA context does not survive fork). */
#ifndef TPG_TEST_MP_HARNESS_H
#define TPG_TEST_MP_HARNESS_H

#include <stdatomic.h>
#include <stddef.h>

enum {
    MP_MAX_RANKS = 8,
    MP_MAX_BYTES = 4096,  /* one rank's record of one all-gather */
    MP_GATHER_WAIT_S = 30 /* a rank whose peers stopped calling gives up (the runtime: TPG_ERR_BOOTSTRAP) */
};

/* Shared between the processes: one slot per rank and a round counter per rank. Round r uses slots[r % 2];
 * a rank reuses that half only after every rank has finished round r - 1 (the wait at the start of round
 * r + 1 of everyone), so two halves are enough. */
typedef struct mp_shared {
    int tp;
    _Atomic unsigned arrived[MP_MAX_RANKS]; /* rounds each rank has written */
    _Atomic unsigned left[MP_MAX_RANKS];    /* rounds each rank has finished reading */
    _Atomic unsigned signal[4];             /* for the test's own hand-offs between ranks */
    unsigned char slots[2][MP_MAX_RANKS][MP_MAX_BYTES];
} mp_shared;

/* One rank's view: tpg_rank_config.user for mp_allgather. */
typedef struct mp_rank {
    mp_shared *sh;
    int rank;
    unsigned round;
    int fail_next; /* 1: the next mp_allgather fails at once, touching nothing (a framework's store gone); reset */
} mp_rank;

/* tpg_allgather_fn over mp_shared; user is the rank's mp_rank. 1 when bytes is too large, a peer stopped or
 * fail_next was set (then the round is not counted: ranks that all fail it stay in step). */
int mp_allgather(const void *send, void *recv, size_t bytes, void *user);
/* Waits until *word >= want: 0, or 1 after MP_GATHER_WAIT_S. */
int mp_wait_at_least(_Atomic unsigned *word, unsigned want);
/* Runs rank_main(rank, arg) in tp forked processes. Returns 0 when every rank returned 0, 3 when a rank
 * returned 3 (too few devices: the caller reports a skip), else 1. The first rank to fail (or die) gets its
 * peers killed at once, so they do not sit out their waits; a rank still running after hang_s is killed. */
int mp_run(int tp, unsigned hang_s, int (*rank_main)(mp_rank *rank, void *arg), void *arg);

#endif /* TPG_TEST_MP_HARNESS_H */
