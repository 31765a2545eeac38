// The NCCL transport's flag kernel; protocol in transfer_flags.h.
#include "gemm_params.h" /* TPG_DEVICE_TIMEOUT */
#include "transfer_flags.h"

namespace {

__device__ __forceinline__ unsigned int load_acquire_gpu(const unsigned int *p) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ bool launch_gave_up(const tpg_flags_params &p, unsigned int epoch) {
    return p.gave_up_epoch && *(volatile unsigned int *)p.gave_up_epoch == epoch;
}

/* One thread's share of the flags: true when all of them reached epoch, false after a timeout or give-up. */
__device__ bool wait_share(const tpg_flags_params &p, unsigned int epoch) {
    const unsigned long long start = global_timer_ns();
    unsigned int sleep_ns = 32;
    for (int i = threadIdx.x; i < p.count; i += blockDim.x) {
        while ((int)(load_acquire_gpu(p.flags + i) - epoch) < 0) {
            if (launch_gave_up(p, epoch)) return false;
            if (p.timeout_ns && global_timer_ns() - start > p.timeout_ns) {
                atomicOr(p.status, TPG_DEVICE_TIMEOUT);
                if (p.gave_up_epoch) atomicMax(p.gave_up_epoch, epoch);
                return false;
            }
            __nanosleep(sleep_ns);
            if (sleep_ns < 1024) sleep_ns *= 2;
        }
    }
    return true;
}

}  // namespace

__global__ void tpg_flags_kernel(tpg_flags_params p) {
    const unsigned int epoch = *(volatile const unsigned int *)p.epoch;
    if (p.mode == TPG_FLAGS_WAIT) {
        const int all = __syncthreads_and(wait_share(p, epoch)); /* the send after this kernel reads the slot */
        if (p.trailer && threadIdx.x == 0) *(volatile unsigned int *)p.trailer = all ? epoch : TPG_FLAGS_INCOMPLETE;
        return;
    }
    if (p.trailer && *(volatile const unsigned int *)p.trailer != epoch) { /* the sender's partial is incomplete */
        if (threadIdx.x == 0) {
            atomicOr(p.status, TPG_DEVICE_PEER_GAVE_UP);
            if (p.gave_up_epoch) atomicMax(p.gave_up_epoch, epoch);
        }
        return;
    }
    for (int i = threadIdx.x; i < p.count; i += blockDim.x)
        asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p.flags + i), "r"(epoch) : "memory");
}

extern "C" const void *tpg_flags_kernel_entry(void) { return (const void *)tpg_flags_kernel; }
