"""The README's CUDA floor (12.4), checked without installing that toolkit: its pip wheels hold the headers, NVRTC
(the same C++ front end and NVVM as its nvcc) and ptxas, which is what decides whether the kernels keep their
wgmmas in flight. tests/test_toolkit_floor.py runs the floor's checks; for other 12.x releases:

    python3 tests/toolkit_floor.py --versions 12.4,12.8,12.9

What is checked, per release: the C sources compile (gcc -fsyntax-only -Werror) against its headers; every CUDA API
named in the C and CUDA sources exists in its headers (or sits under a CUDART_VERSION guard above it); every kernel
instance of generated/kernels, in the library's build and the trace build, and the runtime's own kernels compile with
its NVRTC and assemble with its ptxas without a C751x warning (serialized wgmmas), a spill or a stack frame
(accumulators in local memory), and, for the releases whose ptxas drops the parameter window's base from
`cvta.param` of a run-time offset (12.4, 12.5: every kernel faulted; templates/kernels/cuda12.h, tpg_stage), with no
such `cvta.param` in its PTX. Not checked: nvcc's host pass over the .cu files (no wheel carries nvcc itself), the
GPU self-test's own instances, reference.cu."""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script too
from tests.ptx_params import indexed_param_cvtas  # noqa: E402
FLOOR = "12.4"
# release -> pinned wheels: runtime (headers), nvrtc (front end), nvcc (ptxas only; the wheel has no nvcc)
VERSIONS = {
    "12.4": ("12.4.127", "12.4.127", "12.4.131"),
    "12.5": ("12.5.82", "12.5.82", "12.5.82"),
    "12.6": ("12.6.77", "12.6.85", "12.6.85"),
    "12.8": ("12.8.90", "12.8.93", "12.8.93"),
    "12.9": ("12.9.79", "12.9.86", "12.9.86"),
}
# NVRTC has no C library headers: the kernels need these few names, and of cuda.h only the tensor map's type
SHIMS = {
    "stdint.h": "#pragma once\ntypedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
                "typedef long long int64_t; typedef unsigned char uint8_t; typedef unsigned short uint16_t;\n"
                "typedef unsigned int uint32_t; typedef unsigned long long uint64_t;\n"
                "typedef unsigned long uintptr_t; typedef long intptr_t;\n"
                "#define UINT32_MAX 0xffffffffu\n#define INT32_MAX 0x7fffffff\n",
    "stddef.h": "#pragma once\ntypedef unsigned long size_t; typedef long ptrdiff_t;\n"
                "#ifndef NULL\n#define NULL 0\n#endif\n",
    # the release's own alignment (12.x: 64, 13: 128; _fill reads it from its cuda.h); nvcc_cuda12.sh passes the
    # host nvcc's, since the parameter block's layout must match the host side's
    "cuda.h": "#pragma once\n#ifndef TPG_SHIM_TENSORMAP_ALIGN\n#define TPG_SHIM_TENSORMAP_ALIGN @ALIGN@\n#endif\n"
              "typedef struct CUtensorMap_st { alignas(TPG_SHIM_TENSORMAP_ALIGN) unsigned long long opaque[16]; }"
              " CUtensorMap;\n",
}
# releases whose ptxas assembles `cvta.param` of a parameter address plus a run-time offset as the bare offset (the
# window's base left out; seen in the SASS of a four-line kernel, 2026-12-05: 12.4 and 12.5 do, 12.6 on do not)
PARAM_BASE_DROPPED = {"12.4", "12.5"}
KERNEL_INCLUDES = ["runtime/include", "runtime/src", "templates/kernels"]
C_INCLUDES = KERNEL_INCLUDES + ["bench", "generated"]
C_SOURCES = ["runtime/src/*.c", "runtime/src/cli/*.c", "generated/*.c", "tests/c/*.c", "tests/gpu/*.c", "bench/*.c"]
C_SKIP = {"bench/lt.c"}  # cuBLASLt's headers come with cuBLAS, not with these wheels
C_DEFINES = {"runtime/src/trace.c": ["-DTPG_TRACE"], "runtime/src/trace_events.c": ["-DTPG_TRACE"]}
API_SOURCES = C_SOURCES + ["runtime/**/*.cu", "templates/**/*.cuh", "templates/**/*.h", "tests/gpu/*.cu",
                           "tests/gpu/*.cuh", "tests/gpu/*.h", "bench/*.cu", "bench/*.h", "runtime/**/*.h"]


class Unavailable(RuntimeError):
    """The wheels could not be fetched (no network, no pip, a host the wheels are not built for): the checks cannot
    run here. TPG_REQUIRE_TOOLKIT_FLOOR=1 (.ci/run sets it) makes the tests fail instead of skipping."""


def wheel_platform():
    """pip's platform tag for this host's wheels; Unavailable where NVIDIA builds none (the NVRTC must load here)."""
    import platform
    arch = platform.machine()
    if sys.platform != "linux" or arch not in ("x86_64", "aarch64"):
        raise Unavailable(f"no CUDA wheels for {sys.platform} / {arch}")
    return f"manylinux2014_{arch}"


def _pip_download(package, version, dest):
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
           "--disable-pip-version-check", "--timeout", "15", "--retries", "2", "--platform", wheel_platform(),
           "--python-version", "3.9", "-d", str(dest), f"{package}=={version}"]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise Unavailable(f"pip download {package}=={version}: {e}") from e
    if res.returncode:
        raise Unavailable(f"pip download {package}=={version} failed: {res.stderr.strip()[-300:]}")
    wheels = sorted(dest.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
    if not wheels:
        raise Unavailable(f"pip download {package}=={version} left no wheel in {dest}")
    return wheels[0]


def _extract(wheel, prefix, dest):
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                out = dest / name[len(prefix):]
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(z.read(name))
                out.chmod(0o755)


def _fill(top, pins):
    """Downloads and extracts one release into the directory top (new, private to this process)."""
    runtime, nvrtc, nvcc = pins
    wheels = top / "wheels"
    wheels.mkdir(parents=True)
    _extract(_pip_download("nvidia-cuda-runtime-cu12", runtime, wheels), "nvidia/cuda_runtime/include/",
             top / "include")
    _extract(_pip_download("nvidia-cuda-nvrtc-cu12", nvrtc, wheels), "nvidia/cuda_nvrtc/lib/", top / "nvrtc")
    _extract(_pip_download("nvidia-cuda-nvcc-cu12", nvcc, wheels), "nvidia/cuda_nvcc/bin/", top / "bin")
    shutil.rmtree(wheels)
    (top / "shim").mkdir()
    align = re.search(r"typedef struct CUtensorMap_st \{\s*#if[^\n]*\n\s*alignas\((\d+)\)",
                      (top / "include" / "cuda.h").read_text())
    if not align:
        raise Unavailable(f"no CUtensorMap alignment found in CUDA {pins[0]}'s cuda.h")
    for name, text in SHIMS.items():
        (top / "shim" / name).write_text(text.replace("@ALIGN@", align.group(1)))


def fetch(version, cache):
    """The release's headers, NVRTC and ptxas under cache/<version>, downloaded once per set of pins (VERSIONS and the
    shims are in the marker: a change fetches again). Filled in a private directory and renamed into place, so an
    interrupted or concurrent run never reads a half-made one. Returns a dict: version, include, nvrtc (the lib
    directory), ptxas, shim (NVRTC's stand-ins for C headers)."""
    pins = VERSIONS[version]
    top = Path(cache) / version
    marker = f"{wheel_platform()} runtime {pins[0]}, nvrtc {pins[1]}, nvcc {pins[2]}; shims {sorted(SHIMS.items())}\n"
    tk = {"version": version, "include": top / "include", "nvrtc": top / "nvrtc", "ptxas": top / "bin" / "ptxas",
          "shim": top / "shim"}
    done = top / "complete"
    if done.exists() and done.read_text() == marker:
        return tk
    Path(cache).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}-", dir=cache))
    try:
        _fill(tmp, pins)
        (tmp / "complete").write_text(marker)
        if done.exists() and done.read_text() == marker:  # a run beside this one finished first: keep its copy
            return tk
        old = Path(tempfile.mkdtemp(prefix=f".{version}-old-", dir=cache))
        if top.exists():
            os.replace(top, old / "stale")  # a reader of the stale one keeps its files until it ends
        os.replace(tmp, top)
        shutil.rmtree(old, ignore_errors=True)
    except OSError:  # another run put its copy in place first: use that one
        if not (done.exists() and done.read_text() == marker):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return tk


def _globs(patterns):
    files = sorted({p for pat in patterns for p in ROOT.glob(pat) if p.is_file()})
    return [p for p in files if str(p.relative_to(ROOT)) not in C_SKIP]


def c_syntax_errors(tk):
    """{file: gcc's first lines} for each C source that does not compile against the release's headers."""
    def one(path):
        rel = str(path.relative_to(ROOT))
        cmd = ["gcc", "-std=c11", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", *C_DEFINES.get(rel, []),
               *[f"-I{ROOT / d}" for d in C_INCLUDES], f"-I{tk['include']}", str(path)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        return rel, "\n".join(res.stderr.splitlines()[:6]) if res.returncode else None
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return {rel: err for rel, err in pool.map(one, _globs(C_SOURCES)) if err}


def _cudart_version(release):
    """CUDART_VERSION of a release: "12.4" -> 12040."""
    major, minor = release.split(".")
    return 1000 * int(major) + 10 * int(minor)


_GUARD = re.compile(r"#\s*if\s+CUDART_VERSION\s*>=\s*(\d+)\s*$")


def _code_only(text, release):
    """The text without comments, string literals and the branches that the release does not compile: `#if
    CUDART_VERSION >= N` with N above its version, up to the #elif / #else / #endif at the same depth (code for newer
    releases, which the other branch stands in for). Other guard forms are kept (a false report, not a miss)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*|\"(\\.|[^\"\\\n])*\"", " ", text, flags=re.S)
    out, skip_depth, depth = [], None, 0
    for line in text.splitlines():
        directive = line.strip()
        if re.match(r"#\s*if", directive):
            depth += 1
            guard = _GUARD.match(directive)
            if skip_depth is None and guard and int(guard.group(1)) > _cudart_version(release):
                skip_depth = depth
                continue
        elif re.match(r"#\s*(elif|else)", directive) and skip_depth == depth:
            skip_depth = None
        elif re.match(r"#\s*endif", directive):
            if skip_depth == depth:
                skip_depth = None
            depth -= 1
        if skip_depth is None:
            out.append(line)
    return "\n".join(out)


# CUDA runtime / driver names: functions (cudaX, cuX), driver types (CUx...), enumerators and macros (CU_), and the
# driver entry points' typedefs (PFN_cuX)
_API_NAME = re.compile(r"\b(?:cuda[A-Z]|cu[A-Z]|CU[a-z_]|PFN_cu[A-Z])[A-Za-z0-9_]*")


def missing_apis(tk, paths=None):
    """{file: [names]}: CUDA runtime / driver names (_API_NAME) that a source (paths, default every C and CUDA source
    of the repository) uses and the release's headers lack."""
    headers = "\n".join(p.read_text(errors="replace") for p in tk["include"].rglob("*.h"))
    known = set(_API_NAME.findall(headers))
    out = {}
    for path in paths or _globs(API_SOURCES):
        names = set(_API_NAME.findall(_code_only(path.read_text(), tk["version"])))
        lacking = sorted(n for n in names if n not in known)
        if lacking:
            out[str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)] = lacking
    return out


def release_ptx(tk, source, ptx, options):
    """source -> ptx through the release's NVRTC (options: -I / -D flags besides the kernels' own includes). Returns
    None, or NVRTC's error text."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(tk["nvrtc"])}
    incs = [f"-I{i}" for i in [tk["shim"], *(ROOT / d for d in KERNEL_INCLUDES), tk["include"]]]
    res = subprocess.run([sys.executable, __file__, "--nvrtc", str(source), str(ptx), *options, *incs], env=env,
                         capture_output=True, text=True)
    return (res.stderr or res.stdout).strip()[-800:] if res.returncode else None


def kernel_report(tk, source, work, defines=()):
    """One kernel instance through the release's NVRTC and ptxas (work: a directory for the PTX; defines: e.g.
    ["TPG_TRACE"], the trace build): {"warnings": [C751x codes], "spills": bytes, "stack": bytes, "indexed_cvta":
    count (indexed_param_cvtas, for a release of PARAM_BASE_DROPPED; else 0), "error": text or None}."""
    ptx = Path(work) / (Path(source).stem + "".join(f"-{d}" for d in defines) + ".ptx")
    error = release_ptx(tk, source, ptx, [f"-D{d}" for d in defines])
    if error:
        return {"warnings": [], "spills": 0, "stack": 0, "indexed_cvta": 0, "error": error}
    indexed = indexed_param_cvtas(ptx.read_text()) if tk["version"] in PARAM_BASE_DROPPED else 0
    res = subprocess.run([str(tk["ptxas"]), "-arch=sm_90a", "-O3", "-v", str(ptx), "-o", os.devnull],
                         capture_output=True, text=True)
    report = res.stdout + res.stderr
    return {"warnings": sorted(set(re.findall(r"\(C75\d\d\)", report))),
            "spills": sum(int(x) for x in re.findall(r"(\d+) bytes spill stores", report)),
            "stack": sum(int(x) for x in re.findall(r"(\d+) bytes stack frame", report)),
            "indexed_cvta": indexed, "error": report.strip()[-800:] if res.returncode else None}


def release_cubin(release, cache, source, ptx, cubin, options, verbose):
    """For tests/gpu/nvcc_cuda12.sh: nvcc's PTX file (ptx) replaced by the release's NVRTC build of source, then
    assembled by the release's ptxas into cubin (-v: its report on stderr, as nvcc's -Xptxas -v). Returns the exit
    status."""
    tk = fetch(release, cache)
    error = release_ptx(tk, source, ptx, options)
    if error:
        sys.stderr.write(f"CUDA {release} NVRTC: {error}\n")
        return 1
    return subprocess.run([str(tk["ptxas"]), "-arch=sm_90a", "-O3", *(["-v"] if verbose else []), str(ptx),
                           "-o", str(cubin)]).returncode


# the builds ninja makes of every instance: the library's and the trace build's (-DTPG_TRACE)
BUILDS = {"": (), " (trace)": ("TPG_TRACE",)}
# the runtime's own kernels (barriers, the one-hop reduce-scatter, transfer flags), once each; reference.cu, the fp32
# check's GEMM, is not among them: its host code needs the C library, which NVRTC lacks
RUNTIME_KERNELS = ["runtime/src/barrier.cu", "runtime/src/one_hop.cu", "runtime/src/transfer_flags.cu"]


def kernel_reports(tk):
    """{instance + build label: kernel_report} for every kernel instance of generated/kernels in each of BUILDS, and
    for RUNTIME_KERNELS (label " (runtime)"; the PTX in a private temporary directory)."""
    sources = sorted((ROOT / "generated" / "kernels").glob("*.cu"))
    jobs = [(s.stem + label, s, defines) for s in sources for label, defines in BUILDS.items()]
    jobs += [(Path(r).stem + " (runtime)", ROOT / r, ()) for r in RUNTIME_KERNELS]
    with tempfile.TemporaryDirectory(prefix="tpg-floor-") as work, \
            concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return dict(zip((name for name, _, _ in jobs),
                        pool.map(lambda job: kernel_report(tk, job[1], work, job[2]), jobs)))


def flagged(reports):
    """The kernel_reports entries that fail the floor: an error, a C751x warning, a spill, a stack frame or an indexed
    `cvta.param`."""
    return {k: r for k, r in reports.items()
            if r["error"] or r["warnings"] or r["spills"] or r["stack"] or r["indexed_cvta"]}


def nvrtc_ptx(source, out, options):
    """Compiles source to PTX for sm_90a with the libnvrtc on LD_LIBRARY_PATH (run in its own process: every 12.x
    NVRTC has the soname libnvrtc.so.12); options: -I / -D flags."""
    import ctypes
    lib = ctypes.CDLL("libnvrtc.so.12")
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), Path(source).read_bytes(), str(source).encode(), 0, None, None):
        sys.exit("nvrtcCreateProgram failed")
    opts = [b"-arch=compute_90a", b"-std=c++17", b"-default-device"] + [o.encode() for o in options]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    if status:
        sys.exit(f"NVRTC: {log.value.decode(errors='replace')[-2000:]}")
    lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
    ptx = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetPTX(prog, ptx)
    Path(out).write_bytes(ptx.value)


def main(argv):
    if argv[:1] == ["--nvrtc"]:
        nvrtc_ptx(argv[1], argv[2], argv[3:])
        return 0
    if argv[:1] == ["--cubin"]:  # --cubin RELEASE CACHE SOURCE PTX CUBIN VERBOSE(0/1) OPTIONS...
        return release_cubin(argv[1], argv[2], argv[3], argv[4], argv[5], argv[7:], argv[6] == "1")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", default=FLOOR, help=f"comma-separated, of {', '.join(VERSIONS)}")
    ap.add_argument("--cache", default=str(ROOT / "build" / "toolkit-floor"))
    args = ap.parse_args(argv)
    bad = 0
    for v in args.versions.split(","):
        if v not in VERSIONS:
            ap.error(f"unknown release {v!r}: one of {', '.join(VERSIONS)}")
        tk = fetch(v, args.cache)
        c_err, apis, kernels = c_syntax_errors(tk), missing_apis(tk), kernel_reports(tk)
        bad_kernels = flagged(kernels)
        print(f"CUDA {v}: C sources {'ok' if not c_err else 'FAIL ' + ', '.join(c_err)}; APIs "
              f"{'ok' if not apis else 'FAIL ' + str(apis)}; kernels {len(kernels) - len(bad_kernels)}/{len(kernels)} "
              "without a C751x warning, spill, stack frame or indexed cvta.param")
        for k, r in bad_kernels.items():
            print(f"  {k}: {r['error'] or ''} {' '.join(r['warnings'])} spills {r['spills']} stack {r['stack']} "
                  f"indexed cvta.param {r['indexed_cvta']}")
        bad += bool(c_err or apis or bad_kernels)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
