/* Experiment (not shipped): what a decode-size GEMM call costs before and around its arithmetic. Every variant is
 * one kernel launched back to back (ITERS calls between two events, queued behind a spin kernel, after a warm-up), 132
 * CTAs unless named; the per-call time is what a stream of such calls runs at. Variants add one thing at a time to an
 * empty kernel: the GEMM kernel's 6400-byte __grid_constant__ parameters (tpg_gemm_params), its 384 threads and 227 KB
 * of dynamic shared memory, its prologue (an acquire load of a global word, mbarrier init, CTA barrier, setmaxnreg),
 * one TMA load of an A box of 16 rows and a B box of 128 rows (64 k each) by CTA 0 - from a tensor map in the
 * parameters or in global memory - and last one CTA's 16 x 128 bf16 store.
 *
 * Build (here): nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I. -o build/bench/launch_cost \
 *   bench/results/experiments/launch_cost.cu -lcuda
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "templates/kernels/gemm_params.h"

#include "cuda_check.h"

enum { ITERS = 1000, SMEM = 227 * 1024, GRID = 132 };

struct small_params {
    const unsigned int *word;
    const CUtensorMap *maps; /* a_map, b_map in global memory */
    void *out;
};

__device__ __forceinline__ unsigned int smem_addr(const void *p) {
    return (unsigned int)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ unsigned int ld_acquire(const unsigned int *w) {
    unsigned int v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(w) : "memory");
    return v;
}

/* mbarrier init, CTA barrier and the register split of the GEMM kernel's warpgroups */
__device__ __forceinline__ void prologue(unsigned int bar) {
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x < 128)
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
    else
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
}

/* CTA 0's thread 0 loads the two boxes and waits for them (16 x 64 + 128 x 64 bf16 = 18 KB) */
__device__ __forceinline__ void tma_pair(const CUtensorMap *a, const CUtensorMap *b, unsigned int bar,
                                         unsigned int dst) {
    if (blockIdx.x != 0 || threadIdx.x != 0)
        return;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(18432) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {0, 0}],"
                 " [%2];" ::"r"(dst),
                 "l"(a), "r"(bar)
                 : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {0, 0}],"
                 " [%2];" ::"r"(dst + 2048),
                 "l"(b), "r"(bar)
                 : "memory");
    asm volatile("{\n.reg .pred d;\nW%=:\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 d, [%0], 0;\n"
                 "@!d bra W%=;\n}\n" ::"r"(bar)
                 : "memory");
}

/* holds the stream ~10 ms so that the timed launches are all queued before the first runs (the host's launch
 * rate never shows) */
__global__ void k_spin(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}
__global__ void k_empty(small_params) {}
/* the one-stage prefix of tpg_gemm_params (its 256-byte head and one 768-byte stage), and 4 KB for the step */
struct kb1_params {
    char b[1024];
};
struct kb4_params {
    char b[4096];
};
struct kb4p_params {
    char b[4160];
};
__global__ void k_kb1(const __grid_constant__ kb1_params p) {
    if (p.b[5] == 7)
        asm volatile("trap;");
}
__global__ void k_kb4(const __grid_constant__ kb4_params p) {
    if (p.b[5] == 7)
        asm volatile("trap;");
}
__global__ void k_kb4p(const __grid_constant__ kb4p_params p) {
    if (p.b[5] == 7)
        asm volatile("trap;");
}
/* ~5 us of work a CTA: does a launch's parameter cost hide behind the previous kernel's run? */
__device__ __forceinline__ void spin_ns(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}
__global__ void k_spin5_small(small_params) {
    spin_ns(5000);
}
__global__ void k_spin5_params(const __grid_constant__ tpg_gemm_params p) {
    spin_ns(5000);
    if (p.m == -7)
        asm volatile("trap;");
}
__global__ void k_params(const __grid_constant__ tpg_gemm_params p) {
    if (p.m == -7)
        asm volatile("trap;");
}
__global__ void __launch_bounds__(384, 1) k_smem(small_params) {
    extern __shared__ __align__(1024) char s[];
}
__global__ void __launch_bounds__(384, 1) k_params_smem(const __grid_constant__ tpg_gemm_params p) {
    if (p.m == -7)
        asm volatile("trap;");
}
__global__ void __launch_bounds__(384, 1) k_prologue(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    if (ld_acquire(p.last_epoch) == 0xdeadbeefu)
        asm volatile("trap;");
    prologue(smem_addr(s));
}
/* the GEMM kernel's epoch load: a system-scope acquire by every thread (`one` = 0), or by thread 0 and the CTA barrier
 * after it */
__device__ __forceinline__ void prologue_sys(const unsigned int *word, int one, unsigned int smem) {
    if (!one || threadIdx.x == 0) {
        unsigned int v;
        asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(word) : "memory");
        if (v == 0xdeadbeefu)
            asm volatile("trap;");
    }
    prologue(smem);
}
__global__ void __launch_bounds__(384, 1) k_prologue_sys(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    prologue_sys(p.last_epoch, 0, smem_addr(s));
}
__global__ void __launch_bounds__(384, 1) k_prologue_sys1(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    prologue_sys(p.last_epoch, 1, smem_addr(s));
}
/* the GEMM kernel's first instructions (griddepcontrol, gemm_sm90.cuh) before the same prologue */
__global__ void __launch_bounds__(384, 1) k_prologue_gd(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    prologue(smem_addr(s));
}
/* the same prologue with 168 registers a thread allocated at launch (the GEMM kernel's count: 384 x 168 fill the
 * register file), held live through the body */
__global__ void __maxnreg__(168) k_prologue_regs(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    float r[120];
#pragma unroll
    for (int i = 0; i < 120; ++i)
        r[i] = p.alpha * (float)(i + threadIdx.x);
    prologue(smem_addr(s));
    float acc = 0.f;
#pragma unroll
    for (int i = 0; i < 120; ++i)
        acc += r[i] * r[119 - i];
    if (acc == -7.f)
        asm volatile("trap;");
}
/* ~3000 instructions of straight-line code run once by every thread: what a cold instruction cache costs */
__global__ void __launch_bounds__(384, 1) k_code(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    prologue(smem_addr(s));
    float a = p.alpha + threadIdx.x, b = p.beta;
#pragma unroll
    for (int i = 0; i < 3000; ++i)
        asm volatile("fma.rn.f32 %0, %0, %1, %1;" : "+f"(a) : "f"(b));
    if (a == -7.f)
        asm volatile("trap;");
}
/* prefetch of both maps, an acquire load of a global word, the prologue, CTA 0's TMA pair */
__device__ __forceinline__ void tma_body(const CUtensorMap *a, const CUtensorMap *b, const unsigned int *word,
                                         unsigned int smem) {
    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"(a) : "memory");
        asm volatile("prefetch.tensormap [%0];" ::"l"(b) : "memory");
    }
    if (ld_acquire(word) == 0xdeadbeefu)
        asm volatile("trap;");
    prologue(smem);
    tma_pair(a, b, smem, smem + 1024);
}
__global__ void __launch_bounds__(384, 1) k_tma_param(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    tma_body(&p.stage[0].a_map, &p.stage[0].b_map, p.last_epoch, smem_addr(s));
}
__global__ void __launch_bounds__(384, 1) k_tma_global(small_params p) {
    extern __shared__ __align__(1024) char s[];
    tma_body(p.maps, p.maps + 1, p.word, smem_addr(s));
}
/* + CTA 0 stores a 16 x 128 bf16 tile (st.global, 16 bytes a thread of its consumer warpgroup) */
__global__ void __launch_bounds__(384, 1) k_tma_store(const __grid_constant__ tpg_gemm_params p) {
    extern __shared__ __align__(1024) char s[];
    tma_body(&p.stage[0].a_map, &p.stage[0].b_map, p.last_epoch, smem_addr(s));
    __syncthreads();
    if (blockIdx.x == 0 && threadIdx.x >= 128 && threadIdx.x < 256)
        reinterpret_cast<uint4 *>(p.stage[0].d)[threadIdx.x - 128] = make_uint4(threadIdx.x, 1, 2, 3);
}

static int encode(CUtensorMap *m, void *base, unsigned long long rows, unsigned int box_rows) {
    cuuint64_t dims[2] = {4096, rows}, strides[1] = {4096 * 2};
    cuuint32_t box[2] = {64, box_rows}, es[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, es,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", (int)r);
    return r != CUDA_SUCCESS;
}

typedef void (*launch_fn)(const tpg_gemm_params *, const small_params *, cudaStream_t);

/* one launcher a variant: kernel K on G CTAs of T threads with S bytes of dynamic smem, argument A (*p: the GEMM's
 * parameters, *s: the small ones) */
#define LAUNCHER(NAME, K, G, T, S, A)                                                                                  \
    static void NAME(const tpg_gemm_params *p, const small_params *s, cudaStream_t st) {                               \
        (void)p;                                                                                                       \
        (void)s;                                                                                                       \
        K<<<G, T, S, st>>>(A);                                                                                         \
    }
LAUNCHER(l_empty, k_empty, GRID, 128, 0, *s)
LAUNCHER(l_empty384, k_empty, GRID, 384, 0, *s)
LAUNCHER(l_params, k_params, GRID, 384, 0, *p)
LAUNCHER(l_smem, k_smem, GRID, 384, SMEM, *s)
LAUNCHER(l_params_smem, k_params_smem, GRID, 384, SMEM, *p)
LAUNCHER(l_prologue, k_prologue, GRID, 384, SMEM, *p)
LAUNCHER(l_prologue_sys, k_prologue_sys, GRID, 384, SMEM, *p)
LAUNCHER(l_prologue_sys1, k_prologue_sys1, GRID, 384, SMEM, *p)
LAUNCHER(l_prologue_gd, k_prologue_gd, GRID, 384, SMEM, *p)
LAUNCHER(l_prologue_regs, k_prologue_regs, GRID, 384, SMEM, *p)
LAUNCHER(l_code, k_code, GRID, 384, SMEM, *p)
LAUNCHER(l_tma_param, k_tma_param, GRID, 384, SMEM, *p)
LAUNCHER(l_tma_param1, k_tma_param, 1, 384, SMEM, *p)
LAUNCHER(l_tma_global, k_tma_global, GRID, 384, SMEM, *s)
LAUNCHER(l_kb1, k_kb1, GRID, 384, 0, kb1_params{})
LAUNCHER(l_kb4, k_kb4, GRID, 384, 0, kb4_params{})
LAUNCHER(l_kb4p, k_kb4p, GRID, 384, 0, kb4p_params{})
LAUNCHER(l_spin5_small, k_spin5_small, GRID, 384, 0, *s)
LAUNCHER(l_spin5_params, k_spin5_params, GRID, 384, 0, *p)
LAUNCHER(l_tma_store, k_tma_store, GRID, 384, SMEM, *p)

/* variant i captured alone into a one-node graph (as a TP = 1 op's graph), launched once per call */
static cudaGraphExec_t graphs[32];
#define GRAPH_LAUNCHER(N)                                                                                              \
    static void l_graph##N(const tpg_gemm_params *, const small_params *, cudaStream_t st) {                           \
        cudaGraphLaunch(graphs[N], st);                                                                                \
    }
GRAPH_LAUNCHER(0)
GRAPH_LAUNCHER(1)
GRAPH_LAUNCHER(2)

static int make_graph(int slot, launch_fn fn, const tpg_gemm_params *p, const small_params *s, cudaStream_t st) {
    cudaGraph_t g;
    CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
    fn(p, s, st);
    CK(cudaStreamEndCapture(st, &g));
    CK(cudaGraphInstantiate(&graphs[slot], g, 0));
    return 0;
}

int main(void) {
    struct {
        const char *name;
        launch_fn fn;
    } v[] = {
        {"empty 128 threads, 24 B params", l_empty},
        {"empty 384 threads, 24 B params", l_empty384},
        {"+ 6400 B params (tpg_gemm_params)", l_params},
        {"+ 227 KB smem (24 B params)", l_smem},
        {"+ 6400 B params + 227 KB smem", l_params_smem},
        {"+ prologue (acquire load, mbarrier, setmaxnreg)", l_prologue},
        {"  prologue, ld.acquire.sys by every thread", l_prologue_sys},
        {"  prologue, ld.acquire.sys by thread 0", l_prologue_sys1},
        {"  prologue after griddepcontrol wait + launch", l_prologue_gd},
        {"  prologue, 168 registers a thread", l_prologue_regs},
        {"  prologue + 3000 straight-line FMAs", l_code},
        {"+ one TMA pair, maps in params", l_tma_param},
        {"  the same, 1 CTA", l_tma_param1},
        {"+ one TMA pair, maps in global memory", l_tma_global},
        {"+ TMA pair (params) + 4 KB st.global", l_tma_store},
        {"empty, 1024 B params", l_kb1},
        {"empty, 4096 B params", l_kb4},
        {"empty, 4160 B params", l_kb4p},
        {"5 us spin, 24 B params", l_spin5_small},
        {"5 us spin, 6400 B params", l_spin5_params},
        {"graph: empty 384 threads, 24 B params", l_graph0},
        {"graph: TMA pair (params) + 4 KB st.global", l_graph1},
        {"graph: 5 us spin, 24 B params", l_graph2},
    };
    const int nv = (int)(sizeof v / sizeof v[0]);
    void *a, *b, *d;
    unsigned int *word;
    CUtensorMap *maps_d;
    CK(cudaMalloc(&a, 64 * 4096 * 2));
    CK(cudaMalloc(&b, 4096 * 4096 * 2));
    CK(cudaMalloc(&d, 1 << 20));
    CK(cudaMalloc(&word, 64));
    CK(cudaMemset(word, 0, 64));
    CK(cudaMalloc(&maps_d, 2 * sizeof(CUtensorMap)));
    tpg_gemm_params p;
    memset(&p, 0, sizeof p);
    p.m = 16;
    p.last_epoch = word;
    p.stage[0].d = d;
    if (encode(&p.stage[0].a_map, a, 64, 16) || encode(&p.stage[0].b_map, b, 4096, 128))
        return 1;
    CK(cudaMemcpy(maps_d, &p.stage[0].a_map, 2 * sizeof(CUtensorMap), cudaMemcpyHostToDevice));
    small_params s = {word, maps_d, d};
    CK(cudaFuncSetAttribute(k_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_params_smem, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_prologue, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_prologue_sys, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_prologue_sys1, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_prologue_gd, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_prologue_regs, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_code, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_tma_param, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_tma_global, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(k_tma_store, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (make_graph(0, l_empty384, &p, &s, st) || make_graph(1, l_tma_store, &p, &s, st) ||
        make_graph(2, l_spin5_small, &p, &s, st))
        return 1;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    double us[32][3];
    for (int rep = 0; rep < 3; ++rep) /* three passes, rotated order: the median is printed */
        for (int j = 0; j < nv; ++j) {
            const int i = (j + rep * 3) % nv;
            for (int w = 0; w < 200; ++w)
                v[i].fn(&p, &s, st);
            k_spin<<<1, 32, 0, st>>>(20000000LL);
            CK(cudaEventRecord(e0, st));
            for (int it = 0; it < ITERS; ++it)
                v[i].fn(&p, &s, st);
            CK(cudaEventRecord(e1, st));
            CK(cudaEventSynchronize(e1));
            CK(cudaGetLastError());
            float ms;
            CK(cudaEventElapsedTime(&ms, e0, e1));
            us[i][rep] = ms * 1e3 / ITERS;
        }
    printf("%-52s %s\n", "variant (back-to-back calls)", "us a call (median of 3 passes; min, max)");
    for (int i = 0; i < nv; ++i) {
        double x = us[i][0], y = us[i][1], z = us[i][2];
        double lo = x < y ? (x < z ? x : z) : (y < z ? y : z), hi = x > y ? (x > z ? x : z) : (y > z ? y : z);
        printf("%-52s %6.2f (%.2f, %.2f)\n", v[i].name, x + y + z - lo - hi, lo, hi);
    }
    return 0;
}
