"""bench/tp_plan.py: the order of the TP benchmark's variants in each round and the host's wait for a window's end
(pure: no torch, no GPU)."""
import sys

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
