/* Unit tests of the trace-to-JSON writer's one time axis (runtime/src/cli/trace_json.c): each GPU's clock taken
 * back by its start barrier's exit, ranks of one GPU sharing its timer, none shifted where a start barrier gave up or
 * left no time. Synthetic buffers (trace_fixture.h). No GPU. */
#define _GNU_SOURCE
#include "trace_fixture.h"

/* Ranks on one GPU (--share-device) share its timer: no shift, said so; the offset is still reported. A rank whose
 * clock is behind rank 0's (negative offset) is taken forward. */
TPG_TEST(one_gpu_is_not_shifted_and_a_late_clock_is_taken_forward) {
    size_t b0, b1;
    void *d0 = make_device(&b0, 0), *d1 = make_device(&b1, 2500);
    tpg_trace_device d[2] = {{0, 0, d0, b0, NULL, 0, 0, -1.0}, {1, 0, d1, b1, NULL, 0, 0, -1.0}};
    tpg_trace_summary sum;
    char *j = converted(d, 2, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"none (one GPU, one timer)\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"start_exit_offset_us\": [0.000, 2.500]");
    TPG_EXPECT_STR_CONTAINS(j, "\"pid\": 2, \"tid\": 200101, \"ts\": 12.500, \"dur\": 25.000");
    free(j);
    free(d1);
    d1 = make_device(&b1, 0);
    for (size_t w = 0; w < b1 / 8; w++) { /* every time of rank 1 300 us earlier: its clock is behind */
        uint64_t *t = (uint64_t *)d1 + w;
        if (*t >= T0 && *t < T0 + 1000000000ull) *t -= 300000;
    }
    d[1] = (tpg_trace_device){1, 3, d1, b1, NULL, 0, 0, -1.0};
    j = converted(d, 2, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT(sum.start_exit_offset_us[1] > -300.01 && sum.start_exit_offset_us[1] < -299.99);
    TPG_EXPECT(sum.span_us > 209.9 && sum.span_us < 210.1);
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"start_barrier\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"pid\": 2, \"tid\": 200101, \"ts\": 10.000, \"dur\": 25.000");
    free(j);
    free(d0);
    free(d1);
}

/* Ranks 0 and 1 on GPU 0, rank 2 on GPU 5 with its clock 300 us ahead: rank 1 keeps GPU 0's timer (its own offset,
 * 1 us, is polling latency: not shifted), rank 2 is taken back by 300 us. Then rank 2's start barrier gave up: it
 * left at its timeout, so nothing is shifted and the file says why. */
TPG_TEST(ranks_of_a_gpu_share_its_shift_and_a_start_barrier_that_gave_up_shifts_none) {
    size_t b[3];
    void *d0 = make_device(&b[0], 0), *d1 = make_device(&b[1], 1000), *d2 = make_device(&b[2], 300000);
    tpg_trace_device d[3] = {{0, 0, d0, b[0], NULL, 0, 0, -1.0}, {1, 0, d1, b[1], NULL, 0, 0, -1.0},
                             {2, 5, d2, b[2], NULL, 0, 0, -1.0}};
    tpg_trace_summary sum;
    char *j = converted(d, 3, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"start_barrier\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"start_exit_offset_us\": [0.000, 1.000, 300.000], "
                               "\"shift_us\": [0.000, 0.000, 300.000]");
    /* tile 7 of each rank at 10 us on its own clock: rank 1 1 us later on the axis, rank 2 at the same time */
    TPG_EXPECT_STR_CONTAINS(j, "\"pid\": 2, \"tid\": 200101, \"ts\": 11.000, \"dur\": 25.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"pid\": 3, \"tid\": 300101, \"ts\": 10.000, \"dur\": 25.000");
    free(j);
    hdr(d2)->barrier_gave_up[0] = 1;
    j = converted(d, 3, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"none (a start barrier gave up: its exit is no shared moment)\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"shift_us\": [0.000, 0.000, 0.000]");
    TPG_EXPECT_STR_CONTAINS(j, "\"pid\": 3, \"tid\": 300101, \"ts\": 310.000, \"dur\": 25.000");
    free(j);
    free(d0);
    free(d1);
    free(d2);
}

TPG_TEST(no_barrier_times_means_no_offset) {
    size_t b;
    void *d0 = make_device(&b, 0);
    memset(hdr(d0)->barrier, 0, sizeof hdr(d0)->barrier);
    hdr(d0)->kernel_written = 0;
    tpg_trace_summary sum;
    char *j = converted_one_into(d0, b, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_EQ_INT(sum.has_offset[0], 0);
    TPG_EXPECT_EQ_INT(sum.silent_kernels, 1);
    TPG_EXPECT_STR_CONTAINS(j, "\"start_exit_offset_us\": [null]");
    TPG_EXPECT(strstr(j, "\"start barrier\"") == NULL);
    /* the inferred copy then starts at the first wait */
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"copy+flag stage 1\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 54.000, \"dur\": 15.000");
    free(j);
    free(d0);
}

/* Ranks 1 and 2 share GPU 5 (not rank 0's): rank 2 takes rank 1's shift (300 us), not its own offset (301 us). */
TPG_TEST(ranks_of_a_gpu_other_than_rank_0s_share_its_first_ranks_shift) {
    size_t b[3];
    void *d0 = make_device(&b[0], 0), *d1 = make_device(&b[1], 300000), *d2 = make_device(&b[2], 301000);
    tpg_trace_device d[3] = {{0, 0, d0, b[0], NULL, 0, 0, -1.0}, {1, 5, d1, b[1], NULL, 0, 0, -1.0},
                             {2, 5, d2, b[2], NULL, 0, 0, -1.0}};
    tpg_trace_summary sum;
    char *j = converted(d, 3, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"start_exit_offset_us\": [0.000, 300.000, 301.000], "
                               "\"shift_us\": [0.000, 300.000, 300.000]");
    free(j), free(d0), free(d1), free(d2);
}

TPG_TEST(one_rank_is_aligned_to_nothing_and_says_only_none) {
    size_t b;
    void *d0 = make_device(&b, 0);
    char *j = converted_one_into(d0, b, NULL);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"none\",");
    free(j), free(d0);
}

TPG_TEST_MAIN(TPG_CASE(one_gpu_is_not_shifted_and_a_late_clock_is_taken_forward),
              TPG_CASE(ranks_of_a_gpu_share_its_shift_and_a_start_barrier_that_gave_up_shifts_none),
              TPG_CASE(no_barrier_times_means_no_offset),
              TPG_CASE(ranks_of_a_gpu_other_than_rank_0s_share_its_first_ranks_shift),
              TPG_CASE(one_rank_is_aligned_to_nothing_and_says_only_none))
