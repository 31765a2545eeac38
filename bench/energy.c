/* Energy per call from NVML's total-energy counter, fitted over the busy part of a timed window.
 *
 * Why not a before/after delta: the counter advances in steps tens of milliseconds apart, so a delta over
 * a 1 s window is off by up to a step (the joules of the 2026-11-30 runs spread +-10% between variants
 * that ran at the same power and speed). Why a thread: for small GEMMs the host spends most of a window
 * blocked in kernel launches (the launch queue is full), so it cannot poll the counter itself. The sampler
 * thread polls every ~0.2 ms and keeps each step with its host time; bench_fit_power takes the slope
 * between the first and the last step inside the window, each located within one poll interval. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "bench.h"

double bench_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double bench_fit_power(const bench_energy_step *s, int n, double t_from, double t_to) {
    int first = -1, last = -1;
    for (int i = 0; i < n; i++) {
        if (s[i].t < t_from || s[i].t > t_to) continue;
        if (first < 0) first = i;
        last = i;
    }
    if (first < 0 || s[last].t - s[first].t < BENCH_MIN_FIT_S || s[last].mj < s[first].mj) return -1.0;
    return (double)(s[last].mj - s[first].mj) * 1e-3 / (s[last].t - s[first].t);
}

static struct {
    pthread_t th;
    atomic_int stop; /* set by the caller, read by the thread; joined before any reuse */
    int running, n;
    bench_energy_step steps[BENCH_ENERGY_STEPS];
} smp;

static void *sample(void *arg) {
    (void)arg;
    const struct timespec nap = {0, 200000};
    unsigned long long prev = 0, e;
    int have = 0;
    while (!atomic_load(&smp.stop) && smp.n < BENCH_ENERGY_STEPS) {
        if (!nvml_energy_mj(&e)) {
            if (!have || e != prev) smp.steps[smp.n++] = (bench_energy_step){bench_now_s(), e};
            prev = e, have = 1;
        }
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int bench_energy_start(void) {
    if (smp.running) return -1;
    atomic_store(&smp.stop, 0);
    smp.n = 0;
    if (pthread_create(&smp.th, NULL, sample, NULL)) return -1;
    smp.running = 1;
    return 0;
}

int bench_energy_stop(const bench_energy_step **steps) {
    if (!smp.running) return *steps = NULL, 0;
    atomic_store(&smp.stop, 1);
    pthread_join(smp.th, NULL);
    smp.running = 0;
    *steps = smp.steps;
    return smp.n;
}
