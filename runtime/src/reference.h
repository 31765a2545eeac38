/* GPU-side check support for the CLI (build/tpgemm): deterministic operand values, a reference check that
 * regenerates the operands instead of gathering them, output poisoning and a device checksum.
 *
 * Every function works on the CURRENT CUDA device (the one that holds the pointers) and on `stream`
 * (a cudaStream_t of that device, NULL = legacy default stream). Every CUDA call is checked; failures
 * return TPG_ERR_CUDA (TPG_ERR_OUT_OF_MEMORY for allocations). Nothing prints, nothing exits.
 *
 * Values: element (batch b, global row r, global col c) of a matrix filled with seed s is
 *   u = uniform in [-1, 1) from tpg_ref_hash(s, b, r, c), rounded to the element type.
 * Operands of a problem with seed S: A (M x K) uses S, B (N x K) S + 1, C (M x N) S + 2.
 */
#ifndef TPG_REFERENCE_H
#define TPG_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "tpgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills a rows x cols block (leading dimension ld elements) of `batch` batches (batch_stride elements
 * apart) with the values that the global matrix has at rows row0.., cols col0.. . Synchronous errors
 * only (launch); the fill itself is asynchronous on stream. */
tpg_status tpg_fill(tpg_dtype dtype, void *ptr, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                    int64_t batch_stride, int64_t row0, int64_t col0, uint64_t seed, void *stream);

/* The problem whose D shard is checked. */
typedef struct tpg_ref_problem {
    tpg_dtype dtype_ab, dtype_cd; /* operand type; C / D type */
    int64_t m, n, k, l;           /* global problem */
    float alpha, beta;            /* C is used only when beta != 0 */
    uint64_t seed;                /* A: seed, B: seed + 1, C: seed + 2 */
} tpg_ref_problem;

/* The D shard on the current device: rows x cols of the global D starting at (row0, col0). */
typedef struct tpg_ref_shard {
    const void *d;
    int64_t rows, cols, ld, batch_stride, row0, col0;
} tpg_ref_shard;

typedef struct tpg_ref_result {
    double max_error;     /* max over checked elements of |d - ref| / max(|ref|, rms_ref); +inf if any
                             output is not finite */
    double rms_ref;       /* RMS of the reference values checked */
    int64_t nonfinite;    /* outputs that are NaN or infinite */
    int64_t checked;      /* element checks made (all batches; in a sample, the crossings of a sampled row
                             and a sampled column count twice) */
    int full;             /* 1: every element; 0: stratified sample */
} tpg_ref_result;

/* Shards with rows * cols * K at most this are checked in full; larger ones by a sample in which every
 * 32-row band contributes one row (all columns) and every 256-column band one column (all rows), in
 * every batch: any 64 consecutive rows hold a whole band, so every output tile of every legal config
 * (bm >= 64, wherever a stage block starts) has at least one complete row checked. */
#define TPG_REF_FULL_LIMIT ((int64_t)1 << 34)

/* Recomputes reference values in fp32 (regenerating A, B, C from the hash) and compares the D shard.
 * sample_seed picks the sampled rows/columns. Synchronizes `stream`. */
tpg_status tpg_reference_check(const tpg_ref_problem *p, const tpg_ref_shard *shard, uint64_t sample_seed,
                               void *stream, tpg_ref_result *out);

/* The default relative error bound of a dtype (bf16 2e-2, fp16 4e-3, fp8 2e-2 at short K, fp32 1e-5). */
double tpg_reference_default_eps(tpg_dtype dtype);
/* The bound for a kernel with operand type ab and accumulator acc over a reduction of length k: the above;
 * for f16 sums max(2e-2, 8e-4 * sqrt(k)) (their error grows like sqrt(k): 0.072 at k = 8192); for fp8 operands
 * max(2e-2, 5e-4 * sqrt(k)) (the tensor pipe's fp8 sums are narrower than f32: 0.064 at k = 16384), unless the
 * kernel promotes them into f32 every few k-blocks (fp8_promote != 0): then bf16's 2e-2 at any k. With
 * partials = the partial sums rounded to the output type before the last one (a reduce-scatter ring's tp - 1, the
 * one-hop walk's tp; 0 otherwise), each adds the output type's bound r in quadrature: sqrt(e^2 + partials * r^2). */
double tpg_reference_eps_for(tpg_dtype ab, tpg_dtype acc, int64_t k, int fp8_promote, int partials);

/* Fills bytes of ptr with 0xFF (NaN for bf16 / fp16 / fp32). Asynchronous on stream. */
tpg_status tpg_poison(void *ptr, size_t bytes, void *stream);

/* A position-sensitive 64-bit checksum of bytes of ptr, computed on the device and copied back into
 * *out. Synchronizes stream. */
tpg_status tpg_checksum(const void *ptr, size_t bytes, void *stream, uint64_t *out);

/* The hash behind tpg_fill (host version, for tests): uniform value in [-1, 1) before rounding. */
float tpg_ref_value(uint64_t seed, int64_t batch, int64_t row, int64_t col);

/* The message of this module's last failure on this thread: tpg_last_error(NULL), the buffer of the calls without a
 * context (checks.h). */
const char *tpg_reference_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TPG_REFERENCE_H */
