"""The cross-device protocol of the fused schedules, modelled on the CPU over several calls and random orders.

tests/simulator.py checks one call's arithmetic; this checks the synchronization across calls and ranks, on the
graphs the runtime builds (the node lists and dependencies come from `tpgemm --dry-run --json`, with and without
--overlap-barriers and --copy-chunks) under a model of what each node does (runtime/src/barrier.cu, graph.c,
the kernels' waits in templates/kernels/):
  START   epoch += 1, one arrival on every peer's start counter, then wait for epoch x (tp - 1) arrivals;
  COPY    copies the peer's current input into a slot; FLAG copies the peer's epoch word into the stage flag;
  GEMM    its epoch: the word START wrote (the table's graph) or its own last_epoch + 1 (the barriers beside the
          GEMM); either way it keeps its epoch in last_epoch (templates/kernels/gemm_params.h; the kernel's last CTA
          writes it beside START, after every CTA read it, so one step here); all-gather stage s >= 1 reads its
          slot piece by piece, piece j once the flags of pieces 0..j are >= epoch - or, gathered (few rows a
          stage: one GEMM of all rows), every slot b (shard b; the own one copied in by a COPY first in its graph)
          once the flag of the device's last FLAG node is >= epoch, or, where the GEMM pulls the shards itself
          (`gemm_pulls`: no COPY or FLAG node), every peer's current input, from its start to its one stage;
          reduce-scatter stage s waits for its partial flag >= epoch, reads and consumes the partial, then pushes
          its own into the next peer's slot and raises that flag to the epoch (pull_partials: writes it into its
          own slot and raises its own flag, and the next peer waits on and reads the sender's) - or, one-hop (few
          rows a stage: `one_hop`), one stage writes every block of the rank's partial into its own slots (block b
          in slot b, none of which a peer may still have to read) and raises its tile flags to the epoch;
  REDUCE  (one-hop) reads its epoch word (START's), waits until every rank's tile flags are >= it, then reads
          block r of every rank's slots, each of which must hold that rank's partial of the same call, unread;
  CHAIN   (copy_engine_partials: the ring's stages write their own send slot, raise its flag and count it in
          its tile rows instead of pushing; runtime/src/ce_partials.c) after START and the GEMM's launch, per
          sending stage in order: waits until its send slot's count is full, copies the send slot into the
          receiver's slot, then copies the flag into the receiver's flag; after the last stage's wait it copies
          zeros over every send slot's count; END follows it (the plan lists no such node: added here);
  END     (all-gather) every stage flag set to its epoch (barrier.h: a FLAG node may have copied a peer's next
          epoch, which only a give-up makes possible: tests/protocol_give_ups.py), then one arrival on every peer's
          end counter, then wait for epoch x (tp - 1) arrivals.
A rank's next call starts when its graph has completed, after the user wrote that call's input; with both graphs
given, each rank picks one per call (the API lets the ranks switch modes between calls, each on its own). Any order the
model allows is a legal order of the real machine. Checked in every order tried: a copy reads the peer's input
of the same call, a GEMM reads slots holding this call's data, a partial never overwrites an unread one, and
every call ends (no deadlock); with copy-engine partials also that a chain copies this call's partial and that a
stage never overwrites a send slot its chain has not copied yet. The controls break one rule each and must be caught.
Epochs are unbounded integers by default (the protocol's logic); `Epochs("u32", ...)` runs the same in the device's
32-bit words from a chosen launch count, past 2^31 and across the wrap (templates/kernels/epoch.h).
"""
import copy
import json
import random
import subprocess

import pytest

from tests.conftest import ROOT
from tests.protocol_epochs import U32, Epochs
from tests.routes import on_route

TPGEMM = ROOT / "build/tpgemm"
CALLS = 4


def orders_for(tp):
    """Random orders per graph: more where they are cheap (the model's cost grows about as tp^2 per order)."""
    return max(8, 160 // (tp * tp // 2))


class Violation(Exception):
    pass


def plan(config, tp, overlap, chunks, m=None, copy_engine=False):
    if not TPGEMM.exists():
        pytest.skip("build/tpgemm is missing (tests/test_build.py says why)")
    n, k = 512 * tp, 256 * tp
    m = m or 256 * tp * 4  # shards of several whole tiles, so pieces can be cut
    args = [str(TPGEMM), "--dry-run", "--json", "--config", config, "--m", str(m), "--n", str(n), "--k", str(k)]
    args += (["--overlap-barriers"] if overlap else []) + (["--copy-chunks", str(chunks)] if chunks > 1 else [])
    args += ["--gather-copy-engine"] if copy_engine else []
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, env={"CUDA_VISIBLE_DEVICES": ""})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


class Machine:
    """Every rank's words and graph progress; step() runs one enabled action chosen by rng."""

    def __init__(self, plans, epoch_offset=0, reader_pulls=None, beside_reads_start=False, table_keeps=True,
                 gathered_waits_first=False, chain_skips_start=False, chain_keeps_counts=False, end_skips_chain=False,
                 chain_skips_wait=False, chain_zeros_first=False, epochs=None, end_resets_flags=True):
        self.ep = epochs or Epochs()
        self.end_resets_flags = end_resets_flags  # the closing barrier's reset of the stage flags (barrier.h)
        self.calls = CALLS  # each rank's calls in an order
        self.ce = bool(plans[0].get("copy_engine_partials"))
        if self.ce:  # the chains the runtime adds to each graph; the controls: no START before one, no END after
            plans = [with_chains(q, not chain_skips_start, not end_skips_chain) for q in plans]
        self.chain_keeps_counts, self.chain_skips_wait = chain_keeps_counts, chain_skips_wait
        p = plans[0]
        self.plans, self.tp, self.ag = plans, p["tp"], p["comm"] == "all-gather"
        self.gathered = bool(p.get("stages_gathered"))
        self.one_hop = bool(p.get("one_hop"))
        # gathered, per plan and device: the (stage, piece) of the last FLAG node, the flag its GEMM waits for (None
        # where the GEMM pulls the shards itself); the control waits for the first one's instead
        self.gates = [{g["device"]: ([(n["stage"], n["piece"]) for n in g["nodes"] if n["kind"] == "FLAG"] or [None])
                       [0 if gathered_waits_first else -1] for g in q["graph"]} for q in plans]
        # reduce-scatter: whose memory holds a partial (slot and flag) - the receiver's (push) or the sender's
        # (pull); reader_pulls differing from the plan is the control of a receiver reading the wrong one
        self.writer_pulls = bool(p.get("pull_partials"))
        self.reader_pulls = self.writer_pulls if reader_pulls is None else reader_pulls
        self.stages = {(s["device"], s["stage"]): s for s in p["stages"]}
        def entries(q):  # the table's entries; what a stage waits on depends on the mode
            return [{k: v for k, v in e.items() if k != "waits_on"} for e in q["stages"]]
        assert all(entries(q) == entries(p) for q in plans)
        self.pieces = [{} for _ in range(self.tp)]  # all-gather: stage -> flags (pieces) of its copy, in any plan
        for q in plans:
            for g in q["graph"]:
                got = {}
                for n in g["nodes"]:
                    if n["kind"] == "FLAG":
                        got[n["stage"]] = got.get(n["stage"], 0) + 1
                for stage, count in got.items():
                    self.pieces[g["device"]][stage] = max(count, self.pieces[g["device"]].get(stage, 0))
        # controls: the GEMM beside START off by `offset`, or reading START's word; the table's GEMM not keeping
        # last_epoch (then a call beside START after a table call takes a stale epoch)
        self.offset, self.beside_reads_start, self.table_keeps = epoch_offset, beside_reads_start, table_keeps
        t = self.tp
        self.nodes = [[] for _ in range(t)]      # the graph rank r runs in its current call
        self.beside = [False] * t                # whether that graph runs the GEMM beside START
        self.gate = [None] * t                   # gathered: the flag that graph's GEMM waits for (self.gates)
        self.pulling = [False] * t               # gathered: whether that graph's GEMM pulls the shards itself
        first, fresh = self.ep.first, self.ep.fresh
        arrived = first * (t - 1) if self.ep.kind == "int" else first * (t - 1) % U32  # every call so far arrived
        self.epoch, self.start_cnt, self.end_cnt = [first] * t, [arrived] * t, [arrived] * t
        self.flags = [{} for _ in range(t)]      # (stage, piece) -> value (all-gather)
        self.pflag = [{} for _ in range(t)]      # slot -> value (reduce-scatter: the partial in that slot is complete)
        self.slot = [{} for _ in range(t)]       # all-gather: (slot, piece) -> (peer, call); RS: slot -> [peer, call, read]
        self.input = [None] * t                  # the call whose input the user last wrote
        self.call = [-1] * t
        self.state = [{} for _ in range(t)]      # node index -> "arrived" / "done" / ("gemm", stage)
        self.gemm_epoch, self.last_epoch = [first] * t, [first] * t
        self.hop_flag, self.reduce_epoch = [fresh] * t, [first] * t  # one-hop: the rank's tile flags, REDUCE's epoch
        # copy engine: the send bank, its flags, its counts (full: the stage counted all its tiles)
        self.sslot, self.sflag, self.scount = [{} for _ in range(t)], [{} for _ in range(t)], [{} for _ in range(t)]
        self.chain_steps = [[(s, step) for s in range(t) if self.stages[(r, s)]["dst_peer"] >= 0
                             for step in ("copy", "flags")] for r in range(t)]
        # the zeros after the last wait (the runtime forks them off it); the control: ahead of every wait
        self.chain_steps = [[(None, "zeros")] + c if chain_zeros_first else c + [(None, "zeros")]
                            for c in self.chain_steps]

    def bad(self, r, c, why):
        """Rank r's call c read data of another call (why says what): a violation (protocol_give_ups.py overrides:
        there only a call that reports success must not)."""
        raise Violation(why)

    def clobbered(self, r, c, why):
        """What rank r's call c has still to read was overwritten (why says by what)."""
        raise Violation(why)

    def sent_wrong(self, r, c, why):
        """Rank r's call c sent (its copy chain) a partial not of its own call (its receiver reads what was sent)."""
        raise Violation(why)

    def reread(self, r, c, why):
        """Rank r's call c read a partial of its own call that a call had read before: here a partial lost
        somewhere (with give-ups, an earlier call that failed may have taken it: the data is still right)."""
        raise Violation(why)

    def _deps_done(self, r, node):
        return all(self.state[r].get(d) == "done" for d in node["deps"])

    def actions(self):
        out = []
        for r in range(self.tp):
            nodes = self.nodes[r]
            if self.call[r] < 0 or all(self.state[r].get(n["index"]) == "done" for n in nodes):
                if self.call[r] + 1 < self.calls:
                    out += [(r, "begin", i) for i in range(len(self.plans))]
                continue
            for n in nodes:
                st = self.state[r].get(n["index"])
                launched = "after_launch" not in n or self.state[r].get(n["after_launch"]) is not None
                if st is None and self._deps_done(r, n) and launched:
                    out.append((r, "start", n))
                elif isinstance(st, tuple) and st[0] == "chain":
                    s, step = self.chain_steps[r][st[1]]
                    full = step == "copy" and self.scount[r].get(self.stages[(r, s)]["dst_slot"], 0) != 0
                    if step != "copy" or self.chain_skips_wait or full:
                        out.append((r, "stage", n))
                elif st == "arrived" and self._barrier_passes(r, n):
                    out.append((r, "pass", n))
                elif isinstance(st, tuple) and st[0] == "reduce":
                    if self._reduce_ready(r):
                        out.append((r, "stage", n))
                elif isinstance(st, tuple) and self._stage_ready(r, st[1], st[2]):
                    out.append((r, "stage", n))
        return out

    def _reduce_ready(self, r):  # one-hop: every rank's tile flags at REDUCE's epoch
        return all(self.ep.reached(f, self.reduce_epoch[r]) for f in self.hop_flag)

    def _barrier_passes(self, r, n):
        cnt = self.start_cnt if n["kind"] == "BARRIER_START" else self.end_cnt
        target = self.epoch[r] * (self.tp - 1)
        return self.ep.counter_passes(cnt[r], target if self.ep.kind == "int" else target % U32)

    def _stage_ready(self, r, s, j):
        e = self.stages[(r, s)]
        if self.gathered:
            gate = self.flags[r].get(self.gate[r], self.ep.fresh)
            return self.pulling[r] or self.ep.reached(gate, self.gemm_epoch[r])
        if self.ag:  # piece j of the slot: the flags of pieces 0..j (what the producer waits for, copy_chunks.h)
            if e["src_slot"] < 0:
                return True
            return all(self.ep.reached(self.flags[r].get((s, q), self.ep.fresh), self.gemm_epoch[r])
                       for q in range(j + 1))
        fresh = self.ep.fresh if self.ep.kind != "int" else 0
        flag = self.pflag[self._reads_from(r, e)].get(e["src_slot"], fresh)
        return e["src_slot"] < 0 or self.ep.reached(flag, self.gemm_epoch[r])

    def _reads_from(self, r, e):
        """The rank whose memory holds the partial that rank r's stage entry e adds."""
        return e["peer"] if self.reader_pulls else r

    def do(self, r, what, n):
        c = self.call[r]
        if what == "begin":
            self.call[r] = c = c + 1
            self.input[r] = c
            self.state[r] = {}
            plan = self.plans[n]
            self.nodes[r] = next(g["nodes"] for g in plan["graph"] if g["device"] == r)
            self.beside[r] = bool(plan["overlap_barriers"])
            self.gate[r] = self.gates[n].get(r)
            self.pulling[r] = bool(plan.get("gemm_pulls"))
            return
        kind, i = n["kind"], n["index"]
        if what == "start" and kind in ("BARRIER_START", "BARRIER_END"):
            if kind == "BARRIER_START":
                self.epoch[r] = self.ep.next(self.epoch[r])
            elif self.ag and self.end_resets_flags:  # every stage flag to the epoch, before the arrivals
                self.flags[r] = {key: self.epoch[r] for key in self.flags[r]}
            cnt = self.start_cnt if kind == "BARRIER_START" else self.end_cnt
            for q in range(self.tp):
                if q != r:
                    cnt[q] = self.ep.arrive(cnt[q])
            self.state[r][i] = "arrived"
        elif what == "pass":
            self.state[r][i] = "done"
        elif kind == "COPY":
            if self.input[n["peer"]] != c:
                self.bad(r, c, f"rank {r} call {c}: copy read rank {n['peer']}'s input of call {self.input[n['peer']]}")
            for j in range(max(self.pieces[r].values())) if n["own_shard"] else [n["piece"]]:  # the own: whole
                self.slot[r][(n["slot"], j)] = (n["peer"], self.input[n["peer"]])
            self.state[r][i] = "done"
        elif kind == "FLAG":
            self.flags[r][(n["stage"], n["piece"])] = self.epoch[n["peer"]]
            self.state[r][i] = "done"
        elif kind == "GEMM" and what == "start":
            if self.beside[r]:
                e = self.epoch[r] if self.beside_reads_start else self.ep.next(self.last_epoch[r]) + self.offset
            else:
                e = self.epoch[r]
            self.gemm_epoch[r] = e
            if self.beside[r] or self.table_keeps:
                self.last_epoch[r] = e
            if self.gathered and self.pulling[r]:  # the pulls begin with the GEMM
                self._pulls_read(r, c)
            self.state[r][i] = ("gemm", 0, 0)
        elif kind == "CHAIN" and what == "start":
            self.state[r][i] = ("chain", 0)
        elif kind == "CHAIN":
            self._chain_step(r, c, i)
        elif kind == "REDUCE" and what == "start":
            self.reduce_epoch[r] = self.epoch[r]
            self.state[r][i] = ("reduce",)
        elif kind == "REDUCE":  # block r of every rank's partial
            for q in range(self.tp):
                got = self.slot[q].get(r)
                if not got or got[:2] != [q, c] or got[2]:
                    (self.reread if got and got[:2] == [q, c] else self.bad)(
                        r, c, f"rank {r} call {c} (one-hop): rank {q}'s slot {r} holds {got}")
                if got:
                    got[2] = True
            self.state[r][i] = "done"
        elif self.one_hop:  # the one GEMM: every block into the own slots, then the tile flags
            for b in range(self.tp):
                old = self.slot[r].get(b)
                if old and not old[2]:
                    self.clobbered(b, old[1],
                                   f"rank {r} call {c} (one-hop): partial over rank {b}'s unread block {old}")
                self.slot[r][b] = [r, c, False]
            self.hop_flag[r] = self.gemm_epoch[r]
            self.state[r][i] = "done"
        else:  # one GEMM stage, or one piece of an all-gather stage's slot
            _, s, j = self.state[r][i]
            if self.gathered and self.pulling[r]:  # ... and end before its one stage
                self._pulls_read(r, c)
                self.state[r][i] = "done"
                return
            if self.gathered:  # one GEMM of every block's rows: slot b must hold shard b of this call, whole
                for b in range(self.tp):
                    for q in range(max(self.pieces[r].values())):
                        if self.slot[r].get((b, q)) != (b, c):
                            self.bad(r, c, f"rank {r} call {c} (gathered): slot {b} piece {q} holds "
                                            f"{self.slot[r].get((b, q))}")
                self.state[r][i] = "done"
                return
            self._stage(r, c, s, j)
            if self.ag and self.stages[(r, s)]["src_slot"] >= 0 and j + 1 < self.pieces[r][s]:
                self.state[r][i] = ("gemm", s, j + 1)
            else:
                self.state[r][i] = "done" if s + 1 == self.tp else ("gemm", s + 1, 0)

    def _pulls_read(self, r, c):
        """The GEMM of rank r's call c reads every peer's input itself (the gathered walk's pulls)."""
        for s in range(self.tp):
            peer = self.stages[(r, s)]["peer"]
            if self.input[peer] != c:
                self.bad(r, c, f"rank {r} call {c} (gathered, pulled): rank {peer}'s input is of call "
                                f"{self.input[peer]}")

    def _stage(self, r, c, s, j):
        e = self.stages[(r, s)]
        if self.ag:
            got = self.slot[r].get((e["src_slot"], j)) if e["src_slot"] >= 0 else (e["peer"], c)
            if e["src_slot"] >= 0 and got != (e["peer"], c):
                self.bad(r, c, f"rank {r} call {c} stage {s}: slot {e['src_slot']} piece {j} holds {got}")
            return
        if e["src_slot"] >= 0:
            got = self.slot[self._reads_from(r, e)].get(e["src_slot"])
            if not got or got[:2] != [e["peer"], c] or got[2]:
                (self.reread if got and got[:2] == [e["peer"], c] else self.bad)(
                    r, c, f"rank {r} call {c} stage {s}: partial slot holds {got}")
            if got:
                got[2] = True
        if e["dst_peer"] >= 0 and self.ce:  # into the own send slot, its chain carries it
            old = self.sslot[r].get(e["dst_slot"])
            if old and not old[2]:
                self.clobbered(e["dst_peer"], old[1],
                               f"rank {r} call {c} stage {s}: partial over its own uncopied send slot {old}")
            self.sslot[r][e["dst_slot"]] = [r, c, False]
            self.sflag[r][e["dst_slot"]] = self.gemm_epoch[r]
            self.scount[r][e["dst_slot"]] = 1
        elif e["dst_peer"] >= 0:
            holder = r if self.writer_pulls else e["dst_peer"]
            old = self.slot[holder].get(e["dst_slot"])
            if old and not old[2]:
                self.clobbered(e["dst_peer"], old[1],
                               f"rank {r} call {c} stage {s}: partial over rank {holder}'s unread partial {old}")
            self.slot[holder][e["dst_slot"]] = [r, c, False]
            self.pflag[holder][e["dst_slot"]] = self.gemm_epoch[r]


    def _chain_step(self, r, c, i):
        """Step k of rank r's chain (its state ("chain", k)): a band's copy, its flag's copy, or the zeros over the
        counts."""
        k = self.state[r][i][1]
        s, step = self.chain_steps[r][k]
        if step == "zeros":
            if not self.chain_keeps_counts:
                self.scount[r] = {}
            self.state[r][i] = ("chain", k + 1) if k + 1 < len(self.chain_steps[r]) else "done"
            return
        e = self.stages[(r, s)]
        peer, slot = e["dst_peer"], e["dst_slot"]
        if step == "copy":
            sent = self.sslot[r].get(slot)
            if not sent or sent[:2] != [r, c] or sent[2]:
                self.sent_wrong(r, c, f"rank {r} call {c} stage {s}: the chain copies a send slot that holds {sent}")
            old = self.slot[peer].get(slot)
            if old and not old[2]:
                self.clobbered(peer, old[1],
                               f"rank {r} call {c} stage {s}: the chain's copy over rank {peer}'s unread partial {old}")
            self.slot[peer][slot] = [sent[0], sent[1], False] if sent else [r, None, False]  # what it holds
            if sent:
                sent[2] = True
        else:
            self.pflag[peer][slot] = self.sflag[r][slot]
        self.state[r][i] = ("chain", k + 1) if k + 1 < len(self.chain_steps[r]) else "done"


def with_chains(plan, after_start=True, end_after=True):
    """The plan with each device's CHAIN node as the runtime adds it (ce_partials.c): after START and the GEMM's
    launch (`after_launch`: its start, not its end), and END after it."""
    plan = copy.deepcopy(plan)
    for g in plan["graph"]:
        nodes = g["nodes"]
        idx = {n["kind"]: n["index"] for n in nodes}
        chain = {"index": len(nodes), "kind": "CHAIN", "deps": [idx["BARRIER_START"]] if after_start else [],
                 "after_launch": idx["GEMM"]}
        if end_after:
            nodes[idx["BARRIER_END"]]["deps"] = nodes[idx["BARRIER_END"]]["deps"] + [chain["index"]]
        nodes.append(chain)
    return plan


def run_orders(plans, orders=None, **controls):
    """Raises Violation on the first order that breaks a rule; returns the number of actions run. plans: one plan,
    or several that each rank picks from per call."""
    plans = plans if isinstance(plans, list) else [plans]
    total = 0
    for seed in range(orders or orders_for(plans[0]["tp"])):
        rng, m = random.Random(seed), Machine(plans, **controls)
        while True:
            acts = m.actions()
            if not acts:
                break
            m.do(*rng.choice(acts))
            total += 1
        if any(c != CALLS - 1 for c in m.call) or any(
                any(m.state[r].get(n["index"]) != "done" for n in m.nodes[r]) for r in range(m.tp)):
            raise Violation(f"order {seed}: deadlock at calls {m.call}")
    return total


CASES = [("ag_rota_bf16_tp2", 2, 1), ("ag_rotb_bf16_wide_tp4", 4, 2), ("ag_rota_bf16_tp8", 8, 3),
         ("rs_tila_bf16_tp2", 2, 1), ("rs_tilb_bf16_tp4", 4, 1), ("rs_tila_bf16_wide_tp8", 8, 1),
         ("rs_tila_bf16_pull_tp2", 2, 1), ("rs_tilb_bf16_wide_pull_tp4", 4, 1), ("rs_tila_bf16_pull_tp8", 8, 1)]


# The gathered all-gather walk (few rows a stage: runtime/src/params.c gathered_params): 128 rows a stage of the
# 64x128 in two pieces, 64 rows of the 128x128, 16 rows of the wide tiles.
GATHERED = [("ag_rota_bf16_pp64_tp2", 2, 2, 256), ("ag_rota_bf16_tp4", 4, 1, 256), ("ag_rota_bf16_wide_tp8", 8, 1, 128)]


@pytest.mark.parametrize("config,tp,chunks,m", GATHERED, ids=[c[0] for c in GATHERED])
@pytest.mark.parametrize("overlap", [False, True], ids=["table", "overlap"])
def test_the_gathered_walk_holds_in_every_order_tried(config, tp, chunks, m, overlap):
    p = plan(config, tp, overlap, chunks, m, copy_engine=True)
    assert p["stages_gathered"] and p["buffers_per_device"]["slots"] == tp and not p["gemm_pulls"]
    assert sum(n["own_shard"] for g in p["graph"] for n in g["nodes"]) == tp
    assert run_orders(p) > 0
    assert run_orders([p, plan(config, tp, not overlap, chunks, m)]) > 0  # ranks switching modes


@pytest.mark.parametrize("config,tp,m", [(c, tp, m) for c, tp, _, m in GATHERED], ids=[c[0] for c in GATHERED])
def test_the_gemm_pulling_the_shards_holds_in_every_order_tried(config, tp, m):
    """The default gathered graph (whole shards, the table's barriers): no copy or flag node, the GEMM pulls every
    shard after the start barrier. Ranks may switch to copy nodes or the barriers beside the GEMM between calls (the
    model's slots are cut alike in every plan it mixes: whole shards here)."""
    p = plan(config, tp, False, 1, m)
    assert p["gemm_pulls"] and all(n["kind"] not in ("COPY", "FLAG") for g in p["graph"] for n in g["nodes"])
    assert run_orders(p) > 0
    others = [plan(config, tp, False, 1, m, copy_engine=True), plan(config, tp, True, 1, m)]
    assert not any(q["gemm_pulls"] for q in others)
    assert run_orders([p] + others) > 0


def test_gathered_controls_are_caught():
    """A gathered GEMM that waits for the first copy's flag reads slots still being filled; one that does not wait
    for the own shard's copy reads its own slot early (or the previous call's)."""
    p = plan("ag_rota_bf16_tp4", 4, False, 1, 256, copy_engine=True)
    with pytest.raises(Violation, match="gathered"):
        run_orders(p, orders=200, gathered_waits_first=True)
    for g in p["graph"]:
        for n in g["nodes"]:
            if n["kind"] == "GEMM":
                n["deps"] = [d for d in n["deps"] if not g["nodes"][d]["own_shard"]]
    with pytest.raises(Violation, match="gathered"):
        run_orders(p, orders=200)


def test_a_gemm_pulling_before_the_start_barrier_is_caught():
    """The pulls read the peers' inputs directly: a GEMM that does not follow START may read a peer's previous one."""
    p = plan("ag_rota_bf16_tp4", 4, False, 1, 256)
    for g in p["graph"]:
        for n in g["nodes"]:
            if n["kind"] == "GEMM":
                assert [g["nodes"][d]["kind"] for d in n["deps"]] == ["BARRIER_START"]
                n["deps"] = []
    with pytest.raises(Violation, match="pulled"):
        run_orders(p, orders=200)


# The one-hop reduce-scatter walk (few rows a stage: runtime/src/params.c one_hop_params): 64 rows a stage of the
# 64x128 at TP = 2, 32 of the 128x128 at TP = 4, 16 of the wide tiles at TP = 8.
ONE_HOP = [("rs_tila_bf16_pp64_tp2", 2, 128), ("rs_tila_bf16_tp4", 4, 128), ("rs_tila_bf16_wide_tp8", 8, 128)]


@pytest.mark.parametrize("config,tp,m", ONE_HOP, ids=[c[0] for c in ONE_HOP])
@pytest.mark.parametrize("overlap", [False, True], ids=["table", "overlap"])
def test_the_one_hop_walk_holds_in_every_order_tried(config, tp, m, overlap):
    p = plan(config, tp, overlap, 1, m)
    assert p["one_hop"] and p["buffers_per_device"]["slots"] == tp
    assert all([n["kind"] for n in g["nodes"]] == ["BARRIER_START", "GEMM", "REDUCE", "BARRIER_END"] for g in p["graph"])
    assert run_orders(p) > 0


def test_one_hop_controls_are_caught():
    """A REDUCE that does not follow START (beside the barriers) reads an epoch word not yet advanced and takes the
    previous call's flags; beside the barriers, a closing barrier that follows the GEMM, not the REDUCE, lets a rank's
    next GEMM overwrite a block a peer still reads."""
    early = plan("rs_tila_bf16_tp4", 4, True, 1, 128)
    for g in early["graph"]:
        for n in g["nodes"]:
            if n["kind"] == "REDUCE":
                n["deps"] = [d for d in n["deps"] if g["nodes"][d]["kind"] == "GEMM"]
    with pytest.raises(Violation, match="one-hop"):
        run_orders(early, orders=200)
    detached = plan("rs_tila_bf16_tp4", 4, True, 1, 128)  # (the table's next START would still hold the GEMM)
    for g in detached["graph"]:
        gemm = next(n["index"] for n in g["nodes"] if n["kind"] == "GEMM")
        for n in g["nodes"]:
            if n["kind"] == "BARRIER_END":
                n["deps"] = [gemm if g["nodes"][d]["kind"] == "REDUCE" else d for d in n["deps"]]
    with pytest.raises(Violation, match="one-hop"):
        run_orders(detached, orders=200)


@pytest.mark.parametrize("config,tp,chunks", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("overlap", [False, True], ids=["table", "overlap"])
def test_protocol_holds_in_every_order_tried(config, tp, chunks, overlap):
    p = plan(config, tp, overlap, chunks)
    assert p["tp"] == tp and p["overlap_barriers"] == int(overlap)
    assert p.get("pull_partials", 0) == int("_pull_" in config)
    assert run_orders(p) > 0


@pytest.mark.parametrize("config,tp,chunks", CASES[::2], ids=[c[0] for c in CASES[::2]])
def test_protocol_holds_when_ranks_switch_modes(config, tp, chunks):
    """Each rank picks the table's graph or the barriers beside the GEMM per call, on its own."""
    assert run_orders([plan(config, tp, False, chunks), plan(config, tp, True, chunks)]) > 0


# a config's route of partials by tests/routes.py, not by a shipped name: the checks hold whichever route the
# shipped defaults take
CONTROLS = [("ag_rota_bf16_tp2", 2, "push"), ("rs_tila_bf16_tp4", 4, "push"), ("rs_tila_bf16_tp4", 4, "pull")]


@pytest.mark.parametrize("family,tp,route", CONTROLS, ids=[f"{c[0]}-{c[2]}" for c in CONTROLS])
def test_controls_are_caught(family, tp, route):
    """The model can fail: a GEMM one epoch behind takes the previous call's flags (stale data); a GEMM that starts
    beside the barrier yet reads START's word reads it before START wrote it; a table GEMM that does not keep
    last_epoch leaves a later call beside the barrier an epoch behind; a closing barrier that no longer waits
    for the copies (all-gather) or the GEMM (reduce-scatter) lets a rank's next call overwrite what a peer still
    reads."""
    config = on_route(family, route)
    overlapped = plan(config, tp, True, 1)
    with pytest.raises(Violation, match="holds"):
        run_orders(overlapped, epoch_offset=-1, orders=200)
    with pytest.raises(Violation, match="holds"):
        run_orders(overlapped, beside_reads_start=True, orders=200)
    with pytest.raises(Violation, match="holds"):
        run_orders([plan(config, tp, False, 1), overlapped], table_keeps=False, orders=200)
    detached = copy.deepcopy(overlapped)
    for g in detached["graph"]:
        for n in g["nodes"]:
            if n["kind"] == "BARRIER_END":
                n["deps"] = [d for d in n["deps"] if g["nodes"][d]["kind"] == "BARRIER_START"]
    with pytest.raises(Violation, match="input of call|unread partial|holds"):  # (its flag reset lets a read in)
        run_orders(detached, orders=200)


def test_a_flag_before_its_piece_is_caught():
    """Copies in pieces: a flag that followed only the previous piece's copy lets the GEMM read its piece early."""
    p = plan("ag_rota_bf16_tp2", 2, True, 2)
    for g in p["graph"]:
        nodes = g["nodes"]
        copies = [n["index"] for n in nodes if n["kind"] == "COPY"]
        for n in nodes:
            if n["kind"] == "FLAG" and n["piece"] == 1:
                assert copies[1] in n["deps"]  # the printed graph: flag 1 after piece 1
                n["deps"] = [copies[0] if d == copies[1] else d for d in n["deps"]]
    with pytest.raises(Violation, match="piece 1 holds"):
        run_orders(p, orders=200)


@pytest.mark.parametrize("family,route", [("rs_tila_bf16_tp2", "push"), ("rs_tilb_bf16_tp4", "pull")])
def test_a_receiver_reading_the_wrong_memory_is_caught(family, route):
    """Push and pull use the same slot and flag words and differ only in whose memory holds them (so the choice
    belongs to the config, one for every rank): a receiver that looks in the other place reads a partial of the
    wrong rank or never sees its flag."""
    config = on_route(family, route)
    p = plan(config, int(config[-1]), False, 1)
    with pytest.raises(Violation, match="holds|deadlock"):
        run_orders(p, orders=50, reader_pulls=not p["pull_partials"])


# Copy-engine partials (runtime/src/ce_partials.c): the rings of both kernels at TP = 2 / 4 / 8.
COPY_ENGINE = [("rs_tila_bf16_tp2", 2), ("rs_tilb_bf16_wide_tp4", 4), ("rs_tila_bf16_tp8", 8)]


@pytest.mark.parametrize("family,tp", COPY_ENGINE, ids=[c[0] for c in COPY_ENGINE])
def test_copy_engine_partials_hold_in_every_order_tried(family, tp):
    """Both graphs, and ranks switching between them per call: every chain copies its own call's partial into a
    read receive slot, every stage finds its send slot copied, and every call ends."""
    config = on_route(family, "ce")
    table, overlap = plan(config, tp, False, 1), plan(config, tp, True, 1)
    assert table["copy_engine_partials"] == 1 and not table["one_hop"]
    for p in (table, overlap, [table, overlap]):
        assert run_orders(p) > 0


def test_copy_engine_controls_are_caught():
    """A chain that does not wait for its counts, or one that leaves them full for the next call (no zeros, or zeros
    ahead of the waits), copies a send slot before this call's GEMM wrote it, or waits forever. Two dependencies the runtime adds are second guards, which the model
    shows: a chain not after START, or a closing barrier not after the chain, still holds - a graph's launch ends
    only when its chain has, and a receiver's slot is free once the sender passed its closing barrier of the call
    before, which every peer reaches only after its GEMM read the slot."""
    config = on_route("rs_tila_bf16_tp4", "ce")
    overlap, table = plan(config, 4, True, 1), plan(config, 4, False, 1)
    for control in ("chain_skips_wait", "chain_keeps_counts"):
        with pytest.raises(Violation, match="the chain copies a send slot that holds"):
            run_orders([table, overlap], orders=200, **{control: True})
    with pytest.raises(Violation, match="the chain copies a send slot that holds|deadlock"):
        run_orders([table, overlap], orders=200, chain_zeros_first=True)
    for guard in ("chain_skips_start", "end_skips_chain"):
        assert run_orders([table, overlap], **{guard: True}) > 0
