"""The cross-device protocol model (tests/test_protocol.py) in the device's 32-bit words, past the 2^31st launch and
across the wrap at 2^32 (templates/kernels/epoch.h)."""
import pytest

from tests.protocol_epochs import Epochs
from tests.test_protocol import Violation, plan, run_orders

# Across the epoch range, in the device's 32-bit words (templates/kernels/epoch.h): from an op past its 2^31st launch
# whose flag words no call has written since it was created (0: the words of a mode the op switches to late), and
# across the wrap at 2^32 from words the previous call wrote. The control compares flags by signed difference, as
# before 2026-12-05: past 2^31 it takes those zeros for "ahead" and the stages read their slots before the data lands.
EPOCH_CASES = [("ag_rota_bf16_tp2", 2, 1), ("ag_rotb_bf16_wide_tp4", 4, 2), ("rs_tila_bf16_tp2", 2, 1),
               ("rs_tila_bf16_pull_tp2", 2, 1)]
PAST_2_31, BEFORE_WRAP = (1 << 31) + 5, (1 << 32) - 3


@pytest.mark.parametrize("config,tp,chunks", EPOCH_CASES, ids=[c[0] for c in EPOCH_CASES])
def test_protocol_holds_across_the_epoch_range(config, tp, chunks):
    for overlap in (False, True):
        p = plan(config, tp, overlap, chunks)
        assert run_orders(p, orders=12, epochs=Epochs("u32", PAST_2_31, 0)) > 0
        assert run_orders(p, orders=12, epochs=Epochs("u32", BEFORE_WRAP, BEFORE_WRAP)) > 0


@pytest.mark.parametrize("config,tp,chunks", EPOCH_CASES, ids=[c[0] for c in EPOCH_CASES])
def test_flags_compared_by_signed_difference_are_caught_past_2_31(config, tp, chunks):
    p = plan(config, tp, False, chunks)
    with pytest.raises(Violation):
        run_orders(p, orders=12, epochs=Epochs("signed", PAST_2_31, 0))
    assert run_orders(p, orders=12, epochs=Epochs("signed", 5, 0)) > 0  # the control is otherwise sound


def test_one_hop_and_gathered_walks_hold_across_the_epoch_range():
    for p in (plan("rs_tila_bf16_tp4", 4, False, 1, 64), plan("ag_rota_bf16_tp4", 4, False, 1, 256, copy_engine=True)):
        assert p.get("one_hop") or p.get("stages_gathered")
        assert run_orders(p, orders=12, epochs=Epochs("u32", PAST_2_31, 0)) > 0
        assert run_orders(p, orders=12, epochs=Epochs("u32", BEFORE_WRAP, BEFORE_WRAP)) > 0
