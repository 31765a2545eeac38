"""bench/report_tp.py on files it must not render (tp_records.read_records, which bench/x2/verdict.py shares): each is
refused with one line naming the record, the field and what would do, exit 2, no traceback, nothing written. Before,
a file whose first record was TP = 4 wrote its TP = 2 rows into the TP = 4 section, a tag wrote section markers, and
odd types or values made a bogus section, "nan" figures or a traceback."""
import json
import math
import subprocess
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_records as R  # noqa: E402

REPORT = ROOT / "bench" / "report_tp.py"
COMMITTED = json.loads((ROOT / "bench" / "results" / "tp2.json").read_text())
SECTIONS = "# Benchmarks\n\n<!-- tp2:begin -->\nkept\n<!-- tp2:end -->\n\n<!-- tp4:begin -->\nkept\n<!-- tp4:end -->\n"


def every(**fields):
    return lambda recs: [r.update(fields) for r in recs]


def first(**fields):
    return lambda recs: recs[0].update(fields)


BAD_RECORDS = [
    (first(tp=4), "record 1 (70B-fc1) has tp 2 where record 0 has 4: a file holds one run"),
    (lambda recs: recs[5].update(dtype="fp16"), "record 5 (70B-fc2) has dtype 'fp16' where record 0 has 'bf16'"),
    (lambda recs: recs[2].update(tokens=512), "record 2 (70B-qkv) has tokens 512 where record 0 has 0"),
    (lambda recs: recs[3].update(tag="p2p_off"), "record 3 (8B-qkv) has tag 'p2p_off' where record 0 has ''"),
    (every(tag="x:end -->\n<!-- tp4:begin"), "record 0 (405B-fc1): tag = 'x:end -->\\n<!-- tp4:begin': a tag is "
     + R.TAG_RULE),
    (every(tp=0), "tp = 0 is not a TP degree (a whole number 1..8)"),
    (every(tp=16), "tp = 16 is not a TP degree"),
    (every(tp="2"), "tp = '2' is not a TP degree"),
    (every(tp=True), "tp = True is not a TP degree"),
    (every(dtype="fp99"), "dtype = 'fp99' is not one of bf16, fp16, e4m3, e4m3_promoted"),
    (every(tokens=-5), "tokens = -5 is not a positive whole number"),
    (every(tokens="512"), "tokens = '512' is not a positive whole number"),
    (first(tpgemm_tflops=math.nan), "record 0 (405B-fc1): tpgemm_tflops = nan is not finite"),
    (first(local_joules=math.inf), "local_joules = inf is not finite"),
    (first(tpgemm_ms=math.nan), "tpgemm_ms = nan is not finite"),
    (first(tpgemm_tflops="681"), "tpgemm_tflops = '681' is not a number"),
    (first(rel_err="small"), "rel_err = 'small' is not a number"),
    (first(name=123), "record 0 (?): name = 123 is not a one-line text"),
    (first(name="a\nb"), "record 0 (?): name = 'a\\nb' is not a one-line text"),
    (first(name=""), "record 0 (?): name = '' is not a one-line text"),
    (first(check=None), "check = None is not a one-line text"),
    (first(config=7), "config = 7 is not a one-line text"),
    (first(op="XX"), "op = 'XX' is not one of AG, RS"),
    (first(M=-1), "M = -1 is not a positive whole number"),
    (first(K=0), "K = 0 is not a positive whole number"),
    (first(windows="x"), "windows = 'x' is not an object of variants' lists of windows"),
    (first(windows={"tpgemm": [{"seconds": math.nan}]}), "windows.tpgemm[0].seconds = nan is not a finite number"),
    (first(alt={"pull": 1}), "alt = {'pull': 1} is not an object of variants' objects"),
    (first(alt={"pull": {"tflops": math.inf}}), "alt.pull.tflops = inf is not finite"),
    (first(alt={"pull": {"tflops": 1.0, "check": None}}), "alt.pull.check = None is not a one-line text"),
    (first(op=["AG"]), "op = ['AG'] is not one of AG, RS"),
    (first(errors=["x"]), "errors = ['x'] is not an object"),
    (first(shapes_asked=3), "shapes_asked = 3 is not a list of shape names"),
    (first(shapes_asked=["70B-fc1", 3]), "shapes_asked = ['70B-fc1', 3] is not a list of shape names"),
    (first(local_modes={"family": {"tflops": math.nan}}), "local_modes.family.tflops = nan is not finite"),
    (first(errors={"tpgemm": "<!-- tp4:end -->"}), "errors.tpgemm = '<!-- tp4:end -->' holds '<!--'"),
    (first(alt={"<!-- tp4:end -->": {"tflops": 1.0}}), "a key of alt = '<!-- tp4:end -->' holds '<!--'"),
    (lambda recs: recs[0].pop("dtype"), "record 0 (405B-fc1) lacks dtype"),
]


def report(tmp_path, *args):
    bench = tmp_path / "BENCHMARKS.md"
    bench.write_text(SECTIONS)
    run = subprocess.run([sys.executable, str(REPORT), *map(str, args)], capture_output=True, text=True, timeout=60)
    return run, bench


def refused(tmp_path, run, bench, said):
    assert run.returncode == 2 and said in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert bench.read_text() == SECTIONS and not list(tmp_path.glob("*.png")) and run.stdout == ""


@pytest.mark.parametrize("change, said", BAD_RECORDS)
def test_a_record_file_that_is_not_one_runs_is_refused_by_record_and_field(tmp_path, change, said):
    recs = json.loads(json.dumps(COMMITTED))
    change(recs)
    src = tmp_path / "tp2.json"
    src.write_text(json.dumps(recs))  # NaN / Infinity as Python writes them
    run, bench = report(tmp_path, src, "--benchmarks", tmp_path / "BENCHMARKS.md", "--png", tmp_path / "x.png")
    refused(tmp_path, run, bench, f"report_tp.py: {src}: ")
    assert said in run.stderr, run.stderr


@pytest.mark.parametrize("text, said", [("", "cannot read"), ("null", "not a list of TP benchmark records"),
                                        ("[1, 2]", "not a list"), ("[{}]", "record 0 (?) lacks name, op, M, N, K"),
                                        ('{"a": 1}', "not a list"), (b"\xff[]", "cannot read"),
                                        ("[" * 100000 + "]" * 100000, "cannot read")])  # nested past Python
def test_a_file_that_is_not_records_is_refused(tmp_path, text, said):
    src = tmp_path / "tp2.json"
    src.write_bytes(text if isinstance(text, bytes) else text.encode())
    run, bench = report(tmp_path, src, "--benchmarks", tmp_path / "BENCHMARKS.md")
    refused(tmp_path, run, bench, said)


@pytest.mark.parametrize("where, said", [("json", "cannot read"), ("--benchmarks", "not a file's path"),
                                         ("--benchmarks-empty", "--benchmarks '': not a file's path"),
                                         ("--png", "not a file's path"), ("--png-empty", "--png '': not a file's path"),
                                         ("--png-folder", "its folder does not exist")])
def test_a_folder_or_an_empty_path_is_refused_before_anything_is_written(tmp_path, where, said):
    """An empty --png (a lost variable's expansion) once fell back to the plot beside the JSON."""
    src = tmp_path / "tp2.json"
    src.write_text(json.dumps(COMMITTED))
    md = tmp_path / "BENCHMARKS.md"
    args = {"json": [tmp_path, "--benchmarks", md], "--benchmarks": [src, "--benchmarks", tmp_path],
            "--benchmarks-empty": [src, "--benchmarks", ""], "--png": [src, "--benchmarks", md, "--png", tmp_path],
            "--png-empty": [src, "--benchmarks", md, "--png", ""],
            "--png-folder": [src, "--benchmarks", md, "--png", tmp_path / "no" / "x.png"]}
    run, bench = report(tmp_path, *args[where])
    refused(tmp_path, run, bench, "report_tp.py: ")
    assert said in run.stderr, run.stderr


def test_a_benchmarks_file_that_is_not_text_is_refused_in_one_line(tmp_path):
    src, bench = tmp_path / "tp2.json", tmp_path / "BENCHMARKS.md"
    src.write_text(json.dumps(COMMITTED))
    bench.write_bytes(b"\xff\xfe# Benchmarks\n")
    run = subprocess.run([sys.executable, str(REPORT), str(src), "--benchmarks", str(bench), "--png",
                          str(tmp_path / "x.png")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and f"report_tp.py: --benchmarks {bench}: " in run.stderr, run.stderr
    assert "Traceback" not in run.stderr and bench.read_bytes() == b"\xff\xfe# Benchmarks\n"


def test_every_committed_record_file_is_fit_and_its_sections_render_unchanged(tmp_path):
    """The checks refuse nothing tp_bench.py writes: every committed record file passes them, and the sections of
    BENCHMARKS.md that report_tp.py wrote come out of their files byte for byte."""
    files = sorted((ROOT / "bench" / "results").rglob("tp*.json"))
    assert len(files) > 10
    for path in files:
        assert R.read_records(path), path
    bench = tmp_path / "BENCHMARKS.md"
    committed = (ROOT / "BENCHMARKS.md").read_text()
    bench.write_text(committed)
    for tp in (2, 4):
        assert f"<!-- tp{tp}:begin -->" in committed
        run = subprocess.run([sys.executable, str(REPORT), str(ROOT / "bench" / "results" / f"tp{tp}.json"),
                              "--benchmarks", str(bench), "--png", str(tmp_path / f"tp{tp}.png")],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
    assert bench.read_text() == committed


def test_the_file_checks_take_the_benchmarks_own_rules(tmp_path):
    """One definition each: the tag rule is tp_bench.py's --tag check, the dtypes its --dtype choices, the TP degrees
    the library's (TPG_MAX_TP) - asked of tp_bench.py itself (its --help and a refused tag; torch not needed)."""
    from generator import config
    from tests.test_tp_bench_rules import no_torch
    assert R.MAX_TP == config.MAX_TP
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": no_torch(tmp_path), "WORLD_SIZE": "2"}
    bench = [sys.executable, str(ROOT / "bench" / "tp_bench.py")]
    usage = subprocess.run(bench + ["--help"], env=env, capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and "--dtype {" + ",".join(R.DTYPES) + "}" in usage.stdout, usage.stdout
    tag = subprocess.run(bench + ["--check-args", "--tag", "P2P"], env=env, capture_output=True, text=True, timeout=60)
    assert tag.returncode == 2 and f"--tag 'P2P': {R.TAG_RULE}" in tag.stderr, tag.stderr
    ok = dict(COMMITTED[0], tag="p2p_off", tokens=512)
    assert R.record_problems([ok]) == [] and R.record_problems([dict(ok, tag="P2P")]) != []
    assert R.record_problems([]) == [] and R.record_problems({}) == ["not a list of TP benchmark records"]


def test_what_tp_bench_writes_stands():
    """The other side of the refusals: TP = 8 (TPG_MAX_TP), a check's NaN or infinite error (a NaN output's: the
    report says the check failed), an extra variant that names no config."""
    alt = {"pull": {"tflops": 1.0, "check": "passed", "config": None}}
    ok = dict(COMMITTED[0], tp=8, rel_err=math.nan, max_err=math.inf, alt=alt)
    assert R.record_problems([ok]) == [], R.record_problems([ok])
