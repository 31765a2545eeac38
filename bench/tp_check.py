"""The TP benchmark's output checks (bench/tp_bench.py), the tensors they compare (own_setup) and the agreement on
setup failures. Every function here but own_setup is collective: each rank calls it at the same point, and a failure
on one rank is agreed (tp_windows.all_ok) before the next collective step, so that the ranks keep calling the same
collectives in the same order. The pure parts (the statuses, the record's fields) are in tp_records (check_status,
check_error, apply_checks)."""
import math
import types

import torch
import torch.distributed as dist

import tp_records as R
import tp_windows as W


# How long the odd ranks' stream idles before their new inputs of the re-check (~1 ms at boost clock: longer than a
# fused call's start, so that its peers' first loads come before the write).
LATE_INPUT_CYCLES = 2_000_000


class SetupFailure(RuntimeError):
    """A setup step failed on some rank: raised on every rank alike, with this rank's own cause or "failed on
    another rank" (which tp_records.merge_rank_errors leaves to the failing rank's text)."""


def agree(why):
    """Raises SetupFailure on every rank when any rank's step failed (why: this rank's failure text, or None). A
    step that fails on one rank only (its tensors, its rank-dependent shard layout, its local op) then no longer sends
    that rank to the ops' collective destroy while the others are in the next collective call."""
    if not W.all_ok(why is None):
        raise SetupFailure(why or "failed on another rank")


def own_setup(op_kind, m, n, k, tp, rank, num, sh, ctx1, cfg1, held, cfg1_default=None):
    """This rank's tensors and its local op (op1, added to held), after checking the fused op's shard layout `sh`
    against torch's, every extent and offset (the check compares against it: the schedule must shard the same way, a
    gathered A in another rank order included). No collective call. Returns the tensors: a, b, d, d_loc, ref,
    local_ref (what op1 computes: AG the gathered GEMM ref, RS the m x n partial part), a_full (AG) / part (RS), num,
    op1, op1_default (config cfg1_default on the same tensors, the local GEMM's "default" mode: tp_records.MODES;
    None without one) and new_inputs() (new operands in the same buffers, for tp_check.recheck)."""
    seed = 1234 + 7919 * rank + m + n + k
    rnd = lambda g, *s: num.operand(g, *s)  # noqa: E731
    g = torch.Generator(device="cuda").manual_seed(seed)
    emp = num.output
    t = types.SimpleNamespace(num=num, a_full=None, part=None)
    if op_kind == "AG":
        t.a, t.b = rnd(g, m // tp, k), rnd(g, n // tp, k)
        t.a_full, t.d, t.d_loc, t.ref = num.operand_empty(m, k), emp(m, n // tp), emp(m, n // tp), emp(m, n // tp)
        t.local_ref = t.ref
        want = dict(a_rows=m // tp, a_cols=k, b_rows=n // tp, b_cols=k, d_rows=m, d_cols=n // tp,
                    a_row0=rank * m // tp, a_col0=0, b_row0=rank * n // tp, b_col0=0, d_row0=0, d_col0=rank * n // tp)
        local_a = t.a_full
    else:
        t.a, t.b = rnd(g, m, k // tp), rnd(g, n, k // tp)
        t.part, t.d, t.d_loc, t.ref = emp(m, n), emp(m // tp, n), emp(m, n), emp(m // tp, n)
        t.local_ref = t.part
        want = dict(a_rows=m, a_cols=k // tp, b_rows=n, b_cols=k // tp, d_rows=m // tp, d_cols=n,
                    a_row0=0, a_col0=rank * k // tp, b_row0=0, b_col0=rank * k // tp, d_row0=rank * m // tp, d_col0=0)
        local_a = t.a
    bad = {key: (sh[key], v) for key, v in want.items() if sh[key] != v}
    if bad:
        raise RuntimeError(f"tpgemm shard layout differs from torch's (field: (tpgemm, torch)): {bad}")
    t.op1 = t.op1_default = None
    for name, cfg in (("op1", cfg1), ("op1_default", cfg1_default)):
        if cfg is not None:
            setattr(t, name, ctx1.op(cfg, *R.local_problem(op_kind, m, n, k, tp)))
            held.append(getattr(t, name))
            getattr(t, name).set_torch_tensors(0, local_a, t.b, t.d_loc, **num.scales)

    def new_inputs():  # another seed; a_full and the references follow from reference()
        g2 = torch.Generator(device="cuda").manual_seed(seed + 104729)
        if rank % 2:  # odd ranks write theirs late: a call that reads a peer's shard without waiting reads old data
            torch.cuda._sleep(LATE_INPUT_CYCLES)
        for x in (t.a, t.b):
            x.copy_(rnd(g2, *x.shape))
    t.new_inputs = new_inputs
    return t


def relative_errors(d, ref):
    """||d - ref|| / ||ref||, max|d - ref| / max|ref| and the per-element error max_i |d_i - ref_i| / max(|ref_i|,
    rms(ref)) (the CLI's metric; their bounds: tp_records.MAX_*), each the largest over every
    rank (a NaN reads inf: it fails, never "not run"); a rank whose own comparison raised (out of memory) reads inf
    too, and still joins the all-reduces, so the ranks stay in step."""
    def local_errors():
        torch.cuda.synchronize()
        ref_f = ref.float()
        diff = d.float() - ref_f
        ref_norm = ref_f.norm()
        rel = (diff.norm() / ref_norm.clamp_min(1e-30)).item()
        mx = (diff.abs().max() / ref_f.abs().max().clamp_min(1e-30)).item()
        rms = (ref_norm / math.sqrt(max(ref_f.numel(), 1))).clamp_min(1e-30)
        return rel, mx, diff.abs_().div_(ref_f.abs().clamp_min_(rms)).max().item()  # ref_f may be ref
    try:
        errs = local_errors()
    except Exception:  # noqa: BLE001 - any failure of this rank's own arithmetic fails the check, on every rank
        errs = (math.inf,) * 3
    finite = lambda x: x if math.isfinite(x) else math.inf  # noqa: E731
    return tuple(W.allreduce(finite(x), dist.ReduceOp.MAX) for x in errs)


def agreed(fn, what=""):
    """Runs fn on every rank and agrees on its failure: None, or why it failed - this rank's error (after `what: `
    where given), or "failed on another rank" as such (tp_records.merge_rank_errors leaves that to the failing
    rank's text)."""
    why = W.guarded(fn)
    if W.all_ok(why is None):
        return None
    return f"{what}: {why}" if why and what else why or "failed on another rank"


def check_output(op, run, reference, keep, before=None):
    """Runs the fused call once on a zeroed D and compares it with torch's (reference(): the NCCL collective +
    cuBLAS). Returns (rel_err, max_err, failure, elem_err): relative_errors' (tp_records.MAX_REL_ERR, MAX_ELEM_ERR,
    MAX_PER_ELEMENT_ERR), or (None, None, why, None) when the call or the reference failed on any rank. The
    reference's collective runs on every rank or on none (agreed first), so a call that fails on one rank only does
    not leave the ranks in different collectives. before: queued on the stream just ahead of the call, with no
    collective between (recheck's new inputs)."""
    def fused():
        if before:
            before()
        keep.d.zero_()
        run()
        op.sync()  # a device-side timeout surfaces here
    why = agreed(fused) or agreed(reference, "the reference")
    if why:
        return None, None, why, None
    rel, mx, elem = relative_errors(keep.d, keep.ref)
    return rel, mx, None, elem


def check_local(op1, run, reference, keep):
    """tpgemm's local GEMM (op1: the denominator of the fused / local acceptance point) once on a zeroed d_loc,
    against keep.local_ref: all-gather the gathered GEMM (ref), reduce-scatter this rank's m x n partial (part).
    reference() runs first, on every rank (it is collective): it makes both, and gathers a_full, which the
    all-gather's local GEMM reads (after new inputs it would read the old ones). Returns as check_output."""
    def local():
        keep.d_loc.zero_()
        run()
        op1.sync()
    why = agreed(reference, "the reference") or agreed(local)
    if why:
        return None, None, why, None
    rel, mx, elem = relative_errors(keep.d_loc, keep.local_ref)
    return rel, mx, None, elem


def check_returned(run, reference, keep):
    """A variant that returns its D rather than writing keep.d (PyTorch async TP), once against keep.ref: the ratio
    to a baseline that computes another product (a wrong layout, a missing rank's part) would mean nothing.
    reference() runs first, on every rank (it is collective). Returns as check_output."""
    out = []

    def call():
        out.append(run())
        torch.cuda.synchronize()
    why = agreed(reference, "the reference") or agreed(call)
    if why:
        return None, None, why, None
    rel, mx, elem = relative_errors(out[0], keep.ref)
    return rel, mx, None, elem


# The local GEMM's modes' variants (tp_records.MODES): each writes d_loc, checked by check_local.
LOCAL_MODES = [R.mode_variant("local", md) for md in R.MODES["local"]]


def recheck(keep, reference, targets):
    """After the timing rounds: new operands in the same buffers (keep.new_inputs), then one call of each target
    (variant, op, run) against a fresh reference - check_local for the local modes, else check_output. The timed calls
    reused flags and epochs over calls on unchanged inputs, where a call that skipped a wait or read the previous
    call's shards or partials looks correct; here it does not. The new inputs go on the stream right ahead of the
    first fused call, with no collective between (a host agreement there would finish every rank's writes before
    any call read a peer's shard, and hide a call that does not wait for its peers); the fused targets go first.
    New inputs that fail on any rank fail every target with that cause (agreed after the first call, which failed
    with them): none would be re-checked on new inputs. targets: the same list on every rank (the timing's live
    variants). Returns ({variant: (rel_err, max_err,
    why, elem_err)}, None)."""
    is_local = lambda v: v in LOCAL_MODES  # noqa: E731
    ordered = [t for t in targets if not is_local(t[0])] + [t for t in targets if is_local(t[0])]
    own = []  # this rank's failure to write the new inputs

    def new_inputs():
        try:
            keep.new_inputs()
        except Exception as e:
            own.append(repr(e)[:300])
            raise

    def inputs_failure():  # agreed: None, or why no target can be re-checked on new inputs (the same on every rank)
        if W.all_ok(not own):
            return None
        return f"new inputs for the re-check: {own[0]}" if own else "failed on another rank"
    fused_first = bool(ordered) and not is_local(ordered[0][0])
    why = None if fused_first or not ordered else (W.guarded(new_inputs), inputs_failure())[1]  # local GEMM alone
    out = {}
    for i, (v, op, run) in enumerate(ordered):
        if why:
            out[v] = (None, None, why, None)
            continue
        out[v] = check_local(op, run, reference, keep) if is_local(v) else \
            check_output(op, run, reference, keep, new_inputs if i == 0 else None)
        if i == 0 and fused_first:  # the first call failed where the inputs did: say so, and re-check nothing more
            why = inputs_failure()
            out[v] = (None, None, why, None) if why else out[v]
    return out, None
