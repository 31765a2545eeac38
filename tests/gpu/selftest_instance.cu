/* One self-test kernel instance, configured entirely by -D macros (tests/gpu/kernel_selftest.sh passes
 * the same TPG_* set a generated instance defines, docs/ARCHITECTURE.md), plus its shape for the host. */
#include "gemm_sm90.cuh"
#include "selftest_shape.h"

#define TPG_ST_CAT2(a, b) a##b
#define TPG_ST_CAT(a, b) TPG_ST_CAT2(a, b)

extern "C" const tpg_selftest_shape TPG_ST_CAT(TPG_KERNEL_NAME, _shape) = {
    TPG_BM, TPG_BN, TPG_CLUSTER_M, TPG_CLUSTER_N, TPG_CONSUMER_MODE, kThreads, TPG_SMEM_BYTES, TPG_AB_DTYPE,
    kEpiChunk, TPG_RASTER, TPG_BK, TPG_PARTIAL_F32};
