/* wgmma (warpgroup MMA) wrappers: the smem matrix descriptor, fence/commit/wait, accumulator register
 * fences, and m64nNk16 with f32 accumulation for bf16 and fp16 operands (m64nNk32 for e4m3 and e5m2), both
 * K-major ("SS": A and B from shared memory through descriptors).
 *
 * Why the accumulator fences: wgmma runs asynchronously on registers the compiler thinks it owns. An
 * empty asm that "reads and writes" every accumulator register, placed before wgmma.fence and after
 * wgmma.wait_group, pins all other accesses to the accumulators outside the async window, so ptxas
 * never has to serialize (C7515) and never moves a register copy into the window.
 *
 * The operand lists below are the same text for every N, expanded mechanically once (N/2 "+f"
 * operands, then the two descriptors, then the scale-d predicate source).
 */
#ifndef TPG_WGMMA_CUH
#define TPG_WGMMA_CUH

#include <stdint.h>

/* Descriptor of a K-major tile swizzled over its ROW_BYTES-byte rows (BK * sizeof(T): 128 bytes with the
 * 128B swizzle, or 64 bytes with the 64B swizzle) whose base sits on a swizzle-pattern boundary (1024 or
 * 512 bytes; the kernel's slots are 1024-aligned), so base_offset = 0:
 *   bits  0-13 start address >> 4 · bits 16-29 LBO >> 4 (unused for swizzled K-major; 16 B)
 *   bits 32-45 SBO >> 4 = 8 rows between 8-row core-matrix groups (1024 or 512 B)
 *   bits 62-63 layout: 1 = 128B swizzle, 2 = 64B swizzle.
 * Stepping k16 inside a row is +32 bytes = +2 on the encoded start address (a 64-byte row holds two). */
template <int ROW_BYTES> __device__ __forceinline__ uint64_t tpg_wgmma_desc(uint32_t smem_addr)
{
    static_assert(ROW_BYTES == 128 || ROW_BYTES == 64, "K-major rows of 128 or 64 bytes");
    uint64_t d = 0;
    d |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    d |= (uint64_t)(16 >> 4) << 16;
    d |= (uint64_t)((8 * ROW_BYTES) >> 4) << 32;
    d |= (uint64_t)(ROW_BYTES == 128 ? 1 : 2) << 62;
    return d;
}

__device__ __forceinline__ void tpg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void tpg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void tpg_wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* Register fence over an accumulator fragment (see the header comment). */
template <int R> __device__ __forceinline__ void tpg_acc_fence(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

/* Operand lists of the wgmma asm statements: "+f" (f32 accumulators) or "+r" (packed f16 pairs) for
 * d[b] .. d[b + 7], and blocks of 16 and 32 of them. */
#define TPG_F8(b) "+f"(d[(b)]), "+f"(d[(b) + 1]), "+f"(d[(b) + 2]), "+f"(d[(b) + 3]), "+f"(d[(b) + 4]), \
    "+f"(d[(b) + 5]), "+f"(d[(b) + 6]), "+f"(d[(b) + 7])
#define TPG_F16(b) TPG_F8(b), TPG_F8((b) + 8)
#define TPG_F32(b) TPG_F16(b), TPG_F16((b) + 16)
#define TPG_R8(b) "+r"(d[(b)]), "+r"(d[(b) + 1]), "+r"(d[(b) + 2]), "+r"(d[(b) + 3]), "+r"(d[(b) + 4]), \
    "+r"(d[(b) + 5]), "+r"(d[(b) + 6]), "+r"(d[(b) + 7])
#define TPG_R16(b) TPG_R8(b), TPG_R8((b) + 8)
#define TPG_R32(b) TPG_R16(b), TPG_R16((b) + 16)

#define TPG_WG_N64_PRED "34"
#define TPG_WG_N64_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, "
#define TPG_WG_N64_OUTS TPG_F32(0)

#define TPG_WG_N96_PRED "50"
#define TPG_WG_N96_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, "
#define TPG_WG_N96_OUTS TPG_F32(0), TPG_F16(32)

#define TPG_WG_N128_PRED "66"
#define TPG_WG_N128_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, "
#define TPG_WG_N128_OUTS TPG_F32(0), TPG_F32(32)

#define TPG_WG_N160_PRED "82"
#define TPG_WG_N160_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, %80, %81, "
#define TPG_WG_N160_OUTS TPG_F32(0), TPG_F32(32), TPG_F16(64)

#define TPG_WG_N192_PRED "98"
#define TPG_WG_N192_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, "
#define TPG_WG_N192_OUTS TPG_F32(0), TPG_F32(32), TPG_F32(64)

#define TPG_WG_N256_PRED "130"
#define TPG_WG_N256_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, "
#define TPG_WG_N256_OUTS TPG_F32(0), TPG_F32(32), TPG_F32(64), TPG_F32(96)
/* One wgmma.mma_async m64nNk16, f32 += A(64x16) * B(Nx16)^T; scale_d == 0 overwrites d (first k step
 * of a tile), so accumulators never need zeroing. TY is the PTX operand type string. */
#define TPG_WGMMA_ASM(N, TY)                                                                          \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" TPG_WG_N##N##_PRED ", 0;\n"                     \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " " TPG_WG_N##N##_ARGS   \
                 "p, 1, 1, 0, 0;\n}\n"                                                                \
                 : TPG_WG_N##N##_OUTS                                                                 \
                 : "l"(da), "l"(db), "r"(scale_d))

/* The same for fp8 operands: m64nNk32, f32 += A(64x32) * B(Nx32)^T. A k32 step spans the 32 bytes of a k16
 * step of 16-bit operands, so descriptors advance alike. fp8 wgmma takes no transpose immediates (both
 * operands K-major is the only layout), hence the two fewer operands. */
#define TPG_WGMMA_FP8_ASM(N, TY)                                                                      \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" TPG_WG_N##N##_PRED ", 0;\n"                     \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k32.f32." TY "." TY " " TPG_WG_N##N##_ARGS   \
                 "p, 1, 1;\n}\n"                                                                      \
                 : TPG_WG_N##N##_OUTS                                                                 \
                 : "l"(da), "l"(db), "r"(scale_d))

/* AB = tpg_dtype value of the operands (0 bf16, 1 fp16, 2 e4m3, 3 e5m2). */
template <int N, int AB> struct tpg_wgmma;
#define TPG_WGMMA_DEFINE(N)                                                                           \
    template <> struct tpg_wgmma<N, 0> {                                                              \
        static __device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) \
        {                                                                                             \
            TPG_WGMMA_ASM(N, "bf16");                                                                 \
        }                                                                                             \
    };                                                                                                \
    template <> struct tpg_wgmma<N, 1> {                                                              \
        static __device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) \
        {                                                                                             \
            TPG_WGMMA_ASM(N, "f16");                                                                  \
        }                                                                                             \
    };                                                                                                \
    template <> struct tpg_wgmma<N, 2> {                                                              \
        static __device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) \
        {                                                                                             \
            TPG_WGMMA_FP8_ASM(N, "e4m3");                                                             \
        }                                                                                             \
    };                                                                                                \
    template <> struct tpg_wgmma<N, 3> {                                                              \
        static __device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d) \
        {                                                                                             \
            TPG_WGMMA_FP8_ASM(N, "e5m2");                                                             \
        }                                                                                             \
    };
TPG_WGMMA_DEFINE(64)
TPG_WGMMA_DEFINE(96)
TPG_WGMMA_DEFINE(128)
TPG_WGMMA_DEFINE(160) /* cooperative_n 128x320: two warpgroups of m64n160 */
TPG_WGMMA_DEFINE(192)
TPG_WGMMA_DEFINE(256)
#undef TPG_WGMMA_DEFINE

/* f16 accumulation (fp16 operands only; wgmma accumulates bf16 products in f32): N/4 registers per
 * thread, register i holding the f32 layout's accumulators 2i (low half) and 2i + 1 (high half). */
#define TPG_WGH_N64_PRED "18"
#define TPG_WGH_N64_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, "
#define TPG_WGH_N64_OUTS TPG_R16(0)

#define TPG_WGH_N96_PRED "26"
#define TPG_WGH_N96_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, "
#define TPG_WGH_N96_OUTS TPG_R16(0), TPG_R8(16)

#define TPG_WGH_N128_PRED "34"
#define TPG_WGH_N128_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, "
#define TPG_WGH_N128_OUTS TPG_R32(0)

#define TPG_WGH_N160_PRED "42"
#define TPG_WGH_N160_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, "
#define TPG_WGH_N160_OUTS TPG_R32(0), TPG_R8(32)

#define TPG_WGH_N192_PRED "50"
#define TPG_WGH_N192_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, "
#define TPG_WGH_N192_OUTS TPG_R32(0), TPG_R16(32)

#define TPG_WGH_N256_PRED "66"
#define TPG_WGH_N256_ARGS "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, "
#define TPG_WGH_N256_OUTS TPG_R32(0), TPG_R32(32)
#define TPG_WGMMA_F16ACC_ASM(N)                                                                       \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" TPG_WGH_N##N##_PRED ", 0;\n"                    \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f16.f16.f16 " TPG_WGH_N##N##_ARGS        \
                 "p, 1, 1, 0, 0;\n}\n"                                                               \
                 : TPG_WGH_N##N##_OUTS                                                                \
                 : "l"(da), "l"(db), "r"(scale_d))

/* The same pin as tpg_acc_fence for packed f16 accumulators. */
template <int R> __device__ __forceinline__ void tpg_acc_fence(uint32_t (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

/* One 32-byte k step (k16 of 16-bit operands, k32 of fp8) into the accumulators, f32 or packed f16 by the
 * array's type (AB: 0 bf16, 1 fp16, 2 e4m3, 3 e5m2; f16 accumulators for fp16 only). */
template <int N, int AB>
__device__ __forceinline__ void tpg_mma(float (&d)[N / 2], uint64_t da, uint64_t db, int scale_d)
{
    tpg_wgmma<N, AB>::mma(d, da, db, scale_d);
}
#define TPG_WGMMA_F16ACC_CASE(N_)                                                                     \
    if constexpr (N == N_) {                                                                          \
        TPG_WGMMA_F16ACC_ASM(N_);                                                                     \
    }
template <int N, int AB>
__device__ __forceinline__ void tpg_mma(uint32_t (&d)[N / 4], uint64_t da, uint64_t db, int scale_d)
{
    static_assert(AB == 1, "f16 accumulation takes fp16 operands");
    static_assert(N == 64 || N == 96 || N == 128 || N == 160 || N == 192 || N == 256, "wgmma N");
    TPG_WGMMA_F16ACC_CASE(64)
    TPG_WGMMA_F16ACC_CASE(96)
    TPG_WGMMA_F16ACC_CASE(128)
    TPG_WGMMA_F16ACC_CASE(160)
    TPG_WGMMA_F16ACC_CASE(192)
    TPG_WGMMA_F16ACC_CASE(256)
}
#undef TPG_WGMMA_F16ACC_CASE

#endif /* TPG_WGMMA_CUH */
