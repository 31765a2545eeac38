"""bench/tp_plan.py: the order of the TP benchmark's variants in each round and the host's wait for a window's end
(pure: no torch, no GPU); bench/tp_windows.py's time_variants keeping that order, on stand-ins for torch and its
windows (the torch tests, tests/test_tp_bench_collectives.py, run one round on the GPU machine only)."""
import importlib
import sys
import types
from types import SimpleNamespace

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_plan  # noqa: E402

LIVE = ["tpgemm", "local", "cublas_local", "torch_async_tp", "nccl_cublas"]


def test_the_first_shape_keeps_the_order_and_every_other_round_is_reversed():
    assert tp_plan.round_order(LIVE, 0) == LIVE
    assert tp_plan.round_order(LIVE, 1) == LIVE[::-1]
    assert tp_plan.round_order(LIVE, 2, 0) == LIVE
    assert tp_plan.heat_variant(LIVE) == "nccl_cublas"  # as before: the last of round 0
    assert tp_plan.round_order([], 0, 3) == []


def test_with_one_round_each_shape_starts_from_another_variant():
    """--rounds 1: the variant right after the heat window used to be tpgemm on every shape."""
    firsts = [tp_plan.round_order(LIVE, 0, shape)[0] for shape in range(8)]
    assert firsts == LIVE + LIVE[:3]
    for shape in range(8):
        order = tp_plan.round_order(LIVE, 0, shape)
        assert sorted(order) == sorted(LIVE) and tp_plan.heat_variant(LIVE, shape) == order[-1]
        assert tp_plan.round_order(LIVE, 1, shape) == order[::-1]  # round 1 starts with the heat's variant
    assert tp_plan.round_order(LIVE, 0, 7) == ["cublas_local", "torch_async_tp", "nccl_cublas", "tpgemm", "local"]


def test_the_order_is_a_function_of_its_arguments_only():
    """Every rank computes it from the same live list and shape index: the same order on every rank (the windows
    are collective), and the list it was given is left alone."""
    live = list(LIVE)
    assert tp_plan.round_order(live, 1, 3) == tp_plan.round_order(list(LIVE), 1, 3)
    assert live == LIVE


@pytest.fixture
def windows(monkeypatch):
    """bench/tp_windows.py with stand-ins for torch (time_variants' own control flow needs none of it) and for its
    collective steps: a window runs its variant's call once, is recorded as (variant, calls) and lasts SPEED[variant]
    a call; all_ok is this rank's own."""
    fake = types.ModuleType("torch")
    fake.distributed = types.ModuleType("torch.distributed")
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setitem(sys.modules, "torch.distributed", fake.distributed)
    monkeypatch.delitem(sys.modules, "tp_windows", raising=False)
    w = importlib.import_module("tp_windows")
    monkeypatch.delitem(sys.modules, "tp_windows")  # the next import is the real module's again
    timed, fns = [], {v: (lambda: None) for v in LIVE}

    def window(fn, calls, energy, tp):
        fn()
        timed.append((next(v for v, f in fns.items() if f is fn), calls))
        return calls * SPEED[timed[-1][0]], 1.0, 1500.0, {}
    monkeypatch.setattr(w, "window", window)
    monkeypatch.setattr(w, "all_ok", lambda ok: ok)
    monkeypatch.setattr(w.time, "sleep", lambda s: None)
    return w, fns, timed


ARGS = SimpleNamespace(window=0.2, burst_idle=0.0)
SPEED = {v: (i + 1) * 1e-3 for i, v in enumerate(LIVE)}  # seconds a call: each variant its own


@pytest.mark.parametrize("rounds, shape", [(3, 0), (4, 2)])
def test_the_sustained_windows_follow_the_round_order_and_last_the_window(windows, rounds, shape):
    """tp_windows.time_variants: each variant's burst (2 calls, then 50 ms of calls), one heat window of the last of
    round 0, then `rounds` rounds of one window per variant in round_order (interleaved, every other round reversed,
    started from the shape's variant), each window of a variant's own calls for `window` seconds."""
    w, fns, timed = windows
    live, figures, errors = list(LIVE), {}, {}
    w.time_variants(SimpleNamespace(**vars(ARGS), rounds=rounds), live, fns, figures, errors, None, 2, {},
                    first=shape)
    assert [v for v, _ in timed[:2 * len(LIVE)]] == [v for v in LIVE for _ in range(2)]
    assert [c for _, c in timed[:2 * len(LIVE):2]] == [2] * len(LIVE)
    for v, c in timed[1:2 * len(LIVE):2]:  # the burst: >= 50 ms of calls
        assert 0.05 <= c * SPEED[v] < 0.05 + SPEED[v], (v, c)
    heat = timed[2 * len(LIVE)]
    assert heat[0] == tp_plan.heat_variant(LIVE, shape)
    sustained = timed[2 * len(LIVE) + 1:]
    assert [v for v, _ in sustained] == [v for r in range(rounds) for v in tp_plan.round_order(LIVE, r, shape)]
    for v, c in [heat] + sustained:
        assert 0.2 <= c * SPEED[v] < 0.2 + SPEED[v], (v, c)
    assert errors == {} and live == LIVE
    for v in LIVE:
        assert len(figures[v]["windows"]) == rounds, v
        assert figures[v]["sustained_s"] == pytest.approx(SPEED[v]) == figures[v]["burst_s"], v


def test_a_variant_that_fails_leaves_the_rounds_and_the_next_one_is_not_skipped(windows):
    """A variant whose warm-up call fails is never timed (also where its later calls would pass), one whose sustained
    window fails is timed no more; both lose their figures (a partial median is no figure) and the variants after
    them keep every round."""
    w, fns, timed = windows

    def failing(v, fails):
        calls = []

        def run():
            calls.append(1)
            if fails(len(calls)):
                raise RuntimeError(f"injected {v}")
        return run
    fns["local"] = failing("local", lambda n: n == 1)  # its warm-up call only
    fns["torch_async_tp"] = failing("torch_async_tp", lambda n: n > 4)  # warm-up, bursts, round 0: round 1 fails
    live, figures, errors = list(LIVE), {}, {}
    w.time_variants(SimpleNamespace(**vars(ARGS), rounds=3), live, fns, figures, errors, None, 2, {})
    assert live == ["tpgemm", "cublas_local", "nccl_cublas"] and set(errors) == {"local", "torch_async_tp"}
    assert "injected local" in errors["local"] and "injected torch_async_tp" in errors["torch_async_tp"]
    assert set(figures) == set(live) and [v for v, _ in timed].count("torch_async_tp") == 3
    assert "local" not in [v for v, _ in timed]
    for v in live:
        assert len(figures[v]["windows"]) == 3 and figures[v]["sustained_s"] is not None, v


class FakeTime:
    """A clock that advances only by sleep()."""

    def __init__(self):
        self.now = 0.0
        self.sleeps = 0

    def clock(self):
        return self.now

    def sleep(self, s):
        self.sleeps += 1
        self.now += s


def test_the_wait_polls_the_end_every_millisecond_and_samples_the_clock_every_20_ms():
    """The energy counter is read right after the wait: before 2026-12-06 the wait slept 20 ms between polls, so the
    read came up to 20 ms (of idle joules) after the window's end."""
    t = FakeTime()
    end = 0.1005
    samples = tp_plan.wait_sampling(lambda: t.now >= end, lambda: 1500.0 + t.now, clock=t.clock, sleep=t.sleep)
    assert end <= t.now < end + 0.0011  # returned within a poll of the end
    assert len(samples) == 6 and samples[0] == 1500.0  # at 0, 20, 40, 60, 80, 100 ms
    assert t.sleeps > 90


def test_the_wait_keeps_only_samples_it_got_and_returns_at_once_when_done():
    t = FakeTime()
    got = iter([None, 1400.0, None])
    samples = tp_plan.wait_sampling(lambda: t.now >= 0.05, lambda: next(got, None), clock=t.clock, sleep=t.sleep)
    assert samples == [1400.0]
    assert tp_plan.wait_sampling(lambda: True, lambda: 1.0 / 0) == []  # nothing sampled when already done
