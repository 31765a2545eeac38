"""C under the strict warnings a vendoring project may build with. The public header as callers include it: C99 / C11
and C++11 / C++17, beside CUDA's own headers, a caller's cudaStream_t array and stream passed to tpg_op_run /
tpg_op_run_rank without a cast. The runtime's and the CLI's sources under -Wpedantic (the vendored Makefile passes a
project's CFLAGS on: dlsym's void * cast to a function pointer and a 4681-character literal failed there)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NVCC = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else None)
CUDA_INCLUDE = Path(NVCC).resolve().parent.parent / "include" if NVCC else None
STRICT = ["-fsyntax-only", "-Wall", "-Wextra", "-Wpedantic", "-Werror", f"-I{ROOT / 'runtime/include'}"]

CALLER = r"""
#include <cuda_runtime_api.h>
#include "tpgemm.h"

tpg_status run_on(tpg_op *op, cudaStream_t s0, cudaStream_t s1) {
    cudaStream_t streams[2] = {s0, s1};
    tpg_status st = tpg_op_run(op, streams);
    if (st != TPG_OK) return st;
    const cudaStream_t *const fixed = streams;
    return tpg_op_run_rank(op, 0, fixed[0]);
}
"""

ALONE = '#include "tpgemm.h"\nint count(void) { return tpg_config_count(); }\n'


def compile_source(tmp_path: Path, compiler: str, std: str, text: str, suffix: str, cuda: bool):
    if not shutil.which(compiler):
        pytest.skip(f"no {compiler} on PATH")
    src = tmp_path / f"caller{suffix}"
    src.write_text(text)
    flags = ["-isystem", str(CUDA_INCLUDE)] if cuda else []  # its own warnings are not the header's
    return subprocess.run([compiler, f"-std={std}", *STRICT, *flags, str(src)], capture_output=True, text=True)


@pytest.mark.parametrize("compiler,std,suffix", [("cc", "c99", ".c"), ("cc", "c11", ".c"),
                                                 ("c++", "c++11", ".cpp"), ("c++", "c++17", ".cpp")])
def test_a_callers_streams_pass_without_a_cast(tmp_path, compiler, std, suffix):
    if CUDA_INCLUDE is None or not (CUDA_INCLUDE / "cuda_runtime_api.h").exists():
        pytest.skip("no CUDA toolkit headers (nvcc not found): the caller includes cuda_runtime_api.h")
    r = compile_source(tmp_path, compiler, std, CALLER, suffix, cuda=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("compiler,std,suffix", [("cc", "c99", ".c"), ("c++", "c++11", ".cpp")])
def test_the_header_needs_no_cuda_header(tmp_path, compiler, std, suffix):
    r = compile_source(tmp_path, compiler, std, ALONE, suffix, cuda=False)
    assert r.returncode == 0, r.stderr


def runtime_sources() -> list[tuple[Path, list[str]]]:
    """Each C source of the library (the generated tables too) and the CLI, with the defines of each build that
    compiles it: the plain one, and the trace build's -DTPG_TRACE (every source; trace.c and trace_events.c only
    there)."""
    out = []
    dirs = ("runtime/src", "runtime/src/cli", "generated")
    for src in sorted(f for d in dirs for f in (ROOT / d).glob("*.c")):
        if src.name not in ("trace.c", "trace_events.c"):
            out.append((src, []))
        out.append((src, ["-DTPG_TRACE"]))
    return out


def test_the_runtime_compiles_under_pedantic_warnings():
    if CUDA_INCLUDE is None or not (CUDA_INCLUDE / "cuda_runtime_api.h").exists():
        pytest.skip("no CUDA toolkit headers (nvcc not found): the runtime includes them")
    if not shutil.which("cc"):
        pytest.skip("no cc on PATH")
    includes = [f"-I{ROOT / d}" for d in ("runtime/src", "runtime/src/cli", "templates/kernels", "generated")]
    failed = []
    for src, defines in runtime_sources():
        r = subprocess.run(["cc", "-std=c11", *STRICT, *includes, "-isystem", str(CUDA_INCLUDE), *defines, str(src)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            failed.append(f"{src.relative_to(ROOT)} {' '.join(defines)}:\n{r.stderr[:2000]}")
    assert len(runtime_sources()) > 30 and not failed, "\n".join(failed)
