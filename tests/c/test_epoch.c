/* Epoch comparisons (templates/kernels/epoch.h), which every flag wait, the flag kernels and the closing barrier's
 * notice check use: across the wrap, against stale words, and the give-up word's launch 0. No GPU needed; the
 * barrier itself at those epochs is tests/gpu/test_barrier_epochs.c. */
#include "epoch.h"
#include "tpg_test.h"

TPG_TEST(a_flag_at_or_just_past_the_epoch_has_reached_it) {
    const unsigned int epochs[] = {1u, 7u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 0u};
    for (size_t i = 0; i < sizeof epochs / sizeof epochs[0]; i++) {
        const unsigned int e = epochs[i];
        TPG_EXPECT(tpg_epoch_reached(e, e));
        TPG_EXPECT(tpg_epoch_reached(e + 1u, e));      /* a peer a call ahead, across the wrap too */
        TPG_EXPECT(tpg_epoch_reached(e + 1000u, e));
        TPG_EXPECT(!tpg_epoch_reached(e - 1u, e));     /* last call's flag: not yet */
        TPG_EXPECT(!tpg_epoch_reached(e - 1000u, e));
    }
}

/* What a signed difference got wrong: a word unwritten since epoch ~0 reads as "ahead" once the epoch passes 2^31
 * (a notice that never saw a give-up failed every call from then on; a flag of a mode the op switched to passed at
 * once). */
TPG_TEST(a_word_left_behind_for_half_the_range_is_not_ahead) {
    TPG_EXPECT(!tpg_epoch_reached(0u, 0x80000001u));
    TPG_EXPECT(!tpg_epoch_reached(0u, 0xfffffffeu - TPG_EPOCH_WINDOW));
    TPG_EXPECT(!tpg_epoch_reached(5u, 0x90000000u));
    TPG_EXPECT((int)(0u - 0x80000001u) >= 0); /* the old test, for the record: it called that word "ahead" */
    /* what the window leaves: a word more than 2^32 - window behind; the closing barrier moves its notice up long
     * before (tpg_epoch_stale) */
    TPG_EXPECT(tpg_epoch_reached(0u, 0u - 5u));
}

TPG_TEST(a_notice_is_stale_from_half_a_window_behind) {
    TPG_EXPECT(!tpg_epoch_stale(100u, 100u));
    TPG_EXPECT(!tpg_epoch_stale(99u, 100u));
    TPG_EXPECT(!tpg_epoch_stale(0u, TPG_EPOCH_WINDOW / 2 - 1u));
    TPG_EXPECT(tpg_epoch_stale(0u, TPG_EPOCH_WINDOW / 2));
    TPG_EXPECT(tpg_epoch_stale(0u, 0x80000001u));
    TPG_EXPECT(!tpg_epoch_stale(101u, 100u)); /* ahead: a peer's give-up of the next call, never moved down */
    /* refreshed to epoch - 1, a notice never reads as reached at the wrap */
    for (unsigned int e = 0u - 3u; e != 3u; e++) TPG_EXPECT(!tpg_epoch_reached(e - 1u, e));
}

/* The give-up word is read exactly, so what the closing barrier leaves there when no wait gave up must never be a
 * near launch's epoch: not its own (the CAS keeps a give-up), not the next ones, across the wrap too. */
TPG_TEST(the_give_up_word_is_exact_and_the_barrier_leaves_it_far_from_the_next_epochs) {
    TPG_EXPECT(tpg_epoch_gave_up(42u, 42u));
    TPG_EXPECT(!tpg_epoch_gave_up(41u, 42u));
    TPG_EXPECT(!tpg_epoch_gave_up(43u, 42u));
    const unsigned int epochs[] = {1u, 5u, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu, 0u};
    for (size_t i = 0; i < sizeof epochs / sizeof epochs[0]; i++) {
        const unsigned int e = epochs[i], left = tpg_epoch_no_give_up(e);
        for (unsigned int next = 0; next < TPG_EPOCH_WINDOW; next += 4099u)
            TPG_EXPECT(!tpg_epoch_gave_up(left, e + next));
        TPG_EXPECT(!tpg_epoch_gave_up(left, e + 1u));
    }
    TPG_EXPECT(!tpg_epoch_gave_up(0u, 1u)); /* the initial word: epochs start at 1 */
}

TPG_TEST_MAIN(TPG_CASE(a_flag_at_or_just_past_the_epoch_has_reached_it),
              TPG_CASE(a_word_left_behind_for_half_the_range_is_not_ahead),
              TPG_CASE(a_notice_is_stale_from_half_a_window_behind),
              TPG_CASE(the_give_up_word_is_exact_and_the_barrier_leaves_it_far_from_the_next_epochs))
