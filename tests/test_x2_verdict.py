"""bench/x2/verdict.py: issue 4's acceptance points and the copy-engine switch's rule from a TP record file, on
records made up to sit on each side of every bound."""
import importlib.util
import json
import math
import subprocess
import sys

import pytest

from tests.conftest import ROOT

_spec = importlib.util.spec_from_file_location("verdict", ROOT / "bench" / "x2" / "verdict.py")
verdict = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(verdict)


def record(name, op, m, n, k, fused, local=None, asy=None, cublas=None, config="x_tp2", twin=None, twin_check="passed"):
    r = {"name": name, "op": op, "M": m, "N": n, "K": k, "tp": 2, "dtype": "bf16", "tpgemm_tflops": fused,
         "local_tflops": local or fused,
         "torch_async_tp_tflops": asy or fused / 1.2, "cublas_local_tflops": cublas or fused, "check": "passed",
         "config": config}
    if twin is not None:
        r["alt"] = {"copy_engine_partials": {"tflops": twin, "check": twin_check, "config": config + "_ce"}}
    return r


def anchors(ce_pp=1.0, ce_wide=1.0, twin_check="passed", fc2_local=700.0, seed_cublas=680.0):
    """The eight shapes: four all-gather (the seed problem among them) and four reduce-scatter ones, two of each
    kernel."""
    rs = [("405B-fc2", 16384, 16384, 53248, "rs_tila_bf16_wide_tp2", ce_wide, fc2_local),
          ("70B-fc2", 16384, 8192, 28672, "rs_tila_bf16_wide_tp2", ce_wide, 700.0),
          ("70B-o", 16384, 8192, 8192, "rs_tila_bf16_tp2", ce_pp, 700.0),
          ("8B-o", 8192, 4096, 4096, "rs_tila_bf16_tp2", ce_pp, 700.0)]
    return ([record("405B-fc1", "AG", 16384, 106496, 16384, 690.0, local=700.0, cublas=seed_cublas),
             record("70B-fc1", "AG", 16384, 57344, 8192, 690.0), record("70B-qkv", "AG", 16384, 10240, 8192, 680.0),
             record("8B-qkv", "AG", 8192, 6144, 4096, 600.0)]
            + [record(n, "RS", m, nn, k, 690.0, local=loc, config=c, twin=690.0 * x, twin_check=twin_check)
               for n, m, nn, k, c, x, loc in rs])


def test_every_point_holds_and_an_even_twin_switches():
    points = verdict.acceptance(anchors())
    assert [holds for _, holds, _ in points] == [True] * 5, points
    assert verdict.switch_rule(anchors())[0].startswith("switch (")


def test_each_point_fails_on_its_own_bound():
    fails = lambda recs: [p for p, holds, _ in verdict.acceptance(recs) if not holds]  # noqa: E731
    assert fails(anchors(fc2_local=712.0)) == ["fused >= 0.97 x tpgemm local, M = 16384"]  # 690 / 712 = 0.969
    assert fails(anchors(seed_cublas=691.0)) == ["seed problem >= 1.00 x cuBLAS local"]
    slow = anchors()
    slow[3]["torch_async_tp_tflops"] = 601.0  # one shape under 1.00; the geomean still over 1.10
    assert fails(slow) == ["every shape >= 1.00 x async TP"]
    slow = [{**r, "torch_async_tp_tflops": r["tpgemm_tflops"] / 1.09} for r in anchors()]
    assert fails(slow) == ["geomean >= 1.10 x PyTorch async TP"]
    bad = anchors()
    bad[3]["check"] = "failed"  # 8B-qkv: no figure of it counts, so the points over all eight lack one
    assert fails(bad) == ["geomean >= 1.10 x PyTorch async TP", "every shape >= 1.00 x async TP",
                          "reference check on every shape"]
    bad[3]["check"] = "passed"
    bad[4]["check"] = "failed"  # 405B-fc2 (M = 16384): the fused / local point lacks it too
    assert fails(bad) == ["geomean >= 1.10 x PyTorch async TP", "every shape >= 1.00 x async TP",
                          "reference check on every shape", "fused >= 0.97 x tpgemm local, M = 16384"]
    fast_and_wrong = anchors()  # a failed shape's speed counts in no other point
    fast_and_wrong[3].update(check="failed", tpgemm_tflops=6000.0)
    points = {p: figures for p, _, figures in verdict.acceptance(fast_and_wrong)}
    assert points["geomean >= 1.10 x PyTorch async TP"] == "1.200 (over 7 of 8)", points
    assert points["every shape >= 1.00 x async TP"] == "below: 8B-qkv - (over 7 of 8)", points


def test_the_switch_rule():
    assert verdict.switch_rule(anchors(ce_pp=0.99, ce_wide=1.03))[0].startswith("switch the _wide families only")
    assert verdict.switch_rule(anchors(ce_pp=0.99, ce_wide=0.99))[0] == "keep the push"
    assert verdict.switch_rule(anchors(ce_pp=1.2, ce_wide=1.2, twin_check="failed"))[0].startswith("keep the push (")
    # 8B-o (M = 8192) may lose if the geomean holds; an M = 16384 shape may not
    recs = anchors(ce_pp=1.05, ce_wide=1.05)
    recs[-1]["alt"]["copy_engine_partials"]["tflops"] = 690.0 * 0.98
    assert verdict.switch_rule(recs)[0].startswith("switch (")
    recs[-2]["alt"]["copy_engine_partials"]["tflops"] = 690.0 * 0.99  # 70B-o under the pick
    assert not verdict.switch_rule(recs)[0].startswith("switch (")


def switched(recs):
    """Call 4's file: the same records with push twins (the defaults switched to the copy engine)."""
    for r in recs:
        if "alt" in r:
            r["alt"] = {"push_partials": r["alt"].pop("copy_engine_partials")}
    return recs


def test_the_rule_after_the_switch_reads_push_twins():
    """Call 4's file: the twin is the push, the same rule on copy engine / push decides, and a tie keeps the switch."""
    rule = lambda recs: verdict.switch_rule(recs)[0]  # noqa: E731
    assert rule(switched(anchors(ce_pp=1.0, ce_wide=1.0))).startswith("keep the switch (the copy engine")
    assert rule(switched(anchors(ce_pp=0.97, ce_wide=0.97))).startswith("keep the switch (the copy engine")
    assert rule(switched(anchors(ce_pp=1.02, ce_wide=1.02))).startswith("undo the switch")
    mixed = switched(anchors(ce_pp=0.99, ce_wide=0.99))
    mixed[4]["alt"]["push_partials"]["tflops"] = 690.0 * 1.02  # 405B-fc2 pushes faster: the rule fails there
    assert rule(mixed).startswith("undo the switch")
    assert rule(switched(anchors(ce_pp=1.2, ce_wide=1.2, twin_check="failed"))).startswith(
        "keep the switch (a pick or its push twin")
    lines = verdict.switch_rule(switched(anchors(ce_pp=0.97, ce_wide=0.97)))[1]
    assert len(lines) == 4 and all("twin / pick 0.970, pick check passed, twin check passed" in line
                                   for line in lines), lines


def test_after_a_switch_of_the_wide_families_the_pushing_picks_are_left_out(monkeypatch):
    monkeypatch.setattr(verdict, "FAMILIES", [f for f in verdict.FAMILIES if f.endswith("_wide")])  # as that switch
    recs = switched(anchors(ce_pp=0.97, ce_wide=1.05))
    for r in recs:
        if r.get("op") == "RS" and "_wide" not in r["config"]:
            del r["alt"]  # the 128x128 picks still push: tp_bench gives them no push twin
    answer, lines = verdict.switch_rule(recs)
    assert answer.startswith("undo the switch") and len(lines) == 2, (answer, lines)
    for r in recs:
        if "alt" in r:
            r["alt"]["push_partials"]["tflops"] = 690.0 * 0.97
    assert verdict.switch_rule(recs)[0].startswith("keep the switch (the copy engine")


def test_the_command_reads_a_record_file(tmp_path):
    path = tmp_path / "tp2.json"
    path.write_text(json.dumps(anchors()))
    out = subprocess.run([sys.executable, str(ROOT / "bench/x2/verdict.py"), str(path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.count("PASS") == 5 and "rule: switch (" in out.stdout, out.stdout


def test_a_file_without_all_eight_shapes_passes_no_shape_point():
    """A run cut short after two shapes (or a file of another dtype or TP) must not read as acceptance."""
    names = [p for p, _, _ in verdict.acceptance(anchors())]
    short = anchors()[:2]
    points = verdict.acceptance(short)
    assert [holds for _, holds, _ in points] == [False, False, False, False, True], points
    assert all("missing: 70B-qkv, 8B-qkv, 405B-fc2" in figures for _, _, figures in points[:4]), points
    other = [{**r, "tp": 4} if r["name"] == "8B-o" else r for r in anchors()]
    assert [p for p, holds, _ in verdict.acceptance(other) if not holds] == names[:4]


def test_a_shape_without_an_async_tp_figure_fails_the_geomean_and_the_per_shape_point():
    """Before 2026-12-06 the geomean left a shape without an async-TP figure out and passed over the other seven."""
    recs = anchors()
    recs[5]["torch_async_tp_tflops"] = None
    points = {p: (holds, figures) for p, holds, figures in verdict.acceptance(recs)}
    assert [p for p, (holds, _) in points.items() if not holds] == ["geomean >= 1.10 x PyTorch async TP",
                                                                    "every shape >= 1.00 x async TP"]
    assert points["geomean >= 1.10 x PyTorch async TP"][1] == "1.200 (over 7 of 8)", points  # 1.2 each, yet FAIL
    assert points["every shape >= 1.00 x async TP"][1] == "below: 70B-fc2 - (over 7 of 8)", points


def test_a_shape_whose_async_tp_check_failed_is_named_where_its_ratio_is_missing():
    """tp_bench times no baseline whose own output check failed: the async-TP points say which shape that was."""
    recs = anchors()
    recs[5]["torch_async_tp_tflops"], recs[5]["torch_async_tp_check"] = None, "failed"
    recs[6]["torch_async_tp_check"] = "passed"
    points = {p: (holds, figures) for p, holds, figures in verdict.acceptance(recs)}
    assert not points["geomean >= 1.10 x PyTorch async TP"][0] and not points["every shape >= 1.00 x async TP"][0]
    assert points["every shape >= 1.00 x async TP"][1] == \
        "below: 70B-fc2 - (over 7 of 8); async TP's check not passed: 70B-fc2", points
    assert points["geomean >= 1.10 x PyTorch async TP"][1].endswith("; async TP's check not passed: 70B-fc2"), points


def test_the_shape_points_say_how_many_shapes_they_cover():
    points = {p: figures for p, _, figures in verdict.acceptance(anchors())}
    assert points["every shape >= 1.00 x async TP"] == "below: none (over 8 of 8)", points
    assert points["fused >= 0.97 x tpgemm local, M = 16384"] == "below: none (over 6 of 6)", points
    assert "over" not in points["geomean >= 1.10 x PyTorch async TP"], points  # all eight: the figure alone


def test_the_local_point_needs_every_big_shapes_local_figure_and_its_check():
    """fused / local over the six M = 16384 shapes: one without a local figure, or whose local GEMM failed its check
    (tp_bench.py's local_check: a wrong denominator), fails the point; 8B-o (M = 8192) is not one of them."""
    name = "fused >= 0.97 x tpgemm local, M = 16384"
    recs = anchors()
    recs[6]["local_tflops"] = None  # 70B-o
    points = {p: (holds, figures) for p, holds, figures in verdict.acceptance(recs)}
    assert points[name] == (False, "below: 70B-o - (over 5 of 6)"), points[name]
    recs = anchors()
    recs[1]["local_check"] = "failed"  # 70B-fc1: and a wrong local GEMM is a failed check
    assert [p for p, holds, _ in verdict.acceptance(recs) if not holds] == ["reference check on every shape", name]
    recs = anchors()
    recs[7]["local_tflops"], recs[7]["local_check"] = None, "failed"  # 8B-o
    assert [p for p, holds, _ in verdict.acceptance(recs) if not holds] == ["reference check on every shape"]
    recs[7]["local_check"] = "passed"
    assert all(holds for _, holds, _ in verdict.acceptance(recs))


def test_the_seed_point_needs_a_passed_check_and_a_figure():
    """A seed-problem record whose check failed (a wrong output, fast) passed the point until 2026-12-06."""
    seed_point = lambda recs: verdict.acceptance(recs)[4]  # noqa: E731
    recs = anchors(seed_cublas=600.0)  # 690 / 600: well above 1.00
    assert seed_point(recs)[1] is True
    recs[0]["check"] = "failed"
    assert seed_point(recs) == ("seed problem >= 1.00 x cuBLAS local", False, "1.150, check failed")
    recs = anchors()
    recs[0]["cublas_local_tflops"] = None
    assert seed_point(recs)[1:] == (False, "no figure")
    assert seed_point(anchors()[1:])[1:] == (False, "no record")


def test_the_command_prints_the_coverage(tmp_path):
    recs = anchors()
    recs[2]["torch_async_tp_tflops"] = None
    path = tmp_path / "tp2.json"
    path.write_text(json.dumps(recs))
    out = subprocess.run([sys.executable, str(ROOT / "bench/x2/verdict.py"), str(path)], capture_output=True,
                         text=True, timeout=60)
    assert "FAIL  geomean >= 1.10 x PyTorch async TP: 1.200 (over 7 of 8)" in out.stdout, out.stdout


def test_the_rule_decides_nothing_on_a_run_cut_short_or_on_a_failed_pick():
    """The switch needs every reduce-scatter shape (a run stopped by its bound after two of them must not switch on
    those two), and a pick whose check failed is no baseline: the twin's 5% lead over it decides nothing."""
    fast = anchors(ce_pp=1.05, ce_wide=1.05)
    assert verdict.switch_rule(fast)[0].startswith("switch (")
    cut = [r for r in fast if r["name"] not in ("70B-o", "8B-o")]
    answer = verdict.switch_rule(cut)[0]
    assert answer.startswith("keep the push") and "no record of 70B-o, 8B-o" in answer, answer
    bad = anchors(ce_pp=1.05, ce_wide=1.05)
    bad[6]["check"] = "failed"  # 70B-o's pick
    answer, lines = verdict.switch_rule(bad)
    assert answer.startswith("keep the push") and "a pick or its copy-engine twin" in answer, answer
    assert any(line.startswith("70B-o") and "pick check failed" in line for line in lines), lines



def test_the_rules_geomean_is_over_all_four_shapes():
    """Even on the three M = 16384 shapes, 0.90 on 8B-o: the geomean of all four (0.974) does not switch them all
    (the _wide families, even on both of theirs, do); over the M = 16384 shapes alone it would have."""
    recs = anchors(ce_pp=1.0, ce_wide=1.0)
    recs[7]["alt"]["copy_engine_partials"]["tflops"] = 690.0 * 0.90
    assert verdict.switch_rule(recs)[0].startswith("switch the _wide families only")


@pytest.mark.parametrize("shape", [4, 7])  # 405B-fc2 (M = 16384), 8B-o (M = 8192)
@pytest.mark.parametrize("field", ["twin", "pick"])
def test_a_pick_or_twin_without_a_figure_decides_nothing(shape, field):
    """A checked pick or twin with no TFLOP/s: the rule is over every shape's ratio, so it neither switches nor undoes
    on the others (8B-o's missing ratio once left the geomean to the other three, which switched)."""
    for switched_file, keep in ((False, "keep the push ("), (True, "keep the switch (")):
        recs = anchors(ce_pp=1.05, ce_wide=1.05)
        recs = switched(recs) if switched_file else recs
        twin = recs[shape]["alt"]["push_partials" if switched_file else "copy_engine_partials"]
        twin["tflops"] = None
        if field == "pick":
            twin["tflops"], recs[shape]["tpgemm_tflops"] = 690.0 * 1.05, None
        answer = verdict.switch_rule(recs)[0]
        assert answer.startswith(keep) and f"no figure of the pick or its twin on {recs[shape]['name']}" in answer, \
            answer

def test_the_per_element_errors_name_the_largest_of_each_check():
    """The file's largest per-element error of each check and its shape; an older file (no such field) says so."""
    recs = [{"name": "8B-o", "elem_err": 8e-3, "recheck_elem_err": 7e-3, "local_elem_err": 0.0},
            {"name": "70B-o", "elem_err": 1.1e-2, "recheck_elem_err": None, "local_elem_err": 0.0}]
    line = verdict.per_element_errors(recs)
    assert line.startswith("per-element errors (bound 0.05): tpgemm 1.10e-02 (70B-o), its re-check 7.00e-03 (8B-o)")
    assert "async TP (recorded only) not recorded" in line


def test_the_per_element_errors_name_each_twins_and_the_local_recheck():
    """The twins' checks decide the switch: each alt variant's largest per-element error (and its re-check's) is
    printed under the variant's name, beside the local GEMM's re-check; an inf is printed, not dropped."""
    recs = [{"name": "70B-o", "elem_err": 1e-2, "local_recheck_elem_err": 0.0,
             "alt": {"copy_engine_partials": {"elem_err": float("inf"), "recheck_elem_err": 9e-3}}},
            {"name": "8B-o", "elem_err": 8e-3, "alt": {"copy_engine_partials": {"elem_err": 7e-3}}}]
    line = verdict.per_element_errors(recs)
    assert "local re-check 0.00e+00 (70B-o)" in line, line
    assert "copy_engine_partials inf (70B-o), copy_engine_partials re-check 9.00e-03 (70B-o)" in line, line


def test_a_cut_call4_file_without_push_twins_is_read_as_switched():
    """Call 4 cut before its reduce-scatter shapes holds no push twin: with --switched (call4_switch.sh passes it) the
    verdict still reads it as the switched tree's - keep the switch until the rule can say otherwise - not as call 1's
    "keep the push", which would read as a reason to undo the switch."""
    cut = [r for r in anchors() if r["op"] == "AG"]
    assert verdict.switch_rule(cut)[0].startswith("keep the push")
    answer = verdict.switch_rule(cut, switched=True)[0]
    assert answer.startswith("keep the switch (no record of"), answer
    assert verdict.twin_of(cut, switched=True) == verdict.PUSH_TWIN and verdict.twin_of(cut) == verdict.CE_TWIN


def test_the_command_takes_switched(tmp_path):
    path = tmp_path / "tp2.json"
    path.write_text(json.dumps([r for r in anchors() if r["op"] == "AG"]))
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "x2" / "verdict.py"), "--switched", str(path)],
                         capture_output=True, text=True, check=True).stdout
    assert "pushed partials (call 4's twins):" in out and "rule: keep the switch (no record of" in out, out


def test_a_switched_pick_without_its_push_twin_decides_nothing():
    """A full switch (every family of ce_default.py's FAMILIES) whose file lacks 70B-o's push twin (tp_bench said "no
    alt:push_partials" on stderr and ran on): the rule over the other three would decide for a shape it never
    compared."""
    recs = switched(anchors(ce_pp=1.02, ce_wide=1.02))
    del recs[6]["alt"]  # 70B-o
    answer, lines = verdict.switch_rule(recs)
    assert answer.startswith("keep the switch (no push twin of 70B-o, whose pick is of a switched family"), answer
    assert verdict.switched_family("rs_tila_bf16_tp2") and verdict.switched_family("rs_tilb_bf16_wide_tp8")
    assert not verdict.switched_family("rs_tila_bf16_pp64_tp2") and not verdict.switched_family(None)


def test_a_switched_file_with_every_shape_but_no_push_twin_keeps_the_switch():
    """All eight shapes, none with a push twin (tp_bench ran without --alt-push-partials): nothing to compare, so the
    switch stays - an "undo" there would come from no measurement at all."""
    recs = anchors()
    for r in recs:
        r.pop("alt", None)
    answer = verdict.switch_rule(recs, switched=True)[0]
    assert answer.startswith("keep the switch (a pick or its push twin"), answer


def test_a_seed_ratio_of_exactly_one_holds_the_seed_point():
    points = {p: holds for p, holds, _ in verdict.acceptance(anchors(seed_cublas=690.0))}  # fused 690 / cuBLAS 690
    assert points["seed problem >= 1.00 x cuBLAS local"] is True, points



def test_an_async_tp_ratio_of_exactly_one_holds_the_per_shape_point():
    recs = anchors()
    recs[3]["torch_async_tp_tflops"] = recs[3]["tpgemm_tflops"]  # 8B-qkv at 1.00 x async TP; the geomean still 1.17
    points = {p: (holds, figures) for p, holds, figures in verdict.acceptance(recs)}
    assert points["every shape >= 1.00 x async TP"] == (True, "below: none (over 8 of 8)"), points

def test_a_ratio_just_under_its_bound_does_not_print_as_the_bound():
    """The figures beside a FAIL are cut to three decimals, not rounded: 0.99993 x cuBLAS printed "1.000" beside
    "seed problem >= 1.00 x cuBLAS local: FAIL" before."""
    recs = anchors(seed_cublas=690.0 / 0.99993)
    points = {p: (holds, figs) for p, holds, figs in verdict.acceptance(recs)}
    assert points["seed problem >= 1.00 x cuBLAS local"] == (False, "0.999"), points
    recs = anchors()
    recs[3]["torch_async_tp_tflops"] = 600.0 / 0.99996  # 8B-qkv just under 1.00 x async TP
    low = dict((p, (holds, figs)) for p, holds, figs in verdict.acceptance(recs))["every shape >= 1.00 x async TP"]
    assert low[0] is False and "8B-qkv 0.999" in low[1], low
    assert verdict.down3(1.0) == "1.000" and verdict.down3(1.10499) == "1.104"


def failing(recs):
    return [p for p, holds, _ in verdict.acceptance(recs) if not holds]


def test_the_bounds_themselves_hold():
    """1.10 x async TP in geomean and 0.97 of the local GEMM are met at the bound, not only above it."""
    even = [{**r, "tpgemm_tflops": 660.0, "local_tflops": 660.0, "cublas_local_tflops": 600.0,
             "torch_async_tp_tflops": 600.0} for r in anchors()]
    assert failing(even) == []
    recs = anchors()
    for r in recs:
        if r["M"] == 16384:
            r.update(tpgemm_tflops=97.0, local_tflops=100.0, torch_async_tp_tflops=80.0, cublas_local_tflops=97.0)
    assert failing(recs) == []


def test_a_shape_not_checked_counts_nowhere():
    """A check "not run" (or none recorded) is not a passed one: its shape is missing from the async-TP points."""
    points = ["geomean >= 1.10 x PyTorch async TP", "every shape >= 1.00 x async TP"]
    recs = anchors()
    recs[3]["check"] = "not run"
    assert failing(recs)[:2] == points
    del recs[3]["check"]
    assert failing(recs)[:2] == points


def test_another_dtype_meets_no_shape_point():
    """Issue 4's points are over bf16: an fp16 file of the same figures meets none of the first four."""
    names = [p for p, _, _ in verdict.acceptance(anchors())]
    assert failing([{**r, "dtype": "fp16"} for r in anchors()])[:4] == names[:4]



def test_a_record_of_an_anchors_name_but_another_problem_is_no_record_of_it():
    """70B-o at K = 4096 is not the anchor 70B-o: the shape points lack it, whatever its figures."""
    recs = anchors()
    recs[6]["K"] = 4096
    points = verdict.acceptance(recs)
    assert [holds for _, holds, _ in points] == [False, False, False, False, True], points
    assert all(figures.endswith("; missing: 70B-o") for _, _, figures in points[2:4]), points


def test_the_seed_point_reads_no_record_of_another_dtype():
    """The seed problem in fp16 is not issue 4's bf16 one: no record of it, as of the other seven shapes."""
    assert verdict.acceptance([{**r, "dtype": "fp16"} for r in anchors()])[4] == (
        "seed problem >= 1.00 x cuBLAS local", False, "no record")

def test_the_mean_is_geometric():
    """Ratios 1.5 and 0.8 alternating: the geometric mean, 1.095, fails 1.10, where the arithmetic one (1.15) would
    pass."""
    recs = anchors()
    for i, r in enumerate(recs):
        r["torch_async_tp_tflops"] = r["tpgemm_tflops"] / (1.5 if i % 2 else 0.8)
    points = verdict.acceptance(recs)
    assert "geomean >= 1.10 x PyTorch async TP" in failing(recs)
    assert points[0][2].startswith("1.095"), points[0]  # sqrt(1.5 * 0.8)


def verdict_command(*args):
    return subprocess.run([sys.executable, str(ROOT / "bench" / "x2" / "verdict.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=60)


def test_the_command_says_its_usage():
    run = verdict_command("--help")
    assert run.returncode == 0 and run.stdout.startswith("usage: verdict.py [-h] [--switched] [json]"), run.stdout
    assert "--switched" in run.stdout and "push twins" in run.stdout and "rule's answer" in run.stdout


def bad_file(tmp_path, text):
    path = tmp_path / "tp2.json"
    path.write_text(text)
    return path


def figure(value):
    recs = anchors()
    recs[1]["tpgemm_tflops"] = value
    return json.dumps(recs)


@pytest.mark.parametrize("args, said", [
    (lambda d: ["--switch", bad_file(d, json.dumps(anchors()))], "unrecognized arguments: --switch"),
    (lambda d: [bad_file(d, json.dumps(anchors())), d / "tp2.json"], "unrecognized arguments: "),
    (lambda d: [d / "none.json"], "cannot read"),
    (lambda d: [d], "cannot read"),
    (lambda d: [bad_file(d, "")], "cannot read"),
    (lambda d: [bad_file(d, "{not json")], "cannot read"),
    (lambda d: [bad_file(d, "null")], "not a list of TP benchmark records"),
    (lambda d: [bad_file(d, "[1, 2]")], "not a list of TP benchmark records"),
    (lambda d: [bad_file(d, "{}")], "not a list of TP benchmark records"),
    (lambda d: [bad_file(d, "[{}]")], "record 0 (?) lacks name, op, M, N, K, tp, dtype"),
    (lambda d: [bad_file(d, "[]")], "holds no records"),
    (lambda d: [bad_file(d, figure("690"))], "record 1 (70B-fc1): tpgemm_tflops = '690' is not a number"),
    (lambda d: [bad_file(d, figure(math.nan))], "record 1 (70B-fc1): tpgemm_tflops = nan is not finite"),
    (lambda d: [bad_file(d, figure(math.inf))], "record 1 (70B-fc1): tpgemm_tflops = inf is not finite"),
    (lambda d: [bad_file(d, json.dumps([{**r, "tp": 4} for r in anchors()]))],
     "holds TP = 4 records, the verdict is for TP = 2"),
    (lambda d: [bad_file(d, json.dumps([{**r, "tp": 1} for r in anchors()]))],
     "holds TP = 1 records, the verdict is for TP = 2"),
    (lambda d: [bad_file(d, json.dumps([{**r, "dtype": "e4m3"} for r in anchors()]))],
     "holds e4m3 records, the verdict is for bf16"),
    (lambda d: [bad_file(d, json.dumps([{**r, "tokens": 512} for r in anchors()]))],
     "holds a --tokens 512 run, the verdict is for the shapes' own M"),
    (lambda d: [bad_file(d, json.dumps([{**r, "tp": 4} if r["op"] == "RS" else r for r in anchors()]))],
     "record 4 (405B-fc2) has tp 4 where record 0 has 2"),
])
def test_the_command_refuses_what_it_cannot_judge_in_one_line(tmp_path, args, said):
    """Exit 2 with the reason on its last line of stderr (an argparse error: its usage above it), never a traceback
    or a verdict: `{}` gave one ("8 shapes missing"), a TP = 4 file too."""
    run = verdict_command(*args(tmp_path))
    assert run.returncode == 2 and said in run.stderr.splitlines()[-1], run.stderr
    assert "Traceback" not in run.stderr and run.stdout == "" and len(run.stderr.splitlines()) <= 2, run.stderr
