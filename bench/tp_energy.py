"""The TP benchmark's power fit (tp_bench.py --energy-fit; no torch here, so the tests run on the CPU): NVML's
energy counter advances in steps tens of milliseconds apart (bench/energy.c), so a window's before/after delta is off
by up to a step at each end. A sampler thread records each step with its host time - only steps it saw within
STEP_PRECISION_S of its previous read, whose time is known that well - and fit_power takes the slope between the first
and the last step inside the window's busy part. The first GPU run (2026-12-05, bench/results/experiments/
energy_fit_0228Z) kept no step at all within the first bound, 2 ms after the end of the previous read: the sampler now
brackets each step by the two reads around it and says how many polls, changes and kept steps it had (stats())."""
import threading
import time

# The shortest span of steps a fit takes: a shorter one is mostly quantization.
MIN_FIT_S = 0.2
# A step is kept only when the read before it started at most this long before the read that saw it ended (a starved
# or slow poll locates it badly): 10 ms against a fit over >= MIN_FIT_S is <= 5% at the worst, ~1% in a 1 s window.
STEP_PRECISION_S = 0.01


def fit_power(steps, t_from, t_to):
    """Watts from counter steps [(host seconds, joules), ...]: the slope between the first and the last step inside
    [t_from, t_to], or None when there are fewer than two there, they span under MIN_FIT_S, or the counter went
    back."""
    inside = [(t, j) for t, j in steps if t_from <= t <= t_to]
    went_back = any(b[1] < a[1] for a, b in zip(inside, inside[1:]))  # anywhere inside, not only end to end
    if len(inside) < 2 or inside[-1][0] - inside[0][0] < MIN_FIT_S or went_back:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def busy_span(t_record, elapsed):
    """The host-time span a window's fit reads: from a lead after the start event's record (the GPUs still spin
    tp_windows.aligned_start's ~5 ms, and the counter may lag the power: 10% of the window, 20 ms at least) to the
    record plus the GPU's own elapsed time (the GPU reaches the start event at or after the record, so this end
    stays inside the busy part, where the host's end of the window may trail it by a poll)."""
    return t_record + max(0.02, 0.1 * elapsed), t_record + elapsed


class EnergySampler:
    """A thread polling read_joules() every period_s; steps holds (host time, joules) of each change whose bracket -
    from the start of the read before it to the end of the read that saw it - is within STEP_PRECISION_S, timed at
    the bracket's middle. A failed read stops it and sets failed. Use as a context manager; after it, usable() says
    whether the steps can be fitted (the thread ended and never failed) and stats() what the thread saw."""

    def __init__(self, read_joules, period_s=0.0005, clock=time.monotonic):
        self.read, self.period_s, self.clock, self.steps, self.failed = read_joules, period_s, clock, [], False
        self.polls, self.changes, self.read_s = 0, 0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        last, last_start = None, None
        try:
            while not self._stop.is_set():
                start = self.clock()
                j = self.read()
                end = self.clock()
                self.polls += 1
                self.read_s.append(end - start)
                if j is not None and j != last:
                    self.changes += last is not None
                    if last is not None and end - last_start <= STEP_PRECISION_S:
                        self.steps.append(((last_start + end) / 2, j))
                    last = j
                last_start = start
                time.sleep(self.period_s)
        except Exception:  # an NVML error: no fit for this window (the delta stands)
            self.failed = True

    def stats(self):
        """What the thread saw: polls, counter changes, steps kept, the median read in ms (None before a read)."""
        reads = sorted(self.read_s)
        return {"polls": self.polls, "changes": self.changes, "steps": len(self.steps),
                "read_ms": round(reads[len(reads) // 2] * 1e3, 3) if reads else None}

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=1.0)
        return False

    def usable(self):
        return not self.failed and not self._thread.is_alive()
