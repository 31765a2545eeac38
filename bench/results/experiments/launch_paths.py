"""Experiment (not shipped): a TP = 1 op's per-call time launched as its one-node CUDA graph (the default) against the
same kernel launched directly with programmatic dependent launch (tpg_op_set_pdl), and cuBLAS (torch.matmul), at
decode sizes down to one tile of one k-block. Each window queues its calls behind a ~10 ms sleep kernel (the host's
launch rate never shows), operands rotate over copies beyond the L2, variants interleave; median of 5 windows.

Usage (device): python3 bench/results/experiments/launch_paths.py CONFIG[,CONFIG...] MxNxK[,MxNxK...] [graph]
(graph: the graph launch only, no PDL twin). TPGEMM_LIB=path times another build of libtpgemm.so (bench/tpgemm_lib.py).
"""
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from decode_grid import copies_for, window  # noqa: E402
from tpgemm_lib import Lib  # noqa: E402


def bench(lib, ctx, cfgs, m, n, k, modes):
    c = copies_for(m, n, k)
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(c)]
    b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.05 for _ in range(c)]
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = torch.matmul(a[0], b[0].t())
    stream = torch.cuda.current_stream().cuda_stream
    runs, ops = {"cublas": lambda i: torch.matmul(a[i % c], b[i % c].t(), out=d)}, []
    for name in cfgs:
        for pdl in modes:
            mine = []
            for i in range(c):
                op = ctx.op(lib.config(name=name), m, n, k)
                op.set_torch_tensors(0, a[i], b[i], d)
                lib.check(lib.lib.tpg_op_set_pdl(op.handle, pdl), "tpg_op_set_pdl", op.ctx.handle)
                mine.append(op)
                ops.append(op)
            mine[0].run_rank(0, stream)
            torch.cuda.synchronize()
            err = float((d.float() - ref.float()).abs().max() / ref.float().abs().max())
            label = f"{name.replace('ag_rota_bf16_', '').replace('_tp1', '')}{'+pdl' if pdl else ''}"
            print(f"  {label} check rel err {err:.1e}{'' if err < 2e-2 else ' CHECK FAILED'}")
            runs[label] = (lambda mine: lambda i: mine[i % c].run_rank(0, stream))(mine)
    iters = {lb: max(20, min(400, int(2e-3 / window(run, 10)))) for lb, run in runs.items()}
    times = {lb: [] for lb in runs}
    labels = list(runs)
    for rep in range(5):
        for j in range(len(labels)):
            lb = labels[(j + rep) % len(labels)]
            times[lb].append(window(runs[lb], iters[lb]))
    for op in ops:
        op.destroy()
    print(f"{m}x{n}x{k} " + " ".join(f"{lb}={statistics.median(t) * 1e6:.2f}" for lb, t in times.items()), flush=True)


def main():
    cfgs = sys.argv[1].split(",")
    modes = (0,) if sys.argv[3:] == ["graph"] else (0, 1)
    lib = Lib()
    ctx = lib.ctx_local([0])
    for shape in sys.argv[2].split(","):
        m, n, k = (int(x) for x in shape.split("x"))
        bench(lib, ctx, cfgs, m, n, k, modes)
    ctx.destroy()


if __name__ == "__main__":
    main()
