"""What the GPU test files share (tests/test_gpu.py): how many GPUs are visible and what a case needs, the build
they run, and how a GPU test binary is run and checked. No test of its own."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def epoch_runs() -> tuple:
    """(over NCCL, over the peer transport): how many schedules gpu_epochs runs a rank, read from its source
    (tests/gpu/test_epochs.c, schedules_run) so that a schedule added there cannot leave these counts stale."""
    src = (ROOT / "tests/gpu/test_epochs.c").read_text()
    m = re.search(r"schedules_run\(const options \*o\) \{ return o->nccl \? (\d+) : (\d+); \}", src)
    assert m, "tests/gpu/test_epochs.c: schedules_run() not found in its expected one-line form"
    return int(m.group(1)), int(m.group(2))


EPOCH_RUNS_NCCL, EPOCH_RUNS = epoch_runs()


def visible_gpus() -> int:
    """Number of NVIDIA GPUs nvidia-smi lists (0 without a driver)."""
    if not shutil.which("nvidia-smi"):
        return 0
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))


def needs_gpus(n: int):
    """Skip a case that needs n GPUs when fewer are visible - unless TPG_REQUIRE_GPUS (tests/gpu/run_all.sh sets
    it on the device machine) says that this machine has at least n: then the case fails, so that a driver
    hiccup cannot turn the 2-GPU cases into a passing run of skips."""
    have = visible_gpus()
    required = int(os.environ.get("TPG_REQUIRE_GPUS") or 0)
    if have < n <= required:  # run it: the programs then exit 3 ("too few devices") and the case fails
        return pytest.mark.skipif(False, reason="")
    return pytest.mark.skipif(have < n, reason=f"needs {n} NVIDIA GPUs, {have} visible "
                                               "(GPU tiers run on the device machine: tests/gpu/)")


def skip_unless_required(reason: str):
    """Skips for a missing tool, except on the device machine (TPG_REQUIRE_GPUS set), which has every tool these
    cases need (ninja, torch, NCCL through torch's wheel): there a skip would read as a pass, so the case fails."""
    if os.environ.get("TPG_REQUIRE_GPUS"):
        pytest.fail(f"{reason}, and TPG_REQUIRE_GPUS says this is the device machine, which must run this case")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def built():
    if not shutil.which("ninja"):
        skip_unless_required("ninja is not installed")
    # build/libtpgemm.so: tests/gpu/torch_capture.py loads it (bench/tpgemm_lib.py); a fresh machine has none
    subprocess.run(["ninja", "build/tests/gpu_timeout", "build/tests/gpu_multiprocess", "build/tests/gpu_pdl_chain",
                    "build/tests/gpu_epochs", "build/tests/gpu_transfer_flags",
                    "build/tests/gpu_barrier_epochs", "build/tpgemm", "build/libtpgemm.so",
                    "build/trace/tests/gpu_timeout"], cwd=ROOT, check=True)


def shared_env(env=None) -> dict:
    """The environment of a run whose ranks share a GPU: 32 hardware queues, which copy-engine partials need there
    (runtime/src/ce_partials.c, TPG_CE_SHARED_CONNECTIONS; the op is refused without). Every shared-device run gets
    it, whichever configs carry them (the reduce-scatter defaults may: bench/x2/ce_default.py)."""
    return {**(env if env is not None else os.environ), "CUDA_DEVICE_MAX_CONNECTIONS": "32"}


def run_passing(args: list[str], timeout: int, env=None, where: str = "build/tests") -> str:
    """Runs a GPU test binary under `where`; asserts exit 0 and returns its stdout. Runs with ranks sharing a GPU
    get 32 queues (shared_env): copy-engine partials need them there, and gpu_epochs and gpu_timeout run them."""
    if "--share-device" in args:
        env = shared_env(env)
    try:
        out = subprocess.run([str(ROOT / where / args[0]), *args[1:]], cwd=ROOT, capture_output=True,
                             text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as e:  # a hang: what it printed says where
        pytest.fail(f"{args[0]} still ran after {timeout} s:\n{e.stdout or ''}\n{e.stderr or ''}")
    print(out.stdout, out.stderr)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout
