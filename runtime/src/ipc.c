/* CUDA IPC export / import with a per-context cache (why: see ipc.h). */
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "ctx_internal.h"
#include "tensormap.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == TPG_IPC_HANDLE_BYTES, "cudaIpcMemHandle_t size changed");

void tpg_ipc_ref_make(tpg_ipc_ref *ref, const void *handle, uintptr_t base, uintptr_t ptr) {
    memset(ref, 0, sizeof *ref);
    memcpy(ref->handle, handle, TPG_IPC_HANDLE_BYTES);
    ref->offset = (uint64_t)(ptr - base);
    ref->present = 1;
}

int tpg_ipc_cache_find(const tpg_ipc_cache *c, int rank, const unsigned char *handle) {
    for (int i = 0; i < c->count; i++) {
        const tpg_ipc_entry *e = &c->entries[i];
        if (e->refs > 0 && e->rank == rank && memcmp(e->handle, handle, TPG_IPC_HANDLE_BYTES) == 0) return i;
    }
    return -1;
}

/* cuMemGetAddressRange without linking libcuda (as tensormap.c does for the tensor-map encoder). */
static void *range_fn; /* tpg__driver_entry_cached */

static tpg_status allocation_base(tpg_ctx *ctx, int rank, const void *ptr, const char *what, uintptr_t *base) {
    void *fn = NULL;
    TPG_CHECK(tpg__driver_entry_cached(ctx, "cuMemGetAddressRange", &range_fn, &fn));
    CUdeviceptr b = 0;
    size_t size = 0;
    CUresult r = ((PFN_cuMemGetAddressRange_v3020)tpg__fn(fn))(&b, &size, (CUdeviceptr)(uintptr_t)ptr);
    if (r != CUDA_SUCCESS)
        TPG_FAIL(ctx, TPG_ERR_INVALID_ARGUMENT, "rank %d: %s = %p is not device memory of this process "
                 "(cuMemGetAddressRange: CUresult %d)", rank, what, ptr, (int)r);
    *base = (uintptr_t)b;
    return TPG_OK;
}

tpg_status tpg_ipc_export(tpg_ctx *ctx, int rank, const void *ptr, const char *what, tpg_ipc_ref *out) {
    memset(out, 0, sizeof *out);
    if (!ptr) return TPG_OK;
    uintptr_t base = 0;
    TPG_CHECK(allocation_base(ctx, rank, ptr, what, &base));
    cudaIpcMemHandle_t h;
    cudaError_t err = cudaIpcGetMemHandle(&h, (void *)base);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        TPG_FAIL(ctx, TPG_ERR_CUDA, "rank %d: cudaIpcGetMemHandle(%s = %p, allocation base %p): %s: %s; multi-process "
                 "mode needs cudaMalloc memory (PyTorch: no PYTORCH_CUDA_ALLOC_CONF expandable_segments:True or "
                 "backend:cudaMallocAsync)",
                 rank, what, ptr, (void *)base, cudaGetErrorName(err), cudaGetErrorString(err));
    }
    tpg_ipc_ref_make(out, &h, base, (uintptr_t)ptr);
    return TPG_OK;
}

static tpg_status hold(tpg_ctx *ctx, tpg_ipc_held *held, int index) {
    for (int i = 0; i < held->count; i++)
        if (held->index[i] == index) return TPG_OK;
    if (held->count == held->capacity) {
        int cap = held->capacity ? 2 * held->capacity : 8;
        int *p = realloc(held->index, (size_t)cap * sizeof *p);
        if (!p) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "IPC reference list: host allocation failed");
        held->index = p;
        held->capacity = cap;
    }
    held->index[held->count++] = index;
    ctx->ipc.entries[index].refs++;
    return TPG_OK;
}

/* A free entry slot (refs == 0) or a new one at the end. */
static tpg_status new_entry(tpg_ctx *ctx, int *index) {
    tpg_ipc_cache *c = &ctx->ipc;
    for (int i = 0; i < c->count; i++)
        if (c->entries[i].refs == 0) {
            *index = i;
            return TPG_OK;
        }
    if (c->count == c->capacity) {
        int cap = c->capacity ? 2 * c->capacity : 16;
        tpg_ipc_entry *p = realloc(c->entries, (size_t)cap * sizeof *p);
        if (!p) TPG_FAIL(ctx, TPG_ERR_OUT_OF_MEMORY, "IPC cache: host allocation failed");
        c->entries = p;
        c->capacity = cap;
    }
    *index = c->count++;
    memset(&c->entries[*index], 0, sizeof c->entries[*index]);
    return TPG_OK;
}

tpg_status tpg_ipc_import(tpg_ctx *ctx, int rank, const tpg_ipc_ref *ref, tpg_ipc_held *held, void **out) {
    *out = NULL;
    if (!ref->present) return TPG_OK;
    int i = tpg_ipc_cache_find(&ctx->ipc, rank, ref->handle);
    if (i < 0) {
        cudaIpcMemHandle_t h;
        memcpy(&h, ref->handle, sizeof h);
        void *base = NULL;
        cudaError_t err = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            TPG_FAIL(ctx, err == cudaErrorMemoryAllocation ? TPG_ERR_OUT_OF_MEMORY : TPG_ERR_CUDA,
                     "rank %d: cudaIpcOpenMemHandle(allocation of rank %d) on device %d: %s: %s (was the allocation "
                     "freed by rank %d?)", ctx->local_begin, rank,
                     ctx->devices[ctx->local_begin], cudaGetErrorName(err), cudaGetErrorString(err), rank);
        }
        tpg_status st = new_entry(ctx, &i);
        if (st != TPG_OK) {
            (void)cudaIpcCloseMemHandle(base);
            return st;
        }
        tpg_ipc_entry *e = &ctx->ipc.entries[i];
        e->rank = rank;
        memcpy(e->handle, ref->handle, TPG_IPC_HANDLE_BYTES);
        e->base = base;
        e->refs = 0;
        st = hold(ctx, held, i);
        if (st != TPG_OK) { /* refs stayed 0: close it again */
            (void)cudaIpcCloseMemHandle(base);
            return st;
        }
    } else {
        TPG_CHECK(hold(ctx, held, i));
    }
    *out = (char *)ctx->ipc.entries[i].base + ref->offset;
    return TPG_OK;
}

void tpg_ipc_release(tpg_ctx *ctx, tpg_ipc_held *held) {
    for (int i = 0; i < held->count; i++) {
        tpg_ipc_entry *e = &ctx->ipc.entries[held->index[i]];
        if (e->refs > 0 && --e->refs == 0) {
            if (cudaIpcCloseMemHandle(e->base) != cudaSuccess) (void)cudaGetLastError();
            e->base = NULL;
        }
    }
    free(held->index);
    memset(held, 0, sizeof *held);
}

void tpg_ipc_cache_free(tpg_ipc_cache *c) {
    for (int i = 0; i < c->count; i++)
        if (c->entries[i].refs > 0 && cudaIpcCloseMemHandle(c->entries[i].base) != cudaSuccess)
            (void)cudaGetLastError();
    free(c->entries);
    memset(c, 0, sizeof *c);
}
