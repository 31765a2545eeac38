/* GPU canary for tests/gpu/run_sanitizers.sh: one small kernel per shared-memory hand-off that the GEMM kernels
 * use, each in a correct form and in a racy form with its synchronization left out, and a warp barrier whose mask
 * leaves out most of the lanes that call it (synccheck's canary). Run under compute-sanitizer racecheck, every correct form must come out clean and the thread-to-thread race must be reported - otherwise a
 * clean racecheck of the GEMM kernels says nothing. Whether racecheck also sees the two hand-offs through the
 * async proxy (bulk copies: the epilogue's TMA stores read what the warps wrote, TMA-loaded partials and ring slots
 * are read by the warps) is what the *_race forms of those measure; the script records it next to the kernels'
 * results, so a clean GEMM is read for what it covers.
 *
 *   thread_ok / thread_race   warp 0 writes smem, warp 1 reads it; __syncthreads between, or nothing
 *   store_ok / store_race     both warps write smem, thread 0 bulk-copies it to global (cp.async.bulk, the async
 *                             proxy like the epilogue's TMA store); fence.proxy.async + __syncthreads between, or
 *                             only thread 0's own fence
 *   load_ok / load_race       thread 0 bulk-copies global into smem under an mbarrier, both warps read it; every
 *                             thread waits on the mbarrier, or warp 1 reads at once
 *   warp_mask                 thread_ok with every lane of warp 0 calling __syncwarp(1): lanes 1..31 name a mask
 *                             without themselves (invalid; synccheck must report it. A block barrier that an exited
 *                             warp skips is legal since Volta and synccheck rightly passes it: 2026-12-02 08:16Z)
 *
 * Usage: build/tests/gpu_racecheck_canary FORM. Exit 0 when the kernel ran (and, for *_ok forms, its output is
 * right), 1 on a wrong result, 2 on bad usage, 3 without a GPU. */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ptx.cuh"

enum { WORDS = 1024, BYTES = WORDS * 4, THREADS = 64 };
enum form { THREAD_OK, THREAD_RACE, STORE_OK, STORE_RACE, LOAD_OK, LOAD_RACE, WARP_MASK, FORMS };
static const char *const kForms[FORMS] = {"thread_ok", "thread_race", "store_ok", "store_race", "load_ok", "load_race",
                                          "warp_mask"};

__device__ __forceinline__ void bulk_store(void *gdst, uint32_t src, uint32_t bytes)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(gdst), "r"(src), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void bulk_load(uint32_t dst, const void *gsrc, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"(gsrc), "r"(bytes), "r"(bar) : "memory");
}

/* out[i] = in[i] + 1 through shared memory, by the hand-off `f`. */
__global__ void canary(int f, const unsigned int *in, unsigned int *out)
{
    __shared__ __align__(128) unsigned int buf[WORDS];
    __shared__ __align__(8) uint64_t bar_word;
    const int t = threadIdx.x, warp = t >> 5;
    const uint32_t sbuf = tpg_smem_addr(buf), bar = tpg_smem_addr(&bar_word);
    if (f == THREAD_OK || f == THREAD_RACE || f == WARP_MASK) {
        if (warp == 0)
            for (int i = t; i < WORDS; i += 32) buf[i] = in[i] + 1u;
        if (f == WARP_MASK && warp == 0) __syncwarp(1u);
        if (f != THREAD_RACE) __syncthreads();
        if (warp == 1)
            for (int i = t - 32; i < WORDS; i += 32) out[i] = buf[i];
    } else if (f == STORE_OK || f == STORE_RACE) {
        for (int i = t; i < WORDS; i += THREADS) buf[i] = in[i] + 1u;
        tpg_fence_proxy_async_smem(); /* each thread's own writes, before the async proxy reads them */
        if (f == STORE_OK) __syncthreads();
        if (t == 0) {
            bulk_store(out, sbuf, BYTES);
            tpg_bulk_commit();
            tpg_bulk_wait_all();
        }
    } else {
        if (t == 0) {
            tpg_mbar_init(bar, 1);
            tpg_fence_mbar_init();
        }
        __syncthreads();
        if (t == 0) {
            tpg_mbar_arrive_expect_tx(bar, BYTES);
            bulk_load(sbuf, in, BYTES, bar);
        }
        if (f == LOAD_OK || warp == 0) tpg_mbar_wait(bar, 0);
        for (int i = t; i < WORDS; i += THREADS) out[i] = buf[i] + 1u;
        __syncthreads(); /* the mbarrier's phase completes before any thread leaves (warp 0 waits on it) */
    }
}

#define CK(x)                                                                                           \
    do {                                                                                                \
        cudaError_t e_ = (x);                                                                           \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "gpu_racecheck_canary: %s: %s\n", #x, cudaGetErrorString(e_));               \
            return 1;                                                                                   \
        }                                                                                               \
    } while (0)

int main(int argc, char **argv)
{
    int f = -1;
    for (int i = 0; argc == 2 && i < FORMS; ++i)
        if (strcmp(argv[1], kForms[i]) == 0) f = i;
    if (f < 0) {
        fprintf(stderr, "usage: gpu_racecheck_canary FORM (thread_ok thread_race store_ok store_race load_ok load_race "
                        "warp_mask)\n");
        return 2;
    }
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
        fprintf(stderr, "gpu_racecheck_canary: no CUDA device\n");
        return 3;
    }
    unsigned int h[WORDS], *in, *out;
    for (int i = 0; i < WORDS; ++i) h[i] = 2654435761u * (unsigned)(i + 1); /* not zeros */
    CK(cudaMalloc((void **)&in, BYTES));
    CK(cudaMalloc((void **)&out, BYTES));
    CK(cudaMemcpy(in, h, BYTES, cudaMemcpyHostToDevice));
    CK(cudaMemset(out, 0xFF, BYTES));
    canary<<<1, THREADS>>>(f, in, out);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    unsigned int r[WORDS];
    CK(cudaMemcpy(r, out, BYTES, cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int i = 0; i < WORDS; ++i) bad += r[i] != h[i] + 1u;
    const bool judged = strstr(kForms[f], "_ok") != NULL;
    printf("%s: %d of %d words wrong%s\n", kForms[f], bad, WORDS, judged ? "" : " (a broken form: not judged)");
    return judged && bad ? 1 : 0;
}
