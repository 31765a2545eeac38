"""Schedules as data, and the pure functions that expand them into per-(device, stage) tables.

A schedule is one entry of SCHEDULES: its partitioning (shard_a / shard_b / shard_d: which global dim
device d owns block d of), its scheduling (stage_dim, rotating) and one linear formula per field of the
stage entry (docs/ARCHITECTURE.md, "The four schedules as tables"). A new 1-D variant (say a ring in the
other direction) is a new entry here, never a new code path: build_stages / build_nodes only evaluate
formulas and the comm family.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Formula:
    """value(d, s) = (d_coef·d + s_coef·s + const) [mod P], or -1 ("none") where `none` says so.

    none: None | "first" (stage 0) | "last" (stage P-1).
    """
    d_coef: int = 0
    s_coef: int = 0
    const: int = 0
    mod: bool = True
    none: str | None = None

    def __call__(self, d: int, s: int, tp: int) -> int:
        if self.none == "first" and s == 0 or self.none == "last" and s == tp - 1:
            return -1
        v = self.d_coef * d + self.s_coef * s + self.const
        return v % tp if self.mod else v


def ring(d: int, s: int, c: int = 0, none: str | None = None) -> Formula:
    """(d·d + s·s + c) mod P."""
    return Formula(d, s, c, True, none)


def linear(s: int, c: int = 0, none: str | None = None) -> Formula:
    """s·s + c, not reduced (slot indices)."""
    return Formula(0, s, c, False, none)


NONE = Formula(0, 0, -1, False)  # the constant -1: the field is unused by this schedule

# The schedule table. Keys of each entry:
#   short     C identifier stem (tpg_schedule_<short>_tp<P>)
#   comm      "allgather" (rotating operand copied peer -> slot) | "reduce_scatter" (partials pushed)
#   shard_a, shard_b, shard_d, stage_dim: "M" | "N" | "K";   rotating: "A" | "B" | "D"
#   block, peer, src_slot, dst_slot, dst_peer: Formula of (d, s, P)
SCHEDULES: dict[str, dict] = {
    "AllGather1D_TilingCD_RotatingA": dict(
        short="ag_rota", comm="allgather",
        shard_a="M", shard_b="N", shard_d="N", stage_dim="M", rotating="A",
        block=ring(1, 1), peer=ring(1, 1), src_slot=linear(1, -1, none="first"),
        dst_slot=NONE, dst_peer=NONE),
    "AllGather1D_TilingCD_RotatingB": dict(
        short="ag_rotb", comm="allgather",
        shard_a="M", shard_b="N", shard_d="M", stage_dim="N", rotating="B",
        block=ring(1, 1), peer=ring(1, 1), src_slot=linear(1, -1, none="first"),
        dst_slot=NONE, dst_peer=NONE),
    "ReduceScatter1D_TilingA_RotatingC": dict(
        short="rs_tila", comm="reduce_scatter",
        shard_a="K", shard_b="K", shard_d="M", stage_dim="M", rotating="D",
        block=ring(1, -1, -1), peer=ring(1, 0, -1, none="first"), src_slot=linear(1, -1, none="first"),
        dst_slot=linear(1, 0, none="last"), dst_peer=ring(1, 0, 1, none="last")),
    "ReduceScatter1D_TilingB_RotatingC": dict(
        short="rs_tilb", comm="reduce_scatter",
        shard_a="K", shard_b="K", shard_d="N", stage_dim="N", rotating="D",
        block=ring(1, -1, -1), peer=ring(1, 0, -1, none="first"), src_slot=linear(1, -1, none="first"),
        dst_slot=linear(1, 0, none="last"), dst_peer=ring(1, 0, 1, none="last")),
}

STAGE_FIELDS = ("block", "peer", "src_slot", "dst_slot", "dst_peer")

@dataclass(frozen=True)
class StageEntry:
    """What device d does at stage s (tpg_stage_entry). -1 = none."""
    block: int
    peer: int
    src_slot: int
    dst_slot: int
    dst_peer: int


@dataclass(frozen=True)
class GraphNode:
    """One node of a device's graph (tpg_graph_node). deps: indices of earlier nodes, -1 = none."""
    kind: str
    stage: int = -1
    peer: int = -1
    slot: int = -1
    deps: tuple[int, int] = (-1, -1)


@dataclass(frozen=True)
class ScheduleTable:
    """A schedule expanded for one TP degree: everything tpg_schedule_table holds."""
    name: str
    short: str
    tp: int
    comm: str
    shard_a: str
    shard_b: str
    shard_d: str
    stage_dim: str
    rotating: str
    stages: tuple[tuple[StageEntry, ...], ...]   # [device][stage]
    nodes: tuple[tuple[GraphNode, ...], ...]     # [device][i]

    @property
    def c_name(self) -> str:
        return f"tpg_schedule_{self.short}_tp{self.tp}"

    @property
    def nodes_per_device(self) -> int:
        return len(self.nodes[0])


def build_stages(sched: dict, tp: int) -> tuple[tuple[StageEntry, ...], ...]:
    """The (device, stage) table: each field evaluates its formula."""
    return tuple(
        tuple(StageEntry(*(sched[f](d, s, tp) for f in STAGE_FIELDS)) for s in range(tp))
        for d in range(tp))


def build_nodes(comm: str, row: tuple[StageEntry, ...]) -> tuple[GraphNode, ...]:
    """Graph nodes of one device from its stage row (docs/ARCHITECTURE.md, "Graph nodes per device").

    All-gather: a COPY (peer's shard -> slot) then a FLAG (that peer's epoch -> flag s) per stage that
    reads a slot, chained one after another; the GEMM runs from the start and waits on the flags itself.
    """
    if len(row) == 1:
        # One device: no peer to wait for or to protect inputs from, so the graph is the GEMM alone
        # (two barrier kernels would add launch latency to every local GEMM).
        return (GraphNode("GEMM"),)
    nodes = [GraphNode("BARRIER_START")]
    last_flag = -1
    if comm == "allgather":
        for s, e in enumerate(row):
            if e.src_slot < 0:
                continue
            nodes.append(GraphNode("COPY", s, e.peer, e.src_slot, (len(nodes) - 1, -1)))
            nodes.append(GraphNode("FLAG", s, e.peer, s, (len(nodes) - 1, -1)))
            last_flag = len(nodes) - 1
    gemm = len(nodes)
    nodes.append(GraphNode("GEMM", deps=(0, -1)))
    nodes.append(GraphNode("BARRIER_END", deps=(gemm, last_flag)))
    return tuple(nodes)


def build_table(name: str, tp: int) -> ScheduleTable:
    """Expand schedule `name` for `tp` devices."""
    sched = SCHEDULES[name]
    stages = build_stages(sched, tp)
    nodes = tuple(build_nodes(sched["comm"], row) for row in stages)
    return ScheduleTable(
        name=name, short=sched["short"], tp=tp, comm=sched["comm"],
        shard_a=sched["shard_a"], shard_b=sched["shard_b"], shard_d=sched["shard_d"],
        stage_dim=sched["stage_dim"], rotating=sched["rotating"], stages=stages, nodes=nodes)
