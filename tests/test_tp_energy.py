"""bench/tp_energy.py, the TP benchmark's power fit (tp_bench.py --energy-fit), without torch or a GPU: the fit over
whole counter steps, the busy span it reads, and the sampler thread against a fake counter."""
import sys
import time

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import tp_energy as E  # noqa: E402


def test_the_fit_takes_whole_steps_inside_the_window():
    """A counter stepping every 50 ms at 600 W: the fit reads 600 W whatever the window's phase against the steps,
    where a delta over the window is off by up to a step; too few steps or too short a span give None."""
    steps = [(0.05 * i, 30.0 * i) for i in range(40)]
    assert E.fit_power(steps, 0.212, 1.333) == pytest.approx(600.0)
    assert E.fit_power(steps, 0.3, 0.45) is None  # 0.15 s of steps: under MIN_FIT_S
    assert E.fit_power(steps[:1], 0.0, 2.0) is None and E.fit_power([], 0.0, 1.0) is None
    assert E.fit_power([(0.0, 10.0), (0.5, 5.0)], 0.0, 1.0) is None  # a counter that went back


def test_the_busy_span_stays_inside_the_gpus_work():
    assert E.busy_span(100.0, 1.0) == (pytest.approx(100.1), pytest.approx(101.0))
    assert E.busy_span(100.0, 0.1) == (pytest.approx(100.02), pytest.approx(100.1))


class Counter:
    """A fake NVML counter: `watts` from the first read on, advancing in steps of `step_s`."""

    def __init__(self, watts, step_s, fail_after=None):
        self.watts, self.step_s, self.t0, self.reads, self.fail_after = watts, step_s, None, 0, fail_after

    def __call__(self):
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise RuntimeError("NVML gone")
        now = time.monotonic()
        self.t0 = now if self.t0 is None else self.t0
        return self.watts * (now - self.t0) // (self.watts * self.step_s) * (self.watts * self.step_s)


def test_the_sampler_records_steps_that_fit_the_counters_power():
    with E.EnergySampler(Counter(500.0, 0.02)) as s:
        time.sleep(0.5)
    assert s.usable() and len(s.steps) >= 5
    watts = E.fit_power(s.steps, s.steps[0][0], s.steps[-1][0])
    assert watts == pytest.approx(500.0, rel=0.1), (watts, s.steps[:3])


def test_a_failing_counter_leaves_no_fit():
    with E.EnergySampler(Counter(500.0, 0.02, fail_after=50)) as s:
        time.sleep(0.2)
    assert s.failed and not s.usable()
