/* TMA descriptors for the kernel's K-major operands (cuTensorMapEncodeTiled through the runtime's
 * driver entry point, so the library never links libcuda). */
#ifndef TPG_TENSORMAP_H
#define TPG_TENSORMAP_H

#include <cuda.h>

#include "tpgemm.h"

/* Encodes a 2-D map over `rows_total` rows of `k` elements of dtype at ptr (row pitch k * size bytes),
 * box {box_k, box_rows}, 128B swizzle, 256B L2 promotion, no OOB fill. `what` names the operand in
 * the error message. TPG_ERR_CUDA (with the CUresult) on failure. */
tpg_status tpg_tensormap_encode(tpg_ctx *ctx, CUtensorMap *map, const void *ptr, tpg_dtype dtype, int64_t k,
                                int64_t rows_total, int box_k, int box_rows, const char *what);

#endif /* TPG_TENSORMAP_H */
