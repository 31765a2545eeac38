/* The gathered walk's shards pulled by the GEMM itself (`kernel_selftest --pulls`; templates/kernels/
 * pull_shards.cuh): its output, and the progress the slice queue promises, on one GPU.
 *
 * What: TP = 4 "peer" shards of 32 rows (K = 4096), separate buffers of this GPU, which each listed kernel pulls into
 * its slots and multiplies by N = 2560 rows of B - one gathered stage of 128 rows, as the runtime launches it
 * (runtime/src/params.c, gathered_pulls). Its output must equal, bit for bit, the plain GEMM of the same shards laid
 * end to end (same tiles, same k order), and so must a second launch (the pull words reset in between).
 * Then the same launch while a blocker kernel holds half the SMs - a whole SM's shared memory each, so no GEMM CTA
 * fits beside one - and spins until the host releases it: the GEMM must finish while the blocker still holds them.
 * With the queue the resident CTAs pull the absent ones' slices, do their tiles and leave their SMs to the rest; with
 * one fixed slice per CTA they would wait for the absent CTAs until the timeout (2 s here), which is what a review
 * found (docs/perf_notes/2026-12-03.md): the instance wide3fx, built that way (TPG_DIAG_PULL_FIXED_SLICES), is the
 * control and must time out there.
 */
#include <unistd.h>

#include "selftest_util.cuh"

static const int kTp = 4, kRows = 32, kN = 2560, kK = 4096;
static const int kBlockerSmem = 200 * 1024; /* with a GEMM CTA's ~226 KiB, more than an SM's 228 KiB */
static const double kWaitS = 3.0;           /* the GEMM must end within this while the blocker holds its SMs */

/* Holds its SM until *release or 10 s; marks itself started (host-mapped words). */
static __global__ void blocker(volatile unsigned int *release, volatile unsigned int *started)
{
    extern __shared__ unsigned char hold[];
    if (threadIdx.x != 0) return;
    hold[0] = 1;
    started[blockIdx.x] = 1u;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (!*release && t - t0 < 10000000000ull);
}

/* The gathered stage over `a` (the slots, or the shards end to end for the plain GEMM); pulls when shards != NULL. */
static void gathered_params(tpg_gemm_params *p, const ctl &c, const kern &K, void *a, void *B, void *D,
                            void *const *shards, unsigned int *words)
{
    const int m = kTp * kRows;
    base_params(p, c, m, kN, kK, 1, 1);
    map_a(&p->stage[0].a_map, K, a, m, kK);
    map_b(&p->stage[0].b_map, K, B, kN, kK);
    p->stage[0].a_batch_rows = m;
    p->stage[0].b_batch_rows = kN;
    set_dest(p, 0, K, D, kN, (long long)m * kN);
    if (!shards) return;
    for (int b = 0; b < kTp; ++b) p->pull_src[b] = shards[b];
    p->pull_dst = a;
    p->pull_bytes = (unsigned long long)kRows * kK * ab_bytes(K);
    p->pull_next = words;
    p->pull_count = words + 1;
    p->pull_seen = words + 2;
    p->pull_shards = kTp;
}

/* Whether D (device) equals ref (host) bit for bit. */
static bool same_output(const void *D, const unsigned char *ref, size_t bytes, unsigned char *host)
{
    CK(cudaMemcpy(host, D, bytes, cudaMemcpyDeviceToHost));
    return memcmp(host, ref, bytes) == 0;
}

/* Launches p with a blocker on half the SMs; returns whether the GEMM ended before the blocker was released. */
static bool ends_beside_blocker(const kern &K, const tpg_gemm_params *p, volatile unsigned int *release,
                                volatile unsigned int *started)
{
    const int nb = g_num_sms / 2;
    cudaStream_t bs, gs;
    cudaEvent_t done;
    CK(cudaStreamCreateWithFlags(&bs, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    *release = 0u;
    for (int i = 0; i < nb; ++i) started[i] = 0u;
    blocker<<<nb, 32, kBlockerSmem, bs>>>(release, started);
    CK(cudaGetLastError());
    int up = 0;
    for (int spin = 0; spin < 2000 && up < nb; ++spin, usleep(1000)) /* every blocker on its SM first */
        for (up = 0; up < nb && started[up]; ++up) {
        }
    launch(K, p, gs);
    CK(cudaEventRecord(done, gs));
    cudaError_t q = cudaErrorNotReady;
    for (int spin = 0; spin < (int)(kWaitS * 1000) && (q = cudaEventQuery(done)) == cudaErrorNotReady; ++spin)
        usleep(1000);
    *release = 1u;
    sync_watchdog(K.name);
    CK(cudaEventDestroy(done));
    CK(cudaStreamDestroy(bs));
    CK(cudaStreamDestroy(gs));
    return up == nb && q == cudaSuccess;
}

void pulls_selftest(const kern *ks, int nk, const ctl &c)
{
    const size_t shard = (size_t)kRows * kK * 2, out = (size_t)kTp * kRows * kN * 2; /* the largest type's */
    void *shards[kTp], *slots = dalloc(kTp * shard), *ends = dalloc(kTp * shard), *B = dalloc((size_t)kN * kK * 2);
    void *D = dalloc(out);
    for (int b = 0; b < kTp; ++b) shards[b] = dalloc(shard);
    unsigned int *words = (unsigned int *)dalloc(3 * sizeof(unsigned int));
    CK(cudaMemset(words, 0, 3 * sizeof(unsigned int)));
    unsigned int *mapped;
    CK(cudaHostAlloc((void **)&mapped, (size_t)(g_num_sms + 1) * 4, cudaHostAllocMapped));
    volatile unsigned int *release = mapped, *started = mapped + 1;
    CK(cudaFuncSetAttribute(blocker, cudaFuncAttributeMaxDynamicSharedMemorySize, kBlockerSmem));
    unsigned char *ref = (unsigned char *)malloc(out), *host = (unsigned char *)malloc(out);
    set_epoch(c, 1);
    for (int i = 0; i < nk; ++i) {
        const kern &K = ks[i];
        const size_t sb = (size_t)kRows * kK * ab_bytes(K);
        case_guard(K.name, 60);
        CK(cudaMemset(words, 0, 3 * sizeof(unsigned int))); /* whatever a previous kernel's timeout left */
        for (int b = 0; b < kTp; ++b) {
            rand_fill(K, shards[b], (size_t)kRows * kK, 9100 + b);
            CK(cudaMemcpy((char *)ends + b * sb, shards[b], sb, cudaMemcpyDeviceToDevice));
        }
        rand_fill(K, B, (size_t)kN * kK, 9200);
        tpg_gemm_params plain, pulled;
        gathered_params(&plain, c, K, ends, B, D, NULL, NULL);
        gathered_params(&pulled, c, K, slots, B, D, shards, words);
        launch(K, &plain, 0);
        sync_watchdog(K.name);
        CK(cudaMemcpy(ref, D, out, cudaMemcpyDeviceToHost));
        char val[64];
        for (int rep = 0; rep < 2; ++rep) { /* the second launch finds the words its predecessor reset */
            CK(cudaMemset(D, 0xFF, out));
            CK(cudaMemset(slots, 0xFF, kTp * shard));
            launch(K, &pulled, 0);
            sync_watchdog(K.name);
            const unsigned int st = get_status(c);
            const bool same = same_output(D, ref, out, host);
            snprintf(val, sizeof val, "status=%u same=%d", st, (int)same);
            record(rep ? "pulls: again (words reset)" : "pulls: = plain GEMM of the shards", K, val, "status=0 same=1",
                   st == TPG_DEVICE_OK && same);
        }
        CK(cudaMemset(D, 0xFF, out));
        CK(cudaMemset(slots, 0xFF, kTp * shard)); /* else a stolen slice copied nowhere reads the last run's rows */
        CK(cudaDeviceSynchronize()); /* both memsets (legacy stream) before the GEMM on the blocker's other stream */
        const bool ended = ends_beside_blocker(K, &pulled, release, started);
        const unsigned int st = get_status(c);
        const bool same = same_output(D, ref, out, host);
        snprintf(val, sizeof val, "ended=%d status=%u same=%d", (int)ended, st, (int)same);
        if (strcmp(K.name, "wide3fx") == 0) /* the control: fixed slices wait for the absent CTAs (a timeout) */
            record("pulls: half held, fixed (control)", K, val, "status=1", st == TPG_DEVICE_TIMEOUT);
        else
            record("pulls: half the SMs held", K, val, "ended=1 status=0 same=1", ended && st == TPG_DEVICE_OK && same);
        set_epoch(c, 1); /* clears a status for the next kernel */
    }
    free(ref);
    free(host);
    CK(cudaFreeHost(mapped));
    for (int b = 0; b < kTp; ++b) cudaFree(shards[b]);
    cudaFree(slots); cudaFree(ends); cudaFree(B); cudaFree(D); cudaFree(words);
}
