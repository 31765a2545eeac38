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

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "schedules.yaml"
TPGEMM = ROOT / "build" / "tpgemm"

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
                            "at tp 4 with dtype bf16") for e in errs)
    assert any(e.startswith(f"{f}:12: models[4].name: 'bad name' is not a model name") for e in errs)
    assert any(e.startswith(f"{f}:13: models[4].column_parallel: column_parallel needs a schedule with comm "
                            "allgather, ReduceScatter1D_TilingB_RotatingC has reduce_scatter; allowed: AllGather1D_TilingCD_RotatingA") for e in errs)
    assert any(e.startswith(f"{f}:13: models[4].flavour: unknown field") for e in errs)



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


def test_default_config_prefers_by_the_per_stage_k(tmp_path):
    """The first config by name whose prefer_from_local_k holds for the per-stage K wins; otherwise the
    first by name. The preferred configs sort after the plain ones here, so a pick by name alone fails."""
    doc = models.load(str(write(tmp_path, BASE + (
        "  - {name: rs_wide, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k256,\n"
        "     prefer_from_local_k: 8192}\n"
        "  - {name: ag_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k256,\n"
        "     prefer_from_local_k: 8192}\n"))))
    # reduce-scatter: K/tp against the bound, which itself holds
    assert models.default_config(doc, RS, 2, "bf16", 16384) == "rs_wide_tp2"  # 8192 per stage
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_tp2"  # 4096 per stage
    assert models.default_config(doc, RS, 1, "bf16", 8192) == "rs_wide_tp1"  # tp 1: all of K
    # an unknown shape (k = 0, the default) holds no bound but 1
    assert models.default_config(doc, RS, 2, "bf16", 0) == "rs_tp2"
    assert models.default_config(doc, RS, 2, "bf16") == "rs_tp2"
    # all-gather does not split K: the per-stage K is K
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_wide_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 4096) == "ag_tp2"
    assert models.default_config(doc, AG, 1, "bf16", 8192) == "ag_tp1"  # ag_wide is not built at tp 1
    assert models.default_config(doc, RS, 2, "fp16", 16384) is None


def test_default_config_first_preferred_by_name_and_one_means_every_shape(tmp_path):
    """Among configs whose bound holds the first by name wins, not the largest bound; a bound of 1 holds
    for every shape, the unknown one (k = 0) included."""
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: k256, prefer_from_local_k: {}}}\n"
    doc = models.load(str(write(tmp_path, BASE + row.format("rs_a", RS, 4096) + row.format("rs_b", RS, 2048)
                                + row.format("ag_z", AG, 1))))
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_a_tp2"  # both hold
    assert models.default_config(doc, RS, 2, "bf16", 4096) == "rs_b_tp2"  # 2048 per stage: rs_b's only
    assert models.default_config(doc, RS, 2, "bf16", 2048) == "rs_a_tp2"  # none holds: the first by name
    assert models.default_config(doc, AG, 2, "bf16", 0) == "ag_z_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 64) == "ag_z_tp2"


def test_default_config_takes_the_fallback_where_the_preferred_tiles_leave_the_last_wave_empty(tmp_path):
    """With the whole shape given, a config that is not preferred wins when its walk fills more than
    PICK_WAVE_MARGIN more of the SMs' tile slots (tpg_config_pick's rule, runtime/src/config.c)."""
    doc = models.load(str(write(tmp_path, BASE.replace(
        "configs:", "  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\nconfigs:")
        + "  - {name: ag_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k256, prefer_from_local_k: 1}\n"
        + "  - {name: ag_z_small, schedule: AllGather1D_TilingCD_RotatingA, tp: [2], kernel: k128}\n")))
    # ag (k256) sorts first among the configs not preferred, but the wave check takes the fullest of them
    assert models.walk_tiles(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}) == 320
    assert models.walk_tiles(AG, 2, 2048, 10240, {"bm": 128, "bn": 128}) == 640
    assert models.walk_tiles(RS, 4, 2048, 8192, {"bm": 128, "bn": 256}) == 512  # 4 stages of 512 x 8192
    assert abs(models.walk_fill(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}, 132) - 320 / 396) < 1e-12
    assert models.walk_fill(AG, 2, 2048, 10240, {"bm": 128, "bn": 256}, 160) == 1.0  # two whole waves of 160
    # ag has the preferred config's 128x256 tiles (81%), ag_z_small's 128x128 fill 97%: ag_z_small
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_z_small_tp2"
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: {}{}}}\n"
    doc = models.load(str(write(tmp_path, BASE.replace(
        "configs:", "  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\nconfigs:")
        .replace("  - {name: ag, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], kernel: k256}\n", "")
        + row.format("ag_a_small", AG, "k128", "") + row.format("ag_b_wide", AG, "k256", ", prefer_from_local_k: 1"))))
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_a_small_tp2"  # 97% against 81%
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240, sms=160) == "ag_b_wide_tp2"  # 2 whole waves
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_b_wide_tp2"  # m, n unknown: the K rule alone
    assert models.default_config(doc, AG, 2, "bf16", 8192, 1 << 40, 10240) == "ag_b_wide_tp2"  # past int32: no shape
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16384, 10240) == "ag_b_wide_tp2"  # 97.0% vs 99.5%


def test_default_config_takes_the_best_scored_fallback_by_more_than_the_margin(tmp_path):
    """Every config not preferred is a candidate of the wave check; its score is the share of the tile slots of whole
    waves its walk's output fills (partial tiles count what they hold) times its wave_weight percent (100 without).
    The best replaces the pick when it scores more than PICK_WAVE_MARGIN (0.10) more; of equals the first by name,
    those without a wave_weight first. A wave-weighted config is never the first-by-name fallback."""
    kernels = ("  - {name: k128, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5}\n"
               "  - {name: k160, dtype: bf16, tile: {bm: 128, bn: 160, bk: 64}, epilogue_subtile: {n: 32}}\n"
               "  - {name: k64, dtype: bf16, tile: {bm: 64, bn: 128, bk: 64}, consumer_mode: pingpong}\nconfigs:")
    row = "  - {{name: {}, schedule: {}, tp: [2], kernel: {}{}}}\n"
    doc = models.load(str(write(tmp_path, BASE.replace("configs:", kernels)
        .replace("  - {name: ag, schedule: AllGather1D_TilingCD_RotatingA, tp: [1, 2], kernel: k256}\n", "")
        .replace("  - {name: rs, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: k256}\n", "")
        + row.format("ag_a_64", AG, "k64", ", wave_weight: 80") + row.format("ag_b_160", AG, "k160", ", wave_weight: 90")
        + row.format("ag_c_pp", AG, "k128", "") + row.format("ag_d_wide", AG, "k256", ", prefer_from_local_k: 1")
        + row.format("rs_a_64", RS, "k64", ", wave_weight: 80") + row.format("rs_b_pp", RS, "k128", ""))))
    assert models.PICK_WAVE_MARGIN == 0.10 and models.PICK_WAVE_RATIO == 2.0
    # 70B-qkv, M = 512: 80 wide tiles and 160 ping-pong ones fill 61% of the slots, 128 of 128x160 97% (x 0.9),
    # 320 of 64x128 81% (x 0.8)
    assert models.default_config(doc, AG, 2, "bf16", 8192, 512, 10240) == "ag_b_160_tp2"
    # M = 2048: ping-pong, 128x160 and 64x128 all fill 97%; the weights leave ping-pong ahead
    assert models.default_config(doc, AG, 2, "bf16", 8192, 2048, 10240) == "ag_c_pp_tp2"
    # 1024 x 14336: 64x128 fills 97% against the wide tiles' 85%, but scores 78%: the wide config stays
    assert abs(models.walk_fill(AG, 2, 1024, 14336, {"bm": 64, "bn": 128}, 132) - 7340032 / (7 * 132 * 8192)) < 1e-12
    assert models.default_config(doc, AG, 2, "bf16", 8192, 1024, 14336) == "ag_d_wide_tp2"
    # M = 128 at TP = 2: two stages of 64 rows, gathered into one GEMM of 128 rows (runtime/src/plan.c): 40 tiles of
    # 128x128, 80 of 64x128 - stage after stage 80 of either, the 128-row ones half empty; from 256 rows a stage
    # (M = 512) stage after stage: 2 stages x 2 tile rows x 40
    tile = {"bm": 128, "bn": 128}
    assert models.walk_tiles(AG, 2, 128, 10240, tile) == 40
    assert models.walk_tiles(AG, 2, 128, 10240, {"bm": 64, "bn": 128}) == 80
    assert models.walk_tiles(AG, 2, 512, 10240, tile) == 2 * 2 * 40
    assert abs(models.walk_fill(AG, 2, 128, 10240, tile, 132) - 2 * 64 * 5120 / (132 * 128 * 128)) < 1e-12
    assert models.default_config(doc, AG, 2, "bf16", 8192, 128, 10240) == "ag_a_64_tp2"
    # a tiny walk (M = 16, 512 columns a GPU, gathered): the wide pick fills 0.19% of a wave, 64x128 0.76% (x 0.8):
    # under the margin, over twice the pick's score; with the ratio rule's threshold raised, the wave check keeps the
    # wide pick, and the row rule takes the 64x128 (the 16 rows fit one row of its tiles); at M = 256 (one GEMM of
    # 256 rows) neither does
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16, 1024) == "ag_a_64_tp2"
    ratio, models.PICK_WAVE_RATIO = models.PICK_WAVE_RATIO, 4.0
    try:
        assert models.default_config(doc, AG, 2, "bf16", 8192, 16, 1024) == "ag_a_64_tp2"
        assert models.default_config(doc, AG, 2, "bf16", 8192, 256, 1024) == "ag_d_wide_tp2"
    finally:
        models.PICK_WAVE_RATIO = ratio
    # without the shape, and where the wide tiles fill as well: the K rule's pick
    assert models.default_config(doc, AG, 2, "bf16", 8192) == "ag_d_wide_tp2"
    assert models.default_config(doc, AG, 2, "bf16", 8192, 16384, 10240) == "ag_d_wide_tp2"
    # reduce-scatter, nothing preferred: the first by name without a wave_weight, unless the wave check says otherwise
    assert models.default_config(doc, RS, 2, "bf16", 8192) == "rs_b_pp_tp2"
    assert models.default_config(doc, RS, 2, "bf16", 8192, 16384, 8192) == "rs_b_pp_tp2"
    assert models.default_config(doc, RS, 2, "bf16", 8192, 128, 8192) == "rs_a_64_tp2"  # 64-row stages: 78% / 48%
    # equal scores: a config without a wave_weight before a weighted one, whatever the names
    twin = {**doc, "configs": doc["configs"] + [{"name": "ag_0_twin", "schedule": AG, "tp": [2], "kernel": "k128",
                                                 "wave_weight": 100}]}
    assert models.default_config(twin, AG, 2, "bf16", 8192, 2048, 10240) == "ag_c_pp_tp2"
    twin["configs"] = [dict(c, name="ag_z_pp") if c["name"] == "ag_c_pp" else c for c in twin["configs"]]
    assert models.default_config(twin, AG, 2, "bf16", 8192, 2048, 10240) == "ag_z_pp_tp2"
    # a weight of 100 makes 64x128 an ordinary candidate again: at 1024 x 14336 its 97% beat the wide 85%
    heavy = {**doc, "configs": [dict(c, wave_weight=100) if c["name"] == "ag_a_64" else c for c in doc["configs"]]}
    assert models.default_config(heavy, AG, 2, "bf16", 8192, 1024, 14336) == "ag_a_64_tp2"
    # the shipped configs (tests/c/test_dispatch.c checks tpg_config_pick on the same)
    shipped = models.load(str(DEFAULT))
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 512, 10240) == "ag_rota_bf16_w160_tp2"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 128, 10240) == "ag_rota_bf16_pp64_tp2"
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 128, 8192) == "rs_tila_bf16_pp64_tp2"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 1024, 14336) == "ag_rota_bf16_wide_tp2"
    # the row rule (decode): one row of tiles either way, the 64x128 with half the rows a tile
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 32, 8192) == "rs_tila_bf16_pp64_tp2"
    assert models.default_config(shipped, RS, 1, "fp16", 4096, 16, 8192) == "rs_tila_fp16_pp64_tp1"
    assert models.default_config(shipped, RS, 2, "bf16", 8192, 2048, 8192) == "rs_tila_bf16_tp2"
    # its one-row clause: 70B-fc1 at 16 tokens, TP = 2 (one GEMM of 16 rows: 224 tiles of 64x128, 1.7 waves, against
    # the wide kernel's 112 in one wave) - the wave check keeps the wide pick, the 16 rows fit one row of 64x128 tiles
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 16, 57344) == "ag_rota_bf16_pp64_tp2"
    assert models.default_config(shipped, AG, 1, "bf16", 8192, 16, 28672) == "ag_rota_bf16_pp64_tp1"
    assert models.default_config(shipped, AG, 2, "bf16", 8192, 512, 57344) == "ag_rota_bf16_tp2"  # 256 rows a stage


MEASURED = ["small_m_0835Z", "small_tiles_1230Z", "w160_1244Z", "m128_tiles_1308Z", "pp64_1322Z",
            "verify_few_tokens_1444Z", "sk_m128_1451Z"]
# runs made for the wave check: every record holds the pick's kernel
MEASURED_FOR_THE_PICK = ("w160_1244Z", "pp64_1322Z", "verify_few_tokens_1444Z")


def measured_pick_rate():
    """A function of a local-GEMM record and a schedule: the shipped default pick at TP = 1 for the record's shape
    before the split rule, its sustained rate in the record (None where the record did not time its kernel), and the
    rates of every shipped kernel the record timed but the stream-K ones (cuBLASLt and x_ experiments left out too).
    The split rule is the decode grid's to judge (tests/test_split_rule.py): local_gemm reuses B call after call, so
    a B under the L2's 50 MB stays resident, where a decode step's weights come from memory."""
    doc = models.load(str(DEFAULT))
    built = plan.build(doc, "schedules.yaml")
    kernel_of = {c.name: c.kernel.name for c in built.configs}
    split = {k["name"] for k in doc["kernels"] if k.get("stream_k")}
    doc = {**doc, "configs": [c for c in doc["configs"] if c["kernel"] not in split]}
    shipped = {k.name for k in built.kernels if not k.splits_k}

    def pick_rate(r: dict, schedule: str):
        pick = models.default_config(doc, schedule, 1, r["dtype"], r["K"], r["M"], r["N"])
        rates = {v["kernel"]: v["sustained_tflops"] for v in r["variants"] if v["kernel"] in shipped}
        return pick, rates.get(kernel_of[pick]), rates
    return pick_rate


def test_the_default_pick_is_the_fastest_measured_shipped_kernel_or_close():
    """Against the local-GEMM runs on one H200 (bench/results/experiments/<run>/local_gemm_*.json, few tokens): each
    problem's default pick at TP = 1 ran within 4% of the fastest shipped kernel measured on it (sustained). Every
    record of the runs made for the wave check (MEASURED_FOR_THE_PICK) must hold the pick's kernel; the others
    count where they do (the older 64x128 was an experiment without TMA-loaded partials; sk_m128_1451Z timed only
    the 64x128 among shipped kernels)."""
    pick_rate = measured_pick_rate()
    checked = 0
    for run in MEASURED:
        for path in sorted((ROOT / "bench/results/experiments" / run).glob("local_gemm_*.json")):
            for r in json.loads(path.read_text()):
                pick, rate, rates = pick_rate(r, RS if r["op"] == "RS" else AG)
                if rate is None:
                    assert run not in MEASURED_FOR_THE_PICK, (run, r["name"], pick)
                    continue
                assert rate >= 0.96 * max(rates.values()), (run, r["name"], pick, rates)
                checked += 1
    assert checked >= 30


DECODE_RUNS = ["decode_local_1433Z/local_gemm_decode.json", "decode_sk_1532Z/local_gemm_decode_sk.json",
               "abox_1559Z/local_gemm_decode_abox.json", "decode_abox_1622Z/local_gemm_decode_rest.json"]


def test_decode_picks_are_the_fastest_measured_or_close():
    """Against the decode runs on one H200 (experiments/: local GEMMs of M = 16 and 64, shipped TP = 1 configs beside
    cuBLASLt and x_ experiments, which do not count): a TP = 1 GEMM is the same GEMM whatever the schedule, so the
    pick of both an all-gather and a reduce-scatter schedule must run within 4% of the fastest shipped kernel measured
    there. Before the row rule the reduce-scatter picks ran the 128x128 at 0.60-0.82 of the 64x128 (1433Z), and
    before its one-row clause the all-gather pick at 70B-fc1 M = 16 ran the wide kernel at 0.73 of it (1533Z)."""
    pick_rate = measured_pick_rate()
    checked = 0
    for run in DECODE_RUNS:
        for r in json.loads((ROOT / "bench/results/experiments" / run).read_text()):
            for schedule in (AG, RS):
                pick, rate, rates = pick_rate(r, schedule)
                if rate is not None:
                    assert rate >= 0.96 * max(rates.values()), (run, r["name"], schedule, pick, rates)
                    checked += 1
    assert checked >= 40


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


def test_walk_row_bounds_match_the_runtime():
    """The wave check's walk tiles (models.walk_tiles) read the runtime's row bounds of the one-GEMM walks; a bound
    changed in runtime/src/plan.h alone would make the C and Python default picks part ways at few tokens."""
    text = (ROOT / "runtime" / "src" / "plan.h").read_text()
    bound = {name: int(v) for name, v in re.findall(r"#define (TPG_\w+_MAX_ROWS) (\d+)", text)}
    assert bound["TPG_GATHER_MAX_ROWS"] == models.GATHER_MAX_ROWS
    assert bound["TPG_ONE_HOP_MAX_ROWS"] == models.ONE_HOP_MAX_ROWS
    rs, ag = "ReduceScatter1D_TilingA_RotatingC", "AllGather1D_TilingCD_RotatingA"
    tile = {"bm": 128, "bn": 128}
    # 64 rows a stage at TP = 8: one GEMM of 512 rows (4 tile rows), not 8 stages of one part-filled tile row each
    assert models.walk_tiles(rs, 8, 512, 8192, tile) == 4 * 64
    assert models.walk_tiles(rs, 8, 1024, 8192, tile) == 8 * 64  # 128 rows a stage: the ring
    assert models.walk_tiles(ag, 8, 512, 8192 * 8, tile) == 4 * 64  # gathered too
    assert not models.walk_one_gemm(rs, 1, 16)


SCHEDULES = ("AllGather1D_TilingCD_RotatingA", "AllGather1D_TilingCD_RotatingB", "ReduceScatter1D_TilingA_RotatingC",
             "ReduceScatter1D_TilingB_RotatingC")


def test_no_default_pick_trades_speed_for_precision_or_back():
    """The shipped configs that run by name only - fp8_promote (the *_e4m3_promoted families are not marked by_name:
    their kernels keep them out), acc: f16, partials: f32 - are never a default, at any schedule, TP, dtype and shape
    (few tokens and decode included, where the wave, row and split rules step in)."""
    doc = models.load(str(DEFAULT))
    kernels = {k["name"]: k for k in doc["kernels"]}
    by_name_only = {f"{c['name']}_tp{tp}" for c in doc["configs"] for tp in c["tp"]
                    if (lambda k: k.get("fp8_promote") or k.get("acc") == "f16" or k.get("partials") == "f32")(
                        kernels[(c.get("kernel_tp1") or c["kernel"]) if tp == 1 else c["kernel"]])}
    assert any("promoted" in n for n in by_name_only) and any("f32p" in n for n in by_name_only)
    picks = set()
    for sched in SCHEDULES:
        for tp in (1, 2, 4, 8):
            for dtype in ("bf16", "fp16", "e4m3", "e5m2"):
                for m, n, k in ((16384, 10240, 8192), (2048, 8192, 28672), (128, 57344, 8192), (16, 8192, 4096)):
                    pick = models.default_config(doc, sched, tp, dtype, k, m, n)
                    if pick:
                        picks.add(pick)
                        assert pick not in by_name_only, (sched, tp, dtype, m, n, k, pick)
    assert any("e4m3" in p for p in picks) and any("fp16" in p for p in picks)


def test_a_tp1_pick_is_judged_by_its_tp1_kernel():
    """kernel_tp1: at TP = 1 the config runs that kernel, so its pickability (and tile) decides there; at TP = 2 the
    main kernel's does."""
    text = """\
version: 1
kernels:
  - {name: kf32p, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumers: 2, consumer_mode: pingpong,
     partials: f32}
  - {name: kplain, dtype: bf16, tile: {bm: 128, bn: 128, bk: 64}, stages: 5, consumers: 2, consumer_mode: pingpong}
configs:
  - {name: c, schedule: ReduceScatter1D_TilingA_RotatingC, tp: [1, 2], kernel: kf32p, kernel_tp1: kplain}
"""
    doc = config.validate(config.compose(text, "x.yaml"), "x.yaml")
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 1, "bf16") == "c_tp1"
    assert models.default_config(doc, "ReduceScatter1D_TilingA_RotatingC", 2, "bf16") is None


def test_the_row_rule_takes_a_tile_that_holds_every_row_exactly():
    """Decode: the 64-row tile replaces the 128-row pick when the launch's rows fit in one row of its tiles - at
    M = 64 exactly (rows == bm), not at 65 (where the 64x128 walk has twice the tile rows)."""
    doc = _two_tiles_doc(", wave_weight: 50")
    pick = lambda m: models.default_config(doc, "AllGather1D_TilingCD_RotatingA", 1, "bf16", 8192, m, 57344)  # noqa
    assert pick(64) == "b_small_tp1"
    assert pick(65) == "a_wide_tp1"


def _two_tiles_doc(weight: str = "") -> dict:
    text = f"""\
version: 1
kernels:
  - {{name: wide, dtype: bf16, tile: {{bm: 128, bn: 256, bk: 64}}, stages: 3, consumers: 2, epilogue_buffers: 5}}
  - {{name: small, dtype: bf16, tile: {{bm: 64, bn: 128, bk: 64}}, stages: 8, consumers: 1}}
configs:
  - {{name: a_wide, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: wide, prefer_from_local_k: 1}}
  - {{name: b_small, schedule: AllGather1D_TilingCD_RotatingA, tp: 1, kernel: small{weight}}}
"""
    return config.validate(config.compose(text, "x.yaml"), "x.yaml")


def test_the_wave_check_switches_by_ratio_where_the_margin_does_not():
    """M = 65, N = 2048: the wide pick fills 3.1% of a wave, the 64x128 12.3% - 0.09 apart (under the 0.10 margin)
    but 4x (over PICK_WAVE_RATIO): the ratio decides. The row rule stays out (65 rows > 64)."""
    doc = _two_tiles_doc()
    sched = "AllGather1D_TilingCD_RotatingA"
    tiles = ({"bm": 128, "bn": 256}, {"bm": 64, "bn": 128})
    wide, small = (models.walk_fill(sched, 1, 65, 2048, t, 132) for t in tiles)
    assert small - wide < models.PICK_WAVE_MARGIN < small and small > models.PICK_WAVE_RATIO * wide
    assert models.default_config(doc, sched, 1, "bf16", 8192, 65, 2048) == "b_small_tp1"


def test_extents_past_the_limit_take_the_k_rule_alone():
    """A K of 2^31 or more (no GEMM a GPU holds) skips the wave, row and split rules: the K rule's pick stands."""
    doc = _two_tiles_doc(", wave_weight: 50")
    sched = "AllGather1D_TilingCD_RotatingA"
    assert models.default_config(doc, sched, 1, "bf16", 8192, 64, 57344) == "b_small_tp1"  # the row rule
    assert models.default_config(doc, sched, 1, "bf16", models.PICK_EXTENT_LIMIT, 64, 57344) == "a_wide_tp1"
    assert models.default_config(doc, sched, 1, "bf16", 8192, 64, models.PICK_EXTENT_LIMIT) == "a_wide_tp1"


def test_the_stream_k_region_at_its_bounds():
    """tpg_sk_tiles' region: the partial last round plus one full round (200 tiles on 132 CTAs: all 200), split only
    where each CTA gets at least SK_MIN_KBLOCKS and the split plus its fixup fits the rounds it replaces."""
    assert models.sk_tiles(200, 132, 64) == 200
    assert models.sk_tiles(300, 132, 64) == 132 + 300 % 132
    assert models.sk_tiles(133, 132, 3) == 133  # 4 k-blocks a CTA + 2 of fixup = the 2 rounds' 6: still a split
    assert models.sk_tiles(133, 132, 2) == 0  # 3 k-blocks a CTA: under SK_MIN_KBLOCKS
    assert models.sk_tiles(264, 132, 64) == 0  # whole rounds: nothing to split


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
