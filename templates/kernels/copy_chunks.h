/* All-gather copies in chunks (schedules.yaml `copy_chunks`, tpg_op_set_copy_chunks): plain C, shared by
 * the kernels (the producer's stage wait, gemm_sm90_roles.cuh) and the runtime (runtime/src/copy_plan.c
 * cuts the copies and expands the graph; tests/c/test_copy_plan.c checks both sides' arithmetic).
 *
 * Why: with one copy per stage, no tile of stage s starts before the whole shard of stage s landed, so
 * where the copies are the bottleneck (small all-gather shapes, large TP) every tile of the last stage
 * starts after the last byte of the last copy, and the call ends a whole stage of tiles later. In chunks,
 * a tile waits only for the chunk that holds its rows, and the tiles of early chunks run while later
 * chunks are still in flight.
 *
 * What: the rotating operand of a slot is `rows` rows (all batches stacked: batch l's row r is flat row
 * l * batch_rows + r) of row_bytes each. Chunk c is flat rows [c * chunk_rows, (c + 1) * chunk_rows), a
 * contiguous byte range of both the peer's shard and the slot, copied by its own copy-engine node and
 * announced by its own FLAG node (flag c of the stage). chunk_rows is a multiple of the tile's rows, so
 * the tiles of a one-batch slot never straddle two chunks. The copies of a device run one after another,
 * so flag c raised means every chunk <= c landed; the producer still waits on each flag up to the one
 * it needs (one acquire per chunk and stage, not per tile).
 */
#ifndef TPG_COPY_CHUNKS_H
#define TPG_COPY_CHUNKS_H

#ifdef __CUDACC__
#define TPG_CC_FN __host__ __device__ __forceinline__
#else
#define TPG_CC_FN static inline
#endif

/* Flags per stage in the symmetric buffer (buffers.h), so the most chunks one copy may be cut into. */
#define TPG_MAX_COPY_CHUNKS 32

/* Rows per chunk for `chunks` chunks of `rows` flat rows: equal pieces rounded up to whole tiles of
 * `tile_rows`, so there may be fewer pieces than asked (1000 rows of 128-row tiles in 5: 256 rows, 4 pieces);
 * `rows` itself when that leaves one piece. */
TPG_CC_FN long long tpg_copy_chunk_rows(long long rows, int tile_rows, int chunks)
{
    if (rows <= 0 || tile_rows <= 0 || chunks <= 1) return rows;
    const long long per = (rows + chunks - 1) / chunks;
    const long long cut = (per + tile_rows - 1) / tile_rows * tile_rows;
    return cut < rows ? cut : rows;
}

/* Chunks that chunk_rows-row pieces of `rows` flat rows make (the last one may be shorter). */
TPG_CC_FN int tpg_copy_chunk_count(long long rows, long long chunk_rows)
{
    return chunk_rows <= 0 ? 1 : (int)((rows + chunk_rows - 1) / chunk_rows);
}

/* The chunk a tile must wait for: the one holding the last row of the box [row, row + box_rows) of batch
 * `batch` that feeds a stored output. Rows past the batch's end feed only outputs the store clips, so a
 * box that overhangs into the next batch's rows does not wait for them (it may read them half-copied). */
TPG_CC_FN int tpg_copy_chunk_needed(int batch, int batch_rows, int row, int box_rows, int chunk_rows)
{
    if (chunk_rows <= 0) return 0;
    const int end = row + box_rows < batch_rows ? row + box_rows : batch_rows;
    return (batch * batch_rows + end - 1) / chunk_rows;
}

#endif /* TPG_COPY_CHUNKS_H */
