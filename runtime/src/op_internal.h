/* The op's internals, shared by op.c, params.c and graph.c. */
#ifndef TPG_OP_INTERNAL_H
#define TPG_OP_INTERNAL_H

#include <cuda_runtime_api.h>

#include "barrier.h"
#include "buffers.h"
#include "ctx_internal.h"
#include "gemm_params.h"
#include "peers.h"
#include "shapes.h"
#include "tables.h"

struct tpg_op {
    tpg_ctx *ctx;
    const tpg_config_desc *config;
    const tpg_schedule_table *sched;
    const tpg_kernel_desc *kernel;
    tpg_op_desc desc;
    tpg_shapes shapes;
    tpg_buffer_layout layout;
    tpg_peers peers;                       /* symmetric buffers + shard pointers of every rank */
    void *buffer[TPG_MAX_TP];              /* own symmetric allocation of each rank */
    tpg_tensors tensors[TPG_MAX_TP];
    int has_tensors[TPG_MAX_TP];

    /* Launch arguments; graph kernel nodes point at these (copied by CUDA at build / update). */
    tpg_gemm_params gemm[TPG_MAX_TP];
    tpg_barrier_params barrier[2][TPG_MAX_TP]; /* [tpg_barrier_mode][rank] */

    cudaStream_t last_stream[TPG_MAX_TP];  /* streams of the last tpg_op_run (what tpg_op_sync waits on) */
    int has_run;                           /* tpg_op_run launched at least once */
    int built;                             /* graphs built and instantiated */
    cudaGraph_t graph[TPG_MAX_TP];
    cudaGraphExec_t exec[TPG_MAX_TP];
    cudaGraphNode_t *nodes[TPG_MAX_TP];    /* [nodes_per_device], index as in the schedule table */
};

/* params.c: fills op->gemm[rank] and op->barrier[*][rank] from the tables, shapes, peers and tensors. */
tpg_status tpg__params_build(tpg_op *op, int rank);

/* graph.c: builds + instantiates every rank's graph (first time), or updates the executable graphs. */
tpg_status tpg__graphs_build(tpg_op *op);
tpg_status tpg__graphs_update(tpg_op *op);
void tpg__graphs_destroy(tpg_op *op);

#endif /* TPG_OP_INTERNAL_H */
