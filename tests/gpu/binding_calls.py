"""GPU check: the ctypes binding's whole-op calls as a framework in one process makes them (bench/tpgemm_lib.py):
Op.run with one torch stream a rank and with the context's streams (None), Op.set_scalars with C (beta != 0) and back
to alpha alone, Op.set_pdl at TP = 1.

Cases: TP = 1 (one GEMM, PDL off and on) and TP = 2 with both ranks on GPU 0 (single process, share_devices), for
each schedule family. Each call runs on fresh random operands copied into the same shards, and each rank's D is
checked against torch's alpha * A @ B.T + beta * C. Prints one line a call and "N passed, M failed"; exit 0 only if
every call passed, 3 without torch or a GPU (the caller skips).
"""
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]

try:
    import torch
except ImportError:
    print("skip: torch is not installed")
    sys.exit(3)

from bench.tpgemm_lib import Lib  # noqa: E402
from torch_checks import SKIPPED, Tally, block, destroyed_after, forked, worst_error  # noqa: E402

M, N, K = 1024, 1536, 512
SCHEDULES = ("AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC")
CASES = ((SCHEDULES[0], 1, 0), (SCHEDULES[0], 1, 1), (SCHEDULES[0], 2, 0), (SCHEDULES[1], 2, 0))  # (., tp, pdl)
# each call: alpha, beta, and its launch: "streams" one torch stream a rank, "ctx" the context's streams (None)
CALLS = ((1.0, 0.0, "streams"), (0.5, 2.0, "streams"), (0.5, 2.0, "ctx"), (-1.5, 0.0, "ctx"), (1.0, 0.0, "streams"))
BOUND = 2e-2  # max |d - ref| / max |ref|: bf16 D (and C; reduce-scatter adds a bf16 partial too)


class Shards:
    """Each rank's A, B, C and D shards on GPU 0, as the op's shard shapes say (C has D's), set on the op."""

    def __init__(self, op, tp):
        self.shapes = [op.shard_shape(r) for r in range(tp)]
        new = lambda s, name: torch.empty(s[f"{name}_rows"], s[f"{name}_cols"], dtype=torch.bfloat16,  # noqa: E731
                                          device="cuda")
        self.parts = [{"a": new(s, "a"), "b": new(s, "b"), "c": new(s, "d"), "d": new(s, "d")} for s in self.shapes]
        for r, p in enumerate(self.parts):
            op.set_torch_tensors(r, p["a"], p["b"], p["d"], c=p["c"])

    def fill(self, full):
        for s, p in zip(self.shapes, self.parts):
            for name in ("a", "b", "c"):
                p[name].copy_(block(full[name], s, "d" if name == "c" else name))

    def error(self, ref):
        return worst_error(self.shapes, [p["d"] for p in self.parts], ref)


def run_case(lib, schedule, tp, pdl, gen):
    ctx = lib.ctx_local([0] * tp, timeout_ns=5_000_000_000, share_devices=tp > 1)
    tally = Tally()
    try:
        op = ctx.op(lib.config(schedule=schedule, tp=tp, dtype="bf16"), M, N, K)
        with destroyed_after(op):
            op.set_pdl(pdl)
            shards, streams = Shards(op, tp), [torch.cuda.Stream() for _ in range(tp)]
            for i, (alpha, beta, how) in enumerate(CALLS):
                full = {"a": torch.randn(M, K, generator=gen, device="cuda").to(torch.bfloat16),
                        "b": torch.randn(N, K, generator=gen, device="cuda").to(torch.bfloat16),
                        "c": torch.randn(M, N, generator=gen, device="cuda").to(torch.bfloat16)}
                shards.fill(full)
                op.set_scalars(alpha, beta)
                if how == "ctx":
                    op.run(None)
                else:
                    forked(streams, lambda: op.run(streams))
                torch.cuda.synchronize()  # the context's streams are the library's own: wait for the device
                err = shards.error(alpha * (full["a"].float() @ full["b"].float().T) + beta * full["c"].float())
                tally.check(err <= BOUND, f"{schedule} tp={tp} pdl={pdl} call {i} (alpha {alpha}, beta {beta}, "
                                          f"{how}): max error {err:.2e}")
            op.sync()
    finally:
        ctx.destroy()
    return tally


def main():
    if not torch.cuda.is_available():
        print("skip: no CUDA device visible to torch")
        return SKIPPED
    lib, gen, tally = Lib(), torch.Generator(device="cuda").manual_seed(11), Tally()
    for schedule, tp, pdl in CASES:
        tally.add(run_case(lib, schedule, tp, pdl, gen))
    return tally.report()


if __name__ == "__main__":
    sys.exit(main())
