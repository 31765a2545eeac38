/* What the runtime's own kernels (barrier.cu, transfer_flags.cu, one_hop.cu) spin on: the global clock, ordered
 * loads of a flag word and one bounded wait. Device code only; each includer's functions stay in its own file. */
#ifndef TPG_SPIN_CUH
#define TPG_SPIN_CUH

#include "epoch.h"
#include "gemm_params.h" /* TPG_DEVICE_* */

namespace tpg_spin {

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned int load_acquire_sys(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned int load_acquire_gpu(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* Whether a wait of this launch (epoch) already gave up (tpg_gemm_params.gave_up_epoch says why the others stop). */
__device__ __forceinline__ bool launch_gave_up(const unsigned int *gave_up_epoch, unsigned int epoch) {
    return gave_up_epoch && tpg_epoch_gave_up(*(volatile const unsigned int *)gave_up_epoch, epoch);
}

/* Spins until ready() (backing off to 1 us), until timeout_ns after `start` (a global_timer_ns reading: one bound
 * for a thread's waits in turn; timeout 0: forever). Returns true when ready, false when the launch gave up, or after
 * a timeout, which sets TPG_DEVICE_TIMEOUT in *status and *gave_up_epoch to epoch. */
template <class Ready>
__device__ bool wait_bounded(Ready ready, unsigned int epoch, unsigned long long start, unsigned long long timeout_ns,
                             unsigned int *status, unsigned int *gave_up_epoch) {
    unsigned int sleep_ns = 32;
    while (!ready()) {
        if (launch_gave_up(gave_up_epoch, epoch)) return false;
        if (timeout_ns && global_timer_ns() - start > timeout_ns) {
            atomicOr(status, TPG_DEVICE_TIMEOUT);
            if (gave_up_epoch) atomicExch(gave_up_epoch, epoch); /* exact: epoch.h */
            return false;
        }
        __nanosleep(sleep_ns);
        if (sleep_ns < 1024) sleep_ns *= 2;
    }
    return true;
}

}  // namespace tpg_spin

#endif /* TPG_SPIN_CUH */
