"""bench/tp_options.py: tp_bench's option checks before the process group (no torch, no library needed)."""
import sys
from types import SimpleNamespace

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_options  # noqa: E402

KNOWN = {"ag_rota_bf16_tp2", "rs_tila_bf16_wide_tp2", "rs_tila_bf16_tp2"}


def opts(**changes):
    base = dict(rounds=2, window=1.0, burst_idle=0.3, alt_copy_chunks="", ag_config="", rs_config="", alt_config="",
                dtype="bf16")
    return SimpleNamespace(**{**base, **changes})


def errors(**changes):
    return tp_options.option_errors(opts(**changes), 2, KNOWN.__contains__)


def test_the_defaults_and_known_families_pass():
    assert errors() == []
    assert errors(ag_config="ag_rota_bf16", rs_config="rs_tila_bf16_wide", alt_config="rs_tila_bf16,",
                  alt_copy_chunks="1,4,32", burst_idle=0.0) == []


def test_a_misspelt_family_is_refused_before_any_gpu_work():
    out = errors(alt_config="rs_tila_bf16,rs_tila_bf16_widee")
    assert len(out) == 1 and "--alt-config rs_tila_bf16_widee" in out[0] and "rs_tila_bf16_widee_tp2" in out[0], out
    assert "--ag-config ag_rota_fp16" in errors(ag_config="ag_rota_fp16")[0]
    assert "--rs-config x" in errors(rs_config="x")[0]


def test_copy_chunks_must_be_whole_numbers_in_range():
    for bad in ("2,x", "0", "33", "-1", "1.5"):
        out = errors(alt_copy_chunks=bad)
        assert len(out) == 1 and "--alt-copy-chunks" in out[0], (bad, out)


def test_rounds_windows_and_idle_must_make_sense():
    assert "--rounds 0" in errors(rounds=0)[0]
    assert "--window -5" in errors(window=-5.0)[0]
    assert "--window nan" in errors(window=float("nan"))[0]
    assert "--window inf" in errors(window=float("inf"))[0]  # windows sized from it would never end
    assert "--burst-idle -1" in errors(burst_idle=-1.0)[0]
    assert len(errors(rounds=0, window=0.0, burst_idle=float("inf"))) == 3


def test_the_parsers_defaults_pass_the_checks_and_name_the_baselines_schedules():
    import tp_records as R
    args = tp_options.parser("tp_bench", ("bf16", "fp16")).parse_args([])
    assert tp_options.option_errors(args, 2, KNOWN.__contains__) == []
    assert (args.rounds, args.dtype, args.energy_fit) == (3, "bf16", True)
    assert (args.ag_schedule, args.rs_schedule) == (R.SCHEDULES["AG"], R.SCHEDULES["RS"])
    parsed = tp_options.parser("tp_bench", ("bf16", "fp16")).parse_args(["--dtype", "fp16", "--no-energy-fit"])
    assert (parsed.dtype, parsed.energy_fit) == ("fp16", False)
