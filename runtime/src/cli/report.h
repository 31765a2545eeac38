/* Output of build/tpgemm: the config list and the result of a run, as text or as one JSON object. */
#ifndef TPG_CLI_REPORT_H
#define TPG_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../../include/tpgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

/* NOT_RUN: asked for, but an error stopped the run before the check ended (the report's Error says which) */
typedef enum tpg_check_state {
    TPG_CHECK_SKIPPED = 0, TPG_CHECK_PASSED = 1, TPG_CHECK_FAILED = -1, TPG_CHECK_NOT_RUN = 2
} tpg_check_state;

typedef struct tpg_cli_result {
    const char *config, *schedule, *kernel;
    tpg_dtype dtype;
    int tp;
    int64_t m, n, k, l;
    float alpha, beta;
    float scale_a, scale_b; /* fp8 per-tensor scales (1 when none given) */
    int iterations, warmup;
    int64_t stage_m, stage_n, stage_k;  /* per-stage local GEMM */
    int copy_chunks;         /* all-gather: pieces per shard copy (tpg_op_set_copy_chunks); 0 = nothing copied */
    int overlap_barriers;    /* the GEMM ran beside the start barrier (tpg_op_set_overlap_barriers) */
    int gemm_pulls;          /* the gathered walk's GEMM pulled the shards itself (copy_plan.h: tpg_gather_pulls) */
    int one_hop;             /* the reduce-scatter walk was one-hop (plan.h: TPG_WALK_ONE_HOP) */
    const int *devices;
    int num_devices;
    int shared_device;       /* --share-device: ranks shared a GPU; the time is not a TP figure */
    uint64_t seed;

    tpg_check_state check;
    double max_error, eps, rms_ref;     /* max_error may be +inf (non-finite outputs) */
    int64_t checked_elements, nonfinite;
    int full_check;                     /* 1: every element, 0: stratified sample */
    int deterministic;                  /* 1 yes, 0 no, -1 not measured */
    int timed;                          /* avg_ms / tflops_per_gpu / host_launch_ms valid */
    double avg_ms, tflops_per_gpu;
    double host_launch_ms;              /* host time of one call's tpg_op_run (every rank's launch), the 10th
                                           percentile of the timed calls: near avg_ms, the calls were
                                           launch-bound, not device-bound */

    int exit_code;
    const char *error;                  /* message of a failure, or NULL */
} tpg_cli_result;

/* Zeroes *r and marks everything "not measured". */
void tpg_report_init(tpg_cli_result *r);

/* The generated configs: a table, or {"configs": [...]} when json. */
void tpg_report_list(FILE *f, int json);

/* The result: the seed's lines ("Disposition: Passed", "Avg runtime: X ms", "TFLOP/s per GPU: Y", ...)
 * or one JSON object with every field. */
void tpg_report_result(FILE *f, const tpg_cli_result *r, int json);

#ifdef __cplusplus
}
#endif

#endif /* TPG_CLI_REPORT_H */
