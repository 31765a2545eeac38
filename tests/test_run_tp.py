"""bench/run_tp.sh on the CPU, with stand-ins for nvidia-smi, ninja and torchrun: the run's files take the stem
that tp_bench.py names (two runs of one call keep their own logs), and a run that finished no shape shows no
table (an older JSON of the same stem would read as this run's); on exit, or stopped, it ends the processes of its
own run and no other benchmark's."""
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT

# torchrun's stand-in: names the stem as tp_bench.py does ($OUT/.tp_stem), then writes the JSON only when asked
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
    echo "fake run $*"
    [ -n "$FAKE_STEM" ] && echo "$FAKE_STEM" > "$OUT/.tp_stem"
    [ -n "$FAKE_STEM" ] && [ -n "$FAKE_WRITE" ] && cp "$FAKE_WRITE" "$OUT/$FAKE_STEM.json"
    # a worker in a session of its own, as torchrun starts them, which outlives this process
    [ -n "$FAKE_ORPHAN" ] && setsid sh -c 'echo $$ > "$FAKE_ORPHAN.tmp"; mv "$FAKE_ORPHAN.tmp" "$FAKE_ORPHAN"; \
        exec sleep 300' < /dev/null > /dev/null 2>&1 &
    [ -n "$FAKE_SLEEP" ] && sleep "$FAKE_SLEEP"
    exit "${FAKE_RC:-0}"
fi
exec "$REAL_PYTHON" "$@"
"""


def stub_bin(tmp_path):
    b = tmp_path / "bin"
    b.mkdir(exist_ok=True)
    gpus = ('#!/bin/sh\necho nvidia-smi >> "${FAKE_CALLS:-/dev/null}"\n'
            'seq 0 $((${FAKE_GPUS:-2} - 1)) | sed "s/^/GPU /"\nexit "${FAKE_SMI_RC:-0}"\n')  # FAKE_GPUS, 2 unless said
    for name, text in {"python3": FAKE_PYTHON, "nvidia-smi": gpus,
                       "ninja": '#!/bin/sh\necho ninja >> "${FAKE_CALLS:-/dev/null}"\nexit 0\n'}.items():
        (b / name).write_text(text)
        (b / name).chmod((b / name).stat().st_mode | stat.S_IEXEC)
    return b


def run_tp(tmp_path, out, args=("--tp", "2", "--tokens", "512"), **env):
    import sys
    e = dict(os.environ, PATH=f"{stub_bin(tmp_path)}:{os.environ['PATH']}", OUT=str(out), REAL_PYTHON=sys.executable,
             **env)
    return subprocess.run(["bash", str(ROOT / "bench/run_tp.sh"), *args], env=e, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture
def record(tmp_path):
    import json
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import tp_records as R
    p = tmp_path / "rec.json"
    figures = {v: {"sustained_s": 0.01, "burst_s": 0.008, "joules": 5.0} for v in R.VARIANTS}
    p.write_text(json.dumps([dict(R.make_record("8B-o-m512", "RS", 512, 4096, 4096, 2, "bf16", figures, 1e-3),
                                  tokens=512)]))
    return p


def test_logs_and_table_take_the_runs_stem(tmp_path, record):
    out = tmp_path / "out"
    r = run_tp(tmp_path, out, FAKE_STEM="tp2_m512", FAKE_WRITE=str(record))
    assert r.returncode == 0, r.stderr
    for log in ("run", "gpus", "build"):
        assert (out / f"tp2_m512_{log}.log").exists() and not (out / f"tp2_{log}.log").exists(), log
    assert "8B-o-m512" in (out / "tp2_m512_table.md").read_text()


def test_a_run_that_finished_no_shape_shows_no_older_table(tmp_path, record):
    out = tmp_path / "out"
    out.mkdir()
    (out / "tp2_m512.json").write_text(record.read_text())  # an earlier run's results
    r = run_tp(tmp_path, out, FAKE_STEM="tp2_m512", FAKE_RC="0")
    assert r.returncode != 0 and "no shape of this run finished" in r.stderr
    assert not (out / "tp2_m512_table.md").exists()


def test_a_run_that_named_nothing_fails_and_keeps_its_log(tmp_path):
    out = tmp_path / "out"
    r = run_tp(tmp_path, out, FAKE_STEM="", FAKE_RC="3")
    assert r.returncode == 3 and "stopped before naming its results" in r.stderr
    assert (out / "tp2_run.log").exists()


def test_a_run_that_named_nothing_fails_also_after_an_earlier_runs_files(tmp_path, record):
    """An earlier run's stem and JSON in $OUT are not this run's: a benchmark that ended, exit 0 even, before naming
    its results shows no table, and run_tp.sh fails."""
    out = tmp_path / "out"
    out.mkdir()
    (out / ".tp_stem").write_text("tp2_m512\n")
    (out / "tp2_m512.json").write_text(record.read_text())
    os.utime(out / ".tp_stem", (time.time() - 60,) * 2)  # the JSON newer than its stem, as tp_bench.py leaves them
    r = run_tp(tmp_path, out, FAKE_STEM="", FAKE_RC="0")
    assert r.returncode == 1 and "stopped before naming its results" in r.stderr, r.stderr
    assert not (out / "tp2_m512_table.md").exists()


def test_under_a_step_budget_the_benchmark_stops_20_s_before_it(tmp_path):
    """Under run_all.sh (STEP_BUDGET_S, no TP_BENCH_TIMEOUT_S) the bound leaves 20 s of the step to write the table;
    TP_BENCH_TIMEOUT_S, where set, is the bound."""
    r = run_tp(tmp_path, tmp_path / "out", FAKE_STEM="tp2_m512", FAKE_SLEEP="5", STEP_BUDGET_S="21",
               TP_BENCH_TIMEOUT_S="")
    assert r.returncode == 124 and "the benchmark ran past 1 s and was stopped" in r.stderr, r.stderr
    r = run_tp(tmp_path, tmp_path / "out", FAKE_STEM="tp2_m512", FAKE_SLEEP="5", STEP_BUDGET_S="21",
               TP_BENCH_TIMEOUT_S="2")
    assert r.returncode == 124 and "the benchmark ran past 2 s and was stopped" in r.stderr, r.stderr


def test_tp_anywhere_in_the_arguments_and_never_passed_on(tmp_path, record):
    for args in (("--tokens", "512", "--tp", "2"), ("--tokens", "512", "--tp=2")):
        out = tmp_path / f"out{len(args)}"
        r = run_tp(tmp_path, out, args=args, FAKE_STEM="tp2_m512", FAKE_WRITE=str(record))
        assert r.returncode == 0, r.stderr
        log = (out / "tp2_m512_run.log").read_text()
        assert "--nproc_per_node=2 bench/tp_bench.py --tokens 512" in log and "--tp" not in log.split("tp_bench.py")[1]
    for bad in (("--tp", "x"), ("--tp", "0"), ("--tokens", "512", "--tp")):
        r = run_tp(tmp_path, tmp_path / "bad", args=bad)
        assert r.returncode == 2 and "run_tp.sh: --tp" in r.stderr, (bad, r.stderr)


def test_help_says_the_usage_before_anything_runs(tmp_path):
    """--help / -h (anywhere) prints the usage and exits 0: before, it ran nvidia-smi, and on a GPU machine would
    have built the library and started torchrun with --help for tp_bench.py."""
    calls = tmp_path / "calls"
    for args in (("--help",), ("-h",), ("--tp", "2", "--tokens", "512", "--help")):
        r = run_tp(tmp_path, tmp_path / "out", args=args, FAKE_CALLS=str(calls))
        assert r.returncode == 0 and "bench/run_tp.sh [--tp N] [tp_bench.py args...]" in r.stdout, (args, r.stderr)
        assert "set -euo" not in r.stdout and "#" not in r.stdout, r.stdout
        assert not calls.exists() and not (tmp_path / "out").exists(), args


def test_tp_is_a_tp_degree_of_the_benchmark(tmp_path, record):
    """--tp takes the degrees tp_bench runs at (tp_options.TP_DEGREES): --tp= (empty) fell back to every visible GPU,
    --tp 16 went to torchrun, and --tp 3 built the library and started torchrun, whose every rank then refused its
    WORLD_SIZE; without --tp the visible GPUs' count must be one too."""
    sys.path.insert(0, str(ROOT / "bench"))
    import tp_options
    degrees = ", ".join(map(str, tp_options.TP_DEGREES))
    others = [str(n) for n in range(9) if n not in tp_options.TP_DEGREES]
    for bad in [("--tp=",), ("--tp", ""), ("--tp", "16"), ("--tp=08",)] + [("--tp", n) for n in others]:
        r = run_tp(tmp_path, tmp_path / "bad", args=bad)
        assert r.returncode == 2 and f"a TP degree of {degrees}," in r.stderr, (bad, r.stderr)
        assert len(r.stderr.splitlines()) == 1 and not (tmp_path / "bad").exists(), (bad, r.stderr)
    for gpus in ("0", "3", "9"):
        r = run_tp(tmp_path, tmp_path / "bad", args=(), FAKE_GPUS=gpus)
        assert r.returncode == 2 and f"{gpus} GPUs visible" in r.stderr, (gpus, r.stderr)
    r = run_tp(tmp_path, tmp_path / "bad", args=(), FAKE_GPUS="0", FAKE_SMI_RC="9")  # no driver: nvidia-smi fails
    assert r.returncode == 2 and r.stderr.startswith("run_tp.sh: 0 GPUs visible"), r.stderr
    top = max(tp_options.TP_DEGREES)
    r = run_tp(tmp_path, tmp_path / "out8", args=("--tp", str(top)), FAKE_STEM=f"tp{top}_m512", FAKE_WRITE=str(record))
    log = (tmp_path / "out8" / f"tp{top}_m512_run.log").read_text()
    assert r.returncode == 0 and f"--nproc_per_node={top} " in log, r.stderr


def alive(pid):
    """Whether process pid runs (a zombie, ended but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_for(path, seconds=20):
    end = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.05)
    return int(path.read_text())


@pytest.fixture
def bystander():
    """Another benchmark on the machine, not started by run_tp.sh: its command line names bench/tp_bench.py (the old
    `pkill -f bench/tp_bench.py` on exit ended it)."""
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", "bench/tp_bench.py"])
    yield p
    p.kill()
    p.wait()


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="run_tp.sh finds its processes through /proc")
def test_on_exit_only_the_runs_own_workers_are_ended(tmp_path, record, bystander):
    orphan = tmp_path / "orphan.pid"
    r = run_tp(tmp_path, tmp_path / "out", FAKE_STEM="tp2_m512", FAKE_WRITE=str(record), FAKE_ORPHAN=str(orphan))
    assert r.returncode == 0, r.stderr
    pid = wait_for(orphan)
    end = time.monotonic() + 10
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(pid), "a worker of the run outlived run_tp.sh"
    assert bystander.poll() is None, "run_tp.sh ended a benchmark it did not start"


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="run_tp.sh finds its processes through /proc")
def test_a_stopped_run_ends_its_workers_at_once(tmp_path, bystander):
    """SIGTERM while the benchmark runs: the trap runs at once (the benchmark is waited for in the background), ends
    the run's processes, and exits 143."""
    orphan = tmp_path / "orphan.pid"
    e = dict(os.environ, PATH=f"{stub_bin(tmp_path)}:{os.environ['PATH']}", OUT=str(tmp_path / "out"),
             REAL_PYTHON=sys.executable, FAKE_STEM="tp2", FAKE_SLEEP="60", FAKE_ORPHAN=str(orphan))
    p = subprocess.Popen(["bash", str(ROOT / "bench/run_tp.sh"), "--tp", "2"], env=e, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    pid = wait_for(orphan)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 143
    end = time.monotonic() + 10
    while alive(pid) and time.monotonic() < end:
        time.sleep(0.05)
    assert not alive(pid) and bystander.poll() is None
