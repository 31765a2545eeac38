/* Command-line parsing of build/tpgemm. Strict: every value is checked, unknown flags are errors, and
 * each error names the flag and the offending value. Pure C, no CUDA, no runtime calls. */
#ifndef TPG_CLI_ARGS_H
#define TPG_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "../../include/tpgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TPG_CLI_MAX_DEVICES 8
#define TPG_CLI_DEFAULT_SCHEDULE "AllGather1D_TilingCD_RotatingA"
#define TPG_CLI_DEFAULT_SEED 2024u
#define TPG_CLI_MAX_TRACE_CAP 65536 /* records per lane: 132 CTAs x 4 lanes x 64 B x this = 2.2 GB a device */

typedef struct tpg_cli_args {
    int64_t m, n, k, l;        /* global problem (defaults: the seed's 16384 x 106496 x 16384, L = 1) */
    float alpha, beta;         /* 1, 0 */
    float scale_a, scale_b;    /* --scale-a / --scale-b: fp8 per-tensor scales (1, 1) */
    int scale_set;             /* either given (fp8 configs only) */
    int iterations;            /* timed runs, >= 1 (100) */
    int warmup;                /* --warmup-iterations, >= 0 (10) */
    double eps;                /* relative error bound; only meaningful when eps_set */
    int eps_set;
    const char *config;        /* --config NAME, or NULL */
    const char *schedule;      /* --schedule NAME, or NULL (then TPG_CLI_DEFAULT_SCHEDULE) */
    int tp;                    /* --tp, 0 = not given */
    tpg_dtype dtype;           /* --dtype (bf16) */
    int dtype_set;
    int devices[TPG_CLI_MAX_DEVICES]; /* --devices 0,1 */
    int num_devices;           /* 0 = not given */
    int share_device;          /* --share-device: ranks may share a GPU (tpg_ctx_config.share_devices) */
    int list, json, check, dry_run, help;
    uint64_t seed;             /* --seed (TPG_CLI_DEFAULT_SEED) */
    int64_t timeout_ms;        /* --timeout-ms, 0 = the runtime's default */
    const char *model;         /* --model NAME: run each layer of a preset (dispatch table), or NULL */
    int64_t tokens;            /* --tokens M with --model, 0 = the preset's default */
    int shape_set;             /* --m, --n or --k given (they conflict with --model) */
    const char *trace;         /* --trace FILE.json: 4 traced calls after the timed ones, the last kept (trace build) */
    int trace_cap;             /* --trace-cap N: records per lane of the trace buffer; 0 = sized from a first traced
                                  call (run.c trace_run) */
    int copy_chunks;           /* --copy-chunks N: all-gather copies in N pieces (tpg_op_set_copy_chunks), 0 = the config's */
    int overlap_barriers;      /* --overlap-barriers: the GEMM beside the start barrier (tpg_op_set_overlap_barriers) */
    int gather_copy_engine;    /* --gather-copy-engine: a gathered walk's shards by copy engine
                                  (tpg_op_set_gather_copy_engine) */
    int rs_ring;               /* --rs-ring: a one-hop reduce-scatter walk keeps its ring (tpg_op_set_rs_ring) */
} tpg_cli_args;

/* Fills the defaults listed above (check on, everything else off). */
void tpg_args_defaults(tpg_cli_args *a);

/* Parses argv[1..argc-1] into *a (which should hold the defaults). Accepts "--flag value" and
 * "--flag=value". Returns 0 on success, 2 on a usage error with a one-line message
 * ("tpgemm: --m expects a positive integer, got 'abc'") in msg. String values point into argv. */
int tpg_args_parse(int argc, char **argv, tpg_cli_args *a, char *msg, size_t msg_bytes);

/* The --help text. */
const char *tpg_args_usage(void);

/* Parses an operand type, "bf16" | "fp16" | "e4m3" | "e5m2" (never "fp32"); returns 0 on success, -1 otherwise. */
int tpg_args_parse_dtype(const char *s, tpg_dtype *out);

#ifdef __cplusplus
}
#endif

#endif /* TPG_CLI_ARGS_H */
