#!/bin/bash
# One device call (nvidia-h200, 1 GPU), built with experiments/spread_units.patch. The 1941Z run: spreading a walk of
# fewer tiles than CTAs over the grid (unit u on CTA floor(u * 132 / tiles)) ran the ping-pong 64x128 1.2-1.46x at 32
# tiles, 1.07-1.28x at 64, even at 16 and 0.95-0.98x at 128. The traces show why the step matters: CTAs 0-7 land on
# SMs 124-131, then pairs of consecutive CTAs share a TPC and the next pair goes to the next GPC (period 16), so a step
# of ~8 (16 tiles) alternates two GPCs. x_pp64_even / x_pp128_even (TPG_SPREAD_UNITS=2): the even CTAs first.
# (1) CLI checks of the even variants; (2) the grid twice, opposite orders: base, spread, even for both kernels.
. bench/results/experiments/decode_call_lib.sh
cli_checks x_pp64_even_tp1,x_pp128_even_tp1 16x2048x4096 40x1000x8192 128x2048x4096 64x8192x4096 1000x20000x512
SUB=16,64,128:2048,4096,6144,8192,10240:4096,16384
V=ag_rota_bf16_pp64_tp1,x_pp64_spread_tp1,x_pp64_even_tp1,ag_rota_bf16_tp1,x_pp128_spread_tp1,x_pp128_even_tp1
timeout 240 python3 bench/results/experiments/decode_grid.py "$R/grid_a.json" $V $SUB > "$R/grid_a.log" 2>&1
echo "grid_a rc=$?"
V=x_pp128_even_tp1,x_pp128_spread_tp1,ag_rota_bf16_tp1,x_pp64_even_tp1,x_pp64_spread_tp1,ag_rota_bf16_pp64_tp1
timeout 240 python3 bench/results/experiments/decode_grid.py "$R/grid_b.json" $V $SUB > "$R/grid_b.log" 2>&1
echo "grid_b rc=$?"
grep -c "CHECK FAILED" "$R"/grid_*.log
pack
