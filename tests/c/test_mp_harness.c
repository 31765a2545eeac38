/* The forked-rank harness of the multi-process GPU tests (tests/gpu/mp_harness.c), without a GPU: its
 * shared-memory all-gather delivers every rank's record in rank order round after round, a failing rank gets
 * its waiting peers killed at once (not after their 30 s waits), a gather told to fail counts no round, and a rank's
 * skip (3) is the run's. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c11 */
#include <time.h>

#include "../gpu/mp_harness.h"
#include "tpg_test.h"

enum { RANKS = 4, ROUNDS = 40 };

static int gathers_in_rank_order(mp_rank *me, void *arg) {
    (void)arg;
    for (int round = 0; round < ROUNDS; round++) {
        int send = me->rank * 1000 + round, recv[RANKS] = {0};
        if (mp_allgather(&send, recv, sizeof send, me)) return 1;
        for (int q = 0; q < RANKS; q++)
            if (recv[q] != q * 1000 + round) return 1;
    }
    return 0;
}

static int rank1_fails_the_rest_wait(mp_rank *me, void *arg) {
    (void)arg;
    if (me->rank == 1) return 1;
    int send = 0, recv[RANKS];
    mp_allgather(&send, recv, sizeof send, me); /* waits for rank 1 until killed */
    return 0;
}

/* Every rank's gather fails once, as when a framework's store is gone: nothing is counted, the next round pairs up */
static int a_failed_gather_leaves_the_ranks_in_step(mp_rank *me, void *arg) {
    (void)arg;
    int send = me->rank, recv[RANKS] = {0};
    me->fail_next = 1;
    if (mp_allgather(&send, recv, sizeof send, me) != 1 || me->fail_next || me->round != 0) return 1;
    if (mp_allgather(&send, recv, sizeof send, me)) return 1;
    for (int q = 0; q < RANKS; q++)
        if (recv[q] != q) return 1;
    return me->round == 1 ? 0 : 1;
}

static int rank2_skips(mp_rank *me, void *arg) {
    (void)arg;
    return me->rank == 2 ? 3 : 0;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

TPG_TEST(all_gather_delivers_every_round_in_rank_order) {
    TPG_EXPECT_EQ_INT(mp_run(RANKS, 30, gathers_in_rank_order, NULL), 0);
}

TPG_TEST(a_failing_rank_gets_its_waiting_peers_stopped) {
    const double t0 = now_s();
    TPG_EXPECT_EQ_INT(mp_run(RANKS, 60, rank1_fails_the_rest_wait, NULL), 1);
    TPG_EXPECT(now_s() - t0 < MP_GATHER_WAIT_S / 3.0);
}

TPG_TEST(a_gather_told_to_fail_fails_once_and_counts_no_round) {
    TPG_EXPECT_EQ_INT(mp_run(RANKS, 30, a_failed_gather_leaves_the_ranks_in_step, NULL), 0);
}

TPG_TEST(a_skipping_rank_skips_the_run) { TPG_EXPECT_EQ_INT(mp_run(RANKS, 30, rank2_skips, NULL), 3); }

TPG_TEST(rank_counts_outside_the_harness_are_refused) {
    TPG_EXPECT_EQ_INT(mp_run(0, 30, rank2_skips, NULL), 1);
    TPG_EXPECT_EQ_INT(mp_run(MP_MAX_RANKS + 1, 30, rank2_skips, NULL), 1);
}

TPG_TEST_MAIN(TPG_CASE(all_gather_delivers_every_round_in_rank_order),
              TPG_CASE(a_failing_rank_gets_its_waiting_peers_stopped),
              TPG_CASE(a_gather_told_to_fail_fails_once_and_counts_no_round), TPG_CASE(a_skipping_rank_skips_the_run),
              TPG_CASE(rank_counts_outside_the_harness_are_refused))
