/* What one self-test kernel instance is, exported by the instance itself (selftest_instance.cu) so
 * that the host never restates a tile, cluster, block size or smem size by hand. */
#ifndef TPG_SELFTEST_SHAPE_H
#define TPG_SELFTEST_SHAPE_H

typedef struct tpg_selftest_shape {
    int bm, bn;               /* tile */
    int cluster_m, cluster_n; /* CTA cluster (the shared operand's map box is tile / 2 rows) */
    int consumer_mode;        /* TPG_CONSUMER_MODE: 0 cooperative, 1 ping-pong, 2 cooperative_n */
    int threads, smem_bytes;  /* launch */
    int dtype;                /* operands: 0 bf16, 1 fp16, 2 e4m3, 3 e5m2; outputs fp16 for fp16, else bf16 */
    int epi_chunk_bytes;      /* epilogue subtile row bytes: the D map's box width and swizzle (128 / 64) */
    int raster;               /* TPG_RASTER: 1 = the walk order comes from p.tile_order */
    int bk;                   /* TPG_BK: the operand maps' box width; its row bytes pick the swizzle (128 / 64) */
    int partial_f32;          /* TPG_PARTIAL_F32: reduce-scatter partials between stages are fp32 (else the output's) */
    /* TPG_DIAG_PHASES instances (diag_phases.cuh): label NULL clears the sums, else prints them as table rows
     * labelled `label` (nothing when no tile was counted); NULL for every other instance */
    void (*phases)(const char *label);
    int timing_only; /* TPG_DIAG_ROW_STORES (the values land swizzled): timed (--rs-*), never checked */
} tpg_selftest_shape;

#endif
