/* The per-op symmetric buffer's layout (runtime/src/buffers.c, buffers.h): every section starts on a 256-byte
 * boundary, none overlaps another, the slots hold num_slots (tp - 1, or tp for the gathered all-gather walk) whole
 * slots per bank and the flag sections one word per flag (copy-engine partials' row counts one per tile row of
 * flags), and the three epoch words (epoch, last_epoch, epoch_readers) lie in three sections - the GEMM's CTAs all load
 * one of them while one CTA stores or every CTA counts itself in on another, and a shared 32-byte sector made a
 * short-K reduce-scatter 1.3% slower (bench/results/experiments/ab_epoch_0410Z.log). No GPU needed. */
#include <stddef.h>
#include <stdint.h>

#include "buffers.h"
#include "tpg_test.h"

typedef struct section {
    const char *name;
    size_t at, bytes;
} section;

/* The layout's sections with the bytes each must hold. */
static int sections_of(const tpg_buffer_layout *b, section *out) {
    const size_t word = sizeof(unsigned int);
    const section all[] = {
        {"slots", b->slots, (size_t)b->num_slots * (size_t)b->banks * b->slot_bytes},
        {"stage_flags", b->stage_flags, (size_t)b->tp * TPG_MAX_COPY_CHUNKS * word},
        {"tile_flags", b->tile_flags, (size_t)(b->tp - 1) * (size_t)b->banks * (size_t)b->tiles_per_stage * word},
        {"epoch", b->epoch, word},
        {"last_epoch", b->last_epoch, word},
        {"epoch_readers", b->epoch_readers, word},
        {"start_counter", b->start_counter, word},
        {"end_counter", b->end_counter, word},
        {"status", b->status, word},
        {"gave_up", b->gave_up, word},
        {"gave_up_notice", b->gave_up_notice, word},
        {"transfers_done", b->transfers_done, word},
        {"pull_next", b->pull_next, word},
        {"pull_count", b->pull_count, word},
        {"pull_seen", b->pull_seen, word},
        {"row_counts", b->row_counts, (size_t)b->row_count_rows * word},
    };
    const int n = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < n; i++) out[i] = all[i];
    return n;
}

/* 0 when every property holds for layout b (made for slots of slot_bytes). */
static int layout_problems(const tpg_buffer_layout *b, size_t slot_bytes) {
    section s[16];
    const int n = sections_of(b, s);
    const int gathered = b->num_slots == b->tp; /* end to end: the stride is the shard */
    int bad = b->slot_bytes < slot_bytes || b->slot_bytes_used != slot_bytes ||
              (gathered ? b->slot_bytes != slot_bytes : b->slot_bytes % 256 != 0);
    for (int i = 0; i < n; i++) {
        bad |= s[i].at % 256 != 0 || s[i].at + s[i].bytes > b->total;
        for (int j = i + 1; j < n; j++) {
            if (s[i].bytes == 0 || s[j].bytes == 0) continue;
            const int overlap = s[i].at < s[j].at + s[j].bytes && s[j].at < s[i].at + s[i].bytes;
            const int same_section = s[i].at / 256 == s[j].at / 256; /* no two sections share 256 bytes */
            if (overlap || same_section) {
                fprintf(stderr, "tp %d: %s [%zu, +%zu) and %s [%zu, +%zu)\n", b->tp, s[i].name, s[i].at, s[i].bytes,
                        s[j].name, s[j].at, s[j].bytes);
                bad = 1;
            }
        }
    }
    return bad;
}

TPG_TEST(sections_are_aligned_and_apart) {
    const int tps[] = {2, 4, 8};
    const size_t slots[] = {1, 256, 1000, (size_t)64 << 20};
    const int64_t tiles[] = {1, 7, 4096};
    for (size_t i = 0; i < sizeof tps / sizeof tps[0]; i++)
        for (size_t j = 0; j < sizeof slots / sizeof slots[0]; j++)
            for (size_t k = 0; k < sizeof tiles / sizeof tiles[0]; k++)
                for (int banks = 1; banks <= 2; banks++) { /* 2: the NCCL transport's receive bank */
                    tpg_buffer_layout b;
                    tpg_buffer_layout_init(&b, tps[i], slots[j], tiles[k], 1, 1); /* gathered: tp slots */
                    TPG_EXPECT(layout_problems(&b, slots[j]) == 0);
                    TPG_EXPECT(b.stage_flags - b.slots >= (size_t)tps[i] * b.slot_bytes);
                    tpg_buffer_layout_init(&b, tps[i], slots[j], tiles[k], banks, 0);
                    TPG_EXPECT(layout_problems(&b, slots[j]) == 0);
                    /* the receive bank's last slot and tile flags still lie inside their sections */
                    const int last = tpg_buf_recv_slot(&b, tps[i] - 2);
                    TPG_EXPECT(banks == 1 || (size_t)(last + 1) * b.slot_bytes <= b.stage_flags - b.slots);
                    TPG_EXPECT(banks == 1 || (size_t)(last + 1) * (size_t)tiles[k] * 4 <= b.epoch - b.tile_flags);
                    if (banks == 1) continue;
                    /* copy-engine partials: a count per tile row of both banks' flags, in a section of its own */
                    const int64_t tiles_n = tiles[k] == 4096 ? 64 : tiles[k];
                    tpg_buffer_layout_add_row_counts(&b, tiles_n);
                    TPG_EXPECT(layout_problems(&b, slots[j]) == 0);
                    TPG_EXPECT(b.row_count_rows == (int64_t)(tps[i] - 1) * 2 * tiles[k] / tiles_n);
                    TPG_EXPECT(b.row_counts >= b.pull_seen + 256);
                }
}

TPG_TEST(the_checker_catches_a_shared_section) {
    /* the controls: last_epoch beside epoch (the change's first form), a flag section overlapping the slots */
    tpg_buffer_layout b;
    tpg_buffer_layout_init(&b, 2, 1024, 4, 1, 0);
    b.last_epoch = b.epoch + sizeof(unsigned int);
    TPG_EXPECT(layout_problems(&b, 1024) != 0);
    tpg_buffer_layout_init(&b, 2, 1024, 4, 2, 0);
    b.stage_flags = b.slots + 256;
    TPG_EXPECT(layout_problems(&b, 1024) != 0);
}

TPG_TEST(a_layout_past_size_t_saturates_instead_of_wrapping) {
    /* slots of 2^62 bytes, 3 slots x 2 banks: 6 * 2^62 wraps size_t to 2^63, a total whose offsets run past it;
     * saturated, tpg_buffers_alloc refuses it (TPG_ERR_SHAPE) before any cudaMalloc */
    tpg_buffer_layout b;
    tpg_buffer_layout_init(&b, 4, (size_t)1 << 62, 4, 2, 0);
    TPG_EXPECT(b.total == SIZE_MAX);
    tpg_buffer_layout_init(&b, 4, 1024, (int64_t)1 << 62, 2, 0); /* the tile flags alone overflow */
    TPG_EXPECT(b.total == SIZE_MAX);
    tpg_buffer_layout_init(&b, 4, 1024, 4, 2, 0); /* and a normal one stays exact */
    TPG_EXPECT(b.total < 4096 * 4);
}

TPG_TEST_MAIN(TPG_CASE(sections_are_aligned_and_apart), TPG_CASE(the_checker_catches_a_shared_section),
              TPG_CASE(a_layout_past_size_t_saturates_instead_of_wrapping))
