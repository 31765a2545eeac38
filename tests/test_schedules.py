"""Every schedule computes the plain GEMM for P = 1..8 (numpy simulator on the generator's tables),
and the simulator catches broken tables."""
import dataclasses

import numpy as np
import pytest

from generator.schedules import SCHEDULES, StageEntry, build_table
from tests.simulator import ScheduleError, simulate

TOL = 1e-9


def problem(P: int, L: int, seed: int):
    rng = np.random.default_rng(seed)
    M, N, K = (P * int(rng.integers(1, 5)) for _ in range(3))
    A = rng.standard_normal((L, M, K))
    B = rng.standard_normal((L, N, K))
    C = rng.standard_normal((L, M, N))
    return A, B, C


def reference(A, B, C, alpha, beta):
    return alpha * np.einsum("lmk,lnk->lmn", A, B) + beta * C


@pytest.mark.parametrize("beta", [1.0, 0.0])
@pytest.mark.parametrize("L", [1, 2])
@pytest.mark.parametrize("P", range(1, 9))
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_computes_gemm(name, P, L, beta):
    A, B, C = problem(P, L, seed=P * 10 + L)
    D = simulate(build_table(name, P), A, B, C, 0.5, beta)
    assert np.abs(D - reference(A, B, C, 0.5, beta)).max() < TOL


def test_stage_table_matches_architecture_formulas():
    """The data entries reproduce docs/ARCHITECTURE.md's table, spelled out independently."""
    for P in range(1, 9):
        for name in SCHEDULES:
            t = build_table(name, P)
            for d in range(P):
                for s in range(P):
                    e = t.stages[d][s]
                    if name.startswith("AllGather"):
                        want = StageEntry((d + s) % P, (d + s) % P, s - 1, -1, -1)
                    else:
                        last = s == P - 1
                        want = StageEntry((d - 1 - s) % P, -1 if s == 0 else (d - 1) % P, s - 1,
                                          -1 if last else s, -1 if last else (d + 1) % P)
                    assert e == want, (name, P, d, s)


def _replace_entry(t, d, s, **fields):
    rows = [list(r) for r in t.stages]
    rows[d][s] = dataclasses.replace(rows[d][s], **fields)
    return dataclasses.replace(t, stages=tuple(tuple(r) for r in rows))


def _fails(t, P=4):
    A, B, C = problem(P, 1, seed=7)
    try:
        D = simulate(t, A, B, C, 0.5, 1.0)
    except ScheduleError:
        return True
    return not np.abs(D - reference(A, B, C, 0.5, 1.0)).max() < TOL


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_swapped_blocks_are_detected(name):
    t = build_table(name, 4)
    b0, b1 = t.stages[1][0].block, t.stages[1][1].block
    broken = _replace_entry(_replace_entry(t, 1, 0, block=b1), 1, 1, block=b0)
    assert _fails(broken)


def test_reading_a_partial_of_the_same_stage_is_detected():
    t = build_table("ReduceScatter1D_TilingA_RotatingC", 4)
    # Device 2 pushes stage 1's partial into its neighbour's slot 1 instead of slot 0... and
    # device 3 reads slot 1 at stage 1: written in the same stage, a race on a real machine.
    broken = _replace_entry(t, 3, 1, src_slot=1)
    broken = _replace_entry(broken, 2, 0, dst_slot=1)
    with pytest.raises(ScheduleError):
        simulate(broken, *problem(4, 1, seed=3), 0.5, 1.0)


def test_gemm_reading_a_slot_before_its_flag_is_detected():
    t = build_table("AllGather1D_TilingCD_RotatingA", 4)
    broken = _replace_entry(t, 0, 1, src_slot=1)  # slot 1 is copied for stage 2, not 1
    with pytest.raises(ScheduleError):
        simulate(broken, *problem(4, 1, seed=5), 0.5, 1.0)


def test_graph_nodes_follow_architecture():
    t = build_table("AllGather1D_TilingCD_RotatingB", 3)
    kinds = [n.kind for n in t.nodes[1]]
    assert kinds == ["BARRIER_START", "COPY", "FLAG", "COPY", "FLAG", "GEMM", "BARRIER_END"]
    assert [n.deps for n in t.nodes[1]] == [(-1, -1), (0, -1), (1, -1), (2, -1), (3, -1), (0, -1),
                                             (5, 4)]
    assert [(n.stage, n.peer, n.slot) for n in t.nodes[1][1:5]] == [(1, 2, 0), (1, 2, 1),
                                                                    (2, 0, 1), (2, 0, 2)]
    for name in SCHEDULES:
        one = build_table(name, 1)
        assert [n.kind for n in one.nodes[0]] == ["GEMM"]
    rs = build_table("ReduceScatter1D_TilingB_RotatingC", 8)
    assert all([n.kind for n in row] == ["BARRIER_START", "GEMM", "BARRIER_END"] for row in rs.nodes)
