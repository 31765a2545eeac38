// The NCCL transport's flag kernel; protocol in transfer_flags.h.
#include "spin.cuh"
#include "transfer_flags.h"

namespace {

/* One thread's share of the flags: true when all of them reached epoch (tpg_epoch_reached: wrap-aware, and a stale
 * word is behind), false after a timeout or give-up. */
__device__ bool wait_share(const tpg_flags_params &p, unsigned int epoch) {
    const unsigned long long start = tpg_spin::global_timer_ns();
    for (int i = threadIdx.x; i < p.count; i += blockDim.x) {
        const unsigned int *flag = p.flags + i;
        const auto landed = [&] { return tpg_epoch_reached(tpg_spin::load_acquire_gpu(flag), epoch) != 0; };
        if (!tpg_spin::wait_bounded(landed, epoch, start, p.timeout_ns, p.status, p.gave_up_epoch)) return false;
    }
    return true;
}

}  // namespace

__global__ void tpg_flags_kernel(tpg_flags_params p) {
    const unsigned int epoch = *(volatile const unsigned int *)p.epoch;
    if (p.mode == TPG_FLAGS_WAIT) {
        const int all = __syncthreads_and(wait_share(p, epoch)); /* the send after this kernel reads the slot */
        /* every flag up is not enough: a tile whose own wait gave up still wrote (garbage) and raised its flag, after
         * raising the give-up word, which the flags' acquire makes visible here */
        if (p.trailer && threadIdx.x == 0)
            *(volatile unsigned int *)p.trailer =
                all && !tpg_spin::launch_gave_up(p.gave_up_epoch, epoch) ? epoch : TPG_FLAGS_INCOMPLETE(epoch);
        return;
    }
    if (p.trailer && *(volatile const unsigned int *)p.trailer != epoch) { /* the sender's partial is incomplete */
        if (threadIdx.x == 0) {
            atomicOr(p.status, TPG_DEVICE_PEER_GAVE_UP);
            if (p.gave_up_epoch) atomicExch(p.gave_up_epoch, epoch);
        }
        return;
    }
    for (int i = threadIdx.x; i < p.count; i += blockDim.x)
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p.flags + i), "r"(epoch) : "memory");
}

extern "C" const void *tpg_flags_kernel_entry(void) { return (const void *)tpg_flags_kernel; }
