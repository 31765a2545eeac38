"""One rank of bench/tp_bench.py's bench_shape at world size 2 on the CPU (gloo), for
tests/test_tp_bench_collectives.py: the real control flow of the benchmark, fake CUDA and a fake tpgemm whose
collective calls (op create, set tensors, destroy) go through a bootstrap all-gather over the process group, as
tpg_ctx_create_rank's do. FAULT=<where>:<variant>:<rank> makes one rank (rank 9: both) fail at that point:
  sync      the fused call's check (tpg_op_sync: a device-side timeout on one rank)
  synclate  a later sync, after a sustained window
  run       the first call (run_rank raises; "async": PyTorch async TP's call raises)
  runlate   a later call, inside a timed window
  capture   the --alt-captured op's capture (with CAPTURED=1; "async": PyTorch async TP's capture, its graph mode)
  setup     a rank's own setup step (its tensors, layout or local op), between two collective tpgemm calls
  stale     every fused call after the first returns the first call's output (flags reused over calls: the
            re-check on new inputs must catch it)
  wrong     the local GEMM's output ("local", "local_default") or PyTorch async TP's ("async"): its check before the
            timing must fail
LOCAL_DEFAULT=1 has the library's TP = 1 pick differ from the family's local config (the local GEMM's "default" mode:
tp_records.MODES); LOCAL_DEFAULT_FASTER=1 makes that mode's calls the faster.
NCCL=1 passes a second context as --alt-nccl does (its ops are named "nccl").
DTYPE=<name> sets --dtype (default bf16). SHARE_DEVICE=1 runs it as `--share-device` does; CAPTURED=1 adds `--alt-captured` (a fake torch.cuda.graph: calls
made while it captures are recorded, not run, and each replay runs them). The rank prints one line "RESULT <json>": the record's check,
errors, alt entries, shared_device flag and async-TP figure, its collective trace, how the fused config was
looked up and which numerics were asked for.

    RANK=0 PORT=29544 FAULT=sync:tpgemm:1 python3 tests/tp_bench_sim.py
"""
import datetime
import json
import os
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import tp_bench  # noqa: E402
import tp_windows  # noqa: E402

tp_bench.load_torch()  # main's step once the options are accepted (the module imports no torch by itself)
import tp_records as R  # noqa: E402

WHERE, VARIANT, FAULT_RANK = (os.environ.get("FAULT") or "::-1").split(":")
TRACE = []
FUSED_D = []  # what a fused call (the shipped op or its pulled twin) writes into D: set by setup_shape
LOCAL_D = []  # what the local GEMM ("local") writes into d_loc: set by setup_shape
CAPTURING = []  # the fake CUDA graph being captured, if any
LOOKUPS = []  # how bench_shape asked the library for the fused config: ["config", name, tp, dtype] or ["pick", ...]
NUMERICS = []  # the --dtype names bench_shape asked tp_numerics for


def faulty(where, variant, count):
    """Does this call fail? `count`: how many times the op did this (late faults skip the first)."""
    rank = dist.get_rank()
    hit = WHERE == where and VARIANT == variant and int(FAULT_RANK) in (rank, 9)
    return hit if where in ("run", "sync", "capture", "linkbuf", "link", "setup", "wrong") else hit and count > 1


class Event:  # fake torch.cuda.Event: host time
    def __init__(self, **_):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def query(self):
        return True

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return max((other.t - self.t) * 1e3, 1e-3)


class Graph:  # fake torch.cuda.CUDAGraph: the calls captured into it, run again by each replay
    def __init__(self):
        self.calls = []

    def replay(self):
        for call in self.calls:
            call()


class capture:  # fake torch.cuda.graph(g)
    def __init__(self, graph):
        self.graph = graph

    def __enter__(self):
        CAPTURING.append(self.graph)

    def __exit__(self, *exc):
        CAPTURING.pop()


def fake_cuda():
    torch.cuda.CUDAGraph, torch.cuda.graph = Graph, capture
    torch.cuda.Event = Event
    torch.cuda.synchronize = lambda *a: None
    torch.cuda.empty_cache = lambda: None
    torch.cuda.current_stream = lambda: types.SimpleNamespace(cuda_stream=0)

    def allreduce(x, op):
        t = torch.tensor([float(x)], dtype=torch.float64)
        dist.all_reduce(t, op=op)
        return t.item()
    tp_windows.allreduce = allreduce
    tp_windows.aligned_start = lambda: dist.all_reduce(torch.zeros(1))


def bootstrap(tag):
    """A tpgemm collective call: a fixed-size all-gather, as tpg__exchange over the user's callback."""
    TRACE.append("tpg:" + tag)
    out = torch.zeros(2 * 64, dtype=torch.uint8)
    dist.all_gather_into_tensor(out, torch.zeros(64, dtype=torch.uint8))


class FakeOp:
    def __init__(self, name, collective=True):
        self.name, self.alive, self.collective, self.runs, self.syncs = name, True, collective, 0, 0

    def shard_shape(self, rank):
        return None

    def set_tensors(self, *a, **k):
        bootstrap("set_tensors")

    set_torch_tensors = set_tensors

    def set_copy_chunks(self, c):
        pass

    def set_overlap_barriers(self, on):
        pass

    def run_rank(self, rank, stream):
        if CAPTURING:  # as tpg_op_run_rank on a capturing stream: nothing runs now
            if faulty("capture", self.name, 1):
                raise RuntimeError(f"injected capture failure of {self.name}")
            CAPTURING[-1].calls.append(lambda: self.run_rank(rank, stream))
            return
        self.runs += 1
        if faulty("run", self.name, self.runs) or faulty("runlate", self.name, self.runs):
            raise RuntimeError(f"injected run failure of {self.name}")
        if self.name in ("tpgemm", "pull", "nccl"):
            FUSED_D[0](stale=faulty("stale", self.name, self.runs))
        if self.name in ("local", "local_default"):
            LOCAL_D[0](wrong=faulty("wrong", self.name, self.runs))
            if self.name == "local" and os.environ.get("LOCAL_DEFAULT_FASTER"):
                time.sleep(0.02)  # the family's calls far the slower (a stall of a loaded CPU must not turn it)

    def sync(self):
        self.syncs += 1
        if faulty("sync", self.name, self.syncs) or faulty("synclate", self.name, self.syncs):
            raise RuntimeError(f"injected TPG_ERR_TIMEOUT of {self.name}")

    def destroy(self):
        if self.alive and self.collective:
            bootstrap("destroy")
        self.alive = False


class FakeCtx:
    NAMES = {0: "tpgemm", 2: "pull"}

    def op(self, cfg, m, n, k):
        bootstrap("op_create")
        return FakeOp(self.NAMES[cfg])


class FakeNcclCtx:
    """The second context of --alt-nccl (tpg_rank_config.transport = nccl): its ops say where they were made."""

    def op(self, cfg, m, n, k):
        bootstrap("op_create_nccl")
        return FakeOp("nccl")


class FakeLib:
    CONFIGS = ["rs_tila_bf16_tp2", "rs_tila_bf16_tp1", "rs_tila_bf16_pull_tp2", "rs_tila_bf16_wide_tp1"]

    def config(self, name, tp, dtype):  # a config by name: bench_shape's choice for --dtype e4m3_promoted
        LOOKUPS.append(["config", name, tp, dtype])
        return 0

    def tuned_or_default(self, schedule, tp, dtype, *shape):
        LOOKUPS.append(["pick", schedule, tp, dtype])
        return 0, False

    def local_config(self, cfg, tp):
        return 1

    def config_pick(self, schedule, tp, dtype, m, n, k):  # the TP = 1 default for the rank's GEMM
        LOOKUPS.append(["local_pick", tp, m, n, k])
        return 3 if os.environ.get("LOCAL_DEFAULT") else 1

    def config_info(self, i):
        return {"name": self.CONFIGS[i]}

    def twin(self, cfg, route):
        assert route == "pull", route  # the one twin these runs ask for (alt_pull_partials)
        return 2


def setup_shape(op_kind, m, n, k, tp, rank, num, ctx, ctx1, cfg, cfg1, group_name, held, cfg1_default=None):
    """The reduce-scatter of tp_bench.setup_shape on CPU tensors: the fused calls compute D without collectives
    (every rank knows every rank's operands), the reference with the real ones (NCCL's part: gloo). As there, the
    rank's own steps between the op's create and its set_tensors are agreed (tp_check.agree)."""
    op = ctx.op(cfg, m, n, k)
    held.append(op)

    def own_step():
        if faulty("setup", "tpgemm", 0):
            raise RuntimeError("injected setup failure (layout)")
        held.append(FakeOp("local", collective=False))
        if cfg1_default is not None:
            held.append(FakeOp("local_default", collective=False))
    tp_bench.C.agree(tp_windows.guarded(own_step))
    op1 = next(o for o in held if o.name == "local")
    op1_default = next((o for o in held if o.name == "local_default"), None)
    gens = [torch.Generator().manual_seed(100 + r) for r in range(tp)]
    ab = [(torch.randn(m, k // tp, generator=g), torch.randn(n, k // tp, generator=g)) for g in gens]
    a, b = ab[rank]
    rows = slice(rank * m // tp, (rank + 1) * m // tp)
    part, d, d_loc, ref = torch.empty(m, n), torch.empty(m // tp, n), torch.empty(m, n), torch.empty(m // tp, n)

    def reference():
        TRACE.append("nccl:reduce_scatter")
        torch.mm(a, b.t(), out=part)
        full = part.clone()
        dist.all_reduce(full)
        ref.copy_(full[rows])

    first = []  # the first fused call's output, which a stale call returns again

    def fused(stale=False):
        first[:] = first or [sum(torch.mm(x, y.t()) for x, y in ab)[rows]]
        d.copy_(first[0] if stale else sum(torch.mm(x, y.t()) for x, y in ab)[rows])

    def new_inputs():  # every rank changes every rank's operands alike: each holds them all
        for r, (x, y) in enumerate(ab):
            g = torch.Generator().manual_seed(500 + r)
            x.copy_(torch.randn(x.shape, generator=g))
            y.copy_(torch.randn(y.shape, generator=g))
    FUSED_D[:] = [fused]
    LOCAL_D[:] = [lambda wrong=False: torch.mm(a, b.t() * (2.0 if wrong else 1.0), out=d_loc)]
    op.set_tensors(rank, 0, 0, 0)
    mm = lambda: torch.mm(a, b.t(), out=d_loc)  # noqa: E731
    def async_tp():  # returns its D, as torch's fused op does; captured (its graph mode), it runs now, as a fake
        if CAPTURING and faulty("capture", "async", 0):
            raise RuntimeError("injected async TP capture failure")
        if faulty("run", "async", 0):
            raise RuntimeError("injected async TP failure")
        return sum(torch.mm(x, y.t()) for x, y in ab)[rows] * (2.0 if faulty("wrong", "async", 0) else 1.0)
    fns = {"cublas_local": mm, "nccl_cublas": reference, "torch_async_tp": async_tp,
           "tpgemm": lambda: op.run_rank(rank, 0), "local": lambda: op1.run_rank(0, 0)}
    if op1_default is not None:
        fns["local_default"] = lambda: op1_default.run_rank(0, 0)
    keep = types.SimpleNamespace(a=a, b=b, d=d, d_loc=d_loc, ref=ref, local_ref=part, new_inputs=new_inputs,
                                 num=types.SimpleNamespace(scales={}), op1_default=op1_default)
    return op, op1, fns, reference, keep


def link_copy_buffer(op_kind, m, n, k, tp, dtype):
    """tp_bench's --link-copies buffer without symmetric memory (no collective); FAULT=linkbuf:diag:R raises on rank
    R."""
    if faulty("linkbuf", "diag", 0):
        raise RuntimeError("injected link-copies failure (buffer)")
    return object()


def link_copy_variant(src, tp, rank, group_name, fns):
    """tp_bench's --link-copies variant: a collective (as symm.rendezvous is), then per-rank work; FAULT=link:diag:R
    raises on rank R after the collective, where the other rank goes on to the next one."""
    bootstrap("link_rendezvous")
    if faulty("link", "diag", 0):
        raise RuntimeError("injected link-copies failure")
    fns["diag:local_link"] = lambda: None
    return {"diag:local_link": ()}


def sum_collectives():
    """tp_bench.SumCollectives (--share-device) against what NCCL's collectives would give, on every rank's data:
    RESULT {"gather": exact?, "scatter": max error}. Run with SUM_COLLECTIVES=1."""
    rank = dist.get_rank()
    shards = [torch.randn(3, 5, generator=torch.Generator().manual_seed(r)).to(torch.bfloat16) for r in (0, 1)]
    out = torch.empty(6, 5, dtype=torch.bfloat16)
    tp_bench.SumCollectives.all_gather_into_tensor(out, shards[rank])
    fulls = [torch.randn(4, 3, generator=torch.Generator().manual_seed(10 + r)) for r in (0, 1)]
    part = torch.empty(2, 3)
    tp_bench.SumCollectives.reduce_scatter_tensor(part, fulls[rank])
    want = (fulls[0] + fulls[1])[2 * rank:2 * rank + 2]
    return {"gather": bool(torch.equal(out, torch.cat(shards))), "scatter": float((part - want).abs().max())}


def main():
    fake_cuda()
    tp_bench.setup_shape = setup_shape
    tp_bench.link_copy_buffer, tp_bench.link_copy_variant = link_copy_buffer, link_copy_variant
    tp_bench.tp_numerics = types.SimpleNamespace(
        for_dtype=lambda d: NUMERICS.append(d) or types.SimpleNamespace(dtype=None, out=None))
    rank = int(os.environ["RANK"])
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=20))
    if os.environ.get("SUM_COLLECTIVES"):
        print("RESULT " + json.dumps(sum_collectives()), flush=True)
        dist.destroy_process_group()
        return
    args = types.SimpleNamespace(rs_schedule=R.SCHEDULES["RS"], rs_config="", alt_config="", alt_copy_chunks="",
                                 alt_pull_partials=True, alt_copy_engine_partials=False, alt_push_partials=False,
                                 alt_overlap_barriers=False,
                                 alt_gather_copy_engine=False, alt_rs_ring=False,
                                 alt_captured=bool(os.environ.get("CAPTURED")),
                                 link_copies=bool(os.environ.get("LINK_COPIES")),
                                 rounds=1, window=0.01, burst_idle=0.0, dtype=os.environ.get("DTYPE", "bf16"),
                                 share_device=bool(os.environ.get("SHARE_DEVICE")))
    try:
        rec = tp_bench.bench_shape(args, ("8B-o", "RS", 256, 128, 128), 2, rank, FakeCtx(), None, FakeLib(),
                                   types.SimpleNamespace(h=None, joules=lambda: None, sm_mhz=lambda: None), "g",
                                   FakeNcclCtx() if os.environ.get("NCCL") else None)
        out = {"check": rec["check"], "errors": rec.get("errors", {}), "alt": rec.get("alt", {}),
               "shared_device": rec.get("shared_device", False), "async_tp": rec.get("torch_async_tp_tflops"),
               "timed": sorted(rec.get("windows") or {}), "local_check": rec.get("local_check"),
               "recheck": rec.get("recheck"), "local_recheck": rec.get("local_recheck"),
               "async_check": rec.get("torch_async_tp_check"), "async_mode": rec.get("torch_async_tp_mode"),
               "async_modes": rec.get("torch_async_tp_modes"), "local_mode": rec.get("local_mode"),
               "local_modes": rec.get("local_modes"), "local_config": rec.get("local_config"),
               "elem_errs": {f: rec.get(f) for f in ("elem_err", "recheck_elem_err", "local_elem_err",
                                                     "torch_async_tp_elem_err")}}
    except Exception as e:
        out = {"raised": repr(e)[:300]}
    bootstrap("next_shape")  # the next shape's first collective: the ranks must still be in step
    print("RESULT " + json.dumps({**out, "trace": TRACE, "lookups": LOOKUPS, "numerics": NUMERICS}), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
