"""GPU check: tpgemm ops inside PyTorch CUDA graphs (torch.cuda.graph), the way a framework captures a model step.

tpgemm's library carries its own CUDA runtime; torch has another. A capture that torch begins (its default,
process-wide capture mode) must still take tpgemm's calls: tpg_op_run_rank on a capturing stream adds the rank's
graph to torch's capture as a child node (runtime/src/graph.c), and every epoch then comes from the device, so a
replay of torch's graph is one more call of the op.

For each schedule family (all-gather, reduce-scatter) at TP = 2 with both ranks on GPU 0 (single process,
share_devices): one torch graph captured with the table's graphs and one with the barriers beside the GEMM, then
replays of both and direct calls in turn, each on fresh random operands copied into the same shards, each rank's
D against torch's product; then tpg_op_sync (no timeout, epochs in step). Prints one line per call and
"N passed, M failed"; exit 0 only if every call passed, 3 without torch or a GPU (the caller skips).
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

TP, M, N, K = 2, 1024, 1536, 512
SCHEDULES = ("AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC")
# what each call runs: a captured graph (by mode) or a direct call in the op's current mode
ORDER = (("graph", 0), ("graph", 1), ("direct", None), ("graph", 1), ("graph", 0), ("direct", None), ("graph", 0))
BOUND = 2e-2  # max |d - ref| / max |ref|: bf16 D (reduce-scatter adds a bf16 partial too)


class Shards:
    """Each rank's A, B and D shards on GPU 0, as the op's shard shapes say."""

    def __init__(self, op):
        self.shapes = [op.shard_shape(r) for r in range(TP)]
        new = lambda rows, cols: torch.empty(rows, cols, dtype=torch.bfloat16, device="cuda")  # noqa: E731
        self.a = [new(s["a_rows"], s["a_cols"]) for s in self.shapes]
        self.b = [new(s["b_rows"], s["b_cols"]) for s in self.shapes]
        self.d = [new(s["d_rows"], s["d_cols"]) for s in self.shapes]
        for r in range(TP):
            op.set_torch_tensors(r, self.a[r], self.b[r], self.d[r])

    def fill(self, a_full, b_full):
        for r, s in enumerate(self.shapes):
            self.a[r].copy_(block(a_full, s, "a"))
            self.b[r].copy_(block(b_full, s, "b"))

    def error(self, ref):
        return worst_error(self.shapes, self.d, ref)


def enqueue_call(op, streams):
    """One call: every rank on its own stream, forked from and joined back to the current one."""
    forked(streams, lambda: [op.run_rank(r, s.cuda_stream) for r, s in enumerate(streams)])


def run_schedule(ctx, lib, schedule, gen):
    op = ctx.op(lib.config(schedule=schedule, tp=TP, dtype="bf16"), M, N, K)
    tally = Tally()
    with destroyed_after(op):
        shards, streams = Shards(op), [torch.cuda.Stream() for _ in range(TP)]
        graphs = {}
        for mode in (0, 1):
            op.set_overlap_barriers(mode)
            graphs[mode] = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graphs[mode]):
                enqueue_call(op, streams)
        for i, (how, mode) in enumerate(ORDER):
            a_full = torch.randn(M, K, generator=gen, device="cuda").to(torch.bfloat16)
            b_full = torch.randn(N, K, generator=gen, device="cuda").to(torch.bfloat16)
            shards.fill(a_full, b_full)
            if how == "graph":
                graphs[mode].replay()
            else:
                enqueue_call(op, streams)
            torch.cuda.synchronize()
            err = shards.error(a_full.float() @ b_full.float().T)
            what = f"captured, {'barriers beside the GEMM' if mode else 'table'}" if how == "graph" else "direct"
            tally.check(err <= BOUND, f"{schedule} call {i} ({what}): max error {err:.2e}")
        op.sync()
    return tally


def main():
    if not torch.cuda.is_available():
        print("skip: no CUDA device visible to torch")
        return SKIPPED
    lib = Lib()
    gen = torch.Generator(device="cuda").manual_seed(7)
    ctx = lib.ctx_local([0] * TP, timeout_ns=5_000_000_000, share_devices=True)
    tally = Tally()
    try:
        for schedule in SCHEDULES:
            tally.add(run_schedule(ctx, lib, schedule, gen))
    finally:
        ctx.destroy()
    return tally.report()


if __name__ == "__main__":
    sys.exit(main())
