"""Tier 1 (no GPU): the C unit tests, the CLI's tests and the ctypes binding's tests again, on a build under
AddressSanitizer (with LeakSanitizer where the machine lets it run) and UndefinedBehaviorSanitizer
(tests/sanitized_build.py): an out-of-bounds read, a use after free, a leak or a signed overflow in the runtime, the
generated tables or the CLI ends the run with the sanitizer's report, where the plain build would pass by luck."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import sanitized_build
from tests.conftest import ROOT

PROBES = {  # what each sanitizer must report on a two-line program: the negative controls of this file
    "heap-buffer-overflow": "#include <stdlib.h>\nint main(void) { volatile char *p = malloc(8); int r = p[8]; "
                            "free((void *)p); return r; }\n",
    "signed integer overflow": "#include <limits.h>\nint main(int c, char **v) { (void)v; volatile int x = INT_MAX; "
                               "return x + c > 0; }\n",
    "detected memory leaks": "#include <stdlib.h>\nvoid *volatile keep;\nint main(void) { keep = malloc(64); "
                             "keep = 0; return 0; }\n",
}
LSAN_UNAVAILABLE = ("LeakSanitizer has encountered a fatal error", "LeakSanitizer does not work under ptrace")
# The pytest files that run the CLI (through TPG_TEST_CLI, tests/conftest.py) and the library (through TPGEMM_LIB,
# bench/tpgemm_lib.py) without a GPU.
CLI_TESTS = ["tests/test_cli.py", "tests/test_cli_partials.py", "tests/test_default_pick.py", "tests/test_models.py"]
LIBRARY_TESTS = ["tests/test_tpgemm_lib.py", "tests/test_multiprocess.py", "tests/test_split_rule.py"]


def probe(tmp: Path, name: str, text: str, env: dict) -> subprocess.CompletedProcess:
    slug = re.sub(r"\W+", "_", name)
    src, exe = tmp / f"{slug}.c", tmp / slug
    src.write_text(text)
    subprocess.run(["gcc", "-O0", *sanitized_build.SANITIZE, str(src), "-o", str(exe)], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=60)


def sanitizer_env(leaks: bool) -> dict:
    return {**os.environ, "CUDA_VISIBLE_DEVICES": "", "UBSAN_OPTIONS": sanitized_build.UBSAN_OPTIONS,
            "ASAN_OPTIONS": f"{sanitized_build.ASAN_OPTIONS}:detect_leaks={int(leaks)}"}


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """Whether gcc links the sanitizers here (else the file skips) and whether LeakSanitizer runs (it needs ptrace,
    which some containers deny)."""
    if shutil.which("gcc") is None or shutil.which("ninja") is None:
        pytest.skip("gcc and ninja are needed for the sanitized build")
    tmp = tmp_path_factory.mktemp("probe")
    try:
        leak = probe(tmp, "detected memory leaks", PROBES["detected memory leaks"], sanitizer_env(True))
    except subprocess.CalledProcessError as e:
        pytest.skip(f"gcc cannot build with {' '.join(sanitized_build.SANITIZE)} here (libasan / libubsan "
                    f"missing?): {e.stderr.strip()[-300:]}")
    return {"tmp": tmp, "leaks": not any(s in leak.stderr for s in LSAN_UNAVAILABLE)}


@pytest.fixture(scope="module")
def binaries(machine):
    built = subprocess.run(["ninja", "-C", str(ROOT)], capture_output=True, text=True)
    if built.returncode != 0:
        pytest.skip("ninja failed; tests/test_build.py reports why")
    return sanitized_build.build()


@pytest.mark.parametrize("report", sorted(PROBES))
def test_the_sanitizers_report_what_they_are_for(machine, report):
    if report == "detected memory leaks" and not machine["leaks"]:
        pytest.skip("LeakSanitizer cannot run on this machine (no ptrace); leaks go unchecked here")
    r = probe(machine["tmp"], report, PROBES[report], sanitizer_env(machine["leaks"]))
    assert r.returncode != 0 and report in r.stderr, (r.returncode, r.stderr[-2000:])


def test_every_unit_test_is_built_sanitized(binaries):
    sources = {f"build/tests/{p.stem}" for p in (ROOT / "tests" / "c").glob("test_*.c")}
    assert sources <= set(binaries), sorted(sources - set(binaries))


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "tests" / "c").glob("test_*.c")))
def test_c_unit_test_passes_sanitized(machine, binaries, name):
    r = subprocess.run([str(binaries[f"build/tests/{name}"])], capture_output=True, text=True, timeout=120,
                       env=sanitizer_env(machine["leaks"]))
    assert r.returncode == 0, f"{name} (exit {r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-6000:]}"
    assert re.search(r"^\d+ passed, 0 failed$", r.stdout, re.MULTILINE), r.stdout[-2000:]


def run_pytest(files: list[str], env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=900)


def assert_passed(r: subprocess.CompletedProcess) -> None:
    tail = r.stdout[-6000:] + r.stderr[-3000:]
    assert r.returncode == 0, tail
    counts = re.search(r"(\d+) passed", r.stdout)
    assert counts and int(counts.group(1)) > 0 and "failed" not in r.stdout.splitlines()[-1], tail


def test_the_cli_tests_pass_on_the_sanitized_cli(machine, binaries):
    env = {**sanitizer_env(machine["leaks"]), "TPG_TEST_CLI": str(binaries["build/tpgemm"])}
    assert_passed(run_pytest(CLI_TESTS, env))


def test_the_library_tests_pass_on_the_sanitized_library(machine, binaries):
    """Python itself is not instrumented, so the runtime of ASan comes in by LD_PRELOAD and leaks are not looked for
    (the interpreter keeps its allocations to the end)."""
    preload = [subprocess.run(["gcc", f"-print-file-name={lib}"], capture_output=True, text=True).stdout.strip()
               for lib in ("libasan.so", "libubsan.so")]
    if not all(Path(p).is_absolute() and Path(p).exists() for p in preload):
        pytest.skip(f"gcc names no shared libasan / libubsan to preload into Python ({preload})")
    # the CLI those files run stays the plain one: the sanitized CLI holds its own (static) ASan runtime, which refuses
    # to start beside the preloaded one (the CLI's tests run it above)
    env = {**sanitizer_env(False), "TPGEMM_LIB": str(binaries["build/libtpgemm.so"]), "LD_PRELOAD": " ".join(preload)}
    assert_passed(run_pytest(LIBRARY_TESTS, env))
