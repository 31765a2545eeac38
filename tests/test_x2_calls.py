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
import tarfile

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
    then echo "tp_bench accepted at tp $nproc: $*" >>"$FAKE_LOG"; echo "tp$nproc" >"$OUT/.tp_stem"; exit 0
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
    assert len([x for x in lines if x.startswith("tp_bench accepted at tp 2: ")]) == runs, why  # the x2 machine's
    assert len([x for x in lines if x.startswith("pytest collected")]) == script.count("python3 -m pytest"), why
    assert (out / "records.tgz").exists() and not (out / "records").exists(), why  # the records, tarred
    steps = (out / "summary.txt").read_text().splitlines()
    assert steps and all(re.fullmatch(r".+: exit \d+, at \d+ s", s) for s in steps), steps
    assert run.returncode in (0, 1), why  # 1: a step failed (no GPU here), never a shell error


def common(tmp_path, script, **env):
    """bash sourcing bench/x2/common.sh, then running script, with $OUT in tmp_path, a `timeout` stand-in that only
    logs its arguments (to $OUT/timeout.args) and stand-ins for ninja and nvidia-smi; (completed process, $OUT)."""
    out, stubs = tmp_path / "out", stub_bin(tmp_path / "bin")
    (stubs / "timeout").write_text('#!/bin/sh\necho "$@" >>"$OUT/timeout.args"\n')
    (stubs / "timeout").chmod(0o755)
    e = {**{k: v for k, v in os.environ.items() if k != "CALL_BUDGET_S"}, "PATH": f"{stubs}:{os.environ['PATH']}",
         "OUT": str(out), **env}
    r = subprocess.run(["bash", "-c", f'source "{ROOT / "bench/x2/common.sh"}"; {script}'], env=e,
                       capture_output=True, text=True, timeout=60)
    return r, out


@pytest.mark.parametrize("budget, cap, within", [
    (None, 1000, (559, 560)),  # CALL_BUDGET_S unset: 570 s, less 10 s for the records
    ("100", 380, (89, 90)), ("100", 50, (50, 50)),  # the cap, or what is left less 10 s, whichever is less
    ("45", 380, (34, 35)), ("39", 380, (0, 0)),  # under 30 s: 0, the step does not start
])
def test_a_steps_limit_is_its_cap_or_what_is_left_of_the_call_less_10_s(tmp_path, budget, cap, within):
    r, _ = common(tmp_path, f"limit {cap}", **({"CALL_BUDGET_S": budget} if budget else {}))
    assert r.returncode == 0 and within[0] <= int(r.stdout) <= within[1], (r.stdout, r.stderr)


def test_a_benchmark_run_with_under_30_s_left_does_not_start(tmp_path):
    """run_tp.sh would be bounded by `timeout 0`, which does not bound it, and the device's stop at 600 s would lose
    the records."""
    r, out = common(tmp_path, "tp_run late 380 --tokens 512", CALL_BUDGET_S="39")
    summary = (out / "summary.txt").read_text()
    assert summary.startswith("run_tp late (no time left): exit 124"), summary
    with tarfile.open(out / "records.tgz") as records:
        assert "records/late.log" not in records.getnames(), records.getnames()


@pytest.mark.parametrize("budget, bound", [(None, "240"), ("100", "59 60"), ("69", None)])
def test_the_build_is_bounded_at_240_s_and_40_s_before_the_calls_end(tmp_path, budget, bound):
    """bound: the seconds `timeout` is given (either where a second may pass), None: no time left, not started."""
    r, out = common(tmp_path, "build", **({"CALL_BUDGET_S": budget} if budget else {}))
    summary = (out / "summary.txt").read_text()
    if bound is None:
        assert summary.startswith("build (no time left): exit 124") and not (out / "timeout.args").exists()
    else:
        args = (out / "timeout.args").read_text().split()
        assert args[:2] == ["-k", "10"] and args[2] in bound.split() and args[3] == "ninja", args
        assert summary.startswith("build: exit 0"), summary


@pytest.mark.parametrize("rcs, want", [((0, 0), 0), ((0, 3), 1), ((124,), 1)])
def test_the_call_exits_1_where_a_step_failed_and_keeps_its_records(tmp_path, rcs, want):
    """The device's reply flags a call by its status: 1 where a summary line says a step failed (the call's own
    commands went on), 0 where every step passed; the records are tarred either way."""
    r, out = common(tmp_path, "; ".join(f"note step{i} {rc}" for i, rc in enumerate(rcs)))
    assert r.returncode == want, r.stderr
    assert (out / "records.tgz").exists() and not (out / "records").exists()
