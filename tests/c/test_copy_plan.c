/* All-gather copies in chunks (runtime/src/copy_plan.c, templates/kernels/copy_chunks.h): the pieces cover
 * a slot exactly once in whole tiles; the chunk a tile waits for holds every row it needs; the expanded
 * graph of every generated all-gather config keeps the orderings the protocol relies on (a flag follows
 * its piece and every earlier piece; the next stage's copy and the closing barrier follow every flag).
 * No GPU needed. */
#include <stdlib.h>
#include <string.h>

#include "copy_plan.h"
#include "one_hop.h"
#include "tpg_test.h"

/* Checks the cut of rows x tile_rows into `requested`; returns 0 when every property holds. */
static int check_cut(int64_t rows, int tile_rows, int requested) {
    const tpg_copy_plan p = tpg_copy_plan_make(rows, 6, tile_rows, requested);
    int bad = p.chunks < 1 || p.chunks > requested || p.rows != rows;
    size_t next = 0;
    for (int c = 0; !bad && c < p.chunks; c++) {
        size_t off = 0, bytes = 0;
        tpg_copy_plan_piece(&p, c, &off, &bytes);
        bad |= off != next || bytes == 0;                       /* contiguous, none empty */
        bad |= c + 1 < p.chunks && bytes / 6 % (size_t)tile_rows != 0; /* whole tiles but the last */
        next = off + bytes;
    }
    bad |= next != (size_t)rows * 6; /* the whole slot */
    if (bad) fprintf(stderr, "cut of %lld rows (tile %d) into %d: %d pieces of %d rows\n", (long long)rows, tile_rows,
                     requested, p.chunks, (int)p.chunk_rows);
    return bad;
}

TPG_TEST(pieces_cover_the_slot_once_in_whole_tiles) {
    const int64_t rows[] = {128, 1000, 4096, 8192 * 3, 300, 1, 16384};
    const int tiles[] = {64, 128, 256};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        for (size_t j = 0; j < sizeof tiles / sizeof tiles[0]; j++)
            for (int req = 1; req <= TPG_MAX_COPY_CHUNKS; req++) TPG_EXPECT(check_cut(rows[i], tiles[j], req) == 0);
}

TPG_TEST(chunk_counts) {
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(4096, 2, 128, 1).chunks, 1);
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(4096, 2, 128, 4).chunks, 4);
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(4096, 2, 128, 4).chunk_rows, 1024);
    /* 300 rows hold three 128-row tiles: never more pieces than tiles */
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(300, 2, 128, 8).chunks, 3);
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(0, 2, 128, 8).chunks, 0); /* nothing copied */
    /* 100 rows in 2 pieces of whole 128-row tiles: one piece of the 100 rows, never a piece larger than the slot */
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(100, 2, 128, 2).chunks, 1);
    TPG_EXPECT_EQ_INT(tpg_copy_plan_make(100, 2, 128, 2).chunk_rows, 100);
}

/* The piece whose byte range holds flat row `row` (row_bytes 2), from the plan's own ranges; -1 if none. */
static int piece_of_row(const tpg_copy_plan *p, int64_t row) {
    for (int c = 0; c < p->chunks; c++) {
        size_t off, bytes;
        tpg_copy_plan_piece(p, c, &off, &bytes);
        if ((size_t)row * 2 >= off && (size_t)row * 2 < off + bytes) return c;
    }
    return -1;
}

/* For every box (whole tiles and the halves 2-CTA clusters load) of a batched, ragged slot: every row the
 * box needs lies in a piece at or before the one it waits for, and its last needed row in exactly that
 * one (no wait for a later piece than needed). */
TPG_TEST(a_tile_waits_for_the_piece_of_its_last_row) {
    /* 1025: a later batch's box ends one row into a piece (its last row alone decides which piece it waits for) */
    const int batch_rows[] = {1000, 1024, 300, 1025};
    for (size_t i = 0; i < sizeof batch_rows / sizeof batch_rows[0]; i++)
        for (int l = 1; l <= 3; l++)
            for (int req = 1; req <= 8; req++)
                for (int box = 64; box <= 128; box += 64) {
                    const int br = batch_rows[i];
                    const tpg_copy_plan p = tpg_copy_plan_make((int64_t)br * l, 2, 128, req);
                    const int cr = p.chunks > 1 ? (int)p.chunk_rows : 0; /* what params.c passes */
                    for (int b = 0; b < l; b++)
                        for (int row = 0; row < br; row += box) {
                            const int need = tpg_copy_chunk_needed(b, br, row, box, cr);
                            const int end = row + box < br ? row + box : br;
                            int worst = -1;
                            for (int r = row; r < end; r++) {
                                const int c = piece_of_row(&p, (int64_t)b * br + r);
                                if (c > worst) worst = c;
                                TPG_EXPECT(c >= 0 && c <= need);
                            }
                            TPG_EXPECT_EQ_INT(need, worst);
                        }
                }
}

/* Whether item `from` depends, directly or not, on item `on`. */
static int depends(const tpg_graph_item *items, int from, int on) {
    for (int j = 0; j < 2; j++) {
        const int d = items[from].deps[j];
        if (d == on || (d >= 0 && depends(items, d, on))) return 1;
    }
    return 0;
}

/* The expanded graph of one device's list for `chunks` pieces; returns 0 when every ordering holds. */
static int check_graph(const tpg_schedule_table *t, int dev, int chunks) {
    const tpg_graph_node *list = &t->nodes[dev * t->nodes_per_device];
    const int n = t->nodes_per_device, count = tpg_graph_items_count(list, n, chunks);
    tpg_graph_item *it = calloc((size_t)count, sizeof *it);
    int bad = !it || tpg_graph_items_expand(list, n, chunks, it) != 0;
    int copies = 0, end = -1;
    for (int i = 0; !bad && i < n; i++) copies += list[i].kind == TPG_NODE_COPY;
    bad |= count != n + (chunks - 1) * 2 * copies;
    for (int i = 0; !bad && i < count; i++) {
        const tpg_graph_node *nd = &list[it[i].node];
        for (int j = 0; j < 2; j++) bad |= it[i].deps[j] >= i; /* earlier items only */
        if (nd->kind == TPG_NODE_BARRIER_END) end = i;
        if (nd->kind == TPG_NODE_GEMM) bad |= it[i].deps[0] != 0 || it[i].deps[1] != -1; /* the start barrier only */
        if (nd->kind != TPG_NODE_FLAG) continue;
        /* flag c of stage s follows copies 0..c of stage s (what the kernel's wait on flag c assumes) */
        for (int k = 0; k < count; k++) {
            const tpg_graph_node *other = &list[it[k].node];
            if (other->kind == TPG_NODE_COPY && other->stage == nd->stage && it[k].piece <= it[i].piece)
                bad |= !depends(it, i, k);
            /* every later stage's copy follows every flag of this stage (one copy after another) */
            if (other->kind == TPG_NODE_COPY && other->stage > nd->stage) bad |= !depends(it, k, i);
        }
    }
    /* the closing barrier follows every copy and every flag: none may land after it */
    for (int i = 0; !bad && i < count; i++) {
        const int kind = list[it[i].node].kind;
        if (kind == TPG_NODE_COPY || kind == TPG_NODE_FLAG || kind == TPG_NODE_GEMM) bad |= end < 0 || !depends(it, end, i);
    }
    /* one piece: the table's own graph */
    if (!bad && chunks == 1)
        for (int i = 0; i < n; i++) bad |= it[i].deps[0] != list[i].deps[0] || it[i].deps[1] != list[i].deps[1];
    if (bad) fprintf(stderr, "%s: device %d, %d chunks\n", t->name, dev, chunks);
    free(it);
    return bad;
}

TPG_TEST(expanded_graphs_keep_the_orderings) {
    int checked = 0;
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        if (t->comm != TPG_COMM_ALLGATHER || t->tp < 2) continue;
        for (int d = 0; d < t->tp; d++)
            for (int chunks = 1; chunks <= 5; chunks++) TPG_EXPECT(check_graph(t, d, chunks) == 0);
        checked++;
    }
    TPG_EXPECT(checked > 0);
}

/* The barriers beside the GEMM: one device's expanded list rewritten; returns 0 when the orderings hold. */
static int check_overlap(const tpg_schedule_table *t, int dev, int chunks) {
    const tpg_graph_node *list = &t->nodes[dev * t->nodes_per_device];
    const int n = t->nodes_per_device, count = tpg_graph_items_count(list, n, chunks);
    tpg_graph_item *it = calloc((size_t)count, sizeof *it);
    int bad = !it || tpg_graph_items_expand(list, n, chunks, it) != 0 || tpg_graph_items_overlap(list, t->comm, it, count);
    int start = -1, gemm = -1, end = -1;
    for (int i = 0; !bad && i < count; i++) {
        const int kind = list[it[i].node].kind;
        for (int j = 0; j < 2; j++) bad |= it[i].deps[j] >= i; /* still earlier items only */
        if (kind == TPG_NODE_BARRIER_START) start = i;
        if (kind == TPG_NODE_GEMM) gemm = i;
        if (kind == TPG_NODE_BARRIER_END) end = i;
    }
    bad |= start < 0 || gemm < 0 || end < 0;
    if (!bad) {
        bad |= it[gemm].deps[0] != -1 || it[gemm].deps[1] != -1; /* the GEMM waits for nothing */
        bad |= !depends(it, end, start);                          /* END reads the epoch START wrote */
        /* reduce-scatter: END after the GEMM (its pushes land in the peers' slots); all-gather: not */
        bad |= depends(it, end, gemm) != (t->comm == TPG_COMM_REDUCE_SCATTER);
        for (int i = 0; i < count; i++) { /* every copy and flag still before END, and after START */
            const int kind = list[it[i].node].kind;
            if (kind == TPG_NODE_COPY || kind == TPG_NODE_FLAG) bad |= !depends(it, end, i) || !depends(it, i, start);
        }
    }
    if (bad) fprintf(stderr, "overlap %s: device %d, %d chunks\n", t->name, dev, chunks);
    free(it);
    return bad;
}

TPG_TEST(overlapped_barriers_keep_what_the_protocol_needs) {
    int checked[2] = {0, 0};
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        if (t->tp < 2) continue;
        for (int d = 0; d < t->tp; d++)
            for (int chunks = 1; chunks <= 3; chunks++) TPG_EXPECT(check_overlap(t, d, chunks) == 0);
        checked[t->comm == TPG_COMM_REDUCE_SCATTER]++;
    }
    TPG_EXPECT(checked[0] > 0 && checked[1] > 0);
    /* the most pieces at the most devices (TP = 8, 32 pieces: 7 x 64 copy and flag items) stay cheap: a check that
     * walked every path back from the last flag took minutes here (pieces^(tp - 1)) */
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        if (t->tp != 8 || t->comm != TPG_COMM_ALLGATHER) continue;
        const tpg_graph_node *list = t->nodes;
        const int count = tpg_graph_items_count(list, t->nodes_per_device, TPG_MAX_COPY_CHUNKS);
        tpg_graph_item *it = calloc((size_t)count, sizeof *it);
        TPG_ASSERT(it != NULL);
        TPG_EXPECT_EQ_INT(tpg_graph_items_expand(list, t->nodes_per_device, TPG_MAX_COPY_CHUNKS, it), 0);
        TPG_EXPECT_EQ_INT(tpg_graph_items_overlap(list, t->comm, it, count), 0);
        free(it);
    }
    /* a one-device graph (the GEMM alone) has nothing to overlap */
    const tpg_graph_node alone[] = {{TPG_NODE_GEMM, -1, -1, -1, {-1, -1}}};
    tpg_graph_item one = {0, 0, {-1, -1}};
    TPG_EXPECT_EQ_INT(tpg_graph_items_overlap(alone, TPG_COMM_ALLGATHER, &one, 1), -1);
    /* two copy chains side by side: END after the last flag only would not wait for the other chain */
    const tpg_graph_node side[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                   {TPG_NODE_FLAG, 1, 1, 1, {1, -1}},           {TPG_NODE_COPY, 2, 2, 1, {0, -1}},
                                   {TPG_NODE_FLAG, 2, 2, 2, {3, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {5, 4}}};
    tpg_graph_item items[7];
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(side, 7, 1, items), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_overlap(side, TPG_COMM_ALLGATHER, items, 7), -1);
}

/* The gated all-gather walk's one flag (params.c): the shipped tables chain every device's copies, so the last
 * stage's flag follows them all; reduce-scatter copies nothing; copies side by side have no such flag. */
TPG_TEST(last_flag_follows_every_copy) {
    int checked = 0;
    for (int c = 0; c < tpg_num_configs; c++) {
        const tpg_schedule_table *t = tpg_configs[c].schedule;
        const int gathers = t->tp >= 2 && t->comm == TPG_COMM_ALLGATHER;
        for (int d = 0; d < t->tp; d++) TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(t, d), gathers ? t->tp - 1 : -1);
        TPG_EXPECT_EQ_INT(tpg_copy_flags_chained(t), gathers);
        checked += gathers;
    }
    TPG_EXPECT(checked > 0);
    const tpg_graph_node side[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                   {TPG_NODE_FLAG, 1, 1, 1, {1, -1}},           {TPG_NODE_COPY, 2, 2, 1, {0, -1}},
                                   {TPG_NODE_FLAG, 2, 2, 2, {3, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {5, 4}}};
    tpg_graph_node lists[3 * 7]; /* the same list for each of three devices */
    for (int d = 0; d < 3; d++) memcpy(lists + 7 * d, side, sizeof side);
    const tpg_stage_entry entries[9] = {{0}};
    const tpg_schedule_table beside = {"beside", 3, TPG_COMM_ALLGATHER, TPG_DIM_M, TPG_DIM_N, TPG_DIM_N, TPG_DIM_M,
                                       TPG_OPERAND_A, entries, lists, 7};
    TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(&beside, 0), -1);
    TPG_EXPECT_EQ_INT(tpg_copy_flags_chained(&beside), 0);
    TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(&beside, 3), -1); /* no such device */
    /* nor where the table's node array holds a chained list past its tp devices: device tp is not read */
    const tpg_graph_node chained[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                      {TPG_NODE_FLAG, 1, 1, 1, {1, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                      {TPG_NODE_BARRIER_END, -1, -1, -1, {3, 2}}};
    tpg_graph_node two_more[3 * 5];
    for (int d = 0; d < 3; d++) memcpy(two_more + 5 * d, chained, sizeof chained);
    const tpg_schedule_table pair = {"pair", 2, TPG_COMM_ALLGATHER, TPG_DIM_M, TPG_DIM_N, TPG_DIM_N, TPG_DIM_M,
                                     TPG_OPERAND_A, entries, two_more, 5};
    TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(&pair, 1), 1);
    TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(&pair, 2), -1);
    TPG_EXPECT_EQ_INT(tpg_copy_last_flag_stage(&pair, -1), -1);
}

/* chunks <= 1 (0 included: an op that copies nothing) is the table's list itself, for the count and the expansion
 * alike: graph.c sizes the items by the one and fills them by the other. */
TPG_TEST(no_cut_is_the_list_itself) {
    const tpg_graph_node list[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                   {TPG_NODE_FLAG, 1, 1, 1, {1, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {3, 2}}};
    tpg_graph_item one[5], none[5];
    TPG_EXPECT_EQ_INT(tpg_graph_items_count(list, 5, 1), 5);
    TPG_EXPECT_EQ_INT(tpg_graph_items_count(list, 5, 0), 5);
    TPG_EXPECT_EQ_INT(tpg_graph_items_count(list, 5, 2), 7);
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 5, 1, one), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 5, 0, none), 0);
    TPG_EXPECT(memcmp(one, none, sizeof one) == 0);
}

/* The gathered walk's copy of the own shard (tpg_graph_items_gather): one more item, first, depending on nothing,
 * that the GEMM waits for - beside the start barrier, or alone with the barriers beside the GEMM - with every other
 * item one on and every dependency still on an earlier item (graph.c adds the nodes in order); a list without one
 * GEMM, or whose GEMM has no dependency free, is refused and left as it was. */
TPG_TEST(the_own_shard_copy_feeds_the_gemm) {
    const tpg_graph_node list[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                   {TPG_NODE_FLAG, 1, 1, 1, {1, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {3, 2}}};
    for (int overlap = 0; overlap <= 1; overlap++) {
        tpg_graph_item items[6];
        TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 5, 1, items), 0);
        if (overlap) TPG_ASSERT_EQ_INT(tpg_graph_items_overlap(list, TPG_COMM_ALLGATHER, items, 5), 0);
        TPG_ASSERT_EQ_INT(tpg_graph_items_gather(list, items, 5), 6);
        TPG_EXPECT_EQ_INT(items[0].node, TPG_ITEM_LOCAL_SHARD);
        TPG_EXPECT_EQ_INT(items[0].piece, 0);
        TPG_EXPECT(items[0].deps[0] == -1 && items[0].deps[1] == -1);
        for (int i = 1; i < 6; i++) {
            TPG_EXPECT_EQ_INT(items[i].node, i - 1);
            for (int j = 0; j < 2; j++) TPG_EXPECT(items[i].deps[j] < i);
        }
        /* the GEMM: the own copy beside the start barrier, or alone */
        TPG_EXPECT_EQ_INT(items[4].deps[0], overlap ? 0 : 1);
        TPG_EXPECT_EQ_INT(items[4].deps[1], overlap ? -1 : 0);
        TPG_EXPECT_EQ_INT(items[2].deps[0], 1); /* the copy still follows the start barrier */
        TPG_EXPECT_EQ_INT(items[5].deps[0], overlap ? 3 : 4); /* the closing barrier: its flag or its GEMM */
    }
    tpg_graph_node full[5];
    memcpy(full, list, sizeof list);
    full[3].deps[1] = 2; /* the GEMM already waits for two nodes */
    tpg_graph_item items[6];
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(full, 5, 1, items), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_gather(full, items, 5), -1);
    TPG_EXPECT_EQ_INT(items[0].node, 0); /* unchanged */
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), 0); /* no GEMM */
    TPG_EXPECT_EQ_INT(tpg_graph_items_gather(list, items, 3), -1);
}

/* The gathered walk's GEMM pulling the shards itself (tpg_graph_items_pulled): no copy or flag item is left, the GEMM
 * follows the start barrier and the closing barrier the GEMM (which now reads the peers' shards); a list whose GEMM
 * does not follow the start barrier (the barriers beside it) or where an item before the GEMM waits for a copy is
 * refused and left as it was. The rule (tpg_gather_pulls): whole shards, the table's barriers, not asked otherwise. */
TPG_TEST(pulled_graphs_keep_start_gemm_end) {
    const tpg_graph_node list[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                   {TPG_NODE_FLAG, 1, 1, 0, {1, -1}},           {TPG_NODE_COPY, 2, 2, 1, {2, -1}},
                                   {TPG_NODE_FLAG, 2, 2, 1, {3, -1}},           {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {5, 4}}};
    tpg_graph_item items[7];
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 7, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_pulled(list, items, 7), 3);
    const int kinds[3] = {TPG_NODE_BARRIER_START, TPG_NODE_GEMM, TPG_NODE_BARRIER_END};
    for (int i = 0; i < 3; i++) {
        TPG_EXPECT_EQ_INT(list[items[i].node].kind, kinds[i]);
        TPG_EXPECT_EQ_INT(items[i].deps[0], i - 1); /* START alone, GEMM <- START, END <- GEMM (the flag's dropped) */
        TPG_EXPECT_EQ_INT(items[i].deps[1], -1);
    }
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 7, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_overlap(list, TPG_COMM_ALLGATHER, items, 7), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_pulled(list, items, 7), -1); /* the GEMM beside the start barrier */
    TPG_EXPECT_EQ_INT(items[6].deps[0], 4);                        /* unchanged: END still after the last flag */
    tpg_graph_node early[7];
    memcpy(early, list, sizeof list);
    early[5].deps[1] = 4; /* the GEMM also waits for the last flag: dropped, it keeps START */
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(early, 7, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_pulled(early, items, 7), 3);
    TPG_EXPECT(items[1].deps[0] == 0 && items[1].deps[1] == -1);
    early[5].deps[1] = -1;
    early[6].deps[0] = 4, early[6].deps[1] = -1; /* END after the last flag alone: then after the GEMM that pulls */
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(early, 7, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_pulled(early, items, 7), 3);
    TPG_EXPECT(items[2].deps[0] == 1 && items[2].deps[1] == -1);
    const tpg_graph_node before[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_COPY, 1, 1, 0, {0, -1}},
                                     {TPG_NODE_FLAG, 1, 1, 0, {1, -1}},
                                     {TPG_NODE_BARRIER_END, -1, -1, -1, {2, -1}},
                                     {TPG_NODE_GEMM, -1, -1, -1, {0, -1}}};
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(before, 5, 1, items), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_pulled(before, items, 5), -1); /* END before the GEMM waits for a flag */
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(1, 1, 0, 0), 1);
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(1, 0, 0, 0), 1); /* no cut at all */
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(0, 1, 0, 0), 0);
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(1, 2, 0, 0), 0);
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(1, 1, 1, 0), 0);
    TPG_EXPECT_EQ_INT(tpg_gather_pulls(1, 1, 0, 1), 0);
}

/* The one-hop walk's REDUCE goes between the GEMM and the closing barrier, after the start barrier too (its epoch);
 * with the barriers beside the GEMM END keeps its start-barrier dependency. */
TPG_TEST(one_hop_graphs_put_the_reduce_before_end) {
    const tpg_graph_node list[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}},
                                   {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                   {TPG_NODE_BARRIER_END, -1, -1, -1, {1, -1}}};
    tpg_graph_item items[4];
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_one_hop(list, items, 3), 4);
    const int nodes[4] = {0, 1, TPG_ITEM_ONE_HOP_REDUCE, 2}, deps[4][2] = {{-1, -1}, {0, -1}, {1, 0}, {2, -1}};
    for (int i = 0; i < 4; i++) {
        TPG_EXPECT_EQ_INT(items[i].node, nodes[i]);
        TPG_EXPECT(items[i].deps[0] == deps[i][0] && items[i].deps[1] == deps[i][1]);
    }
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_overlap(list, TPG_COMM_REDUCE_SCATTER, items, 3), 0);
    TPG_ASSERT_EQ_INT(tpg_graph_items_one_hop(list, items, 3), 4);
    TPG_EXPECT(items[1].deps[0] == -1 && items[1].deps[1] == -1); /* the GEMM beside START */
    TPG_EXPECT(items[2].deps[0] == 1 && items[2].deps[1] == 0);
    TPG_EXPECT(items[3].deps[0] == 2 && items[3].deps[1] == 0); /* END <- REDUCE (was the GEMM), START */
    const tpg_graph_node loose[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}},
                                    {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                                    {TPG_NODE_BARRIER_END, -1, -1, -1, {0, -1}}};
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(loose, 3, 1, items), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_one_hop(loose, items, 3), -1); /* END does not follow the GEMM */
    TPG_EXPECT_EQ_INT(items[2].deps[0], 0);                          /* unchanged */
    TPG_ASSERT_EQ_INT(tpg_graph_items_expand(list, 2, 1, items), 0);
    TPG_EXPECT_EQ_INT(tpg_graph_items_one_hop(list, items, 2), -1); /* no closing barrier */
}

/* A table node depends only on earlier nodes: one on itself or a later one is refused (the items of a node not yet
 * expanded are not known). */
TPG_TEST(dependencies_on_no_earlier_node_are_refused) {
    tpg_graph_node list[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}},
                             {TPG_NODE_GEMM, -1, -1, -1, {0, -1}},
                             {TPG_NODE_BARRIER_END, -1, -1, -1, {1, -1}}};
    tpg_graph_item items[4];
    TPG_EXPECT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), 0);
    list[1].deps[0] = 1; /* on itself */
    TPG_EXPECT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), -1);
    list[1].deps[0] = 0;
    list[1].deps[1] = 2; /* on a later node */
    TPG_EXPECT_EQ_INT(tpg_graph_items_expand(list, 3, 1, items), -1);
}

/* The REDUCE's items (one_hop.h): the GEMM's tile rows that cross the rank's block, times the tile columns. */
TPG_TEST(one_hop_items_cover_the_blocks_tile_rows) {
    tpg_one_hop_params p;
    memset(&p, 0, sizeof p);
    p.rows = 16, p.bm = 128, p.tiles_n = 64;
    for (int rank = 0; rank < 8; rank++) { /* TP = 8, M = 128: every block inside tile row 0 */
        p.row0 = rank * p.rows;
        TPG_EXPECT_EQ_INT(tpg_one_hop_items(&p), 64);
    }
    p.rows = 48, p.bm = 64, p.row0 = 48; /* rows 48-95 cross tile rows 0 and 1 */
    TPG_EXPECT_EQ_INT(tpg_one_hop_items(&p), 128);
    p.row0 = 64; /* rows 64-111: tile row 1 alone */
    TPG_EXPECT_EQ_INT(tpg_one_hop_items(&p), 64);
    p.rows = 0;
    TPG_EXPECT_EQ_INT(tpg_one_hop_items(&p), 0);
}

TPG_TEST(unknown_lists_are_refused) {
    tpg_graph_item out[8];
    const tpg_graph_node later[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {1, -1}}, {TPG_NODE_GEMM, -1, -1, -1, {-1, -1}}};
    TPG_EXPECT_EQ_INT(tpg_graph_items_expand(later, 2, 2, out), -1);
    const tpg_graph_node lone_flag[] = {{TPG_NODE_BARRIER_START, -1, -1, -1, {-1, -1}}, {TPG_NODE_FLAG, 1, 1, 1, {0, -1}}};
    TPG_EXPECT_EQ_INT(tpg_graph_items_expand(lone_flag, 2, 2, out), -1);
}

TPG_TEST_MAIN(TPG_CASE(pieces_cover_the_slot_once_in_whole_tiles), TPG_CASE(chunk_counts),
              TPG_CASE(a_tile_waits_for_the_piece_of_its_last_row), TPG_CASE(expanded_graphs_keep_the_orderings),
              TPG_CASE(overlapped_barriers_keep_what_the_protocol_needs), TPG_CASE(last_flag_follows_every_copy),
              TPG_CASE(the_own_shard_copy_feeds_the_gemm), TPG_CASE(pulled_graphs_keep_start_gemm_end),
              TPG_CASE(one_hop_graphs_put_the_reduce_before_end), TPG_CASE(dependencies_on_no_earlier_node_are_refused),
              TPG_CASE(one_hop_items_cover_the_blocks_tile_rows), TPG_CASE(no_cut_is_the_list_itself),
              TPG_CASE(unknown_lists_are_refused))
