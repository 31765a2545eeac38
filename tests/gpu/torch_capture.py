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

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

try:
    import torch
except ImportError:
    print("skip: torch is not installed")
    sys.exit(3)

from bench.tpgemm_lib import Lib  # noqa: E402

TP, M, N, K = 2, 1024, 1536, 512
SCHEDULES = ("AllGather1D_TilingCD_RotatingA", "ReduceScatter1D_TilingA_RotatingC")
# what each call runs: a captured graph (by mode) or a direct call in the op's current mode
ORDER = (("graph", 0), ("graph", 1), ("direct", None), ("graph", 1), ("graph", 0), ("direct", None), ("graph", 0))
BOUND = 2e-2  # max |d - ref| / max |ref|: bf16 D (reduce-scatter adds a bf16 partial too)


def block(t, row0, rows, col0, cols):
    return t[row0:row0 + rows, col0:col0 + cols]


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
            self.a[r].copy_(block(a_full, s["a_row0"], s["a_rows"], s["a_col0"], s["a_cols"]))
            self.b[r].copy_(block(b_full, s["b_row0"], s["b_rows"], s["b_col0"], s["b_cols"]))

    def error(self, ref):
        worst = 0.0
        for r, s in enumerate(self.shapes):
            want = block(ref, s["d_row0"], s["d_rows"], s["d_col0"], s["d_cols"])
            worst = max(worst, ((self.d[r].float() - want).abs().max() / want.abs().max()).item())
        return worst


def enqueue_call(op, streams):
    """One call: every rank on its own stream, forked from and joined back to the current one."""
    here = torch.cuda.current_stream()
    for s in streams:
        s.wait_stream(here)
    for r, s in enumerate(streams):
        op.run_rank(r, s.cuda_stream)
    for s in streams:
        here.wait_stream(s)


def run_schedule(ctx, lib, schedule, gen):
    op = ctx.op(lib.config(schedule=schedule, tp=TP, dtype="bf16"), M, N, K)
    passed = failed = 0
    try:
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
            ok = err <= BOUND
            passed, failed = passed + ok, failed + (not ok)
            what = f"captured, {'barriers beside the GEMM' if mode else 'table'}" if how == "graph" else "direct"
            print(f"{schedule} call {i} ({what}): max error {err:.2e} {'ok' if ok else 'FAILED'}", flush=True)
        op.sync()
    finally:  # the op is destroyed even when the synchronize raises (a sticky CUDA error): else ctx.destroy's
        try:  # "op(s) still alive" would be the error reported
            torch.cuda.synchronize()
        finally:
            op.destroy()
    return passed, failed


def main():
    if not torch.cuda.is_available():
        print("skip: no CUDA device visible to torch")
        return 3
    lib = Lib()
    gen = torch.Generator(device="cuda").manual_seed(7)
    ctx = lib.ctx_local([0] * TP, timeout_ns=5_000_000_000, share_devices=True)
    passed = failed = 0
    try:
        for schedule in SCHEDULES:
            p, f = run_schedule(ctx, lib, schedule, gen)
            passed, failed = passed + p, failed + f
    finally:
        ctx.destroy()
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
