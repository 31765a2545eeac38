"""Tier 1 (no GPU): bench/report.py turns local-GEMM JSON into the right table, geomeans and BENCHMARKS.md
section; build/bench/local_gemm (when `ninja bench` built it) parses its command line, writes JSON that
report.py reads in a dry run, and exits 3 without a GPU."""
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "bench" / "report.py"
BENCH = ROOT / "build" / "bench" / "local_gemm"


def load_report():
    spec = importlib.util.spec_from_file_location("bench_report", REPORT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rec(name, dtype, tp, cb, tps, cbs, tpj, cbj, **extra):
    r = {"name": name, "M": 8192, "N": 4096, "K": 2048, "dtype": dtype, "config": f"cfg_{dtype}_tp1",
         "tpgemm_tflops": tp, "cublas_tflops": cb, "tpgemm_sustained_tflops": tps, "cublas_sustained_tflops": cbs,
         "tpgemm_joules": tpj, "cublas_joules": cbj, "op": "RS", "check": "pass", "max_error": 1e-3,
         "gpu": "FakeGPU", "driver": "1.2.3", "date": "2026-12-01T00:00:00Z", "command": "local_gemm --quick"}
    r.update(extra)
    return r


# bf16 burst ratios 0.8 and 1.25 (geomean 1.0), sustained 0.5 and 2.0 (geomean 1.0), joules 1.1 and 0.9
# (geomean sqrt(0.99)); fp16: one problem at 0.9; one bf16 record with no numbers (an error) is left out.
FAKE = [
    rec("alpha", "bf16", 400.0, 500.0, 300.0, 600.0, 0.011, 0.010),
    rec("beta", "bf16", 625.0, 500.0, 800.0, 400.0, 0.009, 0.010),
    rec("gamma", "bf16", None, None, None, None, None, None, check=None, max_error=None, error="not run"),
    rec("alpha", "fp16", 450.0, 500.0, 450.0, 500.0, 0.02, 0.02, check="fail", max_error=0.5),
]


def run_report(tmp_path, records, *extra):
    src = tmp_path / "local_gemm.json"
    src.write_text(json.dumps(records))
    return subprocess.run([sys.executable, str(REPORT), str(src), "--markdown", str(tmp_path / "t.md"), "--png",
                           str(tmp_path / "t.png"), *extra], capture_output=True, text=True)


def row(text, first_cell, dtype):
    rows = [line for line in text.splitlines() if line.startswith(f"| {first_cell} |") and f"| {dtype} |" in line]
    assert len(rows) == 1, f"expected one {first_cell}/{dtype} row in:\n{text}"
    return [c.strip() for c in rows[0].strip("|").split("|")]


def test_geomean_and_ratio_helpers():
    m = load_report()
    assert m.geomean([0.8, 1.25]) == pytest.approx(1.0)
    assert m.geomean([2.0, 8.0]) == pytest.approx(4.0)
    assert m.geomean([None, 0.9]) == pytest.approx(0.9)
    assert m.geomean([]) is None
    assert m.ratio({"a": 1.0, "b": None}, "a", "b") is None
    s = m.summary(FAKE)
    assert s["bf16"]["burst"] == (pytest.approx(1.0), 2)
    assert s["bf16"]["sustained"] == (pytest.approx(1.0), 2)
    assert s["bf16"]["joules"][0] == pytest.approx(math.sqrt(1.1 * 0.9))
    assert s["fp16"]["burst"] == (None, 0)  # its one kernel failed the check: no speed of a GEMM
    passing = [dict(FAKE[3], check="pass")]
    assert m.summary(passing)["fp16"]["burst"] == (pytest.approx(0.9), 1)
    # never compared (check null): not in the geomeans (as output.c's table counts), and not shown as passed
    assert m.summary([dict(FAKE[3], check=None)])["fp16"]["burst"] == (None, 0)
    assert m.check_cell({"check": None}).startswith("–")


def test_table_rows_and_geomeans(tmp_path):
    res = run_report(tmp_path, FAKE)
    assert res.returncode == 0, res.stderr
    md = (tmp_path / "t.md").read_text()
    assert md.count("| alpha |") == 2 and "| 8192×4096×2048 |" in md
    a = row(md, "alpha", "bf16")
    # columns: problem op MxNxK dtype config tp cb ratio tps cbs ratio tpJ cbJ Jratio check
    assert a[5:8] == ["400.0", "500.0", "0.800"] and a[10] == "0.500" and a[13] == "1.100"
    assert a[14].startswith("pass")
    assert row(md, "beta", "bf16")[7] == "1.250"
    assert row(md, "alpha", "fp16")[14].startswith("**FAIL**")
    g = row(md, "**geomean bf16**", "bf16")
    assert g[7] == "**1.000** (2)" and g[10] == "**1.000** (2)" and g[13] == f"**{math.sqrt(0.99):.3f}** (2)"
    assert row(md, "**geomean fp16**", "fp16")[7] == "**–** (0)"  # a failed check counts in no geomean
    assert "not run" in row(md, "gamma", "bf16")[14]
    assert "| **geomean bf16** |" in res.stdout  # the table is printed too
    if importlib.util.find_spec("matplotlib"):
        assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert not (tmp_path / "t.png").exists() and "matplotlib" in res.stderr


def test_benchmarks_section_created_then_replaced(tmp_path):
    bm = tmp_path / "BENCHMARKS.md"
    assert run_report(tmp_path, FAKE, "--benchmarks", str(bm)).returncode == 0
    text = bm.read_text()
    assert text.startswith("# Benchmarks") and "FakeGPU" in text and "1.2.3" in text and "`local_gemm --quick`" in text
    bm.write_text("# Benchmarks\n\nintro kept\n\n" + text[text.index("<!-- local_gemm:begin"):] + "\n## Other\nkept too\n")
    changed = [dict(r, tpgemm_tflops=1000.0) if r["name"] == "alpha" and r["dtype"] == "bf16" else r for r in FAKE]
    assert run_report(tmp_path, changed, "--benchmarks", str(bm)).returncode == 0
    text = bm.read_text()
    assert text.count("<!-- local_gemm:begin -->") == 1 and text.count("<!-- local_gemm:end -->") == 1
    assert "intro kept" in text and "## Other\nkept too" in text
    assert "| 2.000 |" in text and "| 0.800 |" not in text  # the old row is gone, the new one is there


def test_committed_sections_hold_only_what_their_script_writes():
    """Between its markers a section of the committed BENCHMARKS.md is what its report script wrote: its `## `
    heading first and no other heading, so hand-written text placed inside (lost on the next run) fails here."""
    text = (ROOT / "BENCHMARKS.md").read_text()
    sections = re.findall(r"<!-- (\S+):begin -->\n(.*?)<!-- \1:end -->", text, re.S)
    assert {"local_gemm", "tp2"} <= {name for name, _ in sections}
    for name, body in sections:
        headings = [line for line in body.splitlines() if line.startswith("#")]
        assert body.startswith("## ") and len(headings) == 1, (name, headings)


def test_fp8_records_update_their_own_section(tmp_path):
    """An e4m3 run writes the local_gemm_fp8 section (saying cuBLASLt ran with fast accumulation) and leaves the
    16-bit one alone, and the other way round."""
    bm = tmp_path / "BENCHMARKS.md"
    assert run_report(tmp_path, FAKE, "--benchmarks", str(bm)).returncode == 0
    fp8 = [dict(r, dtype="e4m3") for r in FAKE if r["dtype"] == "bf16"]
    assert run_report(tmp_path, fp8, "--benchmarks", str(bm)).returncode == 0
    text = bm.read_text()
    assert text.count("<!-- local_gemm:begin -->") == 1 and text.count("<!-- local_gemm_fp8:begin -->") == 1
    g16, g8 = text.index("<!-- local_gemm:begin"), text.index("<!-- local_gemm_fp8:begin")
    assert "| fp16 |" in text[g16:text.index("<!-- local_gemm:end")]
    fp8_section = text[g8:text.index("<!-- local_gemm_fp8:end")]
    assert "| e4m3 |" in fp8_section and "| fp16 |" not in fp8_section and "fast accumulation" in fp8_section
    assert run_report(tmp_path, FAKE, "--benchmarks", str(bm)).returncode == 0
    assert bm.read_text().count("| e4m3 |") == text.count("| e4m3 |")  # the 16-bit run kept the fp8 rows
    promoted = [dict(r, command="local_gemm --dtype e4m3 --precise-fp8") for r in fp8]
    assert run_report(tmp_path, promoted, "--benchmarks", str(bm)).returncode == 0
    text = bm.read_text()
    assert text.count("<!-- local_gemm_fp8:begin -->") == 1 and text.count("<!-- local_gemm_fp8_promoted:begin -->") == 1
    section = text[text.index("<!-- local_gemm_fp8_promoted:begin"):text.index("<!-- local_gemm_fp8_promoted:end")]
    assert "without fast accumulation" in section and "| e4m3 |" in section


def test_default_report_names_follow_the_section(tmp_path):
    """Without --markdown / --png an fp8 run writes local_gemm_e4m3.md, never over the 16-bit local_gemm.md."""
    fp8 = [dict(r, dtype="e4m3") for r in FAKE if r["dtype"] == "bf16"]
    for records, stem in ((FAKE, "local_gemm"), (fp8, "local_gemm_e4m3"),
                          ([dict(r, command="local_gemm --dtype e4m3 --precise-fp8") for r in fp8],
                           "local_gemm_e4m3_promoted")):
        d = tmp_path / stem
        d.mkdir()
        (d / "run.json").write_text(json.dumps(records))
        assert subprocess.run([sys.executable, str(REPORT), str(d / "run.json")], capture_output=True).returncode == 0
        assert sorted(p.name for p in d.glob("*.md")) == [f"{stem}.md"]


def test_malformed_json_exits_2_naming_the_field(tmp_path):
    bad = [dict(FAKE[0])]
    del bad[0]["cublas_joules"]
    res = run_report(tmp_path, bad)
    assert res.returncode == 2 and "cublas_joules" in res.stderr and "alpha" in res.stderr
    for field, value, said in (("tpgemm_tflops", "400.0", "tpgemm_tflops must be a number or null, got '400.0'"),
                               ("dtype", ["bf16"], "dtype must be a string"),
                               ("check", "passed", "check 'passed' is not one of pass, fail")):
        res = run_report(tmp_path, [dict(FAKE[0], **{field: value})])
        assert res.returncode == 2 and said in res.stderr and "Traceback" not in res.stderr, res.stderr
    (tmp_path / "x.json").write_text("{not json")
    res = subprocess.run([sys.executable, str(REPORT), str(tmp_path / "x.json")], capture_output=True, text=True)
    assert res.returncode == 2 and "cannot read" in res.stderr


CUBLASLT = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "lib64" / "libcublasLt.so"


@pytest.fixture(scope="module")
def bench_bin():
    """build/bench/local_gemm, built here when the toolkit has cuBLASLt (the CI image does)."""
    if not BENCH.exists():
        nvcc = shutil.which("nvcc") or Path("/usr/local/cuda/bin/nvcc").exists()  # as tests/test_build.py finds it
        if not shutil.which("ninja") or not nvcc or not CUBLASLT.exists():
            pytest.skip(f"build/bench/local_gemm cannot be built here (needs ninja, nvcc and {CUBLASLT})")
        res = subprocess.run(["ninja", "bench"], cwd=ROOT, capture_output=True, text=True)
        assert res.returncode == 0, f"ninja bench failed:\n{res.stdout[-4000:]}\n{res.stderr[-2000:]}"
    return str(BENCH)


def test_dry_run_json_feeds_report(bench_bin, tmp_path):
    out = tmp_path / "dry.json"
    res = subprocess.run([bench_bin, "--quick", "--dtype", "bf16", "--dry-run", "--out", str(out)], capture_output=True,
                         text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    assert "estimated" in res.stdout
    records = json.loads(out.read_text())
    assert [r["name"] for r in records] == ["8B-qkv", "8B-o", "gemm-8192"]
    assert all(r["dtype"] == "bf16" and r["tpgemm_tflops"] is None for r in records)
    assert (records[0]["M"], records[0]["N"], records[0]["K"]) == (8192, 3072, 4096)  # AG: N / 2
    assert (records[1]["M"], records[1]["N"], records[1]["K"]) == (8192, 4096, 2048)  # RS: K / 2
    assert run_report(tmp_path, records).returncode == 0
    # but never over BENCHMARKS.md's measured section (the script's header names that command next): refused, kept
    bm = tmp_path / "BENCHMARKS.md"
    assert run_report(tmp_path, FAKE, "--benchmarks", str(bm)).returncode == 0
    kept = bm.read_text()
    table_before = (tmp_path / "t.md").read_text()
    for nothing in (records, []):
        r = run_report(tmp_path, nothing, "--benchmarks", str(bm))
        assert r.returncode == 2 and "holds no measured figure" in r.stderr and bm.read_text() == kept, r.stderr
        assert (tmp_path / "t.md").read_text() == table_before  # nor the table beside it: the refused run writes none


def test_an_output_folder_that_does_not_exist_is_refused_before_anything_is_written(tmp_path):
    for flag in ("--markdown", "--png", "--benchmarks"):
        r = run_report(tmp_path, FAKE, flag, str(tmp_path / "none" / "out"))
        assert r.returncode == 2 and "its folder does not exist" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_problems_take_a_shape_as_well_as_a_name(bench_bin, tmp_path):
    """--problems MxNxK: a local GEMM of that shape (op GEMM, named by the token), next to the table's names."""
    out = tmp_path / "dry.json"
    res = subprocess.run([bench_bin, "--problems", "256x28672x4096,8B-o,0256x28672x4096", "--dtype", "bf16",
                          "--dry-run", "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    records = json.loads(out.read_text())
    assert [(r["name"], r["op"], r["M"], r["N"], r["K"]) for r in records] == [
        ("256x28672x4096", "GEMM", 256, 28672, 4096), ("8B-o", "RS", 8192, 4096, 2048)]  # the same shape counted once


def test_decode_names_the_decode_problems_and_excludes_the_other_lists(bench_bin, tmp_path):
    """--decode: the 70B and 8B layers at M = 16 and 70B qkv / o at M = 64, each the local GEMM of TP = 2 (AG: N / 2,
    RS: K / 2); with --quick or --problems it is a usage error (exit 2), not a silent choice of one."""
    out = tmp_path / "decode.json"
    res = subprocess.run([bench_bin, "--decode", "--dtype", "bf16", "--dry-run", "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    got = {r["name"]: (r["op"], r["M"], r["N"], r["K"]) for r in json.loads(out.read_text())}
    assert got == {"70B-qkv-m16": ("AG", 16, 5120, 8192), "70B-fc1-m16": ("AG", 16, 28672, 8192),
                   "70B-fc2-m16": ("RS", 16, 8192, 14336), "70B-o-m16": ("RS", 16, 8192, 4096),
                   "8B-qkv-m16": ("AG", 16, 3072, 4096), "8B-o-m16": ("RS", 16, 4096, 2048),
                   "70B-qkv-m64": ("AG", 64, 5120, 8192), "70B-o-m64": ("RS", 64, 8192, 4096)}
    for other in (["--quick"], ["--problems", "8B-o"]):
        res = subprocess.run([bench_bin, "--decode", *other, "--dry-run"], capture_output=True, text=True, cwd=ROOT)
        assert res.returncode == 2 and "give one" in res.stderr, (other, res.stderr)


def test_dry_run_e4m3_plans_the_fp8_configs(bench_bin, tmp_path):
    """--dtype e4m3: fp8 records with both shipped e4m3 configs as variants and the K-dependent fp8 bound."""
    out = tmp_path / "fp8.json"
    res = subprocess.run([bench_bin, "--quick", "--dtype", "e4m3", "--dry-run", "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    records = json.loads(out.read_text())
    assert records and all(r["dtype"] == "e4m3" for r in records)
    assert {v["config"] for v in records[0]["variants"]} == {"cublasLt", "gemm_e4m3_tp1", "gemm_e4m3_wide_tp1"}
    gemm8k = next(r for r in records if r["name"] == "gemm-8192")
    assert gemm8k["eps"] == pytest.approx(5e-4 * 8192 ** 0.5)  # max(2e-2, 5e-4 sqrt(K))
    assert next(r for r in records if r["name"] == "8B-o")["eps"] == pytest.approx(5e-4 * 2048 ** 0.5)  # > 2e-2


def test_dry_run_without_out_writes_no_json(bench_bin, tmp_path):
    """A plan without --out must not replace the committed results (bench/results/local_gemm.json, the
    default --out of a measured run, relative to the working directory): it once did."""
    (tmp_path / "bench" / "results").mkdir(parents=True)
    res = subprocess.run([bench_bin, "--quick", "--dtype", "bf16", "--dry-run"], capture_output=True, text=True,
                         cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "estimated" in res.stdout
    assert list((tmp_path / "bench" / "results").iterdir()) == []


def dry_run_8b_o(bench_bin, tmp_path, *flags):
    """The dry-run plan of 8B-o bf16 with extra flags: (stdout, the one record)."""
    out = tmp_path / "dry.json"
    res = subprocess.run([bench_bin, "--problems", "8B-o", "--dtype", "bf16", *flags, "--dry-run", "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return res.stdout, json.loads(out.read_text())[0]


def test_pdl_ab_adds_a_pdl_twin_per_config(bench_bin, tmp_path):
    stdout, record = dry_run_8b_o(bench_bin, tmp_path, "--pdl-ab")
    assert "(PDL)" in stdout
    variants = record["variants"]
    plain = [v["config"] for v in variants[1:] if "pdl" not in v]
    twins = [v["config"] for v in variants[1:] if v.get("pdl") is True]
    assert plain and plain == twins  # each shipped config once as a graph launch, once with PDL


def test_aa_adds_a_cublas_control_last_and_the_order_is_counterbalanced(bench_bin, tmp_path):
    stdout, record = dry_run_8b_o(bench_bin, tmp_path, "--aa")
    assert "forward, then reversed" in stdout
    variants = record["variants"]
    assert variants[0]["config"] == "cublasLt" and "control" not in variants[0]
    assert variants[-1]["config"] == "cublasLt_control" and variants[-1]["control"] is True
    assert sum(1 for v in variants if v.get("control")) == 1
    # two rounds (forward, reversed): every variant's mean position is the same
    assert record["method"]["rounds"] == 2 and "reversed" in record["method"]["sustained_order"]
    assert all(len(v["rounds"]) == 2 and {"temp_c_start", "temp_c_end"} <= set(v["rounds"][0]) for v in variants)
    assert record["method"]["heat_windows"] > 1  # the first measured window must not start cooler than the rest


def test_lt_algos_adds_cublas_best_of_n_that_is_never_published(bench_bin, tmp_path):
    """--lt-algos N: one cublasLt_best_of_N variant beside cuBLASLt's top algorithm (var[0] stays the baseline of the
    tables), before the --aa control; neither is the config a record publishes."""
    stdout, record = dry_run_8b_o(bench_bin, tmp_path, "--lt-algos", "8", "--aa")
    variants = record["variants"]
    assert variants[0]["config"] == "cublasLt" and "lt_best_of" not in variants[0]
    assert [v["config"] for v in variants if "lt_best_of" in v] == ["cublasLt_best_of_8"]
    assert variants[-2]["lt_best_of"] == 8 and variants[-1]["config"] == "cublasLt_control"
    assert record["config"].endswith("_tp1") and "cublasLt_best_of_8" in stdout
    _, plain = dry_run_8b_o(bench_bin, tmp_path)
    assert [v["config"] for v in plain["variants"]] == [v["config"] for v in variants[:-2]]


def test_configs_keeps_only_the_named_configs(bench_bin, tmp_path):
    """--configs: exact names, or prefixes ending in '*'; one variant per kernel, cuBLAS always first."""
    def plan(sel):
        out = tmp_path / "dry.json"
        res = subprocess.run([bench_bin, "--problems", "8B-o", "--dtype", "bf16", "--configs", sel, "--dry-run", "--out",
                              str(out)], capture_output=True, text=True, cwd=ROOT)
        assert res.returncode == 0, res.stderr
        return [v["config"] for v in json.loads(out.read_text())[0]["variants"]]
    assert plan("ag_rota_bf16_wide_tp1") == ["cublasLt", "ag_rota_bf16_wide_tp1"]
    shipped = plan("ag_rota_bf16*")
    assert shipped[0] == "cublasLt" and set(shipped[1:]) == {"ag_rota_bf16_tp1", "ag_rota_bf16_pp64_tp1",
                                                              "ag_rota_bf16_sk64_tp1", "ag_rota_bf16_w160_tp1",
                                                              "ag_rota_bf16_wide_tp1"}
    wide_and_pp = plan("ag_rota_bf16_tp1,ag_rota_bf16_wide*")
    # rs_tila_bf16 / rs_tila_bf16_wide run the same two kernels at TP = 1
    assert len(plan("ag_rota_bf16_tp1,ag_rota_bf16_wide*,rs_tila_bf16_tp1,rs_tila_bf16_wide_tp1")) == len(wide_and_pp)
    everything = plan("*")
    assert set(wide_and_pp) < set(everything)


def test_a_default_run_times_a_few_token_tile_only_where_it_is_the_pick(bench_bin, tmp_path):
    """Without --configs, the configs with a wave_weight (128x160, ping-pong 64x128) and the stream-K ones run only on
    the problems whose default pick they are (70B-qkv-m512: 128x160; 70B-o-m128, a 128-row GEMM and 70B-qkv-m16 - 40
    tiles, spread: templates/kernels/spread.h -: 64x128; 16 x 4096 x 8192: the split rule's stream-K 64x128), not on the
    anchors."""
    out = tmp_path / "dry.json"
    res = subprocess.run([bench_bin, "--problems", "70B-qkv-m512,70B-o-m128,128x8192x4096,70B-qkv-m16,16x4096x8192,8B-o,"
                          "70B-qkv",
                          "--dtype", "bf16", "--dry-run", "--out", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    few = {"ag_rota_bf16_w160_tp1", "ag_rota_bf16_pp64_tp1", "ag_rota_bf16_sk64_tp1"}
    extra = {r["name"]: {v["config"] for v in r["variants"]} & few for r in json.loads(out.read_text())}
    assert extra == {"70B-qkv-m512": {"ag_rota_bf16_w160_tp1"}, "70B-o-m128": {"ag_rota_bf16_pp64_tp1"},
                     "128x8192x4096": {"ag_rota_bf16_pp64_tp1"}, "70B-qkv-m16": {"ag_rota_bf16_pp64_tp1"},
                     "16x4096x8192": {"ag_rota_bf16_sk64_tp1"}, "8B-o": set(), "70B-qkv": set()}


def test_the_table_text_gives_tpgemm_over_cublas_best_of_n_where_the_run_timed_it():
    """--lt-algos runs: a line per dtype with tpgemm over cuBLASLt's best of N and it over the top algorithm, over the
    records that count and whose best-of-N variant passed its check; runs without the variant get no line."""
    report = load_report()
    tuned = lambda burst, sust, check="pass": {"config": "cublasLt_best_of_8", "lt_best_of": 8,  # noqa: E731
                                                 "burst_tflops": burst, "sustained_tflops": sust, "check": check}
    records = [dict(FAKE[0], variants=[tuned(500.0, 600.0)]), dict(FAKE[1], variants=[tuned(625.0, 400.0)]),
               dict(FAKE[1], name="delta", variants=[tuned(10.0, 10.0, check="fail")])]
    line = [t for t in report.markdown(records).splitlines() if "fastest of its first 8" in t]
    assert len(line) == 1 and "(bf16, 2 problems;" in line[0]
    # tpgemm / it: burst 400/500, 625/625; sustained 300/600, 800/400; it / top: burst 500/500, 625/500, sustained
    # 600/600, 400/400
    assert f"tpgemm / it {math.sqrt(0.8):.3f} burst, 1.000 sustained" in line[0]
    assert f"it / the top algorithm {math.sqrt(1.25):.3f} burst, 1.000 sustained" in line[0]
    assert "fastest of its first" not in report.markdown(FAKE)


def test_the_table_text_says_how_the_sustained_windows_ran():
    report = load_report()
    new = [dict(FAKE[0], method={"rounds": 2, "heat_windows": 2.5, "sustained_order": "forward in even rounds"})]
    assert "forward then in reverse" in report.markdown(new) and "2.5 windows" in report.markdown(new)
    old = [{k: v for k, v in FAKE[0].items() if k != "method"}]  # runs before the order was counterbalanced
    assert "1 round, cuBLAS first" in report.markdown(old) and "1 window;" in report.markdown(old)
    mixed = report.sustained_method(old + new)  # a JSON joining two runs describes both
    assert "cuBLAS first" in mixed and "in reverse" in mixed and mixed.count("heat window") == 2


@pytest.mark.parametrize("args, needle", [(["--problems", "nope"], "unknown problem 'nope'"),
                                          (["--problems", "128x100x64"], "N must be a multiple of 8 and K of 16"),
                                          (["--problems", "0x128x64"], "give MxNxK with each extent in 1..1048576"),
                                          (["--problems", "405B-fc1x"], "unknown problem '405B-fc1x'"),
                                          (["--problems", ",".join(f"{m}x8x16" for m in range(1, 26))],
                                           "names more than 24 problems"),
                                          (["--problems", ",".join(["8B-o"] * 120)], "at most 511"),
                                          (["--dtype", "fp8"], "--dtype 'fp8'"),
                                          (["--dtype", "e5m2"], "--dtype 'e5m2'"),
                                          (["--precise-fp8"], "--precise-fp8 compares fp8 kernels"),
                                          (["--dtype", "e4m3", "--configs", "gemm_e4m3_promoted_tp1"],
                                           "the fp8_promote configs with --precise-fp8"),
                                          (["--cool-s", "0.2"], "--cool-s '0.2'"),
                                          (["--bogus"], "--bogus"),
                                          (["--configs", "nope_tp1"], "--configs 'nope_tp1' selects no"),
                                          (["--configs", "ag_rota_fp16_wide_tp1", "--dtype", "bf16"],
                                           "selects no TP = 1 config of the chosen dtype"),
                                          (["--configs", ","], "--configs ',' names no config"),
                                          (["--out"], "--out '--dry-run': unknown flag, or a flag whose value"),
                                          (["--dtype=fp16"], "not --dtype=fp16"),
                                          (["--seed", "1e3"], "--seed '1e3'"),
                                          (["--seed", "-1"], "--seed '-1'"),
                                          (["--seed", "18446744073709551616"], "--seed '18446744073709551616'"),
                                          (["--device", "0x3"], "--device '0x3'"),
                                          (["--device", "64"], "--device '64'"),
                                          (["--lt-algos", "1"], "--lt-algos '1': a count of algorithms in [2, 16]"),
                                          (["--lt-algos", "17"], "--lt-algos '17'"),
                                          (["--lt-algos", "8x"], "--lt-algos '8x'")])
def test_usage_errors_exit_2(bench_bin, args, needle):
    res = subprocess.run([bench_bin, *args, "--dry-run"], capture_output=True, text=True)
    assert res.returncode == 2 and needle in res.stderr


def test_no_gpu_exits_3(bench_bin):
    if shutil.which("nvidia-smi") or os.path.exists("/dev/nvidia0"):
        pytest.skip("a GPU may be visible here")
    res = subprocess.run([bench_bin, "--quick"], capture_output=True, text=True)
    assert res.returncode == 3 and "needs one Hopper" in res.stderr


def test_tma_rate_lists_variants_that_fit_and_rejects_bad_problems(bench_bin):
    """build/bench/tma_rate (ninja bench): every variant's ring fits one SM's shared memory, and a bad
    problem is a usage error that names the argument, before any GPU is touched."""
    tool = str(Path(bench_bin).parent / "tma_rate")
    res = subprocess.run([tool, "--list"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 15 and sum("stores 1" in line for line in lines) == 8
    assert any("x32 cluster 2x1 stages 8" in line for line in lines)  # the 64-byte-slot ring
    for line in lines:
        smem = int(line.rsplit("smem ", 1)[1])
        assert 0 < smem <= 232448, line  # sm_90 opt-in maximum per block
    for bad in (["--problem", "100x7x8"], ["--problem", "8x8"], ["--rounds", "17"], ["--iterations", "0"],
                ["--compute-cycles", "0"], ["--epilogue-cycles", "-5"], ["--problem", "4096x4096x4096z"],
                ["--iterations", "10abc"]):
        res = subprocess.run([tool, *bad], capture_output=True, text=True)
        assert res.returncode == 2 and "usage: tma_rate" in res.stderr and bad[0] in res.stderr, (bad, res.stderr)
    res = subprocess.run([tool, "--epilogue-cycles", "2000"], capture_output=True, text=True)
    assert res.returncode == 2 and "needs --compute-cycles" in res.stderr  # an epilogue follows emulated math only


def test_a_record_without_a_sound_baseline_or_whole_windows_counts_in_no_geomean(tmp_path):
    """cuBLAS failing the fp32 reference leaves no baseline, and a tpgemm variant dropped after its first windows
    keeps figures of those only: both rows say so, and neither counts in a geomean (a faster 1.25 would lift it)."""
    good = rec("alpha", "bf16", 400.0, 500.0, 400.0, 500.0, 0.01, 0.01)
    no_ref = rec("beta", "bf16", 625.0, 500.0, 625.0, 500.0, 0.01, 0.01, cublas_ref_check="fail")
    dropped = rec("delta", "bf16", 625.0, 500.0, 625.0, 500.0, 0.01, 0.01,
                  variants=[{"config": "cublasLt"}, {"config": "cfg_bf16_tp1", "error": "launch timed out"}])
    m = load_report()
    assert m.summary([good, no_ref, dropped])["bf16"]["burst"] == (pytest.approx(0.8), 1)
    res = run_report(tmp_path, [good, no_ref, dropped])
    assert res.returncode == 0, res.stderr
    md = (tmp_path / "t.md").read_text()
    assert "cuBLAS vs the fp32 reference: **FAIL**" in row(md, "beta", "bf16")[14]
    assert "tpgemm: launch timed out" in row(md, "delta", "bf16")[14]
    assert row(md, "**geomean bf16**", "bf16")[7] == "**0.800** (1)"


@pytest.fixture(scope="module")
def cli_bin(bench_bin):
    """build/tpgemm (the CLI), built here if a fresh tree has not built it yet (`ninja bench` does not)."""
    cli = ROOT / "build" / "tpgemm"
    if not cli.exists():
        res = subprocess.run(["ninja", "build/tpgemm"], cwd=ROOT, capture_output=True, text=True)
        assert res.returncode == 0, f"ninja build/tpgemm failed:\n{res.stdout[-4000:]}\n{res.stderr[-2000:]}"
    return str(cli)


def test_a_record_publishes_the_runtimes_pick(bench_bin, cli_bin, tmp_path):
    """The row shows the config the runtime picks for the problem (tpg_config_pick at TP = 1), not the fastest on the
    windows shown; where --configs leaves the pick out, the best one, said in `published`. The CLI's dry run names
    the same pick."""
    out = tmp_path / "dry.json"
    res = subprocess.run([bench_bin, "--quick", "--dtype", "bf16", "--dry-run", "--out", str(out)], capture_output=True,
                         text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    for r in json.loads(out.read_text()):
        assert r["published"] == "pick" and r["config"] in {v["config"] for v in r["variants"]}
        sched = "AllGather1D_TilingCD_RotatingA" if r["op"] != "RS" else "ReduceScatter1D_TilingA_RotatingC"
        cli = subprocess.run([cli_bin, "--schedule", sched, "--tp", "1", "--m", str(r["M"]),
                              "--n", str(r["N"]), "--k", str(r["K"]), "--dry-run", "--json"], capture_output=True,
                             text=True, cwd=ROOT)
        assert cli.returncode == 0, cli.stderr
        assert json.loads(cli.stdout.splitlines()[-1])["kernel"]["name"] == r["kernel"], r["name"]
    res = subprocess.run([bench_bin, "--quick", "--dtype", "bf16", "--dry-run", "--out", str(out), "--configs",
                          "ag_rota_bf16_tp1"], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr
    picked = {r["name"]: (r["config"], r["published"]) for r in json.loads(out.read_text())}
    assert set(picked.values()) == {("ag_rota_bf16_tp1", "best")}, picked
    report = load_report()
    assert "| ag_rota_bf16_tp1 (best) |" in report.table(json.loads(out.read_text()))  # the row says it


def test_the_table_text_says_which_config_and_check_and_burst_method():
    """Runs since 2026-12-05 publish the pick, check per element after the sustained rounds too and delay a burst
    window's first event; older records keep their own description."""
    report = load_report()
    new = [dict(FAKE[0], method={"best": "the runtime's pick (tpg_config_pick at TP = 1), else max burst x sustained",
                                 "check": "max |d - ref| / max(|ref|, rms(ref)) against cuBLAS, after the first call "
                                          "and after the sustained rounds",
                                 "burst": "an unmeasured window after a longer idle, then idle before every window"})]
    text = report.markdown(new)
    assert "the one the runtime picks for the problem" in text and "max(|ref|, rms(ref))" in text
    assert "after one unmeasured window a problem" in text and "device-side delay" in text
    old = report.markdown([{k: v for k, v in FAKE[0].items() if k != "method"}])
    assert "the one with the highest burst × sustained rate." in old and "max |d − ref| / max |ref|" in old
    assert "unmeasured window a problem" not in old and "runtime picks" not in old
