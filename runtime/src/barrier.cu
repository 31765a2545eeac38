// The cross-device start / end barrier kernel; protocol in barrier.h.
#include "barrier.h"
#include "copy_chunks.h"
#include "spin.cuh"

namespace {

__device__ __forceinline__ void red_release_sys_add(unsigned int *p, unsigned int v) {
    asm volatile("red.release.sys.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

/* Raise a peer's notice word to epoch unless it is there or ahead already (a peer a call ahead gave up too), wrap-
 * aware: the word stays within about half a window behind its owner's epoch (peer_gave_up), so the signed difference
 * holds (an unsigned max would stop raising it after the wrap). Release at system scope, as the arrival after it. */
__device__ __forceinline__ void raise_notice(unsigned int *notice, unsigned int epoch) {
    __threadfence_system();
    unsigned int old = *(volatile unsigned int *)notice;
    while ((int)(epoch - old) > 0) {
        const unsigned int seen = atomicCAS_system(notice, old, epoch);
        if (seen == old) break;
        old = seen;
    }
}

/* This launch gave up: raise every peer's notice word to its epoch (barrier.h, "Telling the peers"). */
__device__ __forceinline__ void tell_peers_gave_up(const tpg_barrier_params &p, unsigned int epoch) {
    for (int r = 0; r < p.tp; r++) {
        if (r != p.rank && p.gave_up_notice[r]) raise_notice(p.gave_up_notice[r], epoch);
    }
}

/* The closing barrier's check of its own notice: a peer gave up on this call or a later one (tpg_epoch_reached). A
 * notice no give-up raised for half a window is moved up to the call before this one - one CAS every 2^19 calls -
 * so that it never wraps into the window (a notice left at 0 would read as "reached" in the last calls before the
 * wrap); a peer's raise in between wins the CAS. */
__device__ __forceinline__ bool peer_gave_up(unsigned int *notice, unsigned int epoch) {
    const unsigned int n = tpg_spin::load_acquire_sys(notice);
    if (tpg_epoch_reached(n, epoch)) return true;
    if (tpg_epoch_stale(n, epoch)) atomicCAS_system(notice, n, epoch - 1u);
    return false;
}

__device__ __forceinline__ bool gave_up_in(const tpg_barrier_params &p, unsigned int epoch) {
    return tpg_spin::launch_gave_up(p.gave_up_epoch, epoch);
}

/* The start barrier of every launch (over NCCL too, which has no closing one): a give-up word 2^31 launches behind
 * this epoch or more - an old give-up's epoch, or the initial 0 - is moved up to the epoch before this one, so that no
 * launch ever reads it as its own (epoch.h, tpg_epoch_gave_up). A CAS: beside the barriers the GEMM may already have
 * given up in this launch, and its give-up must win. */
__device__ __forceinline__ void age_give_up(unsigned int *gave_up_epoch, unsigned int epoch) {
    const unsigned int g = *(volatile unsigned int *)gave_up_epoch, aged = tpg_epoch_give_up_refresh(g, epoch);
    if (aged != g) atomicCAS(gave_up_epoch, g, aged);
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
        if (p.gave_up_epoch) age_give_up(p.gave_up_epoch, epoch);
    } else {
        epoch = *p.epoch;
        for (int row = 0; row < p.flag_rows; row++) /* barrier.h: the flags a peer's epoch raised, at this epoch */
            for (int c = 0; c < p.flag_pieces; c++)
                ((volatile unsigned int *)p.stage_flags)[row * TPG_MAX_COPY_CHUNKS + c] = epoch;
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
    TPG_BAR_TR(unsigned int tr_gave_up = 0u;)
    while ((int)(load_acquire_sys(p.counter) - target) < 0) {
        if (gave_up_in(p, epoch)) { /* this launch gave up: a GEMM wait beside this barrier may have, after the check
                                       above - the peers hear of it before this barrier stops waiting for them */
            tell_peers_gave_up(p, epoch);
            TPG_BAR_TR(tr_gave_up = 1u;)
            break;
        }
        if (p.timeout_ns && global_timer_ns() - start > p.timeout_ns) {
            atomicOr(p.status, TPG_DEVICE_BARRIER_TIMEOUT);
            if (p.gave_up_epoch) atomicExch(p.gave_up_epoch, epoch);
            tell_peers_gave_up(p, epoch);
            __threadfence_system();
            TPG_BAR_TR(if (p.trace) p.trace[2] = global_timer_ns();)
            TPG_BAR_TR(if (p.trace_gave_up) *p.trace_gave_up = 1u;)
            return;
        }
        __nanosleep(sleep_ns);
        if (sleep_ns < 1024) sleep_ns *= 2;
    }
    /* closing barrier: did a peer give up on this call (or a later one) while we were late? Read after the
     * peers' arrivals, which follow their notices */
    unsigned int *notice = p.gave_up_notice[p.rank];
    if (p.mode == TPG_BARRIER_END && notice && peer_gave_up(notice, epoch)) atomicOr(p.status, TPG_DEVICE_PEER_GAVE_UP);
    TPG_BAR_TR(if (p.trace) p.trace[2] = global_timer_ns();)
    TPG_BAR_TR(if (p.trace_gave_up) *p.trace_gave_up = tr_gave_up;)
}

extern "C" const void *tpg_barrier_kernel_entry(void) { return (const void *)tpg_barrier_kernel; }
