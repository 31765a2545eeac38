"""bench/tp_energy.py, the TP benchmark's power fit (tp_bench.py --energy-fit), without torch or a GPU: the fit over
whole counter steps, the busy span it reads, and the sampler thread against a fake counter."""
import sys
import threading
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
    assert E.fit_power([(0.0, 0.0), (0.1, 50.0), (0.2, 10.0), (0.3, 60.0)], 0.0, 1.0) is None  # and came on
    assert E.fit_power([(0.0, 0.0), (0.25, 100.0)], 0.0, 1.0) == pytest.approx(400.0)  # two steps do


def test_the_busy_span_stays_inside_the_gpus_work():
    assert E.busy_span(100.0, 1.0) == (pytest.approx(100.1), pytest.approx(101.0))
    assert E.busy_span(100.0, 0.1) == (pytest.approx(100.02), pytest.approx(100.1))


class Counter:
    """A fake NVML counter: `watts` from the first read on, advancing in steps of `step_s`."""

    def __init__(self, watts, step_s, fail_after=None, read_s=0.0):
        self.watts, self.step_s, self.t0, self.reads, self.fail_after = watts, step_s, None, 0, fail_after
        self.read_s, self.reading = read_s, threading.Event()

    def __call__(self):
        self.reading.set()  # a read has started (the sampler's thread is in it)
        self.reads += 1
        if self.fail_after is not None and self.reads > self.fail_after:
            raise RuntimeError("NVML gone")
        time.sleep(self.read_s / 2)  # a slow read: the value is the counter's halfway through it
        now = time.monotonic()
        time.sleep(self.read_s / 2)
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


def test_a_slow_counter_read_still_fits_and_says_what_it_saw():
    """Reads of 3 ms, as NVML's may take: the first sampler, which kept a step only within 2 ms of the end of the read
    before, kept none (the GPU run of 2026-12-05); bracketed by the two reads' ends it keeps them and fits the power."""
    with E.EnergySampler(Counter(500.0, 0.02, read_s=0.003)) as s:
        time.sleep(0.6)
    st = s.stats()
    assert s.usable() and st["steps"] >= 5 and st["steps"] <= st["changes"] < st["polls"], st
    assert 2.5 <= st["read_ms"] <= 20, st
    watts = E.fit_power(s.steps, s.steps[0][0], s.steps[-1][0])
    assert watts == pytest.approx(500.0, rel=0.1), (watts, s.steps[:3])


def test_a_counter_read_past_the_bound_keeps_no_step():
    with E.EnergySampler(Counter(500.0, 0.02, read_s=E.STEP_PRECISION_S)) as s:
        time.sleep(0.3)
    st = s.stats()
    assert s.usable() and st["changes"] >= 3 and st["steps"] == 0, st


def test_a_step_is_kept_only_when_its_bracket_from_the_read_before_is_within_the_bound():
    """Reads of 7 ms each: a read's own time is within STEP_PRECISION_S (10 ms), but the bracket from the start of the
    read before to the end of the one that saw the step is >= 14 ms - the step's time is not known that well."""
    with E.EnergySampler(Counter(500.0, 0.02, read_s=0.007)) as s:
        time.sleep(0.3)
    st = s.stats()
    assert s.usable() and st["changes"] >= 3 and st["steps"] == 0, st



def test_a_step_bracketed_by_exactly_the_bound_is_kept():
    """The read before from 0 to 0 s, the one that sees the step from 5 to 10 ms: a bracket of STEP_PRECISION_S,
    kept at its middle."""
    times, values, done = iter([0.0, 0.0, 0.005, E.STEP_PRECISION_S]), iter([0.0, 1.0]), threading.Event()

    def read():
        v = next(values, None)
        if v is None:  # the script is over: the counter stays where it went
            done.set()
            return 1.0
        return v
    with E.EnergySampler(read, period_s=0.0, clock=lambda: next(times, 1.0)) as s:
        assert done.wait(2.0)
    assert s.usable() and s.steps == [(E.STEP_PRECISION_S / 2, 1.0)], s.steps

def test_a_sampler_whose_read_never_returned_is_not_usable():
    """A read stuck past the join's second (an NVML call that hangs): its thread is still running, so its steps are
    not the window's."""
    counter = Counter(500.0, 0.02, read_s=3.0)
    with E.EnergySampler(counter) as s:
        assert counter.reading.wait(2.0)  # the thread is inside its read before the window closes
    assert not s.failed and not s.usable()

