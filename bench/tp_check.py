"""The TP benchmark's output checks (bench/tp_bench.py), the tensors they compare (own_setup) and the agreement on
setup failures. Every function here but own_setup is collective: each rank calls it at the same point, and a failure
on one rank is agreed (tp_windows.all_ok) before the next collective step, so that the ranks keep calling the same
collectives in the same order. The pure parts (the statuses, the record's fields) are in tp_records (check_status,
check_error, apply_checks)."""
import math
import types

import torch
import torch.distributed as dist

import tp_windows as W


class SetupFailure(RuntimeError):
    """A setup step failed on some rank: raised on every rank alike, with this rank's own cause or "failed on
    another rank" (which tp_records.merge_rank_errors leaves to the failing rank's text)."""


def agree(why):
    """Raises SetupFailure on every rank when any rank's step failed (why: this rank's failure text, or None). A
    step that fails on one rank only (its tensors, its rank-dependent shard layout, its local op) then no longer sends
    that rank to the ops' collective destroy while the others are in the next collective call."""
    if not W.all_ok(why is None):
        raise SetupFailure(why or "failed on another rank")


def own_setup(op_kind, m, n, k, tp, rank, num, sh, ctx1, cfg1, held):
    """This rank's tensors and its local op (op1, added to held), after checking the fused op's shard layout `sh`
    against torch's (the check compares against it: the schedule must shard the same way; d_col0 / d_row0 differ by
    rank). No collective call. Returns the tensors: a, b, d, d_loc, ref, local_ref (what op1 computes: AG the
    gathered GEMM ref, RS the m x n partial part), a_full (AG) / part (RS), num, op1 and new_inputs() (new operands
    in the same buffers, for tp_check.recheck)."""
    seed = 1234 + 7919 * rank + m + n + k
    rnd = lambda g, *s: num.operand(g, *s)  # noqa: E731
    g = torch.Generator(device="cuda").manual_seed(seed)
    emp = num.output
    t = types.SimpleNamespace(num=num, a_full=None, part=None)
    if op_kind == "AG":
        t.a, t.b = rnd(g, m // tp, k), rnd(g, n // tp, k)
        t.a_full, t.d, t.d_loc, t.ref = num.operand_empty(m, k), emp(m, n // tp), emp(m, n // tp), emp(m, n // tp)
        t.local_ref = t.ref
        want = dict(a_rows=m // tp, a_cols=k, b_rows=n // tp, b_cols=k, d_rows=m, d_cols=n // tp, d_col0=rank * n // tp)
        local_mnk, local_a = (m, n // tp, k), t.a_full
    else:
        t.a, t.b = rnd(g, m, k // tp), rnd(g, n, k // tp)
        t.part, t.d, t.d_loc, t.ref = emp(m, n), emp(m // tp, n), emp(m, n), emp(m // tp, n)
        t.local_ref = t.part
        want = dict(a_rows=m, a_cols=k // tp, b_rows=n, b_cols=k // tp, d_rows=m // tp, d_cols=n, d_row0=rank * m // tp)
        local_mnk, local_a = (m, n, k // tp), t.a
    bad = {key: (sh[key], v) for key, v in want.items() if sh[key] != v}
    if bad:
        raise RuntimeError(f"tpgemm shard layout differs from torch's (field: (tpgemm, torch)): {bad}")
    t.op1 = ctx1.op(cfg1, *local_mnk)
    held.append(t.op1)
    t.op1.set_tensors(0, local_a.data_ptr(), t.b.data_ptr(), t.d_loc.data_ptr(), **num.scales)

    def new_inputs():  # another seed; a_full and the references follow from reference()
        g2 = torch.Generator(device="cuda").manual_seed(seed + 104729)
        for x in (t.a, t.b):
            x.copy_(rnd(g2, *x.shape))
    t.new_inputs = new_inputs
    return t


def relative_errors(d, ref):
    """||d - ref|| / ||ref|| and max|d - ref| / max|ref|, each the largest over every rank (a NaN reads inf: it fails,
    never "not run")."""
    torch.cuda.synchronize()
    diff = d.float() - ref.float()
    rel = (diff.norm() / ref.float().norm().clamp_min(1e-30)).item()
    mx = (diff.abs().max() / ref.float().abs().max().clamp_min(1e-30)).item()
    finite = lambda x: x if math.isfinite(x) else math.inf  # noqa: E731
    return W.allreduce(finite(rel), dist.ReduceOp.MAX), W.allreduce(finite(mx), dist.ReduceOp.MAX)


def check_output(op, run, reference, keep):
    """Runs the fused call once on a zeroed D and compares it with torch's (reference(): the NCCL collective +
    cuBLAS). Returns (rel_err, max_err, failure): relative_errors (tp_records.MAX_REL_ERR, MAX_ELEM_ERR), or (None,
    None, why) when the call failed on any rank. The reference's collective runs on every rank or on none (all_ok
    first), so a call that fails on one rank only does not leave the ranks in different collectives."""
    def fused():
        keep.d.zero_()
        run()
        op.sync()  # a device-side timeout surfaces here
    why = W.guarded(fused)
    if not W.all_ok(why is None):
        return None, None, why or "failed on another rank"
    reference()
    return (*relative_errors(keep.d, keep.ref), None)


def check_local(op1, run, reference, keep):
    """tpgemm's local GEMM (op1: the denominator of the fused / local acceptance point) once on a zeroed d_loc,
    against keep.local_ref: all-gather the gathered GEMM (ref), reduce-scatter this rank's m x n partial (part).
    reference() runs first, on every rank (it is collective): it makes both, and gathers a_full, which the
    all-gather's local GEMM reads (after new inputs it would read the old ones). Returns as check_output."""
    reference()

    def local():
        keep.d_loc.zero_()
        run()
        op1.sync()
    why = W.guarded(local)
    if not W.all_ok(why is None):
        return None, None, why or "failed on another rank"
    return (*relative_errors(keep.d_loc, keep.local_ref), None)


def recheck(keep, reference, targets):
    """After the timing rounds: new operands in the same buffers (keep.new_inputs), then one call of each target
    (variant, op, run) against a fresh reference - check_local for "local", else check_output. The timed calls
    reused flags and epochs over calls on unchanged inputs, where a call that skipped a wait or read the previous
    call's shards or partials looks correct; here it does not. targets: the same list on every rank (the timing's
    live variants). Returns ({variant: (rel_err, max_err, why)}, why the new inputs failed or None)."""
    why = W.guarded(keep.new_inputs)
    if not W.all_ok(why is None):
        return {}, f"new inputs for the re-check: {why or 'failed on another rank'}"
    return {v: (check_local if v == "local" else check_output)(op, run, reference, keep)
            for v, op, run in targets}, None
