"""The cross-device protocol with waits that time out (tests/protocol_give_ups.py): over random orders in which
ranks are late and give up, every call that reports success read only its own call's data, none of it written by a
failing call - on the graphs the runtime builds (`tpgemm --dry-run --json`), ranks switching graphs between calls
too - calls succeed again once the timeouts stop, and the controls, each one rule of the timeout protocol taken out,
are caught."""
import pytest

from tests.protocol_give_ups import run_give_up_orders
from tests.routes import on_route
from tests.test_protocol import Violation, plan

# (config, tp, overlap, chunks, m, copy_engine): the all-gather ring (in pieces too), the reduce-scatter ring pushed
# and pulled, the gathered all-gather walk (copy nodes, or its GEMM pulling) and the one-hop reduce-scatter walk;
# the table's graph and the barriers beside the GEMM. Reduce-scatter configs by route (tests/routes.py): copy-engine
# partials are not modelled here (their chains' waits have no timeout), pushed ones are, whichever the default takes.
GRAPHS = [("ag_rota_bf16_tp2", 2, False, 1, None, False), ("ag_rota_bf16_tp2", 2, True, 1, None, False),
          ("ag_rotb_bf16_wide_tp4", 4, False, 2, None, False), ("ag_rota_bf16_tp4", 4, True, 1, None, False),
          ("rs_tila_bf16_tp2", 2, True, 1, None, False), ("rs_tilb_bf16_tp4", 4, False, 1, None, False),
          ("rs_tila_bf16_tp4", 4, True, 1, None, False), ("rs_tila_bf16_pull_tp4", 4, True, 1, None, False),
          ("ag_rota_bf16_tp4", 4, False, 1, 256, True), ("ag_rota_bf16_tp4", 4, True, 1, 256, True),
          ("ag_rota_bf16_tp4", 4, False, 1, 256, False), ("rs_tila_bf16_tp4", 4, True, 1, 128, False),
          ("rs_tila_bf16_wide_tp8", 8, True, 1, None, False)]


def graph_id(g):
    config, _, overlap, chunks, m, ce = g
    return f"{config}-{'overlap' if overlap else 'table'}" + (f"-c{chunks}" if chunks > 1 else "") + \
        (f"-m{m}" if m else "") + ("-ce" if ce else "")


def give_up_plan(config, tp, overlap, chunks, m, copy_engine):
    """The graph of config as the runtime builds it; a reduce-scatter family's pushing config (its route's)."""
    name = on_route(config, "pull" if "_pull_" in config else "push") if config.startswith("rs_") else config
    return plan(name, tp, overlap, chunks, m, copy_engine)


@pytest.mark.parametrize("graph", GRAPHS, ids=[graph_id(g) for g in GRAPHS])
def test_a_call_that_reports_success_read_only_its_own_calls_data(graph):
    p, tp = give_up_plan(*graph), graph[1]
    orders = 60 if tp < 8 else 10
    judged, failed = run_give_up_orders(p, orders=orders, give_up_share=0.03 if tp < 8 else 0.01)
    assert judged == orders * 6 * tp  # every call of every rank ended and was judged
    assert 0 < failed < judged  # give-ups happened, and calls went on succeeding around them


@pytest.mark.parametrize("config,tp,chunks", [("ag_rota_bf16_tp2", 2, 1), ("rs_tila_bf16_tp4", 4, 1)])
def test_ranks_switching_graphs_between_calls_hold_under_give_ups(config, tp, chunks):
    mixed = [give_up_plan(config, tp, False, chunks, None, False), give_up_plan(config, tp, True, chunks, None, False)]
    judged, failed = run_give_up_orders(mixed, orders=60, give_up_share=0.03)
    assert judged == 60 * 6 * tp and failed > 0


def test_without_the_closing_barriers_flag_reset_a_late_ranks_next_call_reads_the_old_shard():
    """The fault a review found (runtime/src/barrier.h): a late rank's FLAG node copies the epoch word of a peer that
    gave up and started its next call; without the reset its next call passes its stage wait on that flag."""
    for overlap in (False, True):
        with pytest.raises(Violation, match="reported success, yet: .* slot .* holds"):
            run_give_up_orders(plan("ag_rota_bf16_tp2", 2, overlap, 1), orders=300, end_resets_flags=False)


@pytest.mark.parametrize("tp", [2, 4])
def test_copy_engine_partials_hold_under_give_ups(tp):
    """The chains' waits have no timeout: they end because a GEMM that gave up still counts its tiles; no call that
    reports success takes a partial its chain copied from another call, or one a failing call wrote."""
    config = on_route(f"rs_tila_bf16_tp{tp}", "ce")
    both = [plan(config, tp, False, 1), plan(config, tp, True, 1)]
    assert both[0]["copy_engine_partials"] == 1
    judged, failed = run_give_up_orders(both, orders=60, give_up_share=0.02)
    assert judged == 60 * 6 * tp and failed > 0


RECOVERY = [("ag_rota_bf16_tp2", 2, True, None), ("rs_tila_bf16_tp4", 4, True, None),
            ("rs_tila_bf16_tp4", 4, False, 128)]


@pytest.mark.parametrize("config,tp,overlap,m", RECOVERY, ids=["ag-ring", "rs-ring", "rs-one-hop"])
def test_once_the_timeouts_stop_every_later_call_succeeds(config, tp, overlap, m):
    """A protocol that failed every call after its first give-up would pass the rule above; this one recovers: with no
    timeout after the ranks reach call 3, every call after it succeeds (a new context is not needed)."""
    judged, failed = run_give_up_orders(give_up_plan(config, tp, overlap, 1, m, False), orders=60,
                                        give_up_share=0.05, quiet_from=3)
    assert failed > 0


@pytest.mark.parametrize("control", ["internal_marks_launch", "end_tells_earlier"])
@pytest.mark.parametrize("config,tp,overlap,m", RECOVERY[1:], ids=["rs-ring", "rs-one-hop"])
def test_a_failing_calls_partials_read_as_valid_are_caught(control, config, tp, overlap, m):
    """A GEMM that timed out (a wait of its own CTAs, such as stream-K's fix-up, included: sync.cuh) or gave up still
    writes its partials or one-hop blocks and raises their flags; only the closing barrier's notice makes the readers'
    calls fail. Without it - the internal timeout failing its own call only, as before 2026-12-05, or the closing
    barrier not telling the peers of an earlier give-up of its launch - a reader reports success over them."""
    with pytest.raises(Violation, match="reported success, yet: .*(garbage|failing call)"):
        run_give_up_orders(give_up_plan(config, tp, overlap, 1, m, False), orders=300, give_up_share=0.01,
                           **{control: False})


@pytest.mark.parametrize("control", ["tells_peers", "reads_notice"])
@pytest.mark.parametrize("config,tp,overlap,m", [("ag_rota_bf16_tp2", 2, False, None),
                                                 ("rs_tila_bf16_tp2", 2, True, None),
                                                 ("rs_tila_bf16_tp4", 4, False, 128),
                                                 ("ag_rota_bf16_tp4", 4, False, 256)],
                         ids=["ag-ring", "rs-ring-overlap", "rs-one-hop", "ag-gathered-pulls"])
def test_a_late_rank_not_told_of_a_give_up_is_caught(control, config, tp, overlap, m):
    """A rank that gave up no longer holds its inputs, slots and partials for a late peer: without the notice (not
    raised, or not read by the closing barrier) the late peer's call reports success over another call's data."""
    with pytest.raises(Violation, match="reported success"):
        run_give_up_orders(give_up_plan(config, tp, overlap, 1, m, False), orders=300, give_up_share=0.03,
                           **{control: False})
