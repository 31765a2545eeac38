// The cross-device start / end barrier kernel; protocol in barrier.h.
#include "barrier.h"
#include "spin.cuh"

namespace {

__device__ __forceinline__ void red_release_sys_add(unsigned int *p, unsigned int v) {
    asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void red_release_sys_max(unsigned int *p, unsigned int v) {
    asm volatile("red.release.sys.global.max.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* This launch gave up: raise every peer's notice word to its epoch (barrier.h, "Telling the peers"). */
__device__ __forceinline__ void tell_peers_gave_up(const tpg_barrier_params &p, unsigned int epoch) {
    for (int r = 0; r < p.tp; r++) {
        if (r != p.rank && p.gave_up_notice[r]) red_release_sys_max(p.gave_up_notice[r], epoch);
    }
}

__device__ __forceinline__ bool gave_up_in(const tpg_barrier_params &p, unsigned int epoch) {
    return tpg_spin::launch_gave_up(p.gave_up_epoch, epoch);
}

using tpg_spin::global_timer_ns;
using tpg_spin::load_acquire_sys;

}  // namespace

#ifdef TPG_TRACE
#define TPG_BAR_TR(...) __VA_ARGS__
#else
#define TPG_BAR_TR(...)
#endif

__global__ void tpg_barrier_kernel(tpg_barrier_params p) {
    TPG_BAR_TR(if (p.trace) p.trace[0] = global_timer_ns();)
    unsigned int epoch;
    if (p.mode == TPG_BARRIER_START) {
        epoch = *p.epoch + 1;  // only this kernel writes the epoch, and it is stream-ordered
        *p.epoch = epoch;
        __threadfence_system();  // the new epoch is visible before any peer can act on our arrival
    } else {
        epoch = *p.epoch;
        /* a wait of this launch before us timed out: the peers hear of it before they can pass on our arrival */
        if (gave_up_in(p, epoch)) tell_peers_gave_up(p, epoch);
    }
    for (int r = 0; r < p.tp; r++) {
        if (r != p.rank) red_release_sys_add(p.peer_counter[r], 1u);
    }
    TPG_BAR_TR(if (p.trace) p.trace[1] = global_timer_ns();)
    const unsigned int target = epoch * (unsigned int)(p.tp - 1);
    const unsigned long long start = global_timer_ns();
    unsigned int sleep_ns = 32;
    while ((int)(load_acquire_sys(p.counter) - target) < 0) {
        if (gave_up_in(p, epoch)) break; /* this launch gave up */
        if (p.timeout_ns && global_timer_ns() - start > p.timeout_ns) {
            atomicOr(p.status, TPG_DEVICE_BARRIER_TIMEOUT);
            if (p.gave_up_epoch) atomicMax(p.gave_up_epoch, epoch);
            tell_peers_gave_up(p, epoch);
            __threadfence_system();
            TPG_BAR_TR(if (p.trace) p.trace[2] = global_timer_ns();)
            return;
        }
        __nanosleep(sleep_ns);
        if (sleep_ns < 1024) sleep_ns *= 2;
    }
    /* closing barrier: did a peer give up on this call (or a later one) while we were late? Read after the
     * peers' arrivals, which follow their notices (wrap-aware, as the counters) */
    const unsigned int *notice = p.gave_up_notice[p.rank];
    if (p.mode == TPG_BARRIER_END && notice && (int)(load_acquire_sys(notice) - epoch) >= 0)
        atomicOr(p.status, TPG_DEVICE_PEER_GAVE_UP);
    TPG_BAR_TR(if (p.trace) p.trace[2] = global_timer_ns();)
}

extern "C" const void *tpg_barrier_kernel_entry(void) { return (const void *)tpg_barrier_kernel; }
