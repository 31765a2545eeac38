"""Decode-size GEMM grid on one GPU (experiment, not a shipped benchmark): every M x N x K of the grid below, each
tpgemm TP = 1 config named (plus the AG and RS default picks) against cuBLAS (torch.matmul), on fresh random bf16 data.

Why a separate script: local_gemm's method (idle cool-downs, 1 s sustained windows, ~8 s a variant) is meant for
power-capped sizes; at M <= 128 a call is 5-150 us and far from the cap, so a grid of 100+ shapes needs a cheaper
method. Here each window queues its calls behind a ~10 ms sleep kernel (so the host's launch rate never shows), the
operands rotate over copies that together exceed the 50 MB L2 (as a decode step's weights do: each is read once),
variants are interleaved in rotated order, and the median of REPS windows is kept.

Usage (device, with the configs built): python3 bench/results/experiments/decode_grid.py OUT.json CONFIG[,CONFIG...]
[MS:NS:KS] (a sub-grid, e.g. 16,64:2048,4096:4096,8192; default the whole grid below)
"""
import json
import math
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tpgemm_lib import Lib  # noqa: E402

MS = [16, 32, 64, 128]
NS = [2048, 4096, 6144, 8192, 10240, 14336, 28672, 57344]
KS = [4096, 8192, 16384, 28672]
REPS, WINDOW_S, SLEEP_CYCLES, L2_BYTES = 5, 2e-3, 20_000_000, 50 << 20
SCHEDULES = {"pick_ag": "AllGather1D_TilingCD_RotatingA", "pick_rs": "ReduceScatter1D_TilingA_RotatingC"}


def copies_for(m, n, k):
    """Operand copies whose bytes together exceed 3x the L2, at most 16."""
    return max(1, min(16, math.ceil(3 * L2_BYTES / ((m + n) * k * 2))))


def variants_for(lib, m, n, k, names):
    """label -> config index, each index once (the picks first take the label of a named config they equal)."""
    out, seen = {}, {}
    for name in names:
        idx = lib.config(name=name)
        out[name] = idx
        seen[idx] = name
    for label, sched in SCHEDULES.items():
        idx = lib.config_pick(sched, 1, "bf16", m, n, k)
        if idx not in seen:
            out[label + ":" + lib.config_info(idx)["name"]] = idx
            seen[idx] = label
    picks = {label: lib.config_info(lib.config_pick(s, 1, "bf16", m, n, k))["name"] for label, s in SCHEDULES.items()}
    return out, picks


def window(run, iters):
    """Seconds a call of `run` over one window of `iters` calls queued behind a sleep kernel."""
    torch.cuda._sleep(SLEEP_CYCLES)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(iters):
        run(i)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) * 1e-3 / iters


def bench_problem(lib, ctx, m, n, k, names):
    c = copies_for(m, n, k)
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for _ in range(c)]
    b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) * 0.05 for _ in range(c)]
    ref = [torch.matmul(a[i], b[i].t()) for i in range(c)]
    d_cublas = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.current_stream().cuda_stream
    variants, picks = variants_for(lib, m, n, k, names)
    runs, ops, errs = {}, [], {}
    runs["cublas"] = lambda i: torch.matmul(a[i % c], b[i % c].t(), out=d_cublas)
    for label, idx in variants.items():
        mine = []
        for i in range(c):
            op = ctx.op(idx, m, n, k)
            ops.append(op)
            d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            op.set_torch_tensors(0, a[i], b[i], d)
            mine.append((op, d))
        for op, d in mine:  # check every copy once
            op.run_rank(0, stream)
        torch.cuda.synchronize()
        errs[label] = max(float((d.float() - r.float()).abs().max() / r.float().abs().max())
                          for (_, d), r in zip(mine, ref))
        runs[label] = (lambda mine: lambda i: mine[i % c][0].run_rank(0, stream))(mine)
    iters = {}
    for label, run in runs.items():  # warm-up and window length
        t = window(run, 10)
        iters[label] = max(20, min(400, math.ceil(WINDOW_S / t)))
    times = {label: [] for label in runs}
    labels = list(runs)
    for rep in range(REPS):
        for j in range(len(labels)):
            label = labels[(j + rep) % len(labels)]
            times[label].append(window(runs[label], iters[label]))
    for op in ops:
        op.destroy()
    flop = 2.0 * m * n * k
    rec = {"M": m, "N": n, "K": k, "copies": c, "picks": picks,
           "us": {lb: statistics.median(ts) * 1e6 for lb, ts in times.items()},
           "tflops": {lb: flop / statistics.median(ts) / 1e12 for lb, ts in times.items()},
           "rel_err": errs}
    del a, b, ref
    torch.cuda.empty_cache()
    return rec


def main():
    out_path, names = sys.argv[1], sys.argv[2].split(",")
    ms, ns, ks = ([int(x) for x in part.split(",")] for part in sys.argv[3].split(":")) if len(sys.argv) > 3 \
        else (MS, NS, KS)
    lib = Lib()
    ctx = lib.ctx_local([0])
    records = []
    for m in ms:
        for n in ns:
            for k in ks:
                rec = bench_problem(lib, ctx, m, n, k, names)
                records.append(rec)
                us = " ".join(f"{lb.split(':')[0]}={v:.1f}" for lb, v in rec["us"].items())
                bad = [lb for lb, e in rec["rel_err"].items() if not e < 2e-2]
                print(f"{m}x{n}x{k} c{rec['copies']} picks={rec['picks']} {us}"
                      + (f" CHECK FAILED {bad}" if bad else ""), flush=True)
                Path(out_path).write_text(json.dumps(records, indent=1))
    ctx.destroy()


if __name__ == "__main__":
    main()
