"""The protocol model (tests/test_protocol.py Machine) with waits that time out and give up, as the device's do:

  a wait that cannot pass may give up (a timeout): the barrier, a GEMM stage wait or REDUCE's; the rank's gave_up
          word takes the wait's epoch and the call reports TPG_ERR_TIMEOUT; every later wait of that launch passes
          at once (templates/kernels/gemm_params.h: the waits give up together), and the GEMM still reads, adds and
          raises its flags (what it reads is another call's data: allowed, the call fails);
  START / END that gave up raise every peer's notice word to the epoch (the closing barrier first tells the peers of
          a give-up earlier in its launch, before its arrivals; runtime/src/barrier.h "Telling the peers");
  END     that passes (or breaks out on its own give-up) reads its notice: at or past its epoch, the call reports
          TPG_ERR_TIMEOUT ("a peer gave up");
  a wait inside the GEMM on its own CTAs (stream-K's fix-up, the gathered walk's pull count) may time out at any
          point of the GEMM: the call fails, and (templates/kernels/sync.cuh) the launch counts as given up.
The rule checked: a call that reports success read only data of its own call - no partial (or one-hop block) that a
call which gave up or read bad data wrote ("garbage": its sums may be wrong though its call's) - and nothing it had
still to read was overwritten. Reads of other calls' data are recorded instead of raised (bad, clobbered) and judged
when the rank's graph has completed (tpg_op_sync reads the status word then). Epochs are unbounded integers here.
Copy-engine partials' chains wait without a timeout: they end because the GEMM counts its tiles even after a give-up.
"""
import random

from tests.test_protocol import Machine, Violation

BARRIERS = ("BARRIER_START", "BARRIER_END")
GIVE_UPS = ("give_up", "internal_timeout")  # the actions of a timeout (run_give_up_orders: at give_up_share)


class GiveUpMachine(Machine):
    """Machine whose blocked waits may give up; the taints and failures of every call, judged as each ends."""

    def __init__(self, plans, calls=6, tells_peers=True, reads_notice=True, end_tells_earlier=True,
                 internal_marks_launch=True, quiet_from=None, **controls):
        super().__init__(plans, **controls)
        assert self.ep.kind == "int"
        self.calls = calls
        # off: the controls - no notice raised, none read, none raised at END for an earlier give-up of its launch, an
        # internal timeout that fails the call only (before 2026-12-05's fix)
        self.tells_peers, self.reads_notice = tells_peers, reads_notice
        self.end_tells_earlier, self.internal_marks_launch = end_tells_earlier, internal_marks_launch
        self.quiet_from = quiet_from  # no more timeouts once a rank is at this call (None: never quiet)
        self.internal = set()            # (rank, call) whose GEMM had an internal timeout
        self.gave_up = [None] * self.tp  # the epoch of the rank's last give-up (its gave_up word)
        self.notice = [None] * self.tp   # the last epoch a peer gave up on (its gave_up_notice word)
        self.failed = set()              # (rank, call): reported TPG_ERR_TIMEOUT
        self.taints = {}                 # (rank, call) -> the first read of another call's data, or a loss
        self.judged = 0                  # calls judged (ended)
        self.garbage = {}                # (holder, slot) -> whether the partial / block there is garbage
        self.garbage_send = {}           # copy-engine partials: (rank, send slot) -> the same
        self.outcomes = []               # (rank, call, failed) of every call judged

    def bad(self, r, c, why):
        self.taints.setdefault((r, c), why)

    def clobbered(self, r, c, why):
        self.taints.setdefault((r, c), why)

    def sent_wrong(self, r, c, why):
        pass  # its receiver reads what the chain sent and is judged on that

    def _dirty(self, r, c):
        """Whether what rank r's call c writes now may be wrong: it gave up or timed out, or read bad data."""
        return (r, c) in self.failed or (r, c) in self.taints

    def _stage(self, r, c, s, j):
        e = self.stages[(r, s)]
        if not self.ag and e["src_slot"] >= 0 and self.garbage.get((self._reads_from(r, e), e["src_slot"])):
            self.bad(r, c, f"rank {r} call {c} stage {s}: read a partial that a failing call wrote")
        super()._stage(r, c, s, j)
        if not self.ag and e["dst_peer"] >= 0:
            if self.ce:
                self.garbage_send[(r, e["dst_slot"])] = self._dirty(r, c)
            else:
                self.garbage[(r if self.writer_pulls else e["dst_peer"], e["dst_slot"])] = self._dirty(r, c)

    def _chain_step(self, r, c, i):
        s, step = self.chain_steps[r][self.state[r][i][1]]
        super()._chain_step(r, c, i)
        if step == "copy":
            e = self.stages[(r, s)]
            self.garbage[(e["dst_peer"], e["dst_slot"])] = self.garbage_send.get((r, e["dst_slot"]), False)

    def reread(self, r, c, why):
        pass  # the same call's partial again: right data (the call that took it first is judged on its own)

    def _wait_epoch(self, r, kind):
        return self.epoch[r] if kind in BARRIERS else self.reduce_epoch[r] if kind == "REDUCE" else self.gemm_epoch[r]

    def _barrier_passes(self, r, n):
        return self.gave_up[r] == self.epoch[r] or super()._barrier_passes(r, n)

    def _stage_ready(self, r, s, j):
        return self.gave_up[r] == self.gemm_epoch[r] or super()._stage_ready(r, s, j)

    def _reduce_ready(self, r):
        return self.gave_up[r] == self.reduce_epoch[r] or super()._reduce_ready(r)

    def _blocked(self, r, n):
        st = self.state[r].get(n["index"])
        if st == "arrived":
            return not self._barrier_passes(r, n)
        if isinstance(st, tuple) and st[0] == "reduce":
            return not self._reduce_ready(r)
        return isinstance(st, tuple) and st[0] == "gemm" and not self._stage_ready(r, st[1], st[2])

    def _gemm_running(self, r, n):
        st = self.state[r].get(n["index"])
        return n["kind"] == "GEMM" and isinstance(st, tuple) and st[0] == "gemm"

    def actions(self):
        acts = super().actions()
        if self.quiet_from is not None and max(self.call) >= self.quiet_from:
            return acts
        return acts + [(r, "give_up", n) for r in range(self.tp) if self.call[r] >= 0
                       for n in self.nodes[r] if self._blocked(r, n)] + \
            [(r, "internal_timeout", n) for r in range(self.tp) if (r, self.call[r]) not in self.internal
             for n in self.nodes[r] if self._gemm_running(r, n)]

    def _tell_peers(self, r, e):
        if not self.tells_peers:
            return
        for q in range(self.tp):
            if q != r and (self.notice[q] is None or self.notice[q] < e):
                self.notice[q] = e

    def _judge(self, r):
        """Rank r's call has completed: if it reports success, it must not have read another call's data."""
        key = (r, self.call[r])
        self.judged += 1
        self.outcomes.append((r, key[1], key in self.failed))
        if key in self.taints and key not in self.failed:
            raise Violation(f"rank {r} call {key[1]} reported success, yet: {self.taints[key]}")

    def _done(self, r):
        return self.call[r] >= 0 and all(self.state[r].get(n["index"]) == "done" for n in self.nodes[r])

    def do(self, r, what, n):
        kind = n["kind"] if isinstance(n, dict) else None
        if what == "begin" and self._done(r):
            self._judge(r)
        if what == "internal_timeout":  # the call fails; the launch counts as given up (sync.cuh)
            self.internal.add((r, self.call[r]))
            self.failed.add((r, self.call[r]))
            if self.internal_marks_launch:
                self.gave_up[r] = self.gemm_epoch[r]
            return
        if what == "stage" and kind == "REDUCE":  # block r of every rank's slots: garbage where a failing call wrote it
            for q in range(self.tp):
                if self.garbage.get((q, r)):
                    self.bad(r, self.call[r], f"rank {r} call {self.call[r]} (one-hop): rank {q}'s block {r} is "
                                              "garbage of a failing call")
        if what == "give_up":
            e = self._wait_epoch(r, kind)
            self.gave_up[r] = e
            self.failed.add((r, self.call[r]))
            if kind in BARRIERS:  # a barrier's timeout tells the peers and returns
                self._tell_peers(r, e)
                self.state[r][n["index"]] = "done"
            return
        if what == "start" and kind == "BARRIER_END" and self.gave_up[r] == self.epoch[r] and self.end_tells_earlier:
            self._tell_peers(r, self.epoch[r])  # a give-up earlier in this launch, before the arrivals
        if what == "pass" and kind in BARRIERS and self.gave_up[r] == self.epoch[r] and self.end_tells_earlier and \
                not Machine._barrier_passes(self, r, n):
            self._tell_peers(r, self.epoch[r])  # breaking out on a give-up beside it, not on the arrivals (barrier.cu)
        one_hop_gemm = what == "stage" and kind == "GEMM" and self.one_hop
        super().do(r, what, n)
        if one_hop_gemm:  # its blocks, in its own slots
            for b in range(self.tp):
                self.garbage[(r, b)] = self._dirty(r, self.call[r])
        if what == "pass" and kind == "BARRIER_END" and self.reads_notice and self.notice[r] is not None and \
                self.notice[r] >= self.epoch[r]:
            self.failed.add((r, self.call[r]))  # a peer gave up on this call or a later one

    def finish(self):
        for r in range(self.tp):
            if self._done(r):
                self._judge(r)


def run_give_up_orders(plans, orders, give_up_share=0.08, calls=6, **controls):
    """Random orders in which a blocked wait gives up with probability give_up_share at each step (else the step
    is one that makes progress, where any can). Raises Violation on the first order where a call reported success
    with another call's data, or where the ranks did not all end their calls. Returns (calls judged, calls failed)."""
    plans = plans if isinstance(plans, list) else [plans]
    judged = failed = 0
    for seed in range(orders):
        rng, m = random.Random(seed), GiveUpMachine(plans, calls=calls, **controls)
        while True:
            acts = m.actions()
            if not acts:
                break
            progress = [a for a in acts if a[1] not in GIVE_UPS]
            m.do(*rng.choice(progress if progress and rng.random() >= give_up_share else acts))
        m.finish()
        if any(c != calls - 1 for c in m.call) or not all(m._done(r) for r in range(m.tp)):
            raise Violation(f"order {seed}: stuck at calls {m.call}")
        judged, failed = judged + m.judged, failed + len(m.failed)
        if controls.get("quiet_from") is not None:  # timeouts stopped: from the call after, every call succeeds
            late = [(r, c) for r, c, f in m.outcomes if f and c > controls["quiet_from"]]
            if late:
                raise Violation(f"order {seed}: calls {late} failed after the timeouts stopped")
    return judged, failed
