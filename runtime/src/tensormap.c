/* cuTensorMapEncodeTiled without linking libcuda: the driver entry point is fetched once through
 * cudaGetDriverEntryPointByVersion and cached. */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "checks.h"
#include "tensormap.h"

static void *encode_fn; /* tpg__driver_entry_cached */

/* The lookup itself: its CUDA status, and through q whether the symbol was found. */
static cudaError_t lookup(const char *name, void **fn, enum cudaDriverEntryPointQueryResult *q) {
    *fn = NULL;
#if CUDART_VERSION >= 12050
    return cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, q);
#else /* CUDA 12.0-12.4 (the README's minimum is 12.4): ByVersion comes with 12.5, and CUDA 13 drops this call */
    return cudaGetDriverEntryPoint(name, fn, cudaEnableDefault, q);
#endif
}

tpg_fn tpg__driver_symbol(const char *name) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    void *fn = NULL;
    if (lookup(name, &fn, &q) != cudaSuccess) (void)cudaGetLastError();
    return q == cudaDriverEntryPointSuccess && fn ? tpg__fn(fn) : NULL;
}

tpg_status tpg__driver_entry(tpg_ctx *ctx, const char *name, void **fn) {
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    TPG_CHECK_CUDA(ctx, lookup(name, fn, &q));
    if (q != cudaDriverEntryPointSuccess || !*fn)
        TPG_FAIL(ctx, TPG_ERR_CUDA, "%s not found in the driver (query result %d); a driver for CUDA 12.0 or later "
                 "is needed", name, (int)q);
    return TPG_OK;
}

tpg_status tpg__driver_entry_cached(tpg_ctx *ctx, const char *name, void **cache, void **fn) {
    *fn = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
    if (*fn) return TPG_OK;
    TPG_CHECK(tpg__driver_entry(ctx, name, fn));
    __atomic_store_n(cache, *fn, __ATOMIC_RELEASE); /* a racing thread stores the same value */
    return TPG_OK;
}

static tpg_status get_encode(tpg_ctx *ctx, PFN_cuTensorMapEncodeTiled_v12000 *out) {
    void *fn = NULL;
    TPG_CHECK(tpg__driver_entry_cached(ctx, "cuTensorMapEncodeTiled", &encode_fn, &fn));
    *out = (PFN_cuTensorMapEncodeTiled_v12000)tpg__fn(fn);
    return TPG_OK;
}

static CUtensorMapDataType map_type(tpg_dtype t) {
    switch (t) {
    case TPG_DTYPE_BF16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TPG_DTYPE_FP16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TPG_DTYPE_FP32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TPG_DTYPE_E4M3:
    case TPG_DTYPE_E5M2: break;
    }
    return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* fp8: raw bytes */
}

tpg_status tpg_tensormap_encode(tpg_ctx *ctx, CUtensorMap *map, const void *ptr, tpg_dtype dtype, int64_t k,
                                int64_t rows_total, int box_k, int box_rows, const char *what) {
    const size_t esize = tpg_dtype_size(dtype);
    const size_t row_bytes = (size_t)box_k * esize; /* the swizzle spans one box row */
    if (row_bytes != 128 && row_bytes != 64)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "%s: a box row of %d %s is %zu bytes (128 or 64)", what, box_k,
                 tpg_dtype_name(dtype), row_bytes);
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    TPG_CHECK(get_encode(ctx, &encode));
    cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows_total};
    cuuint64_t strides[1] = {(cuuint64_t)k * esize}; /* bytes between rows */
    cuuint32_t box[2] = {(cuuint32_t)box_k, (cuuint32_t)box_rows};
    cuuint32_t elem_strides[2] = {1, 1};
    const CUtensorMapSwizzle swizzle = row_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    CUresult r = encode(map, map_type(dtype), 2, (void *)ptr, dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        TPG_FAIL(ctx, TPG_ERR_CUDA,
                 "cuTensorMapEncodeTiled(%s at %p: %lld x %lld rows of %s, box %d x %d) failed: CUresult %d", what,
                 ptr, (long long)k, (long long)rows_total, tpg_dtype_name(dtype), box_k, box_rows, (int)r);
    return TPG_OK;
}

tpg_status tpg_tensormap_encode_d(tpg_ctx *ctx, CUtensorMap *map, void *ptr, tpg_dtype dtype, int64_t n, int64_t m,
                                  int64_t l, int64_t ld, int64_t batch, int chunk_bytes, const char *what) {
    PFN_cuTensorMapEncodeTiled_v12000 encode = NULL;
    TPG_CHECK(get_encode(ctx, &encode));
    const size_t esize = tpg_dtype_size(dtype);
    if (l <= 1) batch = ld * m; /* unused by the kernel; any legal stride */
    cuuint64_t dims[3] = {(cuuint64_t)n, (cuuint64_t)m, (cuuint64_t)(l < 1 ? 1 : l)};
    cuuint64_t strides[2] = {(cuuint64_t)ld * esize, (cuuint64_t)batch * esize};
    if (chunk_bytes != 128 && chunk_bytes != 64)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "%s: epilogue chunk of %d bytes (128 or 64)", what, chunk_bytes);
    cuuint32_t box[3] = {(cuuint32_t)(chunk_bytes / (int)esize), 64, 1};
    cuuint32_t elem_strides[3] = {1, 1, 1};
    const CUtensorMapSwizzle swizzle = chunk_bytes == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    CUresult r = encode(map, map_type(dtype), 3, ptr, dims, strides, box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                        swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        TPG_FAIL(ctx, TPG_ERR_CUDA,
                 "cuTensorMapEncodeTiled(%s at %p: %lld x %lld x %lld of %s, ld %lld, batch %lld) failed: CUresult %d",
                 what, ptr, (long long)n, (long long)m, (long long)l, tpg_dtype_name(dtype), (long long)ld,
                 (long long)batch, (int)r);
    return TPG_OK;
}
