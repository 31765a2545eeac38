"""Tier 1 (no GPU): `ninja` builds everything; every kernel compiles for sm_90a without register spills
or serialized wgmma; every C unit test binary passes."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator.ptxas import SPILL
from generator.ptxas import problems as ptxas_problems

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / "build"


def test_ptxas_parser_flags_spills_and_serialization():
    clean = ("ptxas info    : Used 168 registers, used 1 barriers\n"
             "ptxas info    : 0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n")
    assert ptxas_problems(clean) == []
    assert ptxas_problems("    8 bytes stack frame, 8 bytes spill stores, 0 bytes spill loads")
    assert ptxas_problems("    0 bytes stack frame, 0 bytes spill stores, 4 bytes spill loads")
    assert ptxas_problems("ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions "
                          "are serialized due to insufficient register resources")
    assert ptxas_problems("ptxas warning : (C7511) wgmma serialized")


@pytest.fixture(scope="module")
def build():
    missing = [tool for tool in ("ninja", "nvcc") if shutil.which(tool) is None
               and not (tool == "nvcc" and Path("/usr/local/cuda/bin/nvcc").exists())]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not found (PATH, /usr/local/cuda/bin); the build needs both "
                    "(CUDA 12.4+ for sm_90a; pip install -r requirements.txt brings ninja)")
    result = subprocess.run(["ninja", "-C", str(ROOT)], capture_output=True, text=True)
    return result


def test_ninja_builds_everything(build):
    assert build.returncode == 0, f"ninja failed:\n{build.stdout[-8000:]}\n{build.stderr[-4000:]}"
    assert (BUILD / "libtpgemm.a").exists()
    assert (BUILD / "tpgemm").exists()


def test_kernels_do_not_spill_or_serialize(build):
    assert build.returncode == 0, "the build failed; see test_ninja_builds_everything"
    # The reports of the kernels generated now (build/ may still hold those of older instances).
    kernels = sorted((ROOT / "generated" / "kernels").glob("*.cu"))
    assert kernels, "no kernel instances under generated/kernels"
    # the shipped objects and the trace build's (-DTPG_TRACE, build/trace/tpgemm): both must stay clean
    reports = [BUILD / "generated" / sub / f"{k.stem}.o.ptxas.txt" for sub in ("kernels", "trace/kernels")
               for k in kernels]
    bad = {}
    for report in reports:
        text = report.read_text()
        assert SPILL.search(text), f"{report.name}: no spill line; was it compiled with -Xptxas -v?"
        problems = ptxas_problems(text)
        if problems:
            bad[str(report.relative_to(BUILD))] = problems
    assert not bad, "ptxas reports spills or serialized wgmma:\n" + "\n".join(
        f"{name}:\n  " + "\n  ".join(lines) for name, lines in bad.items())


def c_tests():
    # Every tests/c/test_<x>.c is a unit test binary build/tests/test_<x> (none may be forgotten).
    return sorted(p.stem for p in (ROOT / "tests" / "c").glob("test_*.c"))


@pytest.mark.parametrize("name", c_tests())
def test_c_unit_test_passes(build, name):
    assert build.returncode == 0, "the build failed; see test_ninja_builds_everything"
    binary = BUILD / "tests" / name
    assert binary.exists(), f"{binary} was not built"
    result = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, f"{name} failed:\n{result.stdout}\n{result.stderr}"
    assert re.search(r"^\d+ passed, 0 failed$", result.stdout, re.MULTILINE), result.stdout


EMPTY_TABLE = r"""
#include <stdio.h>
#include "tpgemm.h"
const tpg_dispatch_entry tpg_dispatch[] = {{.model = ""}}; /* the generator's table of no rows */
const int tpg_num_dispatch = 0;
int main(void) {
    tpg_dispatch_entry e;
    printf("%d %s\n", (int)tpg_dispatch_find("llama3-70b", "qkv", 1, 0, 0, TPG_DTYPE_BF16, NULL, 2, &e),
           tpg_last_error(NULL));
    return 0;
}
"""


def test_a_miss_in_an_empty_dispatch_table_names_no_row(build, tmp_path):
    """The library of a schedules file without models: or tuned: (vendor --config FILE): no nearest row to name, and
    the file it came from need not be schedules.yaml. Linked against build/libtpgemm.a, whose generated table the
    program's own replaces."""
    from generator.vendor import CUDA_LIBS
    assert build.returncode == 0, "the build failed; see test_ninja_builds_everything"
    cuda = Path(shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc").resolve().parent.parent
    (tmp_path / "empty.c").write_text(EMPTY_TABLE)
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", f"-I{ROOT}/runtime/include", str(tmp_path / "empty.c"),
                         str(BUILD / "libtpgemm.a"), f"-L{cuda}/lib64", *CUDA_LIBS.split(), "-o",
                         str(tmp_path / "empty")], capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    out = subprocess.run([str(tmp_path / "empty")], capture_output=True, text=True, timeout=60).stdout
    assert out == ("2 no dispatch row for model llama3-70b, layer qkv, dtype bf16, tp 2: the table is empty (the "
                   "schedules file it was generated from has no models: or tuned: entries)\n"), out


# Instances the kernel headers accept that no shipped config uses today: fp32 outputs (TPG_CD_DTYPE 4, the
# fp32-partial path), 3 cooperative consumers, cooperative_n and the opt-in ping-pong knobs. Deferred stores must stay out of both (nothing to pack;
# no registers to spare), so each must still compile with 0 spills. (name, -D macros)
HEADER_ONLY = [
    # the promoting 128x160 with deferred stores of 16 held registers (an experiment's macro: promote_tiles.patch)
    ("fp8_promote_160_deferred", "-DTPG_AB_DTYPE=2 -DTPG_CD_DTYPE=0 -DTPG_BK=128 -DTPG_BM=128 -DTPG_BN=160 "
                                 "-DTPG_STAGES=5 -DTPG_CONSUMERS=2 -DTPG_EPI_CHUNK_BYTES=64 -DTPG_FP8_PROMOTE=8 "
                                 "-DTPG_DIAG_DEFER_PAST_144=1 -DTPG_SMEM_BYTES=202752 -DTPG_CLUSTER_M=1 "
                                 "-DTPG_CLUSTER_N=1"),
    ("fp32_out_coop", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=4 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=4 -DTPG_CONSUMERS=2 "
                      "-DTPG_SMEM_BYTES=200000 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("three_consumers", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=192 -DTPG_BN=128 -DTPG_STAGES=3 -DTPG_CONSUMERS=3 "
                        "-DTPG_SMEM_BYTES=223232 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    # cooperative_n 192x192 (the self-test's sn192) and in a cluster: 144 accumulators + 16 deferred
    # registers, at 240 and at a cluster's 232 per thread
    ("split_n_1x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=192 -DTPG_BN=192 -DTPG_STAGES=4 -DTPG_CONSUMERS=2 "
                    "-DTPG_CONSUMER_MODE=2 -DTPG_EPI_CHUNK_BYTES=64 -DTPG_EPI_BUFFERS=3 -DTPG_SMEM_BYTES=223232 "
                    "-DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("split_n_2x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=192 -DTPG_BN=192 -DTPG_STAGES=4 -DTPG_CONSUMERS=2 "
                    "-DTPG_CONSUMER_MODE=2 -DTPG_EPI_CHUNK_BYTES=64 -DTPG_EPI_BUFFERS=3 -DTPG_SMEM_BYTES=223232 "
                    "-DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    # cooperative_n 128x320 in a 2x1 cluster (self-test w320): two m64n160 per warpgroup, 160 accumulators at
    # a cluster's 232 registers, so no deferred stores (gemm_sm90.cuh turns them off above 144)
    ("split_n_320_2x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=320 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                        "-DTPG_CONSUMER_MODE=2 -DTPG_EPI_CHUNK_BYTES=64 -DTPG_SMEM_BYTES=206848 -DTPG_CLUSTER_M=2 "
                        "-DTPG_CLUSTER_N=1"),
    ("split_n_320_acc_f16", "-DTPG_AB_DTYPE=1 -DTPG_CD_DTYPE=1 -DTPG_BM=128 -DTPG_BN=320 -DTPG_STAGES=3 "
                            "-DTPG_CONSUMERS=2 -DTPG_CONSUMER_MODE=2 -DTPG_EPI_CHUNK_BYTES=64 -DTPG_ACC_F16=1 "
                            "-DTPG_SMEM_BYTES=206848 -DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    # `raster: hilbert` (TPG_RASTER 1, the walk from a table; self-test c2x1h): no shipped config uses it, and
    # scheduler.cuh's table read once broke its compile unseen (a device-only __ldg in a __host__ function)
    ("raster_hilbert_2x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=4 "
                           "-DTPG_CONSUMERS=2 -DTPG_RASTER=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=2 "
                           "-DTPG_CLUSTER_N=1"),
    # ping-pong with both opt-in reduce-scatter knobs (deferred_flags, prefetch_sources; self-test pp128both)
    ("pingpong_rs_knobs", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 -DTPG_CONSUMERS=2 "
                          "-DTPG_CONSUMER_MODE=1 -DTPG_PP_DEFER_FLAGS=1 -DTPG_PREFETCH_SOURCES=1 -DTPG_SMEM_BYTES=231424 "
                          "-DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    # ping-pong with TMA-loaded partials (tma_partials; self-test pp128tma) and deferred flags
    ("pingpong_tma_partials", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 "
                              "-DTPG_CONSUMERS=2 -DTPG_CONSUMER_MODE=1 -DTPG_PP_DEFER_FLAGS=1 -DTPG_TMA_PARTIALS=1 "
                              "-DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    # TMA-loaded partials in a cooperative kernel's deferred epilogue (the shipped _rs kernels; self-test wide3tma)
    # in a 2x1 cluster (16 held registers) and in the trace build: combinations no shipped kernel compiles
    ("cluster_tma_partials", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 "
                             "-DTPG_CONSUMERS=2 -DTPG_EPI_BUFFERS=4 -DTPG_TMA_PARTIALS=1 -DTPG_SMEM_BYTES=215040 "
                             "-DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    # f16 accumulation (acc: f16; self-tests fp16h, pp128h) in a ping-pong and in a cluster pair
    ("pingpong_acc_f16", "-DTPG_AB_DTYPE=1 -DTPG_CD_DTYPE=1 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 -DTPG_CONSUMERS=2 "
                         "-DTPG_CONSUMER_MODE=1 -DTPG_ACC_F16=1 -DTPG_TMA_PARTIALS=1 -DTPG_SMEM_BYTES=231424 "
                         "-DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("cluster_acc_f16", "-DTPG_AB_DTYPE=1 -DTPG_CD_DTYPE=1 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=4 -DTPG_CONSUMERS=2 "
                        "-DTPG_ACC_F16=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    # the opt-in stream-K tail (stream_k: true) in the shipped wide kernel (3 stages, 5 buffers, held units),
    # in the trace build (more state), and with f16 accumulation: no shipped kernel compiles it any more
    ("stream_k_wide", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                      "-DTPG_EPI_BUFFERS=5 -DTPG_STREAM_K=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("stream_k_wide_trace", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                            "-DTPG_EPI_BUFFERS=5 -DTPG_STREAM_K=1 -DTPG_TRACE -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 "
                            "-DTPG_CLUSTER_N=1"),
    # the stagger diagnostic (defines: [TPG_DIAG_STAGGER_NS=...], docs/PERF_NOTES.md) must keep compiling clean
    ("diag_stagger", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                     "-DTPG_EPI_BUFFERS=5 -DTPG_DIAG_STAGGER_NS=11000 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 "
                     "-DTPG_CLUSTER_N=1"),
    # the time-decomposition diagnostics (defines: TPG_DIAG_NO_MMA / NO_LOAD / NO_EPI / NO_STORE, docs/PERF_NOTES.md) in the
    # wide kernel, the 2x1 pair and the ping-pong kernel: they must keep compiling clean
    ("diag_no_epi_wide", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                         "-DTPG_EPI_BUFFERS=5 -DTPG_DIAG_NO_EPI=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("diag_no_mma_load_wide", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 "
                              "-DTPG_CONSUMERS=2 -DTPG_EPI_BUFFERS=5 -DTPG_DIAG_NO_MMA=1 -DTPG_DIAG_NO_LOAD=1 "
                              "-DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("diag_no_load_c2x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=4 -DTPG_CONSUMERS=2 "
                          "-DTPG_DIAG_NO_LOAD=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    ("diag_no_store_wide", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                           "-DTPG_EPI_BUFFERS=5 -DTPG_DIAG_NO_STORE=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 "
                           "-DTPG_CLUSTER_N=1"),
    ("diag_no_epi_pingpong", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 -DTPG_CONSUMERS=2 "
                             "-DTPG_CONSUMER_MODE=1 -DTPG_DIAG_NO_EPI=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 "
                             "-DTPG_CLUSTER_N=1"),
    # the pull prologue left out (defines: [TPG_DIAG_NO_PULLS=1]: the prologue's A/B, BENCHMARKS.md local GEMM)
    ("diag_no_pulls_pingpong", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 "
                               "-DTPG_CONSUMERS=2 -DTPG_CONSUMER_MODE=1 -DTPG_TMA_PARTIALS=1 -DTPG_DIAG_NO_PULLS=1 "
                               "-DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    # 64-byte ring slots (bk: 32, 64B swizzle; self-tests k32, c2x1k32): the wide kernel with 6 stages, and the
    # 2x1 cluster with 8 stages in the memory of 4
    ("bk32_wide", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_BK=32 -DTPG_STAGES=6 "
                  "-DTPG_CONSUMERS=2 -DTPG_EPI_BUFFERS=5 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    ("bk32_c2x1", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=256 -DTPG_BK=32 -DTPG_STAGES=8 "
                  "-DTPG_CONSUMERS=2 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=2 -DTPG_CLUSTER_N=1"),
    ("stream_k_acc_f16", "-DTPG_AB_DTYPE=1 -DTPG_CD_DTYPE=1 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_CONSUMERS=2 "
                         "-DTPG_EPI_BUFFERS=5 -DTPG_STREAM_K=1 -DTPG_ACC_F16=1 -DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 "
                         "-DTPG_CLUSTER_N=1"),
    # spread pushes (TPG_SPREAD_PUSHES, an experiment: self-tests pp128sp, pp128spq) in the trace build, with the phase
    # sums; their extra state sits next to the held units' (the self-test builds it without TPG_TRACE)
    ("spread_pushes_trace", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 "
                            "-DTPG_CONSUMERS=2 -DTPG_CONSUMER_MODE=1 -DTPG_PP_DEFER_FLAGS=1 -DTPG_TMA_PARTIALS=1 "
                            "-DTPG_SPREAD_PUSHES=1 -DTPG_DIAG_PHASES=1 -DTPG_TRACE -DTPG_SMEM_BYTES=231424 "
                            "-DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
    # the --rs-far diagnostic (self-test pp128tdr): row stores
    ("row_stores", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 -DTPG_CONSUMERS=2 "
                   "-DTPG_CONSUMER_MODE=1 -DTPG_PP_DEFER_FLAGS=1 -DTPG_TMA_PARTIALS=1 -DTPG_DIAG_ROW_STORES=1 "
                   "-DTPG_SMEM_BYTES=231424 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"),
]


def compile_instance(tmp_path, name, flags, src=ROOT / "tests/gpu/selftest_instance.cu"):
    """nvcc on a self-test instance (or a file that includes one) for sm_90a with the headers' include paths and the
    instance's kernel / entry names, plus flags (-D set, -O3, -Xptxas -v, ...)."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    cmd = [nvcc, "-gencode", "arch=compute_90a,code=sm_90a", "-std=c++17",
           "-I", str(ROOT / "templates/kernels"), "-I", str(ROOT / "runtime/include"), "-I", str(ROOT / "runtime/src"),
           "-I", str(ROOT / "tests/gpu"), f"-DTPG_KERNEL_NAME=k_{name}", f"-DTPG_ENTRY_NAME=k_{name}_entry",
           *flags, "-c", str(src), "-o", str(tmp_path / f"{name}.o")]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name,defines", HEADER_ONLY, ids=[h[0] for h in HEADER_ONLY])
def test_header_only_instances_compile_clean(build, tmp_path, name, defines):
    r = compile_instance(tmp_path, name, ["-O3", "-Xptxas", "-v", *([] if "TPG_BK=" in defines else ["-DTPG_BK=64"]),
                                          *defines.split()])
    assert r.returncode == 0, f"{name} does not compile:\n{r.stderr[-4000:]}"
    assert SPILL.search(r.stderr) and not ptxas_problems(r.stderr), r.stderr[-4000:]


# Instances the headers must refuse, with the static_assert that says why: spread pushes defer their tile's flag, so
# they need ping-pong with deferred flags (gemm_sm90.cuh)
REFUSED = [
    ("spread_pushes_without_deferred_flags", "-DTPG_CONSUMER_MODE=1 -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=5 "
     "-DTPG_TMA_PARTIALS=1 -DTPG_SPREAD_PUSHES=1", "TPG_SPREAD_PUSHES: a ping-pong 1x1 choice"),
    ("spread_pushes_cooperative", "-DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 -DTPG_EPI_BUFFERS=5 -DTPG_SPREAD_PUSHES=1",
     "TPG_SPREAD_PUSHES: a ping-pong 1x1 choice"),
]


@pytest.mark.parametrize("name,defines,message", REFUSED, ids=[r[0] for r in REFUSED])
def test_header_only_instances_refused(build, tmp_path, name, defines, message):
    r = compile_instance(tmp_path, name, ["-O3", "-DTPG_BK=64", "-DTPG_AB_DTYPE=0", "-DTPG_CD_DTYPE=0",
                                          "-DTPG_CONSUMERS=2", "-DTPG_SMEM_BYTES=231424", "-DTPG_CLUSTER_M=1",
                                          "-DTPG_CLUSTER_N=1", *defines.split()])
    assert r.returncode != 0 and message in r.stderr, f"{name} compiled or failed otherwise:\n{r.stderr[-4000:]}"


# The deferred-stores rule as the kernel decides it (gemm_sm90.cuh: kDeferStores, TPG_DEFER_REGS), per tile: the
# accumulators and fp8_promote's second set counted together. (name, -D set, defers, held registers if it defers)
_FP8 = "-DTPG_AB_DTYPE=2 -DTPG_CD_DTYPE=0 -DTPG_BK=128 -DTPG_CONSUMERS=2 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1"
DEFER_RULE = [
    ("wide_bf16", "-DTPG_AB_DTYPE=0 -DTPG_CD_DTYPE=0 -DTPG_BK=64 -DTPG_BM=128 -DTPG_BN=256 -DTPG_STAGES=3 "
                  "-DTPG_CONSUMERS=2 -DTPG_EPI_BUFFERS=5 -DTPG_CLUSTER_M=1 -DTPG_CLUSTER_N=1", True, 32),
    ("fp8_promote_128x128", f"{_FP8} -DTPG_BM=128 -DTPG_BN=128 -DTPG_STAGES=6 -DTPG_FP8_PROMOTE=8", True, 32),
    # 80 + 80: with 32 held registers it spilled (b0eec6e), with 16 it compiles clean but has not been timed; the
    # shipped form keeps its stores in its own epilogue (docs/perf_notes/2026-12-05-i.md)
    ("fp8_promote_128x160", f"{_FP8} -DTPG_BM=128 -DTPG_BN=160 -DTPG_STAGES=5 -DTPG_EPI_CHUNK_BYTES=64 "
                            "-DTPG_FP8_PROMOTE=8", False, 0),
    ("fp8_128x160_no_promotion", f"{_FP8} -DTPG_BM=128 -DTPG_BN=160 -DTPG_STAGES=5 -DTPG_EPI_CHUNK_BYTES=64",
     True, 32),
    ("fp8_promote_128x160_diag_defer", f"{_FP8} -DTPG_BM=128 -DTPG_BN=160 -DTPG_STAGES=5 -DTPG_EPI_CHUNK_BYTES=64 "
                                       "-DTPG_FP8_PROMOTE=8 -DTPG_DIAG_DEFER_PAST_144=1", True, 16),
]


@pytest.mark.parametrize("name,defines,defers,held", DEFER_RULE, ids=[d[0] for d in DEFER_RULE])
def test_deferred_stores_count_the_promoted_sums(build, tmp_path, name, defines, defers, held):
    """The front end alone (-fdevice-syntax-only) evaluates the rule: a file that includes the self-test instance
    asserts kDeferStores and TPG_DEFER_REGS."""
    src = tmp_path / f"{name}.cu"
    src.write_text(f'#include "{ROOT / "tests/gpu/selftest_instance.cu"}"\n'
                   f'static_assert(kDeferStores == {"true" if defers else "false"}, "kDeferStores");\n'
                   + (f'static_assert(TPG_DEFER_REGS == {held}, "TPG_DEFER_REGS");\n' if defers else ""))
    r = compile_instance(tmp_path, name, ["-fdevice-syntax-only", "-DTPG_SMEM_BYTES=231424", *defines.split()], src)
    assert r.returncode == 0, f"{name}: the rule disagrees or the file does not compile:\n{r.stderr[-3000:]}"
