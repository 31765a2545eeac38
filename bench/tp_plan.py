"""Pure pieces of how the TP benchmark runs its timed windows (bench/tp_windows.py), without torch so that the tests
run on the CPU: the order of the variants in each sustained round, and the host's wait for a window's end event while
it samples the SM clock."""
import time

# The wait for a window's end event: the energy counter is read right after the event (each millisecond of delay adds
# idle joules to the window's), so the event is polled every POLL_S; the SM clock, an NVML read, every CLOCK_S.
POLL_S = 0.001
CLOCK_S = 0.02


def round_order(live, rnd, first=0):
    """The variants of sustained round rnd: live rotated to start at live[first] (first: the shape's index, modulo),
    reversed on every other round. The reversal alone left one variant (tpgemm) first after the heat window on every
    shape of a --rounds 1 run; the rotation moves that place from shape to shape. Every rank holds the same live list
    and index, so every rank runs the same order (each window is collective)."""
    if not live:
        return []
    start = first % len(live)
    order = list(live[start:]) + list(live[:start])
    return order if rnd % 2 == 0 else order[::-1]


def heat_variant(live, first=0):
    """The variant of the unmeasured heat window: the last of round 0, so that it does not also open the measured
    rounds (round 1, reversed, starts with it after a whole round of others)."""
    return round_order(live, 0, first)[-1]


def wait_sampling(done, sample, poll_s=POLL_S, sample_s=CLOCK_S, clock=time.monotonic, sleep=time.sleep):
    """Waits until done() (polled every poll_s) and returns the values of sample() that were not None: one at once,
    then one every sample_s while waiting."""
    samples, next_sample = [], clock()
    while not done():
        now = clock()
        if now >= next_sample:
            x = sample()
            if x is not None:
                samples.append(x)
            next_sample = now + sample_s
        sleep(poll_s)
    return samples
