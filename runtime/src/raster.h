/* Tile orders computed on the host (kernel knob `raster: hilbert`): the kernel walks units in the
 * order of a table instead of the grouped raster it computes itself (templates/kernels/scheduler.cuh).
 * Pure: no CUDA, so tests/c/test_raster.c and the kernel self-test use the same code. */
#ifndef TPG_RASTER_H
#define TPG_RASTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A generalized Hilbert curve over a units_m x units_n grid (any sizes >= 1, each < 32768: packed ids stay positive): out[r]
 * (units_m * units_n entries) = (um << 16) | un of the r-th unit. Consecutive units are neighbours
 * (one step along m or n; a few diagonal steps when exactly one size is odd), so the units that the
 * persistent grid's clusters work on at any moment - a run of consecutive r - form a compact patch
 * that shares A rows and B columns in L2. Returns the number of entries written (units_m * units_n),
 * or -1 if a size is out of range. */
int64_t tpg_raster_hilbert(int units_m, int units_n, int32_t *out);

/* The units_m x units_n grid that a walk of walk_m x n outputs in bm x bn tiles and cm x cn clusters has, as the
 * kernels' tpg_make_tiling (scheduler.cuh) computes it: ceil(ceil(walk_m / bm) / cm) x ceil(ceil(n / bn) / cn). The
 * host's table must hold one entry per unit the kernel walks. */
void tpg_raster_grid(int64_t walk_m, int64_t n, int bm, int bn, int cm, int cn, int64_t *units_m, int64_t *units_n);

#ifdef __cplusplus
}
#endif

#endif /* TPG_RASTER_H */
