#!/bin/bash
# One device call (nvidia-h200, 1 GPU): spread pushes issued by warp 0 of the waiting warpgroup before it joins the
# turn's named barrier (pp128sp, pp64sp rebuilt: units one every 3/4 x window / units cycles; 0326Z's mbarrier turns
# cost the plain GEMM 1-4% at short K; 0309Z / 0315Z's issue inside the next mainloop cost the ring 2-5%).
# The same commands as call_spread_idle_0326Z.sh (run here through it): 1) the self-test's cases of pp128sp /
# pp64sp; 2) the plain ring proxy (--rs-perf, all anchors) for pp128tma / pp128tdf / pp128sp / pp64tma / pp64sp,
# twice; 3) --rs-far for pp128tma / pp128tdf / pp128sp.
# Carry build/selftest/kernel_selftest.
exec bash "$(dirname "$0")/call_spread_idle_0326Z.sh"
