/* CUDA IPC for multi-process mode: export a device pointer as (handle of the cudaMalloc allocation that
 * contains it, offset), and open peers' handles through a per-context cache.
 *
 * Why a cache keyed by (rank, handle) and shared by every op of the context: several tensors (or several ops'
 * tensors) often sit in one allocation (PyTorch's caching allocator), and one mapping of it serves them all
 * instead of a driver call (and a reference the driver counts) per tensor. Each op holds a reference to the entries
 * it uses (tpg_ipc_held, one list per peer kind) and releases them at tpg_op_destroy, or a kind's list
 * when tpg_op_set_tensors brings new shards; an entry is closed when its last reference goes. Entries keep their index for life (the held lists store indices); a closed entry's
 * index is reused.
 *
 * The pure parts (tpg_ipc_ref_make, tpg_ipc_cache_find) need no device; tests/c/test_ipc.c covers them.
 */
#ifndef TPG_IPC_H
#define TPG_IPC_H

#include <stddef.h>
#include <stdint.h>

#include "tpgemm.h"

#define TPG_IPC_HANDLE_BYTES 64 /* sizeof(cudaIpcMemHandle_t), CUDA_IPC_HANDLE_SIZE */

/* What a rank sends for one object. Plain bytes: it travels through the bootstrap all-gather. */
typedef struct tpg_ipc_ref {
    unsigned char handle[TPG_IPC_HANDLE_BYTES]; /* cudaIpcMemHandle_t of the allocation */
    uint64_t offset;                            /* pointer - allocation base */
    uint64_t present;                           /* 0: no object (NULL pointer) */
} tpg_ipc_ref;

typedef struct tpg_ipc_entry {
    int rank;                                   /* exporting rank */
    int refs;                                   /* ops holding it; 0 = closed / free slot */
    unsigned char handle[TPG_IPC_HANDLE_BYTES];
    void *base;                                 /* where the allocation is mapped in this process */
} tpg_ipc_entry;

typedef struct tpg_ipc_cache {
    tpg_ipc_entry *entries;
    int count, capacity;
} tpg_ipc_cache;

/* Indices of cache entries one op holds (each at most once). */
typedef struct tpg_ipc_held {
    int *index;
    int count, capacity;
} tpg_ipc_held;

/* Fills ref from an allocation's handle bytes, its base and a pointer inside it (ptr >= base). */
void tpg_ipc_ref_make(tpg_ipc_ref *ref, const void *handle, uintptr_t base, uintptr_t ptr);
/* Index of the open entry of (rank, handle), or -1. */
int tpg_ipc_cache_find(const tpg_ipc_cache *c, int rank, const unsigned char *handle);

/* Exports ptr (on the local rank's device, made current by the caller). NULL ptr gives present = 0.
 * `what` names the object in errors ("tensor a", "symmetric buffer"). */
tpg_status tpg_ipc_export(tpg_ctx *ctx, int rank, const void *ptr, const char *what, tpg_ipc_ref *out);
/* Maps rank's ref into this process (opening the allocation once, on the local device, with lazy peer
 * access), records the reference in held and writes the address to *out (NULL when !ref->present). */
tpg_status tpg_ipc_import(tpg_ctx *ctx, int rank, const tpg_ipc_ref *ref, tpg_ipc_held *held, void **out);
/* Drops every reference in held, closing entries that reach zero; held is emptied. */
void tpg_ipc_release(tpg_ctx *ctx, tpg_ipc_held *held);
/* Closes every open entry and frees the cache (tpg_ctx_destroy). */
void tpg_ipc_cache_free(tpg_ipc_cache *c);

#endif /* TPG_IPC_H */
