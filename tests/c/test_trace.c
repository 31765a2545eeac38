/* Unit tests of the trace-to-JSON writer (runtime/src/cli/trace_json.c) on synthetic trace buffers laid
 * out as the kernels write them (templates/kernels/trace_format.h). No GPU. */
#define _GNU_SOURCE
#include "trace_fixture.h"

#include "json.h"

/* The one string writer every JSON output goes through: what it escapes, and what it leaves (bytes >= 0x80). */
TPG_TEST(json_strings_escape_quotes_backslashes_and_control_characters) {
    char buf[128] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    TPG_ASSERT(f != NULL);
    tpg__json_string(f, "a\\b\"c\n\x01\x1f \xc3\xa9");
    fputc(' ', f);
    tpg__json_string(f, NULL);
    fclose(f);
    TPG_EXPECT_EQ_STR(buf, "\"a\\\\b\\\"c\\n\\u0001\\u001f \xc3\xa9\" null");
}

/* The gathered all-gather walk (one stage, behind the last copy's flag): its wait is every shard's copies, not a
 * stage's. */
TPG_TEST(a_gathered_walk_names_its_copies) {
    size_t b;
    void *d0 = make_device(&b, 0);
    hdr(d0)->num_stages = 1;
    rec(d0, 0, 0, 0)->stage = 0; /* the two flag waits, the first records of the CTAs' producer lanes */
    rec(d0, 1, 0, 0)->stage = 0;
    for (int i = 0; i < CAP; i++) rec(d0, 0, 1, i)->stage = 0; /* its tiles: all of stage 0 */
    tpg_trace_device d[1] = {{0, 0, d0, b, NULL, 0, 0, -1.0}};
    tpg_trace_summary sum;
    char msg[256] = "";
    int rc;
    char *j = to_json(d, 1, &sum, &rc, msg, sizeof msg);
    TPG_ASSERT(rc == 0);
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"copies+flags (gathered: every shard)\", \"cat\": \"copy\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100001, \"ts\": 5.000, \"dur\": 70.000");
    TPG_EXPECT(strstr(j, "copy+flag stage") == NULL);
    free(j);
    hdr(d0)->pulls = 1; /* the GEMM pulled the shards itself: the same span, named for them */
    j = to_json(d, 1, &sum, &rc, msg, sizeof msg);
    TPG_ASSERT(rc == 0);
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"pulls by the GEMM's CTAs (gathered: every shard)\", \"cat\": \"copy\"");
    TPG_EXPECT(strstr(j, "copies+flags") == NULL);
    /* its producers' stage waits are for the pulls too */
    TPG_EXPECT_EQ_INT(count(j, "\"name\": \"pull wait (every shard)\", \"cat\": \"flag_wait\""), 2);
    TPG_EXPECT(strstr(j, "\"flag wait stage 0\"") == NULL);
    free(j);
    free(d0);
}

/* A cluster partner tile past the edge (computed, not stored) has no place in the tiling: tm, tn, batch -1. */
TPG_TEST(a_tile_not_stored_has_no_coordinates) {
    size_t b;
    void *d0 = make_device(&b, 0);
    char *j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"tile\": 5, \"tm\": 1, \"tn\": 2, \"batch\": 0, \"stored\": true");
    free(j);
    rec(d0, 1, 1, 0)->flags |= TPG_TRACE_F_NOT_STORED; /* CTA 1's tile 5 */
    j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"tile\": 5, \"tm\": -1, \"tn\": -1, \"batch\": -1, \"stored\": false");
    free(j);
    free(d0);
}

TPG_TEST(two_devices_convert) {
    size_t b0, b1;
    void *d0 = make_device(&b0, 0), *d1 = make_device(&b1, 2500); /* rank 1's clock 2.5 us ahead */
    tpg_trace_device d[2] = {{0, 0, d0, b0, NULL, 0, 0, -1.0}, {1, 3, d1, b1, NULL, 0, 0, -1.0}};
    tpg_trace_summary sum;
    char msg[256] = "";
    int rc;
    char *j = to_json(d, 2, &sum, &rc, msg, sizeof msg);
    TPG_ASSERT(rc == 0);
    TPG_EXPECT_EQ_INT(sum.devices, 2);
    TPG_EXPECT_EQ_INT(sum.silent_kernels, 0);
    /* per device: 4 of CTA 0 wg0 (cap) + 1 wg1 + 1 CTA 1 wg0 + 2 flag waits + 1 loads = 9 */
    TPG_EXPECT_EQ_INT(sum.records, 18);
    TPG_EXPECT_EQ_INT(sum.dropped, 4);
    TPG_EXPECT_EQ_INT(sum.incomplete, 2);
    TPG_EXPECT(sum.has_offset[0] && sum.has_offset[1]);
    TPG_EXPECT(sum.start_exit_offset_us[0] == 0.0);
    TPG_EXPECT(sum.start_exit_offset_us[1] > 2.49 && sum.start_exit_offset_us[1] < 2.51);
    TPG_EXPECT(sum.span_us > 209.9 && sum.span_us < 210.1); /* 0 .. 210 us: rank 1's 2.5 us skew taken back */
    TPG_EXPECT_STR_CONTAINS(j, "\"traceEvents\": [");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"rank 1 (cuda 3)\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"cta 1 (sm 11) wg0\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"cta 0 (sm 10) producer\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"loads stage 0\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"slot_wait_us\": 2.000, \"ring_full_cycles\": 1200, \"issue_cycles\": 4800");
    /* time zero = rank 0's start barrier entry; its tile 7 runs 10 .. 35 us */
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"start barrier\", \"cat\": \"barrier\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100000, \"ts\": 0.000, \"dur\": 5.000");
    /* Perfetto's ids (trace_json.h): rank r is pid r + 1, no id is 0, rank 1's tracks are not rank 0's */
    TPG_EXPECT(strstr(j, "\"pid\": 0,") == NULL && strstr(j, "\"tid\": 0,") == NULL);
    TPG_EXPECT(strstr(j, "\"pid\": 2, \"tid\": 100") == NULL && strstr(j, "\"pid\": 1, \"tid\": 200") == NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"tpgemm\": {\"version\": 5, \"ids\": {\"pid\": \"rank + 1\", \"tid_stride\": 100000}");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"stage 0\", \"cat\": \"tile\", \"ph\": \"X\", \"pid\": 1, \"tid\": 100101, "
                               "\"ts\": 10.000, \"dur\": 25.000");
    /* tile 7 = (tm 2, tn 1) with tiles_n 3 */
    TPG_EXPECT_STR_CONTAINS(j, "\"stage\": 0, \"tile\": 7, \"tm\": 2, \"tn\": 1, \"batch\": 0, \"stored\": true, "
                               "\"mainloop_us\": 20.000, \"epilogue_us\": 5.000");
    /* rank 1's tile 7, 2.5 us later on its own clock, at the same time on the aligned axis */
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"stage 0\", \"cat\": \"tile\", \"ph\": \"X\", \"pid\": 2, \"tid\": 200101, "
                               "\"ts\": 10.000, \"dur\": 25.000");
    TPG_EXPECT(strstr(j, "\"ts\": 12.500") == NULL);
    TPG_EXPECT_EQ_INT(count(j, "\"cat\": \"tile\""), 12);
    TPG_EXPECT_EQ_INT(count(j, "\"cat\": \"epilogue\""), 12);
    TPG_EXPECT_EQ_INT(count(j, "\"cat\": \"partial_wait\""), 2);
    /* the epilogue split (t[5]) only where it was recorded: one record per device */
    TPG_EXPECT_STR_CONTAINS(j, "\"partial_wait_us\": 2.000, \"issue_us\": 1.500, \"flush_us\": 0.500}");
    TPG_EXPECT_EQ_INT(count(j, "\"issue_us\""), 2);
    TPG_EXPECT_EQ_INT(count(j, "\"cat\": \"flag_wait\""), 4);
    /* aggregate: stage 1 waits 60 .. 80 us, 2 CTAs, mean 12.5, max 20 */
    TPG_EXPECT_STR_CONTAINS(j, "\"ts\": 60.000, \"dur\": 20.000, \"args\": {\"stage\": 1, \"waits\": 2, \"mean_us\": "
                               "12.500, \"max_us\": 20.000}");
    /* inferred copy: start barrier exit (5 us) .. first observation (CTA 1 at 75 us, after 5 us waiting) */
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"copy+flag stage 1\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 5.000, \"dur\": 70.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"first_seen_by_cta\": 1, \"observer_waited_us\": 5.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"kernel\": \"k\\\"q\""); /* escaped */
    TPG_EXPECT_STR_CONTAINS(j, "\"aligned\": \"start_barrier\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"start_exit_offset_us\": [0.000, 2.500]");
    TPG_EXPECT_STR_CONTAINS(j, "\"ctas_written\": 2, \"cap\": 4");
    TPG_EXPECT_STR_CONTAINS(j, "\"dropped\": 2");
    TPG_EXPECT(strstr(j, "cta 2 (") == NULL); /* never started: no lanes */
    TPG_EXPECT_EQ_INT(count(j, "{"), count(j, "}"));
    TPG_EXPECT_EQ_INT(count(j, "["), count(j, "]"));
    const char *dump = getenv("TPG_TRACE_DUMP"); /* tests/test_timeline.py feeds this to bench/timeline.py */
    if (dump) {
        FILE *f = fopen(dump, "w");
        TPG_ASSERT(f != NULL);
        fputs(j, f);
        fclose(f);
    }
    free(j);
    free(d0);
    free(d1);
}

TPG_TEST(rejects_malformed_buffers) {
    size_t b;
    void *d0 = make_device(&b, 0);
    char msg[256];
    TPG_EXPECT_EQ_INT(tpg_trace_check(d0, b, msg, sizeof msg), 0);
    TPG_EXPECT_EQ_INT(tpg_trace_check(d0, 100, msg, sizeof msg), -1);
    TPG_EXPECT_STR_CONTAINS(msg, "smaller than its 256-byte header");
    TPG_EXPECT_EQ_INT(tpg_trace_check(d0, b - 1, msg, sizeof msg), -1); /* one record short */
    TPG_EXPECT_STR_CONTAINS(msg, "shorter than its 3 CTAs x 4 records");
    hdr(d0)->ctas = 1000000; /* a corrupt header must not send the reader out of bounds */
    TPG_EXPECT_EQ_INT(tpg_trace_check(d0, b, msg, sizeof msg), -1);
    hdr(d0)->ctas = CTAS;
    hdr(d0)->magic = 0;
    TPG_EXPECT_EQ_INT(tpg_trace_check(d0, b, msg, sizeof msg), -1);
    TPG_EXPECT_STR_CONTAINS(msg, "magic");
    tpg_trace_device d = {0, 0, d0, b, NULL, 0, 0, -1.0};
    int rc;
    char *j = to_json(&d, 1, NULL, &rc, msg, sizeof msg);
    TPG_EXPECT_EQ_INT(rc, -1);
    TPG_EXPECT_STR_CONTAINS(msg, "rank 0: trace buffer has magic");
    free(j);
    free(d0);
}

TPG_TEST(counts_beyond_cap_are_clamped) {
    size_t b;
    void *d0 = make_device(&b, 0);
    cta(d0, 0)->count[1] = 0xffffffffu; /* a wild count reads at most cap records */
    tpg_trace_summary sum;
    char *j = converted_one_into(d0, b, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_EQ_INT(sum.dropped, 0xffffffffll - CAP);
    TPG_EXPECT_EQ_INT(sum.records, 9);
    free(j);
    free(d0);
}

/* A copy cut into pieces (copy_chunks.h): the inferred copy ends where its last piece was first seen, not its
 * first piece. CTA 0 sees piece 0 of stage 1 at 80 us (make_device), then piece 2 at 95; CTA 1 piece 2 at 90. */
TPG_TEST(pieces_end_the_inferred_copy_at_the_last_piece) {
    size_t b0;
    void *d0 = make_device(&b0, 0);
    stage_wait(d0, 1, 1, 2, T0 + 80000, T0 + 90000);
    stage_wait(d0, 0, 1, 1, T0 + 81000, T0 + 86000); /* an earlier piece, later: not the end */
    tpg_trace_device d = {0, 0, d0, b0, NULL, 0, 0, -1.0};
    tpg_trace_summary sum;
    char msg[256] = "";
    int rc;
    char *j = to_json(&d, 1, &sum, &rc, msg, sizeof msg);
    TPG_ASSERT(rc == 0);
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"flag wait stage 1\", \"cat\": \"flag_wait\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"args\": {\"stage\": 1, \"piece\": 2, \"gave_up\": false}");
    TPG_EXPECT_STR_CONTAINS(j, "\"args\": {\"stage\": 1, \"waits\": 4,");
    /* start barrier exit (5 us) .. CTA 1's sight of piece 2 (90 us, after waiting 10 us) */
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"copy+flag stage 1\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 5.000, \"dur\": 85.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"first_seen_by_cta\": 1, \"observer_waited_us\": 10.000");
    free(j);
    free(d0);
}

/* A stream-K split tile (trace version 3): a contribution is labelled and not stored (its finisher stores the tile),
 * the finisher is labelled, and an unsplit tile carries no stream_k. */
TPG_TEST(stream_k_parts_are_labelled_and_not_stored) {
    size_t b;
    void *d0 = make_device(&b, 0);
    rec(d0, 0, 2, 0)->flags = TPG_TRACE_F_SK_CONTRIB; /* CTA 0 wg1: k-blocks of tile 7 */
    rec(d0, 0, 1, 0)->flags = TPG_TRACE_F_SK_FINISH;  /* CTA 0 wg0: tile 7's finisher */
    char *j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"stage 0 stream-K part\", \"cat\": \"tile\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100102");
    TPG_EXPECT_STR_CONTAINS(j, "\"tile\": 7, \"tm\": 2, \"tn\": 1, \"batch\": 0, \"stored\": false, "
                               "\"stream_k\": \"contribution\", \"mainloop_us\": 20.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"tile\": 7, \"tm\": 2, \"tn\": 1, \"batch\": 0, \"stored\": true, "
                               "\"stream_k\": \"finisher\", \"mainloop_us\": 20.000");
    TPG_EXPECT_EQ_INT(count(j, "\"stream_k\""), 2);
    TPG_EXPECT_EQ_INT(count(j, "stream-K part"), 1);
    free(j);
    free(d0);
}

/* The lane peak is the count a lane asked for, past the cap included: the cap that holds the whole walk. */
TPG_TEST(lane_peak_is_the_largest_count) {
    size_t b;
    void *d0 = make_device(&b, 0);
    TPG_EXPECT_EQ_INT(tpg_trace_lane_peak(d0, b), 6); /* CTA 0 wg0 appended 6 into a cap of 4 */
    cta(d0, 1)->count[0] = 700;
    TPG_EXPECT_EQ_INT(tpg_trace_lane_peak(d0, b), 700);
    cta(d0, 2)->count[3] = 900; /* CTA 2 never started (written unset): not counted */
    TPG_EXPECT_EQ_INT(tpg_trace_lane_peak(d0, b), 700);
    TPG_EXPECT_EQ_INT(tpg_trace_lane_peak(d0, b - 1), 0); /* malformed: 0 */
    TPG_EXPECT_EQ_INT(tpg_trace_lane_peak(NULL, b), 0);
    free(d0);
}

/* The second trace's cap: the busiest lane of any device plus an eighth and 64, rounded up to 64, at most the limit;
 * none where every lane fit. */
TPG_TEST(a_second_trace_has_room_for_the_busiest_lane) {
    size_t b0, b1;
    void *d0 = make_device(&b0, 0), *d1 = make_device(&b1, 0);
    tpg_trace_device d[2] = {{0, 0, d0, b0, NULL, 0, 0, -1.0}, {1, 1, d1, b1, NULL, 0, 0, -1.0}};
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 6, 65536), 0); /* the peak, 6, fit */
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 4, 65536), 128); /* 6 + 0 + 64 = 70 -> 128 */
    cta(d1, 1)->count[2] = 528;                              /* rank 1: 528 + 66 + 64 = 658 -> 704 */
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 512, 65536), 704);
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 512, 600), 600); /* at most the limit */
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 600, 600), 0);   /* already there: no second trace */
    cta(d1, 1)->count[2] = 0xffffffffu;                      /* no overflow on a wild count */
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(d, 2, 512, 65536), 65536);
    TPG_EXPECT_EQ_INT(tpg_trace_cap_for(NULL, 0, 512, 65536), 0);
    free(d0);
    free(d1);
}

/* A cluster partner tile past the edge that was a stream-K contribution: neither stored nor placed. */
TPG_TEST(a_contribution_past_the_edge_is_neither_stored_nor_placed) {
    size_t b;
    void *d0 = make_device(&b, 0);
    rec(d0, 1, 1, 0)->flags |= TPG_TRACE_F_NOT_STORED | TPG_TRACE_F_SK_CONTRIB; /* CTA 1's tile 5 */
    char *j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"tile\": 5, \"tm\": -1, \"tn\": -1, \"batch\": -1, \"stored\": false, "
                               "\"stream_k\": \"contribution\"");
    free(j);
    free(d0);
}

/* time zero is a %globaltimer value past 2^53: a string, so that a JSON reader's doubles keep every digit. */
TPG_TEST(time_zero_is_a_string_of_every_digit) {
    size_t b;
    void *d0 = make_device(&b, 1796320571869771968ull - T0);
    char *j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"time_zero_ns\": \"1796320571869771968\"");
    /* make_device's times (t[5], not a time the step reads, aside) are whole microseconds apart: the timer's step */
    TPG_EXPECT_STR_CONTAINS(j, "\"timer_step_ns\": 1000}");
    free(j);
    cta(d0, 0)->t_start += 32; /* one time 32 ns off the microseconds: the step is their GCD, 8 */
    j = converted_one(d0, b);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"timer_step_ns\": 8}");
    free(j);
    free(d0);
}

/* Nodes timed by CUDA events replace the copies inferred from the flag waits: each at the start barrier's exit plus its
 * times; the REDUCE (its begin unknown: after the GEMM) from the GEMM's last lane end. */
TPG_TEST(timed_nodes_replace_the_inferred_copies) {
    size_t b;
    void *d0 = make_device(&b, 0); /* start barrier exit 5 us, last lane end 190 us */
    const tpg_trace_node_time nodes[] = {{TPG_TRACE_NODE_COPY, 1, 1, 0, 1, 0.0, 60000.0},
                                         {TPG_TRACE_NODE_FLAG, 1, 1, 0, 0, 60000.0, 62000.0},
                                         {TPG_TRACE_NODE_REDUCE, -1, -1, 0, 0, -1.0, 200000.0}};
    tpg_trace_device d = {0, 0, d0, b, nodes, 3, 2, -1.0};
    tpg_trace_summary sum;
    char *j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"copies, flags and REDUCE (CUDA events)\"");
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"copy stage 1 piece 0 from rank 1\", \"cat\": \"copy\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100001, \"ts\": 5.000, \"dur\": 60.000, \"args\": {\"measured\": "
                               "\"cuda_events\", \"node\": \"copy\", \"stage\": 1, \"piece\": 0, \"peer\": 1, "
                               "\"begin_known\": true, \"before_dependency\": false, \"skipped_nodes\": 2}}");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"flag stage 1\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 65.000, \"dur\": 2.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"REDUCE\", \"cat\": \"reduce\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 190.000, \"dur\": 15.000");
    TPG_EXPECT(strstr(j, "inferred") == NULL);
    free(j);
    d.num_nodes = 0; /* no events: the copies inferred from the flag waits, as before */
    j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"copies (inferred from flag waits)\"");
    TPG_EXPECT(strstr(j, "cuda_events") == NULL);
    free(j);
    free(d0);
}

/* The events' clock is placed by the anchor whose event came soonest after its kernel: here the GEMM's (its event at
 * 180 us on the events' clock, its last lane at 190 us: zero at 10 us, not the start barrier's exit at 5 us), in
 * integers at a real %globaltimer origin past 2^53 (a double there steps by 256 ns); a node whose event is still
 * before its dependency's end is a point there, said so. */
TPG_TEST(timed_nodes_by_the_later_anchor_to_the_nanosecond) {
    size_t b;
    void *d0 = make_device(&b, 1796320571869771968ull - T0);
    const tpg_trace_node_time nodes[] = {{TPG_TRACE_NODE_COPY, 1, 1, 0, 0, 0.0, 60001.0},
                                         {TPG_TRACE_NODE_REDUCE, -1, -1, 0, 0, -1.0, 178000.0},
                                         {TPG_TRACE_NODE_COPY, 2, 1, 0, 1, 0.0, 61000.0},
                                         /* 0.9 us before its dependency's end: the events' resolution, not said */
                                         {TPG_TRACE_NODE_FLAG, 2, 1, 0, 0, 61000.0, 60100.0}};
    tpg_trace_device d = {0, 0, d0, b, nodes, 4, 0, 180000.0};
    tpg_trace_summary sum;
    char *j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"copy stage 1 piece 0 from rank 1\", \"cat\": \"copy\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100001, \"ts\": 10.000, \"dur\": 60.001");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"REDUCE\", \"cat\": \"reduce\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 188.000, \"dur\": 0.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"begin_known\": false, \"before_dependency\": true");
    /* after the start barrier alone: from its exit (5 us), whatever the anchor */
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"copy stage 2 piece 0 from rank 1\", \"cat\": \"copy\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100001, \"ts\": 5.000, \"dur\": 66.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"flag stage 2\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 70.100, \"dur\": 0.000, \"args\": {\"measured\": \"cuda_events\", "
                               "\"node\": \"flag\", \"stage\": 2, \"piece\": 0, \"peer\": 1, \"begin_known\": true, "
                               "\"before_dependency\": false");
    free(j);
    d.nodes_gemm_end_ns = 186000.0; /* the GEMM anchor's zero at 4 us: before the barrier's exit, which wins */
    j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "\"tid\": 100001, \"ts\": 5.000, \"dur\": 60.001");
    free(j);
    free(d0);
}

/* A timed-out call's trace: the start barrier that gave up, a stage wait and a partial wait that did not see their
 * flags are named "(gave up)" and counted; the wait that gave up (on piece 2, first in its lane) does not end the
 * inferred copy, which the waits that saw piece 0 still end at 75 us. */
TPG_TEST(waits_that_gave_up_are_marked) {
    size_t b;
    void *d0 = make_device(&b, 0);
    tpg_trace_rec *r = rec(d0, 1, 1, 0); /* make_device's partial wait */
    r->flags |= TPG_TRACE_F_GAVE_UP;
    hdr(d0)->barrier_gave_up[0] = 1;
    stage_wait(d0, 1, 1, 2, T0 + 76000, T0 + 276000);
    rec(d0, 1, 0, 2)->flags = TPG_TRACE_F_GAVE_UP; /* CTA 1's producer: after its stage wait and its loads */
    tpg_trace_device d = {0, 0, d0, b, NULL, 0, 0, -1.0};
    tpg_trace_summary sum;
    char *j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT(sum.gave_up == 3);
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"start barrier (gave up)\", \"cat\": \"barrier\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100000, \"ts\": 0.000, \"dur\": 5.000, "
                               "\"args\": {\"arrived_us\": 1.000, \"gave_up\": true}}");
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"end barrier\", \"cat\": \"barrier\"");
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"flag wait stage 1 (gave up)\", \"cat\": \"flag_wait\", \"ph\": \"X\", "
                               "\"pid\": 1, \"tid\": 100104, \"ts\": 76.000, \"dur\": 200.000, "
                               "\"args\": {\"stage\": 1, \"piece\": 2, \"gave_up\": true}}");
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"partial wait (gave up)\", \"cat\": \"partial_wait\"");
    TPG_EXPECT_STR_CONTAINS(j, "\"args\": {\"stage\": 0, \"tile\": 5, \"gave_up\": true}}");
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"copy+flag stage 1\", \"cat\": \"copy\", \"ph\": \"X\", \"pid\": 1, "
                               "\"tid\": 100001, \"ts\": 5.000, \"dur\": 70.000");
    free(j);
    /* every wait of stage 1 gave up: no copy was seen to land, so none is drawn */
    rec(d0, 0, 0, 0)->flags = rec(d0, 1, 0, 0)->flags = TPG_TRACE_F_GAVE_UP;
    j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT(sum.gave_up == 5);
    TPG_EXPECT(strstr(j, "copy+flag stage 1") == NULL);
    free(j);
    free(d0);
}

/* A copy-engine partial's band and its flags are named by stage, band and receiver; a kind past the known ones is "?",
 * not an out-of-range read of the names. */
TPG_TEST(copy_engine_partial_bands_are_named) {
    size_t b;
    void *d0 = make_device(&b, 0); /* start barrier exit 5 us */
    const tpg_trace_node_time nodes[] = {{TPG_TRACE_NODE_CE_COPY, 0, 1, 2, 0, 40000.0, 52000.0},
                                         {TPG_TRACE_NODE_CE_FLAGS, 0, 1, 2, 0, 52000.0, 53000.0},
                                         {TPG_TRACE_NODE_CE_FLAGS + 1, 0, 1, 0, 0, 53000.0, 54000.0}};
    tpg_trace_device d = {0, 0, d0, b, nodes, 3, 0, -1.0};
    tpg_trace_summary sum;
    char *j = converted(&d, 1, &sum);
    TPG_ASSERT(j != NULL);
    TPG_EXPECT_STR_CONTAINS(j, "{\"name\": \"partial copy stage 0 band 2 to rank 1\", \"cat\": \"copy\", "
                               "\"ph\": \"X\", \"pid\": 1, \"tid\": 100001, \"ts\": 45.000, \"dur\": 12.000, "
                               "\"args\": {\"measured\": \"cuda_events\", \"node\": \"partial copy\", \"stage\": 0, "
                               "\"piece\": 2");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"partial flags stage 0 band 2 to rank 1\", \"cat\": \"copy\", "
                               "\"ph\": \"X\", \"pid\": 1, \"tid\": 100001, \"ts\": 57.000, \"dur\": 1.000");
    TPG_EXPECT_STR_CONTAINS(j, "\"name\": \"? stage 0\"");
    free(j);
    free(d0);
}

TPG_TEST_MAIN(TPG_CASE(json_strings_escape_quotes_backslashes_and_control_characters),
              TPG_CASE(copy_engine_partial_bands_are_named), TPG_CASE(waits_that_gave_up_are_marked),
              TPG_CASE(timed_nodes_replace_the_inferred_copies),
              TPG_CASE(timed_nodes_by_the_later_anchor_to_the_nanosecond),
              TPG_CASE(a_gathered_walk_names_its_copies), TPG_CASE(two_devices_convert),
              TPG_CASE(pieces_end_the_inferred_copy_at_the_last_piece), TPG_CASE(rejects_malformed_buffers),
              TPG_CASE(counts_beyond_cap_are_clamped), TPG_CASE(a_tile_not_stored_has_no_coordinates),
              TPG_CASE(stream_k_parts_are_labelled_and_not_stored), TPG_CASE(lane_peak_is_the_largest_count),
              TPG_CASE(time_zero_is_a_string_of_every_digit), TPG_CASE(a_second_trace_has_room_for_the_busiest_lane),
              TPG_CASE(a_contribution_past_the_edge_is_neither_stored_nor_placed))
