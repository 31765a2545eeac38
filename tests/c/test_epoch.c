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
        TPG_EXPECT(tpg_epoch_reached(e + TPG_EPOCH_WINDOW - 1u, e)); /* the window's last word ahead */
        TPG_EXPECT(!tpg_epoch_reached(e + TPG_EPOCH_WINDOW, e));     /* and past it: a stale word, not ahead */
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

/* The start barrier's rule (barrier.cu age_give_up) as an invariant, by induction: before each launch the word is
 * 1 .. 2^31 launches behind its epoch (the initial 0 before launch 1 is 1 behind); the start barrier ages it, and the
 * launch gives up (the word takes its epoch) or not; the next launch finds the word 1 .. 2^31 behind again, so never
 * its own epoch, whatever the launch count - across every wrap. */

TPG_TEST(no_launch_reads_an_old_give_up_as_its_own) {
    TPG_EXPECT(tpg_epoch_gave_up(42u, 42u));
    TPG_EXPECT(!tpg_epoch_gave_up(41u, 42u));
    TPG_EXPECT(!tpg_epoch_gave_up(43u, 42u));
    const unsigned int epochs[] = {1u, 2u, 5u, 0x7fffffffu, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu, 0u};
    const unsigned int behind[] = {1u, 2u, 3u, 1000u, 0x7ffffffeu, 0x7fffffffu, 0x80000000u};
    for (size_t i = 0; i < sizeof epochs / sizeof epochs[0]; i++)
        for (size_t j = 0; j < sizeof behind / sizeof behind[0]; j++)
            for (int gives_up = 0; gives_up <= 1; gives_up++) {
                const unsigned int e = epochs[i], before = e - behind[j];
                TPG_EXPECT(!tpg_epoch_gave_up(before, e));
                const unsigned int aged = tpg_epoch_give_up_refresh(before, e), after = gives_up ? e : aged;
                TPG_EXPECT(!tpg_epoch_gave_up(aged, e)); /* ageing never makes it this launch's give-up */
                const unsigned int next_behind = (e + 1u) - after;
                TPG_EXPECT(next_behind >= 1u && next_behind <= 0x80000000u);
            }
    TPG_EXPECT(tpg_epoch_give_up_refresh(0u, 0x80000000u) == 0x7fffffffu); /* the initial 0, 2^31 later */
    TPG_EXPECT(tpg_epoch_give_up_refresh(0u, 0x7fffffffu) == 0u);          /* one launch before: left alone */
    TPG_EXPECT(tpg_epoch_give_up_refresh(0u, 5u) == 0u);                   /* a load a call, no write */
    TPG_EXPECT(tpg_epoch_give_up_refresh(9u, 9u) == 9u); /* a give-up of this launch (beside the barrier) */
}

TPG_TEST_MAIN(TPG_CASE(a_flag_at_or_just_past_the_epoch_has_reached_it),
              TPG_CASE(a_word_left_behind_for_half_the_range_is_not_ahead),
              TPG_CASE(a_notice_is_stale_from_half_a_window_behind),
              TPG_CASE(no_launch_reads_an_old_give_up_as_its_own))
