/* The pure parts of the --lt-algos trial (bench/lt.c times the candidates): each round's order and the winner's
 * rule. No CUDA, no cuBLAS: tests/c/test_lt_trial.c checks both. */
#include "bench.h"

void lt_shuffled(int *order, int n, uint32_t *seed) {
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) { /* Fisher-Yates over a xorshift32 stream */
        *seed ^= *seed << 13, *seed ^= *seed >> 17, *seed ^= *seed << 5;
        const int j = (int)(*seed % (uint32_t)(i + 1)), t = order[i];
        order[i] = order[j], order[j] = t;
    }
}

int lt_trial_winner(const double *us, const double *fastest, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (us[i] < us[best]) best = i;
    return us[best] < fastest[0] ? best : 0;
}
