/* TMA descriptors for the kernel's K-major operands (cuTensorMapEncodeTiled through the runtime's
 * driver entry point, so the library never links libcuda). */
#ifndef TPG_TENSORMAP_H
#define TPG_TENSORMAP_H

#include <cuda.h>

#include "fn_ptr.h"
#include "tpgemm.h"

/* Encodes a 2-D map over `rows_total` rows of `k` elements of dtype at ptr (row pitch k * size bytes),
 * box {box_k, box_rows}, swizzled over one box row (128B swizzle for 128-byte rows; 64B for the 64-byte
 * rows of `bk: 32` kernels and bench/tma_rate.cu's BK = 32 walks), 256B L2 promotion, no OOB fill. `what` names
 * the operand in the error message. TPG_ERR_INVALID_ARGUMENT for other row sizes, TPG_ERR_CUDA (with the
 * CUresult) on failure. */
tpg_status tpg_tensormap_encode(tpg_ctx *ctx, CUtensorMap *map, const void *ptr, tpg_dtype dtype, int64_t k,
                                int64_t rows_total, int box_k, int box_rows, const char *what);

/* Encodes the kernel's destination map (TMA store): 3-D {n, m, l} over ptr with row stride ld and batch
 * stride batch (elements), box {chunk_bytes / size(dtype), 64, 1} (the epilogue's store unit,
 * templates/kernels/epilogue.cuh) with the matching swizzle: 128B for 128-byte chunks, 64B for 64-byte
 * ones. The extent is the stage's true m x n per batch, so the store clips ragged tiles. ld and batch
 * must be multiples of 16 bytes; with l == 1 batch is ignored. */
tpg_status tpg_tensormap_encode_d(tpg_ctx *ctx, CUtensorMap *map, void *ptr, tpg_dtype dtype, int64_t n, int64_t m,
                                  int64_t l, int64_t ld, int64_t batch, int chunk_bytes, const char *what);

/* A driver API function by name, without linking libcuda (the ABI version of CUDA 12.0 where the toolkit can
 * choose, i.e. CUDA 12.5 and later; the toolkit's default version before). TPG_ERR_CUDA when the driver lacks it. */
tpg_status tpg__driver_entry(tpg_ctx *ctx, const char *name, void **fn);
/* tpg__driver_entry looked up once: *cache (a static word, NULL at first) keeps the entry point for later calls; it
 * is read and written atomically, since contexts on several threads may look the same symbol up at once. */
tpg_status tpg__driver_entry_cached(tpg_ctx *ctx, const char *name, void **cache, void **fn);
/* The same without a report: the entry point, or NULL (no driver, no such symbol). */
tpg_fn tpg__driver_symbol(const char *name);

#endif /* TPG_TENSORMAP_H */
