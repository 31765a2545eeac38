// Probe (not part of the product): what a CUDA graph's shape costs per launch on one GPU, with kernels that stand
// in for tpgemm's nodes - a 1-thread "barrier" that spins ~2 us and a persistent "GEMM" of one CTA per SM that spins
// for G us. Shapes: chain START -> GEMM -> END (reduce-scatter, table's graph); fork/join {START, GEMM} -> END
// (reduce-scatter, barriers beside the GEMM); START -> {COPY -> FLAG, GEMM} -> END (all-gather, table's graph,
// the copy a 1 MiB device-to-device memcpy node and the flag a 4-byte one). Each graph launched back to back,
// per-launch time from CUDA events over many launches after a warm-up; the chain's time is the reference.
//   nvcc -O2 -arch=sm_90a -o graph_topology graph_topology.cu && ./graph_topology
#include <cstdio>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); return 1; } } while (0)

__global__ void spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}

static cudaGraphNode_t add_spin(cudaGraph_t g, const cudaGraphNode_t *deps, size_t n, int ctas, unsigned long long ns)
{
    static unsigned long long arg[64];
    static int used = 0;
    arg[used] = ns;
    void *params[1] = {&arg[used++]};
    cudaKernelNodeParams p = {};
    p.func = (void *)spin_kernel;
    p.gridDim = dim3(ctas);
    p.blockDim = dim3(ctas == 1 ? 32 : 384);
    p.kernelParams = params;
    cudaGraphNode_t node;
    cudaGraphAddKernelNode(&node, g, deps, n, &p);
    return node;
}

// kind 0: chain, 1: fork/join, 2: all-gather table shape, 3: START as a leaf, 4: GEMM -> END only
static cudaGraphExec_t build(int kind, int sms, unsigned long long gemm_ns, void *dst, void *src)
{
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    const unsigned long long barrier_ns = 2000;
    cudaGraphNode_t start = add_spin(g, nullptr, 0, 1, barrier_ns), gemm, end;
    if (kind == 0) {
        gemm = add_spin(g, &start, 1, sms, gemm_ns);
        end = add_spin(g, &gemm, 1, 1, barrier_ns);
    } else if (kind == 1) {
        gemm = add_spin(g, nullptr, 0, sms, gemm_ns);
        cudaGraphNode_t both[2] = {start, gemm};
        end = add_spin(g, both, 2, 1, barrier_ns);
    } else if (kind == 3) { // START a leaf beside GEMM -> END: the join only at the graph's end
        gemm = add_spin(g, nullptr, 0, sms, gemm_ns);
        end = add_spin(g, &gemm, 1, 1, barrier_ns);
    } else if (kind == 4) { // no START at all: GEMM -> END (a reduce-scatter graph whose END stands in for START)
        cudaGraphDestroy(g);
        cudaGraphCreate(&g, 0);
        gemm = add_spin(g, nullptr, 0, sms, gemm_ns);
        end = add_spin(g, &gemm, 1, 1, barrier_ns);
    } else {
        cudaGraphNode_t copy, flag;
        cudaGraphAddMemcpyNode1D(&copy, g, &start, 1, dst, src, 1 << 20, cudaMemcpyDeviceToDevice);
        cudaGraphAddMemcpyNode1D(&flag, g, &copy, 1, (char *)dst + (2 << 20), src, 4, cudaMemcpyDeviceToDevice);
        gemm = add_spin(g, &start, 1, sms, gemm_ns);
        cudaGraphNode_t both[2] = {flag, gemm};
        end = add_spin(g, both, 2, 1, barrier_ns);
    }
    (void)end;
    (void)start;
    cudaGraphExec_t e;
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphDestroy(g);
    return e;
}

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    void *dst, *src;
    CK(cudaMalloc(&dst, 4 << 20));
    CK(cudaMalloc(&src, 4 << 20));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    const char *names[5] = {"chain START->GEMM->END", "fork/join {START,GEMM}->END", "AG table START->{COPY->FLAG,GEMM}->END",
                            "START leaf, GEMM->END", "GEMM->END (no START)"};
    const unsigned long long gemm_us[3] = {20, 60, 200};
    printf("%-44s %8s %8s %8s  (us per launch; GEMM stand-in spins 20 / 60 / 200 us on %d CTAs)\n", "graph", "20", "60",
           "200", sms);
    for (int rep = 0; rep < 2; rep++)
        for (int kind = 0; kind < 5; kind++) {
            printf("%-44s", names[kind]);
            for (int gi = 0; gi < 3; gi++) {
                cudaGraphExec_t e = build(kind, sms, gemm_us[gi] * 1000ull, dst, src);
                const int iters = gi == 2 ? 500 : 2000;
                for (int i = 0; i < 50; i++) CK(cudaGraphLaunch(e, s));
                CK(cudaEventRecord(a, s));
                for (int i = 0; i < iters; i++) CK(cudaGraphLaunch(e, s));
                CK(cudaEventRecord(b, s));
                CK(cudaEventSynchronize(b));
                float ms = 0;
                CK(cudaEventElapsedTime(&ms, a, b));
                printf(" %8.2f", 1e3 * ms / iters);
                cudaGraphExecDestroy(e);
            }
            printf("\n");
        }
    return 0;
}
