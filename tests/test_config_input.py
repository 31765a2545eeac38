"""Mistakes in schedules.yaml that once crashed the generator with a traceback (exit 1) or went unnoticed: each is a
line-numbered error and exit 2 now, and the YAML that PyYAML's loader accepts (merge keys) means the same here."""
import subprocess
import sys
from pathlib import Path

import pytest

from generator import models

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = (ROOT / "schedules.yaml").read_text()


def generate(tmp_path: Path, text: str, *args):
    cfg = tmp_path / "s.yaml"
    cfg.write_text(text)
    return subprocess.run([sys.executable, "-m", "generator", "--config", str(cfg), "--out", str(tmp_path / "g"),
                           *args], cwd=ROOT, capture_output=True, text=True)


@pytest.mark.parametrize("edit, said, count", [
    (("\nkernels:", "\nkernel:"), "kernel: unknown field, did you mean 'kernels'?", 2),
    ((" tokens: 16384, tp: [2, 4, 8]}", " tp: [2, 4, 8]}"), "models[1].tokens: missing required field", 1),
    (("tp: [2, 4, 8]}", "tp: [2, 16]}"), "models[1].tp[1]: 16 is out of range", 1),
    (("\ninclude:", "\ntuned:\n  - {[a]: 1, shape: {m: 64, n: 64}}\ninclude:"), "tuned[0].(key): a key must be a plain "
     "name", 6),
    (("\ninclude:", "\ntuned:\n  - {shape: 5, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: x}"
      "\ninclude:"), "tuned[0].shape: expected a mapping", 2),
    (("hidden: 8192, ffn: 28672", "hidden: null, ffn: 28672"), "models[1].hidden: expected an integer", 1),
    (("\nconfigs:\n", "\nconfigs:\n  - {<<: 5, name: m}\n"), "configs[0]: merge key (<<): expected a mapping", 1),
    (("dtype: bf16", "dtype: bf17"), "kernels[0].dtype: unknown value 'bf17'", 1),  # no line per config or layer
])
def test_a_mistake_is_an_error_with_its_line_not_a_traceback(tmp_path, edit, said, count):
    """A missing required field or a bad list item leaves None for later checks (it once left the key out: KeyError),
    and a missing kernels list does not bury its own error under one per config."""
    text = SHIPPED.replace(*edit, 1)
    assert text != SHIPPED
    r = generate(tmp_path, text)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert said in r.stderr and f"{count} error(s)" in r.stderr, r.stderr
    assert not (tmp_path / "g").exists()


def test_a_tuned_choice_of_a_broken_preset_reports_the_preset(tmp_path):
    """A tuned file names a preset; a typo in that preset once made the tuned checks crash in gemms()."""
    text = SHIPPED.replace("hidden: 8192, ffn: 28672", "hidden: null, ffn: 28672").replace(
        "\ninclude:", "\ntuned:\n  - {model: llama3-70b, layer: qkv, dtype: bf16, "
        "schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: bf16_128x128x64_pp}\ninclude:")
    r = generate(tmp_path, text)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "models[1].hidden" in r.stderr, r.stderr


def test_merge_keys_read_as_pyyaml_reads_them(tmp_path):
    base = SHIPPED.split("\nconfigs:\n")[0] + "\nconfigs:\n"
    anchored = base + ("  - &ag {name: a1, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], "
                       "kernel: bf16_128x128x64_pp, copy_chunks: 2}\n"
                       "  - {<<: *ag, name: a2, tp: [1, 2], copy_chunks: 1}\n")
    spelled = base + ("  - {name: a1, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: bf16_128x128x64_pp,"
                      " copy_chunks: 2}\n  - {name: a2, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], "
                      "kernel: bf16_128x128x64_pp, copy_chunks: 1}\n")
    docs = []
    for i, text in enumerate((anchored, spelled)):
        (tmp_path / f"{i}.yaml").write_text(text)
        docs.append(models.load(str(tmp_path / f"{i}.yaml"))["configs"])
    assert docs[0] == docs[1]
    assert [c["copy_chunks"] for c in docs[0]] == [2, 1]
    # a merged anchor that merges itself, then aliased as it is: the shared node must not be flattened in place
    tiles = ("  - {name: t1, dtype: bf16, tile: &t {bm: 128, bn: 128, bk: 64}}\n"
             "  - {name: t2, dtype: bf16, tile: &t2 {<<: *t, bn: 256}}\n"
             "  - {name: t3, dtype: bf16, tile: {<<: *t2, bn: 192}}\n"
             "  - {name: t4, dtype: bf16, tile: *t2}\n")
    (tmp_path / "t.yaml").write_text(SHIPPED.replace("\nkernels:\n", "\nkernels:\n" + tiles, 1))
    got = {k["name"]: k["tile"] for k in models.load(str(tmp_path / "t.yaml"))["kernels"][:4]}
    assert got == {"t1": {"bm": 128, "bn": 128, "bk": 64}, "t2": {"bm": 128, "bn": 256, "bk": 64},
                   "t3": {"bm": 128, "bn": 192, "bk": 64}, "t4": {"bm": 128, "bn": 256, "bk": 64}}, got


def test_a_define_the_headers_do_not_read_is_refused(tmp_path):
    typo = "  - {name: typo, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, defines: [TPG_SPREAD_PUSH=1]}\n"
    text = SHIPPED.replace("\nkernels:\n", "\nkernels:\n" + typo, 1)
    r = generate(tmp_path, text)
    assert r.returncode == 2 and "TPG_SPREAD_PUSH is not a macro the kernel headers read" in r.stderr, r.stderr


def test_a_define_past_32_bits_is_refused(tmp_path):
    big = "  - {name: big, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, defines: [TPG_SPREAD_UNITS=4294967296]}\n"
    r = generate(tmp_path, SHIPPED.replace("\nkernels:\n", "\nkernels:\n" + big, 1))
    assert r.returncode == 2 and "TPG_SPREAD_UNITS=4294967296 is outside 32 bits" in r.stderr, r.stderr


def test_depfile_watches_the_include_folder_and_takes_absolute_globs(tmp_path):
    """ninja reruns the generator when a tuned file appears only if the depfile names the glob's folder: a folder that
    does not exist cannot be named (its parent, the repository's top, changes on every ninja), so the generator says
    so; an absolute include glob once crashed --depfile after generated/ was written."""
    tuned = tmp_path / "tuned"
    for pattern in ("tuned/*.yaml", f"{tuned}/*.yaml"):
        text = SHIPPED.replace('include: ["tuned/*.yaml"]', f'include: ["{pattern}"]')
        r = generate(tmp_path, text, "--depfile", str(tmp_path / "d.d"), "-q")
        assert r.returncode == 0 and f"note: {tuned} (of include:) does not exist" in r.stderr, r.stderr
        deps = (tmp_path / "d.d").read_text().replace("\\\n", " ").split(":", 1)[1].split()
        assert [d for d in deps if d.startswith(str(tmp_path))] == [str(tmp_path / "s.yaml")], deps
    tuned.mkdir()
    (tuned / "x.yaml").write_text("kernels: []\n")
    r = generate(tmp_path, text, "--depfile", str(tmp_path / "d.d"), "-q")
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr
    deps = (tmp_path / "d.d").read_text().replace("\\\n", " ").split(":", 1)[1].split()
    assert str(tuned) in deps and str(tuned / "x.yaml") in deps, deps


TUNED_QKV = ("  - {model: MODEL, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, "
             "kernel: bf16_128x128x64_pp}\n")


def test_an_empty_model_name_is_an_unknown_model_not_a_shape(tmp_path):
    """'' once fell into the shape branch of the tuned checks (a traceback in tuned_key)."""
    text = SHIPPED.replace("\ninclude:", "\ntuned:\n" + TUNED_QKV.replace("MODEL", "''") + "include:")
    r = generate(tmp_path, text)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "tuned[0].model: unknown model ''" in r.stderr, r.stderr


@pytest.mark.parametrize("number, said", [("0256", "'0256' is not a plain decimal integer"),
                                          ("2:08", "'2:08' is not a plain decimal integer"),
                                          ("0x80", "'0x80' is not a plain decimal integer"),
                                          ("1_0", "'1_0' is not a plain decimal integer")])
def test_integers_are_read_as_written_or_refused(tmp_path, number, said):
    """YAML 1.1 reads 0256 as octal 174 and 2:08 as 128: a token count of 174 once went into dispatch.c silently."""
    text = SHIPPED.replace("tokens: 16384, tp: [2, 4, 8]}", f"tokens: {number}, tp: [2, 4, 8]}}", 1)
    assert text != SHIPPED
    r = generate(tmp_path, text)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_file_that_is_not_utf8_is_an_error_with_its_line(tmp_path):
    cfg = tmp_path / "s.yaml"
    cfg.write_bytes(SHIPPED.replace("\nkernels:", "\n# caf\xe9\nkernels:", 1).encode("latin-1"))
    r = subprocess.run([sys.executable, "-m", "generator", "--config", str(cfg), "--out", str(tmp_path / "g")],
                       cwd=ROOT, capture_output=True, text=True)
    line = SHIPPED.split("\nkernels:")[0].count("\n") + 2
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"s.yaml:{line}: (file): byte 0xe9 is not UTF-8" in r.stderr, r.stderr


def test_a_file_included_twice_counts_once(tmp_path):
    """A glob and an explicit name of the same file once added its choices twice (two configs of one name) and its
    kernels clashed with themselves."""
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "a.yaml").write_text(
        "kernels:\n  - {name: kb, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, consumer_mode: pingpong}\n"
        "tuned:\n" + TUNED_QKV.replace("MODEL", "llama3-70b").replace("bf16_128x128x64_pp", "kb"))
    text = SHIPPED.replace('include: ["tuned/*.yaml"]', 'include: ["tuned/*.yaml", "tuned/a.yaml"]')
    r = generate(tmp_path, text, "-q")
    assert r.returncode == 0, r.stderr
    registry = (tmp_path / "g" / "registry.c").read_text()
    assert registry.count('"tuned_llama3_70b_qkv_bf16_m16384_tp2"') == 1


@pytest.mark.parametrize("pattern, said", [('""', "include[0]: an empty pattern"),
                                           ('"tuned"', "include[0]: 'tuned' is not a file")])
def test_a_bad_include_hides_no_other_error(tmp_path, pattern, said):
    (tmp_path / "tuned").mkdir()
    text = SHIPPED.replace('include: ["tuned/*.yaml"]', f"include: [{pattern}]").replace(
        "tokens: 16384, tp: [2, 4, 8]}", "tokens: x, tp: [2, 4, 8]}", 1)
    r = generate(tmp_path, text)
    assert r.returncode == 2 and said in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert "models[1].tokens: expected an integer" in r.stderr, r.stderr


def test_an_unreadable_include_hides_no_other_error(tmp_path):
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "a.yaml").write_text("kernels: [\n")
    text = SHIPPED.replace("tokens: 16384, tp: [2, 4, 8]}", "tokens: x, tp: [2, 4, 8]}", 1)
    r = generate(tmp_path, text)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "a.yaml:2: YAML syntax error" in r.stderr and "models[1].tokens" in r.stderr, r.stderr


def test_an_empty_include_lists_the_keys_an_included_file_may_hold(tmp_path):
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "empty.yaml").write_text("")
    r = generate(tmp_path, SHIPPED)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "empty.yaml:1: (document): empty; allowed: a mapping with version, kernels, tuned" in r.stderr, r.stderr
    r = generate(tmp_path, "")  # schedules.yaml itself: every top-level key
    assert "(document): empty; allowed: a mapping with version, kernels, configs, models, include, tuned" in r.stderr


def test_output_paths_that_cannot_be_written_are_refused_before_writing(tmp_path):
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "kernels").write_text("a file where a folder goes\n")
    for out in (tmp_path / "blocked", tmp_path / "blocked" / "kernels"):
        r = subprocess.run([sys.executable, "-m", "generator", "--out", str(out)], cwd=ROOT, capture_output=True,
                           text=True)
        assert r.returncode == 2 and "is not a folder" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert sorted(p.name for p in (tmp_path / "blocked").iterdir()) == ["kernels"]
    r = subprocess.run([sys.executable, "-m", "generator", "--out", str(tmp_path / "g"), "--depfile", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "--depfile names a folder" in r.stderr and not (tmp_path / "g").exists(), r.stderr


def test_a_document_nested_too_deeply_is_an_error(tmp_path):
    r = generate(tmp_path, "version: 1\ntuned: " + "[" * 3000 + "]" * 3000 + "\n")
    assert r.returncode == 2 and "nested too deeply" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_tuned_choice_may_name_a_kernel_of_a_file_included_after_it(tmp_path):
    """Included files once saw only the kernels of the files before them (tuned/a.yaml could not use b.yaml's)."""
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "a.yaml").write_text(
        "tuned:\n" + TUNED_QKV.replace("MODEL", "llama3-70b").replace("bf16_128x128x64_pp", "kb"))
    (tmp_path / "tuned" / "b.yaml").write_text(
        "kernels:\n  - {name: kb, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, consumer_mode: pingpong}\n")
    r = generate(tmp_path, SHIPPED, "-q")
    assert r.returncode == 0, r.stderr
    assert '"tuned_llama3_70b_qkv_bf16_m16384_tp2"' in (tmp_path / "g" / "registry.c").read_text()
    (tmp_path / "tuned" / "b.yaml").write_text("kernels: []\n")  # and a kernel no file has is still unknown
    r = generate(tmp_path, SHIPPED)
    assert r.returncode == 2 and "tuned[0].kernel: unknown kernel 'kb'" in r.stderr, r.stderr
