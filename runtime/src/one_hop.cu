// The one-hop reduce-scatter walk's REDUCE kernel; what and why in one_hop.h.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "one_hop.h"
#include "spin.cuh"

namespace {

constexpr int kVec = 8; /* elements a thread sums at once: 16 bytes of a 16-bit output */

/* An item's tile (tm, tn) of the GEMM: item / tiles_n counts the tile rows from the first that crosses the block. */
struct item_tile {
    int tm, tn;
};
__device__ __forceinline__ item_tile tile_of(const tpg_one_hop_params &p, int item) {
    return {p.row0 / p.bm + item / p.tiles_n, item % p.tiles_n};
}

/* Thread 0: until every rank's flag of tile t has reached the epoch (tpg_epoch_reached), under one bound for the
 * item. */
__device__ bool wait_tile(const tpg_one_hop_params &p, int t, unsigned int epoch) {
    const unsigned long long start = tpg_spin::global_timer_ns();
    for (int r = 0; r < p.tp; r++) {
        const unsigned int *flag = p.src_flags[r] + t;
        const auto done = [&] { return tpg_epoch_reached(tpg_spin::load_acquire_sys(flag), epoch) != 0; };
        if (!tpg_spin::wait_bounded(done, epoch, start, p.timeout_ns, p.status, p.gave_up_epoch)) return false;
    }
    return true;
}

/* 8 elements at element offset i of an fp32 partial (two float4s) or of a 16-bit partial or C (one uint4); .cg: peers'
 * memory, written after this launch began, so nothing of it may come from L1. */
__device__ __forceinline__ void load8_f32(const void *base, long long i, float (&v)[kVec]) {
    const float4 *q = reinterpret_cast<const float4 *>(static_cast<const float *>(base) + i);
    const float4 a = __ldcg(q), b = __ldcg(q + 1);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
}
template <class T>
__device__ __forceinline__ void load8_16(const void *base, long long i, float (&v)[kVec]) {
    const uint4 raw = __ldcg(reinterpret_cast<const uint4 *>(static_cast<const T *>(base) + i));
    const T *e = reinterpret_cast<const T *>(&raw);
#pragma unroll
    for (int j = 0; j < kVec; j++) v[j] = static_cast<float>(e[j]);
}

template <class T>
__device__ __forceinline__ void store8(void *base, long long i, const float (&v)[kVec]) {
    uint4 raw;
    T *e = reinterpret_cast<T *>(&raw);
#pragma unroll
    for (int j = 0; j < kVec; j++) e[j] = T(v[j]);
    *reinterpret_cast<uint4 *>(static_cast<T *>(base) + i) = raw;
}

/* Sums the item's elements: rows [r0, r1) of the block, columns [c0, c1), kVec at a time per thread. The ranks'
 * loads are issued before the sum (in rank order: the result does not depend on timing). */
template <bool PF32, class OUT>
__device__ void sum_item(const tpg_one_hop_params &p, int r0, int r1, int c0, int c1) {
    const int per_row = (c1 - c0) / kVec;
    const int count = (r1 - r0) * per_row;
    for (int i = threadIdx.x; i < count; i += blockDim.x) {
        const int row = r0 + i / per_row, col = c0 + (i % per_row) * kVec;
        const long long at = (long long)row * p.cols + col;
        float parts[TPG_MAX_TP][kVec];
#pragma unroll
        for (int r = 0; r < TPG_MAX_TP; r++) {
            if (r >= p.tp) break;
            if constexpr (PF32) load8_f32(p.src[r], at, parts[r]);
            else load8_16<OUT>(p.src[r], at, parts[r]);
        }
        float acc[kVec];
#pragma unroll
        for (int j = 0; j < kVec; j++) acc[j] = parts[0][j];
#pragma unroll
        for (int r = 1; r < TPG_MAX_TP; r++) {
            if (r >= p.tp) break;
#pragma unroll
            for (int j = 0; j < kVec; j++) acc[j] += parts[r][j];
        }
        if (p.c && p.beta != 0.0f) {
            float c[kVec];
            load8_16<OUT>(p.c, (long long)row * p.c_ld + col, c);
#pragma unroll
            for (int j = 0; j < kVec; j++) acc[j] += p.beta * c[j];
        }
        store8<OUT>(p.d, (long long)row * p.d_ld + col, acc);
    }
}

template <bool PF32, class OUT>
__device__ void reduce(const tpg_one_hop_params &p) {
    __shared__ int ready;
    const unsigned int epoch = *(volatile const unsigned int *)p.epoch;
    const int items = tpg_one_hop_items(&p);
    for (int item = blockIdx.x; item < items; item += gridDim.x) {
        const item_tile t = tile_of(p, item);
        if (threadIdx.x == 0) ready = wait_tile(p, t.tm * p.tiles_n + t.tn, epoch);
        __syncthreads(); /* passes thread 0's acquire on to every thread's loads */
        if (ready) {
            const int r0 = max(t.tm * p.bm, p.row0) - p.row0, r1 = min((t.tm + 1) * p.bm, p.row0 + p.rows) - p.row0;
            sum_item<PF32, OUT>(p, r0, r1, t.tn * p.bn, min((t.tn + 1) * p.bn, p.cols));
        }
        __syncthreads(); /* `ready` is rewritten for the next item */
    }
}

}  // namespace

__global__ void __launch_bounds__(TPG_ONE_HOP_THREADS) tpg_one_hop_kernel(tpg_one_hop_params p) {
    if (p.partial_f32)
        p.out_fp16 ? reduce<true, __half>(p) : reduce<true, __nv_bfloat16>(p);
    else
        p.out_fp16 ? reduce<false, __half>(p) : reduce<false, __nv_bfloat16>(p);
}

extern "C" const void *tpg_one_hop_kernel_entry(void) { return (const void *)tpg_one_hop_kernel; }
