/* GPU test (1 device): TP = 1 calls launched back to back with programmatic dependent launch never read
 * an operand before the call that writes it has finished.
 *
 * A chain X[i+1] = alpha * X[i] * B^T of STEPS ops (op i reads X[i] as A and writes X[i+1] as D) runs
 * twice per TP = 1 bf16 kernel: once with a stream synchronize after every call (nothing can overlap:
 * the reference), once queued back to back with PDL on (tpg_op_set_pdl(op, 1)), after poisoning
 * X[1..STEPS] with NaN. A kernel that touched A before griddepcontrol.wait would read a half-written
 * X[i] (or the NaN poison): its CTAs start on the SMs the previous call leaves idle (M x N is ~2 waves
 * of tiles, so some SMs are idle from the start of each call's last wave). The kernel is deterministic,
 * so the two chains must match bit for bit. Both chains could agree on a wrong product, so the last call's D is also
 * checked on SAMPLES elements against a host product of the X[STEPS-1] and B it read.
 *
 * Run: build/tests/gpu_pdl_chain. Exit 0 pass, 1 a failed expectation, 3 no CUDA device. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpgemm.h"

enum { M = 4096, N = 2048, K = 2048, STEPS = 8, SAMPLES = 512 };
_Static_assert(N == K, "X[i] is both an M x K operand and an M x N result");

static int fail(const char *what, tpg_status s, const tpg_ctx *ctx) {
    fprintf(stderr, "gpu_pdl_chain: %s: %s (%s)\n", what, tpg_status_string(s), ctx ? tpg_last_error(ctx) : "");
    return 1;
}

/* bf16 of a uniform value in [-1, 1) from a 64-bit LCG (round to nearest even). */
static uint16_t next_bf16(uint64_t *s) {
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    float f = (float)((*s >> 40) & 0xffffff) / 8388608.0f - 1.0f;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* h[0..n) random bf16 uploaded to dst; h is the caller's (NULL: a temporary). */
static int upload_random(void *dst, size_t n, uint64_t seed, uint16_t *h) {
    uint16_t *buf = h ? h : malloc(n * sizeof *buf);
    if (!buf) return 1;
    for (size_t i = 0; i < n; i++) buf[i] = next_bf16(&seed);
    cudaError_t e = cudaMemcpy(dst, buf, n * sizeof *buf, cudaMemcpyHostToDevice);
    if (!h) free(buf);
    return e != cudaSuccess;
}

static float bf16_value(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* got = alpha * a * b^T on SAMPLES pseudo-random elements (a: M x K, b: N x K, got: M x N, bf16 on the host), in
 * double: the largest error over the largest |reference|, which a bf16 result holds well under 1e-2. */
static double sampled_error(const uint16_t *a, const uint16_t *b, const uint16_t *got, float alpha) {
    uint64_t s = 7;
    double err = 0.0, scale = 0.0;
    for (int i = 0; i < SAMPLES; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const size_t row = (size_t)(s >> 33) % M, col = (size_t)(s >> 13) % N;
        double ref = 0.0;
        for (size_t k = 0; k < K; k++) ref += (double)bf16_value(a[row * K + k]) * bf16_value(b[col * K + k]);
        ref *= alpha;
        err = fmax(err, fabs(bf16_value(got[row * N + col]) - ref));
        scale = fmax(scale, fabs(ref));
    }
    return scale > 0.0 ? err / scale : INFINITY;
}

/* One chain over ops[0..STEPS-1]: synced = a stream synchronize after every call. */
static tpg_status run_chain(tpg_op **ops, void **x, cudaStream_t s, int synced) {
    for (int i = 1; i <= STEPS; i++)
        if (cudaMemsetAsync(x[i], 0xff, (size_t)M * N * 2, s) != cudaSuccess) return TPG_ERR_CUDA; /* NaN */
    for (int i = 0; i < STEPS; i++) {
        cudaStream_t streams[1] = {s};
        tpg_status st = tpg_op_run(ops[i], streams);
        if (st != TPG_OK) return st;
        if (synced && cudaStreamSynchronize(s) != cudaSuccess) return TPG_ERR_CUDA;
    }
    return cudaStreamSynchronize(s) == cudaSuccess ? TPG_OK : TPG_ERR_CUDA;
}

/* Both chains for one config; returns 0 when they match bit for bit and the result is finite. */
static int check_config(tpg_ctx *ctx, int cfg, const char *name, void **x, void *b, uint16_t *ref, uint16_t *got,
                        const uint16_t *host_b, cudaStream_t s) {
    tpg_op *ops[STEPS] = {0};
    int rc = 1;
    tpg_status st = TPG_OK;
    const float alpha = 3.0f / sqrtf((float)K); /* keeps every X[i] at about unit scale */
    for (int i = 0; i < STEPS && st == TPG_OK; i++) {
        tpg_op_desc d = {cfg, M, N, K, 1, alpha, 0.0f};
        st = tpg_op_create(ctx, &d, &ops[i]);
        tpg_tensors t = {x[i], b, NULL, x[i + 1], NULL, NULL};
        if (st == TPG_OK) st = tpg_op_set_tensors(ops[i], 0, &t);
    }
    if (st != TPG_OK) {
        rc = fail("op setup", st, ctx);
        goto done;
    }
    for (int i = 0; i < STEPS && st == TPG_OK; i++) st = tpg_op_set_pdl(ops[i], 0);
    if (st != TPG_OK || (st = run_chain(ops, x, s, 1)) != TPG_OK) {
        rc = fail("synchronized chain", st, ctx);
        goto done;
    }
    if (cudaMemcpy(ref, x[STEPS], (size_t)M * N * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
        rc = fail("copying the synchronized chain's result", TPG_ERR_CUDA, ctx);
        goto done;
    }
    for (int i = 0; i < STEPS && st == TPG_OK; i++) st = tpg_op_set_pdl(ops[i], 1);
    if (st != TPG_OK || (st = run_chain(ops, x, s, 0)) != TPG_OK) {
        rc = fail("back-to-back chain", st, ctx);
        goto done;
    }
    if (cudaMemcpy(got, x[STEPS], (size_t)M * N * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
        rc = fail("copying the back-to-back chain's result", TPG_ERR_CUDA, ctx);
        goto done;
    }
    size_t diff = 0, nonfinite = 0;
    for (size_t i = 0; i < (size_t)M * N; i++) {
        diff += ref[i] != got[i];
        nonfinite += (ref[i] & 0x7f80u) == 0x7f80u;
    }
    /* ref now takes the last call's A (X[STEPS-1], M x K = M x N here) for the host product */
    if (cudaMemcpy(ref, x[STEPS - 1], (size_t)M * K * 2, cudaMemcpyDeviceToHost) != cudaSuccess) {
        rc = fail("copying the last call's A", TPG_ERR_CUDA, ctx);
        goto done;
    }
    const double err = sampled_error(ref, host_b, got, alpha);
    printf("%-28s %d calls back to back with PDL: %zu of %d elements differ from the synchronized chain, "
           "%zu non-finite; last call vs host product on %d elements: error %.2e (bound 1e-2)\n", name, STEPS, diff,
           M * N, nonfinite, SAMPLES, err);
    rc = diff != 0 || nonfinite != 0 || !(err <= 1e-2);
done:
    for (int i = 0; i < STEPS; i++) tpg_op_destroy(ops[i]);
    return rc;
}

int main(void) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        fprintf(stderr, "gpu_pdl_chain: needs a CUDA device, none visible\n");
        return 3;
    }
    tpg_ctx_config cc = TPG_CTX_CONFIG_INIT;
    cc.tp = 1;
    tpg_ctx *ctx;
    tpg_status st = tpg_ctx_create(&cc, &ctx);
    if (st != TPG_OK) return fail("tpg_ctx_create", st, NULL);
    void *x[STEPS + 1] = {0}, *b = NULL;
    uint16_t *ref = malloc((size_t)M * N * 2), *got = malloc((size_t)M * N * 2), *host_b = malloc((size_t)N * K * 2);
    cudaStream_t s;
    int failed = !ref || !got || !host_b || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess;
    for (int i = 0; i <= STEPS && !failed; i++) failed = cudaMalloc(&x[i], (size_t)M * N * 2) != cudaSuccess;
    failed = failed || cudaMalloc(&b, (size_t)N * K * 2) != cudaSuccess;
    failed = failed || upload_random(x[0], (size_t)M * K, 1, NULL) || upload_random(b, (size_t)N * K, 2, host_b);
    if (failed) return fail("allocation / upload", TPG_ERR_CUDA, ctx);
    int checked = 0;
    for (int i = 0; i < tpg_config_count(); i++) {
        tpg_config_info ci;
        if (tpg_config_get(i, &ci) != TPG_OK || ci.tp != 1 || ci.dtype != TPG_DTYPE_BF16) continue;
        int seen = 0; /* one config per kernel: the schedules' TP = 1 configs share them */
        for (int j = 0; j < i && !seen; j++) {
            tpg_config_info cj;
            seen = tpg_config_get(j, &cj) == TPG_OK && cj.tp == 1 && !strcmp(cj.kernel, ci.kernel);
        }
        if (seen) continue;
        failed |= check_config(ctx, i, ci.name, x, b, ref, got, host_b, s);
        checked++;
    }
    for (int i = 0; i <= STEPS; i++) cudaFree(x[i]);
    cudaFree(b);
    free(ref);
    free(got);
    free(host_b);
    tpg_ctx_destroy(ctx);
    printf("%s: %d kernels checked\n", failed || !checked ? "FAILED" : "PASSED", checked);
    return failed || !checked;
}
