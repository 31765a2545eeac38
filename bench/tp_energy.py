"""The TP benchmark's power fit (tp_bench.py --energy-fit; no torch here, so the tests run on the CPU): NVML's
energy counter advances in steps tens of milliseconds apart (bench/energy.c), so a window's before/after delta is off
by up to a step at each end. A sampler thread records each step with its host time - only steps it saw within
STEP_PRECISION_S of its previous poll, whose time is known that well - and fit_power takes the slope between the first
and the last step inside the window's busy part."""
import threading
import time

# The shortest span of steps a fit takes: a shorter one is mostly quantization.
MIN_FIT_S = 0.2
# A step is kept only when the poll before it was at most this long before (a starved poll locates it badly).
STEP_PRECISION_S = 0.002


def fit_power(steps, t_from, t_to):
    """Watts from counter steps [(host seconds, joules), ...]: the slope between the first and the last step inside
    [t_from, t_to], or None when there are fewer than two there, they span under MIN_FIT_S, or the counter went
    back."""
    inside = [(t, j) for t, j in steps if t_from <= t <= t_to]
    if len(inside) < 2 or inside[-1][0] - inside[0][0] < MIN_FIT_S or inside[-1][1] < inside[0][1]:
        return None
    return (inside[-1][1] - inside[0][1]) / (inside[-1][0] - inside[0][0])


def busy_span(t_record, elapsed):
    """The host-time span a window's fit reads: from a lead after the start event's record (the GPUs still spin
    tp_windows.aligned_start's ~5 ms, and the counter may lag the power: 10% of the window, 20 ms at least) to the
    record plus the GPU's own elapsed time (the GPU reaches the start event at or after the record, so this end
    stays inside the busy part, where the host's end of the window may trail it by a poll)."""
    return t_record + max(0.02, 0.1 * elapsed), t_record + elapsed


class EnergySampler:
    """A thread polling read_joules() every period_s; steps holds (host time, joules) of each change seen within
    STEP_PRECISION_S of the previous poll. A failed read stops it and sets failed. Use as a context manager; after it,
    usable() says whether the steps can be fitted (the thread ended and never failed)."""

    def __init__(self, read_joules, period_s=0.0005, clock=time.monotonic):
        self.read, self.period_s, self.clock, self.steps, self.failed = read_joules, period_s, clock, [], False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        last, last_poll = None, None
        try:
            while not self._stop.is_set():
                j, now = self.read(), self.clock()
                if j is not None and j != last:
                    if last is not None and last_poll is not None and now - last_poll <= STEP_PRECISION_S:
                        self.steps.append((now, j))
                    last = j
                last_poll = now
                time.sleep(self.period_s)
        except Exception:  # an NVML error: no fit for this window (the delta stands)
            self.failed = True

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=1.0)
        return False

    def usable(self):
        return not self.failed and not self._thread.is_alive()
