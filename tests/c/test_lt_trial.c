/* The --lt-algos trial's pure parts (bench/lt_trial.c): each round's order is a permutation, the rounds' orders differ
 * (the first, rotated design put #0 right after #N-1 in every round), and the winner is #0 unless another candidate's
 * median beats #0's fastest window. No GPU. */
#include <math.h>
#include <string.h>

#include "../../bench/bench.h"
#include "tpg_test.h"

TPG_TEST(each_round_is_a_permutation_and_the_orders_vary) {
    uint32_t seed = 0x9e3779b9u;
    int first[LT_MAX_ALGOS], order[LT_MAX_ALGOS], differs = 0, last_first = 0, zero_after_last = 0;
    for (int w = 0; w < 9; w++) {
        int seen[LT_MAX_ALGOS] = {0};
        lt_shuffled(order, 8, &seed);
        for (int j = 0; j < 8; j++) seen[order[j]]++;
        for (int i = 0; i < 8; i++) TPG_EXPECT(seen[i] == 1);
        if (!w) memcpy(first, order, sizeof order);
        differs += memcmp(first, order, 8 * sizeof order[0]) != 0;
        last_first += order[0] == 7;
        for (int j = 1; j < 8; j++) zero_after_last += order[j] == 0 && order[j - 1] == 7;
    }
    TPG_EXPECT(differs >= 7);                          /* not one order nine times */
    TPG_EXPECT(zero_after_last < 9 && last_first < 9); /* #0 not always behind #7 */
    lt_shuffled(order, 1, &seed);
    TPG_EXPECT(order[0] == 0);
}

TPG_TEST(the_top_algorithm_stays_unless_clearly_beaten) {
    const double inf = INFINITY;
    /* #2's median 95 beats #0's fastest window 97: it wins */
    TPG_EXPECT(lt_trial_winner((double[]){100, 99, 95}, (double[]){97, 98, 94}, 3) == 2);
    /* #1's median 98 is lower than #0's 100 but not than #0's fastest window 96: #0 stays */
    TPG_EXPECT(lt_trial_winner((double[]){100, 98, 99}, (double[]){96, 97, 98}, 3) == 0);
    /* a candidate that dropped out never wins; one candidate is #0 */
    TPG_EXPECT(lt_trial_winner((double[]){100, inf, 101}, (double[]){99, inf, 100}, 3) == 0);
    TPG_EXPECT(lt_trial_winner((double[]){100}, (double[]){99}, 1) == 0);
}

TPG_TEST(a_tie_with_the_tops_fastest_window_keeps_the_top) {
    TPG_EXPECT(lt_trial_winner((double[]){100, 97}, (double[]){97, 96}, 2) == 0);
}

TPG_TEST(two_candidates_are_shuffled_too) { /* --lt-algos 2 is allowed */
    uint32_t seed = 0x9e3779b9u;
    int order[2], swapped = 0;
    for (int w = 0; w < 16; w++) lt_shuffled(order, 2, &seed), swapped += order[0] == 1;
    TPG_EXPECT(swapped > 0 && swapped < 16);
}

TPG_TEST_MAIN(TPG_CASE(each_round_is_a_permutation_and_the_orders_vary),
              TPG_CASE(the_top_algorithm_stays_unless_clearly_beaten),
              TPG_CASE(a_tie_with_the_tops_fastest_window_keeps_the_top),
              TPG_CASE(two_candidates_are_shuffled_too))
