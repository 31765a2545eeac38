"""TP benchmark (issue 4): tpgemm fused vs its local GEMM, cuBLAS, NCCL + cuBLAS and PyTorch async TP,
one process per GPU, all variants in one run on the same random data, interleaved round-robin.

    torchrun --nproc_per_node=2 bench/tp_bench.py [--rounds 3] [--window 1.0] [--only 8B-qkv,8B-o]

TP = the world size. tpgemm runs the tuned config of the exact GEMM when tuned/*.yaml has one (the
dispatch table), else the schedule's default; "tpgemm local" runs the same config family at TP = 1 (for
the reduce-scatter *_wide configs the local kernel their TP = 1 config names, kernel_tp1), else the same
kernel at TP = 1, and, where it is another config, the TP = 1 default pick for the rank's GEMM: the faster counts
(tp_records.MODES; PyTorch async TP likewise eager and from a CUDA graph). Each record names the configs (config,
local_config: the faster local mode's, local_configs, tuned). Checks (bench/tp_check.py): the fused call,
each alt variant, the local GEMM and PyTorch async TP's returned D once against torch before the timing (check,
local_check, torch_async_tp_check: a variant that fails is not timed), and all but async TP once more on new inputs
after it (recheck, local_recheck: the timed calls reuse flags and epochs over unchanged data). Rank 0 writes
bench/results/tp<TP>.json (and $OUT/tp<TP>.json when $OUT is set), then renders BENCHMARKS.md's tp<TP> section and a
PNG (bench/report_tp.py).

Environment: TP_BENCH_VERBOSE=1 prints a line per step (where a stuck run stopped); TP_BENCH_TRACE_AFTER=s has every
rank print its Python stacks every s seconds (a hang's diagnosis); TPGEMM_LIB the library (bench/tpgemm_lib.py).
"""
import datetime
import os
import re
import sys
import time
from pathlib import Path

# Environment guard, before torch / NCCL load: no NVLink multicast anywhere (the lent machines forbid it).
os.environ.update({"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"})
# tpgemm exchanges legacy CUDA IPC handles of the tensors' allocations, which neither cuMemCreate (expandable) segments
# nor the cudaMallocAsync backend's pools have. The user's other options of either name of the allocator's settings,
# merged into both by key (the newer name's last; newer torch reads PYTORCH_ALLOC_CONF first and would drop the older).
_ALLOC_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_alloc = {o.split(":")[0].strip(): o.strip() for v in _ALLOC_VARS
          for o in os.environ.get(v, "").split(",") if o.strip()}
_alloc = [o for k, o in _alloc.items() if k not in ("expandable_segments", "backend")] + ["expandable_segments:False"]
os.environ.update({v: ",".join(_alloc) for v in _ALLOC_VARS})

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import report_tp  # noqa: E402
import tp_records as R  # noqa: E402
import tp_options  # noqa: E402
import tpgemm_lib  # noqa: E402

# torch and the modules that import it, bound by load_torch once the options are accepted: --help and --check-args
# parse and check them where torch is not installed (docs/TESTING.md: no torch call)
torch = dist = C = W = tp_numerics = None
# torch's data collectives (the reference, the bootstrap): torch.distributed, or SumCollectives with --share-device
# (set once by main before any shape runs).
COLL = None


def load_torch():
    """Imports torch and the benchmark's torch-using modules into this module's globals (after the environment guard
    above), and COLL as torch.distributed. main calls it once the options are accepted; so must a caller of the shape
    functions that does not go through main (tests/tp_bench_sim.py)."""
    global torch, dist, C, W, tp_numerics, COLL
    import torch
    import torch.distributed as dist
    import tp_check as C
    import tp_numerics
    import tp_windows as W
    COLL = dist


class SumCollectives:
    """torch's all-gather and reduce-scatter over gloo, which moves CUDA tensors only by all_reduce and broadcast
    (--share-device: NCCL refuses two ranks on one GPU). Each rank adds its part into a zeroed buffer of the whole;
    the reduce-scatter sums in fp32. Slow, and exact for the all-gather: for checking, not timing."""

    @staticmethod
    def all_gather_into_tensor(out, shard):  # as bytes: one rank's byte plus zeros is exact, whatever the dtype
        whole = out.view(torch.uint8).view(dist.get_world_size(), -1)
        whole.zero_()
        whole[dist.get_rank()].copy_(shard.contiguous().view(torch.uint8).reshape(-1))
        dist.all_reduce(whole)

    @staticmethod
    def reduce_scatter_tensor(out, full):
        total = full.to(torch.float32, copy=True)
        dist.all_reduce(total)
        out.copy_(total.view(dist.get_world_size(), -1)[dist.get_rank()].view_as(out))



def setup_shape(op_kind, m, n, k, tp, rank, num, ctx, ctx1, cfg, cfg1, group_name, held, cfg1_default=None):
    """Tensors and one callable per variant, plus the reference for the checks. num: the operand type's torch side
    (tp_numerics.py). cfg1_default: the local GEMM's "default" mode's config (variant local_default), or None. Each
    tpgemm op is appended to `held` as soon as it exists (the caller destroys them, also when a later step fails).
    Returns (op, op1, fns, reference, keep); keep: tp_check.own_setup's tensors."""
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    op = ctx.op(cfg, m, n, k)  # collective: fails on every rank alike
    held.append(op)
    progress(rank, f"op {m}x{n}x{k} created")
    own = []
    # this rank's own steps (its tensors, its rank-dependent layout, its local op) are agreed before the next
    # collective call: a failure on one rank raises on every rank (tp_check.agree)
    C.agree(W.guarded(lambda: own.append(C.own_setup(op_kind, m, n, k, tp, rank, num, op.shard_shape(rank), ctx1,
                                                     cfg1, held, cfg1_default))))
    t = own[0]
    op.set_torch_tensors(rank, t.a, t.b, t.d, **num.scales)
    progress(rank, "tensors set (graph built)")
    if op_kind == "AG":
        num.gather(COLL, t.a_full, t.a)  # the local variants read a_full, also when the fused check fails

        def reference():
            num.gather(COLL, t.a_full, t.a)
            num.mm(t.a_full, t.b, t.ref)
        fns = {"cublas_local": lambda: num.mm(t.a_full, t.b, t.d_loc), "nccl_cublas": reference,
               "torch_async_tp": lambda: num.async_ag(t.a, t.b, group_name)}
    else:
        def reference():
            num.mm(t.a, t.b, t.part)
            COLL.reduce_scatter_tensor(t.ref, t.part)
        fns = {"cublas_local": lambda: num.mm(t.a, t.b, t.d_loc), "nccl_cublas": reference,
               "torch_async_tp": lambda: num.async_rs(t.a, t.b, m, n, group_name)}
    fns["tpgemm"] = lambda: op.run_rank(rank, stream())
    fns["local"] = lambda: t.op1.run_rank(0, stream())
    if t.op1_default is not None:
        fns["local_default"] = lambda: t.op1_default.run_rank(0, stream())
    return op, t.op1, fns, reference, t


def save(records, stem):
    """Writes <stem>.json (tp_records.result_stem: tp<N>.json, tp<N>_<dtype>.json for fp16 / e4m3, _m<M> with
    --tokens, _<tag> with --tag, _shared with --share-device) to bench/results and, when set, $OUT; returns the paths
    written."""
    import json
    name = f"{stem}.json"
    paths = [HERE / "results" / name] + ([Path(os.environ["OUT"]) / name] if os.environ.get("OUT") else [])
    for path in paths:  # replaced in one rename: a kill mid-write (the call's bound) leaves the last whole file
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(records, indent=1))
        os.replace(tmp, path)
    return paths


def progress(rank, what):
    """One line per step with TP_BENCH_VERBOSE=1, so a stuck run shows where it stopped."""
    if os.environ.get("TP_BENCH_VERBOSE"):
        print(f"[rank {rank} {time.strftime('%H:%M:%S')}] {what}", flush=True)


def bench_shape(args, shape, tp, rank, ctx, ctx1, lib, energy, group_name, ctx_nccl=None, nccl_error=None,
                shape_index=0):
    """One shape's record: setup, the checks (the fused call, each alt variant, the local GEMM), the timing rounds
    (whose order starts from variant shape_index: tp_plan.round_order), the re-check on new inputs, the ops'
    destroy. Collective: a failure on one rank is agreed, so every rank leaves in step."""
    name, op_kind, m, n, k = shape
    progress(rank, f"{name}: setup")
    sched = getattr(args, f"{op_kind.lower()}_schedule")
    # the tuned config of this exact GEMM when tuned/*.yaml has one (as a user who tuned would run it), and
    # for "tpgemm local" the same config family at TP = 1 (tpgemm_lib.local_config)
    forced = getattr(args, f"{op_kind.lower()}_config") or R.default_family(args.dtype, sched)
    if forced:  # an explicit config family (e.g. ag_rota_bf16_wide) at this TP, over tuned and default
        cfg, tuned = lib.config(name=f"{forced}_tp{tp}", tp=tp, dtype=R.lib_dtype(args.dtype)), False
    else:
        cfg, tuned = lib.tuned_or_default(sched, tp, R.lib_dtype(args.dtype), m, n, k)
    cfg1 = lib.local_config(cfg, 1)
    cfg1_default = local_default_config(lib, forced, cfg1, sched, op_kind, m, n, k, tp, args.dtype)
    errors, figures, alt_err, alt_max, alt_elem, alt_cfg = {}, {}, {}, {}, {}, {}
    err = max_err = elem_err = reference = None
    local, async_tp = {}, {}  # mode -> check (tp_records.MODES)
    rechecks = {}
    num = tp_numerics.for_dtype(args.dtype)
    held, alt_ops, diags, keep, fns = [], {}, {}, None, {}  # held: every tpgemm op made so far, destroyed below
    try:  # setup failures happen on every rank alike (config lookups, tpgemm's collective calls) or are agreed
        op, op1, fns, reference, keep = setup_shape(op_kind, m, n, k, tp, rank, num, ctx, ctx1, cfg, cfg1,
                                                    group_name, held, cfg1_default)
        if args.share_device:  # symmetric memory needs a GPU per rank
            fns.pop("torch_async_tp")
            errors["torch_async_tp"] = ("not run with --share-device (PyTorch's symmetric memory refuses ranks on one "
                                        "GPU: experiments/probe_symm_shared_0226Z.log)")
        alt_ops = alt_variants(args, op_kind, m, n, k, tp, rank, ctx, lib, fns, keep, cfg, held, alt_cfg, errors,
                               ctx_nccl)
        if nccl_error:
            errors["alt:nccl"] = nccl_error
        diags = link_copy_diag(op_kind, m, n, k, tp, rank, num.dtype if op_kind == "AG" else num.out, group_name,
                               fns, errors) if args.link_copies else {}
        progress(rank, f"{name}: check")
        err, max_err, why, elem_err = C.check_output(op, fns["tpgemm"], reference, keep)
        if why:
            errors["tpgemm"] = why
        for v, alt_op in alt_ops.items():
            alt_err[v], alt_max[v], why, alt_elem[v] = C.check_output(alt_op, fns[v], reference, keep)
            if why:
                errors[v] = why
        for md, local_op in (("family", op1), ("default", keep.op1_default)):  # the fused / local denominator
            v = R.mode_variant("local", md)
            if local_op is not None:
                local[md] = C.check_local(local_op, fns[v], reference, keep)
                if R.check_error(*local[md]):  # a wrong local GEMM is not timed, as a failed fused call is not
                    errors[v] = R.check_error(*local[md])
        if "torch_async_tp" in fns:  # the baseline must compute the same GEMM: a wrong one is not timed either
            async_tp["eager"] = C.check_returned(fns["torch_async_tp"], reference, keep)
            if R.check_error(*async_tp["eager"][:3]):  # its per-element error is recorded only (apply_checks)
                errors["torch_async_tp"] = R.check_error(*async_tp["eager"][:3])
            else:
                async_tp["graph"] = async_tp_graph(fns, reference, keep, errors)
        progress(rank, f"{name}: rel err {err}, max err {max_err}, per element {elem_err}, local "
                       f"{ {md: c[:2] for md, c in local.items()} }; timing")
        live = [v for v in list(R.VARIANTS) + [v for v in R.MODE_VARIANTS if v in fns] + list(alt_ops) + list(diags)
                if v not in errors]
        W.time_variants(args, live, fns, figures, errors, energy, tp, {**alt_ops, "tpgemm": op}, first=shape_index)
        progress(rank, f"{name}: re-check on new inputs")
        ops = {"tpgemm": op, "local": op1, "local_default": keep.op1_default, **alt_ops}
        rechecks, why = C.recheck(keep, reference, [(v, ops[v], fns[v]) for v in live if v in ops])
        if why:
            errors["recheck"] = why
        for v, res in rechecks.items():
            if R.check_error(*res):
                errors[f"recheck:{v}"] = R.check_error(*res)
    except C.SetupFailure as e:  # agreed on every rank: the record names the failing rank's cause
        errors["setup"] = str(e)
    finally:
        torch.cuda.synchronize()
        for o in held:  # collective: every rank reaches each destroy, in the same order
            why = W.guarded(o.destroy)
            if why:
                errors.setdefault("destroy", why)
        del keep, fns, reference
        diags = list(diags)  # the names only: the diagnostic's buffers are freed with the rest
        torch.cuda.empty_cache()
    errors = errors_of_all_ranks(errors, rank, tp)
    rec = R.make_record(name, op_kind, m, n, k, tp, args.dtype, figures, err, errors, max_err=max_err,
                        elem_err=elem_err,
                        extra={**{f"{v}_sm_mhz": R.median_or_none([w.get("sm_mhz") for w in f["windows"]])
                                  for v, f in figures.items()},
                               **{f"{v}_energy_method": R.energy_method(f["windows"]) for v, f in figures.items()},
                               "config": lib.config_info(cfg)["name"], "tuned": tuned,
                               "local_configs": {md: lib.config_info(c)["name"] for md, c in
                                                 (("family", cfg1), ("default", cfg1_default)) if c is not None},
                               "windows": {v: f.get("windows") for v, f in figures.items()},
                               **({"shared_device": True} if args.share_device else {}),
                               **({"alt": R.alt_summary(figures, alt_err, m, n, k, tp, alt_max, alt_cfg, errors,
                                                        alt_elem)}
                                  if alt_ops else {}),
                               **({"diag": R.diag_summary(figures, m, n, k, tp)} if diags else {})})
    rec = R.apply_checks(rec, local, rechecks, async_tp)
    rec["local_config"] = rec["local_configs"].get(rec["local_mode"] or "family")  # the config local_tflops ran
    for v in R.MODES:  # the SM clock and energy method of the mode whose figures the record holds
        for field in ("sm_mhz", "energy_method"):
            if rec.get(f"{v}_mode"):
                rec[f"{v}_{field}"] = rec.get(f"{R.mode_variant(v, rec[f'{v}_mode'])}_{field}")
    return rec


def errors_of_all_ranks(errors, rank, tp):
    """Every rank's failure texts, each rank's own named ("rank 1: ..."), so a failure seen on rank 1 only is
    not recorded as rank 0's "failed on another rank" (tp_records.merge_rank_errors). Collective; each rank
    also prints its own."""
    for v, why in errors.items():
        if not R.echoes_another_rank(why):
            print(f"rank {rank}: {v}: {why}", flush=True)
    if tp == 1:
        return errors
    gathered = [None] * tp
    dist.all_gather_object(gathered, errors)
    return R.merge_rank_errors(gathered)


def link_copy_variant(src, tp, rank, group_name, fns):
    """Diagnostic (--link-copies): "diag:local_link" is the local GEMM ("local") with, on a side stream and without
    any dependency on it, copy-engine copies of the bytes the fused call moves over NVLink - all-gather: each peer's
    A shard (M/tp x K) pulled into a local slot; reduce-scatter: tp - 1 partial blocks (M/tp x N) pulled from the
    next peer - joined back to the stream at the end of each call. src: this rank's symmetric buffer of those bytes
    (link_copy_buffer), which every rank has made before (link_copy_diag). local_link against local is what the
    links' traffic costs a GEMM at the power cap (clock, joules); fused against local_link is what the fused walk
    itself costs. Returns {variant: the tensors it holds}; adds its callable to fns."""
    import torch.distributed._symmetric_memory as symm
    rows, cols = src.shape
    handle = symm.rendezvous(src, group_name)
    peers = [(rank + i) % tp for i in range(1, tp)] or [rank]  # TP = 1 (a smoke run): the own buffer
    views = [handle.get_buffer(p, (rows, cols), torch.uint8) for p in peers]
    slots = [torch.empty(rows, cols, device="cuda", dtype=torch.uint8) for _ in peers]
    side = torch.cuda.Stream()
    local = fns["local"]

    def run():
        main = torch.cuda.current_stream()
        side.wait_stream(main)
        with torch.cuda.stream(side):
            for slot, view in zip(slots, views):
                slot.copy_(view, non_blocking=True)
        local()
        main.wait_stream(side)
    fns["diag:local_link"] = run
    return {"diag:local_link": (src, handle, views, slots, side)}


def link_copy_buffer(op_kind, m, n, k, tp, dtype):
    """This rank's symmetric buffer of what the fused call moves over the links (link_copy_variant), random bytes."""
    import torch.distributed._symmetric_memory as symm
    # bytes only, so uint8 of the same size: an fp8 tensor has no normal_()
    rows, cols = m // tp, (k if op_kind == "AG" else n) * torch.empty((), dtype=dtype).element_size()
    src = symm.empty(rows, cols, dtype=torch.uint8, device="cuda")
    src.random_()
    return src


def link_copy_diag(op_kind, m, n, k, tp, rank, dtype, group_name, fns, errors):
    """--link-copies (never run across GPUs before the x2 session) in two guarded steps, each ending in W.all_ok:
    every rank's buffer, then the rendezvous and the views. A failure on any rank drops the diagnostic on every rank
    (errors says why), not the shape, and the ranks enter the rendezvous's collective only together; after it none
    waits for another (the all_ok that ends the step says every buffer exists). Returns link_copy_variant's dict or
    {}."""
    got = []
    for step in (lambda: got.append(link_copy_buffer(op_kind, m, n, k, tp, dtype)),
                 lambda: got.append(link_copy_variant(got[0], tp, rank, group_name, fns))):
        why = W.guarded(step)
        if not W.all_ok(why is None):
            errors["diag:local_link"] = why or "failed on another rank"
            fns.pop("diag:local_link", None)
            return {}
    return got[1]


def local_default_config(lib, forced, cfg1, sched, op_kind, m, n, k, tp, dtype):
    """The local GEMM's "default" mode (tp_records.MODES): the TP = 1 default pick for this rank's GEMM, where it is
    another config than the family's cfg1 and no family was named (an explicit family, e4m3_promoted's too, sets the
    numerics the local GEMM must share); else None."""
    if forced:
        return None
    pick = lib.config_pick(sched, 1, R.lib_dtype(dtype), *R.local_problem(op_kind, m, n, k, tp))
    return None if pick == cfg1 else pick


def async_tp_graph(fns, reference, keep, errors):
    """PyTorch async TP's "graph" mode (tp_records.MODES): its eager call (checked already) captured once into a torch
    CUDA graph, each replay one call, as variant torch_async_tp_graph in fns, checked against the reference like the
    eager one. Collective: a capture that failed on any rank drops the mode on every rank (errors says why). Returns
    the check's tuple (tp_check.check_returned's), or None where it was not captured."""
    v, got = R.mode_variant("torch_async_tp", "graph"), []

    def capture():
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            out = fns["torch_async_tp"]()
        got.append((graph, out))
    why = C.agreed(capture, "capture")
    if why:
        errors[v] = why
        return None
    graph, out = got[0]
    fns[v] = lambda: (graph.replay(), out)[1]
    res = C.check_returned(fns[v], reference, keep)
    if R.check_error(*res[:3]):
        errors[v] = R.check_error(*res[:3])
    return res


def capture_call(run):
    """run() captured once into a torch CUDA graph (tpg_op_run_rank on torch's capture stream adds the op's graph to
    torch's): returns the graph, whose replay() is one call."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run()
    return graph


# The reduce-scatter twins as experiments: variant "alt:<name>" (and flag --alt-<name>, dashes) -> the route of
# partials it runs the shape's config with (tpgemm_lib.ROUTES)
TWIN_VARIANTS = {"push_partials": "push", "pull_partials": "pull", "copy_engine_partials": "ce"}


def alt_variants(args, op_kind, m, n, k, tp, rank, ctx, lib, fns, keep, cfg, held, configs, errors, ctx_nccl=None):
    """Experiments: each --alt-config family of this op kind becomes one more fused variant "alt:<family>", on
    all-gather shapes each --alt-copy-chunks N the shape's own config with its copies in N pieces
    ("alt:copy_chunksN"), and --alt-overlap-barriers the shape's own config with its barriers beside the GEMM
    ("alt:overlap_barriers"), on all-gather shapes --alt-gather-copy-engine the shape's own config with a gathered
    walk's shards brought by copy-engine nodes instead of its GEMM's pulls ("alt:gather_copy_engine"; the same as the
    fused variant where the walk is not gathered), on reduce-scatter shapes --alt-push-partials the shape's config's
    pushing twin ("alt:push_partials", tpgemm_lib.Lib.twin), --alt-pull-partials its pulled twin ("alt:pull_partials"),
    --alt-copy-engine-partials its copy-engine twin ("alt:copy_engine_partials") and --alt-rs-ring the shape's config
    with a one-hop walk kept a ring ("alt:rs_ring"; the same as the fused variant where the walk is a ring anyway), and
    --alt-captured the shape's config with its call captured once into a torch CUDA graph, each replay one call
    ("alt:captured": what a framework's graphs run), and --alt-nccl the shape's config on ctx_nccl, a context over the
    NCCL transport ("alt:nccl"), interleaved with the others on the same tensors. Returns {variant: op}; adds its
    callable to fns, each op to held (as it is made) and its config's name to configs. A capture that fails on any
    rank drops alt:captured on every rank (errors says why), so the ranks stay in step."""
    stream = lambda: torch.cuda.current_stream().cuda_stream  # noqa: E731
    wanted = []  # (variant, config, copy chunks, barriers beside the GEMM, a gathered walk's copy engine, kept a ring)
    for fam in [f for f in args.alt_config.split(",") if f]:
        alt_cfg = lib.config(name=f"{fam}_tp{tp}", tp=tp, dtype=R.lib_dtype(args.dtype))
        if lib.config_info(alt_cfg)["schedule"] == getattr(args, f"{op_kind.lower()}_schedule"):
            wanted.append((f"alt:{fam}", alt_cfg, 0, False, False, False))
    if tp == 1 and (args.alt_copy_chunks or args.alt_overlap_barriers) and rank == 0:  # a smoke run at world size 1
        print("tp_bench: TP = 1 has no copies or barriers: no alt:copy_chunks / alt:overlap_barriers", file=sys.stderr)
    if op_kind == "AG" and tp > 1:
        wanted += [(f"alt:copy_chunks{c}", cfg, int(c), False, False, False)
                   for c in args.alt_copy_chunks.split(",") if c]
        if args.alt_gather_copy_engine:
            wanted.append(("alt:gather_copy_engine", cfg, 0, False, True, False))
    for variant, route in [(v, r) for v, r in TWIN_VARIANTS.items() if op_kind == "RS" and getattr(args, f"alt_{v}")]:
        try:  # a tuned or non-bf16 config may have no twin: the shape runs without this variant, and says so
            wanted.append((f"alt:{variant}", lib.twin(cfg, route), 0, False, False, False))
        except ValueError as e:
            if rank == 0:
                print(f"tp_bench: {m}x{n}x{k}: no alt:{variant}: {e}", file=sys.stderr)
    if op_kind == "RS" and args.alt_rs_ring and tp > 1:
        wanted.append(("alt:rs_ring", cfg, 0, False, False, True))
    if args.alt_overlap_barriers and tp > 1:
        wanted.append(("alt:overlap_barriers", cfg, 0, True, False, False))
    if args.alt_captured:
        wanted.append(("alt:captured", cfg, 0, False, False, False))
    if ctx_nccl is not None and tp > 1:
        wanted.append(("alt:nccl", cfg, 0, False, False, False))
    ops = {}
    for v, alt_cfg, chunks, overlap, copy_engine, ring in wanted:
        # op creation is collective: it fails on every rank alike (a refused knob, an unsupported plan); the loop's
        # values are bound here, not looked up when make runs
        def make(v=v, alt_cfg=alt_cfg, chunks=chunks, overlap=overlap, copy_engine=copy_engine, ring=ring):
            alt_op = (ctx_nccl if v == "alt:nccl" else ctx).op(alt_cfg, m, n, k)
            held.append(alt_op)
            if chunks:
                alt_op.set_copy_chunks(chunks)
            if overlap:
                alt_op.set_overlap_barriers(True)
            if copy_engine:
                alt_op.set_gather_copy_engine(True)
            if ring:
                alt_op.set_rs_ring(True)
            alt_op.set_torch_tensors(rank, keep.a, keep.b, keep.d, **keep.num.scales)
            ops[v] = alt_op
        configs[v] = lib.config_info(alt_cfg)["name"]
        why = W.guarded(make)
        if not W.all_ok(why is None):  # this experiment is lost, not the shape's other variants
            errors[v] = why or "failed on another rank"
            ops.pop(v, None)
            continue
        fns[v] = (lambda o: lambda: o.run_rank(rank, stream()))(ops[v])
        if v == "alt:captured":
            graphs = []
            why = W.guarded(lambda: graphs.append(capture_call(fns[v])))
            if W.all_ok(why is None):
                fns[v] = graphs[0].replay
            else:
                errors[v] = why or "failed on another rank"
                del ops[v], fns[v]
    return ops


def extra_variants(args):
    """The most --alt-* / --link-copies variants one shape can add (for the time estimate)."""
    ag = len([c for c in args.alt_copy_chunks.split(",") if c]) + int(args.alt_gather_copy_engine)
    rs = sum(int(getattr(args, f"alt_{v}")) for v in TWIN_VARIANTS) + int(args.alt_rs_ring)
    return (len([f for f in args.alt_config.split(",") if f]) + max(ag, rs) + int(args.alt_overlap_barriers)
            + int(args.alt_captured) + int(args.alt_nccl)
            + int(args.link_copies))


def main():
    p = tp_options.parser(__doc__.splitlines()[0], R.DTYPES)
    args = p.parse_args()
    if args.share_device and args.link_copies:
        p.error("--link-copies needs PyTorch's symmetric memory, which needs a GPU per rank: not with --share-device")
    # before the process group (torchrun's WORLD_SIZE is the TP degree): a usage error leaves nothing to tear down
    unknown = sorted(set(filter(None, args.only.split(","))) - {s[0] for s in R.SHAPES})
    if unknown:
        p.error(f"--only names unknown shapes {unknown}; the shapes are {[s[0] for s in R.SHAPES]}")
    if args.tag and not re.fullmatch(R.TAG_PATTERN, args.tag):
        p.error(f"--tag {args.tag!r}: {R.TAG_RULE}")
    args.tag = R.run_tag(args.tag, os.environ)
    world, why = tp_options.tp_degree(os.environ.get("WORLD_SIZE", "1"))
    if why:
        p.error(why)
    if args.tokens < 0 or args.tokens % world:
        p.error(f"--tokens {args.tokens}: a positive multiple of tp = {world} (every rank owns M / tp rows of A or D), "
                "or 0 for the shapes' own M")
    lib = tpgemm_lib.Lib()

    def config_of(name):  # by name the library ignores tp and dtype (tpg_config_find): option_errors compares them
        try:
            info = lib.config_info(lib.config(name=name))
        except tpgemm_lib.TpgError:
            return None
        return {**info, "dtype": tpgemm_lib.DTYPE_NAMES[info["dtype"]]}
    problems = tp_options.option_errors(args, world, config_of)
    if problems:
        p.error("; ".join(problems))
    if args.check_args:
        print(f"tp_bench: options accepted at tp = {world}: {' '.join(sys.argv[1:])}")
        return
    load_torch()
    W.FIT_ENERGY = args.energy_fit

    if os.environ.get("TP_BENCH_TRACE_AFTER"):  # diagnosing a hang: every rank prints its Python stacks
        import faulthandler
        faulthandler.dump_traceback_later(float(os.environ["TP_BENCH_TRACE_AFTER"]), repeat=True)
    global COLL
    # a collective that waits past TP_BENCH_PG_TIMEOUT_S (a rank hung on the device outside tpgemm, whose own waits
    # are bounded) ends the run in minutes instead of at run_tp.sh's bound: none waits more than seconds otherwise
    dist.init_process_group("gloo" if args.share_device else "nccl",
                            timeout=datetime.timedelta(seconds=float(os.environ.get("TP_BENCH_PG_TIMEOUT_S", 180))))
    rank, tp = dist.get_rank(), dist.get_world_size()
    dev = 0 if args.share_device else int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(dev)
    group_name = dist.group.WORLD.group_name
    if args.share_device:
        COLL = SumCollectives
    else:
        try:
            import torch.distributed._symmetric_memory as symm
            if tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 11):  # deprecated since, not needed
                symm.enable_symm_mem_for_group(group_name)
        except Exception as e:  # async TP then fails per shape and is recorded as an error
            print(f"rank {rank}: symmetric memory unavailable: {e!r}", flush=True)
    stem = R.result_stem(tp, args.dtype, args.share_device, args.tokens, args.tag)
    if rank == 0 and os.environ.get("OUT"):  # bench/run_tp.sh reads the stem of this run's files here
        (Path(os.environ["OUT"]) / ".tp_stem").write_text(stem + "\n")
    shapes = R.shapes_at_tokens([s for s in R.SHAPES if not args.only or s[0] in args.only.split(",")], args.tokens)
    if rank == 0:
        n_var = len(R.VARIANTS) + len(R.MODE_VARIANTS) + extra_variants(args)
        est = R.estimate_seconds(len(shapes), n_var, args.rounds, args.window, args.burst_idle, 6.0)
        print(f"tp_bench: TP={tp}, {len(shapes)} shapes x up to {n_var} variants x {args.rounds} rounds x "
              f"{args.window:.1f} s windows; estimated {est:.0f} s", flush=True)

    def allgather(send):  # the bootstrap: bytes over NCCL (tiny, once per collective tpgemm call)
        t = torch.frombuffer(bytearray(send), dtype=torch.uint8).to("cuda")
        out = torch.empty(tp * len(send), dtype=torch.uint8, device="cuda")
        COLL.all_gather_into_tensor(out, t)
        return bytes(out.cpu().tolist())

    progress(rank, "tpg_ctx_create_rank")
    ctx = lib.ctx_rank(tp, rank, dev, allgather, share_devices=args.share_device)
    ctx_nccl, nccl_error, ctx1 = None, None, None
    try:  # every context is destroyed once, in the finally, also when a step raises (its error is the one reported)
        if args.alt_nccl and tp > 1:
            if args.share_device:  # NCCL refuses two ranks on one GPU of one host: one NCCL "host" per rank, loopback
                os.environ.setdefault("NCCL_HOSTID", f"tp-bench-rank-{rank}")
                os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
                os.environ.setdefault("NCCL_IB_DISABLE", "1")
            made = []
            why = W.guarded(lambda: made.append(lib.ctx_rank(tp, rank, dev, allgather, share_devices=args.share_device,
                                                             transport="nccl")))
            if W.all_ok(why is None):
                ctx_nccl = made[0]
            else:  # every shape records alt:nccl's error; the run goes on without it
                nccl_error = f"the NCCL context: {why or 'failed on another rank'}"
                if made:
                    W.guarded(made[0].destroy)
        ctx1 = lib.ctx_local([dev])
        progress(rank, "contexts ready")
        energy = W.Energy(dev)
        records = []
        # Every variant runs on one dedicated stream, the current stream that torch's calls and tpgemm's (stream())
        # queue on, so the events that time a window see all of its work. (torch's default stream, handle 0, would be
        # used as given too: CUDA's legacy default stream, tpgemm.h tpg_op_run_rank.)
        torch.cuda.set_stream(torch.cuda.Stream())
        for index, shape in enumerate(shapes):
            t0 = time.time()
            try:
                rec = bench_shape(args, shape, tp, rank, ctx, ctx1, lib, energy, group_name, ctx_nccl, nccl_error,
                                  shape_index=index)
            except Exception as e:  # setup failed (tpgemm collective calls fail on every rank alike)
                rec = R.make_record(shape[0], shape[1], *shape[2:], tp, args.dtype, {}, None, {"setup": repr(e)[:500]},
                                    extra={"shared_device": True} if args.share_device else None)
            if args.tokens:
                rec["tokens"] = args.tokens
            if args.tag:
                rec["tag"] = args.tag
            rec["nccl_env"] = R.nccl_environment(os.environ)
            rec["shapes_asked"] = [s[0] for s in shapes]  # a run cut short shows what it lacks (R.missing_shapes)
            records.append(rec)
            if rank == 0:
                save(records, stem)  # after every shape: a run stopped by a timeout keeps what it measured
                print(f"{rec['name']}: " + ", ".join(f"{v} {R.fmt_or_dash(rec.get(v + '_tflops'))}" for v in R.VARIANTS)
                      + f", check {rec['check']} (rel err {rec['rel_err']}, max err {rec['max_err']}), "
                      f"{time.time() - t0:.1f} s", flush=True)
                for fam, a in rec.get("alt", {}).items():
                    print(f"  alt {fam}: {R.fmt_or_dash(a['tflops'])} (burst {R.fmt_or_dash(a['burst_tflops'])}, "
                          f"{R.fmt_or_dash(a['sm_mhz'])} MHz, check {a['check']})", flush=True)
                for v, a in rec.get("diag", {}).items():
                    print(f"  diag {v}: {R.fmt_or_dash(a['tflops'])} (burst {R.fmt_or_dash(a['burst_tflops'])}, "
                          f"{R.fmt_or_dash(a['sm_mhz'])} MHz, {a['joules'] or 0:.3f} J/call)", flush=True)
    finally:
        for c in filter(None, (ctx1, ctx, ctx_nccl)):
            try:
                c.destroy()
            except tpgemm_lib.TpgError as e:  # an op leaked by a failed setup; the results still count
                print(f"rank {rank}: {e}", flush=True)
    if rank == 0:
        paths = save(records, stem)
        report_tp.main([str(paths[-1])] + (["--benchmarks", str(Path(os.environ["OUT"]) / "BENCHMARKS.md")]
                                           if os.environ.get("OUT") else []))
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
