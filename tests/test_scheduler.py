"""Tier 1 (no GPU): the persistent tile walk of templates/kernels/scheduler.cuh, run on the CPU.

The kernels' producer and consumers both decode unit ids with tpg_decode_tile, and per-tile flags,
partials and stores all follow from it, so a wrong decode is silent corruption or a hang on the GPU. A
small host program (compiled by nvcc, no device code) prints the decode of every unit of a set of walks -
ragged tile grids, short last raster groups, batches, several stages, 2x1 and 1x2 clusters, raster groups
of 4 and 8, stage after stage and interleaved (p.stage_minor) - and this test checks it against an
independent Python model of the documented order, checks that each walk covers every tile of every stage and
batch exactly once, and that a tile's previous-stage partner (whose partial it waits for) comes earlier.
"""
import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BM, BN = 128, 256

# (m, n, l, num_stages): tiles_m x tiles_n = ceil(m/BM) x ceil(n/BN)
SHAPES = [
    (8192, 4096, 1, 1),    # 64 x 16, one stage, one batch (the kernels' fast path)
    (1100, 1200, 3, 1),    # 9 x 5: ragged, a short last group, three batches
    (3000, 2000, 2, 2),    # 24 x 8, two stages of two batches
    (2900, 5000, 1, 4),    # 23 x 20: odd tiles_m (a 2x1 cluster walks an invalid partner row), four stages
    (128, 256, 1, 1),      # a single tile
    (1280, 300, 1, 3),     # 10 x 2: fewer units than one raster group along m
]
CLUSTERS = [(1, 1), (2, 1), (1, 2)]

PROGRAM = r"""
#include <cstdio>
#include "scheduler.cuh"

template <int CM, int CN> static void walk(int m, int n, int l, int stages, int minor)
{
    tpg_gemm_params p = {};
    p.m = m; p.n = n; p.k = 64; p.l = l; p.num_stages = stages; p.stage_minor = minor;
    const tpg_tiling g = tpg_make_tiling<%(bm)d, %(bn)d, 64, CM, CN>(p);
    for (int uid = 0; uid < g.total; ++uid)
        for (int rank = 0; rank < CM * CN; ++rank) {
            const tpg_tile t = tpg_decode_tile<CM, CN>(g, uid, rank);
            std::printf("%%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d\n", CM, CN, m, n, l, stages, minor,
                        uid, rank, t.stage, t.batch, t.tm, t.tn, (int)t.valid, t.t);
        }
}

int main()
{
%(calls)s
    return 0;
}
"""


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def model(cm, cn, m, n, l, stages, minor, uid, rank, group_m):
    """The walk as scheduler.cuh documents it: stage-major (interleaved with minor: uid = unit * stages +
    stage), then batch, then groups of group_m unit rows walked column by column; rank r of a cluster takes
    tile (cm*um + r % cm, cn*un + r // cm)."""
    tiles_m, tiles_n = ceil_div(m, BM), ceil_div(n, BN)
    units_m, units_n = ceil_div(tiles_m, cm), ceil_div(tiles_n, cn)
    per_batch = units_m * units_n
    if minor and stages > 1:
        r, stage = divmod(uid, stages)
    else:
        stage, r = divmod(uid, l * per_batch)
    batch, r = divmod(r, per_batch)
    group, within = divmod(r, group_m * units_n)
    first = group * group_m
    rows = min(group_m, units_m - first)
    tm = (first + within % rows) * cm + rank % cm
    tn = (within // rows) * cn + rank // cm
    valid = tm < tiles_m and tn < tiles_n
    return stage, batch, tm, tn, int(valid), (batch * tiles_m + tm) * tiles_n + tn


def build_and_run(workdir: Path, group_m: int) -> list[list[int]]:
    calls = "\n".join(f"    walk<{cm}, {cn}>({m}, {n}, {l}, {s}, {minor});"
                      for (cm, cn), (m, n, l, s), minor in itertools.product(CLUSTERS, SHAPES, (0, 1)))
    src = workdir / f"walk_g{group_m}.cu"
    src.write_text(PROGRAM % {"bm": BM, "bn": BN, "calls": calls})
    exe = workdir / f"walk_g{group_m}"
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    build = subprocess.run([nvcc, "-std=c++17", "-O2", "-I", str(ROOT / "templates/kernels"),
                            "-I", str(ROOT / "runtime/include"), f"-DTPG_GROUP_M={group_m}", "-DTPG_RASTER=0",
                            str(src), "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, f"the walk program does not compile:\n{build.stderr[-3000:]}"
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [[int(x) for x in line.split()] for line in out.stdout.splitlines()]


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    """walks(group_m): the decoded rows of every walk, built and run once per raster group per module."""
    if not (shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()):
        pytest.skip("nvcc not found: the walk is checked where the CUDA toolkit is installed")
    workdir, cache = tmp_path_factory.mktemp("walks"), {}

    def get(group_m: int) -> list[list[int]]:
        if group_m not in cache:
            cache[group_m] = build_and_run(workdir, group_m)
        return cache[group_m]
    return get


@pytest.mark.parametrize("group_m", [4, 8])
def test_decode_matches_the_documented_walk(walks, group_m):
    rows = walks(group_m)
    assert rows, "the walk program printed nothing"
    mismatches = []
    for cm, cn, m, n, l, s, minor, uid, rank, *got in rows:
        want = model(cm, cn, m, n, l, s, minor, uid, rank, group_m)
        if tuple(got) != want:
            mismatches.append(f"cluster {cm}x{cn} {m}x{n} l={l} stages={s} minor={minor} uid={uid} rank={rank}: "
                              f"got {tuple(got)}, want {want}")
    assert not mismatches, f"{len(mismatches)} decodes differ, first:\n" + "\n".join(mismatches[:10])


def test_every_tile_is_walked_once(walks):
    seen = {}
    for cm, cn, m, n, l, s, minor, uid, rank, stage, batch, tm, tn, valid, _ in walks(8):
        if valid:
            key = (cm, cn, m, n, l, s, minor)
            seen.setdefault(key, []).append((stage, batch, tm, tn))
    assert len(seen) == len(CLUSTERS) * len(SHAPES) * 2
    for (cm, cn, m, n, l, s, minor), tiles in seen.items():
        want = sorted(itertools.product(range(s), range(l), range(ceil_div(m, BM)), range(ceil_div(n, BN))))
        assert sorted(tiles) == want, \
            f"cluster {cm}x{cn} {m}x{n} l={l} stages={s} minor={minor}: tiles missed or repeated"


def test_a_tiles_partner_of_the_previous_stage_comes_first(walks):
    """Deadlock freedom (scheduler.cuh): a stage-s tile waits for the partial of the stage-(s-1) tile with the
    same canonical index, so in either order that tile's unit id must be smaller."""
    first_uid, late = {}, []
    for cm, cn, m, n, l, s, minor, uid, rank, stage, batch, tm, tn, valid, t in walks(8):
        if valid:  # a cluster's tile past the edge has no flags (and its index may be a next batch's tile)
            first_uid.setdefault((cm, cn, m, n, l, s, minor, stage, t), uid)
    for (cm, cn, m, n, l, s, minor, stage, t), uid in first_uid.items():
        if stage > 0 and first_uid[(cm, cn, m, n, l, s, minor, stage - 1, t)] >= uid:
            late.append(f"cluster {cm}x{cn} {m}x{n} l={l} stages={s} minor={minor} stage {stage} tile {t}")
    assert not late, f"{len(late)} tiles walked before their previous-stage partner, first: {late[:5]}"


# The `raster: hilbert` decode (TPG_RASTER 1): the host's table (runtime/src/raster.c, as tile_order.c builds it)
# gives each unit of a batch; the program prints the table ("O" lines), each decode ("D" lines) and, for ragged K,
# the k-blocks the mainloop walks ("K" lines).
HILBERT_PROGRAM = r"""
#include <cstdio>
#include <vector>
#include "raster.h"
#include "scheduler.cuh"

template <int CM, int CN> static void walk(int m, int n, int l, int stages, int minor)
{
    int64_t um = 0, un = 0;
    tpg_raster_grid(m, n, %(bm)d, %(bn)d, CM, CN, &um, &un);
    std::vector<int> order((size_t)(um * un));
    tpg_raster_hilbert((int)um, (int)un, order.data());
    tpg_gemm_params p = {};
    p.m = m; p.n = n; p.k = 64; p.l = l; p.num_stages = stages; p.stage_minor = minor; p.tile_order = order.data();
    const tpg_tiling g = tpg_make_tiling<%(bm)d, %(bn)d, 64, CM, CN>(p);
    for (size_t i = 0; i < order.size(); ++i)
        std::printf("O %%d %%d %%d %%d %%d %%d %%d %%zu %%d\n", CM, CN, m, n, l, stages, minor, i, order[i]);
    for (int uid = 0; uid < g.total; ++uid)
        for (int rank = 0; rank < CM * CN; ++rank) {
            const tpg_tile t = tpg_decode_tile<CM, CN>(g, uid, rank);
            std::printf("D %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d %%d\n", CM, CN, m, n, l, stages, minor,
                        uid, rank, t.stage, t.batch, t.tm, t.tn, (int)t.valid);
        }
}

int main()
{
%(calls)s
    for (int k : {64, 100, 4104, 8}) {
        tpg_gemm_params p = {};
        p.m = 128; p.n = 128; p.k = k; p.l = 1; p.num_stages = 1;
        std::printf("K %%d %%d\n", k, tpg_make_tiling<%(bm)d, %(bn)d, 64, 1, 1>(p).k_blocks);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def hilbert(tmp_path_factory):
    """The table walk's lines, split by kind: {"O": [...], "D": [...], "K": [...]}, each a list of int rows."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(nvcc).exists():
        pytest.skip("nvcc not found: the walk is checked where the CUDA toolkit is installed")
    workdir = tmp_path_factory.mktemp("hilbert")
    calls = "\n".join(f"    walk<{cm}, {cn}>({m}, {n}, {l}, {s}, {minor});"
                      for (cm, cn), (m, n, l, s), minor in itertools.product(CLUSTERS, SHAPES, (0, 1)))
    src, exe = workdir / "hilbert.cu", workdir / "hilbert"
    src.write_text(HILBERT_PROGRAM % {"bm": BM, "bn": BN, "calls": calls})
    build = subprocess.run([nvcc, "-std=c++17", "-O2", "-I", str(ROOT / "templates/kernels"),
                            "-I", str(ROOT / "runtime/include"), "-I", str(ROOT / "runtime/src"), "-DTPG_RASTER=1",
                            str(src), str(ROOT / "runtime/src/raster.c"), "-o", str(exe)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, f"the table walk program does not compile:\n{build.stderr[-3000:]}"
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = {"O": [], "D": [], "K": []}
    for line in out.stdout.splitlines():
        kind, *values = line.split()
        lines[kind].append([int(x) for x in values])
    return lines


def test_the_table_walk_decodes_its_entries_and_covers_every_tile_once(hilbert):
    """Each unit id takes the table's entry for its place in the batch (stage and batch decomposed as documented):
    rows (entry >> 16) * cm + rank % cm, columns (entry & 0xffff) * cn + rank // cm; every tile of every stage and
    batch is walked once. Non-square grids and 2x1 / 1x2 clusters: a swapped axis or rank split shows."""
    tables = {}
    for cm, cn, m, n, l, s, minor, i, entry in hilbert["O"]:
        tables.setdefault((cm, cn, m, n, l, s, minor), {})[i] = entry
    seen, wrong = {}, []
    for cm, cn, m, n, l, s, minor, uid, rank, stage, batch, tm, tn, valid in hilbert["D"]:
        key = (cm, cn, m, n, l, s, minor)
        tiles_m, tiles_n = ceil_div(m, BM), ceil_div(n, BN)
        per_batch = ceil_div(tiles_m, cm) * ceil_div(tiles_n, cn)
        if minor and s > 1:
            r, want_stage = divmod(uid, s)
        else:
            want_stage, r = divmod(uid, l * per_batch)
        want_batch, r = divmod(r, per_batch)
        entry = tables[key][r]
        want = (want_stage, want_batch, (entry >> 16) * cm + rank % cm, (entry & 0xFFFF) * cn + rank // cm)
        if (stage, batch, tm, tn) != want:
            wrong.append(f"{key} uid {uid} rank {rank}: got {(stage, batch, tm, tn)}, want {want}")
        if valid:
            seen.setdefault(key, []).append((stage, batch, tm, tn))
    assert not wrong, f"{len(wrong)} decodes differ, first:\n" + "\n".join(wrong[:5])
    assert len(seen) == len(CLUSTERS) * len(SHAPES) * 2
    for (cm, cn, m, n, l, s, minor), tiles in seen.items():
        want = sorted(itertools.product(range(s), range(l), range(ceil_div(m, BM)), range(ceil_div(n, BN))))
        assert sorted(tiles) == want, f"cluster {cm}x{cn} {m}x{n} l={l} stages={s}: tiles missed or repeated"


def test_a_ragged_k_walks_its_last_partial_k_block(hilbert):
    """k-blocks = ceil(K / BK): the last partial block is walked (TMA fills its tail with zeros), and K < BK is one."""
    assert {k: kb for k, kb in hilbert["K"]} == {64: 1, 100: 2, 4104: 65, 8: 1}
