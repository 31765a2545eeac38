"""The protocol model's epochs (tests/test_protocol.py Machine): unbounded integers, or the device's 32-bit words
with flags compared within a window (templates/kernels/epoch.h) or by signed difference (the rule before 2026-12-05)."""

U32, WINDOW = 1 << 32, 1 << 20  # templates/kernels/epoch.h: TPG_EPOCH_WINDOW


class Epochs:
    """How the model compares and advances epochs. "int": unbounded integers (the protocol's logic alone). "u32": the
    device's 32-bit words - epochs and counters wrap, a flag has reached an epoch when it is at most WINDOW ahead
    (tpg_epoch_reached), a barrier counter is compared by signed difference. "signed": the same with flags compared by
    signed difference too, as before 2026-12-05 (the control). `first` is the epoch of the call before the model's
    first (its calls start at first + 1), `fresh` what every flag word holds then: 0 for words no call wrote since the
    op was created, first for words the previous call wrote."""

    def __init__(self, kind="int", first=0, fresh=None):
        self.kind, self.first = kind, first
        self.fresh = (-1 if kind == "int" else 0) if fresh is None else fresh

    def next(self, e):
        return e + 1 if self.kind == "int" else (e + 1) % U32

    def reached(self, word, epoch):
        if self.kind == "int":
            return word >= epoch
        if self.kind == "signed":
            return (word - epoch) % U32 < U32 // 2
        return (word - epoch) % U32 < WINDOW

    def counter_passes(self, count, target):
        return count >= target if self.kind == "int" else (count - target) % U32 < U32 // 2

    def arrive(self, count):
        return count + 1 if self.kind == "int" else (count + 1) % U32
