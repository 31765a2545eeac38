"""bench/tp_options.py: tp_bench's option checks before the process group (no torch, no library needed)."""
import sys
from types import SimpleNamespace

import pytest
import yaml

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_options  # noqa: E402

AG, RS = tp_options.AG_SCHEDULE, tp_options.RS_SCHEDULE
# the library's configs as tp_bench's config_of gives them (name -> schedule, TP, dtype name)
KNOWN = {f"{fam}_tp2": {"schedule": sched, "tp": 2, "dtype": dtype} for fam, sched, dtype in (
    ("ag_rota_bf16", AG, "bf16"), ("rs_tila_bf16_wide", RS, "bf16"), ("rs_tila_bf16", RS, "bf16"),
    ("ag_rota_fp16", AG, "fp16"), ("ag_rotb_bf16", "AllGather1D_TilingCD_RotatingB", "bf16"),
    ("rs_tilb_bf16", "ReduceScatter1D_TilingB_RotatingC", "bf16"), ("ag_rota_e4m3_promoted", AG, "e4m3"))}
KNOWN["odd_tp2"] = {"schedule": AG, "tp": 4, "dtype": "bf16"}  # a name whose _tp suffix does not say its TP


def opts(**changes):
    base = dict(rounds=2, window=1.0, burst_idle=0.3, alt_copy_chunks="", ag_config="", rs_config="", alt_config="",
                only="",
                dtype="bf16", ag_schedule=tp_options.AG_SCHEDULE, rs_schedule=tp_options.RS_SCHEDULE)
    return SimpleNamespace(**{**base, **changes})


def errors(**changes):
    return tp_options.option_errors(opts(**changes), 2, KNOWN.get)


def test_the_defaults_and_known_families_pass():
    assert errors() == []
    assert errors(ag_config="ag_rota_bf16", rs_config="rs_tila_bf16_wide", alt_config="rs_tila_bf16,",
                  alt_copy_chunks="1,4,32", burst_idle=0.0) == []


@pytest.mark.parametrize("flag", ["only", "alt_config", "alt_copy_chunks"])
def test_a_list_of_commas_alone_is_refused(flag):
    """`--only ,` named no shape, so the run timed nothing and exited 0; a stray comma beside a value stays harmless."""
    out = errors(**{flag: ",,"})
    assert len(out) == 1 and f"--{flag.replace('_', '-')} ',,': no value between its commas" in out[0], out


def test_a_misspelt_family_is_refused_before_any_gpu_work():
    out = errors(alt_config="rs_tila_bf16,rs_tila_bf16_widee")
    assert len(out) == 1 and "--alt-config rs_tila_bf16_widee" in out[0] and "rs_tila_bf16_widee_tp2" in out[0], out
    assert "--ag-config ag_ro" in errors(ag_config="ag_ro")[0]
    assert "--rs-config x" in errors(rs_config="x")[0]


def test_a_config_of_another_dtype_route_schedule_or_tp_is_refused_naming_both():
    """The library finds a config by name whatever its dtype, TP or schedule (tpg_config_find): each flag's family
    must be of the run's dtype, at its TP, of the schedule whose shapes the flag feeds (the all-gather shapes'
    for --ag-config, the reduce-scatter shapes' for --rs-config, either for --alt-config)."""
    out = errors(ag_config="ag_rota_fp16")
    assert len(out) == 1 and "config ag_rota_fp16_tp2 is of schedule" in out[0] and "dtype fp16" in out[0], out
    assert "needs schedule" in out[0] and "dtype bf16 (--dtype bf16)" in out[0], out
    out = errors(ag_config="rs_tila_bf16")
    assert len(out) == 1 and f"is of schedule {RS} (reduce-scatter)" in out[0], out
    assert f"--ag-config needs schedule {AG} (all-gather)" in out[0], out
    out = errors(ag_config="ag_rotb_bf16")  # --ag-schedule accepts RotatingA only (tp_options.AG_SCHEDULE)
    assert len(out) == 1 and "RotatingB (all-gather)" in out[0] and f"needs schedule {AG}" in out[0], out
    out = errors(rs_config="ag_rota_bf16")
    assert len(out) == 1 and f"--rs-config needs schedule {RS} (reduce-scatter)" in out[0], out
    out = errors(rs_config="rs_tilb_bf16")
    assert len(out) == 1 and "--rs-config rs_tilb_bf16" in out[0], out
    out = errors(alt_config="ag_rota_bf16,rs_tila_bf16,ag_rotb_bf16,rs_tilb_bf16,ag_rota_fp16")
    assert [o.split(":")[0] for o in out] == ["--alt-config ag_rotb_bf16", "--alt-config rs_tilb_bf16",
                                              "--alt-config ag_rota_fp16"], out
    assert f"needs schedule {AG} (all-gather) or {RS} (reduce-scatter)" in out[0], out
    assert "TP = 4; --ag-config needs" in errors(ag_config="odd")[0]
    # e4m3_promoted runs e4m3 configs (the library's operand type)
    assert errors(dtype="e4m3_promoted", ag_config="ag_rota_e4m3_promoted") == []
    out = errors(dtype="fp16", ag_config="ag_rota_e4m3_promoted")
    assert "dtype e4m3, TP = 2;" in out[0] and "dtype fp16 (--dtype fp16)" in out[0], out


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
    assert tp_options.option_errors(args, 2, KNOWN.get) == []
    assert (args.rounds, args.dtype, args.energy_fit) == (3, "bf16", True)
    assert (args.ag_schedule, args.rs_schedule) == (R.SCHEDULES["AG"], R.SCHEDULES["RS"])
    parsed = tp_options.parser("tp_bench", ("bf16", "fp16")).parse_args(["--dtype", "fp16", "--no-energy-fit"])
    assert (parsed.dtype, parsed.energy_fit) == ("fp16", False)


@pytest.mark.parametrize("flag, schedule", [("--ag-schedule", "AllGather1D_TilingCD_RotatingB"),
                                            ("--rs-schedule", "ReduceScatter1D_TilingB_RotatingC")])
def test_a_schedule_the_baselines_do_not_shard_as_is_a_usage_error(flag, schedule, capsys):
    """torch's baselines and the check shard D as AG_SCHEDULE / RS_SCHEDULE do: another schedule would fail
    tp_check.own_setup's layout check on every shape after the GPUs had started, so the parser refuses it."""
    with pytest.raises(SystemExit) as e:
        tp_options.parser("tp_bench", ("bf16",)).parse_args([flag, schedule])
    assert e.value.code == 2 and f"argument {flag}: invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("world", ["3", "16", "-2", "0", "abc", "", "2.0"])
def test_a_world_size_the_benchmark_does_not_run_at_is_a_usage_error(world):
    """WORLD_SIZE 3, 16 and -2 were "accepted at tp = ...", 0 raised ZeroDivisionError and abc ValueError."""
    tp, why = tp_options.tp_degree(world)
    assert tp is None and why.startswith(f"WORLD_SIZE={world!r}: tp_bench runs at TP = 1, 2, 4, 8"), why


def test_the_tp_degrees_are_those_schedules_yaml_builds_the_benchmarks_schedules_for():
    assert [tp_options.tp_degree(str(t)) for t in (1, 2, 4, 8)] == [(t, None) for t in (1, 2, 4, 8)]
    configs = yaml.safe_load((ROOT / "schedules.yaml").read_text())["configs"]
    tps = {c["name"]: c["tp"] if isinstance(c["tp"], list) else [c["tp"]] for c in configs
           if c["schedule"] in (AG, RS)}
    assert set().union(*tps.values()) == set(tp_options.TP_DEGREES)
    assert tps["ag_rota_bf16"] == tps["rs_tila_bf16"] == list(tp_options.TP_DEGREES)  # every degree has a default
