/* Generalized Hilbert order for rectangles ("gilbert"): the rectangle spanned by the major axis (ax, ay)
 * and the minor axis (bx, by) from (x, y) is split either across its long side in two halves (when it
 * is much longer than wide) or into three parts: a lower block, the far strip, and the upper block
 * walked back, each with its axes turned so that one part ends next to where the next one starts.
 * Halves are nudged to even lengths where that keeps the walk free of diagonal steps. */
#include "raster.h"

#include <stdlib.h>

typedef struct walk {
    int32_t *out;
    int64_t n;
} walk;

static int sgn(int v) { return (v > 0) - (v < 0); }
static int half(int v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); } /* floor(v / 2) */

/* Emits the cells of the rectangle (x, y) + i·(ax, ay)/|a| + j·(bx, by)/|b|; x runs along n, y along m. */
static void gen(walk *w, int x, int y, int ax, int ay, int bx, int by) {
    const int len_a = abs(ax + ay), len_b = abs(bx + by);
    const int dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
    if (len_b == 1 || len_a == 1) { /* a single row or column: walk it straight */
        const int steps = len_b == 1 ? len_a : len_b, sx = len_b == 1 ? dax : dbx, sy = len_b == 1 ? day : dby;
        for (int i = 0; i < steps; i++, x += sx, y += sy) w->out[w->n++] = ((int32_t)y << 16) | (int32_t)x;
        return;
    }
    int ax2 = half(ax), ay2 = half(ay), bx2 = half(bx), by2 = half(by);
    if (2 * len_a > 3 * len_b) { /* long and thin: two halves along a */
        if ((abs(ax2 + ay2) & 1) && len_a > 2) ax2 += dax, ay2 += day;
        gen(w, x, y, ax2, ay2, bx, by);
        gen(w, x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by);
        return;
    }
    if ((abs(bx2 + by2) & 1) && len_b > 2) bx2 += dbx, by2 += dby;
    gen(w, x, y, bx2, by2, ax2, ay2);
    gen(w, x + bx2, y + by2, ax, ay, bx - bx2, by - by2);
    gen(w, x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2), -(ay - ay2));
}

int64_t tpg_raster_hilbert(int units_m, int units_n, int32_t *out) {
    if (units_m < 1 || units_n < 1 || units_m > 0x7fff || units_n > 0x7fff || !out) return -1;
    walk w = {out, 0};
    if (units_n >= units_m) gen(&w, 0, 0, units_n, 0, 0, units_m); /* the major axis along the longer side */
    else gen(&w, 0, 0, 0, units_m, units_n, 0);
    return w.n;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void tpg_raster_grid(int64_t walk_m, int64_t n, int bm, int bn, int cm, int cn, int64_t *units_m, int64_t *units_n) {
    *units_m = ceil_div(ceil_div(walk_m, bm), cm);
    *units_n = ceil_div(ceil_div(n, bn), cn);
}
