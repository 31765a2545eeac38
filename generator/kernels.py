"""Kernel instances: tile legality, shared-memory and register budgets, canonical names.

Every rule here mirrors a static_assert of templates/kernels/gemm_sm90.cuh, so that no kernel of the schema's
fields can fail to compile. `defines` (experimental macros) are checked for name and 32-bit value only: the headers'
own static_asserts and #errors judge the combinations, at compile time. check_kernel returns problems instead of
raising, so that config.py can report all of them with their YAML lines.
"""
from __future__ import annotations

import functools
import inspect
import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from . import GENERATOR_VERSION

# Operand dtypes the schema knows, with their size in bytes and tpg_dtype spelling.
DTYPE_SIZE = {"bf16": 2, "fp16": 2, "e4m3": 1, "e5m2": 1}
ACC_DTYPES = ("f32", "f16")
SMEM_LIMIT = 232448          # 227 KiB of dynamic shared memory per block on sm_90
SMEM_RESERVED = 2048         # 1024 B alignment slack for the 128B swizzle + mbarriers + the epoch word (kSmemNeed)
EPI_ROW_BYTES = 128          # epilogue: store buffers of 64 rows x 128 B (templates/kernels/epilogue.cuh)
EPI_BUFFERS = (2, 16)        # store buffers per consumer warpgroup (TPG_EPI_BUFFERS); default 2 per m64 slab
EPI_SUBTILE_M = (64,)        # epilogue subtile rows: one warpgroup's m64 slab
EPI_SUBTILE_N = (32, 64)     # epilogue subtile columns (16-bit output: 64 or 128 bytes of a row)
EPI_CHUNK_BYTES = (64, 128)  # the store unit's row bytes the kernel implements (64B / 128B swizzle)
SLOT_ROW_BYTES = (128, 64)  # BK·sizeof(operand): the operand swizzle's width (wgmma.cuh tpg_wgmma_desc)
RASTER_GROUPS = (1, 2, 4, 8, 16)  # m-tiles per raster group (TPG_GROUP_M, scheduler.cuh)
RASTERS = ("grouped", "hilbert")  # tile walk: grouped (computed in the kernel) or a Hilbert-curve table
MAX_ACC_PER_THREAD = 128     # fp32 accumulators per consumer thread before setmaxnreg spills
MAX_ACC_SPLIT_N = 160        # cooperative_n: 192x192 (3 slabs of m64n96: 144) or 128x320 (2 slabs of m64n160: 160)
MAX_ACC_PROMOTED = 160       # fp8_promote: accumulators and their f32 sums together (128x160: 80 + 80)
MIN_STAGES = 2
CONSUMERS = (1, 2)
CLUSTER_SIZES = (1, 2, 4)
# cooperative: the consumer warpgroups share each tile (BM = 64·consumers·{1,2});
# pingpong: two warpgroups alternate whole tiles of BM = 64·{1,2} rows (TPG_CONSUMER_MODE 1);
# cooperative_n: two warpgroups share each tile split along N (all BM rows, BN/2 columns each;
# TPG_CONSUMER_MODE 2), for tiles such as 192x192
CONSUMER_MODES = ("cooperative", "pingpong", "cooperative_n")
MODE_VALUES = {"cooperative": 0, "pingpong": 1, "cooperative_n": 2}  # TPG_CONSUMER_MODE
PINGPONG_BMS = (64, 128)
SPLIT_N_BMS = (64, 128, 192, 256)  # one TMA box of A (<= 256 rows)
SPLIT_N_WG_N = (64, 96, 128, 160)  # BN/2: the wgmma N of each warpgroup (wgmma.cuh)
WIDE_BN = 320                      # BN above one TMA box (256 rows): cooperative_n in a 2x1 cluster only
WGMMA_N = (64, 128, 160, 192, 256)  # the m64nNk16 (k32 for fp8) shapes templates/kernels/wgmma.cuh defines

# Values the schema accepts but the kernel does not implement yet. Lifting one = deleting its line.
NOT_YET = {
    "dtype": {},
    "acc": {},
}
# CTA pairs sharing one operand by TMA multicast (2x1: B, 1x2: A); larger clusters are not implemented
SUPPORTED_CLUSTERS = {(1, 1), (2, 1), (1, 2)}
CLUSTER_NOT_YET = "cluster multicast is implemented for CTA pairs only"
PINGPONG_CLUSTER_NOT_YET = "pingpong with a cluster is not implemented yet"


def supported(field: str) -> list[str]:
    """Values of an enum field that are implemented today (for 'allowed:' in messages)."""
    allowed = DTYPE_SIZE if field == "dtype" else ACC_DTYPES
    return [v for v in allowed if v not in NOT_YET.get(field, {})]


def output_dtype(dtype: str) -> str:
    """C / D / partial type: the operand type for 16-bit operands, bf16 for fp8 (tpgemm.h)."""
    return dtype if DTYPE_SIZE[dtype] == 2 else "bf16"


def default_epi_buffers(bm: int, consumers: int = 2, mode: str = "cooperative") -> int:
    """Store buffers per consumer warpgroup when `epilogue_buffers` is omitted: two per m64 slab."""
    return 2 * (wg_rows(bm, consumers, mode) // 64)


def epilogue_bytes(bm: int, consumers: int = 2, mode: str = "cooperative", chunk: int = EPI_ROW_BYTES,
                   buffers: int | None = None) -> int:
    """The TMA-store epilogue's smem (kEpiBytes): `buffers` store buffers of 64 rows x `chunk` bytes (the
    epilogue subtile) per consumer warpgroup; by default two per m64 slab of the rows the warpgroup owns:
    BM/consumers (cooperative) or BM (pingpong, each owns whole tiles)."""
    if buffers is None:
        buffers = default_epi_buffers(bm, consumers, mode)
    return consumers * buffers * 64 * chunk


def epi_chunk_bytes(dtype: str, epilogue_n: int) -> int:
    """Row bytes of one epilogue store unit: subtile columns x the output element size."""
    return epilogue_n * DTYPE_SIZE[output_dtype(dtype)]


def smem_bytes(stages: int, bm: int, bn: int, bk: int, dtype: str, consumers: int = 2,
               mode: str = "cooperative", epilogue_n: int = 64, buffers: int | None = None) -> int:
    """docs/ARCHITECTURE.md: stages·(BM+BN)·BK·esize + consumers·buffers·64·chunk + 2048, chunk = epilogue
    subtile columns x output size (128 bytes by default), buffers = 2 per m64 slab by default."""
    return (stages * (bm + bn) * bk * DTYPE_SIZE[dtype]
            + epilogue_bytes(bm, consumers, mode, epi_chunk_bytes(dtype, epilogue_n), buffers) + SMEM_RESERVED)


def max_stages(bm: int, bn: int, bk: int, dtype: str, consumers: int = 2, mode: str = "cooperative",
               epilogue_n: int = 64, buffers: int | None = None) -> int:
    """The largest ring depth that fits the shared-memory limit (0 if not even one fits)."""
    per_stage = (bm + bn) * bk * DTYPE_SIZE[dtype]
    epi = epilogue_bytes(bm, consumers, mode, epi_chunk_bytes(dtype, epilogue_n), buffers)
    return max(0, (SMEM_LIMIT - SMEM_RESERVED - epi) // per_stage)


def wg_rows(bm: int, consumers: int, mode: str = "cooperative") -> int:
    """Tile rows one consumer warpgroup computes."""
    return bm if mode in ("pingpong", "cooperative_n") else bm // consumers


def wg_cols(bn: int, consumers: int, mode: str = "cooperative") -> int:
    """Tile columns one consumer warpgroup computes (its wgmma N)."""
    return bn // consumers if mode == "cooperative_n" else bn


def acc_per_thread(bm: int, bn: int, consumers: int, mode: str = "cooperative") -> int:
    """fp32 accumulators per consumer thread: a consumer warpgroup owns wg_rows rows, as wg_rows/64
    wgmma m64 tiles of 64 x wg_cols, i.e. wg_cols/2 registers per thread per tile."""
    return (wg_rows(bm, consumers, mode) // 64) * wg_cols(bn, consumers, mode) // 2


@dataclass(frozen=True)
class KernelSpec:
    """A compiled GEMM instance. Equality (and the name) depend only on these fields."""
    dtype: str
    acc: str
    bm: int
    bn: int
    bk: int
    stages: int
    consumers: int
    cluster_m: int
    cluster_n: int
    raster_group: int = 8
    consumer_mode: str = "cooperative"
    epilogue_n: int = 64
    raster: str = "grouped"
    epi_buffers: int = 0  # store buffers per consumer warpgroup; 0 = the default (2 per m64 slab)
    deferred_stores: bool = True  # cooperative: a tile's last store units go out during the next mainloop
    deferred_flags: bool = False  # ping-pong: a tile's signal flag is raised at the warpgroup's next epilogue
    prefetch_sources: bool = False  # ping-pong: each store unit's partial loads while the previous unit is stored
    tma_partials: bool = False  # a tile's partial is TMA-loaded into its store buffers (ldmatrix back)
    defines: tuple = ()  # extra "TPG_NAME=value" macros of an experimental kernel (`defines`)
    stream_k: bool = False  # `stream_k: true`: a one-stage launch splits its last tiles along k (opt-in)
    fp8_promote: int = 0  # fp8: the pipe's sums go into f32 registers every this many k-blocks (0: never)
    partials: str = "out"  # reduce-scatter partials between stages: "out" (the output type) or "f32"

    @property
    def dtype_cd(self) -> str:
        return output_dtype(self.dtype)

    @property
    def dtype_partial(self) -> str:
        """The type of the partials a reduce-scatter moves (tpg_kernel_desc.dtype_partial)."""
        return "fp32" if self.partials == "f32" else self.dtype_cd

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)

    @property
    def pingpong(self) -> bool:
        return self.consumer_mode == "pingpong"

    @property
    def mode_value(self) -> int:
        """TPG_CONSUMER_MODE of the instance."""
        return MODE_VALUES[self.consumer_mode]

    @property
    def splits_k(self) -> bool:
        """Does the kernel walk a stream-K tail when the runtime asks (gemm_sm90.cuh: kStreamK)?"""
        return self.stream_k and self.consumer_mode == "cooperative" and (self.cluster_m, self.cluster_n) == (1, 1)

    @property
    def epi_buffer_count(self) -> int:
        return self.epi_buffers or default_epi_buffers(self.bm, self.consumers, self.consumer_mode)

    @property
    def smem_bytes(self) -> int:
        return smem_bytes(self.stages, self.bm, self.bn, self.bk, self.dtype, self.consumers, self.consumer_mode,
                          self.epilogue_n, self.epi_buffer_count)

    @property
    def epi_chunk_bytes(self) -> int:
        return epi_chunk_bytes(self.dtype, self.epilogue_n)

    def fields(self) -> dict:
        """The spec as hashed (kernel names, the plan's config hash). consumer_mode, epilogue_n, raster,
        epi_buffers, deferred_stores, deferred_flags, prefetch_sources, tma_partials, defines, stream_k, fp8_promote
        and partials appear only when they
        are not the default, so kernels keep the names they had before those knobs."""
        d = asdict(self)
        if self.consumer_mode == "cooperative":
            del d["consumer_mode"]
        if self.epilogue_n == 64:
            del d["epilogue_n"]
        if self.raster == "grouped":
            del d["raster"]
        if not self.epi_buffers:
            del d["epi_buffers"]
        if self.deferred_stores:
            del d["deferred_stores"]
        if not self.deferred_flags:
            del d["deferred_flags"]
        if not self.prefetch_sources:
            del d["prefetch_sources"]
        if not self.tma_partials:
            del d["tma_partials"]
        if not self.defines:
            del d["defines"]
        if not self.stream_k:
            del d["stream_k"]
        if not self.fp8_promote:
            del d["fp8_promote"]
        if self.partials == "out":
            del d["partials"]
        return d

    @property
    def hash8(self) -> str:
        fields = dict(self.fields(), generator=GENERATOR_VERSION)
        canon = json.dumps(fields, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()[:8]

    @property
    def name(self) -> str:
        mode = {"pingpong": "pp", "cooperative_n": "n"}.get(self.consumer_mode, "")
        acc = "_a16" if self.acc == "f16" else ""
        return (f"gemm_sm90_{self.dtype}{acc}_{self.bm}x{self.bn}x{self.bk}_s{self.stages}"
                f"_w{self.consumers}{mode}_c{self.cluster_m}x{self.cluster_n}_{self.hash8}")


def check_kernel(dtype: str, acc: str, bm: int, bn: int, bk: int, stages: int | None,
                 consumers: int, cluster_m: int, cluster_n: int,
                 consumer_mode: str = "cooperative", epilogue_n: int = 64,
                 epi_buffers: int | None = None, deferred_flags: bool = False,
                 prefetch_sources: bool = False, tma_partials: bool = False,
                 defines: tuple = (), stream_k: bool | None = None,
                 fp8_promote: int = 0, partials: str = "out",
                 deferred_stores: bool = True) -> list[tuple[str, str, str]]:
    """Problems of one kernel entry as (field path relative to the entry, problem, allowed).
    Assumes the schema checks passed (types and enums). The store unit's fit is judged only on a tile shape that is
    itself valid: against a BN no kernel instantiates it would only repeat that error under another field. A mode that
    needs 2 consumer warpgroups has its tile judged with 2 (the consumers error says the rest)."""
    tile_consumers = consumers if consumer_mode == "cooperative" else 2
    tile = _tile(dtype, bm, bn, bk, stages, tile_consumers, consumer_mode, epilogue_n, epi_buffers, cluster_m)
    shape_ok = not any(field == "tile" or field.startswith("tile.") for field, _, _ in tile)
    return (_not_yet(dtype, acc, cluster_m, cluster_n) + _acc(dtype, acc)
            + _fp8_promote(fp8_promote, dtype, bm, bn, consumers, consumer_mode)
            + _mode(consumer_mode, consumers, cluster_m, cluster_n) + tile
            + (_subtile(dtype, wg_cols(bn, consumers, consumer_mode) if consumers else bn, epilogue_n) if shape_ok
               else [])
            + _buffers(epi_buffers) + _pingpong_only("deferred_flags", deferred_flags, consumer_mode,
                                                     "cooperative 1x1 kernels always defer, clusters never")
            + _pingpong_only("prefetch_sources", prefetch_sources, consumer_mode,
                             "next to the cooperative kernels' held deferred-store registers it spilled")
            + _tma_partials(tma_partials, prefetch_sources, bm, bn, consumers, consumer_mode, epilogue_n, epi_buffers)
            + _defines(defines) + _stream_k(stream_k, consumer_mode, cluster_m, cluster_n)
            + _partials(partials, tma_partials, prefetch_sources)
            + (_deferred_spills(deferred_stores, consumer_mode, bm, bn, consumers, cluster_m * cluster_n,
                                fp8_promote, partials, tma_partials) if shape_ok else []))


def _partials(kind: str, tma_partials: bool, prefetch_sources: bool) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh: fp32 partials are read with plain loads; the TMA-loaded and prefetched paths read the
    output type."""
    if kind == "f32" and (tma_partials or prefetch_sources):
        knob = "tma_partials" if tma_partials else "prefetch_sources"
        return [("partials", f"f32 together with {knob}, which loads partials of the output type",
                 f"out, or {knob}: false")]
    return []


def _deferred_spills(deferred: bool, mode: str, bm: int, bn: int, consumers: int, cluster: int, promote: int,
                     partials: str, tma_partials: bool) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh kDeferStores: a cooperative kernel (1 or 2 consumers, <= 144 accumulator registers) holds its
    tile's last store units across the next mainloop. Beside 128 accumulators two epilogues spilled (ptxas, 2026-12-06
    review; tests/test_build.py refuses a spilling kernel): fp32 partials' plain loads in a 1x1 kernel (128x256,
    256x128, a one-consumer 128x128), and TMA-loaded partials with one consumer warpgroup (1x1 and 1x2)."""
    acc_regs = acc_per_thread(bm, bn, consumers, mode) * (2 if promote else 1)
    if not deferred or mode != "cooperative" or consumers > 2 or acc_regs > 144 or acc_regs < 128:
        return []
    if partials == "f32" and cluster == 1:
        why = "fp32 partials (partials: f32) in a 1x1 kernel"
    elif tma_partials and consumers == 1:
        why = "tma_partials with one consumer warpgroup"
    else:
        return []
    return [("deferred_stores", f"true (the default) with {why} and {acc_regs} accumulators per consumer thread: "
             "the held store units spill registers (ptxas)", "deferred_stores: false")]


def _stream_k(on: bool | None, mode: str, cluster_m: int, cluster_n: int) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh: kStreamK = cooperative (split along M) with a 1x1 cluster; asked for elsewhere, say so."""
    if on and (mode != "cooperative" or (cluster_m, cluster_n) != (1, 1)):
        return [("stream_k", f"true with consumer_mode {mode}, cluster {{m: {cluster_m}, n: {cluster_n}}}: the "
                 "stream-K tail is implemented for cooperative kernels (split along M) with a 1x1 cluster",
                 "false, or a cooperative 1x1 kernel")]
    return []


# Macros the template writes itself, from the entry's own fields (tests/test_generate.py checks the list against
# templates/gemm_sm90.cu.j2), plus TPG_TRACE (the trace build's flag): `defines` may not set them.
KNOB_MACROS = ("TPG_KERNEL_NAME", "TPG_ENTRY_NAME", "TPG_AB_DTYPE", "TPG_CD_DTYPE", "TPG_BM", "TPG_BN", "TPG_BK",
               "TPG_STAGES", "TPG_CONSUMERS", "TPG_CLUSTER_M", "TPG_CLUSTER_N", "TPG_SMEM_BYTES", "TPG_GROUP_M",
               "TPG_RASTER", "TPG_EPI_CHUNK_BYTES", "TPG_EPI_BUFFERS", "TPG_DEFER_STORES", "TPG_PP_DEFER_FLAGS",
               "TPG_PREFETCH_SOURCES", "TPG_TMA_PARTIALS", "TPG_CONSUMER_MODE", "TPG_ACC_F16", "TPG_TRACE", "TPG_STREAM_K",
               "TPG_PARTIAL_F32", "TPG_FP8_PROMOTE")
DEFINE = re.compile(r"(TPG_[A-Z0-9_]+)=(-?(?:0|[1-9][0-9]*))\Z")  # decimal: C reads a leading 0 as octal
HEADERS = Path(__file__).resolve().parent.parent / "templates" / "kernels"


@functools.lru_cache(maxsize=None)
def header_macros() -> frozenset:
    """The TPG_ macros that the kernel headers test (#if / #ifdef / #ifndef / #elif), less their include guards:
    what a `defines` entry can change. A name outside it (a typo) would be written into the kernel and do nothing."""
    names = set()
    for f in sorted(HEADERS.glob("*")):
        for line in f.read_text(encoding="utf-8").splitlines():
            if re.match(r"\s*#\s*(if|ifdef|ifndef|elif)\b", line):
                names.update(re.findall(r"TPG_[A-Z0-9_]+", line))
    return frozenset(n for n in names if not n.endswith(("_H", "_CUH")))


def _defines(defines: tuple) -> list[tuple[str, str, str]]:
    """`defines`: NAME=INTEGER pairs for macros the kernel headers read but no knob sets."""
    out, seen = [], set()
    for d in defines:
        m = DEFINE.match(d or "")
        if not m:
            out.append(("defines", f"{d!r} is not NAME=INTEGER with NAME = TPG_... and a decimal integer without "
                        "leading zeros (C would read 010 as octal 8)", "e.g. TPG_SPREAD_UNITS=0"))
        elif m.group(1) in KNOB_MACROS:
            out.append(("defines", f"{m.group(1)} is written from the entry's own fields", "a macro without a knob"))
        elif m.group(1) not in header_macros():
            out.append(("defines", f"{m.group(1)} is not a macro the kernel headers read (templates/kernels)",
                        ", ".join(sorted(header_macros() - set(KNOB_MACROS)))))
        elif not -2**31 <= int(m.group(2)) < 2**31:
            out.append(("defines", f"{m.group(1)}={m.group(2)} is outside 32 bits", "an int value"))
        elif m.group(1) in seen:
            out.append(("defines", f"{m.group(1)} is defined twice", "each macro once"))
        else:
            seen.add(m.group(1))
    return out


def _pingpong_only(field: str, on: bool, mode: str, why: str) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh: deferred_flags and prefetch_sources are ping-pong choices (the static_asserts there)."""
    if on and mode != "pingpong":
        return [(field, f"true with consumer_mode {mode}: a ping-pong choice ({why})",
                 "false, or consumer_mode: pingpong")]
    return []


def _tma_partials(on: bool, prefetch: bool, bm: int, bn: int, consumers: int, mode: str, epilogue_n: int,
                  buffers: int | None) -> list[tuple[str, str, str]]:
    """epilogue_tma.cuh: one store buffer per store unit of a tile (the whole partial is loaded at once),
    and one way of loading partials per kernel."""
    if not on:
        return []
    out = []
    if prefetch:
        out.append(("tma_partials", "true together with prefetch_sources: both load the partials",
                    "one of the two"))
    units = (wg_rows(bm, consumers, mode) // 64) * (wg_cols(bn, consumers, mode) // epilogue_n)
    have = buffers or default_epi_buffers(bm, consumers, mode)
    if have < units:
        out.append(("epilogue_buffers", f"{have} store buffers per warpgroup with tma_partials, which loads a "
                    f"tile's {units} store units at once", f">= {units}"))
    return out


def _buffers(n: int | None) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh: the store-buffer rotation needs two buffers (one written while one is read)."""
    lo, hi = EPI_BUFFERS
    if n is None or lo <= n <= hi:
        return []
    return [("epilogue_buffers", f"{n} store buffers per consumer warpgroup", f"{lo}..{hi}")]


def _subtile(dtype: str, bn: int, n: int) -> list[tuple[str, str, str]]:
    """epilogue.cuh: a store unit row is 64 or 128 bytes, and the tile is cut into whole units."""
    chunk = epi_chunk_bytes(dtype, n)
    if chunk not in EPI_CHUNK_BYTES:
        ok = [str(c // DTYPE_SIZE[output_dtype(dtype)]) for c in EPI_CHUNK_BYTES]
        return [("epilogue_subtile.n", f"{n} columns of {output_dtype(dtype)} = {chunk} bytes per row; the store "
                 "unit's rows are 64 or 128 bytes", ", ".join(ok))]
    if bn % n:
        fits = [str(c // DTYPE_SIZE[output_dtype(dtype)]) for c in EPI_CHUNK_BYTES
                if bn % (c // DTYPE_SIZE[output_dtype(dtype)]) == 0]
        return [("epilogue_subtile.n", f"{n} does not divide the {bn} columns a consumer warpgroup stores",
                 " or ".join(fits) if fits else "none: the tile's N is the field to change")]
    return []


def _mode(mode: str, consumers: int, cluster_m: int, cluster_n: int) -> list[tuple[str, str, str]]:
    """gemm_sm90.cuh: ping-pong and cooperative_n need two consumer warpgroups; ping-pong no cluster."""
    if mode == "cooperative":
        return []
    out = []
    if consumers != 2:
        out.append(("consumer_mode", f"{mode} needs 2 consumer warpgroups (consumers = {consumers})",
                    "cooperative, or consumers: 2"))
    if mode != "pingpong":
        return out
    if (cluster_m, cluster_n) != (1, 1):
        out.append(("consumer_mode", f"pingpong with cluster {{m: {cluster_m}, n: {cluster_n}}}: "
                    f"{PINGPONG_CLUSTER_NOT_YET}", "cooperative, or cluster {m: 1, n: 1}"))
    return out


def _acc(dtype: str, acc: str) -> list[tuple[str, str, str]]:
    """wgmma accumulates in f16 only for fp16 operands (bf16 and fp8 products are summed in f32)."""
    if acc == "f16" and dtype != "fp16":
        return [("acc", f"f16 with dtype {dtype}: wgmma accumulates {dtype} products in f32 only",
                 "f32, or dtype: fp16")]
    return []


def _fp8_promote(every: int, dtype: str, bm: int, bn: int, consumers: int, mode: str) -> list[tuple[str, str, str]]:
    """fp8_promote: fp8 operands only (16-bit products are summed in f32 anyway), and a second f32 set of the
    accumulators must fit: both sets together at most MAX_ACC_PROMOTED registers per consumer thread (the promoting
    128x160's 80 + 80 compiles without spills; its deferred stores step aside, gemm_sm90.cuh's kAccRegs)."""
    if not every:
        return []
    if DTYPE_SIZE[dtype] != 1:
        return [("fp8_promote", f"{every} with dtype {dtype}: wgmma sums {dtype} products in f32 already",
                 "0, or dtype: e4m3 / e5m2")]
    have = acc_per_thread(bm, bn, consumers, mode) if consumers else 0
    if 2 * have > MAX_ACC_PROMOTED:
        return [("fp8_promote", f"{every} with {have} accumulators per consumer thread: promotion keeps a second f32 "
                 f"set, {2 * have} in all (> {MAX_ACC_PROMOTED})",
                 f"a tile with <= {MAX_ACC_PROMOTED // 2} accumulators per consumer thread, e.g. cooperative "
                 "128x160 (80) or 128x128 (64)")]
    return []


def _not_yet(dtype: str, acc: str, cluster_m: int, cluster_n: int) -> list[tuple[str, str, str]]:
    out = []
    for field, value in (("dtype", dtype), ("acc", acc)):
        if value in NOT_YET[field]:
            out.append((field, f"{value!r}: {NOT_YET[field][value]}", ", ".join(supported(field))))
    if (cluster_m, cluster_n) not in SUPPORTED_CLUSTERS:
        allowed = ", ".join(f"{{m: {m}, n: {n}}}" for m, n in sorted(SUPPORTED_CLUSTERS))
        out.append(("cluster", f"{{m: {cluster_m}, n: {cluster_n}}}: {CLUSTER_NOT_YET}", allowed))
    return out


def _tile(dtype: str, bm: int, bn: int, bk: int, stages: int | None, consumers: int, mode: str = "cooperative",
          epilogue_n: int = 64, buffers: int | None = None, cluster_m: int = 1) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    if consumers not in CONSUMERS:
        return [("consumers", f"{consumers} consumer warpgroups", ", ".join(map(str, CONSUMERS)))]
    esize = DTYPE_SIZE[dtype]
    if bk * esize not in SLOT_ROW_BYTES:
        out.append(("tile.bk", f"{bk}: BK·sizeof({dtype}) = {bk * esize} bytes, must be 128 (one 128B-swizzle "
                    "row) or 64 (64B swizzle: twice the ring slots in the same memory)",
                    ", ".join(str(b // esize) for b in SLOT_ROW_BYTES)))
    if mode == "pingpong":
        if bm not in PINGPONG_BMS:
            out.append(("tile.bm", f"{bm}: with pingpong each warpgroup owns a whole tile, BM must be 64·{{1,2}}",
                        ", ".join(map(str, PINGPONG_BMS))))
    elif mode == "cooperative_n":
        if bm not in SPLIT_N_BMS:
            out.append(("tile.bm", f"{bm}: with cooperative_n BM is a multiple of 64 up to 256 (one TMA box)",
                        ", ".join(map(str, SPLIT_N_BMS))))
        if bn // 2 not in SPLIT_N_WG_N or bn % 2:
            out.append(("tile.bn", f"{bn}: with cooperative_n each of the 2 warpgroups computes BN/2 columns, "
                        "which must be a wgmma N the kernel instantiates (64, 96, 128, 160)",
                        ", ".join(str(2 * n) for n in SPLIT_N_WG_N)))
        elif bn == WIDE_BN and cluster_m != 2:
            out.append(("tile.bn", f"{bn}: a TMA box has at most 256 rows, so B is loaded as two {bn // 2}-row halves "
                        "by the CTAs of a 2x1 cluster", "cluster {m: 2, n: 1} with bn 320, or bn <= 256"))
        if out:
            return out
    else:
        bms = (64 * consumers, 128 * consumers)
        if bm not in bms:
            out.append(("tile.bm", f"{bm}: BM must be 64·consumers·{{1,2}} (consumers = {consumers})",
                        ", ".join(map(str, bms))))
    if bn not in WGMMA_N and not (mode == "cooperative_n" and bn == WIDE_BN):
        wide = f" ({bn} only with consumer_mode: cooperative_n, each warpgroup {bn // 2})" if bn == WIDE_BN else ""
        out.append(("tile.bn", f"{bn}: BN must be a wgmma N the kernel instantiates (wgmma.cuh){wide}",
                    ", ".join(map(str, WGMMA_N))))
    if out:
        return out
    acc_regs = acc_per_thread(bm, bn, consumers, mode)
    cap = MAX_ACC_SPLIT_N if mode == "cooperative_n" else MAX_ACC_PER_THREAD
    if mode == "cooperative_n":
        if acc_regs > cap:
            out.append(("tile", f"{acc_regs} fp32 accumulators per consumer thread ((BM/64)·(BN/2)/2) exceed {cap}",
                        "bm·bn <= 128·320 (e.g. 192x192, 256x128, 128x256, 128x320)"))
    elif acc_regs > cap:
        bn_max = MAX_ACC_PER_THREAD * 2 // (wg_rows(bm, consumers, mode) // 64)
        rows = "BM/64" if mode == "pingpong" else "BM/consumers/64"
        out.append(("tile", f"{acc_regs} fp32 accumulators per consumer thread "
                    f"(({rows})·BN/2) exceed {MAX_ACC_PER_THREAD}",
                    f"bn <= {bn_max} with bm {bm} and {consumers} consumers"
                    + (" (pingpong)" if mode == "pingpong" else ", or more consumers")))
    top = max_stages(bm, bn, bk, dtype, consumers, mode, epilogue_n, buffers)
    smaller = _smaller_hint(bm, bn, bk, dtype, consumers, mode, epilogue_n, buffers)
    # where no ring fits, the field to change is the one the hint names, not the stages asked for
    no_ring = "tile" if smaller == "a smaller tile" else "epilogue_buffers"
    if stages is None:
        if top < MIN_STAGES:
            need = smem_bytes(MIN_STAGES, bm, bn, bk, dtype, consumers, mode, epilogue_n, buffers)
            out.append((no_ring, f"{MIN_STAGES} stages need {need} bytes of shared memory, "
                        f"{need - SMEM_LIMIT} over the limit of {SMEM_LIMIT}", smaller))
    elif stages < MIN_STAGES:
        out.append(("stages", f"{stages}: the ring needs at least {MIN_STAGES} stages",
                    f"{MIN_STAGES}..{top}" if top >= MIN_STAGES else smaller))
    else:
        need = smem_bytes(stages, bm, bn, bk, dtype, consumers, mode, epilogue_n, buffers)
        if need > SMEM_LIMIT:
            field = "stages" if top >= MIN_STAGES else no_ring
            out.append((field, f"{stages} stages need {need} bytes of shared memory, "
                        f"{need - SMEM_LIMIT} over the limit of {SMEM_LIMIT}",
                        f"{MIN_STAGES}..{top} for this tile" if top >= MIN_STAGES else smaller))
    return out


def _smaller_hint(bm, bn, bk, dtype, consumers, mode, epilogue_n, buffers) -> str:
    """What to shrink where even the shallowest ring does not fit: the tile, or the store buffers a kernel asked for
    where the default count would fit (a 128x128 tile with 16 buffers once read as a tile too large)."""
    if buffers is None or max_stages(bm, bn, bk, dtype, consumers, mode, epilogue_n) < MIN_STAGES:
        return "a smaller tile"
    epi = epilogue_bytes(bm, consumers, mode, epi_chunk_bytes(dtype, epilogue_n), buffers)
    default = default_epi_buffers(bm, consumers, mode)
    fit = max(b for b in range(1, buffers + 1)
              if max_stages(bm, bn, bk, dtype, consumers, mode, epilogue_n, b) >= MIN_STAGES)
    return (f"fewer epilogue_buffers: {buffers} take {epi} bytes; at most {fit} fit beside {MIN_STAGES} stages "
            f"(the default for this tile: {default})")


def entry_args(k: dict) -> dict:
    """make_kernel's keyword arguments from a kernels[] entry as the schema walk filled it (a field it could not read
    is None: `required_missing`): the one place that says which field feeds which argument. check_kernel takes those
    of them it names (checked_args)."""
    tile, cluster = k.get("tile") or {}, k.get("cluster") or {}
    return dict(dtype=k.get("dtype"), acc=k.get("acc"), bm=tile.get("bm"), bn=tile.get("bn"), bk=tile.get("bk"),
                stages=k.get("stages"), consumers=k.get("consumers"), cluster_m=cluster.get("m"),
                cluster_n=cluster.get("n"), raster_group=k.get("raster_group", 8),
                consumer_mode=k.get("consumer_mode") or "cooperative",
                epilogue_n=(k.get("epilogue_subtile") or {}).get("n") or 64, raster=k.get("raster") or "grouped",
                epi_buffers=k.get("epilogue_buffers"), deferred_stores=k.get("deferred_stores", True),
                deferred_flags=bool(k.get("deferred_flags")), prefetch_sources=bool(k.get("prefetch_sources")),
                tma_partials=bool(k.get("tma_partials")), defines=tuple(k.get("defines") or ()),
                stream_k=k.get("stream_k"), fp8_promote=k.get("fp8_promote") or 0, partials=k.get("partials") or "out")


def required_missing(args: dict) -> bool:
    """Whether entry_args lack a field every kernel needs (the schema walk reported it; stages may be left out)."""
    return any(args[f] is None for f in ("dtype", "acc", "bm", "bn", "bk", "consumers", "cluster_m", "cluster_n"))


def checked_args(args: dict) -> dict:
    """The entry_args that check_kernel takes."""
    return {name: v for name, v in args.items() if name in _CHECKED}


def make_kernel(dtype: str, acc: str, bm: int, bn: int, bk: int, stages: int | None,
                consumers: int, cluster_m: int, cluster_n: int, raster_group: int = 8,
                consumer_mode: str = "cooperative", epilogue_n: int = 64, raster: str = "grouped",
                epi_buffers: int | None = None, deferred_stores: bool = True,
                deferred_flags: bool = False, prefetch_sources: bool = False,
                tma_partials: bool = False, defines: tuple = (), stream_k: bool | None = None,
                fp8_promote: int = 0, partials: str = "out") -> KernelSpec:
    """The spec of a checked kernel entry; stages = the largest that fits when omitted. epi_buffers equal
    to the default count is stored as the default (0), so spelling the default out changes no name."""
    if stages is None:
        stages = max_stages(bm, bn, bk, dtype, consumers, consumer_mode, epilogue_n, epi_buffers)
    if epi_buffers == default_epi_buffers(bm, consumers, consumer_mode):
        epi_buffers = None
    return KernelSpec(dtype, acc, bm, bn, bk, stages, consumers, cluster_m, cluster_n, raster_group, consumer_mode,
                      epilogue_n, raster, epi_buffers or 0, deferred_stores, deferred_flags, prefetch_sources,
                      tma_partials, tuple(defines), bool(stream_k), fp8_promote, partials)


_CHECKED = frozenset(inspect.signature(check_kernel).parameters)
