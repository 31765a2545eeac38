"""What the tuner's runs are timed with, asked of the machine: the compiler (build.ninja's nvcc) and the GPUs (the
CUDA driver in a child process, bounded; nvidia-smi's list where the driver cannot say). Its results key the tuner's
state and head the tuned file (tune.state_key, tune.tuned_text)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def release_line(version: str) -> str:
    """The line of nvcc's --version text that names its release (the first line where none does)."""
    lines = version.splitlines() or [""]
    return next((line for line in lines if "release" in line), lines[0]).strip()


def compiler_version(root: Path) -> str:
    """build.ninja's nvcc's `--version` text, or why there is none: a new compiler builds other code from the same
    sources, so it takes part in the fingerprint too. Asked with subprocess.run even when a test passes a fake
    runner: the text only names the compiler."""
    text = (root / "build.ninja").read_text() if (root / "build.ninja").is_file() else ""
    m = re.search(r"^nvcc = (\S+)$", text, re.M)
    if not m:
        return "no nvcc line in build.ninja"
    try:
        r = subprocess.run([m.group(1), "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{m.group(1)}: {e}"
    return r.stdout.strip() if r.returncode == 0 else f"{m.group(1)}: exit {r.returncode}"


def smi_gpus(runner) -> list[str] | None:
    """The GPUs' names as `nvidia-smi -L` lists them (MIG lines aside), or None where it cannot say (not installed, as
    in containers without the driver's utilities, or failing)."""
    try:
        r = runner(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    return [re.sub(r"^GPU \d+: | \(UUID: [^)]*\)$", "", line).strip() for line in r.stdout.splitlines()
            if line.startswith("GPU ")]


def gpus_visible(smi: list[str] | None) -> tuple[int | None, str]:
    """(how many GPUs, who said so), checked before the candidates are built: nvidia-smi's list (smi_gpus), or where
    it cannot say the CUDA driver's count; (None, ...) when neither can: build/tpgemm says then."""
    if smi is not None:
        return len(smi), "nvidia-smi lists"
    return driver_gpus(), "the CUDA driver counts"


def gpu_identity(devices: list[tuple[str, int]], smi: list[str] | None, tp: int) -> str:
    """What the runs are timed on, for the state's key and the tuned file's header: the name and SM count of the first
    tp devices (those build/tpgemm takes without --devices) as the CUDA driver shows them (CUDA_VISIBLE_DEVICES
    applies, as in the runs), else nvidia-smi's names (no SM count), else "unknown GPU"."""
    named = [f"{name} ({sms} SMs)" for name, sms in devices[:tp]] or (smi or [])[:tp]
    if not named:
        return "unknown GPU"
    return f"{len(named)}x {named[0]}" if len(set(named)) == 1 else ", ".join(named)


# Each CUDA device's SM count and name through libcuda, one "SMS NAME" line each, in a child process as DRIVER_COUNT:
# nothing without the driver library, a device or a driver that answers
DRIVER_DEVICES = """
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    raise SystemExit
count, dev, sms, name = ctypes.c_int(0), ctypes.c_int(0), ctypes.c_int(0), ctypes.create_string_buffer(256)
if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0:
    for i in range(count.value):
        if (cuda.cuDeviceGet(ctypes.byref(dev), i) or cuda.cuDeviceGetName(name, 256, dev)
                or cuda.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev)):  # CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
            break
        print(sms.value, name.value.decode(errors="replace"))
"""


def driver_devices() -> list[tuple[str, int]]:
    """(name, SM count) of each device the CUDA driver shows, in its order; [] where it cannot say (at most 60 s)."""
    try:
        r = subprocess.run([sys.executable, "-c", DRIVER_DEVICES], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    pairs = [line.partition(" ")[::2] for line in r.stdout.splitlines()] if r.returncode == 0 else []
    return [(name.strip(), int(sms)) for sms, name in pairs if sms.isdigit() and name.strip()]


# cuDeviceGetCount through libcuda, in a child process so that a driver that hangs in cuInit is bounded: prints the
# count, 0 without the driver library or with no device (CUDA_ERROR_NO_DEVICE), or "?" when the driver fails otherwise
DRIVER_COUNT = """
import ctypes
try:
    cuda = ctypes.CDLL("libcuda.so.1")
except OSError:
    print(0)
    raise SystemExit
count, rc = ctypes.c_int(0), cuda.cuInit(0)
print(0 if rc == 100 else count.value if rc == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 else "?")
"""


def driver_gpus() -> int | None:
    """The CUDA driver's device count (a second; at most 60), or None when it cannot say."""
    try:
        r = subprocess.run([sys.executable, "-c", DRIVER_COUNT], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = r.stdout.strip()
    return int(out) if r.returncode == 0 and out.isdigit() else None
