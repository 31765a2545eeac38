"""The C unit tests, the CLI and build/libtpgemm.so rebuilt under AddressSanitizer and UndefinedBehaviorSanitizer,
from ninja's own commands (`ninja -t compdb cc`, `ninja -t commands`), so that the sanitized build follows build.ninja
without a second list of sources: every object gcc compiles (rule cc) for one of these targets is compiled again with
SANITIZE into build/sanitize/, the same path under it; the objects nvcc compiles (the kernels, the device-side .cu
files, which no sanitizer instruments) are linked as ninja built them. Run after `ninja` (tests/test_sanitizers.py)."""
import json
import os
import re
import shlex
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = "build/sanitize/"
# -fno-sanitize-recover: an undefined behaviour ends the process (exit status non-zero) instead of printing and going
# on. Warnings stay the plain build's business (tests/test_build.py, tests/test_strict_c.py): the sanitizers change
# what gcc's flow analysis sees, and a warning of that kind must not hide the run.
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]
NO_WERROR = ["-Wno-error"]
# protect_shadow_gap=0: the CUDA runtime maps memory where ASan keeps its gap (on a GPU machine).
ASAN_OPTIONS = "protect_shadow_gap=0:abort_on_error=0:exitcode=86"
UBSAN_OPTIONS = "print_stacktrace=1:halt_on_error=1"
# the stand-in NCCL libraries test_nccl_loader loads from its own folder
STUBS = ("libnccl_stub.so", "libnccl_stub_old.so", "libnccl_stub_nosend.so", "libnccl_stub_216.so")


def sanitized(path: str) -> str:
    """build/x/y.o -> build/sanitize/x/y.o."""
    return OUT + path[len("build/"):]


def test_targets(build_ninja: str, prefix: str) -> list[str]:
    """build.ninja's link targets build/tests/<prefix><x>: the C unit tests (test_), the GPU tests (gpu_)."""
    return sorted(re.findall(rf"^build (build/tests/{prefix}\w+): link ", build_ninja, re.MULTILINE))


def last_command(target: str) -> list[str]:
    """The command ninja runs to make `target` itself (the last line of its chain)."""
    out = subprocess.run(["ninja", "-t", "commands", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return shlex.split(out.stdout.strip().splitlines()[-1])


def compile_commands() -> dict[str, list[str]]:
    """Each object that rule cc builds -> its gcc command, retargeted: output under build/sanitize/, no depfile,
    SANITIZE and NO_WERROR appended."""
    db = json.loads(subprocess.run(["ninja", "-t", "compdb", "cc"], cwd=ROOT, capture_output=True, text=True,
                                   check=True).stdout)
    commands = {}
    for entry in db:
        args = shlex.split(entry["command"])
        out = args[args.index("-o") + 1]
        i = args.index("-MF")
        args = [a for a in args[:i] + args[i + 2:] if a != "-MMD"]
        args[args.index("-o") + 1] = sanitized(out)
        commands[out] = args + SANITIZE + NO_WERROR
    return commands


def retarget(args: list[str], objects: dict) -> list[str]:
    """A link or archive command with the gcc-built objects, the archive and the output taken from build/sanitize/."""
    out = args.index("-o") + 1 if "-o" in args else None
    return [sanitized(a) if a in objects or a == "build/libtpgemm.a" or i == out else a for i, a in enumerate(args)]


def run_checked(args: list[str]) -> None:
    result = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(args)}\nfailed:\n{result.stdout[-3000:]}{result.stderr[-3000:]}")


def archive_command(objects: dict) -> list[str]:
    """build/libtpgemm.a's `ar rcs` (ninja's `rm -f $out && ar ...`), retargeted."""
    args = last_command("build/libtpgemm.a")
    return retarget(args[args.index("&&") + 1:], objects)


def needed_objects(links: list[list[str]], archive: list[str], objects: dict) -> set[str]:
    """The gcc-built objects the links name, directly or through the archive."""
    named = {a for args in links + [archive] for a in args}
    return {out for out in objects if out in named or sanitized(out) in named}


def link_flags(target: str) -> list[str]:
    """An executable takes ASan's and UBSan's runtimes in (it then runs where gcc's libasan differs or is missing: a
    GPU machine); the shared library cannot, so the process that loads it preloads them."""
    return SANITIZE[:1] + ([] if target.endswith(".so") else ["-static-libasan", "-static-libubsan"])


def build(gpu: bool = False) -> dict[str, Path]:
    """Builds the sanitized C unit tests, CLI and shared library, and with `gpu` the GPU tests (for a GPU machine:
    bench/results/experiments/call_sanitized_host.sh); returns target (as build.ninja names it) -> the sanitized
    binary."""
    objects = compile_commands()
    build_ninja = (ROOT / "build.ninja").read_text()
    targets = test_targets(build_ninja, "test_") + (test_targets(build_ninja, "gpu_") if gpu else [])
    targets += ["build/tpgemm", "build/libtpgemm.so"]
    links = [retarget(last_command(t), objects) + link_flags(t) for t in targets]
    archive = archive_command(objects)
    needed = needed_objects(links, archive, objects)
    for out in needed:
        (ROOT / sanitized(out)).parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(run_checked, [objects[out] for out in sorted(needed)]))
    (ROOT / sanitized("build/libtpgemm.a")).unlink(missing_ok=True)
    run_checked(archive)
    for args in links:
        (ROOT / args[args.index("-o") + 1]).parent.mkdir(parents=True, exist_ok=True)
        run_checked(args)
    for stub in STUBS:
        shutil.copy2(ROOT / "build" / "tests" / stub, ROOT / sanitized(f"build/tests/{stub}"))
    return {t: ROOT / sanitized(t) for t in targets}
