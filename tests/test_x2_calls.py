"""The 2-GPU session's calls (bench/x2/call*.sh) rehearsed on the CPU before the scarce machine comes: each script runs
to its end in a copy of the tree with stand-ins for ninja, nvidia-smi and torchrun, and every benchmark run it asks
for has its options checked by tp_bench.py itself (--check-args: the library's configs they name included), every GPU
pytest step its selection collected. The GPU programs it starts fail at once here (no GPU): the rehearsal is of the
scripts - a flag that no longer exists, a selection pytest refuses, a step that never writes its summary line."""
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from tests.conftest import ROOT

CALLS = sorted(p.name for p in (ROOT / "bench" / "x2").glob("call*.sh"))

# python3's stand-in: torchrun checks the benchmark's options and names the run's stem, pytest collects; the rest is
# the real interpreter
FAKE_PYTHON = r"""#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
    shift 2
    nproc=1
    while [ $# -gt 0 ]; do
        case "$1" in --nproc_per_node=*) nproc="${1#*=}"; shift ;; --*) shift ;; *) break ;; esac
    done
    script=$1
    shift
    if WORLD_SIZE=$nproc PYTHONPATH="$FAKE_TORCH" "$REAL_PYTHON" "$script" --check-args "$@" >>"$FAKE_LOG.out" 2>&1
    then echo "tp_bench accepted: $*" >>"$FAKE_LOG"; echo "tp$nproc" >"$OUT/.tp_stem"; exit 0
    fi
    echo "tp_bench refused: $*" >>"$FAKE_LOG"
    exit 2
fi
if [ "$1" = "-m" ] && [ "$2" = "pytest" ]; then
    shift 2
    if "$REAL_PYTHON" -m pytest --collect-only -p no:cacheprovider "$@" >>"$FAKE_LOG.out" 2>&1
    then echo "pytest collected: $*" >>"$FAKE_LOG"; exit 0
    fi
    echo "pytest refused: $*" >>"$FAKE_LOG"
    exit 4
fi
exec "$REAL_PYTHON" "$@"
"""


def stub_bin(at):
    at.mkdir()
    for name, text in {"python3": FAKE_PYTHON, "ninja": "#!/bin/sh\nexit 0\n",
                       "nvidia-smi": "#!/bin/sh\necho 'GPU 0: stand-in'\necho 'GPU 1: stand-in'\n"}.items():
        (at / name).write_text(text)
        (at / name).chmod((at / name).stat().st_mode | stat.S_IEXEC)
    return at


def tree_copy(at):
    """The working tree's tracked files (as they are now, not HEAD's), its build/ linked: a call may change the copy
    (call 4 switches the defaults in schedules.yaml)."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        if (ROOT / rel).is_file():
            (at / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, at / rel)
    (at / "build").symlink_to(ROOT / "build")
    return at


@pytest.mark.parametrize("call", CALLS)
def test_the_call_runs_to_its_end_and_every_run_it_asks_for_is_accepted(tmp_path, call):
    if not (ROOT / "build" / "libtpgemm.so").exists():
        pytest.skip("build/libtpgemm.so is missing (tests/test_build.py says why): tp_bench checks configs with it")
    repo, out, log = tree_copy(tmp_path / "repo"), tmp_path / "out", tmp_path / "fake.log"
    fake_torch = tmp_path / "torch_stand_in" / "torch"
    fake_torch.mkdir(parents=True)
    for name in ("__init__.py", "distributed.py"):
        (fake_torch / name).write_text("")
    env = {**os.environ, "PATH": f"{stub_bin(tmp_path / 'bin')}:{os.environ['PATH']}", "REAL_PYTHON": sys.executable,
           "FAKE_TORCH": str(fake_torch.parent), "FAKE_LOG": str(log), "OUT": str(out), "CUDA_VISIBLE_DEVICES": ""}
    run = subprocess.run(["bash", f"bench/x2/{call}"], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    lines = log.read_text().splitlines() if log.exists() else []
    why = f"{run.stdout[-3000:]}\n{run.stderr[-2000:]}\n" + "\n".join(lines)
    assert not [x for x in lines if "refused" in x], why
    script = (ROOT / "bench" / "x2" / call).read_text()
    runs = len(re.findall(r"^tp_run ", script, re.M))
    assert len([x for x in lines if x.startswith("tp_bench accepted")]) == runs, why
    assert len([x for x in lines if x.startswith("pytest collected")]) == script.count("python3 -m pytest"), why
    assert (out / "records.tgz").exists() and not (out / "records").exists(), why  # the records, tarred
    steps = (out / "summary.txt").read_text().splitlines()
    assert steps and all(re.fullmatch(r".+: exit \d+, at \d+ s", s) for s in steps), steps
    assert run.returncode in (0, 1), why  # 1: a step failed (no GPU here), never a shell error
