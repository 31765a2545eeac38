"""Model presets, tuned choices and the dispatch table: shapes of the Llama-3 layers, validation errors
with file and line, include: files, generated/dispatch.c rows, and `tpgemm --model ... --dry-run`."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import config, models, plan, render
from tests.conftest import TPGEMM

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "schedules.yaml"

BASE = """\
version: 1
kernels:
  - {name: k256, dtype: bf16, tile: {bm: 128, bn: 256, bk: 64}, stages: 4}
configs:
  - {name: ag, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], kernel: k256}
  - {name: rs, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k256}
"""
TINY = "  - {name: tiny, hidden: 1024, ffn: 4096, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2048, tp: [2]}\n"


def write(tmp_path, text, name="schedules.yaml"):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def errors(path):
    with pytest.raises(config.ConfigError) as e:
        models.load(str(path))
    return e.value.errors


def test_llama3_presets_give_the_expected_gemms():
    doc = models.load(str(DEFAULT))
    presets = {p["name"]: p for p in doc["models"]}
    assert set(presets) >= {"llama3-8b", "llama3-70b", "llama3-405b"}
    want = {"llama3-8b": (6144, 4096, 28672, 14336), "llama3-70b": (10240, 8192, 57344, 28672),
            "llama3-405b": (18432, 16384, 106496, 53248)}
    for name, (qkv_n, hidden, gate_up_n, ffn) in want.items():
        g = {x.layer: x for x in models.gemms(presets[name])}
        assert (g["qkv"].n, g["qkv"].k) == (qkv_n, hidden)
        assert (g["attn_out"].n, g["attn_out"].k) == (hidden, hidden)  # heads·head_dim = hidden
        assert (g["gate_up"].n, g["gate_up"].k) == (gate_up_n, hidden)
        assert (g["down"].n, g["down"].k) == (hidden, ffn)
        assert g["qkv"].schedule == "AllGather1D_TilingCD_RotatingA"
        assert g["down"].schedule == "ReduceScatter1D_TilingA_RotatingC"


def test_preset_errors_name_file_line_and_field(tmp_path):
    text = BASE + "models:\n" + TINY + (
        "  - {name: tiny, hidden: 1024, ffn: 4096, heads: 8, kv_heads: 3, head_dim: 128, tokens: 2048, tp: [2]}\n"
        "  - {name: odd, hidden: 1024, ffn: 4096, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2047, tp: [2]}\n"
        "  - {name: far, hidden: 1024, ffn: 4096, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2048, tp: [4]}\n"
        "  - {name: bad name, hidden: 1024, ffn: 4096, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2048,\n"
        "     tp: [2], column_parallel: ReduceScatter1D_TilingB_RotatingC, flavour: 1}\n")
    p = write(tmp_path, text)
    errs = errors(p)
    f = str(p)
    assert any(e.startswith(f"{f}:9: models[1].name: duplicate model name 'tiny' (first at line 8)") for e in errs)
    assert any(e.startswith(f"{f}:9: models[1].kv_heads: 8 heads are not a multiple of 3") for e in errs)
    assert any(e.startswith(f"{f}:10: models[2].tokens: layer qkv (2047 x ") and "not divisible by tp = 2" in e
               for e in errs)
    assert any(e.startswith(f"{f}:11: models[3].tp: layer qkv: no config runs AllGather1D_TilingCD_RotatingA "
                            "at tp 4 with dtype bf16; allowed: tp 1, 2, where configs has one (or add a config of "
                            "AllGather1D_TilingCD_RotatingA with a bf16 kernel at tp 4)") for e in errs)
    assert any(e.startswith(f"{f}:12: models[4].name: 'bad name' is not a model name") for e in errs)
    assert any(e.startswith(f"{f}:13: models[4].column_parallel: column_parallel needs a schedule with comm "
                            "allgather, ReduceScatter1D_TilingB_RotatingC has reduce_scatter; allowed: AllGather1D_TilingCD_RotatingA") for e in errs)
    assert any(e.startswith(f"{f}:13: models[4].flavour: unknown field") for e in errs)



def test_a_preset_at_a_tp_without_a_config_is_told_the_tps_there_are(tmp_path):
    """The fix a user needs is a tp that has a config (or the config): the message names those tps, or says none."""
    errs = errors(write(tmp_path, BASE + "models:\n" + TINY.replace("tp: [2]", "tp: [2, 8]") +
                        TINY.replace("tiny", "half").replace("tp: [2]", "tp: [2], dtype: fp16")))
    assert any(e.endswith("models[0].tp: layer down: no config runs ReduceScatter1D_TilingA_RotatingC at tp 8 with "
                          "dtype bf16; allowed: tp 1, 2, where configs has one (or add a config of "
                          "ReduceScatter1D_TilingA_RotatingC with a bf16 kernel at tp 8)") for e in errs), errs
    assert any(e.endswith("models[1].tp: layer qkv: no config runs AllGather1D_TilingCD_RotatingA at tp 2 with dtype "
                          "fp16; allowed: no tp: configs has none of that schedule and dtype (or add a config of "
                          "AllGather1D_TilingCD_RotatingA with a fp16 kernel at tp 2)") for e in errs), errs


def test_a_preset_whose_configs_run_by_name_only_is_not_told_there_are_none(tmp_path):
    """A config of the schedule and dtype that no default pick takes (by_name here) is in the file: the message said
    "configs has none of that schedule and dtype" and asked for one to be added, as if it were missing."""
    errs = errors(write(tmp_path, BASE.replace("tp: [1, 2], kernel: k256}", "tp: [1, 2], kernel: k256, by_name: true}",
                                               1) + "models:\n" + TINY))
    assert any(e.endswith("models[0].tp: layer qkv: no config runs AllGather1D_TilingCD_RotatingA at tp 2 with dtype "
                          "bf16; allowed: no tp: configs has none of that schedule and dtype that a default pick takes "
                          "(or add a config of AllGather1D_TilingCD_RotatingA with a bf16 kernel at tp 2; ag_tp2 is "
                          "run by name only)") for e in errs), errs


def test_a_layer_that_cannot_run_names_the_field_its_extent_comes_from(tmp_path):
    """hidden 1028: qkv's and gate_up's K (1028 bf16 = 2056 bytes a row) and the row-parallel layers' N (not a
    multiple of 8) fail; ffn 4100: gate_up's N (8200, 4100 a rank: not a multiple of 8) and down's K (2050 a rank)
    fail. Each error names the field, not tokens (a review found every one blamed tokens)."""
    text = BASE + "models:\n" + TINY + (
        "  - {name: wide, hidden: 1028, ffn: 4096, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2048, tp: [2]}\n"
        "  - {name: deep, hidden: 1024, ffn: 4100, heads: 8, kv_heads: 2, head_dim: 128, tokens: 2048, tp: [2]}\n")
    errs = errors(write(tmp_path, text))
    said = lambda model, layer: [e.split(": ")[1] for e in errs if f"models[{model}]." in e and f"layer {layer} " in e]
    assert said(1, "qkv") == ["models[1].hidden"] and said(1, "gate_up") == ["models[1].hidden"], errs
    assert said(1, "attn_out") == ["models[1].hidden"] and said(1, "down") == ["models[1].hidden"], errs
    assert said(2, "down") == ["models[2].ffn"] and said(2, "gate_up") == ["models[2].ffn"] and said(2, "qkv") == []
    assert any("per-device K = 1028 (2056 bytes of bf16 a row) is not a multiple of 16 bytes" in e for e in errs)
    assert not any(".tokens:" in e for e in errs), errs



def test_a_duplicated_kernel_name_is_one_error_not_a_trail_of_its_twin(tmp_path):
    """The shipped file with the fp16 wide kernel renamed to the bf16 one's name: the duplicate is reported, and the
    configs that name the bf16 kernel (kernel_tp1 of the bf16 reduce-scatter families) are checked against the first
    entry, not the fp16 twin (a review found "kernel 'bf16_128x256x64' has dtype fp16" after each)."""
    text = (ROOT / "schedules.yaml").read_text().replace("  - name: fp16_128x256x64\n",
                                                         "  - name: bf16_128x256x64\n", 1)
    shutil.copytree(ROOT / "tuned", tmp_path / "tuned")  # the include's folder (a glob may match nothing)
    errs = errors(write(tmp_path, text))
    assert any("duplicate kernel name 'bf16_128x256x64'" in e for e in errs), errs
    assert not any("has dtype" in e for e in errs), errs


AG, RS = "AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC"


def test_preset_checks_run_whether_configs_set_optional_fields_or_not(tmp_path):
    """An optional config field left out (prefer_from_local_k) must not switch the preset checks off:
    the same bad preset is reported with the field on every config and with it on none."""
    bad = TINY.replace("kv_heads: 2", "kv_heads: 3")
    with_field = BASE.replace("kernel: k256}", "kernel: k256, prefer_from_local_k: 1}")
    for text in (BASE, with_field):
        errs = errors(write(tmp_path, text + "models:\n" + bad))
        assert any("models[0].kv_heads: 8 heads are not a multiple of 3" in e for e in errs), errs


def test_tuned_errors(tmp_path):
    text = BASE + "models:\n" + TINY + (
        "tuned:\n"
        "  - {model: tiny, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k256}\n"
        "  - {model: tiny, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k256}\n"
        "  - {model: huge, layer: mlp, dtype: fp16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k9}\n"
        "  - {model: tiny, shape: {m: 1, n: 2, k: 3}, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA,\n"
        "     tp: 2, kernel: k256}\n")
    p = write(tmp_path, text)
    errs = errors(p)
    f = str(p)
    assert any(e.startswith(f"{f}:11: tuned[1]: a second tuned choice for the same layer (first at {f}:10)")
               for e in errs)
    assert any(e.startswith(f"{f}:12: tuned[2].model: unknown model 'huge'; allowed: tiny") for e in errs)
    assert any(e.startswith(f"{f}:12: tuned[2].layer: unknown layer 'mlp'; allowed: qkv, attn_out, gate_up, down")
               for e in errs)
    assert any(e.startswith(f"{f}:12: tuned[2].kernel: unknown kernel 'k9'") for e in errs)
    assert any(e.startswith(f"{f}:13: tuned[3]: a tuned choice names either model and layer, or shape")
               for e in errs)


def test_tuned_all_gather_refuses_a_kernel_without_the_pull_prologue(tmp_path):
    """A tuned all-gather choice at TP = 2 on a kernel built with TPG_DIAG_NO_PULLS (any value but 0, negative ones
    too) is refused like such a config; at TP = 1, with the value 0, or for reduce-scatter it is not."""
    kernels = ("  - {name: knp, dtype: bf16, tile: {bm: 128, bn: 256, bk: 64}, stages: 4,\n"
               "     defines: [TPG_DIAG_NO_PULLS=%s]}\n")
    def tuned(value, schedule="AllGather1D_TilingCD_RotatingA", tp=2):
        layer = "qkv" if schedule.startswith("AllGather") else "attn_out"
        return (BASE.replace("kernels:\n", "kernels:\n" + kernels % value) + "models:\n" + TINY + "tuned:\n"
                f"  - {{model: tiny, layer: {layer}, dtype: bf16, schedule: {schedule}, tp: {tp}, kernel: knp}}\n")
    for value in ("1", "-1"):
        errs = errors(write(tmp_path, tuned(value)))
        assert any("tuned[0].kernel: kernel 'knp' is built without the pull prologue" in e for e in errs), errs
    for text in (tuned("0"), tuned("1", tp=1), tuned("1", schedule="ReduceScatter1D_TilingA_RotatingC")):
        models.load(str(write(tmp_path, text)))


def test_tuned_config_names_must_not_alias(tmp_path):
    twin = TINY.replace("tiny", "a-b") + TINY.replace("tiny", "a_b")
    text = (BASE + "  - {name: tuned_tiny_qkv_bf16_m2048, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], "
            "kernel: k256}\n"
            + "models:\n" + TINY + twin + (
                "tuned:\n"
                "  - {model: a-b, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k256}\n"
                "  - {model: a_b, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k256}\n"
                "  - {model: tiny, layer: qkv, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2, kernel: k256}\n"))
    p = write(tmp_path, text)
    errs, f = errors(p), str(p)
    assert any(e.startswith(f"{f}:14: tuned[1]: its config 'tuned_a_b_qkv_bf16_m2048_tp2' is also the config of "
                            f"another tuned choice (at {f}:13)") for e in errs), errs
    assert any(e.startswith(f"{f}:15: tuned[2]: its config 'tuned_tiny_qkv_bf16_m2048_tp2' is also the name of a "
                            "config")
               for e in errs), errs


def test_include_adds_tuned_configs_and_dispatch_rows(tmp_path):
    main = write(tmp_path, BASE + "models:\n" + TINY + "include: [tuned/*.yaml]\n")
    write(tmp_path, "kernels:\n"
          "  - {name: tiny_k192, dtype: bf16, tile: {bm: 128, bn: 192, bk: 64}, stages: 4}\n"
          "tuned:\n"
          "  - {model: tiny, layer: gate_up, dtype: bf16, schedule: AllGather1D_TilingCD_RotatingA, tp: 2,\n"
          "     kernel: tiny_k192}\n"
          "  - {shape: {m: 4096, n: 4096, k: 4096}, dtype: bf16, schedule: ReduceScatter1D_TilingA_RotatingC,\n"
          "     tp: 2, kernel: k256}\n", "tuned/tiny_tp2.yaml")
    p = plan.build(models.load(str(main)), "schedules.yaml")
    names = [c.name for c in p.configs]
    assert "tuned_tiny_gate_up_bf16_m2048_tp2" in names and "tuned_4096x4096x4096_rs_tila_bf16_tp2" in names
    rows = {(r.model, r.layer): r for r in p.dispatch}
    assert rows["tiny", "qkv"].config == "ag_tp2" and not rows["tiny", "qkv"].tuned
    up = rows["tiny", "gate_up"]
    assert up.tuned and up.config == "tuned_tiny_gate_up_bf16_m2048_tp2" and (up.n, up.k) == (8192, 1024)
    assert p.configs[up.config_index].kernel.bn == 192
    shape = rows["", ""]
    assert (shape.m, shape.n, shape.k, shape.tuned) == (4096, 4096, 4096, True)
    text = render.render(p)["dispatch.c"]
    assert re.search(r'\{"tiny", "gate_up", 2048, 8192, 1024, TPG_DTYPE_BF16, "AllGather1D_TilingCD_RotatingA", '
                     rf'2, {up.config_index} /\* tuned_tiny_gate_up_bf16_m2048_tp2 \*/, 1\}}', text)
    # the registry marks the tuned configs (its last initializer), so tpg_config_pick never takes one: its wave check
    # weighs every config not preferred, and a tuned one would count unweighted for any shape
    reg = dict(re.findall(r'^    \{"(\w+)", &\w+, &\w+_desc, \d+, \d+, [01], \d+, ([01]), [01], [01]\},$',
                          render.render(p)["registry.c"], re.M))
    assert {n for n, t in reg.items() if t == "1"} == {"tuned_tiny_gate_up_bf16_m2048_tp2",
                                                       "tuned_4096x4096x4096_rs_tila_bf16_tp2"}
    assert len(reg) == len(p.configs)


def test_included_file_errors_name_that_file(tmp_path):
    main = write(tmp_path, BASE + "models:\n" + TINY + "include: [tuned/x.yaml, missing.yaml]\n")
    inc = write(tmp_path, "kernels:\n  - {name: k256, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}}\n"
                "tuned:\n  - {model: tiny, layer: down, dtype: fp16, schedule: ReduceScatter1D_TilingA_RotatingC,"
                " tp: 2, kernel: k256}\n", "tuned/x.yaml")
    errs = errors(main)
    assert any(e.startswith(f"{main}:9: include[1]: 'missing.yaml' does not exist") for e in errs)
    assert any(e.startswith(f"{inc}:2: kernels[0].name: kernel 'k256' is already defined") for e in errs)
    assert any(e.startswith(f"{inc}:4: tuned[0].kernel: kernel 'k256' has dtype bf16, not fp16") for e in errs)


def test_a_preset_in_an_included_file_is_told_where_it_belongs(tmp_path):
    """models: (or configs:, include:) in an included file was 'unknown field' beside a list without it, as if the
    key were misspelt: the message says it belongs in the schedules file itself."""
    main = write(tmp_path, BASE + "include: [mine.yaml]\n")
    inc = write(tmp_path, "version: 1\nmodels:\n" + TINY, "mine.yaml")
    assert errors(main) == [f"{inc}:2: models: only in the schedules file itself, not in a file it includes (move it "
                            "there); allowed: version, kernels, tuned"]


def test_default_dispatch_table_is_emitted():
    p = plan.build(models.load(str(DEFAULT)), "schedules.yaml")
    text = (ROOT / "generated" / "dispatch.c").read_text()
    assert text == render.render(p)["dispatch.c"]
    # no tuned file for TP = 4: the defaults. All-gather: the wide config (prefer_from_local_k 1);
    # reduce-scatter: wide only from K/tp = 10240, and 8192/4 and 28672/4 = 7168 are below it
    rows = [r for r in p.dispatch if r.model == "llama3-70b" and r.tp == 4]
    assert [(r.layer, r.m, r.n, r.k, r.config, r.tuned) for r in rows] == [
        ("qkv", 16384, 10240, 8192, "ag_rota_bf16_wide_tp4", False),
        ("attn_out", 16384, 8192, 8192, "rs_tila_bf16_tp4", False),
        ("gate_up", 16384, 57344, 8192, "ag_rota_bf16_wide_tp4", False),
        ("down", 16384, 8192, 28672, "rs_tila_bf16_tp4", False)]
    # the repository ships no tuned file (tuned/README.md; a tuned layer's rows: test_include_adds_tuned_configs_...):
    # the defaults; down is 28672/2 = 14336 per stage, so the wide reduce-scatter config
    tuned = [r for r in p.dispatch if r.model == "llama3-70b" and r.tp == 2]
    assert [(r.layer, r.config, r.tuned) for r in tuned] == [
        ("qkv", "ag_rota_bf16_wide_tp2", False), ("attn_out", "rs_tila_bf16_tp2", False),
        ("gate_up", "ag_rota_bf16_wide_tp2", False), ("down", "rs_tila_bf16_wide_tp2", False)]
    for r in p.dispatch:  # every row points at the config it names
        assert p.configs[r.config_index].name == r.config
        assert f'{r.config_index} /* {r.config} */' in text
    assert f"const int tpg_num_dispatch = {len(p.dispatch)};" in text


@pytest.fixture(scope="module")
def tpgemm():
    if not TPGEMM.exists():
        pytest.skip("build/tpgemm is missing (tests/test_build.py builds it)")
    return TPGEMM


def run(*args):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    return subprocess.run([str(TPGEMM), *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_model_dry_run_prints_each_layer(tpgemm):
    r = run("--model", "llama3-70b", "--tp", "4", "--tokens", "16384", "--dry-run")
    assert r.returncode == 0, r.stderr
    assert "Model: llama3-70b, tp 4, bf16, 4 layers (plan)" in r.stdout
    rows = {line.split()[0]: line.split() for line in r.stdout.splitlines()[2:]}
    # the dispatch rows' defaults: wide for all-gather, ping-pong for reduce-scatter below K/tp = 10240
    assert rows["qkv"][:6] == ["qkv", "all-gather", "16384", "10240", "8192", "ag_rota_bf16_wide_tp4"]
    assert rows["attn_out"][:6] == ["attn_out", "reduce-scatter", "16384", "8192", "8192", "rs_tila_bf16_tp4"]
    assert rows["gate_up"][2:5] == ["16384", "57344", "8192"] and rows["down"][2:5] == ["16384", "8192", "28672"]
    assert rows["down"][5] == "rs_tila_bf16_tp4"  # 28672/4 = 7168 per stage
    assert rows["down"][7] == "4096x8192x7168"  # stage GEMM: M/tp rows, K/tp


def test_cli_model_json_and_errors(tpgemm):
    r = run("--model", "llama3-8b", "--tp", "4", "--tokens", "4096", "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    # 8B: reduce-scatter K/tp is 4096/4 and 14336/4, both below 10240, so ping-pong; all-gather is wide, but for
    # 4096 tokens (not the preset's 8192: picked again) qkv's 192 wide tiles fill 73% of two waves of 132 SMs
    # against 97% for the 384 of 128x128, so ping-pong
    assert [(x["layer"], x["plan"]["config"], x["plan"]["problem"]["m"]) for x in d["layers"]] == [
        ("qkv", "ag_rota_bf16_tp4", 4096), ("attn_out", "rs_tila_bf16_tp4", 4096),
        ("gate_up", "ag_rota_bf16_wide_tp4", 4096), ("down", "rs_tila_bf16_tp4", 4096)]
    doc = models.load(str(DEFAULT))
    assert d["layers"][0]["plan"]["config"] == models.default_config(doc, AG, 4, "bf16", 4096, 4096, 6144)
    assert [x["tuned"] for x in d["layers"]] == [False] * 4  # the shipped dispatch table has no tuned row
    r = run("--model", "llama3-70b", "--tp", "2")
    assert r.returncode == 3 and "needs 2 Hopper (sm_90) GPUs" in r.stderr and "qkv" in r.stdout
    r = run("--model", "gpt5", "--dry-run")
    assert r.returncode == 2 and "no model preset 'gpt5'" in r.stderr and "llama3-70b" in r.stderr
    r = run("--model", "llama3-70b", "--dtype", "e4m3", "--dry-run")  # the preset exists: its dtype is the problem
    assert r.returncode == 2 and "model 'llama3-70b' has dispatch rows of bf16 only, not e4m3" in r.stderr, r.stderr
    r = run("--model", "llama3-405b", "--tp", "2", "--dry-run")
    assert r.returncode == 2 and "tp degrees: 4 8" in r.stderr
    r = run("--model", "llama3-8b", "--tp", "8", "--tokens", "1001", "--dry-run")
    assert r.returncode == 2 and "layer qkv: shape:" in r.stderr
    r = run("--model", "llama3-8b", "--k", "64", "--dry-run")
    assert r.returncode == 2 and "--m/--n/--k" in r.stderr
    r = run("--model", "llama3-70b", "--tp", "2", "--l", "4", "--dry-run")  # once printed L = 1 plans, exit 0
    assert r.returncode == 2 and "drop --l 4" in r.stderr, r.stderr
    assert run("--tokens", "64", "--dry-run").returncode == 2


def test_shape_problems_refuse_what_the_runtime_refuses_at_the_tensor_maps():
    """shapes.c refuses a tensor map of 2^31 rows or more; the generator's check once passed such a shape (a local M of
    an all-gather that rotates A is the whole M), so `tune --shape` and presets learned of it only at run time."""
    ag = "AllGather1D_TilingCD_RotatingA"
    said = models.shape_problems(ag, 4, 4865889056, 64, 128, "e4m3")
    assert said == ["rows 4865889056 must be < 2^31 for the TMA maps (the longest of A's and B's shard rows and the "
                    "local M and N)"], said
    assert models.shape_problems(ag, 4, (1 << 31) - 4, 64, 128, "e4m3") == []  # the last one that fits
    assert models.shape_problems(ag, 1, 1, (1 << 31) - 256, 64) == [
        "per-stage N = 2147483392 must be <= 2^31 - 512 (the kernel's tile counts are 32-bit)"]  # a 320-wide tile
    assert models.shape_problems(ag, 4, 1 << 31, 64, 128, "e4m3")[0].startswith("rows 2147483648 must be < 2^31")


def test_shape_problems_bounds_are_the_runtimes_to_the_element():
    """The per-stage extent bound (shapes.c TPG_EXTENT_LIMIT) holds at 2^31 - 512 and not one row past it; a row of K
    is 16 bytes or a multiple, counted in the operands' bytes (K % 16 for fp8, K % 8 for 16-bit operands)."""
    ag = "AllGather1D_TilingCD_RotatingA"
    assert models.shape_problems(ag, 1, models.EXTENT_LIMIT, 64, 64) == []
    assert models.shape_problems(ag, 1, models.EXTENT_LIMIT + 1, 64, 64) == [
        "per-stage M = 2147483137 must be <= 2^31 - 512 (the kernel's tile counts are 32-bit)"]
    assert models.shape_problems(ag, 1, 128, 128, 8, "bf16") == []
    assert models.shape_problems(ag, 1, 128, 128, 32, "e4m3") == []
    for dtype, k in (("e4m3", 8), ("e4m3", 24), ("e5m2", 40), ("fp16", 12)):
        said = models.shape_problems(ag, 1, 128, 128, k, dtype)
        assert said == [f"per-device K = {k} ({k * models.DTYPE_SIZE[dtype]} bytes of {dtype} a row) is not a "
                        "multiple of 16 bytes"], (dtype, k, said)


def _list_dispatch(path):
    r = subprocess.run(["python3", "-m", "generator", "list", "--dispatch", "--config", str(path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_list_dispatch_prints_the_rows_of_the_generated_table():
    # the committed generated/dispatch.c is the table tpg_dispatch_get walks: one line per row, in its order, with the
    # row's key and the config it names
    row = (r'\{"([^"]*)", "([^"]*)", (\d+), (\d+), (\d+), TPG_DTYPE_(\w+), "(\w+)", (\d+), \d+ /\* (\w+) \*/, '
           r'([01])\}')
    table = re.findall(row, (ROOT / "generated" / "dispatch.c").read_text())
    lines = _list_dispatch(DEFAULT)
    assert table and len(lines) == len(table)
    for line, (model, layer, m, n, k, dtype, schedule, tp, name, tuned) in zip(lines, table):
        assert line.split() == [model or "shape", layer or "-", f"tp={tp}", f"{m}x{n}x{k}", dtype.lower(), schedule,
                                name] + (["(tuned)"] if tuned == "1" else [])


def test_list_dispatch_of_a_file_without_presets_says_there_are_no_rows(tmp_path):
    assert _list_dispatch(write(tmp_path, BASE)) == [
        "no dispatch rows: the schedules file has no models: presets and no tuned: choices"]
    rows = _list_dispatch(write(tmp_path, BASE + "models:\n" + TINY))
    assert [r.split()[:4] for r in rows] == [["tiny", layer, "tp=2", f"2048x{n}x{k}"] for layer, n, k in
                                             (("qkv", 1536, 1024), ("attn_out", 1024, 1024), ("gate_up", 8192, 1024),
                                              ("down", 1024, 4096))]
