#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/spread_units.patch: x_pp64_spread / x_pp128_spread are
# the ping-pong 64x128 / 128x128 with TPG_SPREAD_UNITS=1 (a walk of fewer units than CTAs spread over the whole grid:
# unit u on CTA floor(u * 132 / units), instead of CTAs 0 .. units-1, of which the first 8 share one GPC).
# (The run's x_pp64_spread / x_pp128_spread twins are today's shipped kernels; spread_units.patch now adds the
# unspread controls x_pp64_nospread / x_pp128_nospread and the even-first variants instead.)
# (1) CLI checks (reference + bitwise determinism) at few and many tiles; (2) the decode grid twice, opposite orders.
. bench/results/experiments/decode_call_lib.sh
cli_checks x_pp64_spread_tp1,x_pp128_spread_tp1 16x2048x4096 40x1000x8192 128x2048x4096 64x8192x4096 1000x20000x512
SUB=16,32,64,128:2048,4096,8192:4096,8192,16384
V=ag_rota_bf16_pp64_tp1,x_pp64_spread_tp1,ag_rota_bf16_tp1,x_pp128_spread_tp1
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_a.json" $V $SUB > "$R/grid_a.log" 2>&1
echo "grid_a rc=$?"
V=x_pp128_spread_tp1,ag_rota_bf16_tp1,x_pp64_spread_tp1,ag_rota_bf16_pp64_tp1
timeout 200 python3 bench/results/experiments/decode_grid.py "$R/grid_b.json" $V $SUB > "$R/grid_b.log" 2>&1
echo "grid_b rc=$?"
grep -c "CHECK FAILED" "$R"/grid_*.log
pack
