/* All-gather copies in chunks, host side (copy_plan.h). */
#include <stdlib.h>
#include <string.h>

#include "copy_plan.h"

/* More table nodes per device than any schedule has (2 + 2 (tp - 1) + 2 at tp = 8). */
#define TPG_GRAPH_LIST_MAX 64

tpg_copy_plan tpg_copy_plan_make(int64_t rows, int64_t row_bytes, int tile_rows, int requested) {
    tpg_copy_plan p = {0, 0, rows, row_bytes};
    if (rows <= 0 || row_bytes <= 0) return p;
    p.chunk_rows = tpg_copy_chunk_rows(rows, tile_rows, requested);
    p.chunks = tpg_copy_chunk_count(rows, p.chunk_rows);
    return p;
}

int tpg_schedule_copies(const tpg_schedule_table *sched) {
    return sched->tp >= 2 && sched->comm == TPG_COMM_ALLGATHER;
}

tpg_copy_plan tpg_copy_plan_for(const tpg_schedule_table *sched, const tpg_kernel_desc *kernel,
                                const tpg_shapes *shapes, int chunks) {
    const int64_t elem = (int64_t)tpg_dtype_size(kernel->dtype_ab);
    if (!tpg_schedule_copies(sched)) return tpg_copy_plan_make(0, 0, 1, 1);
    if (sched->rotating == TPG_OPERAND_B)
        return tpg_copy_plan_make(shapes->b_rows * shapes->l, shapes->b_cols * elem, kernel->bn, chunks);
    return tpg_copy_plan_make(shapes->a_rows * shapes->l, shapes->a_cols * elem, kernel->bm, chunks);
}

void tpg_copy_plan_piece(const tpg_copy_plan *p, int c, size_t *offset, size_t *bytes) {
    const int64_t first = (int64_t)c * p->chunk_rows;
    int64_t n = p->rows - first;
    if (n > p->chunk_rows) n = p->chunk_rows;
    if (n < 0) n = 0;
    *offset = (size_t)(first * p->row_bytes);
    *bytes = (size_t)(n * p->row_bytes);
}

static int is_cut(const tpg_graph_node *nd) { return nd->kind == TPG_NODE_COPY || nd->kind == TPG_NODE_FLAG; }

int tpg_graph_items_count(const tpg_graph_node *list, int n, int chunks) {
    int count = 0;
    for (int i = 0; i < n; i++) count += chunks > 1 && is_cut(&list[i]) ? chunks : 1;
    return count;
}

int tpg_graph_items_expand(const tpg_graph_node *list, int n, int chunks, tpg_graph_item *out) {
    if (n > TPG_GRAPH_LIST_MAX) return -1;
    if (chunks < 1) chunks = 1;
    int first[TPG_GRAPH_LIST_MAX], last[TPG_GRAPH_LIST_MAX]; /* items of table node i */
    int at = 0;
    for (int i = 0; i < n; i++) {
        const tpg_graph_node *nd = &list[i];
        int mapped[2];
        for (int j = 0; j < 2; j++) {
            if (nd->deps[j] >= i) return -1;
            mapped[j] = nd->deps[j] < 0 ? -1 : last[nd->deps[j]];
        }
        const int pieces = is_cut(nd) ? chunks : 1;
        const int copy = nd->deps[0]; /* a FLAG's first dependency: the COPY it announces */
        if (nd->kind == TPG_NODE_FLAG && (copy < 0 || list[copy].kind != TPG_NODE_COPY)) return -1;
        first[i] = at;
        for (int c = 0; c < pieces; c++, at++) {
            tpg_graph_item *it = &out[at];
            it->node = i;
            it->piece = c;
            it->deps[0] = mapped[0];
            it->deps[1] = mapped[1];
            if (nd->kind == TPG_NODE_COPY && c > 0) {
                it->deps[0] = at - 1;
                it->deps[1] = -1;
            } else if (nd->kind == TPG_NODE_FLAG) {
                it->deps[0] = first[copy] + c;
                if (c > 0) it->deps[1] = at - 1;
            }
        }
        last[i] = at - 1;
    }
    return 0;
}

/* Index of the only item of table kind `kind`, -1 if none, -2 if several. */
static int only_item(const tpg_graph_node *list, const tpg_graph_item *items, int n, int kind) {
    int at = -1;
    for (int i = 0; i < n; i++)
        if (list[items[i].node].kind == kind) at = at == -1 ? i : -2;
    return at;
}

/* Index of the last FLAG item if every COPY and FLAG item comes before it (is one of its ancestors), else -1.
 * One backward pass marks the last flag's ancestors (dependencies point to earlier items): O(n), where a walk of
 * every path would grow as pieces^(tp - 1). */
static int last_flag_after_all(const tpg_graph_node *list, const tpg_graph_item *items, int n) {
    int last_flag = -1;
    for (int i = 0; i < n; i++)
        if (list[items[i].node].kind == TPG_NODE_FLAG) last_flag = i;
    if (last_flag < 0) return -1;
    unsigned char *seen = calloc((size_t)n, 1);
    if (!seen) return -1;
    seen[last_flag] = 1;
    for (int i = last_flag; i >= 0; i--)
        for (int j = 0; j < 2 && seen[i]; j++)
            if (items[i].deps[j] >= 0) seen[items[i].deps[j]] = 1;
    int bad = 0;
    for (int i = 0; i < n; i++) bad |= is_cut(&list[items[i].node]) && !seen[i];
    free(seen);
    return bad ? -1 : last_flag;
}

int tpg_graph_items_overlap(const tpg_graph_node *list, tpg_comm comm, tpg_graph_item *items, int n) {
    const int gemm = only_item(list, items, n, TPG_NODE_GEMM);
    const int start = only_item(list, items, n, TPG_NODE_BARRIER_START);
    const int end = only_item(list, items, n, TPG_NODE_BARRIER_END);
    if (gemm < 0 || start < 0 || end < 0) return -1;
    /* all-gather's END will wait for the last flag only: every copy and flag must come before it (the tables
     * chain them all; a list with copies beside each other would let END pass while one still reads a shard) */
    const int last_flag = comm == TPG_COMM_ALLGATHER ? last_flag_after_all(list, items, n) : -1;
    if (comm == TPG_COMM_ALLGATHER && last_flag < 0) return -1;
    items[gemm].deps[0] = items[gemm].deps[1] = -1;
    items[end].deps[0] = comm == TPG_COMM_ALLGATHER ? last_flag : gemm;
    items[end].deps[1] = comm == TPG_COMM_ALLGATHER ? -1 : start;
    return 0;
}

int tpg_graph_items_gather(const tpg_graph_node *list, tpg_graph_item *items, int n) {
    const int gemm = only_item(list, items, n, TPG_NODE_GEMM);
    if (gemm < 0) return -1;
    int *deps = items[gemm].deps;
    if (deps[0] >= 0 && deps[1] >= 0) return -1;
    /* first, so that every dependency still points to an earlier item (graph.c adds the nodes in order) */
    memmove(items + 1, items, (size_t)n * sizeof *items);
    for (int i = 1; i <= n; i++)
        for (int j = 0; j < 2; j++)
            if (items[i].deps[j] >= 0) items[i].deps[j]++;
    items[0] = (tpg_graph_item){TPG_ITEM_LOCAL_SHARD, 0, {-1, -1}};
    deps = items[gemm + 1].deps;
    deps[deps[0] < 0 ? 0 : 1] = 0;
    return n + 1;
}

int tpg_graph_items_pulled(const tpg_graph_node *list, tpg_graph_item *items, int n) {
    const int gemm = only_item(list, items, n, TPG_NODE_GEMM);
    const int start = only_item(list, items, n, TPG_NODE_BARRIER_START);
    if (gemm < 0 || start < 0 || (items[gemm].deps[0] != start && items[gemm].deps[1] != start)) return -1;
    if (n > TPG_GRAPH_LIST_MAX * TPG_MAX_COPY_CHUNKS) return -1;
    int at[TPG_GRAPH_LIST_MAX * TPG_MAX_COPY_CHUNKS]; /* new index of each kept item, -1 for a dropped one */
    for (int i = 0, kept = 0; i < n; i++) at[i] = is_cut(&list[items[i].node]) ? -1 : kept++;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < 2; j++) {
            const int d = items[i].deps[j];
            if (at[i] >= 0 && d >= 0 && at[d] < 0 && i < gemm) return -1;
        }
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (at[i] < 0) continue;
        tpg_graph_item it = items[i];
        for (int j = 0; j < 2; j++) {
            const int d = it.deps[j];
            it.deps[j] = d < 0 ? -1 : at[d] >= 0 ? at[d] : i == gemm ? -1 : at[gemm];
        }
        if (it.deps[0] >= 0 && it.deps[0] == it.deps[1]) it.deps[1] = -1;
        if (it.deps[0] < 0) { /* keep the list's shape: a single dependency comes first */
            it.deps[0] = it.deps[1];
            it.deps[1] = -1;
        }
        items[kept++] = it;
    }
    return kept;
}

int tpg_graph_items_one_hop(const tpg_graph_node *list, tpg_graph_item *items, int n) {
    const int gemm = only_item(list, items, n, TPG_NODE_GEMM);
    const int start = only_item(list, items, n, TPG_NODE_BARRIER_START);
    const int end = only_item(list, items, n, TPG_NODE_BARRIER_END);
    if (gemm < 0 || start < 0 || end < 0 || end < gemm) return -1;
    int *end_deps = items[end].deps;
    const int on_gemm = end_deps[0] == gemm ? 0 : end_deps[1] == gemm ? 1 : -1;
    if (on_gemm < 0) return -1;
    end_deps[on_gemm] = gemm + 1;
    /* right after the GEMM: every dependency still points to an earlier item (graph.c adds the nodes in order) */
    memmove(items + gemm + 2, items + gemm + 1, (size_t)(n - gemm - 1) * sizeof *items);
    for (int i = gemm + 2; i <= n; i++)
        for (int j = 0; j < 2; j++)
            if (items[i].deps[j] > gemm && !(i == end + 1 && j == on_gemm)) items[i].deps[j]++;
    items[gemm + 1] = (tpg_graph_item){TPG_ITEM_ONE_HOP_REDUCE, 0, {gemm, start}};
    return n + 1;
}

int tpg_copy_last_flag_stage(const tpg_schedule_table *sched, int device) {
    const int n = sched->nodes_per_device;
    if (!tpg_schedule_copies(sched) || device < 0 || device >= sched->tp || n > TPG_GRAPH_LIST_MAX) return -1;
    const tpg_graph_node *list = sched->nodes + (size_t)device * n;
    tpg_graph_item items[TPG_GRAPH_LIST_MAX];
    if (tpg_graph_items_expand(list, n, 1, items) != 0) return -1;
    const int last = last_flag_after_all(list, items, n);
    return last < 0 ? -1 : list[items[last].node].stage;
}

int tpg_copy_flags_chained(const tpg_schedule_table *sched) {
    for (int d = 0; d < sched->tp; d++)
        if (tpg_copy_last_flag_stage(sched, d) < 0) return 0;
    return sched->tp >= 2;
}
