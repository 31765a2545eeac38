/* The benchmark's power fit (bench/energy.c): the slope of NVML's energy counter between the first and the
 * last step seen inside a window, which a before/after delta of a stepping counter gets wrong. */
#include <math.h>

#include "../../bench/bench.h"
#include "tpg_test.h"

/* A counter stepping every `period` s at `watts`, first seen at `t0`, the poll `lag` s late each time. */
static int steps_at(bench_energy_step *s, int cap, double t0, double period, double watts, double lag, double until) {
    int n = 0;
    for (double t = t0; t <= until && n < cap; t += period, n++)
        s[n] = (bench_energy_step){t + lag * (n % 2), (unsigned long long)llround(1e6 + watts * (t - t0) * 1e3)};
    return n;
}

TPG_TEST(fits_the_power_of_a_stepping_counter) {
    bench_energy_step s[64];
    const int n = steps_at(s, 64, 10.0, 0.05, 690.0, 0.0, 11.0); /* 20 Hz steps over 1 s */
    TPG_ASSERT(n >= 20);
    const double w = bench_fit_power(s, n, 10.1, 11.0);
    TPG_EXPECT(fabs(w - 690.0) < 0.5);
}

TPG_TEST(poll_lag_moves_the_fit_by_little) {
    bench_energy_step s[64];
    const int n = steps_at(s, 64, 0.0, 0.05, 700.0, 0.0002, 1.0); /* every other step seen 0.2 ms late */
    const double w = bench_fit_power(s, n, 0.0, 1.0);
    TPG_EXPECT(fabs(w - 700.0) / 700.0 < 0.002);
}

TPG_TEST(only_steps_inside_the_window_count) {
    /* idle (80 W) before 1.0 s, busy (700 W) after: a window of [1.1, 2.0] sees only the busy slope */
    bench_energy_step s[64];
    int n = 0;
    unsigned long long mj = 0;
    for (double t = 0.0; t < 2.0; t += 0.05) {
        s[n++] = (bench_energy_step){t, mj};
        mj += (unsigned long long)llround((t < 1.0 ? 80.0 : 700.0) * 0.05 * 1e3);
    }
    TPG_EXPECT(fabs(bench_fit_power(s, n, 1.1, 2.0) - 700.0) < 1.0);
    TPG_EXPECT(bench_fit_power(s, n, 0.0, 2.0) < 500.0); /* the whole span mixes both */
}

TPG_TEST(too_few_steps_give_no_power) {
    bench_energy_step s[2] = {{0.0, 1000}, {0.05, 1035}};
    TPG_EXPECT(bench_fit_power(s, 2, 0.0, 1.0) < 0.0); /* 50 ms < BENCH_MIN_FIT_S */
    TPG_EXPECT(bench_fit_power(s, 1, 0.0, 1.0) < 0.0);
    TPG_EXPECT(bench_fit_power(s, 2, 5.0, 6.0) < 0.0); /* none inside */
    TPG_EXPECT(bench_fit_power(NULL, 0, 0.0, 1.0) < 0.0);
}

TPG_TEST(sampler_without_nvml_stops_cleanly) {
    /* no nvml_open: every read fails, so the thread records nothing; start/stop still pair up */
    const bench_energy_step *steps = NULL;
    TPG_ASSERT_EQ_INT(bench_energy_start(), 0);
    TPG_EXPECT_EQ_INT(bench_energy_start(), -1); /* one sampler at a time */
    TPG_EXPECT_EQ_INT(bench_energy_stop(&steps), 0);
    TPG_EXPECT_EQ_INT(bench_energy_stop(&steps), 0); /* stopping twice is harmless */
    TPG_EXPECT(steps == NULL);
}

TPG_TEST(steps_after_the_window_do_not_count) {
    bench_energy_step s[64];
    int n = 0;
    unsigned long long mj = 0;
    for (double t = 0.0; t < 2.0; t += 0.05) { /* busy (700 W) until 1.0 s, idle (80 W) after */
        s[n++] = (bench_energy_step){t, mj};
        mj += (unsigned long long)llround((t < 1.0 ? 700.0 : 80.0) * 0.05 * 1e3);
    }
    TPG_EXPECT(fabs(bench_fit_power(s, n, 0.0, 1.0) - 700.0) < 1.0);
}

TPG_TEST_MAIN(TPG_CASE(fits_the_power_of_a_stepping_counter), TPG_CASE(poll_lag_moves_the_fit_by_little),
              TPG_CASE(only_steps_inside_the_window_count), TPG_CASE(too_few_steps_give_no_power),
              TPG_CASE(sampler_without_nvml_stops_cleanly),
              TPG_CASE(steps_after_the_window_do_not_count))
