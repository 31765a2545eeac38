"""bench/x2/ce_default.py: the switch of the bf16 reduce-scatter defaults to copy-engine partials (and back) keeps
schedules.yaml valid, moves the default picks at TP >= 2 and only there, and refuses a file in the wrong state."""
import importlib.util
import shutil
import subprocess
import sys

import pytest

from generator import config, models
from tests.conftest import ROOT

SWITCH = ROOT / "bench" / "x2" / "ce_default.py"
RS = "ReduceScatter1D_TilingA_RotatingC"
# the families the switch is for (its docstring: rs_til{a,b}_bf16{,_wide}), named here, not taken from the script
FAMILIES = {"rs_tila_bf16", "rs_tila_bf16_wide", "rs_tilb_bf16", "rs_tilb_bf16_wide"}
_spec = importlib.util.spec_from_file_location("ce_default", SWITCH)
ce_default = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ce_default)


def switched(tmp_path, *args):
    cfg = tmp_path / "schedules.yaml"
    if not cfg.exists():
        shutil.copy(ROOT / "schedules.yaml", cfg)
    r = subprocess.run([sys.executable, str(SWITCH), *args, str(cfg)], capture_output=True, text=True, timeout=60)
    return r, cfg


def pick(doc, tp, k):
    """The configs[] entry of the bf16 reduce-scatter default at tp for a GEMM of global K k (M 16384, N 8192)."""
    name = models.default_config(doc, RS, tp, "bf16", k, 16384, 8192)
    return next(c for c in doc["configs"] if f"{c['name']}_tp{tp}" == name)


def test_switch_there_and_back(tmp_path):
    """From the shipped state only the direction away from it applies; it moves the picks at TP >= 2, names the
    twins after the other route, and the reverse gives the file back byte for byte."""
    shipped = (ROOT / "schedules.yaml").read_text()
    carried_now = ce_default.FIELD in ce_default.line_of(shipped, ce_default.FAMILIES[0])
    away, back = (["--undo"], []) if carried_now else ([], ["--undo"])
    r, cfg = switched(tmp_path, *back)  # the direction the shipped state already has: refused, nothing written
    assert r.returncode == 1 and cfg.read_text() == shipped and "ce_default.py" in r.stderr, r.stderr
    assert switched(tmp_path, "--check")[0].returncode == (0 if carried_now else 1)  # --check says the state
    r, _ = switched(tmp_path, *away)
    assert r.returncode == 0, r.stderr
    assert switched(tmp_path, "--check")[0].returncode == (1 if carried_now else 0) and cfg.read_text() != shipped
    doc = models.load(str(cfg))  # valid: every check of the generator holds
    before = models.load(str(ROOT / "schedules.yaml"))
    for tp, k in ((2, 8192 * 2), (4, 8192 * 4), (2, 28672), (4, 53248)):  # per-stage K 8192 (ping-pong), >= 10240
        conf, was = pick(doc, tp, k), pick(before, tp, k)  # (the wide family): the same family, its route switched
        want = (not carried_now) if conf["name"] in FAMILIES else bool(was.get("copy_engine_partials"))
        assert conf["name"] == was["name"] and not conf.get("by_name"), conf
        assert bool(conf.get("copy_engine_partials")) is want, conf
    picked = {pick(doc, tp, k)["name"] for tp, k in ((2, 8192 * 2), (2, 28672))}
    assert picked == {"rs_tila_bf16", "rs_tila_bf16_wide"}  # both kernels' families were checked through a pick
    assert not config.ce_partials_at(pick(doc, 1, 8192), 1)  # a TP = 1 instance moves nothing
    suffix = "_ce" if carried_now else "_push"
    twins = [c for c in doc["configs"] if c["name"].startswith("rs_til") and c["name"].endswith(suffix)]
    assert {c["name"].removesuffix(suffix) for c in twins} == FAMILIES and all(
        c["by_name"] and bool(c.get("copy_engine_partials")) is carried_now for c in twins), twins
    own = {c["name"]: bool(c.get("copy_engine_partials")) for c in doc["configs"] if c["name"] in FAMILIES}
    assert own == dict.fromkeys(FAMILIES, not carried_now)  # the TilingB families too, which no pick above reaches
    switched_text = cfg.read_text()
    again, _ = switched(tmp_path, *away)  # the same direction twice: refused, unchanged
    assert again.returncode == 1 and cfg.read_text() == switched_text
    r, _ = switched(tmp_path, *back)
    assert r.returncode == 0 and cfg.read_text() == shipped, r.stderr


def test_a_twin_in_the_wrong_state_is_refused():
    """A family whose twin lost `by_name: true` (hand-edited) is refused, not rewritten into two defaults."""
    text = (ROOT / "schedules.yaml").read_text()
    carried = ce_default.FIELD in ce_default.line_of(text, ce_default.FAMILIES[0])
    twin = ce_default.line_of(text, ce_default.FAMILIES[0] + ("_push" if carried else "_ce"))
    assert ", by_name: true" in twin
    with pytest.raises(ValueError):
        ce_default.switch(text.replace(twin, twin.replace(", by_name: true", "")), undo=carried)


def half_switched(how):
    """The shipped schedules.yaml in the switched state, then hand-edited to a state neither direction starts from,
    and the direction that must refuse it (undo)."""
    text = (ROOT / "schedules.yaml").read_text()
    carried = ce_default.FIELD in ce_default.line_of(text, ce_default.FAMILIES[0])
    switched = text if carried else ce_default.switch(text)
    fam = "rs_tilb_bf16_wide"
    own, push = ce_default.line_of(switched, fam), ce_default.line_of(switched, fam + "_push")
    if how == "own carried, twin still _ce":  # forward again over a family the hand edit had switched alone
        return ce_default.switch(switched, undo=True).replace(own.replace(ce_default.FIELD, ""), own), False
    if how == "push twin carried":  # --undo would put the field on the _ce twin twice
        return switched.replace(push, push.replace(", by_name: true", ce_default.FIELD + ", by_name: true")), True
    return switched.replace(own, own + "\n" + own), True  # "family twice": which line would be the default?


@pytest.mark.parametrize("how", ["own carried, twin still _ce", "push twin carried", "family twice"])
def test_a_file_half_switched_by_hand_is_refused_not_switched_twice(how):
    text, undo = half_switched(how)
    with pytest.raises(ValueError):
        ce_default.switch(text, undo=undo)


def test_usage_and_bad_command_lines_exit_2_without_a_traceback(tmp_path):
    """--help says the usage (it was read as a file's name: a traceback); two directions at once, a second file, a
    file that cannot be read: exit 2 (--check's 1 means "not switched"), nothing written."""
    r = subprocess.run([sys.executable, str(SWITCH), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("usage: ce_default.py [-h] [--undo | --check] [schedules]")
    assert "--check" in r.stdout and "--undo" in r.stdout, r.stdout
    cfg = tmp_path / "schedules.yaml"
    shutil.copy(ROOT / "schedules.yaml", cfg)
    (tmp_path / "latin1.yaml").write_bytes(b"# caf\xe9\n")  # not UTF-8
    for args, said in ((["--undo", "--check"], "not allowed with"), ([str(cfg), str(cfg)], "unrecognized arguments"),
                       ([str(tmp_path / "none.yaml")], "cannot read"), (["--check", str(tmp_path)], "cannot read"),
                       ([str(tmp_path / "latin1.yaml")], "cannot read")):
        r = subprocess.run([sys.executable, str(SWITCH), *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and said in r.stderr.splitlines()[-1], (args, r.stderr)
        assert "Traceback" not in r.stderr and cfg.read_text() == (ROOT / "schedules.yaml").read_text(), args
