"""A numpy (float64) execution of a schedule table, as the runtime and the kernel would run it.

It reads only what the generator emits (generator.schedules.ScheduleTable: stage entries and graph
nodes) and the partitioning fields, and it checks the ordering the real system relies on:
  all-gather: stage s reads slot src_slot only after FLAG s was raised by a node that depends on the
              COPY that filled that slot;
  reduce-scatter: stage s reads a slot only if a peer wrote it in an earlier stage, and no slot is
              overwritten before it is read.
Devices run stage by stage: within a stage every device's copies, then every device's GEMM stage.
"""
from __future__ import annotations

import numpy as np

from generator.schedules import ScheduleTable

AXIS = {"A": {"M": 1, "K": 2}, "B": {"N": 1, "K": 2}, "D": {"M": 1, "N": 2}}


class ScheduleError(AssertionError):
    """The table asks for something the real system would get wrong (a race or a missing write)."""


def block(x: np.ndarray, axis: int, i: int, parts: int) -> np.ndarray:
    n = x.shape[axis] // parts
    idx = [slice(None)] * x.ndim
    idx[axis] = slice(i * n, (i + 1) * n)
    return x[tuple(idx)]


def _ancestors(nodes, i: int) -> set[int]:
    out, todo = set(), [i]
    while todo:
        for dep in nodes[todo.pop()].deps:
            if dep >= 0 and dep not in out:
                out.add(dep)
                todo.append(dep)
    return out


def _require(cond: bool, msg: str) -> None:
    if not cond:
        raise ScheduleError(msg)


def simulate(t: ScheduleTable, A: np.ndarray, B: np.ndarray, C: np.ndarray,
             alpha: float, beta: float) -> np.ndarray:
    """Global D (L x M x N) computed by running table t on t.tp simulated devices.
    A: L x M x K, B: L x N x K (K-major), C: L x M x N."""
    P = t.tp
    a_sh = [block(A, AXIS["A"][t.shard_a], d, P) for d in range(P)]
    b_sh = [block(B, AXIS["B"][t.shard_b], d, P) for d in range(P)]
    c_sh = [block(C, AXIS["D"][t.shard_d], d, P) for d in range(P)]
    d_sh = [np.full(c.shape, np.nan) for c in c_sh]
    own = {"A": a_sh, "B": b_sh}
    slots = [[None] * (P - 1) for _ in range(P)]
    slot_info = [[None] * (P - 1) for _ in range(P)]   # (writer node or device, stage, read?)
    flags = [dict() for _ in range(P)]                   # flag index -> FLAG node index
    done = [set() for _ in range(P)]                     # executed node indices
    written = [set() for _ in range(P)]                  # blocks of the local output written

    def run_node(d: int, i: int) -> None:
        n = t.nodes[d][i]
        _require(all(dep < 0 or dep in done[d] for dep in n.deps),
                 f"device {d} node {i} ({n.kind}) runs before its dependencies {n.deps}")
        if n.kind == "COPY":
            _require(0 <= n.peer < P and n.peer != d, f"device {d} node {i}: bad peer {n.peer}")
            _require(slot_info[d][n.slot] is None, f"device {d} slot {n.slot} copied twice")
            slots[d][n.slot] = own[t.rotating][n.peer].copy()
            slot_info[d][n.slot] = (i, n.stage, False)
        elif n.kind == "FLAG":
            flags[d][n.slot] = i
        done[d].add(i)

    def operands(d: int, s: int, e):
        """A_s, B_s of device d at stage s."""
        ops = {"A": a_sh[d], "B": b_sh[d]}
        for name in ("A", "B"):
            if t.comm == "allgather" and name == t.rotating:
                if e.src_slot >= 0:
                    f = flags[d].get(s)
                    _require(f is not None, f"device {d} stage {s}: flag {s} not raised")
                    info = slot_info[d][e.src_slot]
                    _require(info is not None and info[0] in _ancestors(t.nodes[d], f),
                             f"device {d} stage {s}: flag {s} does not follow the copy into "
                             f"slot {e.src_slot}")
                    ops[name] = slots[d][e.src_slot]
            elif t.stage_dim in AXIS[name]:
                ops[name] = block(ops[name], AXIS[name][t.stage_dim], e.block, P)
        return ops["A"], ops["B"]

    def gemm_stage(d: int, s: int) -> None:
        e = t.stages[d][s]
        a, b = operands(d, s, e)
        part = alpha * np.einsum("lmk,lnk->lmn", a, b)
        if t.comm == "allgather":
            _require(e.block not in written[d], f"device {d} stage {s}: block {e.block} twice")
            written[d].add(e.block)
            axis = AXIS["D"][t.stage_dim]
            block(d_sh[d], axis, e.block, P)[...] = part + beta * block(c_sh[d], axis, e.block, P)
            return
        if e.src_slot >= 0:
            info = slot_info[d][e.src_slot]
            _require(info is not None and info[1] < s,
                     f"device {d} stage {s}: slot {e.src_slot} not written in an earlier stage")
            _require(info[0] == e.peer, f"device {d} stage {s}: slot {e.src_slot} was written by "
                     f"device {info[0]}, the table says peer {e.peer}")
            part = part + slots[d][e.src_slot]
            slot_info[d][e.src_slot] = (info[0], info[1], True)
        if e.dst_peer >= 0:
            q, slot = e.dst_peer, e.dst_slot
            _require(slot_info[q][slot] is None, f"device {d} stage {s}: slot {slot} of device "
                     f"{q} overwritten before it was read")
            slots[q][slot] = part
            slot_info[q][slot] = (d, s, False)
        else:
            _require(e.dst_slot < 0 and part.shape == d_sh[d].shape,
                     f"device {d} stage {s}: final partial does not match the D shard")
            _require(not written[d], f"device {d} stage {s}: D written twice")
            written[d].add(e.block)
            d_sh[d][...] = part + beta * c_sh[d]

    gemm_at = [next(i for i, n in enumerate(t.nodes[d]) if n.kind == "GEMM") for d in range(P)]
    barriers = P > 1  # a single device's graph is the GEMM alone
    for d in range(P):
        if barriers:
            _require(t.nodes[d][0].kind == "BARRIER_START", f"device {d}: node 0 is not the barrier")
            run_node(d, 0)
        else:
            _require([n.kind for n in t.nodes[d]] == ["GEMM"], f"device {d}: P = 1 graph is not the GEMM alone")
    for s in range(P):
        for d in range(P):
            for i, n in enumerate(t.nodes[d]):
                if n.kind in ("COPY", "FLAG") and n.stage == s:
                    run_node(d, i)
        for d in range(P):
            if s == 0:
                run_node(d, gemm_at[d])
            gemm_stage(d, s)
    for d in range(P):
        end = len(t.nodes[d]) - 1
        if barriers:
            _require(t.nodes[d][end].kind == "BARRIER_END", f"device {d}: last node is not the barrier")
            run_node(d, end)
        _require(len(done[d]) == len(t.nodes[d]), f"device {d}: nodes never ran")
        if t.comm == "reduce_scatter":
            _require(all(i is None or i[2] for i in slot_info[d]), f"device {d}: a partial was "
                     "pushed but never read")
    D = np.full(C.shape, np.nan)
    for d in range(P):
        block(D, AXIS["D"][t.shard_d], d, P)[...] = d_sh[d]
    return D
