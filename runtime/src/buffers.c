/* Symmetric per-op buffers (layout in buffers.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "buffers.h"

#include "checks.h"
#include "ctx_internal.h"

#define TPG_SECTION_ALIGN 256

/* Sizes saturate at SIZE_MAX (a shape whose slots overflow size_t; tpg_buffers_alloc refuses it) instead of
 * wrapping into a small allocation that the offsets then run past. */
static size_t mul_sat(size_t a, size_t b) {
    size_t r;
    return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

static size_t section(size_t *cursor, size_t bytes) {
    size_t at = *cursor, end;
    if (__builtin_add_overflow(at, bytes, &end) || end > SIZE_MAX - TPG_SECTION_ALIGN)
        *cursor = SIZE_MAX;
    else
        *cursor = (end + TPG_SECTION_ALIGN - 1) / TPG_SECTION_ALIGN * TPG_SECTION_ALIGN;
    return at;
}

void tpg_buffer_layout_init(tpg_buffer_layout *b, int tp, size_t slot_bytes, int64_t tiles_per_stage, int banks,
                            int end_to_end) {
    size_t cursor = 0;
    b->tp = tp;
    b->banks = banks;
    b->num_slots = end_to_end ? tp : tp - 1;
    b->tiles_per_stage = tiles_per_stage;
    b->slot_bytes_used = slot_bytes;
    /* Slots keep the 256-byte alignment of each one (TMA needs 16 B; 256 keeps copies efficient), except end to end:
     * a shard is whole rows of A (a block whole rows of the partial), so its slots end to end are the gathered A (the
     * rank's partial), rows of 16-byte multiples. */
    const size_t rounded = slot_bytes > SIZE_MAX - TPG_SECTION_ALIGN
                               ? SIZE_MAX
                               : (slot_bytes + TPG_SECTION_ALIGN - 1) / TPG_SECTION_ALIGN * TPG_SECTION_ALIGN;
    b->slot_bytes = end_to_end ? slot_bytes : rounded;
    const size_t slots_banks = (size_t)b->num_slots * (size_t)banks;
    b->slots = section(&cursor, mul_sat(slots_banks, b->slot_bytes));
    b->stage_flags = section(&cursor, (size_t)tp * TPG_MAX_COPY_CHUNKS * sizeof(unsigned int));
    b->tile_flags = section(&cursor, mul_sat(mul_sat(slots_banks, (size_t)tiles_per_stage), sizeof(unsigned int)));
    /* three sections: the GEMM's CTAs all load epoch (or last_epoch) while they count themselves in on
     * epoch_readers, and one store or atomic in the same sector would hold up those loads */
    b->epoch = section(&cursor, sizeof(unsigned int));
    b->last_epoch = section(&cursor, sizeof(unsigned int));
    b->epoch_readers = section(&cursor, sizeof(unsigned int));
    b->start_counter = section(&cursor, sizeof(unsigned int));
    b->end_counter = section(&cursor, sizeof(unsigned int));
    b->status = section(&cursor, sizeof(unsigned int));
    b->gave_up = section(&cursor, sizeof(unsigned int));
    b->gave_up_notice = section(&cursor, sizeof(unsigned int));
    b->transfers_done = section(&cursor, sizeof(unsigned int));
    b->pull_next = section(&cursor, sizeof(unsigned int));  /* claimed by every CTA at the start */
    b->pull_count = section(&cursor, sizeof(unsigned int)); /* polled by every producer while CTAs still add */
    b->pull_seen = section(&cursor, sizeof(unsigned int));
    b->row_counts = 0; /* tpg_buffer_layout_add_row_counts */
    b->row_count_rows = 0;
    b->total = cursor;
}

void tpg_buffer_layout_add_row_counts(tpg_buffer_layout *b, int64_t tiles_n) {
    size_t cursor = b->total;
    b->row_count_rows = (int64_t)b->num_slots * b->banks * b->tiles_per_stage / tiles_n;
    b->row_counts = section(&cursor, mul_sat((size_t)b->row_count_rows, sizeof(unsigned int)));
    b->total = cursor;
}

tpg_status tpg_buffers_alloc(tpg_ctx *ctx, int rank, const tpg_buffer_layout *b, void **out) {
    void *p = NULL;
    *out = NULL;
    if (b->total == SIZE_MAX)
        TPG_FAIL(ctx, TPG_ERR_SHAPE, "the op's slots and flags would need more than %zu bytes on rank %d: shrink the "
                 "problem", SIZE_MAX, rank);
    TPG_CHECK(tpg__use_device(ctx, rank));
    cudaError_t err = cudaMalloc(&p, b->total);
    if (err != cudaSuccess) {
        tpg_status st = tpg__cuda_error(ctx, err, __FILE__, __LINE__, "cudaMalloc(symmetric buffer)");
        size_t len = strlen(ctx->error);
        snprintf(ctx->error + len, sizeof ctx->error - len, " (rank %d, device %d, %zu bytes)", rank,
                 ctx->devices[rank], b->total);
        return st;
    }
    tpg_status st = TPG_OK;
    TPG_CHECK_GOTO(tpg__device_fill(ctx, p, NULL, b->total), fail);
    *out = p;
    return TPG_OK;
fail:
    (void)cudaFree(p); /* the first failure is the one reported */
    (void)cudaGetLastError();
    return st;
}

tpg_status tpg__device_fill(tpg_ctx *ctx, void *p, const void *host, size_t bytes) {
    cudaStream_t s = NULL;
    tpg_status st = TPG_OK;
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), out);
    if (host) TPG_CHECK_CUDA_GOTO(ctx, cudaMemcpyAsync(p, host, bytes, cudaMemcpyHostToDevice, s), out);
    else TPG_CHECK_CUDA_GOTO(ctx, cudaMemsetAsync(p, 0, bytes, s), out);
    TPG_CHECK_CUDA_GOTO(ctx, cudaStreamSynchronize(s), out);
out:
    if (s) (void)cudaStreamDestroy(s);
    return st;
}

void tpg_buffers_free(void *base) {
    if (base && cudaFree(base) != cudaSuccess) (void)cudaGetLastError(); /* teardown: nothing to report it to */
}
