"""bench/run_tp.sh on the CPU, with stand-ins for nvidia-smi, ninja and torchrun: the run's files take the stem
that tp_bench.py names (two runs of one call keep their own logs), and a run that finished no shape shows no
table (an older JSON of the same stem would read as this run's)."""
import os
import stat
import subprocess

import pytest

from tests.conftest import ROOT

# torchrun's stand-in: names the stem as tp_bench.py does ($OUT/.tp_stem), then writes the JSON only when asked
FAKE_PYTHON = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "torch.distributed.run" ]; then
    echo "fake run $*"
    [ -n "$FAKE_STEM" ] && echo "$FAKE_STEM" > "$OUT/.tp_stem"
    [ -n "$FAKE_STEM" ] && [ -n "$FAKE_WRITE" ] && cp "$FAKE_WRITE" "$OUT/$FAKE_STEM.json"
    exit "${FAKE_RC:-0}"
fi
exec "$REAL_PYTHON" "$@"
"""


def stub_bin(tmp_path):
    b = tmp_path / "bin"
    b.mkdir(exist_ok=True)
    for name, text in {"python3": FAKE_PYTHON, "nvidia-smi": "#!/bin/sh\necho GPU 0\necho GPU 1\n",
                       "ninja": "#!/bin/sh\nexit 0\n"}.items():
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
    assert (out / "tp2_m512_run.log").exists() and not (out / "tp2_run.log").exists()
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
