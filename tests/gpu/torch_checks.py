"""What the torch-driven GPU checks share (tests/gpu/torch_capture.py, tests/gpu/binding_calls.py): a shard's block
of a full matrix, each rank's worst error against torch's product, a call forked onto the rank streams and joined
back, and an op that is destroyed whatever the last synchronize raises. Imported after the scripts found torch."""
import contextlib

import torch

SKIPPED = 3  # the scripts' exit status without torch or a GPU (the pytest case skips)


def block(t, shape, name):
    """The rows and columns of `t` that a shard holds: shape is Op.shard_shape's dict, name "a", "b" or "d"."""
    row0, col0 = shape[f"{name}_row0"], shape[f"{name}_col0"]
    return t[row0:row0 + shape[f"{name}_rows"], col0:col0 + shape[f"{name}_cols"]]


def worst_error(shapes, outputs, ref):
    """max over ranks of max |d - ref| / max |ref| on each rank's D block."""
    worst = 0.0
    for shape, d in zip(shapes, outputs):
        want = block(ref, shape, "d")
        worst = max(worst, ((d.float() - want).abs().max() / want.abs().max()).item())
    return worst


def forked(streams, launch):
    """launch() with every rank stream waiting for the current one first, and the current one for them after."""
    here = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(here)
    launch()
    for s in streams:
        here.wait_stream(s)


@contextlib.contextmanager
def destroyed_after(op):
    """The op is destroyed even when the closing synchronize raises (a sticky CUDA error): else the context's
    destroy would report "op(s) still alive" instead."""
    try:
        yield
    finally:
        try:
            torch.cuda.synchronize()
        finally:
            op.destroy()


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def check(self, ok, line):
        self.passed, self.failed = self.passed + ok, self.failed + (not ok)
        print(f"{line} {'ok' if ok else 'FAILED'}", flush=True)

    def add(self, other):
        self.passed, self.failed = self.passed + other.passed, self.failed + other.failed

    def report(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 else 1
